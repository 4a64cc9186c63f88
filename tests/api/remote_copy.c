/* Symmetric memory and remote copies with notification (fmpl.h:
 * fmpl_alloc_symmetric / fmpl_free_symmetric, fmpl_put_notify,
 * fmpl_get_notify, fmpl_copy, fmpl_copy_sync, fmpl_wait_flag,
 * fmpl_wait_count).
 *
 *   api_remote_copy           every part below but the errors
 *   api_remote_copy errors    the error cases (run with FMPL_ERRORS_QUIET=1)
 *
 * symmetric  sequences of allocations and frees give the same address on
 *            every rank (rank 0's list broadcast, every rank compares); a
 *            freed block's memory is handed out again; a sub-communicator
 *            that allocates in between makes the world's members propose
 *            different offsets, and they still agree
 * sense      put_notify to the right neighbour, sizes 1 B .. 4 MiB at odd
 *            offsets, sources private and symmetric; a sense-reversal loop
 *            (flag alternates 1/0, the receiver acknowledges with a
 *            zero-byte put_notify), the receiver delayed on purpose (sleeps,
 *            and compute without FMPL calls); data checked right after the
 *            flag
 * sequence   the sender runs up to 4 transfers ahead into 4 slots, notes
 *            carry sequence values and the receiver waits for "at least k"
 *            (fmpl_test_count, interleaved with its own sends)
 * count      every rank in turn receives k messages from each of the P-1
 *            others, counted into one word: the count reaches (P-1)k, all
 *            data is there, and after a barrier it is exactly (P-1)k
 * get        get_notify from every rank into private and symmetric memory,
 *            counted at the caller
 * copy       fmpl_copy as a put, as a get (forwarded to the source) and
 *            third-party (rank 0 orders copies between every pair of
 *            others), with notes, and without notes checked after
 *            fmpl_copy_sync
 * asleep     (agent on, shared memory) a copy forwarded to a source that
 *            computes without FMPL calls, its agent asleep: the forwarding
 *            rings that agent, which carries the copy out (without the ring
 *            the copy waited for the source's next call: the test then
 *            times out); ranks 0 and 1 on one host only */
#include "test_util.h"

static int me, n;
#define COMM FMPL_COMM_WORLD

/* Round trips over the network cost a system call per poll and far more
 * than on shared memory when the machine is loaded: the loops run a fifth
 * of their iterations there (FMPL_FABRIC=net or split). */
static int rounds(int shm_rounds)
{
    const char *f = getenv("FMPL_FABRIC");
    int net = f && (strcmp(f, "net") == 0 || strcmp(f, "split") == 0);
    return net ? shm_rounds / 5 : shm_rounds;
}

static uint64_t *sym_u64(size_t count)
{
    uint64_t *p = fmpl_alloc_symmetric(count * sizeof(uint64_t), COMM);
    CHECK(p, "fmpl_alloc_symmetric of %zu words returned NULL", count);
    for (size_t i = 0; i < count; i++)
        p[i] = 0;
    CALL(fmpl_barrier(COMM)); /* zeroed everywhere before anyone writes */
    return p;
}

/* Every rank holds the same `count` addresses as rank 0. */
static void check_same_everywhere(const uint64_t *mine, int count, const char *what)
{
    uint64_t theirs[64];
    CHECK(count <= 64, "too many addresses");
    memcpy(theirs, mine, sizeof(uint64_t) * (size_t)count);
    CALL(fmpl_bcast(theirs, (long)sizeof(uint64_t) * count, 0, COMM));
    for (int i = 0; i < count; i++)
        CHECK(theirs[i] == mine[i], "%s: address %d is %#llx here, %#llx on rank 0", what, i,
              (unsigned long long)mine[i], (unsigned long long)theirs[i]);
}

/* A compute phase that makes no FMPL call (the receiver is "busy"). */
static void compute_us(double us)
{
    double end = tu_now() + us * 1e-6;
    volatile unsigned x = 0;
    while (tu_now() < end)
        x++;
}

/* ------------------------------------------------------------ symmetric */

