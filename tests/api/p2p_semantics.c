/* p2p_semantics: matching and completion rules of the indexed domain.
 *
 * Ranks work in pairs (r, r^1); each pair runs every subtest twice, once in
 * each direction.  Subtests:
 *  a  FMPL_TAG_ANY receives match sends on any index; status.index says which
 *     (sequential sends, and six sends outstanding at once).
 *  b  irecv on index 0 and irecv FMPL_TAG_ANY from the same source, two sends
 *     on index 0: both receives complete, each with one of the two messages,
 *     whichever matched which (the test does not depend on it).
 *  c  isend before the receive is posted: isend_test says 0 until the receive
 *     exists, isend_wait completes it; irecv_test says 0 then 1; a finished
 *     operation is no longer pending and its index is free at once.
 *  d  60 indices outstanding at once in both directions, completed in
 *     reverse (and in shuffled) order.
 *  e  a send buffer overwritten right after fmpl_send / fmpl_isend_wait
 *     returns: the receiver still gets the old data.
 *  f  both ranks isend, then receive (recv, or irecv + wait): no deadlock,
 *     because a pending send progresses inside the other calls.
 *  g  (all ranks) every rank sends to every other on the same index at once:
 *     slots are per (sender, receiver) pair.
 *  h  messages to oneself (irecv + send, isend + recv).
 * With argument "areas" FMPL is started with caller-provided matching and
 * flag areas (fmpl_area_size before fmpl_init, areas filled with garbage).
 */
#include "test_util.h"

#define COUNT 64
#define SYNC (COUNT - 1)
#define CTRL (COUNT - 2)

static int me, n;

/* Call `call` (which sets `flag`) until flag is 1; it must succeed each time. */
#define POLL_TEST(call, flag, ...)                                                 \
    do {                                                                           \
        double t0_ = tu_now();                                                     \
        for (;;) {                                                                 \
            (flag) = -1;                                                           \
            CHECK_RC(call, FMPL_SUCCESS, __VA_ARGS__);                             \
            CHECK((flag) == 0 || (flag) == 1, "flag set to %d", (flag));           \
            if ((flag) == 1)                                                       \
                break;                                                             \
            if (tu_now() - t0_ > TU_POLL_LIMIT_S) {                                \
                char m_[512];                                                      \
                snprintf(m_, sizeof m_, __VA_ARGS__);                              \
                TU_FAIL("%s still reports flag 0 after %.0f s: %s", #call,         \
                        TU_POLL_LIMIT_S, m_);                                      \
            }                                                                      \
        }                                                                          \
    } while (0)

static void ctrl_send(int peer)
{
    char c = 0;
    CALL(fmpl_send(&c, 0, peer, CTRL, FMPL_COMM_WORLD));
}

static void ctrl_recv(int peer)
{
    char c = 0;
    fmpl_status st;
    CALL(fmpl_recv(&c, 0, peer, CTRL, FMPL_COMM_WORLD, &st));
    CHECK_STATUS(st, peer, CTRL, 0, FMPL_SUCCESS, "control message");
}

/* ------------------------------------------------------------------ a */

static int a_index(int k) { return (k * 13 + 5) % 60; }
static long a_size(int k) { return k == 3 ? 200000 : k * 1000 + 3; }
#define A_ROUNDS 8
static const int a2_idx[6] = {2, 9, 17, 33, 40, 58};
static long a2_size(int j) { return 500L * (j + 1) + j + (j == 4 ? 100000 : 0); }

/* The sequential part relies on the default synchronous mode (no spool set):
 * send k cannot complete before receive k is posted, so receive k gets it. */
