/* Unit test of the MPI predefined reduction kernels (src/collectives/mpi_ops.c)
 * and of the per-call operation wrappers (fmpl_op_from_kernel,
 * fmpl_op_from_mpi_user in reduce_ops.c).
 *
 * Single process, no launcher.  Checks:
 *  - the (op, type) table against the standard's, written out again here as
 *    lists (MPI-4.0 6.9.2): every allowed pair has a kernel, every other
 *    pair gives NULL;
 *  - every allowed pair (REPLACE and NO_OP on every type included) against
 *    a reference computed here by other means (integers in 64-bit with
 *    masks, pairs by comparing as long double and copying bytes), counts 0,
 *    1, 7, 1000 and more, buffers at odd byte offsets, in == inout, through
 *    fmpl_op_apply as well as directly, that `in` is not written and nothing
 *    outside inout is; values drawn from small sets with the edge values
 *    (INT_MIN, INT_MAX, -1, NaN, +-0, +-inf) so that wraparound, ties and
 *    NaNs are frequent; results compared bit for bit (value bytes only: not
 *    long double or pair padding; arithmetic NaNs compared as "a NaN");
 *  - spot checks with written-out constants for the documented edge rules;
 *  - the wrappers: kernel ops and MPI user ops (a non-commutative function,
 *    so the operand order is checked), checks and refusals.
 *
 * `test_mpi_ops --bench` times a few kernels against memcpy.
 */
#include "collectives/mpi_ops.h"
#include "base/error.h"
#include "datatype/basic_types.h"

#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if LDBL_MANT_DIG == 113
#define HAVE_Q 1
typedef long double quad;
#elif defined(__SIZEOF_FLOAT128__)
#define HAVE_Q 1
typedef __float128 quad;
#else
#define HAVE_Q 0
#endif

static int failures;
static long checked_pairs, checked_cases;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            if (++failures <= 50) {                                                \
                fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);    \
                fprintf(stderr, __VA_ARGS__);                                      \
                fputc('\n', stderr);                                               \
            }                                                                      \
        }                                                                          \
    } while (0)

#define BT_NAME(bt) (fmpl_basic_types[bt].name)

/* ------------------------------------------------------------ random */

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}
static int rnd_below(int n) { return (int)(rnd() % (uint64_t)n); }

/* ------------------------------------------ the standard's table, again */

#define B(o) (1u << FMPL_MOP_##o)
#define MAXMIN (B(MAX) | B(MIN))
#define ARITH (B(SUM) | B(PROD))
#define LOGIC (B(LAND) | B(LOR) | B(LXOR))
#define BITS (B(BAND) | B(BOR) | B(BXOR))

static const struct {
    const char *name;
    unsigned ops;
    fmpl_basic_type types[24]; /* up to the first FMPL_BT_NONE */
} classes[] = {
    {"C integer", MAXMIN | ARITH | LOGIC | BITS,
     {FMPL_BT_INT, FMPL_BT_LONG, FMPL_BT_SHORT, FMPL_BT_UNSIGNED_SHORT, FMPL_BT_UNSIGNED,
      FMPL_BT_UNSIGNED_LONG, FMPL_BT_LONG_LONG, FMPL_BT_UNSIGNED_LONG_LONG,
      FMPL_BT_SIGNED_CHAR, FMPL_BT_UNSIGNED_CHAR, FMPL_BT_INT8, FMPL_BT_INT16, FMPL_BT_INT32,
      FMPL_BT_INT64, FMPL_BT_UINT8, FMPL_BT_UINT16, FMPL_BT_UINT32, FMPL_BT_UINT64,
      FMPL_BT_CHAR /* as MPICH (mpi_ops.c) */}},
    {"Fortran integer", MAXMIN | ARITH | BITS,
     {FMPL_BT_F_INTEGER, FMPL_BT_F_INTEGER1, FMPL_BT_F_INTEGER2, FMPL_BT_F_INTEGER4,
      FMPL_BT_F_INTEGER8}},
    {"Floating point", MAXMIN | ARITH,
     {FMPL_BT_FLOAT, FMPL_BT_DOUBLE, FMPL_BT_F_REAL, FMPL_BT_F_DOUBLE_PRECISION,
      FMPL_BT_LONG_DOUBLE, FMPL_BT_F_REAL4, FMPL_BT_F_REAL8, FMPL_BT_F_REAL16, FMPL_BT_F_REAL2,
      FMPL_BT_C_FLOAT16}},
    {"Logical", LOGIC,
     {FMPL_BT_F_LOGICAL, FMPL_BT_C_BOOL, FMPL_BT_CXX_BOOL, FMPL_BT_F_LOGICAL1, FMPL_BT_F_LOGICAL2,
      FMPL_BT_F_LOGICAL4, FMPL_BT_F_LOGICAL8, FMPL_BT_F_LOGICAL16}},
    {"Complex", ARITH,
     {FMPL_BT_F_COMPLEX, FMPL_BT_C_FLOAT_COMPLEX, FMPL_BT_C_DOUBLE_COMPLEX,
      FMPL_BT_C_LONG_DOUBLE_COMPLEX, FMPL_BT_CXX_FLOAT_COMPLEX, FMPL_BT_CXX_DOUBLE_COMPLEX,
      FMPL_BT_CXX_LONG_DOUBLE_COMPLEX, FMPL_BT_F_DOUBLE_COMPLEX, FMPL_BT_F_COMPLEX8,
      FMPL_BT_F_COMPLEX16, FMPL_BT_F_COMPLEX32, FMPL_BT_F_COMPLEX4}},
    {"Byte", BITS, {FMPL_BT_BYTE}},
    {"Multi-language", MAXMIN | ARITH | LOGIC | BITS, /* LOGIC: MPICH extension */ {FMPL_BT_AINT, FMPL_BT_OFFSET, FMPL_BT_COUNT}},
    {"Pair", B(MINLOC) | B(MAXLOC),
     {FMPL_BT_FLOAT_INT, FMPL_BT_DOUBLE_INT, FMPL_BT_LONG_INT, FMPL_BT_2INT, FMPL_BT_SHORT_INT,
      FMPL_BT_LONG_DOUBLE_INT, FMPL_BT_F_2REAL, FMPL_BT_F_2DOUBLE_PRECISION,
      FMPL_BT_F_2INTEGER}},
    {"none (characters, packed)", 0,
     {FMPL_BT_WCHAR, FMPL_BT_F_CHARACTER, FMPL_BT_PACKED}},
};
#define NCLASSES (int)(sizeof classes / sizeof *classes)

