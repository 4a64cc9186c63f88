/* Reduce and allreduce through node leaders as a schedule, for teams whose
 * nodes hold consecutive ranks (sched_nodes.h: FMPL_NODES_ORDERED), so that
 * operands still combine in rank order (op.h: no operation is taken as
 * commutative):
 *   1. node     the binomial reduction of sched_reduce_binomial.c inside
 *               each node (shared memory), to its leader, the node's lowest
 *               rank: the leader holds the node's consecutive ranks combined;
 *   2. leaders  the same reduction among the leaders (the network), to
 *               leader 0, team rank 0: it holds every rank's operand
 *               combined in rank order;
 *   3. deliver  reduce: rank 0 sends the result to a root other than 0;
 *               allreduce: a binomial broadcast among the leaders from
 *               leader 0 and one inside each node from its leader, in the
 *               same rounds (a leader's node sends do not wait for its
 *               network sends to complete).
 * Allreduce with a power-of-two number of nodes replaces 2. and the
 * leaders' broadcast by recursive doubling among the leaders
 * (sched_allreduce_exchange.c): one exchange per round, both directions of
 * each link at once; then each leader broadcasts inside its node.
 * Network messages: those of the leaders' trees only.  work as in
 * fmpl_sched_reduce_binomial (one block reused by the stages in turn). */
#include "collectives/sched_nodes.h"

int fmpl_sched_reduce_nodes(fmpl_sched *s, fmpl_team *t, void *buf, int64_t count, int root,
                            void *work)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(&s->op);
    fmpl_sched_nodes_view v;
    if (fmpl_sched_nodes(s, t, 0, &v) != FMPL_SUCCESS)
        return s->error;
    fmpl_sched_reduce_tree(s, v.locals, v.nlocals, v.my_local_index, buf, count, work);
    if (root < 0 && v.nleaders > 1 && (v.nleaders & (v.nleaders - 1)) == 0) {
        if (v.my_leader_index >= 0) {
            fmpl_sched_phase(s);
            fmpl_sched_allreduce_exchange(s, v.leaders, v.nleaders, v.my_leader_index, buf,
                                          count, work);
        }
        fmpl_sched_phase(s);
        return fmpl_sched_binomial_tree(s, v.locals, v.nlocals, v.my_local_index, buf, bytes, 0);
    }
    if (v.my_leader_index >= 0) {
        fmpl_sched_phase(s);
        int round = fmpl_sched_reduce_tree(s, v.leaders, v.nleaders, v.my_leader_index, buf,
                                           count, work);
        if (root > 0 && t->rank == 0)
            fmpl_sched_send(s, round, buf, bytes, root);
    }
    fmpl_sched_phase(s);
    if (root > 0 && t->rank == root)
        fmpl_sched_recv(s, 0, buf, bytes, 0);
    if (root >= 0)
        return s->error;
    if (v.my_leader_index >= 0)
        fmpl_sched_binomial_tree(s, v.leaders, v.nleaders, v.my_leader_index, buf, bytes, 0);
    return fmpl_sched_binomial_tree(s, v.locals, v.nlocals, v.my_local_index, buf, bytes, 0);
}
