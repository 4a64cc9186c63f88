/* Allreduce by recursive doubling over a member list as a schedule (a
 * power-of-two number of members, in rank order, each holding the operands
 * of consecutive ranks: the node leaders of sched_reduce_nodes.c, or, with
 * members NULL, team ranks 0..n-1 of a team whose every pair talks over
 * the network, sched_select.c):
 *   round 2k     member v and its partner v ^ 2^k exchange their partial
 *                results: v sends buf, receives the partner's into work;
 *   round 2k+1   v combines with the lower member's operand first (op.h:
 *                no operation is taken as commutative): partner lower,
 *                buf = work op buf; partner higher, work = buf op work and
 *                buf = work.
 * After log2(n) exchanges every member holds all n combined in rank order,
 * since after step k each holds the members of its aligned block of 2^(k+1),
 * and the two halves of a block are joined lower first.  Against a
 * reduction to member 0 and a broadcast back, every link carries one
 * message each way at once instead of two in turn: half the time for large
 * blocks on full-duplex links, and half the rounds. */
#include "collectives/sched_nodes.h"

int fmpl_sched_allreduce_exchange(fmpl_sched *s, const int *members, int n, int v, void *buf,
                                  int64_t count, void *work)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(&s->op);
    if (!work && n > 1 && !(work = fmpl_sched_alloc(s, (size_t)bytes)))
        return 0;
    int round = 0;
    for (int bit = 1; bit < n; bit <<= 1, round += 2) {
        int partner = v ^ bit;
        int peer = members ? members[partner] : partner;
        fmpl_sched_send(s, round, buf, bytes, peer);
        fmpl_sched_recv(s, round, work, bytes, peer);
        if (partner < v) {
            fmpl_sched_reduce(s, round + 1, work, buf, count);
        } else {
            fmpl_sched_reduce(s, round + 1, buf, work, count);
            fmpl_sched_copy(s, round + 1, buf, work, bytes);
        }
    }
    return round;
}
