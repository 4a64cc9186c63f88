/* The committed representation of a datatype: a loop nest over contiguous
 * chunks ("dataloop"), built by dt_commit.c and walked by dt_pack.c.
 *
 * A node describes the chunks of ONE element of a type, in typemap order,
 * relative to an origin address; `count` elements of a type are the root
 * node repeated at origin + i * extent.  Kinds:
 *
 *   CONTIG    one chunk of `size` bytes at `off`.
 *   VECTOR    `count` copies of `child`, copy i at off + i * stride.
 *   BLOCKS    `count` chunks, chunk i of len[i] bytes at off + disp[i].
 *   INDEXED   `count` entries; entry i is len[i] copies of `child`, copy j
 *             at off + disp[i] + j * stride.
 *   STRUCT    `count` entries; entry i is children[i] at off + disp[i].
 *
 * Invariants (checked by dl_check in debug builds)
 *  - Every node has size > 0 (packed bytes of one instance): empty parts
 *    are dropped while building, an empty type has no loop at all (NULL).
 *  - VECTOR: count >= 2, size = count * child->size.
 *  - BLOCKS/INDEXED/STRUCT: count >= 1, every entry non-empty, prefix[i] =
 *    packed bytes of the entries before i (prefix[0] = 0, prefix[count] =
 *    size), so prefix is strictly increasing and a byte offset is found by
 *    binary search.
 *  - A node owns its children and arrays (one malloc per node, arrays
 *    after the struct); nothing is shared, so any node may be modified by
 *    its owner (dl_shift) and freed with dl_free.
 *  - Normal forms (the builders apply them; they are what makes vectors of
 *    vectors stay small and the fast paths fire): no VECTOR of a CONTIG
 *    whose stride equals the chunk size (that is one CONTIG); no VECTOR of a
 *    VECTOR that continues it regularly (one VECTOR); BLOCKS never holds two
 *    adjacent chunks (merged) and is not a regular pattern (that is a
 *    VECTOR of CONTIG); count-1 containers are replaced by their content.
 *
 * Builders take ownership of the nodes passed in (also on failure) and
 * return NULL both for "empty" and for "out of memory"; the latter also sets
 * ctx->err, which the caller checks once at the end. */
#ifndef FMPL_DATATYPE_DT_LOOP_H
#define FMPL_DATATYPE_DT_LOOP_H

#include <stdbool.h>
#include <stdint.h>

typedef enum dl_kind {
    DL_CONTIG = 1,
    DL_VECTOR,
    DL_BLOCKS,
    DL_INDEXED,
    DL_STRUCT,
} dl_kind;

typedef struct dl_node dl_node;
struct dl_node {
    dl_kind kind;
    int64_t off;
    int64_t size;
    int64_t count;
    int64_t stride;     /* VECTOR, INDEXED */
    int64_t *disp;      /* BLOCKS, INDEXED, STRUCT: count entries */
    int64_t *len;       /* BLOCKS: bytes; INDEXED: copies of child */
    int64_t *prefix;    /* BLOCKS, INDEXED, STRUCT: count + 1 entries */
    dl_node *child;     /* VECTOR, INDEXED */
    dl_node **children; /* STRUCT */
};

typedef struct dl_ctx {
    int err; /* FMPL_SUCCESS, or FMPL_ERR_NO_MEMORY once an allocation failed */
} dl_ctx;

/* A chunk of `bytes` bytes at `off` (NULL when bytes == 0). */
dl_node *dl_contig(dl_ctx *x, int64_t off, int64_t bytes);
/* `count` copies of child, copy i at i * stride. */
dl_node *dl_vector(dl_ctx *x, int64_t count, int64_t stride, dl_node *child);
/* Chunks (disp[i], len[i]) in order; zero lengths are dropped.  The arrays
 * are copied. */
dl_node *dl_blocks(dl_ctx *x, int64_t n, const int64_t *disp, const int64_t *len);
/* Entry i = copies[i] copies of child at disp[i] + j * stride.  The arrays
 * are copied; child is owned. */
dl_node *dl_indexed(dl_ctx *x, int64_t n, const int64_t *disp, const int64_t *copies,
                    int64_t stride, dl_node *child);
/* Entry i = items[i] at disp[i]; NULL items are dropped.  The item array
 * itself stays the caller's; the items are owned. */
dl_node *dl_struct(dl_ctx *x, int64_t n, const int64_t *disp, dl_node **items);

/* Move a node by d bytes (NULL-safe); returns it. */
static inline dl_node *dl_shift(dl_node *n, int64_t d)
{
    if (n)
        n->off += d;
    return n;
}

dl_node *dl_copy(dl_ctx *x, const dl_node *n);
void dl_free(dl_node *n);

/* Commit-time improvements: small irregular subtrees (STRUCT, INDEXED,
 * nested BLOCKS) become one merged BLOCKS; a too deep tree is flattened
 * entirely (sets ctx->err = FMPL_ERR_UNSUPPORTED if it cannot be). */
dl_node *dl_optimize(dl_ctx *x, dl_node *n);

/* Visit the chunks of one instance at `origin` in order, adjacent chunks
 * merged; stops early (returning the value) when fn returns non-zero. */
typedef int (*dl_chunk_fn)(int64_t addr, int64_t len, void *ctx);
int dl_for_each_chunk(const dl_node *n, int64_t origin, dl_chunk_fn fn, void *ctx);

int dl_depth(const dl_node *n);

/* Chunks of one instance before merging, saturating at cap + 1. */
int64_t dl_chunk_count(const dl_node *n, int64_t cap);

#ifdef FMPL_DEBUG
void dl_check(const dl_node *n);
#else
static inline void dl_check(const dl_node *n) { (void)n; }
#endif

#endif
