/* Team creations in flight together over one parent (runtime/team_build.c):
 * a split started before a dup, where one member finishes the split's JOIN
 * at once (every other member's JOIN is already there) and so sends the
 * split's AREAS before it even starts the dup, while the others have posted
 * the dup's AREAS receives first.  The two steps must not meet each other's
 * receives (a split's AREAS has a tag of its own).  Then a longer mix of
 * splits and dups, all in flight, completed in reverse order; every team
 * is checked for its members and order, and used. */
#include <fmpl.h>
#include "progress/async.h"
#include "progress/progress.h"
#include "protocols/tag_match.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>

static int me, np;
static fmpl_team *world;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "team_build rank %d line %d: ", me, __LINE__);         \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

/* A team of the expected members (world ranks, in order) that works: a
 * ring exchange of world ranks on it. */
static void check_team(fmpl_team *t, int n, const int *world_ranks, const char *what)
{
    EXPECT(t && t->size == n, "%s: size %d, expected %d", what, t ? t->size : -1, n);
    for (int i = 0; i < n; i++)
        EXPECT(t->world[i] == world_ranks[i], "%s: member %d is world %d, expected %d", what, i,
               t->world[i], world_ranks[i]);
    EXPECT(t->world[t->rank] == me, "%s: own rank %d", what, t->rank);
    int to = (t->rank + 1) % n, from = (t->rank + n - 1) % n, out = me, in = -1;
    fmpl_tm_req rr, sr;
    EXPECT(fmpl_tm_irecv(&rr, t, &in, sizeof in, from, 3) == FMPL_SUCCESS, "%s: irecv", what);
    EXPECT(fmpl_tm_isend(&sr, t, &out, sizeof out, to, 3, FMPL_TM_MODE_STANDARD) ==
               FMPL_SUCCESS, "%s: isend", what);
    while (!rr.complete || !sr.complete)
        fmpl_progress();
    EXPECT(in == t->world[from], "%s: got %d from member %d (world %d)", what, in, from,
           t->world[from]);
}

static fmpl_team *finish(fmpl_team_build *b, const char *what)
{
    fmpl_async_wait(fmpl_team_build_async(b));
    fmpl_team *t = NULL;
    int rc = fmpl_team_build_finish(b, &t);
    EXPECT(rc == FMPL_SUCCESS, "%s: creation failed (%d)", what, rc);
    return t;
}

/* World ranks of split(world, color = rank % 2, key = -rank). */
static int parity_members(int *m)
{
    int n = 0;
    for (int r = np - 1; r >= 0; r--)
        if (r % 2 == me % 2)
            m[n++] = r;
    return n;
}

static void split_then_dup(void)
{
    fmpl_team_build *sb, *db;
    int ready = 1;
    if (me == 0) {
        /* Wait until every other member has started both creations (so
         * their JOIN records are here): the split's JOIN then completes in
         * the start call and its AREAS goes out before the dup starts. */
        for (int r = 1; r < np; r++) {
            fmpl_tm_req rr;
            int v = 0;
            EXPECT(fmpl_tm_irecv(&rr, world, &v, sizeof v, r, 7) == FMPL_SUCCESS, "irecv");
            while (!rr.complete)
                fmpl_progress();
        }
        EXPECT(fmpl_team_split_start(world, 0, -me, &sb) == FMPL_SUCCESS, "split start");
        EXPECT(fmpl_team_dup_start(world, &db) == FMPL_SUCCESS, "dup start");
    } else {
        EXPECT(fmpl_team_split_start(world, 0, -me, &sb) == FMPL_SUCCESS, "split start");
        EXPECT(fmpl_team_dup_start(world, &db) == FMPL_SUCCESS, "dup start");
        fmpl_tm_req sr;
        EXPECT(fmpl_tm_isend(&sr, world, &ready, sizeof ready, 0, 7, FMPL_TM_MODE_STANDARD) ==
                   FMPL_SUCCESS, "isend");
        while (!sr.complete)
            fmpl_progress();
    }
    int all[64], reversed[64];
    for (int r = 0; r < np; r++) {
        all[r] = r;
        reversed[r] = np - 1 - r;
    }
    fmpl_team *dup = finish(db, "dup"), *split = finish(sb, "split");
    check_team(dup, np, all, "dup started after a split");
    check_team(split, np, reversed, "split (one color, reversed) started before a dup");
    fmpl_team_retire(dup);
    fmpl_team_retire(split);
}

/* split, dup, split, dup, dup, split in flight; finished last to first. */
static void long_mix(void)
{
    enum { K = 6 };
    static const int is_split[K] = {1, 0, 1, 0, 0, 1};
    fmpl_team_build *b[K];
    fmpl_team *t[K];
    for (int k = 0; k < K; k++)
        EXPECT((is_split[k] ? fmpl_team_split_start(world, me % 2, -me, &b[k])
                            : fmpl_team_dup_start(world, &b[k])) == FMPL_SUCCESS,
               "start %d", k);
    for (int k = K - 1; k >= 0; k--)
        t[k] = finish(b[k], is_split[k] ? "split" : "dup");
    int all[64], par[64], npar = parity_members(par);
    for (int r = 0; r < np; r++)
        all[r] = r;
    for (int k = 0; k < K; k++) {
        check_team(t[k], is_split[k] ? npar : np, is_split[k] ? par : all,
                   is_split[k] ? "split in a mix" : "dup in a mix");
        fmpl_team_retire(t[k]);
    }
}

int main(void)
{
    EXPECT(fmpl_init(NULL, NULL, 0) == FMPL_SUCCESS, "init");
    fmpl_comm_rank(FMPL_COMM_WORLD, &me);
    fmpl_comm_size(FMPL_COMM_WORLD, &np);
    EXPECT(np <= 64, "at most 64 ranks");
    world = fmpl_teams[FMPL_COMM_WORLD];
    for (int round = 0; round < 3; round++) {
        split_then_dup();
        long_mix();
    }
    fmpl_barrier(FMPL_COMM_WORLD);
    if (me == 0)
        printf("team_build: %d ranks ok\n", np);
    fmpl_finalize();
    return 0;
}
