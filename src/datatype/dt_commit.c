/* Commit: translate a type's constructor arguments into its loop nest
 * (dt_loop.h), improve it, and derive the flags the fast paths use.
 *
 * Invariants
 *  - The loop of a type describes exactly its typemap's data bytes in
 *    typemap order relative to the buffer address; lb/ub play no part
 *    except through the component extents used as strides.
 *  - A committed component's loop is copied, not rebuilt (this is also how
 *    predefined types enter); an uncommitted one is built recursively and
 *    stays uncommitted (MPI: committing a type does not commit its
 *    components).
 *  - Sizes and displacements were overflow-checked by the constructors, so
 *    nothing here can overflow: every displacement computed is one of the
 *    typemap's, or a stride between two of them.
 */
#include "datatype/dt_impl.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

/* Chunks compared at most when deciding whether a layout of padded pair
 * types is a plain array of them. */
#define DT_ARRAY_CHECK_MAX (INT64_C(1) << 20)

static dl_node *build_indexed(dl_ctx *x, const fmpl_datatype *t)
{
    const int64_t *ip = t->ints;
    const fmpl_datatype *old = t->types[0];
    int64_t count = ip[0], ext = dt_extent(old);
    int64_t *disp = malloc(2 * (size_t)count * sizeof(int64_t));
    if (!disp) {
        x->err = FMPL_ERR_NO_MEMORY;
        return NULL;
    }
    int64_t *copies = disp + count;
    for (int64_t i = 0; i < count; i++) {
        switch (t->combiner) {
        case FMPL_DT_COMBINER_INDEXED:
            copies[i] = ip[1 + i];
            disp[i] = ip[1 + count + i] * ext;
            break;
        case FMPL_DT_COMBINER_HINDEXED:
            copies[i] = ip[1 + i];
            disp[i] = t->addrs[i];
            break;
        case FMPL_DT_COMBINER_INDEXED_BLOCK:
            copies[i] = ip[1];
            disp[i] = ip[2 + i] * ext;
            break;
        default: /* HINDEXED_BLOCK */
            copies[i] = ip[1];
            disp[i] = t->addrs[i];
            break;
        }
    }
    dl_node *n = dl_indexed(x, count, disp, copies, ext, dt_build_loop(x, old));
    free(disp);
    return n;
}

static dl_node *build_struct(dl_ctx *x, const fmpl_datatype *t)
{
    int64_t count = t->ints[0];
    dl_node **items = calloc((size_t)count, sizeof *items);
    if (!items) {
        x->err = FMPL_ERR_NO_MEMORY;
        return NULL;
    }
    for (int64_t i = 0; i < count && !x->err; i++) {
        const fmpl_datatype *c = t->types[i];
        items[i] = dl_vector(x, t->ints[1 + i], dt_extent(c), dt_build_loop(x, c));
    }
    dl_node *n = dl_struct(x, count, t->addrs, items);
    free(items);
    return n;
}

/* Byte strides of the dimensions (as in dt_create.c). */
static void strides(int ndims, const int64_t *sizes, int64_t order, int64_t ext, int64_t *st)
{
    int64_t s = ext;
    for (int k = 0; k < ndims; k++) {
        int i = order == FMPL_DT_ORDER_C ? ndims - 1 - k : k;
        st[i] = s;
        s *= sizes[i];
    }
}

static dl_node *build_subarray(dl_ctx *x, const fmpl_datatype *t)
{
    const int64_t *ip = t->ints;
    int ndims = (int)ip[0];
    const int64_t *subsizes = ip + 1 + ndims, *starts = ip + 1 + 2 * ndims;
    int64_t order = ip[1 + 3 * ndims];
    int64_t *st = malloc((size_t)ndims * sizeof(int64_t));
    if (!st) {
        x->err = FMPL_ERR_NO_MEMORY;
        return NULL;
    }
    strides(ndims, ip + 1, order, dt_extent(t->types[0]), st);
    dl_node *n = dt_build_loop(x, t->types[0]);
    for (int k = 0; k < ndims; k++) { /* the fastest dimension innermost */
        int i = order == FMPL_DT_ORDER_C ? ndims - 1 - k : k;
        n = dl_shift(dl_vector(x, subsizes[i], st[i], n), starts[i] * st[i]);
    }
    free(st);
    return n;
}

