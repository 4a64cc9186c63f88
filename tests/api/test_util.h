/* test_util.h — shared helpers for the native API tests (tests/api).
 *
 * What is here
 *  - CHECK macros: on failure print "FAIL file:line [rank r/n] (subtest) ..."
 *    with what was expected and what was seen, then _exit(1) (no atexit
 *    handlers: a half-broken library must not hang the exit).
 *  - Byte patterns: pattern byte i of a message depends on (sender, index,
 *    size, iteration) through tu_seed(), and on i itself, so a message that
 *    is delivered to the wrong receive, shifted, truncated or stale is caught.
 *  - Buffers of a chosen kind (shared = fmpl_alloc, heap = malloc, heap+1 =
 *    malloc at an odd address, stack = a local array of the caller) with
 *    guard zones before and after the usable bytes.
 *  - A few p2p-only synchronisation helpers (so p2p tests do not depend on
 *    the collectives) and an out-of-band shared page (for tests that must
 *    coordinate without calling FMPL, e.g. to observe the spool).
 *
 * Everything is static: each test is one translation unit.
 */
#ifndef FMPL_API_TEST_UTIL_H
#define FMPL_API_TEST_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include "fmpl.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>


#define TU_UNUSED __attribute__((unused))

/* ------------------------------------------------------------ identity */

static int tu_rank TU_UNUSED = -1;
static int tu_size TU_UNUSED = -1;
static const char *tu_prog TU_UNUSED = "?";
static const char *tu_sub TU_UNUSED = "-"; /* current subtest, for messages */

/* ------------------------------------------------------ error reporting */

static const char *const tu_code_names[] TU_UNUSED = {
    "FMPL_SUCCESS",         "FMPL_ERR_ARG",      "FMPL_ERR_RANK",
    "FMPL_ERR_COMM",        "FMPL_ERR_INDEX",    "FMPL_ERR_SIZE",
    "FMPL_ERR_TRUNCATE",    "FMPL_ERR_BUSY",     "FMPL_ERR_NOT_PENDING",
    "FMPL_ERR_NOT_INITIALIZED", "FMPL_ERR_FINALIZED", "FMPL_ERR_ALREADY_INITIALIZED",
    "FMPL_ERR_NO_MEMORY",   "FMPL_ERR_SPOOL_FULL", "FMPL_ERR_OP",
    "FMPL_ERR_ROOT",        "FMPL_ERR_UNSUPPORTED", "FMPL_ERR_BOOTSTRAP",
    "FMPL_ERR_INTERNAL",
};
_Static_assert(sizeof tu_code_names / sizeof tu_code_names[0] == FMPL_ERR_LAST,
               "tu_code_names must list every FMPL error code");

static inline const char *tu_code_name(int code)
{
    if (code >= 0 && code < FMPL_ERR_LAST)
        return tu_code_names[code];
    return "(not an FMPL code)";
}

/* Messages nest other messages (a check's own text inside a failure
 * message); a long one is cut short on purpose, through this one function. */
__attribute__((format(printf, 3, 4))) static inline void
tu_fmt(char *out, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, len, fmt, ap);
    va_end(ap);
}

__attribute__((noreturn, format(printf, 3, 4))) static inline void
tu_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    fprintf(stderr, "FAIL %s:%d [%s rank %d/%d] (%s) %s\n", file, line, tu_prog, tu_rank,
            tu_size, tu_sub, msg);
    fflush(stderr);
    _exit(1);
}

#define TU_FAIL(...) tu_fail(__FILE__, __LINE__, __VA_ARGS__)

/* CHECK(cond, fmt, ...): fail with the condition text and a message. */
#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            char tu_m_[1536];                                                      \
            tu_fmt(tu_m_, sizeof tu_m_, __VA_ARGS__);                            \
            tu_fail(__FILE__, __LINE__, "check (%s) failed: %s", #cond, tu_m_);    \
        }                                                                          \
    } while (0)

