/* Completion: MPI_Wait/Test and their all/any/some forms, statuses, counts,
 * freeing and cancelling requests.  Completing a request (finish) is where
 * a receive with a non-contiguous datatype unpacks its staging buffer into
 * the user's buffer (fmpl_mpi_request_unstage); a cancelled one unpacks
 * nothing. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

/* MPI_ERROR is not written here: calls that complete one operation leave
 * it alone (MPI-4.0 3.2.5; the error is their return value), and the
 * multiple-completion calls set it themselves when they return
 * MPI_ERR_IN_STATUS (set_status_errors below). */
void fmpl_mpi_status_set(MPI_Status *s, int source, int tag, MPI_Count bytes, int cancelled)
{
    s->MPI_SOURCE = source;
    s->MPI_TAG = tag;
    s->count_lo = (int)(bytes & 0xffffffff);
    s->count_hi_and_cancelled = (int)(((uint64_t)bytes >> 32) << 1) | (cancelled ? 1 : 0);
}

/* The "empty" status of MPI-4.0 3.7.3 includes error = MPI_SUCCESS. */
void fmpl_mpi_status_empty(MPI_Status *s)
{
    fmpl_mpi_status_set(s, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0);
    s->MPI_ERROR = MPI_SUCCESS;
}

static MPI_Count status_bytes(const MPI_Status *s)
{
    return (MPI_Count)((uint64_t)(uint32_t)s->count_lo |
                       ((uint64_t)((unsigned)s->count_hi_and_cancelled >> 1) << 32));
}

int fmpl_mpi_request_test(fmpl_mpi_request *r)
{
    if (r->proc_null || r->kind == FMPL_MREQ_DONE)
        return 1;
    if (r->kind == FMPL_MREQ_ASYNC)
        return fmpl_mpi_async_request_test(r);
    if (r->persistent && !r->active)
        return 1;
    if (!r->tm.complete)
        fmpl_progress();
    return r->tm.complete;
}

int fmpl_mpi_request_status(const fmpl_mpi_request *r, MPI_Status *status)
{
    int err = MPI_SUCCESS;
    if (r->persistent && !r->active) {
        /* An inactive persistent request (never started, or completed):
         * an empty status, whatever its peer (MPI-4.0 3.7.3). */
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_empty(status);
    } else if (r->proc_null) {
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0, 0);
    } else if (r->kind == FMPL_MREQ_DONE || r->kind == FMPL_MREQ_ASYNC) {
        err = r->error;
        if (status != MPI_STATUS_IGNORE && r->async_has_status) {
            int keep = status->MPI_ERROR; /* set only by the multiple-completion calls */
            *status = r->async_status;
            status->MPI_ERROR = keep;
        } else if (status != MPI_STATUS_IGNORE) {
            fmpl_mpi_status_empty(status);
        }
    } else {
        err = r->tm.st_error == FMPL_SUCCESS ? MPI_SUCCESS : fmpl_mpi_error_class_of(r->tm.st_error);
        if (status != MPI_STATUS_IGNORE) {
            if (r->kind == FMPL_MREQ_RECV)
                fmpl_mpi_status_set(status, r->tm.st_source, r->tm.st_tag, r->tm.st_bytes,
                                    r->tm.cancelled);
            else
                fmpl_mpi_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, 0);
        }
    }
    return err;
}

