/* any_source: the any-source domain (fmpl_send_any / fmpl_recv_any).
 *  a  ranks 1..n-1 each fmpl_send_any 12 messages of 0 B .. 1 MiB (some above
 *     64 KiB, i.e. rendezvous) to rank 0, which fmpl_recv_any's them all with
 *     FMPL_TAG_ANY: status source/index/size right, data right, and the
 *     messages of each source arrive in the order they were sent.
 *  b  separation (pairs r, r^1; the even rank receives): messages sent with
 *     fmpl_send_any are not taken by a posted fmpl_irecv with the same source
 *     and index (it stays pending), and a message sent with fmpl_isend is not
 *     taken by fmpl_recv_any.
 *  c  index filter: each sender sends small messages on indices 40..43;
 *     after they have all arrived, rank 0 receives index 43 from everyone,
 *     then 41, then the rest with FMPL_TAG_ANY (40 before 42 per source).
 *  d  arrival order across sources: senders take turns (a token passed with
 *     indexed messages), so the arrival order is known; fmpl_recv_any with
 *     FMPL_TAG_ANY must return exactly that order.
 * The small messages of c and d are far below 64 KiB, so fmpl_send_any
 * returns at once (buffered at the receiver, see fmpl.h).
 */
#include "test_util.h"

#define COUNT 64
#define SYNC (COUNT - 1)
#define CTRL (COUNT - 2)

static int me, n;

/* ------------------------------------------------------------------ a */

static const long a_sizes[] = {0, 1, 100, 4096, 65536, 65537, 200000, 1L << 20, 17, 3000, 70000, 8};
#define A_M ((int)(sizeof a_sizes / sizeof a_sizes[0]))
#define A_CAP (1L << 20)
static int a_index(int src, int k) { return (src * 5 + k) % 60; }

