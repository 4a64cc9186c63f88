/* MPI one-sided synchronisation: fence, post-start-complete-wait,
 * passive-target locks, flushes.  The remote side of each is in src/rma
 * (rma.c opens with the sequence of remote operations); this file checks
 * the epochs (an access outside one, or an epoch call out of order, is
 * MPI_ERR_RMA_SYNC) and the arguments.
 *
 * Every put, get and accumulate is complete at its target when its call
 * returns (rma.c), so the flushes are memory fences and MPI_Win_unlock
 * has nothing to wait for but the lock word itself. */
#include "api/mpi/win.h"
#include "api/mpi/mpi_objects.h"

#include <stdlib.h>

#define LOCK_NOCHECK 0x4 /* in w->locks[t] / w->lock_all: no lock word was taken */

static int check_assert(MPI_Win win, int assert, int allowed, const char *func)
{
    if (assert & ~allowed)
        return fmpl_mpi_error(win, MPI_ERR_ASSERT, func, "invalid assert 0x%x", (unsigned)assert);
    return MPI_SUCCESS;
}

static int sync_error(MPI_Win win, const char *func, const char *why)
{
    return fmpl_mpi_error(win, MPI_ERR_RMA_SYNC, func, "%s", why);
}

/* The epoch rules of the synchronisation calls on the whole window (the
 * per-target locks check theirs with the rank): the asserts each accepts,
 * and the epochs that must not be open (calls that open one) or must be
 * (calls that close one). */
typedef enum {
    SYNC_FENCE, SYNC_START, SYNC_COMPLETE, SYNC_POST, SYNC_WAIT, SYNC_LOCK_ALL,
    SYNC_UNLOCK_ALL, SYNC_FLUSH_ALL, SYNC_CALLS
} sync_call;

/* 0 for the calls without an assert argument (they pass 0) */
static const int sync_asserts[SYNC_CALLS] = {
    [SYNC_FENCE] = MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE | MPI_MODE_NOSUCCEED,
    [SYNC_START] = MPI_MODE_NOCHECK,
    [SYNC_POST] = MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT,
    [SYNC_LOCK_ALL] = MPI_MODE_NOCHECK,
};

/* Why call c may not run now, or NULL. */
static const char *epoch_conflict(const fmpl_mpi_win *w, sync_call c)
{
    switch (c) {
    case SYNC_FENCE:
        return fmpl_mpi_win_in_epoch(w) ? "a lock or post-start epoch is open" : NULL;
    case SYNC_START:
    case SYNC_LOCK_ALL:
        return w->access || w->lock_all || w->nlocks ? "an access epoch is open already" : NULL;
    case SYNC_COMPLETE:
        return !w->access ? "no MPI_Win_start epoch is open" : NULL;
    case SYNC_POST:
        return w->nexpose >= 0 ? "an exposure epoch is open already" : NULL;
    case SYNC_WAIT:
        return w->nexpose < 0 ? "no MPI_Win_post epoch is open" : NULL;
    case SYNC_UNLOCK_ALL:
        return !w->lock_all ? "no MPI_Win_lock_all epoch is open" : NULL;
    case SYNC_FLUSH_ALL:
        return !w->nlocks && !w->lock_all ? "no passive-target epoch is open" : NULL;
    default:
        return NULL;
    }
}

static int epoch_check(const fmpl_mpi_win *w, sync_call c, const char *func)
{
    const char *why = epoch_conflict(w, c);
    return why ? sync_error(w->handle, func, why) : MPI_SUCCESS;
}

/* The opening checks of call c, in this order: the window, the assert,
 * the epochs.  *out: the window. */
static int sync_begin(MPI_Win win, sync_call c, int assert, const char *func,
                      fmpl_mpi_win **out)
{
    *out = NULL; /* set on every path: callers read it only on success */
    FMPL_GET_WIN(win, w, func);
    int rc = check_assert(win, assert, sync_asserts[c], func);
    if (rc == MPI_SUCCESS)
        rc = epoch_check(w, c, func);
    *out = w;
    return rc;
}

/* Declares w, the window; returns the error of a failed check. */
#define SYNC_BEGIN(win, c, assert, func, w)                                        \
    fmpl_mpi_win *w;                                                               \
    do {                                                                           \
        int rc_ = sync_begin((win), (c), (assert), (func), &w);                    \
        if (rc_ != MPI_SUCCESS)                                                    \
            return rc_;                                                            \
    } while (0)

