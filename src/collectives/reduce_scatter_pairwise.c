/* Reduce-scatter over point-to-point, pairwise exchange, in rank order.
 * The blocks are processed in rounds of q = FMPL_COLL_AREA / 2 bytes' worth
 * of elements of every member's block.  Round j, member r (raw
 * contributions only travel, never partial results):
 *   acc = my own piece j of my block (work area A)
 *   step i = 1 .. P-1: send my piece j of member (r + i)'s block to it,
 *     straight from sendbuf; receive member (r - i)'s piece j of my block
 *     into work area B or C; then
 *       sources r-1, r-2 .. 0 (steps 1 .. r):  acc = x[src] op acc
 *       sources P-1, P-2 .. r+1 (the rest):     hi = x[P-1], then
 *                                               hi = x[src] op hi
 *   result = acc op hi (or acc when r = P - 1), copied to recvbuf.
 * Each operand is combined with `in` the lower ranks' value, so
 * non-commutative operations are right; three work chunks per team (tmp),
 * nothing allocated per call.  In place, a round's result overwrites only
 * input that every member has already sent (the round's sends completed). */
#include "collectives/p2p_util.h"

#include <string.h>

int fmpl_reduce_scatter_pairwise(fmpl_team *t, const void *sendbuf, void *recvbuf,
                                 const int64_t *counts, const fmpl_op *op, int flags)
{
    fmpl_coll_team *c = t->coll;
    int p = t->size, r = t->rank, rc = FMPL_SUCCESS;
    int64_t es = (int64_t)fmpl_op_elem_size(op), h = fmpl_coll_half();
    int64_t q = h / es, maxc = 0;
    const int64_t *off = c->offs;
    const char *in = (flags & FMPL_COLL_IN_PLACE) ? (const char *)recvbuf : (const char *)sendbuf;
    char *tmp = fmpl_coll_tmp(t);
    if (!tmp)
        return FMPL_ERR_NO_MEMORY;
    for (int m = 0; m < p; m++)
        maxc = counts[m] > maxc ? counts[m] : maxc;
    for (int64_t lo = 0; lo < maxc && rc == FMPL_SUCCESS; lo += q) {
        int64_t mine = fmpl_clamp64(counts[r] - lo, 0, q);
        char *acc = tmp, *rb = tmp + h, *spare = tmp + 2 * h, *hi = NULL;
        if (mine > 0)
            memcpy(acc, in + (off[r] + lo) * es, (size_t)(mine * es));
        for (int i = 1; i < p && rc == FMPL_SUCCESS; i++) {
            int dst = (r + i) % p, src = (r - i + p) % p;
            int64_t nd = fmpl_clamp64(counts[dst] - lo, 0, q);
            rc = fmpl_coll_sendrecv(t, nd > 0 ? in + (off[dst] + lo) * es : NULL, nd * es, dst,
                                    rb, mine * es, src);
            if (mine == 0 || rc != FMPL_SUCCESS)
                continue;
            if (src < r) {
                fmpl_op_apply(op, rb, acc, mine);
            } else if (!hi) {
                hi = rb;
                rb = spare;
            } else {
                fmpl_op_apply(op, rb, hi, mine);
            }
        }
        if (mine > 0 && rc == FMPL_SUCCESS) {
            if (hi)
                fmpl_op_apply(op, acc, hi, mine);
            memcpy((char *)recvbuf + lo * es, hi ? hi : acc, (size_t)(mine * es));
        }
    }
    return rc;
}
