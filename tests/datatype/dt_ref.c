/* The reference model of typemaps; see dt_ref.h. */
#include "dt_ref.h"
#include "fmpl.h"

#include <stdlib.h>
#include <string.h>

int failures;

/* ---------------------------------------------------------------- random */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

uint64_t rnd(void)
{
    uint64_t x = rng_state;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return rng_state = x;
}

void rnd_seed(uint64_t s) { rng_state = s ? s : 1; }

int64_t rnd_range(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

/* ------------------------------------------------------------ expansion */

static ref *ref_new(void)
{
    ref *r = calloc(1, sizeof *r);
    r->align = 1;
    return r;
}

static void push(ref *r, int64_t disp, int64_t len, int unit)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 16;
        r->disp = realloc(r->disp, (size_t)r->cap * sizeof *r->disp);
        r->len = realloc(r->len, (size_t)r->cap * sizeof *r->len);
        r->unit = realloc(r->unit, (size_t)r->cap * sizeof *r->unit);
    }
    r->disp[r->n] = disp;
    r->len[r->n] = len;
    r->unit[r->n] = unit;
    r->n++;
}

/* Bounds, folded in one copy at a time. */
typedef struct bacc {
    bool xl, xu, nl, nu;
    int64_t vxl, vxu, vnl, vnu, align;
} bacc;

static int64_t ext_of(const ref *r) { return r->ub - r->lb; }

static void add_copy(ref *out, bacc *b, const ref *c, int64_t d)
{
    for (int64_t k = 0; k < c->n; k++)
        push(out, d + c->disp[k], c->len[k], c->unit[k]);
    bool data = c->n > 0;
    int64_t l = d + c->lb, u = d + c->ub;
    if (c->xlb) {
        b->vxl = (b->xl && b->vxl < l) ? b->vxl : l;
        b->xl = true;
    } else if (data) {
        b->vnl = (b->nl && b->vnl < l) ? b->vnl : l;
        b->nl = true;
    }
    if (c->xub) {
        b->vxu = (b->xu && b->vxu > u) ? b->vxu : u;
        b->xu = true;
    } else if (data) {
        b->vnu = (b->nu && b->vnu > u) ? b->vnu : u;
        b->nu = true;
    }
    if (data && c->align > b->align)
        b->align = c->align;
}

static void finish(ref *out, bacc *b, bool is_struct)
{
    out->xlb = b->xl;
    out->xub = b->xu;
    /* no marker and no data on a side: 0 (struct {(LB, 10)}: extent -10) */
    out->lb = b->xl ? b->vxl : b->nl ? b->vnl : 0;
    out->ub = b->xu ? b->vxu : b->nu ? b->vnu : 0;
    out->align = b->align < 1 ? 1 : b->align;
    if (is_struct && !b->xu && out->align > 1) {
        int64_t ext = out->ub - out->lb;
        int64_t r = ((ext % out->align) + out->align) % out->align;
        if (r)
            out->ub += out->align - r;
    }
}

static void bacc_init(bacc *b)
{
    memset(b, 0, sizeof *b);
    b->align = 1;
}

static void expect_ok(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "FATAL: constructor %s failed (%d)\n", what, rc);
        exit(1);
    }
}

/* ---------------------------------------------------------- constructors */

ref *ref_basic(fmpl_basic_type bt)
{
    ref *r = ref_new();
    const fmpl_basic_type_info *info = &fmpl_basic_types[bt];
    r->t = fmpl_dt_basic(bt);
    if (info->category == FMPL_CAT_PAIR) {
        fmpl_basic_type comp = info->component;
        fmpl_basic_type second = (bt == FMPL_BT_F_2INTEGER || bt == FMPL_BT_F_2REAL ||
                                  bt == FMPL_BT_F_2DOUBLE_PRECISION)
                                     ? comp
                                     : FMPL_BT_INT;
        int64_t s1 = (int64_t)fmpl_basic_types[comp].size;
        int64_t a2 = (int64_t)fmpl_basic_types[second].align;
        int64_t o2 = (s1 + a2 - 1) / a2 * a2;
        push(r, 0, s1, bt);
        push(r, o2, (int64_t)fmpl_basic_types[second].size, bt);
    } else {
        push(r, 0, (int64_t)info->size, bt);
    }
    r->lb = 0;
    r->ub = (int64_t)info->size;
    r->align = (int64_t)info->align;
    return r;
}

