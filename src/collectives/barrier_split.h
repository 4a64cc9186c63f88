/* Split-phase barriers (fmpl.h: fmpl_barrier_start, _test, _wait): the
 * engine and its instances in barrier_split.c; which member writes which
 * stage's word in barrier_split_butterfly.c (power-of-two sizes) and
 * barrier_split_dissemination.c (any size); select.c chooses. */
#ifndef FMPL_COLLECTIVES_BARRIER_SPLIT_H
#define FMPL_COLLECTIVES_BARRIER_SPLIT_H

#include <stdatomic.h>
#include <stdint.h>

#include "collectives/coll_team.h"
#include "fabric/fabric.h"
#include "protocols/team.h"

/* Outstanding instances per communicator and rank (a power of two). */
#define FMPL_BSPLIT_MAX FMPL_BARRIER_SPLIT_MAX
_Static_assert((FMPL_BSPLIT_MAX & (FMPL_BSPLIT_MAX - 1)) == 0, "a power of two");

/* One communicator's split-phase barriers on this member, allocated at its
 * first start.  `started` and the ring are written by the starting side
 * only, `done` and the stage state by progress only: the start needs no
 * lock against a progress pass running on another thread (the agent). */
typedef struct fmpl_bsplit {
    _Atomic uint64_t started;             /* instances started (start side) */
    char pad0[56];
    _Atomic uint64_t done;                /* instances complete, flags set (progress) */
    char pad1[56];
    uint64_t *flags[FMPL_BSPLIT_MAX];     /* instance i's flag at [(i - 1) % MAX] */
    uint64_t sent[FMPL_COLL_ROUNDS];      /* the value last written to stage k's partner */
    fmpl_ctl_desc to[FMPL_COLL_ROUNDS];   /* that partner's split[k] word */
    _Atomic uint64_t *in;                 /* my header's split[]: in[k] from stage k's partner */
    int rounds;
    const char *algo;                     /* the pairing, for messages */
    fmpl_team *team;
    struct fmpl_bsplit *next;             /* the engine's list */
} fmpl_bsplit;

/* The pairings: fill b->rounds and b->to[] (fmpl_bsplit_partner per stage). */
void fmpl_barrier_split_butterfly_setup(fmpl_bsplit *b, fmpl_team *t);
void fmpl_barrier_split_dissemination_setup(fmpl_bsplit *b, fmpl_team *t);
/* Stage k: this member writes member `to`'s split[k]. */
void fmpl_bsplit_partner(fmpl_bsplit *b, fmpl_team *t, int k, int to);
/* select.c: the pairing for this team (FMPL_BARRIER_SPLIT_ALGO). */
void fmpl_coll_barrier_split_select(fmpl_bsplit *b, fmpl_team *t);

/* Start an instance whose completion stores 1 in *flag (8-byte aligned,
 * checked by the caller).  FMPL_ERR_BUSY when FMPL_BSPLIT_MAX are
 * outstanding, FMPL_ERR_NO_MEMORY at a first start without memory. */
int fmpl_coll_barrier_start(fmpl_team *t, uint64_t *flag);
/* Instances started on t and not complete here. */
int fmpl_barrier_split_outstanding(const fmpl_team *t);
/* The progress hook (progress.h): advance every communicator's instances. */
int fmpl_barrier_split_progress(void);
/* With the team (coll_team.c): abandon its outstanding instances. */
void fmpl_barrier_split_destroy(fmpl_team *t);

#endif
