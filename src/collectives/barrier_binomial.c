/* Barrier over a binomial tree rooted at member 0 (the paper's software
 * barrier: flag writes only).
 *   gather:  a member waits until each child c (rank + 2^j) has stored the
 *            epoch into its flag[j], then stores the epoch into its parent's
 *            flag[k] (k: the lowest set bit of its rank)
 *   release: member 0, then each member in turn, stores the epoch into its
 *            children's `release` line; the others wait on their own.
 * 2 log2 P steps on the critical path against dissemination's log2 P, but
 * only P - 1 flag writes per phase. */
#include "collectives/collectives.h"
#include "progress/progress.h"

#include <stddef.h>

static void store(fmpl_team *t, int member, size_t offset, uint64_t value)
{
    fmpl_line *l = (fmpl_line *)((char *)t->coll->peer[member] + offset);
    fmpl_line_set(l, value);
}

int fmpl_barrier_binomial(fmpl_team *t)
{
    fmpl_coll_team *c = t->coll;
    uint64_t epoch = ++c->barrier_epoch;
    int rank = t->rank, k = 0;
    while (k < c->rounds && !(rank & (1 << k))) {
        if (rank + (1 << k) < t->size) {
            const fmpl_line *l = &c->mine->flag[k];
            FMPL_WAIT_UNTIL(fmpl_line_get(l) >= epoch);
        }
        k++;
    }
    if (rank != 0) {
        int parent = rank - (1 << k);
        store(t, parent, offsetof(fmpl_coll_scratch, flag) + (size_t)k * sizeof(fmpl_line),
              epoch);
        const fmpl_line *l = &c->mine->release;
        FMPL_WAIT_UNTIL(fmpl_line_get(l) >= epoch);
    }
    for (int j = k - 1; j >= 0; j--)
        if (rank + (1 << j) < t->size)
            store(t, rank + (1 << j), offsetof(fmpl_coll_scratch, release), epoch);
    return FMPL_SUCCESS;
}
