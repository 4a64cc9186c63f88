/* Intercommunicators: creation, merge, dup/split/create, queries, free.
 * The representation is described in intercomm.h.
 *
 *   MPI_Intercomm_create  the leaders swap their groups' world ranks over
 *                         peer_comm (with the caller's tag), each leader
 *                         broadcasts the remote list over local_comm, and
 *                         every member links with the remote group's (runtime/
 *                         link.c: members of other worlds whose leaders alone
 *                         met), every member of both groups builds the span team
 *                         (fmpl_team_from_members over the world, collective
 *                         over the members only), then the teams behind it
 *   MPI_Intercomm_merge   the leaders swap `high`; a split of span orders
 *                         the low group first (A first when both agree)
 *   split, create         one allgather of {color, key} over span: every
 *                         member knows both sides' choices, so a split of
 *                         span gives each new pair of groups, A first, and
 *                         colors missing on either side get MPI_COMM_NULL
 *   dup, idup             no exchange: the new span and the teams behind
 *                         the duplicate are all created over the old span
 *                         at once, nonblocking (fmpl_mpi_inter_build below);
 *                         dup waits, idup returns a request */
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_objects.h"
#include "collectives/collectives.h"
#include "progress/async.h"
#include "runtime/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GET_COMM(comm, c, func)                                                    \
    FMPL_MPI_CHECK_READY(comm);                                                    \
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);                                    \
    if (!c)                                                                        \
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func,                  \
                              "invalid communicator 0x%x", (unsigned)(comm))

/* The tag of the leaders' messages on the hidden collective communicator
 * (nothing else is sent there outside collectives, which are ordered). */
#define LEADER_TAG 1

fmpl_team *fmpl_mpi_comm_local_team(const fmpl_mpi_comm *c)
{
    if (!c->inter)
        return c->team;
    return fmpl_mpi_comm_get(c->inter->local)->team;
}

/* ------------------------------------------------------------ the view */

/* Make in->view from backing (both groups, A first): this member's local
 * rank, the remote group's world ranks, backing's context id and queues;
 * and enter it in fmpl_teams in backing's place. */
static int view_make(fmpl_mpi_inter *in, fmpl_team *backing, int side, int local_size)
{
    int remote_size = backing->size - local_size;
    /* world ranks and team ids (the receivers' own, team.h) of the remote
     * group, in one allocation */
    int *world = malloc(2 * (size_t)remote_size * sizeof *world);
    if (!world)
        return MPI_ERR_NO_MEM;
    int first = side == 0 ? local_size : 0;
    memcpy(world, backing->world + first, (size_t)remote_size * sizeof *world);
    memcpy(world + remote_size, backing->peer_id + first, (size_t)remote_size * sizeof *world);
    in->view = *backing;
    in->view.peer_id = world + remote_size;
    in->view.rank = side == 0 ? backing->rank : backing->rank - remote_size;
    in->view.size = remote_size;
    in->view.world = world;
    in->view.sm = NULL;
    in->view.any = NULL;
    in->view.coll = NULL;
    in->view.retired = 0;
    in->view.next_retired = NULL;
    in->backing = backing;
    in->side = side;
    in->local_size = local_size;
    /* Messages that arrived before this point went to backing's queues,
     * which the view shares: none is lost. */
    fmpl_teams[backing->id] = &in->view;
    return MPI_SUCCESS;
}

static void view_drop(fmpl_mpi_inter *in)
{
    if (fmpl_teams[in->view.id] == &in->view)
        fmpl_teams[in->view.id] = in->backing;
    free(in->view.world); /* peer_id shares the allocation */
    in->view.world = NULL;
    in->view.peer_id = NULL;
}

static void retire_all(fmpl_team **t, int n)
{
    for (int i = 0; i < n; i++)
        if (t[i])
            fmpl_team_retire(t[i]);
}

