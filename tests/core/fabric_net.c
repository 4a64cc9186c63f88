/* The fabric's network backend, at the fabric layer (no protocols above):
 * run under fmplrun with FMPL_FABRIC=net, so every pair of ranks on this
 * host goes through libfabric.  Exits 77 (skipped) when the build has no
 * network backend or no provider serves.
 *
 * Sequence of remote operations, every rank r of n, right = (r + 1) % n:
 *   sizes    put a pattern of each size (1 B .. 4 MiB) into right's shared
 *            window and into its private (mmap) window, barrier, check both
 *            own windows byte for byte, get them back from right and check;
 *   notify   400 rounds: put a block of round-dependent bytes into right's
 *            window, notify right's flag with the round; right waits for the
 *            flag, checks the block, acknowledges with a notify back;
 *   atomics  every rank adds 1 to a word of rank 0 300 times by fetch-add and
 *            300 times by compare-and-swap; the word ends at exactly 600 n;
 *   threads  3 threads per rank share the endpoint: fetch-adds on a word of
 *            the right neighbour (exact total), puts and gets of their own
 *            4 KiB there;
 *   rcache   hits, LRU evictions at FMPL_NET_RCACHE_MAX, invalidation by
 *            free and by munmap (a block freed and allocated again at the
 *            same address gets a new key; a peer's put under the freed
 *            block's old key fails);
 *   errors   bad rank, unregistered private memory, outside the segment,
 *            NULL registration.
 * The barrier is fabric-level (control descriptors to every peer, waiting
 * while polling the backend): a rank blocked in the bootstrap would not
 * serve incoming operations with a manual-progress provider. */
#include <fmpl.h>

#include <pthread.h>
#include <sched.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "fabric/fabric.h"
#include "fabric/shm/shm_malloc.h"
#include "runtime/runtime.h"

static int rank, nranks;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "fabric_net rank %d line %d: %s: ", rank, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#define MAXSZ (4u << 20)
#define NFLAGS 64

/* Per rank: what peers need to reach it. */
typedef struct {
    fmpl_raddr shared, priv, flags, word;
} remote;

static remote *peers;
static unsigned char *shared_win, *priv_win;
static _Atomic uint64_t *flags; /* [0, n): barrier epochs from each rank; n: notify; n+1: ack */
static uint64_t *word;
static fmpl_ctl_desc *bar_desc;
static uint64_t epoch;

static fmpl_raddr flag_at(int peer, int slot)
{
    fmpl_raddr r = peers[peer].flags;
    r.addr += (uint64_t)slot * 8;
    return r;
}

static void wait_flag(int slot, uint64_t value)
{
    /* Poll; yield now and then (a provider with its own progress thread,
     * sockets, needs the core on a loaded machine).  Every 4096th empty
     * poll goes through the backend's idle wait, so it is exercised too. */
    for (unsigned empty = 0; atomic_load_explicit(&flags[slot], memory_order_acquire) < value;)
        if (!fmpl_fab_progress() && (++empty & 63) == 0) {
            if (empty & 4095)
                sched_yield();
            else
                fmpl_fab.net->idle();
        }
}

static void barrier(void)
{
    epoch++;
    for (int p = 0; p < nranks; p++)
        CHECK(fmpl_ctl_write(&bar_desc[p], epoch) == FMPL_SUCCESS, "barrier write to %d", p);
    for (int p = 0; p < nranks; p++)
        wait_flag(p, epoch);
}

static unsigned char pat(size_t i, int from, size_t size, unsigned round)
{
    return (unsigned char)(i * 131u + (unsigned)from * 17u + size * 7u + round * 29u + 1u);
}

static void publish(fmpl_bootstrap *bs)
{
    char v[256];
    fmpl_raddr mine[4];
    mine[0] = fmpl_fab_raddr(shared_win);
    CHECK(fmpl_fab_register(priv_win, MAXSZ, &mine[1]) == FMPL_SUCCESS, "register private");
    CHECK(mine[1].kind == FMPL_MEM_PRIVATE && mine[1].key != 0, "private key %llx",
          (unsigned long long)mine[1].key);
    mine[2] = fmpl_fab_raddr((void *)flags);
    mine[3] = fmpl_fab_raddr(word);
    int off = 0;
    for (int i = 0; i < 4; i++)
        off += snprintf(v + off, sizeof v - (size_t)off, "%llx.%x.%llx,",
                        (unsigned long long)mine[i].addr, mine[i].kind,
                        (unsigned long long)mine[i].key);
    CHECK(bs->put(bs, "fabnet", v) == FMPL_SUCCESS && bs->fence(bs) == FMPL_SUCCESS, "publish");
    for (int p = 0; p < nranks; p++) {
        CHECK(bs->get(bs, p, "fabnet", v, sizeof v) == FMPL_SUCCESS, "get %d", p);
        fmpl_raddr *r = &peers[p].shared;
        const char *s = v;
        for (int i = 0; i < 4; i++) {
            unsigned long long a, k;
            unsigned kind;
            int used;
            CHECK(sscanf(s, "%llx.%x.%llx,%n", &a, &kind, &k, &used) == 3, "parse %s", s);
            r[i] = (fmpl_raddr){.addr = a, .rank = p, .kind = kind, .key = k};
            s += used;
        }
    }
    for (int p = 0; p < nranks; p++)
        fmpl_ctl_prepare(&bar_desc[p], flag_at(p, rank));
}

