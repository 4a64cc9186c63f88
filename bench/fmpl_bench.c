/* fmpl-bench: micro-benchmarks for the native FMPL API.
 *
 * Method (OSU Micro-Benchmarks style, plus the tests of the FMPL paper §6):
 *  - every measurement is preceded by warm-up iterations that are not timed;
 *  - the number of timed iterations is capped (10000, --quick 2000, --iters)
 *    and scaled down for slow (large) cases so that each size takes about
 *    0.3 s (--quick: 0.05 s).  The per-iteration time used for that comes
 *    from a short probe; for ping-pong rank 0 decides and tells rank 1, for
 *    collectives every rank derives it from the same fmpl_allreduce(dmax)
 *    result, so all ranks run the same counts;
 *  - buffers are touched before timing; the timed loops carry no checks
 *    other than return codes;
 *  - after timing, every size is verified outside the timed loop: a known
 *    pattern is sent with the same calls and checked byte for byte (and the
 *    bytes just past the message are checked untouched); the pre-posted
 *    receive test checks the very data received while timing.
 *
 * Matching indices: each index below is used in one direction only, so the
 * benchmark is correct whether the library treats a slot as belonging to an
 * ordered (sender, receiver) pair or to the unordered pair.
 */
#define _GNU_SOURCE
#include "fmpl.h"
#include "json_string.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define WORLD FMPL_COMM_WORLD

#define INIT_COUNT 1024       /* matching slots per peer passed to fmpl_init */
#define WINDOW 64             /* streaming bandwidth: messages in flight */
#define PREPOST_N 600         /* the paper's Table 2 test */
#define PREPOST_STRIDE 64     /* bytes between the 4-byte receive slots */
#define PREPOST_MSG 4
#define GUARD 64              /* bytes after each message checked untouched */
#define BUF_PAD 4096          /* allocation slack past max size (>= GUARD) */
#define MAX_SIZE_LIMIT (1L << 30)

/* Matching indices (see the note at the top). */
enum {
    IDX_CTRL01 = 0,           /* rank 0 -> 1: iteration plan */
    IDX_CTRL10 = 1,           /* rank 1 -> 0: ready / results */
    IDX_BLK_PING = 2,         /* 0 -> 1, blocking ping-pong */
    IDX_BLK_PONG = 3,         /* 1 -> 0 */
    IDX_PRE_PING = 80,        /* 0 -> 1, pre-posted ping-pong: 80 .. 80+PRE_BATCH-1 */
    IDX_PRE_PONG = 96,        /* 1 -> 0: 96 .. 96+PRE_BATCH-1 */
    IDX_ACK = 8,              /* 1 -> 0, streaming bandwidth acknowledgement */
    IDX_REPLY = 9,            /* 1 -> 0, pre-post test replies */
    IDX_PRE_READY = 10,       /* 1 -> 0, pre-posted ping-pong: next batch posted */
    IDX_STREAM = 16,          /* 0 -> 1, streaming window: 16 .. 16+WINDOW-1 */
    IDX_PREPOST = 128,        /* 0 -> 1, pre-post test: 128 .. 128+PREPOST_N-1 */
    IDX_END = IDX_PREPOST + PREPOST_N
};
#define PRE_BATCH 16          /* receives pre-posted per batch in the latency test */
_Static_assert(IDX_STREAM + WINDOW <= IDX_PRE_PING, "index ranges overlap");
_Static_assert(IDX_PRE_PONG + PRE_BATCH <= IDX_PREPOST, "index ranges overlap");
_Static_assert(IDX_END <= INIT_COUNT, "fmpl_init count too small");

enum {
    T_LATENCY = 1u << 0,
    T_BW = 1u << 1,
    T_BARRIER = 1u << 2,
    T_BCAST = 1u << 3,
    T_ALLREDUCE = 1u << 4,
    T_REDUCE = 1u << 5,
    T_PREPOST = 1u << 6,
    T_ALL = (1u << 7) - 1
};
static const char *const test_names[] = {"latency", "bw", "barrier", "bcast",
                                         "allreduce", "reduce", "prepost"};
#define NTESTS ((int)(sizeof test_names / sizeof test_names[0]))

enum { V_BLOCKING = 0, V_PREPOSTED = 1 };
static const char *const pp_variant_names[] = {"blocking", "pre-posted"};

enum { C_BARRIER, C_BCAST, C_ALLREDUCE, C_REDUCE };

/* One result line (JSON "results" entry).  NaN / negative = not applicable. */
typedef struct result {
    const char *test;
    const char *variant;
    long size;     /* bytes; -1: none */
    long count;    /* elements (reductions); -1: none */
    long iters;    /* timed iterations (windows for bw, reps for prepost); -1: none */
    double usec;   /* the headline time */
    double usec_min, usec_avg; /* collectives: min and mean over ranks */
    double gbps;
} result;

/* Iteration budget for one class of measurement. */
typedef struct plan_cfg {
    long base;     /* upper bound on timed iterations */
    long min;      /* lower bound on timed iterations */
    long skip_max; /* upper bound on warm-up iterations */
} plan_cfg;

static struct {
    int rank, nranks, ncores;
    int quick, use_malloc;
    long min_size, max_size;
    int max_size_set, iters_set;
    long iters_arg;
    unsigned only;
    const char *json_path;
    FILE *json;
    double budget, warm_budget; /* seconds per size: timed part, warm-up part */
    plan_cfg pp, bw, coll;
    int prepost_reps;
    int initialized;

    unsigned char *sbuf, *rbuf; /* max_size + BUF_PAD bytes each */
    long bufsize;               /* usable bytes (max message) */
    unsigned char *small_s, *small_r; /* 64 bytes each: acks */
    unsigned char *pp_s, *pp_r; /* PREPOST_N * PREPOST_STRIDE bytes each */
    double wtime_overhead;

    result *res;
    size_t nres, capres;
    int heap_note;              /* max size was lowered to fit the heap */
} g;

/* ------------------------------------------------------------ errors */

static void bench_exit(int code) __attribute__((noreturn));
static void bench_exit(int code)
{
    fflush(stdout);
    fflush(stderr);
    if (g.initialized) {
        g.initialized = 0;
        fmpl_finalize();
    }
    exit(code);
}

/* "fmpl-bench[rank R]: <message>" on standard error in one write, so that
 * lines from different ranks do not interleave. */
static void errmsgv(const char *fmt, va_list ap)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "fmpl-bench[rank %d]: ", g.rank);
    if (n < 0)
        return;
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    fflush(stdout);
    fflush(stderr);
    if (write(STDERR_FILENO, line, len) < 0)
        return;
}

static void errmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void errmsg(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errmsgv(fmt, ap);
    va_end(ap);
}

static void die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    errmsgv(fmt, ap);
    va_end(ap);
    bench_exit(EXIT_FAILURE);
}

static void fail_call(const char *call, int rc, int line) __attribute__((noreturn, cold));
static void fail_call(const char *call, int rc, int line)
{
    die("%s failed (line %d): %s (code %d)", call, line, fmpl_error_string(rc), rc);
}

