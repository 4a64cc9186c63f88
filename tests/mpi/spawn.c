/* MPI_Comm_spawn and MPI_Comm_spawn_multiple under fmplrun (issue 16):
 *  - the parents (the whole world, root 1 when there are two) spawn 3
 *    copies of this program; every parent and child checks the
 *    intercommunicator's sizes, point-to-point both ways with every byte
 *    checked (8 B and 1 MiB: eager and rendezvous across the worlds),
 *    MPI_Bcast and MPI_Allreduce over it, MPI_Intercomm_merge, the
 *    children's MPI_COMM_WORLD (a world of their own), MPI_APPNUM and
 *    the parent's default name MPI_COMM_PARENT;
 *  - spawn_multiple starts 2 + 1 processes of two commands in one world
 *    (appnum 0 and 1, argv per command);
 *  - rank 0 alone spawns 2 processes over MPI_COMM_SELF, then the parents'
 *    whole world and the children make an intercommunicator with
 *    MPI_Intercomm_create over that one (the other parents meet the
 *    children there first), merge it, and MPI_Comm_create a communicator
 *    of the merged group reversed (world ranks of two worlds);
 *  - MPI_Comm_disconnect ends each link; MPI_Comm_get_parent is then NULL;
 *  - a program that does not exist fails with MPI_ERR_SPAWN on every parent,
 *    at once, and the job goes on.
 * With FMPL_TEST_SPAWN_HOST=<host> (the multi-host tests: tests/cluster),
 * spawn_multiple's second command goes there by info "host", its process
 * checks that it runs there, and a host outside the job fails with
 * MPI_ERR_SPAWN. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { BIG = 1 << 20 };

static void fill(unsigned char *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = (unsigned char)(i * 7 + seed);
}

static void verify(const unsigned char *b, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++)
        CHECK(b[i] == (unsigned char)(i * 7 + seed), "%s: byte %d is %d", what, i, b[i]);
}

/* What both sides do over the intercommunicator (parents: side 0). */
static void exercise(MPI_Comm inter, int side, int appnum_expected_max)
{
    int rank, lsize, rsize, flag;
    CHECK_OK(MPI_Comm_rank(inter, &rank));
    CHECK_OK(MPI_Comm_size(inter, &lsize));
    CHECK_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK_OK(MPI_Comm_test_inter(inter, &flag));
    CHECK(flag, "not an intercommunicator");
    static unsigned char big[BIG];
    /* Every parent sends to every child and back: the sender's rank seeds. */
    for (int peer = 0; peer < rsize; peer++) {
        int seed = 31 * rank + (side ? 1000 : 0);
        if (side == 0) {
            fill(big, BIG, seed);
            CHECK_OK(MPI_Send(big, BIG, MPI_BYTE, peer, 1, inter));
            CHECK_OK(MPI_Recv(big, BIG, MPI_BYTE, peer, 2, inter, MPI_STATUS_IGNORE));
            verify(big, BIG, 31 * peer + 1000, "1 MiB from a child");
        } else {
            CHECK_OK(MPI_Recv(big, BIG, MPI_BYTE, peer, 1, inter, MPI_STATUS_IGNORE));
            verify(big, BIG, 31 * peer, "1 MiB from a parent");
            fill(big, BIG, seed);
            CHECK_OK(MPI_Send(big, BIG, MPI_BYTE, peer, 2, inter));
        }
        int small = side * 100 + rank, got = -1;
        MPI_Status st;
        CHECK_OK(MPI_Sendrecv(&small, 1, MPI_INT, peer, 3, &got, 1, MPI_INT, peer, 3, inter,
                              &st));
        CHECK(got == (1 - side) * 100 + peer && st.MPI_SOURCE == peer,
              "8 B exchange gave %d from %d", got, st.MPI_SOURCE);
    }
    /* Broadcast from the parents' rank 0 to the children. */
    int word = side == 0 && rank == 0 ? 4242 : -1;
    int root = side == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    CHECK_OK(MPI_Bcast(&word, 1, MPI_INT, root, inter));
    if (side == 1)
        CHECK(word == 4242, "bcast gave %d", word);
    /* Allreduce: each side gets the sum over the other. */
    int one = side ? 10 : 1, sum = 0;
    CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == rsize * (side ? 1 : 10), "allreduce gave %d", sum);
    MPI_Comm merged;
    CHECK_OK(MPI_Intercomm_merge(inter, side, &merged));
    int msize, mrank, total = 0;
    CHECK_OK(MPI_Comm_size(merged, &msize));
    CHECK_OK(MPI_Comm_rank(merged, &mrank));
    CHECK(msize == lsize + rsize, "merged size %d", msize);
    CHECK(mrank == (side ? rsize : 0) + rank, "merged rank %d", mrank);
    CHECK_OK(MPI_Allreduce(&mrank, &total, 1, MPI_INT, MPI_SUM, merged));
    CHECK(total == msize * (msize - 1) / 2, "merged allreduce %d", total);
    CHECK_OK(MPI_Comm_free(&merged));
    (void)appnum_expected_max;
}

