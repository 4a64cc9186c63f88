/* Staging rings: the two-copy path for data whose destination the sender
 * cannot reach (a private receive buffer when CMA is refused or the message
 * is too small to pay for a system call).  See staging.c. */
#ifndef FMPL_PROTOCOLS_STAGING_H
#define FMPL_PROTOCOLS_STAGING_H

#include <stdint.h>

#include "fabric/fabric.h"

#define FMPL_STAGE_CHUNKS 4

typedef struct fmpl_stage_meta {
    int32_t team;       /* team id */
    int32_t sender;     /* sender's rank in that team */
    int32_t slot;       /* receiver's slot (index, or the ANY slot) */
    int32_t msg_index;  /* index the message was sent on */
    int64_t offset;     /* where this chunk goes in the receive buffer */
    int64_t len;
    int64_t msg_size;   /* whole message (may exceed the buffer: truncation) */
    int32_t status;
    int32_t last;       /* final chunk of the message */
    char pad[8];
} __attribute__((aligned(64))) fmpl_stage_meta;

typedef struct fmpl_stage_ring {
    _Atomic uint64_t produced;  /* chunks written; the sender stores it */
    char pad0[56];
    _Atomic uint64_t consumed;  /* chunks copied out; the receiver stores it */
    char pad1[56];
    fmpl_stage_meta meta[FMPL_STAGE_CHUNKS];
    /* FMPL_STAGE_CHUNKS chunks of fmpl_stage_chunk bytes follow */
} fmpl_stage_ring;

extern int64_t fmpl_stage_chunk;

/* Allocate this rank's rings (one per world sender); returns their base. */
int fmpl_stage_init(fmpl_raddr *base);
/* Record every member's ring base (indexed by world index). */
int fmpl_stage_connect(const fmpl_raddr *bases);
/* Linking universe rank r of another world (runtime/link.c): my ring for
 * it (zero address on no memory), then the one it made for me. */
fmpl_raddr fmpl_stage_link_prepare(int r);
int fmpl_stage_link(int r, fmpl_raddr theirs);
void fmpl_stage_finalize(void);

/* Sender: the ring in `receiver`'s memory this rank writes into. */
fmpl_stage_ring *fmpl_stage_ring_to(int receiver);
/* Receiver: the ring `sender` writes into. */
fmpl_stage_ring *fmpl_stage_ring_from(int sender);
static inline char *fmpl_stage_data(fmpl_stage_ring *r, uint64_t chunk)
{
    return (char *)(r + 1) + (chunk % FMPL_STAGE_CHUNKS) * (uint64_t)fmpl_stage_chunk;
}

#endif
