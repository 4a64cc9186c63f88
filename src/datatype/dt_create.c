/* Type constructors: argument checks, size and bounds of the new type, and
 * the record of the arguments (contents).
 *
 * Every constructor describes its typemap as copies of component types at
 * displacements; an accumulator (struct acc) folds in, per group of copies
 * of one component, the lowest and highest displacement of the group:
 *   size, nelems      += copies * component's
 *   true bounds        from the components' true bounds (data only)
 *   lb                 min(disp + lb(c)) over components with an explicit
 *                      lb if there is one (sticky markers), else over
 *                      components with data
 *   ub                 likewise with max and ub
 *   align, hbt         max alignment, common basic type
 * Only struct adds the alignment padding (epsilon) to ub, and only when no
 * explicit ub exists.  resized, subarray and darray then replace lb/ub by
 * their explicit values.  All arithmetic is overflow-checked: a type whose
 * size or any bound does not fit in int64 is refused (FMPL_ERR_SIZE), so
 * later code (commit, pack) computes displacements without checks.
 *
 * Nothing is allocated or referenced before every check passed.
 */
#include "datatype/dt_impl.h"
#include "base/error.h"

#include <stdlib.h>
#include <string.h>

typedef struct acc {
    bool ov;
    bool data, xlb, xub, nlb, nub;
    int64_t dlo, dhi; /* true bounds */
    int64_t xl, xu;   /* explicit lb / ub */
    int64_t nl, nu;   /* natural lb / ub */
    int64_t size, nelems, align;
    fmpl_basic_type hbt;
} acc;

static void acc_init(acc *a)
{
    memset(a, 0, sizeof *a);
    a->align = 1;
    a->hbt = DT_HBT_EMPTY;
}

static int64_t add(acc *a, int64_t x, int64_t y)
{
    int64_t r;
    if (__builtin_add_overflow(x, y, &r))
        a->ov = true;
    return r;
}

static int64_t mul(acc *a, int64_t x, int64_t y)
{
    int64_t r;
    if (__builtin_mul_overflow(x, y, &r))
        a->ov = true;
    return r;
}

/* The range [*lo, *hi] of i * step for 0 <= i < n (n >= 1). */
static void span(acc *a, int64_t n, int64_t step, int64_t *lo, int64_t *hi)
{
    int64_t e = mul(a, n - 1, step);
    *lo = e < 0 ? e : 0;
    *hi = e > 0 ? e : 0;
}

/* `copies` (> 0) copies of c at displacements within [lo, hi], both reached. */
static void acc_copies(acc *a, const fmpl_datatype *c, int64_t copies, int64_t lo, int64_t hi)
{
    if (copies <= 0)
        return;
    a->size = add(a, a->size, mul(a, copies, c->size));
    a->nelems = add(a, a->nelems, mul(a, copies, c->nelems));
    if (c->size > 0) {
        int64_t l = add(a, lo, c->true_lb), h = add(a, hi, c->true_ub);
        a->dlo = (a->data && a->dlo < l) ? a->dlo : l;
        a->dhi = (a->data && a->dhi > h) ? a->dhi : h;
        a->data = true;
        if (c->align > a->align)
            a->align = c->align;
        if (a->hbt == DT_HBT_EMPTY)
            a->hbt = c->hbt;
        else if (a->hbt != c->hbt)
            a->hbt = FMPL_BT_NONE;
    }
    int64_t l = add(a, lo, c->lb), h = add(a, hi, c->ub);
    if (c->explicit_lb) {
        a->xl = (a->xlb && a->xl < l) ? a->xl : l;
        a->xlb = true;
    } else if (c->size > 0) {
        a->nl = (a->nlb && a->nl < l) ? a->nl : l;
        a->nlb = true;
    }
    if (c->explicit_ub) {
        a->xu = (a->xub && a->xu > h) ? a->xu : h;
        a->xub = true;
    } else if (c->size > 0) {
        a->nu = (a->nub && a->nu > h) ? a->nu : h;
        a->nub = true;
    }
}

