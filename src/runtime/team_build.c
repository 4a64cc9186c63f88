/* Building and removing teams: the protocol- and collective-level state
 * behind a communicator of either API.
 *
 * Team ids are local (protocols/team.h): a new team takes the lowest free
 * entry of this process's table, and members learn each other's ids with
 * the area addresses.  Nothing has to be agreed, so any number of
 * creations may be in flight at once, on the same parent or on
 * overlapping ones.
 *
 * World: every rank creates its areas, publishes their addresses (and the
 * world-wide staging rings and channels) in one bootstrap key-value entry,
 * fences, reads everybody's, connects, and meets the others in a barrier.
 *
 * Other teams: one state machine (fmpl_team_build), driven by the progress
 * engine (progress/async.h), serves every creation, blocking ones being a
 * start and a wait.  Its messages are tag-matched point-to-point on the
 * parent with the library's tags (below -1, out of reach of MPI_ANY_TAG):
 *   JOIN   (split only) every parent member sends every other {seq, color,
 *          key} on FMPL_TM_TAG_BUILD_JOIN; members of each color, ordered
 *          by (key, parent rank), form the team.  Dup and create_group know
 *          the members already and skip this step.
 *   AREAS  every member creates the team (a local id, entered in fmpl_teams
 *          at once, so a message a fast member sends on it is queued, not
 *          dropped) and its areas (initialised), then sends every other
 *          member {seq, status, tag, area addresses, id}; once it has all,
 *          it connects, or, if any member failed, every member frees its
 *          team.  Peers write into a member's areas only after receiving
 *          its addresses, so no barrier is needed.
 * seq counts the creations started over the parent (fmpl_team.build_seq):
 * MPI requires every member to start them in the same order, so messages
 * of the k-th creation match the k-th receives (envelopes from one sender
 * on one tag match in order); the records carry seq to catch a program
 * that breaks the rule.  A split's AREAS step comes only after its JOIN,
 * when a dup started after it may have sent its AREAS already (on one
 * member and not on another), so splits send theirs on a tag of their own
 * (FMPL_TM_TAG_BUILD_SPLIT_AREAS): on each tag the steps are sent and
 * their receives posted in creation order, whatever mix of splits and dups
 * is in flight (a split's JOIN completes only after its predecessors', and
 * progress polls creations in start order).  create_group is collective over its members only:
 * its AREAS step goes on a tag of its own made from the user's tag
 * (FMPL_TM_TAG_BUILD_GROUP_TOP - tag mod SPAN: never mixing with the
 * parent's collective creations, nor with create_groups of other tags in
 * flight at once, as several threads may start them), carries the user's
 * tag, which every member checks, and no seq.
 *
 * Retiring (deferred free, fmpl_team_retire): a member that frees a team
 * does not wait for the others.  It adds one to member 0's `retired` line
 * (an atomic add into member 0's collective scratch, release order: every
 * write it made on the team comes before; over the network it settles its
 * writes first, since a flag may be seen before its write is complete,
 * fabric.h) and keeps its state.  Once a
 * member sees retired == size, no member will write into any area of the
 * team again: it drains the channels (messages sent before a peer retired
 * are handled while the id still names this team), releases its state, and
 * member k > 0 then adds one to member 0's `reclaimed` line, its last access
 * to member 0's memory.  Member 0 releases its own state last, once
 * reclaimed == size - 1.  A retired team's id stays in this member's table
 * until then, so no new team can take the id while any member of the old
 * one may still use it.
 * Member 0 may be a network peer: the adds are then remote fetch-adds and
 * the reads remote gets (while the network backend is up every member's
 * add goes through it, fabric.h). */
#include "runtime/runtime.h"
#include "collectives/collectives.h"
#include "protocols/any_source.h"
#include "protocols/sender_match.h"
#include "protocols/staging.h"
#include "protocols/tag_match.h"
#include "progress/progress.h"
#include "progress/async.h"
#include "collectives/coll_team.h"
#include "base/error.h"
#include "base/log.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fmpl_team_count;

/* Teams this member freed whose other members have not all freed them. */
static fmpl_team *retired_teams;

/* Addresses of one member's per-team areas, as exchanged. */
typedef struct team_areas {
    uint64_t slots, done, any, coll;
    uint64_t id; /* the member's id for the team */
    uint64_t slots_key, done_key; /* network keys of caller-provided (private)
                                     matching areas (fmpl_init's), else 0 */
} team_areas;

