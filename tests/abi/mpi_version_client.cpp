// The C++ side of the wrapper tests (abi.mpicxx): mpi.h included from C++,
// compiled by FMPL's mpicxx, linked against libmpi and run.
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace {

// Overloads on MPI types: their C++ linkage must be well-formed.
std::string describe(MPI_Comm) { return "communicator"; }
std::string describe(MPI_Status *) { return "status"; }

}  // namespace

int main()
{
    int version = -1, subversion = -1;
    if (MPI_Get_version(&version, &subversion) != MPI_SUCCESS || version != MPI_VERSION ||
        subversion != MPI_SUBVERSION)
        return 1;
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    if (MPI_Get_library_version(text, &len) != MPI_SUCCESS || len != (int)std::strlen(text))
        return 1;
    MPI_Status status;
    status.MPI_SOURCE = MPI_ANY_SOURCE;
    if (describe(MPI_COMM_WORLD) != "communicator" || describe(&status) != "status")
        return 1;
    MPI_Comm_copy_attr_function *copy = MPI_COMM_DUP_FN;
    if (copy == nullptr || MPI_IN_PLACE == nullptr)
        return 1;
    std::printf("C++: MPI %d.%d, library: %s\n", version, subversion, text);
    return 0;
}