static void symmetric(void)
{
    tu_sub = "symmetric sequences";
    uint64_t a[64];
    int k = 0;
    char *b0 = fmpl_alloc_symmetric(100, COMM);
    char *b1 = fmpl_alloc_symmetric(1 << 20, COMM);
    char *b2 = fmpl_alloc_symmetric(7, COMM);
    CHECK(b0 && b1 && b2, "allocations returned NULL");
    CHECK(((uintptr_t)b0 | (uintptr_t)b1 | (uintptr_t)b2) % 64 == 0, "not 64-byte aligned");
    a[k++] = (uintptr_t)b0, a[k++] = (uintptr_t)b1, a[k++] = (uintptr_t)b2;
    /* the block is ours to write, and distinct from the others */
    memset(b0, 1, 100);
    memset(b1, 2, 1 << 20);
    memset(b2, 3, 7);
    CHECK(b0[99] == 1 && b1[0] == 2 && b1[(1 << 20) - 1] == 2 && b2[0] == 3, "blocks overlap");
    CALL(fmpl_free_symmetric(b1, COMM));
    char *b3 = fmpl_alloc_symmetric(500000, COMM); /* fits where b1 was */
    CHECK(b3 == b1, "the freed block's memory is not handed out again: %p, freed %p",
          (void *)b3, (void *)b1);
    a[k++] = (uintptr_t)b3;
    memset(b3, 4, 500000);
    CHECK(b0[99] == 1 && b2[6] == 3, "a new block overwrote a live one");
    char *b4 = fmpl_alloc_symmetric(3 << 20, COMM); /* does not fit there */
    CHECK(b4 && b4 > b2, "a block of 3 MiB went to %p (last block at %p)", (void *)b4,
          (void *)b2);
    a[k++] = (uintptr_t)b4;
    check_same_everywhere(a, k, "alloc/free sequence");

    tu_sub = "symmetric cycles";
    for (int i = 0; i < 200; i++) {
        char *p = fmpl_alloc_symmetric((size_t)(i % 7 + 1) * 4096, COMM);
        CHECK(p, "cycle %d: NULL", i);
        CHECK(i == 0 || (uintptr_t)p == a[k], "cycle %d: %p, not %#llx as before", i, (void *)p,
              (unsigned long long)a[k]);
        if (i == 0)
            a[k] = (uintptr_t)p;
        p[0] = (char)i;
        CALL(fmpl_free_symmetric(p, COMM));
    }
    k++;
    check_same_everywhere(a, k, "alloc/free cycles");

    tu_sub = "symmetric sub-communicator";
    /* The even ranks allocate on a communicator of their own in between:
     * their first fit for the next world allocation is higher than the odd
     * ranks'; the world allocation must still agree. */
    fmpl_comm even;
    CALL(fmpl_comm_create(me % 2 == 0 ? 0 : FMPL_KEY_NONE, &even));
    char *e = NULL;
    if (me % 2 == 0) {
        e = fmpl_alloc_symmetric(256 << 10, even);
        CHECK(e, "allocation on the even ranks' communicator returned NULL");
    }
    /* 600000 bytes fit in no hole below the cycles' address: the odd
     * ranks propose that address, the even ranks the end of e. */
    const size_t wsize = 600000;
    char *w = fmpl_alloc_symmetric(wsize, COMM);
    CHECK(w, "world allocation after the sub-communicator's returned NULL");
    if (e)
        CHECK(w + wsize <= e || w >= e + (256 << 10), "world block %p overlaps even block %p",
              (void *)w, (void *)e);
    else
        CHECK((uintptr_t)w > a[k - 1], "an odd rank's block %p is not above its own first fit "
              "%#llx: the members did not move to the even ranks' proposal", (void *)w,
              (unsigned long long)a[k - 1]);
    a[k++] = (uintptr_t)w;
    check_same_everywhere(a, k, "after a sub-communicator's allocation");
    /* it is really the same memory everywhere: a put to every rank at w */
    memset(w, 0, wsize);
    CALL(fmpl_barrier(COMM));
    int right = (me + 1) % n;
    uint64_t v = 0x5100 + (uint64_t)me;
    CALL(fmpl_put_notify(&v, w + 8 * me, 8, right, COMM, NULL));
    CALL(fmpl_copy_sync(COMM));
    CALL(fmpl_barrier(COMM));
    int left = (me + n - 1) % n;
    uint64_t got;
    memcpy(&got, w + 8 * left, 8);
    CHECK_EQ(got, 0x5100 + left, "put at the world block from the left neighbour");
    if (e) {
        CALL(fmpl_free_symmetric(e, even));
        CALL(fmpl_comm_free(&even));
    }
    CALL(fmpl_free_symmetric(w, COMM));
    CALL(fmpl_free_symmetric(b3, COMM));
    CALL(fmpl_free_symmetric(b0, COMM));
    CALL(fmpl_free_symmetric(b2, COMM));
    CALL(fmpl_free_symmetric(b4, COMM));
}

