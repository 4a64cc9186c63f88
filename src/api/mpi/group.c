/* Groups: ordered sets of processes, kept as the world ranks of their
 * members.  MPI_GROUP_EMPTY is a static empty group; every other group is
 * a dynamic handle of kind FMPL_HK_GROUP owning its array.  Groups are
 * local objects: no call here communicates.
 *
 * Errors are reported on MPI_COMM_WORLD (no communicator is involved), as
 * for the other object-only calls of the binding. */
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_objects.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>

static fmpl_mpi_table groups = FMPL_MPI_TABLE_INIT(FMPL_HK_GROUP);
static fmpl_mpi_group group_empty = {.size = 0};

#define ERR(code, func, ...) fmpl_mpi_error(MPI_COMM_WORLD, (code), (func), __VA_ARGS__)

fmpl_mpi_group *fmpl_mpi_group_get(MPI_Group g)
{
    if (g == MPI_GROUP_EMPTY)
        return &group_empty;
    return fmpl_mpi_table_get(&groups, g);
}

int fmpl_mpi_group_make(int n, const int *world, MPI_Group *out)
{
    if (n == 0) {
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    fmpl_mpi_group *g = malloc(sizeof *g + (size_t)n * sizeof g->world[0]);
    if (!g)
        return MPI_ERR_NO_MEM;
    g->size = n;
    g->session = 0;
    memcpy(g->world, world, (size_t)n * sizeof g->world[0]);
    int rc = fmpl_mpi_table_add(&groups, g, out);
    if (rc != MPI_SUCCESS)
        free(g);
    return rc;
}

int fmpl_mpi_group_find(const fmpl_mpi_group *g, int world_rank)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world_rank)
            return i;
    return -1;
}

void fmpl_mpi_groups_finalize(void) { fmpl_mpi_table_clear(&groups, free); }

/* Position in a group of every world rank (-1: not a member), for set
 * operations and translations in linear time. */
typedef struct rank_map {
    int *pos;
    int n;      /* world ranks covered */
} rank_map;

static int map_build(rank_map *m, const fmpl_mpi_group *g)
{
    int n = fmpl_teams[0] ? fmpl_teams[0]->size : 0;
    for (int i = 0; i < g->size; i++)
        if (g->world[i] >= n)
            n = g->world[i] + 1;
    m->n = n;
    m->pos = malloc((size_t)(n ? n : 1) * sizeof *m->pos);
    if (!m->pos)
        return 0;
    for (int i = 0; i < n; i++)
        m->pos[i] = -1;
    for (int i = 0; i < g->size; i++)
        m->pos[g->world[i]] = i;
    return 1;
}

static int map_find(const rank_map *m, int world_rank)
{
    return world_rank >= 0 && world_rank < m->n ? m->pos[world_rank] : -1;
}

#define GET_GROUP(h, g, func)                                                      \
    fmpl_mpi_group *g = fmpl_mpi_group_get(h);                                     \
    if (!g)                                                                        \
        return ERR(MPI_ERR_GROUP, func, "invalid group 0x%x", (unsigned)(h))

/* Finish an operation that built `n` world ranks in `w` (owned here) from
 * group `from`, whose session (if any) the new group keeps. */
static int finish(int *w, int n, MPI_Group *newgroup, const fmpl_mpi_group *from,
                  const char *func)
{
    int rc = fmpl_mpi_group_make(n, w, newgroup);
    free(w);
    if (rc != MPI_SUCCESS)
        return ERR(rc, func, "no memory for a group of %d", n);
    if (*newgroup != MPI_GROUP_EMPTY)
        fmpl_mpi_group_get(*newgroup)->session = from->session;
    return MPI_SUCCESS;
}

static int *alloc_ranks(int n) { return malloc((size_t)(n ? n : 1) * sizeof(int)); }

/* ------------------------------------------------------------ queries */

