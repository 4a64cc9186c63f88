/* Prepared messages of persistent collectives (src/collectives/sched_prepared.c):
 * a persistent schedule whose messages all hold 16 KiB at most sends each as
 * one put into a mailbox the receiver prepared at init.  Run with schedules
 * of messages (the point-to-point algorithms forced on shared memory, or
 * FMPL_FABRIC=net):
 *   A  the root runs ahead: it completes 150 instances of a MPI_Bcast_init
 *      (8 bytes, 4 KiB, 16 KiB) while the others have not started, so it
 *      fills each mailbox (64, 15 and 4 entries) and must wait until they
 *      take entries;
 *   B  MPI_Allreduce_init of 8 bytes, 200 instances, random short delays;
 *   C  a 56-byte and a 16 KiB broadcast and a 16-byte allreduce started
 *      together (MPI_Startall), waited for in either order;
 *   D  a broadcast of 16 KiB + 1 byte (its schedule is not prepared) beside
 *      an 8-byte one (prepared), in the same rounds;
 *   E  requests freed without a start, between the others.
 * Messages above 16 KiB to a network peer are prepared too (direct: put
 * straight into the receiver's registered buffer after its token; under
 * FMPL_FABRIC=net), the others keep the tokens; each message's kind is
 * chosen by its two ends alike, so one schedule may mix them:
 *   F  MPI_Bcast_init of 1 MiB (40 instances, members late at random) and
 *      MPI_Allreduce_init of 64 KiB of doubles;
 *   G  MPI_Gatherv_init whose root receives 10 bytes from rank 1 (mailbox)
 *      and 100 000 from the others (direct, or tokens): a root and a leaf
 *      whose schedules differ (this hung over the network when a whole
 *      schedule was prepared or not);
 *   H  (2 ranks) a broadcast of 64 KiB whose receiver posts 32 KiB: the
 *      receiver's wait fails with MPI_ERR_TRUNCATE, and the next
 *      collective still works.
 * Every byte of every instance is checked; the root's buffer is poisoned
 * right after its wait. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int me, np;

static void part_a(int root, int bytes)
{
    int n = bytes / 8;
    long long *v = malloc((size_t)n * sizeof *v);
    CHECK(v != NULL, "no memory");
    MPI_Request req;
    CHECK_OK(MPI_Bcast_init(v, n, MPI_LONG_LONG, root, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    if (me != root)
        usleep(20000); /* the root runs a mailbox ahead and waits */
    for (long i = 0; i < 150; i++) {
        for (int j = 0; j < n; j++)
            v[j] = me == root ? i * 7 + root + j : -1;
        CHECK_OK(MPI_Start(&req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int j = 0; j < n; j++)
            CHECK(v[j] == i * 7 + root + j, "instance %ld (%d bytes) from root %d, word %d: "
                  "%lld", i, bytes, root, j, v[j]);
        for (int j = 0; j < n; j++)
            v[j] = -2; /* poison */
    }
    CHECK_OK(MPI_Request_free(&req));
    free(v);
}

static void part_b(void)
{
    long long in = 0, out = 0;
    MPI_Request req;
    CHECK_OK(MPI_Allreduce_init(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req));
    for (long i = 0; i < 200; i++) {
        in = (long long)(me + 1) * (i + 1);
        out = -1;
        if (rand() % 8 == 0)
            usleep((useconds_t)(rand() % 200));
        CHECK_OK(MPI_Start(&req));
        if (rand() % 4 == 0)
            usleep((useconds_t)(rand() % 100));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        long long want = (long long)np * (np + 1) / 2 * (i + 1);
        CHECK(out == want, "instance %ld: %lld, want %lld", i, out, want);
    }
    CHECK_OK(MPI_Request_free(&req));
}

enum { BIG = 16384 };

