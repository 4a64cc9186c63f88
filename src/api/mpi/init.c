/* MPI_Init and friends: the runtime (src/runtime) plus MPI's objects. */
#include "api/mpi/mpi_impl.h"
#include "api/mpi/mpi_objects.h"
#include "protocols/any_source.h"
#include "runtime/runtime.h"
#include "base/timer.h"
#include "base/tunable.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

int fmpl_mpi_state = FMPL_MPI_NEW;
int fmpl_mpi_thread_level = MPI_THREAD_SINGLE;
static pthread_t main_thread;
void fmpl_mpi_comm_set_self(fmpl_team *t);

/* The core (runtime, communicators, object tables) is shared by the world
 * model (MPI_Init .. MPI_Finalize) and the sessions (MPI_Session_init ..
 * MPI_Session_finalize, session.c): each holds a reference.  The last one
 * tears the core down, except that a process which never called MPI_Init
 * keeps it until exit, so that it may start another session (or the world
 * model) later: the runtime cannot start twice in one process. */
static int core_refs;
static int world_state = FMPL_MPI_NEW; /* the world model: MPI_Initialized, MPI_Finalized */

static int teardown(void)
{
    fmpl_mpi_objects_finalize_begin(); /* MPI_COMM_SELF's attributes, MPI still up
                                          (done already by an MPI_Finalize) */
    fmpl_mpi_bsend_finalize(); /* buffered messages still in flight (bsend.c) */
    fmpl_mpi_state = FMPL_MPI_DONE;
    fmpl_mpi_requests_finalize(); /* staging and type references still held */
    fmpl_mpi_stage_finalize();    /* the staging pool, back to the shared heap */
    fmpl_mpi_wins_finalize();     /* windows never freed (win.c) */
    fmpl_mpi_comms_finalize();
    fmpl_mpi_objects_finalize();
    return fmpl_runtime_finalize() == FMPL_SUCCESS ? MPI_SUCCESS : MPI_ERR_OTHER;
}

static void teardown_at_exit(void)
{
    if (fmpl_mpi_state == FMPL_MPI_READY && core_refs == 0)
        teardown();
}

FMPL_TUNABLE(tunable_threads, "FMPL_THREAD_LEVEL", "multiple",
             "the highest thread level MPI_Init_thread and sessions grant: single, funneled, "
             "serialized or multiple (several threads share the library through one lock, "
             "progress/threads.c)");

/* The level granted for `required`: what was asked, up to FMPL_THREAD_LEVEL.
 * Above FUNNELED, application threads take turns at the core (threads.c). */
static int thread_level(int required)
{
    static const char *const levels[] = {"single", "funneled", "serialized", "multiple", NULL};
    int most = MPI_THREAD_SINGLE + fmpl_tunable_choice(&tunable_threads, levels);
    int level = required > most ? most : required;
    if (level < MPI_THREAD_SINGLE)
        level = MPI_THREAD_SINGLE;
    if (level > MPI_THREAD_FUNNELED)
        fmpl_threads_enable();
    return level;
}

int fmpl_mpi_core_start(int required, int *provided, const char *func)
{
    if (fmpl_mpi_state == FMPL_MPI_DONE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, func,
                              "MPI cannot be initialized again after it was finalized");
    if (fmpl_mpi_state == FMPL_MPI_READY) {
        core_refs++;
        if (required > fmpl_mpi_thread_level)
            fmpl_mpi_thread_level = thread_level(required);
        if (provided)
            *provided = fmpl_mpi_thread_level;
        return MPI_SUCCESS;
    }
    /* MPI messages are tag-matched: the sender-matched protocol serves only
     * the collectives' internal indices (one user index, the minimum, keeps
     * each team's slot arrays small) and no team needs an any-source ring. */
    if (fmpl_runtime_state == FMPL_RUNTIME_DONE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, func,
                              "MPI cannot start after fmpl_finalize ended the runtime");
    if (fmpl_runtime_state == FMPL_RUNTIME_NEW) /* else fmpl_init started it: join */
        fmpl_any_rings = 0;
    int rc = fmpl_runtime_init(NULL, NULL, 1);
    if (rc != FMPL_SUCCESS)
        return MPI_ERR_OTHER;
    fmpl_mpi_comms_init();
    /* MPI_COMM_SELF is a group of one: built without a word to any other
     * rank (a split of the world would exchange with every rank, and across
     * hosts open a connection to each: most of the start-up at 64 ranks). */
    fmpl_team *self;
    int me = fmpl_teams[0]->rank;
    rc = fmpl_team_from_members(fmpl_teams[0], 1, &me, 0, &self);
    if (rc != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_INTERN, func,
                              "cannot create MPI_COMM_SELF");
    fmpl_mpi_comm_set_self(self);
    fmpl_mpi_thread_level = thread_level(required);
    if (provided)
        *provided = fmpl_mpi_thread_level;
    main_thread = pthread_self();
    fmpl_mpi_state = FMPL_MPI_READY;
    core_refs = 1;
    return MPI_SUCCESS;
}