#if defined(__FLT16_MANT_DIG__)
#define HAVE_H 1
#else
#define HAVE_H 0
#endif

static int is_half(fmpl_basic_type bt)
{
    return bt == FMPL_BT_F_REAL2 || bt == FMPL_BT_F_COMPLEX4 || bt == FMPL_BT_C_FLOAT16;
}

/* The element models below cover values up to 8 bytes wide and the float
 * formats of float, double, long double and binary128: half precision and
 * LOGICAL16 are checked through MPI instead (tests/mpi/types41.c). */
static int modelled(fmpl_basic_type bt)
{
    return !is_half(bt) && bt != FMPL_BT_F_LOGICAL16;
}

static int class_of(fmpl_basic_type bt)
{
    for (int c = 0; c < NCLASSES; c++)
        for (int k = 0; k < 24 && classes[c].types[k] != FMPL_BT_NONE; k++)
            if (classes[c].types[k] == bt)
                return c;
    return -1;
}

static int expected_allowed(fmpl_mpi_op_kind op, fmpl_basic_type bt)
{
    if (op == FMPL_MOP_REPLACE || op == FMPL_MOP_NO_OP)
        return 1;
    if (!HAVE_Q && (bt == FMPL_BT_F_REAL16 || bt == FMPL_BT_F_COMPLEX32))
        return 0;  /* no binary128 arithmetic on this machine */
    if (!HAVE_H && is_half(bt))
        return 0;  /* no binary16 arithmetic with this compiler */
    return (classes[class_of(bt)].ops >> op) & 1;
}

static void test_table(void)
{
    /* Every basic type is in exactly one class. */
    for (int bt = 1; bt < FMPL_BT_COUNT_OF_TYPES; bt++) {
        int n = 0;
        for (int c = 0; c < NCLASSES; c++)
            for (int k = 0; k < 24 && classes[c].types[k] != FMPL_BT_NONE; k++)
                n += (int)classes[c].types[k] == bt;
        CHECK(n == 1, "%s is in %d classes of the test's table", BT_NAME(bt), n);
    }
    for (int op = 0; op < FMPL_MOP_COUNT; op++) {
        CHECK(fmpl_mpi_kernel(op, FMPL_BT_NONE) == NULL, "%s on NONE", fmpl_mpi_op_name(op));
        CHECK(fmpl_mpi_kernel(op, FMPL_BT_COUNT_OF_TYPES) == NULL, "type out of range");
        for (int bt = 1; bt < FMPL_BT_COUNT_OF_TYPES; bt++) {
            int want = expected_allowed(op, bt);
            fmpl_kernel_fn k = fmpl_mpi_kernel(op, bt);
            CHECK((k != NULL) == want, "%s on %s: kernel %s, MPI says %s", fmpl_mpi_op_name(op),
                  BT_NAME(bt), k ? "present" : "NULL", want ? "allowed" : "not allowed");
        }
    }
    CHECK(fmpl_mpi_kernel(FMPL_MOP_COUNT, FMPL_BT_INT) == NULL, "op out of range");
    CHECK(strcmp(fmpl_mpi_op_name(FMPL_MOP_MAXLOC), "MPI_MAXLOC") == 0, "name");
    CHECK(strcmp(fmpl_mpi_op_name(FMPL_MOP_COUNT), "?") == 0, "name out of range");
    CHECK(fmpl_mpi_op_is_rma_only(FMPL_MOP_REPLACE) && fmpl_mpi_op_is_rma_only(FMPL_MOP_NO_OP) &&
              !fmpl_mpi_op_is_rma_only(FMPL_MOP_SUM), "rma only");
    /* Shared representations: one kernel for same-layout types. */
    CHECK(fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_INT) ==
              fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_F_INTEGER), "int and INTEGER share");
}

/* --------------------------------------------------- element models */

enum kind { K_SINT, K_UINT, K_F32, K_F64, K_LD, K_Q, K_RAW };

typedef struct {
    int kind;        /* of the value (of each component for complex) */
    size_t w;        /* bytes of one value (component) */
    size_t sig;      /* significant bytes of it (long double: 10 on x86) */
    int complex_;
    int pair;
    int ikind;       /* pair: kind of the index */
    size_t iw, ioff; /* pair: index bytes and offset */
    size_t size;     /* element size (basic_types.c) */
} model;

static size_t ld_sig(void) { return LDBL_MANT_DIG == 64 ? 10 : sizeof(long double); }

static model scalar_model(fmpl_basic_type bt)
{
    const fmpl_basic_type_info *t = &fmpl_basic_types[bt];
    model m = {.kind = K_RAW, .w = t->size, .sig = t->size, .size = t->size};
    switch (t->category) {
    case FMPL_CAT_INT:
    case FMPL_CAT_LOGICAL: m.kind = K_SINT; break;
    case FMPL_CAT_UINT: m.kind = K_UINT; break;
    case FMPL_CAT_BYTE: /* MPI_CHAR reduces as C's char (mpi_ops.c) */
        m.kind = bt == FMPL_BT_BYTE ? K_UINT
                 : bt == FMPL_BT_CHAR ? ((char)-1 < 0 ? K_SINT : K_UINT) : K_RAW;
        break;
    case FMPL_CAT_FLOAT:
        m.kind = t->size == 4 ? K_F32 : t->size == 8 ? K_F64 : bt == FMPL_BT_F_REAL16 ? K_Q : K_LD;
        if (m.kind == K_LD)
            m.sig = ld_sig();
        break;
    default: break;
    }
    return m;
}

static model model_of(fmpl_basic_type bt)
{
    const fmpl_basic_type_info *t = &fmpl_basic_types[bt];
    if (!modelled(bt)) /* raw bytes: REPLACE and NO_OP only */
        return (model){.kind = K_RAW, .w = t->size, .sig = t->size, .size = t->size};
    if (t->category == FMPL_CAT_COMPLEX) {
        model m = scalar_model(t->component);
        m.complex_ = 1;
        m.size = t->size;
        return m;
    }
    if (t->category == FMPL_CAT_PAIR) {
        model m = scalar_model(t->component);
        m.pair = 1;
        m.size = t->size;
        if (bt == FMPL_BT_F_2INTEGER || bt == FMPL_BT_F_2REAL || bt == FMPL_BT_F_2DOUBLE_PRECISION) {
            m.ikind = m.kind, m.iw = m.w, m.ioff = m.w;      /* two values of one type */
        } else {
            m.ikind = K_SINT, m.iw = sizeof(int);
            m.ioff = (m.w + sizeof(int) - 1) / sizeof(int) * sizeof(int);
        }
        return m;
    }
    return scalar_model(bt);
}

