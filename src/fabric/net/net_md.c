/* Network memory domain: registrations and remote keys.
 *
 *  - The segment (header and shared heap) is registered once, at start-up,
 *    for local and remote access; its key and base (the virtual address, or
 *    0 for offset-addressed providers) are published with the endpoint name,
 *    so a FMPL_MEM_SHARED address (an offset) needs no key of its own: the
 *    initiator adds the peer's base and uses the peer's segment key.  Large
 *    malloc blocks live in the heap (shm_malloc.c), so they are covered too.
 *  - Private memory (the C library's blocks, stacks, static data) goes
 *    through a registration cache: exact byte ranges, FMPL_NET_RCACHE_MAX
 *    entries, least recently used eviction among entries nobody
 *    references.  When every entry is referenced (receives pre-posted into
 *    that many private buffers) the cache grows by as many entries again
 *    rather than fail; it shrinks back to the cap by eviction as references
 *    are dropped.  Entries never move (tokens point at them).  fmpl_fab_register takes a reference (the
 *    key is out there: a peer may use it until the protocol says it is
 *    done), fmpl_fab_deregister drops it; an operation's local descriptor
 *    (FI_MR_LOCAL) is referenced for the operation's duration only.
 *  - Invalidation: FMPL's allocator hooks (shm_malloc.c interposes free,
 *    realloc and munmap) call fmpl_net_release for the bytes being given
 *    back; every entry overlapping them is closed at once, so memory freed
 *    and handed out again at the same address is registered afresh, under
 *    a new key, and the old key stops working at the target.  Sanitizer
 *    builds do not interpose (AddressSanitizer owns malloc): there nothing
 *    is invalidated and the cache relies on its cap alone
 *    (fmpl_fab_rcache_stats reports hooked = 0).  mremap and brk shrinking
 *    are not watched (glibc's free path is, through free).
 *  - The cache's lock is never held across a wait for a remote operation.
 *    A thread holding it marks itself (in_rcache) so the provider's own
 *    frees inside fi_mr_reg/fi_close do not re-enter the hook. */
#include "base/hidden.h"
#include "fabric/net/net.h"
#include "fabric/shm/shm_malloc.h"
#include "base/error.h"
#include "base/tunable.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_rcache_max, "FMPL_NET_RCACHE_MAX", "256",
             "registrations of private buffers the network backend keeps (least recently "
             "used ones are dropped first)");

#define N fmpl_net_state
#define ACCESS (FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE)
#define SCRATCH_LINES 64

typedef struct rc_entry {
    uintptr_t lo, hi;        /* exact byte range */
    struct fid_mr *mr;       /* NULL: slot free */
    void *desc;
    uint64_t key;
    long refs;
    uint64_t used;           /* LRU clock */
} rc_entry;

static pthread_mutex_t rc_lock = PTHREAD_MUTEX_INITIALIZER;
static rc_entry **cache;  /* [rc_slots]: blocks of rc_cap entries each */
static long rc_cap, rc_slots, rc_live;
static uint64_t rc_clock;
static _Atomic uintptr_t rc_lo = UINTPTR_MAX, rc_hi = 0;  /* bounds of every live entry */
static long st_hits, st_misses, st_evictions, st_invalidations;
static FMPL_TLS int in_rcache;

/* Keys FMPL picks (no FI_MR_PROV_KEY) carry the registration's start in
 * their low 48 bits (user addresses fit) and a 16-bit generation above it:
 * unique among live registrations, and an offset-addressed provider's
 * initiator finds the offset as address - start (net_ep.c). */
#define KEY_ADDR_MASK ((1ull << 48) - 1)

static int reg_mr(const void *p, size_t len, struct fid_mr **mr)
{
    uint64_t key = 0;
    if (!N.prov_key)
        key = ((uint64_t)(uintptr_t)p & KEY_ADDR_MASK) |
              ((atomic_fetch_add(&N.next_key, 1) & 0xffff) << 48);
    int rc = fi_mr_reg(N.domain, p, len, ACCESS, 0, key, 0, mr, NULL);
    if (rc == 0 && N.mr_endpoint) {
        rc = fi_mr_bind(*mr, &N.ep->fid, 0);
        if (rc == 0)
            rc = fi_mr_enable(*mr);
        if (rc) {
            fi_close(&(*mr)->fid);
            *mr = NULL;
        }
    }
    return rc;
}

