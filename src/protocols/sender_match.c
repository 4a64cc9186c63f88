/* Sender-matched zero-copy point-to-point.
 *
 * Areas, per team and per rank (in the rank's shared segment, or in caller
 * memory given to fmpl_init for FMPL_COMM_WORLD):
 *   slots[peer][nidx]  matching slots; slots[R][i] in sender S is written by
 *                      receiver R to announce a receive on index i
 *   done[peer][nidx]   completion lines; done[S][i] in receiver R is written by
 *                      sender S when the message on i is in place
 *
 * Receive (R posts buf/capacity for sender S on index i; n = R's post count
 * for (S, i), kept privately):
 *   1. R writes {buf address, capacity, kind} into S.slots[R][i]  (remote put)
 *   2. R release-stores S.slots[R][i].seq = n                    (the header flag)
 *   No query of S, no queue: the slot is exclusive to (S, R, i).
 * Send (S has buf/size for R on index i; S remembers the last sequence it
 * consumed on each slot):
 *   3. S acquire-loads slots[R][i].seq (or the ANY slot's) until it differs
 *      from the one it consumed last: the header is there
 *   4. S moves min(size, capacity) bytes:
 *        size <= FMPL_INLINE_MAX: into R.done[S][i].data (one cache line)
 *        buffer in R's shared heap: memcpy straight into it (zero copy, no
 *          system call)
 *        private buffer, CMA allowed and size >= FMPL_CMA_MIN: one
 *          process_vm_writev into it (single copy)
 *        otherwise: through the staging ring S->R (staging.c); R copies out
 *          and completes the receive itself, step 5 is skipped
 *   5. S writes {size, index, status} and release-stores
 *      R.done[S][i].seq = n                                       (completion)
 *   6. R acquire-loads done.seq == n, copies inline data if any.
 * Over the network (the peer is a network peer, fabric.h), the same steps
 * as remote operations: R registers a private receive buffer (cached) and
 * sends its key in the header; steps 1-2 are a put of the line from its
 * 8th byte, then a notify of its 64-bit sequence word (the backend orders
 * it after the put; the header's seq_low copy guards a sequence seen in
 * pieces, fabric.h), step 5 a flagged put of the completion line (its
 * 32-bit sequence word last: fmpl_fab_put_flagged); step 4 is a put straight into the
 * receive buffer (zero copy; no staging ring).  The waits poll only local
 * lines, as on one host.
 * Neither side ever writes a line the other side writes (no resets; the
 * spool's offer below is the one exception): each cache line makes one
 * trip per message, and a receiver may post on i again as soon as it sees
 * the completion.
 * A send whose header has not come is "pending": every FMPL call progresses
 * pending sends (an intrusive list, no allocation).  A blocking send with a
 * spool (fmpl_sendbuf_set) copies the message into the spool after the
 * timeout and returns; the spooled copy is delivered by the same progress.
 *
 * Spool: whoever arrives copies.  A spooled copy waits for the SENDER's
 * progress, which a sender computing outside FMPL does not make; so where
 * the receiver can reach it (spool and slot area in S's shared heap, R on
 * this host), S also offers it in the rest of the slot line, which is S's
 * (R writes only its first 40 bytes, and the offer word by CAS below):
 *   S1. S writes {offer_addr: the copy's offset in S's segment, offer_size}
 *       into its own S.slots[R][i], then release-stores
 *       offer = OFFERED(m), m = seen + 1: R's next post on i, since no
 *       header was unconsumed there (or the send would have matched it)
 *   R1. R posts as in steps 1-2 (its post count n); while waiting or
 *       testing that receive (not a FMPL_TAG_ANY one), R loads the offer
 *       and, when it is OFFERED(n), CASes it to PULLING(n)         (claim)
 *   R2. R copies min(size, capacity) bytes from S's segment into its own
 *       buffer (any kind: it is R's memory), completes the receive itself
 *       (size, status, truncation as in step 5) and release-stores
 *       offer = PULLED(n): S may reuse the spool record from here on
 *   S2. S's progress, for an offered send, loads the offer first: PULLED
 *       -> it consumes header n (seen = n) and frees the record, counted
 *       as delivered; PULLING -> it waits (fmpl_sendbuf_check waits for the
 *       copy to end); OFFERED -> step 3 as usual, and before consuming a
 *       header (on i, or the ANY slot) S CASes OFFERED(m) -> 0 (claim);
 *       losing that CAS, it leaves the header alone: R has the message.
 * Exactly one CAS wins, so the message is delivered once; m ties the
 * offer to one receive, so an R whose receive n was already filled by S
 * (step 4) never takes a later message offered for n + 1.  R never writes
 * S's half of the line otherwise, and S no other byte of R's; a message
 * that is never spooled never touches the offer.  Order per (S, R, i) is
 * kept: one send per (S, R, i) at a time, offered to exactly the next
 * receive.  A FMPL_TAG_ANY receive does not pull: S's progress delivers to
 * it as before (matching it there needs S's choice among its indices).
 * No search, allocation or system call on either side; R's wait adds one
 * load per poll, from the line it has just written its header into.
 * FMPL_SPOOL_PULL=0 makes no offers (sender delivery only, as before). */
#include "protocols/sender_match.h"
#include "protocols/staging.h"
#include "base/error.h"
#include "base/log.h"
#include "base/timer.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_inline_max, "FMPL_INLINE_MAX", "40",
             "messages up to this many bytes travel inside the completion line (max 40)");
