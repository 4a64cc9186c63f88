/* Status queries: MPI_Request_get_status (a test that changes nothing) and
 * its MPI-4.1 forms for many requests, MPI_Get_count_c, MPI_Get_elements
 * (and _c, _x), MPI_Status_set_elements (and _c, _x),
 * MPI_Status_set_cancelled, and MPI-4.1's get/set of the public fields.
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

int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype type, MPI_Count count)
{
    FMPL_CORE_GUARD();
    return set_elements("MPI_Status_set_elements_c", status, type, count);
}
FMPL_MPI_WEAK(Status_set_elements_c)

/* ------------------------------------------------------------ MPI-4.1 field accessors */

/* The public fields, through functions (MPI-4.1: for bindings that cannot
 * reach into the C structure). */
#define STATUS_FIELD(Name, field, arg)                                                     \
    int PMPI_Status_get_##Name(const MPI_Status *status, int *arg)                         \
    {                                                                                      \
        FMPL_CORE_GUARD();                                                                 \
        if (!status || status == MPI_STATUS_IGNORE || !arg)                                \
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_get_" #Name,   \
                                  "status or " #arg " is NULL");                           \
        *arg = status->field;                                                              \
        return MPI_SUCCESS;                                                                \
    }                                                                                      \
    FMPL_MPI_WEAK(Status_get_##Name)                                                       \
    int PMPI_Status_set_##Name(MPI_Status *status, int arg)                                \
    {                                                                                      \
        FMPL_CORE_GUARD();                                                                 \
        if (!status || status == MPI_STATUS_IGNORE)                                        \
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Status_set_" #Name,   \
                                  "status is NULL");                                       \
        status->field = arg;                                                               \
        return MPI_SUCCESS;                                                                \
    }                                                                                      \
    FMPL_MPI_WEAK(Status_set_##Name)

STATUS_FIELD(source, MPI_SOURCE, source)
STATUS_FIELD(tag, MPI_TAG, tag)
STATUS_FIELD(error, MPI_ERROR, err)

/* ------------------------------------------------------------ MPI-4.1: statuses of many */

/* MPI_Request_get_status_any/all/some: MPI_Testany/all/some that leave
 * every request as it is (none is freed or made inactive).  A null or
 * inactive request counts as complete with an empty status, as in
 * MPI_Request_get_status.  0 and *r set, or an error reported from func. */
static int live_request(MPI_Request h, fmpl_mpi_request **r, const char *func)
{
    *r = NULL;
    if (h == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    *r = fmpl_mpi_request_get(h);
    if (!*r)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_REQUEST, func, "invalid request 0x%x",
                              (unsigned)h);
    if ((*r)->persistent && !(*r)->active)
        *r = NULL;
    return MPI_SUCCESS;
}

int PMPI_Request_get_status_any(int count, const MPI_Request requests[], int *index, int *flag,
                                MPI_Status *status)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Request_get_status_any";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (count < 0 || (count > 0 && !requests) || !index || !flag)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "count %d is negative or an array or flag is NULL", count);
    fmpl_progress();
    int active = 0;
    *flag = 0;
    *index = MPI_UNDEFINED;
    for (int i = 0; i < count; i++) {
        fmpl_mpi_request *r;
        int rc = live_request(requests[i], &r, func);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!r)
            continue;
        active++;
        if (fmpl_mpi_request_test(r)) {
            *flag = 1;
            *index = i;
            int err = fmpl_mpi_request_status(r, status);
            return err == MPI_SUCCESS ? MPI_SUCCESS
                                      : fmpl_mpi_error(r->comm, err, func, "the request failed");
        }
    }
    if (!active) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            fmpl_mpi_status_empty(status);
    }
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Request_get_status_any)

/* Statuses of requests all known complete: errors as MPI_Waitall reports
 * them (MPI_ERR_IN_STATUS, each status's MPI_ERROR set). */
static int statuses_of(int count, const MPI_Request requests[], const int *which,
                       MPI_Status statuses[])
{
    int failed = 0;
    for (int pass = 0; pass < 2; pass++) { /* the second only to set MPI_ERROR */
        for (int k = 0; k < count; k++) {
            int i = which ? which[k] : k;
            fmpl_mpi_request *r = requests[i] == MPI_REQUEST_NULL
                                      ? NULL : fmpl_mpi_request_get(requests[i]);
            if (r && r->persistent && !r->active)
                r = NULL;
            MPI_Status scratch, *s = statuses == MPI_STATUSES_IGNORE ? &scratch : &statuses[k];
            int err = MPI_SUCCESS;
            if (r)
                err = fmpl_mpi_request_status(r, s);
            else
                fmpl_mpi_status_empty(s);
            if (pass)
                s->MPI_ERROR = err;
            failed |= err != MPI_SUCCESS;
        }
        if (!failed)
            return MPI_SUCCESS;
    }
    return MPI_ERR_IN_STATUS;
}

int PMPI_Request_get_status_all(int count, const MPI_Request requests[], int *flag,
                                MPI_Status statuses[])
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Request_get_status_all";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (count < 0 || (count > 0 && !requests) || !flag)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "count %d is negative or an array or flag is NULL", count);
    fmpl_progress();
    *flag = 0;
    for (int i = 0; i < count; i++) {
        fmpl_mpi_request *r;
        int rc = live_request(requests[i], &r, func);
        if (rc != MPI_SUCCESS)
            return rc;
        if (r && !fmpl_mpi_request_test(r))
            return MPI_SUCCESS;
    }
    *flag = 1;
    int rc = statuses_of(count, requests, NULL, statuses);
    return rc == MPI_SUCCESS ? rc : fmpl_mpi_error(MPI_COMM_WORLD, rc, func, "a request failed");
}
FMPL_MPI_WEAK(Request_get_status_all)

int PMPI_Request_get_status_some(int incount, const MPI_Request requests[], int *outcount,
                                 int indices[], MPI_Status statuses[])
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Request_get_status_some";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (incount < 0 || (incount > 0 && (!requests || !indices)) || !outcount)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "incount %d is negative or an array or outcount is NULL", incount);
    fmpl_progress();
    int active = 0, n = 0;
    for (int i = 0; i < incount; i++) {
        fmpl_mpi_request *r;
        int rc = live_request(requests[i], &r, func);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!r)
            continue;
        active++;
        if (fmpl_mpi_request_test(r))
            indices[n++] = i;
    }
    *outcount = active ? n : MPI_UNDEFINED;
    int rc = active ? statuses_of(n, requests, indices, statuses) : MPI_SUCCESS;
    return rc == MPI_SUCCESS ? rc : fmpl_mpi_error(MPI_COMM_WORLD, rc, func, "a request failed");
}
FMPL_MPI_WEAK(Request_get_status_some)
