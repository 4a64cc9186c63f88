/* Collective schedules: a collective prepared as data and run by whoever
 * polls it (the progress engine today, an offload agent later).
 *
 * A schedule is an array of steps grouped in rounds (nondecreasing round
 * numbers along the array).  A round starts once every step of the round
 * before it has completed; starting a round issues all its steps:
 *   SEND    a tag-matched nonblocking send of `bytes` from `src` to `peer`
 *   RECV    a tag-matched nonblocking receive of `bytes` into `dst` from `peer`
 *   COPY    memmove(dst, src, bytes), done when issued
 *   REDUCE  dst = src op dst over `count` elements (src: the lower ranks'
 *           operand), done when issued
 *   CALL    fn(arg), done when issued (the MPI binding's packing and
 *           unpacking of non-contiguous datatypes)
 *   RUN     a resumable shared-memory algorithm (coll_run.h), polled until
 *           it finishes; its ticket is taken when the instance starts
 *   PUT     reserved: a fabric put with a notification (raddr), for the
 *           one-sided schedules to come; rejected by the builder today.
 * Local steps of one round run in array order when the round starts, so a
 * step that consumes received data goes in a later round than the receive.
 *
 * Kinds: a schedule serves a blocking call (a point-to-point algorithm run
 * to completion, or any algorithm with FMPL_COLL_SCHEDULES=1) or a
 * nonblocking or persistent collective (fmpl_sched_new's argument).  Each
 * kind has its own collective state per team (coll_team.h): its counter
 * of schedule instances, and for RUN steps its sequences, areas and turns.
 * So the two kinds never match each other, and members may interleave
 * them differently (MPICH's behaviour, which programs rely on).
 *
 * Messages: every instance of a schedule uses its own pair of library tags
 * (tag_match.h: tags below -1 never meet a user's message or wildcard),
 * taken from the counter of its kind on the team, which every member
 * advances identically (MPI requires the collectives of each kind,
 * persistent *_init calls included, in the same order on every member);
 * the kinds take alternate numbers.  Two schedules outstanding on one
 * communicator therefore never match each other's messages, whatever order
 * their rounds progress in; within one schedule, messages between one pair
 * match in posting order (the channel is FIFO per pair and tag).
 *
 * Persistent schedules (fmpl_sched_prepare) add the readiness protocol:
 *   receiver, when its RECV round starts: post the data receive, then send
 *     a zero-byte READY token (tag `ready_tag`) to the sender;
 *   sender, SEND step: wait for the READY token, re-post the receive of the
 *     next instance's token at once, then send the data.
 * The token receives of instance 0 are posted by fmpl_sched_prepare; the
 * token of instance k+1 can only be sent after the receiver completed
 * instance k, which needs the data of instance k, which the sender sent
 * after re-posting.  So data always meets a posted receive (it is never
 * written into a member that has not started the instance, and never lands
 * in the unexpected queue, which would allocate), tokens always meet a
 * posted receive, and a start allocates nothing.  The root's buffer is
 * free again when its sends completed (eager: copied; rendezvous: pulled),
 * which the instance waits for.
 * A persistent schedule's messages are *prepared* instead where both ends
 * can tell alike (sched_prepared.c: by the message's size and whether the
 * peer is a network peer): each receiver gives its sender, at prepare, the
 * address of a mailbox (16 KiB at most: each instance's message is one put
 * into it, with no token and no tag matching), or, for a larger message to
 * a network peer, of its registered buffer and a completion line (each
 * instance: the token, then one put straight into the buffer and the
 * line's flag; no rendezvous).
 *
 * Lanes: a schedule's messages travel on its own team (lane 0, bound
 * first) and, when a composed collective runs parts of itself on other
 * teams (an intercommunicator's local group, both groups together), on a
 * lane per such team, each with its own pair of tags drawn from that
 * team's counter the first time the schedule binds it.  A step's peer is a
 * rank of its lane's team.  Every member of a team must therefore bind it
 * in the same collectives (the MPI intercommunicator bodies do: their use
 * of a hidden team depends only on the member's group).
 *
 * Executors: fmpl_sched_poll touches only the schedule, its buffers and the
 * tag-matched protocol, never the caller's state; one executor at a time. */
#ifndef FMPL_COLLECTIVES_SCHED_H
#define FMPL_COLLECTIVES_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "collectives/op.h"
#include "progress/async.h"
#include "protocols/tag_match.h"
#include "protocols/team.h"

enum {
    FMPL_STEP_SEND = 1,
    FMPL_STEP_RECV,
    FMPL_STEP_COPY,
    FMPL_STEP_REDUCE,
    FMPL_STEP_CALL,
    FMPL_STEP_RUN,
    FMPL_STEP_PUT /* reserved (see above) */
};