ref *ref_marker(bool lb)
{
    ref *r = ref_new();
    r->t = lb ? fmpl_dt_lb_marker() : fmpl_dt_ub_marker();
    r->xlb = lb;
    r->xub = !lb;
    return r;
}

ref *ref_contiguous(int64_t count, ref *old)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    expect_ok(fmpl_dt_contiguous(count, old->t, &r->t), "contiguous");
    for (int64_t i = 0; i < count; i++)
        add_copy(r, &b, old, i * ext_of(old));
    finish(r, &b, false);
    return r;
}

static ref *vector_common(int64_t count, int64_t bl, int64_t stride, bool bytes, ref *old)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    int64_t ext = ext_of(old);
    if (bytes)
        expect_ok(fmpl_dt_hvector(count, bl, stride, old->t, &r->t), "hvector");
    else
        expect_ok(fmpl_dt_vector(count, bl, stride, old->t, &r->t), "vector");
    for (int64_t i = 0; i < count; i++)
        for (int64_t j = 0; j < bl; j++)
            add_copy(r, &b, old, (bytes ? i * stride : i * stride * ext) + j * ext);
    finish(r, &b, false);
    return r;
}

ref *ref_vector(int64_t count, int64_t blocklen, int64_t stride, ref *old)
{
    return vector_common(count, blocklen, stride, false, old);
}

ref *ref_hvector(int64_t count, int64_t blocklen, int64_t stride, ref *old)
{
    return vector_common(count, blocklen, stride, true, old);
}

static ref *indexed_common(int kind, int64_t count, const int64_t *bl, int64_t blconst,
                           const int64_t *d, ref *old)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    int64_t ext = ext_of(old);
    bool bytes = kind == 1 || kind == 3;
    switch (kind) {
    case 0: expect_ok(fmpl_dt_indexed(count, bl, d, old->t, &r->t), "indexed"); break;
    case 1: expect_ok(fmpl_dt_hindexed(count, bl, d, old->t, &r->t), "hindexed"); break;
    case 2: expect_ok(fmpl_dt_indexed_block(count, blconst, d, old->t, &r->t), "indexed_block"); break;
    default: expect_ok(fmpl_dt_hindexed_block(count, blconst, d, old->t, &r->t), "hindexed_block"); break;
    }
    for (int64_t i = 0; i < count; i++) {
        int64_t n = bl ? bl[i] : blconst;
        for (int64_t j = 0; j < n; j++)
            add_copy(r, &b, old, (bytes ? d[i] : d[i] * ext) + j * ext);
    }
    finish(r, &b, false);
    return r;
}

ref *ref_indexed(int64_t count, const int64_t *bl, const int64_t *d, ref *old)
{
    return indexed_common(0, count, bl, 0, d, old);
}

ref *ref_hindexed(int64_t count, const int64_t *bl, const int64_t *d, ref *old)
{
    return indexed_common(1, count, bl, 0, d, old);
}

ref *ref_indexed_block(int64_t count, int64_t bl, const int64_t *d, ref *old)
{
    return indexed_common(2, count, NULL, bl, d, old);
}

ref *ref_hindexed_block(int64_t count, int64_t bl, const int64_t *d, ref *old)
{
    return indexed_common(3, count, NULL, bl, d, old);
}

ref *ref_struct(int64_t count, const int64_t *bl, const int64_t *d, ref *const *types)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    fmpl_datatype **tt = calloc((size_t)(count > 0 ? count : 1), sizeof *tt);
    for (int64_t i = 0; i < count; i++)
        tt[i] = types[i]->t;
    expect_ok(fmpl_dt_struct(count, bl, d, tt, &r->t), "struct");
    free(tt);
    for (int64_t i = 0; i < count; i++)
        for (int64_t j = 0; j < bl[i]; j++)
            add_copy(r, &b, types[i], d[i] + j * ext_of(types[i]));
    finish(r, &b, true);
    return r;
}

ref *ref_resized(ref *old, int64_t lb, int64_t extent)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    expect_ok(fmpl_dt_resized(old->t, lb, extent, &r->t), "resized");
    add_copy(r, &b, old, 0);
    finish(r, &b, false);
    r->xlb = r->xub = true;
    r->lb = lb;
    r->ub = lb + extent;
    return r;
}

