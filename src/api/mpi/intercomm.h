/* Intercommunicators (MPI-4.0 7.6): how one is represented, and the entry
 * points the rest of the binding calls when a communicator is one.
 *
 * An intercommunicator over groups A and B (A: the group whose rank 0 has
 * the lower world rank; both sides agree on it without a message) stands on
 * four teams, all made when it is created:
 *   span     A's members then B's, each in group order: a real team for the
 *            whole-communicator steps (barrier, the creations behind dup,
 *            split, create and merge)
 *   local    the local group (split of span): a hidden intracommunicator
 *            for the local halves of collectives
 *   backing  a duplicate of span that lends its context id (and its
 *            tag-matched queues) to `view`
 *   coll     a second such pair behind a hidden intercommunicator that
 *            carries the collectives' messages, apart from the user's
 * `view` is not a team of its own but what point-to-point sees as one:
 * rank = this process's local rank, size and world = the remote group.
 * The tag-matched protocol stamps messages with (context id, sender's
 * rank) and reaches peers through world[]; with the view in fmpl_teams at
 * backing's id on every member, a sender's rank is its local rank, which
 * is exactly the remote rank the receiver knows it by.  So ranks need no
 * translation: c->team = &view, and pt2pt.c, probes, persistent requests,
 * Bsend and statuses work unchanged, MPI_ANY_SOURCE included (only the
 * remote group ever sends on this context).
 *
 * Elsewhere c->team of an intercommunicator is the view: callers that want
 * the local group use fmpl_mpi_comm_local_team. */
#ifndef FMPL_API_MPI_INTERCOMM_H
#define FMPL_API_MPI_INTERCOMM_H

#include "api/mpi/coll_stage.h"
#include "api/mpi/mpi_impl.h"

typedef struct fmpl_mpi_inter {
    fmpl_team view;        /* c->team: rank = local rank, size/world = remote group */
    fmpl_team *backing;    /* the team whose context id the view takes over */
    fmpl_team *span;       /* both groups, A first (NULL in the hidden coll one) */
    int side;              /* 0: the local group is A */
    int local_size;
    MPI_Comm local;        /* hidden intracommunicator over the local group */
    MPI_Comm coll;         /* hidden intercommunicator for collectives (MPI_COMM_NULL
                              in the hidden one itself) */
} fmpl_mpi_inter;

/* The team of the local group: the hidden local one for an
 * intercommunicator, the communicator's own otherwise. */
fmpl_team *fmpl_mpi_comm_local_team(const fmpl_mpi_comm *c);

/* MPI_Comm_free on an intercommunicator: retire every team behind it and
 * release the hidden communicators (c itself stays for the caller). */
/* The intercommunicator over span (group A's members, then B's; this
 * process in group `side`, of local_size members): its local group, views
 * and hidden communicators.  Collective over span; takes span. */
int fmpl_mpi_inter_from_span(fmpl_mpi_comm *parent, struct fmpl_team *span, int side,
                             int local_size, MPI_Comm *newcomm);
void fmpl_mpi_inter_free(fmpl_mpi_comm *c);
/* MPI_Finalize: give the context id back to the backing team and release
 * the view (the runtime then frees every team). */
void fmpl_mpi_inter_finalize(fmpl_mpi_comm *c);

/* Dup (color 0, key = local rank), split, and MPI_Comm_create (color 0 for
 * members of the group, key = position in it) on an intercommunicator;
 * reported on c from func.  *newcomm is MPI_COMM_NULL for color < 0 or
 * when the other side has no member of the color. */
/* MPI_Comm_dup of an intercommunicator: its split, then the objects that
 * fmpl_mpi_comm_dup_stage staged (stage_rc: how staging went) move in. */
int fmpl_mpi_inter_dup(fmpl_mpi_comm *c, fmpl_mpi_comm *staged, int stage_rc, MPI_Comm *newcomm,
                       const char *func);
/* MPI_Comm_idup of an intercommunicator: start the creation (MPI_SUCCESS
 * or MPI_ERR_NO_MEM, not reported), let progress drive
 * fmpl_mpi_inter_build_async(ib) until done, then finish: the duplicate in
 * *newcomm with the staged objects, or an error reported on parent (on
 * MPI_COMM_WORLD if parent was freed meanwhile) from func.  ib is freed. */
typedef struct fmpl_mpi_inter_build fmpl_mpi_inter_build;
int fmpl_mpi_inter_dup_start(fmpl_mpi_comm *c, fmpl_mpi_inter_build **ib);
struct fmpl_async *fmpl_mpi_inter_build_async(fmpl_mpi_inter_build *ib);
int fmpl_mpi_inter_dup_finish(fmpl_mpi_inter_build *ib, MPI_Comm parent, fmpl_mpi_comm *staged,
                              int stage_rc, MPI_Comm *newcomm, const char *func);