/* ---------------------------------------------------------------- sense */

#define BIG (4 << 20)

/* One size of the sense-reversal loop: me -> right into dst + off, flag at
 * the right neighbour, acknowledgement back at the left one's. */
static void sense_size(char *dst, uint64_t *flag, uint64_t *ack, char *src_sym, char *src_priv,
                       char *seen, long size, long off, int iters)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    uint64_t rng = 0x5e45e + (uint64_t)me * 7919 + (uint64_t)size;
    for (int i = 0; i < iters; i++) {
        uint64_t sense = (uint64_t)((i & 1) ^ 1); /* 1, 0, 1, 0, ... */
        /* send */
        char *src = (i & 2) ? src_sym + off : src_priv + 1 + off; /* symmetric / private, odd */
        tu_fill(src, size, tu_seed(me, 1, size, i));
        fmpl_notify note = {FMPL_NOTIFY_SET, flag, sense};
        CALL(fmpl_put_notify(src, dst + off, (size_t)size, right, COMM, &note));
        /* the source may be reused at once */
        memset(src, 0xdd, (size_t)(size < 64 ? size : 64));
        /* receive: sometimes late */
        uint64_t r = tu_rand(&rng);
        if (r % 97 == 0)
            tu_sleep_ms(1);
        else if (r % 11 == 0)
            compute_us(20);
        CALL(fmpl_wait_flag(flag, sense));
        memcpy(seen, dst + off, (size_t)size); /* what was there when the flag was */
        long bad = tu_find_mismatch_at(seen, 0, size, tu_seed(left, 1, size, i));
        if (bad >= 0)
            tu_report_mismatch(__FILE__, __LINE__, seen, 0, size, tu_seed(left, 1, size, i),
                               bad, "data seen right after the flag");
        CHECK(off == 0 || (unsigned char)dst[off - 1] == 0xa5, "byte before the data written");
        CHECK((unsigned char)dst[off + size] == 0xa5, "byte after the data written");
        /* acknowledge: a pure notification */
        fmpl_notify back = {FMPL_NOTIFY_SET, ack, sense};
        CALL(fmpl_put_notify(NULL, NULL, 0, left, COMM, &back));
        /* the right neighbour has read our data: next round may overwrite it */
        CALL(fmpl_wait_flag(ack, sense));
    }
}

static void sense(void)
{
    tu_sub = "sense reversal";
    char *dst = fmpl_alloc_symmetric(BIG + 128, COMM);
    char *src_sym = fmpl_alloc_symmetric(BIG + 128, COMM);
    uint64_t *words = sym_u64(2);
    char *src_priv = malloc(BIG + 128), *seen = malloc(BIG);
    CHECK(dst && src_sym && src_priv && seen, "no memory");
    static const long sizes[] = {1, 7, 8, 64, 1000, 4099, 65541, (1 << 20) + 1, BIG};
    static const long offs[] = {0, 3, 1, 5, 13, 1, 7, 3, 0};
    for (unsigned s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        long size = sizes[s];
        memset(dst, 0xa5, (size_t)(size + 64)); /* the bytes around the data: untouched */
        CALL(fmpl_barrier(COMM));
        int iters = size <= 64 ? rounds(500) : size <= 65541 ? rounds(100) : 6;
        sense_size(dst, &words[0], &words[1], src_sym, src_priv, seen, size, offs[s], iters);
        /* Both flags are 0 again after an even number of rounds. */
        CHECK(iters % 2 == 0 && words[0] == 0 && words[1] == 0, "flags end at 0");
        CALL(fmpl_barrier(COMM));
    }
    free(src_priv);
    free(seen);
    CALL(fmpl_free_symmetric(words, COMM));
    CALL(fmpl_free_symmetric(src_sym, COMM));
    CALL(fmpl_free_symmetric(dst, COMM));
}

/* ------------------------------------------------------------- sequence */

#define SLOTS 4

