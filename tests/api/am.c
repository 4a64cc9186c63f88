/* am: active messages (fmpl_am_*), checked byte for byte.
 *
 *  (a) random traffic: at least 10^4 messages in all, each rank sending
 *      ceil(10^4 / n) to random ranks (itself included) with a random
 *      handler among five (three check, two check and reply with a random
 *      reply), random argument counts 0..8 and payload sizes 0..max
 *      (half small, some exactly the maximum).  Every message is a function
 *      of (sender, receiver, its number on that pair), so the handler
 *      recomputes it: the handler id and ctx it was called for, nargs,
 *      every argument word, size and every payload byte, and its number
 *      (first-in first-out per pair).  At the end the senders' counts
 *      (an allreduce of the matrix) must equal the handlers' counts, and
 *      every reply has come back.
 *  (b) a sub-communicator: token.comm and token.source name the
 *      communicator the message came on and the sender's rank in it.
 *  (c) flow control inside a handler, on every backend: a handler sends
 *      six maximum-size messages to its own rank, whose ring (128 KiB)
 *      cannot drain while the handler runs; a handler that waited would
 *      never return.  Then the program sends a seventh, which must run
 *      after the six.
 *  (d) flow control across ranks (shared memory only: over the network a
 *      rank that makes no call also leaves the remote reads of its ring's
 *      head unserved): rank 0 sends 8 requests to rank 1 and stays out of
 *      FMPL until rank 1 has run all 8 handlers, each replying with two
 *      maximum-size messages (1 MiB into a 128 KiB ring); rank 0 then
 *      takes the 16 replies, in order.
 *  (e) what a handler may not call: fmpl_am_poll and fmpl_barrier_wait
 *      return FMPL_ERR_UNSUPPORTED there, fmpl_barrier_test only reads.
 *  (f) errors: ids -1 and 256, NULL handler, nargs 9 and -1, NULL args,
 *      payload max + 1 (FMPL_ERR_SIZE), NULL payload, ranks -1 and n,
 *      communicator 42, fmpl_am_reply outside a handler and with a NULL
 *      token; none of them sends anything (the final counts would not
 *      match). */
#include "test_util.h"

#include <stdatomic.h>

enum { ID_A = 0, ID_B = 77, ID_C = 128, ID_ECHO1 = 9, ID_ECHO2 = 254, ID_REPLY = 255 };
enum { ID_SUB = 31, ID_BURST = 40, ID_ITEM = 41, ID_REQ = 50, ID_BIG = 51, ID_RULES = 60 };
static const int traffic_ids[5] = {ID_A, ID_B, ID_C, ID_ECHO1, ID_ECHO2};
#define TOTAL 10000

/* Handlers run on the agent thread when it is on (FMPL_AGENT=thread, the
 * am_agent tests): what they count, the main thread reads atomically. */
#define A_INC(x) __atomic_fetch_add(&(x), 1, __ATOMIC_ACQ_REL)
#define A_GET(x) __atomic_load_n(&(x), __ATOMIC_ACQUIRE)

static int me, n;
static size_t maxp;

/* ---------------------------------------------------- message contents */

typedef struct msg {
    int id, nargs;
    size_t size;
    uint64_t seed;
    uint64_t args[FMPL_AM_MAX_ARGS];
} msg;

static size_t pick_size(uint64_t *r)
{
    uint64_t x = tu_rand(r) % 20;
    if (x < 10)
        return (size_t)(tu_rand(r) % 257); /* small */
    if (x == 10)
        return maxp;
    if (x == 11)
        return 0;
    return (size_t)(tu_rand(r) % (maxp + 1));
}

/* Message number `k` from `src` to `dst`; kind 0: a request, 1: a reply. */
static msg make(int src, int dst, long k, int kind)
{
    msg m;
    uint64_t r = tu_seed(src, dst * 2 + kind, 0x5eed, k);
    m.id = kind ? ID_REPLY : traffic_ids[tu_rand(&r) % 5];
    m.nargs = (int)(tu_rand(&r) % (FMPL_AM_MAX_ARGS + 1));
    m.size = pick_size(&r);
    m.seed = tu_rand(&r);
    for (int j = 0; j < m.nargs; j++)
        m.args[j] = tu_mix64(m.seed + (uint64_t)j);
    return m;
}

