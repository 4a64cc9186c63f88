/* MPI datatypes on the datatype engine (src/datatype/datatype.h): the
 * handle table, the constructors, commit and free, the queries, envelope
 * and contents, names, addresses, MPI_Type_match_size.
 *
 * Handles.  Predefined handles are MPICH's (basic_type_map.c) and name the
 * engine's static objects; MPI_LB / MPI_UB name its bound markers.  A
 * derived type is a slot of the table below, handle 0x80000000 |
 * FMPL_HK_DATATYPE << 26 | index, holding one reference to the engine
 * object and the type's attributes.  Indices 0-4 are MPICH's pair types
 * (MPI_FLOAT_INT = 0x8c000000 ...), so the table starts at FIRST_INDEX.
 * Freed slots are reused (a free list); the table grows by doubling.
 *
 * Objects are shared: MPI_Type_free drops the handle's reference, and the
 * engine keeps the object alive while types built from it, or a pending
 * operation holding a reference, still use it (MPI 5.1.10).  The handle
 * itself outlives MPI_Type_free while an operation holds it
 * (fmpl_mpi_type_hold): a user reduction function of a pending collective
 * is still called with it and may query it.  Such a slot is `freed`: MPI_Type_free
 * refuses it, and it is released (and reused) with its last hold.
 * MPI_Type_get_contents returns a new handle (a new reference to the same
 * object) for every derived component, which the caller frees.
 *
 * Arguments MPI checks before the engine sees them: counts (MPI_ERR_COUNT),
 * block lengths (MPI_ERR_ARG), handles (MPI_ERR_TYPE), NULL arrays and
 * results (MPI_ERR_ARG), orders and distributions (MPI_ERR_ARG), ndims
 * (MPI_ERR_DIMS).  What only the engine checks (subarray and darray
 * geometry, 64-bit overflow) comes back as the class of its error code,
 * after the engine's own message.
 *
 * Large-count (_c) constructors call the same code with 64-bit arguments
 * and mark the type, so that its envelope and contents use the _c layout;
 * MPI_Type_get_envelope / _get_contents (int version) on such a type is
 * MPI_ERR_TYPE. */
#include "api/mpi/mpi_impl.h"
#include "datatype/basic_types.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(MPI_Count) == sizeof(int64_t), "MPI_Count is 64 bits");
_Static_assert(sizeof(MPI_Aint) == sizeof(int64_t), "MPI_Aint is 64 bits");

#define ERRC FMPL_MPI_TYPE_ERR_COMM
#define FIRST_INDEX 8
#define MAX_INDEX 0x03ffffff

/* ------------------------------------------------------------ the table */

typedef struct slot {
    fmpl_datatype *dt;                 /* NULL: free */
    struct fmpl_mpi_type_attr *attrs;
    int next_free;
    int holds;                         /* fmpl_mpi_type_hold */
    int freed;                         /* by MPI_Type_free, released with the last hold */
} slot;

static slot *slots;
static int nslots = FIRST_INDEX;       /* slots[0 .. nslots) exist or are reserved */
static int cap;
static int free_head = -1;
/* Attribute lists of the predefined types: builtin handles by their low
 * byte, the pair types after them. */
static struct fmpl_mpi_type_attr *predef_attrs[256 + 5];

static slot *slot_of(MPI_Datatype t)
{
    if (!fmpl_handle_is_dynamic(t) || fmpl_handle_kind(t) != FMPL_HK_DATATYPE)
        return NULL;
    int i = fmpl_handle_index(t);
    if (i < FIRST_INDEX || i >= nslots || !slots[i].dt)
        return NULL;
    return &slots[i];
}

fmpl_datatype *fmpl_mpi_datatype_get(MPI_Datatype t)
{
    int bt = fmpl_mpi_basic_type(t);
    if (bt != FMPL_BT_NONE)
        return fmpl_dt_basic((fmpl_basic_type)bt);
    if (t == MPI_LB)
        return fmpl_dt_lb_marker();
    if (t == MPI_UB)
        return fmpl_dt_ub_marker();
    slot *s = slot_of(t);
    return s ? s->dt : NULL;
}

struct fmpl_mpi_type_attr **fmpl_mpi_type_attr_list(MPI_Datatype t)
{
    if (fmpl_mpi_is_predefined_type(t)) {
        unsigned u = (unsigned)t;
        if ((u & 0xff000000u) == 0x4c000000u)
            return &predef_attrs[u & 0xffu];
        return &predef_attrs[256 + (u - (unsigned)MPI_FLOAT_INT)];
    }
    slot *s = slot_of(t);
    return s ? &s->attrs : NULL;
}

/* Give `dt` (one reference, handed over) a handle.  On failure the
 * reference is dropped. */
static int type_register(fmpl_datatype *dt, MPI_Datatype *handle)
{
    int i;
    if (free_head >= 0) {
        i = free_head;
        free_head = slots[i].next_free;
    } else {
        if (nslots > MAX_INDEX) {
            fmpl_dt_unref(dt);
            return MPI_ERR_INTERN;
        }
        if (nslots >= cap) {
            int ncap = cap ? (cap > MAX_INDEX / 2 ? MAX_INDEX + 1 : cap * 2) : 64;
            slot *n = realloc(slots, (size_t)ncap * sizeof *n);
            if (!n) {
                fmpl_dt_unref(dt);
                return MPI_ERR_NO_MEM;
            }
            memset(n + cap, 0, (size_t)(ncap - cap) * sizeof *n);
            slots = n;
            cap = ncap;
        }
        i = nslots++;
    }
    slots[i] = (slot){.dt = dt, .next_free = -1};
    *handle = fmpl_handle_make(FMPL_HK_DATATYPE, i);
    return MPI_SUCCESS;
}

static void type_release(slot *s)
{
    fmpl_datatype *dt = s->dt;
    int i = (int)(s - slots);
    *s = (slot){.dt = NULL, .next_free = free_head};
    free_head = i;
    fmpl_dt_unref(dt);
}

