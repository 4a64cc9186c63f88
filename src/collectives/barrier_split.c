/* Split-phase barriers: many instances in flight per communicator, each
 * completed by a store of 1 into a word of the caller's (seed 004's NICAM
 * barrier, §3 and R17-R21).  The pairing of members per stage is in
 * barrier_split_butterfly.c and barrier_split_dissemination.c.
 *
 * Words.  Member n's collective header (coll_team.h) holds split[k], one
 * word per stage, written only by n's stage-k partner and read only by n.
 * Its value v is a count: "I have started instances 1..v, and each of them
 * has passed my stages before k".  Instances are numbered 1, 2, ... in the
 * order they are started; every member starts them in the same order on a
 * communicator (as with every collective), so the numbers agree.
 *
 * start (the caller: a few stores, no progress):
 *   1. refuses when FMPL_BSPLIT_MAX instances are outstanding here;
 *   2. stores the flag's address in the ring and 0 in the flag;
 *   3. adds 1 to the progress hook's pending count, then release-stores
 *      started = s (this instance's number).
 * progress (fmpl_barrier_split_progress, every communicator with instances
 * outstanding, from any thread that progresses):
 *   4. reach = started; for k = 0 .. rounds-1:
 *        if reach > sent[k]: write reach into the stage-k partner's split[k]
 *          (a pre-built control write: a release store, or over the network
 *          a remote write ordered after the earlier ones); sent[k] = reach;
 *        reach = min(sent[k], my split[k])      <- instances past stage k
 *   5. instances done+1 .. reach are complete: release-store 1 into each
 *      flag, oldest first; done = reach; pending -= their number.
 * One write of v stands for every instance up to v: any number may be in
 * flight with one word per stage, no message per instance and nothing to
 * match (the "per-stage queues" of R19 are these counts).  Nothing is ever
 * reset.  A partner running ahead writes a v beyond what this member has
 * started; the minimum in step 4 keeps such instances from passing before
 * this member starts them.  Why an instance completes only once every
 * member has started it is the pairing's argument (in its file).  Values
 * only grow, so a word an unordered network write places in pieces (low
 * bytes first, fabric.h) never reads larger than what was written.
 *
 * Memory: FMPL_BSPLIT_MAX flag pointers and the stage descriptors, about
 * 4.2 KiB per communicator that ever starts one, allocated at its first
 * start; the words are in the header every communicator has (256 bytes).
 * The engine's list of communicators is changed only by a first start and
 * by the team's destruction (under the core lock when an agent runs). */
#include "collectives/barrier_split.h"
#include "progress/progress.h"
#include "base/error.h"
#include "base/log.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static fmpl_bsplit *_Atomic engine; /* communicators that ever started one */

void fmpl_bsplit_partner(fmpl_bsplit *b, fmpl_team *t, int k, int to)
{
    fmpl_raddr r = t->coll->peer_at[to];
    r.addr += offsetof(fmpl_coll_scratch, split) + (size_t)k * sizeof(uint64_t);
    fmpl_ctl_prepare(&b->to[k], r);
}

static fmpl_bsplit *first_start(fmpl_team *t)
{
    size_t bytes = (sizeof(fmpl_bsplit) + 63) & ~(size_t)63; /* aligned_alloc's rule */
    fmpl_bsplit *b = aligned_alloc(64, bytes);
    if (!b) {
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for the split-phase barriers of a "
                                       "communicator (%zu bytes)", bytes);
        return NULL;
    }
    memset(b, 0, bytes);
    b->in = t->coll->mine->split;
    b->team = t;
    fmpl_coll_barrier_split_select(b, t);
    b->next = atomic_load_explicit(&engine, memory_order_relaxed);
    atomic_store_explicit(&engine, b, memory_order_release);
    t->coll->split = b;
    return b;
}

