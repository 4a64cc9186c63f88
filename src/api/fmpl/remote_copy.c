/* Symmetric memory and remote copies with notification: checks, then the
 * runtime's agreement (runtime/symmetric.c) or the protocol
 * (protocols/remote_copy.c). */
#include "api/fmpl/api.h"
#include "fabric/symmetric.h"
#include "progress/agent.h"
#include "progress/progress.h"
#include "protocols/remote_copy.h"
#include "runtime/runtime.h"

#include <stdatomic.h>

/* Every copy this rank issued to or from members of t is delivered. */
static int copy_sync(fmpl_team *t)
{
    FMPL_WAIT_UNTIL(fmpl_rc_acked(t->world, t->size));
    return fmpl_rc_sync_finish(t->world, t->size);
}

void *fmpl_alloc_symmetric(size_t size, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    int rc = fmpl_api_check_state(__func__);
    fmpl_team *t = rc == FMPL_SUCCESS ? fmpl_api_team(comm, __func__, &rc) : NULL;
    if (!t)
        return NULL;
    /* size 0 is refused by every member alike, inside the agreement: a
     * member that returned early would leave the others waiting. */
    void *p = fmpl_symmetric_alloc(t, size, &rc);
    if (p) /* a block peers may ask us to copy out of (fmpl_copy) */
        fmpl_agent_expect_rings(1);
    return p;
}

int fmpl_free_symmetric(void *ptr, fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    int rc = copy_sync(t); /* our copies into the block land before anyone frees it */
    int frc = fmpl_symmetric_free(t, ptr);
    if (frc == FMPL_SUCCESS)
        fmpl_agent_expect_rings(-1);
    return frc != FMPL_SUCCESS ? frc : rc;
}

/* ---------------------------------------------------------------- checks */

static int check_rank(const fmpl_team *t, int rank, const char *what, const char *func)
{
    if (rank >= 0 && rank < t->size)
        return FMPL_SUCCESS;
    return fmpl_error_report(FMPL_ERR_RANK, func, "%s %d is outside 0 .. %d", what, rank,
                             t->size - 1);
}

/* A symmetric range [p, p + size) inside one block: its arena offset. */
static int check_symmetric(const void *p, size_t size, const char *what, const char *func,
                           uint64_t *off)
{
    *off = fmpl_sym_offset(p);
    if (!p)
        return fmpl_error_report(FMPL_ERR_ARG, func, "%s is NULL with size %zu", what, size);
    const fmpl_sym_block *b = *off == FMPL_SYM_NONE ? NULL : fmpl_sym_find(*off);
    if (!b)
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "%s %p is not in symmetric memory (a live block of "
                                 "fmpl_alloc_symmetric)",
                                 what, p);
    if (size > b->off + b->size - *off)
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "%zu bytes at %s %p run %llu bytes past the end of its "
                                 "%llu-byte symmetric block",
                                 size, what, p,
                                 (unsigned long long)(size - (b->off + b->size - *off)),
                                 (unsigned long long)b->size);
    return FMPL_SUCCESS;
}

static int check_local(const void *p, size_t size, const char *what, const char *func)
{
    if (p || size == 0)
        return FMPL_SUCCESS;
    return fmpl_error_report(FMPL_ERR_ARG, func, "%s is NULL with size %zu", what, size);
}

/* The note in protocol form; *use is NULL for no note. */
static int check_note(const fmpl_notify *note, fmpl_rc_note *out, const fmpl_rc_note **use,
                      const char *func)
{
    *use = NULL;
    if (!note || note->kind == FMPL_NOTIFY_NONE)
        return FMPL_SUCCESS;
    if (note->kind != FMPL_NOTIFY_SET && note->kind != FMPL_NOTIFY_COUNT)
        return fmpl_error_report(FMPL_ERR_ARG, func,
                                 "notify kind %d is unknown (FMPL_NOTIFY_NONE, _SET, _COUNT)",
                                 note->kind);
    if (!note->word)
        return fmpl_error_report(FMPL_ERR_ARG, func, "the notify word is NULL");
    if ((uintptr_t)note->word & 7)
        return fmpl_error_report(FMPL_ERR_ARG, func, "notify word %p is not 8-byte aligned",
                                 (void *)note->word);
    int rc = check_symmetric(note->word, sizeof(uint64_t), "notify word", func, &out->word_off);
    if (rc != FMPL_SUCCESS)
        return rc;
    out->kind = note->kind;
    out->value = note->value;
    *use = out;
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- copies */

/* The arguments of a put or a get: the peer's rank, the local buffer (any
 * memory), the symmetric one (its offset in *sym_off) and the note (its
 * protocol form in *n, or *use NULL for none). */
typedef struct copy_args {
    uint64_t sym_off;
    fmpl_rc_note n;
    const fmpl_rc_note *use;
} copy_args;

static int check_one_sided(const fmpl_team *t, int rank, const void *local, const void *sym,
                           size_t size, const fmpl_notify *note, int put, copy_args *a,
                           const char *func)
{
    a->sym_off = 0;
    CHECK(check_rank(t, rank, put ? "dst_rank" : "src_rank", func));
    CHECK(check_local(local, size, put ? "src" : "dst", func));
    if (size || sym)
        CHECK(check_symmetric(sym, size, put ? "dst" : "src", func, &a->sym_off));
    return check_note(note, &a->n, &a->use, func);
}

int fmpl_put_notify(const void *src, void *dst, size_t size, int dst_rank, fmpl_comm comm,
                    const fmpl_notify *note)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    copy_args a;
    CHECK(check_one_sided(t, dst_rank, src, dst, size, note, 1, &a, __func__));
    return fmpl_rc_put(src, size, t->world[dst_rank], a.sym_off, a.use);
}

