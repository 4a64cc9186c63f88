/* Nonblocking (MPI_I*) and persistent (MPI_*_init) collectives: every
 * collective of each form with its data checked (the persistent ones
 * started three times with new input each time and the outputs poisoned in
 * between), in-place forms, large-count (_c) forms, a non-contiguous
 * datatype, several outstanding collectives on one and on two
 * communicators completed in different orders (Waitall in reverse, a
 * Testany loop) mixed with point-to-point, the readiness protocol of
 * persistent collectives (a root cannot finish before its receivers
 * started), derived datatypes freed before completion, and the errors: MPI_Request_free
 * of an active persistent collective, invalid root, count, request. */
#include "coll_forms.h"

#include <stdlib.h>
#include <string.h>

#define N 5          /* elements per block */
#define MAXP 16
#define POISON (-77)

static int me, np, it;
static int sbuf[MAXP * MAXP * N], rbuf[MAXP * MAXP * N];
static int scount[MAXP], sdispl[MAXP], rcount[MAXP], rdispl[MAXP];
static MPI_Datatype stype[MAXP], rtype[MAXP];

static int v(int p, int i) { return p * 1000 + i + it * 7 + 1; }

static void poison(void)
{
    for (size_t i = 0; i < sizeof rbuf / sizeof *rbuf; i++)
        rbuf[i] = POISON;
}


#define POST(persistent, r, icall, initcall) ((persistent) ? (initcall) : (icall))

/* ---- barrier */
static void fill_none(void) {}
static void check_none(void) {}
static int post_barrier(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Ibarrier(MPI_COMM_WORLD, r),
                MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, r));
}

