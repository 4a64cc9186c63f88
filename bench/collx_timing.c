/* collx-timing: time the collective core's gather, scatter, allgather,
 * alltoall, reduce_scatter_block and scan algorithms side by side (not a
 * test; see tests/collx for correctness).
 *
 *   fmplrun -n 2 build/bench/collx-timing [--malloc] [--reps N] [--only NAME]
 *                                         [--sizes B,B,B]
 *
 * Each algorithm is called directly from the catalogue on the world team
 * (so one run compares them), with blocks of 8 B, 64 KiB and 1 MiB per
 * member (or the --sizes given, at most 4 MiB) (reductions: the same bytes of int32 sums per member).  Buffers
 * come from fmpl_alloc (the shared heap) or, with --malloc, from
 * posix_memalign.  After a 50 ms warm-up of every algorithm, for each case: a
 * probe of 3 calls sizes the loops to about
 * 1 ms, 10% warm-up, then `reps` (default 15) timed loops; a loop's time per
 * call is the slowest rank's (fmpl_allreduce dmax); the output gives the
 * minimum and the median over the loops, in microseconds.  Short loops and
 * the minimum keep other load on the machine out of the figures. */
#include "fmpl.h"
#include "collectives/collectives.h"
#include "collectives/sched_coll.h"
#include "protocols/team.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static fmpl_team *T;
static int me, P, use_malloc, reps = 15;
static const char *only;
static char *sbuf, *rbuf;
static int64_t cur;
static int64_t sizes[8] = {8, 64 << 10, 1 << 20};
static int nsizes = 3;