/* The program's payloads, and the handlers' (a handler may run while the
 * program waits to send what it has in sendbuf). */
static unsigned char *sendbuf, *hbuf; /* maxp + 1 bytes */

static void fill_at(unsigned char *buf, const msg *m) { tu_fill_at(buf, 0, (long)m->size, m->seed); }
static void fill(const msg *m) { fill_at(sendbuf, m); }

static void check(const msg *m, int id, const uint64_t *args, int nargs, const void *payload,
                  size_t size, const char *what)
{
    CHECK_EQ(id, m->id, "%s: handler called", what);
    CHECK_EQ(nargs, m->nargs, "%s: nargs", what);
    CHECK_EQ(size, m->size, "%s: payload size", what);
    CHECK((nargs == 0) == (args == NULL), "%s: args %p with nargs %d", what, (const void *)args,
          nargs);
    CHECK((size == 0) == (payload == NULL), "%s: payload %p with size %zu", what, payload, size);
    for (int j = 0; j < nargs; j++)
        CHECK(args[j] == m->args[j], "%s: argument %d is %#llx, expected %#llx", what, j,
              (unsigned long long)args[j], (unsigned long long)m->args[j]);
    CHECK(((uintptr_t)payload & 7) == 0, "%s: payload %p not 8-byte aligned", what, payload);
    CHECK_PATTERN(payload, (long)size, m->seed, "%s: payload", what);
}

/* ----------------------------------------------------- (a) random traffic */

typedef struct handler_ctx {
    int id;
} handler_ctx;
static handler_ctx ctxs[256];

static long *got;      /* [n] requests handled from each source */
static long *replied;  /* [n] replies sent to each source */
static long *replies;  /* [n] replies received from each source */

static void on_traffic(const fmpl_am_token *t, const uint64_t *args, int nargs,
                       const void *payload, size_t size, void *ctx)
{
    handler_ctx *c = ctx;
    char what[96];
    snprintf(what, sizeof what, "request %ld from %d", got[t->source], t->source);
    CHECK_EQ(t->comm, FMPL_COMM_WORLD, "%s: token.comm", what);
    CHECK_EQ(t->is_reply, 0, "%s: token.is_reply", what);
    CHECK(c == &ctxs[c->id], "%s: ctx %p", what, ctx);
    msg m = make(t->source, me, got[t->source], 0);
    check(&m, c->id, args, nargs, payload, size, what);
    A_INC(got[t->source]);
    if (c->id != ID_ECHO1 && c->id != ID_ECHO2)
        return;
    msg r = make(me, t->source, A_INC(replied[t->source]), 1);
    fill_at(hbuf, &r);
    CHECK_RC(fmpl_am_reply(t, r.id, r.args, r.nargs, hbuf, r.size), FMPL_SUCCESS,
             "%s: reply", what);
}

static void on_reply(const fmpl_am_token *t, const uint64_t *args, int nargs,
                     const void *payload, size_t size, void *ctx)
{
    char what[96];
    snprintf(what, sizeof what, "reply %ld from %d", replies[t->source], t->source);
    CHECK_EQ(t->is_reply, 1, "%s: token.is_reply", what);
    CHECK(ctx == &ctxs[ID_REPLY], "%s: ctx", what);
    msg m = make(t->source, me, replies[t->source], 1);
    check(&m, ID_REPLY, args, nargs, payload, size, what);
    A_INC(replies[t->source]);
}

/* Poll until cond, failing after a deadline. */
#define POLL_UNTIL(cond, ...)                                                      \
    do {                                                                           \
        double t0_ = tu_now();                                                     \
        while (!(cond)) {                                                          \
            CALL(fmpl_am_poll(NULL));                                              \
            if (tu_now() - t0_ > 60)                                               \
                TU_FAIL("timed out waiting: " __VA_ARGS__);                        \
        }                                                                          \
    } while (0)

