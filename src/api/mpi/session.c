/* MPI-4 sessions: MPI_Session_init / _finalize, process sets, session error
 * handlers, MPI_Group_from_session_pset and MPI_Comm_create_from_group.
 *
 * A session holds a reference on the core (init.c): a process may start
 * sessions before, after or without MPI_Init.  Two process sets exist:
 * mpi://WORLD (every process of the job) and mpi://SELF (this one); names
 * compare without regard to case.  MPI_Comm_create_from_group builds the
 * communicator over the world team (which the runtime always has) with the
 * members' string tag hashed into a create_group tag, so that members
 * passing different tags are caught. */
#include "api/mpi/bsend_pool.h"
#include "api/mpi/mpi_objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct session {
    MPI_Errhandler errhandler;
    MPI_Info info;       /* the hints given (a copy), MPI_INFO_NULL if none */
    int thread_level;
    fmpl_bsend_pool *bsend; /* MPI_Session_attach_buffer's (bsend_scoped.c), or NULL */
} session;

static fmpl_mpi_table sessions = FMPL_MPI_TABLE_INIT(FMPL_HK_SESSION);

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
enum { NPSETS = 2 };

/* Errors of a call on a session go to its handler; without a valid
 * session (MPI 9.3: errors tied to no object), to MPI_COMM_SELF's handler,
 * or MPI_ERRORS_ARE_FATAL when MPI is not running. */
#define SESSION_ERR(s, h, code, ...)                                               \
    ((s) ? fmpl_mpi_error_handler((s)->errhandler, (h), (code), __func__ + 1, __VA_ARGS__) \
         : fmpl_mpi_error(MPI_COMM_SELF, (code), __func__ + 1, __VA_ARGS__))

#define GET_SESSION(h, s)                                                          \
    session *s = fmpl_mpi_state == FMPL_MPI_READY ? fmpl_mpi_table_get(&sessions, (h)) : NULL; \
    if (!s)                                                                        \
        return SESSION_ERR((session *)NULL, (h), MPI_ERR_SESSION, "invalid session 0x%x", \
                           (unsigned)(h))

static const char *const thread_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                           "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

/* The "thread_level" hint (MPI 11.3.1), MPI_THREAD_SINGLE if absent. */
static int requested_level(MPI_Info info)
{
    char v[64];
    if (info == MPI_INFO_NULL || !fmpl_mpi_info_lookup(info, "thread_level", v, sizeof v))
        return MPI_THREAD_SINGLE;
    for (int l = 0; l < 4; l++)
        if (!strcasecmp(v, thread_names[l]))
            return l;
    return MPI_THREAD_SINGLE;
}

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session_out)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Session_init";
    if (errhandler == MPI_ERRHANDLER_NULL) /* accepted as the default */
        errhandler = MPI_ERRORS_ARE_FATAL;
    if (!fmpl_mpi_errhandler_valid(errhandler))
        return fmpl_mpi_error(MPI_COMM_SELF, MPI_ERR_ARG, func, "invalid error handler 0x%x",
                              (unsigned)errhandler);
    if (!session_out)
        return fmpl_mpi_error_handler(errhandler, MPI_SESSION_NULL, MPI_ERR_ARG, func,
                                      "session is NULL");
    if (!fmpl_mpi_info_valid(info) || info == MPI_INFO_ENV)
        return fmpl_mpi_error_handler(errhandler, MPI_SESSION_NULL, MPI_ERR_INFO, func,
                                      "invalid info 0x%x", (unsigned)info);
    if (fmpl_mpi_state == FMPL_MPI_DONE) /* the runtime starts once per process */
        return fmpl_mpi_error_handler(errhandler, MPI_SESSION_NULL, MPI_ERR_OTHER, func,
                                      "MPI was finalized with no session open: it cannot "
                                      "start again in this process");
    int provided;
    int rc = fmpl_mpi_core_start(requested_level(info), &provided, func);
    if (rc != MPI_SUCCESS)
        return rc;
    session *s = calloc(1, sizeof *s);
    if (s)
        rc = fmpl_mpi_info_copy(info, &s->info);
    if (!s || rc != MPI_SUCCESS ||
        (rc = fmpl_mpi_table_add(&sessions, s, session_out)) != MPI_SUCCESS) {
        if (s && s->info != MPI_INFO_NULL)
            fmpl_mpi_info_release(s->info);
        free(s);
        fmpl_mpi_core_stop();
        return fmpl_mpi_error_handler(errhandler, MPI_SESSION_NULL, MPI_ERR_NO_MEM, func,
                                      "no memory for a session");
    }
    s->thread_level = provided;
    s->errhandler = errhandler;
    fmpl_mpi_errhandler_ref(errhandler);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Session_init)