#define CALL(x)                                                                    \
    do {                                                                           \
        int rc_ = (x);                                                             \
        if (rc_ != FMPL_SUCCESS) {                                                 \
            fprintf(stderr, "%s failed: %s\n", #x, fmpl_error_string(rc_));        \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

typedef int (*run_fn)(void);

/* A point-to-point algorithm: its schedule built and run, as a blocking
 * call does (select.c). */
static int run_schedule(fmpl_sched *s, int rc)
{
    if (rc == FMPL_SUCCESS)
        rc = fmpl_sched_run(s);
    fmpl_sched_free(s);
    return rc;
}
#define SCHEDULE(s, build)                                                         \
    do {                                                                           \
        fmpl_sched *s = fmpl_sched_new(FMPL_SCHED_BLOCKING);                       \
        return s ? run_schedule(s, build) : FMPL_ERR_NO_MEMORY;                    \
    } while (0)

static int r_gather_shm(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    fmpl_pairs_run st;
    fmpl_gatherv_shm_setup(&st, T, sbuf, cur, rbuf, &l, 0, 0);
    return fmpl_coll_run(&st.a);
}
static int r_gather_linear(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    SCHEDULE(s, fmpl_sched_coll_gatherv(s, T, sbuf, cur, rbuf, &l, 0, 0));
}
static int r_scatter_shm(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    fmpl_pairs_run st;
    fmpl_scatterv_shm_setup(&st, T, sbuf, &l, rbuf, cur, 0, 0);
    return fmpl_coll_run(&st.a);
}
static int r_scatter_linear(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    SCHEDULE(s, fmpl_sched_coll_scatterv(s, T, sbuf, &l, rbuf, cur, 0, 0));
}
static int r_allgather_shm(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    fmpl_pairs_run st;
    fmpl_allgatherv_shm_setup(&st, T, sbuf, rbuf, &l, 0);
    return fmpl_coll_run(&st.a);
}
static int r_allgather_ring(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    SCHEDULE(s, fmpl_sched_coll_allgatherv(s, T, sbuf, rbuf, &l, 0));
}
static int r_alltoall_shm(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    fmpl_pairs_run st;
    fmpl_alltoallv_shm_setup(&st, T, sbuf, &l, rbuf, &l);
    return fmpl_coll_run(&st.a);
}
static int r_alltoall_pairwise(void)
{
    fmpl_coll_layout l = {NULL, NULL, cur};
    SCHEDULE(s, fmpl_sched_coll_alltoallv(s, T, sbuf, &l, rbuf, &l, 0));
}
static int64_t rs_counts[256];
static int r_rsb_shm(void)
{
    fmpl_reduce_scatter_run st;
    fmpl_reduce_scatter_shm_setup(&st, T, sbuf, rbuf, NULL, cur / 4, fmpl_isum, 0);
    return fmpl_coll_run(&st.a);
}
static int r_rsb_pairwise(void)
{
    for (int q = 0; q < P; q++)
        rs_counts[q] = cur / 4;
    SCHEDULE(s, fmpl_sched_coll_reduce_scatter(s, T, sbuf, rbuf, rs_counts, fmpl_isum, 0,
                                               fmpl_coll_tmp(T)));
}
static int r_scan_shm(void)
{
    fmpl_scan_run st;
    fmpl_scan_shm_setup(&st, T, sbuf, rbuf, cur / 4, fmpl_isum, 0, 0);
    return fmpl_coll_run(&st.a);
}
static int r_scan_rd(void)
{
    SCHEDULE(s, fmpl_sched_coll_scan(s, T, sbuf, rbuf, cur / 4, fmpl_isum, 0, 0, fmpl_coll_tmp(T)));
}

typedef struct algo {
    const char *coll, *name;
    run_fn fn;
} algo;

static const algo algos[] = {
    {"gather", "shm", r_gather_shm},
    {"gather", "linear", r_gather_linear},
    {"scatter", "shm", r_scatter_shm},
    {"scatter", "linear", r_scatter_linear},
    {"allgather", "shm", r_allgather_shm},
    {"allgather", "ring", r_allgather_ring},
    {"alltoall", "shm", r_alltoall_shm},
    {"alltoall", "pairwise", r_alltoall_pairwise},
    {"reduce_scatter_block", "shm", r_rsb_shm},
    {"reduce_scatter_block", "pairwise", r_rsb_pairwise},
    {"scan", "shm", r_scan_shm},
    {"scan", "recursive_doubling", r_scan_rd},
};

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double loop(run_fn fn, int iters)
{
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    double t0 = fmpl_wtime();
    for (int i = 0; i < iters; i++)
        CALL(fn());
    double t = (fmpl_wtime() - t0) / iters, work;
    CALL(fmpl_allreduce(&t, 1, fmpl_dmax, FMPL_COMM_WORLD, &work));
    return t;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--malloc") == 0)
            use_malloc = 1;
        else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
            only = argv[++i];
        else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            nsizes = 0;
            for (char *p = argv[++i]; *p && nsizes < 8; p++) {
                long long v = strtoll(p, &p, 10);
                if (v < 4 || v > (4 << 20))
                    return 2;
                sizes[nsizes++] = v;
                if (!*p)
                    break;
            }
        }
        else {
            fprintf(stderr, "usage: collx-timing [--malloc] [--reps N] [--only COLL]\n");
            return 2;
        }
    }
    if (reps < 1 || reps > 99)
        reps = 15;
    CALL(fmpl_init(NULL, NULL, 0));
    T = fmpl_teams[FMPL_COMM_WORLD];
    me = T->rank;
    P = T->size;
    int64_t maxs = 0;
    for (int i = 0; i < nsizes; i++)
        maxs = sizes[i] > maxs ? sizes[i] : maxs;
    size_t bytes = (size_t)P * (size_t)maxs;
    if (use_malloc) {
        if (posix_memalign((void **)&sbuf, 64, bytes) || posix_memalign((void **)&rbuf, 64, bytes))
            return 1;
    } else {
        sbuf = fmpl_alloc(bytes);
        rbuf = fmpl_alloc(bytes);
    }
    if (!sbuf || !rbuf)
        return 1;
    memset(sbuf, 1, bytes);
    memset(rbuf, 2, bytes);
    if (me == 0)
    {
        printf("# collx-timing: %d ranks, %s buffers; per call, slowest rank, us "
               "(min / median of %d loops)\n# %-21s %-19s",
               P, use_malloc ? "malloc" : "fmpl_alloc", reps, "collective", "algorithm");
        for (int i = 0; i < nsizes; i++)
            printf(" %10lld B", (long long)sizes[i]);
        printf("\n");
    }
    /* Warm-up: every algorithm at the largest size for about 50 ms in all,
     * so that the first row does not pay for the job's start (page tables,
     * caches, clock ramp). */
    cur = maxs;
    for (int q = 0; q < P; q++)
        rs_counts[q] = cur / 4;
    double until = fmpl_wtime() + 0.05;
    for (int done = 0; !done;) {
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
            if (!only || strcmp(only, algos[a].coll) == 0)
                CALL(algos[a].fn());
        done = fmpl_wtime() > until;
        CALL(fmpl_bcast(&done, sizeof done, 0, FMPL_COMM_WORLD));
    }
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
        if (only && strcmp(only, algos[a].coll) != 0)
            continue;
        char line[512];
        int n = snprintf(line, sizeof line, "  %-21s %-19s", algos[a].coll, algos[a].name);
        for (int s = 0; s < nsizes; s++) {
            cur = sizes[s];
            for (int q = 0; q < P; q++)
                rs_counts[q] = cur / 4;
            /* Loops of about 1 ms: on a shared machine a longer loop is
             * likely to include a preemption, and the minimum filters them. */
            double probe = loop(algos[a].fn, 3);
            int iters = probe > 0 ? (int)(1e-3 / probe) : 1000;
            iters = iters < 3 ? 3 : iters > 2000 ? 2000 : iters;
            CALL(fmpl_bcast(&iters, sizeof iters, 0, FMPL_COMM_WORLD));
            double t[99];
            loop(algos[a].fn, iters / 10 + 1);
            for (int r = 0; r < reps; r++)
                t[r] = loop(algos[a].fn, iters);
            qsort(t, (size_t)reps, sizeof t[0], cmp_double);
            n += snprintf(line + n, sizeof line - (size_t)n, " %6.2f/%7.2f", t[0] * 1e6,
                          t[reps / 2] * 1e6);
        }
        if (me == 0)
            printf("%s\n", line);
    }
    CALL(fmpl_finalize());
    return 0;
}
