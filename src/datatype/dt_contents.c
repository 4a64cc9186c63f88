/* Envelope and contents (MPI_Type_get_envelope / MPI_Type_get_contents).
 *
 * Every derived type keeps its constructor's arguments in MPI's layout for
 * the int-count constructors (MPI-4.0 Table 5.1), in t->ints / t->addrs /
 * t->types:
 *   DUP             -                                     types {old}
 *   CONTIGUOUS      ints {count}
 *   VECTOR          ints {count, blocklen, stride}
 *   HVECTOR         ints {count, blocklen}  addrs {stride}
 *   INDEXED         ints {count, blocklens[], displs[]}
 *   HINDEXED        ints {count, blocklens[]}  addrs {displs[]}
 *   INDEXED_BLOCK   ints {count, blocklen, displs[]}
 *   HINDEXED_BLOCK  ints {count, blocklen}  addrs {displs[]}
 *   STRUCT          ints {count, blocklens[]}  addrs {displs[]}  types[count]
 *   SUBARRAY        ints {ndims, sizes[], subsizes[], starts[], order}
 *   DARRAY          ints {size, rank, ndims, gsizes[], distribs[], dargs[],
 *                         psizes[], order}
 *   RESIZED         addrs {lb, extent}
 * (every combiner but STRUCT has types {old}).  A type flagged as made by a
 * large-count constructor reports the _c layout instead: every count,
 * block length, displacement, stride, lb and extent becomes a large count
 * (in the order above: the ints, then the addrs), except that SUBARRAY keeps
 * {ndims, order} and DARRAY keeps everything but gsizes[] as ints.
 */
#include "datatype/dt_impl.h"
#include "base/error.h"

/* Where the stored arguments go in the reported layout. */
typedef struct layout {
    int64_t ni, na, nc;
} layout;

static layout layout_of(const fmpl_datatype *t)
{
    layout l = {t->nints, t->naddrs, 0};
    if (!t->large_contents)
        return l;
    if (t->combiner == FMPL_DT_COMBINER_SUBARRAY) {
        l.ni = 2;
        l.nc = t->nints - 2;
    } else if (t->combiner == FMPL_DT_COMBINER_DARRAY) {
        l.nc = t->ints[2];
        l.ni = t->nints - l.nc;
    } else {
        l.ni = l.na = 0;
        l.nc = t->nints + t->naddrs;
    }
    return l;
}

int fmpl_dt_get_envelope(const fmpl_datatype *t, fmpl_dt_envelope *env)
{
    if (!t || !env)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL %s", t ? "envelope" : "datatype");
    layout l = layout_of(t);
    env->combiner = t->combiner;
    env->num_integers = l.ni;
    env->num_addresses = l.na;
    env->num_large_counts = l.nc;
    env->num_datatypes = t->ntypes;
    return FMPL_SUCCESS;
}

int fmpl_dt_get_contents(const fmpl_datatype *t, int64_t max_integers, int64_t max_addresses,
                         int64_t max_large_counts, int64_t max_datatypes, int64_t integers[],
                         int64_t addresses[], int64_t large_counts[],
                         fmpl_datatype *datatypes[])
{
    if (!t)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL datatype");
    if (t->combiner == FMPL_DT_COMBINER_NAMED)
        return FMPL_ERROR(FMPL_ERR_ARG, "%s is predefined: it has no contents", t->name);
    layout l = layout_of(t);
    if (max_integers < l.ni || max_addresses < l.na || max_large_counts < l.nc ||
        max_datatypes < t->ntypes)
        return FMPL_ERROR(FMPL_ERR_ARG,
                          "arrays too small: need %lld integers, %lld addresses, %lld large "
                          "counts, %lld datatypes",
                          (long long)l.ni, (long long)l.na, (long long)l.nc,
                          (long long)t->ntypes);
    if ((l.ni && !integers) || (l.na && !addresses) || (l.nc && !large_counts) ||
        (t->ntypes && !datatypes))
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL array where contents are due");
    const int64_t *ip = t->ints;
    if (!t->large_contents) {
        for (int64_t i = 0; i < t->nints; i++)
            integers[i] = ip[i];
        for (int64_t i = 0; i < t->naddrs; i++)
            addresses[i] = t->addrs[i];
    } else if (t->combiner == FMPL_DT_COMBINER_SUBARRAY) {
        integers[0] = ip[0];
        integers[1] = ip[t->nints - 1];
        for (int64_t i = 0; i < l.nc; i++)
            large_counts[i] = ip[1 + i];
    } else if (t->combiner == FMPL_DT_COMBINER_DARRAY) {
        int64_t nd = ip[2], k = 0;
        for (int64_t i = 0; i < t->nints; i++) {
            if (i >= 3 && i < 3 + nd)
                large_counts[i - 3] = ip[i];
            else
                integers[k++] = ip[i];
        }
    } else {
        for (int64_t i = 0; i < t->nints; i++)
            large_counts[i] = ip[i];
        for (int64_t i = 0; i < t->naddrs; i++)
            large_counts[t->nints + i] = t->addrs[i];
    }
    for (int64_t i = 0; i < t->ntypes; i++) {
        fmpl_dt_ref(t->types[i]);
        datatypes[i] = t->types[i];
    }
    return FMPL_SUCCESS;
}

void fmpl_dt_set_large_count_contents(fmpl_datatype *t)
{
    if (t && !t->predefined)
        t->large_contents = true;
}
