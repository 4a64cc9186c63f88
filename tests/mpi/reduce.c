/* MPI_Reduce / MPI_Allreduce / MPI_Reduce_local with predefined and user
 * operations: MPI_SUM on int and double, MPI_IN_PLACE, a root other than 0,
 * MPI_MAXLOC on MPI_DOUBLE_INT, a non-commutative user operation (applied
 * in rank order, lower rank's operand first), and MPI_ERR_OP for an operation
 * MPI does not define on the type (with MPI_ERRORS_RETURN). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

#define EXPECT(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "mpi_reduce rank %d line %d: ", rank, __LINE__);       \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            MPI_Abort(MPI_COMM_WORLD, 1);                                          \
        }                                                                          \
    } while (0)

/* Left projection, x op y = x: associative, not commutative.  MPI applies
 * user operations as inout = in op inout with `in` the lower rank's operand,
 * so the result is rank 0's value; the reversed order would give the last
 * rank's. */
static void first(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    long long *a = in, *b = inout;
    for (int k = 0; k < *len; k++)
        b[k] = a[k];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int counts[] = {1, 7, 1000, 100000};
    for (int k = 0; k < 4; k++) {
        int n = counts[k];
        int *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out);
        for (int i = 0; i < n; i++)
            in[i] = rank + i;
        MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            EXPECT(out[i] == size * (size - 1) / 2 + size * i, "allreduce n=%d i=%d got %d", n, i, out[i]);
        MPI_Allreduce(MPI_IN_PLACE, in, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            EXPECT(in[i] == size - 1 + i, "in-place max n=%d i=%d", n, i);
        double *d = malloc(n * sizeof *d), *r = malloc(n * sizeof *r);
        for (int i = 0; i < n; i++)
            d[i] = 0.5 * rank;
        int root = size - 1;
        MPI_Reduce(d, r, n, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        if (rank == root)
            for (int i = 0; i < n; i++)
                EXPECT(r[i] == 0.25 * size * (size - 1), "reduce n=%d i=%d got %g", n, i, r[i]);
        free(in); free(out); free(d); free(r);
    }

    /* MPI_CHAR with arithmetic operations, as MPICH and OSU's benchmarks use
     * it (mpi_ops.c); also in a window, by MPI_Accumulate. */
    {
        char c[64], cr[64];
        for (int i = 0; i < 64; i++)
            c[i] = (char)(i + rank);
        MPI_Allreduce(c, cr, 64, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < 64; i++)
            EXPECT(cr[i] == (char)(size * i + size * (size - 1) / 2), "MPI_CHAR sum i=%d", i);
        MPI_Allreduce(c, cr, 64, MPI_CHAR, MPI_MAX, MPI_COMM_WORLD);
        EXPECT(cr[5] == (char)(5 + size - 1), "MPI_CHAR max");
        char *base;
        MPI_Win win;
        MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
        memset(base, 1, 64);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_fence(0, win);
        MPI_Accumulate(c, 64, MPI_CHAR, 0, 0, 64, MPI_CHAR, MPI_SUM, win);
        MPI_Win_fence(0, win);
        if (rank == 0)
            for (int i = 0; i < 64; i++)
                EXPECT(base[i] == (char)(1 + size * i + size * (size - 1) / 2),
                       "MPI_CHAR accumulate i=%d: %d", i, base[i]);
        MPI_Win_free(&win);
    }

    struct { double v; int i; } mine = {rank % 2 ? 5.0 : 1.0, rank}, best;
    MPI_Allreduce(&mine, &best, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    EXPECT(best.v == (size > 1 ? 5.0 : 1.0) && best.i == (size > 1 ? 1 : 0), "maxloc %g %d", best.v, best.i);

    MPI_Op mm;
    MPI_Op_create(first, 0, &mm);
    long long mine_ll[3] = {100 + rank, 200 + rank, 300 + rank}, got_ll[3];
    MPI_Allreduce(mine_ll, got_ll, 3, MPI_LONG_LONG, mm, MPI_COMM_WORLD);
    EXPECT(got_ll[0] == 100 && got_ll[1] == 200 && got_ll[2] == 300,
           "user op gave %lld %lld %lld, want rank 0's values", got_ll[0], got_ll[1], got_ll[2]);
    int local[4] = {1, 2, 3, 4}, acc[4] = {1, 0, 0, 1};
    MPI_Reduce_local(local, acc, 4, MPI_INT, MPI_SUM);
    EXPECT(acc[0] == 2 && acc[1] == 2 && acc[2] == 3 && acc[3] == 5, "reduce_local");
    MPI_Op_free(&mm);
    EXPECT(mm == MPI_OP_NULL, "op_free");

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    float f = 1, g;
    int rc = MPI_Allreduce(&f, &g, 1, MPI_FLOAT, MPI_BAND, MPI_COMM_WORLD);
    int cls;
    MPI_Error_class(rc, &cls);
    EXPECT(cls == MPI_ERR_OP, "MPI_BAND on MPI_FLOAT gave class %d", cls);
    if (rank == 0)
        printf("mpi reduce ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
