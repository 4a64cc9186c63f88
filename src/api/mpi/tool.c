/* The MPI tool information interface (MPI_T, MPI-4.0 chapter 15).
 *
 * What a tool finds here:
 *  - Control variables: FMPL's tunables, every environment variable the
 *    library reads (base/tunable.h; `fmpl_info` lists the same).  Each is a
 *    string (MPI_CHAR) bound to no object, verbosity "user, basic", scope
 *    MPI_T_SCOPE_CONSTANT: the library reads its environment once, so the
 *    value a tool reads is the one in force for the whole run (the
 *    environment's, else the default), and a write is refused with
 *    MPI_T_ERR_CVAR_SET_NEVER.  Indices follow the order the linker laid the
 *    tunables out in, fixed for a given library.
 *  - No performance variables, categories, events or event sources yet:
 *    their counts are 0 and an index is MPI_T_ERR_INVALID_INDEX.
 *    Performance-variable sessions can be made and freed, and
 *    MPI_T_PVAR_ALL_HANDLES started, stopped and reset in them (a no-op with
 *    no handles), as the standard allows.
 * The interface works before MPI_Init and after MPI_Finalize, between
 * MPI_T_init_thread and the matching MPI_T_finalize (nested pairs count).
 * Its functions return MPI_T error codes and call no error handler. */
#include "api/mpi/mpi_impl.h"
#include "base/tunable.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The object behind MPI_T_PVAR_ALL_HANDLES: only its address matters. */
struct MPIR_T_pvar_handle_s {
    int unused;
};
static struct MPIR_T_pvar_handle_s all_handles;
struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES = &all_handles;

enum { CVAR_MAGIC = 0x43564152, SESSION_MAGIC = 0x50534553 };

struct MPIR_T_cvar_handle_s {
    int magic;
    int index;
};
struct MPIR_T_pvar_session_s {
    int magic;
};

static atomic_int initialized; /* MPI_T_init_thread calls not yet finalized */

#define REQUIRE_INIT()                                                                     \
    do {                                                                                   \
        if (atomic_load(&initialized) <= 0)                                                \
            return MPI_T_ERR_NOT_INITIALIZED;                                              \
    } while (0)

/* ------------------------------------------------------------ the tunables */

typedef struct cvar_walk {
    int want;                 /* index sought, or -1 to count */
    const char *name;         /* or the name sought */
    int seen;
    const fmpl_tunable *found;
    int found_index;
} cvar_walk;

static void cvar_visit(const fmpl_tunable *t, void *ctx)
{
    cvar_walk *w = ctx;
    if (!w->found && (w->seen == w->want || (w->name && strcmp(w->name, t->name) == 0))) {
        w->found = t;
        w->found_index = w->seen;
    }
    w->seen++;
}

static int cvar_count(void)
{
    cvar_walk w = {.want = -1};
    fmpl_tunable_foreach(cvar_visit, &w);
    return w.seen;
}

static const fmpl_tunable *cvar_at(int index)
{
    if (index < 0)
        return NULL;
    cvar_walk w = {.want = index};
    fmpl_tunable_foreach(cvar_visit, &w);
    return w.found;
}

/* A string out in MPI_T's manner: with no buffer (NULL or *len == 0) *len
 * becomes the length the whole string needs, terminator included; else as
 * much as fits is copied, terminated, and *len is what was stored plus 1. */
static void string_out(const char *s, char *buf, int *len)
{
    if (!len)
        return;
    size_t n = strlen(s);
    if (!buf || *len <= 0) {
        *len = (int)n + 1;
        return;
    }
    size_t room = (size_t)*len - 1;
    if (n > room)
        n = room;
    memcpy(buf, s, n);
    buf[n] = '\0';
    *len = (int)n + 1;
}

/* ------------------------------------------------------------ set-up */

int PMPI_T_init_thread(int required, int *provided)
{
    if (!provided)
        return MPI_T_ERR_INVALID;
    /* The interface's own state is one counter and read-only tables. */
    *provided = required >= MPI_THREAD_SINGLE && required <= MPI_THREAD_MULTIPLE
                    ? required : MPI_THREAD_SINGLE;
    atomic_fetch_add(&initialized, 1);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_init_thread)

int PMPI_T_finalize(void)
{
    int n = atomic_load(&initialized);
    while (n > 0 && !atomic_compare_exchange_weak(&initialized, &n, n - 1))
        ;
    return n > 0 ? MPI_SUCCESS : MPI_T_ERR_NOT_INITIALIZED;
}
FMPL_MPI_WEAK(T_finalize)

/* ------------------------------------------------------------ control variables */