void fmpl_mpi_type_hold(MPI_Datatype t)
{
    slot *s = slot_of(t);
    if (s)
        s->holds++;
}

void fmpl_mpi_type_unhold(MPI_Datatype t)
{
    slot *s = slot_of(t);
    if (s && --s->holds == 0 && s->freed)
        type_release(s);
}

/* The handle of an engine object returned by the engine (one reference,
 * handed over): predefined objects have theirs, derived ones get a new
 * one. */
static int handle_of(fmpl_datatype *d, MPI_Datatype *h)
{
    if (fmpl_dt_is_predefined(d)) {
        if (d == fmpl_dt_lb_marker())
            *h = MPI_LB;
        else if (d == fmpl_dt_ub_marker())
            *h = MPI_UB;
        else
            *h = fmpl_mpi_basic_handle(fmpl_dt_basic_type_of(d));
        return *h == MPI_DATATYPE_NULL ? MPI_ERR_INTERN : MPI_SUCCESS;
    }
    return type_register(d, h);
}

/* ------------------------------------------------------------ helpers */

static int get_type(const char *func, const char *what, MPI_Datatype t, fmpl_datatype **d)
{
    *d = fmpl_mpi_datatype_get(t);
    if (*d)
        return MPI_SUCCESS;
    if (t == MPI_DATATYPE_NULL)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "%s is MPI_DATATYPE_NULL", what);
    return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "%s 0x%x is not a valid datatype", what,
                          (unsigned)t);
}

static int null_arg(const char *func, const char *what)
{
    return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "%s is NULL", what);
}

static int check_count(const char *func, const char *what, int64_t n)
{
    if (n < 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_COUNT, func, "%s %lld is negative", what,
                              (long long)n);
    return MPI_SUCCESS;
}

static int check_blocklens(const char *func, int64_t count, const int64_t *b)
{
    for (int64_t i = 0; i < count; i++)
        if (b[i] < 0)
            return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "block length [%lld] = %lld is negative",
                                  (long long)i, (long long)b[i]);
    return MPI_SUCCESS;
}

/* A 64-bit copy of an int array (NULL when n == 0); *out NULL and an error
 * reported on failure. */
static int widen(const char *func, const int *a, int64_t n, int64_t **out)
{
    *out = NULL;
    if (n == 0)
        return MPI_SUCCESS;
    *out = malloc((size_t)n * sizeof **out);
    if (!*out)
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory for %lld arguments",
                              (long long)n);
    for (int64_t i = 0; i < n; i++)
        (*out)[i] = a[i];
    return MPI_SUCCESS;
}

/* The end of every constructor: the engine's result to a handle. */
static int finish(const char *func, int rc, fmpl_datatype *const *ntp, int large,
                  MPI_Datatype *newtype)
{
    /* ntp, not the pointer: the engine call may be an argument of this
     * call, and arguments are evaluated in no fixed order. */
    fmpl_datatype *nt = *ntp;
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(ERRC, fmpl_mpi_error_class_of(rc), func,
                              "the datatype cannot be built: %s", fmpl_error_string(rc));
    if (large)
        fmpl_dt_set_large_count_contents(nt);
    rc = type_register(nt, newtype);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(ERRC, rc, func, "no room for another datatype handle");
    return MPI_SUCCESS;
}

#define START(func, newtype)                                                       \
    do {                                                                           \
        FMPL_MPI_CHECK_READY(ERRC);                                                \
        if (!(newtype))                                                            \
            return null_arg((func), "newtype");                                    \
    } while (0)

/* ------------------------------------------------------------ constructors */

static int contiguous(const char *func, int64_t count, MPI_Datatype old, MPI_Datatype *newtype,
                      int large)
{
    START(func, newtype);
    fmpl_datatype *o, *nt = NULL;
    int rc;
    if ((rc = check_count(func, "count", count)) || (rc = get_type(func, "oldtype", old, &o)))
        return rc;
    return finish(func, fmpl_dt_contiguous(count, o, &nt), &nt, large, newtype);
}

int PMPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return contiguous("MPI_Type_contiguous", count, old, newtype, 0);
}
FMPL_MPI_WEAK(Type_contiguous)

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return contiguous("MPI_Type_contiguous_c", count, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_contiguous_c)

static int vector(const char *func, int64_t count, int64_t blocklen, int64_t stride,
                  int bytes, MPI_Datatype old, MPI_Datatype *newtype, int large)
{
    START(func, newtype);
    fmpl_datatype *o, *nt = NULL;
    int rc;
    if ((rc = check_count(func, "count", count)) || (rc = check_blocklens(func, 1, &blocklen)) ||
        (rc = get_type(func, "oldtype", old, &o)))
        return rc;
    rc = bytes ? fmpl_dt_hvector(count, blocklen, stride, o, &nt)
               : fmpl_dt_vector(count, blocklen, stride, o, &nt);
    return finish(func, rc, &nt, large, newtype);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old,
                     MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return vector("MPI_Type_vector", count, blocklength, stride, 0, old, newtype, 0);
}
FMPL_MPI_WEAK(Type_vector)

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return vector("MPI_Type_vector_c", count, blocklength, stride, 0, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_vector_c)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                             MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return vector("MPI_Type_create_hvector", count, blocklength, stride, 1, old, newtype, 0);
}
FMPL_MPI_WEAK(Type_create_hvector)

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return vector("MPI_Type_create_hvector_c", count, blocklength, stride, 1, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_hvector_c)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return vector("MPI_Type_hvector", count, blocklength, stride, 1, old, newtype, 0);
}
FMPL_MPI_WEAK(Type_hvector)

/* The indexed family.  `blocklens` NULL: every block is `blocklen` long
 * (the _block constructors); `bytes`: displacements in bytes. */
enum { IX_INDEXED, IX_HINDEXED, IX_BLOCK, IX_HBLOCK };