int fmpl_mpi_inter_split(fmpl_mpi_comm *c, int color, int key, MPI_Comm *newcomm,
                         const char *func);
int fmpl_mpi_inter_create(fmpl_mpi_comm *c, MPI_Group group, MPI_Comm *newcomm);
/* MPI_Comm_compare when either is an intercommunicator. */
int fmpl_mpi_inter_compare(const fmpl_mpi_comm *a, const fmpl_mpi_comm *b);

/* Collectives on an intercommunicator (intercomm_coll.c), MPI-4.0 6.2.2.
 * Each collective of coll.c / coll_move.c starts with this hook: `ic` is
 * bound to the communicator for `call`, which runs when it is an
 * intercommunicator. */
#define FMPL_MPI_INTER_HOOK(comm, ic, call)                                        \
    do {                                                                           \
        fmpl_mpi_comm *ic = fmpl_mpi_state == FMPL_MPI_READY ? fmpl_mpi_comm_get(comm) \
                                                             : NULL;               \
        if (__builtin_expect(ic != NULL && ic->inter != NULL, 0))                  \
            return (call);                                                         \
    } while (0)

int fmpl_mpi_inter_barrier(fmpl_mpi_comm *c);
int fmpl_mpi_inter_bcast(fmpl_mpi_comm *c, const char *func, void *buf, MPI_Count count,
                         MPI_Datatype type, int root);
/* The v forms pass count arrays (and displacements, in elements); the
 * uniform forms FMPL_MPI_NO_ARRAY and the count. */
#define FMPL_MPI_NO_ARRAY ((fmpl_mpi_array){NULL, FMPL_MPI_ARRAY_INT})
int fmpl_mpi_inter_gatherv(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                           MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                           fmpl_mpi_array recvcounts, fmpl_mpi_array displs, MPI_Count recvcount,
                           MPI_Datatype recvtype, int root);
int fmpl_mpi_inter_scatterv(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                            fmpl_mpi_array sendcounts, fmpl_mpi_array displs,
                            MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            MPI_Count recvcount, MPI_Datatype recvtype, int root);
/* Allgather(v) and Alltoall(v,w) are a send to and a receive from every
 * remote process.  Alltoallw's displacements are in bytes. */
int fmpl_mpi_inter_allgather(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                             MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                             fmpl_mpi_array recvcounts, fmpl_mpi_array displs,
                             MPI_Count recvcount, MPI_Datatype recvtype);
int fmpl_mpi_inter_alltoall(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                            fmpl_mpi_array sendcounts, fmpl_mpi_array sdispls,
                            MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                            fmpl_mpi_array recvcounts, fmpl_mpi_array rdispls,
                            MPI_Count recvcount, MPI_Datatype recvtype);
int fmpl_mpi_inter_alltoallw(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                             fmpl_mpi_array sendcounts, fmpl_mpi_array sdispls,
                             const MPI_Datatype *sendtypes, void *recvbuf,
                             fmpl_mpi_array recvcounts, fmpl_mpi_array rdispls,
                             const MPI_Datatype *recvtypes);
/* Reduce (root as given), Allreduce (root = FMPL_MPI_INTER_ALL). */
#define FMPL_MPI_INTER_ALL (-100)
int fmpl_mpi_inter_reduce(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                          void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                          int root);
/* Reduce_scatter (recvcounts) and Reduce_scatter_block (no array). */
int fmpl_mpi_inter_reduce_scatter(fmpl_mpi_comm *c, const char *func, const void *sendbuf,
                                  void *recvbuf, fmpl_mpi_array recvcounts,
                                  MPI_Count recvcount, MPI_Datatype type, MPI_Op op);
/* MPI_Comm_remote_size / _remote_group (MPI_ERR_COMM on an intracommunicator). */
int fmpl_mpi_inter_remote_size(fmpl_mpi_comm *c, int *size);
int fmpl_mpi_inter_remote_group(fmpl_mpi_comm *c, MPI_Group *group);
/* Two member lists (world ranks): MPI_CONGRUENT (same order), MPI_SIMILAR
 * (same members) or MPI_UNEQUAL. */
int fmpl_mpi_compare_members(int na, const int *a, int nb, const int *b);
/* Operations an intercommunicator does not have: MPI_ERR_COMM from func. */
int fmpl_mpi_inter_invalid(fmpl_mpi_comm *c, const char *func);

#endif
