/* Collectives: a broadcast from every root in turn, allreduce with the
 * BLACS-style absolute-value maximum, a user-defined "max with location"
 * operation, and a reduction in two sub-communicators (even and odd world
 * ranks). */
#include <fmpl.h>
#include <stdio.h>

#define TRY(call)                                                              \
    do {                                                                       \
        int rc_ = (call);                                                      \
        if (rc_ != FMPL_SUCCESS)                                               \
            fmpl_abort(rc_, #call);                                            \
    } while (0)

enum { N = 1000 };

/* MPI_MAXLOC's job: the largest value and the rank holding it.  `in` is the
 * lower-ranked operand, so ">=" keeps the lower rank on a tie. */
struct valrank { double val; int rank; };

static void maxloc(const void *in_, void *inout_, long count, void *ctx)
{
    const struct valrank *in = in_;
    struct valrank *inout = inout_;
    (void)ctx;
    for (long i = 0; i < count; i++)
        if (in[i].val >= inout[i].val)
            inout[i] = in[i];
}

int main(void)
{
    int rank, size, bad = 0;
    TRY(fmpl_init(NULL, NULL, 0));
    TRY(fmpl_comm_rank(FMPL_COMM_WORLD, &rank));
    TRY(fmpl_comm_size(FMPL_COMM_WORLD, &size));

    /* 1. Broadcast 4000 bytes from each root in turn; all members pass the same root. */
    int *b = fmpl_alloc(N * sizeof *b);
    if (!b)
        fmpl_abort(FMPL_ERR_NO_MEMORY, "fmpl_alloc");
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < N; i++)
            b[i] = rank == root ? root * 100000 + i : -1;
        TRY(fmpl_bcast(b, N * sizeof *b, root, FMPL_COMM_WORLD));
        for (int i = 0; i < N; i++)
            bad += b[i] != root * 100000 + i;
    }

    /* 2. fmpl_dmax picks the element of largest ABSOLUTE value, sign kept:
     *    rank r contributes (r + 1) * 1.5 with alternating sign, so the
     *    result is the last rank's value, negative when size is even (plain
     *    MPI_MAX would give the largest positive one).  Element 1 is a tie
     *    (+2 on even ranks, -2 on odd ones): the lower rank's +2 wins. */
    double x[2] = {(rank % 2 ? -1 : 1) * (rank + 1) * 1.5, rank % 2 ? -2.0 : 2.0};
    double work[2];                          /* same size as x */
    TRY(fmpl_allreduce(x, 2, fmpl_dmax, FMPL_COMM_WORLD, work));
    double expect = ((size - 1) % 2 ? -1 : 1) * size * 1.5;
    bad += x[0] != expect || x[1] != 2.0;

    /* 3. A user operation: which rank holds the largest value? */
    fmpl_op *op;
    TRY(fmpl_op_create(maxloc, sizeof(struct valrank), NULL, &op));
    struct valrank v = {.val = (rank * 7) % size, .rank = rank}, vwork;
    TRY(fmpl_allreduce(&v, 1, op, FMPL_COMM_WORLD, &vwork));
    int where = 0;                           /* the same, serially */
    for (int r = 1; r < size; r++)
        if ((r * 7) % size > (where * 7) % size)
            where = r;
    bad += v.rank != where || v.val != (where * 7) % size;
    TRY(fmpl_op_free(&op));

    /* 4. Sub-communicators: key = rank % 2 puts even and odd world ranks in
     *    two communicators, each ranked in world order. */
    fmpl_comm half;
    int hrank, hsize;
    TRY(fmpl_comm_create(rank % 2, &half));
    TRY(fmpl_comm_rank(half, &hrank));
    TRY(fmpl_comm_size(half, &hsize));
    int sum = rank, iwork;
    TRY(fmpl_allreduce(&sum, 1, fmpl_isum, half, &iwork));
    int esum = 0;                            /* world ranks with my parity */
    for (int r = rank % 2; r < size; r += 2)
        esum += r;
    bad += hrank != rank / 2 || sum != esum;
    TRY(fmpl_comm_free(&half));

    printf("rank %d: bcast from %d roots; dmax = {%g, %g}; maxloc %g at rank %d; "
           "%s rank %d of %d, sum of its world ranks %d: %s\n",
           rank, size, x[0], x[1], v.val, v.rank, rank % 2 ? "odd" : "even", hrank, hsize, sum,
           bad ? "WRONG" : "ok");
    fmpl_free(b);
    fflush(stdout);   /* a failing rank ends the job: get our line out first */
    TRY(fmpl_finalize());
    return bad != 0;
}
