/* The pair types (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT,
 * MPI_LONG_DOUBLE_INT, and MPI_FLOAT_INT without padding) in
 * communication, verified byte for byte.
 *
 * A pair's type signature is (value, int): its data is the value and the
 * int, not the C struct's padding.  So n pairs sent as the predefined type
 * must land correctly when received as contiguous(n, pair), as a vector of
 * pairs, or as a struct of the two fields with the C struct's extent, and
 * the other way round; the padding bytes of the receive buffer stay
 * untouched; MPI_BYTE receives exactly the packed stream (value bytes then
 * int bytes per pair).  Every rank sends to rank + 1 and receives from
 * rank - 1 (itself at one rank).  Also: MPI_Get_count / MPI_Get_elements
 * (_x) and MPI_Status_set_elements (_x) on pair types, MPICH's
 * datatype/get_elements_pairtype case ({double, int, double} received as
 * two MPI_DOUBLE_INT: 3 elements), MPI_Pack sizes, truncation, a Bcast with
 * different types on root and the others, and MINLOC / MAXLOC (kernels on
 * the C structs) on the predefined and a derived pair type. */
#include "check.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define N 5

static int rank, size, to, from;

typedef struct pair_desc {
    MPI_Datatype type;
    MPI_Datatype value; /* the first field's type */
    const char *name;
    int vsize;          /* bytes of the value */
    int ioff;           /* offset of the int in the C struct */
    int extent;         /* the C struct's size */
} pair_desc;