typedef struct fmpl_step {
    int kind;
    int round;
    int lane;             /* SEND, RECV: the team (fmpl_sched.lanes) */
    int peer;             /* SEND, RECV: rank in the lane's team */
    int waiting_ready;    /* SEND, persistent: the token has not arrived yet */
    void *dst;
    const void *src;
    int64_t bytes;        /* SEND, RECV, COPY */
    int64_t count;        /* REDUCE: elements */
    void (*fn)(void *arg);
    void *arg;
    struct fmpl_coll_algo *algo; /* RUN */
    fmpl_tm_req req;      /* SEND, RECV; SEND prepared direct: the receiver's setup */
    fmpl_tm_req ready;    /* SEND of a persistent schedule: the READY token, or
                             (prepared mailbox) the receiver's mailbox address */
    /* Prepared messages (sched_prepared.c) */
    int prep;             /* SEND, RECV of a persistent schedule: FMPL_PREP_* */
    int pending;          /* issued, not yet put or taken */
    uint64_t instance;    /* instances put or taken so far */
    uint64_t room;        /* SEND: the receiver's `taken` when last read */
    uint64_t mailbox_at[5]; /* SEND: the receiver's setup message: its mailbox (packed
                               address) and the stride of its entries; direct: its
                               buffer's address, kind and key, its completion line
                               (packed) and its size */
    void *staging;        /* SEND: where an entry is built (the schedule's arena) */
    void *mailbox;        /* RECV: its own mailbox; direct: its completion line */
    int registered;       /* RECV direct: dst registered with the fabric */
} fmpl_step;

/* How a persistent schedule's message travels (fmpl_step.prep). */
enum { FMPL_PREP_NONE = 0, FMPL_PREP_MAILBOX, FMPL_PREP_DIRECT };

/* Memory a schedule owns beyond its arena (freed with it). */
typedef struct fmpl_sched_block {
    struct fmpl_sched_block *next;
    max_align_t data[];
} fmpl_sched_block;

/* A call made when the schedule is freed (fmpl_sched_on_free); records
 * live in the arena, so registering one allocates nothing. */
typedef struct fmpl_sched_release {
    struct fmpl_sched_release *next;
    void (*fn)(void *arg);
    void *arg;
} fmpl_sched_release;

/* A team the schedule's messages travel on, and their tags there. */
typedef struct fmpl_sched_lane {
    fmpl_team *team;
    int team_id;          /* the team's table entry (is it still alive?) */
    int tag, ready_tag;
} fmpl_sched_lane;
#define FMPL_SCHED_LANES 4

/* Kinds of schedules (fmpl_sched_new). */
enum { FMPL_SCHED_BLOCKING = 0, FMPL_SCHED_NONBLOCKING = 1 };

typedef struct fmpl_sched {
    fmpl_async async;     /* first: the progress engine's handle */
    int nonblocking;      /* its kind: FMPL_SCHED_NONBLOCKING or _BLOCKING */
    fmpl_team *team;      /* the schedule's own team (lanes[0]); NULL until bound */
    fmpl_sched_lane lanes[FMPL_SCHED_LANES];
    int nlanes;
    int lane;             /* the lane of the messages added next */
    int persistent;       /* readiness protocol (fmpl_sched_prepare) */
    int prepared;         /* persistent, every message prepared (sched_prepared.c) */
    int direct;           /* some of them are direct puts (large, to network peers) */
    int active;           /* started, not finished */
    int error;            /* first error of the instance */
    int nsteps, cap;
    fmpl_step *steps;
    int round_base;       /* builders number rounds from here (fmpl_sched_phase) */
    int cur, issued;      /* executor: first step of the current round; issued? */
    fmpl_op op;           /* the reduction operation (copied in) */
    fmpl_sched_block *blocks;
    fmpl_sched_release *releases;
    size_t arena_used;    /* bytes of `arena` handed out by fmpl_sched_alloc */
    void *scratch;        /* fmpl_sched_scratch's block (from the kept ones) */
    size_t scratch_cap;
    struct fmpl_sched *next_free; /* on the list of schedules kept for reuse */
    /* Small allocations (a RUN step's state, a few arrays) come from here,
     * so that a schedule taken from the reuse list costs no allocation. */
    _Alignas(max_align_t) char arena[768];
} fmpl_sched;

/* Build a schedule of kind FMPL_SCHED_BLOCKING or FMPL_SCHED_NONBLOCKING
 * (nonblocking and persistent collectives).  It comes from a short list
 * of freed ones (with their step arrays) when it can, else from calloc;
 * NULL: no memory. */