static void test_sizes(void)
{
    static const size_t sizes[] = {1, 7, 8, 63, 64, 65, 4095, 4096, 65539, 1u << 20, MAXSZ};
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    unsigned char *src = malloc(MAXSZ), *back = malloc(MAXSZ);
    CHECK(src && back, "malloc");
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        size_t n = sizes[k];
        for (size_t i = 0; i < n; i++)
            src[i] = pat(i, rank, n, 0);
        CHECK(fmpl_fab_put(src, n, peers[right].shared) == FMPL_SUCCESS, "put shared %zu", n);
        CHECK(fmpl_fab_put(src, n, peers[right].priv) == FMPL_SUCCESS, "put private %zu", n);
        fmpl_fab_flush(right);
        barrier();
        for (size_t i = 0; i < n; i++) {
            CHECK(shared_win[i] == pat(i, left, n, 0), "shared size %zu byte %zu", n, i);
            CHECK(priv_win[i] == pat(i, left, n, 0), "private size %zu byte %zu", n, i);
        }
        memset(back, 0, n);
        CHECK(fmpl_fab_get(back, n, peers[right].shared) == FMPL_SUCCESS, "get shared %zu", n);
        CHECK(memcmp(back, src, n) == 0, "get shared %zu differs", n);
        memset(back, 0, n);
        CHECK(fmpl_fab_get(back, n, peers[right].priv) == FMPL_SUCCESS, "get private %zu", n);
        CHECK(memcmp(back, src, n) == 0, "get private %zu differs", n);
        barrier(); /* nobody overwrites a window its owner still checks */
    }
    free(src);
    free(back);
}

static void test_notify(void)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    static unsigned char block[65536];
    for (unsigned round = 1; round <= 400; round++) {
        size_t n = (size_t)8 << (round % 14); /* 8 B .. 64 KiB */
        for (size_t i = 0; i < n; i++)
            block[i] = pat(i, rank, n, round);
        fmpl_raddr dst = round & 1 ? peers[right].shared : peers[right].priv;
        CHECK(fmpl_fab_put(block, n, dst) == FMPL_SUCCESS, "round %u put", round);
        CHECK(fmpl_fab_notify(flag_at(right, nranks), round) == FMPL_SUCCESS, "notify");
        /* As the target: the flag first, then the data must be all there. */
        wait_flag(nranks, round);
        const unsigned char *got = round & 1 ? shared_win : priv_win;
        for (size_t i = 0; i < n; i++)
            CHECK(got[i] == pat(i, left, n, round), "round %u: flag seen, byte %zu of %zu stale",
                  round, i, n);
        CHECK(fmpl_fab_notify(flag_at(left, nranks + 1), round) == FMPL_SUCCESS, "ack");
        wait_flag(nranks + 1, round);
    }
}

/* A record and its 32-bit flag in one flagged put: one message up to the
 * receive buffers' size, put and notify beyond (net_msg.c); the target sees
 * the flag only with every other byte in place. */
static void test_flagged(void)
{
    int right = (rank + 1) % nranks, left = (rank + nranks - 1) % nranks;
    static unsigned char block[8192];
    for (unsigned round = 1; round <= 300; round++) {
        size_t n = 8 + (size_t)(round * 232u % 8000) / 8 * 8; /* 8 B .. 8000 B */
        for (size_t i = 0; i < n; i++)
            block[i] = pat(i, rank, n, round);
        memcpy(block, &round, sizeof round);
        CHECK(fmpl_fab_put_flagged(block, n, peers[right].shared) == FMPL_SUCCESS,
              "round %u: flagged put of %zu bytes", round, n);
        const _Atomic uint32_t *word = (const _Atomic uint32_t *)shared_win;
        while (atomic_load_explicit(word, memory_order_acquire) != round)
            if (!fmpl_fab_progress())
                sched_yield();
        for (size_t i = 4; i < n; i++)
            CHECK(shared_win[i] == pat(i, left, n, round),
                  "round %u: flag seen, byte %zu of %zu stale", round, i, n);
        barrier(); /* the target is done with the block before the next */
    }
    fmpl_raddr odd = peers[right].shared;
    odd.addr += 4;
    CHECK(fmpl_fab_put_flagged(block, 16, odd) == FMPL_ERR_ARG, "misaligned flagged put");
    CHECK(fmpl_fab_put_flagged(block, 4, peers[right].shared) == FMPL_ERR_ARG,
          "flagged put of 4 bytes");
}

