/* User error handlers for communicators, and user error classes, codes and
 * strings.
 *
 * Error handlers are reference counted: the handle the user holds is one
 * reference and every communicator using the handler another, so that the
 * usual create / set / MPI_Errhandler_free sequence keeps the handler alive
 * as long as a communicator has it (MPI 9.3.4).  The predefined handlers
 * are not counted.  MPI_Comm_get_errhandler hands out a new reference.
 *
 * User error classes and codes are numbered from MPI_ERR_LASTCODE + 1 in
 * the order they are added, classes and codes alike; a class is its own
 * class.  MPI_LASTUSEDCODE is the largest value handed out. */
#include "api/mpi/mpi_objects.h"

#include <stdlib.h>
#include <string.h>

typedef struct errhandler {
    MPI_Comm_errhandler_function *fn; /* a window's has the same C type under
                                         the MPICH ABI (handles are ints) */
    int object;                       /* FMPL_HK_COMM, _WIN, _SESSION or _FILE */
    int refs;
} errhandler;

static fmpl_mpi_table handlers = FMPL_MPI_TABLE_INIT(FMPL_HK_ERRHANDLER);

#define ERR(code, func, ...) fmpl_mpi_error(MPI_COMM_WORLD, (code), (func), __VA_ARGS__)

static int is_predefined(MPI_Errhandler h)
{
    return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT;
}

int fmpl_mpi_errhandler_valid(MPI_Errhandler h)
{
    return is_predefined(h) || fmpl_mpi_table_get(&handlers, h) != NULL;
}

int fmpl_mpi_errhandler_valid_for(MPI_Errhandler h, int object)
{
    errhandler *e = fmpl_mpi_table_get(&handlers, h);
    return is_predefined(h) || (e && e->object == object);
}

void fmpl_mpi_errhandler_ref(MPI_Errhandler h)
{
    errhandler *e = fmpl_mpi_table_get(&handlers, h);
    if (e)
        e->refs++;
}

void fmpl_mpi_errhandler_unref(MPI_Errhandler h)
{
    errhandler *e = fmpl_mpi_table_get(&handlers, h);
    if (e && --e->refs == 0) {
        fmpl_mpi_table_remove(&handlers, h);
        free(e);
    }
}

void fmpl_mpi_errhandler_replace(MPI_Errhandler *slot, MPI_Errhandler h)
{
    fmpl_mpi_errhandler_ref(h); /* first: h may be the one in the slot */
    fmpl_mpi_errhandler_unref(*slot);
    *slot = h;
}

int fmpl_mpi_errhandler_call_user(MPI_Errhandler h, MPI_Comm comm, int code)
{
    errhandler *e = fmpl_mpi_table_get(&handlers, h);
    if (!e)
        return 0;
    /* The handler may free the communicator or its own handle: hold it. */
    e->refs++;
    int err = code;
    if (e->object == FMPL_HK_FILE) {
        /* A file handler takes an MPI_File *, a pointer-sized handle; the
         * only file there is yet is MPI_FILE_NULL (file.c). */
        MPI_File f = MPI_FILE_NULL;
        ((MPI_File_errhandler_function *)(void (*)(void))e->fn)(&f, &err);
    } else {
        MPI_Comm c = comm;
        e->fn(&c, &err);
    }
    fmpl_mpi_errhandler_unref(h);
    return 1;
}

void fmpl_mpi_errhandlers_finalize(void) { fmpl_mpi_table_clear(&handlers, free); }

int fmpl_mpi_errhandler_new(MPI_Comm_errhandler_function *fn, int object,
                            MPI_Errhandler *errhandler)
{
    struct errhandler *e = malloc(sizeof *e);
    if (!e)
        return MPI_ERR_NO_MEM;
    e->fn = fn;
    e->object = object;
    e->refs = 1;
    int rc = fmpl_mpi_table_add(&handlers, e, errhandler);
    if (rc != MPI_SUCCESS)
        free(e);
    return rc;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    return fmpl_mpi_errhandler_create(fn, FMPL_HK_COMM, errhandler,
                                      "MPI_Comm_create_errhandler");
}
FMPL_MPI_WEAK(Comm_create_errhandler)

