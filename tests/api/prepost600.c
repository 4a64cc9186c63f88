/* prepost600: 600 receives outstanding between one pair (paper Table 2, R12).
 *
 * fmpl_init(count 1024).  Ranks work in pairs (r, r^1), once in each
 * direction.  Per direction, three rounds, each moving 600 messages on
 * indices 0..599 (sizes 4 B .. 2 KiB, every 50th 70000 B) into regions of
 * one big receive buffer separated by guard gaps:
 *  0  receiver pre-posts all 600 irecvs, tells the sender; the sender sends
 *     them with blocking fmpl_send in a shuffled index order; the receiver
 *     waits in index order.
 *  1  the same with isend (shuffled) and isend_wait (another shuffled order);
 *     the receiver waits in reverse order.
 *  2  the sender isends all 600 first (600 sends outstanding), then tells the
 *     receiver, which posts the irecvs in a shuffled order and completes them
 *     by polling fmpl_irecv_test over all of them.
 * Every message is verified byte for byte, every gap between the regions is
 * checked untouched, and every status is checked.  No timing is asserted.
 */
#include "test_util.h"

#define COUNT 1024
#define K 600
#define CTRL 1000
#define SYNC 1023

static int me, n;
static long off[K + 1];

static long msg_size(int i) { return i % 50 == 49 ? 70000 : 4 + (i * 131) % 2048; }

/* Region i starts at off[i] in a buffer that also has TU_GUARD-byte gaps. */
static void layout(void)
{
    off[0] = 0;
    for (int i = 0; i < K; i++)
        off[i + 1] = off[i] + msg_size(i) + TU_GUARD;
}

static void ctrl(int peer, int send)
{
    char c = 0;
    if (send)
        CALL(fmpl_send(&c, 0, peer, CTRL, FMPL_COMM_WORLD));
    else
        CALL(fmpl_recv(&c, 0, peer, CTRL, FMPL_COMM_WORLD, NULL));
}

static void check_message(int peer, int i, const fmpl_status *st, int round)
{
    CHECK_STATUS(*st, peer, i, msg_size(i), FMPL_SUCCESS, "round %d, index %d", round, i);
}

static void verify_all(tu_buf *rb, int peer, int round)
{
    for (int i = 0; i < K; i++) {
        CHECK_PATTERN(rb->p + off[i], msg_size(i), tu_seed(peer, i, msg_size(i), round),
                      "round %d, message on index %d (%ld B at offset %ld of the big buffer)",
                      round, i, msg_size(i), off[i]);
        /* the gap after region i must still hold the background pattern */
        CHECK_PATTERN_AT(rb->p + off[i] + msg_size(i), TU_GUARD + off[i] + msg_size(i),
                         TU_GUARD, TU_SEED_BACKGROUND,
                         "round %d, gap after the region of index %d (offset counts from "
                         "the end of the %ld-byte region)", round, i, msg_size(i));
    }
    CHECK_BUF_UNTOUCHED_FROM(rb, off[K], "round %d, whole buffer", round);
}

