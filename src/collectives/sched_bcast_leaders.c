/* Broadcast relayed through node leaders (seed 002, design A without
 * segmentation): a binomial tree over the node leaders (the root leads its
 * node), and a binomial tree inside each node from its leader.  Both trees
 * take rounds 0-1: a leader receives in round 0 (from its parent leader)
 * and sends in round 1 to its child leaders and its node's members at
 * once, so the node's shared-memory sends do not wait for the network
 * sends to complete.  Correct for every root: the root's node is the
 * tree's source and the root its representative. */
#include "collectives/sched_nodes.h"

int fmpl_sched_bcast_leaders(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root)
{
    fmpl_sched_nodes_view v;
    if (fmpl_sched_nodes(s, t, root, &v) != FMPL_SUCCESS)
        return s->error;
    if (v.my_leader_index >= 0)
        fmpl_sched_binomial_tree(s, v.leaders, v.nleaders, v.my_leader_index, buf, size, 0);
    return fmpl_sched_binomial_tree(s, v.locals, v.nlocals, v.my_local_index, buf, size, 0);
}