int fmpl_mpi_request_finish(fmpl_mpi_request *r, MPI_Request *handle, MPI_Status *status)
{
    int err = fmpl_mpi_request_status(r, status);
    fmpl_mpi_request_unstage(r); /* a non-contiguous receive's data lands now */
    fmpl_mpi_requests_reap();
    if (r->persistent) {
        r->active = 0;
    } else {
        /* A generalised request's free_fn runs last and its error is the
         * call's (MPI-4.0 13.2); query_fn's stands when free_fn succeeds. */
        int free_err = fmpl_mpi_request_free(r);
        if (free_err != MPI_SUCCESS)
            err = free_err;
        *handle = MPI_REQUEST_NULL;
    }
    return err;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!request)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Wait", "request is NULL");
    if (*request == MPI_REQUEST_NULL) {
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    fmpl_mpi_request *r = fmpl_mpi_request_get(*request);
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Wait",
                              "invalid request 0x%x", (unsigned)*request);
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (!fmpl_mpi_request_test(r))
        fmpl_wait_once(&w);
    MPI_Comm comm = r->comm;
    int err = fmpl_mpi_request_finish(r, request, status);
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, err, "MPI_Wait", "the request failed");
}
FMPL_MPI_WEAK(Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!request || !flag)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Test", "request or flag is NULL");
    *flag = 1;
    if (*request == MPI_REQUEST_NULL) {
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    fmpl_mpi_request *r = fmpl_mpi_request_get(*request);
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Test",
                              "invalid request 0x%x", (unsigned)*request);
    *flag = fmpl_mpi_request_test(r);
    if (!*flag)
        return MPI_SUCCESS;
    MPI_Comm comm = r->comm;
    int err = fmpl_mpi_request_finish(r, request, status);
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, err, "MPI_Test", "the request failed");
}
FMPL_MPI_WEAK(Test)

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    FMPL_CORE_GUARD();
    /* MPI_ERROR is set only if some operation failed (MPI_ERR_IN_STATUS):
     * from the first failure on each status gets its code as it completes,
     * and the ones before it, which all succeeded, get MPI_SUCCESS. */
    int first_bad = -1;
    for (int i = 0; i < count; i++) {
        MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
        int rc = PMPI_Wait(&requests[i], s);
        if (rc != MPI_SUCCESS && first_bad < 0)
            first_bad = i;
        if (first_bad >= 0 && s != MPI_STATUS_IGNORE)
            s->MPI_ERROR = rc;
    }
    if (first_bad < 0)
        return MPI_SUCCESS;
    if (statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < first_bad; i++)
            statuses[i].MPI_ERROR = MPI_SUCCESS;
    return MPI_ERR_IN_STATUS;
}
FMPL_MPI_WEAK(Waitall)

int PMPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_progress();
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        fmpl_mpi_request *r = fmpl_mpi_request_get(requests[i]);
        if (!r)
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Testall",
                                  "invalid request 0x%x", (unsigned)requests[i]);
        if (!fmpl_mpi_request_test(r)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    return PMPI_Waitall(count, requests, statuses);
}
FMPL_MPI_WEAK(Testall)

int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    int active = 0;
    *flag = 0;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        fmpl_mpi_request *r = fmpl_mpi_request_get(requests[i]);
        if (!r)
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Testany",
                                  "invalid request 0x%x", (unsigned)requests[i]);
        if (r->persistent && !r->active)
            continue;
        active++;
        if (fmpl_mpi_request_test(r)) {
            *flag = 1;
            *index = i;
            return fmpl_mpi_request_finish(r, &requests[i], status);
        }
    }
    if (!active) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_empty(status);
    }
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Testany)

int PMPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    int flag = 0, rc;
    fmpl_waiter w = FMPL_WAITER_INIT;
    while ((rc = PMPI_Testany(count, requests, index, &flag, status)) == MPI_SUCCESS && !flag)
        fmpl_wait_once(&w);
    return rc;
}
FMPL_MPI_WEAK(Waitany)

int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    int active = 0, n = 0, first_bad = -1;
    fmpl_progress();
    for (int i = 0; i < incount; i++) {
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        fmpl_mpi_request *r = fmpl_mpi_request_get(requests[i]);
        if (!r)
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Testsome",
                                  "invalid request 0x%x", (unsigned)requests[i]);
        if (r->persistent && !r->active)
            continue;
        active++;
        if (fmpl_mpi_request_test(r)) {
            MPI_Status *s = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
            int rc = fmpl_mpi_request_finish(r, &requests[i], s);
            if (rc != MPI_SUCCESS && first_bad < 0)
                first_bad = n;
            if (first_bad >= 0 && s != MPI_STATUS_IGNORE) /* as in Waitall */
                s->MPI_ERROR = rc;
            indices[n++] = i;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    if (first_bad < 0)
        return MPI_SUCCESS;
    if (statuses != MPI_STATUSES_IGNORE)
        for (int k = 0; k < first_bad; k++)
            statuses[k].MPI_ERROR = MPI_SUCCESS;
    return MPI_ERR_IN_STATUS;
}
FMPL_MPI_WEAK(Testsome)