static void sequence_size(char *slots, uint64_t *seq, uint64_t *ack, long size, int iters)
{
    int right = (me + 1) % n, left = (me + n - 1) % n;
    char *src = malloc((size_t)size);
    CHECK(src, "no memory");
    uint64_t rng = 0x5e9 + (uint64_t)me;
    int sent = 0, got = 0;
    /* Sending and receiving interleave through the test calls: a rank that
     * blocked in a receive while it could send would close a cycle of
     * waits around the ring. */
    while (got < iters || sent < iters) {
        int moved = 0, ok = 0;
        /* send as far ahead as the slots allow: slot i % SLOTS is free once
         * the receiver acknowledged transfer i - SLOTS (ack >= i - SLOTS + 1) */
        if (sent < iters) {
            if (sent < SLOTS)
                ok = 1;
            else
                CALL(fmpl_test_count(ack, (uint64_t)(sent - SLOTS + 1), &ok));
        }
        if (ok) {
            tu_fill(src, size, tu_seed(me, 2, size, sent));
            fmpl_notify note = {FMPL_NOTIFY_SET, seq, (uint64_t)sent + 1};
            CALL(fmpl_put_notify(src, slots + (sent % SLOTS) * size, (size_t)size, right, COMM,
                                 &note));
            sent++;
            moved = 1;
        }
        ok = 0;
        if (got < iters)
            CALL(fmpl_test_count(seq, (uint64_t)got + 1, &ok));
        if (ok) {
            CHECK(*seq <= (uint64_t)got + SLOTS,
                  "sequence %llu while taking %d: more than %d ahead", (unsigned long long)*seq,
                  got, SLOTS);
            char *slot = slots + (got % SLOTS) * size;
            long bad = tu_find_mismatch_at(slot, 0, size, tu_seed(left, 2, size, got));
            if (bad >= 0)
                tu_report_mismatch(__FILE__, __LINE__, slot, 0, size,
                                   tu_seed(left, 2, size, got), bad,
                                   "slot data seen after its sequence value");
            got++;
            fmpl_notify back = {FMPL_NOTIFY_SET, ack, (uint64_t)got};
            CALL(fmpl_put_notify(NULL, NULL, 0, left, COMM, &back));
            moved = 1;
            /* a late receiver: the sender runs ahead meanwhile */
            uint64_t r = tu_rand(&rng);
            if (r % 53 == 0)
                tu_sleep_ms(1);
            else if (r % 5 == 0)
                compute_us(10);
        }
        if (!moved)
            sched_yield();
    }
    CALL(fmpl_wait_count(ack, (uint64_t)iters)); /* the right neighbour took them all */
    free(src);
}

static void sequence(void)
{
    tu_sub = "sequence values";
    static const long sizes[] = {8, 100, 65536};
    for (unsigned s = 0; s < 3; s++) {
        long size = sizes[s];
        char *slots = fmpl_alloc_symmetric((size_t)(SLOTS * size), COMM);
        uint64_t *words = sym_u64(2);
        CHECK(slots, "no symmetric memory");
        sequence_size(slots, &words[0], &words[1], size, size <= 100 ? rounds(600) : rounds(60));
        CALL(fmpl_barrier(COMM));
        CALL(fmpl_free_symmetric(words, COMM));
        CALL(fmpl_free_symmetric(slots, COMM));
    }
}

/* ---------------------------------------------------------------- count */

static void count(void)
{
    tu_sub = "count";
    const int k = 50;
    const long m = 1000;
    char *region = fmpl_alloc_symmetric((size_t)(n * k * m), COMM);
    uint64_t *counter = sym_u64(1);
    char *src = malloc((size_t)m);
    CHECK(region && src, "no memory");
    for (int root = 0; root < n; root++) {
        *counter = 0;
        memset(region, 0, (size_t)(n * k * m));
        CALL(fmpl_barrier(COMM));
        if (me != root) {
            for (int j = 0; j < k; j++) {
                tu_fill(src, m, tu_seed(me, 3, m, root * k + j));
                fmpl_notify note = {FMPL_NOTIFY_COUNT, counter, 0};
                CALL(fmpl_put_notify(src, region + (me * k + j) * m, (size_t)m, root, COMM,
                                     &note));
            }
        } else {
            CALL(fmpl_wait_count(counter, (uint64_t)(n - 1) * (uint64_t)k));
            for (int s = 0; s < n; s++)
                for (int j = 0; s != root && j < k; j++) {
                    char *p = region + (s * k + j) * m;
                    CHECK(tu_find_mismatch_at(p, 0, m, tu_seed(s, 3, m, root * k + j)) < 0,
                          "message %d from %d missing when the count was reached", j, s);
                }
        }
        CALL(fmpl_copy_sync(COMM));
        CALL(fmpl_barrier(COMM));
        if (me == root)
            CHECK_EQ(*counter, (uint64_t)(n - 1) * (uint64_t)k, "counter after every sender");
    }
    free(src);
    CALL(fmpl_free_symmetric(counter, COMM));
    CALL(fmpl_free_symmetric(region, COMM));
}

