/* Object lifetimes in nonblocking and persistent collectives: MPI lets the
 * caller free the derived datatypes (MPI_Type_free), the user operations
 * (MPI_Op_free) and the communicator (MPI_Comm_free) of a collective as
 * soon as the MPI_I* or *_init call returns; the operation still completes
 * (and a persistent request restarts) as if they existed.
 *
 * Every nonblocking collective but Ibarrier, its persistent *_init form,
 * the neighbourhood ones on a Cartesian grid (with MPI_PROC_NULL borders)
 * and a few on an intercommunicator run in four modes:
 *   0  I* on the base communicator; types and operations freed before the wait;
 *   1  the same on a fresh communicator (dup or new grid), freed before the wait;
 *   2  *_init, objects freed, then three Start / Wait rounds with new data
 *      and a poisoned receive buffer, then MPI_Request_free (inactive);
 *   3  *_init on a fresh communicator, objects freed, Start, MPI_Comm_free,
 *      Wait, MPI_Request_free.
 * Data moves with a derived type that has gaps (a vector of 3 of every
 * other unsigned, resized to 6: data at 0, 2, 4 of each element); the
 * reductions run with MPI_SUM and a user commutative sum on that type, and
 * with a user non-commutative operation (composition of affine maps) on a
 * contiguous pair and on a pair resized to 3 (a gap).  The whole receive
 * buffer is compared word for word with the expected one, gaps and
 * untouched blocks included (they keep the poison), and the send buffer
 * must be unchanged.  The user functions check that the datatype handle
 * they are given still names the type (MPI_Type_size), although the caller
 * freed it.
 *
 * Then MPI_Request_free on persistent collective requests: never started
 * (fine), active (MPI_ERR_REQUEST, the request and its data intact, it
 * completes and restarts), after completion (fine). */
#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define C 2            /* elements of the type per block */
#define BUF 2048       /* words per buffer */
#define MAXP 16
#define POISON 0xdeadbeefu
#define SGAP 0xfeedfaceu /* gaps of the send buffer: never moved */
#define ROUNDS 3

static int me, np, it;
static unsigned sbuf[BUF], rbuf[BUF], expect[BUF], sorig[BUF];

/* ------------------------------------------------------------ element layouts */

/* The words of an element: ncomp data words, cstride apart, ext words per element. */
typedef struct layout {
    int ext, ncomp, cstride;
} layout;

static const layout GAPPED = {6, 3, 2}; /* the vector type T */
static const layout PAIR = {2, 2, 1};   /* contiguous pair */
static const layout PAIR3 = {3, 2, 1};  /* pair resized to 3 */

static unsigned *word(unsigned *buf, const layout *l, int elem, int j)
{
    return &buf[elem * l->ext + j * l->cstride];
}

static unsigned val(int rank, int elem, int j)
{
    return (unsigned)(it * 100000 + rank * 1000 + elem * 10 + j + 1);
}

/* The objects of one run, made before the post and freed right after it. */
static MPI_Datatype T;      /* GAPPED */
static MPI_Datatype RT;     /* the reduction's type */
static MPI_Op OP;           /* the reduction's operation */
static const layout *RL;    /* its layout */
static int variant;         /* which reduction: below */
enum { V_SUM, V_USER_SUM, V_AFFINE_PAIR, V_AFFINE_PAIR3, NVARIANTS };
static const char *variant_name[] = {"MPI_SUM", "user sum", "user affine (pair)",
                                     "user affine (pair resized)"};
static int bad_handle;      /* user function saw a datatype handle that is not its type */
static int user_calls;

static void check_handle(MPI_Datatype *dt, int want_size)
{
    int size = -1;
    user_calls++;
    if (MPI_Type_size(*dt, &size) != MPI_SUCCESS || size != want_size)
        bad_handle++;
}

/* Commutative: the sum of the 3 data words, in the layout of T. */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    check_handle(dt, 3 * (int)sizeof(unsigned));
    const unsigned *a = in;
    unsigned *b = inout;
    for (int e = 0; e < *len; e++)
        for (int j = 0; j < 3; j++)
            b[e * 6 + 2 * j] += a[e * 6 + 2 * j];
}

/* Non-commutative: an element (a, b) is the map x -> a x + b (mod 2^32);
 * in op inout = first in, then inout. */
static void compose(unsigned *acc_a, unsigned *acc_b, unsigned a, unsigned b)
{
    unsigned na = a * *acc_a, nb = a * *acc_b + b;
    *acc_a = na;
    *acc_b = nb;
}