static void part_c(void)
{
    static unsigned char b[56], c[BIG];
    long long in[2] = {0, 0}, out[2] = {0, 0};
    int root = 1 % np;
    MPI_Request reqs[3];
    CHECK_OK(MPI_Bcast_init(b, 56, MPI_BYTE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]));
    CHECK_OK(MPI_Allreduce_init(in, out, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &reqs[1]));
    CHECK_OK(MPI_Bcast_init(c, BIG, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[2]));
    for (int i = 0; i < 100; i++) {
        for (int j = 0; j < 56; j++)
            b[j] = me == root ? (unsigned char)(i * 3 + j) : 0xEE;
        for (int j = 0; j < BIG; j++)
            c[j] = me == 0 ? (unsigned char)(i * 11 + j / 7) : 0xEE;
        in[0] = me * 10 + i;
        in[1] = -me - i;
        out[0] = out[1] = 0;
        CHECK_OK(MPI_Startall(3, reqs));
        if (i % 2) {
            CHECK_OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
            CHECK_OK(MPI_Wait(&reqs[2], MPI_STATUS_IGNORE));
            CHECK_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        } else {
            CHECK_OK(MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE));
        }
        for (int j = 0; j < 56; j++)
            CHECK(b[j] == (unsigned char)(i * 3 + j), "round %d byte %d: %d", i, j, b[j]);
        for (int j = 0; j < BIG; j++)
            CHECK(c[j] == (unsigned char)(i * 11 + j / 7), "round %d, 16 KiB byte %d: %d", i,
                  j, c[j]);
        CHECK(out[0] == (np - 1) * 10 + i && out[1] == -i, "round %d: max %lld %lld", i,
              out[0], out[1]);
        memset(b, 0x55, sizeof b); /* poison */
        memset(c, 0x55, sizeof c);
    }
    for (int r = 0; r < 3; r++)
        CHECK_OK(MPI_Request_free(&reqs[r]));
}

