/* Linking worlds: processes of different worlds of one job (a spawner and
 * its spawned world, or two worlds that met through MPI_Comm_connect and
 * MPI_Comm_accept) become peers of each other, after start-up.
 *
 * The universe team.  Where the launcher can spawn (fmplrun), every process
 * has a team whose ranks are universe ranks (size FMPL_UNIVERSE_MAX, id
 * FMPL_TEAM_UNIVERSE on every process, so no ids need exchanging); it has
 * only tag-matched queues.  It is the parent over which a team of members
 * of several worlds is built (fmpl_team_from_members), as the world team is
 * for members of one world; a member it names must be linked first.
 *
 * Linking process P and process Q (each calls fmpl_runtime_link with the
 * other among its peers; nothing else of either waits):
 *   1. P maps Q's segment or enters Q's network endpoint (fabric_link.c:
 *      shared memory on one host, the network backend across hosts or
 *      with FMPL_FABRIC=net), makes a channel ring and a
 *      staging ring of its own for Q's records, and puts their addresses
 *      under key "lk<Q>" (bootstrap; visible at once under fmplrun);
 *   2. P polls Q's key "lk<P>" (Q did step 1 for P) and, once it is there,
 *      writes into the rings it names.  Q's rings were ready before Q put
 *      their addresses, so P's first record finds them; P's were ready for
 *      Q the same way.
 * A process that cannot link (over the network without the backend:
 * fabric_link.c) puts "failed" instead of its offer, so its peers return an error too.
 * A link lasts as long as both processes: MPI_Comm_disconnect leaves it,
 * and a later connection of the same pair has nothing to do. */
#include "runtime/runtime.h"
#include "fabric/fabric.h"
#include "progress/progress.h"
#include "protocols/channel.h"
#include "protocols/staging.h"
#include "protocols/tag_match.h"
#include "base/error.h"
#include "base/log.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned char *linked; /* [capacity]: the protocols reach it */

int fmpl_team_universe_create(void)
{
    int n = fmpl_fab.capacity;
    int *world = malloc((size_t)n * sizeof *world);
    for (int r = 0; world && r < n; r++)
        world[r] = r;
    fmpl_team *t = world ? fmpl_team_new(FMPL_TEAM_UNIVERSE, fmpl_fab.rank, n, world) : NULL;
    linked = calloc((size_t)n, 1);
    if (!t || !linked || fmpl_tm_team_create(t) != FMPL_SUCCESS) {
        fmpl_team_free(t);
        free(linked);
        linked = NULL;
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no memory for the universe team");
    }
    for (int r = 0; r < n; r++)
        t->peer_id[r] = FMPL_TEAM_UNIVERSE;
    FMPL_FAB_FOR_WORLD(r)
        linked[r] = 1; /* connected at start-up */
    fmpl_teams[FMPL_TEAM_UNIVERSE] = t;
    return FMPL_SUCCESS;
}

fmpl_team *fmpl_team_universe(void) { return fmpl_teams[FMPL_TEAM_UNIVERSE]; }

void fmpl_team_universe_free(void)
{
    free(linked);
    linked = NULL; /* the team itself goes with the others (runtime.c) */
}

/* Step 1 for peer r. */
static int offer(fmpl_bootstrap *bs, int r)
{
    int rc = fmpl_fabric_link(r);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpl_raddr chan = fmpl_chan_link_prepare(r), stage = fmpl_stage_link_prepare(r);
    if (!chan.kind || !stage.kind)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY, "no shared memory for the rings of process %d", r);
    char key[32], value[64];
    snprintf(key, sizeof key, "lk%d", r);
    snprintf(value, sizeof value, "%llx,%llx", (unsigned long long)fmpl_raddr_pack(chan),
             (unsigned long long)fmpl_raddr_pack(stage));
    return bs->put(bs, key, value);
}

void fmpl_runtime_poll_pause(int *polls)
{
    /* A launcher round trip per poll: keep serving peers in between, and
     * back off to a millisecond (the other side may still be starting). */
    fmpl_progress();
    if (++*polls < 50) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, *polls < 200 ? 100000 : 1000000};
    nanosleep(&ts, NULL);
}

/* Step 2 for peer r: wait for its offer, then connect to it. */
static int accept_offer(fmpl_bootstrap *bs, int r)
{
    char key[32], value[FMPL_BOOTSTRAP_VALUE_MAX];
    snprintf(key, sizeof key, "lk%d", fmpl_fab.rank);
    int rc, polls = 0;
    while ((rc = bs->try_get(bs, r, key, value, sizeof value)) == FMPL_ERR_NOT_PENDING)
        fmpl_runtime_poll_pause(&polls);
    if (rc != FMPL_SUCCESS)
        return rc;
    unsigned long long chan, stage;
    if (strcmp(value, "failed") == 0)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED, "process %d could not link with this one (its "
                          "message says why)", r);
    if (sscanf(value, "%llx,%llx", &chan, &stage) != 2)
        return FMPL_ERROR(FMPL_ERR_BOOTSTRAP, "process %d's link offer '%.60s' is malformed", r,
                          value);
    rc = fmpl_chan_link(r, fmpl_raddr_unpack(chan, r));
    if (rc == FMPL_SUCCESS)
        rc = fmpl_stage_link(r, fmpl_raddr_unpack(stage, r));
    return rc;
}

int fmpl_runtime_link(const int *peers, int n)
{
    fmpl_bootstrap *bs = fmpl_fab.bs;
    if (!linked || !bs->try_get)
        return FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                          "this job's launcher (%s) cannot join worlds: start it with fmplrun",
                          bs->launcher);
    for (int i = 0; i < n; i++) {
        int r = peers[i];
        if (r < 0 || r >= fmpl_fab.capacity)
            return FMPL_ERROR(FMPL_ERR_RANK, "universe rank %d outside 0..%d", r,
                              fmpl_fab.capacity - 1);
        if (linked[r] || r == fmpl_fab.rank)
            continue;
        int rc = offer(bs, r);
        if (rc != FMPL_SUCCESS) {
            /* The peers poll for an offer: tell them, rather than let them
             * wait for ever. */
            char key[32];
            for (int j = i; j < n; j++)
                if (!linked[peers[j]] && peers[j] != fmpl_fab.rank) {
                    snprintf(key, sizeof key, "lk%d", peers[j]);
                    bs->put(bs, key, "failed");
                }
            return rc;
        }
    }
    for (int i = 0; i < n; i++) {
        int r = peers[i];
        if (linked[r] || r == fmpl_fab.rank)
            continue;
        int rc = accept_offer(bs, r);
        if (rc != FMPL_SUCCESS)
            return rc;
        linked[r] = 1;
    }
    return FMPL_SUCCESS;
}
