/* Counting every allocation of the process, the library's included, for
 * the tests that prove a hot path allocates nothing: malloc, calloc and
 * realloc are defined here (the program's definitions come first in
 * symbol lookup) and count, then call glibc's.  Under AddressSanitizer,
 * which owns malloc, nothing is interposed: ALLOC_COUNTING is 0 and
 * alloc_count() stays 0, so the tests skip their counting checks.
 *
 * Definitions, not declarations: include this header in one source file
 * of a program only.  Header-only so that a test stays one file (the ABI
 * runs compile the single source with another mpicc, abi_run.sh). */
#ifndef FMPL_TESTS_MPI_ALLOC_COUNT_H
#define FMPL_TESTS_MPI_ALLOC_COUNT_H

#include <stddef.h>

#if defined(__SANITIZE_ADDRESS__)
#define ALLOC_COUNTING 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ALLOC_COUNTING 0
#endif
#endif
#ifndef ALLOC_COUNTING
#define ALLOC_COUNTING 1
#endif

#if ALLOC_COUNTING
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static long allocs;
void *malloc(size_t n)
{
    __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
    return __libc_malloc(n);
}
void *calloc(size_t n, size_t size)
{
    __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
    return __libc_calloc(n, size);
}
void *realloc(void *p, size_t n)
{
    __atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
    return __libc_realloc(p, n);
}
/* Allocations so far. */
static inline long alloc_count(void) { return __atomic_load_n(&allocs, __ATOMIC_RELAXED); }
#else
static inline long alloc_count(void) { return 0; }
#endif

#endif
