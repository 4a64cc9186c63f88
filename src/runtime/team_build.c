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
 * the areas are initialised before it, so no barrier is needed.  The new
 * team is entered in fmpl_teams before the second exchange: a member that
 * finishes first may send on the new team at once, and a tag-matched
 * message for an id not yet in the table would be dropped.
 * From members (collective over the members only): the same two steps
 * through a leader with point-to-point messages, fmpl_team_from_members.
 *
 * Retiring (deferred free, fmpl_team_retire): a member that frees a team
 * does not wait for the others.  It adds one to member 0's `retired` line
 * (an atomic add into member 0's collective scratch, release order: every
 * write it made on the team comes before) and keeps its state.  Once a
 * member sees retired == size, no member will write into any area of the
 * team again: it drains the channels (messages sent before a peer retired
 * are handled while the id still names this team), releases its state, and
 * member k > 0 then adds one to member 0's `reclaimed` line, its last access
 * to member 0's memory.  Member 0 releases its own state last, once
 * reclaimed == size - 1.  A retired team's id stays in this member's table
 * until then, so no new team can take the id while any member of the old
 * one may still use it. */
#include "runtime/runtime.h"
#include "collectives/collectives.h"
#include "protocols/any_source.h"
#include "protocols/sender_match.h"
#include "protocols/staging.h"
#include "protocols/tag_match.h"
#include "progress/progress.h"
#include "collectives/coll_team.h"
#include "base/error.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fmpl_team_count;

/* Teams this member freed whose other members have not all freed them. */
static fmpl_team *retired_teams;

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
    if (t->retired) { /* off the retired list */
        fmpl_team **link = &retired_teams;
        while (*link && *link != t)
            link = &(*link)->next_retired;
        if (*link)
            *link = t->next_retired;
    }
    fmpl_coll_team_destroy(t);
    fmpl_tm_team_destroy(t);
    fmpl_any_team_destroy(t);
    fmpl_sm_team_destroy(t);
    if (fmpl_teams[t->id] == t)
        fmpl_teams[t->id] = NULL;
    free(t->world);
    free(t);
}

void fmpl_team_retire(fmpl_team *t)
{
    if (!t || t->retired)
        return;
    t->retired = 1;
    fmpl_coll_scratch *leader = t->coll->peer[0];
    atomic_fetch_add_explicit(&leader->retired.v, 1, memory_order_release);
    t->next_retired = retired_teams;
    retired_teams = t;
    fmpl_team_reclaim_retired();
}

/* Has every member retired t, and (member 0) released its state? */
static int team_reclaimable(const fmpl_team *t)
{
    fmpl_coll_scratch *leader = t->coll->peer[0];
    uint64_t retired = atomic_load_explicit(&leader->retired.v, memory_order_acquire);
    if (retired < (uint64_t)t->size)
        return 0;
    if (t->rank != 0)
        return 1;
    uint64_t others = atomic_load_explicit(&leader->reclaimed.v, memory_order_acquire);
    return others == (uint64_t)t->size - 1;
}

void fmpl_team_reclaim_retired(void)
{
    fmpl_team **link = &retired_teams;
    int drained = 0;
    while (*link) {
        fmpl_team *t = *link;
        if (!team_reclaimable(t)) {
            link = &t->next_retired;
            continue;
        }
        if (!drained) {
            fmpl_progress();
            drained = 1;
        }
        fmpl_coll_scratch *leader = t->coll->peer[0];
        int rank = t->rank;
        fmpl_team_free(t); /* takes it off the list */
        if (rank != 0)
            atomic_fetch_add_explicit(&leader->reclaimed.v, 1, memory_order_release);
    }
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
    fmpl_team_reclaim_retired(); /* their ids may be free again */
    *out = NULL;
    int n = parent->size;
    join_info me = {.color = color, .key = key};
    for (int id = 0; id < FMPL_MAX_TEAMS; id++)
        if (fmpl_teams[id])
            me.used[id / 8] |= (uint8_t)(1u << (id % 8));
    join_info *all = calloc((size_t)n, sizeof *all);
    /* [0, n): as gathered, by parent rank; [n, 2n): the members' in team
     * order (a separate half: team order need not follow parent order). */
    team_areas *areas = calloc(2 * (size_t)n, sizeof *areas);
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
        if (rc == FMPL_SUCCESS)
            fmpl_teams[id] = t; /* before peers can send on it (see the top) */
    }
    /* Every parent member takes part in the second exchange, member or not. */
    int rc2 = fmpl_coll_allgather_small(parent, &mine, sizeof mine, areas);
    if (rc == FMPL_SUCCESS)
        rc = rc2;
    if (rc == FMPL_SUCCESS && t) {
        for (int m = 0; m < size; m++)
            areas[n + m] = areas[members[m]];
        rc = team_connect(t, areas + n);
    }
    if (rc == FMPL_SUCCESS && t)
        *out = t;
    else if (t)
        fmpl_team_free(t); /* leaves fmpl_teams too */
    free(all);
    free(areas);
    free(order);
    free(members);
    return rc;
}