FMPL_TUNABLE(tunable_cma_min, "FMPL_CMA_MIN", "16k",
             "private receive buffers: messages from this size use one CMA system call; "
             "smaller ones are staged through shared memory (0: always CMA)");

FMPL_TUNABLE(tunable_spool_pull, "FMPL_SPOOL_PULL", "1",
             "spooled messages in the shared heap: a receiver on this host may copy them "
             "itself (0: only the sender delivers them)");

fmpl_team *fmpl_teams[FMPL_MAX_TEAMS];

static int64_t inline_max = FMPL_SM_INLINE_CAP;
static int64_t cma_min = 16384;
static int spool_pull = 1;

/* Pending sends (waiting for a header, or streaming through a ring). */
static fmpl_sm_sendop pending = {.next = &pending, .prev = &pending};
static int npending;
int fmpl_sm_outstanding; /* npending + stage_expect_total */
/* Per world rank: posted private receives that may be fed by its ring, and
 * the send currently streaming into its ring. */
static int *stage_expect;
static int stage_expect_total;
static fmpl_sm_sendop **stage_owner;

/* The spool (fmpl_sendbuf_set). */
static struct {
    char *buf;
    uint64_t size;
    int timeout_ms;        /* < 0: none */
    int shared;            /* in this rank's shared heap: receivers may copy out of it */
    uint64_t head, tail;   /* ring positions (monotonic) */
    int count;             /* spooled messages not yet delivered */
    int delivered;         /* spooled messages delivered since start */
    int pulling;           /* of them, being copied by their receivers (last progress pass) */
} spool = {.timeout_ms = -1};

_Static_assert(sizeof(fmpl_sm_slot) == 64, "a matching slot is one cache line");

/* ------------------------------------------------------------ set-up */

size_t fmpl_sm_area_bytes(int size, int nidx) { return (size_t)size * (size_t)nidx * 64; }

int fmpl_sm_init(void)
{
    long long v = fmpl_tunable_long(&tunable_inline_max);
    inline_max = v < 0 ? 0 : (v > FMPL_SM_INLINE_CAP ? FMPL_SM_INLINE_CAP : v);
    v = fmpl_tunable_long(&tunable_cma_min);
    cma_min = v < 0 ? 0 : v;
    spool_pull = fmpl_tunable_long(&tunable_spool_pull) != 0;
    stage_expect = calloc((size_t)fmpl_fab.capacity, sizeof *stage_expect);
    stage_owner = calloc((size_t)fmpl_fab.capacity, sizeof *stage_owner);
    if (!stage_expect || !stage_owner)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d peers", fmpl_fab.capacity);
    return FMPL_SUCCESS;
}

void fmpl_sm_finalize(void)
{
    free(stage_expect);
    free(stage_owner);
    stage_expect = NULL;
    stage_owner = NULL;
    stage_expect_total = 0;
    pending.next = pending.prev = &pending;
    npending = 0;
    fmpl_sm_outstanding = 0;
    memset(&spool, 0, sizeof spool);
    spool.timeout_ms = -1;
}

int fmpl_sm_team_create(fmpl_team *t, void *slots, void *done)
{
    size_t n = (size_t)t->size * (size_t)t->nidx;
    fmpl_sm_team *sm = calloc(1, sizeof *sm);
    if (!sm)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a team");
    t->sm = sm;
    sm->caller_areas = slots != NULL;
    sm->slots = slots ? slots : fmpl_fab_alloc(n * sizeof(fmpl_sm_slot));
    sm->done = done ? done : fmpl_fab_alloc(n * sizeof(fmpl_sm_done));
    sm->sends = calloc(n, sizeof *sm->sends);
    sm->recvs = calloc(n, sizeof *sm->recvs);
    sm->seen = calloc(n, sizeof *sm->seen);
    sm->peer_slots = calloc((size_t)t->size, sizeof *sm->peer_slots);
    sm->peer_done = calloc((size_t)t->size, sizeof *sm->peer_done);
    sm->peer_slots_ptr = calloc((size_t)t->size, sizeof *sm->peer_slots_ptr);
    sm->peer_done_ptr = calloc((size_t)t->size, sizeof *sm->peer_done_ptr);
    if (!sm->slots || !sm->done || !sm->sends || !sm->recvs || !sm->seen || !sm->peer_slots ||
        !sm->peer_done || !sm->peer_slots_ptr || !sm->peer_done_ptr) {
        fmpl_sm_team_destroy(t);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                          "no memory for matching areas (%d peers x %d indices)", t->size,
                          t->nidx);
    }
    memset(sm->slots, 0, n * sizeof(fmpl_sm_slot));
    memset(sm->done, 0, n * sizeof(fmpl_sm_done));
    /* Caller areas in private memory: network peers need them registered. */
    if (sm->caller_areas && fmpl_fab.net) {
        fmpl_raddr r;
        int rc = fmpl_fab_register(sm->slots, n * sizeof(fmpl_sm_slot), &r);
        sm->slots_key = r.key;
        if (rc == FMPL_SUCCESS)
            rc = fmpl_fab_register(sm->done, n * sizeof(fmpl_sm_done), &r);
        sm->done_key = r.key;
        if (rc != FMPL_SUCCESS) {
            fmpl_sm_team_destroy(t);
            return rc;
        }
    }
    return FMPL_SUCCESS;
}

