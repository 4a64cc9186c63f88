/* Node grouping of the node-aware schedules: which members share a node
 * (they reach each other through shared memory), and each node's
 * representative (leader).  A member's node is the fabric's
 * fmpl_peer.node of its world rank (the lowest world rank on its host),
 * which every rank derived from the same start-up exchange: all members
 * compute the same grouping without communicating.  FMPL_SCHED_NODE_SIZE
 * overrides it for tests (nodes of that many consecutive world ranks). */
#include "collectives/sched_nodes.h"
#include "collectives/coll_team.h"
#include "base/tunable.h"
#include "fabric/fabric.h"

#include <limits.h>
#include <stdlib.h>

FMPL_TUNABLE(tunable_node_size, "FMPL_SCHED_NODE_SIZE", "0",
             "world ranks per node for the node-aware schedules (0: the real hosts)");
FMPL_TUNABLE(tunable_coll_nodes, "FMPL_COLL_NODES", "auto",
             "node-aware collectives for teams spanning hosts: auto (barrier, bcast, reduce "
             "and allreduce relay through node leaders) or off (flat point-to-point)");

static const char *const nodes_choices[] = {"auto", "off", NULL};

static int node_of(const fmpl_team *t, int p)
{
    long per = fmpl_tunable_long(&tunable_node_size);
    return per > 0 ? (int)(t->world[p] / per) : fmpl_fab.peers[t->world[p]].node;
}

int fmpl_sched_nodes_shape(const fmpl_team *t)
{
    static int mode = -1;
    if (mode < 0)
        mode = fmpl_tunable_choice(&tunable_coll_nodes, nodes_choices);
    if (mode != 0 || t->size < 3)
        return 0;
    /* Several nodes, one of them with two members or more (else the flat
     * algorithms are already what the hierarchy would do); ordered when
     * every node's members are consecutive team ranks. */
    int nodes = 1, crowded = 0, ordered = 1;
    for (int p = 1; p < t->size; p++) {
        int node = node_of(t, p);
        if (node == node_of(t, p - 1)) {
            crowded = 1;
            continue;
        }
        nodes++;
        for (int q = 0; q < p - 1 && ordered; q++) /* a node seen before, left: not ordered */
            ordered = node_of(t, q) != node;
    }
    if (!ordered) { /* count the nodes and crowding again, without the order's help */
        nodes = 0;
        for (int p = 0; p < t->size; p++) {
            int first = 1;
            for (int q = 0; q < p && first; q++)
                if (node_of(t, q) == node_of(t, p)) {
                    first = 0;
                    crowded = 1;
                }
            nodes += first;
        }
    }
    if (nodes < 2 || !crowded)
        return 0;
    return FMPL_NODES_HIER | (ordered ? FMPL_NODES_ORDERED : 0);
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
