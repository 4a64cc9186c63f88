/* The runtime: start-up of every layer, and the teams behind communicators.
 * Both APIs (fmpl.h and mpi.h) stand on it. */
#ifndef FMPL_RUNTIME_H
#define FMPL_RUNTIME_H

#include "bootstrap/bootstrap.h"
#include "protocols/team.h"

enum { FMPL_RUNTIME_NEW = 0, FMPL_RUNTIME_READY, FMPL_RUNTIME_DONE };
extern int fmpl_runtime_state;

/* The bootstrap, started on first use (fmpl_area_size needs the job size
 * before fmpl_init). */
int fmpl_runtime_bootstrap(fmpl_bootstrap **bs);
/* Start every layer and FMPL_COMM_WORLD's team; `count` matching slots per
 * peer (> 0).  A failure after ranks began to connect ends the job.  When
 * the other API has started the runtime already, the caller joins it
 * (ma, fa and count are then those of the first start). */
int fmpl_runtime_init(void *ma, void *fa, int count);
/* The last API to leave: collective over all ranks (a barrier), then
 * everything is released; an earlier one only leaves. */
int fmpl_runtime_finalize(void);
void fmpl_runtime_abort(int code, const char *message) __attribute__((noreturn));

/* Teams (team_build.c). */
extern int fmpl_team_count;  /* user matching indices of every team */
int fmpl_team_build_world(fmpl_bootstrap *bs, void *ma, void *fa, int count);
/* Collective over `parent`: members passing the same color >= 0 form a team
 * ranked by (key, parent rank); *out is NULL for color < 0. */
int fmpl_team_split(fmpl_team *parent, int color, int key, fmpl_team **out);
/* Collective over the members only: the parent members members[0 .. n)
 * (distinct; this process among them) form a team ranked in that order.
 * Every member passes the same n, members and tag; a different tag is an
 * error on every member.  See team_build.c for the sequence. */
int fmpl_team_from_members(fmpl_team *parent, int n, const int *members, int tag,
                           fmpl_team **out);
/* Nonblocking creation (the state machine of team_build.c, driven by the
 * progress engine): start it, wait until fmpl_team_build_async(b)->done
 * (any progress call advances it), then fmpl_team_build_finish gives the
 * team (NULL for a split color < 0) or the error, and releases b.
 * Collective over the parent: every member starts its creations over one
 * parent in the same order (MPI's rule); any number may be outstanding. */
typedef struct fmpl_team_build fmpl_team_build;
struct fmpl_async;
int fmpl_team_split_start(fmpl_team *parent, int color, int key, fmpl_team_build **b);
int fmpl_team_dup_start(fmpl_team *parent, fmpl_team_build **b);
struct fmpl_async *fmpl_team_build_async(fmpl_team_build *b);
int fmpl_team_build_finish(fmpl_team_build *b, fmpl_team **out);
void fmpl_team_free(fmpl_team *t);
/* A team struct with no protocol state yet (it takes `world`, freeing it on
 * failure); NULL without memory. */
fmpl_team *fmpl_team_new(int id, int rank, int size, int *world);
/* Some member of t is reached over the network (another host, or
 * FMPL_FABRIC=net): its memory is not in load/store reach. */
int fmpl_team_spans_network(const fmpl_team *t);
/* Free a team without waiting for its other members (MPI_Comm_free):
 * this member's state stays, and the team's id stays in use on this
 * member, until every member has retired it; each member then releases
 * its state at a later call (a retire, a team creation, or finalize).
 * See team_build.c. */
void fmpl_team_retire(fmpl_team *t);
/* Release the retired teams whose members have all retired them. */
void fmpl_team_reclaim_retired(void);
/* MPI_Finalize: wait until every retired team spanning worlds over the
 * network is reclaimed (MPI_Comm_free and _disconnect are collective, so
 * every member gets there), so that no member reads this process's counts
 * after its endpoint closed. */
void fmpl_team_reclaim_before_leaving(void);

/* Worlds of one job (link.c).  The universe team (NULL where the launcher
 * cannot spawn): team ranks are universe ranks; the parent of teams whose
 * members belong to several worlds. */
#define FMPL_TEAM_UNIVERSE (FMPL_MAX_TEAMS - 1)
int fmpl_team_universe_create(void);
void fmpl_team_universe_free(void);
fmpl_team *fmpl_team_universe(void);
/* Link this process with processes of other worlds (universe ranks; this
 * process and those linked already are skipped).  Each of them must call
 * it with this process among its peers too; nothing else waits. */
int fmpl_runtime_link(const int *peers, int n);
/* Between two polls of the launcher for something another process puts
 * there: progress, then a yield, backing off to 1 ms sleeps. */
void fmpl_runtime_poll_pause(int *polls);

/* Symmetric memory (symmetric.c): collective over t.  The allocation
 * returns the same address on every member, or NULL on every member with
 * the reason in *rc; the release checks that every member passes the same
 * block. */
void *fmpl_symmetric_alloc(fmpl_team *t, size_t size, int *rc);
int fmpl_symmetric_free(fmpl_team *t, void *p);

#endif
