/* spool: the one-copy spool and the send timeout (fmpl_sendbuf_set/check).
 *
 * Ranks work in pairs (r, r^1), each subtest once in each direction.  Where
 * the test must observe the sender's spool without the sender calling FMPL
 * (every FMPL call may drain the spool), the pair coordinates through an
 * out-of-band shared page (tu_oob), not through FMPL messages.
 *  sync0  default (no fmpl_sendbuf_set yet): fmpl_send does not return before
 *         the receiver has posted (receiver sets a flag, then posts).
 *  a      R15: both ranks fmpl_send to each other first, then fmpl_recv, with
 *         a 10 ms timeout: both complete, data right; also 5 messages each way.
 *  b      R14, timeout 0: three sends return before any receive is posted;
 *         sendbuf_check -> nsend 0, nspool 3; (d) replacing or removing the
 *         non-empty spool -> FMPL_ERR_BUSY; receiver posts 2 receives ->
 *         check -> 2, 1; third receive -> 1, 0; receiver gets the original
 *         data although the sender clobbered its buffers after each send.
 *  c      spool full: 200 B into a 100 B spool -> FMPL_ERR_SPOOL_FULL, nothing
 *         sent (the posted receive stays incomplete); the same send succeeds
 *         once the receive is posted; a partly filled spool refuses a message
 *         that does not fit in its free part and keeps the one it holds; a
 *         spool emptied again takes a message of nearly its whole size
 *         wherever the last one ended (an empty ring starts over).
 *  g      a spooled message goes out while the sender is blocked in fmpl_recv
 *         (spool progress inside other calls; a spool in private memory,
 *         which the receiver cannot copy from itself).
 *  f      long timeout (20 s), receive posted after 50 ms: the send goes
 *         directly, nothing is spooled.
 *  sync1  explicit FMPL_TIMEOUT_NONE with a spool set: synchronous again.
 */
#include "test_util.h"

#define COUNT 64
#define SYNC (COUNT - 1)
#define CTRL (COUNT - 2)
#define OOB_IDX (COUNT - 3)

static int me, n;
static tu_oob *oob;

enum { SLOT_SYNC0, SLOT_B, SLOT_C1, SLOT_C2, SLOT_C3, SLOT_G, SLOT_F, SLOT_SYNC1 };

static void drain(const char *why)
{
    double t0 = tu_now();
    int ns, np;
    for (;;) {
        CALL(fmpl_sendbuf_check(&ns, &np));
        if (np == 0)
            return;
        if (tu_now() - t0 > TU_POLL_LIMIT_S)
            TU_FAIL("spool still holds %d messages after %.0f s of fmpl_sendbuf_check: %s", np,
                    TU_POLL_LIMIT_S, why);
    }
}

/* ------------------------------------------------------- synchronous */

