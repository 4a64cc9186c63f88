/* Collective scratch blocks: allocation, exchange of their addresses,
 * pre-built barrier flag writes.  See coll_team.h for the layout. */
#include "collectives/coll_team.h"
#include "base/wait.h"
#include "collectives/barrier_split.h"
#include "progress/progress.h"
#include "collectives/sched_nodes.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_bcast_chunk, "FMPL_BCAST_CHUNK", "64k",
             "bytes per staging chunk of the pipelined shared-memory broadcast (4 chunks)");
FMPL_TUNABLE(tunable_coll_area, "FMPL_COLL_AREA", "256k",
             "bytes of each member's reduction input and output areas per communicator");

int64_t fmpl_bcast_chunk;
int64_t fmpl_coll_area;

int fmpl_coll_init(void)
{
    fmpl_bcast_chunk = (fmpl_tunable_long(&tunable_bcast_chunk) + 63) & ~63ll;
    if (fmpl_bcast_chunk < 4096)
        fmpl_bcast_chunk = 4096;
    fmpl_coll_area = (fmpl_tunable_long(&tunable_coll_area) + 127) & ~127ll;
    if (fmpl_coll_area < 4096)
        fmpl_coll_area = 4096;
    fmpl_progress_barrier_hook.poll = fmpl_barrier_split_progress;
    return FMPL_SUCCESS;
}

/* Header lines, then the pairwise engine's prod[size], cons[size] lines and
 * table[2][2][size] entries, then plan_cons[size] (to a whole line). */
static size_t header_bytes(int size)
{
    size_t plan_cons = ((size_t)size * sizeof(uint64_t) + 63) / 64 * 64;
    return sizeof(fmpl_coll_scratch) + 2 * (size_t)size * sizeof(fmpl_line) +
           4 * (size_t)size * sizeof(fmpl_coll_entry) + plan_cons;
}

/* Broadcast ring, input and output areas. */
static size_t areas_bytes(void)
{
    return FMPL_BCAST_SLOTS * (size_t)fmpl_bcast_chunk + 2 * (size_t)fmpl_coll_area;
}

/* The private arrays of one state (blocking or nonblocking); offs and
 * bcounts only in the blocking one (builders read them while building, and
 * building never waits, so one pair serves both kinds). */
static int state_alloc(fmpl_coll_team *c, const fmpl_team *t, fmpl_coll_scratch *mine,
                       int nonblocking)
{
    size_t n = (size_t)t->size;
    c->size = t->size;
    c->rank = t->rank;
    c->world = t->world;
    c->mine = mine;
    while ((1 << c->rounds) < t->size)
        c->rounds++;
    c->peer = calloc(n, sizeof *c->peer);
    c->areas = calloc(n, sizeof *c->areas);
    c->pairs = calloc(2 * n, sizeof(fmpl_pair_state));
    c->fin_seen = calloc(n, sizeof *c->fin_seen);
    c->peer_at = calloc(n, sizeof *c->peer_at);
    c->plans = calloc(n, sizeof *c->plans);
    if (!nonblocking) {
        c->offs = calloc(n + 1, sizeof *c->offs);
        c->bcounts = calloc(n, sizeof *c->bcounts);
    }
    return c->peer && c->areas && c->pairs && c->fin_seen && c->peer_at && c->plans &&
           (nonblocking || (c->offs && c->bcounts));
}

static void state_release(fmpl_coll_team *c)
{
    if (c->areas && c->areas[c->rank])
        fmpl_fab_free(c->areas[c->rank]);
    free(c->areas);
    if (c->tmp_shared)
        fmpl_fab_free(c->tmp);
    else
        free(c->tmp);
    free(c->peer);
    free(c->peer_at);
    free(c->pairs);
    free(c->offs);
    free(c->bcounts);
    free(c->fin_seen);
    free(c->plans);
}

int fmpl_coll_team_create(fmpl_team *t, fmpl_raddr *mine)
{
    /* [0] the blocking state, [1] the nonblocking one; their headers are
     * one block, the nonblocking header header_bytes() after the blocking
     * one, so that members exchange one address. */
    fmpl_coll_team *c = calloc(2, sizeof *c);
    if (!c)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for collective state");
    t->coll = c;
    c->nbc = c + 1;
    size_t hb = header_bytes(t->size);
    char *headers = fmpl_fab_alloc(2 * hb);
    int ok = state_alloc(c, t, (fmpl_coll_scratch *)headers, 0);
    ok &= state_alloc(c->nbc, t, headers ? (fmpl_coll_scratch *)(headers + hb) : NULL, 1);
    if (!headers || !ok) {
        fmpl_coll_team_destroy(t);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %zu bytes of collective scratch",
                          2 * hb);
    }
    /* Every line starts at 0; prod/cons below every (s << 32) + 1 a reader
     * waits for. */
    memset(headers, 0, 2 * hb);
    *mine = fmpl_fab_raddr(c->mine);
    return FMPL_SUCCESS;
}

