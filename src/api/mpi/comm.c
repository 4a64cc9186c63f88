/* Communicators: rank, size, dup, split, free, compare, names, error
 * handlers.  New communicators are teams split from the parent
 * (runtime/team_build.c). */
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_impl.h"
#include "api/mpi/mpi_objects.h"
#include "collectives/collectives.h"
#include "progress/async.h"
#include "runtime/runtime.h"

#include <string.h>

#define GET_COMM(comm, c, func)                                                    \
    fmpl_mpi_comm *c = fmpl_mpi_comm_get(comm);                                    \
    if (!c)                                                                        \
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func,                  \
                              "invalid communicator 0x%x", (unsigned)(comm))

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_rank");
    *rank = c->team->rank;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_rank)

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_size");
    *size = c->inter ? c->inter->local_size : c->team->size;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_size)

static int split(fmpl_mpi_comm *c, int color, int key, MPI_Comm *newcomm, const char *func)
{
    fmpl_team *t;
    int rc = fmpl_team_split(c->team, color, key, &t);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(c->handle, fmpl_mpi_error_class_of(rc), func,
                              "cannot create the communicator");
    rc = fmpl_mpi_comm_adopt(c, t, newcomm); /* objects.c: inherits the error handler */
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(c->handle, rc, func, "too many communicators");
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_split");
    if (color < 0 && color != MPI_UNDEFINED)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_split", "color %d is negative", color);
    if (c->inter)
        return fmpl_mpi_inter_split(c, color == MPI_UNDEFINED ? -1 : color, key, newcomm,
                                    "MPI_Comm_split");
    return split(c, color == MPI_UNDEFINED ? -1 : color, key, newcomm, "MPI_Comm_split");
}
FMPL_MPI_WEAK(Comm_split)

int fmpl_mpi_comm_dup_finish(MPI_Comm parent, fmpl_mpi_comm *staged, int stage_rc,
                             fmpl_team_build *b, MPI_Comm *newcomm, const char *func)
{
    fmpl_team *t;
    int rc = fmpl_team_build_finish(b, &t);
    MPI_Comm report = fmpl_mpi_comm_get(parent) ? parent : MPI_COMM_WORLD;
    *newcomm = MPI_COMM_NULL;
    if (rc != FMPL_SUCCESS) {
        if (staged)
            fmpl_mpi_comm_dup_discard(staged);
        return fmpl_mpi_error(report, fmpl_mpi_error_class_of(rc), func,
                              "cannot create the communicator");
    }
    if (stage_rc != MPI_SUCCESS) { /* the others have the team: this member retires it */
        fmpl_team_retire(t);
        return fmpl_mpi_error(report, stage_rc, func, "copying the attributes failed");
    }
    rc = fmpl_mpi_comm_dup_adopt(staged, t, newcomm); /* objects.c */
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(report, rc, func, "too many communicators");
    return MPI_SUCCESS;
}

/* Start and wait: the state machine of MPI_Comm_idup (comm_create.c). */
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_dup");
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_dup", "newcomm is NULL");
    *newcomm = MPI_COMM_NULL;
    /* A failed copy callback fails this member's call only after the
     * creation, which the other members are taking part in. */
    fmpl_mpi_comm *staged = NULL;
    int stage_rc = fmpl_mpi_comm_dup_stage(c, &staged); /* objects.c: attributes, info */
    if (c->inter) /* intercomm.c builds it; then the staged objects move over */
        return fmpl_mpi_inter_dup(c, staged, stage_rc, newcomm, "MPI_Comm_dup");
    fmpl_team_build *b;
    int rc = fmpl_team_dup_start(c->team, &b);
    if (rc != FMPL_SUCCESS) {
        if (staged)
            fmpl_mpi_comm_dup_discard(staged);
        return fmpl_mpi_error(comm, fmpl_mpi_error_class_of(rc), "MPI_Comm_dup",
                              "cannot start the duplication");
    }
    fmpl_async_wait(fmpl_team_build_async(b));
    return fmpl_mpi_comm_dup_finish(comm, staged, stage_rc, b, newcomm, "MPI_Comm_dup");
}
FMPL_MPI_WEAK(Comm_dup)

