/* The tag-matched protocol (protocols/tag_match.c) through its internal
 * interface: every size class and buffer placement (so every rendezvous
 * path: direct read, PUT into shared memory, CMA read, streaming), message
 * order across eager and rendezvous, wildcards, unexpected messages,
 * truncation, synchronous mode, probe / dequeue / matched receive, cancel. */
#include <fmpl.h>
#include "progress/progress.h"
#include "protocols/tag_match.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int me, np;
static fmpl_team *world;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "tag_match rank %d line %d: ", me, __LINE__);          \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static void wait_req(fmpl_tm_req *r)
{
    while (!r->complete)
        fmpl_progress();
}

static unsigned char pattern(long i, int src, int tag) { return (unsigned char)(i * 7 + src * 31 + tag); }

static void *get_buf(long n, int shared) { return shared ? fmpl_alloc((size_t)n + 64) : malloc((size_t)n + 64); }
static void put_buf(void *p, int shared) { shared ? fmpl_free(p) : free(p); }

static void exchange(long n, int sshared, int rshared, int tag)
{
    int to = (me + 1) % np, from = (me - 1 + np) % np;
    unsigned char *s = get_buf(n, sshared), *r = get_buf(n, rshared);
    for (long i = 0; i < n; i++)
        s[i] = pattern(i, me, tag);
    memset(r, 0xee, (size_t)n + 64);
    fmpl_tm_req rr, sr;
    EXPECT(fmpl_tm_irecv(&rr, world, r, n, from, tag) == FMPL_SUCCESS, "irecv");
    EXPECT(fmpl_tm_isend(&sr, world, s, n, to, tag, FMPL_TM_MODE_STANDARD) == FMPL_SUCCESS, "isend");
    wait_req(&rr);
    wait_req(&sr);
    EXPECT(rr.st_error == FMPL_SUCCESS && rr.st_bytes == n && rr.st_source == from && rr.st_tag == tag,
           "status n=%ld err=%d bytes=%lld src=%d tag=%d", n, rr.st_error, (long long)rr.st_bytes,
           rr.st_source, rr.st_tag);
    for (long i = 0; i < n; i++)
        EXPECT(r[i] == pattern(i, from, tag), "data n=%ld byte %ld (%d/%d shared)", n, i, sshared, rshared);
    EXPECT(r[n] == 0xee, "wrote past the buffer n=%ld", n);
    fmpl_barrier(FMPL_COMM_WORLD);
    put_buf(s, sshared);
    put_buf(r, rshared);
}

/* Rank 0 sends a mix of eager and rendezvous messages with one tag before
 * rank 1 posts anything; rank 1 must receive them in order. */
static void order(void)
{
    long sizes[] = {8, 100000, 16, 300000, 0, 20000, 4};
    int n = (int)(sizeof sizes / sizeof *sizes);
    fmpl_tm_req req[8];
    unsigned char *b[8];
    if (me == 0) {
        for (int k = 0; k < n; k++) {
            b[k] = malloc((size_t)sizes[k] + 1);
            memset(b[k], k + 1, (size_t)sizes[k] + 1);
            fmpl_tm_isend(&req[k], world, b[k], sizes[k], 1, 5, FMPL_TM_MODE_STANDARD);
        }
        fmpl_barrier(FMPL_COMM_WORLD);
        for (int k = 0; k < n; k++) {
            wait_req(&req[k]);
            free(b[k]);
        }
    } else if (me == 1) {
        fmpl_barrier(FMPL_COMM_WORLD); /* all of it is unexpected by now, or on its way */
        for (int k = 0; k < n; k++) {
            unsigned char *r = malloc(400000);
            fmpl_tm_irecv(&req[k], world, r, 400000, 0, 5);
            wait_req(&req[k]);
            EXPECT(req[k].st_bytes == sizes[k], "order: message %d has %lld bytes, want %ld", k,
                   (long long)req[k].st_bytes, sizes[k]);
            for (long i = 0; i < sizes[k]; i++)
                EXPECT(r[i] == k + 1, "order: message %d byte %ld", k, i);
            free(r);
        }
    } else {
        fmpl_barrier(FMPL_COMM_WORLD);
    }
    fmpl_barrier(FMPL_COMM_WORLD);
}

static void wildcards(void)
{
    /* Everyone but 0 sends two messages to 0 with tags 100+rank and 200. */
    if (me != 0) {
        int a = me, c = me * 10;
        fmpl_tm_req r1, r2;
        fmpl_tm_isend(&r1, world, &a, sizeof a, 0, 100 + me, FMPL_TM_MODE_STANDARD);
        fmpl_tm_isend(&r2, world, &c, sizeof c, 0, 200, FMPL_TM_MODE_STANDARD);
        wait_req(&r1);
        wait_req(&r2);
    } else {
        int seen[64] = {0};
        for (int k = 0; k < 2 * (np - 1); k++) {
            int v = -1;
            fmpl_tm_req r;
            fmpl_tm_irecv(&r, world, &v, sizeof v, FMPL_TM_ANY_SOURCE, FMPL_TM_ANY_TAG);
            wait_req(&r);
            EXPECT(r.st_source >= 1 && r.st_source < np, "any source gave %d", r.st_source);
            if (r.st_tag == 200)
                EXPECT(v == r.st_source * 10, "tag 200 value %d from %d", v, r.st_source);
            else
                EXPECT(r.st_tag == 100 + r.st_source && v == r.st_source, "tag %d value %d", r.st_tag, v);
            seen[r.st_source]++;
        }
        for (int s = 1; s < np; s++)
            EXPECT(seen[s] == 2, "rank %d: %d messages", s, seen[s]);
    }
    fmpl_barrier(FMPL_COMM_WORLD);
}

