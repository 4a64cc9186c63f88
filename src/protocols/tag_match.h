/* Tag-matched point-to-point (seed 001's MPI protocols on FMPL's fabric):
 * envelopes on per-pair channels, eager and rendezvous, posted and
 * unexpected queues per team.  The MPI binding builds its requests on
 * fmpl_tm_req.  The sequences are in tag_match.c. */
#ifndef FMPL_PROTOCOLS_TAG_MATCH_H
#define FMPL_PROTOCOLS_TAG_MATCH_H

#include "base/hidden.h"
#include <stdint.h>

#include "fabric/fabric.h"
#include "protocols/channel.h"
#include "protocols/team.h"

#define FMPL_TM_ANY_SOURCE (-2)  /* = MPI_ANY_SOURCE */
#define FMPL_TM_ANY_TAG (-1)     /* = MPI_ANY_TAG */

/* Tags below -1 are the library's own, on any team: FMPL_TM_ANY_TAG never
 * matches them, so they cannot meet a user's message or receive.
 * Envelopes from one sender on one (team, tag) match in sending order, so
 * a protocol that every member runs in the same order (MPI's rule for
 * collectives on a communicator) needs one tag, however many instances
 * are outstanding. */
enum {
    FMPL_TM_TAG_BUILD_JOIN = -2,  /* team creation over a parent: color, key */
    FMPL_TM_TAG_BUILD_AREAS = -3, /* team creation: area addresses and ids */
    FMPL_TM_TAG_BUILD_SPLIT_AREAS = -5, /* a split's AREAS step (after its JOIN) */
    /* Creation by the members only (create_group): the user's tag t goes on
     * GROUP_TOP - (t mod GROUP_SPAN), so that creations a program runs at
     * once on one parent with distinct tags (from several threads, in any
     * order) keep apart.  Between the schedules' tags (collectives/sched.c,
     * above -2^29 - 16) and the partitioned ones (api/mpi/partitioned.c,
     * from -2^30 down). */
    FMPL_TM_TAG_BUILD_GROUP_TOP = -(1 << 29) - 32,
    FMPL_TM_TAG_BUILD_GROUP_SPAN = (1 << 29) - 64,
};

enum { FMPL_TM_SEND = 1, FMPL_TM_RECV };
enum {
    FMPL_TM_MODE_STANDARD = 0,
    FMPL_TM_MODE_SYNC = 1  /* completes only once matched (MPI_Ssend) */
};

/* An unexpected message: an eager copy, or a rendezvous announcement. */
typedef struct fmpl_tm_unexp {
    struct fmpl_tm_unexp *next, *prev;
    int32_t source, tag;
    int64_t size;
    uint32_t rendezvous;
    uint32_t sync;
    uint64_t sreq;            /* sender's request (rendezvous, sync) */
    fmpl_raddr sbuf;          /* sender's buffer (rendezvous) */
    void *data;               /* eager payload: inline_data or heap */
    void *heap;               /* this entry's own payload buffer, kept across reuse */
    int64_t heap_cap;         /* its size */
    unsigned char inline_data[128];
} fmpl_tm_unexp;

typedef struct fmpl_tm_req {
    uint8_t kind;             /* FMPL_TM_SEND / FMPL_TM_RECV */
    uint8_t complete;         /* set once; the owner polls it */
    uint8_t mode;             /* FMPL_TM_MODE_* */
    uint8_t cancelled;
    uint8_t registered;       /* rendezvous send: buf holds a network registration */
    uint8_t inflight;         /* counted in fmpl_tm_inflight until complete */
    int32_t peer;             /* team rank, or FMPL_TM_ANY_SOURCE */
    int32_t tag;
    fmpl_team *team;
    void *buf;                /* contiguous bytes */
    int64_t size;             /* send: bytes; receive: capacity */
    /* status once complete */
    int32_t st_source, st_tag;
    int64_t st_bytes;         /* bytes delivered */
    int32_t st_error;         /* FMPL_SUCCESS or FMPL_ERR_TRUNCATE */
    /* rendezvous */
    int64_t streamed;         /* bytes streamed so far (fallback path) */
    uint64_t peer_req;        /* the other side's request */
    struct fmpl_tm_req *next, *prev;  /* posted queue / streaming list */
    void *user;               /* the API layer's object */
} fmpl_tm_req;

