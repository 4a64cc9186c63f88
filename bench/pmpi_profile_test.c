/* The program of the test bench_pmpi_profile: a known number of calls of
 * each function bench/pmpi_profile.c wraps, with known counts and types,
 * run at 2 ranks with the profiler preloaded; bench/pmpi_profile_check.py
 * compares its report with the calls made here (EXPECTED_C there: keep the
 * two in step).  Every message's data are checked too, so that the
 * wrappers are seen to pass their arguments on unchanged.  Exits 1 on wrong
 * data. */
#include <mpi.h>
#include <stdio.h>

static int errors;

static void expect(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "pmpi_profile_test: wrong data: %s\n", what);
        errors++;
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "pmpi_profile_test: run at 2 ranks\n");
        MPI_Finalize();
        return 1;
    }
    int peer = 1 - rank;

    /* 5 x MPI_Send of 1..5 ints from rank 0, 5 x MPI_Recv on rank 1; then
     * one MPI_Ssend of 1 int and its MPI_Recv. */
    int ints[8];
    for (int i = 0; i < 5; i++) {
        for (int j = 0; j <= i; j++)
            ints[j] = rank == 0 ? 100 * i + j : -1;
        if (rank == 0)
            MPI_Send(ints, i + 1, MPI_INT, 1, i, MPI_COMM_WORLD);
        else {
            MPI_Recv(ints, i + 1, MPI_INT, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int j = 0; j <= i; j++)
                expect(ints[j] == 100 * i + j, "MPI_Send/MPI_Recv");
        }
    }
    ints[0] = rank == 0 ? 77 : 0;
    if (rank == 0)
        MPI_Ssend(ints, 1, MPI_INT, 1, 9, MPI_COMM_WORLD);
    else {
        MPI_Recv(ints, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        expect(ints[0] == 77, "MPI_Ssend");
    }

    /* 3 x (MPI_Irecv + MPI_Isend) of 4 doubles each way, one MPI_Waitall;
     * then one more pair completed by MPI_Wait twice. */
    double out[3][4], in[3][4];
    MPI_Request reqs[6];
    for (int k = 0; k < 3; k++) {
        for (int j = 0; j < 4; j++)
            out[k][j] = rank * 1000 + k * 10 + j;
        MPI_Irecv(in[k], 4, MPI_DOUBLE, peer, 20 + k, MPI_COMM_WORLD, &reqs[k]);
        MPI_Isend(out[k], 4, MPI_DOUBLE, peer, 20 + k, MPI_COMM_WORLD, &reqs[3 + k]);
    }
    MPI_Waitall(6, reqs, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 3; k++)
        for (int j = 0; j < 4; j++)
            expect(in[k][j] == peer * 1000 + k * 10 + j, "MPI_Isend/MPI_Irecv");
    MPI_Irecv(in[0], 4, MPI_DOUBLE, peer, 30, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out[0], 4, MPI_DOUBLE, peer, 30, MPI_COMM_WORLD, &reqs[1]);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    expect(in[0][3] == peer * 1000 + 3, "MPI_Wait");

    /* One more pair of 1 int each way, the receive completed by
     * MPI_Waitany; 2 x MPI_Test of the null request (complete at once). */
    int one_out = rank + 40, one_in = -1, index = -1, flag = 0;
    MPI_Irecv(&one_in, 1, MPI_INT, peer, 40, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(&one_out, 1, MPI_INT, peer, 40, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitany(1, &reqs[0], &index, MPI_STATUS_IGNORE);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    expect(index == 0 && one_in == peer + 40, "MPI_Waitany");
    MPI_Request null = MPI_REQUEST_NULL;
    for (int k = 0; k < 2; k++) {
        MPI_Test(&null, &flag, MPI_STATUS_IGNORE);
        expect(flag, "MPI_Test of MPI_REQUEST_NULL");
    }

    /* 2 x MPI_Sendrecv of 3 ints each way. */
    for (int k = 0; k < 2; k++) {
        int s[3] = {rank, k, 5}, r[3] = {-1, -1, -1};
        MPI_Sendrecv(s, 3, MPI_INT, peer, 50 + k, r, 3, MPI_INT, peer, 50 + k, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        expect(r[0] == peer && r[1] == k && r[2] == 5, "MPI_Sendrecv");
    }

    /* Collectives: 4 barriers, 3 broadcasts of 10 doubles, 2 reductions of
     * 7 ints, 6 allreduces of 1 double, an alltoall of 2 ints per rank, an
     * alltoallv of j + 1 ints to rank j, an allgather of 5 ints, a gather
     * of 3 doubles and a scatter of 2 doubles per rank. */
    for (int k = 0; k < 4; k++)
        MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 3; k++) {
        double b[10];
        for (int j = 0; j < 10; j++)
            b[j] = rank == k % 2 ? k + j : -1;
        MPI_Bcast(b, 10, MPI_DOUBLE, k % 2, MPI_COMM_WORLD);
        expect(b[9] == k + 9, "MPI_Bcast");
    }
    for (int k = 0; k < 2; k++) {
        int v[7], sum[7];
        for (int j = 0; j < 7; j++)
            v[j] = rank + j;
        MPI_Reduce(v, sum, 7, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            expect(sum[6] == 1 + 2 * 6, "MPI_Reduce");
    }
    for (int k = 0; k < 6; k++) {
        double x = rank + k, total = 0;
        MPI_Allreduce(&x, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        expect(total == 1 + 2 * k, "MPI_Allreduce");
    }
    int a2a_out[4] = {rank, rank, 10 + rank, 10 + rank}, a2a_in[4];
    MPI_Alltoall(a2a_out, 2, MPI_INT, a2a_in, 2, MPI_INT, MPI_COMM_WORLD);
    expect(a2a_in[2 * peer] == 10 * rank + peer, "MPI_Alltoall");
    /* Rank r sends j + 1 ints to rank j: 1 to rank 0, 2 to rank 1. */
    int v_out[3] = {rank, rank, rank}, v_in[4] = {-1, -1, -1, -1};
    int scounts[2] = {1, 2}, sdispls[2] = {0, 1};
    int rcounts[2] = {rank + 1, rank + 1}, rdispls[2] = {0, rank + 1};
    MPI_Alltoallv(v_out, scounts, sdispls, MPI_INT, v_in, rcounts, rdispls, MPI_INT,
                  MPI_COMM_WORLD);
    expect(v_in[rdispls[peer]] == peer && v_in[rdispls[peer] + rank] == peer, "MPI_Alltoallv");
    int g_out[5] = {rank, rank, rank, rank, rank}, g_in[10];
    MPI_Allgather(g_out, 5, MPI_INT, g_in, 5, MPI_INT, MPI_COMM_WORLD);
    expect(g_in[5 * peer + 4] == peer, "MPI_Allgather");
    double d_out[3] = {rank, rank, rank}, d_in[6] = {0};
    MPI_Gather(d_out, 3, MPI_DOUBLE, d_in, 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0)
        expect(d_in[5] == 1, "MPI_Gather");
    double sc_out[4] = {0, 0, 1, 1}, sc_in[2] = {-1, -1};
    MPI_Scatter(sc_out, 2, MPI_DOUBLE, sc_in, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    expect(sc_in[1] == rank, "MPI_Scatter");

    MPI_Finalize();
    return errors ? 1 : 0;
}
