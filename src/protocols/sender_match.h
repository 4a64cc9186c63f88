/* Sender-matched zero-copy point-to-point (the paper's FMPL protocol).
 * The sequence of remote operations is in sender_match.c's opening comment. */
#ifndef FMPL_PROTOCOLS_SENDER_MATCH_H
#define FMPL_PROTOCOLS_SENDER_MATCH_H

#include "base/hidden.h"
#include <stdint.h>

#include "fabric/fabric.h"
#include "protocols/team.h"

/* Header a receiver writes into the sender's matching slot.  One cache line. */
typedef struct fmpl_sm_slot {
    _Atomic uint64_t seq;     /* the receiver's post count, written last: a header
                                 is present when it differs from what the sender
                                 has consumed (nobody ever resets the slot) */
    uint64_t buf;             /* receive buffer: fmpl_raddr.addr */
    int64_t capacity;         /* receive buffer size in bytes */
    uint32_t kind;            /* FMPL_MEM_SHARED or FMPL_MEM_PRIVATE */
    uint32_t seq_low;         /* the low 32 bits of seq, written before it: seq
                                 counts only when they agree, since over the
                                 network a flag may arrive in pieces (fabric.h) */
    uint64_t key;             /* network: the receive buffer's key (fmpl_raddr.key) */
    /* The rest is the SENDER's (the line's owner): a spooled message the
     * receiver may copy itself (sender_match.c, "Spool: whoever arrives
     * copies").  The receiver only ever changes `offer`, by compare-and-swap. */
    _Atomic uint64_t offer;   /* FMPL_SM_OFFER_*(seq) or 0; published last */
    uint64_t offer_addr;      /* the spooled copy: offset in the sender's segment */
    int64_t offer_size;       /* its size in bytes */
} __attribute__((aligned(64))) fmpl_sm_slot;

/* The offer word: the receive sequence it is for (the receiver's next post
 * on that slot when the message was spooled), and who holds the message. */
enum {
    FMPL_SM_OFFERED = 1, /* in the spool; either side may claim it */
    FMPL_SM_PULLING = 2, /* claimed by the receiver, which is copying it */
    FMPL_SM_PULLED = 3   /* copied: the sender may release the spool record */
};
#define FMPL_SM_OFFER_WORD(seq, state) (((uint64_t)(uint32_t)(seq) << 2) | (uint64_t)(state))

#define FMPL_SM_INLINE_CAP 40

/* Completion line a sender writes into the receiver's completion area. */
typedef struct fmpl_sm_done {
    _Atomic uint32_t seq;     /* sequence of the receive it completes, written last */
    int32_t index;            /* index the message was sent on (for FMPL_TAG_ANY) */
    int64_t size;             /* size of the message (may exceed what was delivered) */
    int32_t status;           /* FMPL_SUCCESS or FMPL_ERR_TRUNCATE */
    uint32_t flags;           /* FMPL_SM_INLINE: data is in `data` */
    unsigned char data[FMPL_SM_INLINE_CAP];
} __attribute__((aligned(64))) fmpl_sm_done;

enum { FMPL_SM_INLINE = 1 };

/* Sender-side state of one (peer, index): a send not yet delivered. */
typedef struct fmpl_sm_sendop {
    const void *buf;
    int64_t size;
    uint32_t state;           /* FMPL_SEND_* */
    int32_t error;            /* result once complete */
    int64_t streamed;         /* bytes written to the staging ring so far */
    int64_t deliver;          /* bytes to deliver (min of size and capacity) */
    uint64_t spool_off;       /* position of the spooled copy */
    struct fmpl_sm_sendop *next, *prev;  /* pending list (intrusive) */
    fmpl_team *team;
    int32_t peer;             /* team rank of the receiver */
    int32_t index;
    int32_t slot;             /* slot matched (index or the ANY slot) */
    uint32_t match_seq;       /* sequence of the header it matched */
    uint32_t offer_seq;       /* spooled and offered to the receiver: the receive
                                 sequence it is for (offered != 0) */
    uint32_t offered;
} fmpl_sm_sendop;