int fmpl_mpi_errhandler_create(MPI_Comm_errhandler_function *fn, int object,
                               MPI_Errhandler *errhandler, const char *func)
{
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!fn || !errhandler)
        return ERR(MPI_ERR_ARG, func, "the function or errhandler is NULL");
    int rc = fmpl_mpi_errhandler_new(fn, object, errhandler);
    if (rc != MPI_SUCCESS)
        return ERR(rc, func, "no memory for an error handler");
    return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!errhandler || !fmpl_mpi_errhandler_valid(*errhandler))
        return ERR(MPI_ERR_ARG, "MPI_Errhandler_free", "invalid error handler 0x%x",
                   errhandler ? (unsigned)*errhandler : 0u);
    fmpl_mpi_errhandler_unref(*errhandler); /* predefined: nothing to free */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Errhandler_free)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    if (!fmpl_mpi_comm_get(comm))
        return ERR(MPI_ERR_COMM, "MPI_Comm_call_errhandler", "invalid communicator 0x%x",
                   (unsigned)comm);
    /* MPI_SUCCESS once the handler returned (MPI 9.3.5). */
    fmpl_mpi_error(comm, errorcode, "MPI_Comm_call_errhandler",
                   "error code %d raised by the application", errorcode);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_call_errhandler)

/* The MPI-1 names, removed in MPI-3.0 but declared by MPICH's mpi.h. */
int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    return PMPI_Comm_create_errhandler(function, errhandler);
}
FMPL_MPI_WEAK(Errhandler_create)

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    FMPL_CORE_GUARD();
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
FMPL_MPI_WEAK(Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    FMPL_CORE_GUARD();
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
FMPL_MPI_WEAK(Errhandler_get)

/* ------------------------------------------------------------ user error codes */

typedef struct user_code {
    int cls;                      /* its class (a class: itself) */
    int live_codes;               /* a user class: its codes not removed (so that
                                     removing a class checks in constant time) */
    char *string;                 /* MPI_Add_error_string's, or NULL */
} user_code;

static user_code *codes;          /* [n] values MPI_ERR_LASTCODE + 1 + i */
static int ncodes, capcodes;
int fmpl_mpi_lastusedcode = MPI_ERR_LASTCODE;

/* Marks a value MPI_Remove_error_class/code took back: it stays unused
 * (values are never handed out twice, so a stale copy cannot mean a new
 * class). */
#define REMOVED (-2)

static user_code *user_code_get(int code)
{
    if (code <= MPI_ERR_LASTCODE || code > MPI_ERR_LASTCODE + ncodes)
        return NULL;
    user_code *u = &codes[code - MPI_ERR_LASTCODE - 1];
    return u->cls == REMOVED ? NULL : u;
}

int fmpl_mpi_user_error_class(int code)
{
    user_code *u = user_code_get(code);
    return u ? u->cls : -1;
}

const char *fmpl_mpi_user_error_string(int code)
{
    user_code *u = user_code_get(code);
    return u ? (u->string ? u->string : "") : NULL;
}

static int add_code(int cls, int *value, const char *func)
{
    if (ncodes == capcodes) {
        int cap = capcodes ? 2 * capcodes : 16;
        if (cap > 0x3fffffff - 1) /* keep values positive ints */
            return ERR(MPI_ERR_NO_MEM, func, "too many user error codes");
        user_code *c = realloc(codes, (size_t)cap * sizeof *c);
        if (!c)
            return ERR(MPI_ERR_NO_MEM, func, "no memory for an error code");
        codes = c;
        capcodes = cap;
    }
    int v = MPI_ERR_LASTCODE + 1 + ncodes;
    codes[ncodes++] = (user_code){.cls = cls < 0 ? v : cls};
    user_code *owner = cls < 0 ? NULL : user_code_get(cls);
    if (owner)
        owner->live_codes++;
    fmpl_mpi_lastusedcode = v;
    *value = v;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!errorclass)
        return ERR(MPI_ERR_ARG, "MPI_Add_error_class", "errorclass is NULL");
    return add_code(-1, errorclass, "MPI_Add_error_class");
}
FMPL_MPI_WEAK(Add_error_class)

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!errorcode)
        return ERR(MPI_ERR_ARG, "MPI_Add_error_code", "errorcode is NULL");
    int predefined = errorclass >= 0 && errorclass <= MPI_T_ERR_NOT_SUPPORTED;
    if (!predefined && fmpl_mpi_user_error_class(errorclass) != errorclass)
        return ERR(MPI_ERR_ARG, "MPI_Add_error_code", "%d is not an error class", errorclass);
    return add_code(errorclass, errorcode, "MPI_Add_error_code");
}
FMPL_MPI_WEAK(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Add_error_string";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    user_code *u = user_code_get(errorcode);
    if (!u)
        return ERR(MPI_ERR_ARG, func, "%d is not a user error code or class", errorcode);
    if (!string)
        return ERR(MPI_ERR_ARG, func, "string is NULL");
    size_t len = strlen(string);
    if (len >= MPI_MAX_ERROR_STRING)
        return ERR(MPI_ERR_ARG, func, "the string has %zu characters, more than %d", len,
                   MPI_MAX_ERROR_STRING - 1);
    char *s = strdup(string);
    if (!s)
        return ERR(MPI_ERR_NO_MEM, func, "no memory");
    free(u->string);
    u->string = s;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Add_error_string)

