/* hotpath: the message path allocates nothing and makes no system call (R3).
 *
 *   hotpath malloc p2p      after fmpl_init and a warm-up, 1000 ping-pongs of
 *                           8 B and of 64 KiB with send/recv, 1000 exchanges
 *                           with irecv/isend/waits, 300 with test polling,
 *                           between fmpl_alloc buffers: the malloc family
 *                           (interposed below) must not be called at all.
 *   hotpath malloc coll     the same for barrier, bcast, reduce, allreduce
 *                           (R20: reductions use the caller's workspace).
 *   hotpath malloc rcopy    the same for remote copies into symmetric memory
 *                           (fmpl_put_notify ping-pongs of 8 B and 64 KiB
 *                           with sequence notes, get_notify with a COUNT
 *                           note, forwarded fmpl_copy, fmpl_copy_sync).
 *   hotpath syscalls p2p N  N iterations of a zero-copy ping-pong and
 *   hotpath syscalls coll N exchange (or of the collectives, or of the remote
 *   hotpath syscalls rcopy N copies) and nothing
 *                           else; run by hotpath_syscalls.sh under strace -c
 *                           for two values of N: the totals must be equal.
 *
 * The interposed allocator wraps glibc's __libc_* entry points and counts
 * calls.  Under AddressSanitizer (which owns malloc) the malloc mode cannot
 * work and exits with 77 (skipped).
 */
#include "test_util.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_COUNTING_MALLOC 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_COUNTING_MALLOC 0
#endif
#endif
#ifndef HAVE_COUNTING_MALLOC
#define HAVE_COUNTING_MALLOC 1
#endif

#define SKIP 77
#define COUNT 64

static unsigned long n_alloc, n_free; /* calls of the malloc family */

#if HAVE_COUNTING_MALLOC
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);
void *memalign(size_t, size_t);
void *pvalloc(size_t);

static inline void count_alloc(void) { __atomic_fetch_add(&n_alloc, 1, __ATOMIC_RELAXED); }

void *malloc(size_t s)
{
    count_alloc();
    return __libc_malloc(s);
}

void *calloc(size_t a, size_t b)
{
    count_alloc();
    return __libc_calloc(a, b);
}

void *realloc(void *p, size_t s)
{
    count_alloc();
    return __libc_realloc(p, s);
}

void *reallocarray(void *p, size_t a, size_t b)
{
    count_alloc();
    if (b && a > (size_t)-1 / b) {
        errno = ENOMEM;
        return NULL;
    }
    return __libc_realloc(p, a * b);
}

