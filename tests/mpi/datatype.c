/* The MPI datatype chapter through the MPI API (src/api/mpi/datatype.c,
 * pack.c, type_attr.c, type_elements.c, datatype_layout.c):
 *  - every constructor (int and large-count forms, the MPI-1 ones), with
 *    size, lb/extent, true lb/extent and the packed bytes checked;
 *  - envelope/contents of each, and a rebuild from the contents that must
 *    give the same type (same bounds, same packed bytes); predefined types
 *    are MPI_COMBINER_NAMED;
 *  - MPI_Pack/MPI_Unpack with a running position, MPI_Pack_size, truncation;
 *  - external32: byte images of integers, doubles, long doubles, MPI_LONG's
 *    4 bytes and its conversion error, a struct round trip;
 *  - MPI_Get_address / MPI_Aint_add / MPI_Aint_diff and MPI_BOTTOM;
 *  - names, attributes (copy/delete callbacks on dup/free), keyvals;
 *  - MPI_Get_elements on a derived type from a real receive;
 *  - the layout the communication layers use (fmpl_mpi_type_layout,
 *    fmpl_mpi_type_offset) and communication with a derived type;
 *  - errors: uncommitted types in MPI_Pack and MPI_Send, freeing a
 *    predefined type, bad handles and arguments (MPI_ERRORS_RETURN).
 * Runs on any number of ranks; the point-to-point part uses ranks 0 and 1. */
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* Internal functions of the binding, tested directly (libmpi exports them). */
int fmpl_mpi_type_layout(MPI_Datatype t, MPI_Aint *size, int *contiguous);
int fmpl_mpi_type_offset(MPI_Datatype t, MPI_Aint *true_lb);

static int rank, nranks;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_datatype rank %d line %d: ", rank, __LINE__);     \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

#define OK(call)                                                                   \
    do {                                                                           \
        int rc_ = (call);                                                          \
        EXPECT(rc_ == MPI_SUCCESS, "%s returned %d", #call, rc_);                  \
    } while (0)

/* The call fails with error class `cls`. */
#define FAILS(cls, call)                                                           \
    do {                                                                           \
        int rc_ = (call), c_ = -1;                                                 \
        MPI_Error_class(rc_, &c_);                                                 \
        EXPECT(rc_ != MPI_SUCCESS && c_ == (cls), "%s gave %d (class %d), want class %d", \
               #call, rc_, c_, (cls));                                             \
    } while (0)

static void bounds(MPI_Datatype t, MPI_Aint size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb,
                   MPI_Aint textent, int line)
{
    int s;
    MPI_Count sc, sx, lbc, exc;
    MPI_Aint l, e, a, b;
    int rc = MPI_Type_size(t, &s);
    EXPECT(rc == MPI_SUCCESS, "line %d: MPI_Type_size of 0x%x returned %d", line, (unsigned)t, rc);
    OK(MPI_Type_size_c(t, &sc));
    OK(MPI_Type_size_x(t, &sx));
    OK(MPI_Type_get_extent(t, &l, &e));
    OK(MPI_Type_get_true_extent(t, &a, &b));
    EXPECT(s == size && sc == size && sx == size, "line %d: size %d, want %ld", line, s, (long)size);
    EXPECT(l == lb && e == extent, "line %d: lb %ld extent %ld, want %ld %ld", line, (long)l,
           (long)e, (long)lb, (long)extent);
    EXPECT(a == tlb && b == textent, "line %d: true lb %ld extent %ld, want %ld %ld", line,
           (long)a, (long)b, (long)tlb, (long)textent);
    OK(MPI_Type_get_extent_c(t, &lbc, &exc));
    EXPECT(lbc == lb && exc == extent, "line %d: _c extent", line);
    OK(MPI_Type_get_extent_x(t, &lbc, &exc));
    EXPECT(lbc == lb && exc == extent, "line %d: _x extent", line);
    OK(MPI_Type_get_true_extent_c(t, &lbc, &exc));
    EXPECT(lbc == tlb && exc == textent, "line %d: _c true extent", line);
    OK(MPI_Type_get_true_extent_x(t, &lbc, &exc));
    EXPECT(lbc == tlb && exc == textent, "line %d: _x true extent", line);
}
#define BOUNDS(t, size, lb, extent, tlb, textent) bounds(t, size, lb, extent, tlb, textent, __LINE__)

/* An int array 0, 1, 2, ... for packing: ints at index i hold i. */
static int src_ints[256];

/* Pack one element of t from src_ints (+ base bytes) and compare with the
 * expected ints. */
static void packs_ints(MPI_Datatype t, int count, const int *want, int n, int line)
{
    char buf[1024];
    int pos = 0, ps;
    OK(MPI_Pack_size(count, t, MPI_COMM_WORLD, &ps));
    EXPECT(ps == n * (int)sizeof(int), "line %d: pack size %d, want %d", line, ps,
           n * (int)sizeof(int));
    OK(MPI_Pack(src_ints, count, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    EXPECT(pos == ps, "line %d: position %d after packing %d bytes", line, pos, ps);
    for (int i = 0; i < n; i++) {
        int v;
        memcpy(&v, buf + i * sizeof(int), sizeof v);
        EXPECT(v == want[i], "line %d: packed int %d is %d, want %d", line, i, v, want[i]);
    }
    /* and back: unpack into a zeroed array, the selected ints reappear */
    int back[256] = {0};
    pos = 0;
    OK(MPI_Unpack(buf, ps, &pos, back, count, t, MPI_COMM_WORLD));
    EXPECT(pos == ps, "line %d: unpack position %d", line, pos);
    for (int i = 0; i < n; i++)
        EXPECT(back[want[i]] == want[i], "line %d: unpacked int %d missing", line, want[i]);
}
#define PACKS_INTS(t, count, ...)                                                  \
    do {                                                                           \
        const int w_[] = {__VA_ARGS__};                                            \
        packs_ints(t, count, w_, (int)(sizeof w_ / sizeof *w_), __LINE__);         \
    } while (0)

static void free_if_derived(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Count ci, ca, cc, cd;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) {
        OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb));
    }
    if (comb != MPI_COMBINER_NAMED)
        OK(MPI_Type_free(&t));
}

/* Rebuild t from its envelope and contents with the constructor they name
 * (int forms, or _c forms when the envelope has large counts). */
static MPI_Datatype rebuild(MPI_Datatype t)
{
    MPI_Count ni, na, nc, nd;
    int comb;
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nc, &nd, &comb));
    int *I = malloc((ni + 1) * sizeof *I);
    MPI_Aint *A = malloc((na + 1) * sizeof *A);
    MPI_Count *C = malloc((nc + 1) * sizeof *C);
    MPI_Datatype *D = malloc((nd + 1) * sizeof *D);
    MPI_Datatype r = MPI_DATATYPE_NULL;
    if (nc == 0) {
        int ni2, na2, nd2, comb2;
        OK(MPI_Type_get_envelope(t, &ni2, &na2, &nd2, &comb2));
        EXPECT(ni2 == ni && na2 == na && nd2 == nd && comb2 == comb, "int envelope differs");
        OK(MPI_Type_get_contents(t, ni2, na2, nd2, I, A, D));
    } else {
        OK(MPI_Type_get_contents_c(t, ni, na, nc, nd, I, A, C, D));
    }
    switch (comb) {
    case MPI_COMBINER_DUP: OK(MPI_Type_dup(D[0], &r)); break;
    case MPI_COMBINER_CONTIGUOUS:
        if (nc) OK(MPI_Type_contiguous_c(C[0], D[0], &r));
        else OK(MPI_Type_contiguous(I[0], D[0], &r));
        break;
    case MPI_COMBINER_VECTOR:
        if (nc) OK(MPI_Type_vector_c(C[0], C[1], C[2], D[0], &r));
        else OK(MPI_Type_vector(I[0], I[1], I[2], D[0], &r));
        break;
    case MPI_COMBINER_HVECTOR:
        if (nc) OK(MPI_Type_create_hvector_c(C[0], C[1], C[2], D[0], &r));
        else OK(MPI_Type_create_hvector(I[0], I[1], A[0], D[0], &r));
        break;
    case MPI_COMBINER_INDEXED:
        if (nc) OK(MPI_Type_indexed_c(C[0], C + 1, C + 1 + C[0], D[0], &r));
        else OK(MPI_Type_indexed(I[0], I + 1, I + 1 + I[0], D[0], &r));
        break;
    case MPI_COMBINER_HINDEXED:
        if (nc) OK(MPI_Type_create_hindexed_c(C[0], C + 1, C + 1 + C[0], D[0], &r));
        else OK(MPI_Type_create_hindexed(I[0], I + 1, A, D[0], &r));
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        if (nc) OK(MPI_Type_create_indexed_block_c(C[0], C[1], C + 2, D[0], &r));
        else OK(MPI_Type_create_indexed_block(I[0], I[1], I + 2, D[0], &r));
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        if (nc) OK(MPI_Type_create_hindexed_block_c(C[0], C[1], C + 2, D[0], &r));
        else OK(MPI_Type_create_hindexed_block(I[0], I[1], A, D[0], &r));
        break;
    case MPI_COMBINER_STRUCT:
        if (nc) OK(MPI_Type_create_struct_c(C[0], C + 1, C + 1 + C[0], D, &r));
        else OK(MPI_Type_create_struct(I[0], I + 1, A, D, &r));
        break;
    case MPI_COMBINER_SUBARRAY: {
        if (nc) {
            int n = I[0];
            OK(MPI_Type_create_subarray_c(n, C, C + n, C + 2 * n, I[1], D[0], &r));
        } else {
            int n = I[0];
            OK(MPI_Type_create_subarray(n, I + 1, I + 1 + n, I + 1 + 2 * n, I[1 + 3 * n], D[0], &r));
        }
        break;
    }
    case MPI_COMBINER_DARRAY: {
        int n = I[2];
        if (nc)
            OK(MPI_Type_create_darray_c(I[0], I[1], n, C, I + 3, I + 3 + n, I + 3 + 2 * n,
                                        I[3 + 3 * n], D[0], &r));
        else
            OK(MPI_Type_create_darray(I[0], I[1], n, I + 3, I + 3 + n, I + 3 + 2 * n,
                                      I + 3 + 3 * n, I[3 + 4 * n], D[0], &r));
        break;
    }
    case MPI_COMBINER_RESIZED:
        if (nc) OK(MPI_Type_create_resized_c(D[0], C[0], C[1], &r));
        else OK(MPI_Type_create_resized(D[0], A[0], A[1], &r));
        break;
    default: EXPECT(0, "unexpected combiner %d", comb);
    }
    for (MPI_Count i = 0; i < nd; i++)
        free_if_derived(D[i]);
    free(I);
    free(A);
    free(C);
    free(D);
    OK(MPI_Type_commit(&r));
    return r;
}