#define PAIR(T, VT, S)                                                             \
    {T, VT, #T, (int)sizeof(((S *)0)->v), (int)offsetof(S, i), (int)sizeof(S)}

typedef struct { float v; int i; } float_int;
typedef struct { double v; int i; } double_int;
typedef struct { long v; int i; } long_int;
typedef struct { short v; int i; } short_int;
typedef struct { long double v; int i; } long_double_int;

static const pair_desc pairs[] = {
    PAIR(MPI_DOUBLE_INT, MPI_DOUBLE, double_int),
    PAIR(MPI_LONG_INT, MPI_LONG, long_int),
    PAIR(MPI_SHORT_INT, MPI_SHORT, short_int),
    PAIR(MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, long_double_int),
    PAIR(MPI_FLOAT_INT, MPI_FLOAT, float_int),
};
#define NPAIRS ((int)(sizeof pairs / sizeof pairs[0]))

/* The data bytes of pair k of the sender `src`: value bytes then int bytes
 * (the packed stream), a pattern distinct per byte, pair, sender and test. */
static unsigned char data_byte(int src, int test, int k, int j)
{
    return (unsigned char)(src * 53 + test * 29 + k * 17 + j * 3 + 1);
}

/* Pair k of the sender `src` into struct k * stride of buf (value and int
 * only: the padding and the structs between keep what buf held). */
static void put_pairs(unsigned char *buf, const pair_desc *p, int src, int test, int n,
                      int stride)
{
    int isz = (int)sizeof(int);
    for (int k = 0; k < n; k++) {
        unsigned char *s = buf + (size_t)k * stride * p->extent;
        for (int j = 0; j < p->vsize; j++)
            s[j] = data_byte(src, test, k, j);
        for (int j = 0; j < isz; j++)
            s[p->ioff + j] = data_byte(src, test, k, p->vsize + j);
    }
}

/* The sender's n structs: padding 0xA5, which must never travel. */
static void fill_structs(unsigned char *buf, const pair_desc *p, int src, int test, int n)
{
    memset(buf, 0xA5, (size_t)n * p->extent);
    put_pairs(buf, p, src, test, n, 1);
}

/* What a receive buffer of `slots` structs (0x5A before) must hold. */
static void expect_structs(unsigned char *exp, const pair_desc *p, int src, int test, int n,
                           int stride, int slots)
{
    memset(exp, 0x5A, (size_t)slots * p->extent);
    put_pairs(exp, p, src, test, n, stride);
}

static void same(const unsigned char *got, const unsigned char *exp, size_t bytes,
                 const pair_desc *p, const char *what)
{
    for (size_t i = 0; i < bytes; i++)
        CHECK(got[i] == exp[i], "%s, %s: byte %zu (struct %zu, offset %zu) is 0x%02x, expected "
              "0x%02x", p->name, what, i, i / (size_t)p->extent, i % (size_t)p->extent, got[i],
              exp[i]);
}

/* The ways to describe N pairs (the 'shape' of a side of the transfer):
 * each gives a type and count, and where pair k lives (struct k * stride). */
enum { AS_PAIR, AS_CONTIGUOUS, AS_VECTOR, AS_STRUCT, NSHAPES };
static const char *shape_name[NSHAPES] = {"the pair type", "contiguous(N, pair)",
                                          "vector(N, 1, 2, pair)", "struct{value; int} resized"};

static void shape_type(const pair_desc *p, int shape, MPI_Datatype *t, int *count, int *stride)
{
    *stride = 1;
    *count = N;
    *t = p->type;
    if (shape == AS_CONTIGUOUS) {
        CHECK_OK(MPI_Type_contiguous(N, p->type, t));
        *count = 1;
    } else if (shape == AS_VECTOR) {
        CHECK_OK(MPI_Type_vector(N, 1, 2, p->type, t));
        *count = 1;
        *stride = 2;
    } else if (shape == AS_STRUCT) {
        int bl[2] = {1, 1};
        MPI_Aint dp[2] = {0, p->ioff};
        MPI_Datatype ty[2] = {p->value, MPI_INT}, s;
        CHECK_OK(MPI_Type_create_struct(2, bl, dp, ty, &s));
        CHECK_OK(MPI_Type_create_resized(s, 0, p->extent, t));
        CHECK_OK(MPI_Type_free(&s));
    }
    if (shape != AS_PAIR)
        CHECK_OK(MPI_Type_commit(t));
}

static void shape_free(int shape, MPI_Datatype *t)
{
    if (shape != AS_PAIR)
        CHECK_OK(MPI_Type_free(t));
}

/* Every (send shape, receive shape) pair: byte-checked, with the status. */
static void test_shapes(const pair_desc *p)
{
    size_t bytes = (size_t)2 * N * p->extent;
    unsigned char *sbuf = malloc(bytes), *rbuf = malloc(bytes), *exp = malloc(bytes);
    for (int ss = 0; ss < NSHAPES; ss++) {
        for (int rs = 0; rs < NSHAPES; rs++) {
            int test = ss * NSHAPES + rs;
            MPI_Datatype st, rt;
            int sc, rc, sstride, rstride;
            shape_type(p, ss, &st, &sc, &sstride);
            shape_type(p, rs, &rt, &rc, &rstride);
            /* the sender's pairs at its stride, padding and gaps 0xA5 */
            memset(sbuf, 0xA5, bytes);
            put_pairs(sbuf, p, rank, test, N, sstride);
            memset(rbuf, 0x5A, bytes);
            MPI_Status st_;
            CHECK_OK(MPI_Sendrecv(sbuf, sc, st, to, test, rbuf, rc, rt, from, test,
                                  MPI_COMM_WORLD, &st_));
            expect_structs(exp, p, from, test, N, rstride, 2 * N);
            char what[128];
            snprintf(what, sizeof what, "sent as %s, received as %s", shape_name[ss],
                     shape_name[rs]);
            same(rbuf, exp, bytes, p, what);
            /* the status counts the data: N pairs, 2N basic elements */
            int n;
            CHECK_OK(MPI_Get_count(&st_, p->type, &n));
            CHECK(n == N, "%s, %s: MPI_Get_count %d", p->name, what, n);
            CHECK_OK(MPI_Get_elements(&st_, p->type, &n));
            CHECK(n == 2 * N, "%s, %s: MPI_Get_elements %d", p->name, what, n);
            CHECK_OK(MPI_Get_elements(&st_, rt, &n));
            CHECK(n == 2 * N, "%s, %s: MPI_Get_elements (receive type) %d", p->name, what, n);
            shape_free(ss, &st);
            shape_free(rs, &rt);
        }
    }
    free(sbuf);
    free(rbuf);
    free(exp);
}

/* MPI_BYTE on the receiving side sees the packed stream itself. */
static void test_stream(const pair_desc *p)
{
    int isz = (int)sizeof(int), packed = p->vsize + isz;
    unsigned char sbuf[N * 64], rbuf[N * 64 + 16], exp[N * 64 + 16];
    fill_structs(sbuf, p, rank, 40, N);
    memset(rbuf, 0x5A, sizeof rbuf);
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(sbuf, N, p->type, to, 40, rbuf, (int)sizeof rbuf, MPI_BYTE, from, 40,
                          MPI_COMM_WORLD, &st));
    int n;
    CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == N * packed, "%s as MPI_BYTE: %d bytes, expected %d", p->name, n, N * packed);
    memset(exp, 0x5A, sizeof exp);
    for (int k = 0; k < N; k++)
        for (int j = 0; j < packed; j++)
            exp[k * packed + j] = data_byte(from, 40, k, j);
    same(rbuf, exp, sizeof rbuf, p, "the packed stream received as MPI_BYTE");

    /* MPI_Pack gives the same stream, MPI_Pack_size its length */
    unsigned char packbuf[N * 64];
    int pos = 0, psize;
    CHECK_OK(MPI_Pack(sbuf, N, p->type, packbuf, (int)sizeof packbuf, &pos, MPI_COMM_WORLD));
    CHECK(pos == N * packed, "%s: MPI_Pack wrote %d bytes, expected %d", p->name, pos,
          N * packed);
    for (int k = 0; k < N; k++)
        for (int j = 0; j < packed; j++)
            CHECK(packbuf[k * packed + j] == data_byte(rank, 40, k, j),
                  "%s: MPI_Pack byte %d of pair %d", p->name, j, k);
    CHECK_OK(MPI_Pack_size(N, p->type, MPI_COMM_WORLD, &psize));
    CHECK(psize >= N * packed, "%s: MPI_Pack_size %d", p->name, psize);
    int tsize;
    MPI_Aint lb, extent;
    CHECK_OK(MPI_Type_size(p->type, &tsize));
    CHECK_OK(MPI_Type_get_extent(p->type, &lb, &extent));
    CHECK(tsize == packed && lb == 0 && extent == p->extent, "%s: size %d lb %ld extent %ld",
          p->name, tsize, (long)lb, (long)extent);
}

