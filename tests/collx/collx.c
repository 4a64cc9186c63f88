/* collx: the collective core's gather(v), scatter(v), allgather(v),
 * alltoall(v), reduce_scatter(_block), scan and exscan (src/collectives),
 * called directly on teams and checked byte for byte.
 *
 * Teams: the world team; a sub-team from fmpl_comm_create (2 ranks: both,
 * as a team of its own; 4 ranks: members 0..2, a team of 3); singleton teams.
 * Block sizes per case: zero for some members, tiny uneven, around the eager
 * limit, around the CMA threshold, ~100 KiB, 1 MiB + odd, one 4 MiB block.
 * Buffers: fmpl_alloc (shared heap), malloc, malloc + 1 (odd address), mixed
 * across members so every pair kind occurs.  Receive buffers have gaps
 * between blocks and guard zones: bytes outside the blocks must not change;
 * send buffers must not change.  Every root; in-place variants; the
 * regular forms and the v forms (whose root-only arguments are NULL on the
 * other members).  Reductions: int sum (built-in) and a non-commutative
 * user operation (2x2 matrix product mod 65521), against a serial reference.
 * The algorithms are forced through the environment by the registrations in
 * CMakeLists.txt; the program itself is the same in every run.
 *
 * Every root for blocks up to ~100 KiB; roots 0 and P-1 for the larger ones.
 * Usage: collx [quick]   (quick: no 4 MiB blocks) */
#include "fmpl.h"
#include "collectives/collectives.h"
#include "protocols/team.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int wrank, wsize, quick;
static fmpl_team *T;
static int me, P;
static char where[256];
static uint64_t iter;

#define GUARD 64
#define FILLER 0xEE

__attribute__((noreturn, format(printf, 2, 3))) static void fail(int line, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "FAIL collx.c:%d [world rank %d/%d, team rank %d/%d] (%s) %s\n", line, wrank,
            wsize, me, P, where, msg);
    _exit(1);
}
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond))                                                               \
            fail(__LINE__, __VA_ARGS__);                                           \
    } while (0)
#define CALL(x)                                                                    \
    do {                                                                           \
        int rc_ = (x);                                                             \
        CHECK(rc_ == FMPL_SUCCESS, "%s returned %d (%s)", #x, rc_,                 \
              fmpl_error_string(rc_));                                             \
    } while (0)

/* ------------------------------------------------------------ patterns */

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t seed_of(uint64_t a, uint64_t b, uint64_t c)
{
    return mix(mix(mix(iter) ^ a) ^ (b << 20)) ^ (c << 40);
}

static void fill(char *buf, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i += 8) {
        uint64_t w = mix(seed + (uint64_t)i);
        int64_t k = n - i < 8 ? n - i : 8;
        memcpy(buf + i, &w, (size_t)k);
    }
}

/* Index of the first byte that differs from the pattern, or -1. */
static int64_t differs(const char *buf, int64_t n, uint64_t seed)
{
    for (int64_t i = 0; i < n; i += 8) {
        uint64_t w = mix(seed + (uint64_t)i);
        int64_t k = n - i < 8 ? n - i : 8;
        if (memcmp(buf + i, &w, (size_t)k) != 0)
            for (int64_t j = 0; j < k; j++)
                if (buf[i + j] != ((char *)&w)[j])
                    return i + j;
    }
    return -1;
}

static int64_t not_filler(const char *buf, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] != FILLER)
            return i;
    return -1;
}

/* ------------------------------------------------------------ buffers */

enum { K_SHARED, K_MALLOC, K_ODD, NKINDS };
static const char *const kind_names[] = {"shared", "malloc", "malloc+1"};

typedef struct buf {
    char *base, *p;
    int64_t n;
    int kind;
} buf;

/* n usable bytes with GUARD filler bytes on both sides. */
static buf balloc(int kind, int64_t n)
{
    buf b = {.n = n, .kind = kind};
    size_t total = (size_t)n + 2 * GUARD + 1;
    b.base = kind == K_SHARED ? fmpl_alloc(total) : malloc(total);
    CHECK(b.base, "no memory for %lld bytes (%s)", (long long)n, kind_names[kind]);
    b.p = b.base + GUARD + (kind == K_ODD);
    memset(b.base, FILLER, total);
    return b;
}