static int indexed(const char *func, int kind, int64_t count, const int64_t *blocklens,
                   int64_t blocklen, const int64_t *displs, MPI_Datatype old,
                   MPI_Datatype *newtype, int large)
{
    fmpl_datatype *o, *nt = NULL;
    int rc;
    if ((rc = check_count(func, "count", count)))
        return rc;
    if (count > 0 && ((!blocklens && kind != IX_BLOCK && kind != IX_HBLOCK) || !displs))
        return null_arg(func, !displs ? "array_of_displacements" : "array_of_blocklengths");
    if ((rc = blocklens ? check_blocklens(func, count, blocklens)
                        : check_blocklens(func, 1, &blocklen)) ||
        (rc = get_type(func, "oldtype", old, &o)))
        return rc;
    switch (kind) {
    case IX_INDEXED: rc = fmpl_dt_indexed(count, blocklens, displs, o, &nt); break;
    case IX_HINDEXED: rc = fmpl_dt_hindexed(count, blocklens, displs, o, &nt); break;
    case IX_BLOCK: rc = fmpl_dt_indexed_block(count, blocklen, displs, o, &nt); break;
    default: rc = fmpl_dt_hindexed_block(count, blocklen, displs, o, &nt); break;
    }
    return finish(func, rc, &nt, large, newtype);
}

/* The int-count forms: widen the int arrays, then indexed(). */
static int indexed_int(const char *func, int kind, int count, const int *blocklens,
                       int blocklen, const int *displs_int, const MPI_Aint *displs_aint,
                       MPI_Datatype old, MPI_Datatype *newtype)
{
    START(func, newtype);
    int64_t *b = NULL, *d = NULL;
    int rc = MPI_SUCCESS;
    if (count > 0) {
        if ((kind == IX_INDEXED || kind == IX_HINDEXED) && !blocklens)
            return null_arg(func, "array_of_blocklengths");
        if (!displs_int && !displs_aint)
            return null_arg(func, "array_of_displacements");
    }
    if (blocklens && count > 0)
        rc = widen(func, blocklens, count, &b);
    if (rc == MPI_SUCCESS && displs_int && count > 0)
        rc = widen(func, displs_int, count, &d);
    if (rc == MPI_SUCCESS)
        rc = indexed(func, kind, count, b, blocklen, displs_int ? d : (const int64_t *)displs_aint,
                     old, newtype, 0);
    free(b);
    free(d);
    return rc;
}

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype old,
                      MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return indexed_int("MPI_Type_indexed", IX_INDEXED, count, array_of_blocklengths, 0,
                       array_of_displacements, NULL, old, newtype);
}
FMPL_MPI_WEAK(Type_indexed)

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype old,
                        MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_indexed_c", newtype);
    return indexed("MPI_Type_indexed_c", IX_INDEXED, count, (const int64_t *)array_of_blocklengths,
                   0, (const int64_t *)array_of_displacements, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_indexed_c)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return indexed_int("MPI_Type_create_hindexed", IX_HINDEXED, count, array_of_blocklengths, 0,
                       NULL, array_of_displacements, old, newtype);
}
FMPL_MPI_WEAK(Type_create_hindexed)

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype old,
                                MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_create_hindexed_c", newtype);
    return indexed("MPI_Type_create_hindexed_c", IX_HINDEXED, count,
                   (const int64_t *)array_of_blocklengths, 0,
                   (const int64_t *)array_of_displacements, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_hindexed_c)

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return indexed_int("MPI_Type_hindexed", IX_HINDEXED, count, array_of_blocklengths, 0, NULL,
                       array_of_displacements, old, newtype);
}
FMPL_MPI_WEAK(Type_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return indexed_int("MPI_Type_create_indexed_block", IX_BLOCK, count, NULL, blocklength,
                       array_of_displacements, NULL, old, newtype);
}
FMPL_MPI_WEAK(Type_create_indexed_block)

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype old,
                                     MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_create_indexed_block_c", newtype);
    return indexed("MPI_Type_create_indexed_block_c", IX_BLOCK, count, NULL, blocklength,
                   (const int64_t *)array_of_displacements, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_indexed_block_c)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype old,
                                    MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return indexed_int("MPI_Type_create_hindexed_block", IX_HBLOCK, count, NULL, blocklength,
                       NULL, array_of_displacements, old, newtype);
}
FMPL_MPI_WEAK(Type_create_hindexed_block)

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_create_hindexed_block_c", newtype);
    return indexed("MPI_Type_create_hindexed_block_c", IX_HBLOCK, count, NULL, blocklength,
                   (const int64_t *)array_of_displacements, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_hindexed_block_c)

static int structure(const char *func, int64_t count, const int64_t *blocklens,
                     const int64_t *displs, const MPI_Datatype *types, MPI_Datatype *newtype,
                     int large)
{
    int rc;
    if ((rc = check_count(func, "count", count)))
        return rc;
    if (count > 0 && (!blocklens || !displs || !types))
        return null_arg(func, !blocklens ? "array_of_blocklengths"
                              : !displs  ? "array_of_displacements"
                                         : "array_of_types");
    if ((rc = check_blocklens(func, count, blocklens)))
        return rc;
    fmpl_datatype **t = NULL;
    if (count > 0 && !(t = malloc((size_t)count * sizeof *t)))
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory for %lld types",
                              (long long)count);
    for (int64_t i = 0; i < count; i++) {
        t[i] = fmpl_mpi_datatype_get(types[i]);
        if (!t[i]) {
            free(t);
            return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func,
                                  "array_of_types[%lld] = 0x%x is not a valid datatype",
                                  (long long)i, (unsigned)types[i]);
        }
    }
    fmpl_datatype *nt = NULL;
    rc = fmpl_dt_struct(count, blocklens, displs, t, &nt);
    free(t);
    return finish(func, rc, &nt, large, newtype);
}