fmpl_team *fmpl_team_new(int id, int rank, int size, int *world)
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
    t->peer_id = calloc((size_t)size, sizeof *t->peer_id);
    if (!t->peer_id) {
        free(world);
        free(t);
        return NULL;
    }
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
    free(t->peer_id);
    free(t);
}

/* Add one to, or read, a line of member 0's scratch. */
static void leader_add(fmpl_team *t, size_t field)
{
    if (fmpl_fab.net_atomics) {
        fmpl_raddr r = t->coll->peer_at[0];
        r.addr += field;
        if (fmpl_fab_fetch_add(r, 1) == UINT64_MAX)
            fmpl_log_error("retiring a communicator: the add at member 0 failed");
        return;
    }
    atomic_fetch_add_explicit((_Atomic uint64_t *)((char *)t->coll->peer[0] + field), 1,
                              memory_order_release);
}

static uint64_t leader_get(const fmpl_team *t, size_t field)
{
    if (t->coll->peer[0])
        return atomic_load_explicit((_Atomic uint64_t *)((char *)t->coll->peer[0] + field),
                                    memory_order_acquire);
    fmpl_raddr r = t->coll->peer_at[0];
    r.addr += field;
    uint64_t v = 0;
    if (fmpl_fab_get(&v, sizeof v, r) != FMPL_SUCCESS)
        fmpl_log_error("retiring a communicator: reading member 0's count failed");
    return v;
}

int fmpl_team_spans_network(const fmpl_team *t) { return t->coll->net; }

void fmpl_team_retire(fmpl_team *t)
{
    if (!t || t->retired)
        return;
    t->retired = 1;
    /* Over the network a write may still be on its way when its flag is
     * seen: a flag can be placed in pieces, the last ones unchanged bytes
     * (fabric.h).  Every write of ours to the team's areas must be placed
     * before a member frees them and the memory serves something else, so
     * settle them before counting ourselves out. */
    if (t->coll->net && fmpl_fab_flush(-1) != FMPL_SUCCESS)
        fmpl_log_error("retiring a communicator: settling its network writes failed");
    leader_add(t, offsetof(fmpl_coll_scratch, retired));
    t->next_retired = retired_teams;
    retired_teams = t;
    fmpl_team_reclaim_retired();
}

/* Has every member retired t, and (member 0) released its state? */
static int team_reclaimable(const fmpl_team *t)
{
    if (t->pending_builds)
        return 0; /* MPI_Comm_free while an MPI_Comm_idup of it is pending */
    uint64_t retired = leader_get(t, offsetof(fmpl_coll_scratch, retired));
    if (retired < (uint64_t)t->size)
        return 0;
    if (t->rank != 0)
        return 1;
    uint64_t others = leader_get(t, offsetof(fmpl_coll_scratch, reclaimed));
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
        int rank = t->rank;
        if (rank != 0) /* before the free: the scratch addresses go with it */
            leader_add(t, offsetof(fmpl_coll_scratch, reclaimed));
        fmpl_team_free(t); /* takes it off the list */
    }
}

/* A retired team with members of other worlds whose counts go through the
 * network (a member reached over it, or every atomic of a job that has the
 * backend open: leader_add): its members read and add to member 0's counts
 * until it is reclaimed, and nothing else holds their processes' endpoints
 * open until then (each world's MPI_Finalize waits for its own world only). */
static int retired_across_network(void)
{
    for (fmpl_team *t = retired_teams; t; t = t->next_retired)
        if (t->coll->spans_worlds && (t->coll->net || fmpl_fab.net_atomics))
            return 1;
    return 0;
}