/* ---- bcast from the last rank */
static void fill_bcast(void)
{
    poison();
    if (me == np - 1)
        for (int i = 0; i < N; i++)
            rbuf[i] = v(me, i);
}
static int post_bcast(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Ibcast(rbuf, N, MPI_INT, np - 1, MPI_COMM_WORLD, r),
                MPI_Bcast_init(rbuf, N, MPI_INT, np - 1, MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static int post_bcast_c(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Ibcast_c(rbuf, N, MPI_INT, np - 1, MPI_COMM_WORLD, r),
                MPI_Bcast_init_c(rbuf, N, MPI_INT, np - 1, MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_bcast(void)
{
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == v(np - 1, i), "bcast[%d] = %d", i, rbuf[i]);
}

/* ---- bcast of a vector type (every other int): staged */
static MPI_Datatype vec;
static void fill_bcast_vec(void)
{
    poison();
    for (int i = 0; i < N; i++)
        rbuf[2 * i] = me == 0 ? v(0, i) : POISON;
}
static int post_bcast_vec(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Ibcast(rbuf, 1, vec, 0, MPI_COMM_WORLD, r),
                MPI_Bcast_init(rbuf, 1, vec, 0, MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_bcast_vec(void)
{
    for (int i = 0; i < N; i++) {
        CHECK(rbuf[2 * i] == v(0, i), "vector bcast[%d] = %d", 2 * i, rbuf[2 * i]);
        if (i < N - 1)
            CHECK(rbuf[2 * i + 1] == POISON, "vector bcast wrote the gap %d", 2 * i + 1);
    }
}

/* ---- gather(v) to rank 0, scatter(v) from rank np-1 */
static void fill_mine(void)
{
    poison();
    for (int i = 0; i < N * MAXP; i++)
        sbuf[i] = v(me, i);
}
static int post_gather(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Igather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, MPI_COMM_WORLD, r),
                MPI_Gather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, MPI_COMM_WORLD,
                                MPI_INFO_NULL, r));
}
static void check_gather(void)
{
    for (int q = 0; me == 0 && q < np; q++)
        for (int i = 0; i < N; i++)
            CHECK(rbuf[q * N + i] == v(q, i), "gather[%d][%d] = %d", q, i, rbuf[q * N + i]);
}
/* in place at the root: its block is already in rbuf */
static void fill_gather_in_place(void)
{
    fill_mine();
    for (int i = 0; me == 0 && i < N; i++)
        rbuf[i] = v(0, i);
}
static int post_gather_in_place(int p, MPI_Request *r)
{
    const void *s = me == 0 ? MPI_IN_PLACE : sbuf;
    return POST(p, r, MPI_Igather(s, N, MPI_INT, rbuf, N, MPI_INT, 0, MPI_COMM_WORLD, r),
                MPI_Gather_init(s, N, MPI_INT, rbuf, N, MPI_INT, 0, MPI_COMM_WORLD,
                                MPI_INFO_NULL, r));
}
static void vlayout(void)
{
    for (int q = 0, at = 0; q < np; q++) {
        rcount[q] = scount[q] = q + 1;
        rdispl[q] = sdispl[q] = at;
        at += q + 2; /* a gap of one */
    }
}
static int post_gatherv(int p, MPI_Request *r)
{
    vlayout();
    return POST(p, r,
                MPI_Igatherv(sbuf, me + 1, MPI_INT, rbuf, rcount, rdispl, MPI_INT, 0,
                             MPI_COMM_WORLD, r),
                MPI_Gatherv_init(sbuf, me + 1, MPI_INT, rbuf, rcount, rdispl, MPI_INT, 0,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_gatherv(void)
{
    for (int q = 0; me == 0 && q < np; q++) {
        for (int i = 0; i < q + 1; i++)
            CHECK(rbuf[rdispl[q] + i] == v(q, i), "gatherv[%d][%d]", q, i);
        CHECK(rbuf[rdispl[q] + q + 1] == POISON, "gatherv wrote the gap after %d", q);
    }
}
static void fill_scatter(void)
{
    poison();
    for (int q = 0; q < np; q++)
        for (int i = 0; i < N + 1; i++)
            sbuf[q * (N + 1) + i] = me == np - 1 ? v(q, i) : POISON;
}
static int post_scatter(int p, MPI_Request *r)
{
    return POST(p, r,
                MPI_Iscatter(sbuf, N + 1, MPI_INT, rbuf, N + 1, MPI_INT, np - 1, MPI_COMM_WORLD,
                             r),
                MPI_Scatter_init(sbuf, N + 1, MPI_INT, rbuf, N + 1, MPI_INT, np - 1,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_scatter(void)
{
    for (int i = 0; i < N + 1; i++)
        CHECK(rbuf[i] == v(me, i), "scatter[%d] = %d", i, rbuf[i]);
}
static void fill_scatterv(void)
{
    poison();
    vlayout();
    for (int q = 0; q < np; q++)
        for (int i = 0; i < q + 1; i++)
            sbuf[sdispl[q] + i] = me == np - 1 ? v(q, i) : POISON;
}
static int post_scatterv(int p, MPI_Request *r)
{
    vlayout();
    return POST(p, r,
                MPI_Iscatterv(sbuf, scount, sdispl, MPI_INT, rbuf, me + 1, MPI_INT, np - 1,
                              MPI_COMM_WORLD, r),
                MPI_Scatterv_init(sbuf, scount, sdispl, MPI_INT, rbuf, me + 1, MPI_INT, np - 1,
                                  MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_scatterv(void)
{
    for (int i = 0; i < me + 1; i++)
        CHECK(rbuf[i] == v(me, i), "scatterv[%d] = %d", i, rbuf[i]);
    CHECK(rbuf[me + 1] == POISON, "scatterv wrote past the block");
}

/* ---- allgather(v) */
static int post_allgather(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iallgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_WORLD, r),
                MPI_Allgather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, r));
}
static void check_allgather(void)
{
    for (int q = 0; q < np; q++)
        for (int i = 0; i < N; i++)
            CHECK(rbuf[q * N + i] == v(q, i), "allgather[%d][%d] = %d", q, i, rbuf[q * N + i]);
}
static void fill_allgather_in_place(void)
{
    poison();
    for (int i = 0; i < N; i++)
        rbuf[me * N + i] = v(me, i);
}
static int post_allgather_in_place(int p, MPI_Request *r)
{
    return POST(p, r,
                MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, N, MPI_INT,
                               MPI_COMM_WORLD, r),
                MPI_Allgather_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, N, MPI_INT,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static int post_allgatherv(int p, MPI_Request *r)
{
    vlayout();
    return POST(p, r,
                MPI_Iallgatherv(sbuf, me + 1, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                                MPI_COMM_WORLD, r),
                MPI_Allgatherv_init(sbuf, me + 1, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_allgatherv(void)
{
    for (int q = 0; q < np; q++) {
        for (int i = 0; i < q + 1; i++)
            CHECK(rbuf[rdispl[q] + i] == v(q, i), "allgatherv[%d][%d]", q, i);
        CHECK(rbuf[rdispl[q] + q + 1] == POISON, "allgatherv wrote the gap after %d", q);
    }
}

/* allgather into a vector type (every other int): the receive side staged,
 * unpacked at every completion */
static int post_allgather_vec(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iallgather(sbuf, N, MPI_INT, rbuf, 1, vec, MPI_COMM_WORLD, r),
                MPI_Allgather_init(sbuf, N, MPI_INT, rbuf, 1, vec, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, r));
}
static void check_allgather_vec(void)
{
    int extent = 2 * N - 1;
    for (int q = 0; q < np; q++)
        for (int i = 0; i < N; i++) {
            CHECK(rbuf[q * extent + 2 * i] == v(q, i), "allgather vector[%d][%d] = %d", q, i,
                  rbuf[q * extent + 2 * i]);
            if (i < N - 1)
                CHECK(rbuf[q * extent + 2 * i + 1] == POISON, "allgather vector wrote a gap");
        }
}

/* ---- alltoall(v,w): block for q from me is v(me, q * 10 + i) */
static void fill_alltoall(void)
{
    poison();
    for (int q = 0; q < np; q++)
        for (int i = 0; i < N; i++)
            sbuf[q * N + i] = v(me, q * 10 + i);
}
static int post_alltoall(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Ialltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_WORLD, r),
                MPI_Alltoall_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_WORLD,
                                  MPI_INFO_NULL, r));
}
static void check_alltoall(void)
{
    for (int q = 0; q < np; q++)
        for (int i = 0; i < N; i++)
            CHECK(rbuf[q * N + i] == v(q, me * 10 + i), "alltoall[%d][%d] = %d", q, i,
                  rbuf[q * N + i]);
}
static void fill_alltoall_in_place(void)
{
    fill_alltoall();
    memcpy(rbuf, sbuf, sizeof(int) * (size_t)(np * N));
}
static int post_alltoall_in_place(int p, MPI_Request *r)
{
    return POST(p, r,
                MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, N, MPI_INT,
                              MPI_COMM_WORLD, r),
                MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, N, MPI_INT,
                                  MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
/* v: me sends (me + q) % 3 + 1 elements to q */
static int a2av_count(int from, int to) { return (from + to) % 3 + 1; }
static void a2av_layout(void)
{
    for (int q = 0, s = 0, d = 0; q < np; q++) {
        scount[q] = a2av_count(me, q);
        rcount[q] = a2av_count(q, me);
        sdispl[q] = s;
        rdispl[q] = d;
        s += scount[q];
        d += rcount[q] + 1;
    }
}
static void fill_alltoallv(void)
{
    poison();
    a2av_layout();
    for (int q = 0; q < np; q++)
        for (int i = 0; i < scount[q]; i++)
            sbuf[sdispl[q] + i] = v(me, q * 10 + i);
}
static int post_alltoallv(int p, MPI_Request *r)
{
    a2av_layout();
    return POST(p, r,
                MPI_Ialltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                               MPI_COMM_WORLD, r),
                MPI_Alltoallv_init(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_alltoallv(void)
{
    for (int q = 0; q < np; q++) {
        for (int i = 0; i < rcount[q]; i++)
            CHECK(rbuf[rdispl[q] + i] == v(q, me * 10 + i), "alltoallv[%d][%d]", q, i);
        CHECK(rbuf[rdispl[q] + rcount[q]] == POISON, "alltoallv wrote the gap after %d", q);
    }
}
/* w: the same blocks, byte displacements */
static int post_alltoallw(int p, MPI_Request *r)
{
    a2av_layout();
    static int sd[MAXP], rd[MAXP];
    for (int q = 0; q < np; q++) {
        sd[q] = sdispl[q] * (int)sizeof(int);
        rd[q] = rdispl[q] * (int)sizeof(int);
        stype[q] = rtype[q] = MPI_INT;
    }
    return POST(p, r,
                MPI_Ialltoallw(sbuf, scount, sd, stype, rbuf, rcount, rd, rtype, MPI_COMM_WORLD,
                               r),
                MPI_Alltoallw_init(sbuf, scount, sd, stype, rbuf, rcount, rd, rtype,
                                   MPI_COMM_WORLD, MPI_INFO_NULL, r));
}

/* ---- reductions: sum over members q of v(q, i) */
static int sum_upto(int last, int i)
{
    int s = 0;
    for (int q = 0; q <= last; q++)
        s += v(q, i);
    return s;
}
static int post_reduce(int p, MPI_Request *r)
{
    int root = np / 2;
    return POST(p, r, MPI_Ireduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, r),
                MPI_Reduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD,
                                MPI_INFO_NULL, r));
}
static void check_reduce(void)
{
    for (int i = 0; i < N; i++) {
        int want = me == np / 2 ? sum_upto(np - 1, i) : POISON;
        CHECK(rbuf[i] == want, "reduce[%d] = %d, want %d", i, rbuf[i], want);
    }
}
static int post_allreduce(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iallreduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Allreduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, r));
}
static int post_allreduce_c(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iallreduce_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Allreduce_init_c(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                     MPI_INFO_NULL, r));
}
static void check_allreduce(void)
{
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == sum_upto(np - 1, i), "allreduce[%d] = %d", i, rbuf[i]);
}
static void fill_in_place(void)
{
    poison();
    for (int i = 0; i < N * MAXP; i++)
        rbuf[i] = v(me, i);
}
static int post_allreduce_in_place(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iallreduce(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Allreduce_init(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                   MPI_INFO_NULL, r));
}
/* reduce on a vector type (staged operands) with MPI_MAX */
static void fill_vec_max(void)
{
    poison();
    for (int i = 0; i < 2 * N; i++)
        sbuf[i] = v(me, i);
}
static int post_allreduce_vec(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iallreduce(sbuf, rbuf, 1, vec, MPI_MAX, MPI_COMM_WORLD, r),
                MPI_Allreduce_init(sbuf, rbuf, 1, vec, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL,
                                   r));
}
static void check_vec_max(void)
{
    for (int i = 0; i < N; i++) {
        CHECK(rbuf[2 * i] == v(np - 1, 2 * i), "vector max[%d] = %d", 2 * i, rbuf[2 * i]);
        if (i < N - 1)
            CHECK(rbuf[2 * i + 1] == POISON, "vector max wrote the gap");
    }
}
static int post_rsb(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Ireduce_scatter_block(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Reduce_scatter_block_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                              MPI_INFO_NULL, r));
}
static void check_rsb(void)
{
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == sum_upto(np - 1, me * N + i), "reduce_scatter_block[%d] = %d", i,
              rbuf[i]);
    CHECK(rbuf[N] == POISON, "reduce_scatter_block wrote past its block");
}
static int post_rsb_in_place(int p, MPI_Request *r)
{
    return POST(p, r,
                MPI_Ireduce_scatter_block(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM,
                                          MPI_COMM_WORLD, r),
                MPI_Reduce_scatter_block_init(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM,
                                              MPI_COMM_WORLD, MPI_INFO_NULL, r));
}
static void check_rsb_in_place(void)
{
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == sum_upto(np - 1, me * N + i), "reduce_scatter_block in place[%d]", i);
}
static int post_rs(int p, MPI_Request *r)
{
    vlayout();
    return POST(p, r, MPI_Ireduce_scatter(sbuf, rbuf, rcount, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Reduce_scatter_init(sbuf, rbuf, rcount, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                        MPI_INFO_NULL, r));
}
static void check_rs(void)
{
    int first = me * (me + 1) / 2; /* counts q + 1 */
    for (int i = 0; i < me + 1; i++)
        CHECK(rbuf[i] == sum_upto(np - 1, first + i), "reduce_scatter[%d] = %d", i, rbuf[i]);
    CHECK(rbuf[me + 1] == POISON, "reduce_scatter wrote past its block");
}
static int post_scan(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iscan(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Scan_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                              r));
}
static void check_scan(void)
{
    for (int i = 0; i < N; i++)
        CHECK(rbuf[i] == sum_upto(me, i), "scan[%d] = %d", i, rbuf[i]);
}
static int post_scan_in_place(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iscan(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Scan_init(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                              MPI_INFO_NULL, r));
}
static int post_exscan(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iexscan(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Exscan_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                r));
}
static void check_exscan(void)
{
    for (int i = 0; i < N; i++) {
        int want = me == 0 ? POISON : sum_upto(me - 1, i);
        CHECK(rbuf[i] == want, "exscan[%d] = %d, want %d", i, rbuf[i], want);
    }
}
static int post_exscan_in_place(int p, MPI_Request *r)
{
    return POST(p, r, MPI_Iexscan(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r),
                MPI_Exscan_init(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, r));
}
static void check_exscan_in_place(void)
{
    for (int i = 0; me > 0 && i < N; i++)
        CHECK(rbuf[i] == sum_upto(me - 1, i), "exscan in place[%d] = %d", i, rbuf[i]);
}