static int structure_int(const char *func, int count, const int *blocklens,
                         const MPI_Aint *displs, const MPI_Datatype *types,
                         MPI_Datatype *newtype)
{
    START(func, newtype);
    if (count > 0 && !blocklens)
        return null_arg(func, "array_of_blocklengths");
    int64_t *b = NULL;
    int rc = count > 0 ? widen(func, blocklens, count, &b) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS)
        rc = structure(func, count, b, (const int64_t *)displs, types, newtype, 0);
    free(b);
    return rc;
}

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return structure_int("MPI_Type_create_struct", count, array_of_blocklengths,
                         array_of_displacements, array_of_types, newtype);
}
FMPL_MPI_WEAK(Type_create_struct)

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return structure_int("MPI_Type_struct", count, array_of_blocklengths,
                         array_of_displacements, array_of_types, newtype);
}
FMPL_MPI_WEAK(Type_struct)

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_create_struct_c", newtype);
    return structure("MPI_Type_create_struct_c", count, (const int64_t *)array_of_blocklengths,
                     (const int64_t *)array_of_displacements, array_of_types, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_struct_c)

/* MPI's order / distribution constants <-> the engine's. */
static int order_in(int order)
{
    return order == MPI_ORDER_C ? FMPL_DT_ORDER_C
         : order == MPI_ORDER_FORTRAN ? FMPL_DT_ORDER_FORTRAN : -1;
}

static int order_out(int64_t order)
{
    return order == FMPL_DT_ORDER_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
}

static int distrib_in(int d)
{
    switch (d) {
    case MPI_DISTRIBUTE_BLOCK: return FMPL_DT_DISTRIBUTE_BLOCK;
    case MPI_DISTRIBUTE_CYCLIC: return FMPL_DT_DISTRIBUTE_CYCLIC;
    case MPI_DISTRIBUTE_NONE: return FMPL_DT_DISTRIBUTE_NONE;
    default: return -1;
    }
}

static int distrib_out(int64_t d)
{
    switch (d) {
    case FMPL_DT_DISTRIBUTE_BLOCK: return MPI_DISTRIBUTE_BLOCK;
    case FMPL_DT_DISTRIBUTE_CYCLIC: return MPI_DISTRIBUTE_CYCLIC;
    default: return MPI_DISTRIBUTE_NONE;
    }
}

static int subarray(const char *func, int ndims, const int64_t *sizes, const int64_t *subsizes,
                    const int64_t *starts, int order, MPI_Datatype old, MPI_Datatype *newtype,
                    int large)
{
    fmpl_datatype *o, *nt = NULL;
    int rc;
    if (ndims <= 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_DIMS, func, "ndims %d is not positive", ndims);
    if (!sizes || !subsizes || !starts)
        return null_arg(func, !sizes ? "array_of_sizes"
                              : !subsizes ? "array_of_subsizes" : "array_of_starts");
    int eorder = order_in(order);
    if (eorder < 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                              "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    if ((rc = get_type(func, "oldtype", old, &o)))
        return rc;
    rc = fmpl_dt_subarray(ndims, sizes, subsizes, starts, eorder, o, &nt);
    return finish(func, rc, &nt, large, newtype);
}

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_create_subarray";
    START(func, newtype);
    if (ndims <= 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_DIMS, func, "ndims %d is not positive", ndims);
    if (!array_of_sizes || !array_of_subsizes || !array_of_starts)
        return null_arg(func, !array_of_sizes      ? "array_of_sizes"
                              : !array_of_subsizes ? "array_of_subsizes"
                                                   : "array_of_starts");
    int64_t *s = NULL, *ss = NULL, *st = NULL;
    int rc = widen(func, array_of_sizes, ndims, &s);
    if (rc == MPI_SUCCESS)
        rc = widen(func, array_of_subsizes, ndims, &ss);
    if (rc == MPI_SUCCESS)
        rc = widen(func, array_of_starts, ndims, &st);
    if (rc == MPI_SUCCESS)
        rc = subarray(func, ndims, s, ss, st, order, old, newtype, 0);
    free(s);
    free(ss);
    free(st);
    return rc;
}
FMPL_MPI_WEAK(Type_create_subarray)

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype old,
                                MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_create_subarray_c", newtype);
    return subarray("MPI_Type_create_subarray_c", ndims, (const int64_t *)array_of_sizes,
                    (const int64_t *)array_of_subsizes, (const int64_t *)array_of_starts, order,
                    old, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_subarray_c)

static int darray(const char *func, int size, int rank, int ndims, const int64_t *gsizes,
                  const int *distribs, const int *dargs, const int *psizes, int order,
                  MPI_Datatype old, MPI_Datatype *newtype, int large)
{
    fmpl_datatype *o, *nt = NULL;
    int rc;
    if (ndims <= 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_DIMS, func, "ndims %d is not positive", ndims);
    if (!gsizes || !distribs || !dargs || !psizes)
        return null_arg(func, !gsizes     ? "array_of_gsizes"
                              : !distribs ? "array_of_distribs"
                              : !dargs    ? "array_of_dargs"
                                          : "array_of_psizes");
    if (size <= 0 || rank < 0 || rank >= size)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "rank %d of size %d", rank, size);
    int eorder = order_in(order);
    if (eorder < 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                              "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN", order);
    if ((rc = get_type(func, "oldtype", old, &o)))
        return rc;
    int *ed = malloc(2 * (size_t)ndims * sizeof *ed);
    if (!ed)
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory");
    int *ea = ed + ndims;
    for (int i = 0; i < ndims; i++) {
        ed[i] = distrib_in(distribs[i]);
        if (ed[i] < 0) {
            free(ed);
            return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                                  "array_of_distribs[%d] = %d is not an MPI_DISTRIBUTE_ value",
                                  i, distribs[i]);
        }
        if (dargs[i] == MPI_DISTRIBUTE_DFLT_DARG || (ed[i] == FMPL_DT_DISTRIBUTE_NONE && dargs[i] <= 0)) {
            ea[i] = FMPL_DT_DISTRIBUTE_DFLT_DARG;
        } else if (dargs[i] <= 0) {
            free(ed);
            return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                                  "array_of_dargs[%d] = %d is neither positive nor "
                                  "MPI_DISTRIBUTE_DFLT_DARG", i, dargs[i]);
        } else {
            ea[i] = dargs[i];
        }
    }
    rc = fmpl_dt_darray(size, rank, ndims, gsizes, ed, ea, psizes, eorder, o, &nt);
    free(ed);
    return finish(func, rc, &nt, large, newtype);
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype old,
                            MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_create_darray";
    START(func, newtype);
    if (ndims <= 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_DIMS, func, "ndims %d is not positive", ndims);
    if (!array_of_gsizes)
        return null_arg(func, "array_of_gsizes");
    int64_t *g = NULL;
    int rc = widen(func, array_of_gsizes, ndims, &g);
    if (rc == MPI_SUCCESS)
        rc = darray(func, size, rank, ndims, g, array_of_distribs, array_of_dargs,
                    array_of_psizes, order, old, newtype, 0);
    free(g);
    return rc;
}
FMPL_MPI_WEAK(Type_create_darray)

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype old,
                              MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    START("MPI_Type_create_darray_c", newtype);
    return darray("MPI_Type_create_darray_c", size, rank, ndims,
                  (const int64_t *)array_of_gsizes, array_of_distribs, array_of_dargs,
                  array_of_psizes, order, old, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_darray_c)

