/* Pack, unpack, cursors and typed local copies.
 *
 * Invariants
 *  - Nothing here allocates, locks or calls into other layers; the only
 *    stack use beyond the walker's recursion (<= loop depth frames) is the
 *    DT_COPY_CHUNK bounce buffer of fmpl_dt_copy.
 *  - The packed stream of (buf, count, t) is the root loop repeated at buf
 *    + i * extent; byte `off` of it is in element off / size.  A contiguous
 *    type (dt_commit.c) is moved with one memcpy from buf + true_lb.
 *  - Arguments are checked once per call: after check_move every
 *    displacement the walker computes is within the type's overflow-checked
 *    bounds, repeated at most count times (count * extent was checked too).
 */
#include "base/hidden.h"
#include "datatype/dt_impl.h"
#include "base/error.h"

#include <string.h>

/* Bytes of the stack buffer fmpl_dt_copy bounces through when neither side
 * is contiguous. */
#define DT_COPY_CHUNK 8192

/* The entry holding packed byte `skip`: the largest i < count with
 * prefix[i] <= skip (prefix is strictly increasing, prefix[0] = 0). */
static inline int64_t dt_find_entry(const int64_t *prefix, int64_t count, int64_t skip)
{
    int64_t lo = 0, hi = count - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (prefix[mid] <= skip)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* memcpy for the walker: short copies (struct fields, vector blocks of a
 * few elements) inline as two possibly overlapping loads and stores, long
 * ones to libc.  The buffers never overlap. */
static inline __attribute__((always_inline)) void dt_copy(void *dst, const void *src, int64_t n)
{
    char *d = dst;
    const char *s = src;
    if (n > 16) {
        memcpy(d, s, (size_t)n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n > 0) {
        d[0] = s[0];
        d[n - 1] = s[n - 1];
        if (n == 3)
            d[1] = s[1];
    }
}

#define WALK(name) pack_##name
#define WALK_COPY(user, pk, n) dt_copy((pk), (const void *)(user), (n))
#include "datatype/dt_walk.inl"
#undef WALK
#undef WALK_COPY

#define WALK(name) unpack_##name
#define WALK_COPY(user, pk, n) dt_copy((void *)(user), (pk), (n))
#include "datatype/dt_walk.inl"
#undef WALK
#undef WALK_COPY

/* The chunk walker (fmpl_dt_for_each_chunk): each contiguous piece goes to
 * a callback instead of memcpy.  The walker functions take no context, so
 * the callback and its first error live here for the duration of one walk
 * (one per thread). */
static FMPL_TLS struct {
    fmpl_dt_chunk_fn fn;
    void *ctx;
    int err;
} chunk_walk;

static inline void chunk_emit(uintptr_t user, char *pk, int64_t n)
{
    if (!chunk_walk.err)
        chunk_walk.err = chunk_walk.fn(chunk_walk.ctx, user, pk, n);
}

#define WALK(name) chunk_##name
#define WALK_COPY(user, pk, n) chunk_emit((user), (pk), (n))
#include "datatype/dt_walk.inl"
#undef WALK
#undef WALK_COPY

/* Packed bytes [off, off + n) of (buf, *, t) to / from `pk`; n > 0. */
static void pack_range(uintptr_t buf, const fmpl_datatype *t, int64_t off, char *pk, int64_t n)
{
    if (t->contiguous)
        memcpy(pk, (const void *)(buf + (uintptr_t)(t->true_lb + off)), (size_t)n);
    else
        pack_seq(t->loop, buf, dt_extent(t), off, n, pk);
}

static void unpack_range(uintptr_t buf, const fmpl_datatype *t, int64_t off, const char *pk,
                         int64_t n)
{
    if (t->contiguous)
        memcpy((void *)(buf + (uintptr_t)(t->true_lb + off)), pk, (size_t)n);
    else
        unpack_seq(t->loop, buf, dt_extent(t), off, n, (char *)pk);
}

static int check_type(const fmpl_datatype *t, int64_t count, int64_t *total)
{
    if (!t)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL datatype");
    if (!t->committed)
        return FMPL_ERROR(FMPL_ERR_ARG,
                          "datatype %s%s%sis not committed (commit it before moving data)",
                          t->name[0] ? "\"" : "", t->name, t->name[0] ? "\" " : "");
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative count (%lld)", (long long)count);
    int64_t span;
    if (__builtin_mul_overflow(count, t->size, total) ||
        (count > 0 && __builtin_mul_overflow(count - 1, dt_extent(t), &span)))
        return FMPL_ERROR(FMPL_ERR_SIZE, "%lld elements of this datatype exceed 64 bits",
                          (long long)count);
    return FMPL_SUCCESS;
}

/* Checks shared by pack and unpack; *n = the clipped length. */
static int check_move(const fmpl_datatype *t, int64_t count, int64_t offset, int64_t len,
                      const void *contig, int64_t *n)
{
    int64_t total = 0;
    int err = check_type(t, count, &total);
    if (err)
        return err;
    if (offset < 0 || len < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative %s (%lld)", offset < 0 ? "offset" : "length",
                          (long long)(offset < 0 ? offset : len));
    if (offset > total)
        return FMPL_ERROR(FMPL_ERR_ARG, "offset %lld beyond the packed size %lld",
                          (long long)offset, (long long)total);
    *n = total - offset < len ? total - offset : len;
    if (*n > 0 && !contig)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL packed buffer");
    return FMPL_SUCCESS;
}

int fmpl_dt_pack_size(int64_t count, const fmpl_datatype *t, int64_t *bytes)
{
    if (!bytes)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL bytes");
    if (!t)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL datatype");
    if (count < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative count (%lld)", (long long)count);
    if (__builtin_mul_overflow(count, t->size, bytes))
        return FMPL_ERROR(FMPL_ERR_SIZE, "%lld elements of this datatype exceed 64 bits",
                          (long long)count);
    return FMPL_SUCCESS;
}

int fmpl_dt_pack(const void *inbuf, int64_t count, const fmpl_datatype *t, int64_t offset,
                 void *out, int64_t out_len, int64_t *written)
{
    int64_t n = 0;
    int err = check_move(t, count, offset, out_len, out, &n);
    if (err)
        return err;
    if (n > 0)
        pack_range((uintptr_t)inbuf, t, offset, out, n);
    if (written)
        *written = n;
    return FMPL_SUCCESS;
}

int fmpl_dt_unpack(const void *in, int64_t in_len, void *outbuf, int64_t count,
                   const fmpl_datatype *t, int64_t offset, int64_t *consumed)
{
    int64_t n = 0;
    int err = check_move(t, count, offset, in_len, in, &n);
    if (err)
        return err;
    if (n > 0)
        unpack_range((uintptr_t)outbuf, t, offset, in, n);
    if (consumed)
        *consumed = n;
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- cursor */

int fmpl_dt_cursor_init(fmpl_dt_cursor *c, const void *buf, int64_t count,
                        const fmpl_datatype *t)
{
    if (!c)
        return FMPL_ERROR(FMPL_ERR_ARG, "NULL cursor");
    int64_t total = 0;
    int err = check_type(t, count, &total);
    if (err)
        return err;
    c->type = t;
    c->buf = (uintptr_t)buf;
    c->count = count;
    c->pos = 0;
    c->total = total;
    return FMPL_SUCCESS;
}

int fmpl_dt_cursor_pack(fmpl_dt_cursor *c, void *out, int64_t out_len, int64_t *written)
{
    if (out_len < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative length (%lld)", (long long)out_len);
    int64_t n = c->total - c->pos < out_len ? c->total - c->pos : out_len;
    if (n > 0) {
        if (!out)
            return FMPL_ERROR(FMPL_ERR_ARG, "NULL packed buffer");
        pack_range(c->buf, c->type, c->pos, out, n);
        c->pos += n;
    }
    if (written)
        *written = n;
    return FMPL_SUCCESS;
}

int fmpl_dt_cursor_unpack(fmpl_dt_cursor *c, const void *in, int64_t in_len, int64_t *consumed)
{
    if (in_len < 0)
        return FMPL_ERROR(FMPL_ERR_SIZE, "negative length (%lld)", (long long)in_len);
    int64_t n = c->total - c->pos < in_len ? c->total - c->pos : in_len;
    if (n > 0) {
        if (!in)
            return FMPL_ERROR(FMPL_ERR_ARG, "NULL packed buffer");
        unpack_range(c->buf, c->type, c->pos, in, n);
        c->pos += n;
    }
    if (consumed)
        *consumed = n;
    return FMPL_SUCCESS;
}

int fmpl_dt_cursor_seek(fmpl_dt_cursor *c, int64_t pos)
{
    if (pos < 0 || pos > c->total)
        return FMPL_ERROR(FMPL_ERR_ARG, "seek to %lld outside [0, %lld]", (long long)pos,
                          (long long)c->total);
    c->pos = pos;
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------------ copy */

int fmpl_dt_copy(const void *src, int64_t scount, const fmpl_datatype *stype, void *dst,
                 int64_t dcount, const fmpl_datatype *dtype, int64_t *copied)
{
    int64_t stotal = 0, dtotal = 0;
    int err;
    if ((err = check_type(stype, scount, &stotal)) || (err = check_type(dtype, dcount, &dtotal)))
        return err;
    int64_t n = stotal < dtotal ? stotal : dtotal;
    uintptr_t s = (uintptr_t)src, d = (uintptr_t)dst;
    if (n == 0) {
        /* nothing to move */
    } else if (stype->contiguous && dtype->contiguous) {
        memcpy((void *)(d + (uintptr_t)dtype->true_lb), (const void *)(s + (uintptr_t)stype->true_lb),
               (size_t)n);
    } else if (stype->contiguous) {
        unpack_range(d, dtype, 0, (const char *)(s + (uintptr_t)stype->true_lb), n);
    } else if (dtype->contiguous) {
        pack_range(s, stype, 0, (char *)(d + (uintptr_t)dtype->true_lb), n);
    } else {
        char tmp[DT_COPY_CHUNK];
        for (int64_t pos = 0; pos < n; pos += DT_COPY_CHUNK) {
            int64_t k = n - pos < DT_COPY_CHUNK ? n - pos : DT_COPY_CHUNK;
            pack_range(s, stype, pos, tmp, k);
            unpack_range(d, dtype, pos, tmp, k);
        }
    }
    if (copied)
        *copied = n;
    if (stotal > dtotal)
        return FMPL_ERROR(FMPL_ERR_TRUNCATE,
                          "the source holds %lld bytes, the destination only %lld",
                          (long long)stotal, (long long)dtotal);
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- chunks */

int fmpl_dt_for_each_chunk(uintptr_t base, int64_t count, const fmpl_datatype *t, char *packed,
                           fmpl_dt_chunk_fn fn, void *ctx)
{
    int64_t total = 0;
    int err = check_type(t, count, &total);
    if (err || total == 0)
        return err;
    if (t->contiguous)
        return fn(ctx, base + (uintptr_t)t->true_lb, packed, total);
    chunk_walk.fn = fn;
    chunk_walk.ctx = ctx;
    chunk_walk.err = 0;
    chunk_seq(t->loop, base, dt_extent(t), 0, total, packed);
    err = chunk_walk.err;
    chunk_walk.fn = NULL;
    return err;
}
