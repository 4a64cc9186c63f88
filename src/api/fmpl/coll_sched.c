/* Native nonblocking and persistent collectives (fmpl.h): the blocking
 * entry points' checks, then the collective core with a schedule being
 * captured (collectives/sched_coll.h).  A request is the schedule itself
 * plus whether it is persistent. */
#include "api/fmpl/api.h"
#include "collectives/sched_coll.h"
#include "progress/progress.h"

#include <stdlib.h>

struct fmpl_coll_req {
    fmpl_sched *s;
    int persistent;
};

/* Run `body` (a blocking entry point) with a schedule captured, and turn
 * the schedule into a request. */
static int capture(int rc_body, fmpl_sched *s, int persistent, fmpl_coll_req *req,
                   const char *func)
{
    fmpl_coll_capture = NULL;
    struct fmpl_coll_req *r = NULL;
    int rc = rc_body != FMPL_SUCCESS ? rc_body : s->error;
    if (rc == FMPL_SUCCESS && !(r = malloc(sizeof *r)))
        rc = fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory for a request");
    if (rc != FMPL_SUCCESS) {
        fmpl_sched_free(s);
        return rc;
    }
    r->s = s;
    r->persistent = persistent;
    if (persistent)
        fmpl_sched_prepare(s);
    else
        fmpl_sched_start(s);
    *req = r;
    return FMPL_SUCCESS;
}

static int begin(fmpl_coll_req *req, fmpl_comm comm, fmpl_sched **s, const char *func)
{
    int rc = fmpl_api_check_state(func);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!req)
        return fmpl_error_report(FMPL_ERR_ARG, func, "req is NULL");
    fmpl_team *t = fmpl_api_team(comm, func, &rc);
    if (!t)
        return rc;
    *s = fmpl_sched_new(FMPL_SCHED_NONBLOCKING);
    if (!*s)
        return fmpl_error_report(FMPL_ERR_NO_MEMORY, func, "no memory for a schedule");
    fmpl_sched_bind(*s, t); /* every call takes its instance number, even an empty one */
    fmpl_coll_capture = *s;
    return FMPL_SUCCESS;
}

#define CAPTURED(comm, req, persistent, body)                                     \
    do {                                                                           \
        fmpl_sched *s_;                                                            \
        int b_ = begin((req), (comm), &s_, __func__);                              \
        if (b_ != FMPL_SUCCESS)                                                    \
            return b_;                                                             \
        return capture((body), s_, (persistent), (req), __func__);                 \
    } while (0)

int fmpl_ibarrier(fmpl_comm comm, fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    CAPTURED(comm, req, 0, fmpl_barrier(comm));
}

int fmpl_barrier_init(fmpl_comm comm, fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    CAPTURED(comm, req, 1, fmpl_barrier(comm));
}

int fmpl_ibcast(void *buf, long size, int root, fmpl_comm comm, fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    CAPTURED(comm, req, 0, fmpl_bcast(buf, size, root, comm));
}

int fmpl_bcast_init(void *buf, long size, int root, fmpl_comm comm, fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    CAPTURED(comm, req, 1, fmpl_bcast(buf, size, root, comm));
}

/* The blocking allreduce's check wants a work area; the schedule has its
 * own, so buf stands in for it. */
int fmpl_iallreduce(void *buf, long count, const fmpl_op *op, fmpl_comm comm,
                    fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    CAPTURED(comm, req, 0, fmpl_allreduce(buf, count, op, comm, buf));
}

int fmpl_allreduce_init(void *buf, long count, const fmpl_op *op, fmpl_comm comm,
                        fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    CAPTURED(comm, req, 1, fmpl_allreduce(buf, count, op, comm, buf));
}

static int check_req(const fmpl_coll_req *req, const char *func)
{
    int rc = fmpl_api_check_state(func);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!req || !*req)
        return fmpl_error_report(FMPL_ERR_ARG, func, "no request");
    return FMPL_SUCCESS;
}

int fmpl_coll_start(fmpl_coll_req req)
{
    FMPL_CORE_GUARD();
    int rc = check_req(&req, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!req->persistent)
        return FMPL_ERROR(FMPL_ERR_ARG, "the request is not persistent");
    if (req->s->active)
        return FMPL_ERROR(FMPL_ERR_BUSY, "the request is running: wait for it first");
    fmpl_sched_start(req->s);
    return FMPL_SUCCESS;
}

int fmpl_coll_test(fmpl_coll_req *req, int *flag)
{
    FMPL_CORE_GUARD();
    int rc = check_req(req, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    fmpl_sched *s = (*req)->s;
    if (s->active)
        fmpl_progress();
    *flag = !s->active;
    if (!*flag)
        return FMPL_SUCCESS;
    rc = s->error;
    if (!(*req)->persistent) {
        fmpl_sched_free(s);
        free(*req);
        *req = NULL;
    }
    return rc;
}

int fmpl_coll_wait(fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    int rc = check_req(req, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    FMPL_WAIT_UNTIL(!(*req)->s->active);
    int flag;
    return fmpl_coll_test(req, &flag);
}

int fmpl_coll_free(fmpl_coll_req *req)
{
    FMPL_CORE_GUARD();
    int rc = check_req(req, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if ((*req)->s->active)
        return FMPL_ERROR(FMPL_ERR_BUSY, "the request is running: wait for it first");
    fmpl_sched_free((*req)->s);
    free(*req);
    *req = NULL;
    return FMPL_SUCCESS;
}