static void user_affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    check_handle(dt, 2 * (int)sizeof(unsigned));
    const unsigned *x = in;
    unsigned *y = inout;
    int ext = RL->ext;
    for (int e = 0; e < *len; e++) {
        unsigned a = x[e * ext], b = x[e * ext + 1];
        compose(&a, &b, y[e * ext], y[e * ext + 1]);
        y[e * ext] = a;
        y[e * ext + 1] = b;
    }
}

static MPI_Datatype make_gapped(void)
{
    MPI_Datatype v, t;
    CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_UNSIGNED, &v));
    CHECK_OK(MPI_Type_create_resized(v, 0, 6 * (MPI_Aint)sizeof(unsigned), &t));
    CHECK_OK(MPI_Type_free(&v));
    CHECK_OK(MPI_Type_commit(&t));
    return t;
}

static void make_objects(void)
{
    T = make_gapped();
    RT = MPI_DATATYPE_NULL;
    OP = MPI_OP_NULL;
    switch (variant) {
    case V_SUM:
        RT = make_gapped();
        OP = MPI_SUM;
        RL = &GAPPED;
        break;
    case V_USER_SUM:
        RT = make_gapped();
        CHECK_OK(MPI_Op_create(user_sum, 1, &OP));
        RL = &GAPPED;
        break;
    case V_AFFINE_PAIR:
        CHECK_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &RT));
        CHECK_OK(MPI_Type_commit(&RT));
        CHECK_OK(MPI_Op_create(user_affine, 0, &OP));
        RL = &PAIR;
        break;
    default: {
        MPI_Datatype c;
        CHECK_OK(MPI_Type_contiguous(2, MPI_UNSIGNED, &c));
        CHECK_OK(MPI_Type_create_resized(c, 0, 3 * (MPI_Aint)sizeof(unsigned), &RT));
        CHECK_OK(MPI_Type_free(&c));
        CHECK_OK(MPI_Type_commit(&RT));
        CHECK_OK(MPI_Op_create(user_affine, 0, &OP));
        RL = &PAIR3;
    }
    }
}

static void free_objects(void)
{
    CHECK_OK(MPI_Type_free(&T));
    CHECK(T == MPI_DATATYPE_NULL, "MPI_Type_free did not reset the handle");
    CHECK_OK(MPI_Type_free(&RT));
    if (OP != MPI_SUM) {
        CHECK_OK(MPI_Op_free(&OP));
        CHECK(OP == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    }
}

/* ------------------------------------------------------------ buffers */

static void poison(unsigned *buf)
{
    for (int i = 0; i < BUF; i++)
        buf[i] = POISON;
}

/* Send buffer: nelem elements of layout l, element e of rank r's data
 * valued f(r, e, j); the gaps hold SGAP. */
static void fill_send(const layout *l, int nelem, unsigned (*f)(int, int, int))
{
    for (int i = 0; i < BUF; i++)
        sbuf[i] = SGAP;
    for (int e = 0; e < nelem; e++)
        for (int j = 0; j < l->ncomp; j++)
            *word(sbuf, l, e, j) = f(me, e, j);
    memcpy(sorig, sbuf, sizeof sbuf);
    poison(rbuf);
    poison(expect);
}

static void compare(const char *what, int mode)
{
    for (int i = 0; i < BUF; i++)
        CHECK(rbuf[i] == expect[i], "%s (mode %d, round %d, %s): receive word %d is 0x%x, "
              "expected 0x%x", what, mode, it, variant_name[variant], i, rbuf[i], expect[i]);
    for (int i = 0; i < BUF; i++)
        CHECK(sbuf[i] == sorig[i], "%s (mode %d, round %d): send word %d changed to 0x%x",
              what, mode, it, i, sbuf[i]);
    CHECK(bad_handle == 0, "%s (mode %d, round %d): %d calls of the user function had a "
          "datatype handle that no longer names the type", what, mode, it, bad_handle);
}

/* Expected element `dst` of `expect` (layout l) = element `src` of rank r's send data. */
static void expect_elem(const layout *l, int dst, int r, int src)
{
    for (int j = 0; j < l->ncomp; j++)
        *word(expect, l, dst, j) = val(r, src, j);
}

/* ------------------------------------------------------------ reductions */

/* Rank r's element e for the reductions: affine maps need an odd factor. */
static unsigned rval(int r, int e, int j)
{
    if (variant >= V_AFFINE_PAIR && j == 0)
        return 2 * val(r, e, j) + 1;
    return val(r, e, j);
}

/* expect element dst = the reduction of element src over ranks first..last (in order). */
static void expect_fold(int dst, int first, int last, int src)
{
    unsigned acc[3];
    for (int j = 0; j < RL->ncomp; j++)
        acc[j] = rval(first, src, j);
    for (int r = first + 1; r <= last; r++) {
        if (variant >= V_AFFINE_PAIR)
            compose(&acc[0], &acc[1], rval(r, src, 0), rval(r, src, 1));
        else
            for (int j = 0; j < RL->ncomp; j++)
                acc[j] += rval(r, src, j);
    }
    for (int j = 0; j < RL->ncomp; j++)
        *word(expect, RL, dst, j) = acc[j];
}

/* ------------------------------------------------------------ the cases */

typedef struct tcase {
    const char *name;
    int reduction;                      /* runs once per variant */
    int inter;                          /* on the intercommunicator (np >= 2) */
    int neighbor;                       /* on the Cartesian grid */
    void (*fill)(void);                 /* send data for round `it`, poison, expected */
    int (*post)(int persistent, MPI_Comm comm, MPI_Request *r);
} tcase;

#define POST(persistent, icall, initcall) ((persistent) ? (initcall) : (icall))
#define INFO MPI_INFO_NULL

/* Variable blocks: rank p has p % 2 + 1 elements, one element of gap between blocks. */
static int vcount[MAXP], vdispl[MAXP], vtotal;
static void vblocks(void)
{
    vtotal = 0;
    for (int p = 0; p < np; p++) {
        vcount[p] = p % 2 + 1;
        vdispl[p] = vtotal;
        vtotal += vcount[p] + 1;
    }
}

/* ---- bcast from the last rank */
static void fill_bcast(void)
{
    fill_send(&GAPPED, 0, val);
    for (int e = 0; e < C; e++)
        for (int j = 0; j < 3; j++)
            *word(rbuf, &GAPPED, e, j) = me == np - 1 ? val(me, e, j) : POISON;
    for (int e = 0; e < C; e++)
        expect_elem(&GAPPED, e, np - 1, e);
}
static int post_bcast(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ibcast(rbuf, C, T, np - 1, c, r),
                MPI_Bcast_init(rbuf, C, T, np - 1, c, INFO, r));
}

