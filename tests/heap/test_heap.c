/* Unit test of the shared-heap allocator (src/fabric/shm/shm_heap.c).
 *
 * Single process, no launcher.  Checks: creation limits; alignment of every
 * block; no overlap (each block is filled with a pattern unique to it and
 * verified when freed, over ~100k random alloc/free operations with a fixed
 * seed, with the full invariant walk every 1000 operations); alloc returns
 * NULL only when no free block fits; coalescing (free everything -> one
 * block as large as at the start); exhaustion; bad frees; that the heap works
 * through a second mapping at another address (offsets only); that creating
 * and allocating do not touch pages of a tmpfs segment; 4 threads at once.
 */
#include "fabric/shm/shm_heap.h"
#include "base/error.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            pthread_mutex_lock(&fail_lock);                                        \
            failures++;                                                            \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            fprintf(stderr, __VA_ARGS__);                                          \
            fputc('\n', stderr);                                                   \
            pthread_mutex_unlock(&fail_lock);                                      \
        }                                                                          \
    } while (0)

static uint64_t rnd(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void *region_alloc(size_t size)
{
    void *p = aligned_alloc(4096, (size + 4095) / 4096 * 4096);
    if (!p) {
        perror("aligned_alloc");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------- patterns per block */

typedef struct slot {
    unsigned char *p;
    size_t size;
    uint64_t id;
} slot;

static unsigned char pattern_byte(uint64_t id) { return (unsigned char)(id * 0x9e3779b1u >> 24); }

static void fill(slot *s)
{
    memset(s->p, pattern_byte(s->id), s->size);
    if (s->size >= 16) {
        memcpy(s->p, &s->id, 8);
        memcpy(s->p + s->size - 8, &s->id, 8);
    }
}

static int verify(const slot *s)
{
    unsigned char b = pattern_byte(s->id);
    size_t lo = 0, hi = s->size;
    if (s->size >= 16) {
        uint64_t a, z;
        memcpy(&a, s->p, 8);
        memcpy(&z, s->p + s->size - 8, 8);
        if (a != s->id || z != s->id)
            return 0;
        lo = 8;
        hi = s->size - 8;
    }
    for (size_t i = lo; i < hi; i++)
        if (s->p[i] != b)
            return 0;
    return 1;
}

static size_t random_size(uint64_t *rs)
{
    uint64_t r = rnd(rs) % 100;
    if (r < 5)
        return 0;
    if (r < 70)
        return rnd(rs) % 512;
    if (r < 95)
        return 512 + rnd(rs) % 16384;
    return 16384 + rnd(rs) % (256 * 1024);
}

static size_t random_align(uint64_t *rs)
{
    uint64_t r = rnd(rs) % 100;
    if (r < 75)
        return r < 5 ? 0 : 64;
    return (size_t)64 << (1 + rnd(rs) % 8); /* 128 .. 16384 */
}

/* ----------------------------------------------------------- tests */

static void test_create(void)
{
    size_t min = fmpl_heap_min_region();
    char *r = region_alloc(8192);
    CHECK(fmpl_heap_create(NULL, 8192) == NULL, "NULL region");
    CHECK(fmpl_heap_create(r + 64, 4096) == NULL, "misaligned region");
    CHECK(fmpl_heap_create(r, min - 1) == NULL, "too small");
    CHECK(min <= 4096, "min region %zu is more than a page", min);
    fmpl_heap *h = fmpl_heap_create(r, min);
    CHECK(h == (fmpl_heap *)r, "create at the minimum size");
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check");
    CHECK(fmpl_heap_largest_free(h) == 64 && fmpl_heap_free_bytes(h) == 64,
          "minimum heap holds one 64-byte block: largest %zu free %zu",
          fmpl_heap_largest_free(h), fmpl_heap_free_bytes(h));
    void *a = fmpl_heap_alloc(h, 0, 64);
    CHECK(a != NULL, "alloc 0 in the minimum heap");
    CHECK(fmpl_heap_alloc(h, 0, 64) == NULL, "second alloc must fail");
    CHECK(fmpl_heap_largest_free(h) == 0 && fmpl_heap_free_bytes(h) == 0, "full");
    CHECK(fmpl_heap_free(h, a) == FMPL_SUCCESS, "free");
    CHECK(fmpl_heap_largest_free(h) == 64, "after free");
    free(r);
}

static void test_alignment(void)
{
    size_t size = 16 << 20;
    char *r = region_alloc(size);
    fmpl_heap *h = fmpl_heap_create(r, size);
    size_t initial = fmpl_heap_largest_free(h);
    CHECK(initial == fmpl_heap_free_bytes(h), "one free block at start");
    void *ptrs[400];
    int n = 0;
    static const size_t sizes[] = {0, 1, 63, 64, 65, 100, 4095, 4096, 4097, 70000};
    for (size_t al = 1; al <= 65536; al *= 2)
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            char *p = fmpl_heap_alloc(h, sizes[k], al);
            CHECK(p != NULL, "alloc %zu align %zu", sizes[k], al);
            if (!p)
                continue;
            size_t need = al < 64 ? 64 : al;
            CHECK((uintptr_t)p % need == 0, "%p not aligned to %zu", (void *)p, need);
            CHECK(fmpl_heap_contains(h, p), "contains start");
            if (sizes[k])
                CHECK(fmpl_heap_contains(h, p + sizes[k] - 1), "contains end");
            memset(p, 0xee, sizes[k]);
            ptrs[n++] = p;
        }
    /* Unique blocks for size 0. */
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            CHECK(ptrs[i] != ptrs[j], "blocks %d and %d coincide", i, j);
    CHECK(fmpl_heap_alloc(h, 64, 3 * 64) == NULL, "non power of two alignment");
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check");
    for (int i = n - 1; i >= 0; i -= 2)
        CHECK(fmpl_heap_free(h, ptrs[i]) == FMPL_SUCCESS, "free %d", i);
    for (int i = n - 2; i >= 0; i -= 2)
        CHECK(fmpl_heap_free(h, ptrs[i]) == FMPL_SUCCESS, "free %d", i);
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check");
    CHECK(fmpl_heap_largest_free(h) == initial, "coalesced back to %zu, have %zu", initial,
          fmpl_heap_largest_free(h));
    CHECK(!fmpl_heap_contains(h, r + 10), "the bookkeeping is not block area");
    CHECK(!fmpl_heap_contains(h, r + size), "past the end");
    int x;
    CHECK(!fmpl_heap_contains(h, &x), "stack");
    free(r);
}

/* Random alloc/free with pattern checks.  Returns the number of allocs. */
static long random_ops(fmpl_heap *h, slot *slots, int nslots, long ops, uint64_t seed,
                       int check_every, uint64_t id_base)
{
    uint64_t rs = seed;
    long allocs = 0, nulls = 0;
    for (long op = 0; op < ops; op++) {
        slot *s = &slots[rnd(&rs) % (uint64_t)nslots];
        if (s->p) {
            CHECK(verify(s), "block %llu (%zu bytes at %p) was overwritten",
                  (unsigned long long)s->id, s->size, (void *)s->p);
            CHECK(fmpl_heap_free(h, s->p) == FMPL_SUCCESS, "free");
            s->p = NULL;
        } else {
            size_t size = random_size(&rs), align = random_align(&rs);
            size_t largest = fmpl_heap_largest_free(h); /* single thread only */
            s->p = fmpl_heap_alloc(h, size, align);
            s->size = size;
            s->id = id_base + (uint64_t)op;
            if (!s->p) {
                nulls++;
                if (check_every && (align <= 64))
                    CHECK(largest < size, "alloc(%zu) failed with a free block of %zu", size,
                          largest);
                continue;
            }
            allocs++;
            size_t a = align < 64 ? 64 : align;
            CHECK((uintptr_t)s->p % a == 0, "alignment %zu", a);
            CHECK(fmpl_heap_contains(h, s->p) &&
                      (size == 0 || fmpl_heap_contains(h, s->p + size - 1)),
                  "block outside the heap");
            fill(s);
        }
        if (check_every && op % check_every == 0)
            CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "invariants after op %ld", op);
    }
    (void)nulls;
    return allocs;
}

static void free_all(fmpl_heap *h, slot *slots, int nslots)
{
    for (int i = 0; i < nslots; i++)
        if (slots[i].p) {
            CHECK(verify(&slots[i]), "block %llu overwritten", (unsigned long long)slots[i].id);
            CHECK(fmpl_heap_free(h, slots[i].p) == FMPL_SUCCESS, "free");
            slots[i].p = NULL;
        }
}

static void test_random(void)
{
    size_t size = 8 << 20;
    char *r = region_alloc(size);
    fmpl_heap *h = fmpl_heap_create(r, size);
    size_t initial = fmpl_heap_free_bytes(h);
    enum { NS = 1024 };
    static slot slots[NS];
    memset(slots, 0, sizeof slots);
    long allocs = random_ops(h, slots, NS, 100000, 0x1234567887654321ull, 1000, 0);
    CHECK(allocs > 30000, "only %ld allocs succeeded", allocs);
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check");
    free_all(h, slots, NS);
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check");
    CHECK(fmpl_heap_free_bytes(h) == initial && fmpl_heap_largest_free(h) == initial,
          "after freeing everything: %zu free, largest %zu, initial %zu",
          fmpl_heap_free_bytes(h), fmpl_heap_largest_free(h), initial);
    printf("random: %ld allocations in 100000 operations\n", allocs);
    free(r);
}

static void test_coalesce_and_exhaust(void)
{
    size_t size = 1 << 20;
    char *r = region_alloc(size);
    fmpl_heap *h = fmpl_heap_create(r, size);
    size_t initial = fmpl_heap_largest_free(h);
    CHECK(initial == fmpl_heap_free_bytes(h), "initial");
    CHECK(fmpl_heap_alloc(h, initial + 1, 64) == NULL, "more than the heap");
    CHECK(fmpl_heap_alloc(h, SIZE_MAX, 64) == NULL, "SIZE_MAX");
    CHECK(fmpl_heap_alloc(h, SIZE_MAX - 63, 64) == NULL, "SIZE_MAX - 63");
    CHECK(fmpl_heap_alloc(h, 64, (size_t)1 << 40) == NULL, "huge alignment");

    enum { MAXB = 2048 };
    static void *b[MAXB];
    int n = 0;
    while (n < MAXB && (b[n] = fmpl_heap_alloc(h, 1000, 64)) != NULL)
        n++;
    CHECK(n < MAXB, "never exhausted");
    /* 1000 bytes -> 1024 + 64-byte header per block. */
    CHECK(n == (int)((initial + 64) / 1088), "%d blocks of 1000 bytes, expected %zu", n,
          (initial + 64) / 1088);
    CHECK(fmpl_heap_largest_free(h) < 1000, "exhausted but largest free %zu",
          fmpl_heap_largest_free(h));
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check full");
    /* Free in a shuffled order. */
    uint64_t rs = 42;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(rnd(&rs) % (uint64_t)(i + 1));
        void *t = b[i];
        b[i] = b[j];
        b[j] = t;
    }
    for (int i = 0; i < n; i++) {
        CHECK(fmpl_heap_free(h, b[i]) == FMPL_SUCCESS, "free %d", i);
        if (i % 97 == 0)
            CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check during frees");
    }
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check empty");
    CHECK(fmpl_heap_largest_free(h) == initial && fmpl_heap_free_bytes(h) == initial,
          "coalescing: largest %zu free %zu initial %zu", fmpl_heap_largest_free(h),
          fmpl_heap_free_bytes(h), initial);
    /* The whole heap in one block, then nothing more. */
    void *all = fmpl_heap_alloc(h, initial, 64);
    CHECK(all != NULL, "alloc of the largest free block");
    CHECK(fmpl_heap_alloc(h, 0, 64) == NULL, "nothing left");
    CHECK(fmpl_heap_free(h, all) == FMPL_SUCCESS, "free all");

    /* Fragmentation: the slow path finds a fit the size classes miss.
     * Free blocks of exactly 3072 bytes (49 lines with the header, not a
     * class boundary), separated by used ones: a request of 3072 must
     * succeed although its search class is above them. */
    void *x[64];
    for (int i = 0; i < 64; i++)
        x[i] = fmpl_heap_alloc(h, 3072, 64);
    void *rest = fmpl_heap_alloc(h, fmpl_heap_largest_free(h), 64);
    CHECK(rest && fmpl_heap_largest_free(h) == 0, "heap filled");
    for (int i = 0; i < 64; i += 2)
        fmpl_heap_free(h, x[i]);
    CHECK(fmpl_heap_largest_free(h) == 3072, "largest %zu", fmpl_heap_largest_free(h));
    for (int i = 0; i < 64; i += 2) {
        x[i] = fmpl_heap_alloc(h, 3072, 64);
        CHECK(x[i] != NULL, "slow-path fit %d", i);
    }
    CHECK(fmpl_heap_alloc(h, 1, 64) == NULL, "full again");
    for (int i = 0; i < 64; i++)
        fmpl_heap_free(h, x[i]);
    fmpl_heap_free(h, rest);
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS && fmpl_heap_largest_free(h) == initial,
          "after fragmentation test");
    free(r);
}

