/* Blocking and nonblocking collectives started in opposite orders on
 * different members (issue 16).  MPI-4.0 6.12 makes this erroneous, but
 * MPICH completes it, since its blocking and nonblocking collectives never
 * match each other, and programs rely on it (mpi4py's test_ulfm testIAgree
 * calls MPI_Barrier before its MPI_Iallreduce on some ranks and after it on
 * others).  FMPL keeps one order per kind on each communicator: blocking
 * calls match blocking calls, nonblocking and persistent ones match their
 * own kind.
 *
 * In every round half of the members (by rank parity, alternating from
 * round to round) start the nonblocking (or persistent) collectives first
 * and run the blocking ones while those are pending; the other half run
 * the blocking ones first.  Cases, each on MPI_COMM_WORLD and on a
 * duplicate, every result checked:
 *   iallreduce_barrier  the example
 *   ibarrier_bcast      MPI_Ibarrier against MPI_Bcast
 *   ibcast_allreduce    MPI_Ibcast against MPI_Allreduce
 *   many                six nonblocking collectives pending (large ones
 *                       among them: the shared-memory areas of both kinds
 *                       in use at once) while five blocking ones run
 *   persistent          started persistent collectives (a prepared 8-byte
 *                       broadcast, a ring broadcast, an allreduce) against
 *                       blocking ones
 *   p2p                 blocking collectives that run as point-to-point
 *                       schedules (a 64 KiB rooted reduce, a large
 *                       reduce-scatter) against their nonblocking forms
 * Arguments: the cases to run (default: all). */
#include "check.h"

#include <stdlib.h>
#include <string.h>

static int me, np, round_no;

/* This member starts the nonblocking collectives before the blocking
 * ones in this round. */
static int nbc_first(void) { return (me + round_no) % 2 == 0; }

/* Run `start` (nonblocking starts) and `blocking` in this member's order. */
#define OPPOSITE(start, blocking)                                                  \
    do {                                                                           \
        if (nbc_first()) {                                                         \
            start;                                                                 \
            blocking;                                                              \
        } else {                                                                   \
            blocking;                                                              \
            start;                                                                 \
        }                                                                          \
    } while (0)

static void wait_all(int n, MPI_Request *r)
{
    CHECK_OK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE));
}

/* Sum over members of (p + 1) * k. */
static long rank_sum(long k) { return (long)np * (np + 1) / 2 * k; }

/* ------------------------------------------------------------ cases */

static void iallreduce_barrier(MPI_Comm comm)
{
    long in = (me + 1) * (long)(round_no + 1), out = -1;
    MPI_Request r;
    OPPOSITE(CHECK_OK(MPI_Iallreduce(&in, &out, 1, MPI_LONG, MPI_SUM, comm, &r)),
             CHECK_OK(MPI_Barrier(comm)));
    wait_all(1, &r);
    CHECK(out == rank_sum(round_no + 1), "iallreduce: %ld, expected %ld", out,
          rank_sum(round_no + 1));
}

static void ibarrier_bcast(MPI_Comm comm)
{
    int v[7], root = np - 1;
    for (int i = 0; i < 7; i++)
        v[i] = me == root ? round_no * 100 + i : -1;
    MPI_Request r;
    OPPOSITE(CHECK_OK(MPI_Ibarrier(comm, &r)), CHECK_OK(MPI_Bcast(v, 7, MPI_INT, root, comm)));
    wait_all(1, &r);
    for (int i = 0; i < 7; i++)
        CHECK(v[i] == round_no * 100 + i, "bcast[%d] = %d", i, v[i]);
}

static void ibcast_allreduce(MPI_Comm comm)
{
    enum { N = 100 };
    int v[N];
    double x[3] = {me, -me, me * 0.5 + round_no}, y[3] = {0, 0, 0};
    for (int i = 0; i < N; i++)
        v[i] = me == 0 ? round_no + 3 * i : -1;
    MPI_Request r;
    OPPOSITE(CHECK_OK(MPI_Ibcast(v, N, MPI_INT, 0, comm, &r)),
             CHECK_OK(MPI_Allreduce(x, y, 3, MPI_DOUBLE, MPI_MAX, comm)));
    wait_all(1, &r);
    for (int i = 0; i < N; i++)
        CHECK(v[i] == round_no + 3 * i, "ibcast[%d] = %d", i, v[i]);
    CHECK(y[0] == np - 1 && y[1] == 0 && y[2] == (np - 1) * 0.5 + round_no,
          "allreduce max: %g %g %g", y[0], y[1], y[2]);
}

