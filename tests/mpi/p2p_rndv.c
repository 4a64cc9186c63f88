/* Every rendezvous path of the tag-matched protocol, byte for byte.
 *
 * Which path a message takes depends on where its buffers are (FMPL's
 * shared heap through MPI_Alloc_mem, or private malloc memory) and on the
 * environment (FMPL_RNDV_CMA, FMPL_SHM_CMA, FMPL_EAGER_MAX; CMakeLists.txt
 * runs this program under each).  For all four placements of the two
 * buffers, every rank pair (r -> r+1 in a ring, so with 4 ranks every rank
 * sends and receives at once) moves sizes from 0 to 4 MiB + 3 bytes:
 *   - blocking Send/Recv,
 *   - a window of 8 nonblocking sends and receives completed by Waitall,
 *     with receives posted after the sends (unexpected rendezvous) for
 *     half of the rounds,
 *   - a receive buffer larger than the message (status count checked) and
 *     a smaller one (MPI_ERR_TRUNCATE; nothing written past its end),
 *   - eager sizes: a blocking send whose receiver is away for 20 ms, and
 *     every rank sending before receiving.
 * Each message's bytes depend on (sender, size, index), so a message
 * delivered to the wrong receive shows. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WINDOW 8
#define GUARD 64

static int rank, size;

static unsigned char pattern(int sender, size_t n, int index, size_t i)
{
    return (unsigned char)((i * 131u) ^ (n * 7u) ^ ((unsigned)sender * 29u) ^
                           ((unsigned)index * 17u) ^ (i >> 12));
}

static void fill(unsigned char *p, int sender, size_t n, int index)
{
    for (size_t i = 0; i < n; i++)
        p[i] = pattern(sender, n, index, i);
}

/* The first `len` bytes of a message of n bytes. */
static void verify_part(const unsigned char *p, int sender, size_t n, size_t len, int index,
                        const char *what)
{
    for (size_t i = 0; i < len; i++)
        CHECK(p[i] == pattern(sender, n, index, i),
              "%s: %zu bytes from rank %d, index %d: byte %zu is 0x%02x, expected 0x%02x",
              what, n, sender, index, i, p[i], pattern(sender, n, index, i));
}

static void verify(const unsigned char *p, int sender, size_t n, int index, const char *what)
{
    verify_part(p, sender, n, n, index, what);
}

static void *get(size_t n, int shared)
{
    void *p = NULL;
    if (shared)
        CHECK_OK(MPI_Alloc_mem((MPI_Aint)n, MPI_INFO_NULL, &p));
    else
        p = malloc(n);
    CHECK(p != NULL, "no memory for %zu bytes", n);
    return p;
}

static void put(void *p, int shared)
{
    if (shared)
        MPI_Free_mem(p);
    else
        free(p);
}

static void blocking(size_t n, unsigned char *s, unsigned char *r, int right, int left)
{
    fill(s, rank, n, 0);
    memset(r, 0xee, n + GUARD);
    MPI_Status st;
    /* Even ranks send first: with 2 ranks a Send to a peer still in its
     * own Send would need the receive for a rendezvous to finish. */
    if (rank % 2 == 0) {
        CHECK_OK(MPI_Send(s, (int)n, MPI_BYTE, right, 1, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(r, (int)n + GUARD / 2, MPI_BYTE, left, 1, MPI_COMM_WORLD, &st));
    } else {
        CHECK_OK(MPI_Recv(r, (int)n + GUARD / 2, MPI_BYTE, left, 1, MPI_COMM_WORLD, &st));
        CHECK_OK(MPI_Send(s, (int)n, MPI_BYTE, right, 1, MPI_COMM_WORLD));
    }
    int count = -1;
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK((size_t)count == n && st.MPI_SOURCE == left && st.MPI_TAG == 1,
          "status: count %d source %d tag %d for %zu bytes from %d", count, st.MPI_SOURCE,
          st.MPI_TAG, n, left);
    verify(r, left, n, 0, "blocking");
    for (size_t i = n; i < n + GUARD; i++)
        CHECK(r[i] == 0xee, "blocking %zu bytes: byte %zu past the message was written", n, i);
}

static void windowed(size_t n, unsigned char **s, unsigned char **r, int right, int left,
                     int recv_late)
{
    MPI_Request rq[2 * WINDOW];
    for (int k = 0; k < WINDOW; k++) {
        fill(s[k], rank, n, k + 1);
        memset(r[k], 0xee, n);
    }
    int nr = 0;
    if (!recv_late)
        for (int k = 0; k < WINDOW; k++)
            CHECK_OK(MPI_Irecv(r[k], (int)n, MPI_BYTE, left, 2, MPI_COMM_WORLD, &rq[nr++]));
    for (int k = 0; k < WINDOW; k++)
        CHECK_OK(MPI_Isend(s[k], (int)n, MPI_BYTE, right, 2, MPI_COMM_WORLD, &rq[nr++]));
    if (recv_late) {
        /* Let the announcements arrive first: the receives then match
         * unexpected messages. */
        MPI_Status st;
        CHECK_OK(MPI_Probe(left, 2, MPI_COMM_WORLD, &st));
        for (int k = 0; k < WINDOW; k++)
            CHECK_OK(MPI_Irecv(r[k], (int)n, MPI_BYTE, left, 2, MPI_COMM_WORLD, &rq[nr++]));
    }
    CHECK_OK(MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE));
    for (int k = 0; k < WINDOW; k++)
        verify(r[k], left, n, k + 1, recv_late ? "window, receives late" : "window");
}

