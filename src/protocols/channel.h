/* Channels: one first-in first-out record ring per ordered pair of ranks,
 * in the receiver's shared heap (seed 001's per-peer FIFO channels).  The
 * tag-matched protocol sends envelopes, eager payloads and rendezvous
 * control through them.  The sequence is in channel.c. */
#ifndef FMPL_PROTOCOLS_CHANNEL_H
#define FMPL_PROTOCOLS_CHANNEL_H

#include <stdatomic.h>
#include <stdint.h>

#include "fabric/fabric.h"

/* Every record starts with this header; records are 64-byte aligned and
 * never wrap around the end of the ring. */
typedef struct fmpl_chan_rec {
    _Atomic uint32_t seq;  /* position / 64 + 1, written last: the record is there */
    uint16_t type;         /* protocol-defined; FMPL_CHAN_PAD skips to the ring's end */
    uint16_t units;        /* record length in 64-byte units */
    int32_t context;       /* team id */
    int32_t tag;
    int32_t source;        /* sender's rank in the team */
    uint32_t flags;
    int64_t size;          /* message size */
    /* payload follows: FMPL_CHAN_HEADER bytes after the record's start */
} fmpl_chan_rec;

#define FMPL_CHAN_HEADER 32
#define FMPL_CHAN_PAD 0xffff

/* Largest record a channel accepts (half the ring). */
extern int64_t fmpl_chan_max_record;

int fmpl_chan_init(fmpl_raddr *base);
int fmpl_chan_connect(const fmpl_raddr *bases);
void fmpl_chan_finalize(void);

/* Sender: reserve a record of `payload` bytes to world rank `to`, waiting
 * (with progress) while the ring is full.  Fill it, then publish it. */
fmpl_chan_rec *fmpl_chan_reserve(int to, int64_t payload);
/* The same without waiting: NULL when the ring has no room now. */
fmpl_chan_rec *fmpl_chan_try_reserve(int to, int64_t payload);
void fmpl_chan_publish(int to, fmpl_chan_rec *rec);

static inline void *fmpl_chan_payload(fmpl_chan_rec *rec)
{
    return (char *)rec + FMPL_CHAN_HEADER;
}

/* Receiver: the next record from world rank `from`, or NULL; release it
 * when its payload has been copied out.  Inline: every poll of every wait
 * comes here (steps 5 and 6 of channel.c). */
typedef struct chan_ring {
    _Atomic uint64_t head; /* consumer position; the receiver stores it */
    char pad[56];
    /* capacity bytes of records follow */
} chan_ring;

typedef struct chan_in {   /* receiver-side state, per sender */
    chan_ring *ring;
    uint64_t head;
} chan_in;

extern chan_in *fmpl_chan_in;
extern uint64_t fmpl_chan_mask;
fmpl_chan_rec *fmpl_chan_peek_slow(int from);

static inline char *fmpl_chan_ring_data(chan_ring *r) { return (char *)(r + 1); }

static inline fmpl_chan_rec *fmpl_chan_peek(int from)
{
    chan_in *c = &fmpl_chan_in[from];
    fmpl_chan_rec *rec = (fmpl_chan_rec *)(fmpl_chan_ring_data(c->ring) + (c->head & fmpl_chan_mask));
    if (atomic_load_explicit(&rec->seq, memory_order_acquire) != (uint32_t)(c->head / 64 + 1))
        return NULL;
    return rec->type != FMPL_CHAN_PAD ? rec : fmpl_chan_peek_slow(from);
}

static inline void fmpl_chan_release(int from, fmpl_chan_rec *rec)
{
    chan_in *c = &fmpl_chan_in[from];
    c->head += (uint64_t)rec->units * 64;
    atomic_store_explicit(&c->ring->head, c->head, memory_order_release);
}

#endif
