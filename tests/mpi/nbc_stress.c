/* Persistent collectives under stress: 10^4 instances each of a persistent
 * MPI_Bcast (a small and a rendezvous-sized one, from different roots) and
 * a persistent MPI_Allreduce, started together with MPI_Startall, with
 * random short delays (usleep) on random ranks before the start and
 * between start and wait, and a poison pattern written into every buffer
 * (the roots' included) right after each wait.  Every instance's data
 * depends on the instance number and is verified, so a receiver written
 * before it started an instance, or a root buffer read after the root's
 * wait returned (and was poisoned), shows up as wrong data. */
#include "check.h"

#include <stdlib.h>
#include <unistd.h>

#define SMALL 64
#define LARGE (64 * 1024)
#define VEC 256
#define POISON (-5)

static int me, np;

static int val(long inst, int i, int who) { return (int)(inst * 31 + i * 7 + who * 1000003); }

static void maybe_sleep(void)
{
    if (rand() % 4 == 0)
        usleep((useconds_t)(rand() % 40));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    long instances = argc > 1 ? atol(argv[1]) : 10000;
    srand((unsigned)(me * 7919 + 1));
    static int small[SMALL], large[LARGE], in[VEC], out[VEC];
    int small_root = np - 1, large_root = np / 2;
    MPI_Request req[3];
    CHECK_OK(MPI_Bcast_init(small, SMALL, MPI_INT, small_root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req[0]));
    CHECK_OK(MPI_Bcast_init(large, LARGE, MPI_INT, large_root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req[1]));
    CHECK_OK(MPI_Allreduce_init(in, out, VEC, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req[2]));
    for (long n = 0; n < instances; n++) {
        for (int i = 0; i < SMALL; i++)
            small[i] = me == small_root ? val(n, i, 0) : POISON;
        for (int i = 0; i < LARGE; i += 64) /* one int per cache line is enough */
            large[i] = me == large_root ? val(n, i, 1) : POISON;
        for (int i = 0; i < VEC; i++) {
            in[i] = val(n, i, me);
            out[i] = POISON;
        }
        maybe_sleep();
        CHECK_OK(MPI_Startall(3, req));
        maybe_sleep();
        CHECK_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
        for (int i = 0; i < SMALL; i++)
            CHECK(small[i] == val(n, i, 0), "instance %ld: small bcast[%d] = %d", n, i, small[i]);
        for (int i = 0; i < LARGE; i += 64)
            CHECK(large[i] == val(n, i, 1), "instance %ld: large bcast[%d] = %d", n, i, large[i]);
        for (int i = 0; i < VEC; i++) {
            int want = 0;
            for (int q = 0; q < np; q++)
                want += val(n, i, q);
            CHECK(out[i] == want, "instance %ld: allreduce[%d] = %d, want %d", n, i, out[i],
                  want);
        }
        /* poison right after the wait: a late reader or writer is caught */
        for (int i = 0; i < SMALL; i++)
            small[i] = POISON;
        for (int i = 0; i < LARGE; i += 64)
            large[i] = POISON;
        for (int i = 0; i < VEC; i++)
            in[i] = out[i] = POISON;
    }
    for (int k = 0; k < 3; k++)
        CHECK_OK(MPI_Request_free(&req[k]));
    if (me == 0)
        printf("mpi_nbc_stress ok: %ld instances on %d ranks\n", instances, np);
    MPI_Finalize();
    return 0;
}
