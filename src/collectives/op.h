/* Reduction operations: the internal view of fmpl_op.
 *
 * Invariants
 *  - An operation is valid exactly when its `magic` is FMPL_OP_MAGIC_LIVE.
 *    Built-ins are static constants (builtin = 1, never freed); user
 *    operations come from fmpl_op_create and, once freed, keep the memory
 *    with magic FMPL_OP_MAGIC_FREED for a while (a quarantine) so that a
 *    stale handle is reported as freed instead of being a use after free.
 *  - fmpl_op_apply(op, in, inout, n) computes inout[i] = in[i] op inout[i]
 *    for i < n, where `in` is the operand from the LOWER rank.  Collectives
 *    must combine in rank order: no operation is assumed commutative (the
 *    max/min tie rule keeps the lower rank's value, so swapping operands can
 *    change the bits), but every operation is associative.
 *  - `in` and `inout` either do not overlap or are the same pointer.
 *  - Built-ins accept buffers at any byte address (no alignment needed).
 *  - One indirect call per fmpl_op_apply, never one per element: built-in
 *    kernels are plain loops the compiler vectorises.
 *  - Callers validate with fmpl_op_check() once per collective call; the
 *    kernels themselves check nothing.
 *  - Besides the native built-ins and user operations there are two kinds
 *    the MPI layer builds per call in an fmpl_op on its own stack (no
 *    allocation, never passed to fmpl_op_delete):
 *      FMPL_OPK_KERNEL    a predefined MPI operation on one element type
 *                         (collectives/mpi_ops.h); builtin = 1, since its
 *                         kernels, like the native ones, take any address;
 *      FMPL_OPK_MPI_USER  an MPI_User_function, called through the binding's
 *                         callback; builtin = 0 (typed, aligned buffers).
 */
#ifndef FMPL_COLLECTIVES_OP_H
#define FMPL_COLLECTIVES_OP_H

#include "fmpl.h"

#include <stddef.h>
#include <stdint.h>

#define FMPL_OP_MAGIC_LIVE 0x4f504c56u  /* "VLPO" */
#define FMPL_OP_MAGIC_FREED 0xdeadf4eeu

/* Kinds.  Built-ins are numbered type * 3 + operation so the public table
 * and the kernel table line up; FMPL_OPK_USER follows them. */
enum {
    FMPL_OPK_ISUM, FMPL_OPK_IMAX, FMPL_OPK_IMIN,
    FMPL_OPK_SSUM, FMPL_OPK_SMAX, FMPL_OPK_SMIN,
    FMPL_OPK_DSUM, FMPL_OPK_DMAX, FMPL_OPK_DMIN,
    FMPL_OPK_CSUM, FMPL_OPK_CMAX, FMPL_OPK_CMIN,
    FMPL_OPK_ZSUM, FMPL_OPK_ZMAX, FMPL_OPK_ZMIN,
    FMPL_OPK_BUILTIN_COUNT,
    FMPL_OPK_USER = FMPL_OPK_BUILTIN_COUNT,
    FMPL_OPK_KERNEL,     /* calls op->kernel(in, inout, count) */
    FMPL_OPK_MPI_USER,   /* calls op->mpi_fn(in, inout, count, op->ctx) */
    FMPL_OPK_COUNT
};

/* The kernel of an FMPL_OPK_KERNEL operation: inout[i] = in[i] op inout[i]
 * for i < count (nothing for count <= 0), buffers at any byte address,
 * in == inout allowed. */
typedef void (*fmpl_kernel_fn)(const void *in, void *inout, int64_t count);

/* The callback of an FMPL_OPK_MPI_USER operation, supplied by the MPI
 * binding: must compute inout[i] = in[i] op inout[i] for i < count by calling
 * the MPI_User_function as fn(in, inout, &len, &datatype) (MPI's own order:
 * `in` is the lower-ranked operand).  `ctx` is op->ctx: it carries what the
 * call needs (the user function, the MPI_Datatype handle, the extent).
 * count may exceed INT_MAX; the callback then calls the user function on
 * consecutive pieces of at most INT_MAX elements. */
typedef void (*fmpl_mpi_user_cb)(const void *in, void *inout, int64_t count, void *ctx);

struct fmpl_op {
    uint32_t magic;      /* FMPL_OP_MAGIC_LIVE while valid */
    int kind;            /* FMPL_OPK_* */
    int builtin;         /* 1: any byte address, not freeable (static built-ins and
                            FMPL_OPK_KERNEL wrappers) */
    size_t elem_size;    /* bytes per element (> 0) */
    union {
        fmpl_user_fn fn;          /* FMPL_OPK_USER */
        fmpl_kernel_fn kernel;    /* FMPL_OPK_KERNEL */
        fmpl_mpi_user_cb mpi_fn;  /* FMPL_OPK_MPI_USER */
    };
    void *ctx;           /* passed to fn / mpi_fn */
    const char *name;    /* "dsum", ..., "user" (for messages) */
};

typedef void (*fmpl_op_kernel)(const void *in, void *inout, long count);

/* Kernels of the built-ins, indexed by kind. */
extern const fmpl_op_kernel fmpl_op_kernels[FMPL_OPK_BUILTIN_COUNT];

/* inout[i] = in[i] op inout[i], i < count.  `op` must have passed
 * fmpl_op_check; count <= 0 does nothing. */
static inline void fmpl_op_apply(const fmpl_op *op, const void *in, void *inout, long count)
{
    if (count <= 0)
        return;
    if (op->kind < FMPL_OPK_BUILTIN_COUNT)
        fmpl_op_kernels[op->kind](in, inout, count);
    else if (op->kind == FMPL_OPK_KERNEL)
        op->kernel(in, inout, count);
    else if (op->kind == FMPL_OPK_USER)
        op->fn(in, inout, count, op->ctx);
    else
        op->mpi_fn(in, inout, count, op->ctx);
}

/* FMPL_SUCCESS for a valid operation; otherwise reports (naming `caller`)
 * and returns FMPL_ERR_OP.  Use through the macro, which passes __func__ so
 * the message names the public entry point. */
int fmpl_op_check_from(const fmpl_op *op, const char *caller);

/* fmpl_op_create / fmpl_op_free without the API's state checks. */
int fmpl_op_new(fmpl_user_fn fn, size_t elem_size, void *ctx, fmpl_op **op);
int fmpl_op_delete(fmpl_op **op);
#define fmpl_op_check(op) fmpl_op_check_from((op), __func__)

/* Fill *out (caller's storage, typically the stack) with an operation of
 * kind FMPL_OPK_KERNEL applying `fn` to elements of elem_size bytes, or of
 * kind FMPL_OPK_MPI_USER calling `fn` with `ctx`.  No allocation; the result
 * passes fmpl_op_check, is valid as long as *out lives, and is not freed.
 * FMPL_ERR_ARG if out or fn is NULL or elem_size is 0. */
int fmpl_op_from_kernel(fmpl_op *out, fmpl_kernel_fn fn, size_t elem_size);
int fmpl_op_from_mpi_user(fmpl_op *out, fmpl_mpi_user_cb fn, void *ctx, size_t elem_size);

/* Bytes per element; the operation must be valid. */
static inline size_t fmpl_op_elem_size(const fmpl_op *op) { return op->elem_size; }

/* 1 for the built-ins and FMPL_OPK_KERNEL wrappers (they may be applied to
 * any byte address); 0 for user operations of both kinds. */
static inline int fmpl_op_is_builtin(const fmpl_op *op) { return op->builtin; }

#endif
