/* Channels: one first-in first-out record ring per ordered pair of ranks,
 * in the receiver's shared heap (seed 001's per-peer FIFO channels).  The
 * tag-matched protocol sends envelopes, eager payloads and rendezvous
 * control through them.  The sequence is in channel.c. */
#ifndef FMPL_PROTOCOLS_CHANNEL_H
#define FMPL_PROTOCOLS_CHANNEL_H

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
 * when its payload has been copied out. */
fmpl_chan_rec *fmpl_chan_peek(int from);
void fmpl_chan_release(int from, fmpl_chan_rec *rec);

#endif
