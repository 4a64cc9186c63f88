/* MPI_Alloc_mem / MPI_Free_mem: 1 MiB buffers from the shared heap used
 * for a rendezvous ring exchange (data checked), alignment, size 0,
 * MPI_Free_mem(NULL); errors under MPI_ERRORS_RETURN: MPI_ERR_NO_MEM for a
 * request larger than the heap and once the heap is exhausted (and the
 * heap is whole again after freeing), MPI_ERR_ARG for a negative size,
 * MPI_ERR_BASE for a malloc'd pointer, a stack address, an interior
 * pointer and a second free. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_memory rank %d line %d: ", rank, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

static int error_class(int rc)
{
    int cls;
    MPI_Error_class(rc, &cls);
    return cls;
}

static void exchange(void)
{
    enum { N = 1 << 18 }; /* ints: 1 MiB */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *s, *r;
    EXPECT(MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &s) == MPI_SUCCESS, "Alloc_mem");
    EXPECT(MPI_Alloc_mem(N * sizeof(int), MPI_INFO_NULL, &r) == MPI_SUCCESS, "Alloc_mem");
    EXPECT((uintptr_t)s % 64 == 0 && (uintptr_t)r % 64 == 0, "alignment");
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            s[i] = rank * 7 + round + i;
        MPI_Status st;
        MPI_Sendrecv(s, N, MPI_INT, right, 1, r, N, MPI_INT, left, 1, MPI_COMM_WORLD, &st);
        int n;
        MPI_Get_count(&st, MPI_INT, &n);
        EXPECT(n == N && st.MPI_SOURCE == left, "status");
        for (int i = 0; i < N; i++)
            EXPECT(r[i] == left * 7 + round + i, "round %d i %d: %d", round, i, r[i]);
    }
    /* heap memory to private memory and back */
    int *p = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        s[i] = rank + i;
    MPI_Sendrecv(s, N, MPI_INT, right, 2, p, N, MPI_INT, left, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        EXPECT(p[i] == left + i, "to private memory: i %d", i);
    MPI_Sendrecv(p, N, MPI_INT, right, 3, r, N, MPI_INT, left, 3, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    int left2 = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        EXPECT(r[i] == left2 + i, "from private memory: i %d", i);
    free(p);
    EXPECT(MPI_Free_mem(s) == MPI_SUCCESS && MPI_Free_mem(r) == MPI_SUCCESS, "Free_mem");
}

static void errors(void)
{
    void *p = NULL;
    EXPECT(MPI_Alloc_mem(0, MPI_INFO_NULL, &p) == MPI_SUCCESS && p, "Alloc_mem(0)");
    EXPECT(MPI_Free_mem(p) == MPI_SUCCESS, "Free_mem of a 0-byte block");
    EXPECT(MPI_Free_mem(NULL) == MPI_SUCCESS, "Free_mem(NULL)");
    EXPECT(error_class(MPI_Alloc_mem((MPI_Aint)1 << 50, MPI_INFO_NULL, &p)) == MPI_ERR_NO_MEM,
           "a petabyte");
    EXPECT(error_class(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p)) == MPI_ERR_ARG, "negative size");

    void *m = malloc(64);
    int on_stack;
    EXPECT(error_class(MPI_Free_mem(m)) == MPI_ERR_BASE, "a malloc'd pointer");
    EXPECT(error_class(MPI_Free_mem(&on_stack)) == MPI_ERR_BASE, "a stack address");
    free(m);
    char *q;
    MPI_Alloc_mem(4096, MPI_INFO_NULL, &q);
    EXPECT(error_class(MPI_Free_mem(q + 64)) == MPI_ERR_BASE, "an interior pointer");
    EXPECT(error_class(MPI_Free_mem(q + 1)) == MPI_ERR_BASE, "an unaligned interior pointer");
    EXPECT(MPI_Free_mem(q) == MPI_SUCCESS, "Free_mem");
    EXPECT(error_class(MPI_Free_mem(q)) == MPI_ERR_BASE, "a second free");

    /* exhaust the heap in 1 MiB blocks, then free everything */
    enum { MAX = 1 << 16 };
    void **blocks = malloc(MAX * sizeof *blocks);
    int n = 0, rc = MPI_SUCCESS;
    while (n < MAX && (rc = MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &blocks[n])) == MPI_SUCCESS)
        n++;
    EXPECT(error_class(rc) == MPI_ERR_NO_MEM && n > 0, "exhaustion: class %d after %d MiB",
           error_class(rc), n);
    for (int i = 0; i < n; i++)
        EXPECT(MPI_Free_mem(blocks[i]) == MPI_SUCCESS, "free block %d", i);
    /* whole again: as many blocks fit as before */
    int again = 0;
    while (again < n && MPI_Alloc_mem(1 << 20, MPI_INFO_NULL, &blocks[again]) == MPI_SUCCESS)
        again++;
    EXPECT(again == n, "after freeing, %d of %d MiB fit", again, n);
    for (int i = 0; i < again; i++)
        MPI_Free_mem(blocks[i]);
    free(blocks);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    exchange();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    errors();
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    exchange(); /* the heap still works */

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi memory ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
