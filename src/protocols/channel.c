/* Channels: single-producer single-consumer record rings.
 *
 * Rank R owns one ring per world sender S, in R's shared heap:
 *   S, to send a record of n bytes (header included, rounded up to 64):
 *     1. if the record would cross the ring's end, it first writes a PAD
 *        record covering the rest of the ring
 *     2. it waits until tail + n - R.ring.head <= capacity (reading head only
 *        when its cached copy says the ring may be full)
 *     3. it writes the record's header and payload at tail
 *     4. it release-stores record.seq = tail / 64 + 1       <- published
 *   R, polling:
 *     5. acquire-loads the seq of the record at its head; equal to
 *        head / 64 + 1 means a record is there (stale records of the last
 *        lap carry a smaller sequence)
 *     6. copies what it needs out, zeroes the seq word of the record's
 *        later 64-byte units (payload there could equal the sequence of a
 *        record that will start at that position), advances head by the
 *        record's length and release-stores ring.head     <- space is free
 * The ring is first-in first-out per pair: the order of records from S is
 * the order S published them, which gives MPI's non-overtaking rule.
 *
 * R on another host (a network peer, fabric.h): S builds each record in a
 * private shadow of R's ring, at the same position, and publishes it with
 * two remote operations:
 *   4n. a flagged put of the record into R's ring (fabric.h): bytes 4.. of
 *       it, then its seq word.  One message applied by R's progress where
 *       the provider allows (net_msg.c), else a put of bytes 4.. and a
 *       notify of the first 8 {seq, type, units} (the flag, ordered after
 *       the put by the backend, net_ep.c; type and units go in both, since
 *       a flag may arrive in pieces and R must never see the new seq beside
 *       a stale type)
 *   2n. when the cached head says the ring may be full, S gets R's head
 *       word (one remote read; R stores it locally as in step 6)
 * R's side is unchanged: it polls its own memory. */
#include "protocols/channel.h"
#include "protocols/tag_match.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_chan_size, "FMPL_CHANNEL_SIZE", "128k",
             "bytes of each per-pair channel ring (tag-matched point-to-point), rounded up to a power of two");




fmpl_chan_handler fmpl_chan_handlers[FMPL_CHAN_TYPE_EXT_LAST + 1];

void fmpl_chan_register_type(int type, fmpl_chan_handler fn)
{
    if (type >= FMPL_CHAN_TYPE_EXT_FIRST && type <= FMPL_CHAN_TYPE_EXT_LAST)
        fmpl_chan_handlers[type] = fn;
}

static uint64_t capacity;   /* a power of two: positions wrap with a mask, no division */
uint64_t fmpl_chan_mask;    /* capacity - 1 */
int64_t fmpl_chan_max_record;
static chan_ring *my_rings;
chan_out *fmpl_chan_out;
chan_in *fmpl_chan_in;

static size_t ring_bytes(void) { return sizeof(chan_ring) + capacity; }
static void clear_ring(chan_ring *ring);
static char *ring_data(chan_ring *r) { return fmpl_chan_ring_data(r); }