/* Both sides of the "self" phase: inter is rank 0's spawn
 * intercommunicator (parents; MPI_COMM_NULL on the other parents) or the
 * children's parent.  Every parent and child swap their ranks over the
 * intercommunicator MPI_Intercomm_create makes, then the merge reversed
 * broadcasts from the last child. */
static void over_world(MPI_Comm inter, int side)
{
    int rank, size, rsize, got;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm all;
    CHECK_OK(MPI_Intercomm_create(MPI_COMM_WORLD, 0, inter, 0, 77, &all));
    CHECK_OK(MPI_Comm_remote_size(all, &rsize));
    CHECK(side ? rsize >= 1 : rsize == 2, "remote size %d", rsize); /* 2 children */
    for (int peer = 0; peer < rsize; peer++) {
        int mine = side * 1000 + 10 * rank + peer;
        CHECK_OK(MPI_Sendrecv(&mine, 1, MPI_INT, peer, 5, &got, 1, MPI_INT, peer, 5, all,
                              MPI_STATUS_IGNORE));
        CHECK(got == (1 - side) * 1000 + 10 * peer + rank, "from %d of the other side: %d",
              peer, got);
    }
    MPI_Comm merged, reversed;
    MPI_Group g, rg;
    CHECK_OK(MPI_Intercomm_merge(all, side, &merged));
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    CHECK(msize == size + rsize, "merged size %d", msize);
    int order[64];
    for (int i = 0; i < msize; i++)
        order[i] = msize - 1 - i;
    CHECK_OK(MPI_Comm_group(merged, &g));
    CHECK_OK(MPI_Group_incl(g, msize, order, &rg));
    CHECK_OK(MPI_Comm_create(merged, rg, &reversed));
    CHECK(reversed != MPI_COMM_NULL, "no communicator of the reversed group");
    int r2;
    MPI_Comm_rank(reversed, &r2);
    CHECK(r2 == msize - 1 - mrank, "rank %d in the reversed communicator (merged %d)", r2, mrank);
    int word = r2 == 0 ? 5150 : -1; /* rank 0: the last child */
    CHECK_OK(MPI_Bcast(&word, 1, MPI_INT, 0, reversed));
    CHECK(word == 5150, "bcast over the reversed group gave %d", word);
    MPI_Group_free(&g);
    MPI_Group_free(&rg);
    CHECK_OK(MPI_Comm_free(&reversed));
    CHECK_OK(MPI_Comm_free(&merged));
    CHECK_OK(MPI_Comm_free(&all));
}