/* A hidden communicator of the binding's own: errors come back as codes. */
static int register_hidden(fmpl_team *t, fmpl_mpi_inter *in, MPI_Comm *h)
{
    int rc = fmpl_mpi_comm_register(t, h);
    if (rc != MPI_SUCCESS)
        return rc;
    fmpl_mpi_comm *hc = fmpl_mpi_comm_get(*h);
    hc->errhandler = MPI_ERRORS_RETURN;
    hc->inter = in;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------ the teams behind one */

/* The creation of the teams behind a new intercommunicator, on the team
 * creation state machine (runtime/team_build.c): over a team `over` of both
 * groups, A first, every member starts, in this order, the local group
 * (split of over by side), the backing and collective backing teams
 * (duplicates of over) and, unless the caller has the span already (split,
 * create: over is the new span), the span (a duplicate of over: a dup of
 * the intercommunicator).  All are in flight at once; `async` finishes
 * once every one has, so a nonblocking MPI_Comm_idup is this plus a
 * request, a blocking creation this plus a wait. */
enum { LOCAL, BACKING, CBACKING, SPAN, NTEAMS };

struct fmpl_mpi_inter_build {
    fmpl_async async;
    fmpl_team_build *build[NTEAMS]; /* NULL: not started */
    fmpl_team *span;                /* given by the caller, else built (SPAN) */
    int start_rc;                   /* a creation that could not start */
    int side, local_size;
};

static int inter_build_poll(fmpl_async *a)
{
    fmpl_mpi_inter_build *ib = (fmpl_mpi_inter_build *)a;
    for (int i = 0; i < NTEAMS; i++)
        if (ib->build[i] && !fmpl_team_build_async(ib->build[i])->done)
            return 0;
    return 1;
}

/* Start the creations over `over` (span: the caller's span, or NULL to
 * build one); this member is on `side` of a local group of local_size.
 * MPI_SUCCESS, or MPI_ERR_NO_MEM with nothing started. */
static int inter_build_start(fmpl_team *over, fmpl_team *span, int side, int local_size,
                             fmpl_mpi_inter_build **out)
{
    fmpl_mpi_inter_build *ib = *out = calloc(1, sizeof *ib);
    if (!ib)
        return MPI_ERR_NO_MEM;
    ib->span = span;
    ib->side = side;
    ib->local_size = local_size;
    /* A creation that cannot start (no memory) leaves the others running:
     * the other members take part in them; the failure shows at the end. */
    int rc = fmpl_team_split_start(over, side, over->rank, &ib->build[LOCAL]);
    int rc2 = fmpl_team_dup_start(over, &ib->build[BACKING]);
    int rc3 = fmpl_team_dup_start(over, &ib->build[CBACKING]);
    int rc4 = span ? FMPL_SUCCESS : fmpl_team_dup_start(over, &ib->build[SPAN]);
    ib->start_rc = rc != FMPL_SUCCESS ? rc : rc2 != FMPL_SUCCESS ? rc2
                 : rc3 != FMPL_SUCCESS ? rc3 : rc4;
    fmpl_async_start(&ib->async, inter_build_poll);
    return MPI_SUCCESS;
}

/* The creations are done (ib->async.done): register the intercommunicator
 * in *newcomm (with parent's error handler when parent is not NULL).
 * Frees ib; on failure this member retires every team it got (the span
 * given included).  MPI_SUCCESS or an error class. */
static int inter_build_finish(fmpl_mpi_inter_build *ib, fmpl_mpi_comm *parent, MPI_Comm *newcomm)
{
    fmpl_team *t[NTEAMS] = {[SPAN] = ib->span};
    int rc = ib->start_rc;
    for (int i = 0; i < NTEAMS; i++) {
        if (!ib->build[i])
            continue;
        int brc = fmpl_team_build_finish(ib->build[i], &t[i]);
        if (rc == FMPL_SUCCESS)
            rc = brc;
    }
    int side = ib->side, local_size = ib->local_size;
    free(ib);
    *newcomm = MPI_COMM_NULL;
    if (rc != FMPL_SUCCESS) {
        retire_all(t, NTEAMS);
        return fmpl_mpi_error_class_of(rc);
    }
    fmpl_mpi_inter *in = calloc(1, sizeof *in), *cin = calloc(1, sizeof *cin);
    MPI_Comm local = MPI_COMM_NULL, coll = MPI_COMM_NULL;
    rc = in && cin ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS)
        rc = fmpl_mpi_comm_register(t[LOCAL], &local);
    if (rc == MPI_SUCCESS) {
        fmpl_mpi_comm_get(local)->errhandler = MPI_ERRORS_RETURN;
        strcpy(fmpl_mpi_comm_get(local)->name, "intercommunicator local group");
        rc = view_make(cin, t[CBACKING], side, local_size);
    }
    if (rc == MPI_SUCCESS) {
        cin->local = local;
        cin->coll = MPI_COMM_NULL;
        rc = register_hidden(&cin->view, cin, &coll);
        if (rc != MPI_SUCCESS)
            view_drop(cin);
    }
    if (rc == MPI_SUCCESS) {
        rc = view_make(in, t[BACKING], side, local_size);
        if (rc != MPI_SUCCESS)
            view_drop(cin);
    }
    if (rc == MPI_SUCCESS) {
        in->span = t[SPAN];
        in->local = local;
        in->coll = coll;
        rc = fmpl_mpi_comm_register(&in->view, newcomm);
        if (rc == MPI_SUCCESS) {
            fmpl_mpi_comm *nc = fmpl_mpi_comm_get(*newcomm);
            nc->inter = in;
            if (parent)
                fmpl_mpi_comm_inherit(parent, nc);
            return MPI_SUCCESS;
        }
        view_drop(in);
        view_drop(cin);
    }
    /* Out of memory or handles: this member lets go of everything. */
    if (coll != MPI_COMM_NULL)
        fmpl_mpi_comm_release(fmpl_mpi_comm_get(coll));
    if (local != MPI_COMM_NULL)
        fmpl_mpi_comm_release(fmpl_mpi_comm_get(local));
    free(in);
    free(cin);
    retire_all(t, NTEAMS);
    *newcomm = MPI_COMM_NULL;
    return rc;
}

