/* The datatype engine: MPI typemaps, independent of MPI handles.
 *
 * An fmpl_datatype describes where the bytes of one "element" live relative
 * to a buffer address (its typemap: a sequence of basic elements, each at a
 * byte displacement) and how far apart consecutive elements are (extent).
 * The MPI binding maps MPI_Datatype handles to these objects; collectives and
 * point-to-point use them to move non-contiguous data through fixed-size
 * staging buffers (fmpl_dt_pack / fmpl_dt_unpack on byte ranges of the
 * packed stream).
 *
 * Semantics follow the MPI-4.0 datatype chapter:
 *  - Typemap order is the order of the constructor's arguments (struct
 *    entries in order, vector blocks in order, subarray/darray elements in
 *    array storage order).  The packed stream is the concatenation of the
 *    basic elements' bytes in typemap order, `count` elements one after the
 *    other; fmpl_dt_pack produces exactly that, including overlaps.
 *  - size: bytes of data of one element (sum over the typemap).
 *  - lb / ub (MPI-4.0 5.1.7, with the lb_marker/ub_marker pseudo types):
 *    a type is "explicit" on a side when its typemap holds a marker of that
 *    side (it came from fmpl_dt_resized, or a struct with FMPL_DT LB/UB
 *    markers, or was built from such a type: markers are sticky).  When
 *    explicit, lb = the lowest lb marker (ub = the highest ub marker) and
 *    data is ignored for that side; otherwise lb / ub come from the copies
 *    of the component types: lb = min(disp + lb(component)), ub =
 *    max(disp + ub(component)) over all copies, and for a struct (only) ub
 *    then gets the alignment padding epsilon: the extent is rounded up to a
 *    multiple of the largest alignment of the basic types it contains (the
 *    C compiler's struct rule; MPICH does the same).  A side with neither a
 *    marker nor data is 0: struct {(LB, 10)} has lb 10, ub 0, extent -10
 *    (as MPICH: the max over no entries taken as 0).  Basic types: lb = 0,
 *    ub = extent from basic_types.c (pair types: the C struct's size).
 *  - extent = ub - lb (may be zero or negative with explicit bounds).
 *  - true_lb / true_extent: the bounds of the data alone, markers and
 *    padding ignored.  A type without data has true_lb = true_extent = 0.
 *  - subarray and darray have lb = 0 and extent = (product of the full
 *    array's sizes) * extent(oldtype), as if resized (MPI's definition).
 *  - darray: process grid in row-major order whatever `order` is; BLOCK with
 *    the default darg uses ceil(gsize/psize); CYCLIC default darg is 1;
 *    NONE requires psize 1 and acts as CYCLIC(gsize).
 *  - The pair types (FMPL_BT_DOUBLE_INT, ...) are two basic elements (value
 *    and int) as if built by a struct: MPI_DOUBLE_INT has size 12 and
 *    extent 16; get_elements counts 2 per pair.
 *
 * Objects are reference counted.  Constructors return a new reference;
 * components are referenced by the types built from them, so a caller may
 * unref its components right after constructing.  Predefined types
 * (fmpl_dt_basic, the LB/UB markers) are static: ref/unref do nothing.
 * A type must be committed (fmpl_dt_commit) before pack/unpack/copy; the
 * committed representation is a compact loop nest (see dt_loop.h), so
 * packing allocates nothing and seeking to any byte of the packed stream
 * costs O(nesting depth x log(entries)).
 *
 * Errors: functions returning int return FMPL_SUCCESS or an FMPL_ERR_* code
 * after reporting it (base/error.h): negative counts, lengths, offsets ->
 * FMPL_ERR_SIZE; NULL where a pointer is required, invalid enumeration
 * values, invalid subarray/darray parameters, an uncommitted type where a
 * committed one is needed -> FMPL_ERR_ARG; a type whose size or bounds do
 * not fit in 64 bits -> FMPL_ERR_SIZE; malloc failure -> FMPL_ERR_NO_MEMORY.
 * On error nothing is created and no reference changes.
 *
 * Thread safety: constructors, queries, pack/unpack/copy on committed types
 * may run concurrently.  Commit, set_name and the last unref of a type must
 * not race with other uses of that same type (MPI's rules).
 */
#ifndef FMPL_DATATYPE_DATATYPE_H
#define FMPL_DATATYPE_DATATYPE_H

#include "datatype/basic_types.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct fmpl_datatype fmpl_datatype;

