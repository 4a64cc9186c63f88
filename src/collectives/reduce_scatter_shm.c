/* Reduce-scatter in shared memory, in rounds through the input areas.
 * Every member's block is cut into pieces of q elements (q * size of an
 * element <= stride = FMPL_COLL_AREA / 2 / P, 64-aligned); round j carries
 * piece j of every block.  Round j = sequence s:
 *   1. fmpl_coll_exchange_begin(s)
 *   2. copy my contribution to piece j of every member m's block into input
 *      half s % 2 at m * stride; release-store posted[s % 2] = s
 *   3. if my own block has a piece j: wait for every member's
 *      posted[s % 2] >= s; recvbuf piece j = x[P-1]; then x[k] op it for
 *      k = P-2 .. 0 (rank order: `in` is the lower rank's)
 *   4. release-store finished = s
 * Every member combines its own block, so all members compute at once;
 * rounds are ceil(max count / q), the same on every member. */
#include "collectives/p2p_util.h"
#include "base/error.h"
#include "progress/progress.h"

#include <string.h>

static int run_fmpl_reduce_scatter_shm(fmpl_team *t, const void *sendbuf, void *recvbuf,
                            const int64_t *counts, const fmpl_op *op, int flags)
{
    fmpl_coll_team *c = t->coll;
    int p = t->size, r = t->rank;
    int64_t es = (int64_t)fmpl_op_elem_size(op), maxc = 0;
    const int64_t *off = c->offs;
    const char *in = (flags & FMPL_COLL_IN_PLACE) ? (const char *)recvbuf : (const char *)sendbuf;
    for (int m = 0; m < p; m++)
        maxc = counts[m] > maxc ? counts[m] : maxc;
    int64_t stride = (fmpl_coll_half() / p) & ~63ll;
    int64_t need = (maxc * es + 63) & ~63ll;
    if (need < stride)
        stride = need;
    int64_t q = stride / es;
    if (q < 1)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "reduce-scatter: no room for one element");
    for (int64_t lo = 0; lo < maxc; lo += q) {
        uint64_t s = ++c->exchange_seq;
        fmpl_coll_exchange_begin(t, s);
        char *area = fmpl_coll_input_half(fmpl_coll_areas(c, t->rank), s);
        for (int m = 0; m < p; m++) {
            int64_t len = fmpl_clamp64(counts[m] - lo, 0, q);
            if (len > 0)
                memcpy(area + m * stride, in + (off[m] + lo) * es, (size_t)(len * es));
        }
        fmpl_line_set(&c->mine->posted[s % 2], s);
        int64_t mine = fmpl_clamp64(counts[r] - lo, 0, q);
        if (mine > 0) {
            char *res = (char *)recvbuf + lo * es;
            FMPL_COLL_WAIT_ALL(t, posted[s % 2], s);
            memcpy(res, fmpl_coll_input_half(fmpl_coll_areas(c, p - 1), s) + r * stride, (size_t)(mine * es));
            for (int k = p - 2; k >= 0; k--)
                fmpl_op_apply(op, fmpl_coll_input_half(fmpl_coll_areas(c, k), s) + r * stride, res, mine);
        }
        fmpl_line_set(&c->mine->finished, s);
    }
    return FMPL_SUCCESS;
}

/* Legacy blocking body: in the team's order of runs (coll_run.h). */
int fmpl_reduce_scatter_shm(fmpl_team *t, const void *sendbuf, void *recvbuf,
                            const int64_t *counts, const fmpl_op *op, int flags)
{
    fmpl_coll_turn_begin(t);
    int rc = run_fmpl_reduce_scatter_shm(t, sendbuf, recvbuf, counts, op, flags);
    fmpl_coll_turn_end(t);
    return rc;
}