/* The intercommunicator on a new span team (A first; this member on
 * `side` of a local group of local_size): builds the local, backing and
 * collective teams (collective over span), registers *newcomm with
 * parent's error handler.  Takes span.  MPI_SUCCESS or an error class. */
/* The team over which a team of both groups is built: its ranks must be
 * the world ranks the groups hold (team->world[]), which are universe
 * ranks (runtime/link.c).  The universe team where the launcher spawns,
 * else the world (then both are the same numbers). */
static fmpl_team *members_parent(void)
{
    fmpl_team *u = fmpl_team_universe();
    return u ? u : fmpl_teams[0];
}

int fmpl_mpi_inter_from_span(fmpl_mpi_comm *parent, fmpl_team *span, int side, int local_size,
                             MPI_Comm *newcomm)
{
    fmpl_mpi_inter_build *ib;
    *newcomm = MPI_COMM_NULL;
    if (inter_build_start(span, span, side, local_size, &ib) != MPI_SUCCESS) {
        fmpl_team_retire(span);
        return MPI_ERR_NO_MEM;
    }
    fmpl_async_wait(&ib->async);
    return inter_build_finish(ib, parent, newcomm);
}

void fmpl_mpi_inter_free(fmpl_mpi_comm *c)
{
    fmpl_mpi_inter *in = c->inter;
    if (!in)
        return;
    if (in->coll != MPI_COMM_NULL) {
        fmpl_mpi_comm *cc = fmpl_mpi_comm_get(in->coll);
        fmpl_mpi_inter_free(cc);
        fmpl_mpi_comm_release(cc);
    }
    if (in->span) { /* the user's intercommunicator owns the local group and span */
        fmpl_mpi_comm *lc = fmpl_mpi_comm_get(in->local);
        fmpl_team_retire(lc->team);
        fmpl_mpi_comm_drop_objects(lc);
        fmpl_mpi_comm_release(lc);
        fmpl_team_retire(in->span);
    }
    view_drop(in);
    fmpl_team_retire(in->backing);
    free(in);
    c->inter = NULL;
    c->team = NULL;
}

