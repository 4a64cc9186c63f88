/* Broadcast through the root's shared staging ring, copy-in and copy-out
 * pipelined (the paper's hardware broadcast with two staging buffers,
 * generalised to FMPL_BCAST_SLOTS chunks).
 *
 * All members number broadcast chunks with one team-wide sequence q.
 *   root, chunk q:  wait until every member's bc_consumed >= q + 1 - SLOTS
 *                   (the slot is free); copy the chunk into ring[q % SLOTS];
 *                   note {its call's size, CHUNK} for the slot in the
 *                   produced line and release-store its bc_produced = q + 1
 *   others:         wait for the root's bc_produced >= q + 1 (the first chunk
 *                   of a call: check the root's size against theirs,
 *                   bcast_shm_mismatch.c); copy the chunk out; release-store
 *                   their own bc_consumed = q + 1
 * While members copy chunk q out, the root copies chunk q + 1 in.  At the end
 * the root's bc_consumed also jumps to the end of the sequence, so every
 * member's counter means "done with everything up to here" whoever the next
 * root is.  Resumable (coll_run.h). */
#include "collectives/collectives.h"

#include <string.h>

int fmpl_bcast_ring_body(fmpl_coll_algo *a)
{
    fmpl_bcast_ring *st = (fmpl_bcast_ring *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    fmpl_coll_scratch *rs = c->peer[st->root];
    int64_t chunk = fmpl_bcast_chunk;
    FMPL_RUN_BEGIN(a);
    st->nchunks = fmpl_bcast_chunks(st->size);
    st->first = c->bc_seq;
    c->bc_seq += st->nchunks;
    for (st->i = 0; st->i < st->nchunks; st->i++) {
        st->cursor = 0;
        if (t->rank == st->root) {
            uint64_t q = st->first + st->i;
            if (q + 1 > FMPL_BCAST_SLOTS)
                FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, bc_consumed,
                                                        st->first + st->i + 1 - FMPL_BCAST_SLOTS,
                                                        &st->cursor));
        } else {
            FMPL_RUN_AWAIT(a, fmpl_line_get(&rs->bc_produced) >= st->first + st->i + 1);
            /* The root's call is not this one (bcast_shm_mismatch.c). */
            if (st->i == 0 && fmpl_bcast_mismatch(st, c, st->first, FMPL_BCAST_UNIT_CHUNK)) {
                FMPL_RUN_AWAIT(a, fmpl_bcast_drain(st, c));
                return st->drain_err;
            }
        }
        uint64_t q = st->first + st->i;
        int64_t off = (int64_t)st->i * chunk;
        size_t len = (size_t)(st->size - off < chunk ? st->size - off : chunk);
        char *slot = fmpl_coll_ring(fmpl_coll_areas(c, st->root), q);
        if (t->rank == st->root) {
            memcpy(slot, st->buf + off, len);
            fmpl_bcast_unit_publish(rs, q, st->size, FMPL_BCAST_UNIT_CHUNK);
        } else {
            memcpy(st->buf + off, slot, len);
            fmpl_line_set(&c->mine->bc_consumed, q + 1);
        }
    }
    if (t->rank == st->root)
        fmpl_line_set(&c->mine->bc_consumed, c->bc_seq);
    FMPL_RUN_END(a);
}

void fmpl_bcast_shm_pipelined_setup(fmpl_bcast_ring *st, fmpl_team *t, void *buf,
                                    int64_t size, int root)
{
    fmpl_coll_algo_init(&st->a, fmpl_bcast_ring_body, t);
    st->a.prepare = fmpl_bcast_plan_prepare;
    st->buf = buf;
    st->size = size;
    st->root = root;
}