static int resized(const char *func, MPI_Datatype old, int64_t lb, int64_t extent,
                   MPI_Datatype *newtype, int large)
{
    START(func, newtype);
    fmpl_datatype *o, *nt = NULL;
    int rc = get_type(func, "oldtype", old, &o);
    if (rc)
        return rc;
    return finish(func, fmpl_dt_resized(o, lb, extent, &nt), &nt, large, newtype);
}

int PMPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return resized("MPI_Type_create_resized", old, lb, extent, newtype, 0);
}
FMPL_MPI_WEAK(Type_create_resized)

int PMPI_Type_create_resized_c(MPI_Datatype old, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    return resized("MPI_Type_create_resized_c", old, lb, extent, newtype, 1);
}
FMPL_MPI_WEAK(Type_create_resized_c)

/* The new type has the same typemap and committed state; attributes are
 * copied through their copy callbacks (a callback's error undoes the dup). */
int PMPI_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_dup";
    START(func, newtype);
    fmpl_datatype *o, *nt = NULL;
    int rc = get_type(func, "oldtype", old, &o);
    if (rc)
        return rc;
    MPI_Datatype h;
    rc = finish(func, fmpl_dt_dup(o, &nt), &nt, 0, &h);
    if (rc)
        return rc;
    rc = fmpl_mpi_type_attr_copy_all(old, h);
    if (rc != MPI_SUCCESS) {
        fmpl_mpi_type_attr_delete_all(h);
        type_release(slot_of(h));
        return fmpl_mpi_error(ERRC, rc, func, "an attribute copy callback failed (%d)", rc);
    }
    *newtype = h;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_dup)

/* ------------------------------------------------------------ commit, free */

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_commit";
    FMPL_MPI_CHECK_READY(ERRC);
    if (!datatype)
        return null_arg(func, "datatype");
    fmpl_datatype *d;
    int rc = get_type(func, "datatype", *datatype, &d);
    if (rc)
        return rc;
    rc = fmpl_dt_commit(d);   /* predefined types are committed: a no-op */
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(ERRC, fmpl_mpi_error_class_of(rc), func,
                              "cannot commit datatype 0x%x: %s", (unsigned)*datatype,
                              fmpl_error_string(rc));
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_free";
    FMPL_MPI_CHECK_READY(ERRC);
    if (!datatype)
        return null_arg(func, "datatype");
    MPI_Datatype t = *datatype;
    if (fmpl_mpi_is_predefined_type(t))
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "%s is predefined: it cannot be freed",
                              fmpl_dt_get_name(fmpl_mpi_datatype_get(t)));
    int f90_combiner, f90_ints[2], f90_n;
    if (fmpl_mpi_type_f90_params(t, &f90_combiner, f90_ints, &f90_n))
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func,
                              "0x%x is a parameterized Fortran 90 type, which is predefined: "
                              "it cannot be freed", (unsigned)t);
    slot *s = slot_of(t);
    if (!s || s->freed)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func, "0x%x is %s", (unsigned)t,
                              t == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL"
                                                     : "not a datatype (invalid or freed)");
    int rc = fmpl_mpi_type_attr_delete_all(t);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(ERRC, rc, func,
                              "an attribute delete callback failed (%d): the type is not freed",
                              rc);
    s = slot_of(t); /* the callbacks may have grown the table */
    if (s->holds > 0)
        s->freed = 1;
    else
        type_release(s);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_free)

/* ------------------------------------------------------------ queries */

#define QUERY_START(func, t, d, out)                                               \
    fmpl_datatype *d;                                                              \
    do {                                                                           \
        FMPL_MPI_CHECK_READY(ERRC);                                                \
        int rc_ = get_type((func), "datatype", (t), &d);                           \
        if (rc_)                                                                   \
            return rc_;                                                            \
        if (!(out))                                                                \
            return null_arg((func), "an output argument");                         \
    } while (0)

int PMPI_Type_size(MPI_Datatype t, int *size)
{
    FMPL_CORE_GUARD();
    QUERY_START("MPI_Type_size", t, d, size);
    int64_t s = fmpl_dt_size(d);
    *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_size)

/* The 64-bit forms (_c, _x and the MPI_Aint ones) share one body each: the
 * MPI_Aint and MPI_Count results are both 64-bit integers. */
static int size64(const char *func, MPI_Datatype t, MPI_Count *size)
{
    QUERY_START(func, t, d, size);
    *size = fmpl_dt_size(d);
    return MPI_SUCCESS;
}

int PMPI_Type_size_c(MPI_Datatype t, MPI_Count *size)
{
    FMPL_CORE_GUARD();
    return size64("MPI_Type_size_c", t, size);
}
FMPL_MPI_WEAK(Type_size_c)