/* Elements of partial pairs, and setting them in a status. */
static void test_elements(const pair_desc *p)
{
    int isz = (int)sizeof(int), packed = p->vsize + isz;
    unsigned char buf[N * 64], rbuf[N * 64];
    memset(buf, 1, sizeof buf);
    MPI_Status st;
    /* value bytes only of the last pair: 2 * 2 + 1 elements */
    int bytes = 2 * packed + p->vsize;
    CHECK_OK(MPI_Sendrecv(buf, bytes, MPI_BYTE, to, 41, rbuf, bytes, MPI_BYTE, from, 41,
                          MPI_COMM_WORLD, &st));
    int n;
    MPI_Count nx;
    CHECK_OK(MPI_Get_elements(&st, p->type, &n));
    CHECK(n == 5, "%s: %d bytes are %d elements, expected 5", p->name, bytes, n);
    CHECK_OK(MPI_Get_elements_x(&st, p->type, &nx));
    CHECK(nx == 5, "%s: MPI_Get_elements_x %lld", p->name, (long long)nx);
    CHECK_OK(MPI_Get_count(&st, p->type, &n));
    CHECK(n == MPI_UNDEFINED, "%s: count of 2.5 pairs %d", p->name, n);
    /* a cut inside the value: undefined */
    CHECK_OK(MPI_Sendrecv(buf, packed + 1, MPI_BYTE, to, 42, rbuf, packed + 1, MPI_BYTE,
                          from, 42, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Get_elements(&st, p->type, &n));
    CHECK(n == MPI_UNDEFINED, "%s: %d bytes: %d elements, expected MPI_UNDEFINED", p->name,
          packed + 1, n);
    /* set_elements -> bytes of the packed stream */
    CHECK_OK(MPI_Status_set_elements(&st, p->type, 7));
    CHECK_OK(MPI_Get_elements(&st, p->type, &n));
    CHECK(n == 7, "%s: set 7 elements, got %d", p->name, n);
    CHECK_OK(MPI_Get_count(&st, MPI_BYTE, &n));
    CHECK(n == 3 * packed + p->vsize, "%s: 7 elements are %d bytes, expected %d", p->name, n,
          3 * packed + p->vsize);
    CHECK_OK(MPI_Status_set_elements_x(&st, p->type, 8));
    CHECK_OK(MPI_Get_count(&st, p->type, &n));
    CHECK(n == 4, "%s: 8 elements set, count %d", p->name, n);
    CHECK_OK(MPI_Get_elements_x(&st, p->type, &nx));
    CHECK(nx == 8, "%s: 8 elements set, got %lld", p->name, (long long)nx);
}

/* N pairs into room for N - 1: MPI_ERR_TRUNCATE, nothing past the buffer. */
static void test_truncate(const pair_desc *p)
{
    unsigned char sbuf[N * 64], rbuf[N * 64];
    fill_structs(sbuf, p, rank, 43, N);
    memset(rbuf, 0x5A, sizeof rbuf);
    MPI_Request rq;
    CHECK_OK(MPI_Irecv(rbuf, N - 1, p->type, from, 43, MPI_COMM_WORLD, &rq));
    CHECK_OK(MPI_Send(sbuf, N, p->type, to, 43, MPI_COMM_WORLD));
    MPI_Status st;
    CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_TRUNCATE);
    /* the last struct's value and int are not written (its padding never is) */
    size_t last = (size_t)(N - 1) * p->extent;
    for (size_t i = last; i < sizeof rbuf; i++)
        CHECK(rbuf[i] == 0x5A, "%s: truncated receive wrote byte %zu", p->name, i);
}

/* MPICH's datatype/get_elements_pairtype: {double, int, double} sent,
 * received as two MPI_DOUBLE_INT: 3 elements, the fields where they belong. */