static void bfree(buf *b)
{
    if (b->kind == K_SHARED)
        fmpl_free(b->base);
    else
        free(b->base);
    b->base = b->p = NULL;
}

static void guards_ok(const buf *b, const char *what)
{
    CHECK(not_filler(b->p - GUARD, GUARD) < 0, "%s: guard before the buffer was written", what);
    CHECK(not_filler(b->p + b->n, GUARD) < 0, "%s: guard after the buffer was written", what);
}

/* ------------------------------------------------------------ sizes */

#define NCASES 7
static const char *const case_names[NCASES] = {"zeros", "tiny", "eager", "cma",
                                               "100k", "1MiB", "4MiB"};

/* Bytes member src sends to dst (dst < 0: its block of a gather-like). */
static int64_t cnt(int cs, int src, int dst)
{
    int d = dst < 0 ? 0 : dst;
    switch (cs) {
    case 0: return src == 1 && d != 1 ? 5 + d : 0;
    case 1: return 1 + 3 * src + 5 * d;
    case 2: return (src + d) % 2 ? 0 : 2000 + 777 * src + 301 * d;
    case 3: return 5000 + 4099 * (src + 2 * d);
    case 4: return 70000 + 12345 * src + 999 * d;
    case 5: return (1 << 20) + 4097 * src + 13 * d;
    default: return src == (d + 1) % P ? (4 << 20) : 100 + src;
    }
}

static int case_used(int cs) { return !(quick && cs == 6); }

/* Blocks placed with gaps of 8 .. 63 bytes, reverse order (rev) or not. */
static int64_t layout(const int64_t *counts, int64_t *displs, int rev, int salt)
{
    int64_t cur = 0;
    for (int i = 0; i < P; i++) {
        int p = rev ? P - 1 - i : i;
        cur += 8 + (p * 23 + salt * 7) % 56;
        displs[p] = cur;
        cur += counts[p];
    }
    return cur + 8;
}

/* Everything outside the blocks is filler; block p matches seeds[p]. */
static void check_blocks(const buf *b, const int64_t *counts, const int64_t *displs,
                         const uint64_t *seeds, int skip, const char *what)
{
    guards_ok(b, what);
    int64_t pos = 0;
    for (;;) {
        int next = -1;
        for (int p = 0; p < P; p++)
            if (displs[p] >= pos && (next < 0 || displs[p] < displs[next]))
                next = p;
        int64_t end = next < 0 ? b->n : displs[next];
        int64_t f = not_filler(b->p + pos, end - pos);
        CHECK(f < 0, "%s: byte %lld outside every block was written", what, (long long)(pos + f));
        if (next < 0)
            break;
        if (next != skip) {
            int64_t d = differs(b->p + displs[next], counts[next], seeds[next]);
            CHECK(d < 0, "%s: block of member %d (%lld bytes at %lld) differs at byte %lld", what,
                  next, (long long)counts[next], (long long)displs[next], (long long)d);
        }
        pos = displs[next] + counts[next];
        if (counts[next] == 0)
            pos++; /* empty block: move on */
    }
}

/* ------------------------------------------------------------ gather / scatter */

static int64_t counts[256], displs[256], counts2[256], displs2[256];
static uint64_t seeds[256];

static void t_gather(int cs, int root, int inplace, int regular)
{
    snprintf(where, sizeof where, "%sgather case %s root %d%s", regular ? "" : "v-",
             case_names[cs], root, inplace ? " in place" : "");
    int kind_s = (cs + me + root) % NKINDS, kind_r = (cs + me + root + 1) % NKINDS;
    for (int p = 0; p < P; p++) {
        counts[p] = regular ? cnt(cs, 2, -1) + 1 : cnt(cs, p, -1);
        seeds[p] = seed_of(1, (uint64_t)cs, (uint64_t)p);
    }
    int64_t total = 0;
    if (regular) {
        for (int p = 0; p < P; p++)
            displs[p] = (int64_t)p * counts[0];
        total = P * counts[0];
    } else {
        total = layout(counts, displs, 1, cs);
    }
    int flags = inplace ? FMPL_COLL_IN_PLACE : 0;
    int is_root = me == root;
    buf sb = balloc(kind_s, counts[me]);
    fill(sb.p, counts[me], seeds[me]);
    buf rb = {0};
    if (is_root) {
        rb = balloc(kind_r, total);
        if (inplace)
            fill(rb.p + displs[me], counts[me], seeds[me]);
    }
    const void *send = is_root && inplace ? NULL : sb.p;
    if (regular)
        CALL(fmpl_coll_gather(T, send, rb.p, counts[0], root, flags));
    else
        CALL(fmpl_coll_gatherv(T, send, counts[me], rb.p, is_root ? counts : NULL,
                               is_root ? displs : NULL, root, flags));
    CHECK(differs(sb.p, counts[me], seeds[me]) < 0, "send buffer changed");
    guards_ok(&sb, "send buffer");
    if (is_root) {
        check_blocks(&rb, counts, displs, seeds, -1, "receive buffer");
        bfree(&rb);
    }
    bfree(&sb);
}