int PMPI_Type_size_x(MPI_Datatype t, MPI_Count *size)
{
    FMPL_CORE_GUARD();
    return size64("MPI_Type_size_x", t, size);
}
FMPL_MPI_WEAK(Type_size_x)

/* lb and extent (true == 0) or true lb and true extent (true == 1). */
static int extent64(const char *func, MPI_Datatype t, int true_bounds, int64_t *lb,
                    int64_t *extent)
{
    QUERY_START(func, t, d, lb && extent);
    *lb = true_bounds ? fmpl_dt_true_lb(d) : fmpl_dt_lb(d);
    *extent = true_bounds ? fmpl_dt_true_extent(d) : fmpl_dt_extent(d);
    return MPI_SUCCESS;
}

/* Through int64_t locals: MPI_Aint (long) and MPI_Count (long long) are
 * distinct types of the same width. */
#define EXTENT_BODY(func, t, true_bounds, lb_out, extent_out)                          do {                                                                                   int64_t lb_, ext_;                                                                 int rc_ = extent64((func), (t), (true_bounds), (lb_out) ? &lb_ : NULL,                               (extent_out) ? &ext_ : NULL);                                   if (rc_ == MPI_SUCCESS) {                                                              *(lb_out) = lb_;                                                                   *(extent_out) = ext_;                                                          }                                                                                  return rc_;                                                                    } while (0)

int PMPI_Type_get_extent(MPI_Datatype t, MPI_Aint *lb, MPI_Aint *extent)
{
    FMPL_CORE_GUARD();
    EXTENT_BODY("MPI_Type_get_extent", t, 0, lb, extent);
}
FMPL_MPI_WEAK(Type_get_extent)

int PMPI_Type_get_extent_c(MPI_Datatype t, MPI_Count *lb, MPI_Count *extent)
{
    FMPL_CORE_GUARD();
    EXTENT_BODY("MPI_Type_get_extent_c", t, 0, lb, extent);
}
FMPL_MPI_WEAK(Type_get_extent_c)

int PMPI_Type_get_extent_x(MPI_Datatype t, MPI_Count *lb, MPI_Count *extent)
{
    FMPL_CORE_GUARD();
    EXTENT_BODY("MPI_Type_get_extent_x", t, 0, lb, extent);
}
FMPL_MPI_WEAK(Type_get_extent_x)

int PMPI_Type_get_true_extent(MPI_Datatype t, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    FMPL_CORE_GUARD();
    EXTENT_BODY("MPI_Type_get_true_extent", t, 1, true_lb, true_extent);
}
FMPL_MPI_WEAK(Type_get_true_extent)

int PMPI_Type_get_true_extent_c(MPI_Datatype t, MPI_Count *true_lb, MPI_Count *true_extent)
{
    FMPL_CORE_GUARD();
    EXTENT_BODY("MPI_Type_get_true_extent_c", t, 1, true_lb, true_extent);
}
FMPL_MPI_WEAK(Type_get_true_extent_c)

int PMPI_Type_get_true_extent_x(MPI_Datatype t, MPI_Count *true_lb, MPI_Count *true_extent)
{
    FMPL_CORE_GUARD();
    EXTENT_BODY("MPI_Type_get_true_extent_x", t, 1, true_lb, true_extent);
}
FMPL_MPI_WEAK(Type_get_true_extent_x)

/* MPI-1 forms, removed in MPI-3.0 (MPICH keeps them). */
int PMPI_Type_extent(MPI_Datatype t, MPI_Aint *extent)
{
    FMPL_CORE_GUARD();
    QUERY_START("MPI_Type_extent", t, d, extent);
    *extent = fmpl_dt_extent(d);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_extent)

int PMPI_Type_lb(MPI_Datatype t, MPI_Aint *displacement)
{
    FMPL_CORE_GUARD();
    QUERY_START("MPI_Type_lb", t, d, displacement);
    *displacement = fmpl_dt_lb(d);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_lb)

int PMPI_Type_ub(MPI_Datatype t, MPI_Aint *displacement)
{
    FMPL_CORE_GUARD();
    QUERY_START("MPI_Type_ub", t, d, displacement);
    *displacement = fmpl_dt_ub(d);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_ub)

