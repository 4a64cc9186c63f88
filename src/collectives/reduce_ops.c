/* Reduction operations: built-in kernels, user operations, validation.
 *
 * Invariants
 *  - Every kernel computes inout[i] = in[i] op inout[i] for i < count, with
 *    `in` the lower rank's operand, and reads each element once before
 *    writing it, so in == inout is allowed.
 *  - Kernels access elements through 1-byte-aligned typedefs: a buffer at
 *    any byte address is valid (no UB, no trap on strict-alignment targets),
 *    and the compiler still vectorises with unaligned vector loads.
 *  - Sum of int wraps modulo 2^32 (computed in unsigned, never UB).  Sum of
 *    complex is componentwise.
 *  - max/min (BLACS AMX/AMN) return the operand of larger/smaller absolute
 *    value, bit for bit.  |x| for int is computed in unsigned so INT_MIN is
 *    the largest; for complex it is |re| + |im| (BLACS).  On a tie, or when
 *    the comparison is false because of a NaN, the `in` (lower rank) operand
 *    is kept, so the result does not depend on which rank computes it.
 *  - This file is compiled with loop vectorisation enabled (pragma below)
 *    whatever the build type, because -O2 alone (GCC's very-cheap cost
 *    model) vectorises no loop whose trip count is unknown.
 *  - User operations: allocated with malloc; fmpl_op_free poisons the magic
 *    and parks the memory in a FIFO quarantine of OP_QUARANTINE entries
 *    before really freeing it, so a stale handle is detected (FMPL_ERR_OP)
 *    for at least the next OP_QUARANTINE frees.  Not thread safe (FMPL is
 *    called from one thread at a time).
 *  - fmpl_op_from_kernel / fmpl_op_from_mpi_user only fill the caller's
 *    struct; fmpl_op_delete refuses every kind but FMPL_OPK_USER.
 */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include "collectives/op.h"
#include "base/error.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* Element types usable at any byte address. */
typedef int32_t u_i32 __attribute__((aligned(1)));
typedef float u_f32 __attribute__((aligned(1)));
typedef double u_f64 __attribute__((aligned(1)));

/* ---------------------------------------------------------------- kernels */

static void k_isum(const void *in_, void *io_, long n)
{
    const u_i32 *in = in_;
    u_i32 *io = io_;
    for (long i = 0; i < n; i++)
        io[i] = (int32_t)((uint32_t)in[i] + (uint32_t)io[i]);
}

static inline uint32_t iabs_u(int32_t x) { return x < 0 ? 0u - (uint32_t)x : (uint32_t)x; }

static void k_imax(const void *in_, void *io_, long n)
{
    const u_i32 *in = in_;
    u_i32 *io = io_;
    for (long i = 0; i < n; i++) {
        int32_t a = in[i], b = io[i];
        io[i] = iabs_u(b) > iabs_u(a) ? b : a;
    }
}

static void k_imin(const void *in_, void *io_, long n)
{
    const u_i32 *in = in_;
    u_i32 *io = io_;
    for (long i = 0; i < n; i++) {
        int32_t a = in[i], b = io[i];
        io[i] = iabs_u(b) < iabs_u(a) ? b : a;
    }
}

/* Real kernels, float (s) and double (d): identical code but for the type. */
#define REAL_KERNELS(L, T, ABS)                                                    \
    static void k_##L##sum(const void *in_, void *io_, long n)                     \
    {                                                                              \
        const T *in = in_;                                                         \
        T *io = io_;                                                               \
        for (long i = 0; i < n; i++)                                               \
            io[i] = in[i] + io[i];                                                 \
    }                                                                              \
    static void k_##L##max(const void *in_, void *io_, long n)                     \
    {                                                                              \
        const T *in = in_;                                                         \
        T *io = io_;                                                               \
        for (long i = 0; i < n; i++) {                                             \
            T a = in[i], b = io[i];                                                \
            io[i] = ABS(b) > ABS(a) ? b : a;                                       \
        }                                                                          \
    }                                                                              \
    static void k_##L##min(const void *in_, void *io_, long n)                     \
    {                                                                              \
        const T *in = in_;                                                         \
        T *io = io_;                                                               \
        for (long i = 0; i < n; i++) {                                             \
            T a = in[i], b = io[i];                                                \
            io[i] = ABS(b) < ABS(a) ? b : a;                                       \
        }                                                                          \
    }

REAL_KERNELS(s, u_f32, fabsf)
REAL_KERNELS(d, u_f64, fabs)

/* Complex kernels: an element is (re, im) of the component type; the sum is
 * the real sum over 2n components.  max/min select through temporaries: GCC
 * if-converts (and so vectorises) two independent selects, not two selects
 * written straight to memory from one condition. */