void fmpl_mpi_inter_finalize(fmpl_mpi_comm *c)
{
    if (!c->inter)
        return;
    view_drop(c->inter);
    free(c->inter);
    c->inter = NULL;
}

/* ------------------------------------------------------------ create */

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Intercomm_create";
    GET_COMM(local_comm, c, func);
    if (c->inter)
        return fmpl_mpi_error(local_comm, MPI_ERR_COMM, func,
                              "local_comm 0x%x is an intercommunicator", (unsigned)local_comm);
    if (!newintercomm)
        return fmpl_mpi_error(local_comm, MPI_ERR_ARG, func, "newintercomm is NULL");
    fmpl_team *lt = c->team;
    if (local_leader < 0 || local_leader >= lt->size)
        return fmpl_mpi_error(local_comm, MPI_ERR_RANK, func,
                              "local_leader %d is outside 0 .. %d", local_leader, lt->size - 1);
    *newintercomm = MPI_COMM_NULL;
    int nworld = members_parent()->size;
    /* What the leader broadcasts: {tag, remote size or -1 (the leader
     * failed), remote group's world ranks}. */
    int *info = malloc((size_t)(nworld + 2) * sizeof *info);
    int *mine = malloc((size_t)(lt->size + 1) * sizeof *mine);
    int *members = malloc((size_t)nworld * sizeof *members);
    char *seen = calloc((size_t)nworld, 1);
    if (!info || !mine || !members || !seen) {
        free(info);
        free(mine);
        free(members);
        free(seen);
        return fmpl_mpi_error(local_comm, MPI_ERR_NO_MEM, func, "no memory");
    }
    int rc = MPI_SUCCESS, leader_class = MPI_SUCCESS;
    char why[160] = "";
    if (lt->rank == local_leader) {
        fmpl_mpi_comm *peer = fmpl_mpi_comm_get(peer_comm);
        info[0] = tag;
        info[1] = -1;
        if (!peer) {
            leader_class = MPI_ERR_COMM;
            snprintf(why, sizeof why, "invalid peer_comm 0x%x", (unsigned)peer_comm);
        } else if (remote_leader < 0 || remote_leader >= peer->team->size) {
            leader_class = MPI_ERR_RANK;
            snprintf(why, sizeof why, "remote_leader %d is outside 0 .. %d of peer_comm",
                     remote_leader, peer->team->size - 1);
        } else if (tag < 0 || tag > FMPL_MPI_TAG_UB) {
            leader_class = MPI_ERR_TAG;
            snprintf(why, sizeof why, "tag %d is outside 0 .. MPI_TAG_UB", tag);
        } else {
            mine[0] = lt->size;
            memcpy(mine + 1, lt->world, (size_t)lt->size * sizeof *mine);
            MPI_Status st;
            leader_class = PMPI_Sendrecv(mine, lt->size + 1, MPI_INT, remote_leader, tag,
                                         info + 1, nworld + 1, MPI_INT, remote_leader, tag,
                                         peer_comm, &st);
            if (leader_class != MPI_SUCCESS) {
                info[1] = -1;
                snprintf(why, sizeof why, "exchanging the groups with the remote leader failed");
            }
        }
    }
    /* {tag, remote size}, then the remote group: the world ranks may run to
     * the universe's size, the group is what it is. */
    rc = PMPI_Bcast(info, 2, MPI_INT, local_leader, local_comm);
    if (rc == MPI_SUCCESS && info[1] > 0)
        rc = PMPI_Bcast(info + 2, info[1], MPI_INT, local_leader, local_comm);
    int rsize = info[1];
    const int *rworld = info + 2;
    if (rc == MPI_SUCCESS && leader_class == MPI_SUCCESS && rsize < 1) {
        leader_class = MPI_ERR_COMM;
        snprintf(why, sizeof why, "the local leader (rank %d) could not reach the remote group",
                 local_leader);
    }
    if (rc == MPI_SUCCESS && leader_class == MPI_SUCCESS) {
        for (int i = 0; i < lt->size; i++)
            seen[lt->world[i]] = 1;
        for (int i = 0; i < rsize && leader_class == MPI_SUCCESS; i++)
            if (rworld[i] < 0 || rworld[i] >= nworld || seen[rworld[i]]) {
                leader_class = MPI_ERR_COMM;
                snprintf(why, sizeof why,
                         "the local and remote groups overlap (world rank %d is in both)",
                         rworld[i]);
            }
    }
    if (rc == MPI_SUCCESS && leader_class == MPI_SUCCESS && fmpl_team_universe()) {
        /* Groups of different worlds whose leaders alone met (a spawner
         * over MPI_COMM_SELF, its world's other ranks and the children)
         * are peers only once linked; linked pairs are skipped. */
        int lrc = fmpl_runtime_link(rworld, rsize);
        if (lrc != FMPL_SUCCESS) {
            leader_class = fmpl_mpi_error_class_of(lrc);
            snprintf(why, sizeof why, "linking with the remote group failed: %s",
                     fmpl_error_string(lrc));
        }
    }
    if (rc == MPI_SUCCESS && leader_class == MPI_SUCCESS) {
        int side = lt->world[0] < rworld[0] ? 0 : 1;
        const int *a = side == 0 ? lt->world : rworld, *b = side == 0 ? rworld : lt->world;
        int na = side == 0 ? lt->size : rsize, nb = side == 0 ? rsize : lt->size;
        memcpy(members, a, (size_t)na * sizeof *members);
        memcpy(members + na, b, (size_t)nb * sizeof *members);
        fmpl_team *span;
        int frc = fmpl_team_from_members(members_parent(), na + nb, members, info[0], &span);
        if (frc != FMPL_SUCCESS) {
            leader_class = fmpl_mpi_error_class_of(frc);
            snprintf(why, sizeof why, "building the team of both groups failed");
        } else {
            leader_class = fmpl_mpi_inter_from_span(c, span, side, lt->size, newintercomm);
            if (leader_class != MPI_SUCCESS)
                snprintf(why, sizeof why, "building the intercommunicator failed");
        }
    }
    free(info);
    free(mine);
    free(members);
    free(seen);
    if (rc != MPI_SUCCESS)
        return rc;
    if (leader_class != MPI_SUCCESS)
        return fmpl_mpi_error(local_comm, leader_class, func, "%s", why);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Intercomm_create)

