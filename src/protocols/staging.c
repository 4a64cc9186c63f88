/* Staging rings.
 *
 * Each rank owns one ring per world sender, in its own shared segment:
 *   sender S -> receiver R, ring in R's segment:
 *     1. S waits until produced - consumed < FMPL_STAGE_CHUNKS
 *     2. S copies a chunk of its buffer into data[produced % CHUNKS] and
 *        fills meta[produced % CHUNKS] (team, slot, offset, length, last)
 *     3. S release-stores produced + 1            <- the chunk is visible
 *     4. R (in any FMPL call while it has a posted private receive from S)
 *        acquire-loads produced, copies the chunk out to its receive buffer
 *     5. R release-stores consumed + 1            <- the chunk may be reused
 * Chunks of one message are contiguous in the ring: a sender streams one
 * message to a given receiver at a time.  The sender's buffer is free once
 * its last chunk is in the ring; the receive completes when R copies the
 * chunk marked last. */
#include "protocols/staging.h"
#include "base/error.h"
#include "base/tunable.h"

#include <stdlib.h>

FMPL_TUNABLE(tunable_stage_chunk, "FMPL_STAGE_CHUNK", "32k",
             "bytes per chunk of the staging rings (two-copy path), 4 chunks per sender");

int64_t fmpl_stage_chunk;
static fmpl_stage_ring *my_rings;   /* [world size], sender-indexed */
static fmpl_stage_ring **peer_rings; /* [world size]: ring in peer r for me */
static size_t ring_bytes;

int fmpl_stage_init(fmpl_raddr *base)
{
    fmpl_stage_chunk = fmpl_tunable_long(&tunable_stage_chunk);
    if (fmpl_stage_chunk < 4096)
        fmpl_stage_chunk = 4096;
    fmpl_stage_chunk = (fmpl_stage_chunk + 63) & ~63ll;
    ring_bytes = sizeof(fmpl_stage_ring) + FMPL_STAGE_CHUNKS * (size_t)fmpl_stage_chunk;
    my_rings = fmpl_fab_alloc(ring_bytes * (size_t)fmpl_fab.size);
    peer_rings = calloc((size_t)fmpl_fab.size, sizeof *peer_rings);
    if (!my_rings || !peer_rings)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d staging rings of %zu bytes",
                          fmpl_fab.size, ring_bytes);
    for (int r = 0; r < fmpl_fab.size; r++) {
        fmpl_stage_ring *ring = (fmpl_stage_ring *)((char *)my_rings + ring_bytes * (size_t)r);
        atomic_store(&ring->produced, 0);
        atomic_store(&ring->consumed, 0);
    }
    *base = fmpl_fab_raddr(my_rings);
    return FMPL_SUCCESS;
}

int fmpl_stage_connect(const fmpl_raddr *bases)
{
    for (int r = 0; r < fmpl_fab.size; r++) {
        char *p = fmpl_fab_ptr(bases[r]);
        if (!p && fmpl_fab.peers[r].net)
            continue; /* network peers take no staging (sender_match.c) */
        if (!p)
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "rank %d's staging rings are not shared", r);
        peer_rings[r] = (fmpl_stage_ring *)(p + ring_bytes * (size_t)fmpl_fab.rank);
    }
    return FMPL_SUCCESS;
}

void fmpl_stage_finalize(void)
{
    free(peer_rings);
    peer_rings = NULL;
    my_rings = NULL; /* the heap goes with the segment */
}

fmpl_stage_ring *fmpl_stage_ring_to(int receiver) { return peer_rings[receiver]; }

fmpl_stage_ring *fmpl_stage_ring_from(int sender)
{
    return (fmpl_stage_ring *)((char *)my_rings + ring_bytes * (size_t)sender);
}