/* Large enough for the shared-memory areas: an allreduce of 512 KiB runs
 * by slices in rounds of FMPL_COLL_AREA bytes, a broadcast of 1 MiB by
 * direct copies or the ring. */
#define BIG_DOUBLES (64 * 1024)
#define BIG_BYTES (1 << 20)
#define SMALL 4

static unsigned char big_byte(int which, long i)
{
    return (unsigned char)(i * 7 + which * 31 + round_no);
}

static void many(MPI_Comm comm)
{
    static double nb_sum[BIG_DOUBLES], nb_sum_out[BIG_DOUBLES];
    static double b_sum[BIG_DOUBLES], b_sum_out[BIG_DOUBLES];
    static unsigned char nb_bytes[BIG_BYTES], b_bytes[BIG_BYTES];
    int *gath = malloc((size_t)np * SMALL * sizeof *gath);
    int *a2a_in = malloc((size_t)np * sizeof(int)), *a2a_out = malloc((size_t)np * sizeof(int));
    int *b_a2a_in = malloc((size_t)np * sizeof(int)), *b_a2a_out = malloc((size_t)np * sizeof(int));
    CHECK(gath && a2a_in && a2a_out && b_a2a_in && b_a2a_out, "no memory");
    int mine[SMALL], scan_in = me + 1 + round_no, scan_out = -1, exscan_in = 2 * me + 1,
        exscan_out = -1;
    for (int i = 0; i < SMALL; i++)
        mine[i] = me * 10 + i + round_no;
    for (long i = 0; i < BIG_DOUBLES; i++) {
        nb_sum[i] = (double)(me + 1) * (i % 97);
        b_sum[i] = (double)(me + 1) * (i % 89) + round_no;
        nb_sum_out[i] = b_sum_out[i] = -1;
    }
    int nb_root = 1 % np, b_root = 0;
    for (long i = 0; i < BIG_BYTES; i++) {
        nb_bytes[i] = me == nb_root ? big_byte(1, i) : 0;
        b_bytes[i] = me == b_root ? big_byte(2, i) : 0;
    }
    for (int p = 0; p < np; p++) {
        a2a_in[p] = me * 1000 + p + round_no;
        b_a2a_in[p] = me * 2000 + p + round_no;
        a2a_out[p] = b_a2a_out[p] = -1;
    }
    MPI_Request r[6];
    OPPOSITE(
        {
            CHECK_OK(MPI_Ibcast(nb_bytes, BIG_BYTES, MPI_BYTE, nb_root, comm, &r[0]));
            CHECK_OK(MPI_Iallreduce(nb_sum, nb_sum_out, BIG_DOUBLES, MPI_DOUBLE, MPI_SUM, comm,
                                    &r[1]));
            CHECK_OK(MPI_Iallgather(mine, SMALL, MPI_INT, gath, SMALL, MPI_INT, comm, &r[2]));
            CHECK_OK(MPI_Ialltoall(a2a_in, 1, MPI_INT, a2a_out, 1, MPI_INT, comm, &r[3]));
            CHECK_OK(MPI_Ibarrier(comm, &r[4]));
            CHECK_OK(MPI_Iscan(&scan_in, &scan_out, 1, MPI_INT, MPI_SUM, comm, &r[5]));
        },
        {
            CHECK_OK(MPI_Allreduce(b_sum, b_sum_out, BIG_DOUBLES, MPI_DOUBLE, MPI_SUM, comm));
            CHECK_OK(MPI_Bcast(b_bytes, BIG_BYTES, MPI_BYTE, b_root, comm));
            CHECK_OK(MPI_Alltoall(b_a2a_in, 1, MPI_INT, b_a2a_out, 1, MPI_INT, comm));
            CHECK_OK(MPI_Barrier(comm));
            CHECK_OK(MPI_Exscan(&exscan_in, &exscan_out, 1, MPI_INT, MPI_SUM, comm));
        });
    wait_all(6, r);
    long weight = rank_sum(1);
    for (long i = 0; i < BIG_DOUBLES; i++) {
        CHECK(nb_sum_out[i] == (double)weight * (i % 97), "iallreduce[%ld] = %g", i,
              nb_sum_out[i]);
        CHECK(b_sum_out[i] == (double)weight * (i % 89) + (double)np * round_no,
              "allreduce[%ld] = %g", i, b_sum_out[i]);
    }
    for (long i = 0; i < BIG_BYTES; i++) {
        CHECK(nb_bytes[i] == big_byte(1, i), "ibcast byte %ld = %d", i, nb_bytes[i]);
        CHECK(b_bytes[i] == big_byte(2, i), "bcast byte %ld = %d", i, b_bytes[i]);
    }
    for (int p = 0; p < np; p++) {
        for (int i = 0; i < SMALL; i++)
            CHECK(gath[p * SMALL + i] == p * 10 + i + round_no, "iallgather[%d][%d] = %d", p, i,
                  gath[p * SMALL + i]);
        CHECK(a2a_out[p] == p * 1000 + me + round_no, "ialltoall[%d] = %d", p, a2a_out[p]);
        CHECK(b_a2a_out[p] == p * 2000 + me + round_no, "alltoall[%d] = %d", p, b_a2a_out[p]);
    }
    CHECK(scan_out == (me + 1) * (me + 2) / 2 + (me + 1) * round_no, "iscan = %d", scan_out);
    if (me > 0)
        CHECK(exscan_out == me * me, "exscan = %d", exscan_out);
    free(gath);
    free(a2a_in);
    free(a2a_out);
    free(b_a2a_in);
    free(b_a2a_out);
}

