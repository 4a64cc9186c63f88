/* Gather(v) through the pairwise shared-memory engine (shm_pairs.c).
 * Sequence s (half s % 2 of every scratch block):
 *   every member q != root: a block of at most FMPL_COLL_EAGER bytes goes into
 *     slot 0 of q's single channel before q publishes; q publishes its
 *     descriptor (send buffer, size) with posted[s % 2] = s and, for an eager
 *     block, is done at once (it does not wait for the root)
 *   root: publishes its receive buffer and its {displacement, count} table
 *     (table[s % 2][1]); copies its own block (unless in place)
 *   larger blocks, per member q, decided by q and the root alike:
 *     root's buffer in the shared heap: q copies into it, prod[root] = DONE
 *     else q's buffer in the shared heap: the root copies out of it,
 *       cons[q] = DONE, and q waits for that before returning
 *     both private: CMA by q (or by the root if only it can), else staged in
 *       chunks through q's channel (prod / cons counters)
 *   everyone: finished = s.
 * Senders push in parallel; the root's only work is its own waits. */
#include "collectives/collectives.h"

void fmpl_gatherv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                            int64_t sendbytes, void *recvbuf, const fmpl_coll_layout *l,
                            int root, int flags)
{
    fmpl_pairs_plan x = {.kind = FMPL_PAIRS_GATHER, .root = root,
                         .in_place = (flags & FMPL_COLL_IN_PLACE) != 0,
                         .sbuf = sendbuf, .rbuf = recvbuf, .sbytes = sendbytes, .rl = *l};
    if (x.in_place && t->rank == root)
        x.sbytes = 0;
    fmpl_shm_pairs_setup(st, t, &x);
}
