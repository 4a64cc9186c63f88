/* Nonblocking (MPI_I*) and persistent (MPI_*_init) collectives on
 * intercommunicators: every collective MPI defines there, on two
 * intercommunicators (groups of alternate ranks, and rank 0 against the
 * rest: groups of different sizes), each run nonblocking twice and
 * persistent started three times with new input each time and the outputs
 * poisoned in between, data checked element by element, the members that
 * must not receive checked untouched.  Roots: the last member of group 0
 * gives MPI_ROOT, the rest of group 0 MPI_PROC_NULL, group 1 its rank.
 * Also: a non-contiguous datatype, two collectives outstanding completed
 * in reverse order, rendezvous-sized persistent ones, a large-count form, a
 * derived type freed before completion, and the errors (invalid root, Iscan on an
 * intercommunicator). */
#include "coll_forms.h"

#include <stdlib.h>
#include <string.h>

#define N 4          /* elements per block */
#define MAXP 16
#define RS_TOTAL 12  /* reduce_scatter: elements per group (divisible by 1, 2, 3, 4) */
#define POISON (-77)

static int me, np, it;
static MPI_Comm inter;
static int g, lr, ls, rs; /* my group (0, 1), local rank, local and remote sizes */
static int rootlr;        /* the root's local rank in group 0 */
static int sbuf[MAXP * MAXP * N], rbuf[MAXP * MAXP * N];
static int scount[MAXP], sdispl[MAXP], rcount[MAXP], rdispl[MAXP];
static MPI_Datatype stype[MAXP], rtype[MAXP];
static MPI_Datatype vec;

/* Member (grp, rank)'s element i (for remote peer r) in iteration it. */
static int val(int grp, int rank, int r, int i)
{
    return grp * 100000 + rank * 10000 + r * 100 + i + it * 7 + 1;
}

static int root_arg(void)
{
    if (g == 1)
        return rootlr;
    return lr == rootlr ? MPI_ROOT : MPI_PROC_NULL;
}
static int is_root(void) { return g == 0 && lr == rootlr; }

static void poison(void)
{
    for (size_t i = 0; i < sizeof rbuf / sizeof *rbuf; i++)
        rbuf[i] = POISON;
}

static void check_untouched(const char *name, int from)
{
    for (int i = from; i < MAXP * N; i++)
        CHECK(rbuf[i] == POISON, "%s: rbuf[%d] = %d written", name, i, rbuf[i]);
}

#define EXPECT(name, idx, want)                                                    \
    CHECK(rbuf[idx] == (want), "%s it %d: rbuf[%d] = %d, expected %d", (name), it, \
          (int)(idx), rbuf[idx], (want))


/* ------------------------------------------------------------ inputs */

static void fill_one(void) /* N elements of my own */
{
    poison();
    for (int i = 0; i < N; i++)
        sbuf[i] = val(g, lr, 0, i);
}

static void fill_per_peer(void) /* N elements for each remote peer */
{
    poison();
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < N; i++)
            sbuf[r * N + i] = val(g, lr, r, i);
}

static void fill_root_per_peer(void)
{
    poison();
    if (is_root())
        fill_per_peer();
}

static void fill_total(void) /* RS_TOTAL elements */
{
    poison();
    for (int i = 0; i < RS_TOTAL; i++)
        sbuf[i] = val(g, lr, 0, i);
}

static void fill_none(void) { poison(); }

/* The sum over the remote group of val(., r, 0, i). */
static int remote_sum(int i)
{
    int s = 0;
    for (int r = 0; r < rs; r++)
        s += val(1 - g, r, 0, i);
    return s;
}

/* ------------------------------------------------------------ barrier, bcast */

static int post_barrier(int p, MPI_Request *r)
{
    return p ? MPI_Barrier_init(inter, MPI_INFO_NULL, r) : MPI_Ibarrier(inter, r);
}
static void check_barrier(void) { check_untouched("barrier", 0); }

static void fill_bcast(void)
{
    poison();
    if (is_root())
        for (int i = 0; i < N; i++)
            rbuf[i] = val(0, rootlr, 0, i);
}
static int post_bcast(int p, MPI_Request *r)
{
    return p ? MPI_Bcast_init(rbuf, N, MPI_INT, root_arg(), inter, MPI_INFO_NULL, r)
             : MPI_Ibcast(rbuf, N, MPI_INT, root_arg(), inter, r);
}
static void check_bcast(void)
{
    if (g == 0) {
        check_untouched("bcast", is_root() ? N : 0);
        return;
    }
    for (int i = 0; i < N; i++)
        EXPECT("bcast", i, val(0, rootlr, 0, i));
    check_untouched("bcast", N);
}

