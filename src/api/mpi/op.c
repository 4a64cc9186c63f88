/* MPI operations: the predefined ones are FMPL's kernels for every (op,
 * type) pair MPI allows (collectives/mpi_ops.c); user operations call the
 * MPI_User_function in rank order.  fmpl_mpi_reduction_make decides how a
 * reduction sees a derived datatype (mpi_impl.h): a predefined operation
 * reduces element-wise with the kernel of the one basic type the datatype
 * is made of (on the packed stream, or in place when the datatype is laid
 * out like an array of it); a user operation gets the datatype itself and
 * operands in its layout, unpacked into temporaries when the collectives
 * carry them packed. */
#include "api/mpi/mpi_impl.h"
#include "collectives/mpi_ops.h"
#include "collectives/op.h"
#include "datatype/basic_types.h"

#include <limits.h>
#include <stdlib.h>

#define OP_MAX 1024

typedef struct user_op {
    MPI_User_function *fn;     /* MPI_Op_create, or */
    MPI_User_function_c *fn_c; /* MPI_Op_create_c (large counts) */
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

/* Call the user's function on len (<= INT_MAX) elements, through whichever
 * of the two signatures it was created with. */
static void invoke(fmpl_mpi_user_ctx *c, void *in, void *inout, int len)
{
    if (c->fn_c) {
        MPI_Count n = len;
        c->fn_c(in, inout, &n, &c->type);
    } else {
        c->fn(in, inout, &len, &c->type);
    }
}

/* The layout reductions see: fmpl_mpi_type_layout's, except that a
 * predefined pair type is its C struct, padding included (MINLOC / MAXLOC
 * and user functions work on `struct {double; int;}`, 16 bytes, where
 * communication moves the 12 bytes of data). */
static int operand_layout(MPI_Datatype t, MPI_Aint *size, int *contiguous)
{
    int rc = fmpl_mpi_type_layout(t, size, contiguous);
    if (rc == MPI_SUCCESS && !*contiguous && fmpl_mpi_basic_type(t) != FMPL_BT_NONE) {
        *size = fmpl_dt_extent(fmpl_mpi_datatype_get(t));
        *contiguous = 1;
    }
    return rc;
}

/* A user operation on a predefined type, or a derived one that is contiguous
 * from displacement 0: the stream is the user's layout. */
static void call_user(const void *in, void *inout, int64_t count, void *ctx)
{
    fmpl_mpi_user_ctx *c = ctx;
    MPI_Aint size;
    int contiguous;
    operand_layout(c->type, &size, &contiguous);
    while (count > 0) {
        int len = count > INT_MAX ? INT_MAX : (int)count;
        invoke(c, (void *)in, inout, len);
        in = (const char *)in + (int64_t)len * size;
        inout = (char *)inout + (int64_t)len * size;
        count -= len;
    }
}

/* Temporaries of the staged user operations: grow-only, never per call. */
static void *temp(int which, size_t bytes)
{
    static void *buf[2];
    static size_t have[2];
    if (bytes > have[which]) {
        void *p = realloc(buf[which], bytes);
        if (!p)
            return NULL;
        buf[which] = p;
        have[which] = bytes;
    }
    return buf[which];
}

#define USER_PIECE (64 * 1024) /* bytes of user layout per call of the user function */

/* A user operation on a staged derived type: `in` and `inout` are packed
 * streams.  Piece by piece, both are unpacked into temporaries laid out as
 * the type describes (extent apart, data at true_lb), the user function
 * runs on them with the type itself, and the result is packed back. */
static void call_user_derived(const void *in, void *inout, int64_t count, void *ctx)
{
    fmpl_mpi_user_ctx *c = ctx;
    const fmpl_datatype *t = c->derived;
    int64_t size = fmpl_dt_size(t), extent = fmpl_dt_extent(t);
    int64_t tlb = fmpl_dt_true_lb(t), text = fmpl_dt_true_extent(t);
    int64_t step = extent < 0 ? -extent : extent;
    int64_t piece = step > 0 && step < USER_PIECE ? USER_PIECE / step : 1;
    while (count > 0) {
        int len = (int)(count < piece ? count : piece);
        int64_t last = (int64_t)(len - 1) * extent;
        int64_t lo = tlb + (last < 0 ? last : 0), hi = tlb + text + (last > 0 ? last : 0);
        char *a = temp(0, (size_t)(hi - lo)), *b = temp(1, (size_t)(hi - lo));
        if (!a || !b) {
            fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, "MPI_User_function",
                           "no memory for %ld bytes of operands", (long)(hi - lo));
            return;
        }
        void *ua = (void *)((uintptr_t)a - (uintptr_t)lo);
        void *ub = (void *)((uintptr_t)b - (uintptr_t)lo);
        int64_t bytes = (int64_t)len * size, moved;
        fmpl_dt_unpack(in, bytes, ua, len, t, 0, &moved);
        fmpl_dt_unpack(inout, bytes, ub, len, t, 0, &moved);
        invoke(c, ua, ub, len);
        fmpl_dt_pack(ub, len, t, 0, inout, bytes, &moved);
        in = (const char *)in + bytes;
        inout = (char *)inout + bytes;
        count -= len;
    }
}

