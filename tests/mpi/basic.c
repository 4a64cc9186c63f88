/* The first slice of the MPI binding, as an application sees it: ring
 * exchange with MPI_Sendrecv, a 1 MiB nonblocking exchange received with
 * MPI_ANY_SOURCE/MPI_ANY_TAG (status and MPI_Get_count checked), MPI_Bcast,
 * MPI_Comm_split ordered by key, MPI_Barrier, MPI_Comm_free, and
 * MPI_ERRORS_RETURN giving MPI_ERR_RANK for an invalid destination.
 * Built twice: with FMPL's mpi.h, and with MPICH's mpicc (ABI test). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, size, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* ring with Sendrecv */
    int token = rank * 100, got = -1;
    MPI_Status st;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank - 1 + size) % size, 7, MPI_COMM_WORLD, &st);
    if (got != ((rank - 1 + size) % size) * 100 || st.MPI_SOURCE != (rank - 1 + size) % size) { printf("ring bad %d\n", got); MPI_Abort(MPI_COMM_WORLD, 2); }
    /* nonblocking big + any source */
    int n = 1 << 20; double *a = malloc(n * 8), *b = malloc(n * 8);
    for (int i = 0; i < n; i++) a[i] = rank + i;
    MPI_Request rq[2];
    MPI_Irecv(b, n, MPI_DOUBLE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &rq[0]);
    MPI_Isend(a, n, MPI_DOUBLE, (rank + 1) % size, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Status sts[2];
    MPI_Waitall(2, rq, sts);
    int cnt; MPI_Get_count(&sts[0], MPI_DOUBLE, &cnt);
    int from = (rank - 1 + size) % size;
    if (cnt != n || sts[0].MPI_SOURCE != from || sts[0].MPI_TAG != 3 || b[n - 1] != from + n - 1) { printf("big bad\n"); MPI_Abort(MPI_COMM_WORLD, 3); }
    /* bcast + barrier + split */
    int v = rank == 0 ? 42 : 0;
    MPI_Bcast(&v, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Comm half; MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    int hr, hs; MPI_Comm_rank(half, &hr); MPI_Comm_size(half, &hs);
    MPI_Barrier(half);
    MPI_Comm_free(&half);
    /* error handler */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(&v, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD);
    int cls; MPI_Error_class(rc, &cls);
    char name[MPI_MAX_PROCESSOR_NAME]; int len; MPI_Get_processor_name(name, &len);
    if (v != 42 || cls != MPI_ERR_RANK || hs != (size + 1 - rank % 2) / 2 ) { printf("bad v=%d cls=%d hs=%d\n", v, cls, hs); MPI_Abort(MPI_COMM_WORLD, 4); }
    if (rank == 0) printf("mpi hello ok on %d ranks (provided %d, half rank %d of %d)\n", size, provided, hr, hs);
    MPI_Finalize();
    return 0;
}
