#include "progress/progress.h"
#include "protocols/sender_match.h"
#include "protocols/tag_match.h"

/* The sender-matched protocol is skipped when it has nothing outstanding
 * (most MPI waits): one load instead of a call. */
int fmpl_progress(void)
{
    return (fmpl_sm_outstanding ? fmpl_sm_progress() : 0) + fmpl_tm_progress();
}