/* ------------------------------------------------------------------ get */

static void get(void)
{
    tu_sub = "get_notify";
    const long m = 70001;
    char *mine = fmpl_alloc_symmetric((size_t)m + 64, COMM);
    char *into_sym = fmpl_alloc_symmetric((size_t)m + 64, COMM);
    uint64_t *counter = sym_u64(1);
    char *into_priv = malloc((size_t)m + 64);
    CHECK(mine && into_sym && into_priv, "no memory");
    tu_fill(mine, m + 64, tu_seed(me, 4, m, 0));
    CALL(fmpl_barrier(COMM));
    int gets = 0;
    for (int r = 0; r < n; r++) {
        static const long sizes[] = {1, 13, 4096, 70001};
        for (unsigned s = 0; s < 4; s++) {
            long size = sizes[s], off = (long)s * 3 + 1, at = size == m ? 0 : off;
            if (at + size > m + 64)
                at = 0;
            char *into = (s & 1) ? into_sym : into_priv + 1;
            memset(into, 0, (size_t)size);
            fmpl_notify note = {FMPL_NOTIFY_COUNT, counter, 0};
            CALL(fmpl_get_notify(into, mine + at, (size_t)size, r, COMM, &note));
            gets++;
            CHECK_EQ(*counter, gets, "the note at the caller is applied on return");
            CHECK(tu_find_mismatch_at(into, at, size, tu_seed(r, 4, m, 0)) < 0,
                  "get of %ld bytes from rank %d at offset %ld: wrong data", size, r, at);
        }
        /* a SET note at the caller */
        fmpl_notify set = {FMPL_NOTIFY_SET, counter, 1000 + (uint64_t)r};
        CALL(fmpl_get_notify(into_priv, mine, 8, r, COMM, &set));
        CHECK_EQ(*counter, 1000 + r, "SET note of a get");
        *counter = (uint64_t)gets;
    }
    CALL(fmpl_barrier(COMM));
    free(into_priv);
    CALL(fmpl_free_symmetric(counter, COMM));
    CALL(fmpl_free_symmetric(into_sym, COMM));
    CALL(fmpl_free_symmetric(mine, COMM));
}

/* ----------------------------------------------------------------- copy */

