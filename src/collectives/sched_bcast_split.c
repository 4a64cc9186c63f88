/* Two-phase broadcast (seed 002, design B): phase 1 (rounds 0-1), a
 * binomial tree over the node leaders; phase 2 (round 2), only once the
 * leader holds the whole message, the message split into F fragments
 * (FMPL_BCAST_SPLIT_FRAGMENTS, one per copy engine; the remainder goes to
 * the last) and every fragment sent from the leader's buffer to every other
 * member of its node, all at once, so that F engines copy in parallel.
 * No member's buffer is written before its leader has the whole message
 * (phase 2 starts after phase 1's round completed); each fragment reaches
 * each member exactly once. */
#include "collectives/sched_nodes.h"
#include "base/tunable.h"

FMPL_TUNABLE(tunable_fragments, "FMPL_BCAST_SPLIT_FRAGMENTS", "4",
             "fragments (copy engines) of the two-phase broadcast's intra-node phase");

int fmpl_sched_bcast_split(fmpl_sched *s, fmpl_team *t, void *buf, int64_t size, int root)
{
    fmpl_sched_nodes_view v;
    if (fmpl_sched_nodes(s, t, root, &v) != FMPL_SUCCESS)
        return s->error;
    if (v.my_leader_index >= 0)
        fmpl_sched_binomial_tree(s, v.leaders, v.nleaders, v.my_leader_index, buf, size, 0);
    long long f = fmpl_tunable_long(&tunable_fragments);
    int64_t nfrag = f < 1 ? 1 : f > size ? (size > 0 ? size : 1) : f;
    int64_t per = size / nfrag;
    for (int64_t e = 0; e < nfrag; e++) {
        char *frag = (char *)buf + e * per;
        int64_t len = e == nfrag - 1 ? size - e * per : per;
        if (v.my_local_index != 0) {
            fmpl_sched_recv(s, 2, frag, len, v.locals[0]);
            continue;
        }
        for (int i = 1; i < v.nlocals; i++)
            fmpl_sched_send(s, 2, frag, len, v.locals[i]);
    }
    return s->error;
}
