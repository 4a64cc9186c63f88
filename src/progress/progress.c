#include "progress/progress.h"
#include "progress/async.h"
#include "protocols/sender_match.h"
#include "protocols/tag_match.h"

/* Parts with nothing outstanding are skipped with one load instead of a
 * call (most MPI waits have only tag-matched traffic). */
int fmpl_progress(void)
{
    return (fmpl_sm_outstanding ? fmpl_sm_progress() : 0) + fmpl_tm_progress() +
           (fmpl_async_head ? fmpl_async_progress() : 0);
}