static void copy(void)
{
    const long m = 5000;
    /* src: every rank's own data; inbox: one slot per (source, mode) */
    char *src = fmpl_alloc_symmetric((size_t)m, COMM);
    char *inbox = fmpl_alloc_symmetric((size_t)(3 * n * m), COMM);
    uint64_t *words = sym_u64(3); /* put flag, get counter, third-party counter */
    CHECK(src && inbox, "no memory");
    tu_fill(src, m, tu_seed(me, 5, m, 0));
    memset(inbox, 0, (size_t)(3 * n * m));
    CALL(fmpl_barrier(COMM));
    int right = (me + 1) % n, left = (me + n - 1) % n;

    tu_sub = "copy as a put";
    char *priv = malloc((size_t)m + 1);
    CHECK(priv, "no memory");
    tu_fill(priv + 1, m, tu_seed(me, 6, m, 0));
    fmpl_notify put_note = {FMPL_NOTIFY_SET, &words[0], 77};
    CALL(fmpl_copy(me, priv + 1, right, inbox + me * m, (size_t)m, COMM, &put_note));
    CALL(fmpl_wait_flag(&words[0], 77));
    CHECK(tu_find_mismatch_at(inbox + left * m, 0, m, tu_seed(left, 6, m, 0)) < 0,
          "fmpl_copy put mode: data from %d", left);

    tu_sub = "copy as a get (forwarded)";
    /* from every rank (ourselves too) into our slot n + r, counted here */
    for (int r = 0; r < n; r++) {
        fmpl_notify note = {FMPL_NOTIFY_COUNT, &words[1], 0};
        CALL(fmpl_copy(r, src, me, inbox + (n + r) * m, (size_t)m, COMM, &note));
    }
    CALL(fmpl_wait_count(&words[1], (uint64_t)n)); /* progresses the others' requests too */
    for (int r = 0; r < n; r++)
        CHECK(tu_find_mismatch_at(inbox + (n + r) * m, 0, m, tu_seed(r, 5, m, 0)) < 0,
              "fmpl_copy get mode: data from %d", r);
    CALL(fmpl_barrier(COMM)); /* nobody gets from us any more */
    CHECK_EQ(words[1], n, "get-mode counter");

    tu_sub = "copy third-party";
    /* rank 0 orders a copy from every rank a to every rank b (a != 0 and
     * b != 0 where there are enough ranks), counted at b */
    int expect = 0;
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            int third = n >= 3 ? (a != 0 && b != 0) : (a == 1 && b == 1);
            if (!third)
                continue;
            if (b == me)
                expect++;
            if (me == 0) {
                fmpl_notify note = {FMPL_NOTIFY_COUNT, &words[2], 0};
                CALL(fmpl_copy(a, src, b, inbox + (2 * n + a) * m, (size_t)m, COMM, &note));
            }
        }
    CALL(fmpl_wait_count(&words[2], (uint64_t)expect));
    for (int a = 0; a < n; a++) {
        int third = n >= 3 ? (a != 0 && me != 0) : (a == 1 && me == 1);
        if (third)
            CHECK(tu_find_mismatch_at(inbox + (2 * n + a) * m, 0, m, tu_seed(a, 5, m, 0)) < 0,
                  "third-party copy from %d", a);
    }
    CALL(fmpl_barrier(COMM));
    CHECK_EQ(words[2], expect, "third-party counter");

    tu_sub = "copy_sync";
    /* no notes: rank 0 moves every rank's src into its right neighbour's
     * inbox slot, syncs, and only then tells everyone to look */
    memset(inbox, 0, (size_t)(3 * n * m));
    CALL(fmpl_barrier(COMM));
    if (me == 0) {
        for (int a = 0; a < n; a++)
            CALL(fmpl_copy(a, src, (a + 1) % n, inbox + a * m, (size_t)m, COMM, NULL));
        CALL(fmpl_copy_sync(COMM));
    }
    CALL(fmpl_barrier(COMM));
    CHECK(tu_find_mismatch_at(inbox + left * m, 0, m, tu_seed(left, 5, m, 0)) < 0,
          "after rank 0's fmpl_copy_sync: the copy from %d is not here", left);
    CALL(fmpl_barrier(COMM));

    free(priv);
    CALL(fmpl_free_symmetric(words, COMM));
    CALL(fmpl_free_symmetric(inbox, COMM));
    CALL(fmpl_free_symmetric(src, COMM));
}

static void copy_from_asleep(void)
{
    const char *agent = getenv("FMPL_AGENT"), *fabric = getenv("FMPL_FABRIC");
    if (!agent || strcmp(agent, "thread") != 0 || (fabric && strcmp(fabric, "shm") != 0))
        return; /* the agent must run, and be within a ring's reach */
    tu_sub = "copy from a source whose agent sleeps";
    const long m = 4096;
    char *src = fmpl_alloc_symmetric((size_t)m, COMM);
    char *dst = fmpl_alloc_symmetric((size_t)m, COMM);
    uint64_t *word = sym_u64(1);
    CHECK(src && dst, "no memory");
    tu_fill(src, m, tu_seed(me, 9, m, 0));
    memset(dst, 0, (size_t)m);
    CALL(fmpl_barrier(COMM));
    /* Ranks 0 and 1 must share a host: the ring and the out-of-band page
     * reach no further (across the namespace hosts the part is skipped). */
    int same_host = 0;
    if (me < 2) {
        char host[64] = {0}, peer[64] = {0};
        gethostname(host, sizeof host - 1);
        if (me == 0) {
            CALL(fmpl_send(host, sizeof host, 1, 60, COMM));
            CALL(fmpl_recv(peer, sizeof peer, 1, 60, COMM, NULL));
        } else {
            CALL(fmpl_recv(peer, sizeof peer, 0, 60, COMM, NULL));
            CALL(fmpl_send(host, sizeof host, 0, 60, COMM));
        }
        same_host = strcmp(host, peer) == 0;
    }
    if (same_host) {
        tu_oob *oob = tu_oob_open(1 - me, 61);
        if (me == 1) {
            tu_oob_set(oob, 0, 1);
            tu_oob_wait(oob, 1, 1, "rank 0's copy from this rank's memory"); /* no FMPL */
        } else {
            tu_oob_wait(oob, 0, 1, "rank 1 to stop calling FMPL");
            usleep(5000); /* past the agent's linger: it sleeps */
            fmpl_notify note = {FMPL_NOTIFY_SET, word, 5};
            CALL(fmpl_copy(1, src, 0, dst, (size_t)m, COMM, &note));
            CALL(fmpl_wait_flag(word, 5));
            CHECK(tu_find_mismatch_at(dst, 0, m, tu_seed(1, 9, m, 0)) < 0,
                  "copy from rank 1 while it computed");
            tu_oob_set(oob, 1, 1);
        }
        tu_oob_close(oob);
    }
    CALL(fmpl_barrier(COMM));
    CALL(fmpl_free_symmetric(word, COMM));
    CALL(fmpl_free_symmetric(dst, COMM));
    CALL(fmpl_free_symmetric(src, COMM));
}