/* Integers as raw 64-bit values of w bytes. */
static uint64_t load_u(const unsigned char *p, size_t w)
{
    uint8_t a; uint16_t b; uint32_t c; uint64_t d;
    switch (w) {
    case 1: memcpy(&a, p, 1); return a;
    case 2: memcpy(&b, p, 2); return b;
    case 4: memcpy(&c, p, 4); return c;
    default: memcpy(&d, p, 8); return d;
    }
}
static void store_u(unsigned char *p, size_t w, uint64_t v)
{
    uint8_t a = (uint8_t)v; uint16_t b = (uint16_t)v; uint32_t c = (uint32_t)v;
    switch (w) {
    case 1: memcpy(p, &a, 1); break;
    case 2: memcpy(p, &b, 2); break;
    case 4: memcpy(p, &c, 4); break;
    default: memcpy(p, &v, 8); break;
    }
}
static uint64_t mask_of(size_t w) { return w >= 8 ? ~0ull : (1ull << (8 * w)) - 1; }
static int64_t sext(uint64_t u, size_t w)
{
    uint64_t sign = 1ull << (8 * w - 1);
    u &= mask_of(w);
    return u & sign ? -(int64_t)(mask_of(w) - u) - 1 : (int64_t)u;
}

/* Any value as a long double (exact for every kind but K_Q). */
static long double load_num(int kind, size_t w, const unsigned char *p)
{
    float f; double d; long double l;
    switch (kind) {
    case K_SINT: return (long double)sext(load_u(p, w), w);
    case K_UINT: return (long double)load_u(p, w);
    case K_F32: memcpy(&f, p, 4); return f;
    case K_F64: memcpy(&d, p, 8); return d;
    case K_LD: memcpy(&l, p, sizeof l); return l;
    default: return 0;
    }
}

/* ------------------------------------------------------ value generators */

static uint64_t gen_int(size_t w)
{
    uint64_t m = mask_of(w), sign = 1ull << (8 * w - 1);
    switch (rnd_below(12)) {
    case 0: case 1: return 0;
    case 2: return 1;
    case 3: return m;                          /* -1 / all ones */
    case 4: return sign;                       /* INT_MIN */
    case 5: return sign - 1;                   /* INT_MAX */
    case 6: return (uint64_t)(2 + rnd_below(4));
    case 7: return (0 - (uint64_t)(2 + rnd_below(4))) & m;
    case 8: return w > 1 ? 0x100 & m : 2;      /* nonzero with a zero low byte */
    default: return rnd() & m;
    }
}

static double gen_real(void)
{
    switch (rnd_below(16)) {
    case 0: return 0.0;
    case 1: return -0.0;
    case 2: return 1.0;
    case 3: return -1.0;
    case 4: return 0.5;
    case 5: return INFINITY;
    case 6: return -INFINITY;
    case 7: return NAN;
    case 8: return -3.0;
    case 9: return 2.0;
    default: return (double)(rnd_below(2001) - 1000) / (1 + rnd_below(2));  /* products exact */
    }
}

/* Pair values: few distinct ones, so ties are common. */
static double gen_pair_value(int fp)
{
    int r = rnd_below(fp ? 14 : 12);
    if (r >= 12)
        return r == 12 ? NAN : -0.0;
    return r % 4 - 1;
}

static void put_real(int kind, unsigned char *p, double v)
{
    float f = (float)v;
    long double l = v;
    switch (kind) {
    case K_F32: memcpy(p, &f, 4); break;
    case K_F64: memcpy(p, &v, 8); break;
    case K_LD: memcpy(p, &l, sizeof l); break;
#if HAVE_Q
    case K_Q: { quad q = v; memcpy(p, &q, sizeof q); break; }
#endif
    default: break;
    }
}

static void put_value(int kind, size_t w, unsigned char *p, double v)
{
    if (kind == K_SINT || kind == K_UINT)
        store_u(p, w, (uint64_t)(int64_t)v);
    else
        put_real(kind, p, v);
}

static void gen_elem(const model *m, unsigned char *p)
{
    for (size_t i = 0; i < m->size; i++)  /* padding and raw types: random bytes */
        p[i] = (unsigned char)rnd();
    if (m->pair) {
        int fp = m->kind != K_SINT && m->kind != K_UINT;
        put_value(m->kind, m->w, p, gen_pair_value(fp));
        put_value(m->ikind, m->iw, p + m->ioff, rnd_below(5) - 1);
        return;
    }
    for (int c = 0; c < (m->complex_ ? 2 : 1); c++) {
        unsigned char *q = p + c * m->w;
        if (m->kind == K_SINT || m->kind == K_UINT)
            store_u(q, m->w, gen_int(m->w));
        else if (m->kind != K_RAW)
            put_real(m->kind, q, gen_real());
    }
}

/* ---------------------------------------------------------- reference */

static uint64_t ref_int(fmpl_mpi_op_kind op, int sgn, size_t w, uint64_t a, uint64_t b)
{
    uint64_t m = mask_of(w);
    int b_greater = sgn ? sext(b, w) > sext(a, w) : b > a;
    int b_less = sgn ? sext(b, w) < sext(a, w) : b < a;
    switch (op) {
    case FMPL_MOP_MAX: return b_greater ? b : a;
    case FMPL_MOP_MIN: return b_less ? b : a;
    case FMPL_MOP_SUM: return (a + b) & m;
    case FMPL_MOP_PROD: return (a * b) & m;      /* low bits of the exact product */
    case FMPL_MOP_LAND: return a != 0 && b != 0;
    case FMPL_MOP_LOR: return a != 0 || b != 0;
    case FMPL_MOP_LXOR: return (a != 0) != (b != 0);
    case FMPL_MOP_BAND: return a & b;
    case FMPL_MOP_BOR: return a | b;
    case FMPL_MOP_BXOR: return a ^ b;
    default: return 0;
    }
}