/* The element size a predefined kernel works on: the C type's (pair types
 * with their padding). */
static size_t kernel_elem_size(fmpl_basic_type bt)
{
    MPI_Aint size;
    int contiguous;
    if (operand_layout(fmpl_mpi_basic_handle(bt), &size, &contiguous) != MPI_SUCCESS)
        return 0;
    return (size_t)size;
}

static int predefined_op(int kind, MPI_Datatype type, MPI_Aint size, fmpl_mpi_reduction *r)
{
    fmpl_basic_type bt = (fmpl_basic_type)fmpl_mpi_basic_type(type);
    if (bt != FMPL_BT_NONE) { /* predefined type: the user's buffers as they are */
        fmpl_kernel_fn fn = fmpl_mpi_kernel((fmpl_mpi_op_kind)kind, bt);
        if (!fn) {
            r->why = "the predefined operation is not defined on this basic type";
            return MPI_ERR_OP;
        }
        return fmpl_op_from_kernel(&r->op, fn, (size_t)size) == FMPL_SUCCESS ? MPI_SUCCESS
                                                                             : MPI_ERR_INTERN;
    }
    fmpl_datatype *d = fmpl_mpi_datatype_get(type);
    if (!d || fmpl_dt_is_predefined(d)) {
        r->why = "MPI_LB / MPI_UB hold no data to reduce";
        return MPI_ERR_TYPE;
    }
    bt = fmpl_dt_homogeneous_basic(d);
    if (bt == FMPL_BT_NONE) {
        r->why = "a predefined operation needs a derived datatype made of a single basic type; "
                 "this one mixes basic types (use a user-defined operation)";
        return MPI_ERR_OP;
    }
    fmpl_kernel_fn fn = fmpl_mpi_kernel((fmpl_mpi_op_kind)kind, bt);
    size_t esize = kernel_elem_size(bt);
    if (!fn || !esize) {
        r->why = "the predefined operation is not defined on the basic type this derived "
                 "datatype is made of";
        return MPI_ERR_OP;
    }
    fmpl_basic_type abt;
    int64_t n;
    if (fmpl_dt_basic_array(d, &abt, &n) && abt == bt) {
        r->per = n;           /* an array of bt at true_lb: reduce in place */
        r->offset = fmpl_dt_true_lb(d);
    } else {
        r->type = d;
        r->stream = fmpl_dt_basic(bt);
        r->per = fmpl_dt_size(d) / fmpl_dt_size(r->stream);
    }
    return fmpl_op_from_kernel(&r->op, fn, esize) == FMPL_SUCCESS ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int fmpl_mpi_reduction_make(MPI_Op op, MPI_Datatype type, fmpl_mpi_reduction *r)
{
    *r = (fmpl_mpi_reduction){.per = 1};
    MPI_Aint size;
    int contiguous;
    if (operand_layout(type, &size, &contiguous) != MPI_SUCCESS || size == 0) {
        r->why = "the datatype is invalid, not committed, or holds no data";
        return MPI_ERR_TYPE;
    }
    if (((unsigned)op & 0xffffff00u) == 0x58000000u) {
        int kind = (int)((unsigned)op & 0xff) - 1;
        if (kind < 0 || kind >= FMPL_MOP_COUNT) {
            r->why = "not a predefined operation";
            return MPI_ERR_OP;
        }
        return predefined_op(kind, type, size, r);
    }
    user_op *u = user_op_get(op);
    if (!u) {
        r->why = "invalid or freed operation";
        return MPI_ERR_OP;
    }
    r->ctx.fn = u->fn;
    r->ctx.fn_c = u->fn_c;
    r->ctx.type = type;
    fmpl_mpi_user_cb cb = call_user;
    if (!fmpl_mpi_is_predefined_type(type)) {
        fmpl_datatype *d = fmpl_mpi_datatype_get(type);
        if (!contiguous || fmpl_dt_true_lb(d) != 0) {
            r->type = r->ctx.derived = d;
            cb = call_user_derived;
        }
    }
    return fmpl_op_from_mpi_user(&r->op, cb, &r->ctx, (size_t)size) == FMPL_SUCCESS
               ? MPI_SUCCESS : MPI_ERR_INTERN;
}

void fmpl_mpi_reduction_in(const fmpl_mpi_reduction *r, const void *user, int64_t count,
                           void *stream)
{
    int64_t moved;
    if (r->stream)
        fmpl_dt_copy(user, count, r->type, stream, count * r->per, r->stream, &moved);
    else
        fmpl_dt_pack(user, count, r->type, 0, stream, count * fmpl_dt_size(r->type), &moved);
}

void fmpl_mpi_reduction_out(const fmpl_mpi_reduction *r, const void *stream, int64_t count,
                            void *user)
{
    int64_t moved;
    if (r->stream)
        fmpl_dt_copy(stream, count * r->per, r->stream, user, count, r->type, &moved);
    else
        fmpl_dt_unpack(stream, count * fmpl_dt_size(r->type), user, count, r->type, 0, &moved);
}

static int op_create(const char *func, MPI_User_function *fn, MPI_User_function_c *fn_c,
                     int commute, MPI_Op *op)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if ((!fn && !fn_c) || !op)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "the function or the result pointer is NULL");
    for (int i = 0; i < OP_MAX; i++) {
        if (user_ops[i])
            continue;
        user_ops[i] = malloc(sizeof(user_op));
        if (!user_ops[i])
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func, "no memory");
        *user_ops[i] = (user_op){.fn = fn, .fn_c = fn_c, .commute = commute};
        *op = fmpl_handle_make(FMPL_HK_OP, i);
        return MPI_SUCCESS;
    }
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_INTERN, func, "more than %d user operations",
                          OP_MAX);
}

int PMPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
    FMPL_CORE_GUARD();
    return op_create("MPI_Op_create", fn, NULL, commute, op);
}
FMPL_MPI_WEAK(Op_create)

int PMPI_Op_create_c(MPI_User_function_c *fn, int commute, MPI_Op *op)
{
    FMPL_CORE_GUARD();
    return op_create("MPI_Op_create_c", NULL, fn, commute, op);
}
FMPL_MPI_WEAK(Op_create_c)

int PMPI_Op_free(MPI_Op *op)
{
    FMPL_CORE_GUARD();
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
    FMPL_CORE_GUARD();
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

static int reduce_local(const char *func, const void *inbuf, void *inoutbuf, MPI_Aint count,
                        MPI_Datatype type, MPI_Op op)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (count < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COUNT, func, "count %ld is negative",
                              (long)count);
    fmpl_mpi_reduction r;
    int rc = fmpl_mpi_reduction_make(op, type, &r);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, func, "operation 0x%x on datatype 0x%x: %s",
                              (unsigned)op, (unsigned)type, r.why);
    if (!r.type) {
        fmpl_op_apply(&r.op, (const char *)inbuf + r.offset, (char *)inoutbuf + r.offset,
                      fmpl_mpi_reduction_count(&r, count));
        return MPI_SUCCESS;
    }
    size_t bytes = fmpl_mpi_reduction_bytes(&r, count);
    char *a = fmpl_mpi_stage_get(bytes), *b = fmpl_mpi_stage_get(bytes);
    if (!a || !b) {
        fmpl_mpi_stage_put(a);
        fmpl_mpi_stage_put(b);
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func,
                              "no memory for %zu bytes of staged operands", bytes);
    }
    fmpl_mpi_reduction_in(&r, inbuf, count, a);
    fmpl_mpi_reduction_in(&r, inoutbuf, count, b);
    fmpl_op_apply(&r.op, a, b, fmpl_mpi_reduction_count(&r, count));
    fmpl_mpi_reduction_out(&r, b, count, inoutbuf);
    fmpl_mpi_stage_put(a);
    fmpl_mpi_stage_put(b);
    return MPI_SUCCESS;
}

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype type, MPI_Op op)
{
    FMPL_CORE_GUARD();
    return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, type, op);
}
FMPL_MPI_WEAK(Reduce_local)

int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype type,
                        MPI_Op op)
{
    FMPL_CORE_GUARD();
    return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, type, op);
}
FMPL_MPI_WEAK(Reduce_local_c)