static dl_node *build_darray(dl_ctx *x, const fmpl_datatype *t)
{
    const int64_t *ip = t->ints;
    int ndims = (int)ip[2];
    const int64_t *gsizes = ip + 3, *distribs = ip + 3 + ndims, *dargs = ip + 3 + 2 * ndims;
    const int64_t *psizes = ip + 3 + 3 * ndims;
    int64_t order = ip[3 + 4 * ndims];
    int64_t *st = malloc(2 * (size_t)ndims * sizeof(int64_t));
    if (!st) {
        x->err = FMPL_ERR_NO_MEMORY;
        return NULL;
    }
    int64_t *coord = st + ndims, rem = ip[1];
    for (int i = ndims - 1; i >= 0; i--) { /* row-major process grid */
        coord[i] = rem % psizes[i];
        rem /= psizes[i];
    }
    strides(ndims, gsizes, order, dt_extent(t->types[0]), st);
    dl_node *n = dt_build_loop(x, t->types[0]);
    for (int k = 0; k < ndims && n; k++) {
        int i = order == FMPL_DT_ORDER_C ? ndims - 1 - k : k;
        dt_darray_dim d;
        dt_darray_dim_of(gsizes[i], (int)distribs[i], dargs[i], psizes[i], coord[i], &d);
        /* blocks r, r + p, ... of b elements; the last one may be shorter */
        int64_t full = d.last_len == d.b ? d.nblocks : d.nblocks - 1;
        bool partial = full < d.nblocks;
        dl_node *items[2] = {NULL, NULL};
        int64_t disp[2] = {0, 0};
        if (partial) {
            dl_node *c = full > 0 ? dl_copy(x, n) : n;
            items[1] = dl_vector(x, d.last_len, st[i], c);
            disp[1] = (d.r + (d.nblocks - 1) * d.p) * d.b * st[i];
        }
        if (full > 0) {
            int64_t block_stride = full > 1 ? d.p * d.b * st[i] : 0;
            items[0] = dl_vector(x, full, block_stride, dl_vector(x, d.b, st[i], n));
            disp[0] = d.r * d.b * st[i];
        }
        n = dl_struct(x, 2, disp, items);
    }
    free(st);
    return n;
}

dl_node *dt_build_loop(dl_ctx *x, const fmpl_datatype *t)
{
    if (x->err || t->size == 0)
        return NULL;
    if (t->committed)
        return dl_copy(x, t->loop);
    const fmpl_datatype *old = t->ntypes > 0 ? t->types[0] : NULL;
    switch (t->combiner) {
    case FMPL_DT_COMBINER_NAMED:
        return NULL; /* predefined types are committed */
    case FMPL_DT_COMBINER_DUP:
    case FMPL_DT_COMBINER_RESIZED:
        return dt_build_loop(x, old);
    case FMPL_DT_COMBINER_CONTIGUOUS:
        return dl_vector(x, t->ints[0], dt_extent(old), dt_build_loop(x, old));
    case FMPL_DT_COMBINER_VECTOR:
    case FMPL_DT_COMBINER_HVECTOR: {
        int64_t ext = dt_extent(old);
        int64_t stride =
            t->combiner == FMPL_DT_COMBINER_VECTOR ? t->ints[2] * ext : t->addrs[0];
        return dl_vector(x, t->ints[0], stride, dl_vector(x, t->ints[1], ext, dt_build_loop(x, old)));
    }
    case FMPL_DT_COMBINER_INDEXED:
    case FMPL_DT_COMBINER_HINDEXED:
    case FMPL_DT_COMBINER_INDEXED_BLOCK:
    case FMPL_DT_COMBINER_HINDEXED_BLOCK:
        return build_indexed(x, t);
    case FMPL_DT_COMBINER_STRUCT:
        return build_struct(x, t);
    case FMPL_DT_COMBINER_SUBARRAY:
        return build_subarray(x, t);
    case FMPL_DT_COMBINER_DARRAY:
        return build_darray(x, t);
    }
    return NULL;
}

