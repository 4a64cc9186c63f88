/* MPI_Comm_free does not wait for the other members: a member frees, then
 * talks to a member that frees later.  Communicators are reclaimed once all
 * members freed them, so a loop creating and freeing far more communicators
 * than can exist at once keeps working; a pending receive on a freed
 * communicator still completes. */
#include <mpi.h>
#include <stdio.h>

#include "check.h"

#define OK(call) CHECK((call) == MPI_SUCCESS, "%s failed", #call)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Staggered frees: rank 0 frees first and only then sends the token
     * that lets the next rank free, and so on along the ranks. */
    MPI_Comm c;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int token = 0;
    if (rank > 0)
        OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    OK(MPI_Comm_free(&c));
    CHECK(c == MPI_COMM_NULL, "the handle was not set to MPI_COMM_NULL");
    token++;
    if (rank + 1 < size)
        OK(MPI_Send(&token, 1, MPI_INT, rank + 1, 1, MPI_COMM_WORLD));
    CHECK(token == rank + 1, "token %d, expected %d", token, rank + 1);

    /* Far more communicators over time than exist at once. */
    for (int i = 0; i < 1000; i++) {
        OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        int v = rank == 0 ? i : -1;
        OK(MPI_Bcast(&v, 1, MPI_INT, 0, c));
        CHECK(v == i, "iteration %d: bcast gave %d", i, v);
        OK(MPI_Comm_free(&c));
    }

    /* A receive posted on a communicator that is then freed completes. */
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    int peer = (rank + 1) % size, from = (rank + size - 1) % size, got = -1;
    MPI_Request rq;
    OK(MPI_Irecv(&got, 1, MPI_INT, from, 9, c, &rq));
    OK(MPI_Send(&rank, 1, MPI_INT, peer, 9, c));
    OK(MPI_Comm_free(&c));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(got == from, "got %d from the freed communicator, expected %d", got, from);

    OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        printf("mpi comm_free ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
