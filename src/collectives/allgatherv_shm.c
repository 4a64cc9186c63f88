/* Allgather(v) through the pairwise shared-memory engine (shm_pairs.c).
 * Everyone knows every block's size and place (the counts and
 * displacements are the same on all members), so no table is published.
 * Sequence s (half s % 2 of every scratch block):
 *   every member q: a block of at most FMPL_COLL_EAGER bytes is copied once
 *     into slot 0 of q's channel; publishes its block's address and
 *     posted[s % 2] = s; copies its block into its own recvbuf (not in place)
 *   for each other member q, once q's posted[s % 2] >= s:
 *     eager: copy q's block out of q's slot 0
 *     q's block in the shared heap: copy it straight out, cons[q] = DONE
 *     else my recvbuf in the shared heap: q copies into it, prod[me] = DONE
 *     both private: CMA, else q's stream: q stages its block once, chunk k
 *       counted by its prod[q], and reuses a slot when every staged reader's
 *       cons[q] has passed it
 *   finished = s.
 * Every member does its own copies, so the copying runs on all cores. */
#include "collectives/collectives.h"

void fmpl_allgatherv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                               void *recvbuf, const fmpl_coll_layout *l, int flags)
{
    fmpl_pairs_plan x = {.kind = FMPL_PAIRS_ALLGATHER,
                         .in_place = (flags & FMPL_COLL_IN_PLACE) != 0,
                         .sbuf = sendbuf, .rbuf = recvbuf, .rl = *l};
    fmpl_shm_pairs_setup(st, t, &x);
}