/* ------------------------------------------------------------ merge */

/* The local leaders swap n ints over the hidden collective communicator;
 * every member gets the remote leader's. */
static int leaders_swap(fmpl_mpi_comm *c, const int *mine, int *theirs, int n)
{
    fmpl_mpi_inter *in = c->inter;
    int rc = MPI_SUCCESS;
    if (c->team->rank == 0)
        rc = PMPI_Sendrecv(mine, n, MPI_INT, 0, LEADER_TAG, theirs, n, MPI_INT, 0, LEADER_TAG,
                           in->coll, MPI_STATUS_IGNORE);
    int rc2 = PMPI_Bcast(theirs, n, MPI_INT, 0, in->local);
    return rc != MPI_SUCCESS ? rc : rc2;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Intercomm_merge";
    GET_COMM(intercomm, c, func);
    if (!c->inter)
        return fmpl_mpi_error(intercomm, MPI_ERR_COMM, func,
                              "0x%x is an intracommunicator", (unsigned)intercomm);
    if (!newintracomm)
        return fmpl_mpi_error(intercomm, MPI_ERR_ARG, func, "newintracomm is NULL");
    int mine = high != 0, theirs = 0;
    int rc = leaders_swap(c, &mine, &theirs, 1);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(intercomm, rc, func, "exchanging the high flags failed");
    /* The group that passed high = false comes first; A when both agree. */
    int first = mine != theirs ? !mine : c->inter->side == 0;
    int key = first ? c->team->rank : c->team->size + c->team->rank;
    fmpl_team *t;
    rc = fmpl_team_split(c->inter->span, 0, key, &t);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(intercomm, fmpl_mpi_error_class_of(rc), func,
                              "cannot create the communicator");
    rc = fmpl_mpi_comm_adopt(c, t, newintracomm);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(intercomm, rc, func, "too many communicators");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Intercomm_merge)