static int all_in(const long *have, const int *want)
{
    for (int p = 0; p < n; p++)
        if (A_GET(have[p]) != want[p])
            return 0;
    return 1;
}

static void random_traffic(void)
{
    tu_sub = "(a) random traffic";
    long per_rank = (TOTAL + n - 1) / n;
    int *matrix = calloc((size_t)n * n, sizeof *matrix);
    int *work = calloc((size_t)n * n, sizeof *work);
    int *echoes = calloc((size_t)n, sizeof *echoes);
    long *sent = calloc((size_t)n, sizeof *sent);
    CHECK(matrix && work && echoes && sent, "calloc");
    uint64_t r = tu_seed(me, 0, 0, 0xa11);
    for (long i = 0; i < per_rank; i++) {
        int dst = (int)(tu_rand(&r) % (uint64_t)n);
        msg m = make(me, dst, sent[dst], 0);
        fill(&m);
        CHECK_RC(fmpl_am_send(dst, m.id, m.args, m.nargs, sendbuf, m.size, FMPL_COMM_WORLD),
                 FMPL_SUCCESS, "message %ld to %d", sent[dst], dst);
        sent[dst]++;
        matrix[me * n + dst]++;
        if (m.id == ID_ECHO1 || m.id == ID_ECHO2)
            echoes[dst]++;
        if (tu_rand(&r) % 8 == 0) {
            int h = -1;
            CALL(fmpl_am_poll(&h));
            CHECK(h >= 0, "fmpl_am_poll handled %d", h);
        }
    }
    /* Every rank's row, summed: column me is what I must handle. */
    CALL(fmpl_allreduce(matrix, (long)n * n, fmpl_isum, FMPL_COMM_WORLD, work));
    int *want = calloc((size_t)n, sizeof *want);
    CHECK(want, "calloc");
    long total = 0;
    for (int p = 0; p < n; p++) {
        want[p] = matrix[p * n + me];
        for (int q = 0; q < n; q++)
            total += matrix[p * n + q];
    }
    CHECK(total >= TOTAL, "%ld messages in all, expected at least %d", total, TOTAL);
    POLL_UNTIL(all_in(got, want) && all_in(replies, echoes), "requests and replies");
    for (int p = 0; p < n; p++) {
        CHECK_EQ(got[p], want[p], "requests handled from %d", p);
        CHECK_EQ(replies[p], echoes[p], "replies from %d", p);
    }
    /* Nothing more arrives: every count still matches after a barrier and
     * a poll (a duplicate or stray message would have shown up). */
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    CALL(fmpl_am_poll(NULL));
    for (int p = 0; p < n; p++) {
        CHECK_EQ(got[p], want[p], "requests handled from %d, at the end", p);
        CHECK_EQ(replies[p], echoes[p], "replies from %d, at the end", p);
    }
    if (me == 0)
        printf("am: %ld messages, largest payload %zu bytes\n", total, maxp);
    free(want);
    free(matrix);
    free(work);
    free(echoes);
    free(sent);
}

/* ------------------------------------------------- (b) sub-communicator */

static fmpl_comm sub;
static int sub_rank, sub_size, sub_got;

static void on_sub(const fmpl_am_token *t, const uint64_t *args, int nargs,
                   const void *payload, size_t size, void *ctx)
{
    (void)payload, (void)size, (void)ctx;
    CHECK_EQ(t->comm, sub, "token.comm on the sub-communicator");
    CHECK_EQ(t->source, (sub_rank + sub_size - 1) % sub_size, "token.source (a rank of sub)");
    CHECK_EQ(nargs, 1, "nargs");
    CHECK_EQ(args[0], (uint64_t)t->source * 1000 + 7, "argument");
    A_INC(sub_got);
}