/* Floating point (and complex) references, one per type. */
#define REF_FLOAT(name, T, ISNAN)                                                  \
    static void name(fmpl_mpi_op_kind op, int cplx, const unsigned char *pa,       \
                     const unsigned char *pb, unsigned char *pr)                   \
    {                                                                              \
        T a[2] = {0, 0}, b[2] = {0, 0}, r[2];                                      \
        memcpy(a, pa, (cplx ? 2 : 1) * sizeof(T));                                 \
        memcpy(b, pb, (cplx ? 2 : 1) * sizeof(T));                                 \
        r[0] = a[0], r[1] = a[1];                                                  \
        if (op == FMPL_MOP_MAX || op == FMPL_MOP_MIN) {                            \
            /* first NaN wins, then the strictly better one, ties keep a */        \
            int better = op == FMPL_MOP_MAX ? b[0] > a[0] : b[0] < a[0];           \
            if (ISNAN(a[0]))                                                       \
                r[0] = a[0];                                                       \
            else if (ISNAN(b[0]) || better)                                        \
                r[0] = b[0];                                                       \
        } else if (op == FMPL_MOP_SUM) {                                           \
            r[0] = a[0] + b[0], r[1] = a[1] + b[1];                                \
        } else if (op == FMPL_MOP_PROD && !cplx) {                                 \
            r[0] = a[0] * b[0];                                                    \
        } else if (op == FMPL_MOP_PROD) {                                          \
            T re = a[0] * b[0], im = a[0] * b[1];                                  \
            re -= a[1] * b[1];                                                     \
            im += a[1] * b[0];                                                     \
            r[0] = re, r[1] = im;                                                  \
        }                                                                          \
        memcpy(pr, r, (cplx ? 2 : 1) * sizeof(T));                                 \
    }
REF_FLOAT(ref_f32, float, isnan)
REF_FLOAT(ref_f64, double, isnan)
REF_FLOAT(ref_ld, long double, isnan)
#if HAVE_Q
static int q_isnan(quad x) { return x != x; }
REF_FLOAT(ref_q, quad, q_isnan)
#endif

/* r = a op b for one element (r starts as a copy of b). */
static void ref_elem(fmpl_mpi_op_kind op, const model *m, const unsigned char *a,
                     const unsigned char *b, unsigned char *r)
{
    memcpy(r, b, m->size);
    if (op == FMPL_MOP_NO_OP)
        return;
    if (op == FMPL_MOP_REPLACE) {
        memcpy(r, a, m->size);
        return;
    }
    if (m->pair) {
        /* MPI 6.9.4: (u,i) o (v,j) = (w,k), w = min/max(u,v), k = i if u is
         * better, min(i,j) if u == v, j if v is better; a NaN value wins
         * (the first one). */
        long double u = load_num(m->kind, m->w, a), v = load_num(m->kind, m->w, b);
        long double i = load_num(m->ikind, m->iw, a + m->ioff);
        long double j = load_num(m->ikind, m->iw, b + m->ioff);
        int take_v;
        if (isnan(u))
            take_v = 0;
        else if (isnan(v))
            take_v = 1;
        else
            take_v = op == FMPL_MOP_MINLOC ? v < u : v > u;
        memcpy(r, take_v ? b : a, m->w);
        int idx_from_b = take_v || (u == v && j < i);
        memcpy(r + m->ioff, idx_from_b ? b + m->ioff : a + m->ioff, m->iw);
        return;
    }
    switch (m->kind) {
    case K_SINT:
    case K_UINT:
        store_u(r, m->w, ref_int(op, m->kind == K_SINT, m->w, load_u(a, m->w), load_u(b, m->w)));
        break;
    case K_F32: ref_f32(op, m->complex_, a, b, r); break;
    case K_F64: ref_f64(op, m->complex_, a, b, r); break;
    case K_LD: ref_ld(op, m->complex_, a, b, r); break;
#if HAVE_Q
    case K_Q: ref_q(op, m->complex_, a, b, r); break;
#endif
    default: break;
    }
}

static int is_nan_bytes(int kind, const unsigned char *p)
{
#if HAVE_Q
    if (kind == K_Q) {
        quad q;
        memcpy(&q, p, sizeof q);
        return q != q;
    }
#endif
    return isnan(load_num(kind, kind == K_F32 ? 4 : kind == K_F64 ? 8 : sizeof(long double), p));
}

/* Equal as results of `op`: value bytes bit for bit; arithmetic NaNs as
 * "both NaN" (their payload and sign are the hardware's choice). */
static int elem_equal(fmpl_mpi_op_kind op, const model *m, const unsigned char *x,
                      const unsigned char *y)
{
    if (op == FMPL_MOP_REPLACE || op == FMPL_MOP_NO_OP || m->kind == K_RAW)
        return memcmp(x, y, m->size) == 0;
    if (m->pair)
        return memcmp(x, y, m->sig) == 0 && memcmp(x + m->ioff, y + m->ioff, m->iw) == 0;
    int arith = op == FMPL_MOP_SUM || op == FMPL_MOP_PROD;
    int fp = m->kind != K_SINT && m->kind != K_UINT;
    for (int c = 0; c < (m->complex_ ? 2 : 1); c++) {
        const unsigned char *p = x + c * m->w, *q = y + c * m->w;
        if (memcmp(p, q, m->sig) == 0)
            continue;
        if (fp && arith && is_nan_bytes(m->kind, p) && is_nan_bytes(m->kind, q))
            continue;
        return 0;
    }
    return 1;
}

