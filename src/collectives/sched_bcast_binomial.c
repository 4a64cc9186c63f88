/* Broadcast over a binomial tree as a schedule.  Relative rank
 * v = (rank - root) mod P; round 0: receive from v - 2^k (k: lowest set bit
 * of v); round 1: send to v + 2^j for j = k-1 .. 0, largest subtree first. */
#include "collectives/sched_nodes.h"

/* The tree over `n` members listed in `members` (team ranks, the root
 * first), rounds from `round`. */
int fmpl_sched_binomial_tree(fmpl_sched *s, const int *members, int n, int v, void *buf,
                             int64_t size, int round)
{
    int k = 0;
    while ((1 << k) < n && !(v & (1 << k)))
        k++;
    if (v != 0)
        fmpl_sched_recv(s, round, buf, size, members[v - (1 << k)]);
    for (int j = k - 1; j >= 0; j--)
        if (v + (1 << j) < n)
            fmpl_sched_send(s, round + 1, buf, size, members[v + (1 << j)]);
    return s->error;
}

int fmpl_sched_bcast_binomial(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root)
{
    int p = t->size, v = (t->rank - root + p) % p;
    int *members = fmpl_sched_alloc(s, (size_t)p * sizeof *members);
    if (!members)
        return s->error;
    for (int i = 0; i < p; i++)
        members[i] = (root + i) % p;
    return fmpl_sched_binomial_tree(s, members, p, v, buf, size, 0);
}
