/* Reduce over a binomial tree as a schedule, rooted at member 0 so that
 * operands combine in rank order (the built-in operations keep the lower
 * rank's value on ties; user functions need not commute):
 *   receive   each child r + 2^j's partial result (j = 0, 1, .. while bit j
 *             of r is clear) into a work block;
 *   combine   in increasing j: work = buf op work, buf = work (buf holds
 *             ranks r .. r+2^j-1, the lower operand);
 *   send      buf to the parent r - 2^k;
 *   forward   a root other than 0 receives the result from member 0.
 * With a work block per child (allocated with the schedule) all children's
 * messages are received at once (round 0) and combined in round 1; with the
 * caller's single work block (a blocking call's reusable scratch) child j
 * is received in round 2j and combined in round 2j + 1.
 * Allreduce (root < 0) then broadcasts from 0 down the binomial tree. */
#include "collectives/sched_nodes.h"

/* members NULL: the team itself, in rank order. */
static int at(const int *members, int i) { return members ? members[i] : i; }

int fmpl_sched_reduce_tree(fmpl_sched *s, const int *members, int n, int v, void *buf,
                           int64_t count, void *work)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(&s->op);
    int j = 0, nchild = 0;
    for (; (1 << j) < n && !(v & (1 << j)); j++) /* j: my lowest set bit */
        nchild += v + (1 << j) < n;
    int shared_work = work != NULL;
    if (!work && nchild && !(work = fmpl_sched_alloc(s, (size_t)(nchild * bytes))))
        return 0;
    int round = 0;
    for (int b = 0, c = 0; b < j; b++) {
        if (v + (1 << b) >= n)
            continue;
        char *block = (char *)work + (shared_work ? 0 : c++ * bytes);
        int recv_round = shared_work ? round : 0, combine_round = shared_work ? round + 1 : 1;
        fmpl_sched_recv(s, recv_round, block, bytes, at(members, v + (1 << b)));
        /* all receives come first in the array: combines go in a later phase */
        if (!shared_work)
            continue;
        fmpl_sched_reduce(s, combine_round, buf, block, count);
        fmpl_sched_copy(s, combine_round, buf, block, bytes);
        round += 2;
    }
    if (!shared_work) {
        for (int c = 0; c < nchild; c++) {
            fmpl_sched_reduce(s, 1, buf, (char *)work + c * bytes, count);
            fmpl_sched_copy(s, 1, buf, (char *)work + c * bytes, bytes);
        }
        round = 2;
    }
    if (v == 0)
        return round;
    fmpl_sched_send(s, round, buf, bytes, at(members, v - (1 << j)));
    return round + 1;
}

int fmpl_sched_reduce_binomial(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count, int root,
                               void *work)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(&s->op);
    int rank = t->rank;
    int round = fmpl_sched_reduce_tree(s, NULL, t->size, rank, buf, count, work);
    if (root > 0 && rank == 0)
        fmpl_sched_send(s, round, buf, bytes, root);
    if (root > 0 && rank == root)
        fmpl_sched_recv(s, round, buf, bytes, 0);
    if (root < 0) {
        fmpl_sched_phase(s);
        fmpl_sched_bcast_binomial(s, t, buf, bytes, 0);
    }
    return s->error;
}