#define CHECK(call)                                                      \
    do {                                                                 \
        int rc_ = (call);                                                \
        if (__builtin_expect(rc_ != FMPL_SUCCESS, 0))                    \
            fail_call(#call, rc_, __LINE__);                             \
    } while (0)

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...)
{
    va_list ap;
    if (g.rank != 0)
        return;
    fflush(stdout);
    fputs("fmpl-bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ------------------------------------------------------------ buffers */

static void *buf_alloc(size_t size)
{
    void *p = NULL;
    if (g.use_malloc) {
        if (posix_memalign(&p, 4096, size) != 0)
            p = NULL;
    } else {
        p = fmpl_alloc(size);
    }
    return p;
}

static void buf_free(void *p)
{
    if (!p)
        return;
    if (g.use_malloc)
        free(p);
    else
        fmpl_free(p);
}

static int allreduce_int_sum(int v)
{
    int buf = v, work = 0;
    CHECK(fmpl_allreduce(&buf, 1, fmpl_isum, WORLD, &work));
    return buf;
}

static double allreduce_double(double v, const fmpl_op *op)
{
    double buf = v, work = 0;
    CHECK(fmpl_allreduce(&buf, 1, op, WORLD, &work));
    return buf;
}

/* Allocates the big buffers on every rank; when the shared heap cannot hold
 * them, halves the largest size until every rank succeeds. */
static void alloc_buffers(void)
{
    long want = g.max_size;
    for (;;) {
        size_t bytes = (size_t)want + BUF_PAD;
        g.sbuf = buf_alloc(bytes);
        g.rbuf = buf_alloc(bytes);
        int failed = (g.sbuf == NULL || g.rbuf == NULL);
        if (allreduce_int_sum(failed) == 0)
            break;
        buf_free(g.rbuf); /* reverse order: kind to simple allocators */
        buf_free(g.sbuf);
        g.sbuf = g.rbuf = NULL;
        if (want <= 4096)
            die("cannot allocate two %ld-byte buffers with %s", want,
                g.use_malloc ? "malloc" : "fmpl_alloc (raise FMPL_HEAP_SIZE?)");
        want /= 2;
        g.heap_note = 1;
    }
    if (g.heap_note && g.rank == 0)
        fprintf(stderr, "fmpl-bench: warning: two %ld-byte buffers do not fit; largest "
                "size lowered to %ld bytes (raise FMPL_HEAP_SIZE)\n", g.max_size, want);
    g.bufsize = want;
    if (g.max_size > want)
        g.max_size = want;
    /* Touch every page now so that no timed loop takes a first-touch fault. */
    memset(g.sbuf, 0x5a, (size_t)want + BUF_PAD);
    memset(g.rbuf, 0xa5, (size_t)want + BUF_PAD);

    g.small_s = buf_alloc(64);
    g.small_r = buf_alloc(64);
    g.pp_s = buf_alloc(PREPOST_N * PREPOST_STRIDE);
    g.pp_r = buf_alloc(PREPOST_N * PREPOST_STRIDE);
    int failed = !g.small_s || !g.small_r || !g.pp_s || !g.pp_r;
    if (allreduce_int_sum(failed) != 0)
        die("cannot allocate the small buffers");
    memset(g.small_s, 1, 64);
    memset(g.small_r, 0, 64);
    memset(g.pp_s, 0, PREPOST_N * PREPOST_STRIDE);
    memset(g.pp_r, 0, PREPOST_N * PREPOST_STRIDE);
}

static void free_buffers(void)
{
    buf_free(g.pp_r);
    buf_free(g.pp_s);
    buf_free(g.small_r);
    buf_free(g.small_s);
    buf_free(g.rbuf);
    buf_free(g.sbuf);
}

/* ------------------------------------------------------------ patterns */

static inline uint64_t mix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* A seed unique to (test, sub, size); sub distinguishes direction, root, ... */
static uint64_t make_seed(int test, unsigned sub, long size)
{
    return mix64(((uint64_t)test << 56) ^ ((uint64_t)sub << 32) ^ (uint64_t)size);
}

/* Fills `size` bytes with the pattern of `seed`, or its bitwise complement
 * (a poison that differs from the expected data in every byte). */
static void pattern_fill(void *buf, long size, uint64_t seed, int complement)
{
    unsigned char *p = buf;
    uint64_t inv = complement ? ~0ull : 0;
    long nw = size / 8, j;
    for (j = 0; j < nw; j++) {
        uint64_t v = mix64(seed ^ (uint64_t)j) ^ inv;
        memcpy(p + 8 * j, &v, 8);
    }
    if (size % 8) {
        uint64_t v = mix64(seed ^ (uint64_t)nw) ^ inv;
        memcpy(p + 8 * nw, &v, (size_t)(size % 8));
    }
}

/* Offset of the first byte that differs from the pattern, or -1. */
static long pattern_check(const void *buf, long size, uint64_t seed, unsigned *got,
                          unsigned *want)
{
    const unsigned char *p = buf;
    long nw = (size + 7) / 8, j;
    for (j = 0; j < nw; j++) {
        uint64_t v = mix64(seed ^ (uint64_t)j);
        unsigned char e[8];
        long n = (j == nw - 1 && size % 8) ? size % 8 : 8;
        memcpy(e, &v, 8);
        if (memcmp(p + 8 * j, e, (size_t)n) != 0) {
            for (long k = 0; k < n; k++)
                if (p[8 * j + k] != e[k]) {
                    *got = p[8 * j + k];
                    *want = e[k];
                    return 8 * j + k;
                }
        }
    }
    return -1;
}

static void guard_set(unsigned char *buf, long size)
{
    memset(buf + size, 0xEE, GUARD);
}

static long guard_check(const unsigned char *buf, long size)
{
    for (long k = 0; k < GUARD; k++)
        if (buf[size + k] != 0xEE)
            return size + k;
    return -1;
}

/* Checks a received message and the guard after it; returns 0 or prints
 * why and returns 1. */
static int verify_data(const char *what, const unsigned char *buf, long size, uint64_t seed)
{
    unsigned got = 0, want = 0;
    long off = pattern_check(buf, size, seed, &got, &want);
    if (off >= 0) {
        errmsg("VERIFICATION FAILED: %s, %ld bytes: byte %ld "
               "is 0x%02x, expected 0x%02x", what, size, off, got, want);
        return 1;
    }
    off = guard_check(buf, size);
    if (off >= 0) {
        errmsg("VERIFICATION FAILED: %s, %ld bytes: byte %ld "
               "past the end of the message was overwritten (0x%02x)",
               what, size, off, buf[off]);
        return 1;
    }
    return 0;
}

static void verify_status(const char *what, const fmpl_status *st, int src, int index,
                          long size)
{
    if (st->source != src || st->index != index || st->size != size ||
        st->error != FMPL_SUCCESS)
        die("VERIFICATION FAILED: %s, %ld bytes: status {source %d, index %d, size %ld, "
            "error %d}, expected {%d, %d, %ld, 0}", what, size, st->source, st->index,
            st->size, st->error, src, index, size);
}

/* ------------------------------------------------------------ results */

static result *add_result(const char *test, const char *variant, long size, long iters,
                          double usec)
{
    if (g.nres == g.capres) {
        size_t cap = g.capres ? 2 * g.capres : 64;
        result *r = realloc(g.res, cap * sizeof *r);
        if (!r)
            die("out of memory");
        g.res = r;
        g.capres = cap;
    }
    result *r = &g.res[g.nres++];
    r->test = test;
    r->variant = variant;
    r->size = size;
    r->count = -1;
    r->iters = iters;
    r->usec = usec;
    r->usec_min = NAN;
    r->usec_avg = NAN;
    r->gbps = NAN;
    return r;
}

static double gbps_of(long size, double usec)
{
    return usec > 0 ? (double)size / (usec * 1e3) : NAN; /* bytes/us = MB/s; /1e3: GB/s */
}

static void print_num(double v, int width, int prec)
{
    if (isnan(v))
        printf(" %*s", width, "-");
    else
        printf(" %*.*f", width, prec, v);
}

/* ------------------------------------------------------------ planning */

/* Warm-up and timed iteration counts for one size, from the time of one
 * iteration measured by a probe. */
static void plan(const plan_cfg *pc, double t_iter, long *skip, long *iters)
{
    double t = t_iter > 1e-9 ? t_iter : 1e-9;
    double n = g.budget / t;
    long it = n >= (double)pc->base ? pc->base : (long)n;
    long lo = pc->min < pc->base ? pc->min : pc->base;
    if (it < lo)
        it = lo;
    if (it < 1)
        it = 1;
    double s = g.warm_budget / t;
    long sk = s >= (double)pc->skip_max ? pc->skip_max : (long)s;
    if (sk < 1)
        sk = 1;
    *skip = sk;
    *iters = it;
}

/* Rank 0 decides; rank 1 learns.  Outside every timed loop. */
static void pp_share_plan(long *skip, long *iters)
{
    long ctl[2] = {*skip, *iters};
    if (g.rank == 0) {
        CHECK(fmpl_send(ctl, (long)sizeof ctl, 1, IDX_CTRL01, WORLD));
    } else {
        fmpl_status st;
        CHECK(fmpl_recv(ctl, (long)sizeof ctl, 0, IDX_CTRL01, WORLD, &st));
        verify_status("control message", &st, 0, IDX_CTRL01, (long)sizeof ctl);
        *skip = ctl[0];
        *iters = ctl[1];
    }
}

/* Sizes: 0 (when include_zero and allowed), then powers of two in [lo, max]. */
static int make_sizes(long *sizes, int include_zero, long lo)
{
    int n = 0;
    if (include_zero && g.min_size == 0)
        sizes[n++] = 0;
    if (lo < g.min_size)
        lo = g.min_size;
    for (long s = 1; s <= g.max_size; s *= 2)
        if (s >= lo)
            sizes[n++] = s;
    return n;
}

/* ------------------------------------------------------------ ping-pong */

/* Runs skip + iters round trips; returns rank 0's time for the last iters.
 * Pre-posted (the paper's measure): receives are posted in batches of
 * PRE_BATCH on distinct indices before the round trips that use them, so
 * every header is in place before its send starts.  Posting is outside the
 * timed spans on both sides: rank 1 posts its batch, then tells rank 0 with
 * a message on IDX_PRE_READY, which rank 0 receives before starting its
 * clock. */
static double pp_run(int variant, long size, long skip, long iters)
{
    long total = skip + iters, i;
    double t0 = 0, timed = 0;
    unsigned char *sb = g.sbuf, *rb = g.rbuf;

    if (variant == V_BLOCKING) {
        for (i = 0; i < total; i++) {
            if (g.rank == 0) {
                if (i == skip)
                    t0 = fmpl_wtime();
                CHECK(fmpl_send(sb, size, 1, IDX_BLK_PING, WORLD));
                CHECK(fmpl_recv(rb, size, 1, IDX_BLK_PONG, WORLD, NULL));
            } else {
                CHECK(fmpl_recv(rb, size, 0, IDX_BLK_PING, WORLD, NULL));
                CHECK(fmpl_send(sb, size, 0, IDX_BLK_PONG, WORLD));
            }
        }
        return g.rank == 0 ? fmpl_wtime() - t0 : 0;
    }

    long batches_skip = (skip + PRE_BATCH - 1) / PRE_BATCH;
    long batches = batches_skip + (iters + PRE_BATCH - 1) / PRE_BATCH;
    for (long b = 0; b < batches; b++) {
        if (g.rank == 0) {
            for (int j = 0; j < PRE_BATCH; j++)
                CHECK(fmpl_irecv(rb, size, 1, IDX_PRE_PONG + j, WORLD));
            CHECK(fmpl_recv(NULL, 0, 1, IDX_PRE_READY, WORLD, NULL));
            t0 = fmpl_wtime();
            for (int j = 0; j < PRE_BATCH; j++) {
                CHECK(fmpl_send(sb, size, 1, IDX_PRE_PING + j, WORLD));
                CHECK(fmpl_irecv_wait(1, IDX_PRE_PONG + j, WORLD, NULL));
            }
            if (b >= batches_skip)
                timed += fmpl_wtime() - t0;
        } else {
            for (int j = 0; j < PRE_BATCH; j++)
                CHECK(fmpl_irecv(rb, size, 0, IDX_PRE_PING + j, WORLD));
            CHECK(fmpl_send(NULL, 0, 0, IDX_PRE_READY, WORLD));
            for (int j = 0; j < PRE_BATCH; j++) {
                CHECK(fmpl_irecv_wait(0, IDX_PRE_PING + j, WORLD, NULL));
                CHECK(fmpl_send(sb, size, 0, IDX_PRE_PONG + j, WORLD));
            }
        }
    }
    return timed * (double)iters / (double)((batches - batches_skip) * PRE_BATCH);
}

/* One round trip of known patterns with the variant's calls, checked. */
static void pp_verify(int variant, long size)
{
    uint64_t s_ping = make_seed(1, 2u * (unsigned)variant, size);
    uint64_t s_pong = make_seed(1, 2u * (unsigned)variant + 1, size);
    fmpl_status st;
    char what[128];
    int ping_idx = variant == V_BLOCKING ? IDX_BLK_PING : IDX_PRE_PING;
    int pong_idx = variant == V_BLOCKING ? IDX_BLK_PONG : IDX_PRE_PONG;
    int bad;

    if (g.rank == 0) {
        pattern_fill(g.sbuf, size, s_ping, 0);
        pattern_fill(g.rbuf, size, s_pong, 1);
        guard_set(g.rbuf, size);
        if (variant == V_BLOCKING) {
            CHECK(fmpl_send(g.sbuf, size, 1, ping_idx, WORLD));
            CHECK(fmpl_recv(g.rbuf, size, 1, pong_idx, WORLD, &st));
        } else {
            CHECK(fmpl_irecv(g.rbuf, size, 1, pong_idx, WORLD));
            CHECK(fmpl_send(g.sbuf, size, 1, ping_idx, WORLD));
            CHECK(fmpl_irecv_wait(1, pong_idx, WORLD, &st));
        }
        snprintf(what, sizeof what, "latency %s, pong 1 -> 0", pp_variant_names[variant]);
        verify_status(what, &st, 1, pong_idx, size);
        bad = verify_data(what, g.rbuf, size, s_pong);
    } else {
        pattern_fill(g.sbuf, size, s_pong, 0);
        pattern_fill(g.rbuf, size, s_ping, 1);
        guard_set(g.rbuf, size);
        if (variant == V_BLOCKING) {
            CHECK(fmpl_recv(g.rbuf, size, 0, ping_idx, WORLD, &st));
        } else {
            CHECK(fmpl_irecv(g.rbuf, size, 0, ping_idx, WORLD));
            CHECK(fmpl_irecv_wait(0, ping_idx, WORLD, &st));
        }
        snprintf(what, sizeof what, "latency %s, ping 0 -> 1", pp_variant_names[variant]);
        verify_status(what, &st, 0, ping_idx, size);
        bad = verify_data(what, g.rbuf, size, s_ping);
        CHECK(fmpl_send(g.sbuf, size, 0, pong_idx, WORLD));
    }
    if (bad)
        die("wrong data received (see above); aborting");
}

static void test_latency(void)
{
    long sizes[64];
    int n = make_sizes(sizes, 1, 1);

    progress("latency (ping-pong, blocking and pre-posted) ...");
    CHECK(fmpl_barrier(WORLD));
    if (g.rank == 0) {
        printf("\n## Ping-pong latency, one-way = round trip / 2, ranks 0 <-> 1; "
               "bandwidth = size / one-way time\n");
        printf("#%11s %8s | %10s %9s %10s | %10s %9s %10s\n", "size", "iters",
               "blk usec", "blk GB/s", "blk MB/s", "pre usec", "pre GB/s", "pre MB/s");
        fflush(stdout);
    }
    if (g.rank <= 1) {
        for (int si = 0; si < n; si++) {
            long size = sizes[si], skip = 0, iters = 0;
            double usec[2];
            /* Probe: two timed blocking round trips after an untimed one. */
            double t = pp_run(V_BLOCKING, size, 1, 2) / 2;
            if (g.rank == 0)
                plan(&g.pp, t, &skip, &iters);
            pp_share_plan(&skip, &iters);
            for (int v = 0; v < 2; v++) {
                double tt = pp_run(v, size, skip, iters);
                usec[v] = tt * 1e6 / (2.0 * (double)iters);
                pp_verify(v, size);
            }
            if (g.rank == 0) {
                printf(" %11ld %8ld |", size, iters);
                for (int v = 0; v < 2; v++) {
                    double gb = size > 0 ? gbps_of(size, usec[v]) : NAN;
                    result *r = add_result("latency", pp_variant_names[v], size, iters, usec[v]);
                    r->gbps = gb;
                    print_num(usec[v], 10, 3);
                    print_num(gb, 9, 3);
                    print_num(gb * 1e3, 10, 1);
                    if (v == 0)
                        printf(" |");
                }
                printf("\n");
                fflush(stdout);
            }
        }
    }
    CHECK(fmpl_barrier(WORLD));
}

/* ------------------------------------------------------------ streaming bandwidth */

/* skip + iters windows; returns rank 0's time for the last iters windows. */
static double bw_run(long size, long skip, long iters)
{
    long total = skip + iters, i;
    int w;
    double t0 = 0;

    if (g.rank == 0) {
        for (i = 0; i < total; i++) {
            if (i == skip)
                t0 = fmpl_wtime();
            for (w = 0; w < WINDOW; w++)
                CHECK(fmpl_isend(g.sbuf, size, 1, IDX_STREAM + w, WORLD));
            for (w = 0; w < WINDOW; w++)
                CHECK(fmpl_isend_wait(1, IDX_STREAM + w, WORLD));
            CHECK(fmpl_recv(g.small_r, 1, 1, IDX_ACK, WORLD, NULL));
        }
        return fmpl_wtime() - t0;
    }
    for (i = 0; i < total; i++) {
        for (w = 0; w < WINDOW; w++)
            CHECK(fmpl_irecv(g.rbuf, size, 0, IDX_STREAM + w, WORLD));
        for (w = 0; w < WINDOW; w++)
            CHECK(fmpl_irecv_wait(0, IDX_STREAM + w, WORLD, NULL));
        CHECK(fmpl_send(g.small_s, 1, 0, IDX_ACK, WORLD));
    }
    return 0;
}

/* A window's worth of messages on the streaming indices, each with its own
 * pattern and (when they fit) its own receive buffer, checked. */
static void bw_verify(long size)
{
    long per = g.bufsize / (size + GUARD);
    if (per < 1)
        per = 1;
    if (per > WINDOW)
        per = WINDOW;
    long stride = per > 1 ? size + GUARD : size;
    int bad = 0;

    for (long base = 0; base < WINDOW; base += per) {
        long nmsg = WINDOW - base < per ? WINDOW - base : per, j;
        if (g.rank == 0) {
            for (j = 0; j < nmsg; j++) {
                unsigned char *p = g.sbuf + j * stride;
                pattern_fill(p, size, make_seed(2, (unsigned)(base + j), size), 0);
                CHECK(fmpl_isend(p, size, 1, IDX_STREAM + (int)(base + j), WORLD));
            }
            for (j = 0; j < nmsg; j++)
                CHECK(fmpl_isend_wait(1, IDX_STREAM + (int)(base + j), WORLD));
            CHECK(fmpl_recv(g.small_r, 1, 1, IDX_ACK, WORLD, NULL));
        } else {
            /* Poison and guard from the last buffer down: guards may overlap
             * the next buffer only when per == 1. */
            for (j = nmsg - 1; j >= 0; j--) {
                unsigned char *p = g.rbuf + j * stride;
                pattern_fill(p, size, make_seed(2, (unsigned)(base + j), size), 1);
                guard_set(p, size);
            }
            for (j = 0; j < nmsg; j++)
                CHECK(fmpl_irecv(g.rbuf + j * stride, size, 0, IDX_STREAM + (int)(base + j),
                                 WORLD));
            for (j = 0; j < nmsg; j++) {
                fmpl_status st;
                int idx = IDX_STREAM + (int)(base + j);
                CHECK(fmpl_irecv_wait(0, idx, WORLD, &st));
                verify_status("bw streaming", &st, 0, idx, size);
            }
            for (j = 0; j < nmsg && !bad; j++) {
                char what[128];
                snprintf(what, sizeof what, "bw streaming, message %ld of the window", base + j);
                bad = verify_data(what, g.rbuf + j * stride, size,
                                  make_seed(2, (unsigned)(base + j), size));
            }
            CHECK(fmpl_send(g.small_s, 1, 0, IDX_ACK, WORLD));
        }
        if (bad)
            die("wrong data received (see above); aborting");
    }
}

static void test_bw(void)
{
    long sizes[64];
    int n = make_sizes(sizes, 0, 1);

    progress("bw (streaming, window of %d fmpl_isend) ...", WINDOW);
    CHECK(fmpl_barrier(WORLD));
    if (g.rank == 0) {
        printf("\n## Streaming bandwidth, ranks 0 -> 1: window of %d fmpl_isend on distinct "
               "indices, %d pre-posted fmpl_irecv, 1-byte ack per window\n", WINDOW, WINDOW);
        printf("#%11s %8s %10s %9s %10s\n", "size", "windows", "usec/msg", "GB/s", "MB/s");
        fflush(stdout);
    }
    if (g.rank <= 1) {
        for (int si = 0; si < n; si++) {
            long size = sizes[si], skip = 0, iters = 0;
            double t = bw_run(size, 1, 1);
            if (g.rank == 0)
                plan(&g.bw, t, &skip, &iters);
            pp_share_plan(&skip, &iters);
            t = bw_run(size, skip, iters);
            bw_verify(size);
            if (g.rank == 0) {
                double usec = t * 1e6 / ((double)iters * WINDOW);
                double gb = gbps_of(size, usec);
                result *r = add_result("bw", "streaming", size, iters, usec);
                r->gbps = gb;
                printf(" %11ld %8ld", size, iters);
                print_num(usec, 10, 3);
                print_num(gb, 9, 3);
                print_num(gb * 1e3, 10, 1);
                printf("\n");
                fflush(stdout);
            }
        }
    }
    CHECK(fmpl_barrier(WORLD));
}

/* ------------------------------------------------------------ collectives */

static void coll_run(int kind, long size, long first, long n)
{
    long i, end = first + n;
    switch (kind) {
    case C_BARRIER:
        for (i = first; i < end; i++)
            CHECK(fmpl_barrier(WORLD));
        break;
    case C_BCAST:
        for (i = first; i < end; i++)
            CHECK(fmpl_bcast(g.sbuf, size, (int)(i % g.nranks), WORLD));
        break;
    case C_ALLREDUCE:
        for (i = first; i < end; i++)
            CHECK(fmpl_allreduce(g.sbuf, size / 8, fmpl_dsum, WORLD, g.rbuf));
        break;
    case C_REDUCE:
        for (i = first; i < end; i++)
            CHECK(fmpl_reduce(g.sbuf, size / 8, fmpl_dsum, (int)(i % g.nranks), WORLD, g.rbuf));
        break;
    }
}

typedef struct coll_time {
    long iters;
    double max_us, min_us, avg_us;
} coll_time;

static coll_time coll_measure(int kind, long size)
{
    coll_time ct;
    long skip, iters;

    coll_run(kind, size, 0, 1);
    CHECK(fmpl_barrier(WORLD));
    double t0 = fmpl_wtime();
    coll_run(kind, size, 1, 2);
    double per = allreduce_double((fmpl_wtime() - t0) / 2, fmpl_dmax);
    plan(&g.coll, per, &skip, &iters); /* same input on every rank: same plan */

    coll_run(kind, size, 0, skip);
    CHECK(fmpl_barrier(WORLD));
    t0 = fmpl_wtime();
    coll_run(kind, size, 0, iters);
    double avg = (fmpl_wtime() - t0) * 1e6 / (double)iters;

    ct.iters = iters;
    ct.max_us = allreduce_double(avg, fmpl_dmax);
    ct.min_us = allreduce_double(avg, fmpl_dmin);
    ct.avg_us = allreduce_double(avg, fmpl_dsum) / g.nranks;
    return ct;
}

/* Every rank reports its failures; all ranks stop together. */
static void coll_agree(int bad, const char *what, long size)
{
    int nbad = allreduce_int_sum(bad);
    if (nbad)
        die("%s, %ld bytes: verification failed on %d rank(s) (see above); aborting",
            what, size, nbad);
}

static int coll_roots(int *roots)
{
    int n = 0;
    if (g.nranks <= 8) {
        for (int r = 0; r < g.nranks; r++)
            roots[n++] = r;
    } else {
        roots[n++] = 0;
        roots[n++] = 1;
        roots[n++] = g.nranks / 2;
        roots[n++] = g.nranks - 1;
    }
    return n;
}

static void bcast_verify(long size)
{
    int roots[8], nr = coll_roots(roots), bad = 0;
    for (int k = 0; k < nr; k++) {
        int root = roots[k];
        uint64_t seed = make_seed(3, (unsigned)root, size);
        pattern_fill(g.sbuf, size, seed, g.rank != root);
        guard_set(g.sbuf, size);
        CHECK(fmpl_bcast(g.sbuf, size, root, WORLD));
        char what[128];
        snprintf(what, sizeof what, "bcast from root %d", root);
        bad |= verify_data(what, g.sbuf, size, seed);
    }
    coll_agree(bad, "bcast", size);
}

static void reduce_fill(double *v, long count)
{
    for (long i = 0; i < count; i++)
        v[i] = (double)(g.rank + 1) + (double)(i % 7);
}

/* Every element must be sum over ranks of (rank + 1 + i % 7), exact. */
static int reduce_check(const char *what, const double *v, long count)
{
    double n = g.nranks;
    for (long i = 0; i < count; i++) {
        double want = n * (n + 1) / 2 + n * (double)(i % 7);
        if (v[i] != want) {
            errmsg("VERIFICATION FAILED: %s, %ld doubles: "
                   "element %ld is %.17g, expected %.17g", what, count, i, v[i], want);
            return 1;
        }
    }
    long off = guard_check((const unsigned char *)v, count * 8);
    if (off >= 0) {
        errmsg("VERIFICATION FAILED: %s, %ld doubles: byte %ld "
               "past the buffer was overwritten", what, count, off);
        return 1;
    }
    return 0;
}

/* Random finite doubles, exact in binary: a 53-bit integer times 2^-20. */
static double pattern_double(uint64_t seed, long i)
{
    return (double)(int64_t)(mix64(seed ^ (uint64_t)i) >> 11) * (1.0 / 1048576.0);
}

/* Bit-exact check: only `contrib` holds data, every other rank holds +0.0,
 * and x + 0.0 == x exactly, so the result must equal contrib's data in
 * every bit (the integer sums above can round a corrupted low bit away). */
static void single_fill(double *v, long count, uint64_t seed, int contrib)
{
    for (long i = 0; i < count; i++)
        v[i] = g.rank == contrib ? pattern_double(seed, i) : 0.0;
}

static int single_check(const char *what, const double *v, long count, uint64_t seed)
{
    for (long i = 0; i < count; i++) {
        double want = pattern_double(seed, i);
        if (memcmp(&v[i], &want, sizeof want) != 0) {
            errmsg("VERIFICATION FAILED: %s, %ld doubles: element %ld is %.17g, expected %.17g "
                   "(bit-exact)", what, count, i, v[i], want);
            return 1;
        }
    }
    return 0;
}

static int work_guard_bad(const char *what, long size)
{
    if (guard_check(g.rbuf, size) >= 0) {
        errmsg("VERIFICATION FAILED: %s wrote past the end of the work buffer", what);
        return 1;
    }
    return 0;
}

static void allreduce_verify(long size)
{
    long count = size / 8;
    double *v = (double *)(void *)g.sbuf;
    int roots[8], nr = coll_roots(roots), bad = 0;
    char what[128];

    reduce_fill(v, count);
    guard_set(g.sbuf, size);
    guard_set(g.rbuf, size);
    CHECK(fmpl_allreduce(v, count, fmpl_dsum, WORLD, g.rbuf));
    bad |= reduce_check("allreduce dsum", v, count);
    bad |= work_guard_bad("allreduce", size);

    for (int k = 0; k < nr; k++) {
        uint64_t seed = make_seed(4, (unsigned)roots[k], size);
        single_fill(v, count, seed, roots[k]);
        guard_set(g.sbuf, size);
        guard_set(g.rbuf, size);
        CHECK(fmpl_allreduce(v, count, fmpl_dsum, WORLD, g.rbuf));
        snprintf(what, sizeof what, "allreduce dsum, data from rank %d only", roots[k]);
        bad |= single_check(what, v, count, seed);
        if (guard_check(g.sbuf, size) >= 0) {
            errmsg("VERIFICATION FAILED: allreduce wrote past the end of the buffer");
            bad = 1;
        }
        bad |= work_guard_bad("allreduce", size);
    }
    coll_agree(bad, "allreduce", size);
}

static void reduce_verify(long size)
{
    long count = size / 8;
    double *v = (double *)(void *)g.sbuf;
    int roots[8], nr = coll_roots(roots), bad = 0;
    char what[128];

    for (int k = 0; k < nr; k++) {
        int root = roots[k], contrib = (root + 1) % g.nranks;
        uint64_t seed = make_seed(5, (unsigned)root, size);
        for (int pass = 0; pass < 2; pass++) {
            if (pass == 0)
                reduce_fill(v, count);
            else
                single_fill(v, count, seed, contrib);
            guard_set(g.sbuf, size);
            guard_set(g.rbuf, size);
            CHECK(fmpl_reduce(v, count, fmpl_dsum, root, WORLD, g.rbuf));
            if (g.rank == root) {
                if (pass == 0) {
                    snprintf(what, sizeof what, "reduce dsum to root %d", root);
                    bad |= reduce_check(what, v, count);
                } else {
                    snprintf(what, sizeof what, "reduce dsum to root %d, data from rank %d only",
                             root, contrib);
                    bad |= single_check(what, v, count, seed);
                }
            }
            if (guard_check(g.sbuf, size) >= 0) {
                errmsg("VERIFICATION FAILED: reduce (root %d) wrote past the end of the buffer",
                       root);
                bad = 1;
            }
            bad |= work_guard_bad("reduce", size);
        }
    }
    coll_agree(bad, "reduce", size);
}

static void test_barrier(void)
{
    progress("barrier ...");
    CHECK(fmpl_barrier(WORLD));
    coll_time ct = coll_measure(C_BARRIER, 0);
    if (g.rank == 0) {
        printf("\n## Barrier, %d ranks: average per fmpl_barrier; max / min / mean over ranks "
               "of each rank's average\n", g.nranks);
        printf("#%8s %10s %10s %10s\n", "iters", "usec max", "usec min", "usec avg");
        printf(" %8ld", ct.iters);
        print_num(ct.max_us, 10, 3);
        print_num(ct.min_us, 10, 3);
        print_num(ct.avg_us, 10, 3);
        printf("\n");
        fflush(stdout);
        result *r = add_result("barrier", "", -1, ct.iters, ct.max_us);
        r->usec_min = ct.min_us;
        r->usec_avg = ct.avg_us;
    }
}

static void test_collective(int kind)
{
    long sizes[64];
    int n = make_sizes(sizes, 0, 8);
    const char *name = kind == C_BCAST ? "bcast" : kind == C_ALLREDUCE ? "allreduce" : "reduce";
    const char *variant = kind == C_ALLREDUCE ? "dsum" : kind == C_REDUCE ? "dsum-root-rotating"
                                                                           : "root-rotating";

    progress("%s ...", name);
    CHECK(fmpl_barrier(WORLD));
    if (g.rank == 0) {
        if (kind == C_BCAST)
            printf("\n## Broadcast, %d ranks, root rotates every iteration; time = max over "
                   "ranks of each rank's average; GB/s = size / time\n", g.nranks);
        else
            printf("\n## %s, fmpl_dsum on doubles, %d ranks%s; time = max over ranks of each "
                   "rank's average\n", kind == C_ALLREDUCE ? "Allreduce" : "Reduce", g.nranks,
                   kind == C_REDUCE ? ", root rotates every iteration" : "");
        if (kind == C_BCAST)
            printf("#%11s %8s", "size", "iters");
        else
            printf("#%11s %9s %8s", "size", "count", "iters");
        printf(" %10s %10s %10s", "usec max", "usec min", "usec avg");
        if (kind == C_BCAST)
            printf(" %9s", "GB/s");
        printf("\n");
        fflush(stdout);
    }
    for (int si = 0; si < n; si++) {
        long size = sizes[si];
        if (kind != C_BCAST) {
            size -= size % 8;
            if (size == 0)
                continue;
            /* Zeros stay zeros under repeated in-place sums: no overflow,
             * no subnormals in the timed loop. */
            memset(g.sbuf, 0, (size_t)size);
            memset(g.rbuf, 0, (size_t)size);
        }
        coll_time ct = coll_measure(kind, size);
        if (kind == C_BCAST)
            bcast_verify(size);
        else if (kind == C_ALLREDUCE)
            allreduce_verify(size);
        else
            reduce_verify(size);
        if (g.rank == 0) {
            result *r = add_result(name, variant, size, ct.iters, ct.max_us);
            r->usec_min = ct.min_us;
            r->usec_avg = ct.avg_us;
            if (kind == C_BCAST) {
                r->gbps = gbps_of(size, ct.max_us);
                printf(" %11ld %8ld", size, ct.iters);
            } else {
                r->count = size / 8;
                printf(" %11ld %9ld %8ld", size, size / 8, ct.iters);
            }
            print_num(ct.max_us, 10, 3);
            print_num(ct.min_us, 10, 3);
            print_num(ct.avg_us, 10, 3);
            if (kind == C_BCAST)
                print_num(r->gbps, 9, 3);
            printf("\n");
            fflush(stdout);
        }
    }
    CHECK(fmpl_barrier(WORLD));
}

/* ------------------------------------------------------------ pre-posted receives */

static uint32_t prepost_value(int rep, int phase, int i)
{
    return (uint32_t)mix64(((uint64_t)rep << 40) ^ ((uint64_t)phase << 32) ^ (uint64_t)i);
}

static unsigned char *pp_slot(unsigned char *base, int i)
{
    return base + (size_t)i * PREPOST_STRIDE;
}

/* Rank 1: post PREPOST_N receives, accumulating the gaps between posts. */
static void prepost_post(double gaps[3])
{
    double t[PREPOST_N + 1];
    for (int i = 0; i < PREPOST_N; i++)
        memset(pp_slot(g.pp_r, i), 0xEE, PREPOST_STRIDE);
    t[0] = fmpl_wtime();
    for (int i = 0; i < PREPOST_N; i++) {
        CHECK(fmpl_irecv(pp_slot(g.pp_r, i), PREPOST_MSG, 0, IDX_PREPOST + i, WORLD));
        t[i + 1] = fmpl_wtime();
    }
    gaps[0] += t[100] - t[0];
    gaps[1] += t[PREPOST_N] - t[PREPOST_N - 100];
    gaps[2] += t[PREPOST_N] - t[0];
    /* Tell rank 0 every header is in place. */
    CHECK(fmpl_send(g.small_s, 1, 0, IDX_CTRL10, WORLD));
}

/* Checks PREPOST_N 4-byte messages of (rep, phase) in `base`'s slots, and
 * the bytes after each (poisoned with 0xEE before). */
static void prepost_check(const unsigned char *base, int rep, int phase, const char *what)
{
    for (int i = 0; i < PREPOST_N; i++) {
        uint32_t want = prepost_value(rep, phase, i), got;
        const unsigned char *p = base + (size_t)i * PREPOST_STRIDE;
        memcpy(&got, p, 4);
        if (got != want)
            die("VERIFICATION FAILED: prepost %s, message %d: got 0x%08" PRIx32
                ", expected 0x%08" PRIx32, what, i, got, want);
        for (int k = PREPOST_MSG; k < PREPOST_STRIDE; k++)
            if (p[k] != 0xEE)
                die("VERIFICATION FAILED: prepost %s, message %d: byte %d past the 4-byte "
                    "message was overwritten", what, i, k);
    }
}

static void prepost_fill(unsigned char *base, int rep, int phase)
{
    for (int i = 0; i < PREPOST_N; i++) {
        uint32_t v = prepost_value(rep, phase, i);
        memcpy(pp_slot(base, i), &v, 4);
    }
}

enum { PP_PING = 0, PP_REPLY = 1, PP_ONEWAY = 2 };

/* Paper Table 2.  Each rep has three phases:
 *  0: rank 1 pre-posts PREPOST_N receives (the gaps between posts are
 *     timed), then a ping-pong of 4-byte messages runs on them; rank 0
 *     posts its reply receive before each ping, so every send finds its
 *     header already there;
 *  1: the same ping-pong with blocking fmpl_send / fmpl_recv (reference);
 *  2: rank 1 pre-posts again and rank 0 times PREPOST_N back-to-back sends.
 * Data are checked after each phase; rep -1 is an untimed warm-up. */
static void test_prepost(void)
{
    int reps = g.prepost_reps;
    double gaps[3] = {0, 0, 0}; /* rank 1: first 100, last 100, all posts */
    double t_pre = 0, t_blk = 0, t_send = 0; /* rank 0 */

    progress("prepost (%d pre-posted fmpl_irecv, 4-byte messages, %d reps) ...", PREPOST_N,
             reps);
    CHECK(fmpl_barrier(WORLD));
    if (g.rank <= 1) {
        for (int rep = -1; rep < reps; rep++) {
            double dummy[3] = {0, 0, 0};
            double *gp = rep < 0 ? dummy : gaps;
            int vrep = rep < 0 ? reps : rep;
            int i;
            double t0;

            /* Phase 0: ping-pong on pre-posted receives. */
            if (g.rank == 1) {
                prepost_fill(g.pp_s, vrep, PP_REPLY);
                prepost_post(gp);
                for (i = 0; i < PREPOST_N; i++) {
                    CHECK(fmpl_irecv_wait(0, IDX_PREPOST + i, WORLD, NULL));
                    CHECK(fmpl_send(pp_slot(g.pp_s, i), PREPOST_MSG, 0, IDX_REPLY, WORLD));
                }
                prepost_check(g.pp_r, vrep, PP_PING, "pre-posted ping-pong, ping");
            } else {
                prepost_fill(g.pp_s, vrep, PP_PING);
                memset(g.pp_r, 0xEE, PREPOST_N * PREPOST_STRIDE);
                CHECK(fmpl_recv(g.small_r, 1, 1, IDX_CTRL10, WORLD, NULL)); /* posted */
                t0 = fmpl_wtime();
                for (i = 0; i < PREPOST_N; i++) {
                    CHECK(fmpl_irecv(pp_slot(g.pp_r, i), PREPOST_MSG, 1, IDX_REPLY, WORLD));
                    CHECK(fmpl_send(pp_slot(g.pp_s, i), PREPOST_MSG, 1, IDX_PREPOST + i, WORLD));
                    CHECK(fmpl_irecv_wait(1, IDX_REPLY, WORLD, NULL));
                }
                if (rep >= 0)
                    t_pre += fmpl_wtime() - t0;
                prepost_check(g.pp_r, vrep, PP_REPLY, "pre-posted ping-pong, reply");
            }

            /* Phase 1: blocking ping-pong, same messages (reference). */
            memset(g.pp_r, 0xEE, PREPOST_N * PREPOST_STRIDE);
            if (g.rank == 1) {
                for (i = 0; i < PREPOST_N; i++) {
                    CHECK(fmpl_recv(pp_slot(g.pp_r, i), PREPOST_MSG, 0, IDX_BLK_PING, WORLD, NULL));
                    CHECK(fmpl_send(pp_slot(g.pp_s, i), PREPOST_MSG, 0, IDX_BLK_PONG, WORLD));
                }
                prepost_check(g.pp_r, vrep, PP_PING, "blocking ping-pong, ping");
            } else {
                t0 = fmpl_wtime();
                for (i = 0; i < PREPOST_N; i++) {
                    CHECK(fmpl_send(pp_slot(g.pp_s, i), PREPOST_MSG, 1, IDX_BLK_PING, WORLD));
                    CHECK(fmpl_recv(pp_slot(g.pp_r, i), PREPOST_MSG, 1, IDX_BLK_PONG, WORLD, NULL));
                }
                if (rep >= 0)
                    t_blk += fmpl_wtime() - t0;
                prepost_check(g.pp_r, vrep, PP_REPLY, "blocking ping-pong, reply");
            }

            /* Phase 2: back-to-back sends into pre-posted receives. */
            if (g.rank == 1) {
                prepost_post(gp);
                for (i = 0; i < PREPOST_N; i++)
                    CHECK(fmpl_irecv_wait(0, IDX_PREPOST + i, WORLD, NULL));
                prepost_check(g.pp_r, vrep, PP_ONEWAY, "back-to-back sends");
            } else {
                prepost_fill(g.pp_s, vrep, PP_ONEWAY);
                CHECK(fmpl_recv(g.small_r, 1, 1, IDX_CTRL10, WORLD, NULL)); /* posted */
                t0 = fmpl_wtime();
                for (i = 0; i < PREPOST_N; i++)
                    CHECK(fmpl_send(pp_slot(g.pp_s, i), PREPOST_MSG, 1, IDX_PREPOST + i, WORLD));
                if (rep >= 0)
                    t_send += fmpl_wtime() - t0;
            }
        }
        /* Rank 1's posting times go to rank 0 for printing. */
        if (g.rank == 1) {
            CHECK(fmpl_send(gaps, (long)sizeof gaps, 0, IDX_CTRL10, WORLD));
        } else {
            fmpl_status st;
            CHECK(fmpl_recv(gaps, (long)sizeof gaps, 1, IDX_CTRL10, WORLD, &st));
            verify_status("prepost results", &st, 1, IDX_CTRL10, (long)sizeof gaps);
        }
    }
    if (g.rank == 0) {
        double nposts = 2.0 * reps; /* rounds of PREPOST_N posts: phases 0 and 2 */
        double first = gaps[0] * 1e6 / (100 * nposts);
        double last = gaps[1] * 1e6 / (100 * nposts);
        double all = gaps[2] * 1e6 / (PREPOST_N * nposts);
        double lat_pre = t_pre * 1e6 / (2.0 * PREPOST_N * reps);
        double lat_blk = t_blk * 1e6 / (2.0 * PREPOST_N * reps);
        double snd = t_send * 1e6 / ((double)PREPOST_N * reps);

        printf("\n## Pre-posted receives (paper Table 2): rank 1 pre-posts %d fmpl_irecv, then "
               "rank 0 sends %d-byte messages; %d reps\n", PREPOST_N, PREPOST_MSG, reps);
        printf("#%-58s %10s\n", "what", "usec");
        printf(" %-58s %10.3f\n", "gap between successive posts, posts 1-100", first);
        printf(" %-58s %10.3f\n", "gap between successive posts, posts 501-600", last);
        printf(" %-58s %10.3f\n", "gap between successive posts, all 600", all);
        printf(" %-58s %10.3f\n", "one-way latency, 4 B, receives pre-posted (ping-pong)", lat_pre);
        printf(" %-58s %10.3f\n", "one-way latency, 4 B, blocking send/recv (reference)", lat_blk);
        printf(" %-58s %10.3f\n", "sender time per fmpl_send, 4 B, headers already there", snd);
        printf("# gaps include one fmpl_wtime call (%.3f usec)\n", g.wtime_overhead);
        fflush(stdout);
        add_result("prepost", "post-gap-first100", PREPOST_MSG, reps, first);
        add_result("prepost", "post-gap-last100", PREPOST_MSG, reps, last);
        add_result("prepost", "post-gap-all", PREPOST_MSG, reps, all);
        add_result("prepost", "latency-preposted", PREPOST_MSG, reps, lat_pre);
        add_result("prepost", "latency-blocking", PREPOST_MSG, reps, lat_blk);
        add_result("prepost", "send-only", PREPOST_MSG, reps, snd);
    }
    CHECK(fmpl_barrier(WORLD));
}

/* ------------------------------------------------------------ JSON */

static void json_num(FILE *f, const char *key, double v)
{
    if (!isnan(v) && !isinf(v))
        fprintf(f, ",\"%s\":%.6g", key, v);
}

static void write_json(const char *date, const char *host)
{
    FILE *f = g.json;
    fprintf(f, "{\"ranks\":%d,\"buffers\":\"%s\",\"cores\":%d,\"mode\":\"%s\","
            "\"fmpl_version\":\"%s\",\"date\":", g.nranks,
            g.use_malloc ? "malloc" : "fmpl_alloc", g.ncores, g.quick ? "quick" : "full",
            FMPL_VERSION_STRING);
    json_string(f, date);
    fprintf(f, ",\"host\":");
    json_string(f, host);
    fprintf(f, ",\"max_size\":%ld,\"wtime_overhead_usec\":%.6g,\"results\":[", g.max_size,
            g.wtime_overhead);
    for (size_t k = 0; k < g.nres; k++) {
        const result *r = &g.res[k];
        fprintf(f, "%s\n{\"test\":", k ? "," : "");
        json_string(f, r->test);
        if (r->variant[0]) {
            fprintf(f, ",\"variant\":");
            json_string(f, r->variant);
        }
        if (r->size >= 0)
            fprintf(f, ",\"size\":%ld", r->size);
        if (r->count >= 0)
            fprintf(f, ",\"count\":%ld", r->count);
        if (r->iters >= 0)
            fprintf(f, ",\"iters\":%ld", r->iters);
        json_num(f, "usec", r->usec);
        json_num(f, "usec_min", r->usec_min);
        json_num(f, "usec_avg", r->usec_avg);
        json_num(f, "gbps", r->gbps);
        if (!isnan(r->gbps))
            json_num(f, "mbps", r->gbps * 1e3);
        fputc('}', f);
    }
    fprintf(f, "\n]}\n");
    if (fclose(f) != 0) {
        g.json = NULL;
        die("writing %s: %s", g.json_path, strerror(errno));
    }
    g.json = NULL;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
"usage: fmplrun -n N fmpl-bench [options]\n"
"\n"
"FMPL micro-benchmarks: ping-pong latency and bandwidth, streaming bandwidth,\n"
"barrier, broadcast, allreduce, reduce and the paper's 600 pre-posted receives.\n"
"Point-to-point tests use ranks 0 and 1 (other ranks wait in a barrier); with\n"
"one rank they are skipped.  Every size is verified after it is timed.\n"
"\n"
"options:\n"
"  --json FILE      also write every result to FILE as JSON\n"
"  --quick          fewer iterations, sizes up to 4 MiB (about 20 s at 2 ranks)\n"
"  --min-size B     smallest message size in bytes (default 0; K, M, G suffixes)\n"
"  --max-size B     largest message size (default 16M, --quick 4M)\n"
"  --iters N        at most N timed iterations per size (default 10000, --quick\n"
"                   2000); slow (large) sizes still run fewer, about 0.3 s each\n"
"  --only LIST      comma-separated subset of: latency,bw,barrier,bcast,\n"
"                   allreduce,reduce,prepost\n"
"  --malloc         use malloc'd buffers (single-copy path) instead of\n"
"                   fmpl_alloc (shared heap, zero-copy path)\n"
"  --help           this text\n");
}

static int parse_size(const char *s, long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    long long mul = 1;
    switch (*end) {
    case 'k': case 'K': mul = 1LL << 10; end++; break;
    case 'm': case 'M': mul = 1LL << 20; end++; break;
    case 'g': case 'G': mul = 1LL << 30; end++; break;
    default: break;
    }
    if (*end == 'i')
        end++;
    if (*end == 'B' && mul != 1)
        end++;
    if (*end != '\0' || v > MAX_SIZE_LIMIT / mul)
        return -1;
    *out = (long)(v * mul);
    return 0;
}

static int parse_only(const char *s, unsigned *mask)
{
    *mask = 0;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t len = comma ? (size_t)(comma - s) : strlen(s);
        int found = 0;
        for (int t = 0; t < NTESTS; t++)
            if (strlen(test_names[t]) == len && strncmp(s, test_names[t], len) == 0) {
                *mask |= 1u << t;
                found = 1;
            }
        if (!found)
            return -1;
        s += len;
        if (*s == ',')
            s++;
    }
    return *mask ? 0 : -1;
}