#define COMPLEX_KERNELS(L, T, ABS)                                                 \
    static void k_##L##sum(const void *in_, void *io_, long n)                     \
    {                                                                              \
        const T *in = in_;                                                         \
        T *io = io_;                                                               \
        for (long i = 0; i < 2 * n; i++)                                           \
            io[i] = in[i] + io[i];                                                 \
    }                                                                              \
    static void k_##L##max(const void *in_, void *io_, long n)                     \
    {                                                                              \
        const T *in = in_;                                                         \
        T *io = io_;                                                               \
        for (long i = 0; i < n; i++) {                                             \
            T ar = in[2 * i], ai = in[2 * i + 1];                                  \
            T br = io[2 * i], bi = io[2 * i + 1];                                  \
            _Bool take_b = ABS(br) + ABS(bi) > ABS(ar) + ABS(ai);                   \
            T re = ar, im = ai;                                                    \
            re = take_b ? br : re;                                                 \
            im = take_b ? bi : im;                                                 \
            io[2 * i] = re;                                                        \
            io[2 * i + 1] = im;                                                    \
        }                                                                          \
    }                                                                              \
    static void k_##L##min(const void *in_, void *io_, long n)                     \
    {                                                                              \
        const T *in = in_;                                                         \
        T *io = io_;                                                               \
        for (long i = 0; i < n; i++) {                                             \
            T ar = in[2 * i], ai = in[2 * i + 1];                                  \
            T br = io[2 * i], bi = io[2 * i + 1];                                  \
            _Bool take_b = ABS(br) + ABS(bi) < ABS(ar) + ABS(ai);                   \
            T re = ar, im = ai;                                                    \
            re = take_b ? br : re;                                                 \
            im = take_b ? bi : im;                                                 \
            io[2 * i] = re;                                                        \
            io[2 * i + 1] = im;                                                    \
        }                                                                          \
    }

COMPLEX_KERNELS(c, u_f32, fabsf)
COMPLEX_KERNELS(z, u_f64, fabs)

const fmpl_op_kernel fmpl_op_kernels[FMPL_OPK_BUILTIN_COUNT] = {
    [FMPL_OPK_ISUM] = k_isum, [FMPL_OPK_IMAX] = k_imax, [FMPL_OPK_IMIN] = k_imin,
    [FMPL_OPK_SSUM] = k_ssum, [FMPL_OPK_SMAX] = k_smax, [FMPL_OPK_SMIN] = k_smin,
    [FMPL_OPK_DSUM] = k_dsum, [FMPL_OPK_DMAX] = k_dmax, [FMPL_OPK_DMIN] = k_dmin,
    [FMPL_OPK_CSUM] = k_csum, [FMPL_OPK_CMAX] = k_cmax, [FMPL_OPK_CMIN] = k_cmin,
    [FMPL_OPK_ZSUM] = k_zsum, [FMPL_OPK_ZMAX] = k_zmax, [FMPL_OPK_ZMIN] = k_zmin,
};

/* -------------------------------------------------------------- built-ins */

#define BUILTIN(var, KIND, T, NAME)                                                \
    static const struct fmpl_op var##_obj = {                                      \
        .magic = FMPL_OP_MAGIC_LIVE, .kind = KIND, .builtin = 1,                   \
        .elem_size = sizeof(T), .fn = NULL, .ctx = NULL, .name = NAME};            \
    const fmpl_op *const fmpl_##var = &var##_obj;

typedef struct { float re, im; } c_f32;
typedef struct { double re, im; } c_f64;

BUILTIN(isum, FMPL_OPK_ISUM, int32_t, "isum")
BUILTIN(imax, FMPL_OPK_IMAX, int32_t, "imax")
BUILTIN(imin, FMPL_OPK_IMIN, int32_t, "imin")
BUILTIN(ssum, FMPL_OPK_SSUM, float, "ssum")
BUILTIN(smax, FMPL_OPK_SMAX, float, "smax")
BUILTIN(smin, FMPL_OPK_SMIN, float, "smin")
BUILTIN(dsum, FMPL_OPK_DSUM, double, "dsum")
BUILTIN(dmax, FMPL_OPK_DMAX, double, "dmax")
BUILTIN(dmin, FMPL_OPK_DMIN, double, "dmin")
BUILTIN(csum, FMPL_OPK_CSUM, c_f32, "csum")
BUILTIN(cmax, FMPL_OPK_CMAX, c_f32, "cmax")
BUILTIN(cmin, FMPL_OPK_CMIN, c_f32, "cmin")
BUILTIN(zsum, FMPL_OPK_ZSUM, c_f64, "zsum")
BUILTIN(zmax, FMPL_OPK_ZMAX, c_f64, "zmax")
BUILTIN(zmin, FMPL_OPK_ZMIN, c_f64, "zmin")