/* How a type was made (MPI_COMBINER_*). */
typedef enum fmpl_dt_combiner {
    FMPL_DT_COMBINER_NAMED = 0,   /* predefined: basic types and the LB/UB markers */
    FMPL_DT_COMBINER_DUP,
    FMPL_DT_COMBINER_CONTIGUOUS,
    FMPL_DT_COMBINER_VECTOR,
    FMPL_DT_COMBINER_HVECTOR,
    FMPL_DT_COMBINER_INDEXED,
    FMPL_DT_COMBINER_HINDEXED,
    FMPL_DT_COMBINER_INDEXED_BLOCK,
    FMPL_DT_COMBINER_HINDEXED_BLOCK,
    FMPL_DT_COMBINER_STRUCT,
    FMPL_DT_COMBINER_SUBARRAY,
    FMPL_DT_COMBINER_DARRAY,
    FMPL_DT_COMBINER_RESIZED,
} fmpl_dt_combiner;

/* Array storage order (subarray, darray). */
enum { FMPL_DT_ORDER_C = 0, FMPL_DT_ORDER_FORTRAN = 1 };

/* darray distributions, and the default distribution argument. */
enum {
    FMPL_DT_DISTRIBUTE_NONE = 0,
    FMPL_DT_DISTRIBUTE_BLOCK = 1,
    FMPL_DT_DISTRIBUTE_CYCLIC = 2,
};
#define FMPL_DT_DISTRIBUTE_DFLT_DARG (-1)

/* Names hold at most FMPL_DT_MAX_NAME - 1 characters (MPI_MAX_OBJECT_NAME). */
#define FMPL_DT_MAX_NAME 128

/* ------------------------------------------------------------ predefined */

/* The static, committed, never freed object of a basic type; NULL for
 * FMPL_BT_NONE or a value outside the enumeration.  Its name is the MPI name
 * ("MPI_INT"). */
fmpl_datatype *fmpl_dt_basic(fmpl_basic_type bt);

/* The deprecated MPI_LB / MPI_UB pseudo types: size 0, extent 0, an explicit
 * lower (upper) bound at displacement 0.  Meant for fmpl_dt_struct entries;
 * any constructor accepts them. */
fmpl_datatype *fmpl_dt_lb_marker(void);
fmpl_datatype *fmpl_dt_ub_marker(void);

/* ----------------------------------------------------------- constructors
 * All return FMPL_SUCCESS and store a new reference in *newtype, or an
 * error (and leave *newtype untouched).  Counts and block lengths must be
 * >= 0 (FMPL_ERR_SIZE); an array may be NULL only when count is 0.
 * "elements" displacements/strides are in multiples of extent(old). */