/* ---- gather(v) to rank 0 */
static void fill_gather(void)
{
    fill_send(&GAPPED, C, val);
    for (int p = 0; me == 0 && p < np; p++)
        for (int e = 0; e < C; e++)
            expect_elem(&GAPPED, p * C + e, p, e);
}
static int post_gather(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Igather(sbuf, C, T, rbuf, C, T, 0, c, r),
                MPI_Gather_init(sbuf, C, T, rbuf, C, T, 0, c, INFO, r));
}
static void fill_gatherv(void)
{
    vblocks();
    fill_send(&GAPPED, vcount[me], val);
    for (int p = 0; me == 0 && p < np; p++)
        for (int e = 0; e < vcount[p]; e++)
            expect_elem(&GAPPED, vdispl[p] + e, p, e);
}
static int post_gatherv(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Igatherv(sbuf, vcount[me], T, rbuf, vcount, vdispl, T, 0, c, r),
                MPI_Gatherv_init(sbuf, vcount[me], T, rbuf, vcount, vdispl, T, 0, c, INFO, r));
}

/* ---- scatter(v) from rank 0: element e of block p is val(0, p * C + e) */
static void fill_scatter(void)
{
    fill_send(&GAPPED, me == 0 ? np * C : 0, val);
    for (int e = 0; e < C; e++)
        expect_elem(&GAPPED, e, 0, me * C + e);
}
static int post_scatter(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iscatter(sbuf, C, T, rbuf, C, T, 0, c, r),
                MPI_Scatter_init(sbuf, C, T, rbuf, C, T, 0, c, INFO, r));
}
static void fill_scatterv(void)
{
    vblocks();
    fill_send(&GAPPED, me == 0 ? vtotal : 0, val);
    for (int e = 0; e < vcount[me]; e++)
        expect_elem(&GAPPED, e, 0, vdispl[me] + e);
}
static int post_scatterv(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iscatterv(sbuf, vcount, vdispl, T, rbuf, vcount[me], T, 0, c, r),
                MPI_Scatterv_init(sbuf, vcount, vdispl, T, rbuf, vcount[me], T, 0, c, INFO, r));
}

