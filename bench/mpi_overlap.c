/* mpi-overlap: how much of a nonblocking or persistent MPI operation goes on
 * while the calling rank computes, and how much CPU the calling thread spends
 * inside MPI for it (issue 14, section 5).  Standard MPI C API only:
 * bench/compare builds this file with FMPL's, Open MPI's and MPICH's mpicc.
 *
 *   mpirun -n 2 mpi-overlap [--cases LIST] [--compute sleep|busy|both]
 *                           [--iters N] [--quick] [--json FILE] [--alloc-mem]
 *                           [--cpu-clock thread|rusage]
 *
 * Cases (1 MiB unless said): iallreduce (MPI_Iallreduce, doubles, MPI_SUM),
 * ibcast (MPI_Ibcast from rank 0), allreduce_init and bcast_init (persistent:
 * MPI_Start ... MPI_Wait), isend_irecv (4 MiB: ranks 2k and 2k+1 exchange;
 * each posts its MPI_Irecv, then its MPI_Isend, computes, and waits for both),
 * bcast_init_8b (MPI_Start to MPI_Wait of a persistent 8-byte MPI_Bcast_init
 * against a blocking 8-byte MPI_Bcast: the latency ratio), sync_8b (the
 * synchronous paths a progress thread must not slow, issue 14 section 3:
 * the one-way latency of an 8-byte MPI_Send/MPI_Recv ping-pong between
 * ranks 2k and 2k+1, MPI_Bcast and MPI_Allreduce of 8 B; blocks of each in
 * turn, the median block's time per operation, the slowest rank).
 *
 * Method, per case, OSU style (osu_iallreduce and friends), an MPI_Barrier
 * before every iteration, every iteration timed alone:
 *   pure      start + wait, nothing between: t_pure;
 *   overlap   start, compute until t_pure has passed, wait: t_overall; the
 *             compute phase is timed too (t_cpu: a sleep ends a little late);
 *   host CPU  the overlap loop again, reading the calling thread's CPU clock
 *             before and after the start call and the wait call only (never
 *             around the compute): CPU time spent inside MPI per iteration.
 * Each rank takes the median iteration (of the CPU time too, as of the start
 * and the wait calls alone; the JSON adds the CPU time's mean, which a few
 * iterations spent spinning behind a descheduled peer can swell); the
 * figures are the maximum over ranks.
 *   overlap % = max(0, 100 (1 - (t_overall - t_cpu) / t_pure))
 *   host CPU % = host CPU time / t_pure
 * Two kinds of compute, no MPI call in either:
 *   sleep  clock_nanosleep to the deadline: the rank is off the CPU, as while
 *          a GPU kernel or I/O runs (the thread's timer slack is set to 1 ns,
 *          else the kernel may let the sleep run 50 us late);
 *   busy   a loop reading the clock: the rank holds its core.
 *
 * The CPU clock.  getrusage(RUSAGE_THREAD) cannot time a call of a few
 * microseconds on Linux: for a running thread it reports the runtime the
 * scheduler last booked (at a tick or a context switch), so the interval
 * around a call takes in whatever ran since, compute included (a 10 us spin
 * after 200 us of busy compute reads as 206 us).  The default therefore is
 * clock_gettime(CLOCK_THREAD_CPUTIME_ID), the same user + system time of the
 * calling thread, exact to the nanosecond; --cpu-clock rusage uses getrusage.
 * Its own cost (the reading of an empty interval) is in the header.
 *
 * Data are verified once per case, outside the timed loops: the same calls,
 * with a compute phase between start and wait (so that what moved while the
 * rank computed is checked), carry a known pattern; the receive areas first
 * hold a value differing at every byte; every byte is compared, and the 64
 * bytes after each buffer must be untouched.  A mismatch is an error: the
 * case is reported "error" and the program exits 1.  A case whose first call
 * fails on any rank is "unsupported" (MPI_ERRORS_RETURN); a persistent case
 * built against an MPI older than 4.0 is "n/a".
 *
 * Output: a table on standard output and, with --json, one JSON object per
 * line, as bench/mpi's suite writes them (bench/README.md, "mpi-overlap"). */
#define _GNU_SOURCE
#include <mpi.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "json_string.h"
#include "median.h"
#include "mpi_common.h"

#if defined(MPI_VERSION) && MPI_VERSION >= 4
#define HAVE_MPI4 1
#else
#define HAVE_MPI4 0
#endif

#define MIB (1L << 20)
#define GUARD 64          /* bytes after each buffer that must stay untouched */
#define GUARD_BYTE 0x5a
#define ROOT 0
#define TAG 14
#define MSG_LEN 512
#define LATENCY_FACTOR 50 /* the 8-byte case runs this many times --iters */
#define LATENCY_ROUNDS 10 /* ... alternating blocking and persistent blocks */
#define SYNC_FACTOR 10    /* sync_8b: operations per timed block, times --iters */
#define SYNC_ROUNDS 15    /* ... blocks of each operation, in turn */

