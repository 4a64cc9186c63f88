/* fabric-bench: the remote-memory-operation layer alone, ranks 0 and 1.
 *   fmplrun -n 2 build/bench/fabric-bench [--iters N] [--max-size B]
 * Same host: shared memory.  FMPL_FABRIC=net (and FMPL_NET_PROVIDER): the
 * network backend.  Not a test; every size's data is checked once.
 *
 * Sequence per size n (buffers in the shared heap, flags too):
 *   put latency  0 puts n bytes into 1's buffer and notifies 1's flag with
 *                the round; 1 waits for it, puts n bytes back, notifies 0;
 *                one-way = round trip / 2
 *   put bw       0 puts n bytes `iters` times, then notifies; 1 waits and
 *                notifies back; bandwidth = n * iters / time
 *   get latency  0 gets n bytes from 1 `iters` times (1 polls meanwhile:
 *                manual-progress providers serve reads only then)
 * Waits poll fmpl_fab_progress (network completions) and the flag. */
#include <fmpl.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fabric/fabric.h"
#include "runtime/runtime.h"

static int rank;
static _Atomic uint64_t *flags; /* 0 ping, 1 pong, 2 bw data sent, 3 bw ack, 4 gets done */
static fmpl_raddr peer_buf, peer_flags;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static fmpl_raddr flag_of_peer(int slot)
{
    fmpl_raddr r = peer_flags;
    r.addr += 8u * (unsigned)slot;
    return r;
}

static void wait_flag(int slot, uint64_t v)
{
    while (atomic_load_explicit(&flags[slot], memory_order_acquire) < v)
        fmpl_fab_progress();
}

static int must(int rc, const char *what)
{
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "fabric-bench rank %d: %s failed: %s\n", rank, what,
                fmpl_error_string(rc));
        exit(1);
    }
    return rc;
}

int main(int argc, char **argv)
{
    long iters_max = 2000;
    size_t max_size = 4u << 20;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc)
            iters_max = atol(argv[++i]);
        else if (strcmp(argv[i], "--max-size") == 0 && i + 1 < argc)
            max_size = (size_t)atol(argv[++i]);
        else {
            fprintf(stderr, "usage: fmplrun -n 2 fabric-bench [--iters N] [--max-size B]\n");
            return 2;
        }
    }
    fmpl_bootstrap *bs;
    if (fmpl_runtime_bootstrap(&bs) != FMPL_SUCCESS || fmpl_fabric_init(bs) != FMPL_SUCCESS)
        return 1;
    rank = bs->rank;
    if (bs->size != 2) {
        fprintf(stderr, "fabric-bench: run it with 2 ranks\n");
        return 2;
    }
    unsigned char *buf = fmpl_fab_alloc(max_size), *src = fmpl_fab_alloc(max_size);
    flags = fmpl_fab_alloc(64);
    if (!buf || !src || !flags)
        return 1;
    memset((void *)flags, 0, 64);
    char v[128];
    fmpl_raddr b = fmpl_fab_raddr(buf), f = fmpl_fab_raddr((void *)flags);
    snprintf(v, sizeof v, "%llx,%llx", (unsigned long long)b.addr, (unsigned long long)f.addr);
    must(bs->put(bs, "fbench", v), "publish");
    must(bs->fence(bs), "fence");
    must(bs->get(bs, 1 - rank, "fbench", v, sizeof v), "lookup");
    unsigned long long pb, pf;
    sscanf(v, "%llx,%llx", &pb, &pf);
    peer_buf = (fmpl_raddr){.addr = pb, .rank = 1 - rank, .kind = FMPL_MEM_SHARED};
    peer_flags = (fmpl_raddr){.addr = pf, .rank = 1 - rank, .kind = FMPL_MEM_SHARED};
    must(bs->barrier(bs), "barrier");
    if (rank == 0)
        printf("# fabric-bench: %s\n#%11s %8s | %12s | %12s | %12s\n",
               fmpl_fab.net ? fmpl_fab.net->describe() : "shared memory (same host)", "size",
               "iters", "put us 1-way", "put MB/s", "get us");
    uint64_t round = 0, bwc = 0, done = 0;
    for (size_t n = 8; n <= max_size; n *= 8) {
        long iters = n >= (1u << 20) ? 50 : n >= 65536 ? 400 : iters_max;
        for (size_t i = 0; i < n; i++)
            src[i] = (unsigned char)(i * 7 + n);
        /* put latency (first round is warm-up) */
        double t0 = 0;
        for (long it = 0; it <= iters; it++) {
            if (it == 1)
                t0 = now();
            round++;
            if (rank == 0) {
                must(fmpl_fab_put(src, n, peer_buf), "put");
                must(fmpl_fab_notify(flag_of_peer(0), round), "notify");
                wait_flag(1, round);
            } else {
                wait_flag(0, round);
                must(fmpl_fab_put(src, n, peer_buf), "put");
                must(fmpl_fab_notify(flag_of_peer(1), round), "notify");
            }
        }
        double lat = (now() - t0) / (double)iters / 2 * 1e6;
        if (memcmp(buf, src, n) != 0) {
            fprintf(stderr, "fabric-bench rank %d: size %zu: data differs\n", rank, n);
            return 1;
        }
        /* put bandwidth */
        bwc++;
        t0 = now();
        if (rank == 0) {
            for (long it = 0; it < iters; it++)
                must(fmpl_fab_put(src, n, peer_buf), "put");
            must(fmpl_fab_notify(flag_of_peer(2), bwc), "notify");
            wait_flag(3, bwc);
        } else {
            wait_flag(2, bwc);
            must(fmpl_fab_notify(flag_of_peer(3), bwc), "notify");
        }
        double bw = (double)n * (double)iters / (now() - t0) / 1e6;
        /* get latency */
        done++;
        double get = 0;
        if (rank == 0) {
            t0 = now();
            for (long it = 0; it < iters; it++)
                must(fmpl_fab_get(buf, n, peer_buf), "get");
            get = (now() - t0) / (double)iters * 1e6;
            must(fmpl_fab_notify(flag_of_peer(4), done), "notify");
        } else {
            wait_flag(4, done);
        }
        if (rank == 0)
            printf("%12zu %8ld | %12.3f | %12.1f | %12.3f\n", n, iters, lat, bw, get);
    }
    /* Nobody leaves while the other may still need its progress. */
    round++;
    if (rank == 0) {
        must(fmpl_fab_notify(flag_of_peer(0), round), "notify");
        wait_flag(1, round);
    } else {
        wait_flag(0, round);
        must(fmpl_fab_notify(flag_of_peer(1), round), "notify");
    }
    fmpl_fabric_finalize();
    fmpl_bootstrap_finalize(&bs);
    return 0;
}
