/* Library symbols that mpi.h refers to other than functions: the objects
 * behind MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY and the Fortran status sentinels,
 * and MPIR_Dup_fn, the function behind MPI_DUP_FN, MPI_COMM_DUP_FN,
 * MPI_TYPE_DUP_FN and MPI_WIN_DUP_FN.  Their names are MPICH's, so that a
 * program compiled against MPICH's mpi.h, which references these symbols
 * directly, also links and runs against FMPL's libmpi.so.12.
 *
 * The pointers' values are not part of the ABI (a program reads them from
 * the library at run time): each points to an object of its own, so it
 * equals no user array and no user status. */
#include <mpi.h>

static int unweighted_sentinel;
static int weights_empty_sentinel;
static MPI_Fint f_status_ignore_sentinel[MPI_F_STATUS_SIZE];
static MPI_Fint f_statuses_ignore_sentinel[MPI_F_STATUS_SIZE];
static MPI_F08_status f08_status_ignore_sentinel;
static MPI_F08_status f08_statuses_ignore_sentinel;

int *const MPI_UNWEIGHTED = &unweighted_sentinel;
int *const MPI_WEIGHTS_EMPTY = &weights_empty_sentinel;
MPI_Fint *MPI_F_STATUS_IGNORE = f_status_ignore_sentinel;
MPI_Fint *MPI_F_STATUSES_IGNORE = f_statuses_ignore_sentinel;
MPI_F08_status *MPI_F08_STATUS_IGNORE = &f08_status_ignore_sentinel;
MPI_F08_status *MPI_F08_STATUSES_IGNORE = &f08_statuses_ignore_sentinel;

/* The predefined "dup" attribute copy callback: the copy gets the same
 * attribute value.  The handle and keyval are not needed. */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}
