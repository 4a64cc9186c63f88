/* Communicator creation beyond split and dup: from a group (collective
 * over the parent, or over the group's members only), by type (shared
 * memory node), nonblocking dup, dup with info; and the intercommunicator
 * queries (answered by intercomm.c); on an intercommunicator, MPI_Comm_create
 * goes to intercomm.c, split_type splits it by host (an intercommunicator
 * per host), and create_group is MPI_ERR_COMM.
 *
 *   MPI_Comm_create        fmpl_team_split over the parent: a member's color
 *                          is the lowest parent rank of its group (disjoint
 *                          groups of MPI-2.2 get distinct colors), its key
 *                          its position in the group
 *   MPI_Comm_create_group  fmpl_team_from_members: only the members call
 *   MPI_Comm_split_type    SHARED: color = lowest parent rank on the same
 *                          host, from an allgather of host name hashes
 *   MPI_Comm_idup          attributes copied at the call (as MPICH), then the
 *                          team creation state machine (runtime/team_build.c)
 *                          started (for an intercommunicator: the creations
 *                          of every team behind it, intercomm.c), behind a
 *                          request driven by progress
 *                          (request_async.c); the first Wait/Test that sees
 *                          it done registers the communicator with what was
 *                          staged and applies the info */
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_objects.h"
#include "collectives/collectives.h"
#include "runtime/runtime.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GET_COMM(comm, c, func)                                                    \
    FMPL_MPI_CHECK_READY(comm);                                                    \
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);                                    \
    if (!c)                                                                        \
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func,                  \
                              "invalid communicator 0x%x", (unsigned)(comm))

/* Parent rank of every group member (members[i] for group rank i); the
 * group must lie within the parent.  *mine: this process's group rank or
 * -1.  MPI_SUCCESS or MPI_ERR_GROUP / MPI_ERR_NO_MEM, not reported. */
static int group_in_parent(const fmpl_team *parent, const fmpl_mpi_group *g, int **members,
                           int *mine)
{
    /* World ranks are universe ranks where worlds were joined (a merged
     * spawn intercommunicator): they may lie beyond this world's size. */
    int nworld = 0;
    for (int r = 0; r < parent->size; r++)
        if (parent->world[r] >= nworld)
            nworld = parent->world[r] + 1;
    int *m = malloc((size_t)(g->size ? g->size : 1) * sizeof *m);
    int *pos = malloc((size_t)nworld * sizeof *pos);
    if (!m || !pos) {
        free(m);
        free(pos);
        return MPI_ERR_NO_MEM;
    }
    for (int w = 0; w < nworld; w++)
        pos[w] = -1;
    for (int r = 0; r < parent->size; r++)
        pos[parent->world[r]] = r;
    *mine = -1;
    for (int i = 0; i < g->size; i++) {
        int w = g->world[i];
        m[i] = w >= 0 && w < nworld ? pos[w] : -1;
        if (m[i] < 0) {
            free(m);
            free(pos);
            return MPI_ERR_GROUP;
        }
        if (m[i] == parent->rank)
            *mine = i;
    }
    free(pos);
    *members = m;
    return MPI_SUCCESS;
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_create";
    GET_COMM(comm, c, func);
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "newcomm is NULL");
    if (c->inter)
        return fmpl_mpi_inter_create(c, group, newcomm); /* intercomm.c */
    fmpl_mpi_group *g = fmpl_mpi_group_get(group);
    if (!g)
        return fmpl_mpi_error(comm, MPI_ERR_GROUP, func, "invalid group 0x%x",
                              (unsigned)group);
    int *members = NULL, mine;
    int rc = group_in_parent(c->team, g, &members, &mine);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, rc == MPI_ERR_GROUP
                                                  ? "the group is not a subset of the communicator"
                                                  : "no memory");
    int color = -1;
    if (mine >= 0) {
        color = members[0];
        for (int i = 1; i < g->size; i++)
            if (members[i] < color)
                color = members[i];
    }
    free(members);
    fmpl_team *t;
    rc = fmpl_team_split(c->team, color, mine, &t);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                              "cannot create the communicator");
    rc = fmpl_mpi_comm_adopt(c, t, newcomm);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "too many communicators");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_create)

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_create_group";
    GET_COMM(comm, c, func);
    if (c->inter)
        return fmpl_mpi_inter_invalid(c, func);
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "newcomm is NULL");
    fmpl_mpi_group *g = fmpl_mpi_group_get(group);
    if (!g)
        return fmpl_mpi_error(comm, MPI_ERR_GROUP, func, "invalid group 0x%x",
                              (unsigned)group);
    if (tag < 0 || tag > FMPL_MPI_TAG_UB)
        return fmpl_mpi_error(comm, MPI_ERR_TAG, func, "tag %d is outside 0 .. MPI_TAG_UB", tag);
    int *members = NULL, mine;
    int rc = group_in_parent(c->team, g, &members, &mine);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, rc == MPI_ERR_GROUP
                                                  ? "the group is not a subset of the communicator"
                                                  : "no memory");
    *newcomm = MPI_COMM_NULL;
    if (mine < 0) { /* not a member (MPI_GROUP_EMPTY included): nothing to join */
        free(members);
        return MPI_SUCCESS;
    }
    fmpl_team *t;
    rc = fmpl_team_from_members(c->team, g->size, members, tag, &t);
    free(members);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, rc == FMPL_ERR_ARG ? MPI_ERR_TAG : fmpl_mpi_error_class_of(rc),
                              func, "cannot create the communicator");
    rc = fmpl_mpi_comm_adopt(c, t, newcomm);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "too many communicators");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_create_group)

