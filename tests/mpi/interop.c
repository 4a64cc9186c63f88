/* Handle and status conversions, MPI_Pcontrol, and what an unimplemented
 * function does: MPI_ERR_UNSUPPORTED_OPERATION through the error handler,
 * arguments untouched, and the job goes on. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

#define EXPECT(cond) CHECK(cond, "%s", "unexpected result")

/* Call through the function, not the header's macro. */
static MPI_Fint (*comm_c2f)(MPI_Comm) = MPI_Comm_c2f;
static MPI_Comm (*comm_f2c)(MPI_Fint) = MPI_Comm_f2c;
static MPI_Fint (*type_c2f)(MPI_Datatype) = MPI_Type_c2f;
static MPI_Datatype (*type_f2c)(MPI_Fint) = MPI_Type_f2c;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Comm dup;
    EXPECT(MPI_Comm_dup(MPI_COMM_WORLD, &dup) == MPI_SUCCESS);
    EXPECT(comm_f2c(comm_c2f(dup)) == dup);
    EXPECT(comm_c2f(MPI_COMM_WORLD) == (MPI_Fint)MPI_COMM_WORLD);
    EXPECT(type_f2c(type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);

    /* A status survives C -> Fortran -> F08 -> C with every field. */
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int out = 1000 + rank, in = -1;
    MPI_Status st;
    st.MPI_ERROR = MPI_ERR_OTHER; /* single-completion calls leave it alone */
    EXPECT(MPI_Sendrecv(&out, 1, MPI_INT, peer, 7, &in, 1, MPI_INT, from, 7, MPI_COMM_WORLD,
                       &st) == MPI_SUCCESS);
    EXPECT(in == 1000 + from);
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    MPI_F08_status f08;
    MPI_Status back;
    memset(&back, 0xff, sizeof back);
    EXPECT(MPI_Status_c2f(&st, fst) == MPI_SUCCESS);
    EXPECT(fst[MPI_F_SOURCE] == from && fst[MPI_F_TAG] == 7 && fst[MPI_F_ERROR] == MPI_ERR_OTHER);
    EXPECT(MPI_Status_f2f08(fst, &f08) == MPI_SUCCESS);
    EXPECT(f08.MPI_SOURCE == from && f08.MPI_TAG == 7);
    EXPECT(MPI_Status_f082c(&f08, &back) == MPI_SUCCESS);
    int count = -1;
    EXPECT(MPI_Get_count(&back, MPI_INT, &count) == MPI_SUCCESS && count == 1);
    EXPECT(back.MPI_SOURCE == from && back.MPI_TAG == 7);
    int err_class = -1;
    int rc = MPI_Status_c2f(MPI_STATUS_IGNORE, fst);
    MPI_Error_class(rc, &err_class);
    EXPECT(err_class == MPI_ERR_ARG);

    EXPECT(MPI_Pcontrol(1) == MPI_SUCCESS);
    EXPECT(MPI_Pcontrol(0, "ignored") == MPI_SUCCESS);

    /* MPI-IO is not implemented: a clear error, nothing written, and
     * communication still works afterwards. */
    MPI_File fh = (MPI_File)12345;
    rc = MPI_File_open(MPI_COMM_SELF, "fmpl-interop-file", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_Error_class(rc, &err_class);
    EXPECT(err_class == MPI_ERR_UNSUPPORTED_OPERATION);
    EXPECT(fh == (MPI_File)12345);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    EXPECT(MPI_Error_string(rc, msg, &len) == MPI_SUCCESS && len > 0);

    int sum = 0;
    EXPECT(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, dup) == MPI_SUCCESS);
    EXPECT(sum == size * (size - 1) / 2);
    MPI_Comm_free(&dup);
    if (rank == 0)
        printf("mpi interop ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
