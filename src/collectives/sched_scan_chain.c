/* Scan and exscan along the chain of ranks as a schedule (P-1 message
 * latencies; simple and in rank order for any operation):
 *   inclusive: round 0 my input to recvbuf (unless in place) and the
 *     prefix x0..x(r-1) from r-1 into work; round 1 recvbuf = work op
 *     recvbuf; round 2 send recvbuf to r+1.
 *   exclusive: round 0 my input to `mine` and the prefix from r-1 into
 *     recvbuf (in array order: the copy runs first, in place matters);
 *     round 1 mine = recvbuf op mine; round 2 send mine to r+1.  Member 0's
 *     recvbuf is not written. */
#include "collectives/sched_coll.h"

int fmpl_sched_scan_chain(fmpl_sched *s, fmpl_team *t, const void *sendbuf, void *recvbuf,
                          int64_t count, int flags, int exclusive)
{
    int p = t->size, me = t->rank;
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(&s->op);
    const void *in = flags & FMPL_COLL_IN_PLACE ? recvbuf : sendbuf;
    char *work = fmpl_sched_alloc(s, (size_t)bytes);
    if (!work)
        return s->error;
    if (!exclusive) {
        fmpl_sched_copy(s, 0, recvbuf, in, bytes);
        if (me > 0) {
            fmpl_sched_recv(s, 0, work, bytes, me - 1);
            fmpl_sched_reduce(s, 1, work, recvbuf, count);
        }
        if (me < p - 1)
            fmpl_sched_send(s, 2, recvbuf, bytes, me + 1);
        return s->error;
    }
    fmpl_sched_copy(s, 0, work, in, bytes);
    if (me > 0)
        fmpl_sched_recv(s, 0, recvbuf, bytes, me - 1);
    if (me > 0 && me < p - 1)
        fmpl_sched_reduce(s, 1, recvbuf, work, count);
    if (me < p - 1)
        fmpl_sched_send(s, 2, work, bytes, me + 1);
    return s->error;
}
