/* Large malloc blocks from the shared heap (src/fabric/shm/shm_malloc.c):
 * which blocks go there, that every allocator call keeps its contract
 * (contents, zeroing, alignment, usable size, realloc in both directions),
 * threads, the reserve kept for the library, a message between two malloc
 * buffers, and blocks that outlive fmpl_finalize.  With
 * FMPL_MALLOC_SHARED=0 nothing may go to the heap.  Sanitizer builds do
 * not interpose (ASan owns malloc) and do not build this test. */
#include <fmpl.h>

#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabric/fabric.h"
#include "fabric/shm/shm_malloc.h"

static int rank = 0;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "shm_malloc rank %d line %d: %s: ", rank, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

#define MIB (1u << 20)

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(i * 31u + seed);
}

static size_t first_bad(const unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(i * 31u + seed))
            return i;
    return SIZE_MAX;
}

static void *thread_body(void *arg)
{
    unsigned seed = (unsigned)(uintptr_t)arg;
    for (int it = 0; it < 2000; it++) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 65536 + (seed >> 8) % (192 * 1024);
        unsigned char *p = malloc(n);
        if (!p)
            return (void *)1;
        memset(p, (int)(seed & 0xff), n);
        for (size_t i = 0; i < n; i += 4093)
            if (p[i] != (unsigned char)(seed & 0xff))
                return (void *)2;
        free(p);
    }
    return NULL;
}

/* `before` was allocated before fmpl_init, filled with seed 7. */
static void contracts(unsigned char *before)
{
    long base_live = fmpl_shm_malloc_live();

    unsigned char *big = malloc(MIB);
    CHECK(big && fmpl_shm_malloc_contains(big), "1 MiB after init is in the heap");
    CHECK(malloc_usable_size(big) >= MIB, "usable size %zu", malloc_usable_size(big));
    unsigned char *small = malloc(100);
    CHECK(small && !fmpl_shm_malloc_contains(small), "100 bytes stay with the C library");
    CHECK(malloc_usable_size(small) >= 100, "small usable size");

    /* calloc zeroes a recycled block. */
    memset(big, 0xff, MIB);
    free(big);
    unsigned char *z = calloc(MIB / 8, 8);
    CHECK(z && fmpl_shm_malloc_contains(z), "calloc of 1 MiB in the heap");
    for (size_t i = 0; i < MIB; i++)
        CHECK(z[i] == 0, "calloc byte %zu is %u", i, z[i]);
    volatile size_t huge = SIZE_MAX / 2; /* hidden from GCC's size warning */
    CHECK(calloc(huge, 4) == NULL, "calloc overflow");

    /* realloc: C library -> heap, heap -> heap (growing), heap -> C library. */
    unsigned char *r = realloc(before, 2 * MIB);
    CHECK(r && fmpl_shm_malloc_contains(r), "realloc of a C-library block to 2 MiB");
    CHECK(first_bad(r, MIB, 7) == SIZE_MAX, "contents kept at %zu", first_bad(r, MIB, 7));
    fill(r, 2 * MIB, 9);
    r = realloc(r, 3 * MIB);
    CHECK(r && fmpl_shm_malloc_contains(r), "growing in the heap");
    CHECK(first_bad(r, 2 * MIB, 9) == SIZE_MAX, "grown contents at %zu",
          first_bad(r, 2 * MIB, 9));
    r = realloc(r, 100);
    CHECK(r && !fmpl_shm_malloc_contains(r), "shrinking to 100 bytes leaves the heap");
    CHECK(first_bad(r, 100, 9) == SIZE_MAX, "shrunk contents");
    free(r);

    /* Aligned allocators. */
    void *a = NULL;
    CHECK(posix_memalign(&a, 4096, MIB) == 0 && fmpl_shm_malloc_contains(a) &&
              (uintptr_t)a % 4096 == 0, "posix_memalign 4096");
    free(a);
    a = aligned_alloc(8192, MIB);
    CHECK(a && (uintptr_t)a % 8192 == 0 && !fmpl_shm_malloc_contains(a),
          "aligned_alloc 8192 (beyond what the heap promises: C library)");
    free(a);
    a = memalign(256, MIB);
    CHECK(a && (uintptr_t)a % 256 == 0 && fmpl_shm_malloc_contains(a), "memalign 256");
    free(a);
    a = valloc(MIB);
    CHECK(a && (uintptr_t)a % 4096 == 0, "valloc");
    free(a);

    free(z);
    free(small);
    CHECK(fmpl_shm_malloc_live() == base_live, "live blocks %ld, expected %ld",
          fmpl_shm_malloc_live(), base_live);

    /* Threads. */
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, thread_body, (void *)(uintptr_t)(i + 1));
    for (int i = 0; i < 4; i++) {
        void *ret;
        pthread_join(th[i], &ret);
        CHECK(ret == NULL, "thread %d failed (%p)", i, ret);
    }
    CHECK(fmpl_shm_malloc_live() == base_live, "live after threads %ld", fmpl_shm_malloc_live());

    /* The reserve: fill the heap with 4 MiB blocks; malloc never fails, the
     * blocks move to the C library before the heap is exhausted, and the
     * library can still allocate. */
    enum { MAX = 512 };
    static void *blocks[MAX];
    int n = 0, in_heap = 0;
    while (n < MAX) {
        blocks[n] = malloc(4 * MIB);
        CHECK(blocks[n] != NULL, "malloc %d failed", n);
        if (!fmpl_shm_malloc_contains(blocks[n++]))
            break;
        in_heap++;
    }
    CHECK(in_heap > 0 && n > in_heap, "%d blocks in the heap of %d", in_heap, n);
    void *lib = fmpl_alloc(8 * MIB);
    CHECK(lib != NULL, "the library's own allocation after malloc filled the heap");
    fmpl_free(lib);
    for (int i = 0; i < n; i++)
        free(blocks[i]);
    CHECK(fmpl_shm_malloc_live() == base_live, "live after the reserve test");
}