int fmpl_chan_init(fmpl_raddr *base)
{
    long long cap = fmpl_tunable_long(&tunable_chan_size);
    if (cap < 8192)
        cap = 8192;
    capacity = 8192;
    while (capacity < (uint64_t)cap && capacity < (1ull << 40))
        capacity <<= 1; /* rounded up to a power of two */
    fmpl_chan_mask = capacity - 1;
    fmpl_chan_max_record = (int64_t)capacity / 2;
    if (fmpl_chan_max_record > 65535 * 64) /* a record's length fits in 16 bits of units */
        fmpl_chan_max_record = 65535 * 64;
    /* Rings for the senders of my world, in world order; a process linked
     * later gets one of its own (fmpl_chan_link).  Polling walks every
     * universe rank up to the highest linked one: an entry not linked points
     * at a ring that never holds a record, so the poll needs no test. */
    int n = fmpl_fab.size;
    my_rings = fmpl_fab_alloc(ring_bytes() * (size_t)n);
    fmpl_chan_out = calloc((size_t)fmpl_fab.capacity, sizeof *fmpl_chan_out);
    fmpl_chan_in = calloc((size_t)fmpl_fab.capacity, sizeof *fmpl_chan_in);
    if (!my_rings || !fmpl_chan_out || !fmpl_chan_in)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d channels of %llu bytes", n,
                          (unsigned long long)capacity);
    static chan_ring never_written[2]; /* a header and one zero 64-byte unit */
    for (int r = 0; r < fmpl_fab.capacity; r++)
        fmpl_chan_in[r].ring = never_written;
    FMPL_FAB_FOR_WORLD(r) {
        chan_ring *ring = (chan_ring *)((char *)my_rings +
                                        ring_bytes() * (size_t)fmpl_fab_world_index(r));
        clear_ring(ring);
        fmpl_chan_in[r].ring = ring;
    }
    *base = fmpl_fab_raddr(my_rings);
    return FMPL_SUCCESS;
}

/* Sequence 0 never matches: no stale record can look published. */
static void clear_ring(chan_ring *ring)
{
    atomic_store(&ring->head, 0);
    for (uint64_t off = 0; off < capacity; off += 64)
        atomic_store(&((fmpl_chan_rec *)(ring_data(ring) + off))->seq, 0);
}

/* Where my records to universe rank r go: its ring for me at `at`. */
static int connect_out(int r, fmpl_raddr at)
{
    chan_out *o = &fmpl_chan_out[r];
    char *p = fmpl_fab_ptr(at);
    if (p) {
        o->ring = (chan_ring *)p;
        return FMPL_SUCCESS;
    }
    if (!fmpl_fab.peers[r].net)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "rank %d's channels are not shared", r);
    /* The shadow is touched only where records are built: calloc's
     * untouched pages cost nothing. */
    o->ring = calloc(1, ring_bytes());
    if (!o->ring)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a channel shadow to rank %d", r);
    o->net = 1;
    o->remote = at;
    return FMPL_SUCCESS;
}

