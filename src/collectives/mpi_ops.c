/* MPI predefined reduction operations: the kernels and the (op, type) table.
 * Semantics of the kernels: see mpi_ops.h.
 *
 * Which operation applies to which type (MPI-4.0 6.9.2, 6.9.4, 12.3.4)
 *
 *   Class            FMPL basic types (FMPL_BT_...)
 *   C integer        CHAR SIGNED_CHAR UNSIGNED_CHAR SHORT UNSIGNED_SHORT INT UNSIGNED
 *                    LONG UNSIGNED_LONG LONG_LONG UNSIGNED_LONG_LONG
 *                    INT8 INT16 INT32 INT64 UINT8 UINT16 UINT32 UINT64
 *   Fortran integer  F_INTEGER F_INTEGER1 F_INTEGER2 F_INTEGER4 F_INTEGER8
 *   Floating point   FLOAT DOUBLE LONG_DOUBLE F_REAL F_DOUBLE_PRECISION
 *                    F_REAL4 F_REAL8 F_REAL16 F_REAL2 C_FLOAT16
 *   Logical          F_LOGICAL C_BOOL CXX_BOOL F_LOGICAL1 F_LOGICAL2 F_LOGICAL4
 *                    F_LOGICAL8 F_LOGICAL16
 *   Complex          C_FLOAT_COMPLEX C_DOUBLE_COMPLEX C_LONG_DOUBLE_COMPLEX
 *                    CXX_FLOAT_COMPLEX CXX_DOUBLE_COMPLEX CXX_LONG_DOUBLE_COMPLEX
 *                    F_COMPLEX F_DOUBLE_COMPLEX F_COMPLEX8 F_COMPLEX16 F_COMPLEX32
 *                    F_COMPLEX4
 *   Byte             BYTE
 *   Multi-language   AINT OFFSET COUNT
 *   Pair (6.9.4)     FLOAT_INT DOUBLE_INT LONG_INT 2INT SHORT_INT LONG_DOUBLE_INT
 *                    F_2INTEGER F_2REAL F_2DOUBLE_PRECISION
 *   none             WCHAR F_CHARACTER PACKED
 *
 *                   MAX MIN SUM PROD LAND BAND LOR BOR LXOR BXOR MINLOC MAXLOC REPL NO_OP
 *   C integer        x   x   x   x    x    x    x   x   x    x                  x    x
 *   Fortran integer  x   x   x   x         x        x        x                  x    x
 *   Floating point   x   x   x   x                                              x    x
 *   Complex                  x   x                                              x    x
 *   Logical                           x         x       x                       x    x
 *   Byte                                   x        x        x                  x    x
 *   Multi-language   x   x   x   x    x    x    x   x   x    x                  x    x
 *   Pair                                                          x      x      x    x
 *   none                                                                        x    x
 *
 * Decisions, each from the standard's text:
 *  - MPI_WCHAR and MPI_CHARACTER are printable characters and "cannot be
 *    used in reduction operations" (MPI-4.1 3.2.2).  MPI_CHAR is too, by the
 *    standard, but MPICH and Open MPI reduce it as the C integer it is (the
 *    C char's signedness), the most used MPI micro-benchmark suite reduces
 *    and accumulates MPI_CHAR with MPI_SUM by default, and MPICH's test
 *    suite does too: FMPL follows them and files MPI_CHAR with the C
 *    integers, beside MPI_SIGNED_CHAR and MPI_UNSIGNED_CHAR.
 *  - MPI_AINT, MPI_OFFSET, MPI_COUNT form their own class ("multi-language
 *    types"): the standard lists MAX MIN SUM PROD BAND BOR BXOR for them;
 *    we also allow LAND LOR LXOR, as MPICH does (its test suite's allred
 *    checks them, and programs written for MPICH rely on it): they are
 *    C integers underneath.
 *  - Fortran integers get no logical operation (LAND/LOR/LXOR are for C
 *    integer and Logical only); MPI_BYTE gets only the bitwise ones.
 *  - Logical types are read as integers of their size (C bool 1 byte,
 *    Fortran LOGICAL 4), nonzero = true, result 1/0 (gfortran's .TRUE.).
 *    Reading C bool as a byte also makes a stray value (2, 0xff) defined:
 *    true.
 *  - MPI_REAL16 / MPI_COMPLEX32 are gfortran's REAL(16): IEEE binary128, not
 *    the x86 80-bit long double that shares their 16-byte size.  They are
 *    computed as __float128 (or long double where that is binary128, e.g.
 *    aarch64); with neither, the kernels are NULL (MPI_ERR_OP) rather than
 *    wrong.
 *  - MPI_REAL2, MPI_COMPLEX4 (MPI-4.1) and MPICH's MPIX_C_FLOAT16 are IEEE
 *    binary16, computed as _Float16 (each operation rounded to half
 *    precision, as Fortran's REAL(2) arithmetic is); a compiler without
 *    _Float16 leaves their kernels NULL (MPI_ERR_OP), never wrong.
 *  - MPI_LOGICAL1 .. MPI_LOGICAL16 (MPI-4.1) are logicals of their size;
 *    LOGICAL16 is read as a 128-bit integer.
 *  - Fortran pair types are two values of the same type (MPI_2REAL's index
 *    is a REAL, compared as one); C pair types are struct {value; int}.
 *  - MPI_REPLACE and MPI_NO_OP do not look at the bits, so they exist for
 *    every basic type (accumulate takes any predefined type); that they are
 *    one-sided only is the binding's check (fmpl_mpi_op_is_rma_only).
 *  - Complex MAX/MIN and pair SUM etc. do not exist in MPI: NULL.
 *
 * Implementation
 *  - Kernels are written once per machine representation (rep): MPI_INT,
 *    MPI_INT32_T, MPI_INTEGER and MPI_INTEGER4 share the i32 kernels; C
 *    types of implementation-defined size (long, ...) pick theirs by sizeof.
 *    A type's class says which ops it has, its rep which code runs.
 *  - Elements are accessed through 1-byte-aligned typedefs (as in
 *    reduce_ops.c): any byte address is valid, and GCC still vectorises with
 *    unaligned vector loads; this file is built with loop vectorisation on
 *    (pragma below) because -O2 alone vectorises no unknown-count loop.
 *  - Each kernel reads both operands of element i before writing element i,
 *    so in == inout works.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include "collectives/mpi_ops.h"

#include <float.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* IEEE binary128 for MPI_REAL16 / MPI_COMPLEX32 (see above). */
#if LDBL_MANT_DIG == 113
#define HAVE_Q 1
typedef long double quad;
#elif defined(__SIZEOF_FLOAT128__)
#define HAVE_Q 1
typedef __float128 quad;
#else
#define HAVE_Q 0
#endif

