/* Split-phase barrier, butterfly pairing (NICAM's, seed 004 §3 and R18),
 * for communicators of P = 2^r members: stage k pairs member n with
 * n XOR 2^k, a pairwise join: each writes the other's split[k] word
 * (barrier_split.c runs the stages; this file says who writes where).
 *
 * Why instance i completes at n only once every member has started it:
 * say n's reach after stage k is >= i (barrier_split.c step 4).  Then
 *   - sent[k] >= i: n's reach after stage k-1 was >= i when it wrote, and
 *   - split[k] >= i: its partner p = n XOR 2^k wrote a value >= i, so p's
 *     reach after stage k-1 was >= i;
 * by induction (before stage 0, reach >= i means "started i") every member
 * whose number agrees with n's above bit k-1 and every member agreeing with
 * p's there have started i: together, every member agreeing with n above
 * bit k.  After stage r-1 that is all P members.  Each member writes one
 * word per stage and reads one, so the host work of a pass is r loads and
 * at most r stores, whatever the number of instances in flight. */
#include "collectives/barrier_split.h"

void fmpl_barrier_split_butterfly_setup(fmpl_bsplit *b, fmpl_team *t)
{
    b->algo = "butterfly";
    b->rounds = t->coll->rounds; /* ceil(log2 P) */
    for (int k = 0; k < b->rounds; k++)
        fmpl_bsplit_partner(b, t, k, t->rank ^ (1 << k));
}
