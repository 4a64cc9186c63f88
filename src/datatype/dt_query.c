/* Queries: sizes and bounds, contiguity and homogeneity, and the counting
 * of basic elements in a prefix of the packed stream (MPI_Get_elements,
 * MPI_Status_set_elements).
 *
 * Element counting walks the constructor arguments, not the loop, so it
 * works before commit.  The packed stream of every combiner except struct
 * is a sequence of copies of its one component, so a byte (element) prefix
 * splits into whole copies and a prefix of one copy; struct walks its
 * entries.  Cost: O(nesting depth) plus O(entries) per struct level.
 */
#include "datatype/dt_impl.h"
#include "base/error.h"
#include "base/log.h"

int64_t fmpl_dt_size(const fmpl_datatype *t) { return t->size; }
int64_t fmpl_dt_extent(const fmpl_datatype *t) { return dt_extent(t); }
int64_t fmpl_dt_lb(const fmpl_datatype *t) { return t->lb; }
int64_t fmpl_dt_ub(const fmpl_datatype *t) { return t->ub; }
int64_t fmpl_dt_true_lb(const fmpl_datatype *t) { return t->true_lb; }
int64_t fmpl_dt_true_extent(const fmpl_datatype *t) { return t->true_ub - t->true_lb; }
int64_t fmpl_dt_num_elements(const fmpl_datatype *t) { return t->nelems; }

bool fmpl_dt_is_contiguous(const fmpl_datatype *t) { return t->committed && t->contiguous; }

fmpl_basic_type fmpl_dt_homogeneous_basic(const fmpl_datatype *t)
{
    return t->hbt == DT_HBT_EMPTY ? FMPL_BT_NONE : t->hbt;
}

bool fmpl_dt_basic_array(const fmpl_datatype *t, fmpl_basic_type *bt, int64_t *n_per_element)
{
    if (!t->committed || !t->array)
        return false;
    if (bt)
        *bt = t->hbt;
    if (n_per_element)
        *n_per_element = t->array_n;
    return true;
}

/* Bytes of the first basic element of a pair type. */
static int64_t pair_first_size(fmpl_basic_type bt)
{
    return (int64_t)fmpl_basic_types[fmpl_basic_types[bt].component].size;
}

static int64_t prefix_elems(const fmpl_datatype *t, int64_t bytes);

/* Elements completed by `bytes` bytes of a sequence of copies of c. */
static int64_t copies_prefix_elems(const fmpl_datatype *c, int64_t bytes)
{
    int64_t k = bytes / c->size, p = prefix_elems(c, bytes - k * c->size);
    return p < 0 ? -1 : k * c->nelems + p;
}

/* Elements completed by the first `bytes` (0 <= bytes < size) bytes of one
 * element's packed stream; -1 when the cut falls inside a basic element. */
static int64_t prefix_elems(const fmpl_datatype *t, int64_t bytes)
{
    if (bytes == 0)
        return 0;
    switch (t->combiner) {
    case FMPL_DT_COMBINER_NAMED:
        if (t->nelems == 2 && bytes == pair_first_size(t->basic))
            return 1;
        return -1;
    case FMPL_DT_COMBINER_STRUCT: {
        int64_t done = 0;
        for (int64_t i = 0; i < t->ints[0]; i++) {
            const fmpl_datatype *c = t->types[i];
            int64_t blk = t->ints[1 + i] * c->size;
            if (bytes < blk) {
                int64_t p = copies_prefix_elems(c, bytes);
                return p < 0 ? -1 : done + p;
            }
            bytes -= blk;
            done += t->ints[1 + i] * c->nelems;
        }
        fmpl_assert(0); /* bytes < size */
        return -1;
    }
    default:
        return copies_prefix_elems(t->types[0], bytes);
    }
}

int fmpl_dt_get_elements(const fmpl_datatype *t, int64_t bytes, int64_t *elements)
{
    if (!t || !elements)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL %s", t ? "elements" : "datatype");
    if (bytes < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative byte count (%lld)", (long long)bytes);
    if (t->size == 0) {
        *elements = 0;
        return FMPL_SUCCESS;
    }
    int64_t full = bytes / t->size, p = prefix_elems(t, bytes - full * t->size);
    *elements = p < 0 ? -1 : full * t->nelems + p;
    return FMPL_SUCCESS;
}

static int64_t prefix_bytes(const fmpl_datatype *t, int64_t elems);

static int64_t copies_prefix_bytes(const fmpl_datatype *c, int64_t elems)
{
    int64_t k = elems / c->nelems;
    return k * c->size + prefix_bytes(c, elems - k * c->nelems);
}

/* Bytes of the first `elems` (0 <= elems < nelems) basic elements of one
 * element's packed stream. */
static int64_t prefix_bytes(const fmpl_datatype *t, int64_t elems)
{
    if (elems == 0)
        return 0;
    switch (t->combiner) {
    case FMPL_DT_COMBINER_NAMED:
        return pair_first_size(t->basic); /* elems == 1 of a pair */
    case FMPL_DT_COMBINER_STRUCT: {
        int64_t done = 0;
        for (int64_t i = 0; i < t->ints[0]; i++) {
            const fmpl_datatype *c = t->types[i];
            int64_t blk = t->ints[1 + i] * c->nelems;
            if (elems < blk)
                return done + copies_prefix_bytes(c, elems);
            elems -= blk;
            done += t->ints[1 + i] * c->size;
        }
        fmpl_assert(0);
        return 0;
    }
    default:
        return copies_prefix_bytes(t->types[0], elems);
    }
}

int fmpl_dt_elements_to_bytes(const fmpl_datatype *t, int64_t elements, int64_t *bytes)
{
    if (!t || !bytes)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL %s", t ? "bytes" : "datatype");
    if (elements < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative element count (%lld)", (long long)elements);
    if (t->nelems == 0) {
        if (elements != 0)
            return FMPL_ERROR(FMPL_ERR_ARG, "the datatype has no basic elements");
        *bytes = 0;
        return FMPL_SUCCESS;
    }
    int64_t full = elements / t->nelems, r;
    if (__builtin_mul_overflow(full, t->size, &r))
        return FMPL_ERROR(FMPL_ERR_SIZE, "%lld elements exceed 64-bit byte counts",
                          (long long)elements);
    *bytes = r + prefix_bytes(t, elements - full * t->nelems);
    return FMPL_SUCCESS;
}