/* a vector type (every other int): the root sends and the receivers
 * receive N ints spread over 2N */
static void fill_bcast_vec(void)
{
    poison();
    if (is_root())
        for (int i = 0; i < 2 * N; i++)
            rbuf[i] = i % 2 ? POISON : val(0, rootlr, 0, i);
}
static int post_bcast_vec(int p, MPI_Request *r)
{
    return p ? MPI_Bcast_init(rbuf, 1, vec, root_arg(), inter, MPI_INFO_NULL, r)
             : MPI_Ibcast(rbuf, 1, vec, root_arg(), inter, r);
}
static void check_bcast_vec(void)
{
    if (g == 0)
        return;
    for (int i = 0; i < 2 * N; i++)
        EXPECT("bcast vec", i, i % 2 ? POISON : val(0, rootlr, 0, i));
}

/* ------------------------------------------------------------ reductions */

static int post_allreduce(int p, MPI_Request *r)
{
    return p ? MPI_Allreduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, r)
             : MPI_Iallreduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, inter, r);
}
static void check_allreduce(void)
{
    for (int i = 0; i < N; i++)
        EXPECT("allreduce", i, remote_sum(i));
    check_untouched("allreduce", N);
}

static int post_reduce(int p, MPI_Request *r)
{
    return p ? MPI_Reduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, root_arg(), inter,
                               MPI_INFO_NULL, r)
             : MPI_Ireduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, root_arg(), inter, r);
}
static void check_reduce(void)
{
    if (!is_root()) {
        check_untouched("reduce", 0);
        return;
    }
    for (int i = 0; i < N; i++)
        EXPECT("reduce", i, remote_sum(i));
    check_untouched("reduce", N);
}

/* reduce_scatter: group g's members get consecutive parts of the remote
 * group's sum of RS_TOTAL elements: RS_TOTAL / ls each (block), or
 * 1, 2, .., the rest (v) */
static int rs_count(int j)
{
    if (j < ls - 1)
        return j + 1;
    return RS_TOTAL - (ls - 1) * ls / 2;
}
static int post_reduce_scatter_block(int p, MPI_Request *r)
{
    return p ? MPI_Reduce_scatter_block_init(sbuf, rbuf, RS_TOTAL / ls, MPI_INT, MPI_SUM,
                                             inter, MPI_INFO_NULL, r)
             : MPI_Ireduce_scatter_block(sbuf, rbuf, RS_TOTAL / ls, MPI_INT, MPI_SUM, inter, r);
}
static void check_reduce_scatter_block(void)
{
    int c = RS_TOTAL / ls;
    for (int i = 0; i < c; i++)
        EXPECT("reduce_scatter_block", i, remote_sum(lr * c + i));
    check_untouched("reduce_scatter_block", c);
}
static int post_reduce_scatter(int p, MPI_Request *r)
{
    for (int j = 0; j < ls; j++)
        rcount[j] = rs_count(j);
    return p ? MPI_Reduce_scatter_init(sbuf, rbuf, rcount, MPI_INT, MPI_SUM, inter,
                                       MPI_INFO_NULL, r)
             : MPI_Ireduce_scatter(sbuf, rbuf, rcount, MPI_INT, MPI_SUM, inter, r);
}
static void check_reduce_scatter(void)
{
    int first = 0;
    for (int j = 0; j < lr; j++)
        first += rs_count(j);
    for (int i = 0; i < rs_count(lr); i++)
        EXPECT("reduce_scatter", i, remote_sum(first + i));
    check_untouched("reduce_scatter", rs_count(lr));
}

/* ------------------------------------------------------------ gather, scatter */

/* the v forms: peer r's block has r + 1 elements at r * (N + 1) (gaps) */
static void set_v_layout(int n)
{
    for (int r = 0; r < n; r++) {
        rcount[r] = scount[r] = r + 1;
        rdispl[r] = sdispl[r] = r * (N + 1);
    }
}

static int post_gather(int p, MPI_Request *r)
{
    return p ? MPI_Gather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root_arg(), inter,
                               MPI_INFO_NULL, r)
             : MPI_Igather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root_arg(), inter, r);
}
static void check_gather(void)
{
    if (!is_root()) {
        check_untouched("gather", 0);
        return;
    }
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < N; i++)
            EXPECT("gather", r * N + i, val(1, r, 0, i));
    check_untouched("gather", rs * N);
}