static void hex(char *out, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n && i < 32; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

/* ------------------------------------------------------ one test case */

enum mode { DIRECT, VIA_OP, ALIASED };
#define GUARD 64

static void run_case(fmpl_mpi_op_kind op, fmpl_basic_type bt, fmpl_kernel_fn k, int64_t n,
                     size_t in_off, size_t io_off, int mode)
{
    model m = model_of(bt);
    size_t bytes = (size_t)n * m.size;
    /* in: exact size, so ASan sees any read past it; inout: guarded. */
    unsigned char *in = malloc(in_off + bytes + 1);
    unsigned char *io = malloc(io_off + bytes + GUARD);
    unsigned char *in0 = malloc(bytes + 1), *io0 = malloc(bytes + 1), *want = malloc(bytes + 1);
    if (!in || !io || !in0 || !io0 || !want) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    memset(io, 0xa5, io_off + bytes + GUARD);
    memset(in, 0x5a, in_off);
    for (int64_t i = 0; i < n; i++) {
        gen_elem(&m, in + in_off + i * m.size);
        gen_elem(&m, io + io_off + i * m.size);
    }
    const unsigned char *a = mode == ALIASED ? io + io_off : in + in_off;
    memcpy(in0, a, bytes);
    memcpy(io0, io + io_off, bytes);
    for (int64_t i = 0; i < n; i++)
        ref_elem(op, &m, in0 + i * m.size, io0 + i * m.size, want + i * m.size);

    if (mode == VIA_OP) {
        fmpl_op o;
        CHECK(fmpl_op_from_kernel(&o, k, m.size) == FMPL_SUCCESS, "wrap");
        CHECK(fmpl_op_check(&o) == FMPL_SUCCESS, "check wrapped");
        fmpl_op_apply(&o, a, io + io_off, n);
    } else {
        k(a, io + io_off, n);
    }
    checked_cases++;

    for (int64_t i = 0; i < n; i++) {
        const unsigned char *got = io + io_off + i * m.size, *exp = want + i * m.size;
        if (!elem_equal(op, &m, got, exp)) {
            char ha[72] = "", hb[72] = "", hg[72] = "", he[72] = "";
            hex(ha, in0 + i * m.size, m.size);
            hex(hb, io0 + i * m.size, m.size);
            hex(hg, got, m.size);
            hex(he, exp, m.size);
            CHECK(0, "%s on %s, n %lld offsets %zu/%zu mode %d, element %lld: in %s inout %s "
                  "-> got %s want %s", fmpl_mpi_op_name(op), BT_NAME(bt), (long long)n, in_off,
                  io_off, mode, (long long)i, ha, hb, hg, he);
            break;
        }
    }
    for (size_t i = 0; i < io_off; i++)
        if (io[i] != 0xa5) {
            CHECK(0, "%s on %s wrote before inout", fmpl_mpi_op_name(op), BT_NAME(bt));
            break;
        }
    for (size_t i = 0; i < GUARD; i++)
        if (io[io_off + bytes + i] != 0xa5) {
            CHECK(0, "%s on %s n %lld wrote past inout (byte %zu)", fmpl_mpi_op_name(op),
                  BT_NAME(bt), (long long)n, i);
            break;
        }
    if (mode != ALIASED)
        CHECK(memcmp(in + in_off, in0, bytes) == 0, "%s on %s wrote into in",
              fmpl_mpi_op_name(op), BT_NAME(bt));
    free(in), free(io), free(in0), free(io0), free(want);
}

static void test_all_pairs(void)
{
    static const int64_t counts[] = {0, 1, 2, 3, 7, 8, 15, 16, 17, 31, 33, 64, 100, 1000};
    static const size_t offsets[][2] = {{0, 0}, {1, 3}, {3, 1}, {7, 5}};
    for (int bt = 1; bt < FMPL_BT_COUNT_OF_TYPES; bt++) {
        for (int op = 0; op < FMPL_MOP_COUNT; op++) {
            fmpl_kernel_fn k = fmpl_mpi_kernel(op, bt);
            if (!k)
                continue;
            checked_pairs++;
            k(NULL, NULL, 0);       /* count 0: no access at all */
            k(NULL, NULL, -5);
            if (!modelled(bt) && op != FMPL_MOP_REPLACE && op != FMPL_MOP_NO_OP)
                continue;
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                for (size_t o = 0; o < sizeof offsets / sizeof *offsets; o++)
                    run_case(op, bt, k, counts[c], offsets[o][0], offsets[o][1],
                             o == 1 ? VIA_OP : DIRECT);
                run_case(op, bt, k, counts[c], 0, c % 4, ALIASED);
            }
        }
    }
}

/* ---------------------------------------------- written-out edge cases */

