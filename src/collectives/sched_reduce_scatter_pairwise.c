/* Reduce-scatter by pairwise exchange as a schedule, in rank order.  The
 * blocks are processed in chunks of q = FMPL_COLL_AREA / 2 bytes' worth of
 * elements of every member's block.  Chunk j, member r (raw contributions
 * only travel, never partial results), one round per step:
 *   acc = my own piece j of my block (work block A)
 *   step i = 1 .. P-1: send my piece j of member (r + i)'s block to it,
 *     straight from the input; receive member (r - i)'s piece j of my block
 *     into work block B (or C); the next round first combines it:
 *       sources r-1, r-2 .. 0 (steps 1 .. r):  acc = x[src] op acc
 *       sources P-1, P-2 .. r+1 (the rest):     hi = x[P-1], then
 *                                               hi = x[src] op hi
 *   last round: result = acc op hi (or acc when r = P - 1), into recvbuf.
 * Each operand is combined with `in` the lower ranks' value, so
 * non-commutative operations are right.  In place, a chunk's result
 * overwrites only input of pieces <= j, which every member has sent (the
 * chunk's sends completed before its last round).  Block offsets are read
 * from c->offs while building (the caller fills it). */
#include "collectives/sched_coll.h"
#include "base/error.h"

int fmpl_sched_reduce_scatter_pairwise(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                       void *recvbuf, const int64_t *counts, int flags,
                                       char *work)
{
    const int64_t *off = t->coll->offs;
    int p = t->size, r = t->rank;
    int64_t es = (int64_t)fmpl_op_elem_size(&s->op), q = fmpl_coll_half() / es, maxc = 0;
    if (q < 1)
        return s->error = FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                                     "elements of %lld bytes exceed FMPL_COLL_AREA / 2",
                                     (long long)es);
    for (int m = 0; m < p; m++)
        maxc = counts[m] > maxc ? counts[m] : maxc;
    int64_t stride = (counts[r] < q ? counts[r] : q) * es;
    if (!work && stride && !(work = fmpl_sched_alloc(s, 3 * (size_t)stride)))
        return s->error;
    const char *in = (flags & FMPL_COLL_IN_PLACE) ? (const char *)recvbuf : (const char *)sendbuf;
    int round = 0;
    for (int64_t lo = 0; lo < maxc; lo += q) {
        int64_t mine = fmpl_clamp64(counts[r] - lo, 0, q);
        char *acc = work, *rb = work + stride, *spare = work + 2 * stride, *hi = NULL;
        if (mine > 0)
            fmpl_sched_copy(s, round, acc, in + (off[r] + lo) * es, mine * es);
        for (int i = 1; i < p; i++) {
            int dst = (r + i) % p, src = (r - i + p) % p;
            int64_t nd = fmpl_clamp64(counts[dst] - lo, 0, q);
            if (nd > 0)
                fmpl_sched_send(s, round, in + (off[dst] + lo) * es, nd * es, dst);
            if (mine > 0)
                fmpl_sched_recv(s, round, rb, mine * es, src);
            round++;
            if (mine == 0)
                continue;
            if (src < r) {
                fmpl_sched_reduce(s, round, rb, acc, mine);
            } else if (!hi) {
                hi = rb;
                rb = spare;
            } else {
                fmpl_sched_reduce(s, round, rb, hi, mine);
            }
        }
        if (mine > 0) {
            if (hi)
                fmpl_sched_reduce(s, round, acc, hi, mine);
            fmpl_sched_copy(s, round, (char *)recvbuf + lo * es, hi ? hi : acc, mine * es);
        }
        round++;
    }
    return s->error;
}
