/* Barrier by dissemination as a schedule: in round k every member sends a
 * zero-byte message to (rank + 2^k) mod P and receives one from
 * (rank - 2^k) mod P; after ceil(log2 P) rounds each has heard, directly or
 * transitively, from all others. */
#include "collectives/sched_coll.h"

static char no_bytes;

int fmpl_sched_barrier_dissemination(fmpl_sched *s, fmpl_team *t)
{
    int p = t->size, me = t->rank;
    for (int k = 0, d = 1; d < p; k++, d <<= 1) {
        fmpl_sched_recv(s, k, &no_bytes, 0, (me - d + p) % p);
        fmpl_sched_send(s, k, &no_bytes, 0, (me + d) % p);
    }
    return s->error;
}