static const coll_test tests[] = {
    {"barrier", fill_none, post_barrier, check_none},
    {"bcast", fill_bcast, post_bcast, check_bcast},
    {"bcast_c", fill_bcast, post_bcast_c, check_bcast},
    {"bcast vector", fill_bcast_vec, post_bcast_vec, check_bcast_vec},
    {"gather", fill_mine, post_gather, check_gather},
    {"gather in place", fill_gather_in_place, post_gather_in_place, check_gather},
    {"gatherv", fill_mine, post_gatherv, check_gatherv},
    {"scatter", fill_scatter, post_scatter, check_scatter},
    {"scatterv", fill_scatterv, post_scatterv, check_scatterv},
    {"allgather", fill_mine, post_allgather, check_allgather},
    {"allgather in place", fill_allgather_in_place, post_allgather_in_place, check_allgather},
    {"allgatherv", fill_mine, post_allgatherv, check_allgatherv},
    {"allgather vector", fill_mine, post_allgather_vec, check_allgather_vec},
    {"alltoall", fill_alltoall, post_alltoall, check_alltoall},
    {"alltoall in place", fill_alltoall_in_place, post_alltoall_in_place, check_alltoall},
    {"alltoallv", fill_alltoallv, post_alltoallv, check_alltoallv},
    {"alltoallw", fill_alltoallv, post_alltoallw, check_alltoallv},
    {"reduce", fill_mine, post_reduce, check_reduce},
    {"allreduce", fill_mine, post_allreduce, check_allreduce},
    {"allreduce_c", fill_mine, post_allreduce_c, check_allreduce},
    {"allreduce in place", fill_in_place, post_allreduce_in_place, check_allreduce},
    {"allreduce vector max", fill_vec_max, post_allreduce_vec, check_vec_max},
    {"reduce_scatter_block", fill_mine, post_rsb, check_rsb},
    {"reduce_scatter_block in place", fill_in_place, post_rsb_in_place, check_rsb_in_place},
    {"reduce_scatter", fill_mine, post_rs, check_rs},
    {"scan", fill_mine, post_scan, check_scan},
    {"scan in place", fill_in_place, post_scan_in_place, check_scan},
    {"exscan", fill_mine, post_exscan, check_exscan},
    {"exscan in place", fill_in_place, post_exscan_in_place, check_exscan_in_place},
};