static void lock(void)
{
    pthread_mutex_lock(&rc_lock);
    in_rcache = 1;
}

static void unlock(void)
{
    in_rcache = 0;
    pthread_mutex_unlock(&rc_lock);
}

/* rc_cap more entries (a block of their own: entries never move). */
static int grow(void)
{
    rc_entry **more = realloc(cache, (size_t)(rc_slots + rc_cap) * sizeof *more);
    if (!more)
        return 0;
    cache = more;
    rc_entry *block = calloc((size_t)rc_cap, sizeof *block);
    if (!block)
        return 0;
    for (long i = 0; i < rc_cap; i++)
        cache[rc_slots + i] = &block[i];
    rc_slots += rc_cap;
    return 1;
}

static void drop(rc_entry *e)
{
    fi_close(&e->mr->fid);
    e->mr = NULL;
    rc_live--;
}

/* The free/munmap hook: close every registration overlapping the bytes. */
static void release(const void *p, size_t len)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    if (in_rcache || hi <= atomic_load_explicit(&rc_lo, memory_order_relaxed) ||
        lo >= atomic_load_explicit(&rc_hi, memory_order_relaxed))
        return;
    lock();
    for (long i = 0; i < rc_slots; i++)
        if (cache[i]->mr && cache[i]->lo < hi && lo < cache[i]->hi) {
            drop(cache[i]);
            st_invalidations++;
        }
    unlock();
}

int fmpl_net_md_open(void)
{
    atomic_store(&N.next_key, 1);
    int rc = reg_mr(fmpl_fab.my_base, fmpl_fab.my_size, &N.seg_mr);
    if (rc)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "registering the shared segment (%zu bytes) with %s failed: %s",
                          fmpl_fab.my_size, N.info->fabric_attr->prov_name, fi_strerror(-rc));
    N.seg_desc = fi_mr_desc(N.seg_mr);
    N.scratch = fmpl_fab_alloc(SCRATCH_LINES * 64);
    if (!N.scratch)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no shared heap for the network scratch lines");
    atomic_store(&N.scratch_free, ~(uint64_t)0);
    long long cap = fmpl_tunable_long(&tunable_rcache_max);
    rc_cap = cap < 1 ? 1 : (long)cap;
    if (!grow())
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %ld cache entries", rc_cap);
    return FMPL_SUCCESS;
}

void fmpl_net_md_close(void)
{
    fmpl_mem_release_hook = NULL;
    lock();
    for (long i = 0; i < rc_slots; i++)
        if (cache[i]->mr)
            drop(cache[i]);
    for (long i = 0; i < rc_slots; i += rc_cap)
        free(cache[i]); /* each block's first entry is the block */
    free(cache);
    cache = NULL;
    rc_cap = rc_slots = rc_live = 0;
    st_hits = st_misses = st_evictions = st_invalidations = 0;
    atomic_store(&rc_lo, UINTPTR_MAX);
    atomic_store(&rc_hi, 0);
    unlock();
    if (N.scratch)
        fmpl_fab_free(N.scratch);
    N.scratch = NULL;
    if (N.seg_mr)
        fi_close(&N.seg_mr->fid);
    N.seg_mr = NULL;
}

/* The entry for [p, p + len) with one more reference, registering it when
 * no entry covers it (evicting the least recently used unreferenced entry
 * when full).  Called with the lock held. */
