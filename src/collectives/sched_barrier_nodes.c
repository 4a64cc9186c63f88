/* Barrier through node leaders as a schedule, so that only one member per
 * node waits on network latency:
 *   1. arrive   up a binomial tree inside each node (shared memory): a
 *               member hears from its children, then tells its parent;
 *               the leader (the node's lowest member) has heard from all;
 *   2. meet     the leaders run the dissemination barrier among
 *               themselves (ceil(log2 nodes) network rounds);
 *   3. release  down the same tree inside each node.
 * Zero-byte messages throughout.  No member leaves before every member
 * arrived: a leader finishes step 2 only after every other leader finished
 * step 1, and step 3 starts at a leader. */
#include "collectives/sched_nodes.h"

static char no_bytes;

int fmpl_sched_barrier_nodes(fmpl_sched *s, fmpl_team *t)
{
    fmpl_sched_nodes_view v;
    if (fmpl_sched_nodes(s, t, 0, &v) != FMPL_SUCCESS)
        return s->error;
    int me = v.my_local_index, k = 0;
    while ((1 << k) < v.nlocals && !(me & (1 << k)))
        k++;
    for (int j = 0; j < k; j++)
        if (me + (1 << j) < v.nlocals)
            fmpl_sched_recv(s, 0, &no_bytes, 0, v.locals[me + (1 << j)]);
    if (me != 0)
        fmpl_sched_send(s, 1, &no_bytes, 0, v.locals[me - (1 << k)]);
    int round = 2;
    if (v.my_leader_index >= 0) {
        int n = v.nleaders, i = v.my_leader_index;
        for (int d = 1; d < n; d <<= 1, round++) {
            fmpl_sched_recv(s, round, &no_bytes, 0, v.leaders[(i - d + n) % n]);
            fmpl_sched_send(s, round, &no_bytes, 0, v.leaders[(i + d) % n]);
        }
    }
    return fmpl_sched_binomial_tree(s, v.locals, v.nlocals, me, &no_bytes, 0, round);
}
