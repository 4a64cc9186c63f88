/* Dataloop nodes: builders with their normal forms, copy, free, commit-time
 * optimisation, chunk enumeration.  See dt_loop.h for the node kinds and
 * invariants. */
#include "datatype/dt_loop.h"
#include "base/log.h"
#include "base/tunable.h"
#include "fmpl.h"

#include <stdlib.h>
#include <string.h>

FMPL_TUNABLE(tunable_flatten_max, "FMPL_DT_FLATTEN_MAX", "1024",
             "datatype commit: irregular parts (struct, indexed) with at most this many "
             "contiguous chunks are flattened into one chunk list");

/* Deeper loop nests are flattened at commit (the pack walker recurses once
 * per level); if one has more chunks than DL_DEEP_FLATTEN_MAX it is refused. */
#define DL_MAX_DEPTH 64
#define DL_DEEP_FLATTEN_MAX (INT64_C(1) << 22)

/* ------------------------------------------------------------ allocation */

static dl_node *dl_alloc(dl_ctx *x, dl_kind kind, int64_t count)
{
    size_t nwords = 0, nptrs = 0;
    if (kind == DL_BLOCKS || kind == DL_INDEXED) {
        nwords = 3 * (size_t)count + 1;
    } else if (kind == DL_STRUCT) {
        nwords = 2 * (size_t)count + 1;
        nptrs = (size_t)count;
    }
    if (count < 0 || (uint64_t)count > (SIZE_MAX / 64)) {
        x->err = FMPL_ERR_NO_MEMORY;
        return NULL;
    }
    dl_node *n = calloc(1, sizeof *n + nwords * sizeof(int64_t) + nptrs * sizeof(dl_node *));
    if (!n) {
        x->err = FMPL_ERR_NO_MEMORY;
        return NULL;
    }
    n->kind = kind;
    n->count = count;
    int64_t *w = (int64_t *)(n + 1);
    if (kind == DL_BLOCKS || kind == DL_INDEXED) {
        n->disp = w;
        n->len = w + count;
        n->prefix = w + 2 * count;
    } else if (kind == DL_STRUCT) {
        n->disp = w;
        n->prefix = w + count;
        n->children = (dl_node **)(w + 2 * count + 1);
    }
    return n;
}

void dl_free(dl_node *n)
{
    if (!n)
        return;
    switch (n->kind) {
    case DL_VECTOR:
    case DL_INDEXED:
        dl_free(n->child);
        break;
    case DL_STRUCT:
        for (int64_t i = 0; i < n->count; i++)
            dl_free(n->children[i]);
        break;
    default:
        break;
    }
    free(n);
}

dl_node *dl_copy(dl_ctx *x, const dl_node *n)
{
    if (!n)
        return NULL;
    dl_node *c = dl_alloc(x, n->kind, (n->kind == DL_CONTIG || n->kind == DL_VECTOR) ? 0 : n->count);
    if (!c)
        return NULL;
    c->off = n->off;
    c->size = n->size;
    c->count = n->count;
    c->stride = n->stride;
    switch (n->kind) {
    case DL_CONTIG:
        break;
    case DL_VECTOR:
        c->child = dl_copy(x, n->child);
        break;
    case DL_BLOCKS:
        memcpy(c->disp, n->disp, (3 * (size_t)n->count + 1) * sizeof(int64_t));
        break;
    case DL_INDEXED:
        memcpy(c->disp, n->disp, (3 * (size_t)n->count + 1) * sizeof(int64_t));
        c->child = dl_copy(x, n->child);
        break;
    case DL_STRUCT:
        memcpy(c->disp, n->disp, (2 * (size_t)n->count + 1) * sizeof(int64_t));
        for (int64_t i = 0; i < n->count; i++)
            c->children[i] = dl_copy(x, n->children[i]);
        break;
    }
    if (x->err) {
        dl_free(c);
        return NULL;
    }
    return c;
}

/* -------------------------------------------------------------- builders */

dl_node *dl_contig(dl_ctx *x, int64_t off, int64_t bytes)
{
    if (bytes <= 0)
        return NULL;
    dl_node *n = dl_alloc(x, DL_CONTIG, 0);
    if (!n)
        return NULL;
    n->off = off;
    n->size = bytes;
    n->count = 1;
    return n;
}

dl_node *dl_vector(dl_ctx *x, int64_t count, int64_t stride, dl_node *child)
{
    if (!child)
        return NULL;
    if (count <= 0 || x->err) {
        dl_free(child);
        return NULL;
    }
    if (count == 1)
        return child;
    int64_t span;
    if (child->kind == DL_CONTIG && stride == child->size) {
        child->size *= count; /* the caller checked that sizes fit */
        return child;
    }
    if (child->kind == DL_VECTOR && !__builtin_mul_overflow(child->count, child->stride, &span) &&
        span == stride) {
        child->count *= count;
        child->size *= count;
        return child;
    }
    dl_node *n = dl_alloc(x, DL_VECTOR, 0);
    if (!n) {
        dl_free(child);
        return NULL;
    }
    n->count = count;
    n->stride = stride;
    n->child = child;
    n->size = count * child->size;
    return n;
}