/* t and its rebuild agree on bounds and on the bytes they pack from a
 * pattern buffer (with the type's lb inside it). */
static void same_as_rebuild(MPI_Datatype t, int line)
{
    MPI_Datatype r = rebuild(t);
    MPI_Aint l1, e1, l2, e2, tl1, te1, tl2, te2;
    int s1, s2;
    OK(MPI_Type_get_extent(t, &l1, &e1));
    OK(MPI_Type_get_extent(r, &l2, &e2));
    OK(MPI_Type_get_true_extent(t, &tl1, &te1));
    OK(MPI_Type_get_true_extent(r, &tl2, &te2));
    OK(MPI_Type_size(t, &s1));
    OK(MPI_Type_size(r, &s2));
    EXPECT(l1 == l2 && e1 == e2 && tl1 == tl2 && te1 == te2 && s1 == s2,
           "line %d: rebuilt type differs: lb %ld/%ld extent %ld/%ld true %ld/%ld %ld/%ld size %d/%d",
           line, (long)l1, (long)l2, (long)e1, (long)e2, (long)tl1, (long)tl2, (long)te1,
           (long)te2, s1, s2);
    enum { N = 3 };
    MPI_Aint span = te1 + (N - 1) * (e1 > 0 ? e1 : -e1) + 64;
    unsigned char *pat = malloc(span + 2 * 64), *p1 = malloc(N * s1 + 1), *p2 = malloc(N * s1 + 1);
    for (MPI_Aint i = 0; i < span + 128; i++)
        pat[i] = (unsigned char)(i * 7 + 1);
    const unsigned char *base = pat + 64 - tl1;   /* data from pat + 64 on */
    int q1 = 0, q2 = 0;
    int cnt = e1 > 0 ? N : 1;
    OK(MPI_Pack(base, cnt, t, p1, N * s1 + 1, &q1, MPI_COMM_WORLD));
    OK(MPI_Pack(base, cnt, r, p2, N * s1 + 1, &q2, MPI_COMM_WORLD));
    EXPECT(q1 == q2 && memcmp(p1, p2, q1) == 0, "line %d: rebuilt type packs other bytes", line);
    free(pat);
    free(p1);
    free(p2);
    OK(MPI_Type_free(&r));
}
#define SAME_AS_REBUILD(t) same_as_rebuild(t, __LINE__)

static void envelope_is(MPI_Datatype t, int ni, int na, int nd, int comb, int line)
{
    int a, b, c, d;
    OK(MPI_Type_get_envelope(t, &a, &b, &c, &d));
    EXPECT(a == ni && b == na && c == nd && d == comb,
           "line %d: envelope %d %d %d combiner %d, want %d %d %d %d", line, a, b, c, d, ni, na,
           nd, comb);
}
#define ENVELOPE_IS(t, ni, na, nd, comb) envelope_is(t, ni, na, nd, comb, __LINE__)

/* ------------------------------------------------------------ predefined */

