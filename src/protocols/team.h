/* A team: the protocol-level core of a communicator, shared by the native
 * API (fmpl_comm) and, later, MPI communicators.  It maps team ranks to world
 * ranks and holds each protocol's per-team state. */
#ifndef FMPL_PROTOCOLS_TEAM_H
#define FMPL_PROTOCOLS_TEAM_H

#include <stdint.h>

/* Matching indices above the user's `count` are the library's own:
 *   count + 0   the FMPL_TAG_ANY slot (one outstanding ANY receive per pair)
 *   count + 1   rendezvous of large any-source messages
 *   count + 2 .. 5  spare
 * (Collectives over point-to-point and team creation talk tag-matched, on
 * library tags: protocols/tag_match.h.) */
enum {
    FMPL_IDX_ANY = 0,
    FMPL_IDX_ANY_RNDV = 1,
    FMPL_IDX_INTERNAL = 6 /* internal indices per pair */
};

/* Team ids are local: each process picks the lowest free entry of its own
 * table for a new team, and the members tell each other their ids when
 * they exchange area addresses (runtime/team_build.c).  Whatever carries a
 * team on the wire (channel envelopes, staging chunks) carries the
 * receiver's id, peer_id[receiver].  No agreement is needed, so concurrent
 * creations (MPI_Comm_idup on overlapping communicators) cannot collide. */
#define FMPL_MAX_TEAMS 4096

typedef struct fmpl_team {
    int id;               /* index in the team table; 0 is FMPL_COMM_WORLD */
    int rank;             /* this process's rank in the team */
    int size;
    int *world;           /* [size] world rank of each member */
    int count;            /* user matching indices per pair */
    int nidx;             /* count + FMPL_IDX_INTERNAL */
    struct fmpl_sm_team *sm;     /* sender-matched point-to-point */
    struct fmpl_any_team *any;   /* any-source domain */
    struct fmpl_tm_team *tm;     /* tag-matched point-to-point (MPI) */
    struct fmpl_coll_team *coll; /* collectives */
    int *peer_id;                /* [size] each member's id for this team */
    uint64_t build_seq;          /* team creations started over this team as parent */
    int pending_builds;          /* of those, not finished here: keeps a retired
                                    team's state (their messages use it) */
    int retired;                 /* freed by this member, awaiting the others */
    struct fmpl_team *next_retired;
} fmpl_team;

/* Team table, indexed by id (the staging rings carry team ids). */
extern fmpl_team *fmpl_teams[FMPL_MAX_TEAMS];

static inline int fmpl_team_internal_index(const fmpl_team *t, int which)
{
    return t->count + which;
}

#endif
