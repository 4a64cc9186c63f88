/* Overlap: an MPI_Ibcast and an MPI_Iallreduce of 1 MiB, and the same as
 * persistent requests, progressed only by MPI_Test calls made between
 * slices of computation (every rank computes; no MPI_Wait).  The requests
 * must complete that way and the data must be right; the computation's
 * result is checked too, so it cannot be optimised away. */
#include "check.h"

#include <stdlib.h>

#define INTS (256 * 1024) /* 1 MiB */

static double compute_slice(double x)
{
    for (int i = 0; i < 20000; i++)
        x = x * 1.0000001 + 1e-9;
    return x;
}

/* Compute until the request completes, testing between slices; returns the
 * number of slices (at least one). */
static long overlap(MPI_Request *r, double *acc)
{
    long slices = 0;
    int flag = 0;
    while (!flag) {
        *acc = compute_slice(*acc);
        slices++;
        CHECK_OK(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
    }
    return slices;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int *buf = malloc(INTS * sizeof(int)), *in = malloc(INTS * sizeof(int)),
        *out = malloc(INTS * sizeof(int));
    CHECK(buf && in && out, "no memory");
    double acc = 1.0;
    MPI_Request rb, ra;
    for (int persistent = 0; persistent < 2; persistent++) {
        if (persistent) {
            CHECK_OK(MPI_Bcast_init(buf, INTS, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &rb));
            CHECK_OK(MPI_Allreduce_init(in, out, INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                        MPI_INFO_NULL, &ra));
        }
        for (int round = 0; round < 2; round++) {
            int tag = persistent * 10 + round;
            for (int i = 0; i < INTS; i++) {
                buf[i] = me == 0 ? i ^ tag : -1;
                in[i] = i + me + tag;
                out[i] = -1;
            }
            if (persistent)
                CHECK_OK(MPI_Start(&rb));
            else
                CHECK_OK(MPI_Ibcast(buf, INTS, MPI_INT, 0, MPI_COMM_WORLD, &rb));
            CHECK(overlap(&rb, &acc) >= 1, "no computation");
            if (persistent)
                CHECK_OK(MPI_Start(&ra));
            else
                CHECK_OK(MPI_Iallreduce(in, out, INTS, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &ra));
            CHECK(overlap(&ra, &acc) >= 1, "no computation");
            for (int i = 0; i < INTS; i++) {
                CHECK(buf[i] == (i ^ tag), "bcast[%d] = %d", i, buf[i]);
                CHECK(out[i] == np * (i + tag) + np * (np - 1) / 2, "allreduce[%d] = %d", i,
                      out[i]);
            }
        }
        if (persistent) {
            CHECK_OK(MPI_Request_free(&rb));
            CHECK_OK(MPI_Request_free(&ra));
        }
    }
    CHECK(acc > 1.0, "the computation did not run");
    free(buf);
    free(in);
    free(out);
    if (me == 0)
        printf("mpi_nbc_overlap ok on %d ranks\n", np);
    MPI_Finalize();
    return 0;
}
