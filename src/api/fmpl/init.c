/* fmpl_init, fmpl_finalize, communicators and the shared heap.
 *
 * Start-up: bootstrap (rank, size, key-value space) -> fabric (segments,
 * heap, CMA probe) -> protocol state -> FMPL_COMM_WORLD's areas -> one
 * key-value exchange of every area's remote address -> connect -> barrier. */
#include "api/fmpl/api.h"
#include "bootstrap/bootstrap.h"
#include "collectives/collectives.h"
#include "fabric/fabric.h"
#include "protocols/any_source.h"
#include "protocols/staging.h"
#include "protocols/tag_match.h"
#include "base/log.h"
#include "base/timer.h"
#include "base/wait.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fmpl_api_state = FMPL_STATE_NEW;
static fmpl_bootstrap *bootstrap;
static int user_count;

static int bootstrap_once(void)
{
    if (bootstrap)
        return FMPL_SUCCESS;
    fmpl_log_init();
    fmpl_error_init();
    return fmpl_bootstrap_init(&bootstrap);
}

int fmpl_area_size(int count, size_t *bytes)
{
    if (!bytes)
        return FMPL_ERROR(FMPL_ERR_ARG, "bytes is NULL");
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_ARG, "count %d is negative", count);
    int rc = bootstrap_once();
    if (rc != FMPL_SUCCESS)
        return rc;
    if (count == 0)
        count = FMPL_DEFAULT_COUNT;
    *bytes = fmpl_sm_area_bytes(bootstrap->size, count + FMPL_IDX_INTERNAL);
    return FMPL_SUCCESS;
}

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
    t->count = user_count;
    t->nidx = user_count + FMPL_IDX_INTERNAL;
    return t;
}

static void team_delete(fmpl_team *t)
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

static int init_world(void *ma, void *fa)
{
    fmpl_bootstrap *bs = bootstrap;
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

int fmpl_init(void *ma, void *fa, int count)
{
    if (fmpl_api_state == FMPL_STATE_READY)
        return FMPL_ERROR(FMPL_ERR_ALREADY_INITIALIZED, "fmpl_init was already called");
    if (fmpl_api_state == FMPL_STATE_FINALIZED)
        return FMPL_ERROR(FMPL_ERR_FINALIZED, "FMPL cannot be initialized after fmpl_finalize");
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "count %d is negative", count);
    if (count > (1 << 24))
        return FMPL_ERROR(FMPL_ERR_ARG, "count %d is above 16777216", count);
    if ((ma == NULL) != (fa == NULL))
        return FMPL_ERROR(FMPL_ERR_ARG, "give both the matching and the completion area, or neither");
    if (((uintptr_t)ma | (uintptr_t)fa) & 63)
        return FMPL_ERROR(FMPL_ERR_ARG, "caller-provided areas must be 64-byte aligned");
    int rc = bootstrap_once();
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_log_set_rank(bootstrap->rank);
    fmpl_wait_init(bootstrap->size); /* every rank is on this host (no network yet) */
    user_count = count ? count : FMPL_DEFAULT_COUNT;

    rc = fmpl_fabric_init(bootstrap);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_sm_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpl_any_init();
    if (rc == FMPL_SUCCESS)
        rc = fmpl_coll_init();
    if (rc == FMPL_SUCCESS)
        rc = init_world(ma, fa);
    if (rc != FMPL_SUCCESS) {
        /* A half-started job cannot continue: end it with the reason. */
        char msg[160];
        snprintf(msg, sizeof msg, "fmpl_init failed on rank %d: %s", bootstrap->rank,
                 fmpl_error_string(rc));
        bootstrap->abort(bootstrap, 1, msg);
    }
    fmpl_api_state = FMPL_STATE_READY;
    fmpl_log_info("started: rank %d of %d, launcher %s, CMA %s", bootstrap->rank,
                  bootstrap->size, bootstrap->launcher,
                  fmpl_fab.cma_reason ? fmpl_fab.cma_reason : "available");
    return FMPL_SUCCESS;
}