static int post_gatherv(int p, MPI_Request *r)
{
    set_v_layout(rs);
    int cnt = lr + 1;
    return p ? MPI_Gatherv_init(sbuf, cnt, MPI_INT, rbuf, rcount, rdispl, MPI_INT, root_arg(),
                                inter, MPI_INFO_NULL, r)
             : MPI_Igatherv(sbuf, cnt, MPI_INT, rbuf, rcount, rdispl, MPI_INT, root_arg(), inter,
                            r);
}
static void check_gatherv(void)
{
    if (!is_root()) {
        check_untouched("gatherv", 0);
        return;
    }
    for (int r = 0; r < rs; r++) {
        for (int i = 0; i < N + 1; i++)
            EXPECT("gatherv", r * (N + 1) + i, i <= r ? val(1, r, 0, i) : POISON);
    }
    check_untouched("gatherv", rs * (N + 1));
}

static int post_scatter(int p, MPI_Request *r)
{
    return p ? MPI_Scatter_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root_arg(), inter,
                                MPI_INFO_NULL, r)
             : MPI_Iscatter(sbuf, N, MPI_INT, rbuf, N, MPI_INT, root_arg(), inter, r);
}
static void check_scatter(void)
{
    if (g == 0) {
        check_untouched("scatter", 0);
        return;
    }
    for (int i = 0; i < N; i++)
        EXPECT("scatter", i, val(0, rootlr, lr, i));
    check_untouched("scatter", N);
}

static void fill_root_scatterv(void)
{
    poison();
    if (is_root())
        for (int r = 0; r < rs; r++)
            for (int i = 0; i <= r; i++)
                sbuf[r * (N + 1) + i] = val(0, lr, r, i);
}
static int post_scatterv(int p, MPI_Request *r)
{
    set_v_layout(rs);
    int cnt = lr + 1;
    return p ? MPI_Scatterv_init(sbuf, scount, sdispl, MPI_INT, rbuf, cnt, MPI_INT, root_arg(),
                                 inter, MPI_INFO_NULL, r)
             : MPI_Iscatterv(sbuf, scount, sdispl, MPI_INT, rbuf, cnt, MPI_INT, root_arg(),
                             inter, r);
}
static void check_scatterv(void)
{
    if (g == 0) {
        check_untouched("scatterv", 0);
        return;
    }
    for (int i = 0; i <= lr; i++)
        EXPECT("scatterv", i, val(0, rootlr, lr, i));
    check_untouched("scatterv", lr + 1);
}

/* ------------------------------------------------------------ all to all */

static int post_allgather(int p, MPI_Request *r)
{
    return p ? MPI_Allgather_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, inter, MPI_INFO_NULL, r)
             : MPI_Iallgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, inter, r);
}
static void check_allgather(void)
{
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < N; i++)
            EXPECT("allgather", r * N + i, val(1 - g, r, 0, i));
    check_untouched("allgather", rs * N);
}

static int post_allgatherv(int p, MPI_Request *r)
{
    set_v_layout(rs);
    return p ? MPI_Allgatherv_init(sbuf, lr + 1, MPI_INT, rbuf, rcount, rdispl, MPI_INT, inter,
                                   MPI_INFO_NULL, r)
             : MPI_Iallgatherv(sbuf, lr + 1, MPI_INT, rbuf, rcount, rdispl, MPI_INT, inter, r);
}
static void check_allgatherv(void)
{
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < N + 1; i++)
            EXPECT("allgatherv", r * (N + 1) + i, i <= r ? val(1 - g, r, 0, i) : POISON);
    check_untouched("allgatherv", rs * (N + 1));
}

static int post_alltoall(int p, MPI_Request *r)
{
    return p ? MPI_Alltoall_init(sbuf, N, MPI_INT, rbuf, N, MPI_INT, inter, MPI_INFO_NULL, r)
             : MPI_Ialltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, inter, r);
}
static void check_alltoall(void)
{
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < N; i++)
            EXPECT("alltoall", r * N + i, val(1 - g, r, lr, i));
    check_untouched("alltoall", rs * N);
}

/* alltoallv: to remote r, (lr + r) % 3 + 1 elements of my block for r
 * (they send me (r + lr) % 3 + 1: the same); received at r * (N + 1) */