static void test_predefined(void)
{
    BOUNDS(MPI_INT, 4, 0, 4, 0, 4);
    BOUNDS(MPI_DOUBLE, 8, 0, 8, 0, 8);
    BOUNDS(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    BOUNDS(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    BOUNDS(MPI_2INT, 8, 0, 8, 0, 8);
    BOUNDS(MPI_LB, 0, 0, 0, 0, 0);
    ENVELOPE_IS(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);
    ENVELOPE_IS(MPI_FLOAT_INT, 0, 0, 0, MPI_COMBINER_NAMED);
    ENVELOPE_IS(MPI_UB, 0, 0, 0, MPI_COMBINER_NAMED);
    MPI_Count ci, ca, cc, cd;
    int comb;
    OK(MPI_Type_get_envelope_c(MPI_DOUBLE, &ci, &ca, &cc, &cd, &comb));
    EXPECT(ci == 0 && ca == 0 && cc == 0 && cd == 0 && comb == MPI_COMBINER_NAMED, "envelope_c");
    int I[1];
    MPI_Aint A[1];
    MPI_Datatype D[1];
    FAILS(MPI_ERR_TYPE, MPI_Type_get_contents(MPI_INT, 1, 1, 1, I, A, D));

    struct { MPI_Datatype t; const char *name; } names[] = {
        {MPI_INT, "MPI_INT"}, {MPI_DOUBLE, "MPI_DOUBLE"}, {MPI_CHAR, "MPI_CHAR"},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT"}, {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"},
        {MPI_INTEGER, "MPI_INTEGER"}, {MPI_UINT64_T, "MPI_UINT64_T"}, {MPI_LB, "MPI_LB"},
        {MPI_UB, "MPI_UB"}, {MPI_C_BOOL, "MPI_C_BOOL"}, {MPI_PACKED, "MPI_PACKED"},
    };
    for (unsigned i = 0; i < sizeof names / sizeof *names; i++) {
        char n[MPI_MAX_OBJECT_NAME];
        int len;
        OK(MPI_Type_get_name(names[i].t, n, &len));
        EXPECT(strcmp(n, names[i].name) == 0 && len == (int)strlen(names[i].name),
               "name of 0x%x is \"%s\", want %s", (unsigned)names[i].t, n, names[i].name);
    }
    /* predefined types may be renamed (and renamed back) */
    char n[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_set_name(MPI_FLOAT, "my float"));
    OK(MPI_Type_get_name(MPI_FLOAT, n, &len));
    EXPECT(strcmp(n, "my float") == 0 && len == 8, "renamed MPI_FLOAT is %s", n);
    OK(MPI_Type_set_name(MPI_FLOAT, "MPI_FLOAT"));

    MPI_Datatype t = MPI_INT;
    OK(MPI_Type_commit(&t));   /* a no-op */
    FAILS(MPI_ERR_TYPE, MPI_Type_free(&t));
    EXPECT(t == MPI_INT, "handle changed by a failed free");
    t = MPI_DOUBLE_INT;
    FAILS(MPI_ERR_TYPE, MPI_Type_free(&t));
    t = MPI_LB;
    FAILS(MPI_ERR_TYPE, MPI_Type_free(&t));
    t = MPI_DATATYPE_NULL;
    FAILS(MPI_ERR_TYPE, MPI_Type_free(&t));
    int s;
    FAILS(MPI_ERR_TYPE, MPI_Type_size(MPI_DATATYPE_NULL, &s));
    FAILS(MPI_ERR_TYPE, MPI_Type_size((MPI_Datatype)0x4c000099, &s));
    FAILS(MPI_ERR_TYPE, MPI_Type_size((MPI_Datatype)0x8c000005, &s));
    FAILS(MPI_ERR_TYPE, MPI_Type_size((MPI_Datatype)0x8c0fffff, &s));

    MPI_Datatype m;
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m));
    EXPECT(m == MPI_REAL8, "match real 8");
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m));
    EXPECT(m == MPI_INTEGER4, "match integer 4");
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &m));
    EXPECT(m == MPI_COMPLEX16, "match complex 16");
    OK(MPI_Type_size(m, &s));
    EXPECT(s == 16, "complex16 size");
    FAILS(MPI_ERR_ARG, MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &m));
    FAILS(MPI_ERR_ARG, MPI_Type_match_size(99, 4, &m));
    /* Parameterized Fortran 90 types (type_f90.c): the smallest kind that
     * reaches precision p and range r; its own predefined handle with the
     * F90 combiner; the same arguments give the same handle. */
    MPI_Datatype f;
    OK(MPI_Type_create_f90_real(6, 30, &f));
    OK(MPI_Type_size(f, &s));
    EXPECT(s == 4, "REAL(p=6, r=30) has %d bytes", s);
    ENVELOPE_IS(f, 2, 0, 0, MPI_COMBINER_F90_REAL);
    int ints[2] = {0, 0};
    OK(MPI_Type_get_contents(f, 2, 0, 0, ints, NULL, NULL));
    EXPECT(ints[0] == 6 && ints[1] == 30, "contents %d %d", ints[0], ints[1]);
    OK(MPI_Type_create_f90_real(6, 30, &m));
    EXPECT(m == f, "a second call made another handle");
    FAILS(MPI_ERR_TYPE, MPI_Type_free(&m));
    OK(MPI_Type_create_f90_real(7, MPI_UNDEFINED, &f));
    OK(MPI_Type_size(f, &s));
    EXPECT(s == 8, "REAL(p=7) has %d bytes", s);
    OK(MPI_Type_create_f90_real(MPI_UNDEFINED, 400, &f));
    OK(MPI_Type_size(f, &s));
    EXPECT(s == 16, "REAL(r=400) has %d bytes", s);
    FAILS(MPI_ERR_ARG, MPI_Type_create_f90_real(40, MPI_UNDEFINED, &f));
    FAILS(MPI_ERR_ARG, MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &f));
    OK(MPI_Type_create_f90_complex(15, 300, &f));
    OK(MPI_Type_size(f, &s));
    EXPECT(s == 16, "COMPLEX(15, 300) has %d bytes", s);
    ENVELOPE_IS(f, 2, 0, 0, MPI_COMBINER_F90_COMPLEX);
    OK(MPI_Type_create_f90_integer(9, &f));
    OK(MPI_Type_size(f, &s));
    EXPECT(s == 4, "INTEGER(r=9) has %d bytes", s);
    ENVELOPE_IS(f, 1, 0, 0, MPI_COMBINER_F90_INTEGER);
    OK(MPI_Type_get_contents(f, 1, 0, 0, ints, NULL, NULL));
    EXPECT(ints[0] == 9, "integer contents %d", ints[0]);
    OK(MPI_Type_create_f90_integer(10, &f));
    OK(MPI_Type_size(f, &s));
    EXPECT(s == 8, "INTEGER(r=10) has %d bytes", s);
    FAILS(MPI_ERR_ARG, MPI_Type_create_f90_integer(19, &f));
    /* It communicates as the sized type: a reduction on it. */
    long long v = 40, sum = 0;
    OK(MPI_Allreduce(&v, &sum, 1, f, MPI_SUM, MPI_COMM_SELF));
    EXPECT(sum == 40, "sum over an F90 integer type: %lld", sum);
}

/* ------------------------------------------------------------ constructors */