static rc_entry *acquire(const void *p, size_t len, int *err)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    rc_entry *slot = NULL, *lru = NULL;
    for (long i = 0; i < rc_slots; i++) {
        rc_entry *e = cache[i];
        if (!e->mr) {
            if (!slot)
                slot = e;
            continue;
        }
        if (e->lo <= lo && hi <= e->hi) {
            st_hits++;
            e->refs++;
            e->used = ++rc_clock;
            return e;
        }
        if (e->refs == 0 && (!lru || e->used < lru->used))
            lru = e;
    }
    st_misses++;
    if (lru && (!slot || rc_live >= rc_cap)) {
        drop(lru);
        st_evictions++;
        slot = lru;
    }
    if (!slot) {
        long first = rc_slots;
        if (!grow()) {
            *err = FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                              "all %ld registration-cache entries are referenced and no "
                              "memory for more", rc_slots);
            return NULL;
        }
        slot = cache[first];
    }
    int rc2 = reg_mr(p, len, &slot->mr);
    if (rc2) {
        slot->mr = NULL;
        *err = FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "cannot register %zu bytes at %p with %s: %s",
                          len, p, N.info->fabric_attr->prov_name, fi_strerror(-rc2));
        return NULL;
    }
    rc_live++;
    slot->lo = lo;
    slot->hi = hi;
    slot->desc = fi_mr_desc(slot->mr);
    slot->key = fi_mr_key(slot->mr);
    slot->refs = 1;
    slot->used = ++rc_clock;
    if (lo < atomic_load(&rc_lo))
        atomic_store(&rc_lo, lo);
    if (hi > atomic_load(&rc_hi))
        atomic_store(&rc_hi, hi);
    if (!fmpl_mem_release_hook) {
        fmpl_mem_hooks_prepare();
        fmpl_mem_release_hook = release;
    }
    return slot;
}

int fmpl_net_reg(const void *p, size_t len, uint64_t *key)
{
    if (!N.virt_addr && (N.prov_key || N.info->domain_attr->mr_key_size < 8))
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "provider %s addresses registrations by offset and picks their "
                          "keys (or keys are short): private buffers cannot be exposed "
                          "(shared-heap ones can)",
                          N.info->fabric_attr->prov_name);
    int err = FMPL_SUCCESS;
    lock();
    rc_entry *e = acquire(p, len, &err);
    if (e)
        *key = e->key;
    unlock();
    return err;
}

void fmpl_net_dereg(const void *p, size_t len)
{
    uintptr_t lo = (uintptr_t)p, hi = lo + len;
    lock();
    for (long i = 0; i < rc_slots; i++)
        if (cache[i]->mr && cache[i]->refs > 0 && cache[i]->lo <= lo && hi <= cache[i]->hi) {
            cache[i]->refs--;
            break;
        }
    unlock();
}

int fmpl_net_local_get(const void *p, size_t len, void **desc, void **token)
{
    *token = NULL;
    *desc = NULL;
    if (!N.mr_local)
        return FMPL_SUCCESS;
    if (fmpl_fab_is_shared(p) && fmpl_fab_is_shared((const char *)p + len - 1)) {
        *desc = N.seg_desc;
        return FMPL_SUCCESS;
    }
    int err = FMPL_SUCCESS;
    lock();
    rc_entry *e = acquire(p, len, &err);
    if (e) {
        *desc = e->desc;
        *token = e;
    }
    unlock();
    return err;
}

void fmpl_net_local_put(void *token)
{
    if (!token)
        return;
    lock();
    rc_entry *e = token;
    if (e->mr && e->refs > 0)
        e->refs--;
    unlock();
}

int fmpl_net_scratch_get(void)
{
    for (;;) {
        uint64_t f = atomic_load(&N.scratch_free);
        if (!f) {
            fmpl_net_progress();
            continue;
        }
        int i = __builtin_ctzll(f);
        if (atomic_compare_exchange_weak(&N.scratch_free, &f, f & ~(1ull << i)))
            return i;
    }
}

void fmpl_net_scratch_put(int line) { atomic_fetch_or(&N.scratch_free, 1ull << line); }

void fmpl_net_rcache_stats_get(fmpl_fab_rcache_info *s)
{
    lock();
    s->hits = st_hits;
    s->misses = st_misses;
    s->evictions = st_evictions;
    s->invalidations = st_invalidations;
    s->entries = rc_live;
    s->cap = rc_cap;
    s->hooked = fmpl_mem_hooks_active();
    unlock();
}