static int a2av_count(int r) { return (lr + r) % 3 + 1; }
static int post_alltoallv(int p, MPI_Request *r)
{
    for (int q = 0; q < rs; q++) {
        scount[q] = rcount[q] = a2av_count(q);
        sdispl[q] = q * N;
        rdispl[q] = q * (N + 1);
    }
    return p ? MPI_Alltoallv_init(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                                  inter, MPI_INFO_NULL, r)
             : MPI_Ialltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                              inter, r);
}
static void check_alltoallv(void)
{
    for (int r = 0; r < rs; r++)
        for (int i = 0; i < N + 1; i++)
            EXPECT("alltoallv", r * (N + 1) + i, i < a2av_count(r) ? val(1 - g, r, lr, i) : POISON);
    check_untouched("alltoallv", rs * (N + 1));
}

/* alltoallw: as alltoall, bytes displacements, the receive side through
 * the vector type for even peers (every other int over 2N) */
static int post_alltoallw(int p, MPI_Request *r)
{
    int at = 0;
    for (int q = 0; q < rs; q++) {
        scount[q] = N;
        sdispl[q] = q * N * (int)sizeof(int);
        stype[q] = rtype[q] = MPI_INT;
        rcount[q] = N;
        rdispl[q] = at * (int)sizeof(int);
        if (q % 2 == 0) {
            rtype[q] = vec;
            rcount[q] = 1;
        }
        at += 2 * N;
    }
    return p ? MPI_Alltoallw_init(sbuf, scount, sdispl, stype, rbuf, rcount, rdispl, rtype,
                                  inter, MPI_INFO_NULL, r)
             : MPI_Ialltoallw(sbuf, scount, sdispl, stype, rbuf, rcount, rdispl, rtype, inter,
                              r);
}
static void check_alltoallw(void)
{
    for (int r = 0; r < rs; r++)
        for (int k = 0; k < 2 * N; k++) {
            int want = POISON;
            if (r % 2 == 0 && k % 2 == 0)
                want = val(1 - g, r, lr, k / 2);
            else if (r % 2 == 1 && k < N)
                want = val(1 - g, r, lr, k);
            EXPECT("alltoallw", r * 2 * N + k, want);
        }
    check_untouched("alltoallw", rs * 2 * N);
}

static const coll_test tests[] = {
    {"barrier", fill_none, post_barrier, check_barrier},
    {"bcast", fill_bcast, post_bcast, check_bcast},
    {"bcast vec", fill_bcast_vec, post_bcast_vec, check_bcast_vec},
    {"allreduce", fill_one, post_allreduce, check_allreduce},
    {"reduce", fill_one, post_reduce, check_reduce},
    {"allgather", fill_one, post_allgather, check_allgather},
    {"alltoall", fill_per_peer, post_alltoall, check_alltoall},
    {"gather", fill_one, post_gather, check_gather},
    {"gatherv", fill_one, post_gatherv, check_gatherv},
    {"scatter", fill_root_per_peer, post_scatter, check_scatter},
    {"scatterv", fill_root_scatterv, post_scatterv, check_scatterv},
    {"allgatherv", fill_one, post_allgatherv, check_allgatherv},
    {"alltoallv", fill_per_peer, post_alltoallv, check_alltoallv},
    {"alltoallw", fill_per_peer, post_alltoallw, check_alltoallw},
    {"reduce_scatter_block", fill_total, post_reduce_scatter_block, check_reduce_scatter_block},
    {"reduce_scatter", fill_total, post_reduce_scatter, check_reduce_scatter},
};

/* Two outstanding on one intercommunicator, completed in reverse order,
 * with the blocking form between the starts. */
static void outstanding(void)
{
    static int a[N], b[N];
    it = 5;
    fill_one();
    MPI_Request r[2];
    CHECK_OK(MPI_Iallreduce(sbuf, a, N, MPI_INT, MPI_SUM, inter, &r[0]));
    CHECK_OK(MPI_Allreduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, inter));
    CHECK_OK(MPI_Iallreduce(sbuf, b, N, MPI_INT, MPI_MAX, inter, &r[1]));
    CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++) {
        CHECK(a[i] == remote_sum(i), "outstanding sum[%d] = %d", i, a[i]);
        CHECK(rbuf[i] == remote_sum(i), "blocking sum[%d] = %d", i, rbuf[i]);
        CHECK(b[i] == val(1 - g, rs - 1, 0, i), "outstanding max[%d] = %d", i, b[i]);
    }
}

/* Messages above the eager limit (rendezvous) between the groups and in
 * the local halves: a persistent broadcast and allreduce restarted. */
