/* am-bench: active messages and split-phase barriers (fmpl.h), not a test.
 *   fmplrun -n 2 build/bench/am-bench [--iters N]
 *
 *  am ping-pong     rank 0 runs a handler at rank 1 that replies; half the
 *                   round trip, payloads 0 B .. fmpl_am_max_payload()
 *  am rate          rank 0 sends 8-byte messages back to back, rank 1 counts
 *                   them in its handler; messages per second
 *  split barrier    every rank: start + wait one instance at a time (the
 *                   latency), and 64 outstanding at a time (per instance)
 *  host cost        what the caller pays: fmpl_barrier_start alone (64 in a
 *                   row, nothing progressed in between), and fmpl_barrier_test
 *                   on a flag that is already 1 (the progress done elsewhere)
 * Times are medians of 7 repetitions (rank 0's clock); every message's
 * payload is checked once per size. */
#include "fmpl.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRY(call)                                                                  \
    do {                                                                           \
        int rc_ = (call);                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                 \
            fprintf(stderr, "am-bench: %s failed: %s\n", #call, fmpl_error_string(rc_)); \
            fmpl_abort(1, "am-bench failed");                                     \
        }                                                                          \
    } while (0)

enum { ID_PING = 1, ID_PONG, ID_COUNT, REPS = 7 };

static int me, n;
static volatile long pings, pongs, counted;
static unsigned char *buf;

static void on_ping(const fmpl_am_token *t, const uint64_t *args, int nargs,
                    const void *payload, size_t size, void *ctx)
{
    (void)args, (void)nargs, (void)ctx;
    pings++;
    TRY(fmpl_am_reply(t, ID_PONG, NULL, 0, payload, size));
}

static void on_pong(const fmpl_am_token *t, const uint64_t *args, int nargs,
                    const void *payload, size_t size, void *ctx)
{
    (void)t, (void)args, (void)nargs, (void)ctx;
    if (size && memcmp(payload, buf, size) != 0)
        fmpl_abort(1, "am-bench: a reply came back changed");
    pongs++;
}

static void on_count(const fmpl_am_token *t, const uint64_t *args, int nargs,
                     const void *payload, size_t size, void *ctx)
{
    (void)t, (void)payload, (void)size, (void)ctx;
    if (nargs != 1 || args[0] != (uint64_t)counted)
        fmpl_abort(1, "am-bench: messages out of order");
    counted++;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v)
{
    qsort(v, REPS, sizeof *v, cmp);
    return v[REPS / 2];
}

static void poll_until(volatile long *counter, long value)
{
    while (*counter < value)
        TRY(fmpl_am_poll(NULL));
}

static void am_pingpong(long iters)
{
    size_t max = fmpl_am_max_payload();
    size_t sizes[] = {0, 8, 1024, 16384, max};
    if (me == 0)
        printf("# am ping-pong, rank 0 <-> rank 1: half a round trip (us)\n#%9s %10s\n",
               "bytes", "usec");
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        double t[REPS];
        for (int rep = 0; rep < REPS; rep++) {
            long target = pings + iters; /* the first ping may run inside the barrier */
            TRY(fmpl_barrier(FMPL_COMM_WORLD));
            double t0 = fmpl_wtime();
            if (me == 0) {
                for (long i = 0; i < iters; i++) {
                    TRY(fmpl_am_send(1, ID_PING, NULL, 0, buf, sizes[s], FMPL_COMM_WORLD));
                    poll_until(&pongs, pongs + 1);
                }
            } else if (me == 1) {
                /* The handler replies; rank 1 only has to progress. */
                poll_until(&pings, target);
            }
            t[rep] = (fmpl_wtime() - t0) / (double)iters / 2 * 1e6;
        }
        if (me == 0)
            printf(" %9zu %10.3f\n", sizes[s], median(t));
    }
}

