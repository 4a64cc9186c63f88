/* MPI operations: the predefined ones are FMPL's kernels for every (op,
 * type) pair MPI allows (collectives/mpi_ops.c); user operations call the
 * MPI_User_function in rank order. */
#include "api/mpi/mpi_impl.h"
#include "collectives/mpi_ops.h"
#include "collectives/op.h"
#include "datatype/basic_types.h"

#include <limits.h>
#include <stdlib.h>

#define OP_MAX 1024

typedef struct user_op {
    MPI_User_function *fn;
    int commute;
} user_op;

static user_op *user_ops[OP_MAX];

static user_op *user_op_get(MPI_Op op)
{
    if (!fmpl_handle_is_dynamic(op) || fmpl_handle_kind(op) != FMPL_HK_OP)
        return NULL;
    int i = fmpl_handle_index(op);
    return i < OP_MAX ? user_ops[i] : NULL;
}

static void call_user(const void *in, void *inout, int64_t count, void *ctx)
{
    fmpl_mpi_user_ctx *c = ctx;
    MPI_Aint size;
    int contiguous;
    fmpl_mpi_type_layout(c->type, &size, &contiguous);
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        c->fn((void *)in, inout, &len, &c->type);
        in = (const char *)in + (int64_t)len * size;
        inout = (char *)inout + (int64_t)len * size;
        count -= len;
    }
}

int fmpl_mpi_op_make(MPI_Op op, MPI_Datatype type, fmpl_op *out, fmpl_mpi_user_ctx *ctx)
{
    MPI_Aint size;
    int contiguous;
    if (fmpl_mpi_type_layout(type, &size, &contiguous) != MPI_SUCCESS || size == 0)
        return MPI_ERR_TYPE;
    if (((unsigned)op & 0xffffff00u) == 0x58000000u) {
        int kind = (int)((unsigned)op & 0xff) - 1;
        if (kind < 0 || kind >= FMPL_MOP_COUNT)
            return MPI_ERR_OP;
        int bt = fmpl_mpi_basic_type(type);
        if (bt == FMPL_BT_NONE)
            return MPI_ERR_TYPE;
        fmpl_kernel_fn fn = fmpl_mpi_kernel((fmpl_mpi_op_kind)kind, (fmpl_basic_type)bt);
        if (!fn)
            return MPI_ERR_OP;
        return fmpl_op_from_kernel(out, fn, (size_t)size) == FMPL_SUCCESS ? MPI_SUCCESS
                                                                          : MPI_ERR_INTERN;
    }
    user_op *u = user_op_get(op);
    if (!u)
        return MPI_ERR_OP;
    ctx->fn = u->fn;
    ctx->type = type;
    return fmpl_op_from_mpi_user(out, call_user, ctx, (size_t)size) == FMPL_SUCCESS
               ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!fn || !op)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create",
                              "the function or the result pointer is NULL");
    for (int i = 0; i < OP_MAX; i++) {
        if (user_ops[i])
            continue;
        user_ops[i] = malloc(sizeof(user_op));
        if (!user_ops[i])
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_Op_create", "no memory");
        user_ops[i]->fn = fn;
        user_ops[i]->commute = commute;
        *op = fmpl_handle_make(FMPL_HK_OP, i);
        return MPI_SUCCESS;
    }
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_INTERN, "MPI_Op_create",
                          "more than %d user operations", OP_MAX);
}
FMPL_MPI_WEAK(Op_create)

int PMPI_Op_free(MPI_Op *op)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    user_op *u = op ? user_op_get(*op) : NULL;
    if (!u)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free",
                              "not a user-defined operation");
    free(u);
    user_ops[fmpl_handle_index(*op)] = NULL;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    if (((unsigned)op & 0xffffff00u) == 0x58000000u) {
        *commute = 1;
        return MPI_SUCCESS;
    }
    user_op *u = user_op_get(op);
    if (!u)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative", "invalid operation");
    *commute = u->commute;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Op_commutative)

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type, MPI_Op op)
{
    fmpl_op o;
    fmpl_mpi_user_ctx ctx;
    int rc = fmpl_mpi_op_make(op, type, &o, &ctx);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, "MPI_Reduce_local",
                              "operation 0x%x on datatype 0x%x", (unsigned)op, (unsigned)type);
    fmpl_op_apply(&o, inbuf, inoutbuf, count);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Reduce_local)