int fmpl_coll_barrier_start(fmpl_team *t, uint64_t *flag)
{
    fmpl_bsplit *b = t->coll->split;
    if (__builtin_expect(!b, 0) && !(b = first_start(t)))
        return FMPL_ERR_NO_MEMORY;
    uint64_t s = atomic_load_explicit(&b->started, memory_order_relaxed);
    if (__builtin_expect(s - atomic_load_explicit(&b->done, memory_order_acquire) >=
                             FMPL_BSPLIT_MAX, 0)) /* step 1 */
        return FMPL_ERROR(FMPL_ERR_BUSY,
                          "%d split-phase barriers are outstanding on communicator %d, the "
                          "most there can be (FMPL_BARRIER_SPLIT_MAX): wait for the oldest "
                          "first",
                          FMPL_BSPLIT_MAX, t->id);
    b->flags[s % FMPL_BSPLIT_MAX] = flag; /* step 2 */
    atomic_store_explicit((_Atomic uint64_t *)flag, 0, memory_order_relaxed);
    atomic_fetch_add_explicit(&fmpl_progress_barrier_hook.pending, 1, /* step 3 */
                              memory_order_relaxed);
    atomic_store_explicit(&b->started, s + 1, memory_order_release);
    return FMPL_SUCCESS;
}

int fmpl_barrier_split_outstanding(const fmpl_team *t)
{
    const fmpl_bsplit *b = t->coll ? t->coll->split : NULL;
    if (!b)
        return 0;
    return (int)(atomic_load_explicit(&b->started, memory_order_acquire) -
                 atomic_load_explicit(&b->done, memory_order_acquire));
}

/* Steps 4 and 5 for one communicator. */
static int advance(fmpl_bsplit *b)
{
    uint64_t done = atomic_load_explicit(&b->done, memory_order_relaxed);
    uint64_t reach = atomic_load_explicit(&b->started, memory_order_acquire);
    if (reach == done)
        return 0;
    int moved = 0;
    for (int k = 0; k < b->rounds && reach > done; k++) {
        if (reach > b->sent[k]) {
            if (fmpl_ctl_write(&b->to[k], reach) != FMPL_SUCCESS) {
                /* The partner cannot be told: every member would wait for ever. */
                fmpl_log_print("error", "split-phase barrier (%s) on communicator %d: "
                                        "signalling stage %d failed; ending the job",
                               b->algo, b->team->id, k);
                abort();
            }
            b->sent[k] = reach;
            moved++;
        }
        uint64_t heard = atomic_load_explicit(&b->in[k], memory_order_acquire);
        reach = heard < b->sent[k] ? heard : b->sent[k];
    }
    if (reach <= done)
        return moved;
    for (uint64_t i = done; i < reach; i++)
        atomic_store_explicit((_Atomic uint64_t *)b->flags[i % FMPL_BSPLIT_MAX], 1,
                              memory_order_release);
    atomic_store_explicit(&b->done, reach, memory_order_release);
    atomic_fetch_sub_explicit(&fmpl_progress_barrier_hook.pending, reach - done,
                              memory_order_relaxed);
    return moved + (int)(reach - done);
}

int fmpl_barrier_split_progress(void)
{
    int n = 0;
    for (fmpl_bsplit *b = atomic_load_explicit(&engine, memory_order_acquire); b; b = b->next)
        n += advance(b);
    return n;
}

void fmpl_barrier_split_destroy(fmpl_team *t)
{
    fmpl_bsplit *b = t->coll ? t->coll->split : NULL;
    if (!b)
        return;
    fmpl_bsplit *p = atomic_load_explicit(&engine, memory_order_relaxed);
    if (p == b) {
        atomic_store_explicit(&engine, b->next, memory_order_release);
    } else {
        while (p->next != b)
            p = p->next;
        p->next = b->next;
    }
    uint64_t left = atomic_load_explicit(&b->started, memory_order_relaxed) -
                    atomic_load_explicit(&b->done, memory_order_relaxed);
    atomic_fetch_sub_explicit(&fmpl_progress_barrier_hook.pending, left, memory_order_relaxed);
    t->coll->split = NULL;
    free(b);
}