/* Both groups are known everywhere: no leader exchange, just the span
 * team among the members of both (the string tag hashed into the build
 * tag, which every member must agree on). */
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Intercomm_create_from_groups";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_mpi_group *lg = fmpl_mpi_group_get(local_group), *rg = fmpl_mpi_group_get(remote_group);
    if (!lg || !rg || lg->size == 0 || rg->size == 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_GROUP, func,
                              "invalid or empty group (local 0x%x, remote 0x%x)",
                              (unsigned)local_group, (unsigned)remote_group);
    if (local_leader < 0 || local_leader >= lg->size || remote_leader < 0 ||
        remote_leader >= rg->size)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_RANK, func,
                              "leaders %d / %d are outside the groups (sizes %d / %d)",
                              local_leader, remote_leader, lg->size, rg->size);
    if (!stringtag || !newintercomm)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "stringtag or newintercomm "
                              "is NULL");
    if (!fmpl_mpi_info_valid(info))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_INFO, func, "invalid info object 0x%x",
                              (unsigned)info);
    if (!fmpl_mpi_errhandler_valid(errhandler))
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "invalid error handler 0x%x",
                              (unsigned)errhandler);
    int me = fmpl_mpi_my_world_rank();
    if (fmpl_mpi_group_find(lg, me) < 0)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_GROUP, func,
                              "this process is not in local_group");
    for (int i = 0; i < rg->size; i++)
        if (fmpl_mpi_group_find(lg, rg->world[i]) >= 0)
            return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_GROUP, func,
                                  "the groups overlap (world rank %d is in both)",
                                  rg->world[i]);
    uint32_t tag = 2166136261u; /* FNV-1a of the string, within the tag range */
    for (const char *p = stringtag; *p; p++)
        tag = (tag ^ (unsigned char)*p) * 16777619u;
    int side = lg->world[0] < rg->world[0] ? 0 : 1;
    const fmpl_mpi_group *a = side == 0 ? lg : rg, *b = side == 0 ? rg : lg;
    int *members = malloc((size_t)(a->size + b->size) * sizeof *members);
    if (!members)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func, "no memory");
    memcpy(members, a->world, (size_t)a->size * sizeof *members);
    memcpy(members + a->size, b->world, (size_t)b->size * sizeof *members);
    fmpl_team *span;
    int rc = fmpl_team_from_members(members_parent(), a->size + b->size, members,
                                    (int)(tag & 0x3fffffff), &span);
    free(members);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, fmpl_mpi_error_class_of(rc), func,
                              "building the team of both groups failed (do all members pass "
                              "the same string tag?)");
    rc = fmpl_mpi_inter_from_span(fmpl_mpi_comm_get(MPI_COMM_WORLD), span, side, lg->size, newintercomm);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Comm_set_errhandler(*newintercomm, errhandler);
    if (rc == MPI_SUCCESS && info != MPI_INFO_NULL)
        rc = PMPI_Comm_set_info(*newintercomm, info);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, rc, func, "building the intercommunicator failed");
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Intercomm_create_from_groups)

/* ------------------------------------------------------------ dup, split, create */

