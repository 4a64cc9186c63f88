/* barrier_split: split-phase barriers (fmpl_barrier_start / _test / _wait).
 *
 * Every rank publishes, in a page shared by the whole job (POSIX shm, not
 * FMPL), how many instances it has started on each communicator, storing
 * the count before each fmpl_barrier_start.  Whenever a rank sees one of
 * its flags at 1 it checks that every member's count has reached that
 * instance (flag k is never set before every member started instance k),
 * and scanning its flags from the newest down, that every older flag is 1
 * too (first-in first-out completion).
 *
 *  (a) rounds of K = 1, 2, 7, 33 and 64 instances started back to back
 *      with random delays per rank between starts (0-200 us, polling or
 *      not meanwhile), and in each round one rank stalling 10 ms without
 *      any FMPL call before one of its starts; flags in malloc memory, in
 *      the shared heap and on the stack.  After fmpl_barrier_wait on the
 *      last flag of a round every flag of it must be 1 already.
 *  (b) instances on FMPL_COMM_WORLD and on a sub-communicator (ranks of
 *      the same parity; a communicator of one at 2 and 3 ranks) started
 *      interleaved in random order: each communicator's instances complete
 *      on their own.
 *  (c) FMPL_BARRIER_SPLIT_MAX outstanding: rank 0 starts that many while
 *      the others are held in a receive, so none can complete; one more is
 *      FMPL_ERR_BUSY with its flag untouched; then everybody completes them.
 *  (d) errors: NULL and misaligned flags, communicators 42 and
 *      FMPL_COMM_NULL, NULL done, a flag holding 5 (test and wait), freeing
 *      a communicator with an instance outstanding (FMPL_ERR_BUSY, then it
 *      frees once complete).
 *  (e) NICAM's deferred reclamation: 200 regions, each freed only once the
 *      barrier whose flag is its first word has completed, checked
 *      opportunistically; the library writes that word and no other. */
#include "test_util.h"

#include <stdatomic.h>

enum { MAXR = 64 }; /* ranks the shared page has room for */

typedef struct shared_page {
    /* [0]: world, [1] and [2]: (b)'s two sub-communicators, [3]: (d)'s */
    _Atomic uint64_t started[4][MAXR];
} shared_page;

static shared_page *page;
static int me, n;
static uint64_t rng;

