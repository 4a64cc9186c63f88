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
    uint32_t flags;        /* protocol-defined; 0 when reserved */
    int64_t size;          /* message size */
    /* payload follows: FMPL_CHAN_HEADER bytes after the record's start */
} fmpl_chan_rec;

#define FMPL_CHAN_HEADER 32
#define FMPL_CHAN_PAD 0xffff

/* Record types: 1-15 belong to the tag-matched protocol (tag_match.c);
 * 16-31 to the other protocols that share the channels, which register a
 * handler for theirs.  The handler runs inside progress, wherever progress
 * runs (the application thread, or the agent when it is on), with the
 * record still in the ring: it copies out what it needs and returns; the
 * caller releases the record.  `from` is the sender's world rank. */
enum {
    FMPL_CHAN_TYPE_EXT_FIRST = 16,
    FMPL_CHAN_TYPE_REMOTE_COPY = 16, /* 16-19: remote copies with notification */
    FMPL_CHAN_TYPE_AM = 20,          /* 20-27: active messages, split-phase barrier */
    FMPL_CHAN_TYPE_EXT_LAST = 31
};
typedef void (*fmpl_chan_handler)(struct fmpl_chan_rec *rec, int from);
extern fmpl_chan_handler fmpl_chan_handlers[FMPL_CHAN_TYPE_EXT_LAST + 1];
/* Install the handler of record type `type` (16-31), at start-up. */
void fmpl_chan_register_type(int type, fmpl_chan_handler fn);

/* Largest record a channel accepts (half the ring). */
extern int64_t fmpl_chan_max_record;

/* Start-up: my rings for the senders of my world (their base in *base),
 * then, with every member's base (by world index), where mine go. */
int fmpl_chan_init(fmpl_raddr *base);
int fmpl_chan_connect(const fmpl_raddr *bases);
/* Linking universe rank r of another world (runtime/link.c): a ring of
 * my own for its records (its address goes to r; zero on no memory), then
 * the ring r made for mine. */
fmpl_raddr fmpl_chan_link_prepare(int r);
int fmpl_chan_link(int r, fmpl_raddr theirs);
void fmpl_chan_finalize(void);


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

typedef struct chan_out {  /* sender-side state, per receiver */
    chan_ring *ring;       /* the receiver's ring; for a network peer, a local
                              shadow of it that records are built in */
    uint64_t tail;
    uint64_t head_seen;
    int net;               /* the receiver is a network peer (channel.c) */
    fmpl_raddr remote;     /* network peer: its ring, as a remote address */
} chan_out;

extern chan_in *fmpl_chan_in;
extern chan_out *fmpl_chan_out;
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

/* Sender: reserve a record of `payload` bytes to world rank `to`, waiting
 * (with progress) while the ring is full.  Fill it, then publish it.
 * Inline when the record fits before the ring's end and the cached head
 * says there is room (steps 2-3); otherwise channel.c pads and waits. */
fmpl_chan_rec *fmpl_chan_reserve_slow(int to, int64_t payload);
static inline fmpl_chan_rec *fmpl_chan_reserve(int to, int64_t payload)
{
    chan_out *o = &fmpl_chan_out[to];
    uint64_t len = ((uint64_t)(FMPL_CHAN_HEADER + payload) + 63) & ~63ull;
    uint64_t at = o->tail & fmpl_chan_mask;
    if (__builtin_expect(at + len > fmpl_chan_mask + 1 || o->tail + len - o->head_seen >
                                                             fmpl_chan_mask + 1, 0))
        return fmpl_chan_reserve_slow(to, payload);
    fmpl_chan_rec *rec = (fmpl_chan_rec *)(fmpl_chan_ring_data(o->ring) + at);
    rec->units = (uint16_t)(len / 64);
    rec->flags = 0;
    return rec;
}
/* The same without waiting: NULL when the ring has no room now. */
fmpl_chan_rec *fmpl_chan_try_reserve(int to, int64_t payload);
/* Step 4: the record is there. */
void fmpl_chan_publish_net(chan_out *o, fmpl_chan_rec *rec, uint64_t pos);
static inline void fmpl_chan_publish(int to, fmpl_chan_rec *rec)
{
    chan_out *o = &fmpl_chan_out[to];
    uint64_t pos = o->tail;
    o->tail += (uint64_t)rec->units * 64;
    if (__builtin_expect(o->net, 0)) {
        fmpl_chan_publish_net(o, rec, pos);
        return;
    }
    atomic_store_explicit(&rec->seq, (uint32_t)(pos / 64 + 1), memory_order_release);
}

/* The receiver is reached over the network: records are built in a local
 * shadow and published by remote writes (payloads cannot be streamed into
 * a published record). */
static inline int fmpl_chan_is_net(int to) { return fmpl_chan_out[to].net; }

static inline void fmpl_chan_release(int from, fmpl_chan_rec *rec)
{
    chan_in *c = &fmpl_chan_in[from];
    /* A record's later 64-byte units held payload, where a later record
     * may start: a payload word equal to that record's sequence would pass
     * for it before it is there (seen over the network, whose collectives
     * stream small integers through the channels: "corrupt channel record").
     * Zero those words, before the head lets the sender reuse the space. */
    for (unsigned u = 1; u < rec->units; u++)
        atomic_store_explicit(&((fmpl_chan_rec *)((char *)rec + 64 * (size_t)u))->seq, 0,
                              memory_order_relaxed);
    c->head += (uint64_t)rec->units * 64;
    atomic_store_explicit(&c->ring->head, c->head, memory_order_release);
}

#endif
