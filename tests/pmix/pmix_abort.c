/* A real FMPL program ending its job with fmpl_abort, for the mpirun test:
 * after fmpl_init every rank prints
 *   "pmix_abort: rank R of N pid P ns <PMIX_NAMESPACE> ready"
 * and exchanges a message with its neighbours (so the job has really
 * started); then rank N-1 calls fmpl_abort(5, ...) while the others wait in
 * an fmpl_barrier that cannot complete.  The process manager must end them
 * all and exit non-zero.
 *
 * usage: pmix_abort */
#include <fmpl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
    int rank, size;
    if (fmpl_init(NULL, NULL, 0) != FMPL_SUCCESS)
        return 2;
    fmpl_comm_rank(FMPL_COMM_WORLD, &rank);
    fmpl_comm_size(FMPL_COMM_WORLD, &size);
    const char *ns = getenv("PMIX_NAMESPACE");
    printf("pmix_abort: rank %d of %d pid %ld ns %s ready\n", rank, size, (long)getpid(),
           ns ? ns : "(none)");
    fflush(stdout);
    if (size > 1) {
        int out = rank, in = -1;
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        if (fmpl_isend(&out, sizeof out, next, 0, FMPL_COMM_WORLD) != FMPL_SUCCESS ||
            fmpl_recv(&in, sizeof in, prev, 0, FMPL_COMM_WORLD, NULL) != FMPL_SUCCESS ||
            fmpl_isend_wait(next, 0, FMPL_COMM_WORLD) != FMPL_SUCCESS || in != prev) {
            fprintf(stderr, "pmix_abort: rank %d: ring exchange failed (got %d)\n", rank, in);
            return 3;
        }
    }
    if (rank == size - 1)
        fmpl_abort(5, "pmix_abort: deliberate abort");
    fmpl_barrier(FMPL_COMM_WORLD); /* never completes */
    fprintf(stderr, "pmix_abort: rank %d: barrier returned although a rank aborted\n", rank);
    return 4;
}
