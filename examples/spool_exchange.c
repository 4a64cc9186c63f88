/* Every rank sends to its right neighbour first and only then receives from
 * its left one.  With synchronous sends (the default) nobody gets past the
 * send: each waits for a receive that its neighbour has not posted.  With a
 * spool and a timeout the send gives up waiting after the timeout, copies
 * the message into the spool and returns; the copy goes out once the
 * neighbour posts its receive.
 *
 *   fmplrun -n 4 spool_exchange          timeout 10 ms: completes
 *   fmplrun -n 4 spool_exchange 0        buffered: spools at once
 *   fmplrun -n 4 --timeout 5 spool_exchange -1
 *                                        FMPL_TIMEOUT_NONE: deadlock, ended
 *                                        by the launcher (exit status 124) */
#include <fmpl.h>
#include <stdio.h>
#include <stdlib.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != FMPL_SUCCESS)                                               \
            fmpl_abort(rc_, #call);                                            \
    } while (0)

enum { N = 128, ROUNDS = 3 };        /* 128 doubles = 1 KiB per message */

/* Deliver whatever the spool still holds.  Each message goes out as soon as
 * its receive is posted, so this ends once the receivers have posted. */
static void flush_spool(void)
{
    int nspool;
    do
        TRY(fmpl_sendbuf_check(NULL, &nspool));
    while (nspool > 0);
}

int main(int argc, char **argv)
{
    int timeout_ms = argc > 1 ? atoi(argv[1]) : 10;
    int rank, size, bad = 0, spooled = 0;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Any memory can be the spool; each spooled message takes its size
     * rounded up to 64 bytes plus a 64-byte record header. */
    static char spool[16 * 1024];
    TRY(fmpl_sendbuf_set(spool, sizeof spool, timeout_ms));

    double *out = fmpl_alloc(N * sizeof *out), *in = fmpl_alloc(N * sizeof *in);
    if (!out || !in)
        fmpl_abort(FMPL_ERR_NO_MEMORY, "fmpl_alloc");
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++)
            out[i] = rank * 1000.0 + r * 100.0 + i;
        /* Send first: returns after the timeout at the latest. */
        TRY(fmpl_send(out, N * sizeof *out, right, r, FMPL_COMM_WORLD));
        int nspool;
        TRY(fmpl_sendbuf_check(NULL, &nspool));
        spooled += nspool;           /* 1: our message waits in the spool */
        /* Then receive; this and every later FMPL call also delivers our
         * spooled message once the right neighbour has posted its receive. */
        fmpl_status st;
        TRY(fmpl_recv(in, N * sizeof *in, left, r, FMPL_COMM_WORLD, &st));
        for (int i = 0; i < N; i++)
            bad += in[i] != left * 1000.0 + r * 100.0 + i;
        bad += st.source != left || st.size != (long)(N * sizeof *in);
        /* Our message may still be in the spool (the neighbour posted its
         * receive after our last FMPL call): deliver it now, so that the
         * spool is empty when the next round starts. */
        flush_spool();
    }
    TRY(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_NONE));   /* spool is empty */

    printf("rank %d: %d rounds with rank %d -> %d -> %d, %d of the sends spooled "
           "(timeout %d ms): %s\n",
           rank, ROUNDS, left, rank, right, spooled, timeout_ms, bad ? "WRONG DATA" : "ok");
    fmpl_free(in);
    fmpl_free(out);
    fflush(stdout);   /* a failing rank ends the job: get our line out first */
    TRY(fmpl_finalize());
    return bad != 0;
}