#define BIG 50000
static void large(void)
{
    static int big_in[BIG], big_out[BIG];
    MPI_Request r[2];
    CHECK_OK(MPI_Bcast_init(big_out, BIG, MPI_INT, root_arg(), inter, MPI_INFO_NULL, &r[0]));
    CHECK_OK(MPI_Allreduce_init(big_in, rbuf, 0, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &r[1]));
    CHECK_OK(MPI_Request_free(&r[1])); /* a zero-count one, never started */
    CHECK_OK(MPI_Allreduce_init(big_in, big_out, BIG, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL,
                                &r[1]));
    for (it = 0; it < 3; it++) {
        for (int i = 0; i < BIG; i++) {
            big_in[i] = val(g, lr, 0, i % 1000);
            big_out[i] = is_root() ? val(0, rootlr, 1, i % 1000) : POISON;
        }
        CHECK_OK(MPI_Start(&r[0]));
        CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i++) {
            int want = g == 1 || is_root() ? val(0, rootlr, 1, i % 1000) : POISON;
            CHECK(big_out[i] == want, "large bcast it %d: [%d] = %d, expected %d", it, i,
                  big_out[i], want);
        }
        CHECK_OK(MPI_Start(&r[1]));
        CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        for (int i = 0; i < BIG; i++)
            CHECK(big_out[i] == remote_sum(i % 1000), "large allreduce it %d: [%d] = %d", it, i,
                  big_out[i]);
    }
    CHECK_OK(MPI_Request_free(&r[0]));
    CHECK_OK(MPI_Request_free(&r[1]));
}

/* The large-count form, and a derived type freed while the collective
 * that uses it is pending (persistent: across its starts). */
static void count_and_freed_type(void)
{
    MPI_Request r;
    it = 9;
    fill_one();
    CHECK_OK(MPI_Iallgather_c(sbuf, (MPI_Count)N, MPI_INT, rbuf, (MPI_Count)N, MPI_INT, inter,
                              &r));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
    check_allgather();
    MPI_Datatype t;
    CHECK_OK(MPI_Type_vector(N, 1, 2, MPI_INT, &t));
    CHECK_OK(MPI_Type_commit(&t));
    CHECK_OK(MPI_Bcast_init(rbuf, 1, t, root_arg(), inter, MPI_INFO_NULL, &r));
    CHECK_OK(MPI_Type_free(&t));
    for (it = 0; it < 3; it++) {
        fill_bcast_vec();
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_bcast_vec();
    }
    CHECK_OK(MPI_Request_free(&r));
}

static void errors(void)
{
    MPI_Request r;
    CHECK_CLASS(MPI_Ibcast(rbuf, N, MPI_INT, rs, inter, &r), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Reduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, -5, inter, MPI_INFO_NULL, &r),
                MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Iscan(sbuf, rbuf, N, MPI_INT, MPI_SUM, inter, &r), MPI_ERR_COMM);
    /* a persistent collective whose intercommunicator was freed cannot
     * start, and can still be freed */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(inter, &dup));
    CHECK_OK(MPI_Allreduce_init(sbuf, rbuf, N, MPI_INT, MPI_SUM, dup, MPI_INFO_NULL, &r));
    CHECK_OK(MPI_Comm_free(&dup));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Start(&r), MPI_ERR_COMM);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
    CHECK_OK(MPI_Request_free(&r));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np <= MAXP, "at most %d ranks", MAXP);
    if (np < 2) {
        if (me == 0)
            printf("mpi_inter_nbc: needs 2 ranks, nothing to do\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Type_vector(N, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int split = 0; split < 2; split++) {
        /* split 0: alternate ranks; split 1: rank 0 against the rest */
        g = split == 0 ? me % 2 : me != 0;
        int other_leader = split == 0 ? 1 - g : (g == 0 ? 1 : 0);
        MPI_Comm half;
        CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, g, me, &half));
        CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, other_leader, 7, &inter));
        CHECK_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
        MPI_Comm_rank(inter, &lr);
        MPI_Comm_size(inter, &ls);
        MPI_Comm_remote_size(inter, &rs);
        int size0 = g == 0 ? ls : rs;
        rootlr = size0 - 1;
        for (size_t t = 0; t < sizeof tests / sizeof tests[0]; t++)
            run_forms(&tests[t], &it);
        outstanding();
        large();
        count_and_freed_type();
        errors();
        CHECK_OK(MPI_Comm_free(&inter));
        CHECK_OK(MPI_Comm_free(&half));
    }
    MPI_Type_free(&vec);
    if (me == 0)
        printf("mpi_inter_nbc ok on %d ranks\n", np);
    MPI_Finalize();
    return 0;
}