int PMPI_T_cvar_get_num(int *num_cvar)
{
    REQUIRE_INIT();
    if (!num_cvar)
        return MPI_T_ERR_INVALID;
    *num_cvar = cvar_count();
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    REQUIRE_INIT();
    const fmpl_tunable *t = cvar_at(cvar_index);
    if (!t)
        return MPI_T_ERR_INVALID_INDEX;
    string_out(t->name, name, name_len);
    char text[512];
    snprintf(text, sizeof text, "%s (default: %s; read from the environment at start)",
             t->help, t->default_value);
    string_out(text, desc, desc_len);
    if (verbosity)
        *verbosity = MPI_T_VERBOSITY_USER_BASIC;
    if (datatype)
        *datatype = MPI_CHAR;
    if (enumtype)
        *enumtype = MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = MPI_T_SCOPE_CONSTANT;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_cvar_get_info)

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    REQUIRE_INIT();
    if (!name || !cvar_index)
        return MPI_T_ERR_INVALID;
    cvar_walk w = {.want = -1, .name = name};
    fmpl_tunable_foreach(cvar_visit, &w);
    if (!w.found)
        return MPI_T_ERR_INVALID_NAME;
    *cvar_index = w.found_index;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* bound to no object */
    REQUIRE_INIT();
    const fmpl_tunable *t = cvar_at(cvar_index);
    if (!t)
        return MPI_T_ERR_INVALID_INDEX;
    if (!handle || !count)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_cvar_handle_s *h = malloc(sizeof *h);
    if (!h)
        return MPI_T_ERR_MEMORY;
    h->magic = CVAR_MAGIC;
    h->index = cvar_index;
    *handle = h;
    *count = (int)strlen(fmpl_tunable_string(t)) + 1; /* MPI_CHARs, terminator included */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_cvar_handle_alloc)

static const fmpl_tunable *cvar_of(MPI_T_cvar_handle handle)
{
    return handle && handle->magic == CVAR_MAGIC ? cvar_at(handle->index) : NULL;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    REQUIRE_INIT();
    if (!handle || !cvar_of(*handle))
        return MPI_T_ERR_INVALID_HANDLE;
    (*handle)->magic = 0;
    free(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    REQUIRE_INIT();
    const fmpl_tunable *t = cvar_of(handle);
    if (!t)
        return MPI_T_ERR_INVALID_HANDLE;
    if (!buf)
        return MPI_T_ERR_INVALID;
    const char *v = fmpl_tunable_string(t);
    memcpy(buf, v, strlen(v) + 1);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    (void)buf;
    REQUIRE_INIT();
    if (!cvar_of(handle))
        return MPI_T_ERR_INVALID_HANDLE;
    return MPI_T_ERR_CVAR_SET_NEVER; /* read once, from the environment */
}
FMPL_MPI_WEAK(T_cvar_write)

/* ------------------------------------------------------------ enumerations */

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    (void)enumtype, (void)num, (void)name, (void)name_len;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_HANDLE; /* no variable has an enumeration */
}
FMPL_MPI_WEAK(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    (void)enumtype, (void)index, (void)value, (void)name, (void)name_len;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_HANDLE;
}
FMPL_MPI_WEAK(T_enum_get_item)

/* ------------------------------------------------------------ performance variables */

int PMPI_T_pvar_get_num(int *num_pvar)
{
    REQUIRE_INIT();
    if (!num_pvar)
        return MPI_T_ERR_INVALID;
    *num_pvar = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_pvar_get_num)

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                         int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
    (void)pvar_index, (void)name, (void)name_len, (void)verbosity, (void)var_class;
    (void)datatype, (void)enumtype, (void)desc, (void)desc_len, (void)bind, (void)readonly;
    (void)continuous, (void)atomic;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_pvar_get_info)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    (void)var_class;
    REQUIRE_INIT();
    if (!name || !pvar_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
FMPL_MPI_WEAK(T_pvar_get_index)

int PMPI_T_pvar_session_create(MPI_T_pvar_session *pe_session)
{
    REQUIRE_INIT();
    if (!pe_session)
        return MPI_T_ERR_INVALID;
    struct MPIR_T_pvar_session_s *s = malloc(sizeof *s);
    if (!s)
        return MPI_T_ERR_MEMORY;
    s->magic = SESSION_MAGIC;
    *pe_session = s;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_pvar_session_create)

static int session_valid(MPI_T_pvar_session s) { return s && s->magic == SESSION_MAGIC; }

int PMPI_T_pvar_session_free(MPI_T_pvar_session *pe_session)
{
    REQUIRE_INIT();
    if (!pe_session || !session_valid(*pe_session))
        return MPI_T_ERR_INVALID_SESSION;
    (*pe_session)->magic = 0;
    free(*pe_session);
    *pe_session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    (void)pvar_index, (void)obj_handle, (void)handle, (void)count;
    REQUIRE_INIT();
    if (!session_valid(pe_session))
        return MPI_T_ERR_INVALID_SESSION;
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_pvar_handle_alloc)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    (void)handle;
    REQUIRE_INIT();
    if (!session_valid(pe_session))
        return MPI_T_ERR_INVALID_SESSION;
    return MPI_T_ERR_INVALID_HANDLE; /* none can have been allocated */
}
FMPL_MPI_WEAK(T_pvar_handle_free)