/* Blocking eager sends whose receiver is away (not in MPI) for a while:
 * a by-reference send gives up waiting and copies into the channel; and
 * every rank sending to its right neighbour at once before receiving (MPI
 * calls this unsafe, but eager sizes must not deadlock). */
static void eager_corner_cases(size_t n, unsigned char *s, unsigned char *r, int right,
                               int left)
{
    fill(s, rank, n, 50);
    memset(r, 0xee, n);
    MPI_Status st;
    if (rank % 2 == 0) {
        CHECK_OK(MPI_Send(s, (int)n, MPI_BYTE, right, 4, MPI_COMM_WORLD));
        fill(s, rank, n, 51); /* the send is complete: the buffer is ours */
        CHECK_OK(MPI_Recv(r, (int)n, MPI_BYTE, left, 4, MPI_COMM_WORLD, &st));
    } else {
        usleep(20000);
        CHECK_OK(MPI_Recv(r, (int)n, MPI_BYTE, left, 4, MPI_COMM_WORLD, &st));
        CHECK_OK(MPI_Send(s, (int)n, MPI_BYTE, right, 4, MPI_COMM_WORLD));
    }
    verify(r, left, n, 50, "receiver away");
    const char *eager = getenv("FMPL_EAGER_MAX");
    if (eager && strcmp(eager, "0") == 0)
        return; /* everything by rendezvous: the unsafe pattern may block */
    fill(s, rank, n, 52);
    memset(r, 0xee, n);
    CHECK_OK(MPI_Send(s, (int)n, MPI_BYTE, right, 5, MPI_COMM_WORLD));
    CHECK_OK(MPI_Recv(r, (int)n, MPI_BYTE, left, 5, MPI_COMM_WORLD, &st));
    verify(r, left, n, 52, "everyone sends first");
}

static void truncation(size_t n, unsigned char *s, unsigned char *r, int right, int left)
{
    size_t cap = n / 2;
    fill(s, rank, n, 99);
    memset(r, 0xee, n + GUARD);
    MPI_Request rq;
    MPI_Status st;
    CHECK_OK(MPI_Isend(s, (int)n, MPI_BYTE, right, 3, MPI_COMM_WORLD, &rq));
    int rc = MPI_Recv(r, (int)cap, MPI_BYTE, left, 3, MPI_COMM_WORLD, &st);
    CHECK(error_class(rc) == MPI_ERR_TRUNCATE, "%zu bytes into %zu: class %d", n, cap,
          error_class(rc));
    CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    verify_part(r, left, n, cap, 99, "truncated (the part that fits)");
    for (size_t i = cap; i < n + GUARD; i++)
        CHECK(r[i] == 0xee, "truncated %zu into %zu: byte %zu written", n, cap, i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    const size_t sizes[] = {0, 1, 4095, 8192, 16384, 16385, 65536 + 7, 262144, 1048576 + 1,
                            4194304 + 3};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    const size_t max = sizes[nsizes - 1];
    for (int placement = 0; placement < 4; placement++) {
        int s_shared = placement & 1, r_shared = (placement >> 1) & 1;
        unsigned char *s[WINDOW], *r[WINDOW];
        for (int k = 0; k < WINDOW; k++) {
            size_t cap = k == 0 ? max + GUARD : 1048576 + GUARD;
            s[k] = get(cap, s_shared);
            r[k] = get(cap, r_shared);
        }
        for (size_t i = 0; i < nsizes; i++) {
            size_t n = sizes[i];
            blocking(n, s[0], r[0], right, left);
            if (n <= 1048576 + 1)
                windowed(n, s, r, right, left, (int)(i % 2));
            if (n >= 2)
                truncation(n, s[0], r[0], right, left);
            if (n <= 16384)
                eager_corner_cases(n, s[0], r[0], right, left);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int k = 0; k < WINDOW; k++) {
            put(s[k], s_shared);
            put(r[k], r_shared);
        }
    }
    if (rank == 0)
        printf("p2p_rndv ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
