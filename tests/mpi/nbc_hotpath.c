/* MPI_Start of a persistent collective allocates nothing, and neither do
 * small nonblocking collectives once warm (their schedules are reused):
 * after *_init and
 * two warm-up instances, 200 Start/Wait rounds of persistent Barrier, Bcast
 * (eager and rendezvous sizes), Allreduce, Allgather, Alltoall and a
 * vector-typed (staged) Bcast run with malloc, calloc and realloc counted
 * (interposed; outside AddressSanitizer, which owns malloc: skipped there)
 * on every rank, and the count must not move.  The data is checked too. */
#include "check.h"

#include <stdlib.h>

#include "alloc_count.h"

#define SMALL 16
#define LARGE (256 * 1024)
#define NREQ 7

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
#if !ALLOC_COUNTING
    MPI_Finalize();
    return 77;
#else
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    static int small[SMALL], large[LARGE], in[SMALL], out[SMALL], vec[2 * SMALL];
    int *ag = calloc((size_t)np * SMALL, sizeof(int));
    int *a2s = calloc((size_t)np * SMALL, sizeof(int)), *a2r = calloc((size_t)np * SMALL, sizeof(int));
    MPI_Datatype vt;
    MPI_Type_vector(SMALL, 1, 2, MPI_INT, &vt);
    MPI_Type_commit(&vt);
    MPI_Request req[NREQ];
    CHECK_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]));
    CHECK_OK(MPI_Bcast_init(small, SMALL, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]));
    CHECK_OK(MPI_Bcast_init(large, LARGE, MPI_INT, np - 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req[2]));
    CHECK_OK(MPI_Allreduce_init(in, out, SMALL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req[3]));
    CHECK_OK(MPI_Allgather_init(in, SMALL, MPI_INT, ag, SMALL, MPI_INT, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req[4]));
    CHECK_OK(MPI_Alltoall_init(a2s, SMALL, MPI_INT, a2r, SMALL, MPI_INT, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req[5]));
    CHECK_OK(MPI_Bcast_init(vec, 1, vt, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req[6]));
    long before = 0;
    for (int n = 0; n < 202; n++) {
        if (n == 2)
            before = alloc_count();
        for (int i = 0; i < SMALL; i++) {
            small[i] = me == 0 ? n + i : -1;
            vec[2 * i] = me == 0 ? n * 3 + i : -1;
            in[i] = me + n + i;
            for (int q = 0; q < np; q++)
                a2s[q * SMALL + i] = me * 100 + q + n;
        }
        large[LARGE - 1] = me == np - 1 ? n : -1;
        for (int k = 0; k < NREQ; k++)
            CHECK_OK(MPI_Start(&req[k]));
        for (int k = NREQ - 1; k >= 0; k--)
            CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
        for (int i = 0; i < SMALL; i++) {
            CHECK(small[i] == n + i, "bcast");
            CHECK(vec[2 * i] == n * 3 + i, "vector bcast");
            CHECK(out[i] == np * (n + i) + np * (np - 1) / 2, "allreduce");
            for (int q = 0; q < np; q++) {
                CHECK(ag[q * SMALL + i] == q + n + i, "allgather");
                CHECK(a2r[q * SMALL + i] == q * 100 + me + n, "alltoall");
            }
        }
        CHECK(large[LARGE - 1] == n, "large bcast");
    }
    long during = alloc_count() - before;
    CHECK(during == 0, "%ld allocations in 200 rounds of Start/Wait", during);
    for (int k = 0; k < NREQ; k++)
        CHECK_OK(MPI_Request_free(&req[k]));

    /* Nonblocking small collectives reuse their schedules: after a warm-up
     * no allocation either. */
    for (int n = 0; n < 202; n++) {
        if (n == 2)
            before = alloc_count();
        for (int i = 0; i < SMALL; i++) {
            small[i] = me == 0 ? n + i : -1;
            in[i] = me + n + i;
        }
        MPI_Request r3[3];
        CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r3[0]));
        CHECK_OK(MPI_Ibcast(small, SMALL, MPI_INT, 0, MPI_COMM_WORLD, &r3[1]));
        CHECK_OK(MPI_Iallreduce(in, out, SMALL, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r3[2]));
        CHECK_OK(MPI_Waitall(3, r3, MPI_STATUSES_IGNORE));
        for (int i = 0; i < SMALL; i++) {
            CHECK(small[i] == n + i, "ibcast");
            CHECK(out[i] == np * (n + i) + np * (np - 1) / 2, "iallreduce");
        }
    }
    during = alloc_count() - before;
    CHECK(during == 0, "%ld allocations in 200 rounds of Ibarrier, Ibcast, Iallreduce", during);
    MPI_Type_free(&vt);
    free(ag);
    free(a2s);
    free(a2r);
    if (me == 0)
        printf("mpi_nbc_hotpath ok on %d ranks: no allocation in Start/Wait nor in "
               "Ibarrier/Ibcast/Iallreduce\n", np);
    MPI_Finalize();
    return 0;
#endif
}