static void test_atomics(void)
{
    fmpl_raddr w = peers[0].word;
    uint64_t last = 0;
    for (int i = 0; i < 300; i++) {
        uint64_t old = fmpl_fab_fetch_add(w, 1);
        CHECK(old != UINT64_MAX && (i == 0 || old > last), "fetch-add returned %llu after %llu",
              (unsigned long long)old, (unsigned long long)last);
        last = old;
        uint64_t seen = fmpl_fab_fetch_add(w, 0);
        for (;;) {
            uint64_t got = fmpl_fab_cswap(w, seen, seen + 1);
            if (got == seen)
                break;
            seen = got;
        }
    }
    barrier();
    uint64_t final = fmpl_fab_fetch_add(w, 0);
    CHECK(final == 600u * (uint64_t)nranks, "word is %llu, not %llu", (unsigned long long)final,
          600ull * (unsigned long long)nranks);
    barrier();
}

static void test_rcache(void)
{
    fmpl_fab_rcache_info s0, s;
    CHECK(fmpl_fab_rcache_stats(&s0) == FMPL_SUCCESS, "stats");
    /* Hits: the same bytes twice. */
    char *p = calloc(1, 1000);
    CHECK(p != NULL, "calloc");
    fmpl_raddr a, b;
    CHECK(fmpl_fab_register(p, 1000, &a) == FMPL_SUCCESS, "register");
    CHECK(fmpl_fab_register(p + 10, 100, &b) == FMPL_SUCCESS, "register inside");
    CHECK(a.key == b.key && b.addr == a.addr + 10, "a covered range reuses the registration");
    fmpl_fab_deregister(p, 1000);
    fmpl_fab_deregister(p + 10, 100);
    fmpl_fab_rcache_stats(&s);
    CHECK(s.hits >= s0.hits + 1 && s.misses >= s0.misses + 1, "hits %ld misses %ld", s.hits,
          s.misses);
    /* Evictions: more buffers than entries (FMPL_NET_RCACHE_MAX=8 here). */
    static char bufs[32][256];
    for (int i = 0; i < 32; i++) {
        fmpl_raddr r;
        CHECK(fmpl_fab_register(bufs[i], 256, &r) == FMPL_SUCCESS, "register %d", i);
        fmpl_fab_deregister(bufs[i], 256);
    }
    fmpl_fab_rcache_stats(&s);
    CHECK(s.entries <= s.cap, "entries %ld over cap %ld", s.entries, s.cap);
    if (s.cap <= 16)
        CHECK(s.evictions >= 32 - s.cap, "evictions %ld with cap %ld", s.evictions, s.cap);
    if (!s.hooked) {
        printf("fabric_net: rank %d: free/munmap are not watched in this build (sanitizer): "
               "invalidation not tested\n", rank);
        free(p);
        return;
    }
    /* Invalidation by free: the same address again gets a new key. */
    long inval = s.invalidations;
    CHECK(fmpl_fab_register(p, 1000, &a) == FMPL_SUCCESS, "register again");
    fmpl_fab_deregister(p, 1000);
    free(p);
    fmpl_fab_rcache_stats(&s);
    CHECK(s.invalidations == inval + 1, "free invalidated %ld", s.invalidations - inval);
    char *q = calloc(1, 1000);
    CHECK(q != NULL, "calloc");
    CHECK(fmpl_fab_register(q, 1000, &b) == FMPL_SUCCESS, "register new block");
    if (q == p)
        CHECK(a.key != b.key, "block at the same address kept its old key");
    fmpl_fab_deregister(q, 1000);
    free(q);
    /* Invalidation by munmap. */
    fmpl_fab_rcache_stats(&s);
    inval = s.invalidations;
    void *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(m != MAP_FAILED, "mmap");
    CHECK(fmpl_fab_register(m, 8192, &a) == FMPL_SUCCESS, "register mapping");
    fmpl_fab_deregister(m, 8192);
    munmap(m, 8192);
    fmpl_fab_rcache_stats(&s);
    CHECK(s.invalidations == inval + 1, "munmap invalidated %ld", s.invalidations - inval);
}