int PMPI_Group_size(MPI_Group group, int *size)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group, g, "MPI_Group_size");
    if (!size)
        return ERR(MPI_ERR_ARG, "MPI_Group_size", "size is NULL");
    *size = g->size;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group, g, "MPI_Group_rank");
    if (!rank)
        return ERR(MPI_ERR_ARG, "MPI_Group_rank", "rank is NULL");
    int r = fmpl_mpi_group_find(g, fmpl_mpi_my_world_rank());
    *rank = r < 0 ? MPI_UNDEFINED : r;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Group_rank)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Group_translate_ranks";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group1, a, func);
    GET_GROUP(group2, b, func);
    if (n < 0)
        return ERR(MPI_ERR_ARG, func, "n %d is negative", n);
    if (n > 0 && (!ranks1 || !ranks2))
        return ERR(MPI_ERR_ARG, func, "ranks1 or ranks2 is NULL");
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= a->size))
            return ERR(MPI_ERR_RANK, func, "ranks1[%d] = %d is outside 0 .. %d", i, ranks1[i],
                       a->size - 1);
    rank_map m;
    if (!map_build(&m, b))
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    for (int i = 0; i < n; i++) {
        if (ranks1[i] == MPI_PROC_NULL) {
            ranks2[i] = MPI_PROC_NULL;
            continue;
        }
        int r = map_find(&m, a->world[ranks1[i]]);
        ranks2[i] = r < 0 ? MPI_UNDEFINED : r;
    }
    free(m.pos);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Group_translate_ranks)

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Group_compare";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group1, a, func);
    GET_GROUP(group2, b, func);
    if (!result)
        return ERR(MPI_ERR_ARG, func, "result is NULL");
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    if (!memcmp(a->world, b->world, (size_t)a->size * sizeof a->world[0])) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    rank_map m;
    if (!map_build(&m, b))
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    int same = 1;
    for (int i = 0; i < a->size && same; i++)
        same = map_find(&m, a->world[i]) >= 0;
    free(m.pos);
    *result = same ? MPI_SIMILAR : MPI_UNEQUAL; /* members are distinct: same size, same set */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Group_compare)

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);
    if (!c)
        return ERR(MPI_ERR_COMM, "MPI_Comm_group", "invalid communicator 0x%x", (unsigned)comm);
    if (!group)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_group", "group is NULL");
    const fmpl_team *lt = fmpl_mpi_comm_local_team(c); /* intercomm.h */
    int rc = fmpl_mpi_group_make(lt->size, lt->world, group);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, "MPI_Comm_group", "no memory for a group");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_group)

int PMPI_Group_free(MPI_Group *group)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!group)
        return ERR(MPI_ERR_ARG, "MPI_Group_free", "group is NULL");
    /* MPI_GROUP_EMPTY is what empty results are: freeing it is allowed. */
    if (*group == MPI_GROUP_EMPTY) {
        *group = MPI_GROUP_NULL;
        return MPI_SUCCESS;
    }
    GET_GROUP(*group, g, "MPI_Group_free");
    fmpl_mpi_table_remove(&groups, *group);
    free(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Group_free)

/* ------------------------------------------------------------ set operations */

enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE };

static int set_op(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup, int op,
                  const char *func)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group1, a, func);
    GET_GROUP(group2, b, func);
    if (!newgroup)
        return ERR(MPI_ERR_ARG, func, "newgroup is NULL");
    rank_map ma = {0}, mb = {0};
    int *w = alloc_ranks(a->size + b->size);
    if (!w || !map_build(&ma, a) || !map_build(&mb, b)) {
        free(ma.pos);
        free(mb.pos);
        free(w);
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    }
    int n = 0;
    /* Group 1's members in its order, then (union) group 2's others. */
    for (int i = 0; i < a->size; i++) {
        int in_b = map_find(&mb, a->world[i]) >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == in_b)
            w[n++] = a->world[i];
    }
    if (op == SET_UNION)
        for (int i = 0; i < b->size; i++)
            if (map_find(&ma, b->world[i]) < 0)
                w[n++] = b->world[i];
    free(ma.pos);
    free(mb.pos);
    return finish(w, n, newgroup, a->session ? a : b, func);
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return set_op(group1, group2, newgroup, SET_UNION, "MPI_Group_union");
}
FMPL_MPI_WEAK(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return set_op(group1, group2, newgroup, SET_INTERSECTION, "MPI_Group_intersection");
}
FMPL_MPI_WEAK(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return set_op(group1, group2, newgroup, SET_DIFFERENCE, "MPI_Group_difference");
}
FMPL_MPI_WEAK(Group_difference)

/* ------------------------------------------------------------ subsets */

/* Mark ranks[0..n) in `seen` (zeroed, g->size entries): each must be a rank
 * of g and appear once. */