#define APPLY(op, bt, in, io, n)                                                   \
    do {                                                                           \
        fmpl_kernel_fn k_ = fmpl_mpi_kernel(op, bt);                               \
        CHECK(k_ != NULL, "no kernel for %s on %s", #op, #bt);                     \
        if (k_)                                                                    \
            k_(in, io, n);                                                         \
    } while (0)

static int same_bits_d(double x, double y) { return memcmp(&x, &y, sizeof x) == 0; }

static void test_edges(void)
{
    /* Signed wraparound, computed without UB (UBSan would stop here). */
    int a[4] = {INT_MAX, INT_MIN, INT_MIN, -7}, b[4] = {1, -1, 0, 3};
    APPLY(FMPL_MOP_SUM, FMPL_BT_INT, a, b, 4);
    CHECK(b[0] == INT_MIN && b[1] == INT_MAX && b[2] == INT_MIN && b[3] == -4, "int sum wrap");
    int c[2] = {INT_MIN, 65536}, d[2] = {-1, 65536};
    APPLY(FMPL_MOP_PROD, FMPL_BT_INT, c, d, 2);
    CHECK(d[0] == INT_MIN && d[1] == 0, "int prod wrap: %d %d", d[0], d[1]);
    int8_t e[2] = {127, -128}, f[2] = {1, -1};
    APPLY(FMPL_MOP_SUM, FMPL_BT_INT8, e, f, 2);
    CHECK(f[0] == -128 && f[1] == 127, "int8 sum wrap");
    unsigned short g = 65535, h = 65535;  /* promoted to int, 65535^2 would overflow */
    APPLY(FMPL_MOP_PROD, FMPL_BT_UNSIGNED_SHORT, &g, &h, 1);
    CHECK(h == 1, "ushort prod wrap: %u", h);
    uint64_t i = UINT64_MAX, j = 1;
    APPLY(FMPL_MOP_SUM, FMPL_BT_UINT64, &i, &j, 1);
    CHECK(j == 0, "uint64 sum wrap");
    long long l = LLONG_MIN, m = -1;
    APPLY(FMPL_MOP_PROD, FMPL_BT_LONG_LONG, &l, &m, 1);
    CHECK(m == LLONG_MIN, "long long prod wrap");
    long aint = LONG_MAX, aint2 = 1;
    APPLY(FMPL_MOP_SUM, FMPL_BT_AINT, &aint, &aint2, 1);
    CHECK(aint2 == LONG_MIN, "MPI_AINT sum wrap");
    long l1[3] = {0, 5, 7}, l2[3] = {3, 0, -1};
    APPLY(FMPL_MOP_LOR, FMPL_BT_AINT, l1, l2, 3); /* MPICH's extension */
    CHECK(l2[0] == 1 && l2[1] == 1 && l2[2] == 1, "LOR on MPI_AINT");
    long l3[2] = {0, 5}, l4[2] = {3, 2};
    APPLY(FMPL_MOP_LAND, FMPL_BT_AINT, l3, l4, 2);
    CHECK(l4[0] == 0 && l4[1] == 1, "LAND on MPI_AINT");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_LAND, FMPL_BT_F_INTEGER) == NULL, "no LAND on MPI_INTEGER");
    /* MPI_CHAR reduces as C's char, as in MPICH (mpi_ops.c); MPI_WCHAR not. */
    char chr[3] = {100, -3, 7}, chr2[3] = {27, 2, 9};
    APPLY(FMPL_MOP_SUM, FMPL_BT_CHAR, chr, chr2, 3);
    CHECK(chr2[0] == (char)127 && chr2[1] == (char)-1 && chr2[2] == 16, "MPI_CHAR sum");
    char cmax = (char)-1, cmax2 = 1;
    APPLY(FMPL_MOP_MAX, FMPL_BT_CHAR, &cmax, &cmax2, 1);
    CHECK(cmax2 == ((char)-1 < 0 ? 1 : (char)-1), "MPI_CHAR max follows char's signedness");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_WCHAR) == NULL, "no SUM on MPI_WCHAR");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_F_CHARACTER) == NULL, "no SUM on MPI_CHARACTER");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_MAX, FMPL_BT_SIGNED_CHAR) != NULL, "MAX on MPI_SIGNED_CHAR");
    signed char sc = -5, sc2 = 3;
    APPLY(FMPL_MOP_MIN, FMPL_BT_SIGNED_CHAR, &sc, &sc2, 1);
    CHECK(sc2 == -5, "signed char min is signed");
    unsigned char uc = 200, uc2 = 100;
    APPLY(FMPL_MOP_MAX, FMPL_BT_UNSIGNED_CHAR, &uc, &uc2, 1);
    CHECK(uc2 == 200, "unsigned char max is unsigned");

    /* MAX/MIN and NaN: the first NaN wins; ties keep `in`. */
    double x[6] = {NAN, 1.0, -0.0, 0.0, -NAN, 2.0};
    double y[6] = {1.0, NAN, 0.0, -0.0, NAN, -INFINITY};
    double nan_in = x[0], nan_io = y[1], nneg = x[4];
    APPLY(FMPL_MOP_MAX, FMPL_BT_DOUBLE, x, y, 6);
    CHECK(same_bits_d(y[0], nan_in), "max(NaN, 1) = the NaN");
    CHECK(same_bits_d(y[1], nan_io), "max(1, NaN) = the NaN");
    CHECK(same_bits_d(y[2], -0.0), "max(-0 in, +0) keeps in: %g", y[2]);
    CHECK(same_bits_d(y[3], 0.0), "max(+0 in, -0) keeps in");
    CHECK(same_bits_d(y[4], nneg), "max(-NaN in, NaN) keeps in's NaN");
    CHECK(y[5] == 2.0, "max(2, -inf)");
    float fx[2] = {1.0f, NAN}, fy[2] = {NAN, -1.0f};
    APPLY(FMPL_MOP_MIN, FMPL_BT_F_REAL, fx, fy, 2);
    CHECK(isnan(fy[0]) && isnan(fy[1]), "min with a NaN is a NaN");

    /* MINLOC / MAXLOC: equal values give the lower index, whatever the order. */
    struct { double v; int i; } p[3] = {{1.0, 5}, {1.0, 2}, {3.0, 9}},
                                q[3] = {{1.0, 2}, {1.0, 5}, {3.0, 1}};
    APPLY(FMPL_MOP_MINLOC, FMPL_BT_DOUBLE_INT, p, q, 3);
    CHECK(q[0].i == 2 && q[1].i == 2 && q[2].i == 1 && q[2].v == 3.0, "minloc ties");
    struct { double v; int i; } r[2] = {{7.0, 4}, {-1.0, 0}}, s[2] = {{7.5, 8}, {-2.0, 3}};
    APPLY(FMPL_MOP_MAXLOC, FMPL_BT_DOUBLE_INT, r, s, 2);
    CHECK(s[0].v == 7.5 && s[0].i == 8 && s[1].v == -1.0 && s[1].i == 0, "maxloc");
    struct { long double v; int i; } ld1 = {2.0L, 7}, ld2 = {2.0L, 3};
    APPLY(FMPL_MOP_MAXLOC, FMPL_BT_LONG_DOUBLE_INT, &ld1, &ld2, 1);
    CHECK(ld2.i == 3 && ld2.v == 2.0L, "long double int maxloc tie");
    float r2[4] = {5.0f, 3.0f, 5.0f, 1.0f}, r3[4] = {5.0f, 2.0f, 4.0f, 6.0f};  /* 2REAL */
    APPLY(FMPL_MOP_MINLOC, FMPL_BT_F_2REAL, r2, r3, 2);
    CHECK(r3[0] == 5.0f && r3[1] == 2.0f && r3[2] == 4.0f && r3[3] == 6.0f, "2REAL minloc");
    int32_t i2[2] = {-3, 10}, i3[2] = {-3, 4};  /* 2INTEGER */
    APPLY(FMPL_MOP_MAXLOC, FMPL_BT_F_2INTEGER, i2, i3, 1);
    CHECK(i3[0] == -3 && i3[1] == 4, "2INTEGER tie");
    struct { short v; int i; } sh1 = {-2, 1}, sh2 = {-3, 0};
    APPLY(FMPL_MOP_MAXLOC, FMPL_BT_SHORT_INT, &sh1, &sh2, 1);
    CHECK(sh2.v == -2 && sh2.i == 1, "short int maxloc");

    /* Logical: nonzero is true (every byte of a LOGICAL), result 1/0. */
    int32_t la[4] = {0x100, 2, 0, -1}, lb[4] = {1, 1, 0, 0};
    APPLY(FMPL_MOP_LAND, FMPL_BT_F_LOGICAL, la, lb, 4);
    CHECK(lb[0] == 1 && lb[1] == 1 && lb[2] == 0 && lb[3] == 0, "LOGICAL land");
    int32_t lc[3] = {2, 0, 0x100}, ld[3] = {1, 0, 0};
    APPLY(FMPL_MOP_LXOR, FMPL_BT_F_LOGICAL, lc, ld, 3);
    CHECK(ld[0] == 0 && ld[1] == 0 && ld[2] == 1, "LOGICAL lxor");
    unsigned char ba[3] = {0, 1, 2}, bb[3] = {0, 0, 0xff};  /* C bool, stray bytes true */
    APPLY(FMPL_MOP_LOR, FMPL_BT_C_BOOL, ba, bb, 3);
    CHECK(bb[0] == 0 && bb[1] == 1 && bb[2] == 1, "C bool lor");
    int ia[2] = {6, 0}, ib[2] = {3, 9};
    APPLY(FMPL_MOP_LAND, FMPL_BT_INT, ia, ib, 2);
    CHECK(ib[0] == 1 && ib[1] == 0, "int land is logical");
    unsigned char by[2] = {0xf0, 0x0f}, by2[2] = {0xff, 0xff};
    APPLY(FMPL_MOP_BXOR, FMPL_BT_BYTE, by, by2, 2);
    CHECK(by2[0] == 0x0f && by2[1] == 0xf0, "byte bxor");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_LAND, FMPL_BT_BYTE) == NULL, "no LAND on MPI_BYTE");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_BAND, FMPL_BT_C_BOOL) == NULL, "no BAND on MPI_C_BOOL");

    /* Complex. */
    double z1[2] = {1, 2}, z2[2] = {3, 4};
    APPLY(FMPL_MOP_PROD, FMPL_BT_C_DOUBLE_COMPLEX, z1, z2, 1);
    CHECK(z2[0] == -5 && z2[1] == 10, "(1+2i)(3+4i)");
    long double z3[2] = {1, 1}, z4[2] = {1, -1};
    APPLY(FMPL_MOP_PROD, FMPL_BT_C_LONG_DOUBLE_COMPLEX, z3, z4, 1);
    CHECK(z4[0] == 2 && z4[1] == 0, "(1+i)(1-i)");
    float z5[2] = {0.5f, -1}, z6[2] = {0.25f, 2};
    APPLY(FMPL_MOP_SUM, FMPL_BT_F_COMPLEX, z5, z6, 1);
    CHECK(z6[0] == 0.75f && z6[1] == 1, "complex sum");
    CHECK(fmpl_mpi_kernel(FMPL_MOP_MAX, FMPL_BT_C_DOUBLE_COMPLEX) == NULL, "no complex MAX");

