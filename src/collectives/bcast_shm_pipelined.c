/* Broadcast through the root's shared staging ring, copy-in and copy-out
 * pipelined (the paper's hardware broadcast with two staging buffers,
 * generalised to FMPL_BCAST_SLOTS chunks).
 *
 * All members number broadcast chunks with one team-wide sequence q.
 *   root, chunk q:  wait until every member's bc_consumed >= q + 1 - SLOTS
 *                   (the slot is free); copy the chunk into ring[q % SLOTS];
 *                   release-store its bc_produced = q + 1
 *   others:         wait for the root's bc_produced >= q + 1; copy the chunk
 *                   out; release-store their own bc_consumed = q + 1
 * While members copy chunk q out, the root copies chunk q + 1 in.  At the end
 * the root's bc_consumed also jumps to the end of the sequence, so every
 * member's counter means "done with everything up to here" whoever the next
 * root is. */
#include "collectives/collectives.h"
#include "progress/progress.h"

#include <string.h>

int fmpl_bcast_shm_pipelined(fmpl_team *t, void *buf, int64_t size, int root)
{
    fmpl_coll_team *c = t->coll;
    int64_t chunk = fmpl_bcast_chunk;
    uint64_t nchunks = (uint64_t)((size + chunk - 1) / chunk);
    uint64_t first = c->bc_seq;
    c->bc_seq += nchunks;
    fmpl_coll_scratch *rs = c->peer[root];
    for (uint64_t i = 0; i < nchunks; i++) {
        uint64_t q = first + i;
        int64_t off = (int64_t)i * chunk;
        size_t len = (size_t)(size - off < chunk ? size - off : chunk);
        if (t->rank == root) {
            if (q + 1 > FMPL_BCAST_SLOTS)
                FMPL_COLL_WAIT_ALL(t, bc_consumed, q + 1 - FMPL_BCAST_SLOTS);
            memcpy(fmpl_coll_ring(fmpl_coll_areas(c, root), q), (char *)buf + off, len);
            fmpl_line_set(&rs->bc_produced, q + 1);
        } else {
            FMPL_WAIT_UNTIL(fmpl_line_get(&rs->bc_produced) >= q + 1);
            memcpy((char *)buf + off, fmpl_coll_ring(fmpl_coll_areas(c, root), q), len);
            fmpl_line_set(&c->mine->bc_consumed, q + 1);
        }
    }
    if (t->rank == root)
        fmpl_line_set(&c->mine->bc_consumed, c->bc_seq);
    return FMPL_SUCCESS;
}