int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    FMPL_CORE_GUARD();
    int rc;
    fmpl_waiter w = FMPL_WAITER_INIT;
    while ((rc = PMPI_Testsome(incount, requests, outcount, indices, statuses)) == MPI_SUCCESS &&
           *outcount == 0)
        fmpl_wait_once(&w);
    return rc;
}
FMPL_MPI_WEAK(Waitsome)

int PMPI_Request_free(MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_mpi_request *r = request ? fmpl_mpi_request_get(*request) : NULL;
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_free",
                              "invalid request");
    /* An active operation still completes; it is simply not reported.
     * MPI_Request_free is local, so it does not wait: the pool takes the
     * request back once the protocol has completed it (handles.c). */
    /* Persistent collectives: freeing an active one is an error; an
     * inactive one releases its schedule (coll_nbc.c) or its state machine
     * (the release step, handles.c). */
    if (r->kind == FMPL_MREQ_ASYNC && r->persistent) {
        if (r->active || (!r->async_release && !fmpl_mpi_nbc_release(r)))
            return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, "MPI_Request_free",
                                  "persistent %s request 0x%x is active: complete it "
                                  "with MPI_Wait or MPI_Test first",
                                  r->partitioned ? "partitioned" : "collective",
                                  (unsigned)*request);
        fmpl_mpi_request_free(r);
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    /* The other progress-driven requests, except those marked freeable
     * (Isendrecv, generalized requests), are nonblocking collective
     * operations (MPI_Comm_idup, 7.4.2, follows their rules), and freeing
     * one is erroneous (MPI-4.0 6.12): refused while pending, so that the
     * program learns of its mistake instead of finding a communicator
     * handle written behind its back. */
    if (r->kind == FMPL_MREQ_ASYNC && !r->async_freeable && !fmpl_mpi_request_test(r))
        return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, "MPI_Request_free",
                              "the request of a pending nonblocking collective operation "
                              "cannot be freed (erroneous, MPI-4.0 6.12): "
                              "complete it with MPI_Wait or MPI_Test");
    MPI_Comm comm = r->comm;
    int err = MPI_SUCCESS;
    if (fmpl_mpi_request_test(r))
        err = fmpl_mpi_request_free(r); /* a complete generalised request: free_fn's error */
    else
        fmpl_mpi_request_free_when_done(r);
    *request = MPI_REQUEST_NULL;
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(comm, err, "MPI_Request_free",
                                               "the generalized request's free_fn failed");
}
FMPL_MPI_WEAK(Request_free)

int PMPI_Cancel(MPI_Request *request)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_mpi_request *r = request ? fmpl_mpi_request_get(*request) : NULL;
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Cancel", "invalid request");
    /* Partitioned requests: cancelling an active one is erroneous
     * (MPI-4.0 4.2.1), an inactive one has nothing to cancel. */
    if (r->partitioned && r->active)
        return fmpl_mpi_error(r->comm, MPI_ERR_REQUEST, "MPI_Cancel",
                              "partitioned request 0x%x is active: cancelling it is erroneous "
                              "(complete it with MPI_Wait or MPI_Test)", (unsigned)*request);
    if (r->kind == FMPL_MREQ_RECV && !r->proc_null)
        fmpl_tm_cancel_recv(&r->tm);
    else if (r->kind == FMPL_MREQ_ASYNC && r->async_cancel) {
        int err = r->async_cancel(r); /* a generalised request: its cancel_fn */
        if (err != MPI_SUCCESS)
            return fmpl_mpi_error(r->comm, err, "MPI_Cancel",
                                  "the generalized request's cancel_fn failed");
    }
    /* Sends are not cancelled: they complete normally (MPI allows this). */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    FMPL_CORE_GUARD();
    *flag = status->count_hi_and_cancelled & 1;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Test_cancelled)

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype type, int *count)
{
    FMPL_CORE_GUARD();
    MPI_Aint size;
    int contiguous;
    if (fmpl_mpi_type_layout(type, &size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Get_count", "invalid datatype");
    MPI_Count bytes = status_bytes(status);
    *count = size == 0 ? 0 : (bytes % size ? MPI_UNDEFINED : (int)(bytes / size));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Get_count)
