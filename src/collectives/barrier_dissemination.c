/* Barrier by dissemination: ceil(log2 P) rounds; in round k each member
 * release-stores the barrier epoch into flag[k] of member (rank + 2^k) mod P
 * with a pre-built control write, then waits for its own flag[k] to reach
 * the epoch.  After the last round every member has heard, directly or
 * transitively, from all others.  Flags hold monotonic epochs, so they are
 * never reset and a fast member racing ahead into the next barrier cannot be
 * confused with this one. */
#include "collectives/collectives.h"
#include "progress/progress.h"

int fmpl_barrier_dissemination(fmpl_team *t)
{
    fmpl_coll_team *c = t->coll;
    uint64_t epoch = ++c->barrier_epoch;
    for (int k = 0; k < c->rounds; k++) {
        fmpl_ctl_write(&c->diss[k], epoch);
        const fmpl_line *mine = &c->mine->flag[k];
        FMPL_WAIT_UNTIL(fmpl_line_get(mine) >= epoch);
    }
    return FMPL_SUCCESS;
}
