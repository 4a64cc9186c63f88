/* A small MPI program that needs no launcher and no MPI_Init: the version
 * queries, the predefined attribute callback and the library's special
 * objects.  Built three ways by tests/abi:
 *   - with FMPL's mpicc (abi.mpicc), run against FMPL's libmpi;
 *   - with MPICH's mpicc (abi.mpich_binary), run against FMPL's
 *     libmpich.so.12: the MPICH ABI at work;
 *   - under mpirun (abi.mpirun).
 * Prints the library version; exits non-zero on the first wrong answer. */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            return 1;                                                              \
        }                                                                          \
    } while (0)

int main(void)
{
    int version = -1, subversion = -1;
    CHECK(MPI_Get_version(&version, &subversion) == MPI_SUCCESS);
    CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION);
    CHECK(version == 4 && subversion == 0);
    version = subversion = -1;
    CHECK(PMPI_Get_version(&version, &subversion) == MPI_SUCCESS);
    CHECK(version == 4 && subversion == 0);

    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    memset(text, 'x', sizeof text);
    CHECK(MPI_Get_library_version(text, &len) == MPI_SUCCESS);
    CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING);
    CHECK(text[len] == '\0' && (int)strlen(text) == len);
    printf("library: %s\n", text);

    /* The "dup" copy callback (MPIR_Dup_fn in the library) copies the value. */
    int marker = 42, flag = 0;
    void *copy = NULL;
    CHECK(MPI_COMM_DUP_FN(MPI_COMM_WORLD, 1, NULL, &marker, &copy, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && copy == &marker);
    flag = 0;
    copy = NULL;
    CHECK(MPI_TYPE_DUP_FN(MPI_INT, 1, NULL, &marker, &copy, &flag) == MPI_SUCCESS);
    CHECK(flag == 1 && copy == &marker);
    CHECK(MPI_COMM_NULL_COPY_FN == NULL && MPI_COMM_NULL_DELETE_FN == NULL);

    /* Library objects: distinct, and not null. */
    CHECK(MPI_UNWEIGHTED != NULL && MPI_WEIGHTS_EMPTY != NULL);
    CHECK(MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY);
    CHECK(MPI_F08_STATUS_IGNORE != NULL);
    printf("MPI_F_STATUS_IGNORE is %s\n", MPI_F_STATUS_IGNORE ? "set" : "null");

    /* Handles are ints with MPICH's values. */
    CHECK(sizeof(MPI_Comm) == sizeof(int) && MPI_COMM_WORLD == 0x44000000);
    CHECK(sizeof(MPI_Status) == 5 * sizeof(int));
    return 0;
}