static void test_constructors(void)
{
    MPI_Datatype t, u;

    /* contiguous */
    OK(MPI_Type_contiguous(5, MPI_INT, &t));
    BOUNDS(t, 20, 0, 20, 0, 20);
    ENVELOPE_IS(t, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
    {
        int I[1];
        MPI_Aint A[1];
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents(t, 1, 0, 1, I, A, D));
        EXPECT(I[0] == 5 && D[0] == MPI_INT, "contiguous contents %d 0x%x", I[0], (unsigned)D[0]);
        FAILS(MPI_ERR_ARG, MPI_Type_get_contents(t, 0, 0, 1, I, A, D));
    }
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 1, 0, 1, 2, 3, 4);
    PACKS_INTS(t, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9);
    SAME_AS_REBUILD(t);
    OK(MPI_Type_free(&t));
    EXPECT(t == MPI_DATATYPE_NULL, "free sets MPI_DATATYPE_NULL");

    /* vector: 3 blocks of 2 ints, stride 4 ints */
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &t));
    BOUNDS(t, 24, 0, 40, 0, 40);
    ENVELOPE_IS(t, 3, 0, 1, MPI_COMBINER_VECTOR);
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 1, 0, 1, 4, 5, 8, 9);
    PACKS_INTS(t, 2, 0, 1, 4, 5, 8, 9, 10, 11, 14, 15, 18, 19);
    SAME_AS_REBUILD(t);
    /* negative stride */
    OK(MPI_Type_vector(3, 1, -2, MPI_INT, &u));
    BOUNDS(u, 12, -16, 20, -16, 20);
    OK(MPI_Type_commit(&u));
    SAME_AS_REBUILD(u);
    OK(MPI_Type_free(&u));
    OK(MPI_Type_free(&t));

    /* hvector (and the MPI-1 name): strides in bytes */
    OK(MPI_Type_create_hvector(3, 1, 12, MPI_INT, &t));
    BOUNDS(t, 12, 0, 28, 0, 28);
    ENVELOPE_IS(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
    {
        int I[2];
        MPI_Aint A[1];
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents(t, 2, 1, 1, I, A, D));
        EXPECT(I[0] == 3 && I[1] == 1 && A[0] == 12 && D[0] == MPI_INT, "hvector contents");
    }
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 1, 0, 3, 6);
    SAME_AS_REBUILD(t);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_hvector(2, 2, 20, MPI_INT, &t));
    BOUNDS(t, 16, 0, 28, 0, 28);
    ENVELOPE_IS(t, 2, 1, 1, MPI_COMBINER_HVECTOR);
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 1, 0, 1, 5, 6);
    OK(MPI_Type_free(&t));

    /* indexed */
    {
        int bl[] = {1, 2, 3}, dp[] = {0, 3, 7};
        OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &t));
        BOUNDS(t, 24, 0, 40, 0, 40);
        ENVELOPE_IS(t, 7, 0, 1, MPI_COMBINER_INDEXED);
        int I[7];
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents(t, 7, 0, 1, I, NULL, D));
        EXPECT(I[0] == 3 && I[1] == 1 && I[3] == 3 && I[4] == 0 && I[6] == 7, "indexed contents");
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 0, 3, 4, 7, 8, 9);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        /* starting at a displacement: true_lb > 0, a zero-length block */
        int bl2[] = {0, 2}, dp2[] = {0, 2};
        OK(MPI_Type_indexed(2, bl2, dp2, MPI_INT, &t));
        BOUNDS(t, 8, 8, 8, 8, 8);   /* a zero-length block has no typemap entry */
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 2, 3);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
    }

    /* hindexed (and the MPI-1 name): out-of-order blocks */
    {
        int bl[] = {2, 1};
        MPI_Aint dp[] = {8, 0};
        OK(MPI_Type_create_hindexed(2, bl, dp, MPI_INT, &t));
        BOUNDS(t, 12, 0, 16, 0, 16);
        ENVELOPE_IS(t, 3, 2, 1, MPI_COMBINER_HINDEXED);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 2, 3, 0);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        OK(MPI_Type_hindexed(2, bl, dp, MPI_INT, &t));
        ENVELOPE_IS(t, 3, 2, 1, MPI_COMBINER_HINDEXED);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 2, 3, 0);
        OK(MPI_Type_free(&t));
    }

    /* indexed_block, hindexed_block */
    {
        int dp[] = {6, 0, 3};
        OK(MPI_Type_create_indexed_block(3, 2, dp, MPI_INT, &t));
        BOUNDS(t, 24, 0, 32, 0, 32);
        ENVELOPE_IS(t, 5, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 6, 7, 0, 1, 3, 4);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        MPI_Aint hd[] = {4, 20};
        OK(MPI_Type_create_hindexed_block(2, 1, hd, MPI_INT, &t));
        BOUNDS(t, 8, 4, 20, 4, 20);
        ENVELOPE_IS(t, 2, 2, 1, MPI_COMBINER_HINDEXED_BLOCK);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 1, 5);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
    }

    /* struct: a C struct's layout, extent rounded to its alignment */
    {
        struct s { double d; char c; int i[2]; } x[2];
        int bl[] = {1, 1, 2};
        MPI_Aint dp[] = {offsetof(struct s, d), offsetof(struct s, c), offsetof(struct s, i)};
        MPI_Datatype ty[] = {MPI_DOUBLE, MPI_CHAR, MPI_INT};
        OK(MPI_Type_create_struct(3, bl, dp, ty, &t));
        BOUNDS(t, 17, 0, sizeof(struct s), 0, offsetof(struct s, i) + 8);
        ENVELOPE_IS(t, 4, 3, 3, MPI_COMBINER_STRUCT);
        MPI_Datatype D[3];
        int I[4];
        MPI_Aint A[3];
        OK(MPI_Type_get_contents(t, 4, 3, 3, I, A, D));
        EXPECT(I[0] == 3 && I[3] == 2 && A[1] == 8 && D[0] == MPI_DOUBLE && D[1] == MPI_CHAR &&
                   D[2] == MPI_INT, "struct contents");
        OK(MPI_Type_commit(&t));
        x[0] = (struct s){1.5, 'a', {7, 8}};
        x[1] = (struct s){-2.5, 'b', {9, 10}};
        char buf[64];
        int pos = 0;
        OK(MPI_Pack(x, 2, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
        EXPECT(pos == 34, "struct packs %d bytes", pos);
        struct s y[2];
        memset(y, 0, sizeof y);
        pos = 0;
        OK(MPI_Unpack(buf, 34, &pos, y, 2, t, MPI_COMM_WORLD));
        EXPECT(pos == 34 && y[1].d == -2.5 && y[1].c == 'b' && y[1].i[1] == 10 && y[0].i[0] == 7,
               "struct round trip");
        SAME_AS_REBUILD(t);
        /* a struct of derived types */
        OK(MPI_Type_vector(2, 1, 2, MPI_INT, &u));
        int bl2[] = {1, 2};
        MPI_Aint dp2[] = {0, 32};
        MPI_Datatype ty2[] = {u, t};
        MPI_Datatype v;
        OK(MPI_Type_create_struct(2, bl2, dp2, ty2, &v));
        OK(MPI_Type_free(&u));      /* v keeps its components alive */
        OK(MPI_Type_free(&t));
        OK(MPI_Type_commit(&v));
        int s;
        OK(MPI_Type_size(v, &s));
        EXPECT(s == 8 + 34, "struct of derived types size %d", s);
        MPI_Datatype Dv[2];
        int Iv[3];
        MPI_Aint Av[2];
        OK(MPI_Type_get_contents(v, 3, 2, 2, Iv, Av, Dv));
        ENVELOPE_IS(Dv[0], 3, 0, 1, MPI_COMBINER_VECTOR);
        ENVELOPE_IS(Dv[1], 4, 3, 3, MPI_COMBINER_STRUCT);
        OK(MPI_Type_free(&Dv[0]));   /* returned derived handles are the caller's */
        OK(MPI_Type_free(&Dv[1]));
        SAME_AS_REBUILD(v);
        OK(MPI_Type_free(&v));
    }

    /* the MPI-1 struct with bound markers */
    {
        int bl[] = {1, 1, 1};
        MPI_Aint dp[] = {-4, 0, 16};
        MPI_Datatype ty[] = {MPI_LB, MPI_INT, MPI_UB};
        OK(MPI_Type_struct(3, bl, dp, ty, &t));
        BOUNDS(t, 4, -4, 20, 0, 4);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 3, 0, 5, 10);
        SAME_AS_REBUILD(t);
        MPI_Aint e, l, ub;
        OK(MPI_Type_extent(t, &e));
        OK(MPI_Type_lb(t, &l));
        OK(MPI_Type_ub(t, &ub));
        EXPECT(e == 20 && l == -4 && ub == 16, "MPI-1 bounds %ld %ld %ld", (long)e, (long)l,
               (long)ub);
        OK(MPI_Type_free(&t));
    }

    /* subarray: rows 1-2, columns 1-3 of a 4 x 5 array */
    {
        int sizes[] = {4, 5}, sub[] = {2, 3}, st[] = {1, 1};
        OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t));
        BOUNDS(t, 24, 0, 80, 24, 32);
        ENVELOPE_IS(t, 8, 0, 1, MPI_COMBINER_SUBARRAY);
        int I[8];
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents(t, 8, 0, 1, I, NULL, D));
        EXPECT(I[0] == 2 && I[1] == 4 && I[4] == 3 && I[6] == 1 && I[7] == MPI_ORDER_C,
               "subarray contents order %d", I[7]);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 6, 7, 8, 11, 12, 13);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        /* Fortran order: the first index varies fastest */
        OK(MPI_Type_create_subarray(2, sizes, sub, st, MPI_ORDER_FORTRAN, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        /* element (i, j) at i + 4 j: i in 1-2, j in 1-3 */
        PACKS_INTS(t, 1, 5, 6, 9, 10, 13, 14);
        OK(MPI_Type_get_contents(t, 8, 0, 1, I, NULL, D));
        EXPECT(I[7] == MPI_ORDER_FORTRAN, "subarray order %d", I[7]);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        FAILS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sizes, sub, st, 99, MPI_INT, &t));
        FAILS(MPI_ERR_DIMS, MPI_Type_create_subarray(0, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t));
        int bad[] = {3, 1};
        FAILS(MPI_ERR_ARG, MPI_Type_create_subarray(2, sizes, sub, bad, MPI_ORDER_C, MPI_INT, &t));
    }

    /* darray: a 4 x 6 array on a 2 x 2 grid, rows BLOCK, columns CYCLIC */
    {
        int gs[] = {4, 6}, ds[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            da[] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG}, ps[] = {2, 2};
        OK(MPI_Type_create_darray(4, 3, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
        int s;
        OK(MPI_Type_size(t, &s));
        MPI_Aint lb, ext;
        OK(MPI_Type_get_extent(t, &lb, &ext));
        EXPECT(s == 24 && lb == 0 && ext == 96, "darray size %d extent %ld", s, (long)ext);
        ENVELOPE_IS(t, 12, 0, 1, MPI_COMBINER_DARRAY);
        int I[12];
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents(t, 12, 0, 1, I, NULL, D));
        EXPECT(I[0] == 4 && I[1] == 3 && I[2] == 2 && I[3] == 4 && I[4] == 6 &&
                   I[5] == MPI_DISTRIBUTE_BLOCK && I[6] == MPI_DISTRIBUTE_CYCLIC &&
                   I[7] == MPI_DISTRIBUTE_DFLT_DARG && I[8] == MPI_DISTRIBUTE_DFLT_DARG &&
                   I[9] == 2 && I[11] == MPI_ORDER_C,
               "darray contents");
        OK(MPI_Type_commit(&t));
        /* rank 3 = grid (1, 1): rows 2-3, columns 1, 3, 5 */
        PACKS_INTS(t, 1, 13, 15, 17, 19, 21, 23);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        int ds2[] = {MPI_DISTRIBUTE_NONE, 77};
        FAILS(MPI_ERR_ARG, MPI_Type_create_darray(4, 3, 2, gs, ds2, da, ps, MPI_ORDER_C, MPI_INT, &t));
        int da2[] = {0, 1};
        FAILS(MPI_ERR_ARG, MPI_Type_create_darray(4, 3, 2, gs, ds, da2, ps, MPI_ORDER_C, MPI_INT, &t));
        FAILS(MPI_ERR_ARG, MPI_Type_create_darray(4, 4, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
        int ps2[] = {2, 3};
        FAILS(MPI_ERR_ARG, MPI_Type_create_darray(4, 0, 2, gs, ds, da, ps2, MPI_ORDER_C, MPI_INT, &t));
        /* Fortran order, cyclic(2) rows over the whole job */
        int gs1[] = {7}, ds1[] = {MPI_DISTRIBUTE_CYCLIC}, da1[] = {2}, ps1[] = {nranks};
        OK(MPI_Type_create_darray(nranks, rank, 1, gs1, ds1, da1, ps1, MPI_ORDER_FORTRAN,
                                  MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        int want[7], n = 0;
        for (int i = 0; i < 7; i++)
            if ((i / 2) % nranks == rank)
                want[n++] = i;
        OK(MPI_Type_size(t, &s));
        EXPECT(s == 4 * n, "cyclic(2) darray size %d, want %d", s, 4 * n);
        packs_ints(t, 1, want, n, __LINE__);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
    }

    /* resized: every other int */
    {
        OK(MPI_Type_create_resized(MPI_INT, 0, 8, &u));
        BOUNDS(u, 4, 0, 8, 0, 4);
        ENVELOPE_IS(u, 0, 2, 1, MPI_COMBINER_RESIZED);
        OK(MPI_Type_contiguous(3, u, &t));
        BOUNDS(t, 12, 0, 24, 0, 20);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 0, 2, 4);
        OK(MPI_Type_commit(&u));
        PACKS_INTS(u, 3, 0, 2, 4);
        SAME_AS_REBUILD(u);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        OK(MPI_Type_free(&u));
        OK(MPI_Type_create_resized(MPI_INT, -2, 10, &u));
        BOUNDS(u, 4, -2, 10, 0, 4);
        OK(MPI_Type_free(&u));
    }

    /* dup: same typemap, committed state kept, combiner DUP */
    {
        OK(MPI_Type_vector(2, 1, 3, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        OK(MPI_Type_dup(t, &u));
        BOUNDS(u, 8, 0, 16, 0, 16);
        ENVELOPE_IS(u, 0, 0, 1, MPI_COMBINER_DUP);
        PACKS_INTS(u, 1, 0, 3);   /* no commit needed: t was committed */
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents(u, 0, 0, 1, NULL, NULL, D));
        EXPECT(D[0] != t, "contents of a dup give a new handle");
        ENVELOPE_IS(D[0], 3, 0, 1, MPI_COMBINER_VECTOR);
        OK(MPI_Type_free(&D[0]));
        SAME_AS_REBUILD(u);
        OK(MPI_Type_free(&t));
        PACKS_INTS(u, 1, 0, 3);   /* its own reference */
        OK(MPI_Type_free(&u));
        OK(MPI_Type_dup(MPI_DOUBLE, &u));
        BOUNDS(u, 8, 0, 8, 0, 8);
        ENVELOPE_IS(u, 0, 0, 1, MPI_COMBINER_DUP);
        OK(MPI_Type_free(&u));
    }

    /* argument errors */
    {
        int bl[] = {1, -1}, dp[] = {0, 1};
        MPI_Aint adp[] = {0, 8};
        MPI_Datatype ty[] = {MPI_INT, MPI_DATATYPE_NULL};
        FAILS(MPI_ERR_COUNT, MPI_Type_contiguous(-1, MPI_INT, &t));
        FAILS(MPI_ERR_TYPE, MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t));
        FAILS(MPI_ERR_ARG, MPI_Type_contiguous(1, MPI_INT, NULL));
        FAILS(MPI_ERR_ARG, MPI_Type_vector(2, -1, 1, MPI_INT, &t));
        FAILS(MPI_ERR_ARG, MPI_Type_indexed(2, bl, dp, MPI_INT, &t));
        FAILS(MPI_ERR_ARG, MPI_Type_indexed(2, NULL, dp, MPI_INT, &t));
        int ok_bl[] = {1, 1};
        FAILS(MPI_ERR_TYPE, MPI_Type_create_struct(2, ok_bl, adp, ty, &t));
        FAILS(MPI_ERR_COUNT, MPI_Type_create_hindexed_block(-3, 1, adp, MPI_INT, &t));
        /* count 0 is fine, with NULL arrays */
        OK(MPI_Type_create_struct(0, NULL, NULL, NULL, &t));
        BOUNDS(t, 0, 0, 0, 0, 0);
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 5);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        /* a freed handle is gone */
        OK(MPI_Type_contiguous(2, MPI_INT, &t));
        MPI_Datatype old = t;
        OK(MPI_Type_free(&t));
        int s;
        FAILS(MPI_ERR_TYPE, MPI_Type_size(old, &s));
        FAILS(MPI_ERR_TYPE, MPI_Type_free(&old));
        FAILS(MPI_ERR_TYPE, MPI_Type_commit(&old));
    }
}

/* ------------------------------------------------------------ large counts */

static void test_large_counts(void)
{
    MPI_Datatype t;
    MPI_Count ci, ca, cc, cd;
    int comb, a, b, c, d;

    OK(MPI_Type_contiguous_c(4, MPI_SHORT, &t));
    BOUNDS(t, 8, 0, 8, 0, 8);
    OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb));
    EXPECT(ci == 0 && ca == 0 && cc == 1 && cd == 1 && comb == MPI_COMBINER_CONTIGUOUS,
           "contiguous_c envelope %ld %ld %ld %ld", ci, ca, cc, cd);
    FAILS(MPI_ERR_TYPE, MPI_Type_get_envelope(t, &a, &b, &c, &d));
    {
        int I[1];
        MPI_Aint A[1];
        MPI_Datatype D[1];
        FAILS(MPI_ERR_TYPE, MPI_Type_get_contents(t, 1, 1, 1, I, A, D));
    }
    OK(MPI_Type_commit(&t));
    SAME_AS_REBUILD(t);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_vector_c(3, 2, 4, MPI_INT, &t));
    BOUNDS(t, 24, 0, 40, 0, 40);
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 1, 0, 1, 4, 5, 8, 9);
    SAME_AS_REBUILD(t);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hvector_c(2, 1, 8, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 1, 0, 2);
    SAME_AS_REBUILD(t);
    OK(MPI_Type_free(&t));

    {
        MPI_Count bl[] = {1, 2}, dp[] = {5, 1};
        OK(MPI_Type_indexed_c(2, bl, dp, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 5, 1, 2);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        MPI_Count hd[] = {20, 4};
        OK(MPI_Type_create_hindexed_c(2, bl, hd, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 5, 1, 2);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        OK(MPI_Type_create_indexed_block_c(2, 1, dp, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 5, 1);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        OK(MPI_Type_create_hindexed_block_c(2, 1, hd, MPI_INT, &t));
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 5, 1);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        MPI_Count sd[] = {0, 8};
        MPI_Datatype ty[] = {MPI_INT, MPI_INT};
        OK(MPI_Type_create_struct_c(2, bl, sd, ty, &t));
        OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb));
        EXPECT(ci == 0 && ca == 0 && cc == 5 && cd == 2 && comb == MPI_COMBINER_STRUCT,
               "struct_c envelope");
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 0, 2, 3);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
    }
    {
        MPI_Count sizes[] = {4, 5}, sub[] = {2, 3}, st[] = {1, 1};
        OK(MPI_Type_create_subarray_c(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &t));
        OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb));
        EXPECT(ci == 2 && cc == 6 && comb == MPI_COMBINER_SUBARRAY, "subarray_c envelope");
        OK(MPI_Type_commit(&t));
        PACKS_INTS(t, 1, 6, 7, 8, 11, 12, 13);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
        MPI_Count gs[] = {4, 6};
        int ds[] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC}, da[] = {MPI_DISTRIBUTE_DFLT_DARG, 2},
            ps[] = {2, 2};
        OK(MPI_Type_create_darray_c(4, 1, 2, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t));
        OK(MPI_Type_get_envelope_c(t, &ci, &ca, &cc, &cd, &comb));
        EXPECT(ci == 10 && cc == 2 && comb == MPI_COMBINER_DARRAY, "darray_c envelope %ld %ld", ci, cc);
        int I[10];
        MPI_Count C[2];
        MPI_Datatype D[1];
        OK(MPI_Type_get_contents_c(t, 10, 0, 2, 1, I, NULL, C, D));
        EXPECT(C[0] == 4 && C[1] == 6 && I[3] == MPI_DISTRIBUTE_BLOCK &&
                   I[5] == MPI_DISTRIBUTE_DFLT_DARG && I[6] == 2 && I[9] == MPI_ORDER_C,
               "darray_c contents");
        OK(MPI_Type_commit(&t));
        /* rank 1 = grid (0, 1): rows 0-1, cyclic(2) columns: 2, 3 */
        PACKS_INTS(t, 1, 2, 3, 8, 9);
        SAME_AS_REBUILD(t);
        OK(MPI_Type_free(&t));
    }
    OK(MPI_Type_create_resized_c(MPI_INT, 0, 12, &t));
    BOUNDS(t, 4, 0, 12, 0, 4);
    OK(MPI_Type_commit(&t));
    PACKS_INTS(t, 2, 0, 3);
    SAME_AS_REBUILD(t);
    OK(MPI_Type_free(&t));
}

