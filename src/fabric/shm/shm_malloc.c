/* Large malloc blocks from the shared heap (PVAS's idea on stock Linux).
 *
 * Why: a message between two buffers of private memory needs two copies
 * (through a shared channel) or a system call (CMA); when either buffer is
 * in FMPL's shared heap, the other rank reaches it with plain loads and
 * stores, and a rendezvous is one user-space copy with no system call.
 * MPI programs allocate their buffers with malloc, not MPI_Alloc_mem, so
 * while FMPL is initialised this file serves malloc, calloc, realloc and
 * the aligned allocators from the shared heap for blocks of at least
 * FMPL_MALLOC_SHARED bytes (64 KiB: the sizes that go by rendezvous), and
 * hands everything else to the C library (glibc's documented way of
 * replacing malloc: these symbols interpose the C library's, which stays
 * reachable as __libc_malloc and friends).
 *
 * Invariants
 *  - Until fmpl_shm_malloc_enable, every call goes to the C library
 *    unchanged (one compare more): programs that never initialise FMPL, and
 *    the library's own start-up, see the C library's allocator.
 *  - A block is in the shared heap iff its address is in [lo, hi), the
 *    heap's range, which is set once and never cleared: free and realloc
 *    route such pointers to the heap, also after FMPL is finalised (the
 *    fabric then leaves this process's segment mapped while interposed
 *    blocks are alive, so programs may use and free their buffers after
 *    MPI_Finalize).
 *  - The heap always keeps FMPL_MALLOC_RESERVE bytes for the library itself
 *    (channels, collective areas, staging): an allocation that would cut
 *    into it goes to the C library instead, so malloc never fails because
 *    the shared heap is full.
 *  - Thread safe: the heap has its own lock; the counters are atomic.
 * Not in sanitizer builds: AddressSanitizer replaces malloc itself. */
#include "fabric/shm/shm_malloc.h"
#include "fabric/shm/shm_heap.h"
#include "base/tunable.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

FMPL_TUNABLE(tunable_malloc_shared, "FMPL_MALLOC_SHARED", "64k",
             "malloc blocks of at least this many bytes come from the shared heap while FMPL "
             "is initialised, so peers reach them without a copy or system call (0: off)");
FMPL_TUNABLE(tunable_malloc_reserve, "FMPL_MALLOC_RESERVE", "64m",
             "bytes of the shared heap that malloc never takes (kept for the library)");

#if defined(__SANITIZE_ADDRESS__)
#define FMPL_MALLOC_INTERPOSE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FMPL_MALLOC_INTERPOSE 0
#endif
#endif
#ifndef FMPL_MALLOC_INTERPOSE
#define FMPL_MALLOC_INTERPOSE 1
#endif

static fmpl_heap *heap;
static uintptr_t lo, hi;                     /* the heap's range, 0 until enabled */
static size_t threshold = SIZE_MAX;          /* SIZE_MAX: nothing goes to the heap */
static size_t reserve;
static _Atomic long live;                    /* interposed blocks not yet freed */
void (*volatile fmpl_mem_release_hook)(const void *p, size_t len);

int fmpl_mem_hooks_active(void) { return FMPL_MALLOC_INTERPOSE; }
#if !FMPL_MALLOC_INTERPOSE
void fmpl_mem_hooks_prepare(void) {}
#endif

static inline int in_heap(const void *p)
{
    return (uintptr_t)p >= lo && (uintptr_t)p < hi;
}

void fmpl_shm_malloc_enable(fmpl_heap *h, const void *base, size_t size)
{
    if (!FMPL_MALLOC_INTERPOSE || lo) /* once per process: later heaps are not used */
        return;
    long long t = fmpl_tunable_long(&tunable_malloc_shared);
    long long r = fmpl_tunable_long(&tunable_malloc_reserve);
    if (t <= 0)
        return;
    heap = h;
    reserve = r < 0 ? 0 : (size_t)r;
    lo = (uintptr_t)base;
    hi = (uintptr_t)base + size;
    __atomic_store_n(&threshold, (size_t)t, __ATOMIC_RELEASE);
}

int fmpl_shm_malloc_retire(void)
{
    __atomic_store_n(&threshold, SIZE_MAX, __ATOMIC_RELEASE);
    return live > 0;
}

int fmpl_shm_malloc_contains(const void *p) { return in_heap(p); }

long fmpl_shm_malloc_live(void) { return live; }

#if FMPL_MALLOC_INTERPOSE

void *__libc_malloc(size_t n);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);
void *__libc_memalign(size_t align, size_t n);
void __libc_free(void *p);

/* The C library's malloc_usable_size (it has no __libc_ name). */
static size_t (*libc_usable_fn)(void *);

static size_t libc_usable_size(void *p)
{
    if (!libc_usable_fn)
        libc_usable_fn = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    return libc_usable_fn ? libc_usable_fn(p) : 0;
}

void fmpl_mem_hooks_prepare(void) { (void)libc_usable_size(NULL); }