void fmpl_sm_team_local_areas(const fmpl_team *t, fmpl_raddr *slots, fmpl_raddr *done)
{
    *slots = fmpl_fab_raddr(t->sm->slots);
    *done = fmpl_fab_raddr(t->sm->done);
    slots->key = t->sm->slots_key;
    done->key = t->sm->done_key;
}

int fmpl_sm_team_connect(fmpl_team *t, const fmpl_raddr *slots, const fmpl_raddr *done)
{
    fmpl_sm_team *sm = t->sm;
    for (int p = 0; p < t->size; p++) {
        sm->peer_slots[p] = slots[p];
        sm->peer_done[p] = done[p];
        sm->peer_slots_ptr[p] = fmpl_fab_ptr(slots[p]);
        sm->peer_done_ptr[p] = fmpl_fab_ptr(done[p]);
        int w = t->world[p];
        if ((!sm->peer_slots_ptr[p] || !sm->peer_done_ptr[p]) && !fmpl_fab.peers[w].cma &&
            !fmpl_fab.peers[w].net)
            return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                              "rank %d's matching areas are in private memory and CMA is "
                              "unavailable (%s): pass NULL areas to fmpl_init",
                              p, fmpl_fab.cma_reason ? fmpl_fab.cma_reason : "refused");
    }
    return FMPL_SUCCESS;
}

void fmpl_sm_team_destroy(fmpl_team *t)
{
    fmpl_sm_team *sm = t->sm;
    if (!sm)
        return;
    if (!sm->caller_areas) {
        fmpl_fab_free(sm->slots);
        fmpl_fab_free(sm->done);
    } else {
        size_t n = (size_t)t->size * (size_t)t->nidx;
        if (sm->slots_key)
            fmpl_fab_deregister(sm->slots, n * sizeof(fmpl_sm_slot));
        if (sm->done_key)
            fmpl_fab_deregister(sm->done, n * sizeof(fmpl_sm_done));
    }
    free(sm->sends);
    free(sm->recvs);
    free(sm->seen);
    free(sm->peer_slots);
    free(sm->peer_done);
    free(sm->peer_slots_ptr);
    free(sm->peer_done_ptr);
    free(sm);
    t->sm = NULL;
}

int fmpl_sm_team_outstanding(const fmpl_team *t)
{
    size_t n = (size_t)t->size * (size_t)t->nidx;
    int busy = 0;
    for (size_t c = 0; c < n; c++)
        busy += (t->sm->sends[c].state != FMPL_SEND_FREE) + (t->sm->recvs[c].state != FMPL_RECV_FREE);
    return busy;
}

/* ------------------------------------------------------------ helpers */

static inline int slot_of(const fmpl_team *t, int index)
{
    return index == FMPL_TAG_ANY ? t->count + FMPL_IDX_ANY : index;
}

static inline size_t cell(const fmpl_team *t, int peer, int slot)
{
    return (size_t)peer * (size_t)t->nidx + (size_t)slot;
}

/* Offset of my cell in a peer's area: the peer's [my rank][slot]. */
static inline uint64_t remote_cell_offset(const fmpl_team *t, int slot)
{
    return cell(t, t->rank, slot) * 64;
}

static void pending_add(fmpl_sm_sendop *s)
{
    s->next = &pending;
    s->prev = pending.prev;
    pending.prev->next = s;
    pending.prev = s;
    npending++;
    fmpl_sm_outstanding++;
}

static void pending_remove(fmpl_sm_sendop *s)
{
    s->prev->next = s->next;
    s->next->prev = s->prev;
    s->next = s->prev = NULL;
    npending--;
    fmpl_sm_outstanding--;
}

/* A line written by remote operations (caller areas in private memory
 * reached by CMA, or a network peer): one flagged put (fabric.h), whose
 * 32-bit sequence word at offset 0 makes the line visible after the rest. */
static int put_line(void *line, size_t bytes, uint32_t seq, fmpl_raddr r)
{
    atomic_store_explicit((_Atomic uint32_t *)line, seq, memory_order_relaxed);
    return fmpl_fab_put_flagged(line, bytes, r);
}

/* Step 5: the completion line in the receiver, with inline data if any. */
static int write_done(fmpl_team *t, fmpl_sm_sendop *s, const void *inline_data,
                      int64_t inline_len, int status)
{
    char *base = t->sm->peer_done_ptr[s->peer];
    if (base) {
        fmpl_sm_done *d = (fmpl_sm_done *)(base + remote_cell_offset(t, s->slot));
        if (inline_data) {
            memcpy(d->data, inline_data, (size_t)inline_len);
            d->flags = FMPL_SM_INLINE;
        } else {
            d->flags = 0;
        }
        d->index = s->index;
        d->size = s->size;
        d->status = status;
        atomic_store_explicit(&d->seq, s->match_seq, memory_order_release);
        return FMPL_SUCCESS;
    }
    /* Caller-provided completion area in the receiver: CMA writes, the
     * sequence word last. */
    fmpl_sm_done d;
    memset(&d, 0, sizeof d);
    if (inline_data) {
        memcpy(d.data, inline_data, (size_t)inline_len);
        d.flags = FMPL_SM_INLINE;
    }
    d.index = s->index;
    d.size = s->size;
    d.status = status;
    fmpl_raddr r = t->sm->peer_done[s->peer];
    r.addr += remote_cell_offset(t, s->slot);
    return put_line(&d, sizeof d, s->match_seq, r);
}

