/* BLACS-FMPL in an MPI program: MPI_Init before BLACS starts (the native
 * API joins MPI's runtime) or, with the argument "after", after it (MPI
 * joins BLACS's).  A grid on an MPI sub-communicator (Csys2blacs_handle),
 * its system handle back (Cblacs2sys_handle), BLACS and MPI calls
 * interleaved on the same processes and checked against each other, a grid
 * on the system context of a grid (Cblacs_get 10); then Cblacs_exit(0)
 * and MPI_Finalize, the runtime ending at the second. */
#include "fmpl_blacs.h"
#include "mpi.h"

#include <stdio.h>
#include <string.h>

#define EXPECT(cond, ...)                                                                      \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "FAIL [%d]: ", wrank);                                            \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                      \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    int after = argc > 1 && strcmp(argv[1], "after") == 0;
    int wrank = -1, wsize, bme, bnp;
    if (after)
        Cblacs_pinfo(&bme, &bnp);
    MPI_Init(&argc, &argv);
    if (!after)
        Cblacs_pinfo(&bme, &bnp);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    EXPECT(bme == wrank && bnp == wsize, "blacs_pinfo %d of %d", bme, bnp);

    /* halves, ranked in reverse */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &half);
    int hrank, hsize;
    MPI_Comm_rank(half, &hrank);
    MPI_Comm_size(half, &hsize);
    int sys = Csys2blacs_handle((int)half);
    EXPECT(Cblacs2sys_handle(sys) == (int)half, "Cblacs2sys_handle gave 0x%x",
           (unsigned)Cblacs2sys_handle(sys));
    EXPECT(Csys2blacs_handle((int)half) == sys, "a second handle for the same communicator");
    int ctx = sys, nprow, npcol, myrow, mycol;
    Cblacs_gridinit(&ctx, "R", 1, hsize);
    Cblacs_gridinfo(ctx, &nprow, &npcol, &myrow, &mycol);
    EXPECT(nprow == 1 && npcol == hsize && myrow == 0 && mycol == hrank,
           "grid %d x %d at (%d,%d), MPI rank %d of %d", nprow, npcol, myrow, mycol, hrank,
           hsize);

    /* a ring in the grid, then a sum checked against MPI_Allreduce */
    double x[3] = {wrank, 2.0 * wrank, -1.0}, y[3];
    int next = (mycol + 1) % npcol, prev = (mycol + npcol - 1) % npcol;
    Cdgesd2d(ctx, 3, 1, x, 3, 0, next);
    Cdgerv2d(ctx, 3, 1, y, 3, 0, prev);
    int prev_world;
    MPI_Group hg, wg;
    MPI_Comm_group(half, &hg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_translate_ranks(hg, 1, &prev, wg, &prev_world);
    EXPECT(y[0] == prev_world && y[1] == 2.0 * prev_world && y[2] == -1.0,
           "ring from %d: %g %g %g", prev_world, y[0], y[1], y[2]);
    double mpi_sum[3];
    MPI_Allreduce(x, mpi_sum, 3, MPI_DOUBLE, MPI_SUM, half);
    Cdgsum2d(ctx, "A", " ", 3, 1, x, 3, -1, -1);
    EXPECT(memcmp(x, mpi_sum, sizeof x) == 0, "BLACS sum %g %g %g, MPI %g %g %g", x[0], x[1],
           x[2], mpi_sum[0], mpi_sum[1], mpi_sum[2]);

    /* a grid on the system context of the grid: the same processes, 2 rows */
    int gsys, ctx2;
    Cblacs_get(ctx, 10, &gsys);
    if (hsize % 2 == 0) {
        ctx2 = gsys;
        Cblacs_gridinit(&ctx2, "C", 2, hsize / 2);
        Cblacs_gridinfo(ctx2, &nprow, &npcol, &myrow, &mycol);
        EXPECT(nprow == 2 && myrow == hrank % 2 && mycol == hrank / 2,
               "column-major grid: (%d,%d) for rank %d", myrow, mycol, hrank);
        int v = hrank + 1;
        Cigsum2d(ctx2, "C", "I", 1, 1, &v, 1, -1, -1);
        EXPECT(v == 2 * (hrank / 2) * 2 + 3, "column sum %d", v);
        Cblacs_gridexit(ctx2);
    }
    Cblacs_gridexit(ctx);
    Cfree_blacs_system_handle(sys);
    Cblacs_exit(0); /* MPI stays: the runtime ends with MPI_Finalize */
    MPI_Comm_free(&half);
    MPI_Group_free(&hg);
    MPI_Group_free(&wg);
    MPI_Barrier(MPI_COMM_WORLD);
    if (wrank == 0)
        printf("blacs_mpi (%s): ok\n", after ? "BLACS first" : "MPI first");
    MPI_Finalize();
    return 0;
}