_Static_assert(sizeof(int) == 4, "BLACS integer type i is a 4-byte int here");
_Static_assert(sizeof(c_f32) == 8 && sizeof(c_f64) == 16, "complex layout");

/* ------------------------------------------------------ user operations */

#define OP_QUARANTINE 64

static struct fmpl_op *quarantine[OP_QUARANTINE];
static unsigned quarantine_next;

int fmpl_op_new(fmpl_user_fn fn, size_t elem_size, void *ctx, fmpl_op **op)
{
    if (!op)
        return FMPL_ERROR(FMPL_ERR_ARG, "op (where to store the new operation) is NULL");
    *op = NULL;
    if (!fn)
        return FMPL_ERROR(FMPL_ERR_ARG, "the user function is NULL");
    if (elem_size == 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "elem_size is 0: an element must have at least one byte");
    struct fmpl_op *o = malloc(sizeof *o);
    if (!o)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "cannot allocate %zu bytes for an operation",
                          sizeof *o);
    *o = (struct fmpl_op){.magic = FMPL_OP_MAGIC_LIVE, .kind = FMPL_OPK_USER, .builtin = 0,
                          .elem_size = elem_size, .fn = fn, .ctx = ctx, .name = "user"};
    *op = o;
    return FMPL_SUCCESS;
}

int fmpl_op_delete(fmpl_op **op)
{
    if (!op)
        return FMPL_ERROR(FMPL_ERR_ARG, "op is NULL");
    int rc = fmpl_op_check(*op);
    if (rc != FMPL_SUCCESS)
        return rc;
    struct fmpl_op *o = *op;
    if (o->builtin)
        return FMPL_ERROR(FMPL_ERR_OP, "cannot free a built-in operation (%s)", o->name);
    if (o->kind != FMPL_OPK_USER)
        return FMPL_ERROR(FMPL_ERR_OP, "cannot free %s: it was not made by fmpl_op_create",
                          o->name);
    o->magic = FMPL_OP_MAGIC_FREED;
    o->fn = NULL;
    /* Keep it readable for a while so a stale handle is reported, then
     * release the oldest parked one. */
    struct fmpl_op *oldest = quarantine[quarantine_next];
    quarantine[quarantine_next] = o;
    quarantine_next = (quarantine_next + 1) % OP_QUARANTINE;
    free(oldest);
    *op = NULL;
    return FMPL_SUCCESS;
}

int fmpl_op_check_from(const fmpl_op *op, const char *caller)
{
    if (!op)
        return fmpl_error_report(FMPL_ERR_OP, caller, "the operation is NULL");
    if (op->magic == FMPL_OP_MAGIC_FREED)
        return fmpl_error_report(FMPL_ERR_OP, caller,
                                 "the operation %p has been freed", (const void *)op);
    if (op->magic != FMPL_OP_MAGIC_LIVE || op->kind < 0 || op->kind >= FMPL_OPK_COUNT ||
        op->elem_size == 0 || (op->kind == FMPL_OPK_USER && op->fn == NULL) ||
        (op->kind == FMPL_OPK_KERNEL && op->kernel == NULL) ||
        (op->kind == FMPL_OPK_MPI_USER && op->mpi_fn == NULL))
        return fmpl_error_report(FMPL_ERR_OP, caller,
                                 "%p is not a reduction operation", (const void *)op);
    return FMPL_SUCCESS;
}

/* ------------------------------------------- per-call wrappers (MPI layer) */

int fmpl_op_from_kernel(fmpl_op *out, fmpl_kernel_fn fn, size_t elem_size)
{
    if (!out || !fn || elem_size == 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "kernel operation: %s",
                          !out ? "out is NULL" : !fn ? "the kernel is NULL" : "elem_size is 0");
    *out = (struct fmpl_op){.magic = FMPL_OP_MAGIC_LIVE, .kind = FMPL_OPK_KERNEL, .builtin = 1,
                            .elem_size = elem_size, .kernel = fn, .ctx = NULL,
                            .name = "MPI predefined"};
    return FMPL_SUCCESS;
}

int fmpl_op_from_mpi_user(fmpl_op *out, fmpl_mpi_user_cb fn, void *ctx, size_t elem_size)
{
    if (!out || !fn || elem_size == 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "MPI user operation: %s",
                          !out ? "out is NULL" : !fn ? "the callback is NULL" : "elem_size is 0");
    *out = (struct fmpl_op){.magic = FMPL_OP_MAGIC_LIVE, .kind = FMPL_OPK_MPI_USER, .builtin = 0,
                            .elem_size = elem_size, .mpi_fn = fn, .ctx = ctx,
                            .name = "MPI user"};
    return FMPL_SUCCESS;
}
