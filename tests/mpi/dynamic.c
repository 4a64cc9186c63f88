/* What a job that was not spawned sees of dynamic processes:
 * MPI_Comm_get_parent is MPI_COMM_NULL; MPI_Comm_disconnect frees an
 * intracommunicator and an intercommunicator after all their traffic (a
 * message sent just before is received intact), and refuses MPI_COMM_NULL
 * and the predefined communicators with MPI_ERR_COMM.  Under fmplrun a
 * spawn of a missing program fails with MPI_ERR_SPAWN and a connect or
 * accept on a port that is not one with MPI_ERR_PORT, all at once; under a
 * launcher that cannot spawn (argv[1] "--unsupported": mpiexec.hydra) all
 * three fail at once with MPI_ERR_UNSUPPORTED_OPERATION. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Comm parent = MPI_COMM_WORLD;
    CHECK_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "parent 0x%x", (unsigned)parent);

    /* An intracommunicator, with a large message in flight just before. */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    enum { N = 1 << 20 };
    static char big[N];
    if (size > 1 && rank < 2) {
        if (rank == 0) {
            memset(big, 0x5a, N);
            CHECK_OK(MPI_Send(big, N, MPI_BYTE, 1, 3, dup));
        } else {
            CHECK_OK(MPI_Recv(big, N, MPI_BYTE, 0, 3, dup, MPI_STATUS_IGNORE));
            for (int i = 0; i < N; i++)
                CHECK(big[i] == 0x5a, "byte %d", i);
        }
    }
    CHECK_OK(MPI_Comm_disconnect(&dup));
    CHECK(dup == MPI_COMM_NULL, "the handle was not nulled");

    /* An intercommunicator between the even and the odd ranks. */
    if (size > 1) {
        MPI_Comm half, inter;
        CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half));
        CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter));
        int v = rank, got = -1;
        if (rank < 2)
            CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, inter,
                                  MPI_STATUS_IGNORE));
        if (rank < 2)
            CHECK(got == 1 - rank, "intercomm exchange got %d", got);
        CHECK_OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "the intercommunicator handle was not nulled");
        CHECK_OK(MPI_Comm_free(&half));
    }

    MPI_Comm c = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_disconnect(&c), MPI_ERR_COMM);
    c = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_disconnect(&c), MPI_ERR_COMM);
    CHECK(c == MPI_COMM_WORLD, "MPI_COMM_WORLD's handle changed");

    int unsupported = argc > 1 && strcmp(argv[1], "--unsupported") == 0;
    MPI_Comm child;
    int codes[2];
    char *args[] = {NULL};
    CHECK_CLASS(MPI_Comm_spawn("/nonexistent/fmpl-program", args, 2, MPI_INFO_NULL, 0,
                               MPI_COMM_WORLD, &child, codes),
                unsupported ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_SPAWN);
    char port[MPI_MAX_PORT_NAME] = "no-such-port";
    CHECK_CLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child),
                unsupported ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_PORT);
    CHECK_CLASS(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child),
                unsupported ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_PORT);
    MPI_Finalize();
    if (rank == 0)
        puts("dynamic ok");
    return 0;
}
