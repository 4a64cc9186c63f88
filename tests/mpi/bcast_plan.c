/* Prepared persistent broadcasts (src/collectives/bcast_shm_plan.c): small
 * MPI_Bcast_init requests whose instances travel as one line each in the
 * root's plan ring.  Several plans share a root (one instance sequence per
 * root, in start order), so the test interleaves:
 *   - plans of 1, 8, 24 and 56 bytes (the prepared form) and one of 57 bytes
 *     (the ring broadcast), rooted at every rank, some sharing a root;
 *   - a random subset started each round, in the same order everywhere, with
 *     MPI_Start and MPI_Startall, and random short delays; one rank lags for
 *     stretches of rounds, so the roots run more than a ring (8 entries)
 *     ahead of it and wait for it;
 *   - blocking MPI_Bcast and a nonblocking MPI_Ibcast between them;
 *   - plans freed and created again halfway, and plans on a duplicate
 *     communicator;
 *   - the root's buffer poisoned right after its wait.
 * Every byte of every instance is checked. */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPLANS 10
#define MAXB 64

static int me, np;

static unsigned char val(long inst, int plan, int i)
{
    return (unsigned char)(inst * 13 + plan * 29 + i * 7 + 1);
}

typedef struct plan {
    int bytes, root;
    MPI_Comm comm;
    MPI_Request req;
    unsigned char buf[MAXB];
    long instances;
} plan;

static void make(plan *p, int k, MPI_Comm world, MPI_Comm dup)
{
    static const int sizes[] = {1, 8, 24, 56, 57, 8, 8, 56, 3, 40};
    p->bytes = sizes[k];
    p->root = (k * 3 + k / 4) % np;
    p->comm = k % 3 == 2 ? dup : world;
    CHECK_OK(MPI_Bcast_init(p->buf, p->bytes, MPI_BYTE, p->root, p->comm, MPI_INFO_NULL,
                            &p->req));
}

static void fill(plan *p, int k)
{
    for (int i = 0; i < MAXB; i++)
        p->buf[i] = me == p->root && i < p->bytes ? val(p->instances, k, i) : 0xEE;
}

static void check(plan *p, int k)
{
    for (int i = 0; i < MAXB; i++) {
        unsigned char want = i < p->bytes ? val(p->instances, k, i) : 0xEE;
        CHECK(p->buf[i] == want, "plan %d (%d B, root %d) instance %ld byte %d: %d, want %d", k,
              p->bytes, p->root, p->instances, i, p->buf[i], want);
    }
    p->instances++;
    memset(p->buf, 0x55, MAXB); /* poison: a late reader or writer shows */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long rounds = argc > 1 ? atol(argv[1]) : 3000;
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    static plan plans[NPLANS];
    for (int k = 0; k < NPLANS; k++)
        make(&plans[k], k, MPI_COMM_WORLD, dup);
    srand(12345); /* the same choice of plans on every rank */
    unsigned local = (unsigned)me * 7919u + 1u;
    long started = 0;
    for (long r = 0; r < rounds; r++) {
        /* One rank lags for a stretch of rounds in turn, and only plans
         * rooted elsewhere run meanwhile: the roots' waits return at once,
         * so they run ahead of the lagging rank until their rings are full. */
        int lagging = (r / 40) % (np + 1), lag = r % 40 < 20 && lagging < np;
        int chosen[NPLANS], n = 0;
        for (int k = 0; k < NPLANS; k++)
            if (rand() % 3 != 0 && !(lag && plans[k].root == lagging))
                chosen[n++] = k;
        MPI_Request reqs[NPLANS];
        for (int j = 0; j < n; j++) {
            plan *p = &plans[chosen[j]];
            fill(p, chosen[j]);
            reqs[j] = p->req;
        }
        if (rand_r(&local) % 8 == 0)
            usleep((useconds_t)(rand_r(&local) % 50));
        if (lag && lagging == me)
            usleep(100);
        if (r % 2 == 0) {
            CHECK_OK(MPI_Startall(n, reqs));
        } else {
            for (int j = 0; j < n; j++)
                CHECK_OK(MPI_Start(&reqs[j]));
        }
        if (rand_r(&local) % 8 == 0)
            usleep((useconds_t)(rand_r(&local) % 50));
        /* complete in reverse order: a root's later instance may finish first */
        for (int j = n - 1; j >= 0; j--)
            CHECK_OK(MPI_Wait(&reqs[j], MPI_STATUS_IGNORE));
        for (int j = 0; j < n; j++)
            check(&plans[chosen[j]], chosen[j]);
        started += n;
        if (r % 7 == 3) { /* blocking and nonblocking broadcasts in between */
            long v[2] = {me == r % np ? r : -1, me == r % np ? -r : -1};
            CHECK_OK(MPI_Bcast(v, 2, MPI_LONG, (int)(r % np), MPI_COMM_WORLD));
            CHECK(v[0] == r && v[1] == -r, "round %ld: MPI_Bcast gave %ld %ld", r, v[0], v[1]);
            MPI_Request q;
            long w = me == 0 ? r * 5 : -1;
            CHECK_OK(MPI_Ibcast(&w, 1, MPI_LONG, 0, dup, &q));
            CHECK_OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
            CHECK(w == r * 5, "round %ld: MPI_Ibcast gave %ld", r, w);
        }
        if (r == rounds / 2) /* free some plans and make them again */
            for (int k = 0; k < NPLANS; k += 2) {
                CHECK_OK(MPI_Request_free(&plans[k].req));
                CHECK(plans[k].req == MPI_REQUEST_NULL, "plan %d: freed request not null", k);
                make(&plans[k], k, MPI_COMM_WORLD, dup);
            }
    }
    for (int k = 0; k < NPLANS; k++)
        CHECK_OK(MPI_Request_free(&plans[k].req));
    CHECK_OK(MPI_Comm_free(&dup));
    if (me == 0)
        printf("mpi_bcast_plan ok: %ld instances of %d plans on %d ranks\n", started, NPLANS, np);
    MPI_Finalize();
    return 0;
}
