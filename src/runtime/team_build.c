/* Building and removing teams: the protocol- and collective-level state
 * behind a communicator of either API.
 *
 * World: every rank creates its areas, publishes their addresses (and the
 * world-wide staging rings and channels) in one bootstrap key-value entry,
 * fences, reads everybody's, connects, and meets the others in a barrier.
 * Split (collective over the parent team): one small allgather of
 * {color, key, team ids in use}; members of each color, ordered by (key,
 * parent rank), pick the lowest id free on all of them, create their areas,
 * and a second allgather over the parent carries the areas' addresses.
 * Peers write into a member's areas only after that second exchange, and
 * the areas are initialised before it, so no barrier is needed. */
#include "runtime/runtime.h"
#include "collectives/collectives.h"
#include "protocols/any_source.h"
#include "protocols/sender_match.h"
#include "protocols/staging.h"
#include "protocols/tag_match.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fmpl_team_count;

/* Addresses of one member's per-team areas, as exchanged. */
typedef struct team_areas {
    uint64_t slots, done, any, coll;
} team_areas;

static fmpl_team *team_new(int id, int rank, int size, int *world)
{
    fmpl_team *t = calloc(1, sizeof *t);
    if (!t) {
        free(world);
        return NULL;
    }
    t->id = id;
    t->rank = rank;
    t->size = size;
    t->world = world;
    t->count = fmpl_team_count;
    t->nidx = fmpl_team_count + FMPL_IDX_INTERNAL;
    return t;
}

void fmpl_team_free(fmpl_team *t)
{
    if (!t)
        return;
    fmpl_coll_team_destroy(t);
    fmpl_tm_team_destroy(t);
    fmpl_any_team_destroy(t);
    fmpl_sm_team_destroy(t);
    if (fmpl_teams[t->id] == t)
        fmpl_teams[t->id] = NULL;
    free(t->world);
    free(t);
}

/* Create the team's local areas; *mine receives their addresses. */
static int team_create_areas(fmpl_team *t, void *ma, void *fa, team_areas *mine)
{
    fmpl_raddr slots, done, any, coll;
    int rc = fmpl_sm_team_create(t, ma, fa);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tm_team_create(t);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_any_team_create(t, &any);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_team_create(t, &coll);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_sm_team_local_areas(t, &slots, &done);
    mine->slots = fmpl_raddr_pack(slots);
    mine->done = fmpl_raddr_pack(done);
    mine->any = fmpl_raddr_pack(any);
    mine->coll = fmpl_raddr_pack(coll);
    return FMPL_SUCCESS;
}

static int team_connect(fmpl_team *t, const team_areas *all)
{
    int n = t->size;
    fmpl_raddr *r = calloc((size_t)n * 4, sizeof *r);
    if (!r)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory to connect a team");
    for (int p = 0; p < n; p++) {
        int w = t->world[p];
        r[p] = fmpl_raddr_unpack(all[p].slots, w);
        r[n + p] = fmpl_raddr_unpack(all[p].done, w);
        r[2 * n + p] = fmpl_raddr_unpack(all[p].any, w);
        r[3 * n + p] = fmpl_raddr_unpack(all[p].coll, w);
    }
    int rc = fmpl_sm_team_connect(t, r, r + n);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_any_team_connect(t, r + 2 * n);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_team_connect(t, r + 3 * n);
    free(r);
    return rc;
}

int fmpl_team_build_world(fmpl_bootstrap *bs, void *ma, void *fa, int count)
{
    fmpl_team_count = count;
    int *world = malloc((size_t)bs->size * sizeof *world);
    fmpl_team *t = world ? team_new(FMPL_COMM_WORLD, bs->rank, bs->size, world) : NULL;
    if (!t)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for FMPL_COMM_WORLD");
    for (int r = 0; r < bs->size; r++)
        world[r] = r;
    fmpl_teams[FMPL_COMM_WORLD] = t;

    team_areas mine;
    fmpl_raddr stage, chan;
    int rc = team_create_areas(t, ma, fa, &mine);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_stage_init(&stage);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tm_init(&chan);
    if (rc != FMPL_SUCCESS)
        return rc;

    char value[FMPL_BOOTSTRAP_VALUE_MAX];
    snprintf(value, sizeof value, "%llx,%llx,%llx,%llx,%llx,%llx",
             (unsigned long long)mine.slots, (unsigned long long)mine.done,
             (unsigned long long)mine.any, (unsigned long long)mine.coll,
             (unsigned long long)fmpl_raddr_pack(stage), (unsigned long long)fmpl_raddr_pack(chan));
    if (bs->put(bs, "areas", value) != FMPL_SUCCESS || bs->fence(bs) != FMPL_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "exchanging area addresses failed");

    team_areas *all = calloc((size_t)bs->size, sizeof *all);
    fmpl_raddr *stages = calloc((size_t)bs->size, sizeof *stages);
    fmpl_raddr *chans = calloc((size_t)bs->size, sizeof *chans);
    if (!all || !stages || !chans) {
        free(all);
        free(stages);
        free(chans);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d peers", bs->size);
    }
    for (int r = 0; r < bs->size && rc == FMPL_SUCCESS; r++) {
        unsigned long long a, b, c, d, e, f;
        if (bs->get(bs, r, "areas", value, sizeof value) != FMPL_SUCCESS ||
            sscanf(value, "%llx,%llx,%llx,%llx,%llx,%llx", &a, &b, &c, &d, &e, &f) != 6) {
            rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "rank %d published no area addresses", r);
            break;
        }
        all[r] = (team_areas){a, b, c, d};
        stages[r] = fmpl_raddr_unpack(e, r);
        chans[r] = fmpl_raddr_unpack(f, r);
    }
    if (rc == FMPL_SUCCESS)
        rc = team_connect(t, all);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_stage_connect(stages);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_tm_connect(chans);
    free(all);
    free(stages);
    free(chans);
    if (rc == FMPL_SUCCESS && bs->barrier(bs) != FMPL_SUCCESS)
        rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "start-up barrier failed");
    return rc;
}