ref *ref_dup(ref *old)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    expect_ok(fmpl_dt_dup(old->t, &r->t), "dup");
    add_copy(r, &b, old, 0);
    r->xlb = old->xlb;
    r->xub = old->xub;
    r->lb = old->lb;
    r->ub = old->ub;
    r->align = old->align;
    return r;
}

#define REF_MAX_DIMS 24

/* Visit every index tuple of per-dimension index lists in storage order
 * (C: last dimension fastest) and add a copy of old at the element's
 * displacement in a full array of `sizes`. */
static void add_array_elements(ref *r, bacc *b, int ndims, const int64_t *sizes,
                               int64_t *const *lists, const int64_t *nlist, int order,
                               ref *old)
{
    int64_t ext = ext_of(old);
    int64_t st[REF_MAX_DIMS], pos[REF_MAX_DIMS];
    int64_t s = 1;
    for (int k = 0; k < ndims; k++) {
        int i = order == FMPL_DT_ORDER_C ? ndims - 1 - k : k;
        st[i] = s;
        s *= sizes[i];
    }
    for (int i = 0; i < ndims; i++) {
        if (nlist[i] == 0)
            return;
        pos[i] = 0;
    }
    for (;;) {
        int64_t d = 0;
        for (int i = 0; i < ndims; i++)
            d += lists[i][pos[i]] * st[i];
        add_copy(r, b, old, d * ext);
        /* odometer: fastest dimension first */
        int k;
        for (k = 0; k < ndims; k++) {
            int i = order == FMPL_DT_ORDER_C ? ndims - 1 - k : k;
            if (++pos[i] < nlist[i])
                break;
            pos[i] = 0;
        }
        if (k == ndims)
            return;
    }
}

ref *ref_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes, const int64_t *starts,
                  int order, ref *old)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    expect_ok(fmpl_dt_subarray(ndims, sizes, subsizes, starts, order, old->t, &r->t), "subarray");
    int64_t *lists[REF_MAX_DIMS] = {0}, nlist[REF_MAX_DIMS] = {0}, total = 1;
    for (int i = 0; i < ndims; i++) {
        lists[i] = malloc((size_t)subsizes[i] * sizeof(int64_t));
        for (int64_t j = 0; j < subsizes[i]; j++)
            lists[i][j] = starts[i] + j;
        nlist[i] = subsizes[i];
        total *= sizes[i];
    }
    add_array_elements(r, &b, ndims, sizes, lists, nlist, order, old);
    for (int i = 0; i < ndims; i++)
        free(lists[i]);
    finish(r, &b, false);
    r->xlb = r->xub = true;
    r->lb = 0;
    r->ub = total * ext_of(old);
    return r;
}

/* Owner coordinate of global index g in one darray dimension, straight
 * from the distribution's definition. */
static int64_t darray_owner(int64_t g, int64_t gsize, int distrib, int darg, int64_t psize)
{
    if (distrib == FMPL_DT_DISTRIBUTE_NONE)
        return 0;
    if (distrib == FMPL_DT_DISTRIBUTE_BLOCK) {
        int64_t b = darg == FMPL_DT_DISTRIBUTE_DFLT_DARG ? (gsize + psize - 1) / psize : darg;
        return g / b;
    }
    int64_t b = darg == FMPL_DT_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (g / b) % psize;
}

ref *ref_darray(int size, int rank, int ndims, const int64_t *gsizes, const int *distribs,
                const int *dargs, const int *psizes, int order, ref *old)
{
    ref *r = ref_new();
    bacc b;
    bacc_init(&b);
    expect_ok(fmpl_dt_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old->t,
                             &r->t),
              "darray");
    int64_t coord[REF_MAX_DIMS] = {0}, rem = rank;
    for (int i = ndims - 1; i >= 0; i--) {
        coord[i] = rem % psizes[i];
        rem /= psizes[i];
    }
    int64_t *lists[REF_MAX_DIMS] = {0}, nlist[REF_MAX_DIMS] = {0}, total = 1;
    for (int i = 0; i < ndims; i++) {
        lists[i] = malloc((size_t)gsizes[i] * sizeof(int64_t));
        nlist[i] = 0;
        for (int64_t g = 0; g < gsizes[i]; g++)
            if (darray_owner(g, gsizes[i], distribs[i], dargs[i], psizes[i]) == coord[i])
                lists[i][nlist[i]++] = g;
        total *= gsizes[i];
    }
    add_array_elements(r, &b, ndims, gsizes, lists, nlist, order, old);
    for (int i = 0; i < ndims; i++)
        free(lists[i]);
    finish(r, &b, false);
    r->xlb = r->xub = true;
    r->lb = 0;
    r->ub = total * ext_of(old);
    return r;
}