/* ------------------------------------------------------------ from members */

/* Messages of fmpl_team_from_members, sender-matched on the parent's
 * internal index FMPL_IDX_BUILD (invisible to either API's messages). */
typedef struct build_join {
    int32_t tag;
    int32_t status;                   /* FMPL_SUCCESS or the member's error */
    uint8_t used[FMPL_MAX_TEAMS / 8]; /* team ids in use on the member */
} build_join;

typedef struct build_id {
    int32_t status;                   /* agreed: go on, or every member fails */
    int32_t id;
} build_id;

typedef struct build_areas {
    int32_t status;
    int32_t pad;
    team_areas areas;
} build_areas;

static int build_send(fmpl_team *parent, const void *buf, int64_t size, int dst, int idx)
{
    int rc = fmpl_sm_isend(parent, buf, size, dst, idx);
    return rc == FMPL_SUCCESS ? fmpl_sm_send_wait(parent, dst, idx) : rc;
}

static int build_recv(fmpl_team *parent, void *buf, int64_t size, int src, int idx)
{
    int rc = fmpl_sm_irecv(parent, buf, size, src, idx);
    return rc == FMPL_SUCCESS ? fmpl_sm_recv_wait(parent, src, idx, NULL) : rc;
}

/* Leader to every other member, the sends overlapping. */
static int build_send_all(fmpl_team *parent, int n, const int *members, const void *buf,
                          int64_t size, int idx)
{
    int rc = FMPL_SUCCESS, sent = 0;
    for (int m = 1; m < n && rc == FMPL_SUCCESS; m++, sent++)
        rc = fmpl_sm_isend(parent, buf, size, members[m], idx);
    for (int m = 1; m <= sent; m++) {
        int rc2 = fmpl_sm_send_wait(parent, members[m], idx);
        if (rc == FMPL_SUCCESS)
            rc = rc2;
    }
    return rc;
}

/* Collective over the members only (MPI_Comm_create_group).  The leader is
 * members[0]; messages are sender-matched point-to-point on the parent's
 * internal index FMPL_IDX_BUILD, each waited for before the next on the
 * same pair, so consecutive calls cannot mix.
 *   1. every member sends the leader {tag, status, team ids in use}
 *   2. the leader checks the tags, picks the lowest id free on every member
 *      and sends {status, id} to each; a failure so far ends every member
 *      here with the same error
 *   3. every member creates its team and areas (initialised), enters the
 *      team in fmpl_teams (as split does, so no early message is dropped)
 *      and sends the leader {status, area addresses}
 *   4. the leader sends every member {status, all area addresses}; each
 *      connects, or, if any member failed, frees its team
 * The invariant of split holds: peers write into a member's areas only
 * after step 4, and the areas were initialised before step 3.  Buffers for
 * step 4 are allocated before step 1, so a member that lacks memory says
 * so in step 1 and nobody is left waiting. */
