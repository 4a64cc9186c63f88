/* Broadcasts whose members disagree with the root on the size (an
 * erroneous program) end in an error on the members, never in a hang or a
 * silent success, and the next broadcast works
 * (src/collectives/bcast_shm_mismatch.c):
 *   - the root sends more than a member's buffer takes: MPI_ERR_TRUNCATE,
 *     the buffer holds the message's first bytes and nothing past it;
 *   - the root sends less: an error of class MPI_ERR_ARG, the buffer holds
 *     what was sent and nothing past it;
 *   - the root's call succeeds;
 * for the blocking, nonblocking and persistent forms, with sizes that take
 * the same algorithm on both sides (the ring; the prepared lines of a few
 * bytes) and different ones (the ring against direct copies out of the
 * root's shared-heap buffer), buffers from malloc (large blocks are in the
 * shared heap) and from MPI_Alloc_mem.  After each erroneous broadcast a
 * correct one of another size is checked byte for byte.  Left out, as the
 * library does not catch it: a persistent broadcast of at most 56 bytes on
 * one side and of more on the other (it hangs). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { FORM_BLOCKING, FORM_NONBLOCKING, FORM_PERSISTENT, FORMS };
static const char *const form_name[FORMS] = {"MPI_Bcast", "MPI_Ibcast", "MPI_Bcast_init"};

static int rank, nranks;

static unsigned char pattern(long i, int seed) { return (unsigned char)(i * 131 + seed * 17 + 7); }

static int bcast(int form, void *buf, int count, int root)
{
    MPI_Request req;
    int rc;
    switch (form) {
    case FORM_BLOCKING:
        return MPI_Bcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD);
    case FORM_NONBLOCKING:
        rc = MPI_Ibcast(buf, count, MPI_BYTE, root, MPI_COMM_WORLD, &req);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
    default:
        rc = MPI_Bcast_init(buf, count, MPI_BYTE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        if (rc != MPI_SUCCESS)
            return rc;
        int rc2 = MPI_Start(&req);
        if (rc2 == MPI_SUCCESS)
            rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
        rc = MPI_Request_free(&req);
        return rc2 != MPI_SUCCESS ? rc2 : rc;
    }
}

/* A buffer of count bytes and 64 more: the root's holds the pattern of
 * `seed`, the rest (and every other member's) 0xee. */
static unsigned char *filled(int count, int root, int seed, int alloc_mem)
{
    unsigned char *b;
    if (alloc_mem)
        CHECK_OK(MPI_Alloc_mem(count + 64, MPI_INFO_NULL, &b));
    else
        CHECK((b = malloc((size_t)count + 64)) != NULL, "malloc of %d bytes", count + 64);
    for (long i = 0; i < count + 64; i++)
        b[i] = rank == root && i < count ? pattern(i, seed) : 0xee;
    return b;
}

static void release(unsigned char *b, int alloc_mem)
{
    if (alloc_mem)
        MPI_Free_mem(b);
    else
        free(b);
}

/* A correct broadcast of `count` bytes from `root`, checked. */
static void good(int form, int count, int root, int seed, int alloc_mem)
{
    unsigned char *b = filled(count, root, seed, alloc_mem);
    CHECK_OK(bcast(form, b, count, root));
    for (long i = 0; i < count + 64; i++)
        CHECK(b[i] == (i < count ? pattern(i, seed) : 0xee),
              "%s of %d bytes from %d after a mismatch: byte %ld is 0x%02x", form_name[form], count,
              root, i, b[i]);
    release(b, alloc_mem);
}

/* The root broadcasts root_count bytes, every other member expects count. */
static void mismatch(int form, int root_count, int count, int root, int alloc_mem)
{
    int mine = rank == root ? root_count : count;
    unsigned char *b = filled(mine, root, 3, alloc_mem);
    int rc = bcast(form, b, mine, root);
    if (rank == root) {
        CHECK(rc == MPI_SUCCESS, "%s: the root's call returned %d", form_name[form], rc);
    } else {
        int want = root_count > count ? MPI_ERR_TRUNCATE : MPI_ERR_ARG;
        CHECK(error_class(rc) == want,
              "%s: root %d bytes, member %d: class %d, expected %d", form_name[form], root_count,
              count, error_class(rc), want);
        long got = root_count < count ? root_count : count;
        for (long i = 0; i < mine + 64; i++)
            CHECK(b[i] == (i < got ? pattern(i, 3) : 0xee),
                  "%s: root %d bytes, member %d: byte %ld is 0x%02x", form_name[form], root_count,
                  count, i, b[i]);
    }
    release(b, alloc_mem);
    /* The team's sequence is aligned again: a correct broadcast follows,
     * from another root. */
    good(form, 3000, (root + 1) % nranks, 5, alloc_mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* {root's count, the others' count}: ring against ring; direct copies
     * (from 64 KiB) against the ring, both ways; direct against direct; a
     * few bytes (the persistent form's prepared lines) against a few. */
    static const int sizes[][2] = {{100, 50},         {50, 100},     {100000, 50000},
                                   {50000, 100000},   {4 << 20, 3 << 20}, {3 << 20, 4 << 20},
                                   {40, 20},          {20, 40}};
    int n = (int)(sizeof sizes / sizeof sizes[0]), runs = 0;
    for (int form = 0; form < FORMS; form++)
        for (int alloc_mem = 0; alloc_mem < 2; alloc_mem++)
            for (int i = 0; i < n; i++) {
                /* Not caught: a persistent broadcast of a few bytes (the
                 * prepared lines) on one side, of more on the other. */
                if (form == FORM_PERSISTENT && (sizes[i][0] <= 56) != (sizes[i][1] <= 56))
                    continue;
                mismatch(form, sizes[i][0], sizes[i][1], i % nranks, alloc_mem);
                runs++;
            }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("bcast_mismatch: %d mismatched broadcasts (3 forms, %d size pairs, 2 kinds of "
               "buffer) ok on %d ranks\n",
               runs, n, nranks);
    MPI_Finalize();
    return 0;
}