void free(void *p)
{
    if (p)
        __atomic_fetch_add(&n_free, 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

void *memalign(size_t al, size_t s)
{
    count_alloc();
    return __libc_memalign(al, s);
}

void *aligned_alloc(size_t al, size_t s)
{
    count_alloc();
    return __libc_memalign(al, s);
}

int posix_memalign(void **out, size_t al, size_t s)
{
    count_alloc();
    if (al < sizeof(void *) || (al & (al - 1)) != 0)
        return EINVAL;
    void *p = __libc_memalign(al, s);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *valloc(size_t s)
{
    count_alloc();
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), s);
}

void *pvalloc(size_t s)
{
    count_alloc();
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    return __libc_memalign(pg, (s + pg - 1) & ~(pg - 1));
}
#endif

static int me, n, peer;

/* ------------------------------------------------------------- loops */

#define BIG 65536
static unsigned char *sbig, *rbig, *s8, *r8;

/* Cheap per-iteration check: first and last 8 bytes carry (sender, iter). */
static inline void stamp(unsigned char *p, long sz, long it)
{
    uint64_t v = ((uint64_t)(uint32_t)me << 40) ^ (uint64_t)it ^ 0x5a00000000000000ull;
    memcpy(p, &v, 8);
    if (sz > 8)
        memcpy(p + sz - 8, &v, 8);
}

static inline void check_stamp(const unsigned char *p, long sz, long it, const char *what)
{
    uint64_t e = ((uint64_t)(uint32_t)peer << 40) ^ (uint64_t)it ^ 0x5a00000000000000ull, a, b;
    memcpy(&a, p, 8);
    memcpy(&b, p + sz - 8, 8);
    if (a != e || b != e)
        TU_FAIL("%s, iteration %ld, %ld B: stamp at offset 0 = %#llx, at offset %ld = %#llx, "
                "expected %#llx (sender %d)", what, it, sz, (unsigned long long)a, sz - 8,
                (unsigned long long)b, (unsigned long long)e, peer);
}

/* Blocking ping-pong: even rank of the pair pings. */
static void pingpong(unsigned char *s, unsigned char *r, long sz, long iters, long base, int chk)
{
    for (long i = 0; i < iters; i++) {
        long it = base + i;
        stamp(s, sz, it);
        if ((me & 1) == 0) {
            CALL(fmpl_send(s, sz, peer, 2, FMPL_COMM_WORLD));
            CALL(fmpl_recv(r, sz, peer, 2, FMPL_COMM_WORLD, NULL));
        } else {
            CALL(fmpl_recv(r, sz, peer, 2, FMPL_COMM_WORLD, NULL));
            CALL(fmpl_send(s, sz, peer, 2, FMPL_COMM_WORLD));
        }
        if (chk)
            check_stamp(r, sz, it, "send/recv ping-pong");
    }
}

/* Exchange with irecv, isend and waits (or test polling). */
static void exchange(unsigned char *s, unsigned char *r, long sz, long iters, long base, int poll,
                     int chk)
{
    for (long i = 0; i < iters; i++) {
        long it = base + i;
        stamp(s, sz, it);
        fmpl_status st;
        CALL(fmpl_irecv(r, sz, peer, 3, FMPL_COMM_WORLD));
        CALL(fmpl_isend(s, sz, peer, 3, FMPL_COMM_WORLD));
        if (poll) {
            int fs = 0, fr = 0;
            while (!fs || !fr) {
                if (!fr)
                    CALL(fmpl_irecv_test(peer, 3, FMPL_COMM_WORLD, &fr, &st));
                if (!fs)
                    CALL(fmpl_isend_test(peer, 3, FMPL_COMM_WORLD, &fs));
            }
        } else {
            CALL(fmpl_irecv_wait(peer, 3, FMPL_COMM_WORLD, &st));
            CALL(fmpl_isend_wait(peer, 3, FMPL_COMM_WORLD));
        }
        if (chk) {
            if (st.size != sz)
                TU_FAIL("exchange iteration %ld: status.size %ld, expected %ld", it, st.size, sz);
            check_stamp(r, sz, it, poll ? "isend/irecv/test exchange" : "isend/irecv/wait exchange");
        }
    }
}

static void p2p_iterations(long iters, int chk)
{
    pingpong(s8, r8, 8, iters, 0, chk);
    pingpong(sbig, rbig, BIG, iters, 1000000, chk);
    exchange(s8, r8, 8, iters, 2000000, 0, chk);
    exchange(sbig, rbig, BIG, iters * 3 / 10, 3000000, 1, chk);
}

static double *dbuf, *dwork;
#define DN 1000

static void coll_iterations(long iters, int chk)
{
    for (long i = 0; i < iters; i++) {
        CALL(fmpl_barrier(FMPL_COMM_WORLD));
        int root = (int)(i % n);
        long it = 4000000 + i;
        if (me == root)
            memcpy(s8, &it, 8);
        CALL(fmpl_bcast(s8, 8, root, FMPL_COMM_WORLD));
        if (chk) {
            long got;
            memcpy(&got, s8, 8);
            if (got != it)
                TU_FAIL("bcast 8 B iteration %ld root %d: got %ld", i, root, got);
        }
        if (i % 2 == 0) {
            if (me == root)
                memcpy(sbig + BIG - 8, &it, 8);
            CALL(fmpl_bcast(sbig, BIG, root, FMPL_COMM_WORLD));
            if (chk) {
                long got;
                memcpy(&got, sbig + BIG - 8, 8);
                if (got != it)
                    TU_FAIL("bcast 64 KiB iteration %ld root %d: got %ld", i, root, got);
            }
        }
        for (int k = 0; k < DN; k++)
            dbuf[k] = (double)(me + k % 7);
        CALL(fmpl_allreduce(dbuf, DN, fmpl_dsum, FMPL_COMM_WORLD, dwork));
        if (chk) {
            double e = (double)n * (n - 1) / 2 + (double)n * (double)((DN - 1) % 7);
            if (dbuf[DN - 1] != e)
                TU_FAIL("allreduce iteration %ld: last element %g, expected %g", i, dbuf[DN - 1], e);
        }
        for (int k = 0; k < DN; k++)
            dbuf[k] = 1.0;
        CALL(fmpl_reduce(dbuf, DN, fmpl_dsum, root, FMPL_COMM_WORLD, dwork));
        if (chk && me == root && dbuf[0] != (double)n)
            TU_FAIL("reduce iteration %ld root %d: %g, expected %d", i, root, dbuf[0], n);
        dbuf[0] = 1.0;
        CALL(fmpl_allreduce(dbuf, 1, fmpl_dsum, FMPL_COMM_WORLD, dwork));
        if (chk && dbuf[0] != (double)n)
            TU_FAIL("allreduce count 1 iteration %ld: %g, expected %d", i, dbuf[0], n);
    }
}

/* Remote copies between the pair, into symmetric memory: put_notify
 * ping-pongs whose notes carry sequence values, a get with a COUNT note at
 * the caller, and every 8th iteration a get forwarded to the peer
 * (fmpl_copy) and fmpl_copy_sync. */
static unsigned char *sym;   /* [0, BIG) ping, [BIG, 2 BIG) pong, then 64 bytes to get */
static uint64_t *words;      /* ping, pong, get count, forwarded count */
static uint64_t rc_seq, rc_gets, rc_fwd;

static void rcopy_one(unsigned char *src, long sz, long it, int chk)
{
    uint64_t k = ++rc_seq;
    int pinger = (me & 1) == 0;
    fmpl_notify note = {FMPL_NOTIFY_SET, &words[pinger ? 0 : 1], k};
    stamp(src, sz, it);
    if (!pinger) { /* the ping is read before the pong lets the next one come */
        CALL(fmpl_wait_count(&words[0], k));
        if (chk)
            check_stamp(sym, sz, it, "put_notify ping");
    }
    CALL(fmpl_put_notify(src, sym + (pinger ? 0 : BIG), (size_t)sz, peer, FMPL_COMM_WORLD,
                         &note));
    if (pinger) {
        CALL(fmpl_wait_count(&words[1], k));
        if (chk)
            check_stamp(sym + BIG, sz, it, "put_notify pong");
    }
}

static void rcopy_iterations(long iters, int chk)
{
    for (long i = 0; i < iters; i++) {
        rcopy_one(s8, 8, 5000000 + i, chk);
        rcopy_one(sbig, BIG, 6000000 + i, chk);
        fmpl_notify count = {FMPL_NOTIFY_COUNT, &words[2], 0};
        CALL(fmpl_get_notify(r8, sym + 2 * BIG, 8, peer, FMPL_COMM_WORLD, &count));
        CHECK(words[2] == ++rc_gets, "get_notify's COUNT note");
        if (i % 8 == 0) {
            fmpl_notify fwd = {FMPL_NOTIFY_COUNT, &words[3], 0};
            CALL(fmpl_copy(peer, sym + 2 * BIG, me, sym + 2 * BIG + 64, 8, FMPL_COMM_WORLD,
                           &fwd));
            CALL(fmpl_wait_count(&words[3], ++rc_fwd));
            CALL(fmpl_copy_sync(FMPL_COMM_WORLD));
            if (chk)
                CHECK(memcmp(sym + 2 * BIG + 64, r8, 8) == 0, "forwarded get: the peer's word");
        }
    }
}

static void alloc_buffers(void)
{
    sbig = fmpl_alloc(BIG);
    rbig = fmpl_alloc(BIG);
    s8 = fmpl_alloc(64);
    r8 = fmpl_alloc(64);
    dbuf = fmpl_alloc(DN * sizeof(double));
    dwork = fmpl_alloc(DN * sizeof(double));
    CHECK(sbig && rbig && s8 && r8 && dbuf && dwork, "fmpl_alloc of the buffers");
    tu_fill(sbig, BIG, tu_seed(me, 0, BIG, 0));
    tu_fill(s8, 8, tu_seed(me, 0, 8, 0));
}

static void alloc_symmetric(void)
{
    sym = fmpl_alloc_symmetric(2 * BIG + 128, FMPL_COMM_WORLD);
    words = fmpl_alloc_symmetric(4 * sizeof *words, FMPL_COMM_WORLD);
    CHECK(sym && words, "fmpl_alloc_symmetric of the buffers");
    memset(words, 0, 4 * sizeof *words);
    memset(sym + 2 * BIG, me + 1, 64); /* what the peer gets from us */
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
}

/* The loops of one kind (p2p needs the pair: the last rank of an odd job
 * has none). */
static void iterations(int what, int paired, long iters, int chk)
{
    if (what == 1)
        coll_iterations(iters, chk);
    else if (paired && what == 2)
        rcopy_iterations(iters, chk);
    else if (paired)
        p2p_iterations(iters, chk);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "malloc";
    const char *what = argc > 2 ? argv[2] : "p2p";
    long iters = argc > 3 ? atol(argv[3]) : 1000;
    int coll = strcmp(what, "coll") == 0;
    int kind = coll ? 1 : strcmp(what, "rcopy") == 0 ? 2 : 0;
    if (strcmp(mode, "malloc") == 0 && !HAVE_COUNTING_MALLOC) {
        printf("hotpath malloc: SKIPPED (AddressSanitizer owns malloc; cannot interpose)\n");
        return SKIP;
    }
    tu_init(kind == 1 ? "hotpath(coll)" : kind == 2 ? "hotpath(rcopy)" : "hotpath(p2p)", COUNT);
    me = tu_rank;
    n = tu_size;
    peer = me ^ 1;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    alloc_buffers();
    if (kind == 2)
        alloc_symmetric();
    int paired = peer < n;
    static const char *const names[] = {"p2p", "collective", "remote-copy"};

    if (strcmp(mode, "malloc") == 0) {
        tu_sub = "warm-up";
        iterations(kind, paired, kind == 1 ? 10 : 20, 1);
        tu_sub = "counting malloc calls";
        unsigned long a0 = __atomic_load_n(&n_alloc, __ATOMIC_RELAXED);
        unsigned long f0 = __atomic_load_n(&n_free, __ATOMIC_RELAXED);
        iterations(kind, paired, kind == 1 ? 200 : 1000, 1);
        unsigned long a1 = __atomic_load_n(&n_alloc, __ATOMIC_RELAXED);
        unsigned long f1 = __atomic_load_n(&n_free, __ATOMIC_RELAXED);
        if (a1 != a0 || f1 != f0)
            TU_FAIL("the %s path called the allocator: %lu allocations and %lu frees during "
                    "the measured iterations (expected 0 and 0)", names[kind],
                    a1 - a0, f1 - f0);
        void *volatile probe = malloc(1); /* the counter is live */
        free(probe);
        CHECK(__atomic_load_n(&n_alloc, __ATOMIC_RELAXED) == a1 + 1,
              "the counting malloc is not in effect (interposition failed)");
    } else if (strcmp(mode, "syscalls") == 0) {
        tu_sub = "syscalls: warm-up";
        iterations(kind, paired, kind == 1 ? 20 : 50, 1);
        tu_sub = "syscalls: measured iterations";
        iterations(kind, paired, iters, 0);
        /* one checked iteration at the end: the loop really moved data */
        iterations(kind, paired, 1, 1);
    } else {
        TU_FAIL("usage: hotpath malloc|syscalls p2p|coll|rcopy [iterations]");
    }
    if (paired && !coll) {
        tu_sub = "final data check";
        CHECK_PATTERN_AT(sbig + 8, 8, BIG - 16, tu_seed(me, 0, BIG, 0), "send buffer body modified");
    }
    tu_sub = "finalize";
    return tu_finish();
}