int fmpl_team_from_members(fmpl_team *parent, int n, const int *members, int tag,
                           fmpl_team **out)
{
    *out = NULL;
    fmpl_team_reclaim_retired(); /* their ids may be free again */
    int idx = fmpl_team_internal_index(parent, FMPL_IDX_BUILD);
    int pos = -1;
    for (int m = 0; m < n; m++) {
        if (members[m] < 0 || members[m] >= parent->size)
            return FMPL_ERROR(FMPL_ERR_RANK, "member %d is not a rank of the parent (size %d)",
                              members[m], parent->size);
        if (members[m] == parent->rank)
            pos = m;
    }
    if (pos < 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "this process is not among the %d members", n);
    int leader = members[0];

    /* Step 4's table: {status, pad} then n team_areas. */
    size_t table_bytes = sizeof(build_areas) + (size_t)n * sizeof(team_areas);
    build_areas *table = malloc(table_bytes);
    int *world_ranks = malloc((size_t)n * sizeof *world_ranks);
    build_join me = {.tag = tag, .status = FMPL_SUCCESS};
    if (!table || !world_ranks)
        me.status = FMPL_ERR_NO_MEMORY;
    for (int id = 0; id < FMPL_MAX_TEAMS; id++)
        if (fmpl_teams[id])
            me.used[id / 8] |= (uint8_t)(1u << (id % 8));

    /* 1-2: join and id */
    build_id agreed = {.status = FMPL_SUCCESS, .id = -1};
    fmpl_team *t = NULL;
    int rc;
    if (pos == 0) {
        build_join all = me, other;
        rc = FMPL_SUCCESS;
        for (int m = 1; m < n && rc == FMPL_SUCCESS; m++) {
            rc = build_recv(parent, &other, sizeof other, members[m], idx);
            if (rc != FMPL_SUCCESS)
                break;
            if (other.status != FMPL_SUCCESS && all.status == FMPL_SUCCESS)
                all.status = other.status;
            if (other.tag != tag && all.status == FMPL_SUCCESS)
                all.status = FMPL_ERROR(FMPL_ERR_ARG, "members passed tags %d and %d", tag,
                                        other.tag);
            for (int b = 0; b < FMPL_MAX_TEAMS / 8; b++)
                all.used[b] |= other.used[b];
        }
        if (rc != FMPL_SUCCESS)
            goto out; /* a protocol failure: nothing can be agreed */
        agreed.status = all.status;
        for (int cand = 1; cand < FMPL_MAX_TEAMS && agreed.id < 0; cand++)
            if (!(all.used[cand / 8] & (1u << (cand % 8))))
                agreed.id = cand;
        if (agreed.id < 0 && agreed.status == FMPL_SUCCESS)
            agreed.status = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "all %d communicator ids are in use",
                                       FMPL_MAX_TEAMS);
        rc = build_send_all(parent, n, members, &agreed, sizeof agreed, idx);
    } else {
        rc = build_send(parent, &me, sizeof me, leader, idx);
        if (rc == FMPL_SUCCESS)
            rc = build_recv(parent, &agreed, sizeof agreed, leader, idx);
    }
    if (rc == FMPL_SUCCESS)
        rc = agreed.status;
    if (rc != FMPL_SUCCESS)
        goto out;

    /* 3: the team, its areas, and their addresses to the leader */
    for (int m = 0; m < n; m++)
        world_ranks[m] = parent->world[members[m]];
    t = team_new(agreed.id, pos, n, world_ranks);
    world_ranks = NULL; /* the team's now (team_new frees it on failure) */
    build_areas mine = {.status = FMPL_SUCCESS};
    mine.status = t ? team_create_areas(t, NULL, NULL, &mine.areas)
                    : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a communicator");
    if (mine.status == FMPL_SUCCESS)
        fmpl_teams[agreed.id] = t;

    /* 4: the table */
    if (pos == 0) {
        table->status = mine.status;
        team_areas *areas = (team_areas *)(table + 1);
        areas[0] = mine.areas;
        for (int m = 1; m < n && rc == FMPL_SUCCESS; m++) {
            build_areas other;
            rc = build_recv(parent, &other, sizeof other, members[m], idx);
            if (rc == FMPL_SUCCESS && other.status != FMPL_SUCCESS &&
                table->status == FMPL_SUCCESS)
                table->status = other.status;
            areas[m] = other.areas;
        }
        if (rc == FMPL_SUCCESS)
            rc = build_send_all(parent, n, members, table, (int64_t)table_bytes, idx);
    } else {
        rc = build_send(parent, &mine, sizeof mine, leader, idx);
        if (rc == FMPL_SUCCESS)
            rc = build_recv(parent, table, (int64_t)table_bytes, leader, idx);
    }
    if (rc == FMPL_SUCCESS)
        rc = table->status;
    if (rc == FMPL_SUCCESS)
        rc = team_connect(t, (team_areas *)(table + 1));
    if (rc == FMPL_SUCCESS)
        *out = t;
    else
        fmpl_team_free(t); /* leaves fmpl_teams too */
out:
    free(table);
    free(world_ranks);
    return rc;
}