/* ---- allgather(v) */
static void fill_allgather(void)
{
    fill_send(&GAPPED, C, val);
    for (int p = 0; p < np; p++)
        for (int e = 0; e < C; e++)
            expect_elem(&GAPPED, p * C + e, p, e);
}
static int post_allgather(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iallgather(sbuf, C, T, rbuf, C, T, c, r),
                MPI_Allgather_init(sbuf, C, T, rbuf, C, T, c, INFO, r));
}
static void fill_allgatherv(void)
{
    vblocks();
    fill_send(&GAPPED, vcount[me], val);
    for (int p = 0; p < np; p++)
        for (int e = 0; e < vcount[p]; e++)
            expect_elem(&GAPPED, vdispl[p] + e, p, e);
}
static int post_allgatherv(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iallgatherv(sbuf, vcount[me], T, rbuf, vcount, vdispl, T, c, r),
                MPI_Allgatherv_init(sbuf, vcount[me], T, rbuf, vcount, vdispl, T, c, INFO, r));
}

/* ---- alltoall(v,w): element e of the block for q is val(me, q * 10 + e) */
static unsigned a2a_val(int r, int q, int e, int j) { return val(r, q * 10 + e, j); }
/* n blocks of C elements, block q for (and from) the rank first + q, to
 * which I am block `mine`. */
static void fill_blocks_to_each(int n, int first, int mine)
{
    fill_send(&GAPPED, 0, val);
    for (int q = 0; q < n; q++)
        for (int e = 0; e < C; e++)
            for (int j = 0; j < 3; j++) {
                *word(sbuf, &GAPPED, q * C + e, j) = a2a_val(me, q, e, j);
                *word(expect, &GAPPED, q * C + e, j) = a2a_val(first + q, mine, e, j);
            }
    memcpy(sorig, sbuf, sizeof sbuf);
}
static void fill_alltoall(void) { fill_blocks_to_each(np, 0, me); }
static int post_alltoall(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ialltoall(sbuf, C, T, rbuf, C, T, c, r),
                MPI_Alltoall_init(sbuf, C, T, rbuf, C, T, c, INFO, r));
}
/* v: the block between me and q has (me + q) % 2 + 1 elements, one element
 * of gap after each block on both sides. */
static int scnt[MAXP], sdsp[MAXP], rcnt[MAXP], rdsp[MAXP], sdspb[MAXP], rdspb[MAXP];
static MPI_Datatype wtypes[MAXP];
static void fill_alltoallv(void)
{
    fill_send(&GAPPED, 0, val);
    int s = 0;
    for (int q = 0; q < np; q++) {
        scnt[q] = rcnt[q] = (me + q) % 2 + 1;
        sdsp[q] = rdsp[q] = s;
        sdspb[q] = rdspb[q] = s * 6 * (int)sizeof(unsigned);
        s += scnt[q] + 1;
        for (int e = 0; e < scnt[q]; e++)
            for (int j = 0; j < 3; j++) {
                *word(sbuf, &GAPPED, sdsp[q] + e, j) = a2a_val(me, q, e, j);
                *word(expect, &GAPPED, rdsp[q] + e, j) = a2a_val(q, me, e, j);
            }
    }
    memcpy(sorig, sbuf, sizeof sbuf);
}
static int post_alltoallv(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ialltoallv(sbuf, scnt, sdsp, T, rbuf, rcnt, rdsp, T, c, r),
                MPI_Alltoallv_init(sbuf, scnt, sdsp, T, rbuf, rcnt, rdsp, T, c, INFO, r));
}
static int post_alltoallw(int p, MPI_Comm c, MPI_Request *r)
{
    for (int q = 0; q < np; q++)
        wtypes[q] = T;
    return POST(p, MPI_Ialltoallw(sbuf, scnt, sdspb, wtypes, rbuf, rcnt, rdspb, wtypes, c, r),
                MPI_Alltoallw_init(sbuf, scnt, sdspb, wtypes, rbuf, rcnt, rdspb, wtypes, c,
                                   INFO, r));
}

/* ---- reductions (RT, OP; layout RL) */
static void fill_red(int nelem) { fill_send(RL, nelem, rval); }