/* --------------------------------------------------------------- flags */

static bool is_contiguous(const fmpl_datatype *t)
{
    if (t->size == 0)
        return true;
    return t->loop->kind == DL_CONTIG && dt_extent(t) == t->size;
}

/* The merged chunks of an array of n elements of a basic type, one by one. */
typedef struct array_gen {
    const dl_node *x;  /* the basic type's loop: CONTIG or BLOCKS */
    int64_t ext, n, k, j;
    int64_t origin;
    bool mismatch;
} array_gen;

static bool gen_next(array_gen *g, int64_t *addr, int64_t *len)
{
    bool have = false;
    while (g->k < g->n) {
        int64_t a, l;
        if (g->x->kind == DL_CONTIG) {
            a = g->x->off;
            l = g->x->size;
        } else {
            a = g->x->off + g->x->disp[g->j];
            l = g->x->len[g->j];
        }
        a += g->origin + g->k * g->ext;
        if (have && *addr + *len != a)
            return true;
        if (have) {
            *len += l;
        } else {
            *addr = a;
            *len = l;
            have = true;
        }
        if (g->x->kind == DL_CONTIG || ++g->j == g->x->count) {
            g->j = 0;
            g->k++;
        }
    }
    return have;
}

static int gen_compare(int64_t addr, int64_t len, void *ctx)
{
    array_gen *g = ctx;
    int64_t a, l;
    if (!gen_next(g, &a, &l) || a != addr || l != len)
        return g->mismatch = true;
    return 0;
}

static bool is_basic_array(const fmpl_datatype *t, int64_t *n_out)
{
    if (t->hbt == FMPL_BT_NONE || t->hbt == DT_HBT_EMPTY)
        return false;
    const fmpl_datatype *bx = fmpl_dt_basic(t->hbt);
    int64_t n = t->nelems / dt_basic_nelems(t->hbt), span;
    if (__builtin_mul_overflow(n, bx->ub, &span) || span != dt_extent(t))
        return false;
    *n_out = n;
    if (bx->contiguous)
        return is_contiguous(t);
    /* A pair type with padding: the usual shape is a vector of its loop;
     * otherwise compare chunk by chunk (bounded: a huge irregular layout
     * is conservatively not an array). */
    const dl_node *v = t->loop, *x = bx->loop;
    if (n > 1 && v->kind == DL_VECTOR && v->count == n && v->stride == bx->ub &&
        v->off == t->true_lb && v->child->kind == x->kind && v->child->off == 0 &&
        v->child->size == x->size &&
        (x->kind == DL_CONTIG ||
         (v->child->count == x->count &&
          !memcmp(v->child->disp, x->disp, 2 * (size_t)x->count * sizeof(int64_t)))))
        return true;
    if (dl_chunk_count(v, DT_ARRAY_CHECK_MAX) > DT_ARRAY_CHECK_MAX)
        return false;
    array_gen g = {bx->loop, bx->ub, n, 0, 0, t->true_lb, false};
    int64_t a, l;
    return !dl_for_each_chunk(t->loop, 0, gen_compare, &g) && !gen_next(&g, &a, &l);
}

int fmpl_dt_commit(fmpl_datatype *t)
{
    if (!t)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL datatype");
    if (t->committed)
        return FMPL_SUCCESS;
    dl_ctx x = {FMPL_SUCCESS};
    dl_node *loop = dl_optimize(&x, dt_build_loop(&x, t));
    if (x.err) {
        dl_free(loop);
        if (x.err == FMPL_ERR_UNSUPPORTED)
            return FMPL_ERROR(x.err, "datatype nesting too deep to commit");
        return FMPL_ERROR(x.err, "out of memory building the datatype's representation");
    }
    dl_check(loop);
    t->loop = loop;
    t->contiguous = is_contiguous(t);
    t->array = is_basic_array(t, &t->array_n);
    t->committed = true;
    return FMPL_SUCCESS;
}

bool fmpl_dt_is_committed(const fmpl_datatype *t) { return t && t->committed; }
