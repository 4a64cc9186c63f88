/* Start-up and shut-down of the whole core, shared by both APIs:
 * bootstrap (rank, size, key-value space) -> fabric (segments, heap, CMA
 * probe) -> protocol state -> the world team -> barrier. */
#include "runtime/runtime.h"
#include "progress/agent.h"
#include "collectives/collectives.h"
#include "fabric/fabric.h"
#include "progress/progress.h"
#include "protocols/active_message.h"
#include "protocols/any_source.h"
#include "protocols/remote_copy.h"
#include "protocols/sender_match.h"
#include "protocols/staging.h"
#include "protocols/tag_match.h"
#include "base/error.h"
#include "base/log.h"
#include "base/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fmpl_runtime_state = FMPL_RUNTIME_NEW;
static fmpl_bootstrap *bootstrap;
/* The APIs holding the runtime (fmpl_init, MPI_Init): a library on one API
 * (BLACS-FMPL on fmpl.h) runs in a program on the other, and the core goes
 * down with the last of them. */
static int runtime_users;

int fmpl_runtime_bootstrap(fmpl_bootstrap **bs)
{
    if (!bootstrap) {
        fmpl_log_init();
        fmpl_error_init();
        int rc = fmpl_bootstrap_init(&bootstrap);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    if (bs)
        *bs = bootstrap;
    return FMPL_SUCCESS;
}

int fmpl_runtime_init(void *ma, void *fa, int count)
{
    if (fmpl_runtime_state == FMPL_RUNTIME_READY) { /* the other API started it */
        runtime_users++;
        return FMPL_SUCCESS;
    }
    int rc = fmpl_runtime_bootstrap(NULL);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_log_set_rank(bootstrap->rank);
    rc = fmpl_fabric_init(bootstrap); /* also sets the waits' spin budget */
    if (rc == FMPL_SUCCESS && fmpl_fab.net)
        fmpl_wait_poll = fmpl_fab_progress;
    if (rc == FMPL_SUCCESS)
        rc = fmpl_sm_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpl_any_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpl_rc_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpl_team_build_world(bootstrap, ma, fa, count);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_am_init();
    if (rc == FMPL_SUCCESS && bootstrap->spawn)
        rc = fmpl_team_universe_create();
    if (rc != FMPL_SUCCESS) {
        /* A half-started job cannot continue: end it with the reason. */
        char msg[160];
        snprintf(msg, sizeof msg, "start-up failed on rank %d: %s", bootstrap->rank,
                 fmpl_error_string(rc));
        bootstrap->abort(bootstrap, 1, msg);
    }
    fmpl_fabric_started();
    fmpl_runtime_state = FMPL_RUNTIME_READY;
    runtime_users = 1;
    fmpl_agent_start();
    fmpl_log_info("started: rank %d of %d, launcher %s, CMA %s", bootstrap->rank,
                  bootstrap->size, bootstrap->launcher,
                  fmpl_fab.cma_reason ? fmpl_fab.cma_reason : "available");
    return FMPL_SUCCESS;
}

int fmpl_runtime_finalize(void)
{
    if (--runtime_users > 0)
        return FMPL_SUCCESS;
    fmpl_agent_stop();
    /* Active messages that handlers queued go out first: their targets
     * progress in the barrier below. */
    FMPL_WAIT_UNTIL(!fmpl_am_queued);
    fmpl_team_reclaim_before_leaving();
    int rc = fmpl_coll_barrier(fmpl_teams[0]);
    for (int id = FMPL_MAX_TEAMS - 1; id >= 0; id--)
        fmpl_team_free(fmpl_teams[id]);
    fmpl_team_universe_free();
    fmpl_stage_finalize();
    fmpl_am_finalize();
    fmpl_tm_finalize();
    fmpl_rc_finalize();
    fmpl_sm_finalize();
    fmpl_wait_poll = NULL;
    if (fmpl_fab.net) {
        /* A peer that leaves the barrier may close its endpoint while our
         * last writes to it still await their completion (the data placed,
         * the acknowledgement not yet reaped): those would fail.  Every
         * write waits for its completion, and records sent as messages are
         * drained here, so meeting out of band before anyone closes is
         * enough.  (A flush here would deadlock: its read needs the
         * target's progress, and the target may already be in this
         * barrier.) */
        fmpl_fab_drain();
        if (bootstrap->barrier(bootstrap) != FMPL_SUCCESS && rc == FMPL_SUCCESS)
            rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "barrier before closing the network failed");
    }
    fmpl_fabric_finalize();
    fmpl_bootstrap_finalize(&bootstrap);
    fmpl_runtime_state = FMPL_RUNTIME_DONE;
    return rc;
}

void fmpl_runtime_abort(int code, const char *message)
{
    fflush(NULL); /* the launcher kills the others; keep what this rank printed */
    /* After finalize the launcher connection is closed: the exit code is
     * what tells the launcher. */
    if (fmpl_runtime_state == FMPL_RUNTIME_DONE || fmpl_runtime_bootstrap(NULL) != FMPL_SUCCESS)
        _exit(code ? code : 1);
    bootstrap->abort(bootstrap, code, message);
}
