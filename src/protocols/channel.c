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
 *     6. copies what it needs out, advances head by the record's length and
 *        release-stores ring.head                          <- space is free
 * The ring is first-in first-out per pair: the order of records from S is
 * the order S published them, which gives MPI's non-overtaking rule. */
#include "protocols/channel.h"
#include "protocols/tag_match.h"
#include "base/error.h"
#include "base/tunable.h"
#include "base/wait.h"

#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_chan_size, "FMPL_CHANNEL_SIZE", "128k",
             "bytes of each per-pair channel ring (tag-matched point-to-point), rounded up to a power of two");




static uint64_t capacity;   /* a power of two: positions wrap with a mask, no division */
uint64_t fmpl_chan_mask;    /* capacity - 1 */
int64_t fmpl_chan_max_record;
static chan_ring *my_rings;
chan_out *fmpl_chan_out;
chan_in *fmpl_chan_in;

static size_t ring_bytes(void) { return sizeof(chan_ring) + capacity; }
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
    int n = fmpl_fab.size;
    my_rings = fmpl_fab_alloc(ring_bytes() * (size_t)n);
    fmpl_chan_out = calloc((size_t)n, sizeof *fmpl_chan_out);
    fmpl_chan_in = calloc((size_t)n, sizeof *fmpl_chan_in);
    if (!my_rings || !fmpl_chan_out || !fmpl_chan_in)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d channels of %llu bytes", n,
                          (unsigned long long)capacity);
    for (int r = 0; r < n; r++) {
        chan_ring *ring = (chan_ring *)((char *)my_rings + ring_bytes() * (size_t)r);
        atomic_store(&ring->head, 0);
        /* Sequence 0 never matches: no stale record can look published. */
        for (uint64_t off = 0; off < capacity; off += 64)
            atomic_store(&((fmpl_chan_rec *)(ring_data(ring) + off))->seq, 0);
        fmpl_chan_in[r].ring = ring;
    }
    *base = fmpl_fab_raddr(my_rings);
    return FMPL_SUCCESS;
}

int fmpl_chan_connect(const fmpl_raddr *bases)
{
    for (int r = 0; r < fmpl_fab.size; r++) {
        char *p = fmpl_fab_ptr(bases[r]);
        if (!p)
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "rank %d's channels are not shared", r);
        fmpl_chan_out[r].ring = (chan_ring *)(p + ring_bytes() * (size_t)fmpl_fab.rank);
    }
    return FMPL_SUCCESS;
}

void fmpl_chan_finalize(void)
{
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
static void wait_space(chan_out *o, uint64_t need)
{
    if (o->tail + need - o->head_seen <= capacity)
        return;
    fmpl_waiter w = FMPL_WAITER_INIT;
    for (;;) {
        o->head_seen = atomic_load_explicit(&o->ring->head, memory_order_acquire);
        if (o->tail + need - o->head_seen <= capacity)
            return;
        /* Drain our own incoming channels meanwhile: the receiver may be
         * waiting for us to take its records before it takes ours. */
        if (!fmpl_tm_progress())
            fmpl_wait_once(&w);
    }
}

static int has_space(chan_out *o, uint64_t need)
{
    if (o->tail + need - o->head_seen <= capacity)
        return 1;
    o->head_seen = atomic_load_explicit(&o->ring->head, memory_order_acquire);
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

fmpl_chan_rec *fmpl_chan_reserve_slow(int to, int64_t payload)
{
    chan_out *o = &fmpl_chan_out[to];
    uint64_t len = ((uint64_t)(FMPL_CHAN_HEADER + payload) + 63) & ~63ull;
    uint64_t at = o->tail & fmpl_chan_mask;
    if (at + len > capacity) { /* step 1: pad to the end */
        uint64_t pad = capacity - at;
        wait_space(o, pad);
        fmpl_chan_rec *p = rec_at(o->ring, o->tail);
        p->type = FMPL_CHAN_PAD;
        p->units = (uint16_t)(pad / 64);
        atomic_store_explicit(&p->seq, (uint32_t)(o->tail / 64 + 1), memory_order_release);
        o->tail += pad;
    }
    wait_space(o, len);
    fmpl_chan_rec *rec = rec_at(o->ring, o->tail);
    rec->units = (uint16_t)(len / 64);
    rec->flags = 0;
    return rec;
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