#if HAVE_Q
    /* MPI_REAL16 is binary128: 1 + 2^-100 is exact there (not in x87). */
    quad q1 = 1, q2 = 1;
    for (int k = 0; k < 100; k++)
        q2 /= 2;
    quad small = q2;
    APPLY(FMPL_MOP_SUM, FMPL_BT_F_REAL16, &q1, &q2, 1);
    CHECK(q2 - 1 == small, "REAL16 keeps 113 bits");
#endif

    /* REPLACE and NO_OP on types without arithmetic, and count 0. */
    struct { long double v; int i; } rp1[2] = {{1, 2}, {3, 4}}, rp2[2] = {{5, 6}, {7, 8}};
    APPLY(FMPL_MOP_REPLACE, FMPL_BT_LONG_DOUBLE_INT, rp1, rp2, 2);
    CHECK(rp2[0].v == 1 && rp2[0].i == 2 && rp2[1].v == 3 && rp2[1].i == 4, "replace");
    char ch1[3] = "ab", ch2[3] = "xy";
    APPLY(FMPL_MOP_NO_OP, FMPL_BT_CHAR, ch1, ch2, 3);
    CHECK(strcmp(ch2, "xy") == 0, "no_op");
    APPLY(FMPL_MOP_REPLACE, FMPL_BT_CHAR, ch1, ch2, 3);
    CHECK(strcmp(ch2, "ab") == 0, "replace char");
    APPLY(FMPL_MOP_REPLACE, FMPL_BT_CHAR, ch1, ch1, 3);  /* same buffer */
    CHECK(strcmp(ch1, "ab") == 0, "replace in place");
}

/* --------------------------------------------------------- the wrappers */

/* What an MPI binding does for MPI_Op_create'd functions: the user function
 * has MPI's signature; the trampoline gets (in, inout, count, ctx) and calls
 * it in pieces of at most `chunk` elements (INT_MAX in the binding). */
typedef int mock_datatype;
typedef void mock_user_function(void *invec, void *inoutvec, int *len, mock_datatype *dt);
typedef struct {
    mock_user_function *fn;
    mock_datatype dt;
    size_t extent;
    int64_t chunk;
    int calls;
} mock_ctx;

static void trampoline(const void *in, void *inout, int64_t count, void *ctx_)
{
    mock_ctx *ctx = ctx_;
    const char *a = in;
    char *b = inout;
    while (count > 0) {
        int len = (int)(count < ctx->chunk ? count : ctx->chunk);
        ctx->fn((void *)a, b, &len, &ctx->dt);
        ctx->calls++;
        a += (size_t)len * ctx->extent;
        b += (size_t)len * ctx->extent;
        count -= len;
    }
}

/* 2x2 integer matrices, inout = in * inout: associative, not commutative. */
typedef struct { int64_t m[4]; } mat2;
static int seen_dt;
static void mat_mul_user(void *invec, void *inoutvec, int *len, mock_datatype *dt)
{
    const mat2 *x = invec;
    mat2 *y = inoutvec;
    seen_dt = *dt;
    for (int i = 0; i < *len; i++) {
        mat2 r = {{x[i].m[0] * y[i].m[0] + x[i].m[1] * y[i].m[2],
                   x[i].m[0] * y[i].m[1] + x[i].m[1] * y[i].m[3],
                   x[i].m[2] * y[i].m[0] + x[i].m[3] * y[i].m[2],
                   x[i].m[2] * y[i].m[1] + x[i].m[3] * y[i].m[3]}};
        y[i] = r;
    }
}