static void t_scatter(int cs, int root, int inplace, int regular)
{
    snprintf(where, sizeof where, "%sscatter case %s root %d%s", regular ? "" : "v-",
             case_names[cs], root, inplace ? " in place" : "");
    int kind_s = (cs + me + root + 2) % NKINDS, kind_r = (cs + me + root) % NKINDS;
    for (int p = 0; p < P; p++) {
        counts[p] = regular ? cnt(cs, 3, -1) + 2 : cnt(cs, p, -1);
        seeds[p] = seed_of(2, (uint64_t)cs, (uint64_t)p);
    }
    int64_t total;
    if (regular) {
        for (int p = 0; p < P; p++)
            displs[p] = (int64_t)p * counts[0];
        total = P * counts[0];
    } else {
        total = layout(counts, displs, 0, cs);
    }
    int flags = inplace ? FMPL_COLL_IN_PLACE : 0;
    int is_root = me == root;
    buf sb = {0};
    if (is_root) {
        sb = balloc(kind_s, total);
        for (int p = 0; p < P; p++)
            fill(sb.p + displs[p], counts[p], seeds[p]);
    }
    buf rb = balloc(kind_r, counts[me]);
    void *recv = is_root && inplace ? NULL : rb.p;
    if (regular)
        CALL(fmpl_coll_scatter(T, sb.p, recv, counts[0], root, flags));
    else
        CALL(fmpl_coll_scatterv(T, sb.p, is_root ? counts : NULL, is_root ? displs : NULL, recv,
                                counts[me], root, flags));
    guards_ok(&rb, "receive buffer");
    if (is_root && inplace)
        CHECK(not_filler(rb.p, counts[me]) < 0, "root's receive buffer written in place");
    else
        CHECK(differs(rb.p, counts[me], seeds[me]) < 0, "received block differs at byte %lld",
              (long long)differs(rb.p, counts[me], seeds[me]));
    if (is_root) {
        check_blocks(&sb, counts, displs, seeds, -1, "send buffer");
        bfree(&sb);
    }
    bfree(&rb);
}

static void t_allgather(int cs, int inplace, int regular)
{
    snprintf(where, sizeof where, "%sallgather case %s%s", regular ? "" : "v-", case_names[cs],
             inplace ? " in place" : "");
    int kind_s = (cs + me) % NKINDS, kind_r = (cs + 2 * me + 1) % NKINDS;
    for (int p = 0; p < P; p++) {
        counts[p] = regular ? cnt(cs, 1, -1) + 3 : cnt(cs, p, -1);
        seeds[p] = seed_of(3, (uint64_t)cs, (uint64_t)p);
    }
    int64_t total;
    if (regular) {
        for (int p = 0; p < P; p++)
            displs[p] = (int64_t)p * counts[0];
        total = P * counts[0];
    } else {
        total = layout(counts, displs, cs % 2, cs);
    }
    buf sb = balloc(kind_s, counts[me]);
    fill(sb.p, counts[me], seeds[me]);
    buf rb = balloc(kind_r, total);
    if (inplace)
        fill(rb.p + displs[me], counts[me], seeds[me]);
    int flags = inplace ? FMPL_COLL_IN_PLACE : 0;
    const void *send = inplace ? NULL : sb.p;
    if (regular)
        CALL(fmpl_coll_allgather(T, send, rb.p, counts[0], flags));
    else
        CALL(fmpl_coll_allgatherv(T, send, rb.p, counts, displs, flags));
    CHECK(differs(sb.p, counts[me], seeds[me]) < 0, "send buffer changed");
    check_blocks(&rb, counts, displs, seeds, -1, "receive buffer");
    bfree(&sb);
    bfree(&rb);
}

