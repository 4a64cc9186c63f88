/* The list of operations driven by progress (async.h): a singly linked
 * FIFO, polled front to back by fmpl_async_progress. */
#include "progress/async.h"
#include "progress/progress.h"
#include "progress/agent.h"

#include <stddef.h>

fmpl_async *fmpl_async_head; /* started, not yet finished (NULL: none) */
static fmpl_async **tail = &fmpl_async_head;
static int polling; /* a poll function called fmpl_progress: do not re-enter */

void fmpl_async_start(fmpl_async *a, int (*poll)(fmpl_async *a))
{
    a->poll = poll;
    a->next = NULL;
    a->done = 0;
    a->self_driven = 0;
    *tail = a;
    tail = &a->next;
    /* A first poll gets the operation going inside the call that starts
     * it.  With the agent on, the agent does that work while the caller
     * computes: polling here would do it on the caller's time (a child of
     * a broadcast copying the whole message inside MPI_Ibcast). */
    if (!fmpl_agent_on)
        fmpl_async_progress();
}

int fmpl_async_progress(void)
{
    if (polling || !fmpl_async_head)
        return 0;
    polling = 1;
    int finished = 0;
    fmpl_async **link = &fmpl_async_head;
    while (*link) {
        fmpl_async *a = *link;
        if (!a->poll(a)) {
            link = &a->next;
            continue;
        }
        *link = a->next;
        if (tail == &a->next)
            tail = link;
        a->done = 1;
        finished++;
    }
    polling = 0;
    return finished;
}

int fmpl_async_poll_one(fmpl_async *a)
{
    if (a->done)
        return 1;
    if (polling)
        return 0;
    polling = 1;
    int finished = a->poll(a);
    polling = 0;
    if (!finished)
        return 0;
    fmpl_async **link = &fmpl_async_head;
    while (*link != a)
        link = &(*link)->next;
    *link = a->next;
    if (tail == &a->next)
        tail = link;
    a->done = 1;
    return 1;
}

void fmpl_async_wait(fmpl_async *a)
{
    FMPL_WAIT_UNTIL(a->done);
}
