/* errors: every documented error code, provoked on purpose, and the library
 * still working after each one (a normal exchange and a barrier).
 * Run with FMPL_ERRORS_QUIET=1.
 *
 *  before fmpl_init: every call -> FMPL_ERR_NOT_INITIALIZED (fmpl_initialized,
 *    fmpl_finalized, fmpl_area_size, fmpl_error_string work; fmpl_alloc gives
 *    NULL); bad fmpl_init arguments are refused and leave FMPL uninitialised.
 *  fmpl_init twice -> FMPL_ERR_ALREADY_INITIALIZED.
 *  rank -1 / size -> FMPL_ERR_RANK; communicator 42 / FMPL_COMM_NULL / freed
 *    -> FMPL_ERR_COMM; index -2 / count / INT_MAX (and -1 on the send side)
 *    -> FMPL_ERR_INDEX; negative sizes and counts -> FMPL_ERR_SIZE; NULL
 *    buffer with size > 0 -> FMPL_ERR_ARG (NULL with size 0 is fine).
 *  truncation: a receive smaller than the message -> FMPL_ERR_TRUNCATE at the
 *    receiver (status.size = capacity, the first bytes delivered, nothing
 *    past the buffer) AND at the sender; the index is usable again at once.
 *  reuse of an outstanding index (irecv, recv, isend, send) -> FMPL_ERR_BUSY,
 *    with nothing changed: the first operation completes with its own data.
 *  waits and tests with nothing pending -> FMPL_ERR_NOT_PENDING.
 *  NULL or freed operation -> FMPL_ERR_OP; root -1 / size -> FMPL_ERR_ROOT;
 *    fmpl_op_free on a built-in -> FMPL_ERR_OP.
 *  spool arguments; fmpl_error_string on every code: non-NULL and distinct.
 *  after fmpl_finalize: every call -> FMPL_ERR_FINALIZED (fmpl_init too).
 *  (Active messages' and split-phase barriers' own errors: am.c and
 *  barrier_split.c.)
 */
#include "test_util.h"

#include <limits.h>

#define COUNT 64

static int me, n, peer;
static int has_peer;

static void noop_fn(const void *in, void *inout, long count, void *ctx)
{
    (void)in;
    (void)inout;
    (void)count;
    (void)ctx;
}

static void am_noop(const fmpl_am_token *token, const uint64_t *args, int nargs,
                    const void *payload, size_t size, void *ctx)
{
    (void)token, (void)args, (void)nargs, (void)payload, (void)size, (void)ctx;
}

