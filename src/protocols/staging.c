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
static fmpl_stage_ring *my_rings;   /* [world size], by the sender's world index */
static fmpl_stage_ring **peer_rings; /* [capacity]: ring in peer r for me */
static fmpl_stage_ring **in_rings;   /* [capacity]: my ring for sender r */
static size_t ring_bytes;

int fmpl_stage_init(fmpl_raddr *base)
{
    fmpl_stage_chunk = fmpl_tunable_long(&tunable_stage_chunk);
    if (fmpl_stage_chunk < 4096)
        fmpl_stage_chunk = 4096;
    fmpl_stage_chunk = (fmpl_stage_chunk + 63) & ~63ll;
    ring_bytes = sizeof(fmpl_stage_ring) + FMPL_STAGE_CHUNKS * (size_t)fmpl_stage_chunk;
    my_rings = fmpl_fab_alloc(ring_bytes * (size_t)fmpl_fab.size); /* my world, in order */
    peer_rings = calloc((size_t)fmpl_fab.capacity, sizeof *peer_rings);
    in_rings = calloc((size_t)fmpl_fab.capacity, sizeof *in_rings);
    if (!my_rings || !peer_rings || !in_rings)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d staging rings of %zu bytes",
                          fmpl_fab.size, ring_bytes);
    FMPL_FAB_FOR_WORLD(r) {
        fmpl_stage_ring *ring = (fmpl_stage_ring *)((char *)my_rings +
                                                    ring_bytes * (size_t)fmpl_fab_world_index(r));
        atomic_store(&ring->produced, 0);
        atomic_store(&ring->consumed, 0);
        in_rings[r] = ring;
    }
    *base = fmpl_fab_raddr(my_rings);
    return FMPL_SUCCESS;
}

int fmpl_stage_connect(const fmpl_raddr *bases)
{
    size_t mine = ring_bytes * (size_t)fmpl_fab_world_index(fmpl_fab.rank);
    FMPL_FAB_FOR_WORLD(r) {
        fmpl_raddr at = bases[fmpl_fab_world_index(r)];
        at.addr += mine;
        int rc = fmpl_stage_link(r, at);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

fmpl_raddr fmpl_stage_link_prepare(int r)
{
    fmpl_stage_ring *ring = fmpl_fab_alloc(ring_bytes);
    if (!ring)
        return (fmpl_raddr){0};
    atomic_store(&ring->produced, 0);
    atomic_store(&ring->consumed, 0);
    in_rings[r] = ring;
    return fmpl_fab_raddr(ring);
}

int fmpl_stage_link(int r, fmpl_raddr theirs)
{
    char *p = fmpl_fab_ptr(theirs);
    if (!p && fmpl_fab.peers[r].net)
        return FMPL_SUCCESS; /* network peers take no staging (sender_match.c) */
    if (!p)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "rank %d's staging ring is not shared", r);
    peer_rings[r] = (fmpl_stage_ring *)p;
    return FMPL_SUCCESS;
}

void fmpl_stage_finalize(void)
{
    free(peer_rings);
    free(in_rings);
    peer_rings = in_rings = NULL;
    my_rings = NULL; /* the heap goes with the segment */
}

fmpl_stage_ring *fmpl_stage_ring_to(int receiver) { return peer_rings[receiver]; }

fmpl_stage_ring *fmpl_stage_ring_from(int sender) { return in_rings[sender]; }
