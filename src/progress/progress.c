#include "progress/progress.h"
#include "progress/async.h"
#include "protocols/active_message.h"
#include "protocols/sender_match.h"
#include "protocols/tag_match.h"
#include "fabric/fabric.h"
#include "base/wait.h"

fmpl_progress_hook fmpl_progress_barrier_hook;

/* Parts with nothing outstanding are skipped with one load instead of a
 * call (most MPI waits have only tag-matched traffic).  Active messages
 * run inside fmpl_tm_progress (their records share the channels); the
 * messages their handlers queued go out after it, when the targets have
 * taken some of theirs. */
int fmpl_progress(void)
{
    return (fmpl_sm_outstanding ? fmpl_sm_progress() : 0) + fmpl_tm_progress() +
           (fmpl_am_queued ? fmpl_am_progress() : 0) +
           (fmpl_async_head ? fmpl_async_progress() : 0) +
           (atomic_load_explicit(&fmpl_progress_barrier_hook.pending, memory_order_relaxed)
                ? fmpl_progress_barrier_hook.poll()
                : 0) +
           (fmpl_fab.net ? fmpl_fab.net->progress() : 0);
}

/* Most polls of a receive from a known source look only at that source's
 * channel; every 16th is a full pass, so everything else still advances
 * while we wait (MPI's progress rule).  Records from the source are
 * handled by the same handler, in channel order, as a full pass would. */
int fmpl_progress_wait_tm(fmpl_tm_req *r)
{
    int w = r->kind == FMPL_TM_RECV && r->peer >= 0 ? r->team->world[r->peer] : -1;
    fmpl_waiter waiter = FMPL_WAITER_INIT;
    for (unsigned polls = 1; !r->complete; polls++) {
        int advanced = w >= 0 && (polls & 15) != 0 ? fmpl_tm_poll_from(w) : fmpl_progress();
        if (!advanced)
            fmpl_wait_once(&waiter);
    }
    return r->st_error;
}

/* A blocking receive kept off the posted queue (tag_match.h): most polls
 * look at the source's channel and take a matching record straight into
 * the receive; every 16th is a full pass, after which the unexpected queue
 * may hold our message. */
int fmpl_progress_recv_direct(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, int src,
                              int tag)
{
    int state = fmpl_tm_recv_direct_start(r, t, buf, size, src, tag);
    if (state == 0) {
        fmpl_tm_irecv(r, t, buf, size, src, tag);
        return fmpl_progress_wait_tm(r);
    }
    if (state == 1) {
        int w = t->world[src];
        fmpl_waiter waiter = FMPL_WAITER_INIT;
        for (unsigned polls = 1;; polls++) {
            if ((polls & 15) != 0) {
                if (fmpl_tm_recv_direct_poll(r, w))
                    break;
                fmpl_wait_once(&waiter);
            } else {
                int n = fmpl_progress();
                if (fmpl_tm_recv_direct_take(r))
                    break;
                if (!n)
                    fmpl_wait_once(&waiter);
            }
        }
    }
    return r->complete ? r->st_error : fmpl_progress_wait_tm(r);
}
