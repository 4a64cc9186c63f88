/* Tag-matched point-to-point: eager and rendezvous over per-pair channels.
 *
 * Records (channel.c carries them, first-in first-out per pair):
 *   EAGER {context, tag, source, size, payload}
 *   RTS   {context, tag, source, size, sender request, sender buffer}
 *   CTS   {sender request, receiver request, receiver buffer, bytes, PUT|STREAM}
 *   FIN   {request to complete, bytes}
 *   DATA  {receiver request, offset, length, last, payload}
 *
 * Eager (size <= FMPL_EAGER_MAX, standard mode):
 *   1. S copies the envelope and payload into a record in S->R, publishes it;
 *      the send is complete.  A payload of FMPL_EAGER_PIPE bytes or more goes
 *      as EAGER_PIPE: S publishes the envelope first and then copies the
 *      payload in segments, storing after each the number of bytes present
 *      in the record's `flags` word (release); R copies each segment out
 *      as soon as it is there, so the two copies overlap instead of
 *      following each other, and releases the record only once all of it
 *      has arrived.
 *   A blocking send (MPI_Send) of FMPL_EAGER_REF bytes or more from a buffer
 *   in S's shared heap goes by reference, EAGER_REF {envelope, S's buffer,
 *   S's state line, sequence} with room for the payload left empty:
 *     S: state line = (seq, POSTED); publishes the record; waits.
 *     R, handling it (matched or not): CAS state (seq, POSTED) -> CLAIMED,
 *        copies straight from S's buffer into the receive buffer (or the
 *        unexpected entry), stores (seq, DONE): one copy instead of two.
 *     S: DONE completes the send.  If R has not claimed it within
 *        FMPL_EAGER_REF_WAIT ns or S's spin budget (R computing outside MPI,
 *        or off its core), S CASes POSTED -> INLINING, copies the payload
 *        into the record's room, stores INLINE and returns; R then copies
 *        from the record, as for EAGER.  So a busy receiver costs a blocking
 *        sender that wait once, never more, and S never yields its core
 *        while it could be inlining.
 *   2. R, progressing, matches the envelope against its posted receives in
 *      posting order: a match copies the payload into the user's buffer; no
 *      match moves the payload out of the channel into an unexpected entry,
 *      so the channel never stalls.
 * Rendezvous (larger, or synchronous mode):
 *   1. S publishes RTS naming its buffer and request.
 *   2. R matches it (now, or when the receive is posted) and moves the data
 *      with one copy, choosing by where the buffers are:
 *        S's buffer reachable (shared heap): R copies it out  -> FIN to S
 *        R's buffer in the shared heap:      CTS(PUT) to S; S copies into it
 *                                            -> FIN to R
 *        CMA works (FMPL_RNDV_CMA=on, the default):
 *                                            R reads it with process_vm_readv
 *                                            -> FIN to S
 *        otherwise:                          CTS(STREAM); S streams DATA
 *                                            records through S->R; the last
 *                                            completes R, and S when written
 *   3. FIN completes the request it names.
 * Over the network (R a network peer of S, fabric.h): records travel as
 * channel.c says (built locally, put, then the flag); EAGER_PIPE and
 * EAGER_REF are not used (a published record cannot be written into, and
 * S's buffer is not in reach), and the rendezvous is a read:
 *   1. S registers its buffer (fmpl_fab_register: a cached registration,
 *      or none for the shared heap) and publishes RTS with its key
 *   2. R gets the data straight into the receive buffer (one remote read,
 *      zero copies), then publishes FIN to S
 *   3. S, on FIN, drops the registration and completes.
 * Order: envelopes from one sender are matched in the order it sent them,
 * eager and rendezvous alike (the channel is FIFO and matching happens when
 * a record is taken from it), which is MPI's non-overtaking rule. */
#include "protocols/tag_match.h"
#include "protocols/channel.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"
#include "base/timer.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_eager_max, "FMPL_EAGER_MAX", "16k",
             "tag-matched messages up to this size go eagerly through the channel; larger "
             "ones by rendezvous (0 forces rendezvous for every message)");

enum { REC_EAGER = 1, REC_RTS, REC_CTS, REC_FIN, REC_DATA, REC_EAGER_PIPE, REC_EAGER_REF };
/* Phases of a by-reference eager send, in S's state line: (seq << 8) | phase. */
enum { REF_POSTED = 1, REF_CLAIMED, REF_DONE, REF_INLINING, REF_INLINE };

typedef struct ref_body {
    uint64_t sbuf_addr;       /* S's buffer (shared heap offset) */
    uint64_t state_addr;      /* S's state line (shared heap offset) */
    uint64_t seq;
    uint64_t pad;
    /* room for the payload follows (written only when S inlines it) */
} ref_body;
enum { CTS_PUT = 1, CTS_STREAM };

typedef struct rts_body {
    uint64_t sreq;
    uint64_t sbuf_addr;
    uint32_t sbuf_kind;
    uint32_t pad;
    uint64_t sbuf_key;  /* network peers: the registration's key (fabric.h) */
} rts_body;

