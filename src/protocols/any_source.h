/* The any-source domain: receiver-side matching in arrival order, separate
 * from the sender-matched indices.  The sequence is in any_source.c. */
#ifndef FMPL_PROTOCOLS_ANY_SOURCE_H
#define FMPL_PROTOCOLS_ANY_SOURCE_H

#include "fabric/fabric.h"
#include "protocols/team.h"

typedef struct fmpl_any_ring {
    _Atomic uint64_t tail;   /* next free position; producers fetch-add it */
    char pad0[56];
    _Atomic uint64_t head;   /* oldest unconsumed position; the owner stores it */
    char pad1[56];
    /* capacity bytes of records follow */
} fmpl_any_ring;

typedef struct fmpl_any_team {
    fmpl_any_ring *mine;
    fmpl_any_ring **peer;    /* [team size] each member's ring, mapped here (NULL:
                                a network peer) */
    fmpl_raddr *peer_at;     /* [team size] each member's ring, as remote addresses */
} fmpl_any_team;

/* 1 (default): every team gets an any-source ring (FMPL_ANY_QUEUE_SIZE of
 * each member's heap).  The MPI binding, whose any-source receives are
 * tag-matched, sets 0 before start-up: its teams then have no ring, and
 * fmpl_any_send/recv on them report FMPL_ERR_UNSUPPORTED. */
extern int fmpl_any_rings;

int fmpl_any_init(void);
int fmpl_any_team_create(fmpl_team *t, fmpl_raddr *mine);
int fmpl_any_team_connect(fmpl_team *t, const fmpl_raddr *rings);
void fmpl_any_team_destroy(fmpl_team *t);

int fmpl_any_send(fmpl_team *t, const void *buf, int64_t size, int dst, int index);
int fmpl_any_recv(fmpl_team *t, void *buf, int64_t size, int index, fmpl_status *status);

#endif
