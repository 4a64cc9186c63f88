/* Large malloc blocks from the shared heap (shm_malloc.c). */
#ifndef FMPL_FABRIC_SHM_MALLOC_H
#define FMPL_FABRIC_SHM_MALLOC_H

#include <stddef.h>

#include "fabric/shm/shm_heap.h"

/* From now on, serve malloc blocks of FMPL_MALLOC_SHARED bytes or more
 * from heap h, which covers [base, base + size).  Once per process. */
void fmpl_shm_malloc_enable(fmpl_heap *h, const void *base, size_t size);
/* Stop serving new blocks (finalisation); returns 1 while blocks served
 * earlier are still allocated: the heap's segment must then stay mapped. */
int fmpl_shm_malloc_retire(void);
/* 1 if p is in the heap malloc serves from (tests). */
int fmpl_shm_malloc_contains(const void *p);
/* Blocks served and not yet freed (tests). */
long fmpl_shm_malloc_live(void);

/* Called with the bytes the program gives back (free, the old block of a
 * moving realloc, munmap) before they are given back, when set: the network
 * backend's registration cache drops registrations of them (net_md.c).
 * NULL otherwise: free and munmap then cost one load more. */
extern void (*volatile fmpl_mem_release_hook)(const void *p, size_t len);
/* 1 when free, realloc and munmap are interposed (not in sanitizer builds). */
int fmpl_mem_hooks_active(void);
/* Resolve what the hooks need before fmpl_mem_release_hook is set. */
void fmpl_mem_hooks_prepare(void);

#endif