static void t_alltoall(int cs, int regular)
{
    snprintf(where, sizeof where, "%salltoall case %s", regular ? "" : "v-", case_names[cs]);
    int kind_s = (cs + me + 1) % NKINDS, kind_r = (cs + 2 * me) % NKINDS;
    int64_t blk = cnt(cs, 1, 2 % P) + 1;
    uint64_t sseeds[256];
    for (int p = 0; p < P; p++) {
        counts[p] = regular ? blk : cnt(cs, me, p);   /* what I send to p */
        counts2[p] = regular ? blk : cnt(cs, p, me);  /* what p sends me */
        sseeds[p] = seed_of(4, (uint64_t)cs, (uint64_t)(me * 256 + p));
        seeds[p] = seed_of(4, (uint64_t)cs, (uint64_t)(p * 256 + me));
    }
    int64_t stotal, rtotal;
    if (regular) {
        for (int p = 0; p < P; p++)
            displs[p] = displs2[p] = (int64_t)p * blk;
        stotal = rtotal = P * blk;
    } else {
        stotal = layout(counts, displs, 0, cs + me);
        rtotal = layout(counts2, displs2, 1, cs + 2 * me);
    }
    buf sb = balloc(kind_s, stotal), rb = balloc(kind_r, rtotal);
    for (int p = 0; p < P; p++)
        fill(sb.p + displs[p], counts[p], sseeds[p]);
    if (regular)
        CALL(fmpl_coll_alltoall(T, sb.p, rb.p, blk, 0));
    else
        CALL(fmpl_coll_alltoallv(T, sb.p, counts, displs, rb.p, counts2, displs2, 0));
    check_blocks(&sb, counts, displs, sseeds, -1, "send buffer");
    check_blocks(&rb, counts2, displs2, seeds, -1, "receive buffer");
    bfree(&sb);
    bfree(&rb);
}

/* ------------------------------------------------------------ reductions */

#define MODP 65521u
typedef struct mat { uint32_t a, b, c, d; } mat;

/* inout = in x inout (in: the lower ranks' operand). */
static void matmul_fn(const void *in, void *inout, long count, void *ctx)
{
    CHECK(ctx == (void *)&quick, "user operation got the wrong context");
    CHECK(((uintptr_t)in & 7) == 0 && ((uintptr_t)inout & 7) == 0,
          "user operation got unaligned buffers");
    const mat *x = in;
    mat *y = inout;
    for (long i = 0; i < count; i++) {
        mat r;
        r.a = (uint32_t)(((uint64_t)x[i].a * y[i].a + (uint64_t)x[i].b * y[i].c) % MODP);
        r.b = (uint32_t)(((uint64_t)x[i].a * y[i].b + (uint64_t)x[i].b * y[i].d) % MODP);
        r.c = (uint32_t)(((uint64_t)x[i].c * y[i].a + (uint64_t)x[i].d * y[i].c) % MODP);
        r.d = (uint32_t)(((uint64_t)x[i].c * y[i].b + (uint64_t)x[i].d * y[i].d) % MODP);
        y[i] = r;
    }
}

static fmpl_op *matop;

/* Element i of member p's input. */
static void elem(int which, int p, int64_t i, void *out)
{
    uint64_t h = mix(seed_of(5, (uint64_t)p, 0) + (uint64_t)i);
    if (which == 0) {
        int32_t v = (int32_t)(h & 0xffff) - 0x8000;
        memcpy(out, &v, 4);
    } else {
        mat m = {(uint32_t)(h % MODP), (uint32_t)((h >> 16) % MODP), (uint32_t)((h >> 32) % MODP),
                 (uint32_t)((h >> 48) % MODP)};
        memcpy(out, &m, sizeof m);
    }
}

/* Reduction of members lo .. hi (inclusive) at element i. */
static void expect(int which, int lo, int hi, int64_t i, void *out)
{
    if (which == 0) {
        int32_t s = 0, v;
        for (int p = lo; p <= hi; p++) {
            elem(0, p, i, &v);
            s += v;
        }
        memcpy(out, &s, 4);
    } else {
        mat acc, x;
        elem(1, hi, i, &acc);
        for (int p = hi - 1; p >= lo; p--) {
            elem(1, p, i, &x);
            matmul_fn(&x, &acc, 1, &quick);
        }
        memcpy(out, &acc, sizeof acc);
    }
}