/* Every block the heap serves to malloc starts on a page, as the C
 * library's own large blocks (mmap'd chunks) start at one fixed offset in a
 * page.  Packed at cache-line alignment instead, the arrays of a program
 * sat at arbitrary offsets from each other, and NPB's CG (class B, 4 ranks
 * on 2 cores, arrays allocated at start) spent 5-8% more user time in its
 * own loops (perf stat: 38-40 s of user time against 37 s): 19.4 s median
 * against 17.9 s page-aligned and 18.0 s on Open MPI (NPB's seconds, 5
 * interleaved runs each).  At most a page is lost per block of at least
 * FMPL_MALLOC_SHARED (64 KiB) bytes. */
#define BLOCK_ALIGN 4096

/* A block of n bytes from the heap, or NULL (small, disabled, too big for
 * what the reserve leaves, or an alignment the heap cannot promise).
 * `align` is what the caller needs; every block is page-aligned, which
 * meets any power of two up to a page. */
static void *heap_alloc(size_t n, size_t align)
{
    if (n < __atomic_load_n(&threshold, __ATOMIC_ACQUIRE) || align > BLOCK_ALIGN ||
        (align & (align - 1)))
        return NULL;
    if (fmpl_heap_free_bytes(heap) < n + reserve + BLOCK_ALIGN)
        return NULL;
    void *p = fmpl_heap_alloc(heap, n, BLOCK_ALIGN);
    if (p)
        live++;
    return p;
}

/* Weak, so that a program (or a test) with an allocator of its own still
 * links against libmpi.a: its definitions win, as they do over libmpi.so's
 * at run time, and the shared heap then serves only fmpl_alloc. */
#define FMPL_MALLOC_WEAK __attribute__((weak))

static void heap_free(void *p)
{
    if (fmpl_heap_free(heap, p) == 0)
        live--;
}

FMPL_MALLOC_WEAK void *malloc(size_t n)
{
    void *p = heap_alloc(n, 64);
    return p ? p : __libc_malloc(n);
}

/* The registration cache's hook sees blocks of the C library only: heap
 * blocks are inside the segment, registered once for good. */
static inline void release_hook(void *p)
{
    void (*hook)(const void *, size_t) = fmpl_mem_release_hook;
    if (__builtin_expect(hook != NULL, 0) && p) {
        /* Never dlsym here: free runs inside dlerror's own clean-up.  The
         * size was resolved before the hook was set; without it, the
         * block's first byte stands for the block. */
        size_t n = libc_usable_fn ? libc_usable_fn(p) : 0;
        hook(p, n ? n : 1);
    }
}

FMPL_MALLOC_WEAK void free(void *p)
{
    if (in_heap(p)) {
        heap_free(p);
    } else {
        release_hook(p);
        __libc_free(p);
    }
}

/* munmap is a system call in glibc too; calls from inside the C library
 * (free of an mmap'd chunk) do not come here, but their free does. */
FMPL_MALLOC_WEAK int munmap(void *addr, size_t len)
{
    void (*hook)(const void *, size_t) = fmpl_mem_release_hook;
    if (__builtin_expect(hook != NULL, 0))
        hook(addr, len);
    return (int)syscall(SYS_munmap, addr, len);
}

FMPL_MALLOC_WEAK void *calloc(size_t n, size_t m)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, m, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = heap_alloc(bytes, 64);
    if (!p)
        return __libc_calloc(n, m);
    return memset(p, 0, bytes); /* the heap recycles blocks: not zero */
}

FMPL_MALLOC_WEAK size_t malloc_usable_size(void *p)
{
    if (!p)
        return 0;
    if (in_heap(p))
        return fmpl_heap_block_size(heap, p);
    return libc_usable_size(p);
}

FMPL_MALLOC_WEAK void *realloc(void *p, size_t n)
{
    if (!p)
        return malloc(n);
    if (!in_heap(p)) {
        void *q = heap_alloc(n, 64);
        /* The block may move (or shrink): its registrations go first. */
        release_hook(p);
        if (!q)
            return __libc_realloc(p, n);
        size_t old = libc_usable_size(p);
        memcpy(q, p, old < n ? old : n);
        __libc_free(p);
        return q;
    }
    size_t old = fmpl_heap_block_size(heap, p);
    if (n <= old && n >= old / 2 && n > 0)
        return p; /* fits, and not mostly wasted */
    if (n == 0) {
        heap_free(p);
        return NULL;
    }
    void *q = malloc(n);
    if (!q)
        return NULL;
    memcpy(q, p, old < n ? old : n);
    heap_free(p);
    return q;
}

static void *aligned(size_t align, size_t n)
{
    void *p = heap_alloc(n, align < 64 ? 64 : align);
    return p ? p : __libc_memalign(align, n);
}

FMPL_MALLOC_WEAK int posix_memalign(void **out, size_t align, size_t n)
{
    if (align < sizeof(void *) || (align & (align - 1)))
        return EINVAL;
    void *p = aligned(align, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

FMPL_MALLOC_WEAK void *aligned_alloc(size_t align, size_t n)
{
    if (align == 0 || (align & (align - 1))) {
        errno = EINVAL;
        return NULL;
    }
    return aligned(align, n);
}

FMPL_MALLOC_WEAK void *memalign(size_t align, size_t n) { return aligned(align, n); }

FMPL_MALLOC_WEAK void *valloc(size_t n) { return aligned(4096, n); }

FMPL_MALLOC_WEAK void *pvalloc(size_t n) { return aligned(4096, (n + 4095) & ~(size_t)4095); }

#endif
