/* Scatter(v) through the pairwise shared-memory engine (shm_pairs.c).
 * Sequence s (half s % 2 of every scratch block):
 *   root: every block of at most FMPL_COLL_EAGER bytes goes into slot 0 of
 *     its destination's channel (one channel per member); publishes its
 *     {displacement, count} table (table[s % 2][0]), its send buffer and
 *     posted[s % 2] = s; copies its own block (unless in place)
 *   member d != root: publishes its receive buffer and size; once the root's
 *     posted[s % 2] >= s: an eager block is copied out of the root's slot;
 *     a larger one, decided by d and the root alike:
 *       root's buffer in the shared heap: d copies out of it, cons[root] =
 *         DONE (the root returns after every such acknowledgement)
 *       else d's buffer in the shared heap: the root copies into it,
 *         prod[d] = DONE
 *       both private: CMA by d (or by the root), else staged in chunks
 *         through channel d of the root's staging space
 *   everyone: finished = s.
 * Receivers pull in parallel, so the root's copies are not serialised. */
#include "collectives/collectives.h"

void fmpl_scatterv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                             const fmpl_coll_layout *l, void *recvbuf, int64_t recvbytes,
                             int root, int flags)
{
    fmpl_pairs_plan x = {.kind = FMPL_PAIRS_SCATTER, .root = root,
                         .in_place = (flags & FMPL_COLL_IN_PLACE) != 0,
                         .sbuf = sendbuf, .rbuf = recvbuf, .rbytes = recvbytes, .sl = *l};
    fmpl_shm_pairs_setup(st, t, &x);
}
