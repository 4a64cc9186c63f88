/* The datatype object, shared by the engine's files (not by its users).
 *
 * Invariants
 *  - Everything but `committed`, `loop`, `contiguous`, `array_*`, `name`,
 *    `large_contents` and `refs` is set by the constructor and never
 *    changes: queries need no lock.
 *  - The constructor's arguments are kept as MPI's non-large-count contents
 *    (ints, addrs, types; see dt_contents.c for the per-combiner layout),
 *    and every component type in `types` holds a reference.  Commit and
 *    get_elements read the arguments from there: there is no second copy.
 *  - size, nelems >= 0; true_lb <= true_ub; size == 0 iff nelems == 0 iff
 *    loop == NULL (once committed), and then true_lb == true_ub == 0.
 *  - explicit_lb / explicit_ub: the typemap holds an lb / ub marker, so lb
 *    (ub) is the marker's displacement, not derived from the data.
 *  - hbt: the one basic type of every element (pair types atomic),
 *    FMPL_BT_NONE if mixed, DT_HBT_EMPTY if there are no elements.
 *  - Predefined objects live in static storage: predefined = 1, committed,
 *    refs unused, never freed.
 */
#ifndef FMPL_DATATYPE_DT_IMPL_H
#define FMPL_DATATYPE_DT_IMPL_H

#include "datatype/datatype.h"
#include "datatype/dt_loop.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define DT_HBT_EMPTY FMPL_BT_COUNT_OF_TYPES

struct fmpl_datatype {
    atomic_long refs;
    bool predefined;
    bool committed;
    bool large_contents;  /* envelope/contents in the large-count layout */
    bool explicit_lb, explicit_ub;
    bool contiguous;      /* committed: see fmpl_dt_is_contiguous */
    bool array;           /* committed: see fmpl_dt_basic_array */
    fmpl_dt_combiner combiner;
    fmpl_basic_type basic;  /* NAMED: the basic type (FMPL_BT_NONE for the markers) */
    fmpl_basic_type hbt;
    int64_t size;
    int64_t lb, ub;
    int64_t true_lb, true_ub;
    int64_t align;        /* largest alignment of a basic element (>= 1) */
    int64_t nelems;       /* basic elements per element */
    int64_t array_n;      /* committed and array: basic elements of hbt per element */
    /* constructor arguments (MPI non-large-count contents layout) */
    int64_t nints, naddrs, ntypes;
    int64_t *ints;
    int64_t *addrs;
    fmpl_datatype **types;
    dl_node *loop;        /* committed representation; NULL for size 0 */
    char name[FMPL_DT_MAX_NAME];
};

static inline int64_t dt_extent(const fmpl_datatype *t) { return t->ub - t->lb; }

/* Number of basic elements (1 or 2) of a basic type: pair types are 2. */
int64_t dt_basic_nelems(fmpl_basic_type bt);

/* Free a derived type whose reference count reached zero (dt_object.c). */
void dt_destroy(fmpl_datatype *t);

/* Build the loop nest of one element of t from its constructor arguments
 * (dt_commit.c); NULL with x->err set on failure, NULL for size 0. */
dl_node *dt_build_loop(dl_ctx *x, const fmpl_datatype *t);

/* Process-grid coordinate and local index set of one darray dimension
 * (dt_create.c): the process owns blocks r, r + p, r + 2p, ... of `b`
 * elements each (the last one possibly shorter), `nblocks` of them,
 * the last one `last_len` long; `local` elements in all. */
typedef struct dt_darray_dim {
    int64_t b;        /* block size after defaults */
    int64_t r, p;     /* coordinate, grid size in this dimension */
    int64_t nblocks;
    int64_t last_len;
    int64_t local;
} dt_darray_dim;
void dt_darray_dim_of(int64_t gsize, int distrib, int64_t darg, int64_t psize, int64_t coord,
                      dt_darray_dim *d);

#endif