/* Replace the bounds by explicit ones (resized, subarray, darray). */
static void acc_explicit(acc *a, int64_t lb, int64_t extent)
{
    a->xlb = a->xub = true;
    a->xl = lb;
    a->xu = add(a, lb, extent);
}

/* Allocate the new type with room for its arguments and fill in what the
 * accumulator computed.  NULL with *err set on failure. */
static fmpl_datatype *dt_new(acc *a, bool is_struct, fmpl_dt_combiner comb, int64_t nints,
                             int64_t naddrs, int64_t ntypes, int *err)
{
    /* A side with neither marker nor data is 0 (MPICH's reading of MPI's
     * min/max over no entries): struct {(LB, 10)} has lb 10, ub 0. */
    int64_t lb = a->xlb ? a->xl : a->nlb ? a->nl : 0;
    int64_t ub = a->xub ? a->xu : a->nub ? a->nu : 0;
    int64_t ext = 0;
    if (__builtin_sub_overflow(ub, lb, &ext))
        a->ov = true;
    if (is_struct && !a->xub && a->align > 1 && !a->ov) {
        int64_t r = ext % a->align;
        if (r < 0)
            r += a->align;
        if (r)
            ub = add(a, ub, a->align - r);
        if (__builtin_sub_overflow(ub, lb, &ext))
            a->ov = true;
    }
    if (a->ov) {
        *err = FMPL_ERROR(FMPL_ERR_SIZE, "the new type's size or bounds exceed 64 bits");
        return NULL;
    }
    size_t bytes = sizeof(fmpl_datatype) + (size_t)(nints + naddrs) * sizeof(int64_t) +
                   (size_t)ntypes * sizeof(fmpl_datatype *);
    fmpl_datatype *t = calloc(1, bytes);
    if (!t) {
        *err = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "out of memory for a datatype (%zu bytes)", bytes);
        return NULL;
    }
    atomic_init(&t->refs, 1);
    t->combiner = comb;
    t->basic = FMPL_BT_NONE;
    t->hbt = a->hbt;
    t->size = a->size;
    t->nelems = a->nelems;
    t->align = a->align;
    t->lb = lb;
    t->ub = ub;
    t->explicit_lb = a->xlb;
    t->explicit_ub = a->xub;
    t->true_lb = a->data ? a->dlo : 0;
    t->true_ub = a->data ? a->dhi : 0;
    t->nints = nints;
    t->naddrs = naddrs;
    t->ntypes = ntypes;
    t->ints = (int64_t *)(t + 1);
    t->addrs = t->ints + nints;
    t->types = (fmpl_datatype **)(t->addrs + naddrs);
    return t;
}