int PMPI_Session_finalize(MPI_Session *session_h)
{
    FMPL_CORE_GUARD();
    if (!session_h)
        return FMPL_MPI_ERR(MPI_COMM_SELF, MPI_ERR_ARG, "session is NULL");
    GET_SESSION(*session_h, s);
    /* Its buffered messages are delivered first, as MPI_Session_detach_buffer
     * would (the user may free the buffer once this returns). */
    void *buffer;
    MPI_Count size;
    fmpl_bsend_pool_detach(&s->bsend, &buffer, &size);
    fmpl_mpi_table_remove(&sessions, *session_h);
    fmpl_mpi_errhandler_unref(s->errhandler);
    if (s->info != MPI_INFO_NULL)
        fmpl_mpi_info_release(s->info);
    free(s);
    *session_h = MPI_SESSION_NULL;
    return fmpl_mpi_core_stop();
}
FMPL_MPI_WEAK(Session_finalize)

int PMPI_Session_get_num_psets(MPI_Session session_h, MPI_Info info, int *npset_names)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    if (!fmpl_mpi_info_valid(info))
        return SESSION_ERR(s, session_h, MPI_ERR_INFO, "invalid info 0x%x", (unsigned)info);
    if (!npset_names)
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "npset_names is NULL");
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Session_get_num_psets)

/* pset_len 0 asks for the length (with the terminating 0); otherwise at
 * most pset_len - 1 characters and the 0 are written (MPI 11.3.2). */
int PMPI_Session_get_nth_pset(MPI_Session session_h, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    if (!fmpl_mpi_info_valid(info))
        return SESSION_ERR(s, session_h, MPI_ERR_INFO, "invalid info 0x%x", (unsigned)info);
    if (n < 0 || n >= NPSETS)
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "process set %d is not in [0, %d)", n,
                           NPSETS);
    if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name))
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "invalid pset_len or pset_name");
    int len = (int)strlen(pset_names[n]) + 1;
    if (*pset_len == 0) {
        *pset_len = len;
        return MPI_SUCCESS;
    }
    snprintf(pset_name, (size_t)*pset_len, "%s", pset_names[n]);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Session_get_nth_pset)

fmpl_bsend_pool **fmpl_mpi_session_bsend_slot(MPI_Session session_h)
{
    session *s = fmpl_mpi_state == FMPL_MPI_READY ? fmpl_mpi_table_get(&sessions, session_h) : NULL;
    return s ? &s->bsend : NULL;
}

MPI_Errhandler fmpl_mpi_session_errhandler(MPI_Session session_h)
{
    session *s = fmpl_mpi_state == FMPL_MPI_READY ? fmpl_mpi_table_get(&sessions, session_h) : NULL;
    return s ? s->errhandler : MPI_ERRHANDLER_NULL;
}

/* Index of a process set name, or -1. */
static int pset_find(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (!strcasecmp(name, pset_names[i]))
            return i;
    return -1;
}

static int pset_size(int pset) { return pset == 0 ? fmpl_teams[0]->size : 1; }

int PMPI_Session_get_pset_info(MPI_Session session_h, const char *pset_name, MPI_Info *info)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    int p = pset_find(pset_name);
    if (p < 0 || !info)
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "unknown process set \"%s\"",
                           pset_name ? pset_name : "(null)");
    char size[16];
    snprintf(size, sizeof size, "%d", pset_size(p));
    int rc = PMPI_Info_create(info);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info, "mpi_size", size);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : SESSION_ERR(s, session_h, rc, "cannot make the info object");
}
FMPL_MPI_WEAK(Session_get_pset_info)

int PMPI_Session_get_info(MPI_Session session_h, MPI_Info *info_used)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    if (!info_used)
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "info_used is NULL");
    int rc = s->info != MPI_INFO_NULL ? fmpl_mpi_info_copy(s->info, info_used)
                                      : PMPI_Info_create(info_used);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(*info_used, "thread_level", thread_names[s->thread_level]);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : SESSION_ERR(s, session_h, rc, "cannot make the info object");
}
FMPL_MPI_WEAK(Session_get_info)

int PMPI_Group_from_session_pset(MPI_Session session_h, const char *pset_name,
                                 MPI_Group *newgroup)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    int p = pset_find(pset_name);
    if (p < 0 || !newgroup)
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "unknown process set \"%s\"",
                           pset_name ? pset_name : "(null)");
    int n = pset_size(p), me = fmpl_mpi_my_world_rank();
    int *world = malloc(sizeof(int) * (size_t)n);
    if (!world)
        return SESSION_ERR(s, session_h, MPI_ERR_NO_MEM, "no memory");
    for (int i = 0; i < n; i++)
        world[i] = p == 0 ? fmpl_teams[0]->world[i] : me;
    int rc = fmpl_mpi_group_make(n, world, newgroup);
    free(world);
    if (rc != MPI_SUCCESS)
        return SESSION_ERR(s, session_h, rc, "no memory");
    fmpl_mpi_group_get(*newgroup)->session = session_h; /* for its communicators' buffers */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Group_from_session_pset)

