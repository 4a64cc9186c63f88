/* Split-phase barrier, dissemination pairing, for communicators of any
 * size P (the butterfly, barrier_split_butterfly.c, needs a power of two):
 * ceil(log2 P) stages; at stage k member n writes the split[k] word of
 * member (n + 2^k) mod P and hears, in its own split[k], from member
 * (n - 2^k) mod P (barrier_split.c runs the stages; this file says who
 * writes where).
 *
 * Why instance i completes at n only once every member has started it:
 * say n's reach after stage k is >= i (barrier_split.c step 4).  Then
 *   - sent[k] >= i: n's reach after stage k-1 was >= i when it wrote, and
 *   - split[k] >= i: member n - 2^k wrote a value >= i, so its reach after
 *     stage k-1 was >= i;
 * by induction (before stage 0, reach >= i means "started i") members
 * n, n-1, .., n-2^k+1 and n-2^k, .., n-2^(k+1)+1 (mod P) have started i:
 * 2^(k+1) consecutive members, all P of them once 2^(k+1) >= P, which is
 * after the last stage.  Unlike the butterfly the two words of a stage are
 * written by different members, so no pair has to meet. */
#include "collectives/barrier_split.h"

void fmpl_barrier_split_dissemination_setup(fmpl_bsplit *b, fmpl_team *t)
{
    b->algo = "dissemination";
    b->rounds = t->coll->rounds; /* ceil(log2 P) */
    for (int k = 0; k < b->rounds; k++)
        fmpl_bsplit_partner(b, t, k, (t->rank + (1 << k)) % t->size);
}
