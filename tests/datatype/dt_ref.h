/* Test support for the datatype engine: checks, a random generator, and a
 * reference model of typemaps.
 *
 * The reference model is written independently of the engine: every
 * constructor expands its typemap entry by entry (one copy of the component
 * at a time, no loop nests, no min/max shortcuts), following MPI-4.0's
 * definitions, and computes bounds by the rule datatype.h states, copy by
 * copy.  Each ref_* call also builds the engine's type with the same
 * arguments, so tests compare the two: size, bounds, element counts, and
 * above all the packed bytes (ref_pack is the naive walk: entry by entry,
 * element by element).
 */
#ifndef FMPL_TESTS_DATATYPE_DT_REF_H
#define FMPL_TESTS_DATATYPE_DT_REF_H

#include "datatype/datatype.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

extern int failures;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            failures++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
        }                                                                          \
    } while (0)

#define CHECK_EQ(a, b)                                                             \
    CHECK((int64_t)(a) == (int64_t)(b), "%s = %lld, expected %lld", #a, (long long)(a), \
          (long long)(b))

#define CHECK_OK(call)                                                             \
    do {                                                                           \
        int rc_ = (call);                                                          \
        CHECK(rc_ == FMPL_SUCCESS, "returned %d", rc_);                            \
    } while (0)

uint64_t rnd(void);
void rnd_seed(uint64_t s);
int64_t rnd_range(int64_t lo, int64_t hi); /* inclusive */

/* One typemap: the engine type and its reference expansion. */
typedef struct ref {
    fmpl_datatype *t;
    int64_t n, cap;          /* basic elements */
    int64_t *disp, *len;
    int *unit;               /* basic type as homogeneity sees it (pairs atomic) */
    bool xlb, xub;           /* explicit bounds (markers) */
    int64_t lb, ub;
    int64_t align;
} ref;

ref *ref_basic(fmpl_basic_type bt);
ref *ref_marker(bool lb);
ref *ref_contiguous(int64_t count, ref *old);
ref *ref_vector(int64_t count, int64_t blocklen, int64_t stride, ref *old);
ref *ref_hvector(int64_t count, int64_t blocklen, int64_t stride, ref *old);
ref *ref_indexed(int64_t count, const int64_t *bl, const int64_t *d, ref *old);
ref *ref_hindexed(int64_t count, const int64_t *bl, const int64_t *d, ref *old);
ref *ref_indexed_block(int64_t count, int64_t bl, const int64_t *d, ref *old);
ref *ref_hindexed_block(int64_t count, int64_t bl, const int64_t *d, ref *old);
ref *ref_struct(int64_t count, const int64_t *bl, const int64_t *d, ref *const *types);
ref *ref_resized(ref *old, int64_t lb, int64_t extent);
ref *ref_dup(ref *old);
ref *ref_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes, const int64_t *starts,
                  int order, ref *old);
ref *ref_darray(int size, int rank, int ndims, const int64_t *gsizes, const int *distribs,
                const int *dargs, const int *psizes, int order, ref *old);
void ref_free(ref *r);

int64_t ref_size(const ref *r);
int64_t ref_true_lb(const ref *r);
int64_t ref_true_ub(const ref *r);
fmpl_basic_type ref_homogeneous(const ref *r);

/* Compare every query of the engine's type with the reference; `what`
 * names the case in failure messages. */
void ref_check_queries(const ref *r, const char *what);

/* The address range touched by `count` elements: [*lo, *hi). */
void ref_span(const ref *r, int64_t count, int64_t *lo, int64_t *hi);

/* Naive pack / unpack of `count` elements. */
void ref_pack(const ref *r, const char *base, int64_t count, char *out);
void ref_unpack(const ref *r, const char *in, char *base, int64_t count);

/* Full check of pack/unpack of `count` elements: whole, piecewise (random
 * pieces, by offset and by cursor), round trip, untouched gaps, copy to
 * and from contiguous.  The type must be committed. */
void ref_check_pack(const ref *r, int64_t count, const char *what);

/* A random type of nesting depth <= depth (with at most about max_elems
 * basic elements), not committed. */
ref *ref_random(int depth, int64_t max_elems);

#endif