void ref_free(ref *r)
{
    if (!r)
        return;
    fmpl_dt_unref(r->t);
    free(r->disp);
    free(r->len);
    free(r->unit);
    free(r);
}

/* --------------------------------------------------------------- queries */

int64_t ref_size(const ref *r)
{
    int64_t s = 0;
    for (int64_t k = 0; k < r->n; k++)
        s += r->len[k];
    return s;
}

int64_t ref_true_lb(const ref *r)
{
    int64_t v = 0;
    for (int64_t k = 0; k < r->n; k++)
        if (k == 0 || r->disp[k] < v)
            v = r->disp[k];
    return v;
}

int64_t ref_true_ub(const ref *r)
{
    int64_t v = 0;
    for (int64_t k = 0; k < r->n; k++)
        if (k == 0 || r->disp[k] + r->len[k] > v)
            v = r->disp[k] + r->len[k];
    return v;
}

fmpl_basic_type ref_homogeneous(const ref *r)
{
    if (r->n == 0)
        return FMPL_BT_NONE;
    for (int64_t k = 1; k < r->n; k++)
        if (r->unit[k] != r->unit[0])
            return FMPL_BT_NONE;
    return (fmpl_basic_type)r->unit[0];
}

/* Elements completed by the first `bytes` bytes of the packed stream of
 * any number of elements, by scanning entries; -1 inside an element. */
static int64_t ref_elements(const ref *r, int64_t bytes)
{
    int64_t size = ref_size(r);
    if (size == 0)
        return 0;
    int64_t full = bytes / size, rem = bytes % size, e = 0, pos = 0;
    for (int64_t k = 0; k < r->n && pos < rem; k++) {
        if (pos + r->len[k] > rem)
            return -1;
        pos += r->len[k];
        e++;
    }
    return full * r->n + e;
}

static bool ref_is_contiguous(const ref *r)
{
    if (r->n == 0)
        return true;
    for (int64_t k = 1; k < r->n; k++)
        if (r->disp[k] != r->disp[k - 1] + r->len[k - 1])
            return false;
    return ext_of(r) == ref_size(r);
}

static bool ref_is_array(const ref *r, int64_t *n_out)
{
    fmpl_basic_type x = ref_homogeneous(r);
    if (x == FMPL_BT_NONE)
        return false;
    ref *bx = ref_basic(x);
    int64_t per = bx->n, n = r->n / per, extx = ext_of(bx), lo = ref_true_lb(r);
    bool ok = ext_of(r) == n * extx;
    for (int64_t k = 0; k < r->n && ok; k++)
        ok = r->disp[k] == lo + (k / per) * extx + bx->disp[k % per] &&
             r->len[k] == bx->len[k % per];
    ref_free(bx);
    *n_out = n;
    return ok;
}