/* Publish: reference the components, hand out the new reference. */
static int dt_publish(fmpl_datatype *t, fmpl_datatype **newtype)
{
    for (int64_t i = 0; i < t->ntypes; i++)
        fmpl_dt_ref(t->types[i]);
    *newtype = t;
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- checks */

static int check_common(const fmpl_datatype *old, fmpl_datatype **newtype)
{
    if (!newtype)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL newtype");
    if (!old)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL oldtype");
    return FMPL_SUCCESS;
}

static int check_count(int64_t count, const char *what)
{
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative %s (%lld)", what, (long long)count);
    return FMPL_SUCCESS;
}

static int check_array(int64_t count, const void *array, const char *what)
{
    if (count > 0 && !array)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL %s with count %lld", what, (long long)count);
    return FMPL_SUCCESS;
}

static int check_blocklens(int64_t count, const int64_t *bl)
{
    for (int64_t i = 0; i < count; i++)
        if (bl[i] < 0)
            return FMPL_ERROR(FMPL_ERR_SIZE, "negative block length %lld at index %lld",
                              (long long)bl[i], (long long)i);
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------- contiguous */

int fmpl_dt_contiguous(int64_t count, fmpl_datatype *old, fmpl_datatype **newtype)
{
    int err;
    if ((err = check_common(old, newtype)) || (err = check_count(count, "count")))
        return err;
    acc a;
    acc_init(&a);
    if (count > 0) {
        int64_t lo, hi;
        span(&a, count, dt_extent(old), &lo, &hi);
        acc_copies(&a, old, count, lo, hi);
    }
    fmpl_datatype *t = dt_new(&a, false, FMPL_DT_COMBINER_CONTIGUOUS, 1, 0, 1, &err);
    if (!t)
        return err;
    t->ints[0] = count;
    t->types[0] = old;
    return dt_publish(t, newtype);
}

/* ---------------------------------------------------------------- vectors */

static int vector_common(fmpl_dt_combiner comb, int64_t count, int64_t blocklen,
                         int64_t stride, bool stride_in_bytes, fmpl_datatype *old,
                         fmpl_datatype **newtype)
{
    int err;
    if ((err = check_common(old, newtype)) || (err = check_count(count, "count")) ||
        (err = check_count(blocklen, "block length")))
        return err;
    acc a;
    acc_init(&a);
    int64_t ext = dt_extent(old);
    int64_t stride_bytes = stride_in_bytes ? stride : mul(&a, stride, ext);
    if (count > 0 && blocklen > 0) {
        int64_t lo1, hi1, lo2, hi2;
        span(&a, count, stride_bytes, &lo1, &hi1);
        span(&a, blocklen, ext, &lo2, &hi2);
        acc_copies(&a, old, mul(&a, count, blocklen), add(&a, lo1, lo2), add(&a, hi1, hi2));
    }
    bool h = comb == FMPL_DT_COMBINER_HVECTOR;
    fmpl_datatype *t = dt_new(&a, false, comb, h ? 2 : 3, h ? 1 : 0, 1, &err);
    if (!t)
        return err;
    t->ints[0] = count;
    t->ints[1] = blocklen;
    if (h)
        t->addrs[0] = stride;
    else
        t->ints[2] = stride;
    t->types[0] = old;
    return dt_publish(t, newtype);
}

int fmpl_dt_vector(int64_t count, int64_t blocklen, int64_t stride_elements, fmpl_datatype *old,
                   fmpl_datatype **newtype)
{
    return vector_common(FMPL_DT_COMBINER_VECTOR, count, blocklen, stride_elements, false, old,
                         newtype);
}

int fmpl_dt_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, fmpl_datatype *old,
                    fmpl_datatype **newtype)
{
    return vector_common(FMPL_DT_COMBINER_HVECTOR, count, blocklen, stride_bytes, true, old,
                         newtype);
}

/* ---------------------------------------------------------------- indexed */

/* blocklens == NULL: every block has `blocklen`. */
static int indexed_common(fmpl_dt_combiner comb, int64_t count, const int64_t *blocklens,
                          int64_t blocklen, const int64_t *displs, fmpl_datatype *old,
                          fmpl_datatype **newtype)
{
    bool bytes = comb == FMPL_DT_COMBINER_HINDEXED || comb == FMPL_DT_COMBINER_HINDEXED_BLOCK;
    bool block = comb == FMPL_DT_COMBINER_INDEXED_BLOCK || comb == FMPL_DT_COMBINER_HINDEXED_BLOCK;
    int err;
    if ((err = check_common(old, newtype)) || (err = check_count(count, "count")) ||
        (!block && (err = check_array(count, blocklens, "array of block lengths"))) ||
        (err = check_array(count, displs, "array of displacements")) ||
        (!block && (err = check_blocklens(count, blocklens))) ||
        (block && (err = check_count(blocklen, "block length"))))
        return err;
    acc a;
    acc_init(&a);
    int64_t ext = dt_extent(old);
    for (int64_t i = 0; i < count; i++) {
        int64_t bl = block ? blocklen : blocklens[i];
        if (bl == 0)
            continue;
        int64_t d = bytes ? displs[i] : mul(&a, displs[i], ext);
        int64_t lo, hi;
        span(&a, bl, ext, &lo, &hi);
        acc_copies(&a, old, bl, add(&a, d, lo), add(&a, d, hi));
    }
    /* MPI's contents layout (see dt_contents.c) */
    int64_t nints, naddrs;
    switch (comb) {
    case FMPL_DT_COMBINER_INDEXED: nints = 2 * count + 1, naddrs = 0; break;
    case FMPL_DT_COMBINER_HINDEXED: nints = count + 1, naddrs = count; break;
    case FMPL_DT_COMBINER_INDEXED_BLOCK: nints = count + 2, naddrs = 0; break;
    default: nints = 2, naddrs = count; break; /* HINDEXED_BLOCK */
    }
    fmpl_datatype *t = dt_new(&a, false, comb, nints, naddrs, 1, &err);
    if (!t)
        return err;
    int64_t *ip = t->ints;
    *ip++ = count;
    if (block)
        *ip++ = blocklen;
    else
        for (int64_t i = 0; i < count; i++)
            *ip++ = blocklens[i];
    for (int64_t i = 0; i < count; i++) {
        if (bytes)
            t->addrs[i] = displs[i];
        else
            *ip++ = displs[i];
    }
    t->types[0] = old;
    return dt_publish(t, newtype);
}

int fmpl_dt_indexed(int64_t count, const int64_t blocklens[], const int64_t displs_elements[],
                    fmpl_datatype *old, fmpl_datatype **newtype)
{
    return indexed_common(FMPL_DT_COMBINER_INDEXED, count, blocklens, 0, displs_elements, old,
                          newtype);
}

int fmpl_dt_hindexed(int64_t count, const int64_t blocklens[], const int64_t displs_bytes[],
                     fmpl_datatype *old, fmpl_datatype **newtype)
{
    return indexed_common(FMPL_DT_COMBINER_HINDEXED, count, blocklens, 0, displs_bytes, old,
                          newtype);
}

int fmpl_dt_indexed_block(int64_t count, int64_t blocklen, const int64_t displs_elements[],
                          fmpl_datatype *old, fmpl_datatype **newtype)
{
    return indexed_common(FMPL_DT_COMBINER_INDEXED_BLOCK, count, NULL, blocklen, displs_elements,
                          old, newtype);
}

int fmpl_dt_hindexed_block(int64_t count, int64_t blocklen, const int64_t displs_bytes[],
                           fmpl_datatype *old, fmpl_datatype **newtype)
{
    return indexed_common(FMPL_DT_COMBINER_HINDEXED_BLOCK, count, NULL, blocklen, displs_bytes,
                          old, newtype);
}

/* ----------------------------------------------------------------- struct */

int fmpl_dt_struct(int64_t count, const int64_t blocklens[], const int64_t displs_bytes[],
                   fmpl_datatype *const types[], fmpl_datatype **newtype)
{
    int err;
    if (!newtype)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL newtype");
    if ((err = check_count(count, "count")) ||
        (err = check_array(count, blocklens, "array of block lengths")) ||
        (err = check_array(count, displs_bytes, "array of displacements")) ||
        (err = check_array(count, types, "array of types")) ||
        (err = check_blocklens(count, blocklens)))
        return err;
    for (int64_t i = 0; i < count; i++)
        if (!types[i])
            return FMPL_ERROR(FMPL_ERR_ARG, "NULL type at index %lld", (long long)i);
    acc a;
    acc_init(&a);
    for (int64_t i = 0; i < count; i++) {
        if (blocklens[i] == 0)
            continue;
        int64_t lo, hi;
        span(&a, blocklens[i], dt_extent(types[i]), &lo, &hi);
        acc_copies(&a, types[i], blocklens[i], add(&a, displs_bytes[i], lo),
                   add(&a, displs_bytes[i], hi));
    }
    fmpl_datatype *t = dt_new(&a, true, FMPL_DT_COMBINER_STRUCT, count + 1, count, count, &err);
    if (!t)
        return err;
    t->ints[0] = count;
    for (int64_t i = 0; i < count; i++) {
        t->ints[1 + i] = blocklens[i];
        t->addrs[i] = displs_bytes[i];
        t->types[i] = types[i];
    }
    return dt_publish(t, newtype);
}

/* --------------------------------------------------------------- subarray */

static int check_order(int order)
{
    if (order != FMPL_DT_ORDER_C && order != FMPL_DT_ORDER_FORTRAN)
        return FMPL_ERROR(FMPL_ERR_ARG, "invalid array order %d", order);
    return FMPL_SUCCESS;
}

static int check_ndims(int ndims)
{
    if (ndims < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative ndims (%d)", ndims);
    if (ndims == 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "ndims must be positive");
    return FMPL_SUCCESS;
}

#define DT_SMALL_NDIMS 16

/* Byte stride of each dimension of a full array of `sizes` elements of
 * extent ext stored in `order`, and the array's extent in *total. */
static void dim_strides(acc *a, int ndims, const int64_t *sizes, int order, int64_t ext,
                        int64_t *st, int64_t *total)
{
    int64_t s = ext;
    for (int k = 0; k < ndims; k++) {
        int i = order == FMPL_DT_ORDER_C ? ndims - 1 - k : k;
        st[i] = s;
        s = mul(a, s, sizes[i]);
    }
    *total = s;
}

int fmpl_dt_subarray(int ndims, const int64_t sizes[], const int64_t subsizes[],
                     const int64_t starts[], int order, fmpl_datatype *old,
                     fmpl_datatype **newtype)
{
    int err;
    if ((err = check_common(old, newtype)) || (err = check_ndims(ndims)) ||
        (err = check_array(ndims, sizes, "array of sizes")) ||
        (err = check_array(ndims, subsizes, "array of subsizes")) ||
        (err = check_array(ndims, starts, "array of starts")) || (err = check_order(order)))
        return err;
    for (int i = 0; i < ndims; i++) {
        if (sizes[i] < 1 || subsizes[i] < 1 || subsizes[i] > sizes[i] || starts[i] < 0 ||
            starts[i] > sizes[i] - subsizes[i])
            return FMPL_ERROR(FMPL_ERR_ARG,
                              "dimension %d: size %lld, subsize %lld, start %lld (need 1 <= "
                              "subsize <= size, 0 <= start <= size - subsize)",
                              i, (long long)sizes[i], (long long)subsizes[i],
                              (long long)starts[i]);
    }
    acc a;
    acc_init(&a);
    int64_t stbuf[DT_SMALL_NDIMS];
    int64_t *st = ndims <= DT_SMALL_NDIMS ? stbuf : malloc((size_t)ndims * sizeof(int64_t));
    if (!st)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "out of memory (%d dimensions)", ndims);
    int64_t total, copies = 1, lo = 0, hi = 0;
    dim_strides(&a, ndims, sizes, order, dt_extent(old), st, &total);
    for (int i = 0; i < ndims; i++) {
        int64_t p = mul(&a, starts[i], st[i]);
        int64_t q = mul(&a, starts[i] + subsizes[i] - 1, st[i]);
        lo = add(&a, lo, p < q ? p : q);
        hi = add(&a, hi, p < q ? q : p);
        copies = mul(&a, copies, subsizes[i]);
    }
    if (st != stbuf)
        free(st);
    acc_copies(&a, old, copies, lo, hi);
    acc_explicit(&a, 0, total);
    fmpl_datatype *t =
        dt_new(&a, false, FMPL_DT_COMBINER_SUBARRAY, 3 * (int64_t)ndims + 2, 0, 1, &err);
    if (!t)
        return err;
    t->ints[0] = ndims;
    for (int i = 0; i < ndims; i++) {
        t->ints[1 + i] = sizes[i];
        t->ints[1 + ndims + i] = subsizes[i];
        t->ints[1 + 2 * ndims + i] = starts[i];
    }
    t->ints[1 + 3 * ndims] = order;
    t->types[0] = old;
    return dt_publish(t, newtype);
}

/* ----------------------------------------------------------------- darray */

/* ceil(a / b) for a >= 0, b > 0, without overflow */
static int64_t ceil_div(int64_t a, int64_t b) { return a / b + (a % b != 0); }

void dt_darray_dim_of(int64_t gsize, int distrib, int64_t darg, int64_t psize, int64_t coord,
                      dt_darray_dim *d)
{
    if (distrib == FMPL_DT_DISTRIBUTE_NONE) {
        d->b = gsize;
        d->r = 0;
        d->p = 1;
    } else {
        if (darg == FMPL_DT_DISTRIBUTE_DFLT_DARG)
            d->b = distrib == FMPL_DT_DISTRIBUTE_BLOCK ? ceil_div(gsize, psize) : 1;
        else
            d->b = darg;
        d->r = coord;
        d->p = psize;
    }
    int64_t total_blocks = ceil_div(gsize, d->b);
    d->nblocks = d->r < total_blocks ? (total_blocks - d->r + d->p - 1) / d->p : 0;
    if (d->nblocks == 0) {
        d->last_len = 0;
        d->local = 0;
        return;
    }
    int64_t last = d->r + (d->nblocks - 1) * d->p;
    d->last_len = gsize - last * d->b < d->b ? gsize - last * d->b : d->b;
    d->local = (d->nblocks - 1) * d->b + d->last_len;
}

int fmpl_dt_darray(int size, int rank, int ndims, const int64_t gsizes[], const int distribs[],
                   const int dargs[], const int psizes[], int order, fmpl_datatype *old,
                   fmpl_datatype **newtype)
{
    int err;
    if ((err = check_common(old, newtype)) || (err = check_ndims(ndims)) ||
        (err = check_array(ndims, gsizes, "array of gsizes")) ||
        (err = check_array(ndims, distribs, "array of distribs")) ||
        (err = check_array(ndims, dargs, "array of dargs")) ||
        (err = check_array(ndims, psizes, "array of psizes")) || (err = check_order(order)))
        return err;
    if (size < 1 || rank < 0 || rank >= size)
        return FMPL_ERROR(FMPL_ERR_ARG, "invalid size %d / rank %d", size, rank);
    int64_t nprocs = 1;
    for (int i = 0; i < ndims; i++) {
        const char *why = NULL;
        if (gsizes[i] < 1)
            why = "gsize must be positive";
        else if (psizes[i] < 1)
            why = "psize must be positive";
        else if (distribs[i] != FMPL_DT_DISTRIBUTE_NONE &&
                 distribs[i] != FMPL_DT_DISTRIBUTE_BLOCK &&
                 distribs[i] != FMPL_DT_DISTRIBUTE_CYCLIC)
            why = "invalid distribution";
        else if (distribs[i] == FMPL_DT_DISTRIBUTE_NONE && psizes[i] != 1)
            why = "MPI_DISTRIBUTE_NONE needs psize 1";
        else if (distribs[i] != FMPL_DT_DISTRIBUTE_NONE && dargs[i] != FMPL_DT_DISTRIBUTE_DFLT_DARG &&
                 dargs[i] < 1)
            why = "darg must be positive or MPI_DISTRIBUTE_DFLT_DARG";
        else if (distribs[i] == FMPL_DT_DISTRIBUTE_BLOCK &&
                 dargs[i] != FMPL_DT_DISTRIBUTE_DFLT_DARG &&
                 (int64_t)dargs[i] * psizes[i] < gsizes[i])
            why = "block distribution needs darg * psize >= gsize";
        if (why)
            return FMPL_ERROR(FMPL_ERR_ARG,
                              "dimension %d (gsize %lld, distrib %d, darg %d, psize %d): %s", i,
                              (long long)gsizes[i], distribs[i], dargs[i], psizes[i], why);
        nprocs *= psizes[i];
        if (nprocs > size)
            break;
    }
    if (nprocs != size)
        return FMPL_ERROR(FMPL_ERR_ARG, "the product of psizes is not size (%d)", size);

    acc a;
    acc_init(&a);
    int64_t stbuf[DT_SMALL_NDIMS];
    int64_t *st = ndims <= DT_SMALL_NDIMS ? stbuf : malloc((size_t)ndims * sizeof(int64_t));
    if (!st)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "out of memory (%d dimensions)", ndims);
    int64_t total, copies = 1, lo = 0, hi = 0, rem = rank;
    dim_strides(&a, ndims, gsizes, order, dt_extent(old), st, &total);
    for (int i = ndims - 1; i >= 0; i--) { /* row-major process grid */
        dt_darray_dim d;
        dt_darray_dim_of(gsizes[i], distribs[i], dargs[i], psizes[i], rem % psizes[i], &d);
        rem /= psizes[i];
        copies = mul(&a, copies, d.local);
        if (d.local == 0)
            continue;
        int64_t first = d.r * d.b, final = (d.r + (d.nblocks - 1) * d.p) * d.b + d.last_len - 1;
        int64_t p = mul(&a, first, st[i]), q = mul(&a, final, st[i]);
        lo = add(&a, lo, p < q ? p : q);
        hi = add(&a, hi, p < q ? q : p);
    }
    if (st != stbuf)
        free(st);
    if (copies > 0)
        acc_copies(&a, old, copies, lo, hi);
    acc_explicit(&a, 0, total);
    fmpl_datatype *t =
        dt_new(&a, false, FMPL_DT_COMBINER_DARRAY, 4 * (int64_t)ndims + 4, 0, 1, &err);
    if (!t)
        return err;
    t->ints[0] = size;
    t->ints[1] = rank;
    t->ints[2] = ndims;
    for (int i = 0; i < ndims; i++) {
        t->ints[3 + i] = gsizes[i];
        t->ints[3 + ndims + i] = distribs[i];
        t->ints[3 + 2 * ndims + i] = dargs[i];
        t->ints[3 + 3 * ndims + i] = psizes[i];
    }
    t->ints[3 + 4 * ndims] = order;
    t->types[0] = old;
    return dt_publish(t, newtype);
}

