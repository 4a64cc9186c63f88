/* Element layout of a datatype handle, for the point-to-point and
 * collective bindings (see mpi_impl.h, "datatypes").
 *
 * Predefined basic types take a fast path: MPICH's builtin handles encode
 * the size in bits 8-15, and they are contiguous with true_lb 0.  The pair
 * types (MPICH's direct handles 0x8c00000x) and every derived type come
 * from the engine: a pair type's packed form is its value then its int,
 * without the C struct's padding (MPI_DOUBLE_INT: 12 bytes of a 16-byte
 * extent), the same stream whether the pair is the message's type or an
 * element of a derived one, so MPI_DOUBLE_INT x n matches
 * contiguous(n, MPI_DOUBLE_INT) or a struct of (double, int) fields; the
 * padded ones are therefore not contiguous and move through staging like
 * any derived type (the reductions keep the C struct layout: op.c).  Size
 * = fmpl_dt_size, contiguous = committed && fmpl_dt_is_contiguous, offset =
 * true_lb.  An uncommitted derived type is MPI_ERR_TYPE: MPI allows only
 * committed types in communication.
 *
 * fmpl_mpi_buf_describe turns (buffer, count, type) into what a transfer
 * moves: a contiguous type is an (offset) pointer and a byte count; any
 * other type keeps its engine object, and the data moves packed through a
 * staging buffer (dt_staging.c). */
#include "api/mpi/mpi_impl.h"

/* Everything but the basic types' fast path (fmpl_mpi_buf_describe). */
int fmpl_mpi_buf_describe_slow(MPI_Comm comm, const char *func, const void *buf,
                               MPI_Aint count, MPI_Datatype t, int null_is_error,
                               fmpl_mpi_buf *b)
{
    MPI_Aint size;
    int contiguous;
    if (fmpl_mpi_type_layout(t, &size, &contiguous) != MPI_SUCCESS)
        return fmpl_mpi_type_check(comm, t, func);
    b->user = (void *)buf;
    b->count = count;
    b->bytes = count * size;
    b->type = NULL;
    b->data = (void *)buf;
    fmpl_datatype *d = fmpl_mpi_datatype_get(t);
    int64_t true_lb = fmpl_dt_true_lb(d);
    /* NULL is MPI_BOTTOM: fine when the data lies at absolute addresses,
     * an error only when it would start at address 0. */
    if (!buf && b->bytes > 0 && true_lb == 0 && null_is_error)
        return fmpl_mpi_error(comm, MPI_ERR_BUFFER, func,
                              "buffer is NULL with count %ld and datatype 0x%x, whose data "
                              "starts at displacement 0",
                              (long)count, (unsigned)t);
    if (contiguous)
        b->data = (void *)((uintptr_t)buf + (uintptr_t)true_lb);
    else if (b->bytes > 0) {
        b->type = d;
        b->data = NULL;
    }
    return MPI_SUCCESS;
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