typedef struct cts_body {
    uint64_t sreq, rreq;
    uint64_t rbuf_addr;
    uint32_t rbuf_kind;
    uint32_t how;
    int64_t bytes;
} cts_body;

typedef struct fin_body {
    uint64_t req;
    int64_t bytes;
} fin_body;

typedef struct data_body {
    uint64_t rreq;
    int64_t offset, len;
    uint32_t last;
    uint32_t pad;
} data_body;

FMPL_TUNABLE(tunable_rndv_cma, "FMPL_RNDV_CMA", "on",
             "rendezvous between two private buffers: on lets the receiver read the sender's "
             "buffer with process_vm_readv alone (single copy, no sender progress needed); off "
             "streams the data through the channel (both sides copy, pipelined: faster on two "
             "cores, but the channels fill with data records, and a handler that must send "
             "into a full channel waits in nested progress)");

FMPL_TUNABLE(tunable_eager_pipe, "FMPL_EAGER_PIPE", "4k",
             "eager messages of at least this size are copied in and out of the channel "
             "in overlapping segments of FMPL_EAGER_SEGMENT bytes (0: never)");
FMPL_TUNABLE(tunable_eager_segment, "FMPL_EAGER_SEGMENT", "2k",
             "segment of a pipelined eager message (at least 256)");

FMPL_TUNABLE(tunable_eager_ref, "FMPL_EAGER_REF", "1k",
             "a blocking eager send of at least this size from a shared-heap buffer lets the "
             "receiver copy straight from it (one copy instead of two; 0: never)");
FMPL_TUNABLE(tunable_eager_ref_wait, "FMPL_EAGER_REF_WAIT", "2000",
             "nanoseconds a by-reference eager send waits for the receiver to take it before "
             "copying the payload into the channel and returning (it gives up sooner when "
             "its FMPL_SPIN_COUNT polls are spent: it never yields its core to wait)");

static int64_t eager_max;
static int64_t eager_pipe, eager_segment;
static int64_t eager_ref = INT64_MAX;
static uint64_t eager_ref_wait_ns;
typedef struct ref_line {
    _Atomic uint64_t v;
    char pad[56];
} ref_line;
static ref_line *ref_state;  /* one line per destination, in my shared heap */
static uint64_t *ref_seq;         /* per destination */
static int rndv_cma;
static fmpl_tm_req streaming = {.next = &streaming, .prev = &streaming};
static int nstreaming;
static fmpl_tm_unexp *unexp_free;
/* Unexpected entries come in blocks, kept until finalisation, and each
 * keeps its payload buffer when it returns to the free list: the pool
 * stops allocating once it has held as many messages, as large, as arrive
 * before their receives.  (Entry by entry, with each payload freed, a
 * persistent collective over the network still allocated once in 200
 * rounds after its warm-up.) */
enum { UNEXP_BLOCK = 64, UNEXP_KEEP = 64 * 1024 };
typedef struct unexp_block {
    struct unexp_block *next;
    fmpl_tm_unexp entries[UNEXP_BLOCK];
} unexp_block;
static unexp_block *unexp_blocks;
/* handling[w]: a record from world rank w is being handled.  A handler
 * that sends into a full ring waits with progress (channel.c: wait_space),
 * and that nested pass must not take the same record, still at the head
 * of w's ring, a second time: it skips w's channel. */
static unsigned char *handling;
static int poll_start;

/* ------------------------------------------------------------ set-up */

static int unexp_grow(void);

int fmpl_tm_init(fmpl_raddr *channels)
{
    int rc = fmpl_chan_init(channels);
    if (rc == FMPL_SUCCESS && !unexp_free)
        rc = unexp_grow();
    if (rc != FMPL_SUCCESS)
        return rc;
    free(handling);
    handling = calloc((size_t)fmpl_fab.capacity, 1);
    if (!handling)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d channel marks",
                          fmpl_fab.capacity);
    eager_max = fmpl_tunable_long(&tunable_eager_max);
    if (eager_max < 0)
        eager_max = 0;
    if (eager_max > fmpl_chan_max_record - FMPL_CHAN_HEADER)
        eager_max = fmpl_chan_max_record - FMPL_CHAN_HEADER;
    eager_pipe = fmpl_tunable_long(&tunable_eager_pipe);
    eager_segment = fmpl_tunable_long(&tunable_eager_segment);
    if (eager_segment < 256)
        eager_segment = 256;
    if (eager_pipe <= 0)
        eager_pipe = INT64_MAX;
    static const char *const off_on[] = {"off", "on", NULL};
    rndv_cma = fmpl_tunable_choice(&tunable_rndv_cma, off_on) == 1;
    long long ref = fmpl_tunable_long(&tunable_eager_ref);
    long long wait = fmpl_tunable_long(&tunable_eager_ref_wait);
    eager_ref_wait_ns = wait < 0 ? 0 : (uint64_t)wait;
    eager_ref = INT64_MAX;
    if (ref > 0) {
        int n = fmpl_fab.size;
        ref_state = fmpl_fab_alloc((size_t)n * sizeof *ref_state);
        ref_seq = calloc((size_t)n, sizeof *ref_seq); /* both by world index */
        if (!ref_state || !ref_seq)
            return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d send state lines", n);
        memset(ref_state, 0, (size_t)n * sizeof *ref_state);
        eager_ref = ref;
    }
    return FMPL_SUCCESS;
}

