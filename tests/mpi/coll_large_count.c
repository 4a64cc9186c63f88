/* The large-count collectives (MPI-4.0 "_c" bindings: MPI_Count counts,
 * MPI_Aint displacements), MPI_Op_create_c and MPI_Reduce_local_c: every
 * one moves the same data as its int twin, checked element by element;
 * negative counts are MPI_ERR_COUNT under MPI_ERRORS_RETURN. */
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int rank, size;

static int val(int r, int i) { return r * 1000 + i; }

/* A user operation of the large-count kind: element-wise max. */
static void max_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *type)
{
    (void)type;
    for (MPI_Count i = 0; i < *len; i++)
        if (((int *)in)[i] > ((int *)inout)[i])
            ((int *)inout)[i] = ((int *)in)[i];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { N = 3 };
    int mine[N], all[N * 16], back[N];
    MPI_Count counts[16];
    MPI_Aint displs[16];
    for (int i = 0; i < N; i++)
        mine[i] = val(rank, i);
    for (int r = 0; r < size; r++) {
        counts[r] = N;
        displs[r] = (MPI_Aint)r * N;
    }

    int root = size - 1;
    memset(all, -1, sizeof all);
    MPI_Gather_c(mine, N, MPI_INT, all, N, MPI_INT, root, MPI_COMM_WORLD);
    for (int r = 0; rank == root && r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == val(r, i), "Gather_c r=%d i=%d: %d", r, i, all[r * N + i]);
    memset(back, -1, sizeof back);
    MPI_Scatter_c(all, N, MPI_INT, back, N, MPI_INT, root, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(back[i] == val(rank, i), "Scatter_c i=%d: %d", i, back[i]);
    memset(all, -1, sizeof all);
    MPI_Gatherv_c(mine, N, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == val(r, i), "Gatherv_c r=%d i=%d", r, i);
    memset(back, -1, sizeof back);
    MPI_Scatterv_c(all, counts, displs, MPI_INT, back, N, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(back[i] == val(rank, i), "Scatterv_c i=%d", i);
    memset(all, -1, sizeof all);
    MPI_Allgather_c(mine, N, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == val(r, i), "Allgather_c r=%d i=%d", r, i);
    memset(all, -1, sizeof all);
    MPI_Allgatherv_c(mine, N, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(all[r * N + i] == val(r, i), "Allgatherv_c r=%d i=%d", r, i);

    /* alltoall: element i of block p is val(rank, p * N + i) */
    int out[N * 16], in[N * 16];
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            out[p * N + i] = val(rank, p * N + i);
    memset(in, -1, sizeof in);
    MPI_Alltoall_c(out, N, MPI_INT, in, N, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            CHECK(in[p * N + i] == val(p, rank * N + i), "Alltoall_c p=%d i=%d", p, i);
    memset(in, -1, sizeof in);
    MPI_Alltoallv_c(out, counts, displs, MPI_INT, in, counts, displs, MPI_INT, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            CHECK(in[p * N + i] == val(p, rank * N + i), "Alltoallv_c p=%d i=%d", p, i);
    MPI_Aint bdispls[16];
    MPI_Datatype types[16];
    for (int p = 0; p < size; p++) {
        bdispls[p] = displs[p] * (MPI_Aint)sizeof(int);
        types[p] = MPI_INT;
    }
    memset(in, -1, sizeof in);
    MPI_Alltoallw_c(out, counts, bdispls, types, in, counts, bdispls, types, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            CHECK(in[p * N + i] == val(p, rank * N + i), "Alltoallw_c p=%d i=%d", p, i);

    /* reductions: sums of val(r, i) over r */
    int want[N * 16];
    for (int i = 0; i < N * 16; i++) {
        want[i] = 0;
        for (int r = 0; r < size; r++)
            want[i] += val(r, i);
    }
    int b[N] = {val(0, 0), val(0, 1), val(0, 2)};
    MPI_Bcast_c(rank == 0 ? b : back, N, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; rank != 0 && i < N; i++)
        CHECK(back[i] == b[i], "Bcast_c i=%d", i);
    int red[N];
    memset(red, -1, sizeof red);
    MPI_Reduce_c(mine, red, N, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    for (int i = 0; rank == 0 && i < N; i++)
        CHECK(red[i] == want[i], "Reduce_c i=%d: %d", i, red[i]);
    memset(red, -1, sizeof red);
    MPI_Allreduce_c(mine, red, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(red[i] == want[i], "Allreduce_c i=%d", i);
    for (int p = 0; p < size; p++)
        for (int i = 0; i < N; i++)
            out[p * N + i] = val(rank, p * N + i);
    memset(red, -1, sizeof red);
    MPI_Reduce_scatter_block_c(out, red, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(red[i] == want[rank * N + i], "Reduce_scatter_block_c i=%d", i);
    memset(red, -1, sizeof red);
    MPI_Reduce_scatter_c(out, red, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(red[i] == want[rank * N + i], "Reduce_scatter_c i=%d", i);
    memset(red, -1, sizeof red);
    MPI_Scan_c(mine, red, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        int s = 0;
        for (int r = 0; r <= rank; r++)
            s += val(r, i);
        CHECK(red[i] == s, "Scan_c i=%d", i);
        if (rank > 0)
            want[i] = s - val(rank, i);
    }
    memset(red, -1, sizeof red);
    MPI_Exscan_c(mine, red, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; rank > 0 && i < N; i++)
        CHECK(red[i] == want[i], "Exscan_c i=%d: %d", i, red[i]);

    /* a user operation of the large-count kind, in a collective and locally */
    MPI_Op op;
    CHECK(MPI_Op_create_c(max_c, 1, &op) == MPI_SUCCESS, "Op_create_c");
    MPI_Allreduce_c(mine, red, N, MPI_INT, op, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        CHECK(red[i] == val(size - 1, i), "Allreduce_c with Op_create_c i=%d", i);
    int lo[N] = {5, 50, 500}, hi[N] = {9, 9, 900};
    MPI_Reduce_local_c(hi, lo, N, MPI_INT, op);
    CHECK(lo[0] == 9 && lo[1] == 50 && lo[2] == 900, "Reduce_local_c %d %d %d", lo[0], lo[1],
           lo[2]);
    MPI_Op_free(&op);

    /* negative counts */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Bcast_c(b, -1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgather_c(mine, -2, MPI_INT, all, N, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Allgather(mine, N, MPI_INT, all, -1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    counts[0] = -3;
    CHECK_CLASS(MPI_Alltoallv_c(out, counts, displs, MPI_INT, in, counts, displs, MPI_INT,
                                 MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Scan_c(mine, red, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Reduce_local_c(hi, lo, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi coll large count ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