static void sub_synchronous(int peer, int snd, int slot, const char *mode)
{
    static const long szs[] = {100, 200000};
    for (int k = 0; k < 2; k++) {
        long sz = szs[k];
        char what[160];
        snprintf(what, sizeof what, "synchronous send (%s), %ld B", mode, sz);
        tu_sub = what;
        tu_buf b;
        tu_buf_get(&b, k ? TU_SHARED : TU_HEAP, sz, NULL);
        uint64_t seed = tu_seed(snd ? me : peer, 30 + k, sz, 2000 + slot);
        if (snd) {
            tu_fill(b.p, sz, seed);
            CALL(fmpl_send(b.p, sz, peer, 30 + k, FMPL_COMM_WORLD));
            CHECK(tu_oob_get(oob, slot) == k + 1,
                  "fmpl_send returned before the receiver posted its receive "
                  "(out-of-band flag %d, expected %d): a send with no spool or with "
                  "FMPL_TIMEOUT_NONE must be synchronous", tu_oob_get(oob, slot), k + 1);
        } else {
            tu_buf_arm(&b);
            tu_sleep_ms(100); /* a buffering send would return meanwhile */
            tu_oob_set(oob, slot, k + 1);
            fmpl_status st;
            CALL(fmpl_recv(b.p, sz, peer, 30 + k, FMPL_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, 30 + k, sz, FMPL_SUCCESS, "synchronous message");
            CHECK_PATTERN(b.p, sz, seed, "synchronous message");
        }
        tu_buf_put(&b);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ a */

static void sub_r15(int peer)
{
    tu_sub = "a: R15 send-send-recv-recv with a 10 ms timeout";
    long spool_sz = 1L << 20;
    void *spool = malloc((size_t)spool_sz);
    CHECK(spool, "malloc spool");
    CALL(fmpl_sendbuf_set(spool, spool_sz, 10));
    static const long szs[] = {1000, 200000};
    for (int k = 0; k < 2; k++) {
        long sz = szs[k];
        tu_buf s, r;
        tu_buf_get(&s, k ? TU_HEAP : TU_SHARED, sz, NULL);
        tu_buf_get(&r, k ? TU_SHARED : TU_HEAP, sz, NULL);
        tu_fill(s.p, sz, tu_seed(me, 10 + k, sz, 3000));
        tu_buf_arm(&r);
        fmpl_status st;
        CALL(fmpl_send(s.p, sz, peer, 10 + k, FMPL_COMM_WORLD));
        tu_fill(s.p, sz, 0xc10bbe5ull); /* the spool has its own copy */
        CALL(fmpl_recv(r.p, sz, peer, 10 + k, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 10 + k, sz, FMPL_SUCCESS, "%ld B exchange", sz);
        CHECK_PATTERN(r.p, sz, tu_seed(peer, 10 + k, sz, 3000), "%ld B exchange", sz);
        CHECK_BUF_UNTOUCHED_FROM(&r, sz, "%ld B exchange", sz);
        tu_buf_put(&s);
        tu_buf_put(&r);
    }

    tu_sub = "a: five sends each way, then five receives, 10 ms timeout";
    static const long sz5[] = {1000, 2000, 3000, 50000, 100000};
    tu_buf s[5], r[5];
    for (int k = 0; k < 5; k++) {
        tu_buf_get(&s[k], TU_HEAP, sz5[k], NULL);
        tu_buf_get(&r[k], TU_HEAP, sz5[k], NULL);
        tu_fill(s[k].p, sz5[k], tu_seed(me, 20 + k, sz5[k], 3001));
        tu_buf_arm(&r[k]);
    }
    for (int k = 0; k < 5; k++)
        CALL(fmpl_send(s[k].p, sz5[k], peer, 20 + k, FMPL_COMM_WORLD));
    for (int k = 0; k < 5; k++) {
        fmpl_status st;
        CALL(fmpl_recv(r[k].p, sz5[k], peer, 20 + k, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 20 + k, sz5[k], FMPL_SUCCESS, "message %d", k);
        CHECK_PATTERN(r[k].p, sz5[k], tu_seed(peer, 20 + k, sz5[k], 3001), "message %d", k);
    }
    for (int k = 0; k < 5; k++) {
        tu_buf_put(&s[k]);
        tu_buf_put(&r[k]);
    }
    drain("all receives of the peer are posted");
    CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
    free(spool);
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------ b and d */

static void sub_buffered(int peer, int snd)
{
    tu_sub = "b: timeout 0, three spooled messages, nsend/nspool (R14)";
    static const int idx[3] = {40, 41, 42};
    static const long sz[3] = {1000, 70000, 5};
    if (snd) {
        long spool_sz = 1L << 20;
        void *spool = malloc((size_t)spool_sz), *other = malloc(4096);
        CHECK(spool && other, "malloc spool");
        CALL(fmpl_sendbuf_set(spool, spool_sz, 0));
        tu_check_spool_counts(0, 0, "fresh spool");
        tu_buf m[3];
        for (int k = 0; k < 3; k++) {
            tu_buf_get(&m[k], k == 1 ? TU_SHARED : TU_HEAP, sz[k], NULL);
            tu_fill(m[k].p, sz[k], tu_seed(me, idx[k], sz[k], 4000));
            CALL(fmpl_send(m[k].p, sz[k], peer, idx[k], FMPL_COMM_WORLD));
            tu_fill(m[k].p, sz[k], 0xc10bbe5ull + (uint64_t)k); /* clobber */
        }
        tu_check_spool_counts(0, 3, "three sends returned, receiver has posted nothing");
        CALL(fmpl_sendbuf_check(NULL, NULL));

        tu_sub = "d: replacing or removing a non-empty spool";
        CHECK_RC(fmpl_sendbuf_set(other, 4096, 0), FMPL_ERR_BUSY,
                 "replace a spool that holds 3 messages");
        CHECK_RC(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE), FMPL_ERR_BUSY,
                 "remove a spool that holds 3 messages");
        tu_check_spool_counts(0, 3, "after the refused fmpl_sendbuf_set calls");

        tu_sub = "b: timeout 0, three spooled messages, nsend/nspool (R14)";
        tu_oob_set(oob, SLOT_B, 1);
        tu_oob_wait(oob, SLOT_B, 2, "receiver posts receives for indices 40 and 41");
        tu_check_spool_counts(2, 1, "receiver posted 2 of the 3 receives");
        tu_check_spool_counts(0, 1, "nothing new posted");
        tu_oob_set(oob, SLOT_B, 3);
        tu_oob_wait(oob, SLOT_B, 4, "receiver posts the receive for index 42");
        tu_check_spool_counts(1, 0, "receiver posted the third receive");
        tu_check_spool_counts(0, 0, "spool empty");
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        for (int k = 0; k < 3; k++)
            tu_buf_put(&m[k]);
        free(spool);
        free(other);
    } else {
        tu_buf r[3];
        for (int k = 0; k < 3; k++) {
            tu_buf_get(&r[k], k == 0 ? TU_SHARED : TU_HEAP, sz[k], NULL);
            tu_buf_arm(&r[k]);
        }
        tu_oob_wait(oob, SLOT_B, 1, "sender spools three messages");
        CALL(fmpl_irecv(r[0].p, sz[0], peer, idx[0], FMPL_COMM_WORLD));
        CALL(fmpl_irecv(r[1].p, sz[1], peer, idx[1], FMPL_COMM_WORLD));
        tu_oob_set(oob, SLOT_B, 2);
        tu_oob_wait(oob, SLOT_B, 3, "sender calls fmpl_sendbuf_check");
        for (int k = 0; k < 2; k++) {
            fmpl_status st;
            CALL(fmpl_irecv_wait(peer, idx[k], FMPL_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, idx[k], sz[k], FMPL_SUCCESS, "spooled message %d", k);
            CHECK_PATTERN(r[k].p, sz[k], tu_seed(peer, idx[k], sz[k], 4000),
                          "spooled message %d (the sender clobbered its buffer after the send)",
                          k);
            CHECK_BUF_UNTOUCHED_FROM(&r[k], sz[k], "spooled message %d", k);
        }
        CALL(fmpl_irecv(r[2].p, sz[2], peer, idx[2], FMPL_COMM_WORLD));
        tu_oob_set(oob, SLOT_B, 4);
        fmpl_status st;
        CALL(fmpl_irecv_wait(peer, idx[2], FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, idx[2], sz[2], FMPL_SUCCESS, "spooled message 2");
        CHECK_PATTERN(r[2].p, sz[2], tu_seed(peer, idx[2], sz[2], 4000), "spooled message 2");
        for (int k = 0; k < 3; k++)
            tu_buf_put(&r[k]);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ c */

static void sub_spool_full(int peer, int snd)
{
    tu_sub = "c: 200 B message, 100 B spool, timeout 0";
    if (snd) {
        char spool[100];
        tu_buf m;
        tu_buf_get(&m, TU_HEAP, 200, NULL);
        CALL(fmpl_sendbuf_set(spool, sizeof spool, 0));
        tu_fill(m.p, 200, tu_seed(me, 50, 200, 1));
        CHECK_RC(fmpl_send(m.p, 200, peer, 50, FMPL_COMM_WORLD), FMPL_ERR_SPOOL_FULL,
                 "200 B send, receive not posted, 100 B spool");
        tu_check_spool_counts(0, 0, "after FMPL_ERR_SPOOL_FULL nothing is spooled");
        tu_oob_set(oob, SLOT_C1, 1);
        tu_oob_wait(oob, SLOT_C1, 2, "receiver posts the receive");
        tu_fill(m.p, 200, tu_seed(me, 50, 200, 2));
        CALL(fmpl_send(m.p, 200, peer, 50, FMPL_COMM_WORLD));
        tu_check_spool_counts(0, 0, "receive was posted: sent directly");
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        tu_buf_put(&m);
    } else {
        tu_buf r;
        tu_buf_get(&r, TU_SHARED, 200, NULL);
        tu_buf_arm(&r);
        tu_oob_wait(oob, SLOT_C1, 1, "sender's send fails with FMPL_ERR_SPOOL_FULL");
        CALL(fmpl_irecv(r.p, 200, peer, 50, FMPL_COMM_WORLD));
        int f = -1;
        fmpl_status st;
        CALL(fmpl_irecv_test(peer, 50, FMPL_COMM_WORLD, &f, &st));
        CHECK_EQ(f, 0, "the send that failed with FMPL_ERR_SPOOL_FULL must have sent nothing");
        CHECK_BUF_UNTOUCHED_FROM(&r, 0, "receive buffer after the failed send");
        tu_oob_set(oob, SLOT_C1, 2);
        CALL(fmpl_irecv_wait(peer, 50, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 50, 200, FMPL_SUCCESS, "second send");
        CHECK_PATTERN(r.p, 200, tu_seed(peer, 50, 200, 2), "data of the second send");
        CHECK_BUF_UNTOUCHED_FROM(&r, 200, "second send");
        tu_buf_put(&r);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);

    tu_sub = "c: partly filled 4096 B spool refuses 3500 B, keeps 1000 B";
    if (snd) {
        void *spool = malloc(4096);
        tu_buf m1, m2;
        tu_buf_get(&m1, TU_HEAP, 1000, NULL);
        tu_buf_get(&m2, TU_SHARED, 3500, NULL);
        CALL(fmpl_sendbuf_set(spool, 4096, 0));
        tu_fill(m1.p, 1000, tu_seed(me, 51, 1000, 5));
        CALL(fmpl_send(m1.p, 1000, peer, 51, FMPL_COMM_WORLD));
        tu_fill(m1.p, 1000, 0xc10bbe5ull);
        tu_check_spool_counts(0, 1, "1000 B spooled");
        tu_fill(m2.p, 3500, tu_seed(me, 52, 3500, 5));
        CHECK_RC(fmpl_send(m2.p, 3500, peer, 52, FMPL_COMM_WORLD), FMPL_ERR_SPOOL_FULL,
                 "3500 B into a 4096 B spool already holding 1000 B");
        tu_check_spool_counts(0, 1, "the refused message is not spooled, the first one still is");
        tu_oob_set(oob, SLOT_C2, 1);
        tu_oob_wait(oob, SLOT_C2, 2, "receiver posts both receives");
        tu_check_spool_counts(1, 0, "both receives posted, one message spooled");
        CALL(fmpl_send(m2.p, 3500, peer, 52, FMPL_COMM_WORLD));
        tu_check_spool_counts(0, 0, "the retried send went directly");
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        tu_buf_put(&m1);
        tu_buf_put(&m2);
        free(spool);
    } else {
        tu_buf r1, r2;
        tu_buf_get(&r1, TU_HEAP, 1000, NULL);
        tu_buf_get(&r2, TU_HEAP, 3500, NULL);
        tu_buf_arm(&r1);
        tu_buf_arm(&r2);
        tu_oob_wait(oob, SLOT_C2, 1, "sender spools 1000 B and is refused 3500 B");
        CALL(fmpl_irecv(r1.p, 1000, peer, 51, FMPL_COMM_WORLD));
        CALL(fmpl_irecv(r2.p, 3500, peer, 52, FMPL_COMM_WORLD));
        tu_oob_set(oob, SLOT_C2, 2);
        fmpl_status st;
        CALL(fmpl_irecv_wait(peer, 51, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 51, 1000, FMPL_SUCCESS, "spooled 1000 B");
        CHECK_PATTERN(r1.p, 1000, tu_seed(peer, 51, 1000, 5), "spooled 1000 B");
        CALL(fmpl_irecv_wait(peer, 52, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 52, 3500, FMPL_SUCCESS, "retried 3500 B");
        CHECK_PATTERN(r2.p, 3500, tu_seed(peer, 52, 3500, 5), "retried 3500 B");
        CHECK_BUF_UNTOUCHED_FROM(&r2, 3500, "retried 3500 B");
        tu_buf_put(&r1);
        tu_buf_put(&r2);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);

    /* 1000 B take the spool's first 1088 B; once they are delivered the
     * ring is empty, and 3500 B (3584 B with the header) fit only from its
     * start.  One buffer on each side serves both messages. */
    tu_sub = "c: an emptied 4096 B spool takes 3500 B after 1000 B were delivered";
    tu_buf b;
    tu_buf_get(&b, TU_HEAP, 3500, NULL);
    if (snd) {
        void *spool = malloc(4096);
        CALL(fmpl_sendbuf_set(spool, 4096, 0));
        for (int k = 0; k < 2; k++) {
            long size = k ? 3500 : 1000;
            tu_fill(b.p, size, tu_seed(me, 53 + k, size, 6));
            CALL(fmpl_send(b.p, size, peer, 53 + k, FMPL_COMM_WORLD));
            tu_check_spool_counts(0, 1, k ? "3500 B spooled in the emptied spool"
                                          : "1000 B spooled");
            tu_oob_set(oob, SLOT_C3, k + 1);
            drain("the receiver takes the message");
        }
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        free(spool);
    } else {
        for (int k = 0; k < 2; k++) {
            long size = k ? 3500 : 1000;
            fmpl_status st;
            tu_buf_arm(&b);
            tu_oob_wait(oob, SLOT_C3, k + 1, "the sender spools the message");
            CALL(fmpl_recv(b.p, size, peer, 53 + k, FMPL_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, 53 + k, size, FMPL_SUCCESS, "spooled message");
            CHECK_PATTERN(b.p, size, tu_seed(peer, 53 + k, size, 6), "spooled message");
            CHECK_BUF_UNTOUCHED_FROM(&b, size, "spooled message");
        }
    }
    tu_buf_put(&b);
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ g */

static void sub_progress_in_recv(int peer, int snd)
{
    tu_sub = "g: spooled message delivered while the sender is blocked in fmpl_recv";
    const long sz = 3000;
    if (snd) {
        /* A spool in private memory: its receiver cannot copy the message
         * itself (spool_pull.c tests that), only the sender's progress
         * delivers it. */
        static char spool[65536] __attribute__((aligned(64)));
        tu_buf m;
        tu_buf_get(&m, TU_HEAP, sz, NULL);
        CALL(fmpl_sendbuf_set(spool, 65536, 0));
        tu_fill(m.p, sz, tu_seed(me, 53, sz, 6));
        CALL(fmpl_send(m.p, sz, peer, 53, FMPL_COMM_WORLD));
        tu_check_spool_counts(0, 1, "spooled, receive not posted");
        tu_oob_set(oob, SLOT_G, 1);
        char c;
        /* The peer sends this only after it got the spooled message. */
        CALL(fmpl_recv(&c, 0, peer, CTRL, FMPL_COMM_WORLD, NULL));
        tu_check_spool_counts(0, 0, "already sent inside fmpl_recv");
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        tu_buf_put(&m);
    } else {
        tu_buf r;
        tu_buf_get(&r, TU_SHARED, sz, NULL);
        tu_buf_arm(&r);
        tu_oob_wait(oob, SLOT_G, 1, "sender spools a message");
        CALL(fmpl_irecv(r.p, sz, peer, 53, FMPL_COMM_WORLD));
        fmpl_status st;
        int f = 0;
        double t0 = tu_now();
        while (!f) {
            CALL(fmpl_irecv_test(peer, 53, FMPL_COMM_WORLD, &f, &st));
            if (!f && tu_now() - t0 > TU_POLL_LIMIT_S)
                TU_FAIL("the spooled message never arrived while its sender was blocked in "
                        "fmpl_recv: spooled sends must progress inside other FMPL calls");
        }
        CHECK_STATUS(st, peer, 53, sz, FMPL_SUCCESS, "spooled message");
        CHECK_PATTERN(r.p, sz, tu_seed(peer, 53, sz, 6), "spooled message");
        char c = 0;
        CALL(fmpl_send(&c, 0, peer, CTRL, FMPL_COMM_WORLD));
        tu_buf_put(&r);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ f */

static void sub_long_timeout(int peer, int snd)
{
    tu_sub = "f: 20 s timeout, receive posted after 50 ms: sent directly";
    const long sz = 5000;
    tu_buf b;
    tu_buf_get(&b, TU_HEAP, sz, NULL);
    if (snd) {
        void *spool = malloc(1 << 20);
        CALL(fmpl_sendbuf_set(spool, 1 << 20, 20000));
        tu_fill(b.p, sz, tu_seed(me, 54, sz, 7));
        CALL(fmpl_send(b.p, sz, peer, 54, FMPL_COMM_WORLD));
        CHECK(tu_oob_get(oob, SLOT_F) == 1,
              "fmpl_send returned before the receive was posted although the timeout is 20 s");
        tu_check_spool_counts(0, 0, "the message must not have been spooled");
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
        free(spool);
    } else {
        tu_buf_arm(&b);
        tu_sleep_ms(50);
        tu_oob_set(oob, SLOT_F, 1);
        fmpl_status st;
        CALL(fmpl_recv(b.p, sz, peer, 54, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 54, sz, FMPL_SUCCESS, "long-timeout message");
        CHECK_PATTERN(b.p, sz, tu_seed(peer, 54, sz, 7), "long-timeout message");
    }
    tu_buf_put(&b);
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

static void pair_pass(int peer, int snd, int pass)
{
    /* Before any fmpl_sendbuf_set in this process (pass 0): the default. */
    sub_synchronous(peer, snd, SLOT_SYNC0, pass == 0 ? "default" : "after removal");
    sub_r15(peer);
    sub_buffered(peer, snd);
    sub_spool_full(peer, snd);
    sub_progress_in_recv(peer, snd);
    sub_long_timeout(peer, snd);
    tu_sub = "sync1: FMPL_TIMEOUT_NONE with a spool set";
    void *spool = malloc(1 << 20);
    if (snd)
        CALL(fmpl_sendbuf_set(spool, 1 << 20, FMPL_TIMEOUT_NONE));
    sub_synchronous(peer, snd, SLOT_SYNC1, "FMPL_TIMEOUT_NONE, spool set");
    if (snd) {
        tu_check_spool_counts(0, 0, "synchronous mode spools nothing");
        CALL(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));
    }
    free(spool);
}

int main(void)
{
    tu_init("spool", COUNT);
    me = tu_rank;
    n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    tu_pairs_both_ways(&oob, OOB_IDX, SYNC, pair_pass);
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    return tu_finish();
}
