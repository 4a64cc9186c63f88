/* Native collectives: checks, then the shared collective core. */
#include "api/fmpl/api.h"
#include "collectives/collectives.h"

int fmpl_op_create(fmpl_user_fn fn, size_t elem_size, void *ctx, fmpl_op **op)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_state(__func__);
    return rc == FMPL_SUCCESS ? fmpl_op_new(fn, elem_size, ctx, op) : rc;
}

int fmpl_op_free(fmpl_op **op)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_state(__func__);
    return rc == FMPL_SUCCESS ? fmpl_op_delete(op) : rc;
}

int fmpl_barrier(fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    return fmpl_coll_barrier(t);
}

int fmpl_bcast(void *buf, long size, int root, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    if (size < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "size %ld is negative", size);
    if (!buf && size > 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "buffer is NULL with size %ld", size);
    if (root < 0 || root >= t->size)
        return FMPL_ERROR(FMPL_ERR_ROOT, "root %d is outside 0 .. %d", root, t->size - 1);
    return fmpl_coll_bcast(t, buf, size, root);
}

static int check_reduce(const fmpl_team *t, const void *buf, long count, const fmpl_op *op,
                        const void *work, const char *func)
{
    int rc = fmpl_op_check_from(op, func);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (count < 0)
        return fmpl_error_report(FMPL_ERR_SIZE, func, "count %ld is negative", count);
    if (count > 0 && (!buf || !work))
        return fmpl_error_report(FMPL_ERR_ARG, func, "%s is NULL with count %ld",
                                 buf ? "work" : "buf", count);
    (void)t;
    return FMPL_SUCCESS;
}

int fmpl_reduce(void *buf, long count, const fmpl_op *op, int root, fmpl_comm comm, void *work)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    int rc = check_reduce(t, buf, count, op, work, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (root < 0 || root >= t->size)
        return FMPL_ERROR(FMPL_ERR_ROOT, "root %d is outside 0 .. %d", root, t->size - 1);
    return fmpl_coll_reduce(t, buf, count, op, root, work);
}

int fmpl_allreduce(void *buf, long count, const fmpl_op *op, fmpl_comm comm, void *work)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    int rc = check_reduce(t, buf, count, op, work, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    return fmpl_coll_allreduce(t, buf, count, op, work);
}
