/* Reduce over a binomial tree as a schedule, rooted at member 0 so that
 * operands combine in rank order (as reduce_binomial.c):
 *   round 0  receive each child r + 2^j's partial result into its own
 *            work block (all children at once);
 *   round 1  for each child in increasing j: work = buf op work, buf = work
 *            (buf holds ranks r .. r+2^j-1, the lower operand);
 *   round 2  send buf to the parent r - 2^k;
 *   round 3  a root other than 0 receives the result from member 0.
 * Allreduce (root < 0) then broadcasts from 0 down the binomial tree. */
#include "collectives/sched_coll.h"

int fmpl_sched_reduce_binomial(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count, int root)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(&s->op);
    int rank = t->rank, p = t->size, j = 0, nchild = 0;
    for (; (1 << j) < p && !(rank & (1 << j)); j++) /* j: my lowest set bit */
        nchild += rank + (1 << j) < p;
    char *work = nchild ? fmpl_sched_alloc(s, (size_t)(nchild * bytes)) : NULL;
    if (nchild && !work)
        return s->error;
    for (int b = 0, c = 0; b < j; b++) /* round 0: every child at once */
        if (rank + (1 << b) < p)
            fmpl_sched_recv(s, 0, work + c++ * bytes, bytes, rank + (1 << b));
    for (int c = 0; c < nchild; c++) { /* round 1: in rank order */
        fmpl_sched_reduce(s, 1, buf, work + c * bytes, count);
        fmpl_sched_copy(s, 1, buf, work + c * bytes, bytes);
    }
    if (rank != 0)
        fmpl_sched_send(s, 2, buf, bytes, rank - (1 << j));
    if (root > 0 && rank == 0)
        fmpl_sched_send(s, 3, buf, bytes, root);
    if (root > 0 && rank == root)
        fmpl_sched_recv(s, 3, buf, bytes, 0);
    if (root < 0) {
        fmpl_sched_phase(s);
        fmpl_sched_bcast_binomial(s, t, buf, bytes, 0);
    }
    return s->error;
}