/* A BLOCKS node whose chunks are already merged, or the simpler form it
 * has: one chunk -> CONTIG, a regular pattern -> VECTOR of CONTIG. */
static dl_node *blocks_normal_form(dl_ctx *x, dl_node *b)
{
    int64_t m = b->count;
    if (m == 1) {
        dl_node *c = dl_contig(x, b->off + b->disp[0], b->len[0]);
        dl_free(b);
        return c;
    }
    bool regular = true;
    int64_t delta = b->disp[1] - b->disp[0];
    for (int64_t i = 1; i < m && regular; i++)
        regular = b->len[i] == b->len[0] && b->disp[i] - b->disp[i - 1] == delta;
    if (!regular)
        return b;
    dl_node *v = dl_shift(dl_vector(x, m, delta, dl_contig(x, 0, b->len[0])), b->off + b->disp[0]);
    dl_free(b);
    return v;
}

dl_node *dl_blocks(dl_ctx *x, int64_t n, const int64_t *disp, const int64_t *len)
{
    if (x->err)
        return NULL;
    int64_t m = 0, end = 0;
    for (int64_t i = 0; i < n; i++) {
        if (len[i] == 0)
            continue;
        if (m == 0 || disp[i] != end)
            m++;
        end = disp[i] + len[i];
    }
    if (m == 0)
        return NULL;
    dl_node *b = dl_alloc(x, DL_BLOCKS, m);
    if (!b)
        return NULL;
    int64_t k = -1;
    end = 0;
    for (int64_t i = 0; i < n; i++) {
        if (len[i] == 0)
            continue;
        if (k >= 0 && disp[i] == end) {
            b->len[k] += len[i];
        } else {
            k++;
            b->disp[k] = disp[i];
            b->len[k] = len[i];
        }
        end = disp[i] + len[i];
    }
    b->prefix[0] = 0;
    for (int64_t i = 0; i < m; i++)
        b->prefix[i + 1] = b->prefix[i] + b->len[i];
    b->size = b->prefix[m];
    return blocks_normal_form(x, b);
}

dl_node *dl_indexed(dl_ctx *x, int64_t n, const int64_t *disp, const int64_t *copies,
                    int64_t stride, dl_node *child)
{
    if (!child)
        return NULL;
    if (x->err) {
        dl_free(child);
        return NULL;
    }
    if (child->kind == DL_CONTIG && stride == child->size) {
        /* Each entry is one chunk. */
        int64_t *d = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof(int64_t));
        if (!d) {
            x->err = FMPL_ERR_NO_MEMORY;
            dl_free(child);
            return NULL;
        }
        int64_t *l = d + n;
        for (int64_t i = 0; i < n; i++) {
            d[i] = disp[i] + child->off;
            l[i] = copies[i] * child->size;
        }
        dl_node *b = dl_blocks(x, n, d, l);
        free(d);
        dl_free(child);
        return b;
    }
    int64_t m = 0, first = -1, c0 = 0, delta = 0, prev = 0;
    bool regular = true;
    for (int64_t i = 0; i < n; i++) {
        if (copies[i] == 0)
            continue;
        if (m == 0) {
            first = i;
            c0 = copies[i];
        } else {
            if (m == 1)
                delta = disp[i] - prev;
            regular = regular && copies[i] == c0 && disp[i] - prev == delta;
        }
        prev = disp[i];
        m++;
    }
    if (m == 0) {
        dl_free(child);
        return NULL;
    }
    if (m == 1)
        return dl_shift(dl_vector(x, c0, stride, child), disp[first]);
    if (regular)
        return dl_shift(dl_vector(x, m, delta, dl_vector(x, c0, stride, child)), disp[first]);
    dl_node *ix = dl_alloc(x, DL_INDEXED, m);
    if (!ix) {
        dl_free(child);
        return NULL;
    }
    int64_t k = 0;
    ix->prefix[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (copies[i] == 0)
            continue;
        ix->disp[k] = disp[i];
        ix->len[k] = copies[i];
        ix->prefix[k + 1] = ix->prefix[k] + copies[i] * child->size;
        k++;
    }
    ix->size = ix->prefix[m];
    ix->stride = stride;
    ix->child = child;
    return ix;
}

