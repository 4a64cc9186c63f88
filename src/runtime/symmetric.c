/* Symmetric allocation: agreeing on addresses and offsets over a team.
 *
 * The arena and its blocks are the fabric's (fabric/symmetric.h); this file
 * makes the members of a team agree, with max-allreduces of a few 64-bit
 * words (a minimum travels as a complement: max(~x) = ~min(x)).
 *
 * fmpl_symmetric_alloc(t, size), every member:
 *   1. one allreduce of {arena address if placed, ~it if placed, arena
 *      offset and ~it, arena size and ~it, size asked and ~it, its first-fit
 *      offset p and ~p, "not placed"}.  Members must agree on the arena's offset and size
 *      and on the size asked, and members that placed their arenas on the
 *      same address; otherwise every member fails (NULL), with a message;
 *   2. if a member has not placed its arena: placement (below);
 *   3. while the proposals differ: L = the largest; each member proposes its
 *      first fit at or above L; allreduce {p, ~p}.  L grows strictly (a
 *      member that proposed it proposes it again), so this ends, at an
 *      offset free on every member, or at "no room" on some member (NULL
 *      everywhere).  Members that made the same allocations agree at once;
 *   4. every member takes [p, p + size) and returns base + p.
 * Placement (members of t without an arena; those with one try nothing):
 *   round 0: the address the placed members share, else FMPL_SYMMETRIC_ADDRESS;
 *   each tries to map its arena there (fabric: MAP_FIXED_NOREPLACE);
 *   allreduce {failed, proposal}, where member (round mod size) proposes an
 *   address its kernel has room at: no failure ends it, else the members that
 *   mapped unmap, and the next round tries the proposal.  An address shared
 *   by placed members cannot move: failure there is final.
 * Ranks that first allocate on disjoint communicators try the same first
 * address, so their arenas usually line up; when they do not, an allocation
 * over both fails with a message (allocate first over FMPL_COMM_WORLD).
 *
 * fmpl_symmetric_free(t, p): one allreduce of {p, ~p} (every member passes
 * the same pointer; it also serves as the barrier after which no member
 * writes into the block any more), then every member gives the block back. */
#include "runtime/runtime.h"
#include "collectives/collectives.h"
#include "fabric/symmetric.h"
#include "base/error.h"
#include "base/log.h"
#include "base/tunable.h"

#include <string.h>

FMPL_TUNABLE(tunable_symmetric_address, "FMPL_SYMMETRIC_ADDRESS", "0x600000000000",
             "address where ranks first try to place their symmetric arenas (0: rank 0 of the "
             "communicator proposes one); on failure each member in turn proposes one");

enum { PLACE_ROUNDS = 16 };

static void max_u64(const void *in, void *inout, int64_t count)
{
    for (int64_t i = 0; i < count; i++) {
        uint64_t a, b;
        memcpy(&a, (const char *)in + 8 * i, 8);
        memcpy(&b, (char *)inout + 8 * i, 8);
        if (a > b)
            memcpy((char *)inout + 8 * i, &a, 8);
    }
}

/* v[0 .. n) = the element-wise maximum over the team. */
static int allreduce_max(fmpl_team *t, uint64_t *v, int n)
{
    fmpl_op op;
    uint64_t work[12];
    fmpl_op_from_kernel(&op, max_u64, sizeof(uint64_t));
    return fmpl_coll_allreduce(t, v, n, &op, work);
}

/* Entries of the first allreduce: each value, then its complement. */
enum { A_BASE, A_SEG_OFF = 2, A_SIZE = 4, A_ASK = 6, A_FIT = 8, A_UNPLACED = 10, A_N = 11 };

static void both(uint64_t *v, int at, uint64_t x)
{
    v[at] = x;
    v[at + 1] = ~x;
}

/* All members gave the same value at v[at] (max == min). */
static int same(const uint64_t *v, int at) { return v[at] == ~v[at + 1]; }

static int place(fmpl_team *t, uint64_t shared)
{
    int had = fmpl_sym.base != NULL;
    uint64_t cand = shared ? shared : (uint64_t)fmpl_tunable_long(&tunable_symmetric_address);
    for (int round = 0; round < PLACE_ROUNDS; round++) {
        int ok = had || fmpl_sym_try_place(cand);
        uint64_t v[2] = {!ok, t->rank == round % t->size ? fmpl_sym_propose() : 0};
        int rc = allreduce_max(t, v, 2);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (!v[0])
            return FMPL_SUCCESS;
        if (ok && !had)
            fmpl_sym_unplace();
        if (shared)
            return FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                              "members of this communicator already use symmetric memory at "
                              "%#llx, and another member cannot map its arena there: allocate "
                              "first over a communicator holding every rank that shares "
                              "symmetric memory (FMPL_COMM_WORLD)",
                              (unsigned long long)shared);
        if (!v[1])
            break;
        cand = v[1];
    }
    return FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                      "the members found no address where all can map their %llu-byte "
                      "symmetric arenas (FMPL_SYMMETRIC_SIZE)",
                      (unsigned long long)fmpl_sym.size);
}