/* ------------------------------------------------------------ split by type */

/* Collective over the parent: the lowest parent rank whose memory this
 * process shares (*color: members on this host; with FMPL_FABRIC=net, which
 * makes every pair a network pair, this member alone) and the number of
 * such groups among the parent's members.  Sharing memory is the fabric's
 * judgement (host identity: host name and boot id), so a communicator of
 * MPI_COMM_TYPE_SHARED always takes MPI_Win_allocate_shared. */
static int host_color(fmpl_team *parent, int *color, int *nhosts)
{
    int mine = parent->rank;
    for (int q = 0; q < parent->size; q++) {
        int w = parent->world[q];
        if (q == parent->rank || !fmpl_fab.peers[w].net) {
            mine = q;
            break;
        }
    }
    int *all = malloc((size_t)parent->size * sizeof *all);
    if (!all)
        return FMPL_ERR_NO_MEMORY;
    int rc = fmpl_coll_allgather_small(parent, &mine, sizeof mine, all);
    if (rc == FMPL_SUCCESS) {
        *color = mine;
        *nhosts = 0;
        for (int r = 0; r < parent->size; r++)
            *nhosts += all[r] == r; /* each group's lowest member names it */
    }
    free(all);
    return rc;
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                         MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_split_type";
    GET_COMM(comm, c, func);
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "newcomm is NULL");
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info object 0x%x",
                              (unsigned)info);
    if (split_type != MPI_UNDEFINED && split_type != MPI_COMM_TYPE_SHARED &&
        split_type != MPI_COMM_TYPE_HW_GUIDED && split_type != MPI_COMM_TYPE_HW_UNGUIDED)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "unknown split type %d", split_type);
    /* Every process takes part in both exchanges, whatever it asked for.
     * An intercommunicator's hosts are named over both groups (its span),
     * so a color means the same host on either side, and the split is an
     * intercommunicator split (as MPICH: each side's processes on a host,
     * facing the other side's on the same host). */
    int color = -1, nhosts = 1;
    int rc = host_color(c->inter ? c->inter->span : c->team, &color, &nhosts);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                              "exchanging host names failed");
    if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        /* The one hardware resource known: the shared-memory node. */
        char value[MPI_MAX_INFO_VAL + 1];
        if (!fmpl_mpi_info_lookup(info, "mpi_hw_resource_type", value, sizeof value) ||
            strcmp(value, "mpi_shared_memory") != 0)
            color = -1;
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* Strict subsets only (MPI 7.4.2): the node level is one when the
         * communicator spans several hosts. */
        if (nhosts < 2)
            color = -1;
    } else if (split_type == MPI_UNDEFINED) {
        color = -1;
    }
    if (c->inter)
        return fmpl_mpi_inter_split(c, color, key, newcomm, func);
    fmpl_team *t;
    rc = fmpl_team_split(c->team, color, key, &t);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                              "cannot create the communicator");
    rc = fmpl_mpi_comm_adopt(c, t, newcomm);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(comm, rc, func, "too many communicators");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_split_type)

/* ------------------------------------------------------------ dup forms */

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_dup_with_info";
    GET_COMM(comm, c, func);
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info object 0x%x",
                              (unsigned)info);
    (void)c;
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The hints are info's, not comm's (MPI 7.4.2). */
    return PMPI_Comm_set_info(*newcomm, info);
}
FMPL_MPI_WEAK(Comm_dup_with_info)

