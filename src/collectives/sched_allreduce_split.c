/* Allreduce of a large vector through every member of every node, as a
 * schedule: for teams of a power-of-two number of nodes, each of L members
 * holding consecutive ranks (node n is ranks nL .. nL+L-1).  The vector is
 * cut into L blocks; member j of a node owns block j:
 *   1. node      reduce-scatter inside the node (shared memory): member j
 *                sends block k to member k and receives every other
 *                member's block j, then combines them in rank order (lower
 *                operands first: op.h takes no operation as commutative);
 *   2. network   member j of every node allreduces block j with member j
 *                of the others, by recursive doubling in node order
 *                (sched_allreduce_exchange.c): L exchanges between each
 *                pair of nodes at once, each of 1/L of the vector;
 *   3. node      allgather inside the node: member j sends its block to
 *                every other member.
 * Against the leaders' scheme of sched_reduce_nodes.c (the whole vector
 * reduced to the leader, exchanged between leaders, broadcast back), every
 * member moves 1/L of the vector over the network instead of the leader
 * moving all of it, and the node phases move (L-1)/L of it per member.
 * work: the caller's block of count elements, or NULL (allocated). */
#include "collectives/sched_nodes.h"

/* Block k of n over count elements: the first count % n blocks get one more. */
static void block_of(int64_t count, int n, int k, int64_t *first, int64_t *len)
{
    int64_t base = count / n, extra = count % n;
    *len = base + (k < extra);
    *first = k * base + (k < extra ? k : extra);
}

int fmpl_sched_allreduce_split_fits(const fmpl_team *t, const fmpl_sched_nodes_view *v,
                                    int64_t count)
{
    int nodes = v->nleaders, per = v->nlocals;
    if (nodes < 2 || (nodes & (nodes - 1)) != 0 || per < 2 || count < (int64_t)per * per ||
        (int64_t)nodes * per != t->size)
        return 0;
    /* Node n is exactly ranks nL.. (the same answer on every member: the
     * leaders' list is the same everywhere, and leaders[1] is L). */
    for (int n = 0; n < nodes; n++)
        if (v->leaders[n] != n * per)
            return 0;
    return 1;
}

int fmpl_sched_allreduce_split(fmpl_sched *s, const fmpl_sched_nodes_view *v, void *buf,
                               int64_t count, void *work)
{
    size_t elem = fmpl_op_elem_size(&s->op);
    int per = v->nlocals, j = v->my_local_index, nodes = v->nleaders;
    int node = v->locals[0] / per;
    int64_t my_first, my_len;
    block_of(count, per, j, &my_first, &my_len);
    char *base = buf, *mine = base + my_first * (int64_t)elem;
    int64_t slot_bytes = (count / per + 1) * (int64_t)elem;
    if (!work && !(work = fmpl_sched_alloc(s, (size_t)(slot_bytes * (per - 1)))))
        return s->error;
    char *slots = work;

    /* 1. Reduce-scatter inside the node. */
    for (int k = 0; k < per; k++) {
        if (k == j)
            continue;
        int64_t first, len;
        block_of(count, per, k, &first, &len);
        char *slot = slots + (k < j ? k : k - 1) * slot_bytes;
        fmpl_sched_send(s, 0, base + first * (int64_t)elem, len * (int64_t)elem, v->locals[k]);
        fmpl_sched_recv(s, 0, slot, my_len * (int64_t)elem, v->locals[k]);
    }
    /* mine = x_0 op ... op x_j, lowest last folded in first; then
     * mine = mine op x_k upwards (a reduce step computes dst = src op dst). */
    for (int k = j - 1; k >= 0; k--)
        fmpl_sched_reduce(s, 1, slots + k * slot_bytes, mine, my_len);
    for (int k = j + 1; k < per; k++) {
        char *slot = slots + (k - 1) * slot_bytes;
        fmpl_sched_reduce(s, 1, mine, slot, my_len);
        fmpl_sched_copy(s, 1, mine, slot, my_len * (int64_t)elem);
    }

    /* 2. Member j of every node, in node order. */
    fmpl_sched_phase(s);
    int *peers = fmpl_sched_alloc(s, (size_t)nodes * sizeof *peers);
    if (!peers)
        return s->error;
    for (int n = 0; n < nodes; n++)
        peers[n] = n * per + j;
    fmpl_sched_allreduce_exchange(s, peers, nodes, node, mine, my_len, slots);

    /* 3. Allgather inside the node. */
    fmpl_sched_phase(s);
    for (int k = 0; k < per; k++) {
        if (k == j)
            continue;
        int64_t first, len;
        block_of(count, per, k, &first, &len);
        fmpl_sched_send(s, 0, mine, my_len * (int64_t)elem, v->locals[k]);
        fmpl_sched_recv(s, 0, base + first * (int64_t)elem, len * (int64_t)elem, v->locals[k]);
    }
    return s->error;
}
