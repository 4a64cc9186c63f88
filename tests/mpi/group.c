/* Groups: every operation, comparisons and translations on groups built
 * from MPI_COMM_WORLD (any size), MPI_GROUP_EMPTY, and the error classes of
 * invalid arguments under MPI_ERRORS_RETURN. */
#include "check.h"

#include <stdlib.h>

static void check_members(MPI_Group g, int n, const int *expect, const char *what)
{
    int size;
    CHECK_OK(MPI_Group_size(g, &size));
    CHECK(size == n, "%s: size %d, expected %d", what, size, n);
    MPI_Group world;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int *ranks = malloc((n + 1) * sizeof *ranks), *got = malloc((n + 1) * sizeof *got);
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    CHECK_OK(MPI_Group_translate_ranks(g, n, ranks, world, got));
    for (int i = 0; i < n; i++)
        CHECK(got[i] == expect[i], "%s: member %d is world rank %d, expected %d", what, i,
              got[i], expect[i]);
    free(ranks);
    free(got);
    CHECK_OK(MPI_Group_free(&world));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int *expect = malloc((n + 1) * sizeof *expect);
    int r, result;

    /* The world group. */
    MPI_Group world;
    CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    CHECK_OK(MPI_Group_rank(world, &r));
    CHECK(r == rank, "world group rank %d", r);
    for (int i = 0; i < n; i++)
        expect[i] = i;
    check_members(world, n, expect, "world");

    /* Incl in reverse order. */
    int *rev_ranks = malloc(n * sizeof *rev_ranks);
    for (int i = 0; i < n; i++)
        rev_ranks[i] = n - 1 - i;
    MPI_Group rev;
    CHECK_OK(MPI_Group_incl(world, n, rev_ranks, &rev));
    CHECK_OK(MPI_Group_rank(rev, &r));
    CHECK(r == n - 1 - rank, "reversed rank %d", r);
    check_members(rev, n, rev_ranks, "reversed");
    CHECK_OK(MPI_Group_compare(world, rev, &result));
    CHECK(result == (n == 1 ? MPI_IDENT : MPI_SIMILAR), "compare world/reversed: %d", result);
    CHECK_OK(MPI_Group_compare(world, world, &result));
    CHECK(result == MPI_IDENT, "compare world/world: %d", result);

    /* The same with a negative stride. */
    MPI_Group rev2;
    int down[1][3] = {{n - 1, 0, -1}};
    CHECK_OK(MPI_Group_range_incl(world, 1, down, &rev2));
    CHECK_OK(MPI_Group_compare(rev, rev2, &result));
    CHECK(result == MPI_IDENT, "range (n-1, 0, -1) vs incl reversed: %d", result);

    /* Evens by range, odds by range exclusion. */
    int evens_range[1][3] = {{0, n - 1, 2}};
    MPI_Group evens, odds;
    CHECK_OK(MPI_Group_range_incl(world, 1, evens_range, &evens));
    CHECK_OK(MPI_Group_range_excl(world, 1, evens_range, &odds));
    int ne = 0, no = 0;
    for (int i = 0; i < n; i += 2)
        expect[ne++] = i;
    check_members(evens, ne, expect, "evens");
    for (int i = 1; i < n; i += 2)
        expect[no++] = i;
    check_members(odds, no, expect, "odds");
    CHECK_OK(MPI_Group_rank(evens, &r));
    CHECK(r == (rank % 2 ? MPI_UNDEFINED : rank / 2), "rank in evens %d", r);

    /* Two ranges and a range of one. */
    if (n >= 4) {
        int two[2][3] = {{3, 3, 1}, {0, 1, 1}};
        MPI_Group g;
        CHECK_OK(MPI_Group_range_incl(world, 2, two, &g));
        int e[3] = {3, 0, 1};
        check_members(g, 3, e, "ranges (3,3,1) (0,1,1)");
        CHECK_OK(MPI_Group_free(&g));
        CHECK_OK(MPI_Group_range_excl(world, 2, two, &g));
        int m = 0;
        for (int i = 0; i < n; i++)
            if (i != 0 && i != 1 && i != 3)
                expect[m++] = i;
        check_members(g, m, expect, "excluding (3,3,1) (0,1,1)");
        CHECK_OK(MPI_Group_free(&g));
    }

    /* Set operations. */
    MPI_Group u, in, d;
    CHECK_OK(MPI_Group_union(evens, odds, &u));
    int k = 0;
    for (int i = 0; i < n; i += 2)
        expect[k++] = i;
    for (int i = 1; i < n; i += 2)
        expect[k++] = i;
    check_members(u, n, expect, "evens | odds");
    CHECK_OK(MPI_Group_compare(u, world, &result));
    CHECK(result == (n <= 2 ? MPI_IDENT : MPI_SIMILAR), "compare union/world: %d", result);
    CHECK_OK(MPI_Group_free(&u));
    CHECK_OK(MPI_Group_union(rev, evens, &u)); /* nothing added: rev's order */
    CHECK_OK(MPI_Group_compare(u, rev, &result));
    CHECK(result == MPI_IDENT, "rev | evens vs rev: %d", result);
    CHECK_OK(MPI_Group_intersection(rev, evens, &in)); /* rev's order */
    k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2 == 0)
            expect[k++] = i;
    check_members(in, ne, expect, "rev & evens");
    CHECK_OK(MPI_Group_difference(world, evens, &d));
    CHECK_OK(MPI_Group_compare(d, odds, &result));
    CHECK(result == MPI_IDENT, "world - evens vs odds: %d", result);
    CHECK_OK(MPI_Group_free(&u));
    CHECK_OK(MPI_Group_free(&in));
    if (d != MPI_GROUP_EMPTY)
        CHECK_OK(MPI_Group_free(&d));

    /* Empty results are MPI_GROUP_EMPTY. */
    MPI_Group e;
    CHECK_OK(MPI_Group_difference(world, world, &e));
    CHECK(e == MPI_GROUP_EMPTY, "world - world is not MPI_GROUP_EMPTY");
    CHECK_OK(MPI_Group_incl(world, 0, NULL, &e));
    CHECK(e == MPI_GROUP_EMPTY, "incl of none is not MPI_GROUP_EMPTY");
    CHECK_OK(MPI_Group_size(MPI_GROUP_EMPTY, &k));
    CHECK(k == 0, "MPI_GROUP_EMPTY size %d", k);
    CHECK_OK(MPI_Group_rank(MPI_GROUP_EMPTY, &r));
    CHECK(r == MPI_UNDEFINED, "MPI_GROUP_EMPTY rank %d", r);
    CHECK_OK(MPI_Group_compare(MPI_GROUP_EMPTY, e, &result));
    CHECK(result == MPI_IDENT, "empty vs empty: %d", result);
    CHECK_OK(MPI_Group_compare(MPI_GROUP_EMPTY, world, &result));
    CHECK(result == MPI_UNEQUAL, "empty vs world: %d", result);
    CHECK_OK(MPI_Group_free(&e));
    CHECK(e == MPI_GROUP_NULL, "freed group is not MPI_GROUP_NULL");

    /* Excl of one. */
    MPI_Group no0;
    int zero = 0;
    CHECK_OK(MPI_Group_excl(world, 1, &zero, &no0));
    CHECK_OK(MPI_Group_size(no0, &k));
    CHECK(k == n - 1, "world without 0: size %d", k);
    CHECK_OK(MPI_Group_rank(no0, &r));
    CHECK(r == (rank == 0 ? MPI_UNDEFINED : rank - 1), "world without 0: rank %d", r);
    if (n > 1) {
        CHECK_OK(MPI_Group_compare(no0, world, &result));
        CHECK(result == MPI_UNEQUAL, "world without 0 vs world: %d", result);
    }

    /* Translations: MPI_PROC_NULL passes through, absent ranks are
     * MPI_UNDEFINED. */
    int in3[3] = {0, MPI_PROC_NULL, n - 1}, out3[3];
    CHECK_OK(MPI_Group_translate_ranks(world, 3, in3, no0, out3));
    CHECK(out3[0] == MPI_UNDEFINED && out3[1] == MPI_PROC_NULL && out3[2] == (n > 1 ? n - 2 : MPI_UNDEFINED),
          "translate to world-without-0: %d %d %d", out3[0], out3[1], out3[2]);
    CHECK_OK(MPI_Group_translate_ranks(world, 3, in3, rev, out3));
    CHECK(out3[0] == n - 1 && out3[1] == MPI_PROC_NULL && out3[2] == 0,
          "translate to reversed: %d %d %d", out3[0], out3[1], out3[2]);
    CHECK_OK(MPI_Group_translate_ranks(world, 0, NULL, rev, NULL));

    /* MPI_COMM_SELF's group. */
    MPI_Group self;
    CHECK_OK(MPI_Comm_group(MPI_COMM_SELF, &self));
    int s0 = 0, w0;
    CHECK_OK(MPI_Group_translate_ranks(self, 1, &s0, world, &w0));
    CHECK(w0 == rank, "self's member is world rank %d", w0);

    /* Errors, returned. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Group bad;
    int oob = n, dup2[2] = {0, 0};
    CHECK_CLASS(MPI_Group_incl(world, 1, &oob, &bad), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_incl(world, 1, (int[]){-1}, &bad), MPI_ERR_RANK);
    if (n > 1) {
        CHECK_CLASS(MPI_Group_incl(world, 2, dup2, &bad), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_excl(world, 2, dup2, &bad), MPI_ERR_RANK);
    }
    CHECK_CLASS(MPI_Group_incl(world, -1, dup2, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_excl(world, 1, &oob, &bad), MPI_ERR_RANK);
    int stride0[1][3] = {{0, n - 1, 0}}, past[1][3] = {{0, n, 1}}, away[1][3] = {{n - 1, 0, 1}};
    CHECK_CLASS(MPI_Group_range_incl(world, 1, stride0, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_range_excl(world, 1, stride0, &bad), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Group_range_incl(world, 1, past, &bad), MPI_ERR_RANK);
    if (n > 1) {
        CHECK_CLASS(MPI_Group_range_incl(world, 1, away, &bad), MPI_ERR_ARG);
        int overlap[2][3] = {{0, n - 1, 1}, {0, 0, 1}};
        CHECK_CLASS(MPI_Group_range_incl(world, 2, overlap, &bad), MPI_ERR_RANK);
    }
    CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &k), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_rank(12345, &k), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_compare(world, MPI_GROUP_NULL, &result), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_union(MPI_GROUP_NULL, world, &bad), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Group_translate_ranks(world, 1, &oob, rev, out3), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Group_translate_ranks(world, -1, in3, rev, out3), MPI_ERR_ARG);
    MPI_Group null = MPI_GROUP_NULL;
    CHECK_CLASS(MPI_Group_free(&null), MPI_ERR_GROUP);
    MPI_Group freed = rev2;
    CHECK_OK(MPI_Group_free(&rev2));
    CHECK_CLASS(MPI_Group_size(freed, &k), MPI_ERR_GROUP);
    CHECK_CLASS(MPI_Comm_group(MPI_COMM_NULL, &bad), MPI_ERR_COMM);

    CHECK_OK(MPI_Group_free(&self));
    CHECK_OK(MPI_Group_free(&no0));
    CHECK_OK(MPI_Group_free(&evens));
    if (odds != MPI_GROUP_EMPTY)
        CHECK_OK(MPI_Group_free(&odds));
    CHECK_OK(MPI_Group_free(&rev));
    CHECK_OK(MPI_Group_free(&world));
    free(rev_ranks);
    free(expect);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi groups ok on %d ranks\n", n);
    MPI_Finalize();
    return 0;
}