/* Persistent requests made once per communicator, started every round. */
#define RING_BYTES 4096
typedef struct persistent_set {
    MPI_Comm comm;
    MPI_Request r[3];
    long plan[1];                      /* 8 bytes: the prepared broadcast */
    unsigned char ring[RING_BYTES];    /* the ring broadcast */
    long in, out;                      /* allreduce */
} persistent_set;

static void persistent_make(persistent_set *s, MPI_Comm comm)
{
    s->comm = comm;
    CHECK_OK(MPI_Bcast_init(s->plan, 1, MPI_LONG, np - 1, comm, MPI_INFO_NULL, &s->r[0]));
    CHECK_OK(MPI_Bcast_init(s->ring, RING_BYTES, MPI_BYTE, 0, comm, MPI_INFO_NULL, &s->r[1]));
    CHECK_OK(MPI_Allreduce_init(&s->in, &s->out, 1, MPI_LONG, MPI_SUM, comm, MPI_INFO_NULL,
                                &s->r[2]));
}

static void persistent_free(persistent_set *s)
{
    for (int i = 0; i < 3; i++)
        CHECK_OK(MPI_Request_free(&s->r[i]));
}

static void persistent(persistent_set *s)
{
    MPI_Comm comm = s->comm;
    s->plan[0] = me == np - 1 ? 1000L + round_no : -1;
    for (int i = 0; i < RING_BYTES; i++)
        s->ring[i] = me == 0 ? big_byte(3, i) : 0;
    s->in = (me + 1) * (long)(round_no + 2);
    s->out = -1;
    long b_in = me + round_no, b_out = -1;
    int v[3];
    for (int i = 0; i < 3; i++)
        v[i] = me == 0 ? round_no + i : -1;
    OPPOSITE(CHECK_OK(MPI_Startall(3, s->r)), {
        CHECK_OK(MPI_Barrier(comm));
        CHECK_OK(MPI_Allreduce(&b_in, &b_out, 1, MPI_LONG, MPI_MAX, comm));
        CHECK_OK(MPI_Bcast(v, 3, MPI_INT, 0, comm));
    });
    wait_all(3, s->r);
    CHECK(s->plan[0] == 1000L + round_no, "prepared bcast: %ld", s->plan[0]);
    for (int i = 0; i < RING_BYTES; i++)
        CHECK(s->ring[i] == big_byte(3, i), "bcast_init byte %d = %d", i, s->ring[i]);
    CHECK(s->out == rank_sum(round_no + 2), "allreduce_init: %ld", s->out);
    CHECK(b_out == np - 1 + round_no, "allreduce max: %ld", b_out);
    for (int i = 0; i < 3; i++)
        CHECK(v[i] == round_no + i, "bcast[%d] = %d", i, v[i]);
}

/* A rooted reduce of 64 KiB on up to 4 members runs the binomial tree (a
 * point-to-point schedule) when blocking; a reduce-scatter of more than
 * 16 KiB per member runs pairwise. */
#define P2P_DOUBLES (8 * 1024)
#define RS_BLOCK (4 * 1024)