static void fill_reduce(void)
{
    fill_red(C);
    for (int e = 0; me == np - 1 && e < C; e++)
        expect_fold(e, 0, np - 1, e);
}
static int post_reduce(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ireduce(sbuf, rbuf, C, RT, OP, np - 1, c, r),
                MPI_Reduce_init(sbuf, rbuf, C, RT, OP, np - 1, c, INFO, r));
}
static void fill_allreduce(void)
{
    fill_red(C);
    for (int e = 0; e < C; e++)
        expect_fold(e, 0, np - 1, e);
}
static int post_allreduce(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iallreduce(sbuf, rbuf, C, RT, OP, c, r),
                MPI_Allreduce_init(sbuf, rbuf, C, RT, OP, c, INFO, r));
}
static void fill_rsb(void)
{
    fill_red(np * C);
    for (int e = 0; e < C; e++)
        expect_fold(e, 0, np - 1, me * C + e);
}
static int post_rsb(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ireduce_scatter_block(sbuf, rbuf, C, RT, OP, c, r),
                MPI_Reduce_scatter_block_init(sbuf, rbuf, C, RT, OP, c, INFO, r));
}
static int rscount[MAXP];
static void fill_rs(void)
{
    int total = 0, mine = 0;
    for (int p = 0; p < np; p++) {
        rscount[p] = p % 2 + 1;
        if (p < me)
            mine += rscount[p];
        total += rscount[p];
    }
    fill_red(total);
    for (int e = 0; e < rscount[me]; e++)
        expect_fold(e, 0, np - 1, mine + e);
}
static int post_rs(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ireduce_scatter(sbuf, rbuf, rscount, RT, OP, c, r),
                MPI_Reduce_scatter_init(sbuf, rbuf, rscount, RT, OP, c, INFO, r));
}
static void fill_scan(void)
{
    fill_red(C);
    for (int e = 0; e < C; e++)
        expect_fold(e, 0, me, e);
}
static int post_scan(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iscan(sbuf, rbuf, C, RT, OP, c, r),
                MPI_Scan_init(sbuf, rbuf, C, RT, OP, c, INFO, r));
}
static void fill_exscan(void)
{
    fill_red(C);
    for (int e = 0; me > 0 && e < C; e++)
        expect_fold(e, 0, me - 1, e);
}
static int post_exscan(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iexscan(sbuf, rbuf, C, RT, OP, c, r),
                MPI_Exscan_init(sbuf, rbuf, C, RT, OP, c, INFO, r));
}

/* ---- neighbourhood collectives on a 2-D grid, periodic in dimension 0
 * only: neighbours -0, +0, -1, +1 (MPI_PROC_NULL on the open borders). */
static MPI_Comm grid;
static int nbr[4];

static MPI_Comm make_grid(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Comm g;
    CHECK_OK(MPI_Dims_create(np, 2, dims));
    CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &g));
    return g;
}

/* The neighbour's block for me: from the - side comes what it sent
 * towards + (its block 2d + 1), and the other way round. */
static int facing(int k) { return k ^ 1; }

static void fill_nbr_allgather(void)
{
    fill_send(&GAPPED, C, val);
    for (int k = 0; k < 4; k++)
        for (int e = 0; nbr[k] != MPI_PROC_NULL && e < C; e++)
            expect_elem(&GAPPED, k * C + e, nbr[k], e);
}
static int post_nbr_allgather(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ineighbor_allgather(sbuf, C, T, rbuf, C, T, c, r),
                MPI_Neighbor_allgather_init(sbuf, C, T, rbuf, C, T, c, INFO, r));
}
/* allgatherv: one element from each neighbour, blocks placed with gaps. */
static int ncnt[4] = {1, 1, 1, 1}, ndsp[4] = {0, 2, 5, 7};
static void fill_nbr_allgatherv(void)
{
    fill_send(&GAPPED, 1, val);
    for (int k = 0; k < 4; k++)
        if (nbr[k] != MPI_PROC_NULL)
            expect_elem(&GAPPED, ndsp[k], nbr[k], 0);
}
static int post_nbr_allgatherv(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ineighbor_allgatherv(sbuf, 1, T, rbuf, ncnt, ndsp, T, c, r),
                MPI_Neighbor_allgatherv_init(sbuf, 1, T, rbuf, ncnt, ndsp, T, c, INFO, r));
}
/* alltoall(v,w): block k (towards neighbour k) has element e valued
 * a2a_val(me, k, e). */