int fmpl_dt_contiguous(int64_t count, fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_vector(int64_t count, int64_t blocklen, int64_t stride_elements,
                   fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes,
                    fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_indexed(int64_t count, const int64_t blocklens[], const int64_t displs_elements[],
                    fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_hindexed(int64_t count, const int64_t blocklens[], const int64_t displs_bytes[],
                     fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_indexed_block(int64_t count, int64_t blocklen, const int64_t displs_elements[],
                          fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_hindexed_block(int64_t count, int64_t blocklen, const int64_t displs_bytes[],
                           fmpl_datatype *old, fmpl_datatype **newtype);
int fmpl_dt_struct(int64_t count, const int64_t blocklens[], const int64_t displs_bytes[],
                   fmpl_datatype *const types[], fmpl_datatype **newtype);
/* ndims >= 1; sizes >= 1; 1 <= subsizes <= sizes; 0 <= starts <=
 * sizes - subsizes; order FMPL_DT_ORDER_C or _FORTRAN.  Else FMPL_ERR_ARG. */
int fmpl_dt_subarray(int ndims, const int64_t sizes[], const int64_t subsizes[],
                     const int64_t starts[], int order, fmpl_datatype *old,
                     fmpl_datatype **newtype);
/* size >= 1, 0 <= rank < size, ndims >= 1, gsizes >= 1, psizes >= 1 with
 * product == size, distribs FMPL_DT_DISTRIBUTE_*, dargs > 0 or
 * FMPL_DT_DISTRIBUTE_DFLT_DARG (ignored for NONE), BLOCK needs darg * psize
 * >= gsize, NONE needs psize == 1.  Else FMPL_ERR_ARG. */
int fmpl_dt_darray(int size, int rank, int ndims, const int64_t gsizes[], const int distribs[],
                   const int dargs[], const int psizes[], int order, fmpl_datatype *old,
                   fmpl_datatype **newtype);
/* Same typemap and data as old, lb and extent as given (markers replaced). */
int fmpl_dt_resized(fmpl_datatype *old, int64_t lb, int64_t extent, fmpl_datatype **newtype);
/* Same typemap as old, combiner DUP; committed if old is. */
int fmpl_dt_dup(fmpl_datatype *old, fmpl_datatype **newtype);

/* ---------------------------------------------------- lifetime, commit */

/* Build the committed representation.  Committing twice is harmless;
 * predefined types are committed.  FMPL_ERR_NO_MEMORY, or
 * FMPL_ERR_UNSUPPORTED for a pathological nesting depth that would need an
 * unbounded stack. */
int fmpl_dt_commit(fmpl_datatype *t);
bool fmpl_dt_is_committed(const fmpl_datatype *t);
/* Add / drop a reference; the last unref frees the type and drops its
 * references to its components.  No-ops on predefined types and NULL. */
void fmpl_dt_ref(fmpl_datatype *t);
void fmpl_dt_unref(fmpl_datatype *t);
bool fmpl_dt_is_predefined(const fmpl_datatype *t);

/* ------------------------------------------------------------- queries
 * Valid on any type (never NULL), committed or not, except where noted. */
int64_t fmpl_dt_size(const fmpl_datatype *t);
int64_t fmpl_dt_extent(const fmpl_datatype *t);
int64_t fmpl_dt_lb(const fmpl_datatype *t);
int64_t fmpl_dt_ub(const fmpl_datatype *t);
int64_t fmpl_dt_true_lb(const fmpl_datatype *t);
int64_t fmpl_dt_true_extent(const fmpl_datatype *t);

/* True when `n` elements of t, for every n >= 0, occupy exactly the bytes
 * [buf + true_lb, buf + true_lb + n * size) with the packed stream equal to
 * that memory: the typemap of one element is a single dense block visited
 * in increasing address order, and extent == size.  Then pack is one memcpy
 * (note: from true_lb, which may differ from lb).  Types without data are
 * contiguous.  Committed types only (false before commit). */
bool fmpl_dt_is_contiguous(const fmpl_datatype *t);

/* Signature homogeneity, for reductions: X when every basic element of the
 * typemap is of basic type X (a pair type such as FMPL_BT_DOUBLE_INT counts
 * as one element of that pair type here), FMPL_BT_NONE when the typemap mixes
 * basic types or has no data.  The layout may be anything: a reduction
 * packs the operands first (for a pair X, whose packed form drops the
 * padding, it copies into contiguous(n, X) with fmpl_dt_copy instead), or
 * reduces in place when fmpl_dt_basic_array says so. */
fmpl_basic_type fmpl_dt_homogeneous_basic(const fmpl_datatype *t);

/* True (with *bt and *n_per_element) when `count` elements of t lie in
 * memory exactly like an array of count * n elements of basic type *bt
 * starting at buf + true_lb (C layout, padding of pair types included), so
 * that a reduction kernel can run on that array in place.  Committed types
 * only. */
bool fmpl_dt_basic_array(const fmpl_datatype *t, fmpl_basic_type *bt, int64_t *n_per_element);

/* Number of basic elements in one element of t (pair types count 2;
 * markers 0). */
int64_t fmpl_dt_num_elements(const fmpl_datatype *t);

/* MPI_Get_elements: the number of complete basic elements in the first
 * `bytes` bytes of the packed stream of t (any count); *elements = -1
 * (MPI_UNDEFINED) when `bytes` ends inside a basic element.  A type of size
 * 0 gives 0.  FMPL_ERR_SIZE for bytes < 0. */
int fmpl_dt_get_elements(const fmpl_datatype *t, int64_t bytes, int64_t *elements);

/* The inverse, for MPI_Status_set_elements: bytes of the packed stream
 * holding the first `elements` basic elements. */
int fmpl_dt_elements_to_bytes(const fmpl_datatype *t, int64_t elements, int64_t *bytes);

/* FMPL_BT_NONE unless t is a predefined basic type. */
fmpl_basic_type fmpl_dt_basic_type_of(const fmpl_datatype *t);

/* -------------------------------------------------------- pack / unpack
 * The packed stream of `count` elements of t has count * size bytes.  These
 * move the byte range [offset, offset + len) of that stream, clipped at its
 * end, between the user's buffer (typed) and a contiguous one.  *written /
 * *consumed receive the number of bytes moved (the clipped length).  An
 * offset beyond the end is FMPL_ERR_ARG.  The user buffer may be NULL
 * (MPI_BOTTOM: absolute displacements).  The type must be committed.  No
 * allocation, no locks. */
int fmpl_dt_pack_size(int64_t count, const fmpl_datatype *t, int64_t *bytes);
int fmpl_dt_pack(const void *inbuf, int64_t count, const fmpl_datatype *t, int64_t offset,
                 void *out, int64_t out_len, int64_t *written);
int fmpl_dt_unpack(const void *in, int64_t in_len, void *outbuf, int64_t count,
                   const fmpl_datatype *t, int64_t offset, int64_t *consumed);

/* A resumable position in the packed stream of (buf, count, t): each call
 * continues where the previous one stopped.  Plain data (no allocation, no
 * release); the type must outlive the cursor. */
typedef struct fmpl_dt_cursor {
    const fmpl_datatype *type;
    uintptr_t buf;   /* the user's buffer */
    int64_t count;
    int64_t pos;     /* next byte of the packed stream */
    int64_t total;   /* count * size */
} fmpl_dt_cursor;

int fmpl_dt_cursor_init(fmpl_dt_cursor *c, const void *buf, int64_t count,
                        const fmpl_datatype *t);
/* Pack the next (at most) out_len bytes; *written = 0 at the end. */
int fmpl_dt_cursor_pack(fmpl_dt_cursor *c, void *out, int64_t out_len, int64_t *written);
/* Unpack the next (at most) in_len bytes into the user's buffer. */
int fmpl_dt_cursor_unpack(fmpl_dt_cursor *c, const void *in, int64_t in_len, int64_t *consumed);
/* Move to byte `pos` (0 <= pos <= total). */
int fmpl_dt_cursor_seek(fmpl_dt_cursor *c, int64_t pos);
static inline int64_t fmpl_dt_cursor_remaining(const fmpl_dt_cursor *c)
{
    return c->total - c->pos;
}

/* Visit the contiguous pieces of (base, count, t) in packed-stream order:
 * fn(ctx, addr, pk, n) for each, where addr = base + the piece's offset (an
 * integer: base may be another process's address, e.g. for a
 * kernel-assisted copy) and pk = packed + the piece's position in the
 * stream.  Stops at the first non-zero return of fn, which it returns.
 * Not reentrant within one thread (fn must not walk again). */
typedef int (*fmpl_dt_chunk_fn)(void *ctx, uintptr_t addr, char *pk, int64_t n);
int fmpl_dt_for_each_chunk(uintptr_t base, int64_t count, const fmpl_datatype *t, char *packed,
                           fmpl_dt_chunk_fn fn, void *ctx);

/* Local copy between two typemaps with the same type signature (not
 * checked; only the byte counts are): the packed stream of (src, scount,
 * stype) is unpacked into (dst, dcount, dtype).  *copied = bytes moved.  When
 * the source holds more bytes than the destination, the destination is
 * filled and FMPL_ERR_TRUNCATE is returned (MPI receive semantics).  Goes
 * through a small stack buffer (or a single memcpy / direct pack when a
 * side is contiguous); the buffers must not overlap.  copied may be NULL. */
int fmpl_dt_copy(const void *src, int64_t scount, const fmpl_datatype *stype, void *dst,
                 int64_t dcount, const fmpl_datatype *dtype, int64_t *copied);

/* ------------------------------------------------- envelope, contents */

typedef struct fmpl_dt_envelope {
    fmpl_dt_combiner combiner;
    int64_t num_integers;
    int64_t num_addresses;
    int64_t num_large_counts;
    int64_t num_datatypes;
} fmpl_dt_envelope;

/* MPI_Type_get_envelope. */
int fmpl_dt_get_envelope(const fmpl_datatype *t, fmpl_dt_envelope *env);

/* MPI_Type_get_contents: the constructor's arguments in MPI's order (MPI-4.0
 * Table 5.1; with large counts, its _c variant).  Order and distribution
 * values are the FMPL_DT_* constants.  Each returned datatype is a new
 * reference (the caller unrefs it; predefined ones need nothing).  Arrays
 * smaller than the envelope's counts, or a NAMED type -> FMPL_ERR_ARG. */
int fmpl_dt_get_contents(const fmpl_datatype *t, int64_t max_integers, int64_t max_addresses,
                         int64_t max_large_counts, int64_t max_datatypes, int64_t integers[],
                         int64_t addresses[], int64_t large_counts[],
                         fmpl_datatype *datatypes[]);

/* Record that t came from a large-count (MPI_..._c) constructor: the
 * envelope and contents then use the large-count layout.  Derived types
 * only. */
void fmpl_dt_set_large_count_contents(fmpl_datatype *t);

/* Names (MPI_Type_set_name / get_name); longer names are truncated.
 * Predefined types may be renamed too. */
int fmpl_dt_set_name(fmpl_datatype *t, const char *name);
const char *fmpl_dt_get_name(const fmpl_datatype *t);

#endif