int main(void)
{
    unsigned char *before = malloc(MIB);
    CHECK(before != NULL, "malloc before init");
    fill(before, MIB, 7);
    CHECK(!fmpl_shm_malloc_contains(before), "a block from before init");
    int rc = fmpl_init(NULL, NULL, 0);
    CHECK(rc == FMPL_SUCCESS, "fmpl_init: %d", rc);
    fmpl_comm_rank(FMPL_COMM_WORLD, &rank);
    int size;
    fmpl_comm_size(FMPL_COMM_WORLD, &size);
    const char *env = getenv("FMPL_MALLOC_SHARED");
    if (env && strcmp(env, "0") == 0) {
        void *p = malloc(4 * MIB);
        CHECK(p && !fmpl_shm_malloc_contains(p), "FMPL_MALLOC_SHARED=0 keeps 4 MiB private");
        free(p);
        free(before);
        fmpl_finalize();
        if (rank == 0)
            printf("shm_malloc off ok\n");
        return 0;
    }
    contracts(before);

    /* A message between two malloc buffers: ranks 0 -> 1. */
    unsigned char *msg = malloc(2 * MIB);
    CHECK(fmpl_shm_malloc_contains(msg), "message buffer in the heap");
    if (size > 1 && rank < 2) {
        if (rank == 0) {
            fill(msg, 2 * MIB, 3);
            CHECK(fmpl_send(msg, 2 * MIB, 1, 5, FMPL_COMM_WORLD) == FMPL_SUCCESS, "send");
        } else {
            memset(msg, 0, 2 * MIB);
            CHECK(fmpl_recv(msg, 2 * MIB, 0, 5, FMPL_COMM_WORLD, NULL) == FMPL_SUCCESS,
                  "recv");
            CHECK(first_bad(msg, 2 * MIB, 3) == SIZE_MAX, "message byte %zu",
                  first_bad(msg, 2 * MIB, 3));
        }
    }
    fmpl_barrier(FMPL_COMM_WORLD);

    /* msg outlives finalisation: still usable, then freed. */
    fill(msg, 2 * MIB, 11);
    CHECK(fmpl_finalize() == FMPL_SUCCESS, "finalize");
    CHECK(first_bad(msg, 2 * MIB, 11) == SIZE_MAX, "a block used after finalize");
    free(msg);
    void *after = malloc(MIB);
    CHECK(after && !fmpl_shm_malloc_contains(after), "after finalize: C library");
    free(after);
    if (rank == 0)
        printf("shm_malloc ok on %d ranks\n", size);
    return 0;
}