int fmpl_chan_connect(const fmpl_raddr *bases)
{
    size_t mine = ring_bytes() * (size_t)fmpl_fab_world_index(fmpl_fab.rank);
    FMPL_FAB_FOR_WORLD(r) {
        fmpl_raddr at = bases[fmpl_fab_world_index(r)];
        at.addr += mine;
        int rc = connect_out(r, at);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

fmpl_raddr fmpl_chan_link_prepare(int r)
{
    chan_ring *ring = fmpl_fab_alloc(ring_bytes());
    if (!ring)
        return (fmpl_raddr){0};
    clear_ring(ring);
    fmpl_chan_in[r].ring = ring;
    fmpl_chan_in[r].head = 0;
    return fmpl_fab_raddr(ring);
}

int fmpl_chan_link(int r, fmpl_raddr theirs) { return connect_out(r, theirs); }

/* Step 4n. */
void fmpl_chan_publish_net(chan_out *o, fmpl_chan_rec *rec, uint64_t pos)
{
    /* A PAD record is read for its header alone. */
    uint64_t len = rec->type == FMPL_CHAN_PAD ? 8 : (uint64_t)rec->units * 64;
    atomic_store_explicit(&rec->seq, (uint32_t)(pos / 64 + 1), memory_order_relaxed);
    fmpl_raddr at = o->remote;
    at.addr += sizeof(chan_ring) + (pos & fmpl_chan_mask);
    int rc = fmpl_fab_put_flagged(rec, len, at);
    if (rc != FMPL_SUCCESS) {
        /* The peer's channel is broken: nothing it is owed can arrive. */
        fmpl_log_print("error", "publishing a message to rank %d over the network failed: %s",
                       at.rank, fmpl_error_string(rc));
        abort();
    }
}

/* Step 2n: R's head, read remotely. */
static uint64_t head_of(chan_out *o)
{
    if (!o->net)
        return atomic_load_explicit(&o->ring->head, memory_order_acquire);
    uint64_t head = o->head_seen;
    if (fmpl_fab_get(&head, sizeof head, o->remote) != FMPL_SUCCESS) {
        fmpl_log_print("error", "reading rank %d's channel head over the network failed",
                       o->remote.rank);
        abort();
    }
    return head;
}

void fmpl_chan_finalize(void)
{
    for (int r = 0; fmpl_chan_out && r < fmpl_fab.capacity; r++)
        if (fmpl_chan_out[r].net)
            free(fmpl_chan_out[r].ring);
    free(fmpl_chan_out);
    free(fmpl_chan_in);
    fmpl_chan_out = NULL;
    fmpl_chan_in = NULL;
    my_rings = NULL;
}

static fmpl_chan_rec *rec_at(chan_ring *r, uint64_t pos)
{
    return (fmpl_chan_rec *)(ring_data(r) + (pos & fmpl_chan_mask));
}

/* Step 2: wait for `need` free bytes. */
static int has_space(chan_out *o, uint64_t need)
{
    if (o->tail + need - o->head_seen <= capacity)
        return 1;
    o->head_seen = head_of(o);
    return o->tail + need - o->head_seen <= capacity;
}

fmpl_chan_rec *fmpl_chan_try_reserve(int to, int64_t payload)
{
    chan_out *o = &fmpl_chan_out[to];
    uint64_t len = ((uint64_t)(FMPL_CHAN_HEADER + payload) + 63) & ~63ull;
    uint64_t at = o->tail & fmpl_chan_mask;
    uint64_t need = at + len > capacity ? capacity - at + len : len;
    return has_space(o, need) ? fmpl_chan_reserve_slow(to, payload) : NULL;
}

/* Steps 1-2 when the fast path cannot: pad to the ring's end, wait for
 * room.  Whatever a wait lets run may send to `to` too and move the tail:
 * the progress it makes (handling a record can send one), and, with
 * several application threads, another thread's send (the wait lets the
 * core go: progress/threads.c).  So every decision is taken again from
 * the current tail after each wait, never from a position read before. */
fmpl_chan_rec *fmpl_chan_reserve_slow(int to, int64_t payload)
{
    chan_out *o = &fmpl_chan_out[to];
    uint64_t len = ((uint64_t)(FMPL_CHAN_HEADER + payload) + 63) & ~63ull;
    fmpl_waiter w = FMPL_WAITER_INIT;
    for (;;) {
        uint64_t at = o->tail & fmpl_chan_mask;
        uint64_t need = at + len > capacity ? capacity - at : len; /* a pad first */
        if (has_space(o, need)) {
            fmpl_chan_rec *rec = rec_at(o->ring, o->tail);
            if (need == len) {
                rec->units = (uint16_t)(len / 64);
                rec->flags = 0;
                return rec;
            }
            rec->type = FMPL_CHAN_PAD; /* step 1 */
            rec->units = (uint16_t)(need / 64);
            fmpl_chan_publish(to, rec); /* advances the tail */
            continue;
        }
        /* Drain our own incoming channels meanwhile: the receiver may be
         * waiting for us to take its records before it takes ours. */
        if (!fmpl_tm_progress())
            fmpl_wait_once(&w);
    }
}

/* Step 5 past a PAD record (fmpl_chan_peek found one at the head). */
fmpl_chan_rec *fmpl_chan_peek_slow(int from)
{
    chan_in *c = &fmpl_chan_in[from];
    for (;;) {
        fmpl_chan_rec *rec = rec_at(c->ring, c->head);
        if (atomic_load_explicit(&rec->seq, memory_order_acquire) != (uint32_t)(c->head / 64 + 1))
            return NULL;
        if (rec->type != FMPL_CHAN_PAD)
            return rec;
        c->head += (uint64_t)rec->units * 64;
        atomic_store_explicit(&c->ring->head, c->head, memory_order_release);
    }
}
