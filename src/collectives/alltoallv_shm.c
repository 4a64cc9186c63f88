/* Alltoall(v) through the pairwise shared-memory engine (shm_pairs.c).
 * Sequence s (half s % 2 of every scratch block):
 *   every member: blocks of at most FMPL_COLL_EAGER bytes go into slot 0 of
 *     their destination's channel (one channel per member); publishes its
 *     send table (table[s % 2][0]: where each destination's block is in its
 *     sendbuf) and receive table (table[s % 2][1]), both buffers, and
 *     posted[s % 2] = s; copies its own block to itself
 *   pair q -> d, once both have published (each side decides alike):
 *     eager: d copies from q's slot 0 of channel d
 *     q's sendbuf in the shared heap: d copies out of it at q's send-table
 *       displacement, cons[q] = DONE (q returns only after that)
 *     else d's recvbuf in the shared heap: q copies into it at d's
 *       receive-table displacement, prod[d] = DONE
 *     both private: CMA, else chunks through q's channel d (prod / cons)
 *   finished = s.
 * Every member advances all its pairs in one polling loop. */
#include "collectives/collectives.h"

void fmpl_alltoallv_shm_setup(fmpl_pairs_run *st, fmpl_team *t, const void *sendbuf,
                              const fmpl_coll_layout *sl, void *recvbuf,
                              const fmpl_coll_layout *rl)
{
    fmpl_pairs_plan x = {.kind = FMPL_PAIRS_ALLTOALL, .sbuf = sendbuf, .rbuf = recvbuf,
                         .sl = *sl, .rl = *rl};
    fmpl_shm_pairs_setup(st, t, &x);
}
