/* Scatter(v) as a schedule: the root sends every other member's block
 * straight from its place in sendbuf (all at once, round 0) and copies its
 * own unless in place; the others receive theirs. */
#include "collectives/sched_coll.h"

int fmpl_sched_scatterv_linear(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                               const fmpl_coll_layout *l, void *recvbuf, int64_t recvbytes,
                               int root, int flags)
{
    if (t->rank != root) {
        if (recvbytes > 0)
            fmpl_sched_recv(s, 0, recvbuf, recvbytes, root);
        return s->error;
    }
    for (int q = 0; q < t->size; q++) {
        int64_t n = fmpl_layout_count(l, q);
        const char *at = n > 0 ? (const char *)sendbuf + fmpl_layout_displ(l, q) : NULL;
        if (n <= 0)
            continue;
        if (q != root)
            fmpl_sched_send(s, 0, at, n, q);
        else if (!(flags & FMPL_COLL_IN_PLACE))
            fmpl_sched_copy(s, 0, recvbuf, at, n);
    }
    return s->error;
}
