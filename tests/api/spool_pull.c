/* spool_pull: a spooled message reaches a receiver on the same host while
 * its sender computes outside FMPL (the receiver copies it out of the
 * sender's spool: sender_match.c, "Spool: whoever arrives copies").
 * Run with FMPL_AGENT=off: no thread may progress for the sender.
 *
 *  a  Pairs (r, r^1), each direction.  The sender spools a message (timeout
 *     0, a spool from fmpl_alloc, the receive not posted yet), raises an
 *     out-of-band flag and then computes, making no FMPL call, until the
 *     receiver raises the next flag after receiving; it gives up after
 *     TU_POLL_LIMIT_S.  Sizes 0, 8 (inline), 3000, 200000 B; receive buffers
 *     shared, heap, stack; fmpl_recv and irecv + irecv_test; a receive
 *     buffer smaller than the message (FMPL_ERR_TRUNCATE, status.size = the
 *     capacity, nothing past it written).  Afterwards the sender's first
 *     fmpl_sendbuf_check gives nsend 1, nspool 0.
 *  b  FMPL_TAG_ANY receives are still delivered by the sender: a spooled
 *     message goes to a posted ANY receive inside the sender's
 *     fmpl_sendbuf_check; then an ANY receive and a receive on the index
 *     both posted, two spooled messages on that index: each receive gets
 *     one of them, whole, once.
 *  c  Stress, every ordered pair of ranks: STRESS_MSGS messages of random
 *     sizes per pair on STRESS_IDX indices, a 24 KiB spool (so the ring
 *     wraps many times, and sends meet FMPL_ERR_BUSY and _SPOOL_FULL, which
 *     they retry later), up to STRESS_IDX receives posted per peer, random
 *     compute without FMPL calls on both sides.  Every message's size,
 *     status and bytes; the guard zones; the spool empties.  Then every
 *     rank spools one message to every peer, receives its own, notes
 *     nspool and makes no FMPL call until every rank has received: one
 *     fmpl_sendbuf_check must then give exactly that nsend and nspool 0
 *     (the receivers copied those messages without their sender).
 */
#include "test_util.h"

#define COUNT 64
#define SYNC (COUNT - 1)
#define OOB_IDX (COUNT - 2)
#define NAME_IDX (COUNT - 3)
#define IDX_A 5
#define IDX_B 6
#define IDX_STRESS 10
#define IDX_FINAL 20
#define STRESS_IDX 4
#define STRESS_MAXSZ 6000
#define STRESS_SPOOL (24 * 1024)
#define MAXR 64

static int me, n;
static tu_oob *oob;
static volatile double sink; /* keeps the compute loops */

/* Compute, making no FMPL call, until `flag` holds v; fail after the limit. */
static void compute_until(int *flag, int v, const char *what)
{
    double t0 = tu_now(), x = 1.0;
    long turns = 0;
    while (__atomic_load_n(flag, __ATOMIC_SEQ_CST) != v) {
        for (int k = 0; k < 2000; k++)
            x = x * 1.0000001 + 1e-9;
        sink = x;
        if (++turns % 64 == 0) {
            sched_yield(); /* 4 ranks on 2 cores: let the receiver run */
            if (tu_now() - t0 > TU_POLL_LIMIT_S)
                TU_FAIL("%s: not done after %.0f s while the sender computed without FMPL "
                        "calls (flag %d, waiting for %d): a spooled message must reach a "
                        "receiver on this host without its sender's progress",
                        what, TU_POLL_LIMIT_S, __atomic_load_n(flag, __ATOMIC_SEQ_CST), v);
        }
    }
}

/* Compute for about `us` microseconds, no FMPL call. */
static void compute_us(double us)
{
    double t0 = tu_now(), x = 1.0;
    while ((tu_now() - t0) * 1e6 < us) {
        for (int k = 0; k < 200; k++)
            x = x * 1.0000001 + 1e-9;
        sink = x;
    }
}

/* ------------------------------------------------------------------ a */

