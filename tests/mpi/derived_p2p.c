/* Derived datatypes in communication, this version: a contiguous derived
 * type moves (point-to-point and broadcast, data checked); a non-contiguous
 * one is refused with MPI_ERR_UNSUPPORTED_OPERATION under
 * MPI_ERRORS_RETURN, sending and receiving nothing; an uncommitted one is
 * MPI_ERR_TYPE. */
#include <mpi.h>
#include <stdio.h>

static int rank, size;
#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "derived_p2p rank %d line %d: ", rank, __LINE__);      \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype quad, strided, loose;
    MPI_Type_contiguous(4, MPI_INT, &quad);
    MPI_Type_commit(&quad);
    MPI_Type_vector(4, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    MPI_Type_contiguous(2, MPI_INT, &loose); /* never committed */

    int out[8], in[8] = {0};
    for (int i = 0; i < 8; i++)
        out[i] = rank * 10 + i;
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    MPI_Sendrecv(out, 2, quad, to, 1, in, 2, quad, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; i++)
        EXPECT(in[i] == from * 10 + i, "contiguous derived type: in[%d] = %d", i, in[i]);
    int b[4] = {rank, rank, rank, rank};
    MPI_Bcast(b, 1, quad, 0, MPI_COMM_WORLD);
    EXPECT(b[3] == 0, "bcast of a contiguous derived type");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int cls, rc = MPI_Send(out, 1, strided, to, 2, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_UNSUPPORTED_OPERATION, "non-contiguous send gave class %d", cls);
    rc = MPI_Recv(in, 1, strided, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_UNSUPPORTED_OPERATION, "non-contiguous receive gave class %d", cls);
    rc = MPI_Send(out, 1, loose, to, 3, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_TYPE, "uncommitted type gave class %d", cls);
    /* Nothing was sent: the next message on tag 2 is the one sent now. */
    MPI_Sendrecv(out, 1, MPI_INT, to, 2, in, 1, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    EXPECT(in[0] == from * 10, "a refused send left a message behind");
    MPI_Type_free(&quad);
    MPI_Type_free(&strided);
    MPI_Type_free(&loose);
    if (rank == 0)
        printf("derived_p2p ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
