/* BLACS-FMPL: the shapes BLACS moves (general blocks with a leading
 * dimension, trapezoids), their packing, and the scratch buffers packing
 * goes through.  A block that is one run in memory is never packed. */
#include "blacs/blacs.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

const size_t blacs_type_size[5] = {sizeof(int), sizeof(float), sizeof(double),
                                   2 * sizeof(float), 2 * sizeof(double)};

blacs_shape blacs_general(int m, int n, int lda, const char *func)
{
    if (m < 0 || n < 0)
        blacs_error(func, "illegal dimensions m = %d, n = %d", m, n);
    if (lda < m && m > 0 && n > 1)
        blacs_error(func, "lda %d is less than m %d", lda, m);
    return (blacs_shape){m, n, lda < m ? m : lda, 'G', 0};
}

blacs_shape blacs_trapezoid(const char *uplo, const char *diag, int m, int n, int lda,
                            const char *func)
{
    blacs_shape s = blacs_general(m, n, lda, func);
    s.uplo = uplo && toupper((unsigned char)uplo[0]) == 'U' ? 'U' : 'L';
    s.unit = diag && toupper((unsigned char)diag[0]) == 'U';
    return s;
}

/* Rows [*first, *last) of column j that belong to the shape. */
static void column_rows(const blacs_shape *s, int j, int *first, int *last)
{
    *first = 0;
    *last = s->m;
    if (s->uplo == 'U') { /* i <= j + d, strict with a unit diagonal */
        long end = (long)j + (s->m > s->n ? s->m - s->n : 0) + (s->unit ? 0 : 1);
        if (end < *last)
            *last = end < 0 ? 0 : (int)end;
    } else if (s->uplo == 'L') { /* i >= j - d, strict with a unit diagonal */
        long start = (long)j - (s->n > s->m ? s->n - s->m : 0) + (s->unit ? 1 : 0);
        if (start > 0)
            *first = start > s->m ? s->m : (int)start;
    }
}

long blacs_shape_count(const blacs_shape *s)
{
    if (s->uplo == 'G')
        return (long)s->m * s->n;
    long count = 0;
    for (int j = 0; j < s->n; j++) {
        int first, last;
        column_rows(s, j, &first, &last);
        count += last - first;
    }
    return count;
}

int blacs_shape_contiguous(const blacs_shape *s)
{
    return s->uplo == 'G' && (s->lda == s->m || s->n <= 1);
}

/* n elements of esize bytes, src_step and dst_step bytes apart.  The
 * element sizes BLACS has get a copy of constant size, which the compiler
 * turns into a load and a store: a memcpy call per element cost five times
 * the copy itself on the rows ScaLAPACK's pivoting swaps (PDLASWP: one
 * element per column, a few hundred columns). */
static inline __attribute__((always_inline)) void copy_elements(char *dst, size_t dst_step,
                                                                const char *src,
                                                                size_t src_step, long n,
                                                                size_t esize)
{
#define COPY_ELEMENTS(bytes)                                                                   \
    for (long k = 0; k < n; k++)                                                               \
        memcpy(dst + (size_t)k * dst_step, src + (size_t)k * src_step, bytes);                 \
    break
    switch (esize) {
    case 4: COPY_ELEMENTS(4);
    case 8: COPY_ELEMENTS(8);
    case 16: COPY_ELEMENTS(16);
    default: COPY_ELEMENTS(esize);
    }
#undef COPY_ELEMENTS
}

/* Between the matrix and the packed run, column by column; a general block
 * of one row element by element (copy_elements). */
static void copy_shape(const blacs_shape *s, size_t esize, char *matrix, char *packed,
                       int to_packed)
{
    size_t column_step = (size_t)s->lda * esize;
    if (s->uplo == 'G' && s->m == 1) {
        if (to_packed)
            copy_elements(packed, esize, matrix, column_step, s->n, esize);
        else
            copy_elements(matrix, column_step, packed, esize, s->n, esize);
        return;
    }
    for (int j = 0; j < s->n; j++) {
        int first, last;
        column_rows(s, j, &first, &last);
        size_t bytes = (size_t)(last - first) * esize;
        char *column = matrix + (size_t)j * column_step + (size_t)first * esize;
        memcpy(to_packed ? packed : column, to_packed ? column : packed, bytes);
        packed += bytes;
    }
}

void blacs_pack(const blacs_shape *s, size_t esize, const void *a, void *packed)
{
    copy_shape(s, esize, (char *)a, packed, 1);
}

void blacs_unpack(const blacs_shape *s, size_t esize, const void *packed, void *a)
{
    copy_shape(s, esize, a, (char *)packed, 0);
}

/* Scratch: FMPL's shared heap (peers copy straight into it, no system
 * call), or, when the heap is exhausted, ordinary memory. */
static struct {
    void *p;
    size_t bytes;
    int from_heap;
} scratch[2];

void *blacs_scratch(int which, size_t bytes)
{
    if (bytes == 0)
        bytes = 1;
    if (scratch[which].bytes >= bytes)
        return scratch[which].p;
    size_t want = scratch[which].bytes * 2 > bytes ? scratch[which].bytes * 2 : bytes;
    if (scratch[which].from_heap)
        fmpl_free(scratch[which].p);
    else
        free(scratch[which].p);
    scratch[which].p = fmpl_alloc(want);
    scratch[which].from_heap = scratch[which].p != NULL;
    if (!scratch[which].p)
        scratch[which].p = malloc(want);
    if (!scratch[which].p)
        blacs_error("BLACS", "no memory for a %zu-byte buffer", want);
    scratch[which].bytes = want;
    return scratch[which].p;
}

void blacs_scratch_free(void)
{
    for (int i = 0; i < 2; i++) {
        if (scratch[i].from_heap)
            fmpl_free(scratch[i].p);
        else
            free(scratch[i].p);
        scratch[i].p = NULL;
        scratch[i].bytes = 0;
        scratch[i].from_heap = 0;
    }
}