int fmpl_tm_connect(const fmpl_raddr *channels) { return fmpl_chan_connect(channels); }

void fmpl_tm_finalize(void)
{
    for (fmpl_tm_unexp *u = unexp_free; u; u = u->next)
        free(u->heap);
    unexp_free = NULL;
    while (unexp_blocks) {
        unexp_block *b = unexp_blocks;
        unexp_blocks = b->next;
        free(b);
    }
    streaming.next = streaming.prev = &streaming;
    nstreaming = 0;
    if (ref_state)
        fmpl_fab_free(ref_state);
    free(ref_seq);
    ref_state = NULL;
    ref_seq = NULL;
    eager_ref = INT64_MAX;
    free(handling);
    handling = NULL;
    fmpl_chan_finalize();
}

int fmpl_tm_team_create(fmpl_team *t)
{
    fmpl_tm_team *tm = calloc(1, sizeof *tm);
    if (!tm)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for matching queues");
    tm->posted.next = tm->posted.prev = &tm->posted;
    tm->unexpected.next = tm->unexpected.prev = &tm->unexpected;
    t->tm = tm;
    return FMPL_SUCCESS;
}

static void unexp_put(fmpl_tm_unexp *u);

void fmpl_tm_team_destroy(fmpl_team *t)
{
    if (!t->tm)
        return;
    while (t->tm->unexpected.next != &t->tm->unexpected) {
        fmpl_tm_unexp *u = t->tm->unexpected.next;
        fmpl_tm_dequeue(t, u);
        unexp_put(u);
    }
    free(t->tm);
    t->tm = NULL;
}

/* ------------------------------------------------------------ helpers */

static inline int matches(int want_src, int want_tag, int src, int tag)
{
    return (want_src == FMPL_TM_ANY_SOURCE || want_src == src) &&
           (want_tag == FMPL_TM_ANY_TAG ? tag >= 0 : want_tag == tag);
}

static void list_append(fmpl_tm_req *head, fmpl_tm_req *r)
{
    r->next = head;
    r->prev = head->prev;
    head->prev->next = r;
    head->prev = r;
}

static void list_remove(fmpl_tm_req *r)
{
    r->prev->next = r->next;
    r->next->prev = r->prev;
    r->next = r->prev = NULL;
}

static int unexp_grow(void)
{
    unexp_block *b = calloc(1, sizeof *b);
    if (!b)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for unexpected-message entries");
    b->next = unexp_blocks;
    unexp_blocks = b;
    for (int i = UNEXP_BLOCK - 1; i >= 0; i--) {
        b->entries[i].next = unexp_free;
        unexp_free = &b->entries[i];
    }
    return FMPL_SUCCESS;
}

static fmpl_tm_unexp *unexp_get(void)
{
    /* Only unexpected messages reach this; the first block is made at
     * start-up, so a program whose first unexpected message comes late
     * (a warm collective) does not allocate then. */
    if (!unexp_free && unexp_grow() != FMPL_SUCCESS)
        return NULL;
    fmpl_tm_unexp *u = unexp_free;
    unexp_free = u->next;
    return u;
}

/* Where u's eager payload of size bytes goes: inline, else its own buffer
 * (grown if need be); NULL: no memory. */
static void *unexp_payload(fmpl_tm_unexp *u, int64_t size)
{
    if (size <= (int64_t)sizeof u->inline_data)
        return u->inline_data;
    if (u->heap_cap < size) {
        free(u->heap);
        u->heap_cap = 0;
        if (!(u->heap = malloc((size_t)size)))
            return NULL;
        u->heap_cap = size;
    }
    return u->heap;
}

static void unexp_put(fmpl_tm_unexp *u)
{
    u->data = NULL;
    if (u->heap_cap > UNEXP_KEEP) { /* a rare large one: not hoarded */
        free(u->heap);
        u->heap = NULL;
        u->heap_cap = 0;
    }
    u->next = unexp_free;
    unexp_free = u;
}

int fmpl_tm_inflight;

static inline void track(fmpl_tm_req *r)
{
    r->inflight = 1;
    fmpl_tm_inflight++;
}

static void complete(fmpl_tm_req *r, int64_t bytes, int error)
{
    if (r->inflight) {
        r->inflight = 0;
        fmpl_tm_inflight--;
    }
    r->st_bytes = bytes;
    r->st_error = error;
    r->complete = 1;
}

static void send_fin(int world_to, uint64_t req, int64_t bytes)
{
    fmpl_chan_rec *rec = fmpl_chan_reserve(world_to, sizeof(fin_body));
    rec->type = REC_FIN;
    fin_body *b = fmpl_chan_payload(rec);
    b->req = req;
    b->bytes = bytes;
    fmpl_chan_publish(world_to, rec);
}