static void test_bad_free(void)
{
    size_t size = 1 << 20;
    char *r = region_alloc(size);
    fmpl_heap *h = fmpl_heap_create(r, size);
    size_t initial = fmpl_heap_free_bytes(h);
    char *a = fmpl_heap_alloc(h, 4096, 64);
    char *b = fmpl_heap_alloc(h, 100, 64);
    char *c = fmpl_heap_alloc(h, 100, 64);
    memset(a, 0, 4096);
    int x;
    CHECK(fmpl_heap_free(h, NULL) == FMPL_SUCCESS, "free(NULL)");
    CHECK(fmpl_heap_free(h, &x) == FMPL_ERR_ARG, "foreign pointer");
    CHECK(fmpl_heap_free(h, r) == FMPL_ERR_ARG, "heap bookkeeping");
    CHECK(fmpl_heap_free(h, r + size) == FMPL_ERR_ARG, "past the end");
    CHECK(fmpl_heap_free(h, a + 1) == FMPL_ERR_ARG, "misaligned interior pointer");
    CHECK(fmpl_heap_free(h, a + 128) == FMPL_ERR_ARG, "aligned interior pointer");
    CHECK(fmpl_heap_free(h, b) == FMPL_SUCCESS, "free b");
    CHECK(fmpl_heap_free(h, b) == FMPL_ERR_ARG, "double free of b");
    CHECK(fmpl_heap_free(h, a) == FMPL_SUCCESS, "free a (coalesces with b)");
    CHECK(fmpl_heap_free(h, b) == FMPL_ERR_ARG, "free of b, swallowed by a's block");
    CHECK(fmpl_heap_free(h, a) == FMPL_ERR_ARG, "double free of a");
    /* A block whose header was overwritten (an underrun of the user's
     * buffer) is refused rather than trusted. */
    uint64_t saved[8];
    memcpy(saved, c - 64, 64);
    memset(c - 64, 0x41, 64);
    CHECK(fmpl_heap_free(h, c) == FMPL_ERR_ARG, "corrupt header");
    memcpy(c - 64, saved, 64);
    /* White box: the header starts with the block's size.  A plausible tag
     * with a wrong size fails the boundary-tag check. */
    uint64_t bogus = saved[0] + 128;
    memcpy(c - 64, &bogus, 8);
    CHECK(fmpl_heap_free(h, c) == FMPL_ERR_ARG, "header with a wrong size");
    memcpy(c - 64, saved, 64);
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "errors changed nothing");
    CHECK(fmpl_heap_free(h, c) == FMPL_SUCCESS, "free c");
    CHECK(fmpl_heap_free_bytes(h) == initial, "all free");
    CHECK(fmpl_heap_free(NULL, c) == FMPL_ERR_ARG, "NULL heap");
    free(r);
}

