/* The profiling interface: a tool defines MPI_Get_version itself and reaches
 * the library through PMPI_Get_version (the library's MPI_ names are weak
 * aliases of the PMPI_ ones, see src/api/mpi/mpi_version.c). */
#include <mpi.h>

#include <stdio.h>

static int intercepted;

int MPI_Get_version(int *version, int *subversion)
{
    intercepted++;
    return PMPI_Get_version(version, subversion);
}

int main(void)
{
    int version = 0, subversion = -1;
    if (MPI_Get_version(&version, &subversion) != MPI_SUCCESS || version != 4 || subversion != 0) {
        fprintf(stderr, "wrong version through the tool: %d.%d\n", version, subversion);
        return 1;
    }
    if (intercepted != 1) {
        fprintf(stderr, "the tool's MPI_Get_version ran %d times, expected 1\n", intercepted);
        return 1;
    }
    /* The library's own entry point is still there under its PMPI_ name. */
    if (PMPI_Get_version(&version, &subversion) != MPI_SUCCESS || intercepted != 1) {
        fprintf(stderr, "PMPI_Get_version failed or was intercepted\n");
        return 1;
    }
    printf("PMPI: tool call intercepted, library reached through PMPI_Get_version\n");
    return 0;
}