static int nscnt[4], nsdsp[4], nrdsp[4];
static MPI_Aint nsdspb[4], nrdspb[4];
static MPI_Datatype nwtypes[4];
static void fill_nbr_a2a(int gaps)
{
    fill_send(&GAPPED, 0, val);
    for (int k = 0; k < 4; k++) {
        nscnt[k] = gaps ? k % 2 + 1 : C;
        nsdsp[k] = nrdsp[k] = gaps ? 3 * k : C * k;
        nsdspb[k] = nrdspb[k] = (MPI_Aint)nsdsp[k] * 6 * (MPI_Aint)sizeof(unsigned);
        for (int e = 0; e < nscnt[k]; e++)
            for (int j = 0; j < 3; j++)
                *word(sbuf, &GAPPED, nsdsp[k] + e, j) = a2a_val(me, k, e, j);
    }
    memcpy(sorig, sbuf, sizeof sbuf);
    /* what neighbour k sends me is its block facing(k); with gaps its
     * count is facing(k) % 2 + 1, which is what I expect from k */
    for (int k = 0; k < 4; k++)
        for (int e = 0; nbr[k] != MPI_PROC_NULL && e < nscnt[facing(k)]; e++)
            for (int j = 0; j < 3; j++)
                *word(expect, &GAPPED, nrdsp[k] + e, j) = a2a_val(nbr[k], facing(k), e, j);
}
static int nrcnt[4];
static void fill_nbr_alltoall(void) { fill_nbr_a2a(0); }
static void fill_nbr_alltoallv(void)
{
    fill_nbr_a2a(1);
    for (int k = 0; k < 4; k++)
        nrcnt[k] = nscnt[facing(k)];
}
static int post_nbr_alltoall(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ineighbor_alltoall(sbuf, C, T, rbuf, C, T, c, r),
                MPI_Neighbor_alltoall_init(sbuf, C, T, rbuf, C, T, c, INFO, r));
}
static int post_nbr_alltoallv(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ineighbor_alltoallv(sbuf, nscnt, nsdsp, T, rbuf, nrcnt, nrdsp, T, c, r),
                MPI_Neighbor_alltoallv_init(sbuf, nscnt, nsdsp, T, rbuf, nrcnt, nrdsp, T, c,
                                            INFO, r));
}
static int post_nbr_alltoallw(int p, MPI_Comm c, MPI_Request *r)
{
    for (int k = 0; k < 4; k++)
        nwtypes[k] = T;
    return POST(p, MPI_Ineighbor_alltoallw(sbuf, nscnt, nsdspb, nwtypes, rbuf, nrcnt, nrdspb,
                                           nwtypes, c, r),
                MPI_Neighbor_alltoallw_init(sbuf, nscnt, nsdspb, nwtypes, rbuf, nrcnt, nrdspb,
                                            nwtypes, c, INFO, r));
}

/* ---- intercommunicator: world ranks [0, np/2) and [np/2, np) */
static MPI_Comm inter;
static int side, lrank, lsize, rsize, rfirst; /* rfirst: world rank of remote rank 0 */

static MPI_Comm make_inter(void)
{
    MPI_Comm local, ic;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, side, me, &local));
    CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, side ? 0 : np / 2, 77, &ic));
    CHECK_OK(MPI_Comm_free(&local));
    return ic;
}

static void fill_ibcast(void)
{
    fill_send(&GAPPED, 0, val);
    int root = side == 0 && lrank == 0;
    for (int e = 0; e < C; e++)
        for (int j = 0; j < 3; j++)
            *word(rbuf, &GAPPED, e, j) = root ? val(0, e, j) : POISON;
    for (int e = 0; (root || side == 1) && e < C; e++)
        expect_elem(&GAPPED, e, 0, e);
}
/* rooted: the root is side 0's local rank 0 */
static int inter_root(void) { return side == 1 ? 0 : lrank == 0 ? MPI_ROOT : MPI_PROC_NULL; }
static int post_ibcast(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ibcast(rbuf, C, T, inter_root(), c, r),
                MPI_Bcast_init(rbuf, C, T, inter_root(), c, INFO, r));
}
static void fill_igather(void)
{
    fill_send(&GAPPED, side == 1 ? C : 0, val);
    for (int q = 0; side == 0 && lrank == 0 && q < rsize; q++)
        for (int e = 0; e < C; e++)
            expect_elem(&GAPPED, q * C + e, rfirst + q, e);
}
static int post_igather(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Igather(sbuf, C, T, rbuf, C, T, inter_root(), c, r),
                MPI_Gather_init(sbuf, C, T, rbuf, C, T, inter_root(), c, INFO, r));
}
static void fill_iscatter(void)
{
    fill_send(&GAPPED, side == 0 && lrank == 0 ? rsize * C : 0, val);
    for (int e = 0; side == 1 && e < C; e++)
        expect_elem(&GAPPED, e, 0, lrank * C + e);
}
static int post_iscatter(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Iscatter(sbuf, C, T, rbuf, C, T, inter_root(), c, r),
                MPI_Scatter_init(sbuf, C, T, rbuf, C, T, inter_root(), c, INFO, r));
}
static void fill_ireduce(void)
{
    fill_red(side == 1 ? C : 0);
    for (int e = 0; side == 0 && lrank == 0 && e < C; e++)
        expect_fold(e, rfirst, rfirst + rsize - 1, e);
}
static int post_ireduce(int p, MPI_Comm c, MPI_Request *r)
{
    return POST(p, MPI_Ireduce(sbuf, rbuf, C, RT, OP, inter_root(), c, r),
                MPI_Reduce_init(sbuf, rbuf, C, RT, OP, inter_root(), c, INFO, r));
}
static void fill_iallgather(void)
{
    fill_send(&GAPPED, C, val);
    for (int q = 0; q < rsize; q++)
        for (int e = 0; e < C; e++)
            expect_elem(&GAPPED, q * C + e, rfirst + q, e);
}
static void fill_ialltoall(void) { fill_blocks_to_each(rsize, rfirst, lrank); }
static void fill_iallreduce(void)
{
    fill_red(C);
    for (int e = 0; e < C; e++)
        expect_fold(e, rfirst, rfirst + rsize - 1, e);
}