enum {
    FMPL_SEND_FREE = 0,
    FMPL_SEND_WAITING,   /* no header yet */
    FMPL_SEND_STREAMING, /* header seen, staging through the ring */
    FMPL_SEND_DONE       /* delivered (or copied out); wait not yet called */
};

/* Receiver-side state of one (peer, index). */
typedef struct fmpl_sm_recvop {
    void *buf;
    int64_t capacity;
    uint32_t state;           /* FMPL_RECV_* */
    uint32_t staged;          /* buffer is private: data may come by the ring */
    uint32_t registered;      /* buffer registered for a network sender */
    int64_t received;         /* staged bytes copied out so far */
    int64_t msg_size;
    int32_t status;
    int32_t msg_index;
    uint32_t seq;             /* this cell's post count; the current receive's */
} fmpl_sm_recvop;

enum { FMPL_RECV_FREE = 0, FMPL_RECV_POSTED, FMPL_RECV_DONE };

typedef struct fmpl_sm_team {
    fmpl_sm_slot *slots;      /* mine: [peer][nidx], written by peers */
    fmpl_sm_done *done;       /* mine: [peer][nidx], written by peers */
    uint64_t slots_key, done_key; /* network keys of caller areas (fmpl_fab_register) */
    int caller_areas;         /* slots/done are caller memory (fmpl_init ma/fa) */
    fmpl_raddr *peer_slots;   /* [peer] base of the peer's slot area */
    fmpl_raddr *peer_done;    /* [peer] base of the peer's completion area */
    char **peer_slots_ptr;    /* [peer] direct pointer, or NULL (CMA) */
    char **peer_done_ptr;
    fmpl_sm_sendop *sends;      /* [peer][nidx] */
    fmpl_sm_recvop *recvs;      /* [peer][nidx] */
    uint64_t *seen;           /* [peer][nidx] slot sequence consumed by my sends */
} fmpl_sm_team;

/* Bytes of one slot or completion area for a team of `size` with `nidx`. */
size_t fmpl_sm_area_bytes(int size, int nidx);

/* Set up local state; `slots`/`done` may be caller memory (or NULL: heap). */
int fmpl_sm_team_create(fmpl_team *t, void *slots, void *done);
/* After the raddrs of every member's areas are known. */
int fmpl_sm_team_connect(fmpl_team *t, const fmpl_raddr *slots, const fmpl_raddr *done);
void fmpl_sm_team_destroy(fmpl_team *t);
/* Operations of this team not yet completed (sends, spooled sends, receives). */
int fmpl_sm_team_outstanding(const fmpl_team *t);
/* The raddrs of this rank's areas, to be exchanged. */
void fmpl_sm_team_local_areas(const fmpl_team *t, fmpl_raddr *slots, fmpl_raddr *done);

/* Operations.  Arguments are checked by the caller (API layer), except the
 * BUSY / NOT_PENDING states, which only the protocol knows. */
int fmpl_sm_isend(fmpl_team *t, const void *buf, int64_t size, int dst, int index);
int fmpl_sm_irecv(fmpl_team *t, void *buf, int64_t size, int src, int index);
int fmpl_sm_send_wait(fmpl_team *t, int dst, int index);
int fmpl_sm_recv_wait(fmpl_team *t, int src, int index, fmpl_status *status);
int fmpl_sm_send_test(fmpl_team *t, int dst, int index, int *flag);
int fmpl_sm_recv_test(fmpl_team *t, int src, int index, int *flag, fmpl_status *status);
/* Blocking send honouring the spool timeout. */
int fmpl_sm_send(fmpl_team *t, const void *buf, int64_t size, int dst, int index);

/* Spool (one-copy buffer mode). */
int fmpl_sm_spool_set(void *buf, int64_t size, int timeout_ms);
int fmpl_sm_spool_check(int *nsend, int *nspool);

/* Progress every pending send and staged receive; returns the number of
 * operations that advanced. */
int fmpl_sm_progress(void);
/* Work that only progress can advance: pending sends (spooled ones included)
 * and staged receives. */
extern FMPL_HIDDEN int fmpl_sm_outstanding;

int fmpl_sm_init(void);      /* world-wide structures (staging rings) */
void fmpl_sm_finalize(void);

#endif
