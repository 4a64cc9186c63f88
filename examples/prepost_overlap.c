/* Every rank sends a block to every other rank.  The receives are posted
 * first: each fmpl_irecv writes its header into the sender's matching slot
 * at once, so a send that comes later finds it and puts the data straight
 * into the receive buffer without waiting.  Computation then runs while the
 * blocks arrive, and the waits at the end mostly find them complete. */
#include <fmpl.h>
#include <math.h>
#include <stdio.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != FMPL_SUCCESS)                                               \
            fmpl_abort(rc_, #call);                                            \
    } while (0)

enum { N = 64 * 1024 / sizeof(double), BLOCK = 0 };   /* 64 KiB per block, index 0 */

static double compute(long steps)
{
    double s = 0;
    for (long i = 1; i <= steps; i++)
        s += sqrt((double)i);
    return s;
}

int main(void)
{
    int rank, size, bad = 0, early = 0;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));

    /* Shared-heap buffers: the sender copies straight into them, no system
     * call and no help from the receiver. */
    double *out = fmpl_alloc(N * sizeof *out);
    double *in = fmpl_alloc((size_t)size * N * sizeof *in);   /* one block per peer */
    if (!out || !in)
        fmpl_abort(FMPL_ERR_NO_MEMORY, "fmpl_alloc");
    for (long i = 0; i < N; i++)
        out[i] = rank + i * 1e-6;

    /* 1. Pre-post one receive per peer.  (peer, index, comm) names each one:
     *    the same index may be used with every peer at once. */
    for (int p = 0; p < size; p++)
        if (p != rank)
            TRY(fmpl_irecv(in + (size_t)p * N, N * sizeof *in, p, BLOCK, FMPL_COMM_WORLD));
    /* In a real code the receives for step k+1 are posted during step k;
     * here a barrier makes sure every receive is posted before any send. */
    TRY(fmpl_barrier(FMPL_COMM_WORLD));
    /* 2. Start the sends.  The headers are there, so each send puts its data
     *    at once; a send whose header had not come yet would be completed
     *    inside a later FMPL call of this rank (there is no progress thread). */
    for (int p = 0; p < size; p++)
        if (p != rank)
            TRY(fmpl_isend(out, N * sizeof *out, p, BLOCK, FMPL_COMM_WORLD));

    /* 3. Compute while the peers deliver. */
    double t0 = fmpl_wtime();
    double s = compute(2000000);
    double t1 = fmpl_wtime();

    /* 4. Complete everything.  A test that reports completion finishes the
     *    receive (its index is free again); the others are waited for. */
    for (int p = 0; p < size; p++) {
        if (p == rank)
            continue;
        int done;
        fmpl_status st;
        TRY(fmpl_irecv_test(p, BLOCK, FMPL_COMM_WORLD, &done, &st));
        if (done)
            early++;
        else
            TRY(fmpl_irecv_wait(p, BLOCK, FMPL_COMM_WORLD, &st));
        bad += st.source != p || st.size != (long)(N * sizeof *in);
        for (long i = 0; i < N; i++)
            bad += in[(size_t)p * N + i] != p + i * 1e-6;
    }
    for (int p = 0; p < size; p++)
        if (p != rank)
            TRY(fmpl_isend_wait(p, BLOCK, FMPL_COMM_WORLD));
    double t2 = fmpl_wtime();

    printf("rank %d: %d blocks of %zu KiB, %d complete after %.1f ms of compute "
           "(result %.6g), waits %.3f ms: %s\n",
           rank, size - 1, N * sizeof(double) / 1024, early, (t1 - t0) * 1e3, s,
           (t2 - t1) * 1e3, bad ? "WRONG DATA" : "ok");
    fmpl_free(in);
    fmpl_free(out);
    fflush(stdout);   /* a failing rank ends the job: get our line out first */
    TRY(fmpl_finalize());
    return bad != 0;
}