static void spool_release(fmpl_sm_sendop *s);

/* A send reached its end: unlink it, and free a spooled one at once. */
static void send_finished(fmpl_sm_sendop *s, int error)
{
    s->error = error;
    s->state = FMPL_SEND_DONE;
    if (s->next)
        pending_remove(s);
    /* By its record, not its data pointer: a 0-byte message in the last
     * record of the ring points one past the spool's end. */
    if (s->spool_off != UINT64_MAX)
        spool_release(s);
}

/* Stream as much of a staged send as the ring takes.  Returns 1 when the
 * last chunk is in the ring. */
static int stream(fmpl_sm_sendop *s)
{
    fmpl_team *t = s->team;
    int w = t->world[s->peer];
    if (stage_owner[w] && stage_owner[w] != s)
        return 0;
    stage_owner[w] = s;
    fmpl_stage_ring *ring = fmpl_stage_ring_to(w);
    uint64_t prod = atomic_load_explicit(&ring->produced, memory_order_relaxed);
    uint64_t cons = atomic_load_explicit(&ring->consumed, memory_order_acquire);
    int status = s->deliver < s->size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    while (s->streamed < s->deliver && prod - cons < FMPL_STAGE_CHUNKS) {
        int64_t len = s->deliver - s->streamed;
        if (len > fmpl_stage_chunk)
            len = fmpl_stage_chunk;
        memcpy(fmpl_stage_data(ring, prod), (const char *)s->buf + s->streamed, (size_t)len);
        fmpl_stage_meta *m = &ring->meta[prod % FMPL_STAGE_CHUNKS];
        m->team = t->peer_id[s->peer]; /* the receiver's id */
        m->sender = t->rank;
        m->slot = s->slot;
        m->msg_index = s->index;
        m->offset = s->streamed;
        m->len = len;
        m->msg_size = s->size;
        m->status = status;
        s->streamed += len;
        m->last = s->streamed == s->deliver;
        atomic_store_explicit(&ring->produced, ++prod, memory_order_release);
    }
    if (s->streamed < s->deliver)
        return 0;
    stage_owner[w] = NULL;
    send_finished(s, status);
    return 1;
}

/* Steps 4-5 once the header is known. */
static void deliver(fmpl_sm_sendop *s, uint64_t buf, int64_t capacity, uint32_t kind,
                    uint64_t key)
{
    fmpl_team *t = s->team;
    int64_t n = s->size < capacity ? s->size : capacity;
    int status = s->size > capacity ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    int w = t->world[s->peer];
    int rc;
    if (n <= inline_max) {
        rc = write_done(t, s, s->buf, n, status);
    } else if (fmpl_fab.peers[w].net) { /* network step 4: a put */
        fmpl_raddr dst = {.addr = buf, .rank = w, .kind = kind, .key = key};
        rc = fmpl_fab_put(s->buf, (size_t)n, dst);
        if (rc == FMPL_SUCCESS)
            rc = write_done(t, s, NULL, 0, status);
    } else if (kind == FMPL_MEM_SHARED || w == fmpl_fab.rank) {
        fmpl_raddr dst = {.addr = buf, .rank = w, .kind = kind};
        memcpy(fmpl_fab_ptr(dst), s->buf, (size_t)n);
        rc = write_done(t, s, NULL, 0, status);
    } else if (fmpl_fab.peers[w].cma && n >= cma_min) {
        rc = fmpl_fab_cma_write(w, buf, s->buf, (size_t)n);
        if (rc == FMPL_SUCCESS)
            rc = write_done(t, s, NULL, 0, status);
    } else {
        s->deliver = n;
        s->streamed = 0;
        s->state = FMPL_SEND_STREAMING;
        if (!s->next)
            pending_add(s);
        stream(s);
        return;
    }
    send_finished(s, rc != FMPL_SUCCESS ? rc : status);
}

/* The header's sequence word, or the last one consumed while the word is
 * still arriving (seq_low disagrees: fabric.h, a flag in pieces). */
static uint64_t header_seq(const fmpl_sm_slot *h, uint64_t seen)
{
    uint64_t seq = atomic_load_explicit(&h->seq, memory_order_acquire);
    return seq == seen || (uint32_t)seq == h->seq_low ? seq : seen;
}

static int offer_settle(fmpl_sm_sendop *s);
static int offer_take(fmpl_sm_sendop *s);

/* Step 3: look for the receiver's header on the index, then the ANY slot.
 * A spooled send offered to its receiver first asks whether the receiver
 * has taken it, and claims the offer back before it consumes a header. */
