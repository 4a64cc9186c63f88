/* Per-team state of the collectives: a scratch block in each member's shared
 * heap, and sequence counters that every member advances identically (they
 * are never exchanged: all members call the same collectives in the same
 * order, so they agree on every sequence number).
 *
 * Scratch block of one member (all lines 64 bytes, counters monotonic):
 *   flag[k]        barrier round k (dissemination) / arrival from child k
 *                  (binomial); written by the peer of that round
 *   release        binomial barrier: written by the parent
 *   posted[2]      exchange: my input of sequence s is ready (value s), in
 *                  posted[s % 2]'s own spare bytes when it is small, else in
 *                  `input`; two lines so that back-to-back calls rarely wait
 *   sliced         slices: my result slice of sequence s is in `output`
 *   finished       exchange/slices: I have read all I need of sequence s
 *   bc_produced    broadcast: chunks of the global chunk sequence I published
 *   bc_consumed    broadcast: chunks of the global chunk sequence I copied out
 *   ring[NSLOTS]   broadcast staging chunks (double-buffered and more)
 *   input, output  reduction / exchange areas of FMPL_COLL_AREA bytes each */
#ifndef FMPL_COLLECTIVES_COLL_TEAM_H
#define FMPL_COLLECTIVES_COLL_TEAM_H

#include <stdint.h>

#include "fabric/fabric.h"
#include "protocols/team.h"

#define FMPL_COLL_ROUNDS 32
#define FMPL_BCAST_SLOTS 4

typedef struct fmpl_line {
    _Atomic uint64_t v;
    char pad[56];
} fmpl_line;

typedef struct fmpl_coll_scratch {
    fmpl_line flag[FMPL_COLL_ROUNDS];
    fmpl_line release;
    fmpl_line posted[2];
    fmpl_line sliced;
    fmpl_line finished;
    fmpl_line bc_produced;
    fmpl_line bc_consumed;
    /* ring, input and output follow (sizes in fmpl_coll_sizes) */
} fmpl_coll_scratch;

typedef struct fmpl_coll_team {
    fmpl_coll_scratch *mine;
    fmpl_coll_scratch **peer;  /* [size] mapped here */
    fmpl_ctl_desc diss[FMPL_COLL_ROUNDS]; /* pre-built barrier flag writes */
    int rounds;                /* ceil(log2(size)) */
    uint64_t barrier_epoch;
    uint64_t exchange_seq;     /* posted / sliced / finished */
    uint64_t exchange_full;    /* last sequence that used the whole input area */
    uint64_t bc_seq;           /* broadcast chunk sequence */
} fmpl_coll_team;

extern int64_t fmpl_bcast_chunk;  /* FMPL_BCAST_CHUNK */
extern int64_t fmpl_coll_area;    /* FMPL_COLL_AREA */

static inline char *fmpl_coll_ring(fmpl_coll_scratch *s, uint64_t chunk)
{
    return (char *)(s + 1) + (chunk % FMPL_BCAST_SLOTS) * (uint64_t)fmpl_bcast_chunk;
}
static inline char *fmpl_coll_input(fmpl_coll_scratch *s)
{
    return (char *)(s + 1) + FMPL_BCAST_SLOTS * (uint64_t)fmpl_bcast_chunk;
}
static inline char *fmpl_coll_output(fmpl_coll_scratch *s)
{
    return fmpl_coll_input(s) + fmpl_coll_area;
}

/* Bytes of a line after its counter: small exchanges travel there. */
#define FMPL_LINE_DATA 56
static inline char *fmpl_line_data(fmpl_line *l) { return l->pad; }

static inline uint64_t fmpl_line_get(const fmpl_line *l)
{
    return atomic_load_explicit(&((fmpl_line *)l)->v, memory_order_acquire);
}
static inline void fmpl_line_set(fmpl_line *l, uint64_t v)
{
    atomic_store_explicit(&l->v, v, memory_order_release);
}

/* Step 1 of an exchange of sequence s that uses input half s % 2: wait until
 * nobody reads that half any more. */
void fmpl_coll_exchange_begin(fmpl_team *t, uint64_t s);

int fmpl_coll_init(void);
int fmpl_coll_team_create(fmpl_team *t, fmpl_raddr *mine);
int fmpl_coll_team_connect(fmpl_team *t, const fmpl_raddr *scratch);
void fmpl_coll_team_destroy(fmpl_team *t);

/* Wait until every other member's line `field` reaches `value`. */
void fmpl_coll_wait_all(fmpl_team *t, size_t field_offset, uint64_t value);
#define FMPL_COLL_WAIT_ALL(t, field, value)                                         \
    fmpl_coll_wait_all((t), offsetof(fmpl_coll_scratch, field), (value))

#endif