/* Step 2 of the rendezvous, at the receiver, once matched. */
static void rndv_start_recv(fmpl_tm_req *r, int src, int tag, int64_t size, uint64_t sreq,
                            fmpl_raddr sbuf)
{
    int w = r->team->world[src];
    int64_t n = size < r->size ? size : r->size;
    r->st_source = src;
    r->st_tag = tag;
    r->peer_req = sreq;
    int error = size > r->size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    r->st_error = error;
    const void *direct = fmpl_fab_ptr(sbuf);
    fmpl_raddr rbuf = fmpl_fab_raddr(r->buf);
    if (n == 0 || direct) {
        if (n)
            memcpy(r->buf, direct, (size_t)n);
        send_fin(w, sreq, n);
        complete(r, n, error);
        return;
    }
    if (fmpl_fab.peers[w].net) { /* network step 2: one remote read */
        int rc = fmpl_fab_get(r->buf, (size_t)n, sbuf);
        send_fin(w, sreq, n);
        complete(r, n, rc != FMPL_SUCCESS ? rc : error);
        return;
    }
    if (rbuf.kind == FMPL_MEM_SHARED || !rndv_cma || !fmpl_fab.peers[w].cma) {
        fmpl_chan_rec *rec = fmpl_chan_reserve(w, sizeof(cts_body));
        rec->type = REC_CTS;
        cts_body *b = fmpl_chan_payload(rec);
        b->sreq = sreq;
        b->rreq = (uint64_t)(uintptr_t)r;
        b->rbuf_addr = rbuf.addr;
        b->rbuf_kind = rbuf.kind;
        b->how = rbuf.kind == FMPL_MEM_SHARED ? CTS_PUT : CTS_STREAM;
        b->bytes = n;
        r->st_bytes = n;
        fmpl_chan_publish(w, rec);
        return; /* completes on FIN or on the last DATA record */
    }
    int rc = fmpl_fab_cma_read(w, r->buf, sbuf.addr, (size_t)n);
    send_fin(w, sreq, n);
    complete(r, n, rc != FMPL_SUCCESS ? rc : error);
}

/* Push DATA records of a streaming send while the channel has room now
 * (never waits: progress calls it, and a wait would call progress). */
static int stream_some(fmpl_tm_req *s)
{
    int w = s->team->world[s->peer];
    int64_t chunk = (fmpl_chan_max_record - FMPL_CHAN_HEADER - (int64_t)sizeof(data_body)) / 2;
    int64_t total = s->st_bytes;
    int n = 0;
    while (s->streamed < total) {
        int64_t len = total - s->streamed < chunk ? total - s->streamed : chunk;
        fmpl_chan_rec *rec = fmpl_chan_try_reserve(w, (int64_t)sizeof(data_body) + len);
        if (!rec)
            return n;
        rec->type = REC_DATA;
        data_body *b = fmpl_chan_payload(rec);
        b->rreq = s->peer_req;
        b->offset = s->streamed;
        b->len = len;
        b->last = s->streamed + len == total;
        memcpy(b + 1, (const char *)s->buf + s->streamed, (size_t)len);
        fmpl_chan_publish(w, rec);
        s->streamed += len;
        n++;
    }
    list_remove(s);
    nstreaming--;
    complete(s, total, FMPL_SUCCESS);
    return n;
}

/* ------------------------------------------------------------ arrivals */

static fmpl_tm_req *find_posted(fmpl_team *t, int src, int tag)
{
    for (fmpl_tm_req *r = t->tm->posted.next; r != &t->tm->posted; r = r->next)
        if (matches(r->peer, r->tag, src, tag))
            return r;
    return NULL;
}

/* Bytes of a pipelined record's payload present now. */
static inline int64_t pipe_ready(fmpl_chan_rec *rec)
{
    return (int64_t)__atomic_load_n(&rec->flags, __ATOMIC_ACQUIRE);
}

/* Copy the first n bytes of a record's payload to dst.  A pipelined one is
 * copied segment by segment as S writes it (S is in the middle of its
 * send, so the wait is short unless S lost its core: spin, then yield);
 * on return all of it has arrived, so the caller may release it. */
/* A by-reference record: claim it and copy from S's buffer, or, when S
 * gave up waiting, copy what it put into the record. */
static void ref_copy_out(fmpl_chan_rec *rec, int w, void *dst, int64_t n)
{
    const ref_body *b = fmpl_chan_payload(rec);
    fmpl_raddr state = {.addr = b->state_addr, .rank = w, .kind = FMPL_MEM_SHARED};
    uint64_t posted = (b->seq << 8) | REF_POSTED;
    if (fmpl_fab_cswap(state, posted, (b->seq << 8) | REF_CLAIMED) == posted) {
        fmpl_raddr sbuf = {.addr = b->sbuf_addr, .rank = w, .kind = FMPL_MEM_SHARED};
        if (n)
            memcpy(dst, fmpl_fab_ptr(sbuf), (size_t)n);
        fmpl_fab_notify(state, (b->seq << 8) | REF_DONE);
        return;
    }
    /* S is inlining (or has): wait for the end of its copy. */
    const _Atomic uint64_t *line = fmpl_fab_ptr(state);
    fmpl_waiter wt = FMPL_WAITER_INIT;
    while ((atomic_load_explicit(line, memory_order_acquire) & 0xff) != REF_INLINE)
        fmpl_wait_once(&wt);
    memcpy(dst, b + 1, (size_t)n);
}

