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
             "auto: 4000 when every rank has a core, 16 when ranks outnumber cores or "
             "some peers are on other hosts, 0 when both");

unsigned fmpl_spin_count = 4000;
int fmpl_oversubscribed;
int (*fmpl_wait_poll)(void);
void (*fmpl_wait_share)(void);
int fmpl_threads_on;

/* With peers on other hosts a rank's messages arrive through this host's
 * kernel: TCP and the virtual links of a test cluster deliver packets in
 * soft-interrupt work that a core spinning in user space holds off until
 * the next scheduler tick (4 ms here: Open MPI and MPICH measure 4 ms
 * latency between two namespace hosts this way).  So such waits yield at
 * once: 83 us instead of 970 for 8 bytes between two namespace hosts. */
/* local_ranks: the ranks under this kernel, those of other hosts that are
 * containers or namespaces of this machine included (they share its
 * cores: two namespace hosts of 2 ranks each on a 2-core machine are
 * oversubscribed). */
void fmpl_wait_init(int local_ranks, int remote_peers)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    fmpl_oversubscribed = cores > 0 && local_ranks > cores;
    const char *v = fmpl_tunable_string(&tunable_spin);
    if (strcmp(v, "auto") != 0) {
        long long n = fmpl_tunable_long(&tunable_spin);
        fmpl_spin_count = n < 0 ? 0 : (unsigned)n;
        return;
    }
    /* Oversubscribed with network peers: yield after the first empty poll.
     * Each poll then also reads the network's completion queue (system
     * calls), so 16 of them burnt the time slice another rank on the core
     * needed: at 2 namespace hosts x 2 ranks on 2 cores the barrier took
     * 32-34 us, the 8-byte allreduce 32-37 us, 1 MiB 1.07-1.32 ms; yielding
     * at once, 14-25 us, 17-25 us and 0.77-0.89 ms. */
    fmpl_spin_count = fmpl_oversubscribed && remote_peers ? 0
                      : fmpl_oversubscribed || remote_peers ? 16
                                                            : 4000;
    fmpl_log_info("%d local ranks on %ld cores%s: waits spin %u polls before yielding",
                  local_ranks, cores, remote_peers ? ", peers on other hosts" : "",
                  fmpl_spin_count);
}