static void page_open(void)
{
    char name[64] = {0};
    int fd = -1;
    if (me == 0) {
        snprintf(name, sizeof name, "/fmpltest-bsplit-%d", (int)getpid());
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        CHECK(fd >= 0, "shm_open(%s): %s", name, strerror(errno));
        CHECK(ftruncate(fd, sizeof(shared_page)) == 0, "ftruncate: %s", strerror(errno));
    }
    CALL(fmpl_bcast(name, sizeof name, 0, FMPL_COMM_WORLD));
    if (me != 0) {
        fd = shm_open(name, O_RDWR, 0600);
        CHECK(fd >= 0, "shm_open(%s): %s", name, strerror(errno));
    }
    page = mmap(NULL, sizeof(shared_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(page != MAP_FAILED, "mmap: %s", strerror(errno));
    close(fd);
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    if (me == 0)
        shm_unlink(name);
}

static uint64_t load_flag(const uint64_t *f)
{
    return atomic_load_explicit((_Atomic uint64_t *)f, memory_order_acquire);
}

/* One communicator's instances as this rank sees them. */
typedef struct comm_state {
    fmpl_comm comm;
    int rank, size, which; /* which: row of the shared page */
    uint64_t started;      /* instances I started */
} comm_state;

static void mark_started(comm_state *c)
{
    c->started++;
    atomic_store_explicit(&page->started[c->which][c->rank], c->started, memory_order_seq_cst);
}

/* flags[k] belongs to instance first + k (numbered from 1), k < count.
 * From the newest down: the first 1 seen must have been started by every
 * member; every flag older than a 1 must be 1. */
static void observe(const comm_state *c, uint64_t *const *flags, int count, uint64_t first,
                    const char *what)
{
    int complete = 0;
    for (int k = count - 1; k >= 0; k--) {
        uint64_t v = load_flag(flags[k]);
        uint64_t inst = first + (uint64_t)k;
        CHECK(v <= 1, "%s: flag of instance %llu holds %llu", what, (unsigned long long)inst,
              (unsigned long long)v);
        if (complete) {
            CHECK(v == 1, "%s: instance %llu is complete but the older %llu is not (FIFO)",
                  what, (unsigned long long)(first + (uint64_t)complete - 1),
                  (unsigned long long)inst);
            continue;
        }
        if (v != 1)
            continue;
        complete = k + 1;
        for (int r = 0; r < c->size; r++) {
            uint64_t s = atomic_load_explicit(&page->started[c->which][r], memory_order_seq_cst);
            CHECK(s >= inst,
                  "%s: my flag of instance %llu is set, but rank %d of the communicator has "
                  "started only %llu instances",
                  what, (unsigned long long)inst, r, (unsigned long long)s);
        }
    }
}

/* Wait about `us` microseconds; with `poll`, test a random started flag
 * and observe meanwhile, else make no FMPL call at all. */
static void skew(double us, int poll, const comm_state *c, uint64_t *const *flags, int count,
                 uint64_t first, const char *what)
{
    double end = tu_now() + us * 1e-6;
    while (tu_now() < end) {
        if (poll && count > 0) {
            int done = -1;
            CALL(fmpl_barrier_test(flags[tu_rand(&rng) % (uint64_t)count], &done));
            CHECK(done == 0 || done == 1, "done = %d", done);
            observe(c, flags, count, first, what);
        }
        tu_sleep_ms(0.02);
    }
}

static comm_state world_state(void)
{
    comm_state c = {.comm = FMPL_COMM_WORLD, .rank = me, .size = n, .which = 0};
    return c;
}

/* ----------------------------------------------------------------- (a) */

static void rounds(comm_state *w)
{
    static const int ks[] = {1, 2, 7, 33, 64, 64, 64, 64};
    uint64_t stack_flags[64];
    uint64_t *heap_flags = malloc(64 * sizeof *heap_flags);
    uint64_t *shared_flags = fmpl_alloc(64 * sizeof *shared_flags);
    CHECK(heap_flags && shared_flags, "flag memory");
    for (int round = 0; round < (int)(sizeof ks / sizeof ks[0]); round++) {
        int K = ks[round];
        char what[96];
        snprintf(what, sizeof what, "(a) round %d: %d instances", round, K);
        tu_sub = what;
        uint64_t *mem = round % 3 == 0 ? heap_flags : round % 3 == 1 ? shared_flags : stack_flags;
        uint64_t *flags[64];
        for (int k = 0; k < K; k++)
            flags[k] = &mem[k];
        uint64_t first = w->started + 1;
        int staller = round % n, stall_at = (int)(tu_rand(&rng) % (uint64_t)K);
        for (int k = 0; k < K; k++) {
            if (me == staller && k == stall_at)
                skew(10000, 0, w, flags, k, first, what); /* outside FMPL */
            else if (tu_rand(&rng) % 3)
                skew((double)(tu_rand(&rng) % 200), (int)(tu_rand(&rng) % 2), w, flags, k,
                     first, what);
            *flags[k] = 0xdead;
            mark_started(w);
            CALL(fmpl_barrier_start(FMPL_COMM_WORLD, flags[k]));
            CHECK(load_flag(flags[k]) <= 1, "%s: start stored %llu, not 0 (or 1)", what,
                  (unsigned long long)load_flag(flags[k]));
            observe(w, flags, k + 1, first, what);
        }
        CALL(fmpl_barrier_wait(flags[K - 1]));
        for (int k = 0; k < K; k++)
            CHECK(load_flag(flags[k]) == 1, "%s: the last instance is complete, instance %d "
                  "of the round is not", what, k + 1);
        observe(w, flags, K, first, what);
    }
    free(heap_flags);
    fmpl_free(shared_flags);
}

/* ----------------------------------------------------------------- (b) */

static void interleaved(comm_state *w)
{
    tu_sub = "(b) world and a sub-communicator interleaved";
    enum { K = 40 };
    comm_state s = {.which = 1 + me % 2};
    CALL(fmpl_comm_create(me % 2, &s.comm));
    CALL(fmpl_comm_rank(s.comm, &s.rank));
    CALL(fmpl_comm_size(s.comm, &s.size));
    uint64_t wf[K], sf[K];
    uint64_t *wp[K], *sp[K];
    for (int k = 0; k < K; k++)
        wp[k] = &wf[k], sp[k] = &sf[k];
    uint64_t wfirst = w->started + 1, sfirst = s.started + 1;
    int wi = 0, si = 0;
    while (wi < K || si < K) {
        int on_world = si == K || (wi < K && tu_rand(&rng) % 2);
        if (on_world) {
            mark_started(w);
            CALL(fmpl_barrier_start(FMPL_COMM_WORLD, wp[wi++]));
        } else {
            mark_started(&s);
            CALL(fmpl_barrier_start(s.comm, sp[si++]));
        }
        skew((double)(tu_rand(&rng) % 100), 1, w, wp, wi, wfirst, "(b) world");
        observe(&s, sp, si, sfirst, "(b) sub-communicator");
    }
    CALL(fmpl_barrier_wait(sp[K - 1]));
    CALL(fmpl_barrier_wait(wp[K - 1]));
    observe(w, wp, K, wfirst, "(b) world, all started");
    observe(&s, sp, K, sfirst, "(b) sub-communicator, all started");
    for (int k = 0; k < K; k++)
        CHECK(wf[k] == 1 && sf[k] == 1, "instance %d: world %llu, sub %llu", k + 1,
              (unsigned long long)wf[k], (unsigned long long)sf[k]);
    CALL(fmpl_comm_free(&s.comm));
}

/* ----------------------------------------------------------------- (c) */

/* Everybody but rank 0 waits for rank 0's word (index `index`). */
static void hold_others(int index)
{
    char dummy = 0;
    if (me != 0)
        CALL(fmpl_recv(&dummy, 0, 0, index, FMPL_COMM_WORLD, NULL));
}

static void release_others(int index)
{
    char dummy = 0;
    if (me == 0)
        for (int r = 1; r < n; r++)
            CALL(fmpl_send(&dummy, 0, r, index, FMPL_COMM_WORLD));
}

static void too_many(comm_state *w)
{
    tu_sub = "(c) FMPL_BARRIER_SPLIT_MAX outstanding";
    enum { M = FMPL_BARRIER_SPLIT_MAX };
    uint64_t *f = malloc(M * sizeof *f);
    uint64_t *fp[M];
    CHECK(f, "malloc");
    for (int k = 0; k < M; k++)
        fp[k] = &f[k];
    uint64_t first = w->started + 1;
    if (me == 0) {
        for (int k = 0; k < M; k++) {
            mark_started(w);
            CALL(fmpl_barrier_start(FMPL_COMM_WORLD, fp[k]));
        }
        uint64_t extra = 7;
        CHECK_RC(fmpl_barrier_start(FMPL_COMM_WORLD, &extra), FMPL_ERR_BUSY,
                 "instance %d with %d outstanding", M + 1, M);
        CHECK_EQ(extra, 7, "the refused instance's flag");
        int done = -1;
        CALL(fmpl_barrier_test(fp[0], &done));
        CHECK_EQ(done, 0, "the others have started nothing");
        observe(w, fp, M, first, "(c) rank 0 alone");
        release_others(1);
    } else {
        hold_others(1);
        for (int k = 0; k < M; k++) {
            mark_started(w);
            CALL(fmpl_barrier_start(FMPL_COMM_WORLD, fp[k]));
        }
    }
    CALL(fmpl_barrier_wait(fp[M - 1]));
    observe(w, fp, M, first, "(c) all started");
    for (int k = 0; k < M; k++)
        CHECK_EQ(f[k], 1, "instance %d", k + 1);
    free(f);
}

/* ----------------------------------------------------------------- (d) */

static void errors(comm_state *w)
{
    tu_sub = "(d) errors";
    uint64_t words[2] = {0, 0};
    int done = 0;
    CHECK_RC(fmpl_barrier_start(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG, "NULL flag");
    CHECK_RC(fmpl_barrier_start(FMPL_COMM_WORLD, (uint64_t *)((char *)words + 4)),
             FMPL_ERR_ARG, "misaligned flag");
    CHECK_RC(fmpl_barrier_start(42, &words[0]), FMPL_ERR_COMM, "communicator 42");
    CHECK_RC(fmpl_barrier_start(FMPL_COMM_NULL, &words[0]), FMPL_ERR_COMM, "FMPL_COMM_NULL");
    CHECK_RC(fmpl_barrier_test(NULL, &done), FMPL_ERR_ARG, "test, NULL flag");
    CHECK_RC(fmpl_barrier_test(&words[0], NULL), FMPL_ERR_ARG, "test, NULL done");
    CHECK_RC(fmpl_barrier_wait(NULL), FMPL_ERR_ARG, "wait, NULL flag");
    words[1] = 5;
    CHECK_RC(fmpl_barrier_test(&words[1], &done), FMPL_ERR_ARG, "test, flag holding 5");
    CHECK_RC(fmpl_barrier_wait(&words[1]), FMPL_ERR_ARG, "wait, flag holding 5");
    CHECK_EQ(words[0], 0, "no instance was started by the refused calls");

    /* Freeing a communicator with an instance outstanding. */
    comm_state s = {.which = 3};
    CALL(fmpl_comm_create(0, &s.comm));
    CALL(fmpl_comm_rank(s.comm, &s.rank));
    CALL(fmpl_comm_size(s.comm, &s.size));
    uint64_t f = 9, *fp = &f;
    if (me == 0) {
        mark_started(&s);
        CALL(fmpl_barrier_start(s.comm, &f));
        fmpl_comm c = s.comm;
        CHECK_RC(fmpl_comm_free(&c), FMPL_ERR_BUSY, "free with an instance outstanding");
        CHECK_EQ(c, s.comm, "the refused free left the handle");
        release_others(2);
    } else {
        hold_others(2);
        mark_started(&s);
        CALL(fmpl_barrier_start(s.comm, &f));
    }
    CALL(fmpl_barrier_wait(&f));
    observe(&s, &fp, 1, 1, "(d) before the free");
    CALL(fmpl_comm_free(&s.comm));
    CHECK_EQ(s.comm, FMPL_COMM_NULL, "freed");
    (void)w;
}

/* ----------------------------------------------------------------- (e) */

static void reclamation(comm_state *w)
{
    tu_sub = "(e) deferred reclamation";
    enum { R = 200, BYTES = 256 };
    unsigned char *region[R];
    int kind[R];
    int oldest = 0, freed = 0;
    for (int i = 0; i < R; i++) {
        kind[i] = i % 2;
        region[i] = kind[i] ? fmpl_alloc(BYTES) : malloc(BYTES);
        CHECK(region[i], "region %d", i);
        tu_fill_at(region[i], 0, BYTES, tu_seed(me, i, BYTES, 0xe));
        mark_started(w);
        CALL(fmpl_barrier_start(FMPL_COMM_WORLD, (uint64_t *)region[i]));
        /* Free what has completed, oldest first. */
        for (int done = 1; oldest <= i && done;) {
            CALL(fmpl_barrier_test((uint64_t *)region[oldest], &done));
            if (!done)
                break;
            CHECK_PATTERN_AT(region[oldest] + 8, 8, BYTES - 8,
                             tu_seed(me, oldest, BYTES, 0xe), "region %d past its flag", oldest);
            if (kind[oldest])
                fmpl_free(region[oldest]);
            else
                free(region[oldest]);
            oldest++, freed++;
        }
        if (tu_rand(&rng) % 4 == 0)
            tu_sleep_ms((double)(tu_rand(&rng) % 100) / 1000);
    }
    CALL(fmpl_barrier_wait((uint64_t *)region[R - 1]));
    for (; oldest < R; oldest++, freed++) {
        CHECK_EQ(load_flag((uint64_t *)region[oldest]), 1, "region %d's flag", oldest);
        CHECK_PATTERN_AT(region[oldest] + 8, 8, BYTES - 8, tu_seed(me, oldest, BYTES, 0xe),
                         "region %d past its flag", oldest);
        if (kind[oldest])
            fmpl_free(region[oldest]);
        else
            free(region[oldest]);
    }
    CHECK_EQ(freed, R, "regions freed");
}

int main(void)
{
    tu_init("barrier_split", 0);
    me = tu_rank;
    n = tu_size;
    CHECK(n <= MAXR, "at most %d ranks", MAXR);
    rng = tu_seed(me, 0, 0, 0xb5);
    page_open();
    comm_state w = world_state();
    rounds(&w);
    interleaved(&w);
    too_many(&w);
    errors(&w);
    reclamation(&w);
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    munmap(page, sizeof(shared_page));
    return tu_finish();
}