static void eager_copy_out(fmpl_chan_rec *rec, int w, void *dst, int64_t n)
{
    const char *data = fmpl_chan_payload(rec);
    if (rec->type == REC_EAGER_REF) {
        ref_copy_out(rec, w, dst, n);
        return;
    }
    if (rec->type != REC_EAGER_PIPE) {
        if (n)
            memcpy(dst, data, (size_t)n);
        return;
    }
    fmpl_waiter wt = FMPL_WAITER_INIT;
    int64_t done = 0;
    while (done < n) {
        int64_t ready = pipe_ready(rec);
        if (ready > n)
            ready = n;
        if (ready > done) {
            memcpy((char *)dst + done, data + done, (size_t)(ready - done));
            done = ready;
        } else {
            fmpl_wait_once(&wt);
        }
    }
    while (pipe_ready(rec) < rec->size) /* truncated: the rest still arrives */
        fmpl_wait_once(&wt);
}

static void take_unexpected(fmpl_tm_req *r, fmpl_team *t, fmpl_tm_unexp *u);

static void on_eager(fmpl_team *t, fmpl_chan_rec *rec, int w)
{
    fmpl_tm_req *r = find_posted(t, rec->source, rec->tag);
    if (r) {
        list_remove(r);
        int64_t n = rec->size < r->size ? rec->size : r->size;
        eager_copy_out(rec, w, r->buf, n);
        r->st_source = rec->source;
        r->st_tag = rec->tag;
        complete(r, n, rec->size > r->size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS);
        return;
    }
    fmpl_tm_unexp *u = unexp_get();
    if (!u) {
        fmpl_log_error("out of memory for an unexpected message");
        return;
    }
    u->source = rec->source;
    u->tag = rec->tag;
    u->size = rec->size;
    u->rendezvous = 0;
    if (!(u->data = unexp_payload(u, rec->size))) {
        unexp_put(u);
        fmpl_log_error("out of memory for an unexpected message of %lld bytes",
                       (long long)rec->size);
        return;
    }
    eager_copy_out(rec, w, u->data, rec->size);
    /* An EAGER_PIPE copy waits for the sender, and a wait lets other
     * threads post receives (progress/threads.c): one that matches now
     * takes the message, older than anything still in w's channel, rather
     * than the next one. */
    fmpl_tm_req *late = find_posted(t, u->source, u->tag);
    if (late) {
        list_remove(late);
        take_unexpected(late, t, u);
        return;
    }
    u->next = &t->tm->unexpected;
    u->prev = t->tm->unexpected.prev;
    t->tm->unexpected.prev->next = u;
    t->tm->unexpected.prev = u;
}

static void on_rts(fmpl_team *t, fmpl_chan_rec *rec, int w)
{
    const rts_body *b = fmpl_chan_payload(rec);
    fmpl_raddr sbuf = {.addr = b->sbuf_addr, .rank = w, .kind = b->sbuf_kind,
                       .key = b->sbuf_key};
    fmpl_tm_req *r = find_posted(t, rec->source, rec->tag);
    if (r) {
        list_remove(r);
        rndv_start_recv(r, rec->source, rec->tag, rec->size, b->sreq, sbuf);
        return;
    }
    fmpl_tm_unexp *u = unexp_get();
    if (!u) {
        fmpl_log_error("out of memory for an unexpected message");
        return;
    }
    u->source = rec->source;
    u->tag = rec->tag;
    u->size = rec->size;
    u->rendezvous = 1;
    u->sreq = b->sreq;
    u->sbuf = sbuf;
    u->data = NULL;
    u->next = &t->tm->unexpected;
    u->prev = t->tm->unexpected.prev;
    t->tm->unexpected.prev->next = u;
    t->tm->unexpected.prev = u;
}

static void on_cts(fmpl_chan_rec *rec, int w)
{
    const cts_body *b = fmpl_chan_payload(rec);
    fmpl_tm_req *s = (fmpl_tm_req *)(uintptr_t)b->sreq;
    s->peer_req = b->rreq;
    s->st_bytes = b->bytes;
    if (b->how == CTS_PUT) {
        fmpl_raddr dst = {.addr = b->rbuf_addr, .rank = w, .kind = b->rbuf_kind};
        int rc = fmpl_fab_put(s->buf, (size_t)b->bytes, dst);
        send_fin(w, b->rreq, b->bytes);
        complete(s, b->bytes, rc);
        return;
    }
    s->streamed = 0;
    list_append(&streaming, s);
    nstreaming++;
}

static void on_fin(fmpl_chan_rec *rec)
{
    const fin_body *b = fmpl_chan_payload(rec);
    fmpl_tm_req *r = (fmpl_tm_req *)(uintptr_t)b->req;
    if (r->registered) { /* network step 3 */
        fmpl_fab_deregister(r->buf, (size_t)r->size);
        r->registered = 0;
    }
    complete(r, b->bytes, r->kind == FMPL_TM_RECV ? r->st_error : FMPL_SUCCESS);
}

