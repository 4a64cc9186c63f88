/* One-sided communication over the fabric: window descriptors, data
 * movement, passive-target locks, accumulate mutual exclusion, and the
 * counters of post-start-complete-wait.
 *
 * Remote operations, origin O accessing target T (T never acts):
 *   creation    every member allocates its descriptor in its shared heap;
 *               the members allgather {memory raddr, bytes, unit, descriptor
 *               raddr, memory owner} (the caller's collective).
 *   put / get   O copies into / out of T's memory: fmpl_fab_ptr reach
 *               (shared heap) is a datatype copy with plain loads and
 *               stores (contiguous data: one memcpy at the address
 *               resolved at connection, fmpl_rma_direct_span); private memory goes chunk by chunk through CMA
 *               (fmpl_fab_cma_write / _read), or, T being a network peer,
 *               remote writes and reads (fmpl_fab_put / _get: the key of
 *               T's registration came with the exchange), each contiguous
 *               piece of T's datatype one call.  Complete when the call
 *               returns.  (A dynamic window's attached memory has no key:
 *               win.c refuses dynamic windows over the network.)
 *   update      (accumulate family) O takes T.acc exclusively (as the lock
 *               below), reads T's elements, combines, writes them back,
 *               releases T.acc (release order: the data first).  Small
 *               updates of aligned elements in shared memory take T.acc
 *               shared instead and update each element with one atomic
 *               instruction (rma_atomic.c).
 *   lock        exclusive: cswap(T.lock, 0 -> EXCL) until it succeeds.
 *               shared: fetch_add(T.lock, +1); if EXCL was set, undo with
 *               fetch_add(-1) and retry once EXCL is clear.
 *   unlock      fetch_add(T.lock, -EXCL) or fetch_add(T.lock, -1).
 *   post        T (exposing) fetch_add(O.posted[T], +1) for each origin O.
 *   start       O waits until its own posted[T] reaches the number of its
 *               starts naming T (posts_used[T], never reset).
 *   complete    O fetch_add(T.completed, +1) for each target T, after a
 *               memory fence (its puts are complete already).
 *   wait/test   T waits until its completed reaches the completions it
 *               has consumed plus the size of the post's group.
 * Fence is a barrier of the caller's communicator after a memory fence.
 * Every counter is monotonic, so no epoch resets anything another member
 * might still be reading.  Descriptors are in shared heaps, so the atomics
 * are fabric atomics (fmpl_fab_fetch_add / fmpl_fab_cswap). */
#include "rma/rma.h"
#include "progress/agent.h"
#include "progress/progress.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static fmpl_raddr at(fmpl_raddr r, int64_t off)
{
    r.addr += (uint64_t)off;
    return r;
}

static fmpl_raddr desc_field(const fmpl_rma_win *w, int t, size_t off)
{
    return at(w->peer[t].desc, (int64_t)off);
}

int fmpl_rma_win_create(int rank, int size, int dynamic, fmpl_rma_win **out)
{
    fmpl_rma_win *w = calloc(1, sizeof *w);
    size_t dbytes = sizeof(fmpl_rma_desc) + (size_t)size * sizeof(uint64_t);
    if (w) {
        w->peer = calloc((size_t)size, sizeof *w->peer);
        w->posts_used = calloc((size_t)size, sizeof *w->posts_used);
        w->mine = fmpl_fab_alloc(dbytes);
    }
    if (!w || !w->peer || !w->posts_used || !w->mine) {
        fmpl_rma_win_destroy(w);
        return FMPL_ERR_NO_MEMORY;
    }
    memset(w->mine, 0, dbytes);
    w->rank = rank;
    w->size = size;
    w->dynamic = dynamic;
    if (fmpl_fab.net) {
        /* A peer's passive-target accesses over the network land only
         * while this rank polls: the agent, if on, keeps polling while the
         * window exists, even with nothing else outstanding. */
        w->watched = 1;
        fmpl_agent_watch(1);
    }
    *out = w;
    return FMPL_SUCCESS;
}

void fmpl_rma_win_entry(const fmpl_rma_win *w, fmpl_raddr base, uint64_t size,
                        int64_t disp_unit, uint64_t entry[FMPL_RMA_ENTRY_WORDS])
{
    entry[0] = fmpl_raddr_pack(base);
    entry[1] = size;
    entry[2] = (uint64_t)disp_unit;
    entry[3] = fmpl_raddr_pack(fmpl_fab_raddr(w->mine));
    entry[4] = (uint64_t)base.rank;
    entry[5] = w->reg_key;
}

int fmpl_rma_win_expose(fmpl_rma_win *w, fmpl_raddr base, uint64_t size)
{
    if (!fmpl_fab.net || base.kind != FMPL_MEM_PRIVATE || size == 0 || w->dynamic)
        return FMPL_SUCCESS;
    const void *p = (const void *)(uintptr_t)base.addr;
    fmpl_raddr r;
    int rc = fmpl_fab_register(p, (size_t)size, &r);
    if (rc != FMPL_SUCCESS)
        return rc;
    w->reg_base = p;
    w->reg_len = (size_t)size;
    w->reg_key = r.key;
    return FMPL_SUCCESS;
}