/* The heap holds offsets only: map the same segment twice and use it through
 * either address.  Also: creating and allocating touch (almost) no pages of
 * a lazily backed segment. */
static void test_shared_mapping(void)
{
    size_t size = (size_t)256 << 20;
    int fd = memfd_create("fmpl-heap-test", 0);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        perror("memfd_create/ftruncate: skipping the mapping test");
        return;
    }
    char *m1 = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    char *m2 = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    CHECK(m1 != MAP_FAILED && m2 != MAP_FAILED && m1 != m2, "two mappings");
    struct stat st;

    fmpl_heap *h1 = fmpl_heap_create(m1, size);
    CHECK(h1 != NULL, "create on a 256 MiB memfd");
    size_t initial = fmpl_heap_largest_free(h1);
    fstat(fd, &st);
    long long touched = (long long)st.st_blocks * 512;
    CHECK(touched <= 4096, "create allocated %lld bytes of the segment", touched);

    /* Allocate 64 MiB without writing to it: only headers are touched. */
    char *big = fmpl_heap_alloc(h1, (size_t)64 << 20, 4096);
    char *small[16];
    for (int i = 0; i < 16; i++)
        small[i] = fmpl_heap_alloc(h1, (size_t)1 << 20, 64);
    fstat(fd, &st);
    touched = (long long)st.st_blocks * 512;
    CHECK(big && touched <= 20 * 4096, "allocating 80 MiB allocated %lld bytes", touched);

    /* Through the second mapping: the same heap, other addresses. */
    fmpl_heap *h2 = (fmpl_heap *)m2;
    CHECK(fmpl_heap_check(h2) == FMPL_SUCCESS, "check through the second mapping");
    memcpy(big, "hello", 6);
    CHECK(memcmp(m2 + (big - m1), "hello", 6) == 0, "data through the second mapping");
    for (int i = 0; i < 16; i += 2)
        CHECK(fmpl_heap_free(h2, m2 + (small[i] - m1)) == FMPL_SUCCESS,
              "free through the second mapping");
    void *p2 = fmpl_heap_alloc(h2, 1000, 64);
    CHECK(p2 && fmpl_heap_contains(h2, p2) && !fmpl_heap_contains(h1, p2),
          "alloc through the second mapping");
    CHECK(fmpl_heap_free(h1, m1 + ((char *)p2 - m2)) == FMPL_SUCCESS, "free through the first");
    for (int i = 1; i < 16; i += 2)
        CHECK(fmpl_heap_free(h1, small[i]) == FMPL_SUCCESS, "free");
    CHECK(fmpl_heap_free(h1, big) == FMPL_SUCCESS, "free big");
    CHECK(fmpl_heap_check(h1) == FMPL_SUCCESS, "check");
    CHECK(fmpl_heap_free_bytes(h2) == initial && fmpl_heap_largest_free(h2) == initial,
          "coalesced");
    fstat(fd, &st);
    printf("mapping: 256 MiB heap, %lld bytes of the segment allocated after the test\n",
           (long long)st.st_blocks * 512);
    munmap(m1, size);
    munmap(m2, size);
    close(fd);
}