int fmpl_finalize(void)
{
    int rc = fmpl_api_check_state(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = fmpl_coll_barrier(fmpl_teams[FMPL_COMM_WORLD]);
    for (int id = FMPL_MAX_TEAMS - 1; id >= 0; id--)
        team_delete(fmpl_teams[id]);
    fmpl_stage_finalize();
    fmpl_tm_finalize();
    fmpl_sm_finalize();
    fmpl_fabric_finalize();
    fmpl_bootstrap_finalize(&bootstrap);
    fmpl_api_state = FMPL_STATE_FINALIZED;
    return rc;
}

void fmpl_abort(int code, const char *message)
{
    fflush(NULL); /* the launcher kills the others; keep what this rank printed */
    if (bootstrap_once() != FMPL_SUCCESS)
        _exit(code ? code : 1);
    bootstrap->abort(bootstrap, code, message ? message : "fmpl_abort called");
}

int fmpl_initialized(int *flag)
{
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    *flag = fmpl_api_state != FMPL_STATE_NEW;
    return FMPL_SUCCESS;
}

int fmpl_finalized(int *flag)
{
    if (!flag)
        return FMPL_ERROR(FMPL_ERR_ARG, "flag is NULL");
    *flag = fmpl_api_state == FMPL_STATE_FINALIZED;
    return FMPL_SUCCESS;
}

int fmpl_comm_rank(fmpl_comm comm, int *rank)
{
    API_ENTER(comm, t);
    if (!rank)
        return FMPL_ERROR(FMPL_ERR_ARG, "rank is NULL");
    *rank = t->rank;
    return FMPL_SUCCESS;
}

int fmpl_comm_size(fmpl_comm comm, int *size)
{
    API_ENTER(comm, t);
    if (!size)
        return FMPL_ERROR(FMPL_ERR_ARG, "size is NULL");
    *size = t->size;
    return FMPL_SUCCESS;
}

/* What each world rank contributes to the membership exchange. */
typedef struct join_info {
    int32_t key;
    uint8_t used[FMPL_MAX_TEAMS / 8]; /* team ids in use on that rank */
} join_info;

int fmpl_comm_create(int key, fmpl_comm *comm)
{
    API_ENTER(FMPL_COMM_WORLD, world);
    if (!comm)
        return FMPL_ERROR(FMPL_ERR_ARG, "comm is NULL");
    if (key < 0 && key != FMPL_KEY_NONE)
        return FMPL_ERROR(FMPL_ERR_ARG, "key %d is negative (use FMPL_KEY_NONE to stay out)",
                          key);
    *comm = FMPL_COMM_NULL;
    int n = world->size;
    join_info me = {.key = key};
    for (int id = 0; id < FMPL_MAX_TEAMS; id++)
        if (fmpl_teams[id])
            me.used[id / 8] |= (uint8_t)(1u << (id % 8));
    join_info *all = calloc((size_t)n, sizeof *all);
    team_areas *areas = calloc((size_t)n, sizeof *areas);
    int *members = calloc((size_t)n, sizeof *members);
    if (!all || !areas || !members) {
        free(all);
        free(areas);
        free(members);
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for %d ranks", n);
    }
    int rc = fmpl_coll_allgather_small(world, &me, sizeof me, all);

    /* Members: same key, world order.  Id: lowest free on every member. */
    int size = 0, rank = -1, id = -1;
    if (key != FMPL_KEY_NONE) {
        for (int r = 0; r < n; r++)
            if (all[r].key == key) {
                if (r == world->rank)
                    rank = size;
                members[size++] = r;
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
            memcpy(world_ranks, members, (size_t)size * sizeof *world_ranks);
        t = world_ranks ? team_new(id, rank, size, world_ranks) : NULL;
        rc = t ? team_create_areas(t, NULL, NULL, &mine)
               : FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for a communicator");
    }
    /* Every world rank takes part in the second exchange, member or not. */
    int rc2 = fmpl_coll_allgather_small(world, &mine, sizeof mine, areas);
    if (rc == FMPL_SUCCESS)
        rc = rc2;
    if (rc == FMPL_SUCCESS && t) {
        for (int m = 0; m < size; m++)
            areas[m] = areas[members[m]];
        rc = team_connect(t, areas);
    }
    if (rc == FMPL_SUCCESS && t) {
        fmpl_teams[id] = t;
        *comm = id;
    } else if (t) {
        team_delete(t);
    }
    free(all);
    free(areas);
    free(members);
    return rc;
}

int fmpl_comm_free(fmpl_comm *comm)
{
    int rc = fmpl_api_check_state(__func__);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!comm)
        return FMPL_ERROR(FMPL_ERR_ARG, "comm is NULL");
    if (*comm == FMPL_COMM_WORLD)
        return FMPL_ERROR(FMPL_ERR_COMM, "FMPL_COMM_WORLD cannot be freed");
    fmpl_team *t = fmpl_api_team(*comm, __func__, &rc);
    if (!t)
        return rc;
    int busy = fmpl_sm_team_outstanding(t);
    if (busy)
        return FMPL_ERROR(FMPL_ERR_BUSY,
                          "communicator %d still has %d outstanding operations (spooled sends "
                          "included): complete them before freeing it",
                          *comm, busy);
    rc = fmpl_coll_barrier(t); /* nobody uses it any more */
    team_delete(t);
    *comm = FMPL_COMM_NULL;
    return rc;
}

void *fmpl_alloc(size_t size)
{
    if (fmpl_api_state != FMPL_STATE_READY) {
        FMPL_ERROR(FMPL_ERR_NOT_INITIALIZED, "the shared heap exists between fmpl_init and "
                                             "fmpl_finalize");
        return NULL;
    }
    void *p = fmpl_fab_alloc(size);
    if (!p)
        FMPL_ERROR(FMPL_ERR_NO_MEMORY, "%zu bytes do not fit in the shared heap (FMPL_HEAP_SIZE)",
                   size);
    return p;
}

void fmpl_free(void *ptr)
{
    if (!ptr || fmpl_api_state != FMPL_STATE_READY)
        return;
    fmpl_fab_free(ptr);
}

double fmpl_wtime(void) { return (double)fmpl_now_ns() * 1e-9; }