static void sub_any_tag(int peer, int snd)
{
    tu_sub = "a: FMPL_TAG_ANY, sequential";
    tu_buf b;
    tu_buf_get(&b, TU_HEAP, 200000, NULL);
    for (int k = 0; k < A_ROUNDS; k++) {
        int idx = a_index(k);
        long sz = a_size(k);
        if (snd) {
            tu_fill(b.p, sz, tu_seed(me, idx, sz, 100 + k));
            CALL(fmpl_send(b.p, sz, peer, idx, FMPL_COMM_WORLD));
        } else {
            fmpl_status st;
            tu_buf_arm(&b);
            if (k % 2 == 0) {
                CALL(fmpl_recv(b.p, b.cap, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
            } else {
                CALL(fmpl_irecv(b.p, b.cap, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD));
                CALL(fmpl_irecv_wait(peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
            }
            CHECK_STATUS(st, peer, idx, sz, FMPL_SUCCESS,
                         "round %d: TAG_ANY receive of the send on index %d", k, idx);
            CHECK_PATTERN(b.p, sz, tu_seed(peer, idx, sz, 100 + k),
                          "round %d: data of the send on index %d", k, idx);
            CHECK_BUF_UNTOUCHED_FROM(&b, sz, "round %d", k);
        }
    }
    tu_buf_put(&b);
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);

    tu_sub = "a: FMPL_TAG_ANY, six sends outstanding";
    if (snd) {
        tu_buf sb[6];
        for (int j = 0; j < 6; j++) {
            tu_buf_get(&sb[j], j % 2 ? TU_SHARED : TU_HEAP, a2_size(j), NULL);
            tu_fill(sb[j].p, a2_size(j), tu_seed(me, a2_idx[j], a2_size(j), 200));
            CALL(fmpl_isend(sb[j].p, a2_size(j), peer, a2_idx[j], FMPL_COMM_WORLD));
        }
        for (int j = 5; j >= 0; j--) {
            CALL(fmpl_isend_wait(peer, a2_idx[j], FMPL_COMM_WORLD));
            tu_buf_put(&sb[j]);
        }
    } else {
        tu_buf rb;
        tu_buf_get(&rb, TU_SHARED, a2_size(4), NULL);
        int seen[6] = {0};
        for (int k = 0; k < 6; k++) {
            fmpl_status st;
            tu_buf_arm(&rb);
            CALL(fmpl_recv(rb.p, rb.cap, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
            int j = -1;
            for (int t = 0; t < 6; t++)
                if (a2_idx[t] == st.index)
                    j = t;
            CHECK(j >= 0, "receive %d: status.index %d is none of the indices sent on "
                  "(2, 9, 17, 33, 40, 58)", k, st.index);
            CHECK(!seen[j], "receive %d: index %d delivered twice", k, st.index);
            seen[j] = 1;
            CHECK_STATUS(st, peer, a2_idx[j], a2_size(j), FMPL_SUCCESS, "receive %d", k);
            CHECK_PATTERN(rb.p, a2_size(j), tu_seed(peer, a2_idx[j], a2_size(j), 200),
                          "receive %d (index %d)", k, a2_idx[j]);
            CHECK_BUF_UNTOUCHED_FROM(&rb, a2_size(j), "receive %d", k);
        }
        tu_buf_put(&rb);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ b */

static void sub_any_and_specific(int peer, int snd)
{
    const long s1 = 1000, s2 = 70000;
    for (int round = 0; round < 2; round++) {
        tu_sub = round == 0 ? "b: irecv idx 0 + irecv ANY (posted in that order)"
                            : "b: irecv ANY + irecv idx 0 (posted in that order)";
        uint64_t seed1 = tu_seed(snd ? me : peer, 0, s1, 300 + 2 * round);
        uint64_t seed2 = tu_seed(snd ? me : peer, 0, s2, 301 + 2 * round);
        if (snd) {
            tu_buf m;
            tu_buf_get(&m, TU_HEAP, s2, NULL);
            ctrl_recv(peer); /* both receives are posted */
            tu_fill(m.p, s1, seed1);
            CALL(fmpl_send(m.p, s1, peer, 0, FMPL_COMM_WORLD));
            tu_fill(m.p, s2, seed2);
            CALL(fmpl_send(m.p, s2, peer, 0, FMPL_COMM_WORLD));
            tu_buf_put(&m);
        } else {
            tu_buf A, B; /* A: index 0, B: ANY */
            tu_buf_get(&A, TU_HEAP, s2, NULL);
            tu_buf_get(&B, TU_SHARED, s2, NULL);
            tu_buf_arm(&A);
            tu_buf_arm(&B);
            fmpl_status sa, sb;
            if (round == 0) {
                CALL(fmpl_irecv(A.p, s2, peer, 0, FMPL_COMM_WORLD));
                CALL(fmpl_irecv(B.p, s2, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD));
            } else {
                CALL(fmpl_irecv(B.p, s2, peer, FMPL_TAG_ANY, FMPL_COMM_WORLD));
                CALL(fmpl_irecv(A.p, s2, peer, 0, FMPL_COMM_WORLD));
            }
            ctrl_send(peer);
            if (round == 0) {
                CALL(fmpl_irecv_wait(peer, 0, FMPL_COMM_WORLD, &sa));
                CALL(fmpl_irecv_wait(peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &sb));
            } else {
                CALL(fmpl_irecv_wait(peer, FMPL_TAG_ANY, FMPL_COMM_WORLD, &sb));
                CALL(fmpl_irecv_wait(peer, 0, FMPL_COMM_WORLD, &sa));
            }
            CHECK(sa.size == s1 || sa.size == s2,
                  "index-0 receive: size %ld is neither message (%ld, %ld)", sa.size, s1, s2);
            long sza = sa.size, szb = sa.size == s1 ? s2 : s1;
            CHECK_STATUS(sa, peer, 0, sza, FMPL_SUCCESS, "index-0 receive");
            CHECK_STATUS(sb, peer, 0, szb, FMPL_SUCCESS,
                         "TAG_ANY receive (the index-0 receive got the %ld-byte message)", sza);
            CHECK_PATTERN(A.p, sza, sza == s1 ? seed1 : seed2,
                          "index-0 receive, got the %ld-byte message", sza);
            CHECK_PATTERN(B.p, szb, szb == s1 ? seed1 : seed2,
                          "TAG_ANY receive, got the %ld-byte message", szb);
            CHECK_BUF_UNTOUCHED_FROM(&A, sza, "index-0 receive");
            CHECK_BUF_UNTOUCHED_FROM(&B, szb, "TAG_ANY receive");
            tu_buf_put(&A);
            tu_buf_put(&B);
        }
        tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
    }
}

/* ------------------------------------------------------------------ c */

static void sub_test_calls(int peer, int snd)
{
    const int X = 3, Y = 4;
    const long szX = 5000, szY = 300000;
    tu_sub = "c: isend/irecv before the peer, test and wait";
    if (snd) {
        tu_buf sx, sy;
        tu_buf_get(&sx, TU_HEAP, szX, NULL);
        tu_buf_get(&sy, TU_SHARED, szY, NULL);
        tu_fill(sx.p, szX, tu_seed(me, X, szX, 400));
        CALL(fmpl_isend(sx.p, szX, peer, X, FMPL_COMM_WORLD));
        for (int i = 0; i < 3; i++) {
            int f = -1;
            CALL(fmpl_isend_test(peer, X, FMPL_COMM_WORLD, &f));
            CHECK_EQ(f, 0, "isend_test on index %d before the receiver posted it "
                     "(it waits for our control message)", X);
        }
        ctrl_send(peer);
        CALL(fmpl_isend_wait(peer, X, FMPL_COMM_WORLD));
        CHECK_RC(fmpl_isend_wait(peer, X, FMPL_COMM_WORLD), FMPL_ERR_NOT_PENDING,
                 "second isend_wait on a completed send");
        ctrl_recv(peer);
        tu_fill(sy.p, szY, tu_seed(me, Y, szY, 401));
        CALL(fmpl_isend(sy.p, szY, peer, Y, FMPL_COMM_WORLD));
        int f = 0;
        POLL_TEST(fmpl_isend_test(peer, Y, FMPL_COMM_WORLD, &f), f,
                  "isend_test on index %d, receive posted", Y);
        CHECK_RC(fmpl_isend_test(peer, Y, FMPL_COMM_WORLD, &f), FMPL_ERR_NOT_PENDING,
                 "isend_test after it reported completion");
        CHECK_RC(fmpl_isend_wait(peer, Y, FMPL_COMM_WORLD), FMPL_ERR_NOT_PENDING,
                 "isend_wait after isend_test reported completion");
        /* the index is free: reuse it at once */
        tu_fill(sy.p, szY, tu_seed(me, Y, szY, 402));
        CALL(fmpl_send(sy.p, szY, peer, Y, FMPL_COMM_WORLD));
        tu_buf_put(&sx);
        tu_buf_put(&sy);
    } else {
        tu_buf rx, ry;
        tu_buf_get(&rx, TU_SHARED, szX, NULL);
        tu_buf_get(&ry, TU_HEAP, szY, NULL);
        tu_buf_arm(&rx);
        tu_buf_arm(&ry);
        fmpl_status st;
        int f = -1;
        CALL(fmpl_irecv(ry.p, szY, peer, Y, FMPL_COMM_WORLD));
        CALL(fmpl_irecv_test(peer, Y, FMPL_COMM_WORLD, &f, &st));
        CHECK_EQ(f, 0, "irecv_test on index %d before the sender sent on it", Y);
        ctrl_recv(peer);
        CALL(fmpl_irecv(rx.p, szX, peer, X, FMPL_COMM_WORLD));
        POLL_TEST(fmpl_irecv_test(peer, X, FMPL_COMM_WORLD, &f, &st), f,
                  "irecv_test on index %d, send pending at the sender", X);
        CHECK_STATUS(st, peer, X, szX, FMPL_SUCCESS, "irecv_test status, index %d", X);
        CHECK_PATTERN(rx.p, szX, tu_seed(peer, X, szX, 400), "index %d", X);
        CHECK_BUF_UNTOUCHED_FROM(&rx, szX, "index %d", X);
        CHECK_RC(fmpl_irecv_test(peer, X, FMPL_COMM_WORLD, &f, &st), FMPL_ERR_NOT_PENDING,
                 "irecv_test after it reported completion");
        f = -1;
        CALL(fmpl_irecv_test(peer, Y, FMPL_COMM_WORLD, &f, NULL));
        CHECK_EQ(f, 0, "irecv_test on index %d: the sender has not sent yet", Y);
        ctrl_send(peer);
        POLL_TEST(fmpl_irecv_test(peer, Y, FMPL_COMM_WORLD, &f, &st), f,
                  "irecv_test on index %d", Y);
        CHECK_STATUS(st, peer, Y, szY, FMPL_SUCCESS, "irecv_test status, index %d", Y);
        CHECK_PATTERN(ry.p, szY, tu_seed(peer, Y, szY, 401), "index %d", Y);
        CHECK_BUF_UNTOUCHED_FROM(&ry, szY, "index %d", Y);
        CHECK_RC(fmpl_irecv_wait(peer, Y, FMPL_COMM_WORLD, &st), FMPL_ERR_NOT_PENDING,
                 "irecv_wait after irecv_test reported completion");
        tu_buf_arm(&ry);
        CALL(fmpl_recv(ry.p, szY, peer, Y, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, Y, szY, FMPL_SUCCESS, "reuse of index %d", Y);
        CHECK_PATTERN(ry.p, szY, tu_seed(peer, Y, szY, 402), "reuse of index %d", Y);
        tu_buf_put(&rx);
        tu_buf_put(&ry);
    }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ d */

#define D_K 60
static long d_size(int i) { return i % 10 == 7 ? 100000 + i : 1 + (i * 977) % 5000; }

static void sub_many_outstanding(int peer, int snd)
{
    for (int round = 0; round < 2; round++) {
        tu_sub = round == 0 ? "d: 60 indices outstanding, waits in reverse order"
                            : "d: 60 indices outstanding, shuffled sends, forward waits";
        tu_buf b[D_K];
        int order[D_K];
        for (int i = 0; i < D_K; i++) {
            tu_buf_get(&b[i], (i + round) % 2 ? TU_SHARED : TU_HEAP, d_size(i), NULL);
            if (snd)
                tu_fill(b[i].p, d_size(i), tu_seed(me, i, d_size(i), 500 + round));
            else
                tu_buf_arm(&b[i]);
        }
        if (snd) {
            tu_shuffle(order, D_K, 77 + (uint64_t)round);
            for (int k = 0; k < D_K; k++) {
                int i = round == 0 ? k : order[k];
                CALL(fmpl_isend(b[i].p, d_size(i), peer, i, FMPL_COMM_WORLD));
            }
            for (int i = D_K - 1; i >= 0; i--)
                CHECK_RC(fmpl_isend_wait(peer, i, FMPL_COMM_WORLD), FMPL_SUCCESS,
                         "isend_wait index %d", i);
        } else {
            for (int k = 0; k < D_K; k++) {
                int i = round == 0 ? k : D_K - 1 - k;
                CALL(fmpl_irecv(b[i].p, d_size(i), peer, i, FMPL_COMM_WORLD));
            }
            for (int k = 0; k < D_K; k++) {
                int i = round == 0 ? D_K - 1 - k : k;
                fmpl_status st;
                CALL(fmpl_irecv_wait(peer, i, FMPL_COMM_WORLD, &st));
                CHECK_STATUS(st, peer, i, d_size(i), FMPL_SUCCESS, "index %d", i);
                CHECK_PATTERN(b[i].p, d_size(i), tu_seed(peer, i, d_size(i), 500 + round),
                              "index %d", i);
                CHECK_BUF_UNTOUCHED_FROM(&b[i], d_size(i), "index %d", i);
            }
        }
        for (int i = 0; i < D_K; i++)
            tu_buf_put(&b[i]);
        tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
    }
}

/* ------------------------------------------------------------------ e */

static void sub_buffer_reuse(int peer, int snd)
{
    static const long szs[] = {8, 65536, 1L << 20, 4L << 20};
    static const char *const modes[] = {"receiver late", "receives pre-posted, waited late",
                                        "isend + isend_wait"};
    long c = 0;
    for (int mode = 0; mode < 3; mode++)
        for (int si = 0; si < 4; si++)
            for (int kind = TU_SHARED; kind <= TU_HEAP; kind++, c++) {
                long sz = szs[si];
                char what[160];
                snprintf(what, sizeof what, "e: buffer reuse after send returns: %s, %ld B, %s",
                         modes[mode], sz, tu_kind_names[kind]);
                tu_sub = what;
                uint64_t sa = tu_seed(snd ? me : peer, 5, sz, 600 + c);
                uint64_t sb = tu_seed(snd ? me : peer, 6, sz, 700 + c);
                if (snd) {
                    tu_buf m;
                    tu_buf_get(&m, kind, sz, NULL);
                    if (mode == 1)
                        ctrl_recv(peer);
                    tu_fill(m.p, sz, sa);
                    if (mode == 2) {
                        CALL(fmpl_isend(m.p, sz, peer, 5, FMPL_COMM_WORLD));
                        CALL(fmpl_isend_wait(peer, 5, FMPL_COMM_WORLD));
                    } else {
                        CALL(fmpl_send(m.p, sz, peer, 5, FMPL_COMM_WORLD));
                    }
                    tu_fill(m.p, sz, sb);
                    if (mode == 2) {
                        CALL(fmpl_isend(m.p, sz, peer, 6, FMPL_COMM_WORLD));
                        CALL(fmpl_isend_wait(peer, 6, FMPL_COMM_WORLD));
                    } else {
                        CALL(fmpl_send(m.p, sz, peer, 6, FMPL_COMM_WORLD));
                    }
                    tu_fill(m.p, sz, 0xdeadbeefull); /* clobber */
                    tu_buf_put(&m);
                } else {
                    tu_buf r5, r6;
                    tu_buf_get(&r5, kind == TU_SHARED ? TU_HEAP : TU_SHARED, sz, NULL);
                    tu_buf_get(&r6, kind, sz, NULL);
                    tu_buf_arm(&r5);
                    tu_buf_arm(&r6);
                    fmpl_status s5, s6;
                    if (mode == 1) {
                        CALL(fmpl_irecv(r5.p, sz, peer, 5, FMPL_COMM_WORLD));
                        CALL(fmpl_irecv(r6.p, sz, peer, 6, FMPL_COMM_WORLD));
                        ctrl_send(peer);
                        tu_sleep_ms(5);
                        CALL(fmpl_irecv_wait(peer, 5, FMPL_COMM_WORLD, &s5));
                        CALL(fmpl_irecv_wait(peer, 6, FMPL_COMM_WORLD, &s6));
                    } else {
                        if (si == 0)
                            tu_sleep_ms(5);
                        CALL(fmpl_recv(r5.p, sz, peer, 5, FMPL_COMM_WORLD, &s5));
                        CALL(fmpl_recv(r6.p, sz, peer, 6, FMPL_COMM_WORLD, &s6));
                    }
                    CHECK_STATUS(s5, peer, 5, sz, FMPL_SUCCESS, "first message");
                    CHECK_STATUS(s6, peer, 6, sz, FMPL_SUCCESS, "second message");
                    CHECK_PATTERN(r5.p, sz, sa, "first message (sent before the buffer was "
                                  "overwritten)");
                    CHECK_PATTERN(r6.p, sz, sb, "second message (sent before the buffer was "
                                  "clobbered)");
                    tu_buf_put(&r5);
                    tu_buf_put(&r6);
                }
                tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
            }
}

/* ------------------------------------------------------------------ f */

static void sub_exchange(int peer)
{
    static const long szs[] = {8, 100000, 2L << 20};
    static const char *const vars[] = {"isend; recv; isend_wait", "isend; irecv; irecv_wait; isend_wait",
                                       "irecv; isend; isend_wait; irecv_wait"};
    for (int v = 0; v < 3; v++)
        for (int si = 0; si < 3; si++) {
            long sz = szs[si];
            char what[160];
            snprintf(what, sizeof what, "f: simultaneous exchange, %s, %ld B", vars[v], sz);
            tu_sub = what;
            tu_buf s, r;
            tu_buf_get(&s, si % 2 ? TU_HEAP : TU_SHARED, sz, NULL);
            tu_buf_get(&r, si % 2 ? TU_SHARED : TU_HEAP, sz, NULL);
            tu_fill(s.p, sz, tu_seed(me, 20, sz, 800 + v));
            tu_buf_arm(&r);
            fmpl_status st;
            if (v == 0) {
                CALL(fmpl_isend(s.p, sz, peer, 20, FMPL_COMM_WORLD));
                CALL(fmpl_recv(r.p, sz, peer, 20, FMPL_COMM_WORLD, &st));
                CALL(fmpl_isend_wait(peer, 20, FMPL_COMM_WORLD));
            } else if (v == 1) {
                CALL(fmpl_isend(s.p, sz, peer, 20, FMPL_COMM_WORLD));
                CALL(fmpl_irecv(r.p, sz, peer, 20, FMPL_COMM_WORLD));
                CALL(fmpl_irecv_wait(peer, 20, FMPL_COMM_WORLD, &st));
                CALL(fmpl_isend_wait(peer, 20, FMPL_COMM_WORLD));
            } else {
                CALL(fmpl_irecv(r.p, sz, peer, 20, FMPL_COMM_WORLD));
                CALL(fmpl_isend(s.p, sz, peer, 20, FMPL_COMM_WORLD));
                CALL(fmpl_isend_wait(peer, 20, FMPL_COMM_WORLD));
                CALL(fmpl_irecv_wait(peer, 20, FMPL_COMM_WORLD, &st));
            }
            CHECK_STATUS(st, peer, 20, sz, FMPL_SUCCESS, "exchange");
            CHECK_PATTERN(r.p, sz, tu_seed(peer, 20, sz, 800 + v), "exchange");
            CHECK_BUF_UNTOUCHED_FROM(&r, sz, "exchange");
            tu_buf_put(&s);
            tu_buf_put(&r);
        }
    tu_pair_sync(peer, SYNC, FMPL_COMM_WORLD);
}

/* ------------------------------------------------------------------ g */

static long g_size(int src, int dst)
{
    return 100 + src * 1000 + dst * 10 + ((src + dst) % 3 == 0 ? 150000 : 0);
}

static void sub_all_to_all_same_index(void)
{
    tu_sub = "g: every rank to every other on index 7 at once";
    tu_buf *s = calloc((size_t)n, sizeof *s), *r = calloc((size_t)n, sizeof *r);
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        tu_buf_get(&r[p], p % 2 ? TU_HEAP : TU_SHARED, g_size(p, me), NULL);
        tu_buf_arm(&r[p]);
        CALL(fmpl_irecv(r[p].p, g_size(p, me), p, 7, FMPL_COMM_WORLD));
    }
    for (int k = 1; k < n; k++) {
        int p = (me + k) % n;
        tu_buf_get(&s[p], k % 2 ? TU_SHARED : TU_HEAP, g_size(me, p), NULL);
        tu_fill(s[p].p, g_size(me, p), tu_seed(me, 7, g_size(me, p), 900 + p));
        CALL(fmpl_isend(s[p].p, g_size(me, p), p, 7, FMPL_COMM_WORLD));
    }
    for (int p = 0; p < n; p++) {
        if (p == me)
            continue;
        fmpl_status st;
        CALL(fmpl_irecv_wait(p, 7, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, p, 7, g_size(p, me), FMPL_SUCCESS, "from rank %d", p);
        CHECK_PATTERN(r[p].p, g_size(p, me), tu_seed(p, 7, g_size(p, me), 900 + me),
                      "from rank %d", p);
        CHECK_BUF_UNTOUCHED_FROM(&r[p], g_size(p, me), "from rank %d", p);
    }
    for (int p = n - 1; p >= 0; p--) {
        if (p == me)
            continue;
        CHECK_RC(fmpl_isend_wait(p, 7, FMPL_COMM_WORLD), FMPL_SUCCESS, "to rank %d", p);
    }
    for (int p = 0; p < n; p++)
        if (p != me) {
            tu_buf_put(&s[p]);
            tu_buf_put(&r[p]);
        }
    free(s);
    free(r);
}

/* ------------------------------------------------------------------ h */

static void sub_self(void)
{
    static const long szs[] = {1000, 300000};
    for (int si = 0; si < 2; si++) {
        long sz = szs[si];
        tu_sub = "h: message to self, irecv + send + irecv_wait";
        tu_buf s, r;
        fmpl_status st;
        tu_buf_get(&s, TU_HEAP, sz, NULL);
        tu_buf_get(&r, TU_SHARED, sz, NULL);
        tu_fill(s.p, sz, tu_seed(me, 9, sz, 1000));
        tu_buf_arm(&r);
        CALL(fmpl_irecv(r.p, sz, me, 9, FMPL_COMM_WORLD));
        CALL(fmpl_send(s.p, sz, me, 9, FMPL_COMM_WORLD));
        CALL(fmpl_irecv_wait(me, 9, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, me, 9, sz, FMPL_SUCCESS, "self");
        CHECK_PATTERN(r.p, sz, tu_seed(me, 9, sz, 1000), "self, %ld B", sz);
        CHECK_BUF_UNTOUCHED_FROM(&r, sz, "self");

        tu_sub = "h: message to self, isend + recv + isend_wait";
        tu_fill(s.p, sz, tu_seed(me, 10, sz, 1001));
        tu_buf_arm(&r);
        CALL(fmpl_isend(s.p, sz, me, 10, FMPL_COMM_WORLD));
        CALL(fmpl_recv(r.p, sz, me, 10, FMPL_COMM_WORLD, &st));
        CALL(fmpl_isend_wait(me, 10, FMPL_COMM_WORLD));
        CHECK_STATUS(st, me, 10, sz, FMPL_SUCCESS, "self");
        CHECK_PATTERN(r.p, sz, tu_seed(me, 10, sz, 1001), "self, %ld B", sz);
        tu_buf_put(&s);
        tu_buf_put(&r);
    }
}

int main(int argc, char **argv)
{
    int areas = argc > 1 && strcmp(argv[1], "areas") == 0;
    void *ma = NULL, *fa = NULL;
    if (areas) {
        tu_prog = "p2p_semantics(areas)";
        size_t bytes = 0;
        CHECK_RC(fmpl_area_size(COUNT, &bytes), FMPL_SUCCESS,
                 "fmpl_area_size before fmpl_init (a caller needs it to size the areas)");
        CHECK(bytes > 0, "fmpl_area_size(%d) = %zu", COUNT, bytes);
        size_t rounded = (bytes + 63) & ~(size_t)63;
        ma = aligned_alloc(64, rounded);
        fa = aligned_alloc(64, rounded);
        CHECK(ma && fa, "aligned_alloc(64, %zu)", rounded);
        memset(ma, 0xa5, rounded); /* the library must initialise the areas itself */
        memset(fa, 0x5a, rounded);
        tu_init_areas("p2p_semantics(areas)", ma, fa, COUNT);
    } else {
        tu_init("p2p_semantics", COUNT);
    }
    me = tu_rank;
    n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    int peer = me ^ 1;
    for (int pass = 0; pass < 2; pass++) {
        if (peer < n) {
            int snd = (me & 1) == pass; /* pass 0: even ranks send */
            sub_any_tag(peer, snd);
            sub_any_and_specific(peer, snd);
            sub_test_calls(peer, snd);
            sub_many_outstanding(peer, snd);
            sub_buffer_reuse(peer, snd);
            sub_exchange(peer);
        }
        tu_sub = "sync";
        tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    }
    sub_all_to_all_same_index();
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    sub_self();
    tu_sub = "sync";
    tu_p2p_sync_all(SYNC, FMPL_COMM_WORLD);
    tu_finish();
    free(ma); /* the areas belong to FMPL until fmpl_finalize */
    free(fa);
    return 0;
}