/* ---------------------------------------------------------- resized, dup */

int fmpl_dt_resized(fmpl_datatype *old, int64_t lb, int64_t extent, fmpl_datatype **newtype)
{
    int err;
    if ((err = check_common(old, newtype)))
        return err;
    acc a;
    acc_init(&a);
    acc_copies(&a, old, 1, 0, 0);
    acc_explicit(&a, lb, extent);
    fmpl_datatype *t = dt_new(&a, false, FMPL_DT_COMBINER_RESIZED, 0, 2, 1, &err);
    if (!t)
        return err;
    t->addrs[0] = lb;
    t->addrs[1] = extent;
    t->types[0] = old;
    return dt_publish(t, newtype);
}

int fmpl_dt_dup(fmpl_datatype *old, fmpl_datatype **newtype)
{
    int err;
    if ((err = check_common(old, newtype)))
        return err;
    acc a;
    acc_init(&a);
    fmpl_datatype *t = dt_new(&a, false, FMPL_DT_COMBINER_DUP, 0, 0, 1, &err);
    if (!t)
        return err;
    /* the same typemap: copy every derived property */
    t->hbt = old->hbt;
    t->size = old->size;
    t->nelems = old->nelems;
    t->align = old->align;
    t->lb = old->lb;
    t->ub = old->ub;
    t->explicit_lb = old->explicit_lb;
    t->explicit_ub = old->explicit_ub;
    t->true_lb = old->true_lb;
    t->true_ub = old->true_ub;
    t->types[0] = old;
    fmpl_dt_ref(old);
    if (old->committed && (err = fmpl_dt_commit(t))) {
        fmpl_dt_unref(t);
        return err;
    }
    *newtype = t;
    return FMPL_SUCCESS;
}