void fmpl_team_reclaim_before_leaving(void)
{
    fmpl_waiter w = FMPL_WAITER_INIT;
    while (retired_across_network()) {
        fmpl_team_reclaim_retired();
        if (!fmpl_progress())
            fmpl_wait_once(&w);
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
    mine->id = (uint64_t)t->id;
    mine->slots_key = slots.key;
    mine->done_key = done.key;
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
        r[p].key = all[p].slots_key;
        r[n + p] = fmpl_raddr_unpack(all[p].done, w);
        r[n + p].key = all[p].done_key;
        r[2 * n + p] = fmpl_raddr_unpack(all[p].any, w);
        r[3 * n + p] = fmpl_raddr_unpack(all[p].coll, w);
        t->peer_id[p] = (int)all[p].id;
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
    fmpl_team *t = world ? fmpl_team_new(FMPL_COMM_WORLD, bs->rank, bs->size, world) : NULL;
    if (!t)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for FMPL_COMM_WORLD");
    for (int r = 0; r < bs->size; r++)
        world[r] = bs->universe_base + r; /* team ranks are world ranks; the peers
                                             universe ranks */
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
    snprintf(value, sizeof value, "%llx,%llx,%llx,%llx,%llx,%llx,%llx,%llx",
             (unsigned long long)mine.slots, (unsigned long long)mine.done,
             (unsigned long long)mine.any, (unsigned long long)mine.coll,
             (unsigned long long)fmpl_raddr_pack(stage), (unsigned long long)fmpl_raddr_pack(chan),
             (unsigned long long)mine.slots_key, (unsigned long long)mine.done_key);
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
        unsigned long long a, b, c, d, e, f, g, h;
        if (bs->get(bs, world[r], "areas", value, sizeof value) != FMPL_SUCCESS ||
            sscanf(value, "%llx,%llx,%llx,%llx,%llx,%llx,%llx,%llx", &a, &b, &c, &d, &e, &f, &g,
                   &h) != 8) {
            rc = FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "rank %d published no area addresses", r);
            break;
        }
        all[r] = (team_areas){a, b, c, d, FMPL_COMM_WORLD, g, h};
        stages[r] = fmpl_raddr_unpack(e, world[r]);
        chans[r] = fmpl_raddr_unpack(f, world[r]);
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

/* ------------------------------------------------------------ creation */

/* Records of the creation protocol (see the top). */
typedef struct build_join {
    uint64_t seq;
    int32_t color, key;
} build_join;

typedef struct build_areas {
    uint64_t seq;
    int32_t status;   /* FMPL_SUCCESS, or why this member has no team */
    int32_t user_tag; /* create_group's tag */
    team_areas areas;
} build_areas;

enum { BUILD_JOIN = 1, BUILD_AREAS, BUILD_DONE };

struct fmpl_team_build {
    fmpl_async async;    /* first: the engine hands back its address */
    fmpl_team *parent;
    int state;
    int rc;              /* the first error */
    int tag;             /* tag of the AREAS step */
    int user_tag;        /* create_group's tag (checked), else 0 */
    int check_seq;       /* records must carry seq (collective over the parent) */
    uint64_t seq;
    int n, pos;          /* the new team's size, my position in it */
    int *members;        /* [parent size] parent rank of each member, team order */
    build_join my_join, *joins;      /* [parent size] by parent rank */
    build_areas my_areas, *areas;    /* [parent size] by team rank */
    fmpl_tm_req *reqs;   /* [2 * parent size]: this step's receives and sends */
    int nreqs;
    fmpl_team *team;
};

static void keep_error(fmpl_team_build *b, int rc)
{
    if (rc != FMPL_SUCCESS && b->rc == FMPL_SUCCESS)
        b->rc = rc;
}

/* One all-to-all step among `peers` (parent ranks; peers[me] is this
 * process): `mine` goes to every other, `all[i]` receives peer i's record
 * (stride `size`); receives are posted before sends.  Every member's buffers
 * stay in *b until the step completes. */
static void exchange_start(fmpl_team_build *b, const void *mine, size_t size, void *all,
                           const int *peers, int npeers, int me, int tag)
{
    b->nreqs = 0;
    memcpy((char *)all + (size_t)me * size, mine, size);
    for (int i = 0; i < npeers; i++)
        if (i != me)
            keep_error(b, fmpl_tm_irecv(&b->reqs[b->nreqs++], b->parent,
                                        (char *)all + (size_t)i * size, (int64_t)size,
                                        peers[i], tag));
    for (int i = 0; i < npeers; i++)
        if (i != me)
            keep_error(b, fmpl_tm_isend(&b->reqs[b->nreqs++], b->parent, mine, (int64_t)size,
                                        peers[i], tag, FMPL_TM_MODE_STANDARD));
}

static int exchange_done(fmpl_team_build *b)
{
    for (int i = 0; i < b->nreqs; i++)
        if (!b->reqs[i].complete)
            return 0;
    for (int i = 0; i < b->nreqs; i++)
        keep_error(b, b->reqs[i].st_error);
    return 1;
}

/* Lowest free entry of this process's team table (0 is the world's). */
static int local_free_id(void)
{
    for (int id = 1; id < FMPL_MAX_TEAMS; id++)
        if (!fmpl_teams[id])
            return id;
    return -1;
}

/* The AREAS step: create the team and its areas, send their addresses. */
static void begin_areas(fmpl_team_build *b)
{
    b->state = BUILD_AREAS;
    int status = b->rc;
    int id = status == FMPL_SUCCESS ? local_free_id() : -1;
    if (status == FMPL_SUCCESS && id < 0)
        status = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "all %d communicator ids are in use",
                            FMPL_MAX_TEAMS - 1);
    build_areas *me = &b->my_areas;
    *me = (build_areas){.seq = b->seq, .user_tag = b->user_tag};
    if (status == FMPL_SUCCESS) {
        int *world_ranks = malloc((size_t)b->n * sizeof *world_ranks);
        if (world_ranks)
            for (int m = 0; m < b->n; m++)
                world_ranks[m] = b->parent->world[b->members[m]];
        b->team = world_ranks ? fmpl_team_new(id, b->pos, b->n, world_ranks) : NULL;
        status = b->team ? team_create_areas(b->team, NULL, NULL, &me->areas)
                         : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a communicator");
        if (status == FMPL_SUCCESS)
            fmpl_teams[id] = b->team; /* before peers can send on it (see the top) */
    }
    me->status = status;
    exchange_start(b, me, sizeof *me, b->areas, b->members, b->n, b->pos, b->tag);
}