static void sub_communicator(void)
{
    tu_sub = "(b) sub-communicator";
    CALL(fmpl_comm_create(me % 2, &sub));
    CALL(fmpl_comm_rank(sub, &sub_rank));
    CALL(fmpl_comm_size(sub, &sub_size));
    /* The target must know the handle before the message can name it. */
    CALL(fmpl_barrier(sub));
    uint64_t a = (uint64_t)sub_rank * 1000 + 7;
    CALL(fmpl_am_send((sub_rank + 1) % sub_size, ID_SUB, &a, 1, NULL, 0, sub));
    POLL_UNTIL(A_GET(sub_got) == 1, "the message on the sub-communicator");
    CALL(fmpl_barrier(sub));
    CALL(fmpl_comm_free(&sub));
}

/* ------------------------------------- (c) a handler fills its own ring */

enum { BURST = 6 };
static int burst_ran;
static long items;

static void on_burst(const fmpl_am_token *t, const uint64_t *args, int nargs,
                     const void *payload, size_t size, void *ctx)
{
    (void)args, (void)nargs, (void)payload, (void)size, (void)ctx;
    CHECK_EQ(t->source, me, "burst trigger from myself");
    for (long k = 0; k < BURST; k++) {
        msg m = make(me, me, 1000 + k, 0);
        m.id = ID_ITEM;
        m.size = maxp;
        fill_at(hbuf, &m);
        /* The ring to myself holds at most two such messages and cannot
         * drain while this handler runs: the rest must be queued. */
        CHECK_RC(fmpl_am_send(me, ID_ITEM, m.args, m.nargs, hbuf, m.size, FMPL_COMM_WORLD),
                 FMPL_SUCCESS, "item %ld from inside a handler", k);
    }
    __atomic_store_n(&burst_ran, 1, __ATOMIC_RELEASE);
}

static void on_item(const fmpl_am_token *t, const uint64_t *args, int nargs,
                    const void *payload, size_t size, void *ctx)
{
    (void)ctx;
    char what[64];
    snprintf(what, sizeof what, "item %ld", items);
    msg m = make(me, me, 1000 + items, 0);
    m.id = ID_ITEM;
    m.size = maxp;
    CHECK_EQ(t->source, me, "%s: source", what);
    check(&m, ID_ITEM, args, nargs, payload, size, what);
    A_INC(items);
}

static void self_burst(void)
{
    tu_sub = "(c) a handler sends more than its own ring holds";
    CALL(fmpl_am_send(me, ID_BURST, NULL, 0, NULL, 0, FMPL_COMM_WORLD));
    POLL_UNTIL(A_GET(burst_ran), "the burst handler");
    /* Sent by the program while some of the burst may still be queued:
     * it must run after all of them. */
    msg m = make(me, me, 1000 + BURST, 0);
    m.id = ID_ITEM;
    m.size = maxp;
    fill(&m);
    CALL(fmpl_am_send(me, ID_ITEM, m.args, m.nargs, sendbuf, m.size, FMPL_COMM_WORLD));
    POLL_UNTIL(A_GET(items) == BURST + 1, "the burst's items");
    CALL(fmpl_am_poll(NULL));
    CHECK_EQ(items, BURST + 1, "items after one more poll");
}

/* ------------------------- (d) a target that stays out of FMPL (shm only) */

enum { NREQ = 8, BIGS_PER_REQ = 2 };
static int reqs_handled;
static long bigs;

static void on_req(const fmpl_am_token *t, const uint64_t *args, int nargs,
                   const void *payload, size_t size, void *ctx)
{
    (void)payload, (void)size, (void)ctx;
    CHECK_EQ(nargs, 1, "request nargs");
    CHECK_EQ(args[0], (uint64_t)reqs_handled, "request number (first-in first-out)");
    for (int b = 0; b < BIGS_PER_REQ; b++) {
        long k = reqs_handled * BIGS_PER_REQ + b;
        msg m = make(me, t->source, 5000 + k, 1);
        m.id = ID_BIG;
        m.size = maxp;
        fill_at(hbuf, &m);
        CHECK_RC(fmpl_am_reply(t, ID_BIG, m.args, m.nargs, hbuf, m.size), FMPL_SUCCESS,
                 "big reply %ld while the requester stays out of FMPL", k);
    }
    A_INC(reqs_handled);
}