/* What each parent member contributes to the membership exchange. */
typedef struct join_info {
    int32_t color;
    int32_t key;
    uint8_t used[FMPL_MAX_TEAMS / 8]; /* team ids in use on that rank */
} join_info;

typedef struct member_order {
    int key, rank;
} member_order;

static int compare_members(const void *a, const void *b)
{
    const member_order *x = a, *y = b;
    if (x->key != y->key)
        return (x->key > y->key) - (x->key < y->key);
    return (x->rank > y->rank) - (x->rank < y->rank);
}

int fmpl_team_split(fmpl_team *parent, int color, int key, fmpl_team **out)
{
    *out = NULL;
    int n = parent->size;
    join_info me = {.color = color, .key = key};
    for (int id = 0; id < FMPL_MAX_TEAMS; id++)
        if (fmpl_teams[id])
            me.used[id / 8] |= (uint8_t)(1u << (id % 8));
    join_info *all = calloc((size_t)n, sizeof *all);
    team_areas *areas = calloc((size_t)n, sizeof *areas);
    member_order *order = calloc((size_t)n, sizeof *order);
    int *members = calloc((size_t)n, sizeof *members);
    if (!all || !areas || !order || !members) {
        free(all);
        free(areas);
        free(order);
        free(members);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d ranks", n);
    }
    int rc = fmpl_coll_allgather_small(parent, &me, sizeof me, all);

    /* Members: same color, ordered by (key, parent rank).  Id: lowest free
     * on every member. */
    int size = 0, rank = -1, id = -1;
    if (color >= 0) {
        for (int r = 0; r < n; r++)
            if (all[r].color == color)
                order[size++] = (member_order){all[r].key, r};
        qsort(order, (size_t)size, sizeof *order, compare_members);
        for (int m = 0; m < size; m++) {
            members[m] = order[m].rank;
            if (members[m] == parent->rank)
                rank = m;
        }
        for (int cand = 1; cand < FMPL_MAX_TEAMS && id < 0; cand++) {
            int free_everywhere = 1;
            for (int m = 0; m < size; m++)
                if (all[members[m]].used[cand / 8] & (1u << (cand % 8)))
                    free_everywhere = 0;
            if (free_everywhere)
                id = cand;
        }
        if (id < 0)
            rc = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "all %d communicator ids are in use",
                            FMPL_MAX_TEAMS);
    }
    fmpl_team *t = NULL;
    team_areas mine = {0};
    if (rc == FMPL_SUCCESS && id > 0) {
        int *world_ranks = malloc((size_t)size * sizeof *world_ranks);
        if (world_ranks)
            for (int m = 0; m < size; m++)
                world_ranks[m] = parent->world[members[m]];
        t = world_ranks ? team_new(id, rank, size, world_ranks) : NULL;
        rc = t ? team_create_areas(t, NULL, NULL, &mine)
               : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a communicator");
    }
    /* Every parent member takes part in the second exchange, member or not. */
    int rc2 = fmpl_coll_allgather_small(parent, &mine, sizeof mine, areas);
    if (rc == FMPL_SUCCESS)
        rc = rc2;
    if (rc == FMPL_SUCCESS && t) {
        for (int m = 0; m < size; m++)
            areas[m] = areas[members[m]];
        rc = team_connect(t, areas);
    }
    if (rc == FMPL_SUCCESS && t) {
        fmpl_teams[id] = t;
        *out = t;
    } else if (t) {
        fmpl_team_free(t);
    }
    free(all);
    free(areas);
    free(order);
    free(members);
    return rc;
}