static void one_pull(int peer, int snd, long sz, long cap, int kind, int use_test, int *step)
{
    static char what[200]; /* tu_sub keeps pointing at it */
    snprintf(what, sizeof what,
             "a: %ld B spooled, sender computing; receiver %s %ld B %s buffer", sz,
             use_test ? "irecv + irecv_test into" : "fmpl_recv into", cap,
             tu_kind_names[kind]);
    tu_sub = what;
    int first = *step + 1, second = *step + 2;
    *step += 2;
    uint64_t seed = tu_seed(snd ? me : peer, IDX_A, sz, first);
    if (snd) {
        tu_buf m;
        tu_buf_get(&m, TU_HEAP, sz, NULL);
        tu_fill(m.p, sz, seed);
        CALL(fmpl_send(m.p, sz, peer, IDX_A, FMPL_COMM_WORLD));
        tu_fill(m.p, sz, 0xc10bbe5ull); /* the spool holds the message */
        tu_check_spool_counts(0, 1, "spooled: the receive is not posted yet");
        tu_oob_set(oob, 0, first);
        compute_until(&oob->stage[0], second, what);
        tu_check_spool_counts(1, 0, "the receiver copied the message while this rank computed");
        tu_buf_put(&m);
    } else {
        unsigned char stk[TU_STACK_BYTES];
        tu_buf r;
        tu_buf_get(&r, kind, cap, kind == TU_STACK ? stk : NULL);
        tu_buf_arm(&r);
        tu_oob_wait(oob, 0, first, "the sender spools its message");
        int expect = sz > cap ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
        long got = sz > cap ? cap : sz;
        fmpl_status st;
        if (!use_test) {
            CHECK_RC(fmpl_recv(r.p, cap, peer, IDX_A, FMPL_COMM_WORLD, &st), expect,
                     "%s", what);
        } else {
            CALL(fmpl_irecv(r.p, cap, peer, IDX_A, FMPL_COMM_WORLD));
            int f = 0, rc = FMPL_SUCCESS;
            double t0 = tu_now();
            while (!f) {
                rc = fmpl_irecv_test(peer, IDX_A, FMPL_COMM_WORLD, &f, &st);
                if (!f && tu_now() - t0 > TU_POLL_LIMIT_S)
                    TU_FAIL("%s: irecv_test never completed", what);
            }
            CHECK_EQ(rc, expect, "%s: irecv_test's result", what);
        }
        CHECK_STATUS(st, peer, IDX_A, got, expect, "%s", what);
        CHECK_PATTERN(r.p, got, seed, "%s", what);
        CHECK_BUF_UNTOUCHED_FROM(&r, got, "%s", what);
        tu_oob_set(oob, 0, second);
        tu_buf_put(&r);
    }
}