static void on_big(const fmpl_am_token *t, const uint64_t *args, int nargs,
                   const void *payload, size_t size, void *ctx)
{
    (void)ctx;
    char what[64];
    snprintf(what, sizeof what, "big reply %ld", bigs);
    msg m = make(t->source, me, 5000 + bigs, 1);
    m.id = ID_BIG;
    m.size = maxp;
    check(&m, ID_BIG, args, nargs, payload, size, what);
    A_INC(bigs);
}

static void idle_target(void)
{
    tu_sub = "(d) replies into the ring of a rank outside FMPL";
    const char *fabric = getenv("FMPL_FABRIC");
    if (fabric && *fabric && strcmp(fabric, "auto") != 0) {
        if (me == 0)
            printf("am: (d) skipped with FMPL_FABRIC=%s\n", fabric);
        return;
    }
    if (me <= 1) {
        tu_oob *o = tu_oob_open(1 - me, 2);
        if (me == 0) {
            for (uint64_t k = 0; k < NREQ; k++)
                CALL(fmpl_am_send(1, ID_REQ, &k, 1, NULL, 0, FMPL_COMM_WORLD));
            tu_oob_wait(o, 0, 1, "rank 1 ran every request's handler"); /* no FMPL call */
            POLL_UNTIL(A_GET(bigs) == NREQ * BIGS_PER_REQ, "the big replies");
        } else {
            POLL_UNTIL(A_GET(reqs_handled) == NREQ,
                       "the requests (a handler blocked on a full ring?)");
            tu_oob_set(o, 0, 1);
        }
        tu_oob_close(o);
    }
    /* Rank 1 sends its queued replies in the barrier's progress (a
     * point-to-point wait would not: it polls its own protocol only). */
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
}

/* ------------------------------------------- (e) what handlers may call */

static int rules_ran;

static void on_rules(const fmpl_am_token *t, const uint64_t *args, int nargs,
                     const void *payload, size_t size, void *ctx)
{
    (void)t, (void)args, (void)nargs, (void)payload, (void)size, (void)ctx;
    int h = -1, done = -1, r;
    uint64_t flag = 0;
    CHECK_RC(fmpl_am_poll(&h), FMPL_ERR_UNSUPPORTED, "fmpl_am_poll inside a handler");
    CHECK_EQ(h, -1, "handled untouched");
    CHECK_RC(fmpl_barrier_wait(&flag), FMPL_ERR_UNSUPPORTED, "fmpl_barrier_wait in a handler");
    CHECK_RC(fmpl_barrier_test(&flag, &done), FMPL_SUCCESS, "fmpl_barrier_test in a handler");
    CHECK_EQ(done, 0, "a flag holding 0");
    CHECK_RC(fmpl_am_reply(NULL, ID_A, NULL, 0, NULL, 0), FMPL_ERR_ARG, "NULL token");
    CALL(fmpl_comm_rank(FMPL_COMM_WORLD, &r));
    CHECK_EQ(r, me, "fmpl_comm_rank in a handler");
    __atomic_store_n(&rules_ran, 1, __ATOMIC_RELEASE);
}

static void handler_rules(void)
{
    tu_sub = "(e) calls inside a handler";
    CALL(fmpl_am_send(me, ID_RULES, NULL, 0, NULL, 0, FMPL_COMM_WORLD));
    POLL_UNTIL(A_GET(rules_ran), "the rules handler");
}

/* -------------------------------------------------------------- (f) errors */