/* ------------------------------------------------------------ error handlers */

int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *fn,
                                   MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    if (!fn || !errhandler)
        return fmpl_mpi_error_handler(MPI_ERRORS_ARE_FATAL, MPI_SESSION_NULL, MPI_ERR_ARG,
                                      "MPI_Session_create_errhandler",
                                      "the function or errhandler is NULL");
    /* Same form as a communicator handler: (int handle *, int *code, ...). */
    int rc = fmpl_mpi_errhandler_new((MPI_Comm_errhandler_function *)(void (*)(void))fn,
                                     FMPL_HK_SESSION, errhandler);
    return rc == MPI_SUCCESS ? MPI_SUCCESS
                             : fmpl_mpi_error_handler(MPI_ERRORS_ARE_FATAL, MPI_SESSION_NULL, rc,
                                                      "MPI_Session_create_errhandler",
                                                      "no memory for an error handler");
}
FMPL_MPI_WEAK(Session_create_errhandler)

int PMPI_Session_set_errhandler(MPI_Session session_h, MPI_Errhandler errhandler)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    if (!fmpl_mpi_errhandler_valid(errhandler))
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "invalid error handler 0x%x",
                           (unsigned)errhandler);
    fmpl_mpi_errhandler_replace(&s->errhandler, errhandler);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Session_set_errhandler)

int PMPI_Session_get_errhandler(MPI_Session session_h, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    if (!errhandler)
        return SESSION_ERR(s, session_h, MPI_ERR_ARG, "errhandler is NULL");
    fmpl_mpi_errhandler_ref(s->errhandler); /* the caller frees it */
    *errhandler = s->errhandler;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Session_get_errhandler)

int PMPI_Session_call_errhandler(MPI_Session session_h, int errorcode)
{
    FMPL_CORE_GUARD();
    GET_SESSION(session_h, s);
    SESSION_ERR(s, session_h, errorcode, "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Session_call_errhandler)

/* ------------------------------------------------------------ communicators */

/* FNV-1a of the string tag, folded into the tags create_group accepts. */
static int tag_of(const char *stringtag)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)stringtag; *p; p++)
        h = (h ^ *p) * 16777619u;
    return (int)(h % FMPL_MPI_TAG_UB);
}

int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_create_from_group";
    if (errhandler == MPI_ERRHANDLER_NULL) /* accepted as the default, as MPICH does */
        errhandler = MPI_ERRORS_ARE_FATAL;
    MPI_Errhandler report = fmpl_mpi_errhandler_valid(errhandler) ? errhandler
                                                                   : MPI_ERRORS_ARE_FATAL;
#define FAIL(code, ...) fmpl_mpi_error_handler(report, MPI_COMM_NULL, (code), func, __VA_ARGS__)
    if (fmpl_mpi_state != FMPL_MPI_READY)
        return FAIL(MPI_ERR_OTHER, "neither MPI_Init nor MPI_Session_init was called");
    if (report != errhandler)
        return FAIL(MPI_ERR_ARG, "invalid error handler 0x%x", (unsigned)errhandler);
    if (!fmpl_mpi_group_get(group))
        return FAIL(MPI_ERR_GROUP, "invalid group 0x%x", (unsigned)group);
    if (!stringtag || !newcomm)
        return FAIL(MPI_ERR_ARG, "stringtag or newcomm is NULL");
    if (group == MPI_GROUP_EMPTY) { /* nothing to create (MPI 7.4.2) */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    if (!fmpl_mpi_info_valid(info))
        return FAIL(MPI_ERR_INFO, "invalid info 0x%x", (unsigned)info);
    if (fmpl_mpi_group_find(fmpl_mpi_group_get(group), fmpl_mpi_my_world_rank()) < 0)
        return FAIL(MPI_ERR_GROUP, "the calling process is not in the group");
    /* The world communicator's handler must not see this call's errors. */
    fmpl_mpi_comm *world = fmpl_mpi_comm_get(MPI_COMM_WORLD);
    MPI_Errhandler saved = world->errhandler;
    world->errhandler = MPI_ERRORS_RETURN;
    int rc = PMPI_Comm_create_group(MPI_COMM_WORLD, group, tag_of(stringtag), newcomm);
    world->errhandler = saved;
    if (rc != MPI_SUCCESS)
        return FAIL(rc, "cannot create the communicator (tag \"%s\")", stringtag);
    fmpl_mpi_comm *nc = fmpl_mpi_comm_get(*newcomm);
    fmpl_mpi_errhandler_replace(&nc->errhandler, errhandler);
    nc->session = fmpl_mpi_group_get(group)->session;
    return MPI_SUCCESS;
#undef FAIL
}
FMPL_MPI_WEAK(Comm_create_from_group)
