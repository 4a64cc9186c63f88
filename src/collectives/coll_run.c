/* The drivers of resumable collective algorithms (coll_run.h). */
#include "collectives/coll_run.h"
#include "progress/progress.h"

int fmpl_coll_algo_poll(fmpl_coll_algo *a)
{
    fmpl_coll_team *c = a->coll;
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
    fmpl_coll_team *c = a->coll;
    fmpl_coll_algo_enqueue(a);
    a->blocking = 1;
    if (c->run_turn != a->ticket)
        FMPL_WAIT_UNTIL(c->run_turn == a->ticket);
    int rc = a->body(a);
    c->run_turn++;
    return rc;
}

int fmpl_coll_all_reached(fmpl_coll_team *c, size_t field_offset, uint64_t value, int *cursor)
{
    for (; *cursor < c->size; ++*cursor) {
        if (*cursor == c->rank)
            continue;
        const fmpl_line *l = (const fmpl_line *)((char *)c->peer[*cursor] + field_offset);
        if (fmpl_line_get(l) < value)
            return 0;
    }
    return 1;
}

int fmpl_coll_exchange_ready(fmpl_coll_team *c, uint64_t s, int *cursor)
{
    uint64_t need = s > 2 ? s - 2 : 0;
    if (c->exchange_full > need)
        need = c->exchange_full;
    for (; *cursor < c->size; ++*cursor) {
        int p = *cursor;
        if (p == c->rank || c->fin_seen[p] >= need)
            continue;
        if ((c->fin_seen[p] = fmpl_line_get(&c->peer[p]->finished)) < need)
            return 0;
    }
    return 1;
}