/* IEEE binary16 for MPI_REAL2 / MPI_COMPLEX4 / MPIX_C_FLOAT16 (see above). */
#if defined(__FLT16_MANT_DIG__)
#define HAVE_H 1
#else
#define HAVE_H 0
#endif

/* ------------------------------------------------- element types (tags) */

/* t_<tag>: the value type; ua_<tag>: the same at any byte address. */
#define SCALAR(tag, T)                                                             \
    typedef T t_##tag;                                                             \
    typedef T ua_##tag __attribute__((aligned(1)));

SCALAR(i8, int8_t)
SCALAR(i16, int16_t)
SCALAR(i32, int32_t)
SCALAR(i64, int64_t)
SCALAR(u8, uint8_t)
SCALAR(u16, uint16_t)
SCALAR(u32, uint32_t)
SCALAR(u64, uint64_t)
SCALAR(f32, float)
SCALAR(f64, double)
SCALAR(ld, long double)
SCALAR(sl, long)        /* value of MPI_LONG_INT */
#if HAVE_Q
SCALAR(q, quad)
#endif
#if HAVE_H
SCALAR(h, _Float16)
#endif
SCALAR(u128, unsigned __int128) /* MPI_LOGICAL16: logical operations only */

/* NaN tests for the shared MAX/MIN/MINLOC/MAXLOC code. */
#define NAN_FP(x) __builtin_isnan(x)
#define NAN_NO(x) 0

