/* MPI_Get_elements (and _c, _x) for every datatype, derived ones included:
 * the number of basic elements in the bytes a receive delivered (the
 * engine's fmpl_dt_get_elements), and the helpers the status functions
 * use (fmpl_mpi_type_get_elements / fmpl_mpi_type_elements_to_bytes).
 *
 * The byte count of a status is that of the transfer: the packed stream
 * (fmpl_dt_size per element) for every type, the pair types included,
 * whose packed form is value then int without the C struct's padding
 * (datatype_layout.c): 20 bytes received as MPI_DOUBLE_INT are 3 elements.
 *
 * MERGE NOTE: wip-mpip2p's status.c also defines MPI_Get_elements(_c, _x)
 * (predefined types only).  Keep one definition: this file's, or status.c's
 * calling fmpl_mpi_type_get_elements / fmpl_mpi_type_elements_to_bytes for
 * the types it does not know. */
#include "api/mpi/mpi_impl.h"
#include "datatype/basic_types.h"

#include <limits.h>

#define ERRC FMPL_MPI_TYPE_ERR_COMM

int fmpl_mpi_type_get_elements(MPI_Datatype t, MPI_Count bytes, MPI_Count *elements)
{
    fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    if (!d || bytes < 0)
        return MPI_ERR_TYPE;
    int64_t e;
    if (fmpl_dt_get_elements(d, bytes, &e) != FMPL_SUCCESS)
        return MPI_ERR_TYPE;
    *elements = e < 0 ? MPI_UNDEFINED : e;
    return MPI_SUCCESS;
}

int fmpl_mpi_type_elements_to_bytes(MPI_Datatype t, MPI_Count elements, MPI_Count *bytes)
{
    fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    if (!d || elements < 0)
        return MPI_ERR_TYPE;
    int64_t b;
    if (fmpl_dt_elements_to_bytes(d, elements, &b) != FMPL_SUCCESS)
        return MPI_ERR_TYPE;
    *bytes = b;
    return MPI_SUCCESS;
}

static MPI_Count status_bytes(const MPI_Status *s)
{
    return (MPI_Count)((uint64_t)(uint32_t)s->count_lo |
                       ((uint64_t)((unsigned)s->count_hi_and_cancelled >> 1) << 32));
}

static int get_elements(const char *func, const MPI_Status *status, MPI_Datatype t,
                        MPI_Count *count)
{
    FMPL_MPI_CHECK_READY(ERRC);
    if (!status || status == MPI_STATUS_IGNORE || !count)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "%s is NULL or MPI_STATUS_IGNORE",
                              !count ? "count" : "status");
    if (fmpl_mpi_type_get_elements(t, status_bytes(status), count) != MPI_SUCCESS)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "0x%x is %s", (unsigned)t,
                              t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL"
                                                     : "not a valid datatype");
    return MPI_SUCCESS;
}

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype t, int *count)
{
    FMPL_CORE_GUARD();
    MPI_Count n = 0;
    int rc = get_elements("MPI_Get_elements", status, t, &n);
    if (rc == MPI_SUCCESS)
        *count = n > INT_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}
FMPL_MPI_WEAK(Get_elements)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype t, MPI_Count *count)
{
    FMPL_CORE_GUARD();
    return get_elements("MPI_Get_elements_c", status, t, count);
}
FMPL_MPI_WEAK(Get_elements_c)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype t, MPI_Count *count)
{
    FMPL_CORE_GUARD();
    return get_elements("MPI_Get_elements_x", status, t, count);
}
FMPL_MPI_WEAK(Get_elements_x)
