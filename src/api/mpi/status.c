/* Status queries: MPI_Request_get_status (a test that changes nothing),
 * MPI_Get_count_c, MPI_Get_elements (and _c, _x), MPI_Status_set_elements
 * (and _x), MPI_Status_set_cancelled.
 *
 * A status holds the number of bytes received (request.c).  Elements are
 * the basic elements of the datatype: one per item of a predefined type,
 * two per item of the pair types (MPI_2INT, MPI_FLOAT_INT, ...); derived
 * datatypes count through the engine (type_elements.c).  The bytes of a
 * non-contiguous datatype are those of its packed stream, which is what
 * the binding sends and receives. */
#include "api/mpi/mpi_impl.h"
#include "progress/progress.h"

#include <limits.h>

MPI_Count fmpl_mpi_status_bytes(const MPI_Status *s)
{
    return (MPI_Count)((uint64_t)(uint32_t)s->count_lo |
                       ((uint64_t)((unsigned)s->count_hi_and_cancelled >> 1) << 32));
}

static void set_bytes(MPI_Status *s, MPI_Count bytes)
{
    s->count_lo = (int)(bytes & 0xffffffff);
    s->count_hi_and_cancelled =
        (int)(((uint64_t)bytes >> 32) << 1) | (s->count_hi_and_cancelled & 1);
}

/* ------------------------------------------------------------ requests */

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!flag)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Request_get_status",
                              "flag is NULL");
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    fmpl_mpi_request *r = fmpl_mpi_request_get(request);
    if (!r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, "MPI_Request_get_status",
                              "invalid request 0x%x", (unsigned)request);
    *flag = fmpl_mpi_request_test(r);
    if (!*flag)
        return MPI_SUCCESS;
    int err = fmpl_mpi_request_status(r, status);
    return err == MPI_SUCCESS ? MPI_SUCCESS
                              : fmpl_mpi_error(r->comm, err, "MPI_Request_get_status",
                                               "the request failed");
}
FMPL_MPI_WEAK(Request_get_status)

/* ------------------------------------------------------------ elements */

/* MPI_Get_count with a large count (MPI_Get_count is in request.c). */
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
    FMPL_CORE_GUARD();
    if (!status || status == MPI_STATUS_IGNORE || !count)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Get_count_c",
                              "status or count is NULL");
    MPI_Aint size;
    int contiguous;
    if (fmpl_mpi_type_layout(type, &size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Get_count_c",
                              "invalid datatype 0x%x", (unsigned)type);
    MPI_Count bytes = fmpl_mpi_status_bytes(status);
    *count = size == 0 ? 0 : (bytes % size ? MPI_UNDEFINED : bytes / size);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Get_count_c)

/* ------------------------------------------------------------ setting a status */

/* Elements -> bytes through the datatype binding (type_elements.c), which
 * knows derived types and the padded pair types. */
static int set_elements(const char *func, MPI_Status *status, MPI_Datatype type,
                        MPI_Count count)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "status is NULL");
    if (count < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, func, "count %ld is negative",
                              (long)count);
    MPI_Count bytes;
    int rc = fmpl_mpi_type_elements_to_bytes(type, count, &bytes);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, func,
                              "%ld elements of datatype 0x%x cannot be represented", (long)count,
                              (unsigned)type);
    set_bytes(status, bytes);
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype type, int count)
{
    FMPL_CORE_GUARD();
    return set_elements("MPI_Status_set_elements", status, type, count);
}
FMPL_MPI_WEAK(Status_set_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype type, MPI_Count count)
{
    FMPL_CORE_GUARD();
    return set_elements("MPI_Status_set_elements_x", status, type, count);
}
FMPL_MPI_WEAK(Status_set_elements_x)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    FMPL_CORE_GUARD();
    if (!status || status == MPI_STATUS_IGNORE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                              "status is NULL");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Status_set_cancelled)