void ref_check_queries(const ref *r, const char *what)
{
    const fmpl_datatype *t = r->t;
#define Q(a, b)                                                                    \
    CHECK((int64_t)(a) == (int64_t)(b), "%s: %s = %lld, expected %lld", what, #a,   \
          (long long)(a), (long long)(b))
    Q(fmpl_dt_size(t), ref_size(r));
    Q(fmpl_dt_num_elements(t), r->n);
    Q(fmpl_dt_lb(t), r->lb);
    Q(fmpl_dt_ub(t), r->ub);
    Q(fmpl_dt_extent(t), r->ub - r->lb);
    Q(fmpl_dt_true_lb(t), ref_true_lb(r));
    Q(fmpl_dt_true_extent(t), ref_true_ub(r) - ref_true_lb(r));
    Q(fmpl_dt_homogeneous_basic(t), ref_homogeneous(r));
    if (fmpl_dt_is_committed(t)) {
        Q(fmpl_dt_is_contiguous(t), ref_is_contiguous(r));
        int64_t n = 0, en = -1;
        fmpl_basic_type bt = FMPL_BT_NONE;
        bool arr = ref_is_array(r, &n);
        bool earr = fmpl_dt_basic_array(t, &bt, &en);
        Q(earr, arr);
        if (arr && earr) {
            Q(bt, ref_homogeneous(r));
            Q(en, n);
        }
    }
    int64_t size = ref_size(r);
    if (size <= 2048) {
        for (int64_t b = 0; b <= 2 * size + 1; b++) {
            int64_t e = -2;
            CHECK_OK(fmpl_dt_get_elements(t, b, &e));
            CHECK(e == ref_elements(r, b), "%s: get_elements(%lld bytes) = %lld, expected %lld",
                  what, (long long)b, (long long)e, (long long)ref_elements(r, b));
        }
        int64_t pos = 0;
        for (int64_t e = 0; e <= 2 * r->n; e++) {
            int64_t bytes = -1;
            CHECK_OK(fmpl_dt_elements_to_bytes(t, e, &bytes));
            CHECK(bytes == pos, "%s: elements_to_bytes(%lld) = %lld, expected %lld", what,
                  (long long)e, (long long)bytes, (long long)pos);
            if (r->n)
                pos += r->len[e % r->n];
        }
    }
#undef Q
}

/* ------------------------------------------------------------------ pack */

void ref_span(const ref *r, int64_t count, int64_t *lo, int64_t *hi)
{
    *lo = *hi = 0;
    if (count == 0 || r->n == 0)
        return;
    int64_t ext = ext_of(r), a = ref_true_lb(r), b = ref_true_ub(r);
    int64_t last = (count - 1) * ext;
    *lo = a + (last < 0 ? last : 0);
    *hi = b + (last > 0 ? last : 0);
}

void ref_pack(const ref *r, const char *base, int64_t count, char *out)
{
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < r->n; k++) {
            memcpy(out, base + i * ext_of(r) + r->disp[k], (size_t)r->len[k]);
            out += r->len[k];
        }
}

void ref_unpack(const ref *r, const char *in, char *base, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        for (int64_t k = 0; k < r->n; k++) {
            memcpy(base + i * ext_of(r) + r->disp[k], in, (size_t)r->len[k]);
            in += r->len[k];
        }
}

#define MARGIN 64

