/* Spawns at the same time and spawns from spawned worlds (issue 16):
 * every rank of the first world spawns one child over MPI_COMM_SELF at
 * once (the launcher hands out universe ranks to all of them: under
 * mpirun through one token, bootstrap/pmix_dynamic.c), and every child
 * spawns a grandchild the same way.  A number travels down each chain and
 * back, incremented at every hop, and is checked at every level. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

enum { DEPTH = 2 }; /* children and grandchildren */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, child;
    CHECK_OK(MPI_Comm_get_parent(&parent));
    int depth = argc > 1 ? atoi(argv[1]) : 0, rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK((depth == 0) == (parent == MPI_COMM_NULL), "depth %d with parent 0x%x", depth,
          (unsigned)parent);
    int value = 1000 * rank; /* the first world's rank starts its chain */
    if (parent != MPI_COMM_NULL) {
        int rsize;
        CHECK_OK(MPI_Comm_remote_size(parent, &rsize));
        CHECK(size == 1 && rsize == 1, "world of %d, parent group of %d", size, rsize);
        CHECK_OK(MPI_Recv(&value, 1, MPI_INT, 0, 1, parent, MPI_STATUS_IGNORE));
    }
    int start = value;
    if (depth < DEPTH) {
        char arg[16];
        snprintf(arg, sizeof arg, "%d", depth + 1);
        char *args[] = {arg, NULL};
        CHECK_OK(MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child,
                                MPI_ERRCODES_IGNORE));
        int down = value + 1;
        CHECK_OK(MPI_Send(&down, 1, MPI_INT, 0, 1, child));
        CHECK_OK(MPI_Recv(&value, 1, MPI_INT, 0, 2, child, MPI_STATUS_IGNORE));
        /* one hop down and one back per level below */
        CHECK(value == start + 2 * (DEPTH - depth), "depth %d: %d came back for %d", depth,
              value, start);
        CHECK_OK(MPI_Comm_disconnect(&child));
    }
    if (parent != MPI_COMM_NULL) {
        int up = value + 1;
        CHECK_OK(MPI_Send(&up, 1, MPI_INT, 0, 2, parent));
        CHECK_OK(MPI_Comm_disconnect(&parent));
    }
    MPI_Finalize();
    if (depth == 0 && rank == 0)
        printf("spawn_self ok on %d ranks\n", size);
    return 0;
}