static const fmpl_op *op_of(int which) { return which == 0 ? fmpl_isum : matop; }
static int64_t es_of(int which) { return which == 0 ? 4 : 16; }

#define NRCASES 5
static const char *const rcase_names[NRCASES] = {"zeros", "tiny", "uneven", "30k", "300k"};

static int64_t rcount(int cs, int p)
{
    switch (cs) {
    case 0: return p == P - 1 ? 3 : 0;
    case 1: return 1 + p;
    case 2: return p % 2 ? 0 : 1000 + 333 * p;
    case 3: return 30000 + 7 * p;
    default: return 300000 / (1 + 3 * (P > 2)) + 1001 * p;
    }
}

static void t_reduce_scatter(int which, int cs, int inplace, int block)
{
    snprintf(where, sizeof where, "reduce_scatter%s %s case %s%s", block ? "_block" : "",
             which ? "matmul" : "isum", rcase_names[cs], inplace ? " in place" : "");
    int64_t es = es_of(which), total = 0, off = 0;
    int kind = which == 0 ? (me + cs) % NKINDS : (me + cs) % 2;
    for (int p = 0; p < P; p++) {
        counts[p] = block ? rcount(cs, 1) : rcount(cs, p);
        total += counts[p];
    }
    for (int p = 0; p < me; p++)
        off += counts[p];
    buf in = balloc(kind, total * es);
    for (int64_t i = 0; i < total; i++)
        elem(which, me, i, in.p + i * es);
    buf out = inplace ? in : balloc((kind + 1) % (which == 0 ? NKINDS : 2), counts[me] * es);
    int flags = inplace ? FMPL_COLL_IN_PLACE : 0;
    if (block)
        CALL(fmpl_coll_reduce_scatter_block(T, inplace ? NULL : in.p, out.p, counts[0],
                                            op_of(which), flags));
    else
        CALL(fmpl_coll_reduce_scatter(T, inplace ? NULL : in.p, out.p, counts, op_of(which),
                                      flags));
    char want[16];
    for (int64_t i = 0; i < counts[me]; i++) {
        expect(which, 0, P - 1, off + i, want);
        CHECK(memcmp(out.p + i * es, want, (size_t)es) == 0, "element %lld of my block differs",
              (long long)i);
    }
    guards_ok(&out, "receive buffer");
    if (!inplace) {
        for (int64_t i = 0; i < total; i++) {
            elem(which, me, i, want);
            CHECK(memcmp(in.p + i * es, want, (size_t)es) == 0, "send buffer changed at %lld",
                  (long long)i);
        }
        guards_ok(&in, "send buffer");
        bfree(&out);
    }
    bfree(&in);
}

static void t_scan(int which, int cs, int inplace, int exclusive)
{
    snprintf(where, sizeof where, "%s %s case %s%s", exclusive ? "exscan" : "scan",
             which ? "matmul" : "isum", rcase_names[cs], inplace ? " in place" : "");
    int64_t es = es_of(which), n = rcount(cs, 0) * 3 + 1;
    int kind = which == 0 ? (me + cs + 1) % NKINDS : (me + cs) % 2;
    buf in = balloc(kind, n * es);
    for (int64_t i = 0; i < n; i++)
        elem(which, me, i, in.p + i * es);
    buf out = inplace ? in : balloc((kind + 1) % (which == 0 ? NKINDS : 2), n * es);
    int flags = inplace ? FMPL_COLL_IN_PLACE : 0;
    if (exclusive)
        CALL(fmpl_coll_exscan(T, inplace ? NULL : in.p, out.p, n, op_of(which), flags));
    else
        CALL(fmpl_coll_scan(T, inplace ? NULL : in.p, out.p, n, op_of(which), flags));
    char want[16];
    if (exclusive && me == 0) {
        if (!inplace)
            CHECK(not_filler(out.p, n * es) < 0, "exscan wrote member 0's receive buffer");
    } else {
        for (int64_t i = 0; i < n; i++) {
            expect(which, 0, exclusive ? me - 1 : me, i, want);
            CHECK(memcmp(out.p + i * es, want, (size_t)es) == 0, "element %lld differs",
                  (long long)i);
        }
    }
    guards_ok(&out, "receive buffer");
    if (!inplace) {
        for (int64_t i = 0; i < n; i++) {
            elem(which, me, i, want);
            CHECK(memcmp(in.p + i * es, want, (size_t)es) == 0, "send buffer changed");
        }
        bfree(&out);
    }
    bfree(&in);
}