/* Several outstanding at once, on two communicators, with point-to-point
 * in between; completed in reverse (Waitall) or as they come (Testany). */
static void outstanding(int use_testany)
{
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    enum { K = 3 };
    static int a[K][N], b[K][N], c[2][N];
    int token_out = me * 3 + 1, token_in = -1;
    MPI_Request req[2 * K + 4];
    int n = 0;
    for (int k = 0; k < K; k++) {
        for (int i = 0; i < N; i++)
            a[k][i] = v(me, i) * (k + 1);
        CHECK_OK(MPI_Iallreduce(a[k], b[k], N, MPI_INT, MPI_SUM, k % 2 ? dup : MPI_COMM_WORLD,
                                &req[n++]));
        for (int i = 0; k < 2 && i < N; i++)
            c[k][i] = me == k % np ? v(k % np, i) : POISON;
        if (k < 2)
            CHECK_OK(MPI_Ibcast(c[k], N, MPI_INT, k % np, k ? MPI_COMM_WORLD : dup, &req[n++]));
    }
    CHECK_OK(MPI_Irecv(&token_in, 1, MPI_INT, (me - 1 + np) % np, 5, MPI_COMM_WORLD, &req[n++]));
    CHECK_OK(MPI_Isend(&token_out, 1, MPI_INT, (me + 1) % np, 5, MPI_COMM_WORLD, &req[n++]));
    CHECK_OK(MPI_Ibarrier(dup, &req[n++]));
    if (use_testany) {
        int left = n;
        while (left) {
            int idx, flag;
            CHECK_OK(MPI_Testany(n, req, &idx, &flag, MPI_STATUS_IGNORE));
            if (flag && idx != MPI_UNDEFINED)
                left--;
        }
    } else {
        MPI_Request rev[2 * K + 4];
        for (int i = 0; i < n; i++)
            rev[i] = req[n - 1 - i];
        CHECK_OK(MPI_Waitall(n, rev, MPI_STATUSES_IGNORE));
    }
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++)
            CHECK(b[k][i] == sum_upto(np - 1, i) * (k + 1), "outstanding allreduce %d", k);
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < N; i++)
            CHECK(c[k][i] == v(k % np, i), "outstanding bcast %d", k);
    CHECK(token_in == ((me - 1 + np) % np) * 3 + 1, "point-to-point among collectives");
    CHECK_OK(MPI_Comm_free(&dup));
}