void fmpl_rma_win_connect(fmpl_rma_win *w, const uint64_t *entries, const int *world)
{
    for (int t = 0; t < w->size; t++) {
        const uint64_t *e = entries + (size_t)t * FMPL_RMA_ENTRY_WORDS;
        w->peer[t] = (fmpl_rma_peer){.base = fmpl_raddr_unpack(e[0], (int)e[4]),
                                     .size = e[1],
                                     .disp_unit = (int64_t)e[2],
                                     .desc = fmpl_raddr_unpack(e[3], world[t])};
        w->peer[t].base.key = e[5];
        w->peer[t].direct = w->dynamic ? NULL : fmpl_fab_ptr(w->peer[t].base);
    }
}

void fmpl_rma_win_destroy(fmpl_rma_win *w)
{
    if (!w)
        return;
    if (w->mine)
        fmpl_fab_free(w->mine);
    if (w->reg_base)
        fmpl_fab_deregister(w->reg_base, w->reg_len);
    if (w->watched)
        fmpl_agent_watch(-1);
    free(w->peer);
    free(w->posts_used);
    free(w);
}

/* ------------------------------------------------------------ data */

typedef struct remote_walk {
    fmpl_raddr at;  /* the target region (its rank, kind and key) */
    int write;
} remote_walk;

static int remote_chunk(void *ctx, uintptr_t addr, char *pk, int64_t n)
{
    const remote_walk *c = ctx;
    fmpl_raddr r = c->at;
    r.addr = addr;
    return c->write ? fmpl_fab_put(pk, (size_t)n, r) : fmpl_fab_get(pk, (size_t)n, r);
}

/* Move the packed stream of (remote, tcount, ttype) to or from `stream`
 * through remote writes or reads (CMA, or the network), one per contiguous
 * piece. */
static int remote_stream(fmpl_raddr remote, int64_t tcount, const fmpl_datatype *ttype,
                         char *stream, int write)
{
    remote_walk c = {.at = remote, .write = write};
    return fmpl_dt_for_each_chunk((uintptr_t)remote.addr, tcount, ttype, stream, remote_chunk,
                                  &c);
}

/* Private target memory: pack the origin's data (or unpack into it) around
 * the chunked remote copy.  A contiguous origin is the stream itself. */
static int remote_move(fmpl_raddr remote, void *obuf, int64_t ocount, const fmpl_datatype *otype,
                       int64_t tcount, const fmpl_datatype *ttype, int write)
{
    int64_t bytes = tcount * fmpl_dt_size(ttype);
    if (bytes == 0)
        return FMPL_SUCCESS;
    int contiguous = fmpl_dt_is_contiguous(otype);
    char *stream = contiguous ? (char *)obuf + fmpl_dt_true_lb(otype) : malloc((size_t)bytes);
    if (!stream)
        return FMPL_ERR_NO_MEMORY;
    int err = FMPL_SUCCESS;
    if (write && !contiguous)
        err = fmpl_dt_pack(obuf, ocount, otype, 0, stream, bytes, NULL);
    if (!err)
        err = remote_stream(remote, tcount, ttype, stream, write);
    if (!err && !write && !contiguous)
        err = fmpl_dt_unpack(stream, bytes, obuf, ocount, otype, 0, NULL);
    if (!contiguous)
        free(stream);
    return err;
}

int fmpl_rma_put(fmpl_rma_win *w, int t, int64_t disp, const void *obuf, int64_t ocount,
                 const fmpl_datatype *otype, int64_t tcount, const fmpl_datatype *ttype)
{
    fmpl_raddr dst = at(w->peer[t].base, disp);
    char *p = fmpl_fab_ptr(dst);
    if (p)
        return fmpl_dt_copy(obuf, ocount, otype, p, tcount, ttype, NULL);
    return remote_move(dst, (void *)obuf, ocount, otype, tcount, ttype, 1);
}

int fmpl_rma_get(fmpl_rma_win *w, int t, int64_t disp, void *obuf, int64_t ocount,
                 const fmpl_datatype *otype, int64_t tcount, const fmpl_datatype *ttype)
{
    fmpl_raddr src = at(w->peer[t].base, disp);
    char *p = fmpl_fab_ptr(src);
    if (p)
        return fmpl_dt_copy(p, tcount, ttype, obuf, ocount, otype, NULL);
    return remote_move(src, obuf, ocount, otype, tcount, ttype, 0);
}

/* A reader-writer word (the passive-target lock, the accumulate lock):
 * FMPL_RMA_EXCL for the one exclusive holder, plus one per shared holder.
 * Shared acquisition undoes its increment and retries while EXCL is set. */
