/* hotpath: the message path allocates nothing and makes no system call (R3).
 *
 *   hotpath malloc p2p      after fmpl_init and a warm-up, 1000 ping-pongs of
 *                           8 B and of 64 KiB with send/recv, 1000 exchanges
 *                           with irecv/isend/waits, 300 with test polling,
 *                           between fmpl_alloc buffers: the malloc family
 *                           (interposed below) must not be called at all.
 *   hotpath malloc coll     the same for barrier, bcast, reduce, allreduce
 *                           (R20: reductions use the caller's workspace).
 *   hotpath syscalls p2p N  N iterations of a zero-copy ping-pong and
 *   hotpath syscalls coll N exchange (or of the collectives) and nothing
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

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "malloc";
    const char *what = argc > 2 ? argv[2] : "p2p";
    long iters = argc > 3 ? atol(argv[3]) : 1000;
    int coll = strcmp(what, "coll") == 0;
    if (strcmp(mode, "malloc") == 0 && !HAVE_COUNTING_MALLOC) {
        printf("hotpath malloc: SKIPPED (AddressSanitizer owns malloc; cannot interpose)\n");
        return SKIP;
    }
    tu_init(coll ? "hotpath(coll)" : "hotpath(p2p)", COUNT);
    me = tu_rank;
    n = tu_size;
    peer = me ^ 1;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    alloc_buffers();
    int paired = peer < n;

    if (strcmp(mode, "malloc") == 0) {
        tu_sub = "warm-up";
        if (coll)
            coll_iterations(10, 1);
        else if (paired)
            p2p_iterations(20, 1);
        tu_sub = coll ? "collectives, counting malloc calls" : "p2p, counting malloc calls";
        unsigned long a0 = __atomic_load_n(&n_alloc, __ATOMIC_RELAXED);
        unsigned long f0 = __atomic_load_n(&n_free, __ATOMIC_RELAXED);
        if (coll)
            coll_iterations(200, 1);
        else if (paired)
            p2p_iterations(1000, 1);
        unsigned long a1 = __atomic_load_n(&n_alloc, __ATOMIC_RELAXED);
        unsigned long f1 = __atomic_load_n(&n_free, __ATOMIC_RELAXED);
        if (a1 != a0 || f1 != f0)
            TU_FAIL("the %s path called the allocator: %lu allocations and %lu frees during "
                    "the measured iterations (expected 0 and 0)", coll ? "collective" : "p2p",
                    a1 - a0, f1 - f0);
        void *volatile probe = malloc(1); /* the counter is live */
        free(probe);
        CHECK(__atomic_load_n(&n_alloc, __ATOMIC_RELAXED) == a1 + 1,
              "the counting malloc is not in effect (interposition failed)");
    } else if (strcmp(mode, "syscalls") == 0) {
        tu_sub = "syscalls: warm-up";
        if (coll)
            coll_iterations(20, 1);
        else if (paired)
            p2p_iterations(50, 1);
        tu_sub = "syscalls: measured iterations";
        if (coll)
            coll_iterations(iters, 0);
        else if (paired)
            p2p_iterations(iters, 0);
        /* one checked iteration at the end: the loop really moved data */
        if (coll)
            coll_iterations(1, 1);
        else if (paired)
            p2p_iterations(1, 1);
    } else {
        TU_FAIL("usage: hotpath malloc|syscalls p2p|coll [iterations]");
    }
    if (paired && !coll) {
        tu_sub = "final data check";
        CHECK_PATTERN_AT(sbig + 8, 8, BIG - 16, tu_seed(me, 0, BIG, 0), "send buffer body modified");
    }
    tu_sub = "finalize";
    return tu_finish();
}
