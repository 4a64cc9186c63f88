/* MPI objects beside communicators: groups, attributes and keyvals, info
 * objects, user error handlers and user error codes; and the hooks that
 * tie them to a communicator's life (dup, free, finalize).
 *
 * Every object lives in a handle table (objects.c) whose handles follow the
 * MPICH encoding of mpi_impl.h: 0x80000000 | kind << 26 | index.  A table
 * only maps handles to pointers; each file owns its objects' contents.
 *
 *   group.c        MPI_Group_*, MPI_Comm_group (a group: world ranks)
 *   comm_create.c  MPI_Comm_create, _create_group, _split_type, _idup,
 *                  _dup_with_info, _test_inter, _remote_size/_group
 *   attr.c         keyvals, attributes, predefined attributes
 *   info.c         MPI_Info_*, MPI_INFO_ENV, MPI_Comm_set/get_info
 *   errhandler.c   user error handlers, MPI_Add_error_*, user codes
 *   objects.c      the handle tables and the communicator hooks */
#ifndef FMPL_API_MPI_OBJECTS_H
#define FMPL_API_MPI_OBJECTS_H

#include "api/mpi/mpi_impl.h"

/* The largest tag point-to-point accepts (pt2pt.c: tag > 0x7fffffff - 1 is
 * MPI_ERR_TAG), reported as the MPI_TAG_UB attribute. */
#define FMPL_MPI_TAG_UB 0x7ffffffe

/* ------------------------------------------------------------ handle tables */

typedef struct fmpl_mpi_table {
    int kind;       /* FMPL_HK_* */
    int cap;        /* slots allocated */
    int used;       /* live objects */
    void **slots;
} fmpl_mpi_table;

#define FMPL_MPI_TABLE_INIT(k) {.kind = (k)}

/* Store obj; *handle receives its dynamic handle.  MPI_SUCCESS or
 * MPI_ERR_NO_MEM. */
int fmpl_mpi_table_add(fmpl_mpi_table *t, void *obj, int *handle);
/* The object behind a dynamic handle of this table's kind, or NULL.
 * Inline: every call on an object starts with it. */
static inline void *fmpl_mpi_table_get(const fmpl_mpi_table *t, int handle)
{
    if (!fmpl_handle_is_dynamic(handle) || fmpl_handle_kind(handle) != t->kind)
        return NULL;
    int i = fmpl_handle_index(handle);
    return i < t->cap ? t->slots[i] : NULL;
}
void fmpl_mpi_table_remove(fmpl_mpi_table *t, int handle);
/* Call fn on every live object, empty the table and release its memory. */
void fmpl_mpi_table_clear(fmpl_mpi_table *t, void (*fn)(void *obj));

/* ------------------------------------------------------------ groups */

typedef struct fmpl_mpi_group {
    int size;
    MPI_Session session; /* made from a session's process set (or from such
                            groups): the session, else 0 */
    int world[];   /* world rank of each member, in group order */
} fmpl_mpi_group;

/* A group handle's object (MPI_GROUP_EMPTY included), or NULL. */
fmpl_mpi_group *fmpl_mpi_group_get(MPI_Group g);
/* A new group of n world ranks (MPI_GROUP_EMPTY if n == 0). */
int fmpl_mpi_group_make(int n, const int *world, MPI_Group *out);
/* Position of a world rank in the group, or -1. */
int fmpl_mpi_group_find(const fmpl_mpi_group *g, int world_rank);
/* This process as groups hold it: the world ranks of groups are the
 * members' universe ranks (runtime/link.c), the same numbers as world
 * ranks in a job that spawned nothing. */
static inline int fmpl_mpi_my_world_rank(void) { return fmpl_teams[0]->world[fmpl_teams[0]->rank]; }
void fmpl_mpi_groups_finalize(void);

/* ------------------------------------------------------------ attributes */

struct fmpl_mpi_attr;
/* Copy comm's attributes into newcomm through their copy callbacks
 * (MPI_Comm_dup).  On a callback's error the attributes copied so far are
 * deleted again and the error is returned. */
int fmpl_mpi_attr_copy_all(fmpl_mpi_comm *oldc, fmpl_mpi_comm *newc);
/* Delete every attribute with its delete callback, newest first
 * (MPI_Comm_free, MPI_COMM_SELF at MPI_Finalize).  Stops at the first
 * callback error, which it returns. */
int fmpl_mpi_attr_delete_all(fmpl_mpi_comm *c);
/* Release the attribute list without callbacks (MPI_Finalize). */
void fmpl_mpi_attr_drop_all(fmpl_mpi_comm *c);
void fmpl_mpi_attrs_finalize(void);
/* The same on any object's list (windows: win.c): `handle` is the object
 * (errors are reported on it, callbacks receive it), `object` or `kind`
 * its kind (FMPL_HK_COMM, FMPL_HK_WIN; keyvals are made for one kind). */
