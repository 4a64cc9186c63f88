/* Any-source domain: receiver-matched messages in arrival order.
 *
 * Each rank owns, per team, one ring that every member may append to:
 *   sender S -> receiver R (ring in R's segment):
 *     1. S fetch-adds R.ring.tail by the record length     -> position p
 *        (the order of these fetch-adds is the arrival order)
 *     2. S waits until p + length - R.ring.head <= capacity (space is free)
 *     3. S writes the record {source, index, size, payload} at p
 *        (small messages, up to FMPL_ANY_EAGER_MAX) or {source, index, size,
 *        RENDEZVOUS} (large ones)
 *     4. S release-stores record.ready = p + 1              <- arrived
 *     5. large only: S sends the payload with the sender-matched protocol
 *        on the pair's internal index FMPL_IDX_ANY_RNDV and waits for it
 *   R, in fmpl_recv_any:
 *     6. scans records from head in position order, stopping at the first
 *        that is not ready, for the first unconsumed one whose index matches
 *     7. copies the payload out (or, for rendezvous, posts the sender-matched
 *        receive on FMPL_IDX_ANY_RNDV into the user's buffer and waits: one
 *        copy, zero with shared buffers), marks the record consumed
 *     8. advances head over consumed records, zeroing the ready word of
 *        each 64-byte unit of their payloads (a later record may start
 *        there, and payload must not pass for its ready word), and
 *        release-stores it
 * The ring is the only buffering: a sender whose record does not fit waits
 * (step 2) until the receiver consumes; messages never overwrite each other.
 * Over the network (R a network peer): step 1 is a remote fetch-add (and
 * while the network backend is up every sender's is, fabric.h: a
 * provider's atomics and the CPU's do not mix), step 2 reads R's head with
 * a get, step 3 is a put of the payload and of the header from its 8th
 * byte, step 4 a notify of the ready word, ordered after the puts. */
#include "protocols/any_source.h"
#include "protocols/sender_match.h"
#include "base/error.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_any_queue, "FMPL_ANY_QUEUE_SIZE", "256k",
             "bytes of each rank's any-source ring per communicator");
FMPL_TUNABLE(tunable_any_eager, "FMPL_ANY_EAGER_MAX", "8k",
             "any-source messages up to this size are buffered at the receiver; larger "
             "ones wait for the receiver and move with one copy");

typedef struct any_rec {
    _Atomic uint64_t ready;  /* position + 1 once written */
    int64_t size;
    uint64_t len;            /* record length in bytes, header included */
    int32_t source;
    int32_t index;
    uint32_t rendezvous;
    uint32_t consumed;       /* written by the owner only */
    char pad[24];
} any_rec;

#define REC_HDR ((uint64_t)sizeof(any_rec))

int fmpl_any_rings = 1;

static uint64_t capacity;
static int64_t eager_max;

int fmpl_any_init(void)
{
    long long cap = fmpl_tunable_long(&tunable_any_queue);
    if (cap < 4096)
        cap = 4096;
    capacity = ((uint64_t)cap + 63) & ~63ull;
    eager_max = fmpl_tunable_long(&tunable_any_eager);
    if (eager_max < 0)
        eager_max = 0;
    if ((uint64_t)eager_max > capacity - REC_HDR)
        eager_max = (int64_t)(capacity - REC_HDR);
    return FMPL_SUCCESS;
}

static char *ring_data(fmpl_any_ring *r) { return (char *)(r + 1); }

int fmpl_any_team_create(fmpl_team *t, fmpl_raddr *mine)
{
    fmpl_any_team *a = calloc(1, sizeof *a);
    if (!a)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for the any-source domain");
    t->any = a;
    if (!fmpl_any_rings) { /* no ring: address 0 tells the peers */
        *mine = (fmpl_raddr){0};
        return FMPL_SUCCESS;
    }
    a->mine = fmpl_fab_alloc(sizeof(fmpl_any_ring) + capacity);
    a->peer = calloc((size_t)t->size, sizeof *a->peer);
    a->peer_at = calloc((size_t)t->size, sizeof *a->peer_at);
    if (!a->mine || !a->peer || !a->peer_at) {
        fmpl_any_team_destroy(t);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a %llu-byte any-source ring",
                          (unsigned long long)capacity);
    }
    memset(a->mine, 0, sizeof(fmpl_any_ring) + capacity);
    *mine = fmpl_fab_raddr(a->mine);
    return FMPL_SUCCESS;
}

