/* Element layout of a datatype handle, for the point-to-point and
 * collective bindings (see mpi_impl.h, "datatypes").
 *
 * Predefined types take a fast path: MPICH's builtin handles encode the
 * size in bits 8-15, and the pair types are listed; every predefined type
 * is reported contiguous with true_lb 0 (the padded pair types with their C
 * struct size, padding included).  Derived types come from the engine: size
 * = fmpl_dt_size, contiguous = committed && fmpl_dt_is_contiguous, offset =
 * true_lb.  An uncommitted derived type is MPI_ERR_TYPE: MPI allows only
 * committed types in communication. */
#include "api/mpi/mpi_impl.h"

static int pair_size(MPI_Datatype t, MPI_Aint *size)
{
    switch (t) {
    case MPI_FLOAT_INT: *size = 8; return 1;
    case MPI_DOUBLE_INT: *size = 16; return 1;
    case MPI_LONG_INT: *size = 16; return 1;
    case MPI_SHORT_INT: *size = 8; return 1;
    case MPI_LONG_DOUBLE_INT: *size = 32; return 1;
    default: return 0;
    }
}

/* This version moves data as count * size bytes from the buffer's start.
 * Derived types that are not exactly that (non-contiguous, or starting at a
 * true lower bound other than 0) are refused with a clear error until the
 * engine's pack path is wired into point-to-point and collectives. */
int fmpl_mpi_plain_type(MPI_Comm comm, MPI_Datatype t, int contiguous, const char *func)
{
    /* Predefined types (basic 0x4c..., pairs 0x8c000000..04) always are:
     * decide without the engine, this is on every message's path. */
    if (((unsigned)t >> 24) == 0x4cu || ((unsigned)t >= 0x8c000000u && (unsigned)t <= 0x8c000004u))
        return MPI_SUCCESS;
    MPI_Aint true_lb = 0;
    if (contiguous && fmpl_mpi_type_offset(t, &true_lb) == MPI_SUCCESS && true_lb == 0)
        return MPI_SUCCESS;
    return fmpl_mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, func,
                          "datatype 0x%x is %s: communication with such derived datatypes is "
                          "not supported yet (MPI_Pack it into MPI_PACKED, or use a contiguous "
                          "type)",
                          (unsigned)t, contiguous ? "contiguous but offset from the buffer"
                                                  : "not contiguous");
}

int fmpl_mpi_type_layout(MPI_Datatype t, MPI_Aint *size, int *contiguous)
{
    *contiguous = 1;
    if (((unsigned)t & 0xff000000u) == 0x4c000000u) {
        if (!fmpl_mpi_is_predefined_type(t))
            return MPI_ERR_TYPE;
        *size = ((unsigned)t >> 8) & 0xff;
        return MPI_SUCCESS;
    }
    if (pair_size(t, size))
        return MPI_SUCCESS;
    fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    if (!d || !fmpl_dt_is_committed(d))
        return MPI_ERR_TYPE;
    *size = fmpl_dt_size(d);
    *contiguous = fmpl_dt_is_contiguous(d);
    return MPI_SUCCESS;
}

int fmpl_mpi_type_offset(MPI_Datatype t, MPI_Aint *true_lb)
{
    fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    if (!d)
        return MPI_ERR_TYPE;
    *true_lb = fmpl_dt_true_lb(d);
    return MPI_SUCCESS;
}

int fmpl_mpi_type_check(MPI_Comm comm, MPI_Datatype t, const char *func)
{
    if (t == MPI_DATATYPE_NULL)
        return fmpl_mpi_error(comm, MPI_ERR_TYPE, func, "the datatype is MPI_DATATYPE_NULL");
    fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    if (!d)
        return fmpl_mpi_error(comm, MPI_ERR_TYPE, func,
                              "0x%x is not a datatype (invalid or freed handle)", (unsigned)t);
    if (!fmpl_dt_is_committed(d))
        return fmpl_mpi_error(comm, MPI_ERR_TYPE, func,
                              "datatype 0x%x%s%s%s is not committed (MPI_Type_commit)",
                              (unsigned)t, fmpl_dt_get_name(d)[0] ? " (\"" : "",
                              fmpl_dt_get_name(d), fmpl_dt_get_name(d)[0] ? "\")" : "");
    return MPI_SUCCESS;
}