char *fmpl_coll_areas_resolve(fmpl_coll_team *c, int p)
{
    if (p != c->rank) {
        uint64_t packed = fmpl_line_get(&c->peer[p]->areas);
        c->areas[p] = packed ? fmpl_fab_ptr(fmpl_raddr_unpack(packed, c->world[p])) : NULL;
        if (!c->areas[p]) {
            fmpl_log_print("error", "member %d's collective areas are not published "
                                    "(collectives called in different orders?)", p);
            abort();
        }
        return c->areas[p];
    }
    char *a = fmpl_fab_alloc(areas_bytes());
    if (!a) {
        fmpl_log_print("error", "no memory in the shared heap for %zu bytes of collective "
                                "areas (FMPL_HEAP_SIZE, FMPL_COLL_AREA, FMPL_BCAST_CHUNK); the "
                                "other members would wait for this one forever",
                       areas_bytes());
        abort();
    }
    c->areas[p] = a;
    fmpl_line_set(&c->mine->areas, fmpl_raddr_pack(fmpl_fab_raddr(a)));
    return a;
}

/* One state's view of the members' headers (at `offset` in each member's
 * block) and its pre-built barrier flag writes. */
static void state_connect(fmpl_coll_team *c, const fmpl_coll_team *blocking,
                          const fmpl_raddr *scratch, size_t offset)
{
    c->cma_all = blocking->cma_all;
    c->net = blocking->net;
    c->nodes = blocking->nodes;
    for (int p = 0; p < c->size; p++) {
        c->peer_at[p] = scratch[p];
        c->peer_at[p].addr += offset;
        c->peer[p] = fmpl_fab_ptr(c->peer_at[p]);
    }
    /* Dissemination round k: signal rank + 2^k in its flag[k]. */
    for (int k = 0; k < c->rounds; k++) {
        fmpl_raddr r = c->peer_at[(c->rank + (1 << k)) % c->size];
        r.addr += offsetof(fmpl_coll_scratch, flag) + (size_t)k * sizeof(fmpl_line);
        fmpl_ctl_prepare(&c->diss[k], r);
    }
}

int fmpl_coll_team_connect(fmpl_team *t, const fmpl_raddr *scratch)
{
    fmpl_coll_team *c = t->coll;
    c->cma_all = 1;
    c->net = 0;
    c->spans_worlds = 0;
    for (int p = 0; p < t->size; p++) {
        c->spans_worlds |= (unsigned)fmpl_fab_world_index(t->world[p]) >= (unsigned)fmpl_fab.size;
        if (!fmpl_fab.peers[t->world[p]].cma)
            c->cma_all = 0;
        if (!fmpl_fab_ptr(scratch[p]) && fmpl_fab.peers[t->world[p]].net)
            c->net = 1;
        else if (!fmpl_fab_ptr(scratch[p]))
            return FMPL_ERROR(FMPL_ERR_INTERNAL, "member %d's collective scratch is not shared",
                              p);
    }
    /* Members of different worlds may judge loads and hosts differently
     * (each world's start-up saw only its own ranks): a team spanning
     * worlds takes the choices that need no agreement on them. */
    c->central_barrier = fmpl_oversubscribed && !c->spans_worlds;
    c->nodes = c->net && !c->spans_worlds ? fmpl_sched_nodes_shape(t) : 0;
    state_connect(c, c, scratch, 0);
    state_connect(c->nbc, c, scratch, header_bytes(t->size));
    return FMPL_SUCCESS;
}

void fmpl_coll_team_destroy(fmpl_team *t)
{
    fmpl_coll_team *c = t->coll;
    if (!c)
        return;
    fmpl_barrier_split_destroy(t);
    state_release(c);
    state_release(c->nbc);
    fmpl_fab_free(c->mine); /* both headers */
    free(c);
    t->coll = NULL;
}

char *fmpl_coll_tmp(fmpl_team *t)
{
    fmpl_coll_team *c = t->coll;
    if (c->tmp)
        return c->tmp;
    size_t bytes = 3 * (size_t)fmpl_coll_half();
    /* In the shared heap, peers' sends into it are plain copies; private
     * memory still works (CMA or staging), it is only slower. */
    c->tmp = fmpl_fab_alloc(bytes);
    c->tmp_shared = c->tmp != NULL;
    if (!c->tmp)
        c->tmp = aligned_alloc(64, bytes);
    if (!c->tmp)
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %zu bytes of collective work area", bytes);
    return c->tmp;
}