static void run_round(int peer, int snd, int round, int kind)
{
    char what[128];
    snprintf(what, sizeof what, "round %d, %s receive buffer, %s", round, tu_kind_names[kind],
             snd ? "sender" : "receiver");
    tu_sub = what;
    int order[K], order2[K];
    tu_shuffle(order, K, 1000 + (uint64_t)round * 7 + (uint64_t)me);
    tu_shuffle(order2, K, 2000 + (uint64_t)round * 7 + (uint64_t)me);
    tu_buf b;
    tu_buf_get(&b, kind, off[K], NULL);
    if (snd) {
        for (int i = 0; i < K; i++)
            tu_fill(b.p + off[i], msg_size(i), tu_seed(me, i, msg_size(i), round));
        if (round == 0) {
            ctrl(peer, 0);
            for (int k = 0; k < K; k++) {
                int i = order[k];
                CHECK_RC(fmpl_send(b.p + off[i], msg_size(i), peer, i, FMPL_COMM_WORLD),
                         FMPL_SUCCESS, "send %d of %d, index %d", k, K, i);
            }
        } else if (round == 1) {
            ctrl(peer, 0);
            for (int k = 0; k < K; k++) {
                int i = order[k];
                CHECK_RC(fmpl_isend(b.p + off[i], msg_size(i), peer, i, FMPL_COMM_WORLD),
                         FMPL_SUCCESS, "isend %d of %d, index %d", k, K, i);
            }
            for (int k = 0; k < K; k++)
                CHECK_RC(fmpl_isend_wait(peer, order2[k], FMPL_COMM_WORLD), FMPL_SUCCESS,
                         "isend_wait index %d", order2[k]);
        } else {
            for (int k = 0; k < K; k++) {
                int i = order[k];
                CHECK_RC(fmpl_isend(b.p + off[i], msg_size(i), peer, i, FMPL_COMM_WORLD),
                         FMPL_SUCCESS, "isend %d of %d (before any receive), index %d", k, K, i);
            }
            ctrl(peer, 1);
            for (int k = 0; k < K; k++)
                CHECK_RC(fmpl_isend_wait(peer, order2[k], FMPL_COMM_WORLD), FMPL_SUCCESS,
                         "isend_wait index %d", order2[k]);
        }
        /* the send buffer must be unchanged */
        for (int i = 0; i < K; i++)
            CHECK_PATTERN(b.p + off[i], msg_size(i), tu_seed(me, i, msg_size(i), round),
                          "send region of index %d modified", i);
    } else {
        tu_buf_arm(&b);
        fmpl_status st;
        if (round < 2) {
            for (int i = 0; i < K; i++)
                CHECK_RC(fmpl_irecv(b.p + off[i], msg_size(i), peer, i, FMPL_COMM_WORLD),
                         FMPL_SUCCESS, "pre-post irecv %d of %d", i, K);
            ctrl(peer, 1);
            for (int k = 0; k < K; k++) {
                int i = round == 0 ? k : K - 1 - k;
                CHECK_RC(fmpl_irecv_wait(peer, i, FMPL_COMM_WORLD, &st), FMPL_SUCCESS,
                         "irecv_wait index %d", i);
                check_message(peer, i, &st, round);
            }
        } else {
            ctrl(peer, 0);
            for (int k = 0; k < K; k++) {
                int i = order[k];
                CHECK_RC(fmpl_irecv(b.p + off[i], msg_size(i), peer, i, FMPL_COMM_WORLD),
                         FMPL_SUCCESS, "irecv %d of %d (sends already pending), index %d", k,
                         K, i);
            }
            static char done[K];
            memset(done, 0, sizeof done);
            int left = K;
            double t0 = tu_now();
            while (left > 0) {
                for (int i = 0; i < K; i++) {
                    if (done[i])
                        continue;
                    int f = -1;
                    CHECK_RC(fmpl_irecv_test(peer, i, FMPL_COMM_WORLD, &f, &st), FMPL_SUCCESS,
                             "irecv_test index %d", i);
                    CHECK(f == 0 || f == 1, "flag %d", f);
                    if (f) {
                        check_message(peer, i, &st, round);
                        done[i] = 1;
                        left--;
                    }
                }
                if (left > 0 && tu_now() - t0 > TU_POLL_LIMIT_S)
                    TU_FAIL("%d of %d receives still incomplete after %.0f s of irecv_test", left,
                            K, TU_POLL_LIMIT_S);
            }
        }
        verify_all(&b, peer, round);
    }
    tu_buf_put(&b);
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

int main(void)
{
    tu_init("prepost600", COUNT);
    me = tu_rank;
    n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    layout();
    int peer = me ^ 1;
    if (peer < n) {
        for (int pass = 0; pass < 2; pass++) {
            int snd = (me & 1) == pass;
            for (int round = 0; round < 3; round++)
                run_round(peer, snd, round, (round + pass) % 2 ? TU_HEAP : TU_SHARED);
        }
    }
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    return tu_finish();
}