static void on_data(fmpl_chan_rec *rec)
{
    const data_body *b = fmpl_chan_payload(rec);
    fmpl_tm_req *r = (fmpl_tm_req *)(uintptr_t)b->rreq;
    memcpy((char *)r->buf + b->offset, b + 1, (size_t)b->len);
    if (b->last)
        complete(r, b->offset + b->len, r->st_error);
}

static void handle(fmpl_chan_rec *rec, int w)
{
    switch (rec->type) {
    case REC_EAGER:
    case REC_EAGER_PIPE:
    case REC_EAGER_REF:
    case REC_RTS: {
        fmpl_team *t = rec->context >= 0 && rec->context < FMPL_MAX_TEAMS
                           ? fmpl_teams[rec->context] : NULL;
        if (!t || !t->tm) {
            fmpl_log_error("message for unknown communicator context %d from rank %d dropped",
                           rec->context, w);
            return;
        }
        if (rec->type != REC_RTS)
            on_eager(t, rec, w);
        else
            on_rts(t, rec, w);
        return;
    }
    case REC_CTS:
        on_cts(rec, w);
        return;
    case REC_FIN:
        on_fin(rec);
        return;
    case REC_DATA:
        on_data(rec);
        return;
    default:
        if (rec->type >= FMPL_CHAN_TYPE_EXT_FIRST && rec->type <= FMPL_CHAN_TYPE_EXT_LAST &&
            fmpl_chan_handlers[rec->type]) {
            fmpl_chan_handlers[rec->type](rec, w);
            return;
        }
        /* A message from w is lost, and its receive would wait for ever:
         * end the job now, naming the pair. */
        fmpl_log_print("error", "corrupt channel record type %d from rank %d: ending the job",
                       rec->type, w);
        abort();
    }
}

static inline void handle_marked(fmpl_chan_rec *rec, int w)
{
    handling[w] = 1;
    handle(rec, w);
    fmpl_chan_release(w, rec);
    handling[w] = 0;
}

int fmpl_tm_handle_from(int w, fmpl_chan_rec *rec)
{
    if (handling[w])
        return 0;
    handle_marked(rec, w);
    return 1;
}

int fmpl_tm_progress(void)
{
    /* A full channel makes a sender progress while it waits (channel.c), and
     * handling a record may send one: bound the nesting. */
    static int depth;
    if (depth >= 4)
        return 0;
    depth++;
    /* Up to the highest linked peer: entries not linked never hold a record,
     * and linked_end only grows, so poll_start stays below it. */
    int n = 0, size = fmpl_fab.linked_end;
    for (int i = 0, w = poll_start; i < size; i++, w = w + 1 < size ? w + 1 : 0) {
        fmpl_chan_rec *rec;
        while (!handling[w] && (rec = fmpl_chan_peek(w)) != NULL) {
            handle_marked(rec, w);
            n++;
        }
    }
    poll_start = poll_start + 1 < size ? poll_start + 1 : 0;
    if (nstreaming) {
        fmpl_tm_req *s = streaming.next;
        while (s != &streaming) {
            fmpl_tm_req *next = s->next;
            n += stream_some(s);
            s = next;
        }
    }
    depth--;
    return n;
}

/* ------------------------------------------------------------ operations */

static int send_eager_copy(fmpl_team *t, const void *buf, int64_t size, int dst, int tag)
{
    int w = t->world[dst];
    fmpl_chan_rec *rec = fmpl_chan_reserve(w, size);
    rec->type = REC_EAGER;
    rec->context = t->peer_id[dst]; /* the receiver's id */
    rec->tag = tag;
    rec->source = t->rank;
    rec->size = size;
    if (size < eager_pipe || fmpl_chan_is_net(w)) {
        if (size) /* buf may be NULL for an empty message */
            memcpy(fmpl_chan_payload(rec), buf, (size_t)size);
        fmpl_chan_publish(w, rec);
        return 1;
    }
    /* Pipelined: the envelope first, then the payload segment by segment.
     * The record stays ours to write until R has seen all of it. */
    rec->type = REC_EAGER_PIPE;
    fmpl_chan_publish(w, rec);
    char *data = fmpl_chan_payload(rec);
    for (int64_t off = 0; off < size; off += eager_segment) {
        int64_t len = size - off < eager_segment ? size - off : eager_segment;
        memcpy(data + off, (const char *)buf + off, (size_t)len);
        __atomic_store_n(&rec->flags, (uint32_t)(off + len), __ATOMIC_RELEASE);
    }
    return 1;
}

/* By reference (the sequence at the top of this file): publish, wait for R
 * to copy, or inline the payload once FMPL_EAGER_REF_WAIT has passed. */