int PMPI_Win_fence(int assert, MPI_Win win)
{
    FMPL_CORE_GUARD();
    SYNC_BEGIN(win, SYNC_FENCE, assert, "MPI_Win_fence", w);
    fmpl_rma_flush();
    PMPI_Barrier(w->comm);
    w->fence = !(assert & MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_fence)

/* The window's members in `group`, in group order: *out (malloc'd, NULL
 * for an empty group) and *n. */
static int group_members(fmpl_mpi_win *w, MPI_Group group, int **out, int *n,
                         const char *func)
{
    fmpl_mpi_group *g = fmpl_mpi_group_get(group);
    if (!g)
        return fmpl_mpi_error(w->handle, MPI_ERR_GROUP, func, "invalid group 0x%x",
                              (unsigned)group);
    int *m = g->size ? malloc((size_t)g->size * sizeof *m) : NULL;
    if (g->size && !m)
        return fmpl_mpi_error(w->handle, MPI_ERR_NO_MEM, func, "no memory");
    for (int i = 0; i < g->size; i++) {
        m[i] = -1;
        for (int t = 0; t < w->team->size && m[i] < 0; t++)
            if (w->team->world[t] == g->world[i])
                m[i] = t;
        if (m[i] < 0) {
            free(m);
            return fmpl_mpi_error(w->handle, MPI_ERR_GROUP, func,
                                  "group member %d is not in the window", i);
        }
    }
    *out = m;
    *n = g->size;
    return MPI_SUCCESS;
}

/* The opening of a generalized active-target epoch (start, post): the
 * checks, then the group's members (*m, *n; see group_members). */
static int group_epoch_begin(MPI_Win win, sync_call c, int assert, MPI_Group group,
                             const char *func, fmpl_mpi_win **w, int **m, int *n)
{
    int rc = sync_begin(win, c, assert, func, w);
    return rc == MPI_SUCCESS ? group_members(*w, group, m, n, func) : rc;
}

/* Declares w, m and n; returns the error of a failed check. */
#define GROUP_EPOCH_BEGIN(win, c, assert, group, func, w, m, n)                    \
    fmpl_mpi_win *w;                                                               \
    int *m, n;                                                                     \
    do {                                                                           \
        int rc_ = group_epoch_begin((win), (c), (assert), (group), (func), &w, &m, &n); \
        if (rc_ != MPI_SUCCESS)                                                    \
            return rc_;                                                            \
    } while (0)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    FMPL_CORE_GUARD();
    GROUP_EPOCH_BEGIN(win, SYNC_START, assert, group, "MPI_Win_start", w, m, n);
    fmpl_rma_start(w->rma, m, n);
    static int empty;
    w->access = m ? m : &empty;
    w->naccess = n;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    FMPL_CORE_GUARD();
    SYNC_BEGIN(win, SYNC_COMPLETE, 0, "MPI_Win_complete", w);
    fmpl_rma_complete(w->rma, w->access, w->naccess);
    if (w->naccess)
        free(w->access);
    w->access = NULL;
    w->naccess = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_complete)

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    FMPL_CORE_GUARD();
    GROUP_EPOCH_BEGIN(win, SYNC_POST, assert, group, "MPI_Win_post", w, m, n);
    fmpl_rma_flush(); /* my stores before the post are seen by the origins */
    fmpl_rma_post(w->rma, m, n);
    free(m);
    w->nexpose = n;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_post)

int PMPI_Win_wait(MPI_Win win)
{
    FMPL_CORE_GUARD();
    SYNC_BEGIN(win, SYNC_WAIT, 0, "MPI_Win_wait", w);
    fmpl_rma_wait(w->rma, w->nexpose);
    w->nexpose = -1;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_test";
    FMPL_GET_WIN(win, w, func);
    if (!flag)
        return fmpl_mpi_error(win, MPI_ERR_ARG, func, "flag is NULL");
    int rc = epoch_check(w, SYNC_WAIT, func);
    if (rc != MPI_SUCCESS)
        return rc;
    *flag = fmpl_rma_test(w->rma, w->nexpose);
    if (*flag)
        w->nexpose = -1;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_test)

/* ------------------------------------------------------------ passive target */

static int check_rank(fmpl_mpi_win *w, int rank, const char *func)
{
    if (rank < 0 || rank >= w->team->size)
        return fmpl_mpi_error(w->handle, MPI_ERR_RANK, func, "rank %d is not in [0, %d)", rank,
                              w->team->size);
    return MPI_SUCCESS;
}

/* The opening checks of a call on one target (unlock, flush): the window,
 * then the rank.  *out: the window, or NULL for MPI_PROC_NULL (nothing to
 * do). */