/* Derived datatypes freed while a collective still uses them: after the
 * I* call, and after *_init (the persistent request then runs twice). */
static void type_freed(void)
{
    MPI_Datatype t;
    MPI_Request r;
    it = 3;
    fill_mine();
    CHECK_OK(MPI_Type_dup(vec, &t));
    CHECK_OK(MPI_Iallgather(sbuf, N, MPI_INT, rbuf, 1, t, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Type_free(&t));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_allgather_vec();
    fill_vec_max();
    CHECK_OK(MPI_Type_dup(vec, &t));
    CHECK_OK(MPI_Iallreduce(sbuf, rbuf, 1, t, MPI_MAX, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Type_free(&t));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_vec_max();
    CHECK_OK(MPI_Type_dup(vec, &t));
    CHECK_OK(MPI_Allgather_init(sbuf, N, MPI_INT, rbuf, 1, t, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &r));
    CHECK_OK(MPI_Type_free(&t));
    for (it = 4; it < 6; it++) {
        fill_mine();
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_allgather_vec();
    }
    CHECK_OK(MPI_Request_free(&r));
}

/* The readiness protocol of persistent collectives: no instance writes into
 * a receiver that has not started it, and once the root's instance has
 * completed its buffer may be reused at once.  Receivers start only when
 * rank 0 tells them; until then their buffers must keep their poison.  The
 * root tests its request 1000 times first: a staged broadcast (the shared
 * ring) may complete before anyone started, and the root then poisons its
 * buffer before telling them; a pull design (rendezvous, direct reads)
 * cannot complete yet, and the root waits after telling them. */
static void readiness(void)
{
    static int data[8];
    MPI_Request r;
    CHECK_OK(MPI_Bcast_init(data, 8, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    for (int round = 0; np > 1 && round < 3; round++) {
        int go = 1;
        if (me == 0) {
            for (int i = 0; i < 8; i++)
                data[i] = round * 10 + i;
            CHECK_OK(MPI_Start(&r));
            int flag = 0;
            for (int k = 0; k < 1000 && !flag; k++)
                CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
            if (flag)
                for (int i = 0; i < 8; i++)
                    data[i] = POISON;
            for (int q = 1; q < np; q++)
                CHECK_OK(MPI_Send(&go, 1, MPI_INT, q, 8, MPI_COMM_WORLD));
            if (!flag)
                CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            continue;
        }
        for (int i = 0; i < 8; i++)
            data[i] = POISON;
        CHECK_OK(MPI_Recv(&go, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < 8; i++)
            CHECK(data[i] == POISON, "readiness round %d: data[%d] written before the start",
                  round, i);
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        for (int i = 0; i < 8; i++)
            CHECK(data[i] == round * 10 + i, "readiness round %d: data[%d] = %d", round, i,
                  data[i]);
    }
    CHECK_OK(MPI_Request_free(&r));
}

static void errors(void)
{
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MPI_Request r;
    CHECK_CLASS(MPI_Ibcast(rbuf, N, MPI_INT, np, MPI_COMM_WORLD, &r), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Bcast_init(rbuf, N, MPI_INT, -1, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iallreduce(sbuf, rbuf, -1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r),
                MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Iallreduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, NULL),
                MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Ibarrier(MPI_COMM_NULL, &r), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Igather(sbuf, N, MPI_DATATYPE_NULL, rbuf, N, MPI_INT, 0, MPI_COMM_WORLD, &r),
                MPI_ERR_TYPE);
    /* an active persistent collective cannot be freed; once complete it can.
     * Rank 0 starts first and tries while the others have not started (they
     * wait for its message), so its instance cannot have completed. */
    CHECK_OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    int go = 1;
    if (me != 0)
        CHECK_OK(MPI_Recv(&go, 1, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Start(&r));
    CHECK_CLASS(MPI_Start(&r), MPI_ERR_REQUEST); /* already active */
    if (me == 0 && np > 1) {
        CHECK_CLASS(MPI_Request_free(&r), MPI_ERR_REQUEST);
        CHECK(r != MPI_REQUEST_NULL, "a refused free released the handle");
        for (int q = 1; q < np; q++)
            CHECK_OK(MPI_Send(&go, 1, MPI_INT, q, 9, MPI_COMM_WORLD));
    }
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "freed request not nulled");
    /* a persistent collective whose communicator was freed cannot start */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK_OK(MPI_Bcast_init(rbuf, N, MPI_INT, 0, dup, MPI_INFO_NULL, &r));
    CHECK_OK(MPI_Comm_free(&dup));
    CHECK_CLASS(MPI_Start(&r), MPI_ERR_COMM);
    CHECK_OK(MPI_Request_free(&r));
    /* intercommunicators: tests/mpi/inter_nbc.c */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np <= MAXP, "at most %d ranks", MAXP);
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++)
        run_forms(&tests[t], &it);
    outstanding(0);
    outstanding(1);
    readiness();
    type_freed();
    errors();
    MPI_Type_free(&vec);
    if (me == 0)
        printf("mpi_nbc ok on %d ranks\n", np);
    MPI_Finalize();
    return 0;
}