static void word_lock(fmpl_raddr l, int exclusive)
{
    if (exclusive) {
        FMPL_WAIT_UNTIL(fmpl_fab_cswap(l, 0, FMPL_RMA_EXCL) == 0);
        return;
    }
    while (fmpl_fab_fetch_add(l, 1) & FMPL_RMA_EXCL) {
        fmpl_fab_fetch_add(l, (uint64_t)-1);
        FMPL_WAIT_UNTIL(!(fmpl_fab_fetch_add(l, 0) & FMPL_RMA_EXCL));
    }
}

static void word_unlock(fmpl_raddr l, int exclusive)
{
    fmpl_fab_fetch_add(l, exclusive ? (uint64_t)0 - FMPL_RMA_EXCL : (uint64_t)-1);
}

void fmpl_rma_acc_lock(fmpl_rma_win *w, int t, int exclusive)
{
    word_lock(desc_field(w, t, offsetof(fmpl_rma_desc, acc)), exclusive);
}

void fmpl_rma_acc_unlock(fmpl_rma_win *w, int t, int exclusive)
{
    word_unlock(desc_field(w, t, offsetof(fmpl_rma_desc, acc)), exclusive);
}

/* Small updates (Fetch_and_op, Compare_and_swap, short accumulates) of
 * non-contiguous or private targets stage on the stack. */
#define UPDATE_STACK 256

int fmpl_rma_update(fmpl_rma_win *w, int t, int64_t disp, int64_t tcount,
                    const fmpl_datatype *ttype, fmpl_rma_update_fn fn, void *ctx)
{
    fmpl_raddr dst = at(w->peer[t].base, disp);
    int64_t bytes = tcount * fmpl_dt_size(ttype);
    if (bytes == 0)
        return FMPL_SUCCESS;
    char small[UPDATE_STACK];
    char *p = fmpl_fab_ptr(dst);
    int in_place = p && fmpl_dt_is_contiguous(ttype);
    char *s = in_place ? p + fmpl_dt_true_lb(ttype)
              : bytes <= UPDATE_STACK ? small : malloc((size_t)bytes);
    if (!s)
        return FMPL_ERR_NO_MEMORY;
    int err = FMPL_SUCCESS;
    fmpl_rma_acc_lock(w, t, 1);
    if (in_place) {
        fn(ctx, s, bytes);
    } else {
        err = p ? fmpl_dt_pack(p, tcount, ttype, 0, s, bytes, NULL)
                : remote_stream(dst, tcount, ttype, s, 0);
        if (!err) {
            fn(ctx, s, bytes);
            err = p ? fmpl_dt_unpack(s, bytes, p, tcount, ttype, 0, NULL)
                    : remote_stream(dst, tcount, ttype, s, 1);
        }
    }
    fmpl_rma_acc_unlock(w, t, 1);
    if (s != small && !in_place)
        free(s);
    return err;
}

/* ------------------------------------------------------------ locks */

void fmpl_rma_lock(fmpl_rma_win *w, int t, int exclusive)
{
    word_lock(desc_field(w, t, offsetof(fmpl_rma_desc, lock)), exclusive);
}

void fmpl_rma_unlock(fmpl_rma_win *w, int t, int exclusive)
{
    fmpl_rma_flush();
    word_unlock(desc_field(w, t, offsetof(fmpl_rma_desc, lock)), exclusive);
}

/* ------------------------------------------------------------ PSCW */

void fmpl_rma_post(fmpl_rma_win *w, const int *members, int n)
{
    size_t slot = offsetof(fmpl_rma_desc, posted) + (size_t)w->rank * sizeof(uint64_t);
    for (int i = 0; i < n; i++)
        fmpl_fab_fetch_add(desc_field(w, members[i], slot), 1);
}

void fmpl_rma_start(fmpl_rma_win *w, const int *members, int n)
{
    for (int i = 0; i < n; i++) {
        int t = members[i];
        uint64_t need = ++w->posts_used[t];
        FMPL_WAIT_UNTIL(atomic_load_explicit(&w->mine->posted[t], memory_order_acquire) >=
                        need);
    }
}

void fmpl_rma_complete(fmpl_rma_win *w, const int *members, int n)
{
    fmpl_rma_flush();
    for (int i = 0; i < n; i++)
        fmpl_fab_fetch_add(desc_field(w, members[i], offsetof(fmpl_rma_desc, completed)), 1);
}

static uint64_t completed(const fmpl_rma_win *w)
{
    return atomic_load_explicit(&w->mine->completed.v, memory_order_acquire);
}

void fmpl_rma_wait(fmpl_rma_win *w, int n)
{
    w->completes_used += (uint64_t)n;
    FMPL_WAIT_UNTIL(completed(w) >= w->completes_used);
}

int fmpl_rma_test(fmpl_rma_win *w, int n)
{
    /* A test is a progress call: over a manual-progress network the
     * origins' completing fetch-adds land only while this rank polls. */
    if (completed(w) < w->completes_used + (uint64_t)n && (fmpl_progress(),
        completed(w) < w->completes_used + (uint64_t)n))
        return 0;
    w->completes_used += (uint64_t)n;
    return 1;
}