#define die(...) bench_die("mpi-overlap", rank, __VA_ARGS__)

enum compute_kind { COMPUTE_NONE, COMPUTE_SLEEP, COMPUTE_BUSY };
static const char *const kind_name[] = {"none", "sleep", "busy"};

static int rank, nranks;
static struct {
    int quick, alloc_mem, rusage, kinds[2], nkinds;
    long iters;
    double compute_min; /* usec: the compute phase's floor */
    const char *cases, *json_path;
} opt;
static FILE *json;
static int errors;
static unsigned char *sbuf, *rbuf, *ebuf; /* send, receive, expected result */
static double cpu_clock_overhead;         /* usec: an empty interval */

/* ---- clocks and the two kinds of compute ---- */

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static double usec_since(int64_t t0, int64_t t1)
{
    return (double)(t1 - t0) * 1e-3;
}

/* The calling thread's CPU time (user + system), usec. */
static double cpu_usec(void)
{
    if (opt.rusage) {
        struct rusage ru;
        getrusage(RUSAGE_THREAD, &ru);
        return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
               (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
    }
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static void compute_until(enum compute_kind kind, int64_t deadline)
{
    if (kind == COMPUTE_BUSY) {
        while (mono_ns() < deadline)
            ;
        return;
    }
    struct timespec ts = {.tv_sec = (time_t)(deadline / 1000000000),
                          .tv_nsec = (long)(deadline % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* ---- the operations ---- */

struct op;

struct ocase {
    const char *name, *what;
    long size;                   /* bytes */
    int needs_mpi4;
    int (*init)(struct op *);    /* persistent requests; NULL: none */
    int (*start)(struct op *);   /* starts the operation (or runs it: blocking) */
    /* Buffers for timing (check 0), or the verified pattern with the expected
     * result in ebuf (check 1); returns the bytes of rbuf to compare. */
    long (*fill)(struct op *, int check);
    int latency; /* LATENCY_PERSISTENT or LATENCY_SYNC: not an overlap case */
};
enum { LATENCY_PERSISTENT = 1, LATENCY_SYNC = 2 };

struct op {
    const struct ocase *c;
    int count;                   /* elements */
    MPI_Request req[2];
    int nreq;                    /* requests the wait completes */
    int mismatch;
    char msg[MSG_LEN];
};

static int partner(void)
{
    int p = rank ^ 1;
    return p < nranks ? p : -1; /* the last of an odd number of ranks sits out */
}

static int start_iallreduce(struct op *op)
{
    op->nreq = 1;
    return MPI_Iallreduce(sbuf, rbuf, op->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &op->req[0]);
}

static int start_ibcast(struct op *op)
{
    op->nreq = 1;
    return MPI_Ibcast(rbuf, op->count, MPI_BYTE, ROOT, MPI_COMM_WORLD, &op->req[0]);
}

static int start_bcast_blocking(struct op *op)
{
    op->nreq = 0;
    return MPI_Bcast(rbuf, op->count, MPI_BYTE, ROOT, MPI_COMM_WORLD);
}

static int start_exchange(struct op *op)
{
    int p = partner();
    op->nreq = 0;
    if (p < 0)
        return MPI_SUCCESS;
    TRY(MPI_Irecv(rbuf, op->count, MPI_BYTE, p, TAG, MPI_COMM_WORLD, &op->req[0]));
    op->nreq = 1;
    TRY(MPI_Isend(sbuf, op->count, MPI_BYTE, p, TAG, MPI_COMM_WORLD, &op->req[1]));
    op->nreq = 2;
    return MPI_SUCCESS;
}

static int wait_op(struct op *op)
{
    /* Statuses, not MPI_STATUSES_IGNORE: gcc 12 misreads MPICH's (a pointer
     * of value 1) as an array too small. */
    MPI_Status st[2];
    return MPI_Waitall(op->nreq, op->req, st);
}

#if HAVE_MPI4
static int start_persistent(struct op *op)
{
    return MPI_Startall(op->nreq, op->req);
}

static int init_allreduce(struct op *op)
{
    op->nreq = 1;
    return MPI_Allreduce_init(sbuf, rbuf, op->count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &op->req[0]);
}

static int init_bcast(struct op *op)
{
    op->nreq = 1;
    return MPI_Bcast_init(rbuf, op->count, MPI_BYTE, ROOT, MPI_COMM_WORLD, MPI_INFO_NULL,
                          &op->req[0]);
}
#endif

/* A byte pattern that differs with the seed and the offset (a block in the
 * wrong place, a stale or a truncated buffer all show). */
static unsigned char pattern(unsigned seed, long i)
{
    uint64_t x = (uint64_t)i * 0x9e3779b97f4a7c15u + (uint64_t)seed * 0xbf58476d1ce4e5b9u;
    x ^= x >> 29;
    return (unsigned char)(x >> 24);
}

/* ebuf = the pattern; what receives it first holds its complement. */
static void expect_pattern(long n, unsigned seed, unsigned char *src, unsigned char *dst)
{
    for (long i = 0; i < n; i++) {
        ebuf[i] = pattern(seed, i);
        if (src)
            src[i] = ebuf[i];
        if (dst)
            dst[i] = (unsigned char)~ebuf[i];
    }
}

static long fill_sum(struct op *op, int check)
{
    double *in = (double *)(void *)sbuf, *want = (double *)(void *)ebuf;
    double ranks_sum = (double)nranks * (nranks + 1) / 2;
    for (int i = 0; i < op->count; i++) {
        /* Quarters of small integers: every sum is exact in doubles. */
        double k = (double)(i % 11 + 1) / 4;
        in[i] = check ? (double)(rank + 1) * k : 1.0;
        want[i] = ranks_sum * k;
    }
    memset(rbuf, 0xff, (size_t)op->c->size); /* NaN: an element not written fails */
    return op->c->size;
}

static long fill_bcast(struct op *op, int check)
{
    if (!check)
        return 0;
    expect_pattern(op->c->size, 11, rank == ROOT ? rbuf : NULL, rank == ROOT ? NULL : rbuf);
    return op->c->size;
}

static long fill_exchange(struct op *op, int check)
{
    int p = partner();
    if (!check || p < 0)
        return 0;
    expect_pattern(op->c->size, 100u + (unsigned)rank, sbuf, NULL); /* what I send */
    expect_pattern(op->c->size, 100u + (unsigned)p, NULL, rbuf);     /* what I get */
    return op->c->size;
}

static const struct ocase cases[] = {
    {"iallreduce", "MPI_Iallreduce, doubles, MPI_SUM", MIB, 0, NULL, start_iallreduce, fill_sum},
    {"ibcast", "MPI_Ibcast from rank 0", MIB, 0, NULL, start_ibcast, fill_bcast},
#if HAVE_MPI4
    {"allreduce_init", "persistent MPI_Allreduce_init, doubles, MPI_SUM: MPI_Start ... MPI_Wait",
     MIB, 1, init_allreduce, start_persistent, fill_sum},
    {"bcast_init", "persistent MPI_Bcast_init from rank 0: MPI_Start ... MPI_Wait", MIB, 1,
     init_bcast, start_persistent, fill_bcast},
#else
    {"allreduce_init", "persistent MPI_Allreduce_init", MIB, 1, NULL, NULL, fill_sum},
    {"bcast_init", "persistent MPI_Bcast_init", MIB, 1, NULL, NULL, fill_bcast},
#endif
    {"isend_irecv", "MPI_Irecv + MPI_Isend, ranks 2k and 2k+1 exchange, then MPI_Waitall",
     4 * MIB, 0, NULL, start_exchange, fill_exchange},
#if HAVE_MPI4
    {"bcast_init_8b", "persistent MPI_Bcast_init of 8 B (MPI_Start to MPI_Wait) against MPI_Bcast",
     8, 1, init_bcast, start_persistent, fill_bcast, LATENCY_PERSISTENT},
#else
    {"bcast_init_8b", "persistent MPI_Bcast_init of 8 B against MPI_Bcast", 8, 1, NULL, NULL,
     fill_bcast, LATENCY_PERSISTENT},
#endif
    {"sync_8b", "blocking 8 B: MPI_Send/MPI_Recv one-way latency, MPI_Bcast, MPI_Allreduce", 8,
     0, NULL, NULL, NULL, LATENCY_SYNC},
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))
static const struct ocase bcast_blocking_8b = {"bcast_8b", "MPI_Bcast of 8 B", 8, 0, NULL,
                                               start_bcast_blocking, fill_bcast};

/* ---- agreement: all ranks leave a case together ---- */

/* 1 if any rank failed (rc or a mismatch); rank 0 then holds the lowest
 * failing rank's message in op->msg. */
static int any_failed(struct op *op, int rc)
{
    return bench_any_failed(rc, op->mismatch, op->msg, MSG_LEN, TAG + 1);
}

/* ---- the loops ---- */

struct samples {
    double *wall, *compute, *cpu_start, *cpu_wait; /* per iteration, usec */
};

/* iters iterations of: barrier, start, compute (unless COMPUTE_NONE) until
 * compute_usec after the start returned, wait.  With cpu, the thread's CPU
 * clock is read around the start and the wait calls.  s may be NULL
 * (warm-up). */
static int run_loop(struct op *op, long iters, enum compute_kind kind, double compute_usec, int cpu,
                    struct samples *s)
{
    double c[4] = {0, 0, 0, 0};
    for (long i = 0; i < iters; i++) {
        TRY(MPI_Barrier(MPI_COMM_WORLD));
        int64_t t0 = mono_ns();
        if (cpu)
            c[0] = cpu_usec();
        TRY(op->c->start(op));
        if (cpu)
            c[1] = cpu_usec();
        int64_t tc0 = mono_ns(), tc1 = tc0;
        if (kind != COMPUTE_NONE) {
            compute_until(kind, tc0 + (int64_t)(compute_usec * 1e3));
            tc1 = mono_ns();
        }
        if (cpu)
            c[2] = cpu_usec();
        TRY(wait_op(op));
        if (cpu)
            c[3] = cpu_usec();
        int64_t t1 = mono_ns();
        if (s) {
            s->wall[i] = usec_since(t0, t1);
            s->compute[i] = usec_since(tc0, tc1);
            s->cpu_start[i] = c[1] - c[0];
            s->cpu_wait[i] = c[3] - c[2];
        }
    }
    return MPI_SUCCESS;
}

static double mean(const double *x, long n)
{
    double sum = 0;
    for (long i = 0; i < n; i++)
        sum += x[i];
    return n ? sum / (double)n : 0;
}

/* The maximum over ranks of each of n values (in place). */
static void max_over_ranks(double *v, int n)
{
    MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

/* One checked operation, with compute_usec of the first selected compute
 * kind between start and wait. */
static int verify(struct op *op, double compute_usec)
{
    long n = op->c->fill(op, 1);
    memset(rbuf + op->c->size, GUARD_BYTE, GUARD);
    int rc = run_loop(op, 1, (enum compute_kind)opt.kinds[0], compute_usec, 0, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The received bytes (none on a rank that takes no part), then the guard
     * after the buffer (whether it received or not). */
    long size = op->c->size;
    for (long i = 0; i < n + GUARD; i++) {
        long at = i < n ? i : size + i - n;
        int want = i < n ? ebuf[i] : GUARD_BYTE;
        if (rbuf[at] != want) {
            snprintf(op->msg, MSG_LEN, "rank %d: %s: %s %ld is 0x%02x, expected 0x%02x", rank,
                     op->c->name, i < n ? "byte" : "byte past the buffer", i < n ? i : i - n,
                     rbuf[at], want);
            op->mismatch = 1;
            break;
        }
    }
    op->c->fill(op, 0); /* timing contents again */
    return MPI_SUCCESS;
}

/* ---- output ---- */

static void json_begin(const char *bench, long size, const char *status)
{
    fprintf(json, "{\"type\":\"result\",\"bench\":");
    json_string(json, bench);
    if (size >= 0)
        fprintf(json, ",\"size\":%ld", size);
    fprintf(json, ",\"status\":");
    json_string(json, status);
}

static void emit_status(const struct ocase *c, const char *status, const char *why)
{
    if (rank != 0)
        return;
    printf("  %-15s %9ld  %s: %s\n", c->name, c->size, status, why);
    fflush(stdout);
    if (json) {
        json_begin(c->name, c->size, status);
        fprintf(json, ",\"error\":");
        json_string(json, why);
        fprintf(json, "}\n");
        fflush(json);
    }
}

struct figures {
    enum compute_kind kind;
    double pure, overall, compute;            /* usec, the median iteration */
    double cpu, cpu_mean, cpu_start, cpu_wait; /* usec: median, mean, median of each call */
};

static void emit_overlap(const struct ocase *c, const struct figures *f, long iters)
{
    if (rank != 0)
        return;
    double ov = 100.0 * (1.0 - (f->overall - f->compute) / f->pure);
    double cpu = f->cpu;
    if (ov < 0)
        ov = 0;
    printf("  %-15s %9ld %7s %10.2f %10.2f %10.2f %9.1f %10.2f %8.1f\n", c->name, c->size,
           kind_name[f->kind], f->pure, f->overall, f->compute, ov, cpu, 100 * cpu / f->pure);
    fflush(stdout);
    if (!json)
        return;
    json_begin(c->name, c->size, "ok");
    fprintf(json, ",\"compute\":\"%s\",\"unit\":\"%%\",\"value\":%.4g,\"iters\":%ld", kind_name[f->kind],
            ov, iters);
    fprintf(json,
            ",\"pure_usec\":%.6g,\"overall_usec\":%.6g,\"compute_usec\":%.6g,\"overlap_pct\":%.4g,"
            "\"host_cpu_usec\":%.6g,\"host_cpu_pct\":%.4g,\"start_cpu_usec\":%.6g,"
            "\"wait_cpu_usec\":%.6g,\"host_cpu_mean_usec\":%.6g}\n",
            f->pure, f->overall, f->compute, ov, cpu, 100 * cpu / f->pure, f->cpu_start,
            f->cpu_wait, f->cpu_mean);
    fflush(json);
}

/* ---- a case ---- */

static long warmup_iters(long iters)
{
    return iters / 10 > 2 ? iters / 10 : 2;
}

static void free_requests(struct op *op)
{
    for (int i = 0; i < 2; i++)
        if (op->req[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&op->req[i]);
}

/* Sets up op for case c: buffers for timing, the persistent requests.
 * Returns 0, or 1 after reporting the case n/a or unsupported. */
static int prepare(struct op *op, const struct ocase *c)
{
    memset(op, 0, sizeof *op);
    op->c = c;
    op->count = (int)(c->fill == fill_sum ? c->size / 8 : c->size);
    op->req[0] = op->req[1] = MPI_REQUEST_NULL;
    if (c->needs_mpi4 && !HAVE_MPI4) {
        char why[MSG_LEN];
        snprintf(why, sizeof why, "needs MPI 4 (this mpi.h is MPI %d.%d)", MPI_VERSION,
                 MPI_SUBVERSION);
        emit_status(c, "n/a", why);
        return 1;
    }
    c->fill(op, 0);
    int rc = c->init ? c->init(op) : MPI_SUCCESS;
    /* The first call: its failure on any rank means "unsupported". */
    if (rc == MPI_SUCCESS)
        rc = run_loop(op, 1, COMPUTE_NONE, 0, 0, NULL);
    if (any_failed(op, rc)) {
        emit_status(c, "unsupported", op->msg);
        free_requests(op);
        return 1;
    }
    return 0;
}

static void alloc_samples(struct samples *s, long n)
{
    double *p = malloc(4 * (size_t)n * sizeof *p);
    if (!p) {
        fprintf(stderr, "mpi-overlap: rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    s->wall = p;
    s->compute = p + n;
    s->cpu_start = p + 2 * n;
    s->cpu_wait = p + 3 * n;
}

/* Pure, then for each compute kind the overlap loop and the CPU loop;
 * verify; report. */
static void run_overlap_case(const struct ocase *c)
{
    struct op op;
    struct samples s;
    struct figures f[2];
    long iters = opt.iters;
    if (prepare(&op, c))
        return;
    alloc_samples(&s, iters);
    int rc = run_loop(&op, warmup_iters(iters), COMPUTE_NONE, 0, 0, NULL);
    if (rc == MPI_SUCCESS)
        rc = run_loop(&op, iters, COMPUTE_NONE, 0, 0, &s);
    double pure = median_of(s.wall, iters);
    max_over_ranks(&pure, 1);
    for (int k = 0; k < opt.nkinds && rc == MPI_SUCCESS; k++) {
        enum compute_kind kind = (enum compute_kind)opt.kinds[k];
        double compute = pure > opt.compute_min ? pure : opt.compute_min;
        rc = run_loop(&op, iters, kind, compute, 0, &s);
        double v[7] = {pure, median_of(s.wall, iters), median_of(s.compute, iters)};
        if (rc == MPI_SUCCESS)
            rc = run_loop(&op, iters, kind, compute, 1, &s);
        for (long i = 0; i < iters; i++)
            s.compute[i] = s.cpu_start[i] + s.cpu_wait[i]; /* the compute times are used */
        v[3] = median_of(s.compute, iters);
        v[4] = mean(s.compute, iters);
        v[5] = median_of(s.cpu_start, iters);
        v[6] = median_of(s.cpu_wait, iters);
        max_over_ranks(v, 7);
        f[k] = (struct figures){kind, v[0], v[1], v[2], v[3], v[4], v[5], v[6]};
    }
    if (rc == MPI_SUCCESS)
        rc = verify(&op, pure);
    if (any_failed(&op, rc)) {
        emit_status(c, "error", op.msg);
        errors++;
    } else {
        for (int k = 0; k < opt.nkinds; k++)
            emit_overlap(c, &f[k], iters);
    }
    free(s.wall);
    free_requests(&op);
}

/* The persistent 8-byte broadcast against the blocking one: blocks of each
 * in turn (drift hits both alike), the median iteration per rank, the
 * maximum over ranks. */
static void run_latency_case(const struct ocase *c)
{
    struct op pers, block;
    struct samples sp = {0}, sb = {0};
    long per_round = opt.iters * LATENCY_FACTOR / LATENCY_ROUNDS;
    long iters = per_round * LATENCY_ROUNDS;
    if (prepare(&pers, c) || prepare(&block, &bcast_blocking_8b)) {
        free_requests(&pers);
        return;
    }
    alloc_samples(&sp, iters);
    alloc_samples(&sb, iters);
    int rc = run_loop(&block, warmup_iters(per_round), COMPUTE_NONE, 0, 0, NULL);
    if (rc == MPI_SUCCESS)
        rc = run_loop(&pers, warmup_iters(per_round), COMPUTE_NONE, 0, 0, NULL);
    for (long r = 0; r < LATENCY_ROUNDS && rc == MPI_SUCCESS; r++) {
        struct samples b = {sb.wall + r * per_round, sb.compute, sb.cpu_start, sb.cpu_wait};
        struct samples p = {sp.wall + r * per_round, sp.compute, sp.cpu_start, sp.cpu_wait};
        rc = run_loop(&block, per_round, COMPUTE_NONE, 0, 0, &b);
        if (rc == MPI_SUCCESS)
            rc = run_loop(&pers, per_round, COMPUTE_NONE, 0, 0, &p);
    }
    double v[2] = {median_of(sp.wall, iters), median_of(sb.wall, iters)};
    max_over_ranks(v, 2);
    if (rc == MPI_SUCCESS)
        rc = verify(&pers, 0);
    if (rc == MPI_SUCCESS && !pers.mismatch) {
        rc = verify(&block, 0);
        pers.mismatch = block.mismatch;
        memcpy(pers.msg, block.msg, MSG_LEN);
    }
    if (any_failed(&pers, rc)) {
        emit_status(c, "error", pers.msg);
        errors++;
    } else if (rank == 0) {
        printf("  %-15s %9ld  MPI_Start..MPI_Wait %.3f us, MPI_Bcast %.3f us: ratio %.3f "
               "(%ld iterations each)\n",
               c->name, c->size, v[0], v[1], v[0] / v[1], iters);
        if (json) {
            json_begin(c->name, c->size, "ok");
            fprintf(json,
                    ",\"unit\":\"us\",\"value\":%.6g,\"iters\":%ld,\"bcast_usec\":%.6g,"
                    "\"ratio\":%.4g}\n",
                    v[0], iters, v[1], v[0] / v[1]);
            fflush(json);
        }
    }
    free(sp.wall);
    free(sb.wall);
    free_requests(&pers);
}

/* sync_8b: `iters` operations of kind k (0 ping-pong, 1 broadcast, 2
 * allreduce) after a barrier; returns the time per operation in usec (per
 * one-way message for the ping-pong).  Every operation's 8 bytes are
 * checked: the iteration's number travels. */
enum { SYNC_PINGPONG, SYNC_BCAST, SYNC_ALLREDUCE, SYNC_KINDS };
static const char *const sync_name[SYNC_KINDS] = {"pingpong", "bcast", "allreduce"};

static int sync_block(int k, long iters, long first, struct op *op, double *usec)
{
    int p = partner();
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    int64_t t0 = mono_ns();
    for (long i = first; i < first + iters; i++) {
        long long v = i, got = -1;
        double one = (double)(rank + 1), sum = 0;
        switch (k) {
        case SYNC_PINGPONG:
            if (p < 0)
                break;
            if (rank % 2 == 0) {
                TRY(MPI_Send(&v, 1, MPI_LONG_LONG, p, TAG, MPI_COMM_WORLD));
                TRY(MPI_Recv(&got, 1, MPI_LONG_LONG, p, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                TRY(MPI_Recv(&got, 1, MPI_LONG_LONG, p, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                TRY(MPI_Send(&got, 1, MPI_LONG_LONG, p, TAG, MPI_COMM_WORLD));
            }
            break;
        case SYNC_BCAST:
            got = rank == ROOT ? v : -1;
            TRY(MPI_Bcast(&got, 1, MPI_LONG_LONG, ROOT, MPI_COMM_WORLD));
            break;
        default:
            one *= (double)(i % 7 + 1);
            TRY(MPI_Allreduce(&one, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
            got = (long long)sum;
            v = (long long)((double)nranks * (nranks + 1) / 2 * (double)(i % 7 + 1));
            break;
        }
        if (got != v && !(k == SYNC_PINGPONG && p < 0) && !op->mismatch) {
            snprintf(op->msg, MSG_LEN, "rank %d: sync_8b: %s %ld received %lld, expected %lld",
                     rank, sync_name[k], i, got, v);
            op->mismatch = 1;
        }
    }
    *usec = usec_since(t0, mono_ns()) / (double)iters / (k == SYNC_PINGPONG ? 2 : 1);
    return MPI_SUCCESS;
}

/* The synchronous 8-byte paths: SYNC_ROUNDS blocks of each operation in
 * turn (drift hits all three alike), each operation's median block, the
 * maximum over ranks. */
static void run_sync_case(const struct ocase *c)
{
    struct op op = {.c = c};
    long per_block = opt.iters * SYNC_FACTOR;
    double *t = calloc(SYNC_KINDS * SYNC_ROUNDS, sizeof *t);
    if (!t)
        die("cannot allocate the sync_8b samples");
    int rc = MPI_SUCCESS;
    for (int k = 0; k < SYNC_KINDS && rc == MPI_SUCCESS; k++) /* warm-up */
        rc = sync_block(k, per_block / 10 + 1, 0, &op, &t[k]);
    for (long r = 0; r < SYNC_ROUNDS && rc == MPI_SUCCESS; r++)
        for (int k = 0; k < SYNC_KINDS && rc == MPI_SUCCESS; k++)
            rc = sync_block(k, per_block, r * per_block, &op, &t[k * SYNC_ROUNDS + r]);
    double v[SYNC_KINDS];
    for (int k = 0; k < SYNC_KINDS; k++)
        v[k] = median_of(t + k * SYNC_ROUNDS, SYNC_ROUNDS);
    free(t);
    if (any_failed(&op, rc)) {
        emit_status(c, "error", op.msg);
        errors++;
        return;
    }
    max_over_ranks(v, SYNC_KINDS);
    if (rank != 0)
        return;
    printf("  %-15s %9ld  one-way %.3f us, MPI_Bcast %.3f us, MPI_Allreduce %.3f us (%d blocks "
           "of %ld each)\n",
           c->name, c->size, v[0], v[1], v[2], SYNC_ROUNDS, per_block);
    if (json) {
        json_begin(c->name, c->size, "ok");
        fprintf(json,
                ",\"unit\":\"us\",\"value\":%.6g,\"iters\":%ld,\"pingpong_usec\":%.6g,"
                "\"bcast_usec\":%.6g,\"allreduce_usec\":%.6g}\n",
                v[0], per_block * SYNC_ROUNDS, v[0], v[1], v[2]);
        fflush(json);
    }
}

/* ---- options, set-up ---- */

static void usage(FILE *f)
{
    fprintf(f, "usage: mpirun -n N mpi-overlap [options]\n"
               "  --cases LIST       comma-separated, default all of\n");
    for (int i = 0; i < NCASES; i++)
        fprintf(f, "      %-15s %s, %ld B\n", cases[i].name, cases[i].what, cases[i].size);
    fprintf(f, "  --compute KIND     sleep, busy or both (default both)\n"
               "  --compute-min USEC the compute phase lasts max(pure time, USEC) (default 0:\n"
               "                     the pure time, as OSU's benchmarks)\n"
               "  --iters N          timed iterations per loop (default 200, --quick 50); the\n"
               "                     8-byte case runs 50 times as many\n"
               "  --quick            fewer iterations\n"
               "  --json FILE        also write one JSON line per result to FILE\n"
               "  --alloc-mem        buffers from MPI_Alloc_mem instead of malloc\n"
               "  --cpu-clock CLOCK  thread (CLOCK_THREAD_CPUTIME_ID, default) or rusage\n"
               "                     (getrusage(RUSAGE_THREAD): scheduler-tick granularity)\n");
}

static void parse_options(int argc, char **argv)
{
    const char *compute = "both", *clock = "thread";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--cases") && has)
            opt.cases = argv[++i];
        else if (!strcmp(a, "--compute") && has)
            compute = argv[++i];
        else if (!strcmp(a, "--compute-min") && has)
            opt.compute_min = atof(argv[++i]);
        else if (!strcmp(a, "--iters") && has)
            opt.iters = atol(argv[++i]);
        else if (!strcmp(a, "--quick"))
            opt.quick = 1;
        else if (!strcmp(a, "--json") && has)
            opt.json_path = argv[++i];
        else if (!strcmp(a, "--alloc-mem"))
            opt.alloc_mem = 1;
        else if (!strcmp(a, "--cpu-clock") && has)
            clock = argv[++i];
        else
            bench_not_an_option("mpi-overlap", rank, a, usage);
    }
    if (!strcmp(compute, "sleep") || !strcmp(compute, "both"))
        opt.kinds[opt.nkinds++] = COMPUTE_SLEEP;
    if (!strcmp(compute, "busy") || !strcmp(compute, "both"))
        opt.kinds[opt.nkinds++] = COMPUTE_BUSY;
    if (!opt.nkinds)
        die("--compute: '%s' is not sleep, busy or both", compute);
    if (!(opt.compute_min >= 0 && opt.compute_min <= 1e6))
        die("--compute-min: %g is out of range (0 to 1000000 usec)", opt.compute_min);
    if (strcmp(clock, "thread") && strcmp(clock, "rusage"))
        die("--cpu-clock: '%s' is not thread or rusage", clock);
    opt.rusage = !strcmp(clock, "rusage");
    if (opt.iters == 0)
        opt.iters = opt.quick ? 50 : 200;
    if (opt.iters < LATENCY_ROUNDS || opt.iters > 1000000)
        die("--iters: %ld is out of range (10 to 1000000)", opt.iters);
    if (opt.cases)
        for (const char *p = opt.cases; *p;) {
            size_t len = strcspn(p, ",");
            int known = 0;
            for (int i = 0; i < NCASES; i++)
                known |= strlen(cases[i].name) == len && !strncmp(p, cases[i].name, len);
            if (!known && len)
                die("--cases: unknown case '%.*s'", (int)len, p);
            p += len + (p[len] == ',');
        }
}

static unsigned char *alloc_buffer(size_t n)
{
    unsigned char *p = bench_alloc(n, opt.alloc_mem);
    if (!p)
        die("cannot allocate %zu bytes", n);
    return p;
}

static double measure_cpu_clock_overhead(void)
{
    double sum = 0;
    for (int i = 0; i < 1000; i++) {
        double a = cpu_usec();
        sum += cpu_usec() - a;
    }
    return sum / 1000;
}

static void print_start(void)
{
    struct bench_ident id;
    bench_ident(&id);
    printf("# mpi-overlap: %d ranks, %s buffers, %ld iterations per loop, CPU clock %s "
           "(empty interval %.3f us); %s on %s\n# library: %s\n",
           nranks, opt.alloc_mem ? "MPI_Alloc_mem" : "malloc", opt.iters,
           opt.rusage ? "getrusage(RUSAGE_THREAD)" : "CLOCK_THREAD_CPUTIME_ID", cpu_clock_overhead,
           id.date, id.host, id.lib);
    printf("# %-15s %9s %7s %10s %10s %10s %9s %10s %8s\n", "case", "bytes", "compute",
           "pure us", "overall us", "compute us", "overlap %", "host cpu us", "% pure");
    fflush(stdout);
    if (!json)
        return;
    fprintf(json, "{\"type\":\"header\",\"suite\":\"mpi-overlap\",\"ranks\":%d,\"library\":",
            nranks);
    json_string(json, id.lib);
    fprintf(json,
            ",\"mpi_version\":\"%d.%d\",\"quick\":%s,\"iters\":%ld,\"buffers\":\"%s\","
            "\"cpu_clock\":\"%s\",\"cpu_clock_overhead_usec\":%.4g",
            MPI_VERSION, MPI_SUBVERSION, opt.quick ? "true" : "false", opt.iters,
            opt.alloc_mem ? "MPI_Alloc_mem" : "malloc", opt.rusage ? "rusage" : "thread",
            cpu_clock_overhead);
    bench_json_ident(json, &id);
    fprintf(json, "}\n");
}

int main(int argc, char **argv)
{
    bench_init(&argc, &argv, &rank, &nranks);
    parse_options(argc, argv);
#ifdef PR_SET_TIMERSLACK
    /* This thread only (set after MPI_Init: threads the library started
     * keep theirs): the sleeping compute wakes at its deadline. */
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
    size_t bytes = 4 * MIB + GUARD;
    sbuf = alloc_buffer(bytes);
    rbuf = alloc_buffer(bytes);
    ebuf = alloc_buffer(bytes);
    cpu_clock_overhead = measure_cpu_clock_overhead();
    if (rank == 0 && opt.json_path && !(json = fopen(opt.json_path, "w")))
        die("cannot write %s", opt.json_path);
    if (rank == 0)
        print_start();
    for (int i = 0; i < NCASES; i++) {
        if (opt.cases && !bench_listed(opt.cases, cases[i].name))
            continue;
        if (rank == 0) {
            fprintf(stderr, "mpi-overlap: %s\n", cases[i].name);
            fflush(stderr);
        }
        if (cases[i].latency == LATENCY_SYNC)
            run_sync_case(&cases[i]);
        else if (cases[i].latency)
            run_latency_case(&cases[i]);
        else
            run_overlap_case(&cases[i]);
    }
    bench_free(sbuf, opt.alloc_mem);
    bench_free(rbuf, opt.alloc_mem);
    bench_free(ebuf, opt.alloc_mem);
    if (rank == 0 && errors)
        fprintf(stderr, "mpi-overlap: %d case(s) failed verification or returned errors\n",
                errors);
    return bench_finish(json, errors);
}
