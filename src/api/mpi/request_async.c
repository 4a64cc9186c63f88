/* Requests driven by a progress function (mpi_impl.h): the MPI side of
 * progress/async.h. */
#include "api/mpi/mpi_impl.h"
#include "progress/async.h"
#include "progress/progress.h"

void fmpl_mpi_async_request_start(fmpl_mpi_request *r, MPI_Comm comm, fmpl_async *a,
                                  int (*complete)(fmpl_mpi_request *r), void *state)
{
    r->kind = FMPL_MREQ_ASYNC;
    r->comm = comm;
    r->error = MPI_SUCCESS;
    r->async = a;
    r->async_complete = complete;
    r->async_state = state;
}

int fmpl_mpi_async_request_test(fmpl_mpi_request *r)
{
    if (!r->async)
        return 1; /* completed by an earlier test */
    /* An operation that advances by its own polls is polled alone, with a
     * full progress pass every 8th call (for whatever it waits behind). */
    static unsigned calls;
    fmpl_async *a = r->async;
    if (!a->done && !(a->self_driven && fmpl_async_poll_one(a)) &&
        (!a->self_driven || ++calls % 8 == 0))
        fmpl_progress();
    if (!r->async->done)
        return 0;
    r->async = NULL;
    r->error = r->async_complete(r);
    /* Persistent requests keep their state (a collective its schedule)
     * until freed; so do those with a release step. */
    if (!r->async_release && !r->persistent)
        r->async_state = NULL;
    return 1;
}

void fmpl_mpi_async_request_persistent(fmpl_mpi_request *r, MPI_Comm comm, void *state,
                                       int (*complete)(fmpl_mpi_request *r),
                                       int (*restart)(fmpl_mpi_request *r, const char *func,
                                                      fmpl_async **a),
                                       int (*release)(fmpl_mpi_request *r))
{
    fmpl_mpi_async_request_start(r, comm, NULL, complete, state);
    r->persistent = 1;
    r->active = 0;
    r->async_restart = restart;
    r->async_release = release;
}

int fmpl_mpi_async_request_restart(fmpl_mpi_request *r, const char *func)
{
    fmpl_async *a = NULL;
    int rc = r->async_restart(r, func, &a);
    if (rc != MPI_SUCCESS)
        return rc;
    r->error = MPI_SUCCESS;
    r->async = a;
    r->active = 1;
    return MPI_SUCCESS;
}