/* Start, stop and reset: MPI_T_PVAR_ALL_HANDLES in a live session acts on
 * every handle of the session, of which there are none. */
static int pvar_all(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    REQUIRE_INIT();
    if (!session_valid(pe_session))
        return MPI_T_ERR_INVALID_SESSION;
    return handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_start(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return pvar_all(pe_session, handle);
}
FMPL_MPI_WEAK(T_pvar_start)

int PMPI_T_pvar_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return pvar_all(pe_session, handle);
}
FMPL_MPI_WEAK(T_pvar_stop)

int PMPI_T_pvar_reset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return pvar_all(pe_session, handle);
}
FMPL_MPI_WEAK(T_pvar_reset)

/* Read and write name one handle (MPI_T_PVAR_ALL_HANDLES is not allowed). */
static int pvar_one(MPI_T_pvar_session pe_session)
{
    REQUIRE_INIT();
    if (!session_valid(pe_session))
        return MPI_T_ERR_INVALID_SESSION;
    return MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    (void)handle, (void)buf;
    return pvar_one(pe_session);
}
FMPL_MPI_WEAK(T_pvar_read)

int PMPI_T_pvar_readreset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    (void)handle, (void)buf;
    return pvar_one(pe_session);
}
FMPL_MPI_WEAK(T_pvar_readreset)

int PMPI_T_pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    (void)handle, (void)buf;
    return pvar_one(pe_session);
}
FMPL_MPI_WEAK(T_pvar_write)

/* ------------------------------------------------------------ categories */

int PMPI_T_category_get_num(int *num_cat)
{
    REQUIRE_INIT();
    if (!num_cat)
        return MPI_T_ERR_INVALID;
    *num_cat = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_category_get_num)

int PMPI_T_category_changed(int *update_number)
{
    REQUIRE_INIT();
    if (!update_number)
        return MPI_T_ERR_INVALID;
    *update_number = 0; /* the set of variables never changes */
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_category_changed)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    REQUIRE_INIT();
    if (!name || !cat_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
FMPL_MPI_WEAK(T_category_get_index)

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    (void)cat_index, (void)name, (void)name_len, (void)desc, (void)desc_len;
    (void)num_cvars, (void)num_pvars, (void)num_categories;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_category_get_info)

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    (void)cat_index, (void)num_events;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_category_get_num_events)

/* The member lists of a category. */
static int category_members(int cat_index, int len, int indices[])
{
    (void)cat_index, (void)len, (void)indices;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return category_members(cat_index, len, indices);
}
FMPL_MPI_WEAK(T_category_get_categories)

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_members(cat_index, len, indices);
}
FMPL_MPI_WEAK(T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_members(cat_index, len, indices);
}
FMPL_MPI_WEAK(T_category_get_pvars)

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return category_members(cat_index, len, indices);
}
FMPL_MPI_WEAK(T_category_get_events)

/* ------------------------------------------------------------ events and sources */

int PMPI_T_event_get_num(int *num_events)
{
    REQUIRE_INIT();
    if (!num_events)
        return MPI_T_ERR_INVALID;
    *num_events = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_event_get_num)

int PMPI_T_source_get_num(int *num_sources)
{
    REQUIRE_INIT();
    if (!num_sources)
        return MPI_T_ERR_INVALID;
    *num_sources = 0;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(T_source_get_num)

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    REQUIRE_INIT();
    if (!name || !event_index)
        return MPI_T_ERR_INVALID;
    return MPI_T_ERR_INVALID_NAME;
}
FMPL_MPI_WEAK(T_event_get_index)

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_event_get_info)

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc,
                           int *desc_len, MPI_T_source_order *ordering,
                           MPI_Count *ticks_per_second, MPI_Count *max_ticks, MPI_Info *info)
{
    (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len, (void)ordering;
    (void)ticks_per_second, (void)max_ticks, (void)info;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    (void)source_index, (void)timestamp;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_source_get_timestamp)

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    REQUIRE_INIT();
    return MPI_T_ERR_INVALID_INDEX;
}
FMPL_MPI_WEAK(T_event_handle_alloc)

/* Every call on a registration or an event instance: none can exist. */
#define NO_EVENT_OBJECT()                                                                  \
    do {                                                                                   \
        REQUIRE_INIT();                                                                    \
        return MPI_T_ERR_INVALID_HANDLE;                                                   \
    } while (0)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_handle_free)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration,
                                 MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_handle_get_info)

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_handle_set_info)

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data;
    (void)event_cb_function;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_register_callback)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_callback_get_info)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_callback_set_info)

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_set_dropped_handler)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_copy)

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_read)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_get_source)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    NO_EVENT_OBJECT();
}
FMPL_MPI_WEAK(T_event_get_timestamp)