/* What the completion of an MPI_Comm_idup needs. */
typedef struct idup_state {
    fmpl_team_build *build;             /* an intracommunicator's */
    fmpl_mpi_inter_build *inter_build;  /* an intercommunicator's (intercomm.c) */
    fmpl_mpi_comm *staged; /* what the duplicate inherits, taken at the call */
    int stage_rc;          /* why staging failed (reported at completion) */
    MPI_Comm parent;
    MPI_Comm *newcomm;
    int with_info;
    MPI_Info info; /* a copy: the caller may free its own at once */
} idup_state;

static int idup_complete(fmpl_mpi_request *r)
{
    idup_state *s = r->async_state;
    const char *func = s->with_info ? "MPI_Comm_idup_with_info" : "MPI_Comm_idup";
    int rc = s->inter_build ? fmpl_mpi_inter_dup_finish(s->inter_build, s->parent, s->staged,
                                                        s->stage_rc, s->newcomm, func)
                            : fmpl_mpi_comm_dup_finish(s->parent, s->staged, s->stage_rc,
                                                       s->build, s->newcomm, func);
    /* The hints are info's, not comm's (MPI 7.4.2). */
    if (rc == MPI_SUCCESS && s->with_info)
        rc = PMPI_Comm_set_info(*s->newcomm, s->info);
    fmpl_mpi_info_release(s->info);
    free(s);
    return rc;
}

static int idup(MPI_Comm comm, int with_info, MPI_Info info, MPI_Comm *newcomm,
                MPI_Request *request, const char *func)
{
    GET_COMM(comm, c, func);
    if (!request)
        return fmpl_mpi_error(comm, MPI_ERR_REQUEST, func, "request is NULL");
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "newcomm is NULL");
    if (with_info && !fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(comm, MPI_ERR_INFO, func, "invalid info object 0x%x",
                              (unsigned)info);
    idup_state *s = calloc(1, sizeof *s);
    if (s)
        s->info = MPI_INFO_NULL;
    fmpl_mpi_request *r = s ? fmpl_mpi_request_new() : NULL;
    int rc = r ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && with_info)
        rc = fmpl_mpi_info_copy(info, &s->info);
    if (rc != MPI_SUCCESS) {
        if (r)
            fmpl_mpi_request_free(r);
        free(s);
        return fmpl_mpi_error(comm, rc, func, "no memory for a request");
    }
    /* Attributes are copied now (as MPICH); a failed copy callback is
     * reported at completion, after the creation the others take part in. */
    s->stage_rc = fmpl_mpi_comm_dup_stage(c, &s->staged);
    if (c->inter)
        rc = fmpl_mpi_inter_dup_start(c, &s->inter_build) == MPI_SUCCESS ? FMPL_SUCCESS
                                                                          : FMPL_ERR_NO_MEMORY;
    else
        rc = fmpl_team_dup_start(c->team, &s->build);
    if (rc != FMPL_SUCCESS) {
        if (s->staged)
            fmpl_mpi_comm_dup_discard(s->staged);
        fmpl_mpi_info_release(s->info);
        fmpl_mpi_request_free(r);
        free(s);
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), func,
                              "cannot start the duplication");
    }
    s->parent = comm;
    s->newcomm = newcomm;
    s->with_info = with_info;
    fmpl_mpi_async_request_start(r, comm,
                                 c->inter ? fmpl_mpi_inter_build_async(s->inter_build)
                                          : fmpl_team_build_async(s->build),
                                 idup_complete, s);
    *request = r->handle;
    return MPI_SUCCESS;
}

int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return idup(comm, 0, MPI_INFO_NULL, newcomm, request, "MPI_Comm_idup");
}
FMPL_MPI_WEAK(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                             MPI_Request *request)
{
    FMPL_CORE_GUARD();
    return idup(comm, 1, info, newcomm, request, "MPI_Comm_idup_with_info");
}
FMPL_MPI_WEAK(Comm_idup_with_info)

/* ------------------------------------------------------------ intercommunicator queries */

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    FMPL_CORE_GUARD();
    GET_COMM(comm, c, "MPI_Comm_test_inter");
    if (!flag)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_test_inter", "flag is NULL");
    *flag = c->inter != NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_test_inter)

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    FMPL_CORE_GUARD();
    GET_COMM(comm, c, "MPI_Comm_remote_size");
    return fmpl_mpi_inter_remote_size(c, size); /* intercomm.c */
}
FMPL_MPI_WEAK(Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    FMPL_CORE_GUARD();
    GET_COMM(comm, c, "MPI_Comm_remote_group");
    return fmpl_mpi_inter_remote_group(c, group); /* intercomm.c */
}
FMPL_MPI_WEAK(Comm_remote_group)