/* ------------------------------------------------------------- kernels */

/* name(in, inout, n): inout[i] = EXPR, where a = in[i], b = inout[i]. */
#define ELEMWISE(name, tag, EXPR)                                                  \
    static void name(const void *in_, void *io_, int64_t n)                        \
    {                                                                              \
        const ua_##tag *in = in_;                                                  \
        ua_##tag *io = io_;                                                        \
        for (int64_t i = 0; i < n; i++) {                                          \
            t_##tag a = in[i], b = io[i];                                          \
            io[i] = (t_##tag)(EXPR);                                               \
        }                                                                          \
    }

/* MAX and MIN: take b (inout) only if it is strictly better than a, or a
 * NaN while a is not; ties and NaN in a keep a (in).  ISNAN is NAN_FP or,
 * for integers, NAN_NO (then this is plain b > a ? b : a). */
#define MAXMIN_KERNELS(tag, ISNAN)                                                 \
    ELEMWISE(max_##tag, tag, !ISNAN(a) && (ISNAN(b) || b > a) ? b : a)             \
    ELEMWISE(min_##tag, tag, !ISNAN(a) && (ISNAN(b) || b < a) ? b : a)

/* Integers.  UT is the unsigned type of the same width: sums and products
 * wrap in it (signed overflow would be UB); the 1u * makes types narrower
 * than int compute in unsigned int, not in int (where 0xffff * 0xffff
 * overflows).  Logical ops: nonzero is true, result 1/0. */
#define INT_KERNELS(tag, UT)                                                       \
    MAXMIN_KERNELS(tag, NAN_NO)                                                    \
    ELEMWISE(sum_##tag, tag, (UT)(1u * (UT)a + (UT)b))                             \
    ELEMWISE(prod_##tag, tag, (UT)(1u * (UT)a * (UT)b))                            \
    ELEMWISE(land_##tag, tag, (a != 0) & (b != 0))                                 \
    ELEMWISE(lor_##tag, tag, (a != 0) | (b != 0))                                  \
    ELEMWISE(lxor_##tag, tag, (a != 0) ^ (b != 0))                                 \
    ELEMWISE(band_##tag, tag, a & b)                                               \
    ELEMWISE(bor_##tag, tag, a | b)                                                \
    ELEMWISE(bxor_##tag, tag, a ^ b)

INT_KERNELS(i8, uint8_t)
INT_KERNELS(i16, uint16_t)
INT_KERNELS(i32, uint32_t)
INT_KERNELS(i64, uint64_t)
INT_KERNELS(u8, uint8_t)
INT_KERNELS(u16, uint16_t)
INT_KERNELS(u32, uint32_t)
INT_KERNELS(u64, uint64_t)
ELEMWISE(land_u128, u128, (a != 0) & (b != 0))
ELEMWISE(lor_u128, u128, (a != 0) | (b != 0))
ELEMWISE(lxor_u128, u128, (a != 0) ^ (b != 0))

/* Real floating point, and complex on top of it: an element is (re, im) of
 * the real type; the sum is the real sum over 2n components. */
#define FLOAT_KERNELS(tag)                                                         \
    MAXMIN_KERNELS(tag, NAN_FP)                                                    \
    ELEMWISE(sum_##tag, tag, a + b)                                                \
    ELEMWISE(prod_##tag, tag, a * b)                                               \
    static void sum_c##tag(const void *in, void *io, int64_t n)                    \
    {                                                                              \
        sum_##tag(in, io, 2 * n);                                                  \
    }                                                                              \
    static void prod_c##tag(const void *in_, void *io_, int64_t n)                 \
    {                                                                              \
        const ua_##tag *in = in_;                                                  \
        ua_##tag *io = io_;                                                        \
        for (int64_t i = 0; i < n; i++) {                                          \
            t_##tag ar = in[2 * i], ai = in[2 * i + 1];                            \
            t_##tag br = io[2 * i], bi = io[2 * i + 1];                            \
            io[2 * i] = ar * br - ai * bi;                                         \
            io[2 * i + 1] = ar * bi + ai * br;                                     \
        }                                                                          \
    }

FLOAT_KERNELS(f32)
FLOAT_KERNELS(f64)
FLOAT_KERNELS(ld)
#if HAVE_Q
FLOAT_KERNELS(q)
#endif
#if HAVE_H
FLOAT_KERNELS(h)
#endif

/* MINLOC / MAXLOC on struct {t_<vtag> v; t_<itag> i;}.  The value: b if
 * strictly better (BETTER is < or >) or a NaN while a is not, else a.  The
 * index: b's if b's value was taken, the smaller one if the values are
 * equal, else a's.  Only the two fields are written, not the padding. */
#define PAIR_KERNEL(fn, name, vtag, itag, ISNAN, BETTER)                           \
    static void fn(const void *in_, void *io_, int64_t n)                          \
    {                                                                              \
        enum { S = sizeof(pair_##name), OFF = offsetof(pair_##name, i) };          \
        const unsigned char *in = in_;                                             \
        unsigned char *io = io_;                                                   \
        for (int64_t k = 0; k < n; k++) {                                          \
            const unsigned char *pa = in + k * S;                                  \
            unsigned char *pb = io + k * S;                                        \
            t_##vtag a = *(const ua_##vtag *)pa, b = *(const ua_##vtag *)pb;       \
            t_##itag ia = *(const ua_##itag *)(pa + OFF);                          \
            t_##itag ib = *(const ua_##itag *)(pb + OFF);                          \
            int take_b = !ISNAN(a) && (ISNAN(b) || b BETTER a);                    \
            int tie = a == b;                                                      \
            *(ua_##vtag *)pb = take_b ? b : a;                                     \
            *(ua_##itag *)(pb + OFF) = take_b || (tie && ib < ia) ? ib : ia;       \
        }                                                                          \
    }

#define PAIR_KERNELS(name, vtag, itag, ISNAN)                                      \
    typedef struct { t_##vtag v; t_##itag i; } pair_##name;                        \
    PAIR_KERNEL(minloc_##name, name, vtag, itag, ISNAN, <)                         \
    PAIR_KERNEL(maxloc_##name, name, vtag, itag, ISNAN, >)

PAIR_KERNELS(float_int, f32, i32, NAN_FP)        /* MPI_FLOAT_INT */
PAIR_KERNELS(double_int, f64, i32, NAN_FP)       /* MPI_DOUBLE_INT */
PAIR_KERNELS(long_int, sl, i32, NAN_NO)          /* MPI_LONG_INT */
PAIR_KERNELS(two_int, i32, i32, NAN_NO)          /* MPI_2INT, MPI_2INTEGER */
PAIR_KERNELS(short_int, i16, i32, NAN_NO)        /* MPI_SHORT_INT */
PAIR_KERNELS(ldouble_int, ld, i32, NAN_FP)       /* MPI_LONG_DOUBLE_INT */
PAIR_KERNELS(two_real, f32, f32, NAN_FP)         /* MPI_2REAL */
PAIR_KERNELS(two_dp, f64, f64, NAN_FP)           /* MPI_2DOUBLE_PRECISION */

_Static_assert(sizeof(int) == 4 && sizeof(short) == 2, "C pair index is a 4-byte int");

/* REPLACE, one per element size; NO_OP. */
#define REPLACE_KERNEL(S)                                                          \
    static void replace_##S(const void *in, void *io, int64_t n)                   \
    {                                                                              \
        if (n > 0 && in != io)                                                     \
            memmove(io, in, (size_t)n * S);                                        \
    }
REPLACE_KERNEL(1)
REPLACE_KERNEL(2)
REPLACE_KERNEL(4)
REPLACE_KERNEL(8)
REPLACE_KERNEL(16)
REPLACE_KERNEL(32)

static void no_op(const void *in, void *io, int64_t n)
{
    (void)in, (void)io, (void)n;
}

/* ---------------------------------------------------- representations */

enum rep {
    R_NONE,
    R_I8, R_I16, R_I32, R_I64, R_U8, R_U16, R_U32, R_U64,
    R_F32, R_F64, R_LD, R_Q, R_H,
    R_C32, R_C64, R_CLD, R_CQ, R_CH,
    R_L128,
    R_FLOAT_INT, R_DOUBLE_INT, R_LONG_INT, R_2INT, R_SHORT_INT, R_LDOUBLE_INT,
    R_2REAL, R_2DP,
    R_COUNT
};

#define INT_ROW(tag)                                                               \
    {[FMPL_MOP_MAX] = max_##tag, [FMPL_MOP_MIN] = min_##tag,                       \
     [FMPL_MOP_SUM] = sum_##tag, [FMPL_MOP_PROD] = prod_##tag,                     \
     [FMPL_MOP_LAND] = land_##tag, [FMPL_MOP_BAND] = band_##tag,                   \
     [FMPL_MOP_LOR] = lor_##tag, [FMPL_MOP_BOR] = bor_##tag,                       \
     [FMPL_MOP_LXOR] = lxor_##tag, [FMPL_MOP_BXOR] = bxor_##tag}
#define FLOAT_ROW(tag)                                                             \
    {[FMPL_MOP_MAX] = max_##tag, [FMPL_MOP_MIN] = min_##tag,                       \
     [FMPL_MOP_SUM] = sum_##tag, [FMPL_MOP_PROD] = prod_##tag}
#define COMPLEX_ROW(tag) {[FMPL_MOP_SUM] = sum_c##tag, [FMPL_MOP_PROD] = prod_c##tag}
#define PAIR_ROW(name) {[FMPL_MOP_MINLOC] = minloc_##name, [FMPL_MOP_MAXLOC] = maxloc_##name}

/* Kernels by representation and operation (REPLACE and NO_OP apart). */
static const fmpl_kernel_fn kernels[R_COUNT][FMPL_MOP_REPLACE] = {
    [R_I8] = INT_ROW(i8),      [R_I16] = INT_ROW(i16),
    [R_I32] = INT_ROW(i32),    [R_I64] = INT_ROW(i64),
    [R_U8] = INT_ROW(u8),      [R_U16] = INT_ROW(u16),
    [R_U32] = INT_ROW(u32),    [R_U64] = INT_ROW(u64),
    [R_F32] = FLOAT_ROW(f32),  [R_F64] = FLOAT_ROW(f64),  [R_LD] = FLOAT_ROW(ld),
    [R_C32] = COMPLEX_ROW(f32), [R_C64] = COMPLEX_ROW(f64), [R_CLD] = COMPLEX_ROW(ld),
#if HAVE_Q
    [R_Q] = FLOAT_ROW(q),      [R_CQ] = COMPLEX_ROW(q),
#endif
#if HAVE_H
    [R_H] = FLOAT_ROW(h),      [R_CH] = COMPLEX_ROW(h),
#endif
    [R_L128] = {[FMPL_MOP_LAND] = land_u128, [FMPL_MOP_LOR] = lor_u128,
                [FMPL_MOP_LXOR] = lxor_u128},
    [R_FLOAT_INT] = PAIR_ROW(float_int),     [R_DOUBLE_INT] = PAIR_ROW(double_int),
    [R_LONG_INT] = PAIR_ROW(long_int),       [R_2INT] = PAIR_ROW(two_int),
    [R_SHORT_INT] = PAIR_ROW(short_int),     [R_LDOUBLE_INT] = PAIR_ROW(ldouble_int),
    [R_2REAL] = PAIR_ROW(two_real),          [R_2DP] = PAIR_ROW(two_dp),
};

/* The integer rep of a C type by its size and signedness. */
#define SREP(T)                                                                    \
    (sizeof(T) == 1 ? R_I8 : sizeof(T) == 2 ? R_I16 : sizeof(T) == 4 ? R_I32       \
     : sizeof(T) == 8 ? R_I64 : R_NONE)
#define UREP(T)                                                                    \
    (sizeof(T) == 1 ? R_U8 : sizeof(T) == 2 ? R_U16 : sizeof(T) == 4 ? R_U32       \
     : sizeof(T) == 8 ? R_U64 : R_NONE)

/* ------------------------------------------------------------- classes */

enum cls { CL_NONE, CL_C_INT, CL_F_INT, CL_FLOAT, CL_COMPLEX, CL_LOGICAL, CL_BYTE, CL_MULTI,
           CL_PAIR, CL_COUNT };

#define OP_BIT(o) (1u << (o))
#define OP(o) OP_BIT(FMPL_MOP_##o)
#define MAXMIN (OP(MAX) | OP(MIN))
#define ARITH (OP(SUM) | OP(PROD))
#define LOGIC (OP(LAND) | OP(LOR) | OP(LXOR))
#define BITS (OP(BAND) | OP(BOR) | OP(BXOR))

/* The table above, row by row (REPLACE and NO_OP: every type). */
static const uint16_t class_ops[CL_COUNT] = {
    [CL_NONE] = 0,
    [CL_C_INT] = MAXMIN | ARITH | LOGIC | BITS,
    [CL_F_INT] = MAXMIN | ARITH | BITS,
    [CL_FLOAT] = MAXMIN | ARITH,
    [CL_COMPLEX] = ARITH,
    [CL_LOGICAL] = LOGIC,
    [CL_BYTE] = BITS,
    [CL_MULTI] = MAXMIN | ARITH | LOGIC | BITS, /* LOGIC: an MPICH extension */
    [CL_PAIR] = OP(MINLOC) | OP(MAXLOC),
};

#if HAVE_Q
#define R_REAL16 R_Q
#define R_COMPLEX32 R_CQ
#else
#define R_REAL16 R_NONE
#define R_COMPLEX32 R_NONE
#endif

/* Class and representation of every basic type.  Fixed-size types name
 * their rep; C types of implementation-defined size take it by sizeof.  The
 * unit test checks that each rep's element size is the basic type's size. */
static const struct { uint8_t cls, rep; } type_map[FMPL_BT_COUNT_OF_TYPES] = {
    [FMPL_BT_NONE] = {CL_NONE, R_NONE},
    [FMPL_BT_CHAR] = {CL_C_INT, (char)-1 < 0 ? R_I8 : R_U8}, /* as MPICH: see above */
    [FMPL_BT_SIGNED_CHAR] = {CL_C_INT, R_I8},
    [FMPL_BT_UNSIGNED_CHAR] = {CL_C_INT, R_U8},
    [FMPL_BT_BYTE] = {CL_BYTE, R_U8},
    [FMPL_BT_WCHAR] = {CL_NONE, R_NONE},
    [FMPL_BT_SHORT] = {CL_C_INT, SREP(short)},
    [FMPL_BT_UNSIGNED_SHORT] = {CL_C_INT, UREP(unsigned short)},
    [FMPL_BT_INT] = {CL_C_INT, SREP(int)},
    [FMPL_BT_UNSIGNED] = {CL_C_INT, UREP(unsigned)},
    [FMPL_BT_LONG] = {CL_C_INT, SREP(long)},
    [FMPL_BT_UNSIGNED_LONG] = {CL_C_INT, UREP(unsigned long)},
    [FMPL_BT_LONG_LONG] = {CL_C_INT, SREP(long long)},
    [FMPL_BT_UNSIGNED_LONG_LONG] = {CL_C_INT, UREP(unsigned long long)},
    [FMPL_BT_INT8] = {CL_C_INT, R_I8},
    [FMPL_BT_INT16] = {CL_C_INT, R_I16},
    [FMPL_BT_INT32] = {CL_C_INT, R_I32},
    [FMPL_BT_INT64] = {CL_C_INT, R_I64},
    [FMPL_BT_UINT8] = {CL_C_INT, R_U8},
    [FMPL_BT_UINT16] = {CL_C_INT, R_U16},
    [FMPL_BT_UINT32] = {CL_C_INT, R_U32},
    [FMPL_BT_UINT64] = {CL_C_INT, R_U64},
    [FMPL_BT_AINT] = {CL_MULTI, SREP(long)},           /* as basic_types.c */
    [FMPL_BT_OFFSET] = {CL_MULTI, SREP(long long)},
    [FMPL_BT_COUNT] = {CL_MULTI, SREP(long long)},
    [FMPL_BT_FLOAT] = {CL_FLOAT, R_F32},
    [FMPL_BT_DOUBLE] = {CL_FLOAT, R_F64},
    [FMPL_BT_LONG_DOUBLE] = {CL_FLOAT, R_LD},
    [FMPL_BT_C_FLOAT_COMPLEX] = {CL_COMPLEX, R_C32},
    [FMPL_BT_C_DOUBLE_COMPLEX] = {CL_COMPLEX, R_C64},
    [FMPL_BT_C_LONG_DOUBLE_COMPLEX] = {CL_COMPLEX, R_CLD},
    [FMPL_BT_C_BOOL] = {CL_LOGICAL, UREP(_Bool)},
    [FMPL_BT_PACKED] = {CL_NONE, R_NONE},
    [FMPL_BT_FLOAT_INT] = {CL_PAIR, R_FLOAT_INT},
    [FMPL_BT_DOUBLE_INT] = {CL_PAIR, R_DOUBLE_INT},
    [FMPL_BT_LONG_INT] = {CL_PAIR, R_LONG_INT},
    [FMPL_BT_2INT] = {CL_PAIR, R_2INT},
    [FMPL_BT_SHORT_INT] = {CL_PAIR, R_SHORT_INT},
    [FMPL_BT_LONG_DOUBLE_INT] = {CL_PAIR, R_LDOUBLE_INT},
    [FMPL_BT_F_CHARACTER] = {CL_NONE, R_NONE},
    [FMPL_BT_F_INTEGER] = {CL_F_INT, R_I32},
    [FMPL_BT_F_REAL] = {CL_FLOAT, R_F32},
    [FMPL_BT_F_DOUBLE_PRECISION] = {CL_FLOAT, R_F64},
    [FMPL_BT_F_LOGICAL] = {CL_LOGICAL, R_I32},
    [FMPL_BT_F_COMPLEX] = {CL_COMPLEX, R_C32},
    [FMPL_BT_F_DOUBLE_COMPLEX] = {CL_COMPLEX, R_C64},
    [FMPL_BT_F_INTEGER1] = {CL_F_INT, R_I8},
    [FMPL_BT_F_INTEGER2] = {CL_F_INT, R_I16},
    [FMPL_BT_F_INTEGER4] = {CL_F_INT, R_I32},
    [FMPL_BT_F_INTEGER8] = {CL_F_INT, R_I64},
    [FMPL_BT_F_REAL4] = {CL_FLOAT, R_F32},
    [FMPL_BT_F_REAL8] = {CL_FLOAT, R_F64},
    [FMPL_BT_F_REAL16] = {CL_FLOAT, R_REAL16},
    [FMPL_BT_F_COMPLEX8] = {CL_COMPLEX, R_C32},
    [FMPL_BT_F_COMPLEX16] = {CL_COMPLEX, R_C64},
    [FMPL_BT_F_COMPLEX32] = {CL_COMPLEX, R_COMPLEX32},
    [FMPL_BT_F_2INTEGER] = {CL_PAIR, R_2INT},          /* {INTEGER, INTEGER} */
    [FMPL_BT_F_2REAL] = {CL_PAIR, R_2REAL},
    [FMPL_BT_F_2DOUBLE_PRECISION] = {CL_PAIR, R_2DP},
    [FMPL_BT_CXX_BOOL] = {CL_LOGICAL, R_U8},            /* C++ bool: 1 byte (SysV ABIs) */
    [FMPL_BT_CXX_FLOAT_COMPLEX] = {CL_COMPLEX, R_C32},
    [FMPL_BT_CXX_DOUBLE_COMPLEX] = {CL_COMPLEX, R_C64},
    [FMPL_BT_CXX_LONG_DOUBLE_COMPLEX] = {CL_COMPLEX, R_CLD},
    [FMPL_BT_F_LOGICAL1] = {CL_LOGICAL, R_I8},
    [FMPL_BT_F_LOGICAL2] = {CL_LOGICAL, R_I16},
    [FMPL_BT_F_LOGICAL4] = {CL_LOGICAL, R_I32},
    [FMPL_BT_F_LOGICAL8] = {CL_LOGICAL, R_I64},
    [FMPL_BT_F_LOGICAL16] = {CL_LOGICAL, R_L128},
    [FMPL_BT_F_REAL2] = {CL_FLOAT, R_H},            /* R_H's row is empty without _Float16 */
    [FMPL_BT_F_COMPLEX4] = {CL_COMPLEX, R_CH},
    [FMPL_BT_C_FLOAT16] = {CL_FLOAT, R_H},
};

/* ---------------------------------------------------------------- lookup */

static fmpl_kernel_fn replace_kernel(size_t size)
{
    switch (size) {
    case 1: return replace_1;
    case 2: return replace_2;
    case 4: return replace_4;
    case 8: return replace_8;
    case 16: return replace_16;
    case 32: return replace_32;
    default: return NULL;
    }
}

fmpl_kernel_fn fmpl_mpi_kernel(fmpl_mpi_op_kind op, fmpl_basic_type bt)
{
    if ((unsigned)op >= FMPL_MOP_COUNT || (unsigned)bt >= FMPL_BT_COUNT_OF_TYPES ||
        bt == FMPL_BT_NONE)
        return NULL;
    if (op == FMPL_MOP_NO_OP)
        return no_op;
    if (op == FMPL_MOP_REPLACE)
        return replace_kernel(fmpl_basic_types[bt].size);
    if (!(class_ops[type_map[bt].cls] & OP_BIT(op)))
        return NULL;
    return kernels[type_map[bt].rep][op];
}

const char *fmpl_mpi_op_name(fmpl_mpi_op_kind op)
{
    static const char *const names[FMPL_MOP_COUNT] = {
        [FMPL_MOP_MAX] = "MPI_MAX",       [FMPL_MOP_MIN] = "MPI_MIN",
        [FMPL_MOP_SUM] = "MPI_SUM",       [FMPL_MOP_PROD] = "MPI_PROD",
        [FMPL_MOP_LAND] = "MPI_LAND",     [FMPL_MOP_BAND] = "MPI_BAND",
        [FMPL_MOP_LOR] = "MPI_LOR",       [FMPL_MOP_BOR] = "MPI_BOR",
        [FMPL_MOP_LXOR] = "MPI_LXOR",     [FMPL_MOP_BXOR] = "MPI_BXOR",
        [FMPL_MOP_MINLOC] = "MPI_MINLOC", [FMPL_MOP_MAXLOC] = "MPI_MAXLOC",
        [FMPL_MOP_REPLACE] = "MPI_REPLACE", [FMPL_MOP_NO_OP] = "MPI_NO_OP",
    };
    return (unsigned)op < FMPL_MOP_COUNT ? names[op] : "?";
}