static void truncation(void)
{
    long sizes[] = {50, 100000};
    for (int k = 0; k < 2; k++) {
        long n = sizes[k];
        if (me == 0) {
            unsigned char *s = malloc((size_t)n);
            memset(s, 0x5a, (size_t)n);
            fmpl_tm_req r;
            fmpl_tm_isend(&r, world, s, n, 1, 9, FMPL_TM_MODE_STANDARD);
            wait_req(&r);
            free(s);
        } else if (me == 1) {
            unsigned char *d = malloc((size_t)n);
            memset(d, 0, (size_t)n);
            fmpl_tm_req r;
            fmpl_tm_irecv(&r, world, d, n / 2, 0, 9);
            wait_req(&r);
            EXPECT(r.st_error == FMPL_ERR_TRUNCATE && r.st_bytes == n / 2, "truncation of %ld: err %d bytes %lld", n,
                   r.st_error, (long long)r.st_bytes);
            for (long i = 0; i < n; i++)
                EXPECT(d[i] == (i < n / 2 ? 0x5a : 0), "truncation of %ld: byte %ld", n, i);
            free(d);
        }
        fmpl_barrier(FMPL_COMM_WORLD);
    }
}

static void synchronous(void)
{
    if (me == 0) {
        int v = 42;
        fmpl_tm_req r;
        fmpl_tm_isend(&r, world, &v, sizeof v, 1, 11, FMPL_TM_MODE_SYNC);
        for (int i = 0; i < 10000; i++)
            fmpl_progress();
        EXPECT(!r.complete, "synchronous send completed before the receive was posted");
        fmpl_barrier(FMPL_COMM_WORLD);
        wait_req(&r);
    } else if (me == 1) {
        fmpl_barrier(FMPL_COMM_WORLD);
        int v = 0;
        fmpl_tm_req r;
        fmpl_tm_irecv(&r, world, &v, sizeof v, 0, 11);
        wait_req(&r);
        EXPECT(v == 42, "synchronous value %d", v);
    } else {
        fmpl_barrier(FMPL_COMM_WORLD);
    }
    fmpl_barrier(FMPL_COMM_WORLD);
}

static void probe_and_cancel(void)
{
    if (me == 0) {
        long big = 200000;
        char *s = malloc((size_t)big);
        memset(s, 3, (size_t)big);
        fmpl_tm_req r1, r2;
        fmpl_tm_isend(&r1, world, s, 10, 1, 21, FMPL_TM_MODE_STANDARD);
        fmpl_tm_isend(&r2, world, s, big, 1, 22, FMPL_TM_MODE_STANDARD);
        wait_req(&r1);
        wait_req(&r2);
        free(s);
    } else if (me == 1) {
        fmpl_tm_unexp *u = NULL;
        while (!(u = fmpl_tm_probe(world, 0, 22)))
            fmpl_progress();
        EXPECT(u->size == 200000 && u->tag == 22, "probe size %lld tag %d", (long long)u->size, u->tag);
        fmpl_tm_dequeue(world, u);
        EXPECT(fmpl_tm_probe(world, 0, 22) == NULL, "dequeued message still visible");
        char *d = malloc(200000);
        fmpl_tm_req r;
        fmpl_tm_imrecv(&r, world, d, 200000, u);
        wait_req(&r);
        EXPECT(r.st_bytes == 200000 && d[199999] == 3, "matched receive");
        char small[10];
        fmpl_tm_irecv(&r, world, small, 10, 0, 21);
        wait_req(&r);
        EXPECT(r.st_bytes == 10 && small[9] == 3, "tag 21 after 22");
        free(d);
        fmpl_tm_req c;
        fmpl_tm_irecv(&c, world, small, 10, 0, 999);
        EXPECT(fmpl_tm_cancel_recv(&c) == 1 && c.cancelled && c.complete, "cancel");
    }
    fmpl_barrier(FMPL_COMM_WORLD);
}

int main(void)
{
    EXPECT(fmpl_init(NULL, NULL, 0) == FMPL_SUCCESS, "init");
    fmpl_comm_rank(FMPL_COMM_WORLD, &me);
    fmpl_comm_size(FMPL_COMM_WORLD, &np);
    world = fmpl_teams[FMPL_COMM_WORLD];
    long sizes[] = {0, 1, 8, 100, 16384, 16385, 65536, 1 << 20, 4 << 20};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++)
        for (int placement = 0; placement < 4; placement++)
            exchange(sizes[k], placement & 1, placement >> 1, (int)k);
    order();
    wildcards();
    truncation();
    synchronous();
    probe_and_cancel();
    if (me == 0)
        printf("tag_match: ok on %d ranks\n", np);
    return fmpl_finalize();
}