static int try_match(fmpl_sm_sendop *s)
{
    fmpl_team *t = s->team;
    if (s->offered) {
        int settled = offer_settle(s);
        if (settled >= 0)
            return settled;
    }
    size_t c = cell(t, s->peer, s->index);
    fmpl_sm_slot *h = &t->sm->slots[c];
    uint64_t seq = header_seq(h, t->sm->seen[c]);
    s->slot = s->index;
    if (seq == t->sm->seen[c]) {
        if (s->index >= t->count)
            return 0;
        s->slot = t->count + FMPL_IDX_ANY;
        c = cell(t, s->peer, s->slot);
        h = &t->sm->slots[c];
        seq = header_seq(h, t->sm->seen[c]);
        if (seq == t->sm->seen[c])
            return 0;
    }
    if (s->offered && !offer_take(s))
        return 0; /* the receiver claimed it first: settled on a later pass */
    t->sm->seen[c] = seq;
    s->match_seq = (uint32_t)seq;
    /* Programs that pre-post walk the indices in order: start fetching the
     * next slot's header now, off the next send's critical path. */
    __builtin_prefetch(h + 1, 0, 3);
    deliver(s, h->buf, h->capacity, h->kind, h->key);
    return 1;
}

/* Copy out every chunk the world rank `w` has put in its ring to us. */
static int drain(int w)
{
    fmpl_stage_ring *ring = fmpl_stage_ring_from(w);
    uint64_t cons = atomic_load_explicit(&ring->consumed, memory_order_relaxed);
    uint64_t prod = atomic_load_explicit(&ring->produced, memory_order_acquire);
    int n = 0;
    for (; cons < prod; cons++, n++) {
        const fmpl_stage_meta *m = &ring->meta[cons % FMPL_STAGE_CHUNKS];
        fmpl_team *t = fmpl_teams[m->team];
        fmpl_sm_recvop *r = &t->sm->recvs[cell(t, m->sender, m->slot)];
        memcpy((char *)r->buf + m->offset, fmpl_stage_data(ring, cons), (size_t)m->len);
        r->received += m->len;
        if (m->last) {
            r->msg_size = m->msg_size;
            r->status = m->status;
            r->msg_index = m->msg_index;
            r->state = FMPL_RECV_DONE;
        }
        atomic_store_explicit(&ring->consumed, cons + 1, memory_order_release);
    }
    return n;
}

int fmpl_sm_progress(void)
{
    int n = 0;
    spool.pulling = 0;
    if (npending) {
        fmpl_sm_sendop *s = pending.next;
        while (s != &pending) {
            fmpl_sm_sendop *next = s->next;
            if (s->state == FMPL_SEND_WAITING)
                n += try_match(s);
            else if (s->state == FMPL_SEND_STREAMING)
                n += stream(s);
            s = next;
        }
    }
    if (stage_expect_total) {
        for (int w = 0; w < fmpl_fab.linked_end; w++)
            if (stage_expect[w])
                n += drain(w);
    }
    return n;
}

/* ------------------------------------------------------------ receive */

int fmpl_sm_irecv(fmpl_team *t, void *buf, int64_t size, int src, int index)
{
    int slot = slot_of(t, index);
    size_t c = cell(t, src, slot);
    fmpl_sm_recvop *r = &t->sm->recvs[c];
    if (r->state != FMPL_RECV_FREE)
        return FMPL_ERROR(FMPL_ERR_BUSY, "a receive from rank %d on index %d is outstanding",
                          src, index);
    fmpl_raddr where = fmpl_fab_raddr(buf);
    r->buf = buf;
    r->capacity = size;
    r->state = FMPL_RECV_POSTED;
    r->received = 0;
    int w = t->world[src];
    r->registered = 0;
    if (fmpl_fab.peers[w].net && where.kind == FMPL_MEM_PRIVATE && size > inline_max) {
        int rc = fmpl_fab_register(buf, (size_t)size, &where);
        if (rc != FMPL_SUCCESS) {
            r->state = FMPL_RECV_FREE;
            return rc;
        }
        r->registered = 1;
    }
    r->staged = where.kind == FMPL_MEM_PRIVATE && size > inline_max && w != fmpl_fab.rank &&
                !fmpl_fab.peers[w].net;
    if (r->staged) {
        stage_expect[t->world[src]]++;
        stage_expect_total++;
        fmpl_sm_outstanding++;
    }
    uint32_t seq = ++r->seq;

    char *base = t->sm->peer_slots_ptr[src];
    if (base) {
        fmpl_sm_slot *h = (fmpl_sm_slot *)(base + remote_cell_offset(t, slot));
        h->buf = where.addr;
        h->capacity = size;
        h->kind = where.kind;
        h->key = where.key;
        h->seq_low = seq;
        atomic_store_explicit(&h->seq, seq, memory_order_release);
        return FMPL_SUCCESS;
    }
    /* The sender's slots are caller memory: header fields, then the flag. */
    fmpl_sm_slot h = {.buf = where.addr, .capacity = size, .kind = where.kind, .key = where.key,
                      .seq_low = seq};
    fmpl_raddr r0 = t->sm->peer_slots[src];
    r0.addr += remote_cell_offset(t, slot);
    int rc = fmpl_fab_put((char *)&h + 8, 32, (fmpl_raddr){r0.addr + 8, r0.rank, r0.kind, r0.key});
    return rc == FMPL_SUCCESS ? fmpl_fab_notify(r0, seq) : rc;
}

/* Spool, the receiver's side: the sender copied the message for this
 * receive into its spool and offered it (the offer's sequence is this
 * receive's).  Claim it, copy it out of the sender's shared heap, complete
 * the receive here and say so: the sender may be computing, outside FMPL.
 * Not for FMPL_TAG_ANY receives, whose messages the sender still matches. */