int fmpl_get_notify(void *dst, const void *src, size_t size, int src_rank, fmpl_comm comm,
                    const fmpl_notify *note)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    copy_args a;
    CHECK(check_one_sided(t, src_rank, dst, src, size, note, 0, &a, __func__));
    return fmpl_rc_get(dst, size, t->world[src_rank], a.sym_off, a.use);
}

int fmpl_copy(int src_rank, const void *src, int dst_rank, void *dst, size_t size,
              fmpl_comm comm, const fmpl_notify *note)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    CHECK(check_rank(t, src_rank, "src_rank", __func__));
    copy_args a;
    CHECK(check_one_sided(t, dst_rank, src, dst, size, note, 1, &a, __func__));
    if (src_rank == t->rank)
        return fmpl_rc_put(src, size, t->world[dst_rank], a.sym_off, a.use);
    /* Forwarded: src_rank must find src in its own arena. */
    uint64_t src_off = 0;
    if (size || src)
        CHECK(check_symmetric(src, size, "src", __func__, &src_off));
    int rc = fmpl_rc_forward(t->world[src_rank], src_off, t->world[dst_rank], a.sym_off, size,
                             a.use);
    /* The source carries it out in its progress: a sleeping agent of a
     * source on this host starts now, not when its rank next calls. */
    if (rc == FMPL_SUCCESS)
        fmpl_agent_ring(t->world[src_rank]);
    return rc;
}

int fmpl_copy_sync(fmpl_comm comm)
{
    FMPL_CORE_GUARD();
    API_ENTER(comm, t);
    return copy_sync(t);
}

/* ------------------------------------------------------- waits and tests */

static int check_word(const uint64_t *w, const char *func)
{
    if (!w)
        return fmpl_error_report(FMPL_ERR_ARG, func, "the word is NULL");
    if ((uintptr_t)w & 7)
        return fmpl_error_report(FMPL_ERR_ARG, func, "word %p is not 8-byte aligned",
                                 (const void *)w);
    return FMPL_SUCCESS;
}

/* *w == v, or *w >= v with at_least: an acquire load, so the data the
 * note announced is seen after it. */
static inline int word_reached(const uint64_t *w, uint64_t v, int at_least)
{
    uint64_t x = atomic_load_explicit((_Atomic uint64_t *)(uintptr_t)w, memory_order_acquire);
    return at_least ? x >= v : x == v;
}

static int wait_word(const uint64_t *w, uint64_t v, int at_least, const char *func)
{
    CHECK(fmpl_api_check_state(func));
    CHECK(check_word(w, func));
    FMPL_WAIT_UNTIL(word_reached(w, v, at_least));
    return FMPL_SUCCESS;
}

static int test_word(const uint64_t *w, uint64_t v, int at_least, int *done, const char *func)
{
    CHECK(fmpl_api_check_state(func));
    CHECK(check_word(w, func));
    if (!done)
        return fmpl_error_report(FMPL_ERR_ARG, func, "done is NULL");
    if (!word_reached(w, v, at_least))
        fmpl_progress();
    *done = word_reached(w, v, at_least);
    return FMPL_SUCCESS;
}

int fmpl_wait_flag(const uint64_t *flag, uint64_t value)
{
    FMPL_CORE_GUARD();
    return wait_word(flag, value, 0, __func__);
}

int fmpl_wait_count(const uint64_t *counter, uint64_t count)
{
    FMPL_CORE_GUARD();
    return wait_word(counter, count, 1, __func__);
}

int fmpl_test_flag(const uint64_t *flag, uint64_t value, int *done)
{
    FMPL_CORE_GUARD();
    return test_word(flag, value, 0, done, __func__);
}

int fmpl_test_count(const uint64_t *counter, uint64_t count, int *done)
{
    FMPL_CORE_GUARD();
    return test_word(counter, count, 1, done, __func__);
}