/* Every call with otherwise valid arguments must return `expected`. */
static void every_call_returns(int expected, const char *phase)
{
    char b[64] = {0}, w[64] = {0};
    int x = 0, y = 0;
    fmpl_status st;
    fmpl_comm c = FMPL_COMM_WORLD;
    fmpl_op *op = NULL;
    fmpl_op *builtin = (fmpl_op *)fmpl_isum;
    tu_sub = phase;
#define EXPECT(call) CHECK_RC(call, expected, "%s", phase)
    EXPECT(fmpl_finalize());
    EXPECT(fmpl_comm_rank(FMPL_COMM_WORLD, &x));
    EXPECT(fmpl_comm_size(FMPL_COMM_WORLD, &x));
    EXPECT(fmpl_comm_create(0, &c));
    c = FMPL_COMM_WORLD;
    EXPECT(fmpl_comm_free(&c));
    EXPECT(fmpl_send(b, 8, 0, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_recv(b, 8, 0, 0, FMPL_COMM_WORLD, &st));
    EXPECT(fmpl_isend(b, 8, 0, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_irecv(b, 8, 0, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_isend_wait(0, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_irecv_wait(0, 0, FMPL_COMM_WORLD, &st));
    EXPECT(fmpl_isend_test(0, 0, FMPL_COMM_WORLD, &x));
    EXPECT(fmpl_irecv_test(0, 0, FMPL_COMM_WORLD, &x, &st));
    EXPECT(fmpl_sendbuf_set(w, sizeof w, 0));
    EXPECT(fmpl_sendbuf_check(&x, &y));
    EXPECT(fmpl_send_any(b, 8, 0, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_recv_any(b, 8, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
    EXPECT(fmpl_op_create(noop_fn, 8, NULL, &op));
    EXPECT(fmpl_op_free(&builtin));
    EXPECT(fmpl_barrier(FMPL_COMM_WORLD));
    EXPECT(fmpl_bcast(b, 8, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_reduce(b, 2, fmpl_isum, 0, FMPL_COMM_WORLD, w));
    EXPECT(fmpl_allreduce(b, 2, fmpl_isum, FMPL_COMM_WORLD, w));
    uint64_t args[2] = {1, 2}, flag = 0;
    EXPECT(fmpl_am_register(1, am_noop, NULL));
    EXPECT(fmpl_am_send(0, 1, args, 2, b, 8, FMPL_COMM_WORLD));
    fmpl_am_token tok = {0, FMPL_COMM_WORLD, 0, 0};
    EXPECT(fmpl_am_reply(&tok, 1, args, 2, b, 8));
    EXPECT(fmpl_am_poll(&x));
    EXPECT(fmpl_barrier_start(FMPL_COMM_WORLD, &flag));
    EXPECT(fmpl_barrier_test(&flag, &x));
    EXPECT(fmpl_barrier_wait(&flag));
#undef EXPECT
    CHECK(fmpl_alloc(64) == NULL, "%s: fmpl_alloc must return NULL", phase);
    fmpl_free(NULL);
}

/* A normal exchange with the peer and a barrier: the library still works. */
static void still_works(const char *after)
{
    char sub[200];
    snprintf(sub, sizeof sub, "still works after: %s", after);
    tu_sub = sub;
    static long round;
    round++;
    if (has_peer) {
        unsigned char s[1000], r[1000 + 2 * TU_GUARD];
        tu_buf rb = {.p = r + TU_GUARD, .cap = 1000, .kind = TU_STACK, .base = r};
        tu_fill(s, 1000, tu_seed(me, 1, 1000, round));
        tu_buf_arm(&rb);
        fmpl_status st;
        CALL(fmpl_irecv(rb.p, 1000, peer, 1, FMPL_COMM_WORLD));
        CALL(fmpl_isend(s, 1000, peer, 1, FMPL_COMM_WORLD));
        CALL(fmpl_irecv_wait(peer, 1, FMPL_COMM_WORLD, &st));
        CALL(fmpl_isend_wait(peer, 1, FMPL_COMM_WORLD));
        CHECK_STATUS(st, peer, 1, 1000, FMPL_SUCCESS, "exchange");
        CHECK_PATTERN(rb.p, 1000, tu_seed(peer, 1, 1000, round), "exchange");
        CHECK_BUF_UNTOUCHED_FROM(&rb, 1000, "exchange");
    }
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
}

static void pre_init(void)
{
    int flag = -1;
    tu_sub = "before fmpl_init: state queries";
    CALL(fmpl_initialized(&flag));
    CHECK_EQ(flag, 0, "fmpl_initialized before fmpl_init");
    flag = -1;
    CALL(fmpl_finalized(&flag));
    CHECK_EQ(flag, 0, "fmpl_finalized before fmpl_init");
    size_t bytes = 0;
    CHECK_RC(fmpl_area_size(COUNT, &bytes), FMPL_SUCCESS,
             "fmpl_area_size is needed before fmpl_init to size caller areas");
    CHECK(bytes > 0, "fmpl_area_size(%d) = %zu", COUNT, bytes);
    CHECK_RC(fmpl_area_size(COUNT, NULL), FMPL_ERR_ARG, "fmpl_area_size(count, NULL)");

    every_call_returns(FMPL_ERR_NOT_INITIALIZED, "before fmpl_init");
    CHECK_EQ(fmpl_am_max_payload(), 0, "fmpl_am_max_payload before fmpl_init");

    tu_sub = "before fmpl_init: bad fmpl_init arguments";
    size_t rounded = (bytes + 127) & ~(size_t)63;
    unsigned char *ma = aligned_alloc(64, rounded), *fa = aligned_alloc(64, rounded);
    CHECK(ma && fa, "aligned_alloc");
    CHECK_RC(fmpl_init(ma, NULL, COUNT), FMPL_ERR_ARG, "ma without fa (either both or neither)");
    CHECK_RC(fmpl_init(NULL, fa, COUNT), FMPL_ERR_ARG, "fa without ma (either both or neither)");
    CHECK_RC(fmpl_init(ma + 8, fa + 8, COUNT), FMPL_ERR_ARG, "areas not 64-byte aligned");
    CHECK_RC(fmpl_init(NULL, NULL, -1), FMPL_ERR_SIZE, "negative count");
    flag = -1;
    CALL(fmpl_initialized(&flag));
    CHECK_EQ(flag, 0, "a refused fmpl_init must leave FMPL uninitialised");
    free(ma);
    free(fa);
}

static void bad_ranks(void)
{
    int bad[2] = {-1, n};
    char b[64] = {0};
    fmpl_status st;
    int f;
    for (int k = 0; k < 2; k++) {
        int r = bad[k];
        char sub[64];
        snprintf(sub, sizeof sub, "invalid rank %d", r);
        tu_sub = sub;
#define EXPECT(call) CHECK_RC(call, FMPL_ERR_RANK, "rank %d", r)
        EXPECT(fmpl_send(b, 8, r, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_recv(b, 8, r, 0, FMPL_COMM_WORLD, &st));
        EXPECT(fmpl_isend(b, 8, r, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_irecv(b, 8, r, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_isend_wait(r, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_irecv_wait(r, 0, FMPL_COMM_WORLD, &st));
        EXPECT(fmpl_isend_test(r, 0, FMPL_COMM_WORLD, &f));
        EXPECT(fmpl_irecv_test(r, 0, FMPL_COMM_WORLD, &f, &st));
        EXPECT(fmpl_send_any(b, 8, r, 0, FMPL_COMM_WORLD));
#undef EXPECT
    }
    tu_sub = "NULL output pointers";
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG, "rank pointer NULL");
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG, "size pointer NULL");
    CHECK_RC(fmpl_initialized(NULL), FMPL_ERR_ARG, "flag pointer NULL");
    CHECK_RC(fmpl_finalized(NULL), FMPL_ERR_ARG, "flag pointer NULL");
    still_works("invalid ranks");
}

static void bad_comms(void)
{
    tu_sub = "create and free a communicator";
    fmpl_comm fc;
    CALL(fmpl_comm_create(0, &fc));
    fmpl_comm freed = fc;
    CALL(fmpl_comm_free(&fc));
    fmpl_comm bad[3] = {42, FMPL_COMM_NULL, freed};
    const char *names[3] = {"42", "FMPL_COMM_NULL", "a freed communicator"};
    char b[64] = {0}, w[64] = {0};
    fmpl_status st;
    int f, x;
    for (int k = 0; k < 3; k++) {
        fmpl_comm c = bad[k];
        char sub[96];
        snprintf(sub, sizeof sub, "invalid communicator %s (%d)", names[k], c);
        tu_sub = sub;
#define EXPECT(call) CHECK_RC(call, FMPL_ERR_COMM, "communicator %s", names[k])
        EXPECT(fmpl_comm_rank(c, &x));
        EXPECT(fmpl_comm_size(c, &x));
        EXPECT(fmpl_send(b, 8, 0, 0, c));
        EXPECT(fmpl_recv(b, 8, 0, 0, c, &st));
        EXPECT(fmpl_isend(b, 8, 0, 0, c));
        EXPECT(fmpl_irecv(b, 8, 0, 0, c));
        EXPECT(fmpl_isend_wait(0, 0, c));
        EXPECT(fmpl_irecv_wait(0, 0, c, &st));
        EXPECT(fmpl_isend_test(0, 0, c, &f));
        EXPECT(fmpl_irecv_test(0, 0, c, &f, &st));
        EXPECT(fmpl_send_any(b, 8, 0, 0, c));
        EXPECT(fmpl_recv_any(b, 8, FMPL_TAG_ANY, c, &st));
        EXPECT(fmpl_barrier(c));
        EXPECT(fmpl_bcast(b, 8, 0, c));
        EXPECT(fmpl_reduce(b, 2, fmpl_isum, 0, c, w));
        EXPECT(fmpl_allreduce(b, 2, fmpl_isum, c, w));
        fmpl_comm copy = c;
        EXPECT(fmpl_comm_free(&copy));
#undef EXPECT
    }
    tu_sub = "fmpl_comm_free(FMPL_COMM_WORLD), NULL handles, bad key";
    fmpl_comm wc = FMPL_COMM_WORLD;
    CHECK_RC(fmpl_comm_free(&wc), FMPL_ERR_COMM, "freeing FMPL_COMM_WORLD");
    CHECK_EQ(wc, FMPL_COMM_WORLD, "a refused fmpl_comm_free must not change the handle");
    CHECK_RC(fmpl_comm_free(NULL), FMPL_ERR_ARG, "fmpl_comm_free(NULL)");
    CHECK_RC(fmpl_comm_create(0, NULL), FMPL_ERR_ARG, "fmpl_comm_create(key, NULL) on every rank");
    fmpl_comm c2;
    CHECK_RC(fmpl_comm_create(-5, &c2), FMPL_ERR_ARG, "key -5 (neither >= 0 nor FMPL_KEY_NONE) "
             "on every rank");
    still_works("invalid communicators");
}

static void bad_indices(void)
{
    int other = (me + 1) % n;
    char b[64] = {0};
    fmpl_status st;
    int f;
    int sbad[4] = {-1, -2, COUNT, INT_MAX}; /* send side: -1 (TAG_ANY) is invalid too */
    for (int k = 0; k < 4; k++) {
        int i = sbad[k];
        char sub[64];
        snprintf(sub, sizeof sub, "invalid send-side index %d", i);
        tu_sub = sub;
#define EXPECT(call) CHECK_RC(call, FMPL_ERR_INDEX, "index %d (count %d)", i, COUNT)
        EXPECT(fmpl_send(b, 8, other, i, FMPL_COMM_WORLD));
        EXPECT(fmpl_isend(b, 8, other, i, FMPL_COMM_WORLD));
        EXPECT(fmpl_isend_wait(other, i, FMPL_COMM_WORLD));
        EXPECT(fmpl_isend_test(other, i, FMPL_COMM_WORLD, &f));
        EXPECT(fmpl_send_any(b, 8, other, i, FMPL_COMM_WORLD));
        if (i != -1) {
            EXPECT(fmpl_recv(b, 8, other, i, FMPL_COMM_WORLD, &st));
            EXPECT(fmpl_irecv(b, 8, other, i, FMPL_COMM_WORLD));
            EXPECT(fmpl_irecv_wait(other, i, FMPL_COMM_WORLD, &st));
            EXPECT(fmpl_irecv_test(other, i, FMPL_COMM_WORLD, &f, &st));
            EXPECT(fmpl_recv_any(b, 8, i, FMPL_COMM_WORLD, &st));
        }
#undef EXPECT
    }
    still_works("invalid indices");
}

static void bad_sizes(void)
{
    char b[64] = {0}, w[64] = {0};
    fmpl_status st;
    int other = (me + 1) % n;
    long bad[2] = {-1, LONG_MIN};
    for (int k = 0; k < 2; k++) {
        long s = bad[k];
        char sub[64];
        snprintf(sub, sizeof sub, "negative size %ld", s);
        tu_sub = sub;
#define EXPECT(call) CHECK_RC(call, FMPL_ERR_SIZE, "size/count %ld", s)
        EXPECT(fmpl_send(b, s, other, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_recv(b, s, other, 0, FMPL_COMM_WORLD, &st));
        EXPECT(fmpl_isend(b, s, other, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_irecv(b, s, other, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_send_any(b, s, other, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_recv_any(b, s, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
        EXPECT(fmpl_bcast(b, s, 0, FMPL_COMM_WORLD));
        EXPECT(fmpl_reduce(b, s, fmpl_isum, 0, FMPL_COMM_WORLD, w));
        EXPECT(fmpl_allreduce(b, s, fmpl_isum, FMPL_COMM_WORLD, w));
        EXPECT(fmpl_sendbuf_set(w, s, 0));
#undef EXPECT
    }
    still_works("negative sizes");
}

static void null_buffers(void)
{
    char b[64] = {0}, w[64] = {0};
    fmpl_status st;
    int other = (me + 1) % n;
    tu_sub = "NULL buffer with size > 0";
#define EXPECT(call) CHECK_RC(call, FMPL_ERR_ARG, "NULL buffer, size 8")
    EXPECT(fmpl_send(NULL, 8, other, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_recv(NULL, 8, other, 0, FMPL_COMM_WORLD, &st));
    EXPECT(fmpl_isend(NULL, 8, other, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_irecv(NULL, 8, other, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_send_any(NULL, 8, other, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_recv_any(NULL, 8, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st));
    EXPECT(fmpl_bcast(NULL, 8, 0, FMPL_COMM_WORLD));
    EXPECT(fmpl_reduce(NULL, 2, fmpl_isum, 0, FMPL_COMM_WORLD, w));
    EXPECT(fmpl_allreduce(NULL, 2, fmpl_isum, FMPL_COMM_WORLD, w));
    EXPECT(fmpl_reduce(b, 2, fmpl_isum, 0, FMPL_COMM_WORLD, NULL));
    EXPECT(fmpl_allreduce(b, 2, fmpl_isum, FMPL_COMM_WORLD, NULL));
    EXPECT(fmpl_sendbuf_set(NULL, 100, 0));
    EXPECT(fmpl_sendbuf_set(w, sizeof w, -5)); /* timeout: >= 0 or FMPL_TIMEOUT_NONE */
#undef EXPECT
    CALL(fmpl_sendbuf_check(NULL, NULL));

    tu_sub = "NULL buffer with size 0 is valid";
    if (has_peer) {
        fmpl_status s2;
        CALL(fmpl_irecv(NULL, 0, peer, 2, FMPL_COMM_WORLD));
        CALL(fmpl_isend(NULL, 0, peer, 2, FMPL_COMM_WORLD));
        CALL(fmpl_irecv_wait(peer, 2, FMPL_COMM_WORLD, &s2));
        CALL(fmpl_isend_wait(peer, 2, FMPL_COMM_WORLD));
        CHECK_STATUS(s2, peer, 2, 0, FMPL_SUCCESS, "empty message, NULL buffers");
    }
    CALL(fmpl_bcast(NULL, 0, 0, FMPL_COMM_WORLD));
    CALL(fmpl_allreduce(NULL, 0, fmpl_dsum, FMPL_COMM_WORLD, NULL));
    CALL(fmpl_reduce(NULL, 0, fmpl_dsum, 0, FMPL_COMM_WORLD, NULL));
    still_works("NULL buffers");
}

/* ----------------------------------------------------------- truncate */

static void truncation(int recv_side)
{
    static const long msg[2] = {100, 1L << 20}, cap[2] = {60, 600000};
    for (int k = 0; k < 2; k++)
        for (int nb = 0; nb < 2; nb++) {
            char sub[160];
            snprintf(sub, sizeof sub, "truncation: %ld B message into %ld B, %s", msg[k], cap[k],
                     nb ? "isend/irecv" : "send/recv");
            tu_sub = sub;
            uint64_t seed = tu_seed(recv_side ? peer : me, 11, msg[k], 10 + nb);
            if (recv_side) {
                tu_buf rb;
                tu_buf_get(&rb, nb ? TU_SHARED : TU_HEAP, cap[k], NULL);
                tu_buf_arm(&rb);
                fmpl_status st;
                memset(&st, 0xff, sizeof st);
                if (nb) {
                    CALL(fmpl_irecv(rb.p, cap[k], peer, 11, FMPL_COMM_WORLD));
                    CHECK_RC(fmpl_irecv_wait(peer, 11, FMPL_COMM_WORLD, &st), FMPL_ERR_TRUNCATE,
                             "receiver of a truncated message");
                } else {
                    CHECK_RC(fmpl_recv(rb.p, cap[k], peer, 11, FMPL_COMM_WORLD, &st),
                             FMPL_ERR_TRUNCATE, "receiver of a truncated message");
                }
                CHECK_STATUS(st, peer, 11, cap[k], FMPL_ERR_TRUNCATE,
                             "status of a truncated receive: size = bytes delivered");
                CHECK_PATTERN(rb.p, cap[k], seed, "the first %ld bytes of the truncated message",
                              cap[k]);
                CHECK_BUF_UNTOUCHED_FROM(&rb, cap[k], "truncated receive");
                /* the index is free again */
                tu_buf_arm(&rb);
                CALL(fmpl_recv(rb.p, cap[k], peer, 11, FMPL_COMM_WORLD, &st));
                CHECK_STATUS(st, peer, 11, cap[k], FMPL_SUCCESS, "next message on the index");
                CHECK_PATTERN(rb.p, cap[k], tu_seed(peer, 11, cap[k], 20), "next message");
                tu_buf_put(&rb);
            } else {
                tu_buf sb;
                tu_buf_get(&sb, nb ? TU_HEAP : TU_SHARED, msg[k], NULL);
                tu_fill(sb.p, msg[k], seed);
                if (nb) {
                    CALL(fmpl_isend(sb.p, msg[k], peer, 11, FMPL_COMM_WORLD));
                    CHECK_RC(fmpl_isend_wait(peer, 11, FMPL_COMM_WORLD), FMPL_ERR_TRUNCATE,
                             "sender of a truncated message (FMPL reports truncation to both "
                             "sides)");
                } else {
                    CHECK_RC(fmpl_send(sb.p, msg[k], peer, 11, FMPL_COMM_WORLD),
                             FMPL_ERR_TRUNCATE,
                             "sender of a truncated message (FMPL reports truncation to both "
                             "sides)");
                }
                tu_fill(sb.p, cap[k], tu_seed(me, 11, cap[k], 20));
                CALL(fmpl_send(sb.p, cap[k], peer, 11, FMPL_COMM_WORLD));
                tu_buf_put(&sb);
            }
        }

    static const long amsg[2] = {100, 200000}, acap[2] = {60, 100000};
    for (int k = 0; k < 2; k++) {
        char sub[160];
        snprintf(sub, sizeof sub, "truncation, any-source domain: %ld B into %ld B", amsg[k],
                 acap[k]);
        tu_sub = sub;
        uint64_t seed = tu_seed(recv_side ? peer : me, 12, amsg[k], 30);
        if (recv_side) {
            tu_buf rb;
            tu_buf_get(&rb, TU_HEAP, acap[k], NULL);
            tu_buf_arm(&rb);
            fmpl_status st;
            CHECK_RC(fmpl_recv_any(rb.p, acap[k], FMPL_TAG_ANY, FMPL_COMM_WORLD, &st),
                     FMPL_ERR_TRUNCATE, "recv_any of a larger message");
            CHECK_STATUS(st, peer, 12, acap[k], FMPL_ERR_TRUNCATE, "truncated recv_any");
            CHECK_PATTERN(rb.p, acap[k], seed, "first bytes of the truncated any-source message");
            CHECK_BUF_UNTOUCHED_FROM(&rb, acap[k], "truncated recv_any");
            tu_buf_put(&rb);
        } else {
            tu_buf sb;
            tu_buf_get(&sb, TU_SHARED, amsg[k], NULL);
            tu_fill(sb.p, amsg[k], seed);
            int rc = fmpl_send_any(sb.p, amsg[k], peer, 12, FMPL_COMM_WORLD);
            /* A buffered (small) message has left before the receive exists:
             * the sender cannot know. */
            if (k == 0)
                CHECK_RC(rc, FMPL_SUCCESS, "buffered send_any later truncated at the receiver");
            else
                CHECK(rc == FMPL_SUCCESS || rc == FMPL_ERR_TRUNCATE,
                      "rendezvous send_any truncated at the receiver returned %s",
                      tu_code_name(rc));
            tu_buf_put(&sb);
        }
    }
    still_works("truncation");
}

/* ------------------------------------------------------ busy, pending */

static void busy(int recv_side)
{
    tu_sub = "reuse of an outstanding index -> FMPL_ERR_BUSY";
    const long sz = 100;
    if (recv_side) {
        tu_buf b1, b2, r13;
        tu_buf_get(&b1, TU_HEAP, sz, NULL);
        tu_buf_get(&b2, TU_HEAP, sz, NULL);
        tu_buf_get(&r13, TU_SHARED, sz, NULL);
        tu_buf_arm(&b1);
        tu_buf_arm(&b2);
        tu_buf_arm(&r13);
        CALL(fmpl_irecv(b1.p, sz, peer, 12, FMPL_COMM_WORLD));
        CHECK_RC(fmpl_irecv(b2.p, sz, peer, 12, FMPL_COMM_WORLD), FMPL_ERR_BUSY,
                 "second irecv on (source %d, index 12)", peer);
        fmpl_status st;
        CHECK_RC(fmpl_recv(b2.p, sz, peer, 12, FMPL_COMM_WORLD, &st), FMPL_ERR_BUSY,
                 "blocking recv on (source %d, index 12) while an irecv is outstanding", peer);
        CALL(fmpl_recv(r13.p, sz, peer, 13, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 13, sz, FMPL_SUCCESS, "first isend on index 13");
        CHECK_PATTERN(r13.p, sz, tu_seed(peer, 13, sz, 1),
                      "must be the FIRST isend's data (the refused one sent nothing)");
        CALL(fmpl_irecv_wait(peer, 12, FMPL_COMM_WORLD, &st));
        CHECK_STATUS(st, peer, 12, sz, FMPL_SUCCESS, "first irecv on index 12");
        CHECK_PATTERN(b1.p, sz, tu_seed(peer, 12, sz, 2), "first irecv on index 12");
        CHECK_BUF_UNTOUCHED_FROM(&b2, 0, "buffer of the refused receives");
        tu_buf_put(&b1);
        tu_buf_put(&b2);
        tu_buf_put(&r13);
    } else {
        tu_buf s1, s2, m;
        tu_buf_get(&s1, TU_HEAP, sz, NULL);
        tu_buf_get(&s2, TU_HEAP, sz, NULL);
        tu_buf_get(&m, TU_HEAP, sz, NULL);
        tu_fill(s1.p, sz, tu_seed(me, 13, sz, 1));
        tu_fill(s2.p, sz, tu_seed(me, 13, sz, 99));
        tu_fill(m.p, sz, tu_seed(me, 12, sz, 2));
        CALL(fmpl_isend(s1.p, sz, peer, 13, FMPL_COMM_WORLD));
        CHECK_RC(fmpl_isend(s2.p, sz, peer, 13, FMPL_COMM_WORLD), FMPL_ERR_BUSY,
                 "second isend on (destination %d, index 13)", peer);
        CHECK_RC(fmpl_send(s2.p, sz, peer, 13, FMPL_COMM_WORLD), FMPL_ERR_BUSY,
                 "blocking send on (destination %d, index 13) while an isend is outstanding",
                 peer);
        CALL(fmpl_send(m.p, sz, peer, 12, FMPL_COMM_WORLD));
        CALL(fmpl_isend_wait(peer, 13, FMPL_COMM_WORLD));
        tu_buf_put(&s1);
        tu_buf_put(&s2);
        tu_buf_put(&m);
    }
    still_works("FMPL_ERR_BUSY");
}

static void not_pending(void)
{
    tu_sub = "waits and tests with nothing pending -> FMPL_ERR_NOT_PENDING";
    int other = has_peer ? peer : (me + 1) % n, f;
    fmpl_status st;
    for (int round = 0; round < 2; round++) {
        CHECK_RC(fmpl_isend_wait(other, 14, FMPL_COMM_WORLD), FMPL_ERR_NOT_PENDING, "round %d",
                 round);
        CHECK_RC(fmpl_irecv_wait(other, 14, FMPL_COMM_WORLD, &st), FMPL_ERR_NOT_PENDING,
                 "round %d", round);
        CHECK_RC(fmpl_isend_test(other, 14, FMPL_COMM_WORLD, &f), FMPL_ERR_NOT_PENDING,
                 "round %d", round);
        CHECK_RC(fmpl_irecv_test(other, 14, FMPL_COMM_WORLD, &f, &st), FMPL_ERR_NOT_PENDING,
                 "round %d", round);
        CHECK_RC(fmpl_irecv_wait(other, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st),
                 FMPL_ERR_NOT_PENDING, "round %d, FMPL_TAG_ANY", round);
        if (round == 0 && has_peer) { /* complete an exchange on 14, then ask again */
            char s = 1, r = 0;
            CALL(fmpl_irecv(&r, 1, peer, 14, FMPL_COMM_WORLD));
            CALL(fmpl_isend(&s, 1, peer, 14, FMPL_COMM_WORLD));
            CALL(fmpl_irecv_wait(peer, 14, FMPL_COMM_WORLD, &st));
            CALL(fmpl_isend_wait(peer, 14, FMPL_COMM_WORLD));
            CHECK_EQ(r, 1, "one-byte exchange");
        }
    }
    still_works("FMPL_ERR_NOT_PENDING");
}

/* ------------------------------------------------------ collectives */

static void collective_errors(void)
{
    int32_t b[4] = {0}, w[4] = {0};
    tu_sub = "NULL operation -> FMPL_ERR_OP";
    CHECK_RC(fmpl_reduce(b, 4, NULL, 0, FMPL_COMM_WORLD, w), FMPL_ERR_OP, "reduce, op NULL");
    CHECK_RC(fmpl_allreduce(b, 4, NULL, FMPL_COMM_WORLD, w), FMPL_ERR_OP, "allreduce, op NULL");

    tu_sub = "freed user operation -> FMPL_ERR_OP";
    fmpl_op *op = NULL;
    CALL(fmpl_op_create(noop_fn, 4, NULL, &op));
    const fmpl_op *stale = op;
    CALL(fmpl_op_free(&op));
    CHECK(op == NULL, "fmpl_op_free must set the handle to NULL");
    CHECK_RC(fmpl_allreduce(b, 4, stale, FMPL_COMM_WORLD, w), FMPL_ERR_OP, "freed operation");

    tu_sub = "fmpl_op_create / fmpl_op_free arguments";
    fmpl_op *bi = (fmpl_op *)fmpl_dsum;
    CHECK_RC(fmpl_op_free(&bi), FMPL_ERR_OP, "fmpl_op_free on the built-in fmpl_dsum");
    CHECK(bi == (fmpl_op *)fmpl_dsum, "a refused fmpl_op_free must not change the handle");
    CHECK_RC(fmpl_op_free(NULL), FMPL_ERR_ARG, "fmpl_op_free(NULL)");
    CHECK_RC(fmpl_op_create(NULL, 4, NULL, &op), FMPL_ERR_ARG, "NULL function");
    CHECK_RC(fmpl_op_create(noop_fn, 0, NULL, &op), FMPL_ERR_ARG, "element size 0");
    CHECK_RC(fmpl_op_create(noop_fn, 4, NULL, NULL), FMPL_ERR_ARG, "NULL handle pointer");

    int bad[2] = {-1, n};
    for (int k = 0; k < 2; k++) {
        char sub[64];
        snprintf(sub, sizeof sub, "invalid root %d -> FMPL_ERR_ROOT", bad[k]);
        tu_sub = sub;
        CHECK_RC(fmpl_bcast(b, 16, bad[k], FMPL_COMM_WORLD), FMPL_ERR_ROOT, "bcast");
        CHECK_RC(fmpl_reduce(b, 4, fmpl_isum, bad[k], FMPL_COMM_WORLD, w), FMPL_ERR_ROOT,
                 "reduce");
    }
    still_works("collective argument errors");
}

static void error_strings(void)
{
    tu_sub = "fmpl_error_string";
    for (int c = 0; c < FMPL_ERR_LAST; c++) {
        const char *s = fmpl_error_string(c);
        CHECK(s != NULL && s[0] != 0, "fmpl_error_string(%s) is NULL or empty", tu_code_name(c));
        for (int d = 0; d < c; d++)
            CHECK(strcmp(s, fmpl_error_string(d)) != 0,
                  "fmpl_error_string(%s) = fmpl_error_string(%s) = \"%s\"", tu_code_name(c),
                  tu_code_name(d), s);
    }
    int odd[3] = {-1, FMPL_ERR_LAST, 1000};
    for (int k = 0; k < 3; k++)
        CHECK(fmpl_error_string(odd[k]) != NULL, "fmpl_error_string(%d) is NULL", odd[k]);
}

int main(void)
{
    tu_prog = "errors";
    pre_init();
    tu_init("errors", COUNT);
    me = tu_rank;
    n = tu_size;
    peer = me ^ 1;
    has_peer = peer < n;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);

    tu_sub = "fmpl_init twice";
    CHECK_RC(fmpl_init(NULL, NULL, COUNT), FMPL_ERR_ALREADY_INITIALIZED, "second fmpl_init");
    CHECK_RC(fmpl_init(NULL, NULL, 0), FMPL_ERR_ALREADY_INITIALIZED, "third fmpl_init");
    int flag = -1;
    CALL(fmpl_initialized(&flag));
    CHECK_EQ(flag, 1, "fmpl_initialized after fmpl_init");
    still_works("fmpl_init twice");

    bad_ranks();
    bad_comms();
    bad_indices();
    bad_sizes();
    null_buffers();
    for (int pass = 0; pass < 2; pass++) {
        if (has_peer)
            truncation((me & 1) == pass);
        else
            still_works("truncation (no peer)");
    }
    for (int pass = 0; pass < 2; pass++) {
        if (has_peer)
            busy((me & 1) == pass);
        else
            still_works("busy (no peer)");
    }
    not_pending();
    collective_errors();
    error_strings();

    tu_sub = "fmpl_finalize";
    CALL(fmpl_finalize());
    flag = -1;
    CALL(fmpl_finalized(&flag));
    CHECK_EQ(flag, 1, "fmpl_finalized after fmpl_finalize");
    CHECK_RC(fmpl_init(NULL, NULL, COUNT), FMPL_ERR_FINALIZED,
             "fmpl_init after fmpl_finalize (FMPL cannot be initialised again)");
    every_call_returns(FMPL_ERR_FINALIZED, "after fmpl_finalize");
    if (me == 0)
        printf("PASS errors (%d ranks)\n", n);
    return 0;
}