static void part_d(void)
{
    static unsigned char big[BIG + 1];
    long long small;
    int root = np - 1;
    MPI_Request reqs[2];
    CHECK_OK(MPI_Bcast_init(big, BIG + 1, MPI_BYTE, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &reqs[0]));
    CHECK_OK(MPI_Bcast_init(&small, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &reqs[1]));
    for (int i = 0; i < 60; i++) {
        for (int j = 0; j < BIG + 1; j++)
            big[j] = me == root ? (unsigned char)(i + j * 5) : 0xEE;
        small = me == 0 ? 1000 + i : -1;
        CHECK_OK(MPI_Startall(2, reqs));
        CHECK_OK(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
        for (int j = 0; j < BIG + 1; j++)
            CHECK(big[j] == (unsigned char)(i + j * 5), "round %d byte %d: %d", i, j, big[j]);
        CHECK(small == 1000 + i, "round %d: %lld", i, small);
    }
    CHECK_OK(MPI_Request_free(&reqs[0]));
    CHECK_OK(MPI_Request_free(&reqs[1]));
}

static void part_e(void)
{
    for (int i = 0; i < 10; i++) {
        long long v = 0, w = 0;
        MPI_Request req;
        CHECK_OK(MPI_Bcast_init(&v, 1, MPI_LONG_LONG, i % np, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req));
        CHECK_OK(MPI_Request_free(&req));
        w = me == i % np ? 77 + i : 0;
        CHECK_OK(MPI_Bcast(&w, 1, MPI_LONG_LONG, i % np, MPI_COMM_WORLD));
        CHECK(w == 77 + i, "blocking broadcast %d after a freed request: %lld", i, w);
    }
}

static void part_f(void)
{
    enum { MIB = 1 << 20, AR = 8192 };
    unsigned char *b = malloc(MIB);
    double *x = malloc(AR * sizeof *x), *y = malloc(AR * sizeof *y);
    CHECK(b && x && y, "no memory");
    int root = np > 2 ? 2 : np - 1;
    MPI_Request reqs[2];
    CHECK_OK(MPI_Bcast_init(b, MIB, MPI_BYTE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[0]));
    CHECK_OK(MPI_Allreduce_init(x, y, AR, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &reqs[1]));
    for (int i = 0; i < 40; i++) {
        for (int j = 0; j < MIB; j++)
            b[j] = me == root ? (unsigned char)(i * 3 + j * 11) : 0xA5;
        for (int j = 0; j < AR; j++)
            x[j] = me + i + j;
        if (rand() % 4 == 0)
            usleep((useconds_t)(rand() % 3000));
        CHECK_OK(MPI_Start(&reqs[0]));
        CHECK_OK(MPI_Wait(&reqs[0], MPI_STATUS_IGNORE));
        for (int j = 0; j < MIB; j++)
            CHECK(b[j] == (unsigned char)(i * 3 + j * 11), "1 MiB round %d byte %d: %d", i, j,
                  b[j]);
        if (me == root)
            memset(b, 0x5A, MIB);
        CHECK_OK(MPI_Start(&reqs[1]));
        CHECK_OK(MPI_Wait(&reqs[1], MPI_STATUS_IGNORE));
        for (int j = 0; j < AR; j++) {
            double want = (double)np * (i + j) + (double)np * (np - 1) / 2;
            CHECK(y[j] == want, "allreduce round %d element %d: %g, not %g", i, j, y[j], want);
        }
    }
    CHECK_OK(MPI_Request_free(&reqs[0]));
    CHECK_OK(MPI_Request_free(&reqs[1]));
    free(b);
    free(x);
    free(y);
}

static void part_g(void)
{
    enum { LARGE = 100000 };
    int *counts = malloc((size_t)np * sizeof *counts), *displs = malloc((size_t)np * sizeof *displs);
    CHECK(counts && displs, "no memory");
    int total = 0;
    for (int r = 0; r < np; r++) {
        counts[r] = r == 1 ? 10 : LARGE;
        displs[r] = total;
        total += counts[r];
    }
    unsigned char *sbuf = malloc(LARGE), *rbuf = malloc((size_t)total);
    CHECK(sbuf && rbuf, "no memory");
    MPI_Request req;
    CHECK_OK(MPI_Gatherv_init(sbuf, counts[me], MPI_BYTE, rbuf, counts, displs, MPI_BYTE, 0,
                              MPI_COMM_WORLD, MPI_INFO_NULL, &req));
    for (int i = 0; i < 20; i++) {
        for (int j = 0; j < counts[me]; j++)
            sbuf[j] = (unsigned char)(me * 31 + i + j);
        memset(rbuf, 0xEE, (size_t)total);
        CHECK_OK(MPI_Start(&req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int r = 0; me == 0 && r < np; r++)
            for (int j = 0; j < counts[r]; j++)
                CHECK(rbuf[displs[r] + j] == (unsigned char)(r * 31 + i + j),
                      "gatherv round %d from %d byte %d: %d", i, r, j, rbuf[displs[r] + j]);
    }
    CHECK_OK(MPI_Request_free(&req));
    free(sbuf);
    free(rbuf);
    free(counts);
    free(displs);
}

static void part_h(void)
{
    if (np != 2)
        return;
    enum { SENT = 65536 };
    static unsigned char b[SENT];
    MPI_Request req;
    CHECK_OK(MPI_Bcast_init(b, me == 0 ? SENT : SENT / 2, MPI_BYTE, 0, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &req));
    CHECK_OK(MPI_Start(&req));
    int rc = MPI_Wait(&req, MPI_STATUS_IGNORE), cls = MPI_SUCCESS;
    MPI_Error_class(rc, &cls);
    if (me == 1)
        CHECK(cls == MPI_ERR_TRUNCATE, "a 64 KiB broadcast into 32 KiB: class %d, not "
              "MPI_ERR_TRUNCATE", cls);
    CHECK_OK(MPI_Request_free(&req));
    long long v = me == 0 ? 4242 : 0;
    CHECK_OK(MPI_Bcast(&v, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD));
    CHECK(v == 4242, "the broadcast after a truncated one: %lld", v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    srand(12345u + (unsigned)me);
    part_a(0, 8);
    part_a(np - 1, 8);
    part_a(0, 4096);
    part_a(np - 1, BIG);
    part_b();
    part_c();
    part_d();
    part_e();
    part_f();
    part_g();
    part_h();
    part_a(np / 2, 8); /* after the frees: the mailboxes of new requests */
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 0)
        printf("persistent_prepared: %d ranks ok\n", np);
    MPI_Finalize();
    return 0;
}