/* ------------------------------------------------------------ driver */

static void suite(fmpl_team *t, const char *name)
{
    T = t;
    me = t->rank;
    P = t->size;
    CHECK(P <= 256, "team too large for the test");
    for (int cs = 0; cs < NCASES; cs++) {
        if (!case_used(cs))
            continue;
        int big = cs >= 5;
        for (int root = 0; root < P; root++) {
            if (big && root != 0 && root != P - 1)
                continue;
            for (int ip = 0; ip < 2; ip++) {
                iter++;
                t_gather(cs, root, ip, 0);
                iter++;
                t_scatter(cs, root, ip, 0);
                if (!big || ip == 0) {
                    iter++;
                    t_gather(cs, root, ip, 1);
                    iter++;
                    t_scatter(cs, root, ip, 1);
                }
            }
        }
        for (int ip = 0; ip < 2; ip++) {
            iter++;
            t_allgather(cs, ip, 0);
            iter++;
            t_allgather(cs, ip, 1);
        }
        iter++;
        t_alltoall(cs, 0);
        if (cs != 6) {
            iter++;
            t_alltoall(cs, 1);
        }
    }
    for (int which = 0; which < 2; which++)
        for (int cs = 0; cs < NRCASES; cs++)
            for (int ip = 0; ip < 2; ip++) {
                iter++;
                t_reduce_scatter(which, cs, ip, 0);
                iter++;
                t_reduce_scatter(which, cs, ip, 1);
                iter++;
                t_scan(which, cs, ip, 0);
                iter++;
                t_scan(which, cs, ip, 1);
            }
    /* Back to back with a varying kind of collective: sequences interleave. */
    for (int k = 0; k < 60; k++) {
        iter++;
        switch (k % 5) {
        case 0: t_gather(k % 3, k % P, 0, 0); break;
        case 1: t_allgather(k % 3, 0, 1); break;
        case 2: t_alltoall(k % 3, 0); break;
        case 3: t_reduce_scatter(k % 2, 1, 0, 0); break;
        default: t_scan(k % 2, 1, 0, 1);
        }
    }
    snprintf(where, sizeof where, "%s done", name);
}

int main(int argc, char **argv)
{
    quick = argc > 1 && strcmp(argv[1], "quick") == 0;
    CALL(fmpl_init(NULL, NULL, 0));
    CALL(fmpl_comm_rank(FMPL_COMM_WORLD, &wrank));
    CALL(fmpl_comm_size(FMPL_COMM_WORLD, &wsize));
    CALL(fmpl_op_create(matmul_fn, sizeof(mat), &quick, &matop));

    suite(fmpl_teams[FMPL_COMM_WORLD], "world");

    /* 2 ranks: both (a team apart from world); 4: members 0..2 (3). */
    fmpl_comm sub, solo;
    int key = wsize <= 2 ? 0 : (wrank < 3 ? 0 : FMPL_KEY_NONE);
    CALL(fmpl_comm_create(key, &sub));
    if (sub != FMPL_COMM_NULL)
        suite(fmpl_teams[sub], "sub-team");
    CALL(fmpl_comm_create(wrank, &solo));
    suite(fmpl_teams[solo], "singleton");
    CALL(fmpl_comm_free(&solo));
    if (sub != FMPL_COMM_NULL)
        CALL(fmpl_comm_free(&sub));
    /* World again after the sub-teams' traffic (which not every rank saw:
     * the patterns' iteration counter starts afresh). */
    iter = 1u << 30;
    T = fmpl_teams[FMPL_COMM_WORLD];
    me = T->rank;
    P = T->size;
    t_alltoall(4, 0);
    t_allgather(3, 1, 0);

    CALL(fmpl_op_free(&matop));
    CALL(fmpl_finalize());
    if (wrank == 0)
        printf("collx: %d ranks ok%s\n", wsize, quick ? " (quick)" : "");
    return 0;
}
