/* Algorithm selection: for each collective, a table of rules scanned in
 * order; the first whose process-count and size limits hold picks the
 * algorithm.  FMPL_<COLL>_ALGO=<name> overrides the table.  Selection uses
 * only values every member shares (size of the team, bytes, never buffer
 * locations), so all members always run the same algorithm.
 * The limits come from fmpl-bench on the development machine (2 cores,
 * shared L3): see docs/architecture.md. */
#include "collectives/collectives.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

FMPL_TUNABLE(tunable_barrier_algo, "FMPL_BARRIER_ALGO", "auto",
             "barrier algorithm: auto, dissemination or binomial");
FMPL_TUNABLE(tunable_bcast_algo, "FMPL_BCAST_ALGO", "auto",
             "broadcast algorithm: auto, binomial (point-to-point tree) or shm_pipelined");
FMPL_TUNABLE(tunable_reduce_algo, "FMPL_REDUCE_ALGO", "auto",
             "reduce algorithm: auto, binomial, shm_flat or shm_slices");
FMPL_TUNABLE(tunable_allreduce_algo, "FMPL_ALLREDUCE_ALGO", "auto",
             "allreduce algorithm: auto, binomial, shm_flat or shm_slices");

enum { ALGO_AUTO = 0 };
enum { BARRIER_DISSEMINATION = 1, BARRIER_BINOMIAL };
enum { BCAST_BINOMIAL = 1, BCAST_SHM_PIPELINED };
enum { REDUCE_BINOMIAL = 1, REDUCE_SHM_FLAT, REDUCE_SHM_SLICES };

static const char *const barrier_names[] = {"auto", "dissemination", "binomial", NULL};
static const char *const bcast_names[] = {"auto", "binomial", "shm_pipelined", NULL};
static const char *const reduce_names[] = {"auto", "binomial", "shm_flat", "shm_slices", NULL};

typedef struct rule {
    int max_procs;      /* team size at most */
    int64_t max_bytes;  /* message or vector bytes at most */
    int algo;
} rule;

static const rule barrier_table[] = {
    {INT_MAX, INT64_MAX, BARRIER_DISSEMINATION},
};
static const rule bcast_table[] = {
    {INT_MAX, INT64_MAX, BCAST_SHM_PIPELINED},
};
/* shm_flat moves every input to every member: best while inputs are small. */
static const rule reduce_table[] = {
    {INT_MAX, 2048, REDUCE_SHM_FLAT},
    {INT_MAX, INT64_MAX, REDUCE_SHM_SLICES},
};

static int forced_barrier = -1, forced_bcast = -1, forced_reduce = -1, forced_allreduce = -1;

static int lookup(const rule *table, size_t n, int procs, int64_t bytes)
{
    for (size_t i = 0; i < n; i++)
        if (procs <= table[i].max_procs && bytes <= table[i].max_bytes)
            return table[i].algo;
    return table[n - 1].algo;
}
#define LOOKUP(table, procs, bytes) lookup(table, sizeof table / sizeof table[0], procs, bytes)

static int forced(int *cache, const fmpl_tunable *t, const char *const *names)
{
    if (*cache < 0)
        *cache = fmpl_tunable_choice(t, names);
    return *cache;
}

int fmpl_coll_barrier(fmpl_team *t)
{
    if (t->size == 1)
        return FMPL_SUCCESS;
    int algo = forced(&forced_barrier, &tunable_barrier_algo, barrier_names);
    if (algo == ALGO_AUTO)
        algo = LOOKUP(barrier_table, t->size, 0);
    return algo == BARRIER_BINOMIAL ? fmpl_barrier_binomial(t) : fmpl_barrier_dissemination(t);
}

int fmpl_coll_bcast(fmpl_team *t, void *buf, int64_t size, int root)
{
    if (t->size == 1 || size == 0)
        return FMPL_SUCCESS;
    int algo = forced(&forced_bcast, &tunable_bcast_algo, bcast_names);
    if (algo == ALGO_AUTO)
        algo = LOOKUP(bcast_table, t->size, size);
    return algo == BCAST_BINOMIAL ? fmpl_bcast_binomial(t, buf, size, root)
                                  : fmpl_bcast_shm_pipelined(t, buf, size, root);
}

static int run_reduce(int algo, fmpl_team *t, void *buf, int64_t count, const fmpl_op *op,
                      int root, void *work)
{
    int64_t bytes = count * (int64_t)fmpl_op_elem_size(op);
    if (algo == ALGO_AUTO)
        algo = LOOKUP(reduce_table, t->size, bytes);
    /* The flat exchange holds every input at once: too large a vector
     * falls through to the slices. */
    if (algo == REDUCE_SHM_FLAT && bytes > fmpl_coll_area / 2)
        algo = REDUCE_SHM_SLICES;
    switch (algo) {
    case REDUCE_BINOMIAL:
        return fmpl_reduce_binomial(t, buf, count, op, root, work);
    case REDUCE_SHM_FLAT:
        return fmpl_reduce_shm_flat(t, buf, count, op, root);
    default:
        return fmpl_reduce_shm_slices(t, buf, count, op, root);
    }
}

int fmpl_coll_reduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, int root,
                     void *work)
{
    if (t->size == 1 || count == 0)
        return FMPL_SUCCESS;
    int algo = forced(&forced_reduce, &tunable_reduce_algo, reduce_names);
    return run_reduce(algo, t, buf, count, op, root, work);
}

int fmpl_coll_allreduce(fmpl_team *t, void *buf, int64_t count, const fmpl_op *op, void *work)
{
    if (t->size == 1 || count == 0)
        return FMPL_SUCCESS;
    int algo = forced(&forced_allreduce, &tunable_allreduce_algo, reduce_names);
    return run_reduce(algo, t, buf, count, op, -1, work);
}

const char *fmpl_coll_describe_selection(void)
{
    static char text[512];
    snprintf(text, sizeof text,
             "barrier: dissemination; bcast: shm_pipelined; reduce/allreduce: shm_flat up to "
             "%lld bytes, shm_slices above (FMPL_*_ALGO overrides)",
             (long long)reduce_table[0].max_bytes);
    return text;
}
