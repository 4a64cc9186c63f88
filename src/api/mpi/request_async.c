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
    if (!r->async->done)
        fmpl_progress();
    if (!r->async->done)
        return 0;
    r->async = NULL;
    r->error = r->async_complete(r);
    if (!r->persistent) /* a persistent collective keeps its schedule */
        r->async_state = NULL;
    return 1;
}