int fmpl_any_team_connect(fmpl_team *t, const fmpl_raddr *rings)
{
    if (!t->any->mine)
        return FMPL_SUCCESS; /* rings are off in this process (and so in all) */
    for (int p = 0; p < t->size; p++) {
        t->any->peer_at[p] = rings[p];
        t->any->peer[p] = fmpl_fab_ptr(rings[p]);
        if (!t->any->peer[p] && !fmpl_fab.peers[t->world[p]].net)
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "member %d's any-source ring is not shared", p);
    }
    return FMPL_SUCCESS;
}

void fmpl_any_team_destroy(fmpl_team *t)
{
    if (!t->any)
        return;
    fmpl_fab_free(t->any->mine);
    free(t->any->peer);
    free(t->any->peer_at);
    free(t->any);
    t->any = NULL;
}

/* Copy between a linear buffer and the ring, wrapping at the end. */
static void ring_copy_in(fmpl_any_ring *r, uint64_t pos, const void *src, size_t len)
{
    uint64_t at = pos % capacity;
    size_t first = len < capacity - at ? len : (size_t)(capacity - at);
    memcpy(ring_data(r) + at, src, first);
    memcpy(ring_data(r), (const char *)src + first, len - first);
}

static void ring_copy_out(fmpl_any_ring *r, uint64_t pos, void *dst, size_t len)
{
    uint64_t at = pos % capacity;
    size_t first = len < capacity - at ? len : (size_t)(capacity - at);
    memcpy(dst, ring_data(r) + at, first);
    memcpy((char *)dst + first, ring_data(r), len - first);
}

static any_rec *rec_at(fmpl_any_ring *r, uint64_t pos)
{
    return (any_rec *)(ring_data(r) + pos % capacity);
}

/* Steps 2-4 to a network peer's ring at `at`. */
static int send_remote(fmpl_raddr at, uint64_t pos, const any_rec *hdr, const void *buf,
                       int64_t size)
{
    fmpl_raddr head_at = at;
    head_at.addr += offsetof(fmpl_any_ring, head);
    fmpl_waiter w = FMPL_WAITER_INIT;
    for (;;) {
        uint64_t head;
        int rc = fmpl_fab_get(&head, sizeof head, head_at);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (pos + hdr->len - head <= capacity)
            break;
        if (!fmpl_sm_progress())
            fmpl_wait_once(&w);
    }
    fmpl_raddr data = at;
    data.addr += sizeof(fmpl_any_ring);
    int rc = FMPL_SUCCESS;
    if (!hdr->rendezvous && size > 0) { /* the payload, wrapping at the end */
        uint64_t p = (pos + REC_HDR) % capacity;
        size_t first = (uint64_t)size < capacity - p ? (size_t)size : (size_t)(capacity - p);
        rc = fmpl_fab_put(buf, first, (fmpl_raddr){data.addr + p, at.rank, at.kind, 0});
        if (rc == FMPL_SUCCESS && (size_t)size > first)
            rc = fmpl_fab_put((const char *)buf + first, (size_t)size - first, data);
    }
    fmpl_raddr rec_at_r = {data.addr + pos % capacity, at.rank, at.kind, 0};
    if (rc == FMPL_SUCCESS)
        rc = fmpl_fab_put((const char *)hdr + 8, REC_HDR - 8,
                          (fmpl_raddr){rec_at_r.addr + 8, at.rank, at.kind, 0});
    return rc == FMPL_SUCCESS ? fmpl_fab_notify(rec_at_r, pos + 1) : rc;
}

