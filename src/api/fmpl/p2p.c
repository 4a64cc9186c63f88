/* Native point-to-point calls: checks, then the sender-matched protocol
 * (protocols/sender_match.c) or the any-source domain (any_source.c). */
#include "api/fmpl/api.h"
#include "protocols/any_source.h"

static int check_peer(const fmpl_team *t, int peer, const char *func, const char *what)
{
    if (peer >= 0 && peer < t->size)
        return FMPL_SUCCESS;
    return fmpl_error_report(FMPL_ERR_RANK, func, "%s %d is outside 0 .. %d", what, peer,
                             t->size - 1);
}

static int check_index(const fmpl_team *t, int index, int any_ok, const char *func)
{
    if ((index >= 0 && index < t->count) || (any_ok && index == FMPL_TAG_ANY))
        return FMPL_SUCCESS;
    return fmpl_error_report(FMPL_ERR_INDEX, func, "index %d is outside 0 .. %d%s", index,
                             t->count - 1, any_ok ? " (or FMPL_TAG_ANY)" : "");
}

static int check_buffer(const void *buf, long size, const char *func)
{
    if (size < 0)
        return fmpl_error_report(FMPL_ERR_SIZE, func, "size %ld is negative", size);
    if (!buf && size > 0)
        return fmpl_error_report(FMPL_ERR_ARG, func, "buffer is NULL with size %ld", size);
    return FMPL_SUCCESS;
}

int fmpl_send(const void *buf, long size, int dst, int index, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_buffer(buf, size, __func__));
    CHECK(check_peer(t, dst, __func__, "destination"));
    CHECK(check_index(t, index, 0, __func__));
    return fmpl_sm_send(t, buf, size, dst, index);
}

int fmpl_recv(void *buf, long size, int src, int index, fmpl_comm comm, fmpl_status *status)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_buffer(buf, size, __func__));
    CHECK(check_peer(t, src, __func__, "source"));
    CHECK(check_index(t, index, 1, __func__));
    CHECK(fmpl_sm_irecv(t, buf, size, src, index));
    return fmpl_sm_recv_wait(t, src, index, status);
}

int fmpl_isend(const void *buf, long size, int dst, int index, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_buffer(buf, size, __func__));
    CHECK(check_peer(t, dst, __func__, "destination"));
    CHECK(check_index(t, index, 0, __func__));
    return fmpl_sm_isend(t, buf, size, dst, index);
}

int fmpl_irecv(void *buf, long size, int src, int index, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_buffer(buf, size, __func__));
    CHECK(check_peer(t, src, __func__, "source"));
    CHECK(check_index(t, index, 1, __func__));
    return fmpl_sm_irecv(t, buf, size, src, index);
}

int fmpl_isend_wait(int dst, int index, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_peer(t, dst, __func__, "destination"));
    CHECK(check_index(t, index, 0, __func__));
    return fmpl_sm_send_wait(t, dst, index);
}

int fmpl_irecv_wait(int src, int index, fmpl_comm comm, fmpl_status *status)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_peer(t, src, __func__, "source"));
    CHECK(check_index(t, index, 1, __func__));
    return fmpl_sm_recv_wait(t, src, index, status);
}

int fmpl_isend_test(int dst, int index, fmpl_comm comm, int *flag)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    CHECK(check_peer(t, dst, __func__, "destination"));
    CHECK(check_index(t, index, 0, __func__));
    return fmpl_sm_send_test(t, dst, index, flag);
}

int fmpl_irecv_test(int src, int index, fmpl_comm comm, int *flag, fmpl_status *status)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    CHECK(check_peer(t, src, __func__, "source"));
    CHECK(check_index(t, index, 1, __func__));
    return fmpl_sm_recv_test(t, src, index, flag, status);
}

int fmpl_sendbuf_set(void *buf, long size, int timeout_ms)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_state(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    CHECK(check_buffer(buf, size, __func__));
    if (timeout_ms < FMPL_TIMEOUT_NONE)
        return FMPL_ERROR(FMPL_ERR_ARG, "timeout %d ms is negative (FMPL_TIMEOUT_NONE is %d)",
                          timeout_ms, FMPL_TIMEOUT_NONE);
    return fmpl_sm_spool_set(buf, size, timeout_ms);
}

int fmpl_sendbuf_check(int *nsend, int *nspool)
{
    FMPL_CORE_GUARD();
    /* No progress before counting: this call's deliveries are its nsend. */
    int rc = fmpl_api_check_ready(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    return fmpl_sm_spool_check(nsend, nspool);
}

int fmpl_send_any(const void *buf, long size, int dst, int index, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_buffer(buf, size, __func__));
    CHECK(check_peer(t, dst, __func__, "destination"));
    CHECK(check_index(t, index, 0, __func__));
    return fmpl_any_send(t, buf, size, dst, index);
}

int fmpl_recv_any(void *buf, long size, int index, fmpl_comm comm, fmpl_status *status)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_buffer(buf, size, __func__));
    CHECK(check_index(t, index, 1, __func__));
    return fmpl_any_recv(t, buf, size, index, status);
}