dl_node *dl_struct(dl_ctx *x, int64_t n, const int64_t *disp, dl_node **items)
{
    int64_t m = 0, last = -1;
    bool all_contig = true;
    for (int64_t i = 0; i < n; i++) {
        if (!items[i])
            continue;
        m++;
        last = i;
        all_contig = all_contig && items[i]->kind == DL_CONTIG;
    }
    if (x->err || m == 0) {
        for (int64_t i = 0; i < n; i++)
            dl_free(items[i]);
        return NULL;
    }
    if (m == 1)
        return dl_shift(items[last], disp[last]);
    if (all_contig) {
        int64_t *d = malloc(2 * (size_t)m * sizeof(int64_t));
        dl_node *b = NULL;
        if (!d) {
            x->err = FMPL_ERR_NO_MEMORY;
        } else {
            int64_t k = 0;
            for (int64_t i = 0; i < n; i++) {
                if (!items[i])
                    continue;
                d[k] = disp[i] + items[i]->off;
                d[m + k] = items[i]->size;
                k++;
            }
            b = dl_blocks(x, m, d, d + m);
            free(d);
        }
        for (int64_t i = 0; i < n; i++)
            dl_free(items[i]);
        return b;
    }
    dl_node *s = dl_alloc(x, DL_STRUCT, m);
    if (!s) {
        for (int64_t i = 0; i < n; i++)
            dl_free(items[i]);
        return NULL;
    }
    int64_t k = 0;
    s->prefix[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        if (!items[i])
            continue;
        s->disp[k] = disp[i];
        s->children[k] = items[i];
        s->prefix[k + 1] = s->prefix[k] + items[i]->size;
        k++;
    }
    s->size = s->prefix[m];
    return s;
}

/* -------------------------------------------------------------- chunks */

typedef struct merge_state {
    dl_chunk_fn fn;
    void *ctx;
    int64_t addr, len;
    bool have;
} merge_state;

static int emit(merge_state *m, int64_t addr, int64_t len)
{
    if (m->have && m->addr + m->len == addr) {
        m->len += len;
        return 0;
    }
    if (m->have) {
        int r = m->fn(m->addr, m->len, m->ctx);
        if (r)
            return r;
    }
    m->addr = addr;
    m->len = len;
    m->have = true;
    return 0;
}

static int walk_chunks(const dl_node *n, int64_t o, merge_state *m)
{
    int r = 0;
    o += n->off;
    switch (n->kind) {
    case DL_CONTIG:
        return emit(m, o, n->size);
    case DL_VECTOR:
        for (int64_t i = 0; i < n->count && !r; i++)
            r = walk_chunks(n->child, o + i * n->stride, m);
        return r;
    case DL_BLOCKS:
        for (int64_t i = 0; i < n->count && !r; i++)
            r = emit(m, o + n->disp[i], n->len[i]);
        return r;
    case DL_INDEXED:
        for (int64_t i = 0; i < n->count && !r; i++)
            for (int64_t j = 0; j < n->len[i] && !r; j++)
                r = walk_chunks(n->child, o + n->disp[i] + j * n->stride, m);
        return r;
    case DL_STRUCT:
        for (int64_t i = 0; i < n->count && !r; i++)
            r = walk_chunks(n->children[i], o + n->disp[i], m);
        return r;
    }
    return 0;
}

int dl_for_each_chunk(const dl_node *n, int64_t origin, dl_chunk_fn fn, void *ctx)
{
    if (!n)
        return 0;
    merge_state m = {fn, ctx, 0, 0, false};
    int r = walk_chunks(n, origin, &m);
    if (!r && m.have)
        r = fn(m.addr, m.len, ctx);
    return r;
}

/* Chunks of a node before merging, saturating at `cap` + 1. */
int64_t dl_chunk_count(const dl_node *n, int64_t cap)
{
    int64_t c = 0, k;
    switch (n->kind) {
    case DL_CONTIG:
        return 1;
    case DL_BLOCKS:
        return n->count;
    case DL_VECTOR:
        k = dl_chunk_count(n->child, cap);
        return (k > cap / n->count) ? cap + 1 : k * n->count;
    case DL_INDEXED:
        k = dl_chunk_count(n->child, cap);
        for (int64_t i = 0; i < n->count && c <= cap; i++)
            c += (k > cap / n->len[i]) ? cap + 1 : k * n->len[i];
        return c > cap ? cap + 1 : c;
    case DL_STRUCT:
        for (int64_t i = 0; i < n->count && c <= cap; i++)
            c += dl_chunk_count(n->children[i], cap);
        return c > cap ? cap + 1 : c;
    }
    return cap + 1;
}

typedef struct chunk_list {
    int64_t *disp, *len;
    int64_t n, cap;
    int err;
} chunk_list;