static const tcase cases[] = {
    {"bcast", 0, 0, 0, fill_bcast, post_bcast},
    {"gather", 0, 0, 0, fill_gather, post_gather},
    {"gatherv", 0, 0, 0, fill_gatherv, post_gatherv},
    {"scatter", 0, 0, 0, fill_scatter, post_scatter},
    {"scatterv", 0, 0, 0, fill_scatterv, post_scatterv},
    {"allgather", 0, 0, 0, fill_allgather, post_allgather},
    {"allgatherv", 0, 0, 0, fill_allgatherv, post_allgatherv},
    {"alltoall", 0, 0, 0, fill_alltoall, post_alltoall},
    {"alltoallv", 0, 0, 0, fill_alltoallv, post_alltoallv},
    {"alltoallw", 0, 0, 0, fill_alltoallv, post_alltoallw},
    {"reduce", 1, 0, 0, fill_reduce, post_reduce},
    {"allreduce", 1, 0, 0, fill_allreduce, post_allreduce},
    {"reduce_scatter_block", 1, 0, 0, fill_rsb, post_rsb},
    {"reduce_scatter", 1, 0, 0, fill_rs, post_rs},
    {"scan", 1, 0, 0, fill_scan, post_scan},
    {"exscan", 1, 0, 0, fill_exscan, post_exscan},
    {"neighbor_allgather", 0, 0, 1, fill_nbr_allgather, post_nbr_allgather},
    {"neighbor_allgatherv", 0, 0, 1, fill_nbr_allgatherv, post_nbr_allgatherv},
    {"neighbor_alltoall", 0, 0, 1, fill_nbr_alltoall, post_nbr_alltoall},
    {"neighbor_alltoallv", 0, 0, 1, fill_nbr_alltoallv, post_nbr_alltoallv},
    {"neighbor_alltoallw", 0, 0, 1, fill_nbr_alltoallv, post_nbr_alltoallw},
    {"inter bcast", 0, 1, 0, fill_ibcast, post_ibcast},
    {"inter allgather", 0, 1, 0, fill_iallgather, post_allgather},
    {"inter alltoall", 0, 1, 0, fill_ialltoall, post_alltoall},
    {"inter allreduce", 1, 1, 0, fill_iallreduce, post_allreduce},
    {"inter gather", 0, 1, 0, fill_igather, post_igather},
    {"inter scatter", 0, 1, 0, fill_iscatter, post_iscatter},
    {"inter reduce", 1, 1, 0, fill_ireduce, post_ireduce},
};

/* ------------------------------------------------------------ the modes */

static MPI_Comm base_comm(const tcase *c)
{
    return c->inter ? inter : c->neighbor ? grid : MPI_COMM_WORLD;
}

static MPI_Comm fresh_comm(const tcase *c)
{
    MPI_Comm n;
    if (c->neighbor)
        return make_grid();
    CHECK_OK(MPI_Comm_dup(base_comm(c), &n));
    return n;
}

static void run_mode(const tcase *c, int mode)
{
    int persistent = mode >= 2, fresh = mode % 2;
    MPI_Comm comm = fresh ? fresh_comm(c) : base_comm(c);
    MPI_Request r = MPI_REQUEST_NULL;
    bad_handle = 0;
    it = 0;
    make_objects();
    c->fill();
    CHECK_OK(c->post(persistent, comm, &r));
    free_objects();
    if (!persistent) {
        if (fresh)
            CHECK_OK(MPI_Comm_free(&comm));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(r == MPI_REQUEST_NULL, "%s: completed request not freed", c->name);
        compare(c->name, mode);
        return;
    }
    for (it = 0; it < (fresh ? 1 : ROUNDS); it++) {
        c->fill();
        CHECK_OK(MPI_Start(&r));
        if (fresh)
            CHECK_OK(MPI_Comm_free(&comm));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(r != MPI_REQUEST_NULL, "%s: a persistent request was freed by MPI_Wait", c->name);
        compare(c->name, mode);
    }
    CHECK_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "%s: MPI_Request_free did not reset the handle", c->name);
}

