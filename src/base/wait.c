/* Spin budget of waits.  A rank that has a core to itself spins (the writer
 * runs meanwhile on another core, and a yield would only add a system call);
 * with more ranks than cores the writer may need this core, so waits give it
 * up almost at once. */
#include "base/wait.h"
#include "base/log.h"
#include "base/tunable.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FMPL_TUNABLE(tunable_spin, "FMPL_SPIN_COUNT", "auto",
             "polls with the pause instruction before a wait starts yielding the core; "
             "auto: 4000 when every rank has a core, 16 when ranks outnumber cores");

unsigned fmpl_spin_count = 4000;
int fmpl_oversubscribed;
int (*fmpl_wait_poll)(void);

void fmpl_wait_init(int local_ranks)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fmpl_oversubscribed = cores > 0 && local_ranks > cores;
    const char *v = fmpl_tunable_string(&tunable_spin);
    if (strcmp(v, "auto") != 0) {
        long long n = fmpl_tunable_long(&tunable_spin);
        fmpl_spin_count = n < 0 ? 0 : (unsigned)n;
        return;
    }
    fmpl_spin_count = fmpl_oversubscribed ? 16 : 4000;
    fmpl_log_info("%d local ranks on %ld cores: waits spin %u polls before yielding",
                  local_ranks, cores, fmpl_spin_count);
}
