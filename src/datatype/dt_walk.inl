/* The loop-nest walker, instantiated twice by dt_pack.c: once packing (user
 * buffer -> packed bytes), once unpacking.  Before including, define
 *   WALK(name)            the function name prefix
 *   WALK_COPY(user, pk, n) copy n bytes between user address `user`
 *                          (uintptr_t) and packed pointer `pk` (char *)
 *
 * Both functions process the packed-stream bytes [skip, skip + len) of
 * their piece and return pk advanced by len.  Preconditions: 0 <= skip,
 * len > 0, skip + len <= the piece's packed size.  User addresses are
 * integers (uintptr_t) so that MPI_BOTTOM (NULL) plus absolute
 * displacements is well defined.  No allocation; recursion depth = loop
 * depth (bounded at commit).
 *
 * Seeking is arithmetic: in a sequence of equal copies the copy is skip /
 * size; in BLOCKS / INDEXED / STRUCT a binary search of the prefix sums
 * finds the entry.  So resuming at any offset costs O(depth x log entries).
 */

static char *WALK(node)(const dl_node *n, uintptr_t base, int64_t skip, int64_t len, char *pk);

/* Copies of c at base + i * stride, i = 0, 1, ... */
static char *WALK(seq)(const dl_node *c, uintptr_t base, int64_t stride, int64_t skip, int64_t len,
                       char *pk)
{
    const int64_t cs = c->size;
    int64_t i = skip / cs, s = skip - i * cs;
    uintptr_t p = base + (uintptr_t)(i * stride);
    if (c->kind == DL_BLOCKS) {
        /* Copies of a short chunk list (a struct's element): whole copies
         * inline, the partial first and last ones through the node walk. */
        if (s) {
            int64_t take = cs - s < len ? cs - s : len;
            pk = WALK(node)(c, p, s, take, pk);
            len -= take;
            p += (uintptr_t)stride;
        }
        const int64_t nb = c->count, *disp = c->disp, *blen = c->len;
        for (int64_t nfull = len / cs; nfull > 0; nfull--, p += (uintptr_t)stride) {
            uintptr_t q = p + (uintptr_t)c->off;
            for (int64_t b = 0; b < nb; b++) {
                WALK_COPY(q + (uintptr_t)disp[b], pk, blen[b]);
                pk += blen[b];
            }
        }
        len %= cs;
        return len > 0 ? WALK(node)(c, p, 0, len, pk) : pk;
    }
    if (c->kind != DL_CONTIG) {
        while (len > 0) {
            int64_t take = cs - s < len ? cs - s : len;
            pk = WALK(node)(c, p, s, take, pk);
            len -= take;
            s = 0;
            p += (uintptr_t)stride;
        }
        return pk;
    }
    /* Copies of one chunk: the vector fast path. */
    p += (uintptr_t)c->off;
    if (s) {
        int64_t take = cs - s < len ? cs - s : len;
        WALK_COPY(p + (uintptr_t)s, pk, take);
        pk += take;
        len -= take;
        p += (uintptr_t)stride;
    }
    int64_t nfull = len / cs;
    switch (cs) { /* constant sizes become plain moves */
#define WALK_FIXED(K)                                                                      \
    case K:                                                                                \
        for (int64_t k = 0; k < nfull; k++, p += (uintptr_t)stride, pk += K)               \
            WALK_COPY(p, pk, K);                                                           \
        break;
        WALK_FIXED(1)
        WALK_FIXED(2)
        WALK_FIXED(4)
        WALK_FIXED(8)
        WALK_FIXED(12)
        WALK_FIXED(16)
        WALK_FIXED(24)
        WALK_FIXED(32)
#undef WALK_FIXED
    default:
        for (int64_t k = 0; k < nfull; k++, p += (uintptr_t)stride, pk += cs)
            WALK_COPY(p, pk, cs);
        break;
    }
    len -= nfull * cs;
    if (len > 0) {
        WALK_COPY(p, pk, len);
        pk += len;
    }
    return pk;
}

static char *WALK(node)(const dl_node *n, uintptr_t base, int64_t skip, int64_t len, char *pk)
{
    base += (uintptr_t)n->off;
    if (n->kind == DL_CONTIG) {
        WALK_COPY(base + (uintptr_t)skip, pk, len);
        return pk + len;
    }
    if (n->kind == DL_VECTOR)
        return WALK(seq)(n->child, base, n->stride, skip, len, pk);
    int64_t i = skip ? dt_find_entry(n->prefix, n->count, skip) : 0;
    int64_t s = skip - n->prefix[i];
    while (len > 0) {
        int64_t take = n->prefix[i + 1] - n->prefix[i] - s;
        take = take < len ? take : len;
        uintptr_t p = base + (uintptr_t)n->disp[i];
        switch (n->kind) {
        case DL_BLOCKS:
            WALK_COPY(p + (uintptr_t)s, pk, take);
            pk += take;
            break;
        case DL_INDEXED:
            pk = WALK(seq)(n->child, p, n->stride, s, take, pk);
            break;
        default: /* DL_STRUCT */
            pk = WALK(node)(n->children[i], p, s, take, pk);
            break;
        }
        len -= take;
        s = 0;
        i++;
    }
    return pk;
}
