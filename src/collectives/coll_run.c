/* The drivers of resumable collective algorithms (coll_run.h). */
#include "collectives/coll_run.h"
#include "progress/progress.h"

int fmpl_coll_algo_poll(fmpl_coll_algo *a)
{
    fmpl_coll_team *c = a->team->coll;
    if (a->unordered)
        return a->body(a);
    if (c->run_turn != a->ticket)
        return FMPL_RUN_PENDING;
    int rc = a->body(a);
    if (rc != FMPL_RUN_PENDING)
        c->run_turn++;
    return rc;
}

int fmpl_coll_run(fmpl_coll_algo *a)
{
    fmpl_coll_team *c = a->team->coll;
    fmpl_coll_algo_enqueue(a);
    a->blocking = 1;
    if (c->run_turn != a->ticket)
        FMPL_WAIT_UNTIL(c->run_turn == a->ticket);
    int rc = a->body(a);
    c->run_turn++;
    return rc;
}

int fmpl_coll_all_reached(fmpl_team *t, size_t field_offset, uint64_t value, int *cursor)
{
    for (; *cursor < t->size; ++*cursor) {
        if (*cursor == t->rank)
            continue;
        const fmpl_line *l = (const fmpl_line *)((char *)t->coll->peer[*cursor] + field_offset);
        if (fmpl_line_get(l) < value)
            return 0;
    }
    return 1;
}

int fmpl_coll_exchange_ready(fmpl_team *t, uint64_t s, int *cursor)
{
    fmpl_coll_team *c = t->coll;
    uint64_t need = s > 2 ? s - 2 : 0;
    if (c->exchange_full > need)
        need = c->exchange_full;
    for (; *cursor < t->size; ++*cursor) {
        int p = *cursor;
        if (p == t->rank || c->fin_seen[p] >= need)
            continue;
        if ((c->fin_seen[p] = fmpl_line_get(&c->peer[p]->finished)) < need)
            return 0;
    }
    return 1;
}
