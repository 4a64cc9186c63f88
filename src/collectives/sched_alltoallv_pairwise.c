/* Alltoall(v) as a schedule: my own block is copied, and the P-1 exchanges
 * (to rank + k, from rank - k) are all issued at once in round 0, each
 * block moving straight between the two buffers. */
#include "collectives/sched_coll.h"

int fmpl_sched_alltoallv_pairwise(fmpl_sched *s, fmpl_team *t, const void *sendbuf,
                                  const fmpl_coll_layout *sl, void *recvbuf,
                                  const fmpl_coll_layout *rl)
{
    int p = t->size, me = t->rank;
    const char *sb = sendbuf;
    char *rb = recvbuf;
    if (fmpl_layout_count(rl, me) > 0)
        fmpl_sched_copy(s, 0, rb + fmpl_layout_displ(rl, me), sb + fmpl_layout_displ(sl, me),
                        fmpl_layout_count(rl, me));
    for (int k = 1; k < p; k++) {
        int to = (me + k) % p, from = (me - k + p) % p;
        if (fmpl_layout_count(rl, from) > 0)
            fmpl_sched_recv(s, 0, rb + fmpl_layout_displ(rl, from), fmpl_layout_count(rl, from),
                            from);
        if (fmpl_layout_count(sl, to) > 0)
            fmpl_sched_send(s, 0, sb + fmpl_layout_displ(sl, to), fmpl_layout_count(sl, to), to);
    }
    return s->error;
}