static void sub_pull(int peer, int snd)
{
    void *spool = NULL;
    if (snd) {
        spool = fmpl_alloc(1 << 20); /* the shared heap: the receiver reaches it */
        CHECK(spool, "fmpl_alloc(1 MiB) for the spool");
        CALL(fmpl_sendbuf_set(spool, 1 << 20, 0));
    }
    int step = 0;
    static const long szs[] = {0, 8, 3000, 200000};
    for (int k = 0; k < 4; k++) {
        long sz = szs[k];
        one_pull(peer, snd, sz, sz, TU_SHARED, 0, &step);
        one_pull(peer, snd, sz, sz + 100, TU_HEAP, k % 2, &step);
        if (sz <= 64 * 1024)
            one_pull(peer, snd, sz, sz, TU_STACK, !(k % 2), &step);
    }
    one_pull(peer, snd, 3000, 1000, TU_HEAP, 0, &step);   /* truncated */
    one_pull(peer, snd, 200000, 50000, TU_SHARED, 1, &step);
    one_pull(peer, snd, 20, 7, TU_STACK, 0, &step);
    if (snd) {
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        fmpl_free(spool);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ b */

static void sub_any(int peer, int snd)
{
    tu_sub = "b: a spooled message to a FMPL_TAG_ANY receive, delivered by the sender";
    const long sz = 5000;
    if (snd) {
        void *spool = fmpl_alloc(65536);
        CHECK(spool, "fmpl_alloc for the spool");
        CALL(fmpl_sendbuf_set(spool, 65536, 0));
        tu_buf m;
        tu_buf_get(&m, TU_HEAP, sz, NULL);
        tu_fill(m.p, sz, tu_seed(me, IDX_B, sz, 1));
        CALL(fmpl_send(m.p, sz, peer, IDX_B, FMPL_COMM_WORLD));
        tu_check_spool_counts(0, 1, "spooled, nothing posted");
        tu_oob_set(oob, 1, 1);
        tu_oob_wait(oob, 1, 2, "receiver posts a FMPL_TAG_ANY receive");
        tu_check_spool_counts(1, 0, "the ANY receive is posted: sent by this call");

        tu_sub = "b: an ANY receive and one on the index, two spooled messages";
        tu_fill(m.p, sz, tu_seed(me, IDX_B, sz, 2));
        CALL(fmpl_send(m.p, sz, peer, IDX_B, FMPL_COMM_WORLD));
        tu_check_spool_counts(0, 1, "second message spooled");
        tu_oob_set(oob, 1, 3);
        tu_oob_wait(oob, 1, 4, "receiver posts both receives");
        /* The index stays busy until the first message is delivered. */
        int rc;
        double t0 = tu_now();
        tu_fill(m.p, sz, tu_seed(me, IDX_B, sz, 3));
        while ((rc = fmpl_send(m.p, sz, peer, IDX_B, FMPL_COMM_WORLD)) == FMPL_ERR_BUSY) {
            CALL(fmpl_sendbuf_check(NULL, NULL));
            if (tu_now() - t0 > TU_POLL_LIMIT_S)
                TU_FAIL("index %d still busy after %.0f s", IDX_B, TU_POLL_LIMIT_S);
        }
        CHECK_EQ(rc, FMPL_SUCCESS, "third send on index %d", IDX_B);
        int np = 1;
        t0 = tu_now();
        while (np) {
            CALL(fmpl_sendbuf_check(NULL, &np));
            if (tu_now() - t0 > TU_POLL_LIMIT_S)
                TU_FAIL("spool still holds %d messages", np);
        }
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        tu_buf_put(&m);
        fmpl_free(spool);
    } else {
        tu_buf r, r2;
        tu_buf_get(&r, TU_HEAP, sz, NULL);
        tu_buf_get(&r2, TU_SHARED, sz, NULL);
        tu_buf_arm(&r);
        tu_oob_wait(oob, 1, 1, "sender spools a message");
        CALL(fmpl_irecv(r.p, sz, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD));
        tu_oob_set(oob, 1, 2);
        fmpl_status st;
        CALL(fmpl_irecv_wait(peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, IDX_B, sz, FMPL_SUCCESS, "spooled message to an ANY receive");
        CHECK_PATTERN(r.p, sz, tu_seed(peer, IDX_B, sz, 1), "spooled message to ANY");
        CHECK_BUF_UNTOUCHED_FROM(&r, sz, "spooled message to ANY");

        tu_sub = "b: an ANY receive and one on the index, two spooled messages";
        tu_buf_arm(&r);
        tu_buf_arm(&r2);
        tu_oob_wait(oob, 1, 3, "sender spools the second message");
        CALL(fmpl_irecv(r.p, sz, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD));
        CALL(fmpl_irecv(r2.p, sz, peer, IDX_B, FMPL_COMM_WORLD));
        tu_oob_set(oob, 1, 4);
        fmpl_status sa, sb;
        CALL(fmpl_irecv_wait(peer, IDX_B, FMPL_COMM_WORLD, &sb));
        CALL(fmpl_irecv_wait(peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &sa));
        CHECK_STATUS(sa, peer, IDX_B, sz, FMPL_SUCCESS, "ANY receive");
        CHECK_STATUS(sb, peer, IDX_B, sz, FMPL_SUCCESS, "receive on the index");
        int any_got2 = tu_find_mismatch_at(r.p, 0, sz, tu_seed(peer, IDX_B, sz, 2)) < 0;
        uint64_t other = tu_seed(peer, IDX_B, sz, any_got2 ? 3 : 2);
        if (!any_got2)
            CHECK_PATTERN(r.p, sz, tu_seed(peer, IDX_B, sz, 3),
                          "ANY receive: neither the second nor the third message");
        CHECK_PATTERN(r2.p, sz, other,
                      "receive on the index: must hold the message the ANY receive did not "
                      "take (%s)", any_got2 ? "the third" : "the second");
        CHECK_BUF_UNTOUCHED_FROM(&r, sz, "ANY receive");
        CHECK_BUF_UNTOUCHED_FROM(&r2, sz, "receive on the index");
        tu_buf_put(&r);
        tu_buf_put(&r2);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ c */

typedef struct job_page {
    int drained[MAXR], sent[MAXR], done[MAXR];
} job_page;

/* A page every rank maps, made by the test (POSIX shm); its name goes from
 * rank 0 to the others by point-to-point messages. */
static job_page *job_open(void)
{
    char name[64] = {0};
    int fd = -1;
    if (me == 0) {
        snprintf(name, sizeof name, "/fmpltest-pull-%d", (int)getpid());
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        CHECK(fd >= 0, "shm_open(%s): %s", name, strerror(errno));
        CHECK(ftruncate(fd, sizeof(job_page)) == 0, "ftruncate: %s", strerror(errno));
        for (int r = 1; r < n; r++)
            CALL(fmpl_send(name, sizeof name, r, NAME_IDX, FMPL_COMM_WORLD));
    } else {
        CALL(fmpl_recv(name, sizeof name, 0, NAME_IDX, FMPL_COMM_WORLD, NULL));
        fd = shm_open(name, O_RDWR, 0600);
        CHECK(fd >= 0, "shm_open(%s): %s", name, strerror(errno));
    }
    job_page *p = mmap(NULL, sizeof(job_page), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(p != MAP_FAILED, "mmap: %s", strerror(errno));
    close(fd);
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    if (me == 0)
        shm_unlink(name);
    return p;
}

static long stress_size(int src, int dst, int k)
{
    uint64_t h = tu_mix64(((uint64_t)src << 40) ^ ((uint64_t)dst << 20) ^ (uint64_t)k ^ 0x5eedull);
    switch (h % 8) {
    case 0: return 0;
    case 1: return (long)(h >> 8) % 41; /* inline sizes */
    default: return (long)(h >> 8) % (STRESS_MAXSZ + 1);
    }
}

typedef struct peer_state {
    int sent, done, posted; /* messages sent; received; receives posted */
    tu_buf rb[STRESS_IDX];
    long cap[STRESS_IDX];
} peer_state;

static void sub_stress(int nmsg)
{
    tu_sub = "c: stress, every ordered pair, random sizes, small spool";
    CHECK(n <= MAXR, "at most %d ranks", MAXR);
    job_page *job = job_open();
    void *spool = fmpl_alloc(STRESS_SPOOL);
    CHECK(spool, "fmpl_alloc for the spool");
    CALL(fmpl_sendbuf_set(spool, STRESS_SPOOL, 0));
    peer_state *ps = calloc((size_t)n, sizeof *ps);
    CHECK(ps, "calloc");
    unsigned char *msg = malloc(STRESS_MAXSZ + 64);
    CHECK(msg, "malloc");
    for (int p = 0; p < n; p++)
        for (int i = 0; i < STRESS_IDX; i++)
            tu_buf_get(&ps[p].rb[i], (p + i) % 2 ? TU_SHARED : TU_HEAP, STRESS_MAXSZ + 64,
                       NULL);
    uint64_t rng = tu_mix64(0xabcdefull + (uint64_t)me);
    long busy = 0, full = 0;
    int left_send = (n - 1) * nmsg, left_recv = (n - 1) * nmsg;
    double t0 = tu_now();
    while (left_send || left_recv) {
        if (tu_now() - t0 > TU_POLL_LIMIT_S) {
            char st[512];
            int at = 0;
            for (int q = 0; q < n && at < (int)sizeof st - 64; q++)
                at += snprintf(st + at, sizeof st - (size_t)at, " [%d: sent %d received %d]",
                               q, ps[q].sent, ps[q].done);
            TU_FAIL("stress not done after %.0f s: %d sends and %d receives left;%s",
                    TU_POLL_LIMIT_S, left_send, left_recv, st);
        }
        int p = (int)(tu_rand(&rng) % (uint64_t)n);
        if (p == me)
            continue;
        peer_state *s = &ps[p];
        uint64_t act = tu_rand(&rng) % 16;
        if (act < 6 && s->sent < nmsg) {
            int k = s->sent, idx = IDX_STRESS + k % STRESS_IDX;
            long sz = stress_size(me, p, k);
            tu_fill(msg, sz, tu_seed(me, idx, sz, k));
            int rc = fmpl_send(msg, sz, p, idx, FMPL_COMM_WORLD);
            if (rc == FMPL_ERR_BUSY || rc == FMPL_ERR_SPOOL_FULL) {
                busy += rc == FMPL_ERR_BUSY;
                full += rc == FMPL_ERR_SPOOL_FULL;
                /* Nothing sent: again later.  Progress meanwhile, as the
                 * spool's contract asks (BLACS does the same). */
                CALL(fmpl_sendbuf_check(NULL, NULL));
                continue;
            }
            CHECK_EQ(rc, FMPL_SUCCESS, "send %d to %d (%ld B, index %d)", k, p, sz, idx);
            memset(msg, 0xee, (size_t)sz + 1); /* the spool keeps its own copy */
            s->sent++;
            left_send--;
            if (tu_rand(&rng) % 4 == 0)
                compute_us((double)(tu_rand(&rng) % 300)); /* right after a (spooled) send */
        } else if (act < 12 && s->done < nmsg) {
            while (s->posted < nmsg && s->posted < s->done + STRESS_IDX) {
                int k = s->posted, i = k % STRESS_IDX;
                s->cap[i] = stress_size(p, me, k) + (long)(tu_rand(&rng) % 64);
                tu_buf_arm(&s->rb[i]);
                CALL(fmpl_irecv(s->rb[i].p, s->cap[i], p, IDX_STRESS + i, FMPL_COMM_WORLD));
                s->posted++;
            }
            int k = s->done, i = k % STRESS_IDX, f = 0;
            fmpl_status st;
            CALL(fmpl_irecv_test(p, IDX_STRESS + i, FMPL_COMM_WORLD, &f, &st));
            if (f) {
                long sz = stress_size(p, me, k);
                CHECK_STATUS(st, p, IDX_STRESS + i, sz, FMPL_SUCCESS,
                             "stress message %d from %d", k, p);
                CHECK_PATTERN(s->rb[i].p, sz, tu_seed(p, IDX_STRESS + i, sz, k),
                              "stress message %d from %d (%ld B, index %d)", k, p, sz,
                              IDX_STRESS + i);
                CHECK_BUF_UNTOUCHED_FROM(&s->rb[i], sz, "stress message %d from %d", k, p);
                s->done++;
                left_recv--;
            }
        } else {
            compute_us((double)(tu_rand(&rng) % 200));
        }
    }
    int np = 1;
    while (np) {
        CALL(fmpl_sendbuf_check(NULL, &np));
        if (tu_now() - t0 > 3 * TU_POLL_LIMIT_S)
            TU_FAIL("the spool still holds %d messages after the stress", np);
    }
    if (me == 0)
        printf("spool_pull stress: %d messages per pair, %ld busy and %ld spool-full retries "
               "on rank 0\n", nmsg, busy, full);
    /* Meet through the page: a point-to-point sync would leave its own
     * messages in the spool.  Nothing of this rank needs its progress now. */
    __atomic_store_n(&job->drained[me], 1, __ATOMIC_SEQ_CST);
    for (int r = 0; r < n; r++)
        compute_until(&job->drained[r], 1, "c: every rank's spool empties after the stress");

    /* The counts: one spooled message to every peer (nobody has posted on
     * IDX_FINAL before every rank has sent), receives into shared buffers
     * (a message its sender takes back goes at once, nothing streams), then
     * note nspool and make no FMPL call until every rank has received:
     * those messages the receivers copied themselves. */
    tu_sub = "c: counts after one spooled message to every peer";
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        long sz = stress_size(me, p, -1) + 100;
        tu_fill(msg, sz, tu_seed(me, IDX_FINAL, sz, 0));
        CALL(fmpl_send(msg, sz, p, IDX_FINAL, FMPL_COMM_WORLD));
    }
    tu_check_spool_counts(0, n - 1, "no receive on the index is posted yet");
    __atomic_store_n(&job->sent[me], 1, __ATOMIC_SEQ_CST);
    for (int r = 0; r < n; r++)
        compute_until(&job->sent[r], 1, "c: every rank spools its final messages");
    tu_buf fb;
    tu_buf_get(&fb, TU_SHARED, STRESS_MAXSZ + 200, NULL);
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        long sz = stress_size(p, me, -1) + 100;
        fmpl_status st;
        tu_buf_arm(&fb);
        CALL(fmpl_recv(fb.p, fb.cap, p, IDX_FINAL, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, p, IDX_FINAL, sz, FMPL_SUCCESS, "final message from %d", p);
        CHECK_PATTERN(fb.p, sz, tu_seed(p, IDX_FINAL, sz, 0), "final message from %d", p);
        CHECK_BUF_UNTOUCHED_FROM(&fb, sz, "final message from %d", p);
    }
    tu_buf_put(&fb);
    int np_last = -1;
    CALL(fmpl_sendbuf_check(NULL, &np_last));
    __atomic_store_n(&job->done[me], 1, __ATOMIC_SEQ_CST);
    for (int r = 0; r < n; r++)
        compute_until(&job->done[r], 1, "c: every rank receives its final messages");
    tu_check_spool_counts(np_last, 0, "the messages left in the spool were copied by their receivers");
    CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
    fmpl_free(spool);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < STRESS_IDX; i++)
            tu_buf_put(&ps[p].rb[i]);
    free(ps);
    free(msg);
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    munmap(job, sizeof(job_page));
}

static void pair_pass(int peer, int snd, int pass)
{
    (void)pass;
    sub_pull(peer, snd);
    sub_any(peer, snd);
}

int main(void)
{
    tu_init("spool_pull", COUNT);
    me = tu_rank;
    n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    tu_pairs_both_ways(&oob, OOB_IDX, SYNC, pair_pass);
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    sub_stress(n <= 2 ? 400 : 120);
    return tu_finish();
}
