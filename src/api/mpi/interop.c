/* Language interoperability and profiling control.
 *
 * Handle conversions: under the MPICH ABI a C handle and its Fortran
 * INTEGER are the same number, so each conversion returns its argument.
 * mpi.h also defines them as macros (programs compiled against it never
 * call these); the definitions name the functions in parentheses to step
 * around the macros.  They exist for programs that take their address and
 * for binaries built against a header without the macros.
 *
 * Status conversions: a Fortran status array holds MPI_F_STATUS_SIZE
 * integers laid out as the C status (MPI_F_SOURCE, MPI_F_TAG and
 * MPI_F_ERROR index the public fields), and MPI_F08_status has the C
 * status's fields in the same order: each conversion copies the fields. */
#include "api/mpi/mpi_impl.h"
#include "base/error.h"
#include "fmpl.h"

#include <string.h>

#define FMPL_HANDLE_CONVERSIONS(ctype, name)                                                      \
    MPI_Fint(PMPI_##name##_c2f)(ctype h) { return (MPI_Fint)h; }                                   \
    ctype(PMPI_##name##_f2c)(MPI_Fint h) { return (ctype)h; }                                      \
    FMPL_MPI_WEAK(name##_c2f)                                                                      \
    FMPL_MPI_WEAK(name##_f2c)

FMPL_HANDLE_CONVERSIONS(MPI_Comm, Comm)
FMPL_HANDLE_CONVERSIONS(MPI_Datatype, Type)
FMPL_HANDLE_CONVERSIONS(MPI_Group, Group)
FMPL_HANDLE_CONVERSIONS(MPI_Info, Info)
FMPL_HANDLE_CONVERSIONS(MPI_Request, Request)
FMPL_HANDLE_CONVERSIONS(MPI_Op, Op)
FMPL_HANDLE_CONVERSIONS(MPI_Errhandler, Errhandler)
FMPL_HANDLE_CONVERSIONS(MPI_Win, Win)
FMPL_HANDLE_CONVERSIONS(MPI_Message, Message)
FMPL_HANDLE_CONVERSIONS(MPI_Session, Session)

_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "a Fortran status holds the C status's fields");
_Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status),
               "MPI_F08_status holds the C status's fields");

/* The conversions are defined on statuses, not on the ignore sentinels. */
static int check_status_args(const char *func, const void *from, const void *to)
{
    if (!from || !to || from == (const void *)MPI_STATUS_IGNORE ||
        from == (const void *)MPI_F_STATUS_IGNORE || from == (const void *)MPI_F08_STATUS_IGNORE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "a status argument is NULL or an ignore sentinel");
    return MPI_SUCCESS;
}

#define FMPL_STATUS_CONVERSION(name, from_type, to_type)                                          \
    int PMPI_##name(from_type *from, to_type *to)                                                  \
    { FMPL_CORE_GUARD();                                                                                              \
        int rc = check_status_args("MPI_" #name, from, to);                                        \
        if (rc == MPI_SUCCESS)                                                                     \
            memcpy(to, from, sizeof(MPI_Status));                                                  \
        return rc;                                                                                 \
    }                                                                                              \
    FMPL_MPI_WEAK(name)

FMPL_STATUS_CONVERSION(Status_c2f, const MPI_Status, MPI_Fint)
FMPL_STATUS_CONVERSION(Status_f2c, const MPI_Fint, MPI_Status)
FMPL_STATUS_CONVERSION(Status_c2f08, const MPI_Status, MPI_F08_status)
FMPL_STATUS_CONVERSION(Status_f082c, const MPI_F08_status, MPI_Status)
FMPL_STATUS_CONVERSION(Status_f2f08, const MPI_Fint, MPI_F08_status)
FMPL_STATUS_CONVERSION(Status_f082f, const MPI_F08_status, MPI_Fint)

/* MPI_Pcontrol only speaks to a profiling library interposed on MPI_
 * names; the library itself has nothing to switch (MPI 15.2.4). */
int PMPI_Pcontrol(const int level, ...)
{
    FMPL_CORE_GUARD();
    (void)level;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Pcontrol)

/* The native communicator of an MPI one (fmpl.h): both name the same team,
 * so a library on the native API (BLACS-FMPL) works on the communicators
 * of an MPI program.  MPI_COMM_WORLD is FMPL_COMM_WORLD whichever API
 * started the runtime. */
int fmpl_comm_from_mpi(int mpi_comm, fmpl_comm *comm)
{
    FMPL_CORE_GUARD();
    if (!comm)
        return FMPL_ERROR(FMPL_ERR_ARG, "comm is NULL");
    if ((MPI_Comm)mpi_comm == MPI_COMM_WORLD) {
        *comm = FMPL_COMM_WORLD;
        return FMPL_SUCCESS;
    }
    if (fmpl_mpi_state != FMPL_MPI_READY)
        return FMPL_ERROR(FMPL_ERR_COMM, "MPI communicator 0x%x: MPI is not initialized",
                          (unsigned)mpi_comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get((MPI_Comm)mpi_comm);
    if (!c || c->inter)
        return FMPL_ERROR(FMPL_ERR_COMM, "0x%x is not an MPI intracommunicator",
                          (unsigned)mpi_comm);
    *comm = c->team->id;
    return FMPL_SUCCESS;
}