void ref_check_pack(const ref *r, int64_t count, const char *what)
{
    const fmpl_datatype *t = r->t;
    int64_t lo, hi, total = count * ref_size(r), got;
    ref_span(r, count, &lo, &hi);
    size_t blen = (size_t)(hi - lo + 2 * MARGIN);
    char *src = malloc(blen), *dst = malloc(blen), *exp = malloc(blen);
    char *sbase = src + MARGIN - lo, *dbase = dst + MARGIN - lo, *ebase = exp + MARGIN - lo;
    size_t plen = (size_t)(total > 0 ? total : 1);
    char *pref = malloc(plen), *pk = malloc(plen), *pk2 = malloc(plen);
    for (size_t i = 0; i < blen; i++)
        src[i] = (char)rnd();

    /* whole */
    ref_pack(r, sbase, count, pref);
    memset(pk, 0, plen);
    CHECK_OK(fmpl_dt_pack(sbase, count, t, 0, pk, total, &got));
    CHECK(got == total, "%s: pack wrote %lld of %lld", what, (long long)got, (long long)total);
    CHECK(!memcmp(pk, pref, (size_t)total), "%s: pack differs from the reference", what);

    /* pieces by offset, random sizes (some past the end) */
    memset(pk2, 0, plen);
    for (int64_t pos = 0; pos < total;) {
        int64_t k = rnd_range(1, 1 + (rnd() % 3 ? 13 : total));
        CHECK_OK(fmpl_dt_pack(sbase, count, t, pos, pk2 + pos, k, &got));
        int64_t want = total - pos < k ? total - pos : k;
        CHECK(got == want, "%s: piece at %lld wrote %lld, expected %lld", what, (long long)pos,
              (long long)got, (long long)want);
        if (got <= 0)
            break;
        pos += got;
    }
    CHECK(!memcmp(pk2, pref, (size_t)total), "%s: piecewise pack differs", what);

    /* cursor with random pieces, zero-length ones included */
    fmpl_dt_cursor c;
    memset(pk2, 0, plen);
    CHECK_OK(fmpl_dt_cursor_init(&c, sbase, count, t));
    for (int guard = 0; fmpl_dt_cursor_remaining(&c) > 0 && guard < 1000000; guard++) {
        int64_t at = c.pos, k = rnd_range(0, 1 + (rnd() % 4 ? 7 : total));
        CHECK_OK(fmpl_dt_cursor_pack(&c, pk2 + at, k, &got));
    }
    CHECK_OK(fmpl_dt_cursor_pack(&c, pk2, 5, &got));
    CHECK(got == 0, "%s: cursor packed past the end", what);
    CHECK(!memcmp(pk2, pref, (size_t)total), "%s: cursor pack differs", what);

    /* unpack, whole: same bytes as the reference, gaps untouched */
    memset(dst, 0xa5, blen);
    memset(exp, 0xa5, blen);
    ref_unpack(r, pref, ebase, count);
    CHECK_OK(fmpl_dt_unpack(pref, total, dbase, count, t, 0, &got));
    CHECK(got == total, "%s: unpack consumed %lld of %lld", what, (long long)got,
          (long long)total);
    CHECK(!memcmp(dst, exp, blen), "%s: unpack differs from the reference", what);

    /* unpack by cursor in random pieces, after a seek back and forth */
    memset(dst, 0xa5, blen);
    CHECK_OK(fmpl_dt_cursor_init(&c, dbase, count, t));
    CHECK_OK(fmpl_dt_cursor_seek(&c, total / 2));
    CHECK_OK(fmpl_dt_cursor_seek(&c, 0));
    while (fmpl_dt_cursor_remaining(&c) > 0) {
        int64_t at = c.pos, k = rnd_range(1, 1 + (rnd() % 4 ? 9 : total));
        CHECK_OK(fmpl_dt_cursor_unpack(&c, pref + at, k, &got));
        if (got == 0)
            break;
    }
    CHECK(!memcmp(dst, exp, blen), "%s: cursor unpack differs", what);

    /* copies: typed -> bytes, bytes -> typed, typed -> typed */
    fmpl_datatype *byte = fmpl_dt_basic(FMPL_BT_BYTE);
    memset(pk2, 0, plen);
    CHECK_OK(fmpl_dt_copy(sbase, count, t, pk2, total, byte, &got));
    CHECK(got == total && !memcmp(pk2, pref, (size_t)total), "%s: copy to bytes differs", what);
    memset(dst, 0xa5, blen);
    CHECK_OK(fmpl_dt_copy(pref, total, byte, dbase, count, t, &got));
    CHECK(got == total && !memcmp(dst, exp, blen), "%s: copy from bytes differs", what);
    memset(dst, 0xa5, blen);
    CHECK_OK(fmpl_dt_copy(sbase, count, t, dbase, count, t, &got));
    CHECK(got == total && !memcmp(dst, exp, blen), "%s: typed copy differs", what);

    free(src);
    free(dst);
    free(exp);
    free(pref);
    free(pk);
    free(pk2);
}

/* ---------------------------------------------------------------- random */

static const fmpl_basic_type random_basics[] = {
    FMPL_BT_CHAR,       FMPL_BT_SHORT,     FMPL_BT_INT,           FMPL_BT_DOUBLE,
    FMPL_BT_FLOAT,      FMPL_BT_INT64,     FMPL_BT_LONG_DOUBLE,   FMPL_BT_C_DOUBLE_COMPLEX,
    FMPL_BT_SHORT_INT,  FMPL_BT_DOUBLE_INT, FMPL_BT_2INT,         FMPL_BT_BYTE,
    FMPL_BT_LONG_DOUBLE_INT, FMPL_BT_F_2INTEGER,
};

static ref *random_basic(void)
{
    size_t n = sizeof random_basics / sizeof random_basics[0];
    return ref_basic(random_basics[rnd() % n]);
}

static void random_array(int64_t *a, int64_t n, int64_t lo, int64_t hi)
{
    for (int64_t i = 0; i < n; i++)
        a[i] = rnd_range(lo, hi);
}

/* A count or block length: mostly 1..hi, sometimes 0. */
static int64_t rnd_count(int64_t hi) { return rnd() % 8 == 0 ? 0 : rnd_range(1, hi); }

static void random_counts(int64_t *a, int64_t n, int64_t hi)
{
    for (int64_t i = 0; i < n; i++)
        a[i] = rnd_count(hi);
}

