/* Per-team state of the collectives: a small header block in each member's
 * shared heap, allocated with the team, a large areas block allocated at
 * the first collective that needs it, and sequence counters that every
 * member advances identically (they are never exchanged: all members call
 * the same collectives in the same order, so they agree on every sequence
 * number).
 *
 * Two such states per team, one per kind of collective: the blocking calls
 * use t->coll, the nonblocking and persistent ones (the RUN steps and tags
 * of schedules made by MPI_I*, *_init and the native fmpl_i*) use
 * t->coll->nbc.  So "the same order on every member" holds within each kind
 * only, as in MPICH, whose blocking and nonblocking collectives never match
 * each other: a member may run a blocking barrier while its nonblocking
 * allreduce is pending and another member runs them the other way round
 * (issue 16; mpi4py's test_ulfm relies on it).  The two states are alike,
 * with their own headers, areas, counters and private arrays; the two
 * headers are one block in the shared heap (the nonblocking one right
 * after the blocking one), so members exchange one address.  What only
 * the blocking state holds: the split-phase barriers (`split`), the
 * reclamation counters (`retired`, `reclaimed`), the build-time arrays
 * offs and bcounts, and the point-to-point work area `tmp` (nonblocking
 * schedules allocate their own).
 *
 * Why two blocks: the areas (broadcast ring and reduction/exchange areas,
 * about 768 KiB with the default tunables) would make every communicator
 * cost that much of every member's heap; MPI programs create thousands of
 * communicators and use most only lightly (barriers, small reductions
 * travel in the header lines).  Lazy allocation needs no extra protocol
 * because every algorithm reads other members' areas and writes only its
 * own: a member allocates its areas when it first writes into them, stores
 * their address in its header's `areas` line, and only then signals the
 * data (posted, sliced, bc_produced, prod), with release order; a reader
 * that has seen the signal loads the address (fmpl_coll_areas) and caches
 * it.  The header (lines, prod/cons, tables) stays eager: members poll
 * each other's lines before either has run a collective.  A team that only
 * synchronises costs twice (one header per kind) ~3.6 KiB + 200 bytes per
 * member in each member's heap.
 *
 * Header block of one member (all lines 64 bytes, counters monotonic):
 *   flag[k]        barrier round k (dissemination) / arrival from child k
 *                  (binomial); written by the peer of that round
 *   release        binomial barrier: written by the parent
 *   posted[2]      exchange: my input of sequence s is ready (value s), in
 *                  posted[s % 2]'s own spare bytes when it is small, else in
 *                  `input`; two lines so that back-to-back calls rarely wait.
 *                  The pairwise engine (shm_pairs.c) puts its descriptor in
 *                  the spare bytes instead.
 *   sliced         slices: my result slice of sequence s is in `output`
 *   finished       exchange/slices/pairs: I have read all I need of sequence s
 *                  (and of every earlier one) from other members' blocks
 *   bc_produced    broadcast: chunks of the global chunk sequence I published
 *   bc_consumed    broadcast: chunks of the global chunk sequence I copied out
 *   arrived        member 0's only: arrivals at the central barrier (every
 *                  member adds 1 per barrier; epoch e is complete at e * P)
 *   retired, reclaimed   member 0's only: how many members have freed the
 *                  team, and how many others have released their state
 *                  since (deferred reclamation, runtime/team_build.c)
 *   areas          the packed remote address of my areas block, 0 until
 *                  allocated (written once, before any signal about them)
 *   split[k]       split-phase barriers: stage k's count, written by my
 *                  stage-k partner (barrier_split.c); 32 words, 4 lines
 *   plan_ring[8]   prepared persistent broadcasts I root: {sequence, data},
 *                  one line each (bcast_shm_plan.c)
 *   bc_claim, bc_done  direct broadcast into my buffer: (tag << 32) + chunks
 *                  claimed / copied, by me or by the root (bcast_shm_direct.c);
 *                  bc_claim's spare bytes hold my buffer's packed address
 *   prod[size]     pairwise engine: prod[d] is written by me for member d:
 *                  (s << 32) + k + 1 once chunk k of sequence s for d is in
 *                  my staging slots, (s << 32) | FMPL_PAIR_DONE once I have
 *                  put my data straight into d's buffer.  prod[me] is the
 *                  chunk counter of a stream read by every member (allgather)
 *   cons[size]     pairwise engine: cons[q] is written by me for member q:
 *                  (s << 32) + k + 1 once I copied out q's chunk k of sequence
 *                  s, (s << 32) | FMPL_PAIR_DONE once I have read q's buffer
 *                  directly (q may then return and reuse it)
 *   table[2][2][size]  pairwise engine: {byte displacement, byte count} per
 *                  member, [s % 2][0] for my send blocks, [s % 2][1] for my
 *                  receive blocks, published with posted[s % 2]
 *   plan_cons[size]  prepared broadcasts: how many of member r's plan_ring
 *                  entries I have copied out (one word per root, published
 *                  every FMPL_PLAN_SLOTS / 2 entries)
 * Areas block of one member (lazy, see above):
 *   ring[NSLOTS]   broadcast staging chunks (double-buffered and more)
 *   input, output  reduction / exchange areas of FMPL_COLL_AREA bytes each
 *                  (the pairwise engine's staging slots live in their halves)
 *
 * Invariants of the exchange sequence (exchange_seq, advanced by one per use
 * on every member):
 *  - A sequence s either uses "half s % 2" (input half s % 2, output half
 *    s % 2, posted[s % 2]'s spare bytes, table[s % 2]) and starts with
 *    fmpl_coll_exchange_ready(s) (coll_run.h), or uses the whole input and output areas:
 *    it then waits until every member's finished >= s - 1 and sets
 *    exchange_full = s.
 *  - A member sets finished = s only when it will read nothing more of
 *    sequence s (nor earlier) in other members' blocks, and, for the pairwise
 *    engine, when no member reads or writes its buffers any more.
 *  - prod/cons values carry the sequence in their top 32 bits, so a value
 *    from an earlier sequence is always smaller than any a reader of s waits
 *    for; nothing is reset.
 * Outside the scratch block: `tmp`, a private work area of the point-to-point
 * reduction algorithms (three chunks of FMPL_COLL_AREA / 2 bytes, allocated
 * in the shared heap at first use and kept with the team), and `offs`
 * (size + 1 int64 prefix sums used by reduce-scatter) and `bcounts` (the
 * equal counts of reduce_scatter_block), so that no call allocates. */