static int child(int argc, char **argv, MPI_Comm parent)
{
    int rank, size, flag, *appnum, len;
    char name[MPI_MAX_OBJECT_NAME];
    CHECK_OK(MPI_Comm_get_name(parent, name, &len));
    CHECK(strcmp(name, "MPI_COMM_PARENT") == 0 && len == 15, "the parent is named '%s'", name);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag));
    const char *mode = argc > 2 ? argv[2] : "";
    if (strcmp(mode, "self") == 0) {
        CHECK(size == 2, "spawned world of %d", size);
        over_world(parent, 1);
    } else if (strcmp(mode, "single") == 0) {
        CHECK(size == 3, "spawned world of %d", size);
        CHECK(flag && *appnum == 0, "appnum %d", flag ? *appnum : -1);
        exercise(parent, 1, 0);
    } else { /* multiple: "multi-a" for command 0 (2 processes), "multi-b" for 1 */
        CHECK(size == 3, "spawned world of %d", size);
        int want = strcmp(mode, "multi-a") == 0 ? 0 : 1;
        CHECK(flag && *appnum == want, "appnum %d for %s", flag ? *appnum : -1, mode);
        CHECK((want == 0) == (rank < 2), "rank %d runs %s", rank, mode);
        CHECK(argc > 3 && strcmp(argv[3], want ? "b arg" : "a arg") == 0, "argv[3] '%s'",
              argc > 3 ? argv[3] : "");
        if (argc > 4) { /* placed by info "host" */
            char name[MPI_MAX_PROCESSOR_NAME];
            int len;
            CHECK_OK(MPI_Get_processor_name(name, &len));
            CHECK(strcmp(name, argv[4]) == 0, "runs on %s, not on %s (info host)", name, argv[4]);
        }
        int sum = 0, one = 1; /* each side gets the other's sum: parents give 10 */
        CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, parent));
        int rsize;
        CHECK_OK(MPI_Comm_remote_size(parent, &rsize));
        CHECK(sum == 10 * rsize, "allreduce over the parent gave %d", sum);
    }
    /* The children's own world works apart from the parents. */
    int total = 0;
    CHECK_OK(MPI_Allreduce(&rank, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(total == size * (size - 1) / 2, "children's world allreduce %d", total);
    CHECK_OK(MPI_Comm_disconnect(&parent));
    MPI_Comm again;
    CHECK_OK(MPI_Comm_get_parent(&again));
    CHECK(again == MPI_COMM_NULL, "get_parent after disconnect");
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    CHECK_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL)
        return child(argc, argv, parent);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int root = size > 1 ? 1 : 0;

    MPI_Comm inter;
    int codes[3] = {-1, -1, -1};
    char *args[] = {"child", "single", NULL};
    CHECK_OK(MPI_Comm_spawn(argv[0], args, 3, MPI_INFO_NULL, root, MPI_COMM_WORLD, &inter,
                            codes));
    for (int i = 0; i < 3; i++)
        CHECK(codes[i] == MPI_SUCCESS, "errcode %d is %d", i, codes[i]);
    int rsize;
    CHECK_OK(MPI_Comm_remote_size(inter, &rsize));
    CHECK(rsize == 3, "remote size %d", rsize);
    exercise(inter, 0, 0);
    CHECK_OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect left the handle");

    char *cmds[2] = {argv[0], argv[0]};
    char *where = getenv("FMPL_TEST_SPAWN_HOST");
    char *argv_a[] = {"child", "multi-a", "a arg", NULL};
    char *argv_b[] = {"child", "multi-b", "b arg", where, NULL};
    char **argvs[2] = {argv_a, argv_b};
    int maxprocs[2] = {2, 1};
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    if (where) {
        CHECK_OK(MPI_Info_create(&infos[1]));
        CHECK_OK(MPI_Info_set(infos[1], "host", where));
    }
    CHECK_OK(MPI_Comm_spawn_multiple(2, cmds, argvs, maxprocs, infos, 0, MPI_COMM_WORLD, &inter,
                                     MPI_ERRCODES_IGNORE));
    int sum = 0, ten = 10;
    CHECK_OK(MPI_Allreduce(&ten, &sum, 1, MPI_INT, MPI_SUM, inter));
    CHECK(sum == 3, "allreduce from the multiple spawn gave %d", sum); /* children give 1 */
    CHECK_OK(MPI_Comm_disconnect(&inter));
    if (where) {
        CHECK_OK(MPI_Info_free(&infos[1]));
        MPI_Info nowhere;
        CHECK_OK(MPI_Info_create(&nowhere));
        CHECK_OK(MPI_Info_set(nowhere, "host", "fmpl-no-such-host"));
        CHECK_CLASS(MPI_Comm_spawn(argv[0], args, 1, nowhere, 0, MPI_COMM_WORLD, &inter,
                                   MPI_ERRCODES_IGNORE),
                    MPI_ERR_SPAWN);
        CHECK(inter == MPI_COMM_NULL, "a spawn to no host gave a communicator");
        CHECK_OK(MPI_Info_free(&nowhere));
    }

    char *self_args[] = {"child", "self", NULL};
    inter = MPI_COMM_NULL;
    if (rank == 0)
        CHECK_OK(MPI_Comm_spawn(argv[0], self_args, 2, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                                MPI_ERRCODES_IGNORE));
    over_world(inter, 0);
    if (rank == 0)
        CHECK_OK(MPI_Comm_disconnect(&inter));

    CHECK_CLASS(MPI_Comm_spawn("/nonexistent/fmpl-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL,
                               0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
                MPI_ERR_SPAWN);
    CHECK(inter == MPI_COMM_NULL, "a failed spawn gave a communicator");
    CHECK_CLASS(MPI_Comm_spawn(argv[0], args, 0, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                               MPI_ERRCODES_IGNORE),
                MPI_ERR_ARG);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* the world still works */
    MPI_Finalize();
    if (rank == 0)
        printf("spawn ok on %d ranks\n", size);
    return 0;
}
