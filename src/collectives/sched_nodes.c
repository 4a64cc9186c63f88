/* Node grouping of the hierarchical broadcasts (seed 002): which members
 * share a node, and each node's representative (leader).  All ranks of a
 * run share one machine today, so a node is FMPL_SCHED_NODE_SIZE
 * consecutive world ranks (default: all of them, one node); the algorithms
 * only ever see the grouping below. */
#include "collectives/sched_nodes.h"
#include "base/tunable.h"

#include <limits.h>
#include <stdlib.h>

FMPL_TUNABLE(tunable_node_size, "FMPL_SCHED_NODE_SIZE", "0",
             "world ranks per node for the hierarchical broadcasts (0: one node)");

static int node_of(const fmpl_team *t, int p)
{
    long per = fmpl_tunable_long(&tunable_node_size);
    return per > 0 ? (int)(t->world[p] / per) : 0;
}

int fmpl_sched_nodes(fmpl_sched *s, fmpl_team *t, int root, fmpl_sched_nodes_view *v)
{
    int p = t->size;
    v->leaders = fmpl_sched_alloc(s, (size_t)p * sizeof(int));
    v->locals = fmpl_sched_alloc(s, (size_t)p * sizeof(int));
    if (!v->leaders || !v->locals)
        return s->error;
    v->nleaders = v->nlocals = 0;
    v->my_leader_index = -1;
    int mine = node_of(t, t->rank);
    /* leaders in relative-rank order from the root: the root leads its node,
     * every other node is led by its first member after the root */
    for (int i = 0; i < p; i++) {
        int q = (root + i) % p, node = node_of(t, q), seen = 0;
        for (int j = 0; j < v->nleaders && !seen; j++)
            seen = node_of(t, v->leaders[j]) == node;
        if (!seen) {
            if (q == t->rank)
                v->my_leader_index = v->nleaders;
            v->leaders[v->nleaders++] = q;
        }
        if (node == mine)
            v->locals[v->nlocals++] = q; /* my node's members, its leader first */
    }
    for (int i = 0; i < v->nlocals; i++)
        if (v->locals[i] == t->rank)
            v->my_local_index = i;
    return s->error;
}