#ifndef FMPL_COLLECTIVES_COLL_TEAM_H
#define FMPL_COLLECTIVES_COLL_TEAM_H

#include <stdint.h>
#include <string.h>

#include "fabric/fabric.h"
#include "protocols/team.h"

#define FMPL_COLL_ROUNDS 32
#define FMPL_BCAST_SLOTS 4
#define FMPL_PLAN_SLOTS 8  /* prepared broadcasts: entries of a root's ring */

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
    fmpl_line arrived;   /* member 0's: central barrier arrivals */
    fmpl_line retired;   /* member 0's: members that freed the team (team_build.c) */
    fmpl_line reclaimed; /* member 0's: other members that released their state */
    fmpl_line areas;     /* packed address of my areas block, 0 until allocated */
    _Atomic uint64_t split[FMPL_COLL_ROUNDS]; /* split-phase barrier stages */
    fmpl_line plan_ring[FMPL_PLAN_SLOTS]; /* prepared broadcasts I root (bcast_shm_plan.c) */
    fmpl_line bc_claim;  /* direct broadcast: chunks of my buffer claimed (bcast_shm_direct.c) */
    fmpl_line bc_done;   /* direct broadcast: chunks of my buffer copied */
    /* prod[size], cons[size], table[2][2][size], plan_cons[size] follow */
} fmpl_coll_scratch;
_Static_assert(sizeof(fmpl_coll_scratch) % 64 == 0, "the lines after the header stay aligned");

/* Pairwise engine: one entry per member of a table. */
typedef struct fmpl_coll_entry {
    int64_t displ;
    int64_t count;
} fmpl_coll_entry;

#define FMPL_PAIR_DONE 0xffffffffull

/* Pairwise engine: what one member knows about one pair (me -> d or q -> me)
 * during a call; an array per team, so no call allocates. */
typedef struct fmpl_pair_state {
    int mode;            /* shm_pairs.c: PAIR_* */
    int64_t n;           /* bytes of the pair, as this member knows them */
    uint64_t next;       /* next chunk to stage (out) or copy out (in) */
    uint64_t nchunks;
    char *local;         /* my side: the source (out) or destination (in) */
} fmpl_pair_state;