int PMPI_Comm_free(MPI_Comm *comm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!comm)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_free", "comm is NULL");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return fmpl_mpi_error(*comm, MPI_ERR_COMM, "MPI_Comm_free",
                              "predefined communicators cannot be freed");
    GET_COMM(*comm, c, "MPI_Comm_free");
    int rc = fmpl_mpi_comm_free_objects(c); /* objects.c: delete callbacks first */
    if (rc != MPI_SUCCESS)
        return fmpl_mpi_error(*comm, rc, "MPI_Comm_free", "an attribute delete callback failed");
    fmpl_mpi_dynamic_forget(*comm); /* a freed parent: MPI_Comm_get_parent says NULL */
    fmpl_mpi_comm_unregister(c);
    fmpl_mpi_comm_unhold(c); /* the handle's reference */
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_free)

/* MPI_Comm_disconnect: collective; "waits for all pending communication on
 * comm to complete internally" and frees it.  Every message a member sent
 * on comm must be matched before the call (the standard's condition), so
 * what remains in flight is the protocols' own traffic for those messages
 * (a rendezvous's last acknowledgement): a barrier over comm, which every
 * member enters only after its own operations on comm completed, leaves
 * none behind.  Intra- and intercommunicators alike. */
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_disconnect";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!comm)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "comm is NULL");
    if (*comm == MPI_COMM_NULL)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "comm is MPI_COMM_NULL");
    if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return fmpl_mpi_error(*comm, MPI_ERR_COMM, func,
                              "predefined communicators cannot be disconnected");
    GET_COMM(*comm, c, func);
    (void)c;
    int rc = PMPI_Barrier(*comm);
    if (rc != MPI_SUCCESS)
        return rc; /* reported by MPI_Barrier */
    return PMPI_Comm_free(comm);
}
FMPL_MPI_WEAK(Comm_disconnect)

void fmpl_mpi_comm_hold(fmpl_mpi_comm *c) { c->refs++; }

void fmpl_mpi_comm_unhold(fmpl_mpi_comm *c)
{
    if (--c->refs > 0)
        return;
    if (c->inter)
        fmpl_mpi_inter_free(c); /* intercomm.c: the teams behind it */
    else
        fmpl_team_retire(c->team); /* released once every member has freed it */
    fmpl_mpi_comm_release(c);
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm1);
    GET_COMM(comm1, a, "MPI_Comm_compare");
    GET_COMM(comm2, b, "MPI_Comm_compare");
    if (!result)
        return fmpl_mpi_error(comm1, MPI_ERR_ARG, "MPI_Comm_compare", "result is NULL");
    if (a == b || a->inter || b->inter) {
        *result = fmpl_mpi_inter_compare(a, b); /* intercomm.c: IDENT for a == b */
        return MPI_SUCCESS;
    }
    *result = fmpl_mpi_compare_members(a->team->size, a->team->world, b->team->size,
                                       b->team->world);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_compare)

int PMPI_Comm_set_name(MPI_Comm comm, const char *name)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_set_name");
    strncpy(c->name, name, MPI_MAX_OBJECT_NAME - 1);
    c->name[MPI_MAX_OBJECT_NAME - 1] = '\0';
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_set_name)

int PMPI_Comm_get_name(MPI_Comm comm, char *name, int *resultlen)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_get_name");
    strcpy(name, c->name);
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_get_name)

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_set_errhandler");
    if (!fmpl_mpi_errhandler_valid(errhandler)) /* errhandler.c */
        return fmpl_mpi_error(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler",
                              "invalid error handler 0x%x", (unsigned)errhandler);
    fmpl_mpi_errhandler_replace(&c->errhandler, errhandler);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    GET_COMM(comm, c, "MPI_Comm_get_errhandler");
    *errhandler = c->errhandler;
    fmpl_mpi_errhandler_ref(c->errhandler); /* the caller frees it (MPI 9.3.1) */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_get_errhandler)