int fmpl_mpi_inter_split(fmpl_mpi_comm *c, int color, int key, MPI_Comm *newcomm,
                         const char *func)
{
    fmpl_mpi_inter *in = c->inter;
    fmpl_team *span = in->span;
    int n = span->size, na = in->side == 0 ? in->local_size : n - in->local_size;
    *newcomm = MPI_COMM_NULL;
    int32_t mine[2] = {color, key};
    int32_t *all = malloc((size_t)n * sizeof mine);
    if (!all)
        return fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    int rc = fmpl_coll_allgather_small(span, mine, sizeof mine, all);
    if (rc != FMPL_SUCCESS) {
        free(all);
        return fmpl_mpi_error(c->handle, fmpl_mpi_error_class_of(rc), func,
                              "exchanging colors and keys failed");
    }
    /* New order: A's members of the color, then B's, each by (key, rank). */
    int me = span->rank, my_side = me >= na, count[2] = {0, 0}, pos = 0;
    if (color >= 0) {
        for (int j = 0; j < n; j++) {
            if (all[2 * j] != color)
                continue;
            int s = j >= na;
            count[s]++;
            if (s < my_side || (s == my_side && (all[2 * j + 1] < key ||
                                                 (all[2 * j + 1] == key && j < me))))
                pos++;
        }
    }
    free(all);
    int keep = color >= 0 && count[0] > 0 && count[1] > 0;
    fmpl_team *t;
    rc = fmpl_team_split(span, keep ? color : -1, pos, &t);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(c->handle, fmpl_mpi_error_class_of(rc), func,
                              "cannot create the communicator");
    if (!t)
        return MPI_SUCCESS;
    rc = fmpl_mpi_inter_from_span(c, t, in->side, count[my_side], newcomm);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(c->handle, rc, func, "building the intercommunicator failed");
    return MPI_SUCCESS;
}

int fmpl_mpi_inter_dup_start(fmpl_mpi_comm *c, fmpl_mpi_inter_build **out)
{
    fmpl_mpi_inter *in = c->inter;
    return inter_build_start(in->span, NULL, in->side, in->local_size, out);
}

fmpl_async *fmpl_mpi_inter_build_async(fmpl_mpi_inter_build *ib) { return &ib->async; }

int fmpl_mpi_inter_dup_finish(fmpl_mpi_inter_build *ib, MPI_Comm parent, fmpl_mpi_comm *staged,
                              int stage_rc, MPI_Comm *newcomm, const char *func)
{
    /* The parent may be gone (freed while an idup was pending): errors go
     * to MPI_COMM_WORLD then; the error handler comes with `staged`. */
    MPI_Comm report = fmpl_mpi_comm_get(parent) ? parent : MPI_COMM_WORLD;
    int rc = inter_build_finish(ib, NULL, newcomm);
    if (rc != MPI_SUCCESS) {
        if (staged)
            fmpl_mpi_comm_dup_discard(staged);
        return fmpl_mpi_error(report, rc, func, "building the intercommunicator failed");
    }
    if (stage_rc != MPI_SUCCESS) { /* the others have it: this member lets it go */
        PMPI_Comm_free(newcomm);
        return fmpl_mpi_error(report, stage_rc, func, "copying the attributes failed");
    }
    fmpl_mpi_comm_dup_install(staged, fmpl_mpi_comm_get(*newcomm));
    return MPI_SUCCESS;
}

int fmpl_mpi_inter_dup(fmpl_mpi_comm *c, fmpl_mpi_comm *staged, int stage_rc, MPI_Comm *newcomm,
                       const char *func)
{
    fmpl_mpi_inter_build *ib;
    *newcomm = MPI_COMM_NULL;
    if (fmpl_mpi_inter_dup_start(c, &ib) != MPI_SUCCESS) {
        if (staged)
            fmpl_mpi_comm_dup_discard(staged);
        return fmpl_mpi_error(c->handle, MPI_ERR_NO_MEM, func, "no memory");
    }
    fmpl_async_wait(&ib->async);
    return fmpl_mpi_inter_dup_finish(ib, c->handle, staged, stage_rc, newcomm, func);
}