static void p2p(MPI_Comm comm)
{
    static double nb_in[P2P_DOUBLES], nb_out[P2P_DOUBLES], b_in[P2P_DOUBLES], b_out[P2P_DOUBLES];
    double *rs_in = malloc((size_t)np * RS_BLOCK * sizeof *rs_in);
    double *nrs_in = malloc((size_t)np * RS_BLOCK * sizeof *nrs_in);
    double *rs_out = malloc(RS_BLOCK * sizeof(double));
    double *nrs_out = malloc(RS_BLOCK * sizeof(double));
    CHECK(rs_in && nrs_in && rs_out && nrs_out, "no memory");
    for (long i = 0; i < P2P_DOUBLES; i++) {
        nb_in[i] = (double)(me + 1) * (i % 13);
        b_in[i] = (double)(me + 1) * (i % 17) + round_no;
        nb_out[i] = b_out[i] = -1;
    }
    for (long i = 0; i < (long)np * RS_BLOCK; i++) {
        rs_in[i] = (double)(me + 1) * (i % 11);
        nrs_in[i] = (double)(me + 1) * (i % 7) + round_no;
    }
    int nb_root = np - 1, b_root = 0;
    MPI_Request r[2];
    OPPOSITE(
        {
            CHECK_OK(MPI_Ireduce(nb_in, nb_out, P2P_DOUBLES, MPI_DOUBLE, MPI_SUM, nb_root, comm,
                                 &r[0]));
            CHECK_OK(MPI_Ireduce_scatter_block(nrs_in, nrs_out, RS_BLOCK, MPI_DOUBLE, MPI_SUM,
                                               comm, &r[1]));
        },
        {
            CHECK_OK(MPI_Reduce(b_in, b_out, P2P_DOUBLES, MPI_DOUBLE, MPI_SUM, b_root, comm));
            CHECK_OK(MPI_Reduce_scatter_block(rs_in, rs_out, RS_BLOCK, MPI_DOUBLE, MPI_SUM,
                                              comm));
        });
    wait_all(2, r);
    long weight = rank_sum(1);
    for (long i = 0; i < P2P_DOUBLES; i++) {
        if (me == nb_root)
            CHECK(nb_out[i] == (double)weight * (i % 13), "ireduce[%ld] = %g", i, nb_out[i]);
        if (me == b_root)
            CHECK(b_out[i] == (double)weight * (i % 17) + (double)np * round_no,
                  "reduce[%ld] = %g", i, b_out[i]);
    }
    for (long i = 0; i < RS_BLOCK; i++) {
        long at = (long)me * RS_BLOCK + i;
        CHECK(rs_out[i] == (double)weight * (at % 11), "reduce_scatter_block[%ld] = %g", i,
              rs_out[i]);
        CHECK(nrs_out[i] == (double)weight * (at % 7) + (double)np * round_no,
              "ireduce_scatter_block[%ld] = %g", i, nrs_out[i]);
    }
    free(rs_in);
    free(nrs_in);
    free(rs_out);
    free(nrs_out);
}

/* ------------------------------------------------------------ driver */

static const char *const case_names[] = {"iallreduce_barrier", "ibarrier_bcast",
                                         "ibcast_allreduce", "many", "persistent", "p2p"};
#define NCASES ((int)(sizeof case_names / sizeof case_names[0]))
enum { ROUNDS = 12 };

static void run_case(int k, MPI_Comm comm, persistent_set *ps)
{
    switch (k) {
    case 0: iallreduce_barrier(comm); break;
    case 1: ibarrier_bcast(comm); break;
    case 2: ibcast_allreduce(comm); break;
    case 3: many(comm); break;
    case 4: persistent(ps); break;
    case 5: p2p(comm); break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int chosen[NCASES] = {0}, any = 0;
    for (int a = 1; a < argc; a++) {
        int found = 0;
        for (int k = 0; k < NCASES; k++)
            if (strcmp(argv[a], case_names[k]) == 0)
                chosen[k] = found = any = 1;
        CHECK(found, "unknown case %s", argv[a]);
    }
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm comms[2] = {MPI_COMM_WORLD, dup};
    static persistent_set ps[2];
    for (int c = 0; c < 2; c++)
        persistent_make(&ps[c], comms[c]);
    for (int k = 0; k < NCASES; k++) {
        if (any && !chosen[k])
            continue;
        for (round_no = 0; round_no < ROUNDS; round_no++)
            for (int c = 0; c < 2; c++)
                run_case(k, comms[c], &ps[c]);
        if (me == 0)
            printf("%s: %d rounds on 2 communicators ok\n", case_names[k], ROUNDS);
    }
    for (int c = 0; c < 2; c++)
        persistent_free(&ps[c]);
    CHECK_OK(MPI_Comm_free(&dup));
    if (me == 0)
        printf("coll_kinds_order: ok on %d ranks\n", np);
    MPI_Finalize();
    return 0;
}
