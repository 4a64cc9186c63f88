/* Status queries: MPI_Request_get_status (a test that changes nothing),
 * MPI_Get_count_c, MPI_Get_elements (and _c, _x), MPI_Status_set_elements
 * (and _x), MPI_Status_set_cancelled.
 *
 * A status holds the number of bytes received (request.c).  Elements are
 * the basic elements of the datatype: one per item of a predefined type,
 * two per item of the pair types (MPI_2INT, MPI_FLOAT_INT, ...).  Derived
 * datatypes are not yet handled by the binding (fmpl_mpi_type_layout). */
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

/* How a datatype's items split into basic elements: the item's size in
 * the status's byte count, the number of elements per item (1 or 2) and
 * the offset where the first element ends (pairs). */
typedef struct shape {
    MPI_Aint item;
    int per_item;
    MPI_Aint first_end;
} shape;

static int shape_of(MPI_Datatype t, shape *s)
{
    int contiguous;
    if (fmpl_mpi_type_layout(t, &s->item, &contiguous) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    s->per_item = 1;
    s->first_end = s->item;
    switch (t) {
    case MPI_2INT:
    case MPI_2INTEGER:
    case MPI_2REAL:
    case MPI_2DOUBLE_PRECISION:
        s->per_item = 2;
        s->first_end = s->item / 2;
        break;
    case MPI_FLOAT_INT:
        s->per_item = 2;
        s->first_end = sizeof(float);
        break;
    case MPI_DOUBLE_INT:
        s->per_item = 2;
        s->first_end = sizeof(double);
        break;
    case MPI_LONG_INT:
        s->per_item = 2;
        s->first_end = sizeof(long);
        break;
    case MPI_SHORT_INT:
        s->per_item = 2;
        s->first_end = sizeof(short);
        break;
    case MPI_LONG_DOUBLE_INT:
        s->per_item = 2;
        s->first_end = sizeof(long double);
        break;
    default:
        break;
    }
    return MPI_SUCCESS;
}

/* Elements in `bytes`, or MPI_UNDEFINED when they end inside an element. */
static MPI_Count elements_in(const shape *s, MPI_Count bytes)
{
    if (s->item == 0)
        return 0;
    MPI_Count full = bytes / s->item, rest = bytes % s->item;
    if (rest == 0)
        return full * s->per_item;
    if (s->per_item == 2 && rest == s->first_end)
        return full * 2 + 1;
    return MPI_UNDEFINED;
}

static MPI_Count bytes_of(const shape *s, MPI_Count elements)
{
    return elements / s->per_item * s->item + (elements % s->per_item ? s->first_end : 0);
}

static int get_elements(const char *func, const MPI_Status *status, MPI_Datatype type,
                        MPI_Count *count)
{
    if (!status || status == MPI_STATUS_IGNORE || !count)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "status or count is NULL");
    shape s;
    if (shape_of(type, &s) != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, func, "invalid datatype 0x%x",
                              (unsigned)type);
    *count = elements_in(&s, fmpl_mpi_status_bytes(status));
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype type, int *count)
{
    MPI_Count n;
    int rc = get_elements("MPI_Get_elements", status, type, &n);
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}
FMPL_MPI_WEAK(Get_elements)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
    return get_elements("MPI_Get_elements_c", status, type, count);
}
FMPL_MPI_WEAK(Get_elements_c)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
    return get_elements("MPI_Get_elements_x", status, type, count);
}
FMPL_MPI_WEAK(Get_elements_x)

/* MPI_Get_count with a large count (MPI_Get_count is in request.c). */
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype type, MPI_Count *count)
{
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

static int set_elements(const char *func, MPI_Status *status, MPI_Datatype type,
                        MPI_Count count)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "status is NULL");
    if (count < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, func, "count %ld is negative",
                              (long)count);
    shape s;
    if (shape_of(type, &s) != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_TYPE, func, "invalid datatype 0x%x",
                              (unsigned)type);
    /* The count field is 63 bits wide (bit 0 of the high word: cancelled). */
    if (s.item && count / s.per_item > ((MPI_Count)1 << 62) / s.item)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, func,
                              "%ld elements of datatype 0x%x are too many bytes", (long)count,
                              (unsigned)type);
    set_bytes(status, bytes_of(&s, count));
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype type, int count)
{
    return set_elements("MPI_Status_set_elements", status, type, count);
}
FMPL_MPI_WEAK(Status_set_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype type, MPI_Count count)
{
    return set_elements("MPI_Status_set_elements_x", status, type, count);
}
FMPL_MPI_WEAK(Status_set_elements_x)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (!status || status == MPI_STATUS_IGNORE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_cancelled",
                              "status is NULL");
    status->count_hi_and_cancelled = (status->count_hi_and_cancelled & ~1) | (flag ? 1 : 0);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Status_set_cancelled)