int fmpl_mpi_core_stop(void)
{
    if (--core_refs > 0)
        return MPI_SUCCESS;
    if (world_state == FMPL_MPI_NEW) { /* sessions only: keep it for a later start */
        static int registered;
        if (!registered++)
            atexit(teardown_at_exit);
        return MPI_SUCCESS;
    }
    return teardown();
}

static int start(int required, int *provided)
{
    if (world_state == FMPL_MPI_READY)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init", "MPI is already initialized");
    if (world_state == FMPL_MPI_DONE)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init",
                              "MPI cannot be initialized again after MPI_Finalize");
    int rc = fmpl_mpi_core_start(required, provided, "MPI_Init");
    if (rc == MPI_SUCCESS)
        world_state = FMPL_MPI_READY;
    if (rc == MPI_SUCCESS) /* a spawned world meets its parent (dynamic.c) */
        rc = fmpl_mpi_dynamic_start();
    return rc;
}

int PMPI_Init(int *argc, char ***argv)
{
    FMPL_CORE_GUARD();
    (void)argc;
    (void)argv;
    return start(MPI_THREAD_SINGLE, NULL);
}
FMPL_MPI_WEAK(Init)

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    FMPL_CORE_GUARD();
    (void)argc;
    (void)argv;
    return start(required, provided);
}
FMPL_MPI_WEAK(Init_thread)

int PMPI_Finalize(void)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (world_state != FMPL_MPI_READY)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Finalize",
                              "MPI_Init was not called");
    /* MPI_COMM_SELF's attributes go first, while MPI_Finalized still says 0
     * (MPI 11.2.4; MPICH's attrend2 checks it). */
    fmpl_mpi_objects_finalize_begin();
    world_state = FMPL_MPI_DONE;
    return fmpl_mpi_core_stop(); /* the core stays while sessions are open */
}
FMPL_MPI_WEAK(Finalize)

int PMPI_Initialized(int *flag)
{
    FMPL_CORE_GUARD();
    *flag = world_state != FMPL_MPI_NEW;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Initialized)

int PMPI_Finalized(int *flag)
{
    FMPL_CORE_GUARD();
    *flag = world_state == FMPL_MPI_DONE;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Finalized)

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    FMPL_CORE_GUARD();
    (void)comm; /* MPI allows ending every process, which is what happens */
    char msg[96];
    snprintf(msg, sizeof msg, "MPI_Abort called with error code %d", errorcode);
    fmpl_runtime_abort(errorcode, msg);
}
FMPL_MPI_WEAK(Abort)

double PMPI_Wtime(void) { return (double)fmpl_now_ns() * 1e-9; }
FMPL_MPI_WEAK(Wtime)

double PMPI_Wtick(void) { return 1e-9; }
FMPL_MPI_WEAK(Wtick)

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    FMPL_CORE_GUARD();
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        strcpy(name, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Get_processor_name)

int PMPI_Query_thread(int *provided)
{
    FMPL_CORE_GUARD();
    *provided = fmpl_mpi_thread_level;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
    FMPL_CORE_GUARD();
    *flag = pthread_equal(pthread_self(), main_thread);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Is_thread_main)
