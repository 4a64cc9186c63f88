/* MPI_Get_version and MPI_Get_library_version: the first MPI functions of
 * src/api/mpi, and the pattern the others follow.
 *
 * Profiling interface: each function is defined once, under its PMPI_ name,
 * and the MPI_ name is made a weak alias of it (#pragma weak MPI_X =
 * PMPI_X).  A tool that defines MPI_X itself wins at link time over the weak
 * alias and reaches the library through PMPI_X.  Code inside the library
 * calls PMPI_X (or internal functions), never MPI_X, so that a tool sees
 * only the user's own calls.
 *
 * Both functions may be called at any time, before MPI_Init and after
 * MPI_Finalize, from any thread. */
#include <mpi.h>
#include "fmpl.h"

#include <stdio.h>
#include <string.h>

#pragma weak MPI_Get_version = PMPI_Get_version
int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_library_version = PMPI_Get_library_version
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPI_ERR_ARG;
    /* At most MPI_MAX_LIBRARY_VERSION_STRING bytes including the NUL;
     * *resultlen does not count the NUL. */
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "FMPL %s (MPI %d.%d, MPICH ABI: libmpi.so.12)", FMPL_VERSION_STRING,
                     MPI_VERSION, MPI_SUBVERSION);
    if (n < 0)
        return MPI_ERR_INTERN;
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}