/* Step 3: from the proposals in v[0 .. 2), the offset every member can take. */
static int agree_offset(fmpl_team *t, uint64_t size, uint64_t *v, uint64_t *off)
{
    while (!same(v, 0)) {
        uint64_t from = v[0];
        uint64_t p = from == FMPL_SYM_NONE ? FMPL_SYM_NONE : fmpl_sym_first_fit(from, size);
        both(v, 0, p);
        int rc = allreduce_max(t, v, 2);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    *off = v[0];
    if (*off == FMPL_SYM_NONE)
        return FMPL_ERROR(FMPL_ERR_NO_MEMORY,
                          "no room for %llu bytes in the symmetric arena of some member "
                          "(FMPL_SYMMETRIC_SIZE is %llu bytes per rank)",
                          (unsigned long long)size, (unsigned long long)fmpl_sym.size);
    return FMPL_SUCCESS;
}

void *fmpl_symmetric_alloc(fmpl_team *t, size_t size, int *rcp)
{
    uint64_t v[A_N];
    if (fmpl_sym.base)
        both(v, A_BASE, (uint64_t)(uintptr_t)fmpl_sym.base);
    else
        v[A_BASE] = v[A_BASE + 1] = 0;
    both(v, A_SEG_OFF, fmpl_sym.seg_off);
    both(v, A_SIZE, fmpl_sym.size);
    both(v, A_ASK, size);
    both(v, A_FIT, fmpl_sym_first_fit(0, size));
    v[A_UNPLACED] = fmpl_sym.base == NULL;
    int rc = allreduce_max(t, v, A_N);
    /* Every test below reads only the allreduce's result: all members
     * decide alike. */
    uint64_t shared = v[A_BASE]; /* the placed members' address, 0: none placed */
    if (rc == FMPL_SUCCESS && !same(v, A_ASK))
        rc = FMPL_ERROR(FMPL_ERR_ARG, "members asked for different sizes (%llu to %llu bytes)",
                        (unsigned long long)~v[A_ASK + 1], (unsigned long long)v[A_ASK]);
    if (rc == FMPL_SUCCESS && v[A_ASK] == 0)
        rc = FMPL_ERROR(FMPL_ERR_ARG, "size is 0");
    if (rc == FMPL_SUCCESS && (!same(v, A_SEG_OFF) || !same(v, A_SIZE)))
        rc = FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                        "members have symmetric arenas of different sizes or places (set "
                        "FMPL_HEAP_SIZE and FMPL_SYMMETRIC_SIZE alike on every rank)");
    if (rc == FMPL_SUCCESS && v[A_SIZE] == 0)
        rc = FMPL_ERROR(FMPL_ERR_NO_MEMORY, "there is no symmetric arena (FMPL_SYMMETRIC_SIZE=0)");
    if (rc == FMPL_SUCCESS && shared && shared != ~v[A_BASE + 1])
        rc = FMPL_ERROR(FMPL_ERR_UNSUPPORTED,
                        "members placed their symmetric arenas at different addresses "
                        "(%#llx and %#llx), each first allocating on another communicator: "
                        "allocate first over FMPL_COMM_WORLD",
                        (unsigned long long)~v[A_BASE + 1], (unsigned long long)shared);
    if (rc == FMPL_SUCCESS && v[A_UNPLACED])
        rc = place(t, shared);
    uint64_t off = 0;
    if (rc == FMPL_SUCCESS)
        rc = agree_offset(t, size, v + A_FIT, &off);
    if (rc == FMPL_SUCCESS)
        rc = fmpl_sym_take(off, size);
    *rcp = rc;
    return rc == FMPL_SUCCESS ? fmpl_sym.base + off : NULL;
}

int fmpl_symmetric_free(fmpl_team *t, void *p)
{
    uint64_t v[2];
    both(v, 0, (uint64_t)(uintptr_t)p);
    int rc = allreduce_max(t, v, 2);
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!same(v, 0))
        return FMPL_ERROR(FMPL_ERR_ARG,
                          "members freed different symmetric blocks (%p on this member)", p);
    if (!p)
        return FMPL_SUCCESS; /* NULL everywhere: nothing to free */
    uint64_t off = fmpl_sym_offset(p);
    if (off == FMPL_SYM_NONE || fmpl_sym_give(off) != FMPL_SUCCESS)
        return FMPL_ERROR(FMPL_ERR_ARG, "%p is not a live block from fmpl_alloc_symmetric", p);
    return FMPL_SUCCESS;
}