fmpl_sched *fmpl_sched_new(int kind);
/* The messages added next travel on team t.  The first team bound is the
 * schedule's own; each team's tags are drawn from its counter when the
 * schedule first binds it (so every call takes its instance number). */
void fmpl_sched_bind(fmpl_sched *s, fmpl_team *t);
/* Bind, as the schedule's own, a view (a team without collective state
 * of its own that lends another's context: an MPI intercommunicator),
 * drawing the tags from `numbering`'s counter. */
void fmpl_sched_bind_view(fmpl_sched *s, fmpl_team *view, fmpl_team *numbering);
/* Start a new phase: the next steps' round 0 follows every step so far. */
void fmpl_sched_phase(fmpl_sched *s);
fmpl_step *fmpl_sched_add(fmpl_sched *s, int kind, int round);
int fmpl_sched_send(fmpl_sched *s, int round, const void *buf, int64_t bytes, int peer);
int fmpl_sched_recv(fmpl_sched *s, int round, void *buf, int64_t bytes, int peer);
int fmpl_sched_copy(fmpl_sched *s, int round, void *dst, const void *src, int64_t bytes);
/* dst = src op dst; the operation is the schedule's (fmpl_sched_set_op). */
int fmpl_sched_reduce(fmpl_sched *s, int round, const void *src, void *dst, int64_t count);
int fmpl_sched_call(fmpl_sched *s, int round, void (*fn)(void *), void *arg);
/* A resumable algorithm whose state `a` the schedule owns (fmpl_sched_alloc);
 * in a nonblocking schedule it runs in its team's nonblocking state. */
int fmpl_sched_run_algo(fmpl_sched *s, int round, struct fmpl_coll_algo *a);
void fmpl_sched_set_op(fmpl_sched *s, const fmpl_op *op);
/* Zeroed memory owned by the schedule, or NULL. */
void *fmpl_sched_alloc(fmpl_sched *s, size_t bytes);
/* Uninitialised memory owned by the schedule, or NULL: the block a reused
 * schedule kept from its previous collective when large enough (so a
 * repeated nonblocking reduction neither allocates nor clears its work
 * vector), else a new one. */
void *fmpl_sched_scratch(fmpl_sched *s, size_t bytes);
/* Run release(arg) when the schedule is freed. */
int fmpl_sched_on_free(fmpl_sched *s, void (*release)(void *), void *arg);
/* A step could not be added (no memory): the schedule is unusable. */
static inline int fmpl_sched_failed(const fmpl_sched *s) { return s->error != 0; }

/* Persistent: post the first READY token receives, or prepare the
 * messages (mailboxes and their addresses).  Once per schedule. */
void fmpl_sched_prepare(fmpl_sched *s);
/* Start an instance (allocates nothing); the progress engine polls it. */
void fmpl_sched_start(fmpl_sched *s);
/* Run to completion (blocking). */
int fmpl_sched_run(fmpl_sched *s);
static inline int fmpl_sched_done(const fmpl_sched *s) { return !s->active; }
/* Free an inactive schedule (cancels the pending token receives while the
 * team lives; a freed communicator's team may be gone, its queues too). */
void fmpl_sched_free(fmpl_sched *s);

/* Prepared messages (sched_prepared.c): how a persistent schedule's SEND
 * or RECV step travels (FMPL_PREP_*; both ends decide alike).  Set one up
 * at prepare; issue it; advance an issued one (0: not yet; 1: done, *err
 * its outcome); release it with the schedule. */
int fmpl_sched_prepared_mode(const fmpl_sched *s, const fmpl_step *st);
/* The READY token of a persistent SEND/RECV pair (sched.c): the sender
 * posts the receive of the next one into st->ready, the receiver sends it
 * when its step starts. */
void fmpl_sched_token_expect(fmpl_sched *s, fmpl_step *st);
void fmpl_sched_token_send(fmpl_sched *s, fmpl_step *st);
void fmpl_sched_prepared_setup(fmpl_sched *s, fmpl_step *st);
void fmpl_sched_prepared_issue(fmpl_sched *s, fmpl_step *st);
int fmpl_sched_prepared_poll(fmpl_sched *s, fmpl_step *st, int *err);
void fmpl_sched_prepared_free(fmpl_sched *s, fmpl_step *st);

/* The next instance number of the team's schedules of kind `nonblocking`
 * (coll_team.h: each kind's counter; the kinds take alternate numbers). */
uint64_t fmpl_sched_next_seq(fmpl_team *t, int nonblocking);

#endif
