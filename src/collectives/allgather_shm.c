/* Small allgather through shared memory (used to build communicators): the
 * exchange of reduce_shm_flat.c with "copy" in place of "combine".
 *   1. fmpl_coll_exchange_begin(s)
 *   2. copy my bytes into input half s % 2; release-store posted[s % 2] = s
 *   3. wait for every member's posted[s % 2] >= s; copy each member's bytes
 *   4. release-store finished = s */
#include "collectives/collectives.h"
#include "base/error.h"

#include <string.h>

static int run_fmpl_coll_allgather_small(fmpl_team *t, const void *mine, int64_t len, void *all)
{
    fmpl_coll_team *c = t->coll;
    if (len * t->size > fmpl_coll_area / 2)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "allgather of %lld bytes per member is too large",
                          (long long)len);
    uint64_t s = ++c->exchange_seq;
    fmpl_coll_exchange_begin(t, s);
    uint64_t half = (s % 2) * (uint64_t)(fmpl_coll_area / 2);
    memcpy(fmpl_coll_input(fmpl_coll_areas(c, t->rank)) + half, mine, (size_t)len);
    fmpl_line_set(&c->mine->posted[s % 2], s);
    FMPL_COLL_WAIT_ALL(t, posted[s % 2], s);
    for (int p = 0; p < t->size; p++)
        memcpy((char *)all + (int64_t)p * len, fmpl_coll_input(fmpl_coll_areas(c, p)) + half, (size_t)len);
    fmpl_line_set(&c->mine->finished, s);
    return FMPL_SUCCESS;
}

/* Legacy blocking body: in the team's order of runs (coll_run.h). */
int fmpl_coll_allgather_small(fmpl_team *t, const void *mine, int64_t len, void *all)
{
    fmpl_coll_turn_begin(t);
    int rc = run_fmpl_coll_allgather_small(t, mine, len, all);
    fmpl_coll_turn_end(t);
    return rc;
}