static void sub_many_senders(void)
{
    tu_sub = "a: ranks 1..n-1 -> rank 0, FMPL_TAG_ANY";
    if (me == 0) {
        tu_buf rb[2];
        tu_buf_get(&rb[0], TU_SHARED, A_CAP, NULL);
        tu_buf_get(&rb[1], TU_HEAP, A_CAP, NULL);
        int *next = calloc((size_t)n, sizeof *next);
        tu_sleep_ms(30); /* let eager messages pile up */
        for (int m = 0; m < A_M * (n - 1); m++) {
            tu_buf *b = &rb[m % 2];
            tu_buf_arm(b);
            fmpl_status st;
            memset(&st, 0xff, sizeof st);
            CALL(fmpl_recv_any(b->p, b->cap, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
            CHECK(st.source >= 1 && st.source < n, "receive %d: status.source %d is not a "
                  "sender (1..%d)", m, st.source, n - 1);
            int s = st.source, k = next[s];
            CHECK(k < A_M, "receive %d: a %d-th message from rank %d (it sends %d)", m, k + 1, s,
                  A_M);
            CHECK_STATUS(st, s, a_index(s, k), a_sizes[k], FMPL_SUCCESS,
                         "receive %d: message %d of rank %d expected next (per-source order)",
                         m, k, s);
            CHECK_PATTERN(b->p, a_sizes[k], tu_seed(s, a_index(s, k), a_sizes[k], k),
                          "receive %d: message %d of rank %d", m, k, s);
            CHECK_BUF_UNTOUCHED_FROM(b, a_sizes[k], "receive %d: message %d of rank %d", m, k, s);
            next[s]++;
        }
        free(next);
        tu_buf_put(&rb[0]);
        tu_buf_put(&rb[1]);
    } else {
        tu_sleep_ms(3 * me);
        for (int k = 0; k < A_M; k++) {
            tu_buf b;
            tu_buf_get(&b, (k + me) % 2 ? TU_HEAP : TU_SHARED, a_sizes[k], NULL);
            tu_fill(b.p, a_sizes[k], tu_seed(me, a_index(me, k), a_sizes[k], k));
            CHECK_RC(fmpl_send_any(b.p, a_sizes[k], 0, a_index(me, k), FMPL_COMM_WORLD),
                     FMPL_SUCCESS, "message %d, %ld B", k, a_sizes[k]);
            CHECK_PATTERN(b.p, a_sizes[k], tu_seed(me, a_index(me, k), a_sizes[k], k),
                          "send buffer modified by fmpl_send_any");
            tu_buf_put(&b);
        }
    }
}

/* ------------------------------------------------------------------ b */

static void ctrl(int peer, int send)
{
    char c = 0;
    if (send)
        CALL(fmpl_send(&c, 0, peer, CTRL, FMPL_COMM_WORLD));
    else
        CALL(fmpl_recv(&c, 0, peer, CTRL, FMPL_COMM_WORLD, NULL));
}

static void expect_pending(int src, int idx, const char *why)
{
    int f = -1;
    fmpl_status st;
    CALL(fmpl_irecv_test(src, idx, FMPL_COMM_WORLD, &f, &st));
    if (f != 0)
        TU_FAIL("the indexed irecv (source %d, index %d) completed (flag %d, status size %ld): "
                "%s", src, idx, f, f == 1 ? st.size : -1L, why);
}

static void sub_separation(int peer, int recv_side)
{
    const long cap = 200000, sS = 500, sL = 150000, sR = 3000;
    tu_sub = "b1: fmpl_send_any is not received by a posted fmpl_irecv";
    if (recv_side) {
        tu_buf A, B;
        tu_buf_get(&A, TU_HEAP, cap, NULL);
        tu_buf_get(&B, TU_SHARED, cap, NULL);
        tu_buf_arm(&A);
        CALL(fmpl_irecv(A.p, cap, peer, 7, FMPL_COMM_WORLD));
        ctrl(peer, 1);
        expect_pending(peer, 7, "only fmpl_send_any messages were sent so far");
        fmpl_status st;
        tu_buf_arm(&B);
        CALL(fmpl_recv_any(B.p, cap, 7, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 7, sS, FMPL_SUCCESS, "first any-source message");
        CHECK_PATTERN(B.p, sS, tu_seed(peer, 7, sS, 1), "first any-source message");
        expect_pending(peer, 7, "after receiving the small any-source message");
        tu_buf_arm(&B);
        CALL(fmpl_recv_any(B.p, cap, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 7, sL, FMPL_SUCCESS, "second (rendezvous) any-source message");
        CHECK_PATTERN(B.p, sL, tu_seed(peer, 7, sL, 2), "second any-source message");
        expect_pending(peer, 7, "after both any-source messages on index 7 were received");
        CHECK_BUF_UNTOUCHED_FROM(&A, 0, "indexed receive buffer while any-source messages "
                                 "on the same index went by");
        ctrl(peer, 1);
        CALL(fmpl_irecv_wait(peer, 7, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 7, sR, FMPL_SUCCESS, "the indexed message");
        CHECK_PATTERN(A.p, sR, tu_seed(peer, 7, sR, 3), "the indexed message");
        CHECK_BUF_UNTOUCHED_FROM(&A, sR, "the indexed message");
        tu_buf_put(&A);
        tu_buf_put(&B);
    } else {
        tu_buf m;
        tu_buf_get(&m, TU_SHARED, sL, NULL);
        ctrl(peer, 0);
        tu_fill(m.p, sS, tu_seed(me, 7, sS, 1));
        CALL(fmpl_send_any(m.p, sS, peer, 7, FMPL_COMM_WORLD));
        tu_fill(m.p, sL, tu_seed(me, 7, sL, 2));
        CALL(fmpl_send_any(m.p, sL, peer, 7, FMPL_COMM_WORLD));
        ctrl(peer, 0);
        tu_fill(m.p, sR, tu_seed(me, 7, sR, 3));
        CALL(fmpl_send(m.p, sR, peer, 7, FMPL_COMM_WORLD));
        tu_buf_put(&m);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);

    static const long sI[2] = {2000, 200000};
    const long sA = 600;
    for (int round = 0; round < 2; round++) {
        tu_sub = round == 0 ? "b2: fmpl_isend (2000 B) is not received by fmpl_recv_any"
                            : "b2: fmpl_isend (200000 B) is not received by fmpl_recv_any";
        if (recv_side) {
            tu_buf B;
            tu_buf_get(&B, round ? TU_HEAP : TU_SHARED, cap, NULL);
            fmpl_status st;
            tu_buf_arm(&B);
            CALL(fmpl_recv_any(B.p, cap, round ? 8 : FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, 8, sA, FMPL_SUCCESS,
                         "fmpl_recv_any must get the any-source message, not the pending "
                         "indexed send of %ld B on the same index", sI[round]);
            CHECK_PATTERN(B.p, sA, tu_seed(peer, 8, sA, 10 + round), "any-source message");
            CHECK_BUF_UNTOUCHED_FROM(&B, sA, "any-source message");
            tu_buf_arm(&B);
            CALL(fmpl_recv(B.p, cap, peer, 8, FMPL_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, 8, sI[round], FMPL_SUCCESS, "the indexed message");
            CHECK_PATTERN(B.p, sI[round], tu_seed(peer, 8, sI[round], 20 + round),
                          "the indexed message");
            tu_buf_put(&B);
        } else {
            tu_buf mi, ma;
            tu_buf_get(&mi, TU_HEAP, sI[round], NULL);
            tu_buf_get(&ma, TU_HEAP, sA, NULL);
            tu_fill(mi.p, sI[round], tu_seed(me, 8, sI[round], 20 + round));
            tu_fill(ma.p, sA, tu_seed(me, 8, sA, 10 + round));
            CALL(fmpl_isend(mi.p, sI[round], peer, 8, FMPL_COMM_WORLD));
            CALL(fmpl_send_any(ma.p, sA, peer, 8, FMPL_COMM_WORLD));
            CALL(fmpl_isend_wait(peer, 8, FMPL_COMM_WORLD));
            tu_buf_put(&mi);
            tu_buf_put(&ma);
        }
        tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
    }
}

/* ------------------------------------------------------------------ c */

static long c_size(int src, int idx) { return 10 * (idx - 39) + src; }

static void sub_index_filter(void)
{
    tu_sub = "c: recv_any index filter";
    char buf[200 + 2 * TU_GUARD];
    if (me == 0) {
        tu_buf b = {.p = (unsigned char *)buf + TU_GUARD, .cap = 200, .kind = TU_STACK,
                    .base = (unsigned char *)buf};
        /* Every sender has sent everything before it sends on CTRL. */
        for (int s = 1; s < n; s++)
            ctrl(s, 0);
        static const int filt[2] = {43, 41};
        for (int f = 0; f < 2; f++) {
            int *seen = calloc((size_t)n, sizeof *seen);
            for (int k = 0; k < n - 1; k++) {
                fmpl_status st;
                tu_buf_arm(&b);
                CALL(fmpl_recv_any(b.p, b.cap, filt[f], FMPL_COMM_WORLD, &st));
                CHECK(st.source >= 1 && st.source < n && !seen[st.source],
                      "recv_any(index %d) #%d: source %d (not a sender, or twice)", filt[f], k,
                      st.source);
                seen[st.source] = 1;
                CHECK_STATUS(st, st.source, filt[f], c_size(st.source, filt[f]), FMPL_SUCCESS,
                             "recv_any(index %d) must skip the earlier messages on other "
                             "indices", filt[f]);
                CHECK_PATTERN(b.p, st.size, tu_seed(st.source, filt[f], st.size, 40),
                              "recv_any(index %d) from rank %d", filt[f], st.source);
                CHECK_BUF_UNTOUCHED_FROM(&b, st.size, "recv_any(index %d)", filt[f]);
            }
            free(seen);
        }
        int *next = calloc((size_t)n, sizeof *next);
        for (int k = 0; k < 2 * (n - 1); k++) {
            fmpl_status st;
            tu_buf_arm(&b);
            CALL(fmpl_recv_any(b.p, b.cap, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
            CHECK(st.source >= 1 && st.source < n && next[st.source] < 2,
                  "recv_any(TAG_ANY) #%d: source %d unexpected", k, st.source);
            int idx = next[st.source] == 0 ? 40 : 42;
            CHECK_STATUS(st, st.source, idx, c_size(st.source, idx), FMPL_SUCCESS,
                         "remaining messages of rank %d in the order sent", st.source);
            CHECK_PATTERN(b.p, st.size, tu_seed(st.source, idx, st.size, 40),
                          "recv_any(TAG_ANY) from rank %d index %d", st.source, idx);
            next[st.source]++;
        }
        free(next);
    } else {
        for (int idx = 40; idx <= 43; idx++) {
            long sz = c_size(me, idx);
            tu_fill(buf, sz, tu_seed(me, idx, sz, 40));
            CALL(fmpl_send_any(buf, sz, 0, idx, FMPL_COMM_WORLD));
        }
        ctrl(0, 1);
    }
}

/* ------------------------------------------------------------------ d */

static void sub_arrival_order(void)
{
    tu_sub = "d: arrival order across sources (senders take turns)";
    unsigned char buf[300];
    if (me == 0) {
        ctrl(1, 1);          /* token to rank 1 */
        ctrl(n - 1, 0);      /* token back from the last sender */
        for (int s = 1; s < n; s++)
            for (int k = 0; k < 2; k++) {
                fmpl_status st;
                long sz = 100 + 10 * s + k;
                memset(buf, 0, sizeof buf);
                CALL(fmpl_recv_any(buf, sizeof buf, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
                CHECK_STATUS(st, s, 30 + k, sz, FMPL_SUCCESS,
                             "rank %d sent its 2 messages before rank %d's: arrival order", s,
                             s + 1);
                CHECK_PATTERN(buf, sz, tu_seed(s, 30 + k, sz, 50), "rank %d message %d", s, k);
            }
    } else {
        ctrl(me - 1, 0);
        for (int k = 0; k < 2; k++) {
            long sz = 100 + 10 * me + k;
            tu_fill(buf, sz, tu_seed(me, 30 + k, sz, 50));
            CALL(fmpl_send_any(buf, sz, 0, 30 + k, FMPL_COMM_WORLD));
        }
        ctrl((me + 1) % n, 1);
    }
}

int main(void)
{
    tu_init("any_source", COUNT);
    me = tu_rank;
    n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    sub_many_senders();
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    int peer = me ^ 1;
    if (peer < n)
        sub_separation(peer, (me & 1) == 0);
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    sub_index_filter();
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    sub_arrival_order();
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    return tu_finish();
}