/* CHECK_RC(call, expected, fmt, ...): the call must return `expected`. */
#define CHECK_RC(call, expected, ...)                                              \
    do {                                                                           \
        int tu_rc_ = (call);                                                       \
        int tu_ex_ = (expected);                                                   \
        if (tu_rc_ != tu_ex_) {                                                    \
            char tu_m_[1536];                                                      \
            tu_fmt(tu_m_, sizeof tu_m_, __VA_ARGS__);                            \
            tu_fail(__FILE__, __LINE__, "%s returned %s (%d), expected %s (%d): %s", \
                    #call, tu_code_name(tu_rc_), tu_rc_, tu_code_name(tu_ex_),     \
                    tu_ex_, tu_m_);                                                \
        }                                                                          \
    } while (0)

/* CALL(call): the call must succeed. */
#define CALL(call) CHECK_RC(call, FMPL_SUCCESS, "%s", "must succeed")

/* CHECK_EQ(a, b, fmt, ...): integers; prints both values. */
#define CHECK_EQ(seen, expected, ...)                                              \
    do {                                                                           \
        long long tu_s_ = (long long)(seen), tu_e_ = (long long)(expected);        \
        if (tu_s_ != tu_e_) {                                                      \
            char tu_m_[1536];                                                      \
            tu_fmt(tu_m_, sizeof tu_m_, __VA_ARGS__);                            \
            tu_fail(__FILE__, __LINE__, "%s is %lld, expected %s = %lld: %s", #seen, \
                    tu_s_, #expected, tu_e_, tu_m_);                               \
        }                                                                          \
    } while (0)

/* Check every field of a status. */
#define CHECK_STATUS(st, src, idx, sz, err, ...)                                   \
    do {                                                                           \
        const fmpl_status *tu_st_ = &(st);                                         \
        char tu_c_[1024];                                                          \
        tu_fmt(tu_c_, sizeof tu_c_, __VA_ARGS__);                                \
        if (tu_st_->source != (src) || tu_st_->index != (idx) ||                   \
            tu_st_->size != (long)(sz) || tu_st_->error != (err))                  \
            tu_fail(__FILE__, __LINE__,                                            \
                    "status {source %d, index %d, size %ld, error %s}, expected "  \
                    "{source %d, index %d, size %ld, error %s}: %s",               \
                    tu_st_->source, tu_st_->index, tu_st_->size,                   \
                    tu_code_name(tu_st_->error), (int)(src), (int)(idx),           \
                    (long)(sz), tu_code_name(err), tu_c_);                         \
    } while (0)

/* ------------------------------------------------------------- patterns */

static inline uint64_t tu_mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Seed of the pattern of one message. */
static inline uint64_t tu_seed(int sender, int index, long size, long iter)
{
    uint64_t h = tu_mix64((uint64_t)(uint32_t)sender + 0x1000);
    h = tu_mix64(h ^ (uint64_t)(uint32_t)index);
    h = tu_mix64(h ^ (uint64_t)size);
    return tu_mix64(h ^ (uint64_t)iter);
}

#define TU_SEED_BACKGROUND 0xb6b6b6b6b6b6b6b6ull /* receive buffers before delivery */
#define TU_SEED_GUARD 0x6a09e667f3bcc908ull      /* guard zones */

/* Pattern byte at position `pos` of the stream `seed`. */
static inline unsigned char tu_pat_byte(uint64_t seed, long pos)
{
    uint64_t w = tu_mix64(seed ^ ((uint64_t)(pos >> 3) * 0xd1b54a32d192ed03ull));
    return (unsigned char)(w >> ((pos & 7) * 8));
}

static inline uint64_t tu_pat_word(uint64_t seed, long wordpos)
{
    return tu_mix64(seed ^ ((uint64_t)wordpos * 0xd1b54a32d192ed03ull));
}

/* Write stream positions [pos, pos+len) of `seed` to p[0..len). */
static inline void tu_fill_at(void *p_, long pos, long len, uint64_t seed)
{
    unsigned char *p = p_;
    long i = 0;
    while (i < len && ((pos + i) & 7))
        p[i] = tu_pat_byte(seed, pos + i), i++;
    for (; i + 8 <= len; i += 8) {
        uint64_t w = tu_pat_word(seed, (pos + i) >> 3);
        memcpy(p + i, &w, 8); /* little-endian byte order = tu_pat_byte */
    }
    for (; i < len; i++)
        p[i] = tu_pat_byte(seed, pos + i);
}

/* First i in [0,len) where p[i] differs from stream position pos+i, or -1. */
static inline long tu_find_mismatch_at(const void *p_, long pos, long len, uint64_t seed)
{
    const unsigned char *p = p_;
    long i = 0;
    while (i < len && ((pos + i) & 7)) {
        if (p[i] != tu_pat_byte(seed, pos + i))
            return i;
        i++;
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t w = tu_pat_word(seed, (pos + i) >> 3), v;
        memcpy(&v, p + i, 8);
        if (v != w) {
            for (int k = 0; k < 8; k++)
                if (p[i + k] != tu_pat_byte(seed, pos + i + k))
                    return i + k;
        }
    }
    for (; i < len; i++)
        if (p[i] != tu_pat_byte(seed, pos + i))
            return i;
    return -1;
}

static inline void tu_fill(void *p, long len, uint64_t seed) { tu_fill_at(p, 0, len, seed); }

/* Report a mismatch found at p[off] against stream position pos+off. */
static inline void tu_report_mismatch(const char *file, int line, const void *p_, long pos,
                                      long len, uint64_t seed, long off, const char *what)
{
    const unsigned char *p = p_;
    long bad = 0, last = off;
    for (long i = off; i < len; i++)
        if (p[i] != tu_pat_byte(seed, pos + i))
            bad++, last = i;
    char got[64] = "", exp[64] = "";
    int ng = 0, ne = 0;
    for (long i = off; i < len && i < off + 8; i++) {
        ng += snprintf(got + ng, sizeof got - (size_t)ng, "%02x", p[i]);
        ne += snprintf(exp + ne, sizeof exp - (size_t)ne, "%02x", tu_pat_byte(seed, pos + i));
    }
    tu_fail(file, line,
            "%s: byte at offset %ld of %ld (buffer %p): expected 0x%02x, seen 0x%02x "
            "(bytes from there: expected %s, seen %s); %ld bytes differ, last at offset %ld",
            what, off, len, (const void *)(p + off), tu_pat_byte(seed, pos + off), p[off], exp,
            got, bad, last);
}

/* Fail unless p[0..len) holds the stream `seed` from position pos. */
#define CHECK_PATTERN_AT(p, pos, len, seed, ...)                                   \
    do {                                                                           \
        long tu_off_ = tu_find_mismatch_at((p), (pos), (len), (seed));             \
        if (tu_off_ >= 0) {                                                        \
            char tu_w_[512];                                                       \
            tu_fmt(tu_w_, sizeof tu_w_, __VA_ARGS__);                            \
            tu_report_mismatch(__FILE__, __LINE__, (p), (pos), (len), (seed),      \
                               tu_off_, tu_w_);                                    \
        }                                                                          \
    } while (0)

#define CHECK_PATTERN(p, len, seed, ...) CHECK_PATTERN_AT(p, 0, len, seed, __VA_ARGS__)

/* -------------------------------------------------------------- buffers */

enum { TU_SHARED, TU_HEAP, TU_HEAP_ODD, TU_STACK, TU_NKINDS };
static const char *const tu_kind_names[TU_NKINDS] TU_UNUSED = {"shared", "heap", "heap+1",
                                                                "stack"};

#define TU_GUARD 256                 /* guard bytes before and after a buffer */
#define TU_STACK_MAX (64 * 1024 + 128) /* largest stack buffer: 64 KiB + slack */
#define TU_STACK_BYTES (TU_STACK_MAX + 2 * TU_GUARD + 64)

/* A buffer with `cap` usable bytes at p, TU_GUARD guard bytes before p and
 * after p+cap.  The region [p - TU_GUARD, p + cap + TU_GUARD) is stream
 * positions 0.. of the background/guard patterns, so "untouched" can be
 * checked for any part of it. */
typedef struct tu_buf {
    unsigned char *p;
    long cap;
    int kind;
    unsigned char *base; /* what to free */
} tu_buf;

/* Allocate.  For TU_STACK the caller passes a local array of
 * TU_STACK_BYTES (e.g. `unsigned char stk[TU_STACK_BYTES]`); others pass NULL. */
static inline void tu_buf_get_at(const char *file, int line, tu_buf *b, int kind, long cap,
                                 unsigned char *stack)
{
    size_t total = (size_t)cap + 2 * TU_GUARD + 1;
    b->kind = kind;
    b->cap = cap;
    switch (kind) {
    case TU_SHARED:
        b->base = fmpl_alloc(total);
        if (!b->base)
            tu_fail(file, line, "fmpl_alloc(%zu) returned NULL (shared heap too small? "
                    "see FMPL_HEAP_SIZE)", total);
        b->p = b->base + TU_GUARD;
        break;
    case TU_HEAP:
    case TU_HEAP_ODD:
        b->base = malloc(total + 64);
        if (!b->base)
            tu_fail(file, line, "malloc(%zu) failed", total + 64);
        b->p = b->base + TU_GUARD + (kind == TU_HEAP_ODD ? 1 : 0);
        break;
    case TU_STACK:
        if (!stack || cap > TU_STACK_MAX)
            tu_fail(file, line, "stack buffer of %ld bytes: not provided or > %d", cap,
                    TU_STACK_MAX);
        b->base = stack;
        b->p = b->base + TU_GUARD;
        break;
    default:
        tu_fail(file, line, "bad buffer kind %d", kind);
    }
}
#define tu_buf_get(b, kind, cap, stack) tu_buf_get_at(__FILE__, __LINE__, b, kind, cap, stack)

static inline void tu_buf_put(tu_buf *b)
{
    if (b->kind == TU_SHARED)
        fmpl_free(b->base);
    else if (b->kind == TU_HEAP || b->kind == TU_HEAP_ODD)
        free(b->base);
    b->base = b->p = NULL;
}

/* Fill guards with the guard pattern and the usable bytes with the
 * background pattern (what a receive buffer holds before delivery). */
static inline void tu_buf_arm(tu_buf *b)
{
    tu_fill_at(b->p - TU_GUARD, 0, TU_GUARD, TU_SEED_GUARD);
    tu_fill_at(b->p, TU_GUARD, b->cap, TU_SEED_BACKGROUND);
    tu_fill_at(b->p + b->cap, TU_GUARD + b->cap, TU_GUARD, TU_SEED_GUARD);
}

/* Guards untouched, and usable bytes [from, cap) still background. */
#define CHECK_BUF_UNTOUCHED_FROM(b, from, ...)                                     \
    do {                                                                           \
        char tu_w2_[400];                                                          \
        tu_fmt(tu_w2_, sizeof tu_w2_, __VA_ARGS__);                              \
        CHECK_PATTERN_AT((b)->p - TU_GUARD, 0, TU_GUARD, TU_SEED_GUARD,            \
                         "%s: guard zone BEFORE the %s buffer (offset = byte "     \
                         "index in the %d-byte guard) was written", tu_w2_,        \
                         tu_kind_names[(b)->kind], TU_GUARD);                      \
        CHECK_PATTERN_AT((b)->p + (from), TU_GUARD + (from), (b)->cap - (from),    \
                         TU_SEED_BACKGROUND,                                       \
                         "%s: bytes of the %ld-byte %s buffer past the message "   \
                         "(offset counts from byte %ld) were written", tu_w2_,     \
                         (long)(b)->cap, tu_kind_names[(b)->kind], (long)(from));  \
        CHECK_PATTERN_AT((b)->p + (b)->cap, TU_GUARD + (b)->cap, TU_GUARD,         \
                         TU_SEED_GUARD,                                            \
                         "%s: guard zone just PAST the %ld-byte %s buffer "        \
                         "(offset = bytes past its end) was written", tu_w2_,      \
                         (long)(b)->cap, tu_kind_names[(b)->kind]);                \
    } while (0)

/* ----------------------------------------------------------- time, misc */

static inline double tu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline void tu_sleep_ms(double ms)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(ms / 1000);
    ts.tv_nsec = (long)((ms - 1000.0 * (double)ts.tv_sec) * 1e6);
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static inline uint64_t tu_rand(uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ull;
    return tu_mix64(*state);
}

/* A permutation of 0..n-1 from `seed` (Fisher-Yates). */
static inline void tu_shuffle(int *a, int n, uint64_t seed)
{
    uint64_t s = seed;
    for (int i = 0; i < n; i++)
        a[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(tu_rand(&s) % (uint64_t)(i + 1));
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

/* Deadline for loops that poll: a test that waits for something that
 * never happens fails with a message instead of hitting the ctest timeout. */
#define TU_POLL_LIMIT_S 30.0

/* ------------------------------------------------------ start and stop */

static inline void tu_init_at(const char *file, int line, const char *prog, void *ma,
                              void *fa, int count)
{
    tu_prog = prog;
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = fmpl_init(ma, fa, count);
    if (rc != FMPL_SUCCESS)
        tu_fail(file, line, "fmpl_init(%p, %p, %d) returned %s (%d)", ma, fa, count,
                tu_code_name(rc), rc);
    if (fmpl_comm_rank(FMPL_COMM_WORLD, &tu_rank) != FMPL_SUCCESS ||
        fmpl_comm_size(FMPL_COMM_WORLD, &tu_size) != FMPL_SUCCESS)
        tu_fail(file, line, "fmpl_comm_rank/size on FMPL_COMM_WORLD failed");
}
#define tu_init(prog, count) tu_init_at(__FILE__, __LINE__, prog, NULL, NULL, count)
#define tu_init_areas(prog, ma, fa, count) tu_init_at(__FILE__, __LINE__, prog, ma, fa, count)

static inline int tu_finish(void)
{
    int rc = fmpl_finalize();
    if (rc != FMPL_SUCCESS)
        tu_fail(__FILE__, __LINE__, "fmpl_finalize returned %s", tu_code_name(rc));
    if (tu_rank == 0)
        printf("PASS %s (%d ranks)\n", tu_prog, tu_size);
    return 0;
}

/* --------------------------------------------- p2p-only synchronisation */

/* Both ranks of a pair return only after both have called it: an exchange
 * of empty messages on `index` (lower rank sends first). */
static inline void tu_pair_sync(int peer, int index, fmpl_comm comm)
{
    int me;
    fmpl_comm_rank(comm, &me);
    char dummy = 0;
    if (me < peer) {
        CHECK_RC(fmpl_send(&dummy, 0, peer, index, comm), FMPL_SUCCESS, "pair sync to %d", peer);
        CHECK_RC(fmpl_recv(&dummy, 0, peer, index, comm, NULL), FMPL_SUCCESS,
                 "pair sync from %d", peer);
    } else {
        CHECK_RC(fmpl_recv(&dummy, 0, peer, index, comm, NULL), FMPL_SUCCESS,
                 "pair sync from %d", peer);
        CHECK_RC(fmpl_send(&dummy, 0, peer, index, comm), FMPL_SUCCESS, "pair sync to %d", peer);
    }
}

/* All ranks of `comm`: a gather to rank 0 and a release, by point-to-point
 * only (for tests that must not rely on fmpl_barrier). */
static inline void tu_p2p_sync_all(int index, fmpl_comm comm)
{
    int me, n;
    fmpl_comm_rank(comm, &me);
    fmpl_comm_size(comm, &n);
    char dummy = 0;
    if (me == 0) {
        for (int r = 1; r < n; r++)
            CHECK_RC(fmpl_recv(&dummy, 0, r, index, comm, NULL), FMPL_SUCCESS, "sync from %d", r);
        for (int r = 1; r < n; r++)
            CHECK_RC(fmpl_send(&dummy, 0, r, index, comm), FMPL_SUCCESS, "sync to %d", r);
    } else {
        CHECK_RC(fmpl_send(&dummy, 0, 0, index, comm), FMPL_SUCCESS, "sync to 0");
        CHECK_RC(fmpl_recv(&dummy, 0, 0, index, comm, NULL), FMPL_SUCCESS, "sync from 0");
    }
}

/* -------------------------------------------- out-of-band shared page */

/* A page of memory shared by the two ranks of a pair, created by the test
 * itself (POSIX shm).  Used where a test must observe the library without
 * calling it: any FMPL call may progress pending sends and the spool. */
typedef struct tu_oob {
    int stage[16];
} tu_oob;

/* Collective over the pair; `index` is used for the set-up messages. */
static inline tu_oob *tu_oob_open(int peer, int index)
{
    char name[64];
    memset(name, 0, sizeof name);
    int fd;
    if (tu_rank < peer) {
        snprintf(name, sizeof name, "/fmpltest-%d-%d-%d", (int)getpid(), tu_rank, peer);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0)
            TU_FAIL("shm_open(%s) for the out-of-band page: %s", name, strerror(errno));
        if (ftruncate(fd, 4096) != 0)
            TU_FAIL("ftruncate(%s): %s", name, strerror(errno));
        CALL(fmpl_send(name, sizeof name, peer, index, FMPL_COMM_WORLD));
    } else {
        CALL(fmpl_recv(name, sizeof name, peer, index, FMPL_COMM_WORLD, NULL));
        fd = shm_open(name, O_RDWR, 0600);
        if (fd < 0)
            TU_FAIL("shm_open(%s) for the out-of-band page: %s", name, strerror(errno));
    }
    void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED)
        TU_FAIL("mmap of the out-of-band page: %s", strerror(errno));
    close(fd);
    tu_pair_sync(peer, index, FMPL_COMM_WORLD); /* both mapped */
    if (tu_rank < peer)
        shm_unlink(name);
    return p;
}

static inline void tu_oob_set(tu_oob *o, int slot, int v)
{
    __atomic_store_n(&o->stage[slot], v, __ATOMIC_SEQ_CST);
}

static inline int tu_oob_get(tu_oob *o, int slot)
{
    return __atomic_load_n(&o->stage[slot], __ATOMIC_SEQ_CST);
}

/* Wait, WITHOUT calling FMPL, until slot holds v. */
#define tu_oob_wait(o, slot, v, what)                                              \
    do {                                                                           \
        double tu_t0_ = tu_now();                                                  \
        while (tu_oob_get((o), (slot)) != (v)) {                                   \
            if (tu_now() - tu_t0_ > TU_POLL_LIMIT_S)                               \
                TU_FAIL("timed out after %.0f s waiting for the peer: %s "         \
                        "(out-of-band slot %d is %d, waiting for %d)",             \
                        TU_POLL_LIMIT_S, (what), (slot), tu_oob_get((o), (slot)), (v)); \
            sched_yield();                                                         \
        }                                                                          \
    } while (0)

static inline void tu_oob_close(tu_oob *o) { munmap(o, 4096); }

/* One fmpl_sendbuf_check; its counts must be the ones given. */
static inline void tu_check_spool_counts(int exp_nsend, int exp_nspool, const char *why)
{
    int ns = -7, np = -7;
    CALL(fmpl_sendbuf_check(&ns, &np));
    if (ns != exp_nsend || np != exp_nspool)
        TU_FAIL("fmpl_sendbuf_check gave nsend %d nspool %d, expected nsend %d nspool %d: %s",
                ns, np, exp_nsend, exp_nspool, why);
}

/* Pairs (r, r^1), both directions: rank r sends in pass (r & 1) and
 * receives in the other.  Each pass opens a fresh out-of-band page into
 * *oob, runs body and meets the peer on sync_index.  An odd last rank sits
 * it out. */
static inline void tu_pairs_both_ways(tu_oob **oob, int oob_index, int sync_index,
                                      void (*body)(int peer, int snd, int pass))
{
    int peer = tu_rank ^ 1;
    if (peer >= tu_size)
        return;
    for (int pass = 0; pass < 2; pass++) {
        tu_sub = "out-of-band page";
        *oob = tu_oob_open(peer, oob_index);
        body(peer, (tu_rank & 1) == pass, pass);
        tu_oob_close(*oob);
        tu_pair_sync(peer, sync_index, FMPL_COMM_WORLD);
    }
}

#endif