/* --------------------------------------------------------------- errors */

static void errors(void)
{
    tu_sub = "errors: alloc";
    CHECK(fmpl_alloc_symmetric(0, COMM) == NULL, "size 0");
    CHECK(fmpl_alloc_symmetric((size_t)(me + 1) * 64, COMM) == NULL || n == 1,
          "different sizes on different members");
    CHECK(fmpl_alloc_symmetric((size_t)1 << 40, COMM) == NULL, "larger than the arena");
    CHECK(fmpl_alloc_symmetric(64, 42) == NULL, "communicator 42");
    char *blk = fmpl_alloc_symmetric(4096, COMM);
    uint64_t *words = sym_u64(2);
    CHECK(blk, "a normal allocation after the refused ones");
    CHECK_RC(fmpl_free_symmetric(blk + 64, COMM), FMPL_ERR_ARG, "not the start of a block");
    CHECK_RC(fmpl_free_symmetric(me == 0 ? blk : (char *)words, COMM), FMPL_ERR_ARG,
             "different pointers");

    tu_sub = "errors: put_notify";
    int right = (me + 1) % n;
    char priv[64] = {0};
    fmpl_notify ok = {FMPL_NOTIFY_SET, &words[0], 1};
    CHECK_RC(fmpl_put_notify(priv, blk, 8, -1, COMM, &ok), FMPL_ERR_RANK, "rank -1");
    CHECK_RC(fmpl_put_notify(priv, blk, 8, n, COMM, &ok), FMPL_ERR_RANK, "rank n");
    CHECK_RC(fmpl_put_notify(priv, blk, 8, right, 42, &ok), FMPL_ERR_COMM, "comm 42");
    CHECK_RC(fmpl_put_notify(NULL, blk, 8, right, COMM, &ok), FMPL_ERR_ARG, "src NULL");
    CHECK_RC(fmpl_put_notify(priv, NULL, 8, right, COMM, &ok), FMPL_ERR_ARG, "dst NULL");
    CHECK_RC(fmpl_put_notify(priv, priv + 8, 8, right, COMM, &ok), FMPL_ERR_ARG,
             "dst not symmetric");
    CHECK_RC(fmpl_put_notify(priv, blk + 4090, 8, right, COMM, &ok), FMPL_ERR_ARG,
             "past the end of the block");
    CHECK_RC(fmpl_put_notify(priv, blk + 4095, 2, right, COMM, &ok), FMPL_ERR_ARG,
             "into the next block (words follows blk)");
    fmpl_notify bad_kind = {7, &words[0], 1};
    CHECK_RC(fmpl_put_notify(priv, blk, 8, right, COMM, &bad_kind), FMPL_ERR_ARG, "kind 7");
    fmpl_notify no_word = {FMPL_NOTIFY_COUNT, NULL, 0};
    CHECK_RC(fmpl_put_notify(priv, blk, 8, right, COMM, &no_word), FMPL_ERR_ARG, "word NULL");
    fmpl_notify priv_word = {FMPL_NOTIFY_SET, (uint64_t *)(void *)priv, 1};
    CHECK_RC(fmpl_put_notify(priv, blk, 8, right, COMM, &priv_word), FMPL_ERR_ARG,
             "word not symmetric");
    fmpl_notify odd_word = {FMPL_NOTIFY_SET, (uint64_t *)(void *)(blk + 4), 1};
    CHECK_RC(fmpl_put_notify(priv, blk, 8, right, COMM, &odd_word), FMPL_ERR_ARG,
             "word misaligned");

    tu_sub = "errors: get_notify, copy, waits";
    CHECK_RC(fmpl_get_notify(priv, priv + 8, 8, right, COMM, NULL), FMPL_ERR_ARG,
             "get from non-symmetric memory");
    CHECK_RC(fmpl_get_notify(NULL, blk, 8, right, COMM, NULL), FMPL_ERR_ARG, "get into NULL");
    CHECK_RC(fmpl_get_notify(priv, blk, 8, n + 3, COMM, NULL), FMPL_ERR_RANK, "get rank");
    CHECK_RC(fmpl_get_notify(priv, blk, 5000, right, COMM, NULL), FMPL_ERR_ARG,
             "get past the block");
    CHECK_RC(fmpl_copy(right, priv, me, blk, 8, COMM, NULL), FMPL_ERR_ARG,
             "forwarded copy from non-symmetric memory");
    CHECK_RC(fmpl_copy(me, priv, right, priv + 8, 8, COMM, NULL), FMPL_ERR_ARG,
             "copy to non-symmetric memory");
    CHECK_RC(fmpl_copy(-1, blk, me, blk, 8, COMM, NULL), FMPL_ERR_RANK, "copy src_rank -1");
    CHECK_RC(fmpl_copy(me, blk, n, blk, 8, COMM, NULL), FMPL_ERR_RANK, "copy dst_rank n");
    CHECK_RC(fmpl_copy(right, blk, me, blk, 8, COMM, &bad_kind), FMPL_ERR_ARG, "copy kind 7");
    CHECK_RC(fmpl_wait_flag(NULL, 0), FMPL_ERR_ARG, "wait_flag NULL");
    CHECK_RC(fmpl_wait_count((const uint64_t *)(const void *)(blk + 1), 0), FMPL_ERR_ARG,
             "wait_count misaligned");
    CHECK_RC(fmpl_copy_sync(42), FMPL_ERR_COMM, "copy_sync comm 42");
    /* nothing above moved anything */
    CHECK_EQ(words[0], 0, "a refused call applied its note");

    tu_sub = "errors: refused at the source";
    /* rank 0 holds a block no other rank has (allocated on a communicator
     * of its own) and asks rank 1 to copy from it: rank 1 refuses, and
     * rank 0's next fmpl_copy_sync says so.  Nothing lands. */
    fmpl_comm solo;
    CALL(fmpl_comm_create(me == 0 ? 0 : FMPL_KEY_NONE, &solo));
    if (me == 0) {
        char *only = fmpl_alloc_symmetric(64 << 10, solo);
        CHECK(only, "allocation on a one-rank communicator");
        fmpl_notify note = {FMPL_NOTIFY_SET, &words[1], 9};
        CALL(fmpl_copy(1, only, 1, blk, 8, COMM, &note));
        CHECK_RC(fmpl_copy_sync(COMM), FMPL_ERR_ARG, "sync after a refused forwarded copy");
        CALL(fmpl_copy_sync(COMM)); /* reported once */
        CALL(fmpl_free_symmetric(only, solo));
        CALL(fmpl_comm_free(&solo));
    }
    CALL(fmpl_barrier(COMM));
    CHECK_EQ(words[1], 0, "the refused copy's note");

    tu_sub = "errors: still works";
    uint64_t v = 0xfeed + (uint64_t)me;
    fmpl_notify note = {FMPL_NOTIFY_SET, &words[0], 1};
    CALL(fmpl_put_notify(&v, blk, 8, right, COMM, &note));
    CALL(fmpl_wait_flag(&words[0], 1));
    uint64_t got;
    memcpy(&got, blk, 8);
    CHECK_EQ(got, 0xfeed + (uint64_t)((me + n - 1) % n), "put after the errors");
    CALL(fmpl_barrier(COMM));
    CALL(fmpl_free_symmetric(words, COMM));
    CALL(fmpl_free_symmetric(blk, COMM));
}

int main(int argc, char **argv)
{
    int only_errors = argc > 1 && strcmp(argv[1], "errors") == 0;
    tu_init(only_errors ? "remote_copy errors" : "remote_copy", 0);
    me = tu_rank;
    n = tu_size;
    CHECK(n >= 2, "needs at least 2 ranks, have %d", n);
    if (!only_errors) {
        symmetric();
        sense();
        sequence();
        count();
        get();
        copy();
        copy_from_asleep();
        return tu_finish();
    }
    errors();
    tu_finish();
    tu_sub = "errors: after finalize";
    CHECK(fmpl_alloc_symmetric(64, COMM) == NULL, "alloc after finalize");
    uint64_t w = 0;
    CHECK_RC(fmpl_wait_flag(&w, 0), FMPL_ERR_FINALIZED, "wait after finalize");
    return 0;
}