static int mark_ranks(const fmpl_mpi_group *g, int n, const int ranks[], char *seen,
                      const char *func)
{
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size)
            return ERR(MPI_ERR_RANK, func, "ranks[%d] = %d is outside 0 .. %d", i, r,
                       g->size - 1);
        if (seen[r])
            return ERR(MPI_ERR_RANK, func, "rank %d appears twice (ranks[%d])", r, i);
        seen[r] = 1;
    }
    return MPI_SUCCESS;
}

static int subset(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup, int incl,
                  const char *func)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group, g, func);
    if (!newgroup)
        return ERR(MPI_ERR_ARG, func, "newgroup is NULL");
    if (n < 0 || n > g->size)
        return ERR(MPI_ERR_ARG, func, "n = %d is outside 0 .. %d (the group's size)", n,
                   g->size);
    if (n > 0 && !ranks)
        return ERR(MPI_ERR_ARG, func, "ranks is NULL");
    char *seen = calloc((size_t)g->size + 1, 1);
    int *w = alloc_ranks(g->size);
    if (!seen || !w) {
        free(seen);
        free(w);
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    }
    int rc = mark_ranks(g, n, ranks, seen, func);
    int m = 0;
    if (rc == MPI_SUCCESS) {
        if (incl)
            for (int i = 0; i < n; i++)
                w[m++] = g->world[ranks[i]];
        else
            for (int r = 0; r < g->size; r++)
                if (!seen[r])
                    w[m++] = g->world[r];
    }
    free(seen);
    if (rc != MPI_SUCCESS) {
        free(w);
        return rc;
    }
    return finish(w, m, newgroup, g, func);
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return subset(group, n, ranks, newgroup, 1, "MPI_Group_incl");
}
FMPL_MPI_WEAK(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return subset(group, n, ranks, newgroup, 0, "MPI_Group_excl");
}
FMPL_MPI_WEAK(Group_excl)

/* Expand ranges (first, last, stride) into a rank list: every triplet must
 * have a nonzero stride pointing from first towards last (first == last is
 * one rank), first and last must be ranks of the group; the ranks are then
 * checked like MPI_Group_incl's.  *out (caller frees) holds *count ranks. */
static int expand_ranges(const fmpl_mpi_group *g, int n, int ranges[][3], int **out, int *count,
                         const char *func)
{
    long total = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (first < 0 || first >= g->size || last < 0 || last >= g->size)
            return ERR(MPI_ERR_RANK, func, "range %d (%d, %d, %d): ranks outside 0 .. %d", i,
                       first, last, stride, g->size - 1);
        if (stride == 0)
            return ERR(MPI_ERR_ARG, func, "range %d (%d, %d, %d): stride is 0", i, first, last,
                       stride);
        if ((stride > 0 && first > last) || (stride < 0 && first < last))
            return ERR(MPI_ERR_ARG, func,
                       "range %d (%d, %d, %d): the stride points away from last", i, first,
                       last, stride);
        total += ((long)last - first) / stride + 1;
        if (total > g->size)
            return ERR(MPI_ERR_RANK, func, "the ranges name more than the group's %d ranks",
                       g->size);
    }
    int *r = alloc_ranks((int)total);
    if (!r)
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        long steps = ((long)last - first) / stride;
        for (long s = 0; s <= steps; s++)
            r[k++] = (int)(first + s * stride);
    }
    *out = r;
    *count = k;
    return MPI_SUCCESS;
}

static int range_subset(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup, int incl,
                        const char *func)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    GET_GROUP(group, g, func);
    if (n < 0)
        return ERR(MPI_ERR_ARG, func, "n = %d is negative", n);
    if (n > 0 && !ranges)
        return ERR(MPI_ERR_ARG, func, "ranges is NULL");
    int *ranks = NULL, count = 0;
    int rc = expand_ranges(g, n, ranges, &ranks, &count, func);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = subset(group, count, ranks, newgroup, incl, func);
    free(ranks);
    return rc;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return range_subset(group, n, ranges, newgroup, 1, "MPI_Group_range_incl");
}
FMPL_MPI_WEAK(Group_range_incl)

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    return range_subset(group, n, ranges, newgroup, 0, "MPI_Group_range_excl");
}
FMPL_MPI_WEAK(Group_range_excl)
