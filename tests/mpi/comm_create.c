/* Communicator creation: MPI_Comm_create (one group, disjoint groups, the
 * empty group), MPI_Comm_create_group (members only, concurrent disjoint
 * calls, a user message with the same tag left alone), MPI_Comm_split_type,
 * MPI_Comm_idup, MPI_Comm_dup_with_info, and the intercommunicator
 * queries.  Every new communicator carries data (point-to-point ring,
 * Bcast, Allreduce) and its ranks are checked against the group order. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int world_rank, world_size;

/* The world rank of every member of comm, in comm's rank order. */
static void members_of(MPI_Comm comm, int *out)
{
    MPI_Group g, w;
    int n;
    MPI_Comm_group(comm, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &w);
    MPI_Group_size(g, &n);
    int *r = malloc(n * sizeof *r);
    for (int i = 0; i < n; i++)
        r[i] = i;
    MPI_Group_translate_ranks(g, n, r, w, out);
    free(r);
    MPI_Group_free(&g);
    MPI_Group_free(&w);
}

/* comm must hold exactly the world ranks expect[0..n) in that order; then
 * it carries a ring exchange, a broadcast and a reduction. */
static void exercise(MPI_Comm comm, int n, const int *expect, const char *what)
{
    int size, rank;
    CHECK_OK(MPI_Comm_size(comm, &size));
    CHECK_OK(MPI_Comm_rank(comm, &rank));
    CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    int *w = malloc(n * sizeof *w);
    members_of(comm, w);
    for (int i = 0; i < n; i++)
        CHECK(w[i] == expect[i], "%s: rank %d is world rank %d, expected %d", what, i, w[i],
              expect[i]);
    CHECK(expect[rank] == world_rank, "%s: my rank %d", what, rank);
    /* ring: send my world rank right, receive the left one's */
    int left = (rank + size - 1) % size, right = (rank + 1) % size, got = -1;
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(&world_rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, comm,
                          &st));
    CHECK(got == expect[left] && st.MPI_SOURCE == left, "%s: ring got %d from %d", what, got,
          st.MPI_SOURCE);
    /* broadcast from the last rank, reduction of world ranks */
    int v = rank == size - 1 ? 1000 + world_rank : -1;
    CHECK_OK(MPI_Bcast(&v, 1, MPI_INT, size - 1, comm));
    CHECK(v == 1000 + expect[size - 1], "%s: bcast got %d", what, v);
    int sum = 0, want = 0;
    for (int i = 0; i < n; i++)
        want += expect[i];
    CHECK_OK(MPI_Allreduce(&world_rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == want, "%s: allreduce %d, expected %d", what, sum, want);
    /* every member's contribution lands at its rank, and barriers pair up */
    int *all = malloc(n * sizeof *all);
    for (int round = 0; round < 3; round++) {
        CHECK_OK(MPI_Barrier(comm));
        for (int i = 0; i < n; i++)
            all[i] = -1;
        CHECK_OK(MPI_Allgather(&world_rank, 1, MPI_INT, all, 1, MPI_INT, comm));
        for (int i = 0; i < n; i++)
            CHECK(all[i] == expect[i], "%s: allgather[%d] = %d, expected %d", what, i, all[i],
                  expect[i]);
    }
    free(all);
    free(w);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    int n = world_size, rank = world_rank;
    int *expect = malloc((n + 1) * sizeof *expect);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    /* MPI_Comm_create: the evens in reverse order. */
    int ne = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2 == 0)
            expect[ne++] = i;
    MPI_Group evens_rev, odds_rev, g;
    CHECK_OK(MPI_Group_incl(world, ne, expect, &evens_rev));
    MPI_Comm c;
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, evens_rev, &c));
    if (rank % 2 == 0) {
        CHECK(c != MPI_COMM_NULL, "create: an even rank got MPI_COMM_NULL");
        exercise(c, ne, expect, "create evens reversed");
        MPI_Errhandler eh;
        CHECK_OK(MPI_Comm_get_errhandler(c, &eh));
        CHECK(eh == MPI_ERRORS_RETURN, "create: error handler not inherited");
        CHECK_OK(MPI_Errhandler_free(&eh));
        CHECK_OK(MPI_Comm_free(&c));
    } else {
        CHECK(c == MPI_COMM_NULL, "create: an odd rank got a communicator");
    }

    /* MPI_Comm_create with all ranks in reverse order: team order is not
     * parent order (the areas of each member must follow it).  Rank 0 holds
     * a communicator of its own first, so that the ranks' shared memory is
     * laid out differently and a member's areas read at another member's
     * addresses would show. */
    MPI_Comm self_dup = MPI_COMM_NULL;
    if (rank == 0)
        CHECK_OK(MPI_Comm_dup(MPI_COMM_SELF, &self_dup));
    int *rev = malloc((n + 1) * sizeof *rev);
    for (int i = 0; i < n; i++)
        rev[i] = n - 1 - i;
    MPI_Group rev_group;
    CHECK_OK(MPI_Group_incl(world, n, rev, &rev_group));
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, rev_group, &c));
    exercise(c, n, rev, "create all reversed");
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Group_free(&rev_group));
    free(rev);
    if (self_dup != MPI_COMM_NULL)
        CHECK_OK(MPI_Comm_free(&self_dup));

    /* MPI_Comm_create with disjoint groups (MPI-2.2): evens and odds. */
    int no = 0;
    int *odd = malloc((n + 1) * sizeof *odd);
    for (int i = n - 1; i >= 0; i--)
        if (i % 2)
            odd[no++] = i;
    if (no)
        CHECK_OK(MPI_Group_incl(world, no, odd, &odds_rev));
    else
        odds_rev = MPI_GROUP_EMPTY;
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, rank % 2 ? odds_rev : evens_rev, &c));
    CHECK(c != MPI_COMM_NULL, "disjoint create: no communicator");
    if (rank % 2)
        exercise(c, no, odd, "disjoint create, odds");
    else
        exercise(c, ne, expect, "disjoint create, evens");
    CHECK_OK(MPI_Comm_free(&c));

    /* MPI_Comm_create with the empty group. */
    CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &c));
    CHECK(c == MPI_COMM_NULL, "create with MPI_GROUP_EMPTY gave a communicator");

    /* MPI_Comm_create_group: a user message on MPI_COMM_WORLD with the same
     * tag is sent before and received after; the evens and the odds build
     * their communicators at the same time. */
    int tag = 7, msg = -1;
    if (n > 1 && rank == 0)
        CHECK_OK(MPI_Send(&rank, 1, MPI_INT, 1, tag, MPI_COMM_WORLD));
    if (rank % 2 == 0) {
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens_rev, tag, &c));
        exercise(c, ne, expect, "create_group evens");
    } else {
        CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, odds_rev, tag + 1, &c));
        exercise(c, no, odd, "create_group odds");
    }
    CHECK_OK(MPI_Comm_free(&c));
    if (n > 1 && rank == 1) {
        MPI_Status st;
        CHECK_OK(MPI_Recv(&msg, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(msg == 0 && st.MPI_TAG == tag, "user message after create_group: %d tag %d", msg,
              st.MPI_TAG);
    }

    /* MPI_Comm_create_group over everybody, twice in a row, from a
     * duplicate; and over this process alone. */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < n; i++)
            expect[i] = (i + round) % n; /* rotated */
        CHECK_OK(MPI_Group_incl(world, n, expect, &g));
        CHECK_OK(MPI_Comm_create_group(dup, g, round, &c));
        exercise(c, n, expect, "create_group rotated");
        CHECK_OK(MPI_Comm_free(&c));
        CHECK_OK(MPI_Group_free(&g));
    }
    CHECK_OK(MPI_Group_incl(world, 1, &rank, &g));
    CHECK_OK(MPI_Comm_create_group(dup, g, 0, &c));
    exercise(c, 1, &rank, "create_group self");
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Group_free(&g));
    CHECK_OK(MPI_Comm_create_group(dup, MPI_GROUP_EMPTY, 0, &c));
    CHECK(c == MPI_COMM_NULL, "create_group with MPI_GROUP_EMPTY");
    CHECK_CLASS(MPI_Comm_create_group(dup, world, -1, &c), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Comm_create_group(dup, MPI_GROUP_NULL, 0, &c), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_create(MPI_COMM_NULL, world, &c), MPI_ERR_COMM);

    /* A group reaching outside the communicator: MPI_COMM_SELF's parent. */
    if (n > 1) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* raised on comm */
        CHECK_CLASS(MPI_Comm_create_group(MPI_COMM_SELF, world, 0, &c), MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Comm_create(MPI_COMM_SELF, world, &c), MPI_ERR_GROUP);
    }

    /* MPI_Comm_split_type: one host, so SHARED is everybody, ordered by key
     * (reversed here); with every pair over the network (FMPL_FABRIC=net)
     * nobody shares memory, and FMPL_FABRIC=split makes two halves. */
    CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, -rank, MPI_INFO_NULL, &c));
    const char *fabric = getenv("FMPL_FABRIC");
    int lo = 0, hi = n; /* world ranks [lo, hi) share my memory */
    if (fabric && strcmp(fabric, "net") == 0) {
        lo = rank;
        hi = rank + 1;
    } else if (fabric && strcmp(fabric, "split") == 0) {
        lo = rank * 2 / n == 0 ? 0 : (n + 1) / 2;
        hi = rank * 2 / n == 0 ? (n + 1) / 2 : n;
    }
    for (int i = 0; i < hi - lo; i++)
        expect[i] = hi - 1 - i;
    exercise(c, hi - lo, expect, "split_type shared");
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Comm_split_type(dup, MPI_UNDEFINED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
    CHECK_OK(MPI_Comm_split_type(dup, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &c));
    if (hi - lo == n) {
        CHECK(c == MPI_COMM_NULL, "split_type HW_UNGUIDED on one host gave a communicator");
    } else { /* several "hosts": the node level is a strict subset */
        for (int i = 0; i < hi - lo; i++)
            expect[i] = lo + i;
        exercise(c, hi - lo, expect, "split_type HW_UNGUIDED across hosts");
        CHECK_OK(MPI_Comm_free(&c));
    }
    CHECK_OK(MPI_Comm_split_type(dup, MPI_COMM_TYPE_HW_GUIDED, 0, MPI_INFO_NULL, &c));
    CHECK(c == MPI_COMM_NULL, "split_type HW_GUIDED without a resource type");
    MPI_Info info;
    CHECK_OK(MPI_Info_create(&info));
    CHECK_OK(MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory"));
    CHECK_OK(MPI_Comm_split_type(dup, MPI_COMM_TYPE_HW_GUIDED, rank, info, &c));
    for (int i = 0; i < hi - lo; i++)
        expect[i] = lo + i;
    exercise(c, hi - lo, expect, "split_type HW_GUIDED shared memory");
    CHECK_OK(MPI_Comm_free(&c));
    for (int i = 0; i < n; i++) /* the whole world again, for what follows */
        expect[i] = i;
    CHECK_CLASS(MPI_Comm_split_type(dup, 12345, 0, MPI_INFO_NULL, &c), MPI_ERR_ARG);

    /* MPI_Comm_idup: the communicator works once the request completes
     * (comm_idup.c tests the nonblocking behaviour). */
    MPI_Request req;
    CHECK_OK(MPI_Comm_idup(dup, &c, &req));
    MPI_Status st;
    CHECK_OK(MPI_Wait(&req, &st));
    CHECK(req == MPI_REQUEST_NULL, "idup request not released");
    int result;
    CHECK_OK(MPI_Comm_compare(dup, c, &result));
    CHECK(result == MPI_CONGRUENT, "idup: compare %d", result);
    exercise(c, n, expect, "idup");
    CHECK_OK(MPI_Comm_free(&c));
    int flag = 0;
    CHECK_OK(MPI_Comm_idup_with_info(dup, info, &c, &req));
    while (!flag)
        CHECK_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(req == MPI_REQUEST_NULL, "idup_with_info request not released");
    MPI_Info used;
    char value[64];
    CHECK_OK(MPI_Comm_get_info(c, &used));
    CHECK_OK(MPI_Info_get(used, "mpi_hw_resource_type", 63, value, &flag));
    CHECK(flag, "idup_with_info lost the hint");
    CHECK_OK(MPI_Info_free(&used));
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Comm_dup_with_info(dup, info, &c));
    exercise(c, n, expect, "dup_with_info");
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Info_free(&info));

    /* A new communicator carries a message at once: the first member done
     * sends before the others have left the call (the team must already be
     * known to them, or the message would be dropped). */
    for (int round = 0; round < 40; round++) {
        MPI_Comm fresh;
        if (round % 2)
            CHECK_OK(MPI_Comm_create_group(dup, world, round, &fresh));
        else
            CHECK_OK(MPI_Comm_dup(dup, &fresh));
        int token = 100 * round + rank, from = -1;
        CHECK_OK(MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % n, 0, &from, 1, MPI_INT,
                              (rank + n - 1) % n, 0, fresh, MPI_STATUS_IGNORE));
        CHECK(from == 100 * round + (rank + n - 1) % n, "round %d: got %d", round, from);
        CHECK_OK(MPI_Comm_free(&fresh));
    }

    /* Intercommunicator queries on intracommunicators. */
    CHECK_OK(MPI_Comm_test_inter(dup, &flag));
    CHECK(flag == 0, "test_inter: %d", flag);
    int rs;
    MPI_Group rg;
    CHECK_CLASS(MPI_Comm_remote_size(dup, &rs), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_remote_group(dup, &rg), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_test_inter(MPI_COMM_NULL, &flag), MPI_ERR_COMM);

    CHECK_OK(MPI_Comm_free(&dup));
    CHECK_OK(MPI_Group_free(&evens_rev));
    if (odds_rev != MPI_GROUP_EMPTY)
        CHECK_OK(MPI_Group_free(&odds_rev));
    CHECK_OK(MPI_Group_free(&world));
    free(odd);
    free(expect);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi comm_create ok on %d ranks\n", n);
    MPI_Finalize();
    return 0;
}