typedef struct fmpl_tm_team {
    fmpl_tm_req posted;       /* list head: receives in posting order */
    fmpl_tm_unexp unexpected; /* list head: unexpected messages in arrival order */
} fmpl_tm_team;

/* Requests started and not complete whose completion needs this rank's
 * progress (posted receives, rendezvous sends): while above 0 the agent
 * keeps polling (progress/agent.c). */
extern FMPL_HIDDEN int fmpl_tm_inflight;

int fmpl_tm_init(fmpl_raddr *channels);
int fmpl_tm_connect(const fmpl_raddr *channels);
void fmpl_tm_finalize(void);
int fmpl_tm_team_create(fmpl_team *t);
void fmpl_tm_team_destroy(fmpl_team *t);

/* Start a send or a receive; `r` is caller memory that stays put until
 * r->complete.  A send may complete before returning (eager). */
/* A standard-mode send of `size` <= the eager limit, complete on return
 * (eager step 1) without a request: 1; a larger one sends nothing: 0. */
int fmpl_tm_send_eager(fmpl_team *t, const void *buf, int64_t size, int dst, int tag);
int fmpl_tm_isend(fmpl_tm_req *r, fmpl_team *t, const void *buf, int64_t size, int dst,
                  int tag, int mode);
int fmpl_tm_irecv(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, int src, int tag);

/* Handle the records waiting in the channel from world rank w, one:
 * 1 if there was one.  A wait for a receive from a known source polls
 * this between full progress passes (progress.c): the message can only
 * come from there, and a peek is far cheaper than a pass over every
 * channel. */
int fmpl_tm_handle_from(int w, fmpl_chan_rec *rec);
static inline int fmpl_tm_poll_from(int w)
{
    fmpl_chan_rec *rec = fmpl_chan_peek(w);
    return rec ? fmpl_tm_handle_from(w, rec) : 0;
}

/* Blocking receives from a known source when no receive of the team is
 * posted and one application thread calls the library, so that nothing
 * else could match first (progress.c's
 * fmpl_progress_recv_direct drives these).  start sets r up without
 * posting it: 0 = not eligible (post it with fmpl_tm_irecv instead),
 * 1 = not matched yet, 2 = matched from the unexpected queue.  Then poll
 * the source's world rank with recv_direct_poll (1: matched; a matching
 * record is delivered straight into r, any other handled as progress
 * would) and, after any other progress, recv_direct_take (1: matched
 * from the unexpected queue).  Once matched, r completes like a posted
 * receive (rendezvous: on FIN or the last DATA record). */
int fmpl_tm_recv_direct_start(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, int src,
                              int tag);
int fmpl_tm_recv_direct_poll(fmpl_tm_req *r, int w);
int fmpl_tm_recv_direct_take(fmpl_tm_req *r);

/* Remove a posted, unmatched receive: 1 if cancelled, 0 if already matched. */
int fmpl_tm_cancel_recv(fmpl_tm_req *r);

/* Probe: the first unexpected message matching (src, tag), or NULL. */
fmpl_tm_unexp *fmpl_tm_probe(fmpl_team *t, int src, int tag);
/* Take an unexpected message out of the queue (MPI_Mprobe); receive it
 * later with fmpl_tm_imrecv. */
void fmpl_tm_dequeue(fmpl_team *t, fmpl_tm_unexp *u);
int fmpl_tm_imrecv(fmpl_tm_req *r, fmpl_team *t, void *buf, int64_t size, fmpl_tm_unexp *u);

/* Drain the channels and advance rendezvous transfers; returns the number of
 * events handled. */
int fmpl_tm_progress(void);

#endif