int fmpl_mpi_keyval_create(MPI_Comm_copy_attr_function *copy_fn,
                           MPI_Comm_delete_attr_function *delete_fn, int *k, void *extra,
                           int object, const char *func);
int fmpl_mpi_keyval_free(int *k, int object, const char *func);
/* A kind of object that caches attributes: its keyvals' kind, its list,
 * and its predefined attributes (which cannot be set or deleted). */
typedef struct fmpl_mpi_attr_kind {
    int object; /* FMPL_HK_COMM, FMPL_HK_WIN */
    /* *list: the object's list; or the invalid handle reported from func */
    int (*list)(int handle, const char *func, struct fmpl_mpi_attr ***list);
    /* 1 if k is predefined on the object (*value: what MPI_*_get_attr gives) */
    int (*predefined)(int handle, int k, void **value);
} fmpl_mpi_attr_kind;
int fmpl_mpi_attr_set(const fmpl_mpi_attr_kind *kind, int handle, int k, void *value,
                      const char *func);
int fmpl_mpi_attr_get(const fmpl_mpi_attr_kind *kind, int handle, int k, void *value, int *flag,
                      const char *func);
int fmpl_mpi_attr_delete(const fmpl_mpi_attr_kind *kind, int handle, int k, const char *func);
/* MPI_<Obj>_create_keyval, _free_keyval, _set_attr, _get_attr and
 * _delete_attr of a kind of object (Obj: Comm, Win; Handle: its handle
 * type). */
