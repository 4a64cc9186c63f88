/* Native collectives: checks, then the shared collective core. */
#include "api/fmpl/api.h"
#include "collectives/barrier_split.h"
#include "collectives/collectives.h"
#include "progress/progress.h"
#include "protocols/active_message.h"

#include <stdatomic.h>

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

/* Split-phase barriers: the start only records the instance (no progress:
 * it runs in the agent or in later calls); the test makes one progress
 * pass when the flag is still 0, except inside a handler (already inside
 * progress). */
static int check_flag(const uint64_t *flag, const char *func)
{
    if (!flag)
        return fmpl_error_report(FMPL_ERR_ARG, func, "flag is NULL");
    if ((uintptr_t)flag & 7)
        return fmpl_error_report(FMPL_ERR_ARG, func, "flag %p is not 8-byte aligned",
                                 (const void *)flag);
    return FMPL_SUCCESS;
}

static uint64_t flag_value(const uint64_t *flag)
{
    return atomic_load_explicit((_Atomic uint64_t *)flag, memory_order_acquire);
}

static int not_a_flag(uint64_t v, const char *func)
{
    return fmpl_error_report(FMPL_ERR_ARG, func,
                             "the flag holds %llu: not a split-phase barrier's flag (0 until "
                             "its instance completes, then 1)",
                             (unsigned long long)v);
}

int fmpl_barrier_start(fmpl_comm comm, uint64_t *flag)
{
    FMPL_CORE_GUARD();
    API_ENTER_READY(comm, t);
    int rc = check_flag(flag, __func__);
    return rc == FMPL_SUCCESS ? fmpl_coll_barrier_start(t, flag) : rc;
}

int fmpl_barrier_test(uint64_t *flag, int *done)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_ready(__func__);
    if (rc == FMPL_SUCCESS)
        rc = check_flag(flag, __func__);
    if (rc == FMPL_SUCCESS && !done)
        rc = FMPL_ERROR(FMPL_ERR_ARG, "done is NULL");
    if (rc != FMPL_SUCCESS)
        return rc;
    uint64_t v = flag_value(flag);
    if (v == 0 && !fmpl_am_handler_depth) {
        fmpl_progress();
        v = flag_value(flag);
    }
    if (v > 1)
        return not_a_flag(v, __func__);
    *done = (int)v;
    return FMPL_SUCCESS;
}

int fmpl_barrier_wait(uint64_t *flag)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_ready(__func__);
    if (rc == FMPL_SUCCESS)
        rc = check_flag(flag, __func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (fmpl_am_handler_depth)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "called inside an active-message handler, which may not wait "
                          "(fmpl_barrier_test only reads the flag there)");
    uint64_t v;
    FMPL_WAIT_UNTIL((v = flag_value(flag)) != 0);
    return v == 1 ? FMPL_SUCCESS : not_a_flag(v, __func__);
}