/* ------------------------------------------------------------ pack / unpack */

static void test_pack(void)
{
    MPI_Datatype vec, unc;
    OK(MPI_Type_vector(4, 1, 3, MPI_DOUBLE, &vec));
    OK(MPI_Type_commit(&vec));
    double dv[24];
    for (int i = 0; i < 24; i++)
        dv[i] = i + 0.25;
    int ival = 42;
    char cs[3] = {'x', 'y', 'z'};

    int s1, s2, s3;
    OK(MPI_Pack_size(1, MPI_INT, MPI_COMM_WORLD, &s1));
    OK(MPI_Pack_size(1, vec, MPI_COMM_WORLD, &s2));
    OK(MPI_Pack_size(3, MPI_CHAR, MPI_COMM_SELF, &s3));
    EXPECT(s1 == 4 && s2 == 32 && s3 == 3, "pack sizes %d %d %d", s1, s2, s3);
    MPI_Count sc;
    OK(MPI_Pack_size_c(1000, vec, MPI_COMM_WORLD, &sc));
    EXPECT(sc == 32000, "pack_size_c %ld", (long)sc);

    char buf[64];
    int pos = 0;
    OK(MPI_Pack(&ival, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    EXPECT(pos == 4, "pos %d", pos);
    OK(MPI_Pack(dv, 1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    EXPECT(pos == 36, "pos %d", pos);
    OK(MPI_Pack(cs, 3, MPI_CHAR, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    EXPECT(pos == 39, "pos %d", pos);
    int before = pos;
    FAILS(MPI_ERR_TRUNCATE, MPI_Pack(dv, 1, vec, buf, 40, &pos, MPI_COMM_WORLD));
    EXPECT(pos == before, "failed pack moved the position");
    FAILS(MPI_ERR_ARG, MPI_Pack(dv, 1, vec, buf, 10, &pos, MPI_COMM_WORLD));   /* pos > outsize */
    FAILS(MPI_ERR_COUNT, MPI_Pack(dv, -1, vec, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    FAILS(MPI_ERR_COMM, MPI_Pack(dv, 1, vec, buf, sizeof buf, &pos, MPI_COMM_NULL));

    int iback = 0;
    double dback[12] = {0};
    char cback[3] = {0};
    pos = 0;
    OK(MPI_Unpack(buf, 39, &pos, &iback, 1, MPI_INT, MPI_COMM_WORLD));
    OK(MPI_Unpack(buf, 39, &pos, dback, 1, vec, MPI_COMM_WORLD));
    OK(MPI_Unpack(buf, 39, &pos, cback, 3, MPI_CHAR, MPI_COMM_WORLD));
    EXPECT(pos == 39 && iback == 42 && cback[2] == 'z', "unpack sequence");
    for (int i = 0; i < 12; i++)
        EXPECT(dback[i] == (i % 3 == 0 ? i + 0.25 : 0), "unpacked vector element %d = %g", i,
               dback[i]);
    pos = 36;
    FAILS(MPI_ERR_TRUNCATE, MPI_Unpack(buf, 39, &pos, dback, 1, vec, MPI_COMM_WORLD));

    /* large-count forms */
    MPI_Count cpos = 0;
    OK(MPI_Pack_c(dv, 2, vec, buf, sizeof buf, &cpos, MPI_COMM_WORLD));
    EXPECT(cpos == 64, "pack_c position %ld", (long)cpos);
    memset(dback, 0, sizeof dback);
    cpos = 0;
    double d2[24] = {0};
    OK(MPI_Unpack_c(buf, 64, &cpos, d2, 2, vec, MPI_COMM_WORLD));
    EXPECT(cpos == 64 && d2[19] == 19.25 && d2[10] == 10.25 && d2[12] == 0, "unpack_c");

    /* MPI_BOTTOM and absolute addresses */
    {
        int a = 11;
        double b = 2.5;
        MPI_Aint addr[2], base;
        OK(MPI_Get_address(&a, &addr[0]));
        OK(MPI_Get_address(&b, &addr[1]));
        OK(MPI_Address(&a, &base));
        EXPECT(base == addr[0] && base == (MPI_Aint)(uintptr_t)&a, "addresses");
        EXPECT(MPI_Aint_diff(addr[1], addr[0]) == (MPI_Aint)((char *)&b - (char *)&a), "diff");
        EXPECT(MPI_Aint_add(addr[0], MPI_Aint_diff(addr[1], addr[0])) == addr[1], "add");
        int bl[] = {1, 1};
        MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE}, abs;
        OK(MPI_Type_create_struct(2, bl, addr, ty, &abs));
        OK(MPI_Type_commit(&abs));
        pos = 0;
        OK(MPI_Pack(MPI_BOTTOM, 1, abs, buf, sizeof buf, &pos, MPI_COMM_WORLD));
        EXPECT(pos == 12, "bottom pack %d", pos);
        a = 0;
        b = 0;
        pos = 0;
        OK(MPI_Unpack(buf, 12, &pos, MPI_BOTTOM, 1, abs, MPI_COMM_WORLD));
        EXPECT(a == 11 && b == 2.5, "bottom unpack %d %g", a, b);
        OK(MPI_Type_free(&abs));
    }

    /* an uncommitted type: not for packing (its size may still be asked) */
    OK(MPI_Type_contiguous(2, MPI_INT, &unc));
    pos = 0;
    FAILS(MPI_ERR_TYPE, MPI_Pack(&ival, 1, unc, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    FAILS(MPI_ERR_TYPE, MPI_Unpack(buf, sizeof buf, &pos, &ival, 1, unc, MPI_COMM_WORLD));
    OK(MPI_Pack_size(3, unc, MPI_COMM_WORLD, &s1));
    EXPECT(s1 == 24, "pack size of an uncommitted type %d", s1);
    FAILS(MPI_ERR_TYPE, MPI_Pack(&ival, 1, MPI_DATATYPE_NULL, buf, sizeof buf, &pos,
                                 MPI_COMM_WORLD));
    OK(MPI_Type_free(&unc));
    OK(MPI_Type_free(&vec));
}

/* ------------------------------------------------------------ external32 */

static void bytes_are(const unsigned char *p, const unsigned char *want, int n, int line)
{
    for (int i = 0; i < n; i++)
        EXPECT(p[i] == want[i], "line %d: byte %d is 0x%02x, want 0x%02x", line, i, p[i],
               want[i]);
}
#define BYTES_ARE(p, ...)                                                          \
    do {                                                                           \
        const unsigned char w_[] = {__VA_ARGS__};                                  \
        bytes_are(p, w_, (int)sizeof w_, __LINE__);                                \
    } while (0)

static void test_external32(void)
{
    unsigned char buf[256];
    MPI_Aint pos = 0, sz;
    int iv[2] = {1, 0x01020304};
    OK(MPI_Pack_external("external32", iv, 2, MPI_INT, buf, sizeof buf, &pos));
    EXPECT(pos == 8, "pos %ld", (long)pos);
    BYTES_ARE(buf, 0, 0, 0, 1, 1, 2, 3, 4);
    double dv = 1.0;
    OK(MPI_Pack_external("external32", &dv, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    BYTES_ARE(buf + 8, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0);
    long lv[2] = {-2, 5};
    OK(MPI_Pack_external_size("external32", 2, MPI_LONG, &sz));
    EXPECT(sz == 8, "MPI_LONG is 4 bytes in external32 (%ld)", (long)sz);
    OK(MPI_Pack_external("external32", lv, 2, MPI_LONG, buf, sizeof buf, &pos));
    EXPECT(pos == 24, "pos %ld", (long)pos);
    BYTES_ARE(buf + 16, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 5);
    long double ld = 1.5L;
    OK(MPI_Pack_external("external32", &ld, 1, MPI_LONG_DOUBLE, buf, sizeof buf, &pos));
    EXPECT(pos == 40, "pos %ld", (long)pos);
    BYTES_ARE(buf + 24, 0x3f, 0xff, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    short sv = -3;
    OK(MPI_Pack_external("external32", &sv, 1, MPI_SHORT, buf, sizeof buf, &pos));
    BYTES_ARE(buf + 40, 0xff, 0xfd);

    /* back */
    int iv2[2];
    double dv2;
    long lv2[2];
    long double ld2;
    short sv2;
    MPI_Aint in = pos;
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, in, &pos, iv2, 2, MPI_INT));
    OK(MPI_Unpack_external("external32", buf, in, &pos, &dv2, 1, MPI_DOUBLE));
    OK(MPI_Unpack_external("external32", buf, in, &pos, lv2, 2, MPI_LONG));
    OK(MPI_Unpack_external("external32", buf, in, &pos, &ld2, 1, MPI_LONG_DOUBLE));
    OK(MPI_Unpack_external("external32", buf, in, &pos, &sv2, 1, MPI_SHORT));
    EXPECT(pos == in && iv2[1] == 0x01020304 && dv2 == 1.0 && lv2[0] == -2 && lv2[1] == 5 &&
               ld2 == 1.5L && sv2 == -3,
           "external32 round trip");
    FAILS(MPI_ERR_TRUNCATE, MPI_Unpack_external("external32", buf, in, &pos, &sv2, 1, MPI_SHORT));

    /* conversion errors and unknown representations */
    long big = 1L << 40;
    pos = 0;
    FAILS(MPI_ERR_CONVERSION, MPI_Pack_external("external32", &big, 1, MPI_LONG, buf, sizeof buf, &pos));
    wchar_t wc[2] = {L'a', (wchar_t)0x1f600};
    OK(MPI_Pack_external("external32", wc, 1, MPI_WCHAR, buf, sizeof buf, &pos));
    BYTES_ARE(buf, 0, 'a');
    FAILS(MPI_ERR_CONVERSION, MPI_Pack_external("external32", wc + 1, 1, MPI_WCHAR, buf, sizeof buf, &pos));
    FAILS(MPI_ERR_UNSUPPORTED_DATAREP, MPI_Pack_external("native", iv, 1, MPI_INT, buf, sizeof buf, &pos));
    FAILS(MPI_ERR_TRUNCATE, MPI_Pack_external("external32", iv, 2, MPI_INT, buf, 6, &pos));

    /* a struct with mixed types, padding, a pair type, nested in a vector */
    struct rec { char c; long double x; long l; struct { double v; int i; } p; float f[2]; };
    struct rec r[3], r2[3];
    memset(r, 0, sizeof r);
    memset(r2, 0, sizeof r2);
    for (int i = 0; i < 3; i++) {
        r[i].c = (char)('a' + i);
        r[i].x = -0.1L * i;
        r[i].l = -100000 * i;
        r[i].p.v = 3.25 * i;
        r[i].p.i = 7 * i;
        r[i].f[0] = 0.5f;
        r[i].f[1] = (float)i;
    }
    int bl[] = {1, 1, 1, 1, 2};
    MPI_Aint dp[] = {offsetof(struct rec, c), offsetof(struct rec, x), offsetof(struct rec, l),
                     offsetof(struct rec, p), offsetof(struct rec, f)};
    MPI_Datatype ty[] = {MPI_CHAR, MPI_LONG_DOUBLE, MPI_LONG, MPI_DOUBLE_INT, MPI_FLOAT}, st, two;
    OK(MPI_Type_create_struct(5, bl, dp, ty, &st));
    OK(MPI_Pack_external_size("external32", 3, st, &sz));   /* uncommitted is fine here */
    EXPECT(sz == 3 * (1 + 16 + 4 + 12 + 8), "external size %ld", (long)sz);
    OK(MPI_Type_commit(&st));
    OK(MPI_Type_contiguous(2, st, &two));
    OK(MPI_Type_commit(&two));
    unsigned char big_buf[512];
    pos = 0;
    OK(MPI_Pack_external("external32", r, 1, two, big_buf, sizeof big_buf, &pos));
    OK(MPI_Pack_external("external32", r + 2, 1, st, big_buf, sizeof big_buf, &pos));
    EXPECT(pos == sz, "packed %ld, want %ld", (long)pos, (long)sz);
    EXPECT(big_buf[0] == 'a' && big_buf[41] == 'b', "struct external bytes");
    MPI_Count cpos = 0, csz;
    OK(MPI_Pack_external_size_c("external32", 3, st, &csz));
    EXPECT(csz == sz, "external size _c");
    OK(MPI_Unpack_external_c("external32", big_buf, sz, &cpos, r2, 3, st));
    EXPECT(cpos == sz, "unpack_c position");
    for (int i = 0; i < 3; i++)
        EXPECT(r2[i].c == r[i].c && r2[i].x == r[i].x && r2[i].l == r[i].l &&
                   r2[i].p.v == r[i].p.v && r2[i].p.i == r[i].p.i && r2[i].f[1] == r[i].f[1],
               "struct external32 round trip, element %d", i);
    unsigned char big2[512];
    cpos = 0;
    OK(MPI_Pack_external_c("external32", r, 3, st, big2, sizeof big2, &cpos));
    EXPECT(cpos == sz && memcmp(big_buf, big2, sz) == 0, "pack_external_c");
    OK(MPI_Type_free(&two));
    OK(MPI_Type_free(&st));
}

/* ------------------------------------------------------------ names, attributes */

static int copies, deletes;

static int copy_fn(MPI_Datatype t, int k, void *extra, void *in, void *out, int *flag)
{
    (void)t;
    (void)k;
    copies++;
    *(void **)out = (char *)in + *(int *)extra;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t;
    (void)k;
    (void)val;
    (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Datatype t, int k, void *val, void *extra)
{
    (void)t;
    (void)k;
    (void)val;
    (void)extra;
    return MPI_ERR_OTHER;
}

static void test_names_attributes(void)
{
    MPI_Datatype t, u;
    char n[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    OK(MPI_Type_get_name(t, n, &len));
    EXPECT(len == 0 && n[0] == 0, "a new type has no name (\"%s\")", n);
    OK(MPI_Type_set_name(t, "three ints"));
    OK(MPI_Type_get_name(t, n, &len));
    EXPECT(strcmp(n, "three ints") == 0 && len == 10, "name \"%s\"", n);
    char longname[300];
    memset(longname, 'q', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    OK(MPI_Type_set_name(t, longname));
    OK(MPI_Type_get_name(t, n, &len));
    EXPECT(len == MPI_MAX_OBJECT_NAME - 1 && (int)strlen(n) == len, "long name truncated to %d", len);
    FAILS(MPI_ERR_TYPE, MPI_Type_set_name(MPI_DATATYPE_NULL, "x"));

    int k1, k2, extra = 1;
    static char values[8];
    OK(MPI_Type_create_keyval(copy_fn, delete_fn, &k1, &extra));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, delete_fn, &k2, NULL));
    EXPECT(k1 != k2 && k1 != MPI_KEYVAL_INVALID, "keyvals");
    void *v;
    int flag;
    OK(MPI_Type_get_attr(t, k1, &v, &flag));
    EXPECT(!flag, "no attribute yet");
    OK(MPI_Type_set_attr(t, k1, values));
    OK(MPI_Type_set_attr(t, k2, values + 4));
    OK(MPI_Type_get_attr(t, k1, &v, &flag));
    EXPECT(flag && v == values, "attribute k1");
    OK(MPI_Type_set_attr(t, k1, values + 2));   /* replaces: deletes the old value */
    EXPECT(deletes == 1, "replace deleted %d", deletes);
    OK(MPI_Type_dup(t, &u));
    EXPECT(copies == 1, "dup copied %d attributes", copies);
    OK(MPI_Type_get_attr(u, k1, &v, &flag));
    EXPECT(flag && v == values + 3, "copied attribute %p", v);
    OK(MPI_Type_get_attr(u, k2, &v, &flag));
    EXPECT(!flag, "MPI_TYPE_NULL_COPY_FN does not copy");
    OK(MPI_Type_get_name(u, n, &len));
    OK(MPI_Type_delete_attr(t, k2));
    EXPECT(deletes == 2, "delete_attr ran the callback (%d)", deletes);
    OK(MPI_Type_get_attr(t, k2, &v, &flag));
    EXPECT(!flag, "deleted");
    OK(MPI_Type_delete_attr(t, k2));   /* absent: nothing to do */
    OK(MPI_Type_free_keyval(&k1));
    EXPECT(k1 == MPI_KEYVAL_INVALID, "free_keyval resets the handle");
    OK(MPI_Type_free(&t));             /* k1's attribute still deleted by its callback */
    EXPECT(deletes == 3, "free deleted %d", deletes);
    OK(MPI_Type_free(&u));
    EXPECT(deletes == 4, "free of the dup deleted %d", deletes);
    FAILS(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, k1, values));
    FAILS(MPI_ERR_KEYVAL, MPI_Type_set_attr(MPI_INT, 12345, values));

    /* attributes on a predefined type */
    OK(MPI_Type_set_attr(MPI_INT, k2, values + 5));
    OK(MPI_Type_get_attr(MPI_INT, k2, &v, &flag));
    EXPECT(flag && v == values + 5, "attribute on MPI_INT");
    OK(MPI_Type_get_attr(MPI_DOUBLE_INT, k2, &v, &flag));
    EXPECT(!flag, "MPI_DOUBLE_INT has none");
    OK(MPI_Type_delete_attr(MPI_INT, k2));
    FAILS(MPI_ERR_TYPE, MPI_Type_set_attr(MPI_DATATYPE_NULL, k2, values));

    /* a failing delete callback keeps the type */
    int k3;
    OK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, failing_delete, &k3, NULL));
    OK(MPI_Type_contiguous(1, MPI_INT, &t));
    OK(MPI_Type_set_attr(t, k3, values));
    OK(MPI_Type_dup(t, &u));   /* MPI_TYPE_DUP_FN copies the value */
    OK(MPI_Type_get_attr(u, k3, &v, &flag));
    EXPECT(flag && v == values, "MPI_TYPE_DUP_FN");
    FAILS(MPI_ERR_OTHER, MPI_Type_free(&t));
    EXPECT(t != MPI_DATATYPE_NULL, "the type survives");
    int s;
    OK(MPI_Type_size(t, &s));
    OK(MPI_Type_free_keyval(&k2));
    FAILS(MPI_ERR_KEYVAL, MPI_Type_free_keyval(&k2));
    OK(MPI_Type_free_keyval(&k3));
}

/* ------------------------------------------------------------ table growth */

static void test_many(void)
{
    enum { N = 3000 };
    MPI_Datatype *t = malloc(N * sizeof *t);
    for (int i = 0; i < N; i++)
        OK(MPI_Type_contiguous(i % 7 + 1, MPI_CHAR, &t[i]));
    for (int i = 0; i < N; i += 2)
        OK(MPI_Type_free(&t[i]));
    for (int i = 0; i < N; i += 2)
        OK(MPI_Type_vector(2, 1, 2, t[i + 1], &t[i]));
    for (int i = 0; i < N; i++) {
        int s;
        OK(MPI_Type_size(t[i], &s));
        EXPECT(s == (i % 2 ? (i % 7 + 1) : 2 * ((i + 1) % 7 + 1)), "type %d size %d", i, s);
    }
    for (int i = 0; i < N; i++)
        OK(MPI_Type_free(&t[i]));
    free(t);
}

/* ------------------------------------------------------------ layout, communication */

static void test_layout(void)
{
    MPI_Aint size, off;
    int contig;
    OK(fmpl_mpi_type_layout(MPI_INT, &size, &contig));
    EXPECT(size == 4 && contig, "MPI_INT layout");
    OK(fmpl_mpi_type_layout(MPI_DOUBLE_INT, &size, &contig));
    EXPECT(size == 12 && !contig, "MPI_DOUBLE_INT layout: value and int, packed (%ld %d)",
           (long)size, contig);
    OK(fmpl_mpi_type_layout(MPI_FLOAT_INT, &size, &contig));
    EXPECT(size == 8 && contig, "MPI_FLOAT_INT layout: no padding (%ld %d)", (long)size, contig);
    EXPECT(fmpl_mpi_type_layout(MPI_DATATYPE_NULL, &size, &contig) == MPI_ERR_TYPE, "null");

    MPI_Datatype c, v, ix;
    OK(MPI_Type_contiguous(4, MPI_INT, &c));
    EXPECT(fmpl_mpi_type_layout(c, &size, &contig) == MPI_ERR_TYPE, "uncommitted: MPI_ERR_TYPE");
    OK(MPI_Type_commit(&c));
    OK(fmpl_mpi_type_layout(c, &size, &contig));
    OK(fmpl_mpi_type_offset(c, &off));
    EXPECT(size == 16 && contig && off == 0, "contiguous layout %ld %d %ld", (long)size, contig,
           (long)off);
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    OK(fmpl_mpi_type_layout(v, &size, &contig));
    EXPECT(size == 8 && !contig, "vector layout");
    /* contiguous data that starts 8 bytes in */
    int bl[] = {3}, dp[] = {2};
    OK(MPI_Type_indexed(1, bl, dp, MPI_INT, &ix));
    MPI_Datatype rs;
    OK(MPI_Type_create_resized(ix, 8, 12, &rs));
    OK(MPI_Type_commit(&rs));
    OK(fmpl_mpi_type_layout(rs, &size, &contig));
    OK(fmpl_mpi_type_offset(rs, &off));
    EXPECT(size == 12 && contig && off == 8, "offset layout %ld %d %ld", (long)size, contig,
           (long)off);
    OK(MPI_Type_free(&rs));
    OK(MPI_Type_free(&ix));
    OK(MPI_Type_free(&v));
    OK(MPI_Type_free(&c));
}

static void test_communication(void)
{
    MPI_Datatype quad, unc, st;
    OK(MPI_Type_contiguous(4, MPI_INT, &quad));
    OK(MPI_Type_commit(&quad));
    OK(MPI_Type_contiguous(4, MPI_INT, &unc));
    int data[8], got[8];
    for (int i = 0; i < 8; i++)
        data[i] = 100 * rank + i;

    /* an uncommitted type in communication is MPI_ERR_TYPE */
    FAILS(MPI_ERR_TYPE, MPI_Send(data, 1, unc, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    MPI_Status status;
    FAILS(MPI_ERR_TYPE, MPI_Recv(got, 1, unc, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &status));

    /* to self: a committed contiguous derived type, then Get_elements of a
     * struct over the received bytes */
    MPI_Request rq;
    OK(MPI_Irecv(got, 2, quad, 0, 5, MPI_COMM_SELF, &rq));
    OK(MPI_Send(data, 2, quad, 0, 5, MPI_COMM_SELF));
    OK(MPI_Wait(&rq, &status));
    for (int i = 0; i < 8; i++)
        EXPECT(got[i] == data[i], "self message int %d", i);
    int n;
    OK(MPI_Get_count(&status, quad, &n));
    EXPECT(n == 2, "count %d", n);
    OK(MPI_Get_elements(&status, quad, &n));
    EXPECT(n == 8, "elements %d", n);

    int bl[] = {1, 1};
    MPI_Aint dp[] = {0, 8};
    MPI_Datatype ty[] = {MPI_INT, MPI_DOUBLE};
    OK(MPI_Type_create_struct(2, bl, dp, ty, &st));
    OK(MPI_Type_commit(&st));
    /* 20 bytes as MPI_BYTE: int, double, int, half a double */
    OK(MPI_Irecv(got, 20, MPI_BYTE, 0, 6, MPI_COMM_SELF, &rq));
    OK(MPI_Send(data, 20, MPI_BYTE, 0, 6, MPI_COMM_SELF));
    OK(MPI_Wait(&rq, &status));
    OK(MPI_Get_elements(&status, st, &n));
    EXPECT(n == MPI_UNDEFINED, "20 bytes of {int, double}: %d elements", n);
    /* the packed pair is (double, int): 20 bytes are a pair and a double */
    OK(MPI_Get_elements(&status, MPI_DOUBLE_INT, &n));
    EXPECT(n == 3, "20 bytes of MPI_DOUBLE_INT: %d elements", n);
    OK(MPI_Irecv(got, 16, MPI_BYTE, 0, 7, MPI_COMM_SELF, &rq));
    OK(MPI_Send(data, 16, MPI_BYTE, 0, 7, MPI_COMM_SELF));
    OK(MPI_Wait(&rq, &status));
    OK(MPI_Get_elements(&status, st, &n));
    EXPECT(n == 3, "16 bytes of {int, double}: %d elements", n);
    MPI_Count nx;
    OK(MPI_Get_elements_x(&status, st, &nx));
    EXPECT(nx == 3, "elements_x %ld", (long)nx);
    OK(MPI_Get_elements_c(&status, MPI_DOUBLE_INT, &nx));
    EXPECT(nx == MPI_UNDEFINED, "16 bytes of MPI_DOUBLE_INT (a pair, half a double): %ld",
           (long)nx);
    OK(MPI_Get_count(&status, st, &n));
    EXPECT(n == MPI_UNDEFINED, "count of {int, double} in 16 bytes: %d", n);
    FAILS(MPI_ERR_TYPE, MPI_Get_elements(&status, MPI_DATATYPE_NULL, &n));

    /* between ranks 0 and 1 */
    if (nranks >= 2 && rank < 2) {
        int peer = 1 - rank;
        OK(MPI_Sendrecv(data, 2, quad, peer, 9, got, 2, quad, peer, 9, MPI_COMM_WORLD, &status));
        for (int i = 0; i < 8; i++)
            EXPECT(got[i] == 100 * peer + i, "from rank %d: int %d is %d", peer, i, got[i]);
        OK(MPI_Get_count(&status, quad, &n));
        EXPECT(n == 2, "count from peer %d", n);
    }
    OK(MPI_Type_free(&st));
    OK(MPI_Type_free(&unc));
    OK(MPI_Type_free(&quad));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 256; i++)
        src_ints[i] = i;

    test_predefined();
    test_constructors();
    test_large_counts();
    test_pack();
    test_external32();
    test_names_attributes();
    test_many();
    test_layout();
    test_communication();

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi datatype ok on %d ranks\n", nranks);
    MPI_Finalize();
    return 0;
}