static int collect(int64_t addr, int64_t len, void *ctx)
{
    chunk_list *l = ctx;
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 64;
        int64_t *d = realloc(l->disp, (size_t)cap * sizeof(int64_t));
        if (!d)
            return l->err = FMPL_ERR_NO_MEMORY;
        l->disp = d;
        int64_t *n = realloc(l->len, (size_t)cap * sizeof(int64_t));
        if (!n)
            return l->err = FMPL_ERR_NO_MEMORY;
        l->len = n;
        l->cap = cap;
    }
    l->disp[l->n] = addr;
    l->len[l->n] = len;
    l->n++;
    return 0;
}

/* The same chunks as one BLOCKS node (or its normal form); n is consumed
 * on success, kept (and returned) on failure. */
static dl_node *flatten(dl_ctx *x, dl_node *n)
{
    chunk_list l = {0};
    dl_for_each_chunk(n, 0, collect, &l);
    dl_node *b = NULL;
    if (!l.err) {
        dl_ctx sub = {FMPL_SUCCESS};
        b = dl_blocks(&sub, l.n, l.disp, l.len);
        l.err = sub.err;
    }
    free(l.disp);
    free(l.len);
    if (l.err) {
        x->err = l.err;
        return n;
    }
    dl_free(n);
    return b;
}

/* Read once; concurrent first calls compute the same value. */
static int64_t flatten_max(void)
{
    static int64_t cached = -1;
    int64_t v = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (v < 0) {
        long long t = fmpl_tunable_long(&tunable_flatten_max);
        v = t < 0 ? 0 : t;
        __atomic_store_n(&cached, v, __ATOMIC_RELAXED);
    }
    return v;
}

static dl_node *optimize(dl_ctx *x, dl_node *n, int64_t fmax)
{
    switch (n->kind) {
    case DL_VECTOR:
    case DL_INDEXED:
        n->child = optimize(x, n->child, fmax);
        break;
    case DL_STRUCT:
        for (int64_t i = 0; i < n->count; i++)
            n->children[i] = optimize(x, n->children[i], fmax);
        break;
    default:
        break;
    }
    if ((n->kind == DL_STRUCT || n->kind == DL_INDEXED) && dl_chunk_count(n, fmax) <= fmax)
        n = flatten(x, n);
    return n;
}

dl_node *dl_optimize(dl_ctx *x, dl_node *n)
{
    if (!n || x->err)
        return n;
    n = optimize(x, n, flatten_max());
    if (!x->err && dl_depth(n) > DL_MAX_DEPTH) {
        if (dl_chunk_count(n, DL_DEEP_FLATTEN_MAX) <= DL_DEEP_FLATTEN_MAX)
            n = flatten(x, n);
        else
            x->err = FMPL_ERR_UNSUPPORTED;
    }
    return n;
}

/* ------------------------------------------------------------- queries */

int dl_depth(const dl_node *n)
{
    if (!n)
        return 0;
    int d = 0;
    switch (n->kind) {
    case DL_VECTOR:
    case DL_INDEXED:
        d = dl_depth(n->child);
        break;
    case DL_STRUCT:
        for (int64_t i = 0; i < n->count; i++) {
            int c = dl_depth(n->children[i]);
            d = c > d ? c : d;
        }
        break;
    default:
        break;
    }
    return d + 1;
}

#ifdef FMPL_DEBUG
void dl_check(const dl_node *n)
{
    if (!n)
        return;
    fmpl_assert(n->size > 0);
    switch (n->kind) {
    case DL_CONTIG:
        break;
    case DL_VECTOR:
        fmpl_assert(n->count >= 2 && n->child);
        fmpl_assert(n->size == n->count * n->child->size);
        dl_check(n->child);
        break;
    case DL_BLOCKS:
    case DL_INDEXED:
    case DL_STRUCT:
        fmpl_assert(n->count >= 1 && n->prefix[0] == 0 && n->prefix[n->count] == n->size);
        for (int64_t i = 0; i < n->count; i++) {
            fmpl_assert(n->prefix[i + 1] > n->prefix[i]);
            if (n->kind == DL_BLOCKS) {
                fmpl_assert(n->len[i] > 0 && n->prefix[i + 1] - n->prefix[i] == n->len[i]);
                fmpl_assert(i == 0 || n->disp[i] != n->disp[i - 1] + n->len[i - 1]);
            } else if (n->kind == DL_INDEXED) {
                fmpl_assert(n->prefix[i + 1] - n->prefix[i] == n->len[i] * n->child->size);
            } else {
                fmpl_assert(n->prefix[i + 1] - n->prefix[i] == n->children[i]->size);
                dl_check(n->children[i]);
            }
        }
        if (n->kind == DL_INDEXED)
            dl_check(n->child);
        break;
    }
}
#endif