/* Returns 0 to run, 1 for --help, -1 after an error (message in errbuf). */
static int parse_args(int argc, char **argv, char *errbuf, size_t errlen)
{
    g.only = T_ALL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *val = (i + 1 < argc) ? argv[i + 1] : NULL;
        int need = 0;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            return 1;
        } else if (!strcmp(a, "--quick")) {
            g.quick = 1;
        } else if (!strcmp(a, "--malloc")) {
            g.use_malloc = 1;
        } else if (!strcmp(a, "--json")) {
            need = 1;
            if (val)
                g.json_path = val;
        } else if (!strcmp(a, "--min-size")) {
            need = 1;
            if (val && parse_size(val, &g.min_size) != 0) {
                snprintf(errbuf, errlen, "bad size '%s' for --min-size", val);
                return -1;
            }
        } else if (!strcmp(a, "--max-size")) {
            need = 1;
            if (val && parse_size(val, &g.max_size) != 0) {
                snprintf(errbuf, errlen, "bad size '%s' for --max-size (at most 1G)", val);
                return -1;
            }
            g.max_size_set = 1;
        } else if (!strcmp(a, "--iters")) {
            need = 1;
            if (val) {
                char *end;
                errno = 0;
                long v = strtol(val, &end, 10);
                if (errno || *end || end == val || v < 1) {
                    snprintf(errbuf, errlen, "bad count '%s' for --iters", val);
                    return -1;
                }
                g.iters_arg = v;
                g.iters_set = 1;
            }
        } else if (!strcmp(a, "--only")) {
            need = 1;
            if (val && parse_only(val, &g.only) != 0) {
                snprintf(errbuf, errlen, "bad test list '%s' for --only", val);
                return -1;
            }
        } else {
            snprintf(errbuf, errlen, "unknown argument '%s'", a);
            return -1;
        }
        if (need) {
            if (!val) {
                snprintf(errbuf, errlen, "%s needs a value", a);
                return -1;
            }
            i++;
        }
    }
    if (!g.max_size_set)
        g.max_size = g.quick ? 4L << 20 : 16L << 20;
    if (g.min_size > g.max_size) {
        snprintf(errbuf, errlen, "--min-size %ld is larger than --max-size %ld", g.min_size,
                 g.max_size);
        return -1;
    }
    return 0;
}

