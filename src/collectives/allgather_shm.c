/* Small allgather through shared memory (used to build communicators): the
 * exchange of reduce_shm_flat.c with "copy" in place of "combine".
 *   1. fmpl_coll_exchange_ready(s)
 *   2. copy my bytes into input half s % 2; release-store posted[s % 2] = s
 *   3. wait for every member's posted[s % 2] >= s; copy each member's bytes
 *   4. release-store finished = s
 * Blocking only, as a run (coll_run.h) so that it takes its turn among the
 * team's blocking collectives (FMPL_COLL_SCHEDULES=1 runs those as
 * schedules). */
#include "collectives/collectives.h"
#include "base/error.h"

#include <string.h>

typedef struct allgather_run {
    fmpl_coll_algo a;
    const void *mine;
    int64_t len;
    char *all;
    uint64_t s;
    int cursor;
} allgather_run;

static char *input_of(fmpl_coll_team *c, int p, uint64_t s)
{
    return fmpl_coll_input(fmpl_coll_areas(c, p)) + (s % 2) * (uint64_t)(fmpl_coll_area / 2);
}

static int body(fmpl_coll_algo *a)
{
    allgather_run *st = (allgather_run *)a;
    fmpl_team *t = a->team;
    fmpl_coll_team *c = a->coll;
    FMPL_RUN_BEGIN(a);
    st->s = ++c->exchange_seq;
    st->cursor = 0;
    FMPL_RUN_AWAIT(a, fmpl_coll_exchange_ready(c, st->s, &st->cursor));
    memcpy(input_of(c, t->rank, st->s), st->mine, (size_t)st->len);
    fmpl_line_set(&c->mine->posted[st->s % 2], st->s);
    st->cursor = 0;
    FMPL_RUN_AWAIT(a, FMPL_COLL_ALL_REACHED(c, posted[st->s % 2], st->s, &st->cursor));
    for (int p = 0; p < t->size; p++)
        memcpy(st->all + (int64_t)p * st->len, input_of(c, p, st->s), (size_t)st->len);
    fmpl_line_set(&c->mine->finished, st->s);
    FMPL_RUN_END(a);
}

int fmpl_coll_allgather_small(fmpl_team *t, const void *mine, int64_t len, void *all)
{
    if (len * t->size > fmpl_coll_area / 2)
        return FMPL_ERROR(FMPL_ERR_INTERNAL, "allgather of %lld bytes per member is too large",
                          (long long)len);
    if (t->coll->net) /* members' scratch is not all in reach: point-to-point */
        return fmpl_coll_allgather(t, mine, all, len, 0);
    allgather_run st = {.mine = mine, .len = len, .all = all};
    fmpl_coll_algo_init(&st.a, body, t);
    return fmpl_coll_run(&st.a);
}