static int try_pull(fmpl_team *t, int src, int index, int slot, size_t c)
{
    char *base = t->sm->peer_slots_ptr[src];
    fmpl_sm_recvop *r = &t->sm->recvs[c];
    if (!base || index == FMPL_TAG_ANY || r->state != FMPL_RECV_POSTED)
        return 0;
    fmpl_sm_slot *h = (fmpl_sm_slot *)(base + remote_cell_offset(t, slot));
    uint64_t offered = FMPL_SM_OFFER_WORD(r->seq, FMPL_SM_OFFERED);
    if (atomic_load_explicit(&h->offer, memory_order_relaxed) != offered ||
        !atomic_compare_exchange_strong_explicit(&h->offer, &offered,
                                                 FMPL_SM_OFFER_WORD(r->seq, FMPL_SM_PULLING),
                                                 memory_order_acq_rel, memory_order_relaxed))
        return 0;
    fmpl_raddr from = {.addr = h->offer_addr, .rank = t->world[src], .kind = FMPL_MEM_SHARED};
    int64_t size = h->offer_size;
    int64_t n = size < r->capacity ? size : r->capacity;
    if (n > 0)
        memcpy(r->buf, fmpl_fab_ptr(from), (size_t)n);
    r->msg_size = size;
    r->status = size > r->capacity ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    r->msg_index = index;
    r->state = FMPL_RECV_DONE;
    /* Last: from here on the sender may reuse the spool record. */
    atomic_store_explicit(&h->offer, FMPL_SM_OFFER_WORD(r->seq, FMPL_SM_PULLED),
                          memory_order_release);
    return 1;
}

static inline int recv_complete(fmpl_team *t, size_t c)
{
    return atomic_load_explicit(&t->sm->done[c].seq, memory_order_acquire) ==
               t->sm->recvs[c].seq ||
           t->sm->recvs[c].state == FMPL_RECV_DONE;
}

/* Step 6, after completion was seen. */
static int recv_finish(fmpl_team *t, int src, int index, size_t c, fmpl_status *status)
{
    fmpl_sm_recvop *r = &t->sm->recvs[c];
    fmpl_sm_done *d = &t->sm->done[c];
    int64_t size;
    int err, msg_index;
    if (r->state != FMPL_RECV_DONE) { /* completed through the line, not the ring */
        size = d->size;
        err = d->status;
        msg_index = d->index;
        if (d->flags & FMPL_SM_INLINE)
            memcpy(r->buf, d->data, (size_t)(size < r->capacity ? size : r->capacity));
    } else {
        size = r->msg_size;
        err = r->status;
        msg_index = r->msg_index;
    }
    if (r->registered) {
        fmpl_fab_deregister(r->buf, (size_t)r->capacity);
        r->registered = 0;
    }
    if (r->staged) {
        stage_expect[t->world[src]]--;
        stage_expect_total--;
        fmpl_sm_outstanding--;
    }
    int64_t delivered = size < r->capacity ? size : r->capacity;
    r->state = FMPL_RECV_FREE;
    if (status) {
        status->source = src;
        status->index = index == FMPL_TAG_ANY ? msg_index : index;
        status->size = delivered;
        status->error = err;
    }
    if (err == FMPL_ERR_TRUNCATE)
        return FMPL_ERROR(FMPL_ERR_TRUNCATE,
                          "message of %lld bytes from rank %d on index %d, receive buffer %lld",
                          (long long)size, src, msg_index, (long long)r->capacity);
    return err;
}

int fmpl_sm_recv_wait(fmpl_team *t, int src, int index, fmpl_status *status)
{
    int slot = slot_of(t, index);
    size_t c = cell(t, src, slot);
    if (t->sm->recvs[c].state == FMPL_RECV_FREE)
        return FMPL_ERROR(FMPL_ERR_NOT_PENDING, "no receive from rank %d on index %d", src,
                          index);
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (!recv_complete(t, c)) {
        if (try_pull(t, src, index, slot, c))
            break;
        if (!fmpl_sm_progress())
            fmpl_wait_once(&w);
    }
    return recv_finish(t, src, index, c, status);
}

int fmpl_sm_recv_test(fmpl_team *t, int src, int index, int *flag, fmpl_status *status)
{
    int slot = slot_of(t, index);
    size_t c = cell(t, src, slot);
    *flag = 0;
    if (t->sm->recvs[c].state == FMPL_RECV_FREE)
        return FMPL_ERROR(FMPL_ERR_NOT_PENDING, "no receive from rank %d on index %d", src,
                          index);
    if (!recv_complete(t, c) && !try_pull(t, src, index, slot, c)) {
        fmpl_poll_remote();
        fmpl_sm_progress();
        if (!recv_complete(t, c))
            return FMPL_SUCCESS;
    }
    *flag = 1;
    return recv_finish(t, src, index, c, status);
}

/* ------------------------------------------------------------ send */

int fmpl_sm_isend(fmpl_team *t, const void *buf, int64_t size, int dst, int index)
{
    fmpl_sm_sendop *s = &t->sm->sends[cell(t, dst, index)];
    /* A spooled message holding the index may have gone meanwhile (its
     * receiver copied it, or its header came): look before refusing. */
    if (s->state == FMPL_SEND_WAITING && s->spool_off != UINT64_MAX)
        try_match(s);
    if (s->state != FMPL_SEND_FREE)
        return FMPL_ERROR(FMPL_ERR_BUSY, "a send to rank %d on index %d is outstanding", dst,
                          index);
    s->buf = buf;
    s->size = size;
    s->team = t;
    s->peer = dst;
    s->index = index;
    s->error = FMPL_SUCCESS;
    s->spool_off = UINT64_MAX;
    s->offered = 0;
    s->state = FMPL_SEND_WAITING;
    if (!try_match(s))
        pending_add(s);
    return FMPL_SUCCESS;
}

