/* Datatype objects: the predefined ones (static), reference counting,
 * destruction, names.
 *
 * Invariants
 *  - The predefined objects and their loops are static and set up once
 *    (pthread_once) on first use of fmpl_dt_basic / the markers; after that
 *    they change only through fmpl_dt_set_name.
 *  - A basic type's loop is its data bytes: one chunk, or for a pair type
 *    with padding between value and index (MPI_SHORT_INT) two chunks.
 *  - A derived type is one malloc (object + argument arrays) plus its loop;
 *    the last unref frees both and drops the references to the components.
 */
#include "datatype/dt_impl.h"
#include "base/error.h"
#include "base/log.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static fmpl_datatype predefined[FMPL_BT_COUNT_OF_TYPES];
static fmpl_datatype marker_lb, marker_ub;
static dl_node basic_loop[FMPL_BT_COUNT_OF_TYPES];
static int64_t pair_words[FMPL_BT_COUNT_OF_TYPES][7];
static pthread_once_t predefined_once = PTHREAD_ONCE_INIT;

/* The second basic element of a pair type (the first is the table's
 * component): int for the C pairs, the component again for Fortran's. */
static fmpl_basic_type pair_second(fmpl_basic_type bt)
{
    switch (bt) {
    case FMPL_BT_F_2INTEGER:
    case FMPL_BT_F_2REAL:
    case FMPL_BT_F_2DOUBLE_PRECISION:
        return fmpl_basic_types[bt].component;
    default:
        return FMPL_BT_INT;
    }
}

int64_t dt_basic_nelems(fmpl_basic_type bt)
{
    return fmpl_basic_types[bt].category == FMPL_CAT_PAIR ? 2 : 1;
}

static void init_marker(fmpl_datatype *t, bool lb, const char *name)
{
    t->predefined = true;
    t->committed = true;
    t->contiguous = true;
    t->combiner = FMPL_DT_COMBINER_NAMED;
    t->basic = FMPL_BT_NONE;
    t->hbt = DT_HBT_EMPTY;
    t->explicit_lb = lb;
    t->explicit_ub = !lb;
    t->align = 1;
    strcpy(t->name, name);
}

static void init_predefined(void)
{
    for (int b = 1; b < FMPL_BT_COUNT_OF_TYPES; b++) {
        const fmpl_basic_type_info *info = &fmpl_basic_types[b];
        fmpl_datatype *t = &predefined[b];
        dl_node *n = &basic_loop[b];
        t->predefined = true;
        t->committed = true;
        t->combiner = FMPL_DT_COMBINER_NAMED;
        t->basic = (fmpl_basic_type)b;
        t->hbt = (fmpl_basic_type)b;
        t->lb = 0;
        t->ub = (int64_t)info->size;
        t->align = (int64_t)info->align;
        t->nelems = dt_basic_nelems((fmpl_basic_type)b);
        t->array = true;
        t->array_n = 1;
        strncpy(t->name, info->name, FMPL_DT_MAX_NAME - 1);
        n->count = 1;
        if (info->category == FMPL_CAT_PAIR) {
            /* value at 0, second element at its natural alignment */
            int64_t s1 = (int64_t)fmpl_basic_types[info->component].size;
            const fmpl_basic_type_info *i2 = &fmpl_basic_types[pair_second((fmpl_basic_type)b)];
            int64_t s2 = (int64_t)i2->size;
            int64_t o2 = (s1 + (int64_t)i2->align - 1) / (int64_t)i2->align * (int64_t)i2->align;
            t->size = s1 + s2;
            t->true_ub = o2 + s2;
            if (o2 == s1) {
                n->kind = DL_CONTIG;
                n->size = s1 + s2;
            } else {
                int64_t *w = pair_words[b];
                n->kind = DL_BLOCKS;
                n->count = 2;
                n->disp = w;
                n->len = w + 2;
                n->prefix = w + 4;
                w[0] = 0, w[1] = o2;
                w[2] = s1, w[3] = s2;
                w[4] = 0, w[5] = s1, w[6] = s1 + s2;
                n->size = s1 + s2;
            }
        } else {
            t->size = (int64_t)info->size;
            t->true_ub = t->size;
            n->kind = DL_CONTIG;
            n->size = t->size;
        }
        t->contiguous = t->size == t->ub;
        t->loop = n;
    }
    init_marker(&marker_lb, true, "MPI_LB");
    init_marker(&marker_ub, false, "MPI_UB");
}

fmpl_datatype *fmpl_dt_basic(fmpl_basic_type bt)
{
    if ((int)bt <= FMPL_BT_NONE || bt >= FMPL_BT_COUNT_OF_TYPES)
        return NULL;
    pthread_once(&predefined_once, init_predefined);
    return &predefined[bt];
}

fmpl_datatype *fmpl_dt_lb_marker(void)
{
    pthread_once(&predefined_once, init_predefined);
    return &marker_lb;
}

fmpl_datatype *fmpl_dt_ub_marker(void)
{
    pthread_once(&predefined_once, init_predefined);
    return &marker_ub;
}

bool fmpl_dt_is_predefined(const fmpl_datatype *t) { return t && t->predefined; }

fmpl_basic_type fmpl_dt_basic_type_of(const fmpl_datatype *t)
{
    return (t && t->predefined) ? t->basic : FMPL_BT_NONE;
}

void fmpl_dt_ref(fmpl_datatype *t)
{
    if (t && !t->predefined)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void fmpl_dt_unref(fmpl_datatype *t)
{
    if (!t || t->predefined)
        return;
    long before = atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel);
    fmpl_assert(before >= 1);
    if (before == 1)
        dt_destroy(t);
}

void dt_destroy(fmpl_datatype *t)
{
    for (int64_t i = 0; i < t->ntypes; i++)
        fmpl_dt_unref(t->types[i]);
    dl_free(t->loop);
    free(t);
}

int fmpl_dt_set_name(fmpl_datatype *t, const char *name)
{
    if (!t || !name)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL %s", t ? "name" : "datatype");
    size_t n = strnlen(name, FMPL_DT_MAX_NAME - 1);
    memcpy(t->name, name, n);
    t->name[n] = '\0';
    return FMPL_SUCCESS;
}

const char *fmpl_dt_get_name(const fmpl_datatype *t) { return t ? t->name : ""; }
