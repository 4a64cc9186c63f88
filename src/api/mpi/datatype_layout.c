/* Element layout of a datatype handle, for the point-to-point and
 * collective bindings.  Predefined types: MPICH's handles encode the size
 * of the basic types in bits 8-15; the pair types (0x8c...) are listed.
 * Derived types come from the datatype engine (being integrated). */
#include "api/mpi/mpi_impl.h"

int fmpl_mpi_type_layout(MPI_Datatype t, MPI_Aint *size, int *contiguous)
{
    *contiguous = 1;
    if (t == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    if (((unsigned)t & 0xff000000u) == 0x4c000000u) {
        *size = ((unsigned)t >> 8) & 0xff;
        return MPI_SUCCESS;
    }
    switch (t) {
    case MPI_FLOAT_INT: *size = 8; return MPI_SUCCESS;
    case MPI_DOUBLE_INT: *size = 16; return MPI_SUCCESS;
    case MPI_LONG_INT: *size = 16; return MPI_SUCCESS;
    case MPI_SHORT_INT: *size = 8; return MPI_SUCCESS;
    case MPI_LONG_DOUBLE_INT: *size = 32; return MPI_SUCCESS;
    default: return MPI_ERR_TYPE;
    }
}