/* Four threads on one heap, each with its own blocks. */
typedef struct {
    fmpl_heap *h;
    int id;
    long allocs;
} thread_arg;

static void *thread_main(void *argp)
{
    thread_arg *a = argp;
    enum { NS = 256 };
    slot *slots = calloc(NS, sizeof *slots);
    a->allocs = random_ops(a->h, slots, NS, 25000, 0xabcdef12345ull + (uint64_t)a->id * 7919,
                           0, (uint64_t)a->id << 40);
    free_all(a->h, slots, NS);
    free(slots);
    return NULL;
}

static void test_threads(void)
{
    size_t size = 32 << 20;
    char *r = region_alloc(size);
    fmpl_heap *h = fmpl_heap_create(r, size);
    size_t initial = fmpl_heap_free_bytes(h);
    pthread_t t[4];
    thread_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (thread_arg){h, i, 0};
        CHECK(pthread_create(&t[i], NULL, thread_main, &args[i]) == 0, "pthread_create");
    }
    long total = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(t[i], NULL);
        total += args[i].allocs;
    }
    CHECK(fmpl_heap_check(h) == FMPL_SUCCESS, "check after threads");
    CHECK(fmpl_heap_free_bytes(h) == initial && fmpl_heap_largest_free(h) == initial,
          "threads: everything coalesced back");
    printf("threads: 4 x 25000 operations, %ld allocations\n", total);
    free(r);
}

int main(void)
{
    setenv("FMPL_ERRORS_QUIET", "1", 1); /* errors below are provoked on purpose */
    fmpl_error_init();
    test_create();
    test_alignment();
    test_random();
    test_coalesce_and_exhaust();
    test_bad_free();
    test_shared_mapping();
    test_threads();
    if (failures) {
        fprintf(stderr, "test_heap: %d failure(s)\n", failures);
        return 1;
    }
    printf("test_heap: all passed\n");
    return 0;
}
