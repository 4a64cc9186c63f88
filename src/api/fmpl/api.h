/* Shared state and argument checks of the native API.  The binding is thin:
 * check arguments, turn the communicator into a team, call the core. */
#ifndef FMPL_API_FMPL_API_H
#define FMPL_API_FMPL_API_H

#include "fmpl.h"
#include "base/error.h"
#include "protocols/sender_match.h"
#include "protocols/team.h"
#include "progress/agent.h"

enum { FMPL_STATE_NEW = 0, FMPL_STATE_READY, FMPL_STATE_FINALIZED };
extern int fmpl_api_state;

/* Returns an error code (after reporting it) when FMPL is not ready. */
static inline int fmpl_api_check_ready(const char *func)
{
    fmpl_error_caller = func;
    if (__builtin_expect(fmpl_api_state == FMPL_STATE_READY, 1))
        return FMPL_SUCCESS;
    if (fmpl_api_state == FMPL_STATE_NEW)
        return fmpl_error_report(FMPL_ERR_NOT_INITIALIZED, func, "call fmpl_init first");
    return fmpl_error_report(FMPL_ERR_FINALIZED, func, "FMPL was finalized");
}

/* The same, and move pending sends, staged receives and the spool along:
 * every call does, so no outstanding message waits for a particular call. */
static inline int fmpl_api_check_state(const char *func)
{
    int rc = fmpl_api_check_ready(func);
    if (rc == FMPL_SUCCESS && fmpl_sm_outstanding)
        fmpl_sm_progress();
    return rc;
}

/* The team of a communicator handle, or NULL after reporting. */
static inline fmpl_team *fmpl_api_team(fmpl_comm comm, const char *func, int *rc)
{
    /* The last entry may hold the universe team (runtime/link.c): no
     * communicator of this API. */
    if (comm >= 0 && comm < FMPL_MAX_TEAMS - 1 && fmpl_teams[comm] && !fmpl_teams[comm]->retired)
        return fmpl_teams[comm];
    *rc = fmpl_error_report(FMPL_ERR_COMM, func, "communicator %d does not exist%s", comm,
                            comm == FMPL_COMM_NULL ? " (FMPL_COMM_NULL)" : " (or was freed)");
    return NULL;
}

/* Return the code of a check that failed (it has reported). */
#define CHECK(expr)                                                                \
    do {                                                                           \
        int c_ = (expr);                                                           \
        if (c_ != FMPL_SUCCESS)                                                    \
            return c_;                                                             \
    } while (0)

#define API_ENTER_WITH(check_, comm_, team_)                                       \
    int rc_ = check_(__func__);                                                    \
    if (rc_ != FMPL_SUCCESS)                                                       \
        return rc_;                                                                \
    fmpl_team *team_ = fmpl_api_team((comm_), __func__, &rc_);                     \
    if (!team_)                                                                    \
        return rc_
#define API_ENTER(comm_, team_) API_ENTER_WITH(fmpl_api_check_state, comm_, team_)
/* Without the progress: calls that may run inside an active-message
 * handler (already inside progress), and starts that must stay a few
 * stores. */
#define API_ENTER_READY(comm_, team_) API_ENTER_WITH(fmpl_api_check_ready, comm_, team_)

#endif