/* What one member knows of the prepared broadcasts rooted at one member. */
typedef struct fmpl_plan_root {
    uint64_t started;          /* instances started so far (the next one's k) */
    uint64_t base;             /* entries copied out, all of them up to here
                                  (instances complete in any order: a member may
                                  wait for its requests in any order) */
    uint64_t bits;             /* entries base, base + 1, ... copied out */
} fmpl_plan_root;

typedef struct fmpl_coll_team {
    struct fmpl_coll_team *nbc; /* in the blocking state: the nonblocking one
                                  (its neighbour in one allocation); NULL there */
    fmpl_coll_scratch *mine;
    fmpl_coll_scratch **peer;  /* [size] mapped here; NULL for network peers */
    fmpl_raddr *peer_at;       /* [size] each member's scratch, as remote addresses */
    int spans_worlds;          /* some member is of another world (spawned or
                                  connected): choices needing agreement on loads
                                  or hosts are off, and MPI_Finalize waits for its
                                  reclamation (team_build.c) */
    int central_barrier;       /* barriers count on one line (barrier_central.c):
                                  oversubscribed, and every member is of this world,
                                  so all members decide alike (members of several
                                  worlds may see different loads) */
    int net;                   /* some member is a network peer: only the
                                  point-to-point algorithms and the dissemination
                                  barrier run (select.c) */
    int nodes;                 /* with net: the team's node shape
                                  (fmpl_sched_nodes_shape), for the selection */
    char **areas;              /* [size] each member's areas block mapped here,
                                  NULL until used (fmpl_coll_areas) */
    const int *world;          /* the team's world ranks */
    int rank;                  /* this member */
    fmpl_ctl_desc diss[FMPL_COLL_ROUNDS]; /* pre-built barrier flag writes */
    int rounds;                /* ceil(log2(size)) */
    int size;                  /* members (copy of the team's) */
    int cma_all;               /* I can reach every member's private memory by CMA */
    uint64_t barrier_epoch;
    uint64_t exchange_seq;     /* posted / sliced / finished */
    uint64_t exchange_full;    /* last sequence that used the whole input area */
    uint64_t bc_seq;           /* broadcast chunk sequence */
    uint64_t sched_seq;        /* schedule instances of this kind (sched.h): their
                                  tags */
    uint64_t run_tickets;      /* resumable algorithms started (coll_run.h) */
    uint64_t run_turn;         /* the ticket whose run may proceed */
    struct fmpl_pair_state *pairs; /* [2 * size] pairwise engine: out, then in */
    int64_t *offs;             /* [size + 1] reduce-scatter block offsets (blocking
                                  state only: read while building a schedule) */
    int64_t *bcounts;          /* [size] reduce_scatter_block's equal counts (idem) */
    uint64_t *fin_seen;        /* [size] the highest `finished` seen of each member
                                  (monotonic, so a cached value that suffices
                                  spares a cross-core read) */
    struct fmpl_bsplit *split; /* split-phase barriers, from the first start
                                  (barrier_split.h; blocking state only) */
    struct fmpl_plan_root *plans; /* [size] prepared broadcasts, per root member
                                  (bcast_shm_plan.c) */
    uint64_t plan_room;        /* mine: every member has consumed this many of my
                                  plan_ring entries (a cached minimum) */
    char *tmp;                 /* point-to-point work area of blocking calls, or
                                  NULL until used */
    int tmp_shared;            /* tmp is in the shared heap (else malloc) */
} fmpl_coll_team;

extern int64_t fmpl_bcast_chunk;  /* FMPL_BCAST_CHUNK */
extern int64_t fmpl_coll_area;    /* FMPL_COLL_AREA, a multiple of 128 (halves are 64-aligned) */

/* Member p's areas block.  This member's is allocated at its first use
 * (the caller is about to write into it); another member's is valid once
 * that member has signalled data in it.  Never NULL: a member that finds no
 * memory for its areas ends the job with a message (its peers would wait
 * for it forever). */
char *fmpl_coll_areas_resolve(fmpl_coll_team *c, int p);
static inline char *fmpl_coll_areas(fmpl_coll_team *c, int p)
{
    return c->areas[p] ? c->areas[p] : fmpl_coll_areas_resolve(c, p);
}

static inline char *fmpl_coll_ring(char *areas, uint64_t chunk)
{
    return areas + (chunk % FMPL_BCAST_SLOTS) * (uint64_t)fmpl_bcast_chunk;
}
static inline char *fmpl_coll_input(char *areas)
{
    return areas + FMPL_BCAST_SLOTS * (uint64_t)fmpl_bcast_chunk;
}
static inline char *fmpl_coll_output(char *areas)
{
    return fmpl_coll_input(areas) + fmpl_coll_area;
}

