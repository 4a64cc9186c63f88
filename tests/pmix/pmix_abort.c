/* A real FMPL program ending its job with fmpl_abort, for the mpirun test:
 * after fmpl_init every rank prints
 *   "pmix_abort: rank R of N pid P ns <PMIX_NAMESPACE> ready"
 * and exchanges a message with its neighbours (so the job has really
 * started); then rank N-1 calls fmpl_abort(5, ...) while the others wait in
 * an fmpl_barrier that cannot complete.  The process manager must end them
 * all and exit non-zero.
 *
 * usage: pmix_abort
 *        pmix_abort late R   rank R (PMIX_RANK) calls fmpl_init only once
 *                            mpirun (its parent) is gone, 30 s at most, so
 *                            that the others wait for it in the start-up
 *                            fence with their segment files still named
 *                            until the test kills mpirun
 *        pmix_abort stall R  after start-up rank R sleeps (pause) instead of
 *                            aborting: the others wait in the barrier for
 *                            ever (the test kills mpirun) */
#include <fmpl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;
    const char *pr = getenv("PMIX_RANK");
    if (argc == 3 && strcmp(argv[1], "late") == 0 && pr && strcmp(pr, argv[2]) == 0) {
        /* until the test has killed mpirun (our parent), 30 s at most */
        pid_t parent = getppid();
        for (int i = 0; i < 300 && getppid() == parent; i++)
            usleep(100000);
    }
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
    if (argc == 3 && strcmp(argv[1], "stall") == 0 && rank == atoi(argv[2]))
        pause();
    else if (rank == size - 1)
        fmpl_abort(5, "pmix_abort: deliberate abort");
    fmpl_barrier(FMPL_COMM_WORLD); /* never completes */
    fprintf(stderr, "pmix_abort: rank %d: barrier returned although a rank aborted\n", rank);
    return 4;
}
