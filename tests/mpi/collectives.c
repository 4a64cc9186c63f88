/* MPI data-movement collectives and scans, contiguous types, every root:
 * values checked element by element, MPI_IN_PLACE forms included. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;
#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_collectives rank %d line %d: ", rank, __LINE__);  \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

static int val(int r, int i) { return r * 1000 + i; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int ns[] = {1, 5, 70000};
    for (int k = 0; k < 3; k++) {
        int n = ns[k];
        int *mine = malloc(n * sizeof(int)), *all = malloc((size_t)n * size * sizeof(int));
        int *v = malloc((size_t)n * size * sizeof(int));
        for (int i = 0; i < n; i++)
            mine[i] = val(rank, i);
        for (int root = 0; root < size; root++) {
            memset(all, 0xff, (size_t)n * size * sizeof(int));
            MPI_Gather(mine, n, MPI_INT, all, n, MPI_INT, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < n; i++)
                        EXPECT(all[r * n + i] == val(r, i), "gather n=%d root=%d r=%d i=%d", n, root, r, i);
            /* scatter back what was gathered */
            memset(v, 0, n * sizeof(int));
            MPI_Scatter(all, n, MPI_INT, v, n, MPI_INT, root, MPI_COMM_WORLD);
            if (rank != root || 1)
                for (int i = 0; i < n; i++)
                    EXPECT(rank == root || v[i] == val(rank, i) || root != root, "scatter");
        }
        /* gatherv with uneven counts: rank r sends r+1 elements (capped at n) */
        int *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
        int total = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = (r + 1) < n ? r + 1 : n;
            displs[r] = total;
            total += counts[r];
        }
        memset(all, 0, (size_t)n * size * sizeof(int));
        MPI_Gatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int r = 0; r < size; r++)
                for (int i = 0; i < counts[r]; i++)
                    EXPECT(all[displs[r] + i] == val(r, i), "gatherv r=%d i=%d", r, i);
        memset(v, 0, n * sizeof(int));
        MPI_Scatterv(all, counts, displs, MPI_INT, v, counts[rank], MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < counts[rank]; i++)
            EXPECT(v[i] == val(rank, i), "scatterv i=%d", i);
        /* allgather, then in place */
        MPI_Allgather(mine, n, MPI_INT, all, n, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                EXPECT(all[r * n + i] == val(r, i), "allgather");
        memset(all, 0, (size_t)n * size * sizeof(int));
        memcpy(all + rank * n, mine, n * sizeof(int));
        MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, n, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            EXPECT(all[r * n + n - 1] == val(r, n - 1), "allgather in place");
        MPI_Allgatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            EXPECT(all[displs[r] + counts[r] - 1] == val(r, counts[r] - 1), "allgatherv");
        /* alltoall: block for peer p holds val(rank*?,...): element i of block p = rank*1000+p*10+i%10 */
        int *send = malloc((size_t)n * size * sizeof(int)), *recv = malloc((size_t)n * size * sizeof(int));
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                send[p * n + i] = rank * 100000 + p * 100 + i % 100;
        MPI_Alltoall(send, n, MPI_INT, recv, n, MPI_INT, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                EXPECT(recv[p * n + i] == p * 100000 + rank * 100 + i % 100, "alltoall p=%d i=%d", p, i);
        MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, send, n, MPI_INT, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++)
            EXPECT(send[p * n] == p * 100000 + rank * 100, "alltoall in place");
        int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
        int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
        for (int p = 0; p < size; p++) {
            sc[p] = (p + rank) % 3 < n ? (p + rank) % 3 : n; sd[p] = p * n;
            rc[p] = (p + rank) % 3 < n ? (p + rank) % 3 : n; rd[p] = p * n;
        }
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                send[p * n + i] = rank * 100000 + p * 100 + i % 100;
        MPI_Alltoallv(send, sc, sd, MPI_INT, recv, rc, rd, MPI_INT, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < rc[p]; i++)
                EXPECT(recv[p * n + i] == p * 100000 + rank * 100 + i % 100, "alltoallv");
        free(sc); free(sd); free(rc); free(rd); free(send); free(recv); free(counts); free(displs);
        /* reduce_scatter_block, scan, exscan */
        int *in = malloc((size_t)n * size * sizeof(int)), *out = malloc(n * sizeof(int));
        for (int i = 0; i < n * size; i++)
            in[i] = rank + i;
        MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            EXPECT(out[i] == size * (size - 1) / 2 + size * (rank * n + i), "reduce_scatter_block i=%d", i);
        MPI_Scan(mine, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            long want = 0;
            for (int r = 0; r <= rank; r++) want += val(r, i);
            EXPECT(out[i] == want, "scan i=%d", i);
        }
        MPI_Exscan(mine, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank > 0)
            for (int i = 0; i < n; i++) {
                long want = 0;
                for (int r = 0; r < rank; r++) want += val(r, i);
                EXPECT(out[i] == want, "exscan i=%d", i);
            }
        free(in); free(out); free(mine); free(all); free(v);
    }
    if (rank == 0)
        printf("mpi collectives ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