static void test_mpich_case(void)
{
    struct { double a; int b; double c; } foo = {1.5, 7, -2.25};
    struct { double a; int b; double c; int d; } bar;
    memset(&bar, 0x5A, sizeof bar);
    int bl[3] = {1, 1, 1};
    MPI_Aint dp[3] = {0, offsetof(__typeof__(foo), b), offsetof(__typeof__(foo), c)};
    MPI_Datatype ty[3] = {MPI_DOUBLE, MPI_INT, MPI_DOUBLE}, st;
    CHECK_OK(MPI_Type_create_struct(3, bl, dp, ty, &st));
    CHECK_OK(MPI_Type_commit(&st));
    MPI_Status status;
    CHECK_OK(MPI_Sendrecv(&foo, 1, st, 0, 0, &bar, 2, MPI_DOUBLE_INT, 0, 0, MPI_COMM_SELF,
                          &status));
    int n;
    CHECK_OK(MPI_Get_elements(&status, MPI_DOUBLE_INT, &n));
    CHECK(n == 3, "{double, int, double} as MPI_DOUBLE_INT: %d elements, expected 3", n);
    CHECK(bar.a == 1.5 && bar.b == 7 && bar.c == -2.25, "fields %g %d %g", bar.a, bar.b, bar.c);
    int untouched;
    memset(&untouched, 0x5A, sizeof untouched);
    CHECK(bar.d == untouched, "the second pair's int was written: %d", bar.d);
    CHECK_OK(MPI_Type_free(&st));
}

/* A collective with different types on root and the others. */
static void test_bcast(const pair_desc *p)
{
    unsigned char buf[2 * N * 64], exp[2 * N * 64];
    size_t bytes = (size_t)2 * N * p->extent;
    int root = size - 1, shape = rank == root ? AS_PAIR : rank % 2 ? AS_VECTOR : AS_CONTIGUOUS;
    MPI_Datatype t;
    int count, stride;
    shape_type(p, shape, &t, &count, &stride);
    memset(buf, 0x5A, bytes);
    if (rank == root)
        fill_structs(buf, p, root, 44, N);
    CHECK_OK(MPI_Bcast(buf, count, t, root, MPI_COMM_WORLD));
    if (rank != root) {
        expect_structs(exp, p, root, 44, N, stride, 2 * N);
        same(buf, exp, bytes, p, shape == AS_VECTOR ? "bcast into a vector"
                                                    : "bcast into a contiguous type");
    }
    shape_free(shape, &t);
}

/* MINLOC / MAXLOC on the C structs, predefined and derived. */
static void test_reductions(void)
{
    double_int in[N], out[N];
    for (int k = 0; k < N; k++) {
        in[k].v = (double)((rank * 7 + k * 3) % 5); /* ties broken by the lower index */
        in[k].i = rank;
    }
    CHECK_OK(MPI_Allreduce(in, out, N, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    for (int k = 0; k < N; k++) {
        double best = 1e9;
        int at = -1;
        for (int r = 0; r < size; r++)
            if ((double)((r * 7 + k * 3) % 5) < best)
                best = (double)((r * 7 + k * 3) % 5), at = r;
        CHECK(out[k].v == best && out[k].i == at, "MINLOC %d: (%g, %d), expected (%g, %d)", k,
              out[k].v, out[k].i, best, at);
    }
    MPI_Datatype c;
    CHECK_OK(MPI_Type_contiguous(N, MPI_SHORT_INT, &c));
    CHECK_OK(MPI_Type_commit(&c));
    short_int sin[N], sout[N];
    for (int k = 0; k < N; k++) {
        sin[k].v = (short)(rank * (k + 1));
        sin[k].i = rank;
    }
    CHECK_OK(MPI_Allreduce(sin, sout, 1, c, MPI_MAXLOC, MPI_COMM_WORLD));
    for (int k = 0; k < N; k++)
        CHECK(sout[k].v == (short)((size - 1) * (k + 1)) && sout[k].i == size - 1,
              "MAXLOC on contiguous(N, MPI_SHORT_INT) %d: (%d, %d)", k, sout[k].v, sout[k].i);
    CHECK_OK(MPI_Type_free(&c));
    long_double_int lin = {(long double)(rank % 3), rank}, lout;
    CHECK_OK(MPI_Allreduce(&lin, &lout, 1, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int want = size >= 3 ? 2 : size - 1;
    CHECK(lout.v == (long double)(want % 3) && lout.i == want, "MAXLOC long double: (%Lg, %d)",
          lout.v, lout.i);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    to = (rank + 1) % size;
    from = (rank + size - 1) % size;
    for (int i = 0; i < NPAIRS; i++) {
        test_shapes(&pairs[i]);
        test_stream(&pairs[i]);
        test_elements(&pairs[i]);
        test_truncate(&pairs[i]);
        test_bcast(&pairs[i]);
    }
    test_mpich_case();
    test_reductions();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("pair types ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
