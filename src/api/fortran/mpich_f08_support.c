/* The parts of MPICH's mpi_f08 ABI that gen_fortran.py does not generate
 * (see mpich_f08.h): the sentinels, the status conversions, MPI_F_sync_reg
 * and the predefined conversion callbacks.  Choice buffers:
 * mpich_f08_sections.c; MPI_Sizeof and the derived types' own data:
 * mpich_modules/mpich_module_data.f90 (generated). */
#include "api/fortran/mpich_f08.h"
#include "api/mpi/mpi_impl.h"

#include <string.h>

/* MPICH's names and sizes (a program built against MPICH's library may
 * hold copy relocations of them). */
MPI_Fint MPIR_F08_MPI_BOTTOM, MPIR_F08_MPI_IN_PLACE;
MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[MPI_F_STATUS_SIZE];
MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[MPI_F_STATUS_SIZE];
MPI_Fint fmpl_f08_errcodes_ignore[1];
MPI_Fint fmpl_f08_unweighted[1];
MPI_Fint fmpl_f08_weights_empty[1];
/* Never compared: FMPL's MPI_Comm_spawn refuses Fortran string arrays. */
char __mpi_f08_link_constants_MOD_mpi_argv_null[1];
char __mpi_f08_link_constants_MOD_mpi_argvs_null[1];

/* MPI_F_sync_reg: a call the compiler cannot see through is all it is. */
void pmpir_f_sync_reg_f08ts_(const fmpl_f_desc *buf, MPI_Fint *ierror)
{
    (void)buf;
    fmpl_f_set_ierror(ierror, MPI_SUCCESS);
}
FMPL_F_ALIAS(mpi_f_sync_reg_f08ts_, pmpir_f_sync_reg_f08ts_)

/* --------------------------------------------- module mpi_f08_types */

/* TYPE(MPI_Status), INTEGER(MPI_STATUS_SIZE) and MPICH's C status type
 * c_Status are the same five integers. */
void __mpi_f08_types_MOD_mpi_status_f2f08(const MPI_Fint *from, MPI_Fint *to, MPI_Fint *ierror)
{
    memcpy(to, from, MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
    fmpl_f_set_ierror(ierror, MPI_SUCCESS);
}
FMPL_F_ALIAS(__mpi_f08_types_MOD_mpi_status_f082f, __mpi_f08_types_MOD_mpi_status_f2f08)

void __mpi_f08_types_MOD_mpi_status_c_assign_f08(const MPI_Fint *from, MPI_Fint *to)
{
    memcpy(to, from, MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
}
FMPL_F_ALIAS(__mpi_f08_types_MOD_mpi_status_f08_assign_c,
             __mpi_f08_types_MOD_mpi_status_c_assign_f08)

/* ------------------------------------- module mpi_f08_callbacks (I/O) */

/* MPI_CONVERSION_FN_NULL(_C): does nothing (FMPL has no MPI_Register_datarep
 * either); ierror is the seventh argument of both, and of mpif.h's
 * MPI_CONVERSION_FN_NULL (an EXTERNAL there). */
void __mpi_f08_callbacks_MOD_mpi_conversion_fn_null(void *userbuf, void *datatype, void *count,
                                                     void *filebuf, void *position,
                                                     void *extra_state, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position,
        (void)extra_state;
    *ierror = MPI_SUCCESS;
}
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_conversion_fn_null_c,
             __mpi_f08_callbacks_MOD_mpi_conversion_fn_null)
/* (In C, mpi.h's MPI_CONVERSION_FN_NULL is a null pointer: not here.) */
#undef MPI_CONVERSION_FN_NULL
FMPL_F_NAMES_OF(conversion_fn_null, CONVERSION_FN_NULL,
                __mpi_f08_callbacks_MOD_mpi_conversion_fn_null)