static void am_rate(long iters)
{
    double t[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        counted = 0;
        TRY(fmpl_barrier(FMPL_COMM_WORLD));
        double t0 = fmpl_wtime();
        if (me == 0) {
            for (long i = 0; i < iters; i++) {
                uint64_t a = (uint64_t)i;
                TRY(fmpl_am_send(1, ID_COUNT, &a, 1, buf, 8, FMPL_COMM_WORLD));
            }
            poll_until(&pongs, pongs + 1);
        } else if (me == 1) {
            poll_until(&counted, iters);
            TRY(fmpl_am_send(0, ID_PONG, NULL, 0, NULL, 0, FMPL_COMM_WORLD));
        }
        t[rep] = (double)iters / (fmpl_wtime() - t0);
    }
    if (me == 0)
        printf("# am rate, rank 0 -> rank 1, 8-byte payload and one argument word\n"
               " %.3f million messages/s\n", median(t) / 1e6);
}

static void split_barrier(long iters)
{
    enum { K = 64 };
    uint64_t flags[K];
    double lat[REPS], pipe[REPS], start_ns[REPS], test_ns[REPS];
    for (int rep = 0; rep < REPS; rep++) {
        TRY(fmpl_barrier(FMPL_COMM_WORLD));
        double t0 = fmpl_wtime();
        for (long i = 0; i < iters; i++) {
            TRY(fmpl_barrier_start(FMPL_COMM_WORLD, &flags[0]));
            TRY(fmpl_barrier_wait(&flags[0]));
        }
        lat[rep] = (fmpl_wtime() - t0) / (double)iters * 1e6;

        TRY(fmpl_barrier(FMPL_COMM_WORLD));
        long rounds = iters / K > 0 ? iters / K : 1;
        t0 = fmpl_wtime();
        double starting = 0;
        for (long r = 0; r < rounds; r++) {
            double s0 = fmpl_wtime();
            for (int k = 0; k < K; k++)
                TRY(fmpl_barrier_start(FMPL_COMM_WORLD, &flags[k]));
            starting += fmpl_wtime() - s0;
            TRY(fmpl_barrier_wait(&flags[K - 1]));
        }
        pipe[rep] = (fmpl_wtime() - t0) / (double)(rounds * K) * 1e6;
        start_ns[rep] = starting / (double)(rounds * K) * 1e9;

        /* Every flag is 1 now: a test finds it done without progressing. */
        long tests = 100000;
        int done = 0, all = 1;
        t0 = fmpl_wtime();
        for (long i = 0; i < tests; i++) {
            TRY(fmpl_barrier_test(&flags[i % K], &done));
            all &= done;
        }
        test_ns[rep] = (fmpl_wtime() - t0) / (double)tests * 1e9;
        if (!all)
            fmpl_abort(1, "am-bench: a completed instance's test said not done");
    }
    if (me == 0)
        printf("# split-phase barrier, %d ranks (rank 0's view)\n"
               " start + wait, one at a time:      %10.3f us per instance\n"
               " %d outstanding (start all, wait):  %10.3f us per instance\n"
               " fmpl_barrier_start alone:          %10.1f ns\n"
               " fmpl_barrier_test, flag already 1: %10.1f ns\n",
               n, median(lat), K, median(pipe), median(start_ns), median(test_ns));
}

int main(int argc, char **argv)
{
    long iters = 2000;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters = atol(argv[++i]);
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &me));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &n));
    buf = malloc(fmpl_am_max_payload());
    if (!buf)
        fmpl_abort(1, "am-bench: no memory");
    for (size_t i = 0; i < fmpl_am_max_payload(); i++)
        buf[i] = (unsigned char)(i * 131 + 7);
    TRY(fmpl_am_register(ID_PING, on_ping, NULL));
    TRY(fmpl_am_register(ID_PONG, on_pong, NULL));
    TRY(fmpl_am_register(ID_COUNT, on_count, NULL));
    TRY(fmpl_barrier(FMPL_COMM_WORLD));
    if (n >= 2) {
        am_pingpong(iters);
        am_rate(iters * 10);
    }
    split_barrier(iters);
    free(buf);
    return fmpl_finalize();
}