/* The codes live on: MPI_Error_string may follow MPI_Finalize.  Their
 * strings are released at exit by the C library's process end; to keep
 * leak checkers quiet the table stays reachable through `codes`. */

/* MPI-4.1: taking back what MPI_Add_error_* gave, in the reverse order of
 * adding (MPI-4.1 9.5 makes any other order erroneous; FMPL reports it):
 * a string first, then its code, then the class once it has neither codes
 * nor a string.  Removing a string that was never added is an error too. */
int PMPI_Remove_error_class(int errorclass)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Remove_error_class";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    user_code *u = user_code_get(errorclass);
    if (!u || u->cls != errorclass)
        return ERR(MPI_ERR_ARG, func, "%d is not a user error class", errorclass);
    if (u->live_codes > 0)
        return ERR(MPI_ERR_ARG, func, "error class %d still has %d code(s)", errorclass,
                   u->live_codes);
    if (u->string)
        return ERR(MPI_ERR_ARG, func,
                   "error class %d still has its string: MPI_Remove_error_string first",
                   errorclass);
    *u = (user_code){.cls = REMOVED};
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Remove_error_class)

int PMPI_Remove_error_code(int errorcode)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    user_code *u = user_code_get(errorcode);
    if (!u || u->cls == errorcode)
        return ERR(MPI_ERR_ARG, "MPI_Remove_error_code", "%d is not a user error code",
                   errorcode);
    if (u->string)
        return ERR(MPI_ERR_ARG, "MPI_Remove_error_code",
                   "error code %d still has its string: MPI_Remove_error_string first",
                   errorcode);
    user_code *owner = user_code_get(u->cls); /* NULL for a predefined class */
    if (owner)
        owner->live_codes--;
    *u = (user_code){.cls = REMOVED};
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Remove_error_code)

int PMPI_Remove_error_string(int errorcode)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    user_code *u = user_code_get(errorcode);
    if (!u)
        return ERR(MPI_ERR_ARG, "MPI_Remove_error_string",
                   "%d is not a user error code or class", errorcode);
    if (!u->string)
        return ERR(MPI_ERR_ARG, "MPI_Remove_error_string", "%d has no string to remove",
                   errorcode);
    free(u->string);
    u->string = NULL;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Remove_error_string)