/* ------------------------------------------------------------ addresses */

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    FMPL_CORE_GUARD();
    if (!address)
        return null_arg("MPI_Get_address", "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Get_address)

int PMPI_Address(void *location, MPI_Aint *address)
{
    FMPL_CORE_GUARD();
    if (!address)
        return null_arg("MPI_Address", "address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Address)

/* Address arithmetic wraps like the machine's (no signed overflow). */
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    FMPL_CORE_GUARD();
    return (MPI_Aint)((uint64_t)base + (uint64_t)disp);
}
FMPL_MPI_WEAK(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    FMPL_CORE_GUARD();
    return (MPI_Aint)((uint64_t)addr1 - (uint64_t)addr2);
}
FMPL_MPI_WEAK(Aint_diff)

/* ------------------------------------------------------------ envelope, contents */

static int combiner_out(fmpl_dt_combiner c)
{
    switch (c) {
    case FMPL_DT_COMBINER_NAMED: return MPI_COMBINER_NAMED;
    case FMPL_DT_COMBINER_DUP: return MPI_COMBINER_DUP;
    case FMPL_DT_COMBINER_CONTIGUOUS: return MPI_COMBINER_CONTIGUOUS;
    case FMPL_DT_COMBINER_VECTOR: return MPI_COMBINER_VECTOR;
    case FMPL_DT_COMBINER_HVECTOR: return MPI_COMBINER_HVECTOR;
    case FMPL_DT_COMBINER_INDEXED: return MPI_COMBINER_INDEXED;
    case FMPL_DT_COMBINER_HINDEXED: return MPI_COMBINER_HINDEXED;
    case FMPL_DT_COMBINER_INDEXED_BLOCK: return MPI_COMBINER_INDEXED_BLOCK;
    case FMPL_DT_COMBINER_HINDEXED_BLOCK: return MPI_COMBINER_HINDEXED_BLOCK;
    case FMPL_DT_COMBINER_STRUCT: return MPI_COMBINER_STRUCT;
    case FMPL_DT_COMBINER_SUBARRAY: return MPI_COMBINER_SUBARRAY;
    case FMPL_DT_COMBINER_DARRAY: return MPI_COMBINER_DARRAY;
    case FMPL_DT_COMBINER_RESIZED: return MPI_COMBINER_RESIZED;
    }
    return MPI_UNDEFINED;
}

static int envelope(const char *func, MPI_Datatype t, fmpl_datatype **d, fmpl_dt_envelope *env)
{
    FMPL_MPI_CHECK_READY(ERRC);
    int rc = get_type(func, "datatype", t, d);
    if (rc)
        return rc;
    rc = fmpl_dt_get_envelope(*d, env);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(ERRC, MPI_ERR_INTERN, func, "no envelope");
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype t, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_get_envelope";
    fmpl_datatype *d;
    fmpl_dt_envelope env;
    int rc = envelope(func, t, &d, &env);
    if (rc)
        return rc;
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return null_arg(func, "an output argument");
    int f90_ints[2], f90_n;
    if (fmpl_mpi_type_f90_params(t, combiner, f90_ints, &f90_n)) {
        *num_integers = f90_n;
        *num_addresses = *num_datatypes = 0;
        return MPI_SUCCESS;
    }
    if (env.num_large_counts > 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func,
                              "datatype 0x%x was built by a large-count constructor: "
                              "use MPI_Type_get_envelope_c", (unsigned)t);
    if (env.num_integers > INT_MAX)
        return fmpl_mpi_error(ERRC, MPI_ERR_VALUE_TOO_LARGE, func,
                              "%lld integers do not fit in an int", (long long)env.num_integers);
    *num_integers = (int)env.num_integers;
    *num_addresses = (int)env.num_addresses;
    *num_datatypes = (int)env.num_datatypes;
    *combiner = combiner_out(env.combiner);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype t, MPI_Count *num_integers, MPI_Count *num_addresses,
                             MPI_Count *num_large_counts, MPI_Count *num_datatypes,
                             int *combiner)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_get_envelope_c";
    fmpl_datatype *d;
    fmpl_dt_envelope env;
    int rc = envelope(func, t, &d, &env);
    if (rc)
        return rc;
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return null_arg(func, "an output argument");
    int f90_ints[2], f90_n;
    if (fmpl_mpi_type_f90_params(t, combiner, f90_ints, &f90_n)) {
        *num_integers = f90_n;
        *num_addresses = *num_large_counts = *num_datatypes = 0;
        return MPI_SUCCESS;
    }
    *num_integers = env.num_integers;
    *num_addresses = env.num_addresses;
    *num_large_counts = env.num_large_counts;
    *num_datatypes = env.num_datatypes;
    *combiner = combiner_out(env.combiner);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_get_envelope_c)

/* Engine values in the integers of SUBARRAY and DARRAY -> MPI's. */
static void fix_integers(const fmpl_dt_envelope *env, int64_t *ints)
{
    if (env->combiner == FMPL_DT_COMBINER_SUBARRAY) {
        ints[env->num_integers - 1] = order_out(ints[env->num_integers - 1]);
    } else if (env->combiner == FMPL_DT_COMBINER_DARRAY) {
        int64_t nd = ints[2];
        /* int layout: size rank ndims gsizes[] distribs[] dargs[] psizes[]
         * order; large layout: the same without gsizes[]. */
        int64_t db = env->num_large_counts ? 3 : 3 + nd;
        for (int64_t i = 0; i < nd; i++) {
            ints[db + i] = distrib_out(ints[db + i]);
            if (ints[db + nd + i] == FMPL_DT_DISTRIBUTE_DFLT_DARG)
                ints[db + nd + i] = MPI_DISTRIBUTE_DFLT_DARG;
        }
        ints[env->num_integers - 1] = order_out(ints[env->num_integers - 1]);
    }
}

/* Shared by both forms: fetch the contents into 64-bit arrays, map the
 * engine's constants, convert the component types to handles. */
static int contents(const char *func, MPI_Datatype t, int64_t max_integers,
                    int64_t max_addresses, int64_t max_large_counts, int64_t max_datatypes,
                    int array_of_integers[], MPI_Aint array_of_addresses[],
                    MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[],
                    int large)
{
    fmpl_datatype *d = NULL;
    fmpl_dt_envelope env;
    int rc = envelope(func, t, &d, &env);
    if (rc)
        return rc;
    int f90_combiner, f90_ints[2], f90_n;
    if (fmpl_mpi_type_f90_params(t, &f90_combiner, f90_ints, &f90_n)) {
        if (max_integers < f90_n)
            return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "the envelope has %d integers",
                                  f90_n);
        if (!array_of_integers)
            return null_arg(func, "array_of_integers");
        for (int i = 0; i < f90_n; i++)
            array_of_integers[i] = f90_ints[i];
        return MPI_SUCCESS;
    }
    if (env.combiner == FMPL_DT_COMBINER_NAMED)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func,
                              "%s is predefined (MPI_COMBINER_NAMED): it has no contents",
                              fmpl_dt_get_name(d));
    if (!large && env.num_large_counts > 0)
        return fmpl_mpi_error(ERRC, MPI_ERR_TYPE, func,
                              "datatype 0x%x was built by a large-count constructor: "
                              "use MPI_Type_get_contents_c", (unsigned)t);
    if (max_integers < env.num_integers || max_addresses < env.num_addresses ||
        max_large_counts < env.num_large_counts || max_datatypes < env.num_datatypes)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                              "arrays too small: the envelope has %lld integers, %lld "
                              "addresses, %lld large counts, %lld datatypes",
                              (long long)env.num_integers, (long long)env.num_addresses,
                              (long long)env.num_large_counts, (long long)env.num_datatypes);
    if ((env.num_integers && !array_of_integers) || (env.num_addresses && !array_of_addresses) ||
        (env.num_large_counts && !array_of_large_counts) ||
        (env.num_datatypes && !array_of_datatypes))
        return null_arg(func, "an array the envelope needs");
    int64_t n = env.num_integers + env.num_datatypes;
    int64_t *ints = malloc((size_t)(n ? n : 1) * sizeof *ints);
    fmpl_datatype **types = malloc((size_t)(env.num_datatypes ? env.num_datatypes : 1) *
                                   sizeof *types);
    if (!ints || !types) {
        free(ints);
        free(types);
        return fmpl_mpi_error(ERRC, MPI_ERR_NO_MEM, func, "no memory");
    }
    /* MPI_Aint and MPI_Count are int64_t: the engine writes them directly. */
    rc = fmpl_dt_get_contents(d, env.num_integers, env.num_addresses, env.num_large_counts,
                              env.num_datatypes, ints, (int64_t *)array_of_addresses,
                              (int64_t *)array_of_large_counts, types);
    if (rc != FMPL_SUCCESS) {
        free(ints);
        free(types);
        return fmpl_mpi_error(ERRC, fmpl_mpi_error_class_of(rc), func, "no contents: %s",
                              fmpl_error_string(rc));
    }
    fix_integers(&env, ints);
    for (int64_t i = 0; i < env.num_integers; i++)
        array_of_integers[i] = (int)ints[i];
    rc = MPI_SUCCESS;
    for (int64_t i = 0; i < env.num_datatypes; i++) {
        if (rc == MPI_SUCCESS)
            rc = handle_of(types[i], &array_of_datatypes[i]);
        else
            fmpl_dt_unref(types[i]);
    }
    free(ints);
    free(types);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(ERRC, rc, func, "no room for the component datatypes' handles");
    return MPI_SUCCESS;
}