/* A random component: sometimes committed first, so that its committed
 * loop is what the parent copies. */
static ref *random_component(int depth, int64_t max_elems)
{
    ref *c = ref_random(depth, max_elems);
    if (rnd() % 3 == 0)
        fmpl_dt_commit(c->t);
    return c;
}

ref *ref_random(int depth, int64_t max_elems)
{
    if (depth <= 0 || rnd() % 6 == 0)
        return random_basic();
    ref *r = NULL;
    int64_t bl[5], d[5];
    int kind = (int)(rnd() % 13);
    if (kind == 9) { /* struct */
        int64_t count = rnd_count(4);
        ref *types[5];
        bool natural = rnd() % 2; /* consecutive fields: exercises merging */
        int64_t at = rnd_range(-16, 16);
        for (int64_t i = 0; i < count; i++) {
            int m = (int)(rnd() % 12);
            types[i] = m == 0 ? ref_marker(true) : m == 1 ? ref_marker(false)
                                                          : random_component(depth - 1, max_elems / 4);
            bl[i] = rnd_count(3);
            d[i] = natural ? at : rnd_range(-50, 100);
            at += bl[i] * ext_of(types[i]);
        }
        r = ref_struct(count, bl, d, types);
        for (int64_t i = 0; i < count; i++)
            ref_free(types[i]);
    } else {
        ref *c = random_component(depth - 1, max_elems / 4);
        int64_t count = rnd_count(4);
        switch (kind) {
        case 0: r = ref_contiguous(rnd_count(4), c); break;
        case 1: r = ref_vector(count, rnd_count(3), rnd_range(-4, 6), c); break;
        case 2: r = ref_hvector(count, rnd_count(3), rnd_range(-40, 60), c); break;
        case 3:
            random_counts(bl, count, 3);
            random_array(d, count, -5, 10);
            r = ref_indexed(count, bl, d, c);
            break;
        case 4:
            random_counts(bl, count, 3);
            random_array(d, count, -50, 100);
            r = ref_hindexed(count, bl, d, c);
            break;
        case 5:
            random_array(d, count, -5, 10);
            r = ref_indexed_block(count, rnd_count(3), d, c);
            break;
        case 6:
            random_array(d, count, -50, 100);
            r = ref_hindexed_block(count, rnd_count(3), d, c);
            break;
        case 7: {
            int64_t sz = ref_size(c), ext = rnd() % 3 ? sz + rnd_range(0, 16) : rnd_range(-8, 40);
            r = ref_resized(c, rnd_range(-20, 20), ext);
            break;
        }
        case 8: r = ref_dup(c); break;
        case 10: { /* subarray */
            int nd = (int)rnd_range(1, 3);
            int64_t sizes[3], sub[3], st[3];
            for (int i = 0; i < nd; i++) {
                sizes[i] = rnd_range(1, 4);
                sub[i] = rnd_range(1, sizes[i]);
                st[i] = rnd_range(0, sizes[i] - sub[i]);
            }
            r = ref_subarray(nd, sizes, sub, st, (int)(rnd() % 2), c);
            break;
        }
        case 11: { /* darray */
            int nd = (int)rnd_range(1, 2);
            int64_t g[2];
            int dist[2], darg[2], ps[2], size = 1;
            for (int i = 0; i < nd; i++) {
                g[i] = rnd_range(1, 6);
                dist[i] = (int)(rnd() % 3);
                ps[i] = dist[i] == FMPL_DT_DISTRIBUTE_NONE ? 1 : (int)rnd_range(1, 3);
                darg[i] = rnd() % 2 ? FMPL_DT_DISTRIBUTE_DFLT_DARG : (int)rnd_range(1, 3);
                if (dist[i] == FMPL_DT_DISTRIBUTE_BLOCK && darg[i] > 0 &&
                    (int64_t)darg[i] * ps[i] < g[i])
                    darg[i] = FMPL_DT_DISTRIBUTE_DFLT_DARG;
                size *= ps[i];
            }
            r = ref_darray(size, (int)rnd_range(0, size - 1), nd, g, dist, darg, ps,
                           (int)(rnd() % 2), c);
            break;
        }
        default: r = ref_contiguous(rnd_range(1, 3), c); break;
        }
        ref_free(c);
    }
    if (r->n > max_elems) {
        ref_free(r);
        return random_basic();
    }
    return r;
}