/* Pairwise engine regions after the header lines (see the layout above). */
static inline fmpl_line *fmpl_coll_prod(fmpl_coll_scratch *s, int size, int peer)
{
    (void)size;
    return (fmpl_line *)(s + 1) + peer;
}
static inline fmpl_line *fmpl_coll_cons(fmpl_coll_scratch *s, int size, int peer)
{
    return (fmpl_line *)(s + 1) + size + peer;
}
static inline fmpl_coll_entry *fmpl_coll_table(fmpl_coll_scratch *s, int size, uint64_t seq,
                                               int recv)
{
    fmpl_coll_entry *t = (fmpl_coll_entry *)fmpl_coll_cons(s, size, size);
    return t + ((seq % 2) * 2 + (uint64_t)recv) * (uint64_t)size;
}

/* Prepared broadcasts: member s's count of root r's ring entries consumed. */
static inline _Atomic uint64_t *fmpl_coll_plan_cons(fmpl_coll_scratch *s, int size, int root)
{
    fmpl_coll_entry *end = fmpl_coll_table(s, size, 0, 0) + 4 * (size_t)size;
    return (_Atomic uint64_t *)end + root;
}

/* Bytes of half of the input (or output) area: one half per sequence parity. */
static inline int64_t fmpl_coll_half(void) { return fmpl_coll_area / 2; }
static inline char *fmpl_coll_input_half(char *areas, uint64_t seq)
{
    return fmpl_coll_input(areas) + (seq % 2) * (uint64_t)fmpl_coll_half();
}
static inline char *fmpl_coll_output_half(char *areas, uint64_t seq)
{
    return fmpl_coll_output(areas) + (seq % 2) * (uint64_t)fmpl_coll_half();
}

/* The point-to-point work area: three chunks of fmpl_coll_half() bytes.
 * NULL (after reporting) when no memory could be found. */
char *fmpl_coll_tmp(fmpl_team *t);

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

/* What each unit of a root's broadcast sequence was published for: the
 * root's size of the call and the unit's kind, one word per ring slot in
 * the spare bytes of the root's bc_produced line (written before the
 * line's release-store; rewritten only for unit q + SLOTS, once every
 * member has consumed unit q).  A member checks its first unit of a call
 * against its own size (bcast_shm_mismatch.c). */
enum { FMPL_BCAST_UNIT_CHUNK = 1, FMPL_BCAST_UNIT_DESC = 2 };
_Static_assert(FMPL_BCAST_SLOTS * sizeof(uint64_t) <= sizeof(((fmpl_line *)0)->pad),
               "a word per slot in the produced line");
static inline void fmpl_bcast_unit_publish(fmpl_coll_scratch *rs, uint64_t q, int64_t size,
                                           int kind)
{
    uint64_t meta = (uint64_t)size << 2 | (uint64_t)kind;
    memcpy(fmpl_line_data(&rs->bc_produced) + (q % FMPL_BCAST_SLOTS) * sizeof meta, &meta,
           sizeof meta);
    fmpl_line_set(&rs->bc_produced, q + 1);
}
/* Unit q's {size, kind}; read after bc_produced >= q + 1 was seen. */
static inline uint64_t fmpl_bcast_unit_meta(fmpl_coll_scratch *rs, uint64_t q)
{
    uint64_t meta;
    memcpy(&meta, fmpl_line_data(&rs->bc_produced) + (q % FMPL_BCAST_SLOTS) * sizeof meta,
           sizeof meta);
    return meta;
}
static inline int64_t fmpl_bcast_meta_size(uint64_t meta) { return (int64_t)(meta >> 2); }
static inline int fmpl_bcast_meta_kind(uint64_t meta) { return (int)(meta & 3); }
/* Chunks of the ring broadcast of `size` bytes. */
static inline uint64_t fmpl_bcast_chunks(int64_t size)
{
    return (uint64_t)((size + fmpl_bcast_chunk - 1) / fmpl_bcast_chunk);
}

int fmpl_coll_init(void);
int fmpl_coll_team_create(fmpl_team *t, fmpl_raddr *mine);
int fmpl_coll_team_connect(fmpl_team *t, const fmpl_raddr *scratch);
void fmpl_coll_team_destroy(fmpl_team *t);

#endif