int PMPI_Type_get_contents(MPI_Datatype t, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    FMPL_CORE_GUARD();
    return contents("MPI_Type_get_contents", t, max_integers, max_addresses, 0, max_datatypes,
                    array_of_integers, array_of_addresses, NULL, array_of_datatypes, 0);
}
FMPL_MPI_WEAK(Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype t, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[],
                             MPI_Datatype array_of_datatypes[])
{
    FMPL_CORE_GUARD();
    return contents("MPI_Type_get_contents_c", t, max_integers, max_addresses, max_large_counts,
                    max_datatypes, array_of_integers, array_of_addresses, array_of_large_counts,
                    array_of_datatypes, 1);
}
FMPL_MPI_WEAK(Type_get_contents_c)

/* ------------------------------------------------------------ names */

int PMPI_Type_set_name(MPI_Datatype t, const char *type_name)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_set_name";
    FMPL_MPI_CHECK_READY(ERRC);
    fmpl_datatype *d;
    int rc = get_type(func, "datatype", t, &d);
    if (rc)
        return rc;
    if (!type_name)
        return null_arg(func, "type_name");
    fmpl_dt_set_name(d, type_name);   /* truncated to MPI_MAX_OBJECT_NAME - 1 */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_set_name)

int PMPI_Type_get_name(MPI_Datatype t, char *type_name, int *resultlen)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_get_name";
    FMPL_MPI_CHECK_READY(ERRC);
    fmpl_datatype *d;
    int rc = get_type(func, "datatype", t, &d);
    if (rc)
        return rc;
    if (!type_name || !resultlen)
        return null_arg(func, !type_name ? "type_name" : "resultlen");
    const char *n = fmpl_dt_get_name(d);
    size_t len = strnlen(n, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, n, len);
    type_name[len] = '\0';
    *resultlen = (int)len;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_get_name)

/* ------------------------------------------------------------ Fortran-oriented */

/* A predefined type of the class and size: the Fortran sized types, which
 * is what the function is for (KIND parameters), MPI-4.1's half-precision
 * MPI_REAL2 and MPI_COMPLEX4 among them (mpi4py's test_datatype asks for
 * every sized type the library has). */
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    FMPL_CORE_GUARD();
    const char *func = "MPI_Type_match_size";
    FMPL_MPI_CHECK_READY(ERRC);
    if (!datatype)
        return null_arg(func, "datatype");
    MPI_Datatype r = MPI_DATATYPE_NULL;
    switch (typeclass) {
    case MPI_TYPECLASS_REAL:
        r = size == 2 ? MPI_REAL2 : size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8
          : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_INTEGER:
        r = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
          : size == 8 ? MPI_INTEGER8 : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        r = size == 4 ? MPI_COMPLEX4 : size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16
          : size == 32 ? MPI_COMPLEX32 : MPI_DATATYPE_NULL;
        break;
    default:
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                              "typeclass %d is not an MPI_TYPECLASS_ value", typeclass);
    }
    if (r == MPI_DATATYPE_NULL)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func,
                              "no predefined type of class %d has %d bytes", typeclass, size);
    *datatype = r;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_match_size)


/* MPI-4.1: the predefined pair type of MINLOC/MAXLOC for a value type and
 * an index type, MPI_DATATYPE_NULL when there is none. */
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Type_get_value_index";
    FMPL_MPI_CHECK_READY(ERRC);
    static const struct {
        MPI_Datatype value, index, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_INT, MPI_FLOAT_INT},
        {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_INT, MPI_LONG_INT},
        {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
        {MPI_INT, MPI_INT, MPI_2INT},
        {MPI_REAL, MPI_REAL, MPI_2REAL},
        {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
        {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
    };
    if (!pair_type)
        return fmpl_mpi_error(ERRC, MPI_ERR_ARG, func, "pair_type is NULL");
    fmpl_datatype *d;
    int rc = get_type(func, "value_type", value_type, &d);
    if (rc == MPI_SUCCESS)
        rc = get_type(func, "index_type", index_type, &d);
    if (rc != MPI_SUCCESS)
        return rc;
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
        if (pairs[i].value == value_type && pairs[i].index == index_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Type_get_value_index)