int fmpl_mpi_inter_create(fmpl_mpi_comm *c, MPI_Group group, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_create";
    fmpl_mpi_group *g = fmpl_mpi_group_get(group);
    if (!g)
        return fmpl_mpi_error(c->handle, MPI_ERR_GROUP, func, "invalid group 0x%x",
                              (unsigned)group);
    const fmpl_team *lt = fmpl_mpi_comm_local_team(c);
    for (int i = 0; i < g->size; i++) {
        int found = 0;
        for (int j = 0; j < lt->size && !found; j++)
            found = lt->world[j] == g->world[i];
        if (!found)
            return fmpl_mpi_error(c->handle, MPI_ERR_GROUP, func,
                                  "the group is not a subset of the local group");
    }
    int pos = fmpl_mpi_group_find(g, lt->world[lt->rank]);
    return fmpl_mpi_inter_split(c, pos >= 0 ? 0 : -1, pos, newcomm, func);
}

/* ------------------------------------------------------------ compare */

int fmpl_mpi_compare_members(int na, const int *a, int nb, const int *b)
{
    if (na != nb)
        return MPI_UNEQUAL;
    int same_order = 1, same_set = 1;
    for (int i = 0; i < na; i++) {
        if (a[i] != b[i])
            same_order = 0;
        int found = 0;
        for (int j = 0; j < nb && !found; j++)
            found = a[i] == b[j];
        same_set &= found;
    }
    return same_order ? MPI_CONGRUENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
}

int fmpl_mpi_inter_compare(const fmpl_mpi_comm *a, const fmpl_mpi_comm *b)
{
    if (a == b)
        return MPI_IDENT;
    if (!a->inter || !b->inter)
        return MPI_UNEQUAL;
    const fmpl_team *la = fmpl_mpi_comm_local_team(a), *lb = fmpl_mpi_comm_local_team(b);
    int local = fmpl_mpi_compare_members(la->size, la->world, lb->size, lb->world);
    int remote = fmpl_mpi_compare_members(a->team->size, a->team->world, b->team->size,
                                          b->team->world);
    if (local == MPI_UNEQUAL || remote == MPI_UNEQUAL)
        return MPI_UNEQUAL;
    return local == MPI_CONGRUENT && remote == MPI_CONGRUENT ? MPI_CONGRUENT : MPI_SIMILAR;
}

/* ------------------------------------------------------------ queries */

int fmpl_mpi_inter_remote_size(fmpl_mpi_comm *c, int *size)
{
    if (!c->inter)
        return fmpl_mpi_error(c->handle, MPI_ERR_COMM, "MPI_Comm_remote_size",
                              "0x%x is an intracommunicator", (unsigned)c->handle);
    if (!size)
        return fmpl_mpi_error(c->handle, MPI_ERR_ARG, "MPI_Comm_remote_size", "size is NULL");
    *size = c->team->size;
    return MPI_SUCCESS;
}

int fmpl_mpi_inter_remote_group(fmpl_mpi_comm *c, MPI_Group *group)
{
    if (!c->inter)
        return fmpl_mpi_error(c->handle, MPI_ERR_COMM, "MPI_Comm_remote_group",
                              "0x%x is an intracommunicator", (unsigned)c->handle);
    if (!group)
        return fmpl_mpi_error(c->handle, MPI_ERR_ARG, "MPI_Comm_remote_group", "group is NULL");
    int rc = fmpl_mpi_group_make(c->team->size, c->team->world, group);
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(c->handle, rc, "MPI_Comm_remote_group", "no memory for a group");
    return MPI_SUCCESS;
}

int fmpl_mpi_inter_invalid(fmpl_mpi_comm *c, const char *func)
{
    return fmpl_mpi_error(c->handle, MPI_ERR_COMM, func,
                          "0x%x is an intercommunicator; %s is defined on intracommunicators "
                          "only", (unsigned)c->handle, func);
}
