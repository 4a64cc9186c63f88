/* MPI predefined reduction operations: one kernel per (operation, basic
 * element type) pair that MPI-4.0 section 6.9.2 (and 12.3.4 for MPI_REPLACE,
 * MPI_NO_OP) allows.  The table of which pairs exist, and why, is at the top
 * of mpi_ops.c.
 *
 * Use from the MPI binding (predefined op on a basic type bt):
 *     fmpl_kernel_fn k = fmpl_mpi_kernel(FMPL_MOP_SUM, bt);
 *     if (!k)
 *         return MPI_ERR_OP;                    // MPI does not allow the pair
 *     fmpl_op op;                               // on the stack
 *     fmpl_op_from_kernel(&op, k, fmpl_basic_types[bt].size);
 *     ... collective core: fmpl_op_apply(&op, in, inout, count) ...
 * (for a derived datatype whose basic elements are all bt, the kernel is
 * applied to the packed basic elements.)
 *
 * Kernel semantics (all kernels)
 *  - inout[i] = in[i] op inout[i] for i < count; `in` is the lower-ranked
 *    (earlier) operand; count <= 0 does nothing and touches no memory (so
 *    NULL buffers are fine then).
 *  - Buffers may be at any byte address; in == inout is allowed (otherwise
 *    they must not overlap).  Padding bytes inside inout's elements (long
 *    double, pair types) are unspecified afterwards.
 *  - Integer SUM/PROD wrap modulo 2^bits, signed ones too (computed in
 *    unsigned: never undefined behaviour).
 *  - MAX/MIN on floating point: NaN propagates (if either operand is a NaN
 *    the result is a NaN: the `in` one if both are), on equal values (+0 and
 *    -0 included) the `in` operand is kept.  So the result over a sequence is
 *    "the first NaN, else the first extreme value", which is associative and
 *    does not depend on how the reduction tree groups the ranks.
 *  - MINLOC/MAXLOC: MPI's rule (value min/max; on equal values the smaller
 *    index), NaN values as for MIN/MAX (the first NaN pair wins).
 *  - Logical ops (LAND/LOR/LXOR): an operand is true when nonzero (all its
 *    bytes count: Fortran LOGICAL is a 4-byte word); the result is 1 or 0
 *    (gfortran's .TRUE. is 1).
 *  - Complex PROD is (ar*br - ai*bi, ar*bi + ai*br), no C99 Annex G
 *    infinity recovery (as Fortran compilers and MPICH do).
 *  - REPLACE: inout = in (for MPI_Accumulate and friends).  NO_OP: nothing
 *    (MPI_Get_accumulate, MPI_Fetch_and_op).  Both exist for every basic
 *    type: they do not interpret the bits.  MPI allows them only in
 *    one-sided calls: collective bindings must reject them
 *    (fmpl_mpi_op_is_rma_only).
 */
#ifndef FMPL_COLLECTIVES_MPI_OPS_H
#define FMPL_COLLECTIVES_MPI_OPS_H

#include "collectives/op.h"        /* fmpl_kernel_fn, fmpl_op_from_kernel */
#include "datatype/basic_types.h"

#include <stdint.h>

typedef enum fmpl_mpi_op_kind {
    FMPL_MOP_MAX,
    FMPL_MOP_MIN,
    FMPL_MOP_SUM,
    FMPL_MOP_PROD,
    FMPL_MOP_LAND,
    FMPL_MOP_BAND,
    FMPL_MOP_LOR,
    FMPL_MOP_BOR,
    FMPL_MOP_LXOR,
    FMPL_MOP_BXOR,
    FMPL_MOP_MINLOC,
    FMPL_MOP_MAXLOC,
    FMPL_MOP_REPLACE,
    FMPL_MOP_NO_OP,
    FMPL_MOP_COUNT
} fmpl_mpi_op_kind;

/* The kernel for `op` on elements of type `bt`, or NULL when MPI does not
 * define that operation on that type (the binding returns MPI_ERR_OP), or
 * for an out-of-range op or bt, or FMPL_BT_NONE.  Never fails otherwise;
 * no side effects; thread safe. */
fmpl_kernel_fn fmpl_mpi_kernel(fmpl_mpi_op_kind op, fmpl_basic_type bt);

/* "MPI_MAX", ..., "MPI_NO_OP"; "?" when out of range. */
const char *fmpl_mpi_op_name(fmpl_mpi_op_kind op);

/* MPI_REPLACE and MPI_NO_OP exist only for one-sided accumulate calls. */
static inline int fmpl_mpi_op_is_rma_only(fmpl_mpi_op_kind op)
{
    return op == FMPL_MOP_REPLACE || op == FMPL_MOP_NO_OP;
}

#endif