static int send_finish(fmpl_sm_sendop *s)
{
    int err = s->error;
    s->state = FMPL_SEND_FREE;
    if (err == FMPL_ERR_TRUNCATE)
        return FMPL_ERROR(FMPL_ERR_TRUNCATE,
                          "message of %lld bytes to rank %d on index %d was truncated by the "
                          "receiver's smaller buffer",
                          (long long)s->size, s->peer, s->index);
    return err;
}

int fmpl_sm_send_wait(fmpl_team *t, int dst, int index)
{
    fmpl_sm_sendop *s = &t->sm->sends[cell(t, dst, index)];
    if (s->state == FMPL_SEND_FREE || s->spool_off != UINT64_MAX)
        return FMPL_ERROR(FMPL_ERR_NOT_PENDING, "no send to rank %d on index %d", dst, index);
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (s->state != FMPL_SEND_DONE) {
        if (!fmpl_sm_progress())
            fmpl_wait_once(&w);
    }
    return send_finish(s);
}

int fmpl_sm_send_test(fmpl_team *t, int dst, int index, int *flag)
{
    fmpl_sm_sendop *s = &t->sm->sends[cell(t, dst, index)];
    *flag = 0;
    if (s->state == FMPL_SEND_FREE || s->spool_off != UINT64_MAX)
        return FMPL_ERROR(FMPL_ERR_NOT_PENDING, "no send to rank %d on index %d", dst, index);
    if (s->state != FMPL_SEND_DONE) {
        fmpl_poll_remote();
        fmpl_sm_progress();
    }
    if (s->state != FMPL_SEND_DONE)
        return FMPL_SUCCESS;
    *flag = 1;
    return send_finish(s);
}

/* ------------------------------------------------------------ spool */

/* The spool is a ring of records [u64 length | data], 64-byte aligned; a
 * record is freed when its message is delivered, and the tail advances over
 * freed records.  A record never wraps: the rest of the ring is skipped.
 * An empty ring starts again at its beginning: a spool that is mostly
 * empty (each message pulled soon after it was spooled, as BLACS's are)
 * keeps reusing its first pages, warm in the cache and already mapped,
 * instead of touching a new page on each lap of a large spool (BLACS-
 * FMPL's 64 MiB ring took some 3000 page faults per rank in each PDGESV of
 * N = 2000 on a 2 x 2 grid; about 190 with this). */
typedef struct spool_rec {
    uint64_t len;    /* bytes of the record including this header */
    uint64_t live;   /* 1 until delivered */
} spool_rec;
#define SPOOL_HDR 64

static spool_rec *spool_at(uint64_t pos) { return (spool_rec *)(spool.buf + pos % spool.size); }

static int spool_alloc(int64_t size, uint64_t *data_pos)
{
    uint64_t need = SPOOL_HDR + (((uint64_t)size + 63) & ~63ull);
    if (need > spool.size)
        return 0;
    if (spool.head == spool.tail) /* empty: back to the start */
        spool.head = spool.tail = 0;
    uint64_t at = spool.head % spool.size;
    uint64_t skip = 0;
    if (at + need > spool.size)
        skip = spool.size - at; /* to the ring's start */
    if (spool.head + skip + need - spool.tail > spool.size)
        return 0;
    if (skip) {
        spool_rec *pad = spool_at(spool.head);
        if (skip >= sizeof *pad) {
            pad->len = skip;
            pad->live = 0;
        }
        spool.head += skip;
    }
    spool_rec *rec = spool_at(spool.head);
    rec->len = need;
    rec->live = 1;
    *data_pos = spool.head;
    spool.head += need;
    return 1;
}

static void spool_release(fmpl_sm_sendop *s)
{
    spool_at(s->spool_off)->live = 0;
    while (spool.tail < spool.head) {
        uint64_t at = spool.tail % spool.size;
        if (spool.size - at < SPOOL_HDR) { /* a sliver too small for a header */
            spool.tail += spool.size - at;
            continue;
        }
        spool_rec *rec = spool_at(spool.tail);
        if (rec->live)
            break;
        spool.tail += rec->len;
    }
    s->spool_off = UINT64_MAX;
    s->state = FMPL_SEND_FREE;
    spool.count--;
    spool.delivered++;
}

/* Publish a spooled send to its receiver, which may then copy it itself
 * (try_pull).  Only where the receiver reaches the slot line and the copy
 * with loads and stores: the spool and this team's slot area in this
 * rank's shared heap, the receiver on this host.  Otherwise (a spool in
 * private memory, caller-provided slot areas, a network peer) the sender
 * delivers it, from its progress, as any pending send. */