static void configure(void)
{
    long base = g.iters_set ? g.iters_arg : (g.quick ? 2000 : 10000);
    int over = g.nranks > g.ncores;

    g.budget = g.quick ? 0.04 : 0.25;
    g.warm_budget = g.quick ? 0.008 : 0.03;
    g.pp.base = base;
    g.pp.min = g.quick ? 5 : 10;
    g.pp.skip_max = g.quick ? 50 : 200;
    g.bw.base = base / 20 > 2 ? base / 20 : 2;
    g.bw.min = 2;
    g.bw.skip_max = g.quick ? 2 : 5;
    g.coll.base = over && !g.iters_set && base / 4 > 1 ? base / 4 : base;
    g.coll.min = g.quick ? 5 : 10;
    g.coll.skip_max = over ? (g.quick ? 10 : 50) : (g.quick ? 50 : 200);
    g.prepost_reps = g.quick ? 5 : 20;
}

/* ------------------------------------------------------------ main */

int main(int argc, char **argv)
{
    char err[256] = "";
    int pa = parse_args(argc, argv, err, sizeof err);

    CHECK(fmpl_init(NULL, NULL, INIT_COUNT));
    g.initialized = 1;
    CHECK(fmpl_comm_rank(WORLD, &g.rank));
    CHECK(fmpl_comm_size(WORLD, &g.nranks));

    if (pa != 0) {
        if (g.rank == 0) {
            if (pa < 0)
                fprintf(stderr, "fmpl-bench: %s\n", err);
            usage(pa < 0 ? stderr : stdout);
        }
        bench_exit(pa < 0 ? 2 : 0);
    }

    /* Everything rank 0 decides is broadcast so that all ranks agree. */
    {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        int cfg[2] = {cores > 0 ? (int)cores : 1, 1};
        if (g.rank == 0 && g.json_path) {
            g.json = fopen(g.json_path, "w");
            if (!g.json) {
                fprintf(stderr, "fmpl-bench: cannot open %s: %s\n", g.json_path,
                        strerror(errno));
                cfg[1] = 0;
            }
        }
        CHECK(fmpl_bcast(cfg, (long)sizeof cfg, 0, WORLD));
        if (!cfg[1])
            bench_exit(2);
        g.ncores = cfg[0];
    }
    configure();
    alloc_buffers();

    /* Timer overhead, for the record. */
    {
        double t0 = fmpl_wtime(), t1 = t0;
        for (int i = 0; i < 1000; i++)
            t1 = fmpl_wtime();
        g.wtime_overhead = (t1 - t0) * 1e6 / 1000;
    }

    char date[64] = "unknown", host[256] = "unknown";
    {
        time_t now = time(NULL);
        struct tm tm;
        if (gmtime_r(&now, &tm))
            strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
        if (gethostname(host, sizeof host) != 0)
            strcpy(host, "unknown");
        host[sizeof host - 1] = '\0';
    }

    if (g.rank == 0) {
        printf("# fmpl-bench, FMPL %s: %d rank%s on %d core%s%s, %s mode\n", FMPL_VERSION_STRING,
               g.nranks, g.nranks == 1 ? "" : "s", g.ncores, g.ncores == 1 ? "" : "s",
               g.nranks > g.ncores ? " (oversubscribed)" : "", g.quick ? "quick" : "full");
        printf("# buffers: %s\n", g.use_malloc
               ? "malloc (private memory: single-copy CMA / staging path)"
               : "fmpl_alloc (shared heap: zero-copy path, no system call)");
        printf("# date %s, host %s, sizes %ld .. %ld bytes, fmpl_wtime overhead %.3f usec\n",
               date, host, g.min_size, g.max_size, g.wtime_overhead);
        if (g.heap_note)
            printf("# note: largest size lowered to %ld bytes to fit the shared heap "
                   "(FMPL_HEAP_SIZE)\n", g.max_size);
        printf("# times in microseconds (usec); 1 GB/s = 1e9 bytes/s, 1 MB/s = 1e6 bytes/s\n");
        fflush(stdout);
    }

    int p2p = g.nranks >= 2;
    if (!p2p && (g.only & (T_LATENCY | T_BW | T_PREPOST)) && g.rank == 0)
        printf("\n# note: point-to-point tests (latency, bw, prepost) skipped: they need "
               "2 ranks\n");

    if (p2p && (g.only & T_LATENCY))
        test_latency();
    if (p2p && (g.only & T_BW))
        test_bw();
    if (p2p && (g.only & T_PREPOST))
        test_prepost();
    if (g.only & T_BARRIER)
        test_barrier();
    if (g.only & T_BCAST)
        test_collective(C_BCAST);
    if (g.only & T_ALLREDUCE)
        test_collective(C_ALLREDUCE);
    if (g.only & T_REDUCE)
        test_collective(C_REDUCE);

    CHECK(fmpl_barrier(WORLD));
    if (g.rank == 0) {
        if (g.json) {
            write_json(date, host);
            printf("\n# results written to %s\n", g.json_path);
        }
        printf("# all results verified\n");
        fflush(stdout);
        progress("done");
    }
    free_buffers();
    free(g.res);
    g.initialized = 0;
    CHECK(fmpl_finalize());
    return 0;
}