#define FMPL_MPI_ATTR_BINDINGS(Obj, Handle, kind)                                          \
    int PMPI_##Obj##_create_keyval(MPI_##Obj##_copy_attr_function *copy_fn,                 \
                                   MPI_##Obj##_delete_attr_function *delete_fn, int *keyval, \
                                   void *extra_state)                                       \
    {                                                                                       \
        return fmpl_mpi_keyval_create(copy_fn, delete_fn, keyval, extra_state,              \
                                      (kind)->object, "MPI_" #Obj "_create_keyval");        \
    }                                                                                       \
    FMPL_MPI_WEAK(Obj##_create_keyval)                                                      \
    int PMPI_##Obj##_free_keyval(int *keyval)                                               \
    {                                                                                       \
        return fmpl_mpi_keyval_free(keyval, (kind)->object, "MPI_" #Obj "_free_keyval");    \
    }                                                                                       \
    FMPL_MPI_WEAK(Obj##_free_keyval)                                                        \
    int PMPI_##Obj##_set_attr(Handle h, int keyval, void *attribute_val)                    \
    {                                                                                       \
        FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);                                               \
        return fmpl_mpi_attr_set((kind), h, keyval, attribute_val, "MPI_" #Obj "_set_attr"); \
    }                                                                                       \
    FMPL_MPI_WEAK(Obj##_set_attr)                                                           \
    int PMPI_##Obj##_get_attr(Handle h, int keyval, void *attribute_val, int *flag)         \
    {                                                                                       \
        FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);                                               \
        return fmpl_mpi_attr_get((kind), h, keyval, attribute_val, flag,                    \
                                 "MPI_" #Obj "_get_attr");                                  \
    }                                                                                       \
    FMPL_MPI_WEAK(Obj##_get_attr)                                                           \
    int PMPI_##Obj##_delete_attr(Handle h, int keyval)                                      \
    {                                                                                       \
        FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);                                               \
        return fmpl_mpi_attr_delete((kind), h, keyval, "MPI_" #Obj "_delete_attr");         \
    }                                                                                       \
    FMPL_MPI_WEAK(Obj##_delete_attr)
int fmpl_mpi_attr_list_delete_all(int handle, struct fmpl_mpi_attr **list);
void fmpl_mpi_attr_list_drop(struct fmpl_mpi_attr **list);
/* The value of the MPI_LASTUSEDCODE attribute (errhandler.c). */
extern int fmpl_mpi_lastusedcode;

/* ------------------------------------------------------------ info */

/* A new info object with the same keys and values; MPI_INFO_NULL copies to
 * MPI_INFO_NULL.  MPI_SUCCESS, MPI_ERR_INFO or MPI_ERR_NO_MEM. */
int fmpl_mpi_info_copy(MPI_Info in, MPI_Info *out);
/* Free an info handle made by fmpl_mpi_info_copy (MPI_INFO_NULL: nothing). */
void fmpl_mpi_info_release(MPI_Info info);
/* 1 if info is MPI_INFO_NULL, MPI_INFO_ENV or a live info object. */
int fmpl_mpi_info_valid(MPI_Info info);
/* The value of key in info into value[len], or 0 if absent. */
int fmpl_mpi_info_lookup(MPI_Info info, const char *key, char *value, int len);

/* ------------------------------------------------------------ error handlers */

/* A user handler for objects of kind `object` (FMPL_HK_COMM, FMPL_HK_WIN,
 * FMPL_HK_SESSION: their functions have the same C type under the MPICH
 * ABI): MPI_SUCCESS or MPI_ERR_NO_MEM, nothing reported, usable before MPI
 * is initialised (sessions). */
int fmpl_mpi_errhandler_new(MPI_Comm_errhandler_function *fn, int object,
                            MPI_Errhandler *errhandler);
/* 1 for the predefined handlers and live user handlers for communicators. */
int fmpl_mpi_errhandler_valid(MPI_Errhandler h);
/* 1 for the predefined handlers and live user handlers made for objects of
 * kind `object` (FMPL_HK_COMM, FMPL_HK_WIN). */
int fmpl_mpi_errhandler_valid_for(MPI_Errhandler h, int object);
/* A new user handler for objects of kind `object`; reported from func. */
int fmpl_mpi_errhandler_create(MPI_Comm_errhandler_function *fn, int object,
                               MPI_Errhandler *errhandler, const char *func);
/* Take or drop a reference a communicator holds (predefined: nothing). */
void fmpl_mpi_errhandler_ref(MPI_Errhandler h);
void fmpl_mpi_errhandler_unref(MPI_Errhandler h);
/* An object's handler slot takes h: a reference on h, the old one dropped. */
void fmpl_mpi_errhandler_replace(MPI_Errhandler *slot, MPI_Errhandler h);
/* Run a user handler with (&comm, &code).  Returns 0 if h is not one. */
int fmpl_mpi_errhandler_call_user(MPI_Errhandler h, MPI_Comm comm, int code);
/* The class of a user error code or class, or -1 if it is none. */
int fmpl_mpi_user_error_class(int code);
/* The string given to a user code or class ("" if none), or NULL if code
 * is not a user one. */
const char *fmpl_mpi_user_error_string(int code);
void fmpl_mpi_errhandlers_finalize(void);

/* ------------------------------------------------------------ communicator hooks */

/* A new communicator created from parent (split, create, dup) inherits its
 * error handler (MPI 9.3). */
void fmpl_mpi_comm_inherit(fmpl_mpi_comm *parent, fmpl_mpi_comm *child);
/* Register a team made from parent as a new communicator: *newcomm gets the
 * handle (MPI_COMM_NULL for a NULL team).  MPI error class, not reported. */
int fmpl_mpi_comm_adopt(fmpl_mpi_comm *parent, fmpl_team *t, MPI_Comm *newcomm);
/* MPI_Comm_dup's extra work: attributes (copy callbacks) and info hints.
 * On error the new communicator is released locally and the class is
 * returned (its team stays registered until MPI_Finalize). */
/* What a duplicate inherits, taken when MPI_Comm_dup / MPI_Comm_idup is
 * called (the parent may be freed before an idup completes): an
 * unregistered object holding the error handler, a copy of the info and
 * the attributes copied through their copy callbacks.  MPI_SUCCESS or the
 * first failure (nothing staged). */
int fmpl_mpi_comm_dup_stage(fmpl_mpi_comm *oldc, fmpl_mpi_comm **staged);
void fmpl_mpi_comm_dup_discard(fmpl_mpi_comm *staged);
/* Register team t as *newcomm with the staged objects (consumed). */
int fmpl_mpi_comm_dup_adopt(fmpl_mpi_comm *staged, fmpl_team *t, MPI_Comm *newcomm);
/* Move what was staged (error handler, info, attributes) into the new
 * communicator n, which has none of its own yet; frees `staged`. */
void fmpl_mpi_comm_dup_install(fmpl_mpi_comm *staged, fmpl_mpi_comm *n);
/* The end of MPI_Comm_dup and MPI_Comm_idup (comm.c): the team of the
 * finished creation `b` (released here) becomes *newcomm with the staged
 * objects (consumed), or, when staging failed (stage_rc, staged NULL), this
 * member retires the team and reports stage_rc.  Errors are reported on
 * `parent` (or, if it has been freed since, MPI_COMM_WORLD) from `func`. */
struct fmpl_team_build;
int fmpl_mpi_comm_dup_finish(MPI_Comm parent, fmpl_mpi_comm *staged, int stage_rc,
                             struct fmpl_team_build *b, MPI_Comm *newcomm, const char *func);
/* MPI_Comm_free's extra work before the team goes: delete callbacks, then
 * the info hints and the error handler reference.  A callback's error is
 * returned and the communicator stays as it was. */
int fmpl_mpi_comm_free_objects(fmpl_mpi_comm *c);
/* Release what a communicator holds without callbacks (MPI_Finalize). */
void fmpl_mpi_comm_drop_objects(fmpl_mpi_comm *c);
/* The start of MPI_Finalize, while MPI still works: MPI_COMM_SELF's
 * attributes are deleted (callbacks newest first, MPI 11.2.4). */
void fmpl_mpi_objects_finalize_begin(void);
/* After the communicators: every object table is emptied. */
void fmpl_mpi_objects_finalize(void);

#endif
