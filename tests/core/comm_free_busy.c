/* fmpl_comm_free refuses a communicator that still has outstanding
 * operations (FMPL_ERR_BUSY, communicator intact) and frees it once they
 * complete; a freed communicator is then FMPL_ERR_COMM. */
#include <fmpl.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "comm_free_busy: " __VA_ARGS__);                       \
            fprintf(stderr, "\n");                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

int main(void)
{
    int rank, size, rc;
    EXPECT(fmpl_init(NULL, NULL, 8) == FMPL_SUCCESS, "init");
    fmpl_comm_rank(FMPL_COMM_WORLD, &rank);
    fmpl_comm_size(FMPL_COMM_WORLD, &size);
    fmpl_comm c;
    EXPECT(fmpl_comm_create(0, &c) == FMPL_SUCCESS, "create");
    char out[100] = "pending", in[100] = {0};
    int to = (rank + 1) % size, from = (rank - 1 + size) % size;
    EXPECT(fmpl_isend(out, sizeof out, to, 5, c) == FMPL_SUCCESS, "isend");
    fmpl_comm held = c;
    rc = fmpl_comm_free(&held);
    EXPECT(rc == FMPL_ERR_BUSY, "free with a pending send gave %d, want FMPL_ERR_BUSY", rc);
    EXPECT(held == c, "a refused free changed the handle");
    fmpl_barrier(FMPL_COMM_WORLD); /* every rank has seen its refusal */
    EXPECT(fmpl_recv(in, sizeof in, from, 5, c, NULL) == FMPL_SUCCESS, "recv");
    EXPECT(fmpl_isend_wait(to, 5, c) == FMPL_SUCCESS, "isend_wait");
    EXPECT(in[0] == 'p' && in[6] == 'g', "data");
    EXPECT(fmpl_comm_free(&c) == FMPL_SUCCESS && c == FMPL_COMM_NULL, "free after completion");
    rc = fmpl_send(out, 1, to, 0, held);
    EXPECT(rc == FMPL_ERR_COMM, "send on a freed communicator gave %d", rc);
    if (rank == 0)
        printf("comm_free_busy: ok on %d ranks\n", size);
    return fmpl_finalize();
}