static void send_eager_ref(fmpl_team *t, const void *buf, int64_t size, int dst, int tag, int w)
{
    fmpl_chan_rec *rec = fmpl_chan_reserve(w, (int64_t)sizeof(ref_body) + size);
    uint64_t seq = ++ref_seq[fmpl_fab_world_index(w)];
    _Atomic uint64_t *state = &ref_state[fmpl_fab_world_index(w)].v;
    atomic_store_explicit(state, (seq << 8) | REF_POSTED, memory_order_relaxed);
    rec->type = REC_EAGER_REF;
    rec->context = t->peer_id[dst];
    rec->tag = tag;
    rec->source = t->rank;
    rec->size = size;
    ref_body *b = fmpl_chan_payload(rec);
    b->sbuf_addr = fmpl_fab_raddr(buf).addr;
    b->state_addr = fmpl_fab_raddr(state).addr;
    b->seq = seq;
    fmpl_chan_publish(w, rec); /* release: the state line is set before */
    /* Until R claims the record, S spins and never yields: a yield would
     * hand the core away for a time slice while the payload could be
     * inlined in a fraction of that.  So S gives up waiting when
     * FMPL_EAGER_REF_WAIT has passed or when its spin budget is spent
     * (FMPL_SPIN_COUNT idle polls: the point where any other wait would
     * start to yield, reached at once on an oversubscribed host).  Once R
     * has claimed it, R is copying and S waits as any wait does. */
    uint64_t start = 0;
    int claimed = 0;
    fmpl_waiter wt = FMPL_WAITER_INIT;
    for (unsigned polls = 0;; polls++) {
        if ((atomic_load_explicit(state, memory_order_acquire) & 0xff) == REF_DONE)
            return;
        /* wt.polls reaching the budget is where fmpl_wait_once would yield. */
        int give_up = !claimed && wt.polls >= fmpl_spin_count;
        if (!claimed && !give_up && (polls & 63) == 63) {
            uint64_t now = fmpl_now_ns();
            if (!start)
                start = now;
            else if (now - start >= eager_ref_wait_ns)
                give_up = 1;
        }
        if (give_up) {
            uint64_t posted = (seq << 8) | REF_POSTED;
            if (atomic_compare_exchange_strong_explicit(state, &posted,
                                                        (seq << 8) | REF_INLINING,
                                                        memory_order_acq_rel,
                                                        memory_order_acquire)) {
                memcpy(b + 1, buf, (size_t)size);
                atomic_store_explicit(state, (seq << 8) | REF_INLINE, memory_order_release);
                return;
            }
            claimed = 1; /* R is copying: wait for DONE */
        }
        if (!fmpl_tm_progress())
            fmpl_wait_once(&wt);
    }
}

int fmpl_tm_send_eager(fmpl_team *t, const void *buf, int64_t size, int dst, int tag)
{
    if (size > eager_max)
        return 0;
    int w = t->world[dst];
    /* Not with several application threads: the state line is one per
     * destination, and the sender lets the core go while it waits
     * (progress/threads.c), so another thread's send could take it. */
    /* Its state lines are for my world's members only. */
    if (size >= eager_ref && w != fmpl_fab.rank && !fmpl_fab.peers[w].net &&
        (unsigned)fmpl_fab_world_index(w) < (unsigned)fmpl_fab.size &&
        !fmpl_threads_on && fmpl_fab_is_shared(buf) &&
        (int64_t)sizeof(ref_body) + size <= fmpl_chan_max_record - FMPL_CHAN_HEADER) {
        send_eager_ref(t, buf, size, dst, tag, w);
        return 1;
    }
    return send_eager_copy(t, buf, size, dst, tag);
}