static void run_case(const tcase *c)
{
    if (c->inter && np < 2)
        return;
    for (variant = 0; variant < (c->reduction ? NVARIANTS : 1); variant++)
        for (int mode = 0; mode < 4; mode++)
            run_mode(c, mode);
}

/* ------------------------------------------------------------ MPI_Request_free */

/* One round of persistent request r of case c (objects already freed):
 * rank 0 starts it and tries to free it while the others have not started
 * (they wait for its message, so its instance cannot have completed):
 * refused with MPI_ERR_REQUEST, the handle unchanged, a second start
 * refused too; the round then completes with the right data. */
static void refused_free_round(const tcase *c, MPI_Request *r, int tag)
{
    MPI_Request keep = *r;
    int go = 1;
    c->fill();
    if (me != 0)
        CHECK_OK(MPI_Recv(&go, 1, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Start(r));
    if (me == 0 && np > 1) {
        CHECK_CLASS(MPI_Request_free(r), MPI_ERR_REQUEST);
        CHECK(*r == keep, "%s: a refused MPI_Request_free changed the handle", c->name);
        CHECK_CLASS(MPI_Start(r), MPI_ERR_REQUEST); /* still active */
        for (int q = 1; q < np; q++)
            CHECK_OK(MPI_Send(&go, 1, MPI_INT, q, tag, MPI_COMM_WORLD));
    }
    CHECK_OK(MPI_Wait(r, MPI_STATUS_IGNORE));
    CHECK(*r == keep, "%s: MPI_Wait changed a persistent request's handle", c->name);
    compare(c->name, 2);
}

/* Persistent request of case c on comm, its objects freed after *_init:
 * two rounds refusing MPI_Request_free while active, then freed. */
static void refused_free_rounds(const tcase *c, int v, MPI_Comm comm, int tag)
{
    MPI_Request r;
    variant = v;
    it = 0;
    make_objects();
    CHECK_OK(c->post(1, comm, &r));
    free_objects();
    for (it = 0; it < 2; it++)
        refused_free_round(c, &r, tag);
    CHECK_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "%s: MPI_Request_free did not reset the handle", c->name);
}

/* Never started, then active (allreduce with a user operation on a
 * derived type; a neighbourhood alltoall). */
static void request_free_rules(void)
{
    MPI_Request r;
    variant = V_AFFINE_PAIR3;
    make_objects();
    CHECK_OK(MPI_Allreduce_init(sbuf, rbuf, C, RT, OP, MPI_COMM_WORLD, INFO, &r));
    free_objects();
    CHECK_OK(MPI_Request_free(&r));
    CHECK(r == MPI_REQUEST_NULL, "MPI_Request_free of an inactive request did not reset it");
    refused_free_rounds(&cases[11], V_AFFINE_PAIR3, MPI_COMM_WORLD, 5); /* allreduce */
    refused_free_rounds(&cases[18], V_SUM, grid, 6);                    /* neighbor_alltoall */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    CHECK(np <= MAXP, "at most %d ranks", MAXP);
    /* errors come back as codes (the checks report them), also from the
     * user functions' MPI_Type_size on a stale handle */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    grid = make_grid();
    for (int d = 0; d < 2; d++)
        CHECK_OK(MPI_Cart_shift(grid, d, 1, &nbr[2 * d], &nbr[2 * d + 1]));
    if (np >= 2) {
        side = me >= np / 2;
        lsize = side ? np - np / 2 : np / 2;
        rsize = np - lsize;
        lrank = side ? me - np / 2 : me;
        rfirst = side ? 0 : np / 2;
        inter = make_inter();
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
        run_case(&cases[i]);
    request_free_rules();
    CHECK(user_calls > 0 || np == 1, "the user operations never ran");
    CHECK_OK(MPI_Comm_free(&grid));
    if (np >= 2)
        CHECK_OK(MPI_Comm_free(&inter));
    if (me == 0)
        printf("mpi_nbc_object_lifetime ok on %d ranks\n", np);
    MPI_Finalize();
    return 0;
}