static void offer_publish(fmpl_sm_sendop *s)
{
    fmpl_team *t = s->team;
    int w = t->world[s->peer];
    if (!spool_pull || !spool.shared || !fmpl_fab_is_shared(t->sm->slots) ||
        fmpl_fab.peers[w].net || !fmpl_fab.peers[w].base)
        return;
    size_t c = cell(t, s->peer, s->index);
    fmpl_sm_slot *h = &t->sm->slots[c];
    /* No header on the index is unconsumed (or this send would have
     * matched it), so the receive it is for is the receiver's next post. */
    s->offer_seq = (uint32_t)t->sm->seen[c] + 1;
    s->offered = 1;
    h->offer_addr = fmpl_fab_raddr(s->buf).addr;
    h->offer_size = s->size;
    atomic_store_explicit(&h->offer, FMPL_SM_OFFER_WORD(s->offer_seq, FMPL_SM_OFFERED),
                          memory_order_release);
}

/* An offered send: 1 when its receiver has copied it (the send is then
 * finished and its record free), 0 while the receiver is copying it, -1
 * while it is still on offer. */
static int offer_settle(fmpl_sm_sendop *s)
{
    fmpl_team *t = s->team;
    size_t c = cell(t, s->peer, s->index);
    uint64_t v = atomic_load_explicit(&t->sm->slots[c].offer, memory_order_acquire);
    if (v == FMPL_SM_OFFER_WORD(s->offer_seq, FMPL_SM_OFFERED))
        return -1;
    if (v == FMPL_SM_OFFER_WORD(s->offer_seq, FMPL_SM_PULLING)) {
        spool.pulling++;
        return 0;
    }
    /* Pulled.  The receiver posted its header before copying: consume it,
     * or the next send on the index would take that receive as its own. */
    t->sm->seen[c] = s->offer_seq;
    s->offered = 0;
    send_finished(s, FMPL_SUCCESS);
    return 1;
}

/* Claim an offered send back before delivering it: 0 when its receiver
 * claimed it first. */
static int offer_take(fmpl_sm_sendop *s)
{
    fmpl_sm_slot *h = &s->team->sm->slots[cell(s->team, s->peer, s->index)];
    uint64_t offered = FMPL_SM_OFFER_WORD(s->offer_seq, FMPL_SM_OFFERED);
    if (!atomic_compare_exchange_strong_explicit(&h->offer, &offered, 0, memory_order_acq_rel,
                                                 memory_order_relaxed))
        return 0;
    s->offered = 0;
    return 1;
}

int fmpl_sm_spool_set(void *buf, int64_t size, int timeout_ms)
{
    if (spool.count)
        return FMPL_ERROR(FMPL_ERR_BUSY, "the spool still holds %d undelivered messages",
                          spool.count);
    spool.buf = buf;
    spool.size = buf ? (uint64_t)size & ~63ull : 0;
    spool.timeout_ms = timeout_ms < 0 ? -1 : timeout_ms;
    spool.shared = spool.size && fmpl_fab_is_shared(buf) &&
                   fmpl_fab_is_shared((char *)buf + spool.size - 1);
    spool.head = spool.tail = 0;
    return FMPL_SUCCESS;
}

int fmpl_sm_spool_check(int *nsend, int *nspool)
{
    int before = spool.delivered;
    if (spool.count) {
        fmpl_sm_progress();
        /* A receiver that claimed a message is copying it, inside its own
         * call and needing nothing from this rank: wait for the copy, so that
         * a message whose receive is posted counts as sent by this call. */
        fmpl_waiter w = FMPL_WAITER_INIT;
        while (spool.pulling) {
            fmpl_wait_once(&w);
            fmpl_sm_progress();
        }
    }
    if (nsend)
        *nsend = spool.delivered - before;
    if (nspool)
        *nspool = spool.count;
    return FMPL_SUCCESS;
}


int fmpl_sm_send(fmpl_team *t, const void *buf, int64_t size, int dst, int index)
{
    int rc = fmpl_sm_isend(t, buf, size, dst, index);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_sm_sendop *s = &t->sm->sends[cell(t, dst, index)];
    if (s->state == FMPL_SEND_DONE)
        return send_finish(s);
    if (spool.timeout_ms < 0 || !spool.buf)
        return fmpl_sm_send_wait(t, dst, index);

    uint64_t deadline = fmpl_now_ns() + (uint64_t)spool.timeout_ms * 1000000ull;
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (s->state == FMPL_SEND_WAITING && fmpl_now_ns() < deadline) {
        if (!fmpl_sm_progress())
            fmpl_wait_once(&w);
    }
    if (s->state != FMPL_SEND_WAITING) /* matched: finish as a normal send */
        return fmpl_sm_send_wait(t, dst, index);

    uint64_t pos;
    if (!spool_alloc(size, &pos)) {
        fmpl_sm_progress(); /* deliveries free spool space */
        if (s->state != FMPL_SEND_WAITING)
            return fmpl_sm_send_wait(t, dst, index);
        if (!spool_alloc(size, &pos)) {
            pending_remove(s);
            s->state = FMPL_SEND_FREE;
            return FMPL_ERROR(FMPL_ERR_SPOOL_FULL,
                              "send of %lld bytes to rank %d on index %d timed out and the "
                              "spool (%llu bytes, %d messages) has no room; nothing was sent",
                              (long long)size, dst, index, (unsigned long long)spool.size,
                              spool.count);
        }
    }
    char *copy = spool.buf + pos % spool.size + SPOOL_HDR;
    memcpy(copy, buf, (size_t)size);
    s->buf = copy;
    s->spool_off = pos;
    spool.count++;
    offer_publish(s);
    return FMPL_SUCCESS;
}