int fmpl_tm_isend(fmpl_tm_req *r, fmpl_team *t, const void *buf, int64_t size, int dst,
                  int tag, int mode)
{
    int w = t->world[dst];
    r->kind = FMPL_TM_SEND;
    r->complete = 0;
    r->cancelled = 0;
    r->mode = (uint8_t)mode;
    r->team = t;
    r->peer = dst;
    r->tag = tag;
    r->buf = (void *)buf;
    r->size = size;
    r->st_error = FMPL_SUCCESS;
    r->registered = 0;
    r->inflight = 0;
    r->next = r->prev = NULL;
    /* Never by reference here: isend must not wait (progress calls it). */
    if (mode == FMPL_TM_MODE_STANDARD && size <= eager_max &&
        send_eager_copy(t, buf, size, dst, tag)) {
        complete(r, size, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    fmpl_raddr where = fmpl_fab_raddr(buf);
    if (fmpl_fab.peers[w].net && size > 0 && where.kind == FMPL_MEM_PRIVATE) {
        int rc = fmpl_fab_register(buf, (size_t)size, &where); /* network step 1 */
        if (rc != FMPL_SUCCESS)
            return rc;
        r->registered = 1;
    }
    fmpl_chan_rec *rec = fmpl_chan_reserve(w, sizeof(rts_body));
    rec->type = REC_RTS;
    rec->context = t->peer_id[dst]; /* the receiver's id */
    rec->tag = tag;
    rec->source = t->rank;
    rec->size = size;
    rts_body *b = fmpl_chan_payload(rec);
    b->sreq = (uint64_t)(uintptr_t)r;
    b->sbuf_addr = where.addr;
    b->sbuf_kind = where.kind;
    b->sbuf_key = where.key;
    track(r);
    fmpl_chan_publish(w, rec);
    return FMPL_SUCCESS;
}

static void take_unexpected(fmpl_tm_req *r, fmpl_team *t, fmpl_tm_unexp *u)
{
    if (u->rendezvous) {
        rndv_start_recv(r, u->source, u->tag, u->size, u->sreq, u->sbuf);
        if (!r->complete)
            track(r);
    } else {
        int64_t n = u->size < r->size ? u->size : r->size;
        if (n)
            memcpy(r->buf, u->data, (size_t)n);
        r->st_source = u->source;
        r->st_tag = u->tag;
        complete(r, n, u->size > r->size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS);
    }
    (void)t;
    unexp_put(u);
}

static void recv_setup(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, int src, int tag)
{
    r->kind = FMPL_TM_RECV;
    r->complete = 0;
    r->cancelled = 0;
    r->mode = 0;
    r->team = t;
    r->peer = src;
    r->tag = tag;
    r->buf = buf;
    r->size = size;
    r->st_error = FMPL_SUCCESS;
    r->st_bytes = 0;
    r->inflight = 0;
    r->next = r->prev = NULL;
}

int fmpl_tm_irecv(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, int src, int tag)
{
    recv_setup(r, t, buf, size, src, tag);
    fmpl_tm_unexp *u = fmpl_tm_probe(t, src, tag);
    if (u) {
        fmpl_tm_dequeue(t, u);
        take_unexpected(r, t, u);
        return FMPL_SUCCESS;
    }
    list_append(&t->tm->posted, r);
    track(r);
    return FMPL_SUCCESS;
}

/* A blocking receive from a known source that nothing else can match
 * first (no receive of its team posted, no unexpected match): the caller
 * keeps r off the posted queue and polls the source's channel with this.
 * An EAGER record that matches is copied straight out (no queue entry, no
 * search); any other record is handled as progress would, and a match it
 * left in the unexpected queue is taken.  Returns 1 once r is matched (an
 * eager one is complete; a rendezvous one completes like any other). */
int fmpl_tm_recv_direct_poll(fmpl_tm_req *r, int w)
{
    fmpl_chan_rec *rec = handling[w] ? NULL : fmpl_chan_peek(w);
    if (!rec)
        return 0;
    int type = rec->type;
    if ((type == REC_EAGER || type == REC_EAGER_PIPE || type == REC_EAGER_REF ||
         type == REC_RTS) &&
        rec->context == r->team->id && matches(r->peer, r->tag, rec->source, rec->tag)) {
        /* Marked like any handling: an EAGER_PIPE copy waits for the
         * sender, and a wait lets progress (another thread's too) run,
         * which must not take this record as well. */
        handling[w] = 1;
        if (type == REC_RTS) {
            const rts_body *b = fmpl_chan_payload(rec);
            fmpl_raddr sbuf = {.addr = b->sbuf_addr, .rank = w, .kind = b->sbuf_kind,
                               .key = b->sbuf_key};
            rndv_start_recv(r, rec->source, rec->tag, rec->size, b->sreq, sbuf);
        } else {
            int64_t n = rec->size < r->size ? rec->size : r->size;
            eager_copy_out(rec, w, r->buf, n);
            r->st_source = rec->source;
            r->st_tag = rec->tag;
            complete(r, n, rec->size > r->size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS);
        }
        fmpl_chan_release(w, rec);
        handling[w] = 0;
        return 1;
    }
    handle_marked(rec, w);
    return 0; /* the record was not ours: handling it queued nothing we match */
}

int fmpl_tm_recv_direct_take(fmpl_tm_req *r)
{
    if (r->team->tm->unexpected.next == &r->team->tm->unexpected)
        return 0;
    fmpl_tm_unexp *u = fmpl_tm_probe(r->team, r->peer, r->tag);
    if (!u)
        return 0;
    fmpl_tm_dequeue(r->team, u);
    take_unexpected(r, r->team, u);
    return 1;
}

int fmpl_tm_recv_direct_start(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, int src,
                              int tag)
{
    recv_setup(r, t, buf, size, src, tag);
    /* Not with several application threads: while this one waits, another
     * thread's progress would move the records it is waiting for into the
     * unexpected queue (no posted receive matches them), and the next poll
     * of the channel would take a later message of the same source and tag
     * before them (MPICH's threads/pt2pt/mt_bsendrecv saw 5, 3, 4). */
    if (src < 0 || fmpl_threads_on || t->tm->posted.next != &t->tm->posted)
        return 0;
    return fmpl_tm_recv_direct_take(r) ? 2 : 1;
}

int fmpl_tm_cancel_recv(fmpl_tm_req *r)
{
    if (r->complete || !r->next)
        return 0;
    list_remove(r);
    r->cancelled = 1;
    complete(r, 0, FMPL_SUCCESS);
    return 1;
}

fmpl_tm_unexp *fmpl_tm_probe(fmpl_team *t, int src, int tag)
{
    for (fmpl_tm_unexp *u = t->tm->unexpected.next; u != &t->tm->unexpected; u = u->next)
        if (matches(src, tag, u->source, u->tag))
            return u;
    return NULL;
}

void fmpl_tm_dequeue(fmpl_team *t, fmpl_tm_unexp *u)
{
    (void)t;
    u->prev->next = u->next;
    u->next->prev = u->prev;
    u->next = u->prev = NULL;
}

int fmpl_tm_imrecv(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, fmpl_tm_unexp *u)
{
    recv_setup(r, t, buf, size, u->source, u->tag);
    take_unexpected(r, t, u);
    return FMPL_SUCCESS;
}