/* JOIN is complete: who is in my team, in which order. */
static int join_members(fmpl_team_build *b)
{
    int n = b->parent->size, color = b->my_join.color;
    for (int r = 0; r < n; r++)
        if (b->joins[r].seq != b->seq)
            return FMPL_ERROR(FMPL_ERR_INTERNAL,
                              "parent rank %d is at communicator creation %llu, this rank at "
                              "%llu: creations were started in different orders",
                              r, (unsigned long long)b->joins[r].seq,
                              (unsigned long long)b->seq);
    b->n = 0;
    for (int r = 0; r < n; r++)
        if (b->joins[r].color == color)
            b->members[b->n++] = r;
    /* insertion sort by (key, parent rank): stable on parent rank order */
    for (int i = 1; i < b->n; i++) {
        int m = b->members[i], j = i;
        while (j > 0 && b->joins[b->members[j - 1]].key > b->joins[m].key) {
            b->members[j] = b->members[j - 1];
            j--;
        }
        b->members[j] = m;
    }
    for (int i = 0; i < b->n; i++)
        if (b->members[i] == b->parent->rank)
            b->pos = i;
    return FMPL_SUCCESS;
}

/* AREAS is complete: connect, or (any member failed) give the team up. */
static void finish_areas(fmpl_team_build *b)
{
    for (int m = 0; m < b->n && b->rc == FMPL_SUCCESS; m++) {
        const build_areas *a = &b->areas[m];
        if (a->status != FMPL_SUCCESS)
            b->rc = a->status;
        else if (b->check_seq && a->seq != b->seq)
            b->rc = FMPL_ERROR(FMPL_ERR_INTERNAL,
                               "member %d is at communicator creation %llu, this rank at %llu: "
                               "creations were started in different orders",
                               m, (unsigned long long)a->seq, (unsigned long long)b->seq);
        else if (a->user_tag != b->user_tag)
            b->rc = FMPL_ERROR(FMPL_ERR_ARG, "members passed tags %d and %d", b->user_tag,
                               a->user_tag);
    }
    if (b->rc == FMPL_SUCCESS) {
        team_areas *all = malloc((size_t)b->n * sizeof *all);
        for (int m = 0; all && m < b->n; m++)
            all[m] = b->areas[m].areas;
        b->rc = all ? team_connect(b->team, all)
                    : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory to connect a team");
        free(all);
    }
    if (b->rc != FMPL_SUCCESS && b->team) {
        fmpl_team_free(b->team); /* leaves fmpl_teams too */
        b->team = NULL;
    }
}

static int build_poll(fmpl_async *a)
{
    fmpl_team_build *b = (fmpl_team_build *)a;
    if (b->state == BUILD_JOIN) {
        if (!exchange_done(b))
            return 0;
        keep_error(b, join_members(b));
        if (b->my_join.color < 0 && b->rc == FMPL_SUCCESS)
            b->state = BUILD_DONE; /* not a member of any new team */
        else
            begin_areas(b);
    }
    if (b->state == BUILD_AREAS) {
        if (!exchange_done(b))
            return 0;
        finish_areas(b);
        b->state = BUILD_DONE;
    }
    return 1;
}