/* Threads share the endpoint: each reaps whatever completions it reads,
 * its own or another's.  Only where FABRIC_NET_THREADS is set (tcp;ofi_rxm):
 * over udp;ofi_rxd 1.17 this phase dies of SIGSEGV inside fi_cq_read, also
 * with every data-path call serialised by FMPL and also in one thread once
 * fetch-adds and 4 KiB put/get to one peer follow each other (without the
 * fetch-adds it passes); not analysed further, so not known to be the
 * provider's fault. */
#define NTHREADS 3
static void *thread_body(void *arg)
{
    long t = (long)arg;
    int right = (rank + 1) % nranks;
    fmpl_raddr w = peers[right].word;
    w.addr += 8;
    static unsigned char srcs[NTHREADS][4096], backs[NTHREADS][4096];
    unsigned char *src = srcs[t], *back = backs[t];
    for (int i = 0; i < 200; i++)
        CHECK(fmpl_fab_fetch_add(w, 1) != UINT64_MAX, "thread %ld fetch-add", t);
    /* Its own 4 KiB of right's window. */
    fmpl_raddr d = peers[right].shared;
    d.addr += (uint64_t)t * 4096;
    for (int i = 0; i < 50; i++) {
        for (int k = 0; k < 4096; k++)
            src[k] = (unsigned char)(k + i + t);
        CHECK(fmpl_fab_put(src, 4096, d) == FMPL_SUCCESS, "thread %ld put", t);
        CHECK(fmpl_fab_get(back, 4096, d) == FMPL_SUCCESS, "thread %ld get", t);
        CHECK(memcmp(src, back, 4096) == 0, "thread %ld: got back other bytes", t);
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[NTHREADS];
    for (long t = 0; t < NTHREADS; t++)
        CHECK(pthread_create(&th[t], NULL, thread_body, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);
    barrier();
    int right = (rank + 1) % nranks;
    fmpl_raddr w = peers[right].word;
    w.addr += 8;
    uint64_t final = fmpl_fab_fetch_add(w, 0);
    CHECK(final == 200u * NTHREADS, "rank %d's threads word is %llu", right,
          (unsigned long long)final);
    barrier();
}

/* A key dies with its memory: a peer's put under the key of a freed block
 * fails instead of writing into whatever lives there now.  The target
 * rejects it, and what follows is the provider's: tcp;ofi_rxm reports the
 * error and drops the connection, udp;ofi_rxd retransmits for good.  So
 * this runs last, only where FABRIC_NET_STALE_PUT is set (tcp;ofi_rxm),
 * and the ranks meet afterwards in the bootstrap, not over the fabric. */
static void test_stale_key(fmpl_bootstrap *bs)
{
    int right = (rank + 1) % nranks;
    char v[128];
    char *p = calloc(1, 1000); /* calloc: gcc -O0 warns of registering unwritten bytes */
    CHECK(p != NULL, "calloc");
    fmpl_raddr mine, theirs;
    CHECK(fmpl_fab_register(p, 1000, &mine) == FMPL_SUCCESS, "register");
    snprintf(v, sizeof v, "%llx.%llx", (unsigned long long)mine.addr,
             (unsigned long long)mine.key);
    CHECK(bs->put(bs, "stale", v) == FMPL_SUCCESS && bs->fence(bs) == FMPL_SUCCESS, "publish");
    unsigned long long a, k;
    CHECK(bs->get(bs, right, "stale", v, sizeof v) == FMPL_SUCCESS &&
              sscanf(v, "%llx.%llx", &a, &k) == 2,
          "stale address of %d", right);
    theirs = (fmpl_raddr){.addr = a, .rank = right, .kind = FMPL_MEM_PRIVATE, .key = k};
    uint64_t x = 7;
    CHECK(fmpl_fab_put(&x, 8, theirs) == FMPL_SUCCESS, "put under a live key");
    barrier();
    fmpl_fab_deregister(p, 1000);
    free(p); /* the registration goes with it */
    barrier();
    /* The stale put below may cost the pair its connection (tcp;ofi_rxm
     * drops it): every write of the barrier must have completed first. */
    CHECK(bs->barrier(bs) == FMPL_SUCCESS, "bootstrap barrier before the stale put");
    /* Where writes are ordered rather than delivery-complete the put may
     * return before the target has seen it: then the flush reports it. */
    CHECK(fmpl_fab_put(&x, 8, theirs) != FMPL_SUCCESS || fmpl_fab_flush(right) != FMPL_SUCCESS,
          "a put under a freed block's key worked");
    /* Our left neighbour's stale put is rejected by our progress (manual-
     * progress providers): keep polling a while before blocking. */
    for (double t = now(); now() - t < 2.0;)
        if (!fmpl_fab_progress())
            sched_yield();
    CHECK(bs->barrier(bs) == FMPL_SUCCESS, "bootstrap barrier");
}

static void test_errors(void)
{
    int right = (rank + 1) % nranks;
    uint64_t v = 1;
    fmpl_raddr r = peers[right].shared;
    r.rank = nranks;
    CHECK(fmpl_fab_put(&v, 8, r) == FMPL_ERR_ARG, "bad rank");
    r = peers[right].priv;
    r.key = 0;
    CHECK(fmpl_fab_put(&v, 8, r) == FMPL_ERR_ARG, "unregistered private memory");
    r = peers[right].shared;
    r.addr = (uint64_t)1 << 40;
    CHECK(fmpl_fab_put(&v, 8, r) == FMPL_ERR_ARG, "outside the segment");
    CHECK(fmpl_fab_get(&v, 8, r) == FMPL_ERR_ARG, "get outside the segment");
    fmpl_raddr x;
    CHECK(fmpl_fab_register(NULL, 0, &x) == FMPL_ERR_ARG, "NULL registration");
    fmpl_ctl_desc d;
    fmpl_ctl_prepare(&d, r);
    CHECK(fmpl_ctl_write(&d, 1) == FMPL_ERR_ARG, "descriptor outside the segment");
}

int main(void)
{
    fmpl_bootstrap *bs;
    if (fmpl_runtime_bootstrap(&bs) != FMPL_SUCCESS)
        return 1;
    rank = bs->rank;
    nranks = bs->size;
    int rc = fmpl_fabric_init(bs);
    if (rc != FMPL_SUCCESS || !fmpl_fab.net) {
        printf("fabric_net: SKIP: no network backend here (%s)\n",
               rc == FMPL_SUCCESS ? "FMPL_FABRIC=net not set" : fmpl_error_string(rc));
        return 77;
    }
    for (int p = 0; p < nranks; p++)
        CHECK(p == rank ? fmpl_fab.peers[p].base != NULL
                        : fmpl_fab.peers[p].base == NULL && fmpl_fab.peers[p].net,
              "peer %d is not a network peer", p);
    peers = calloc((size_t)nranks, sizeof *peers);
    bar_desc = calloc((size_t)nranks, sizeof *bar_desc);
    shared_win = fmpl_fab_alloc(MAXSZ);
    flags = fmpl_fab_alloc(NFLAGS * 8);
    word = fmpl_fab_alloc(64); /* [0]: atomics test, [1]: threads test */
    priv_win = mmap(NULL, MAXSZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(peers && bar_desc && shared_win && flags && word && priv_win != MAP_FAILED, "alloc");
    CHECK(!fmpl_fab_is_shared(priv_win), "private window is private");
    memset((void *)flags, 0, NFLAGS * 8);
    word[0] = word[1] = 0;
    publish(bs);

    double t0 = now();
    test_sizes();
    double t1 = now();
    test_notify();
    barrier();
    test_flagged();
    double t2 = now();
    test_atomics();
    if (getenv("FABRIC_NET_THREADS"))
        test_threads();
    double t3 = now();
    test_rcache();
    test_errors();
    barrier();
    if (rank == 0)
        printf("fabric_net: %s\nfabric_net: sizes %.2f s, notify %.2f s, atomics %.2f s, rest %.2f s\n",
               fmpl_fab.net->describe(), t1 - t0, t2 - t1, t3 - t2, now() - t3);
    if (fmpl_mem_hooks_active() && getenv("FABRIC_NET_STALE_PUT"))
        test_stale_key(bs);
    fmpl_fab_deregister(priv_win, MAXSZ);
    printf("fabric_net: rank %d of %d ok\n", rank, nranks);
    /* Out of band, as fmpl_finalize does: a rank that saw the last
     * barrier's flags may close while a peer's write to it (a flag sent in
     * pieces, FMPL_NET_FLAG_PIECES) is still on its way. */
    CHECK(bs->barrier(bs) == FMPL_SUCCESS, "bootstrap barrier before closing");
    fmpl_fabric_finalize();
    munmap(priv_win, MAXSZ);
    fmpl_bootstrap_finalize(&bs);
    return 0;
}