static void errors(void)
{
    tu_sub = "(f) errors";
    uint64_t a[FMPL_AM_MAX_ARGS + 1] = {0};
    CHECK_RC(fmpl_am_register(-1, on_reply, NULL), FMPL_ERR_ARG, "id -1");
    CHECK_RC(fmpl_am_register(FMPL_AM_MAX_ID + 1, on_reply, NULL), FMPL_ERR_ARG, "id 256");
    CHECK_RC(fmpl_am_register(5, NULL, NULL), FMPL_ERR_ARG, "NULL handler");
    CHECK_RC(fmpl_am_send(0, -1, a, 1, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG, "id -1");
    CHECK_RC(fmpl_am_send(0, 256, a, 1, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG, "id 256");
    CHECK_RC(fmpl_am_send(0, ID_A, a, FMPL_AM_MAX_ARGS + 1, NULL, 0, FMPL_COMM_WORLD),
             FMPL_ERR_ARG, "9 argument words");
    CHECK_RC(fmpl_am_send(0, ID_A, a, -1, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG, "nargs -1");
    CHECK_RC(fmpl_am_send(0, ID_A, NULL, 2, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG,
             "NULL args with nargs 2");
    CHECK_RC(fmpl_am_send(0, ID_A, a, 1, sendbuf, maxp + 1, FMPL_COMM_WORLD), FMPL_ERR_SIZE,
             "payload of max + 1 = %zu bytes", maxp + 1);
    CHECK_RC(fmpl_am_send(0, ID_A, a, 1, NULL, 5, FMPL_COMM_WORLD), FMPL_ERR_ARG,
             "NULL payload with size 5");
    CHECK_RC(fmpl_am_send(-1, ID_A, a, 1, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_RANK, "rank -1");
    CHECK_RC(fmpl_am_send(n, ID_A, a, 1, NULL, 0, FMPL_COMM_WORLD), FMPL_ERR_RANK, "rank n");
    CHECK_RC(fmpl_am_send(0, ID_A, a, 1, NULL, 0, 42), FMPL_ERR_COMM, "communicator 42");
    fmpl_am_token tok = {0, FMPL_COMM_WORLD, 0, 0};
    CHECK_RC(fmpl_am_reply(&tok, ID_A, a, 1, NULL, 0), FMPL_ERR_ARG, "reply outside a handler");
    CHECK_RC(fmpl_am_reply(NULL, ID_A, a, 1, NULL, 0), FMPL_ERR_ARG, "NULL token");
    CALL(fmpl_am_poll(NULL));
}

int main(void)
{
    tu_init("am", 0);
    me = tu_rank;
    n = tu_size;
    maxp = fmpl_am_max_payload();
    /* The documented value: half the default 128 KiB ring less 96 bytes. */
    if (!getenv("FMPL_CHANNEL_SIZE"))
        CHECK_EQ(maxp, 65440, "fmpl_am_max_payload()");
    CHECK(maxp >= 1024, "fmpl_am_max_payload() = %zu", maxp);
    sendbuf = malloc(maxp + 1);
    hbuf = malloc(maxp + 1);
    got = calloc((size_t)n, sizeof *got);
    replied = calloc((size_t)n, sizeof *replied);
    replies = calloc((size_t)n, sizeof *replies);
    CHECK(sendbuf && hbuf && got && replied && replies, "malloc");
    for (int i = 0; i < 5; i++) {
        ctxs[traffic_ids[i]].id = traffic_ids[i];
        CALL(fmpl_am_register(traffic_ids[i], on_traffic, &ctxs[traffic_ids[i]]));
    }
    CALL(fmpl_am_register(ID_REPLY, on_reply, &ctxs[ID_REPLY]));
    CALL(fmpl_am_register(ID_SUB, on_sub, NULL));
    CALL(fmpl_am_register(ID_BURST, on_burst, NULL));
    CALL(fmpl_am_register(ID_ITEM, on_item, NULL));
    CALL(fmpl_am_register(ID_REQ, on_req, NULL));
    CALL(fmpl_am_register(ID_BIG, on_big, NULL));
    CALL(fmpl_am_register(ID_RULES, on_rules, NULL));
    CALL(fmpl_barrier(FMPL_COMM_WORLD)); /* every rank registered before any sends */

    errors();
    random_traffic();
    sub_communicator();
    self_burst();
    idle_target();
    handler_rules();
    errors();
    CALL(fmpl_barrier(FMPL_COMM_WORLD));
    free(sendbuf);
    free(hbuf);
    return tu_finish();
}