static void build_release(fmpl_team_build *b)
{
    b->parent->pending_builds--;
    free(b->members);
    free(b->joins);
    free(b->areas);
    free(b->reqs);
    free(b);
}

/* n: the parent's size for a split or a dup (JOIN is indexed by parent
 * rank), the members' number for fmpl_team_from_members (AREAS only, by
 * position): a team over the universe team's 4096 ranks needs no more. */
static fmpl_team_build *build_new(fmpl_team *parent, int n)
{
    fmpl_team_reclaim_retired(); /* their ids may be free again */
    fmpl_team_build *b = calloc(1, sizeof *b);
    if (b) {
        b->parent = parent;
        parent->pending_builds++;
        b->members = calloc((size_t)n, sizeof *b->members);
        b->joins = calloc((size_t)n, sizeof *b->joins);
        b->areas = calloc((size_t)n, sizeof *b->areas);
        b->reqs = calloc(2 * (size_t)n, sizeof *b->reqs);
        b->tag = FMPL_TM_TAG_BUILD_AREAS;
        if (!b->members || !b->joins || !b->areas || !b->reqs) {
            build_release(b);
            b = NULL;
        }
    }
    if (!b)
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory to create a communicator over %d ranks", n);
    return b;
}

int fmpl_team_split_start(fmpl_team *parent, int color, int key, fmpl_team_build **out)
{
    fmpl_team_build *b = *out = build_new(parent, parent->size);
    if (!b)
        return FMPL_ERR_NO_MEMORY;
    b->check_seq = 1;
    b->seq = parent->build_seq++;
    b->tag = FMPL_TM_TAG_BUILD_SPLIT_AREAS;
    b->state = BUILD_JOIN;
    b->my_join = (build_join){.seq = b->seq, .color = color, .key = key};
    int *everyone = b->members; /* the parent in its order, until JOIN is done */
    for (int r = 0; r < parent->size; r++)
        everyone[r] = r;
    exchange_start(b, &b->my_join, sizeof b->my_join, b->joins, everyone, parent->size,
                   parent->rank, FMPL_TM_TAG_BUILD_JOIN);
    fmpl_async_start(&b->async, build_poll);
    return FMPL_SUCCESS;
}

int fmpl_team_dup_start(fmpl_team *parent, fmpl_team_build **out)
{
    fmpl_team_build *b = *out = build_new(parent, parent->size);
    if (!b)
        return FMPL_ERR_NO_MEMORY;
    b->check_seq = 1;
    b->seq = parent->build_seq++;
    b->n = parent->size;
    b->pos = parent->rank;
    for (int r = 0; r < parent->size; r++)
        b->members[r] = r;
    begin_areas(b);
    fmpl_async_start(&b->async, build_poll);
    return FMPL_SUCCESS;
}

fmpl_async *fmpl_team_build_async(fmpl_team_build *b) { return &b->async; }

int fmpl_team_build_finish(fmpl_team_build *b, fmpl_team **out)
{
    int rc = b->rc;
    *out = rc == FMPL_SUCCESS ? b->team : NULL;
    build_release(b);
    return rc;
}

static int build_wait(fmpl_team_build *b, fmpl_team **out)
{
    fmpl_async_wait(&b->async);
    return fmpl_team_build_finish(b, out);
}

int fmpl_team_split(fmpl_team *parent, int color, int key, fmpl_team **out)
{
    fmpl_team_build *b;
    *out = NULL;
    int rc = fmpl_team_split_start(parent, color, key, &b);
    return rc == FMPL_SUCCESS ? build_wait(b, out) : rc;
}

int fmpl_team_from_members(fmpl_team *parent, int n, const int *members, int tag,
                           fmpl_team **out)
{
    *out = NULL;
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
    fmpl_team_build *b = build_new(parent, n);
    if (!b)
        return FMPL_ERR_NO_MEMORY;
    b->tag = FMPL_TM_TAG_BUILD_GROUP_TOP - (int)((unsigned)tag % FMPL_TM_TAG_BUILD_GROUP_SPAN);
    b->user_tag = tag;
    b->n = n;
    b->pos = pos;
    memcpy(b->members, members, (size_t)n * sizeof *members);
    begin_areas(b);
    fmpl_async_start(&b->async, build_poll);
    return build_wait(b, out);
}
