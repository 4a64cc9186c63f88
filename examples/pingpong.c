/* Rank 0 sends a greeting to rank 1, which answers; then everyone sums. */
#include <fmpl.h>
#include <stdio.h>

int main(void)
{
    int rank, size;
    fmpl_init(NULL, NULL, 0);                    /* 64 matching slots per peer */
    fmpl_comm_rank(FMPL_COMM_WORLD, &rank);
    fmpl_comm_size(FMPL_COMM_WORLD, &size);
    char *msg = fmpl_alloc(64);                  /* shared heap: zero copy, no syscall */
    if (rank == 1) {
        fmpl_irecv(msg, 64, 0, 7, FMPL_COMM_WORLD);      /* header goes to rank 0 now */
        fmpl_irecv_wait(0, 7, FMPL_COMM_WORLD, NULL);
        printf("rank 1 got: %s\n", msg);
    } else if (rank == 0 && size > 1) {
        snprintf(msg, 64, "hello from rank 0 of %d", size);
        fmpl_send(msg, 64, 1, 7, FMPL_COMM_WORLD);       /* puts straight into rank 1's buffer */
    }
    double x = rank, work;
    fmpl_allreduce(&x, 1, fmpl_dsum, FMPL_COMM_WORLD, &work);
    if (rank == 0)
        printf("sum of ranks = %g\n", x);
    fmpl_free(msg);
    return fmpl_finalize();
}