static int target_begin(MPI_Win win, int rank, const char *func, fmpl_mpi_win **out)
{
    *out = NULL;
    FMPL_GET_WIN(win, w, func);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = check_rank(w, rank, func);
    if (rc == MPI_SUCCESS)
        *out = w;
    return rc;
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_lock";
    FMPL_GET_WIN(win, w, func);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return fmpl_mpi_error(win, MPI_ERR_LOCKTYPE, func, "invalid lock type %d", lock_type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    int rc = check_rank(w, rank, func);
    if (rc == MPI_SUCCESS)
        rc = check_assert(win, assert, MPI_MODE_NOCHECK, func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (w->locks[rank] || w->lock_all || w->access)
        return sync_error(win, func, "an access epoch to this target is open already");
    int excl = lock_type == MPI_LOCK_EXCLUSIVE;
    if (!(assert & MPI_MODE_NOCHECK))
        fmpl_rma_lock(w->rma, rank, excl);
    w->locks[rank] = (unsigned char)((excl ? FMPL_WIN_LOCK_EXCL : FMPL_WIN_LOCK_SHARED) |
                                     (assert & MPI_MODE_NOCHECK ? LOCK_NOCHECK : 0));
    w->nlocks++;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Win_unlock";
    fmpl_mpi_win *w;
    int rc = target_begin(win, rank, func, &w);
    if (rc != MPI_SUCCESS || !w)
        return rc;
    int l = w->locks[rank];
    if (!l)
        return sync_error(win, func, "this target is not locked");
    if (!(l & LOCK_NOCHECK))
        fmpl_rma_unlock(w->rma, rank, (l & 3) == FMPL_WIN_LOCK_EXCL);
    else
        fmpl_rma_flush();
    w->locks[rank] = 0;
    w->nlocks--;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    FMPL_CORE_GUARD();
    SYNC_BEGIN(win, SYNC_LOCK_ALL, assert, "MPI_Win_lock_all", w);
    if (!(assert & MPI_MODE_NOCHECK))
        for (int t = 0; t < w->team->size; t++)
            fmpl_rma_lock(w->rma, t, 0);
    w->lock_all = 1 | (assert & MPI_MODE_NOCHECK ? LOCK_NOCHECK : 0);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
    FMPL_CORE_GUARD();
    SYNC_BEGIN(win, SYNC_UNLOCK_ALL, 0, "MPI_Win_unlock_all", w);
    if (!(w->lock_all & LOCK_NOCHECK))
        for (int t = 0; t < w->team->size; t++)
            fmpl_rma_unlock(w->rma, t, 0);
    else
        fmpl_rma_flush();
    w->lock_all = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_unlock_all)

/* Flushes: the accesses are complete already; order them before what
 * follows, inside a passive-target epoch. */
__attribute__((noinline)) static int flush_one_checked(int rank, MPI_Win win, const char *func)
{
    fmpl_mpi_win *w;
    int rc = target_begin(win, rank, func, &w);
    if (rc != MPI_SUCCESS || !w)
        return rc;
    if (!w->locks[rank] && !w->lock_all)
        return sync_error(win, func, "no passive-target epoch to this target is open");
    fmpl_rma_flush();
    return MPI_SUCCESS;
}

/* The common case in a few comparisons and the fence, without a call:
 * anything else (errors, MPI_PROC_NULL) goes through the checked path. */
static inline int flush_one(int rank, MPI_Win win, const char *func)
{
    fmpl_mpi_win *w = fmpl_mpi_state == FMPL_MPI_READY ? fmpl_mpi_win_lookup(win) : NULL;
    if (w && (unsigned)rank < (unsigned)w->rma->size && (w->lock_all || w->locks[rank])) {
        fmpl_rma_flush();
        return MPI_SUCCESS;
    }
    return flush_one_checked(rank, win, func);
}

static int flush_all(MPI_Win win, const char *func)
{
    fmpl_mpi_win *w;
    int rc = sync_begin(win, SYNC_FLUSH_ALL, 0, func, &w);
    if (rc == MPI_SUCCESS)
        fmpl_rma_flush();
    return rc;
}

int PMPI_Win_flush(int rank, MPI_Win win) { FMPL_CORE_GUARD(); return flush_one(rank, win, "MPI_Win_flush"); }
FMPL_MPI_WEAK(Win_flush)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    FMPL_CORE_GUARD();
    return flush_one(rank, win, "MPI_Win_flush_local");
}
FMPL_MPI_WEAK(Win_flush_local)

int PMPI_Win_flush_all(MPI_Win win) { FMPL_CORE_GUARD(); return flush_all(win, "MPI_Win_flush_all"); }
FMPL_MPI_WEAK(Win_flush_all)

int PMPI_Win_flush_local_all(MPI_Win win) { FMPL_CORE_GUARD(); return flush_all(win, "MPI_Win_flush_local_all"); }
FMPL_MPI_WEAK(Win_flush_local_all)

/* The public and private copies are one (MPI_WIN_UNIFIED): a memory fence. */
int PMPI_Win_sync(MPI_Win win)
{
    FMPL_CORE_GUARD();
    FMPL_GET_WIN(win, w, "MPI_Win_sync");
    (void)w;
    fmpl_rma_flush();
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Win_sync)