static void test_wrappers(void)
{
    /* Kernel op: the core's view. */
    fmpl_op o;
    CHECK(fmpl_op_from_kernel(&o, fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_DOUBLE), sizeof(double)) ==
              FMPL_SUCCESS, "from_kernel");
    CHECK(fmpl_op_check(&o) == FMPL_SUCCESS, "kernel op valid");
    CHECK(fmpl_op_is_builtin(&o), "kernel ops take any address (builtin)");
    CHECK(fmpl_op_elem_size(&o) == sizeof(double), "elem size");
    double in[3] = {1, 2, 3}, io[3] = {10, 20, 30};
    fmpl_op_apply(&o, in, io, 3);
    CHECK(io[0] == 11 && io[1] == 22 && io[2] == 33, "apply kernel op");
    fmpl_op_apply(&o, in, io, 0);
    fmpl_op_apply(&o, NULL, NULL, 0);
    fmpl_op *po = &o;
    CHECK(fmpl_op_delete(&po) == FMPL_ERR_OP && po == &o, "kernel op is not freed");

    CHECK(fmpl_op_from_kernel(NULL, fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_INT), 4) == FMPL_ERR_ARG,
          "NULL out");
    CHECK(fmpl_op_from_kernel(&o, NULL, 4) == FMPL_ERR_ARG, "NULL kernel");
    CHECK(fmpl_op_from_kernel(&o, fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_INT), 0) == FMPL_ERR_ARG,
          "elem_size 0");
    struct fmpl_op bad;
    fmpl_op_from_kernel(&bad, fmpl_mpi_kernel(FMPL_MOP_SUM, FMPL_BT_INT), 4);
    bad.kernel = NULL;
    CHECK(fmpl_op_check(&bad) == FMPL_ERR_OP, "kernel kind without kernel");

    /* MPI user op, through the trampoline, split into pieces of 3. */
    mock_ctx ctx = {mat_mul_user, 0x4c00beef, sizeof(mat2), 3, 0};
    fmpl_op u;
    CHECK(fmpl_op_from_mpi_user(&u, trampoline, &ctx, sizeof(mat2)) == FMPL_SUCCESS, "from_user");
    CHECK(fmpl_op_check(&u) == FMPL_SUCCESS, "user op valid");
    CHECK(!fmpl_op_is_builtin(&u), "user op needs aligned buffers");
    enum { N = 10 };
    mat2 a[N], b[N];
    for (int i = 0; i < N; i++) {
        a[i] = (mat2){{1, i, 0, 1}};   /* [1 i; 0 1] */
        b[i] = (mat2){{1, 0, i, 1}};   /* [1 0; i 1] */
    }
    fmpl_op_apply(&u, a, b, N);
    int ok = 1;
    for (int i = 0; i < N; i++)  /* a*b = [1+i^2 i; i 1]; b*a would be [1 i; i 1+i^2] */
        ok &= b[i].m[0] == 1 + i * i && b[i].m[1] == i && b[i].m[2] == i && b[i].m[3] == 1;
    CHECK(ok, "user op order: inout = in op inout");
    CHECK(ctx.calls == 4, "pieces of 3: %d calls", ctx.calls);
    CHECK(seen_dt == 0x4c00beef, "datatype handle reaches the user function");
    fmpl_op *pu = &u;
    CHECK(fmpl_op_delete(&pu) == FMPL_ERR_OP && pu == &u, "MPI user op is not freed");
    CHECK(fmpl_op_from_mpi_user(&u, NULL, &ctx, 8) == FMPL_ERR_ARG, "NULL callback");
    CHECK(fmpl_op_from_mpi_user(NULL, trampoline, &ctx, 8) == FMPL_ERR_ARG, "NULL out");
    CHECK(fmpl_op_from_mpi_user(&u, trampoline, &ctx, 0) == FMPL_ERR_ARG, "size 0");
    fmpl_op_from_mpi_user(&bad, trampoline, &ctx, 8);
    bad.mpi_fn = NULL;
    CHECK(fmpl_op_check(&bad) == FMPL_ERR_OP, "MPI user kind without callback");

    /* The native kinds still work beside the new ones. */
    double s = 1, t = 2;
    fmpl_op_apply(fmpl_dsum, &s, &t, 1);
    CHECK(t == 3, "native dsum");
}

/* ------------------------------------------------------------ bench */

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void bench(void)
{
    static const struct { fmpl_mpi_op_kind op; fmpl_basic_type bt; } cases[] = {
        {FMPL_MOP_SUM, FMPL_BT_DOUBLE}, {FMPL_MOP_MAX, FMPL_BT_DOUBLE},
        {FMPL_MOP_MIN, FMPL_BT_FLOAT},  {FMPL_MOP_SUM, FMPL_BT_INT},
        {FMPL_MOP_PROD, FMPL_BT_INT8},  {FMPL_MOP_BXOR, FMPL_BT_BYTE},
        {FMPL_MOP_LAND, FMPL_BT_F_LOGICAL}, {FMPL_MOP_PROD, FMPL_BT_C_DOUBLE_COMPLEX},
        {FMPL_MOP_SUM, FMPL_BT_INT64},  {FMPL_MOP_MAXLOC, FMPL_BT_DOUBLE_INT},
        {FMPL_MOP_SUM, FMPL_BT_LONG_DOUBLE},
    };
    static const size_t sizes[] = {32768, 4u << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        size_t bytes = sizes[s];
        unsigned char *a = aligned_alloc(64, bytes), *b = aligned_alloc(64, bytes);
        memset(a, 1, bytes);
        memset(b, 2, bytes);
        long reps = (long)((256u << 20) / bytes);
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            fmpl_kernel_fn k = fmpl_mpi_kernel(cases[c].op, cases[c].bt);
            int64_t n = (int64_t)(bytes / fmpl_basic_types[cases[c].bt].size);
            double t0 = now();
            for (long r = 0; r < reps; r++) {
                k(a, b, n);
                __asm__ volatile("" ::"r"(b) : "memory");
            }
            double t = now() - t0;
            printf("%-11s %-22s %8zu bytes: %6.2f GB/s\n", fmpl_mpi_op_name(cases[c].op),
                   BT_NAME(cases[c].bt), bytes, (double)reps * (double)bytes / t / 1e9);
        }
        double t0 = now();
        for (long r = 0; r < reps; r++) {
            memcpy(b, a, bytes);
            __asm__ volatile("" ::"r"(b) : "memory");
        }
        printf("%-34s %8zu bytes: %6.2f GB/s\n", "memcpy", bytes,
               (double)reps * (double)bytes / (now() - t0) / 1e9);
        free(a), free(b);
    }
}

int main(int argc, char **argv)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1);  /* errors below are provoked on purpose */
    fmpl_error_init();
    if (argc > 1 && strcmp(argv[1], "--bench") == 0) {
        bench();
        return 0;
    }
    test_table();
    test_edges();
    test_all_pairs();
    test_wrappers();
    if (failures) {
        fprintf(stderr, "test_mpi_ops: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_mpi_ops: ok (%ld (op, type) pairs, %ld cases)\n", checked_pairs, checked_cases);
    return 0;
}