int fmpl_any_send(fmpl_team *t, const void *buf, int64_t size, int dst, int index)
{
    if (!t->any->mine)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "this process has no any-source domain");
    fmpl_any_ring *r = t->any->peer[dst];
    int rendezvous = size > eager_max;
    uint64_t len = REC_HDR + (rendezvous ? 0 : (((uint64_t)size + 63) & ~63ull));
    uint64_t pos;
    if (fmpl_fab.net_atomics) {
        fmpl_raddr tail_at = t->any->peer_at[dst];
        tail_at.addr += offsetof(fmpl_any_ring, tail);
        pos = fmpl_fab_fetch_add(tail_at, len);
        if (pos == UINT64_MAX)
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "reserving room in rank %d's any-source ring "
                                                 "failed", dst);
    } else {
        pos = atomic_fetch_add_explicit(&r->tail, len, memory_order_acq_rel);
    }
    any_rec hdr = {.size = size, .len = len, .source = t->rank, .index = index,
                   .rendezvous = (uint32_t)rendezvous};
    if (!r) {
        int rc = send_remote(t->any->peer_at[dst], pos, &hdr, buf, size);
        if (rc != FMPL_SUCCESS)
            return rc;
    } else {
        fmpl_waiter w = FMPL_WAITER_INIT;
        while (pos + len - atomic_load_explicit(&r->head, memory_order_acquire) > capacity) {
            if (!fmpl_sm_progress())
                fmpl_wait_once(&w);
        }
        if (!rendezvous)
            ring_copy_in(r, pos + REC_HDR, buf, (size_t)size);
        any_rec *rec = rec_at(r, pos);
        rec->size = size;
        rec->len = len;
        rec->source = t->rank;
        rec->index = index;
        rec->rendezvous = (uint32_t)rendezvous;
        rec->consumed = 0;
        atomic_store_explicit(&rec->ready, pos + 1, memory_order_release);
    }
    if (!rendezvous)
        return FMPL_SUCCESS;
    int idx = fmpl_team_internal_index(t, FMPL_IDX_ANY_RNDV);
    int rc = fmpl_sm_isend(t, buf, size, dst, idx);
    return rc == FMPL_SUCCESS ? fmpl_sm_send_wait(t, dst, idx) : rc;
}

static void advance_head(fmpl_any_ring *r)
{
    uint64_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
    uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
    while (head < tail) {
        any_rec *rec = rec_at(r, head);
        if (atomic_load_explicit(&rec->ready, memory_order_acquire) != head + 1 ||
            !rec->consumed)
            break;
        /* Payload where a later record may start could equal its ready
         * word (channel.h says the same of channels): zero those words. */
        for (uint64_t u = REC_HDR; u < rec->len; u += 64)
            atomic_store_explicit(&rec_at(r, head + u)->ready, 0, memory_order_relaxed);
        head += rec->len;
    }
    atomic_store_explicit(&r->head, head, memory_order_release);
}

int fmpl_any_recv(fmpl_team *t, void *buf, int64_t size, int index, fmpl_status *status)
{
    if (!t->any->mine)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "this process has no any-source domain");
    fmpl_any_ring *r = t->any->mine;
    fmpl_waiter w = FMPL_WAITER_INIT;
    any_rec *found = NULL;
    uint64_t pos = 0;
    while (!found) {
        pos = atomic_load_explicit(&r->head, memory_order_relaxed);
        uint64_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
        while (pos < tail) {
            any_rec *rec = rec_at(r, pos);
            if (atomic_load_explicit(&rec->ready, memory_order_acquire) != pos + 1)
                break; /* reserved but not written yet: later ones arrived after it */
            if (!rec->consumed && (index == FMPL_TAG_ANY || rec->index == index)) {
                found = rec;
                break;
            }
            pos += rec->len;
        }
        if (!found && !fmpl_sm_progress())
            fmpl_wait_once(&w);
    }
    int src = found->source, msg_index = found->index;
    int64_t msg_size = found->size;
    int64_t n = msg_size < size ? msg_size : size;
    int rc = FMPL_SUCCESS;
    if (!found->rendezvous) {
        ring_copy_out(r, pos + REC_HDR, buf, (size_t)n);
        found->consumed = 1;
        advance_head(r);
    } else {
        found->consumed = 1;
        advance_head(r);
        int idx = fmpl_team_internal_index(t, FMPL_IDX_ANY_RNDV);
        rc = fmpl_sm_irecv(t, buf, size, src, idx);
        if (rc == FMPL_SUCCESS)
            rc = fmpl_sm_recv_wait(t, src, idx, NULL);
        if (rc == FMPL_ERR_TRUNCATE)
            rc = FMPL_SUCCESS; /* reported below with the any-source index */
    }
    if (status) {
        status->source = src;
        status->index = msg_index;
        status->size = n;
        status->error = msg_size > size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    }
    if (rc == FMPL_SUCCESS && msg_size > size)
        rc = FMPL_ERROR(FMPL_ERR_TRUNCATE,
                        "any-source message of %lld bytes from rank %d on index %d, receive "
                        "buffer %lld",
                        (long long)msg_size, src, msg_index, (long long)size);
    return rc;
}
