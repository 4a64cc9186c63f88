/* The parts of the Fortran binding that gen_fortran.py does not generate:
 * the sentinels' common blocks, string conversions, the attribute calls
 * (whose value's meaning depends on the keyval), the calls taking Fortran
 * callbacks that C calls back with other arguments (attribute copy/delete
 * functions, generalized requests), the predefined Fortran callbacks, and
 * the MPI-1 functions removed in MPI-3.0 (INTEGER addresses). */
#include "api/fortran/fortran.h"
#include "api/mpi/mpi_impl.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The predefined callbacks below are routines of their own in Fortran; in C
 * these names are macros (mpi.h). */
#undef MPI_NULL_COPY_FN
#undef MPI_NULL_DELETE_FN
#undef MPI_DUP_FN
#undef MPI_COMM_NULL_COPY_FN
#undef MPI_COMM_NULL_DELETE_FN
#undef MPI_COMM_DUP_FN
#undef MPI_TYPE_NULL_COPY_FN
#undef MPI_TYPE_NULL_DELETE_FN
#undef MPI_TYPE_DUP_FN
#undef MPI_WIN_NULL_COPY_FN
#undef MPI_WIN_NULL_DELETE_FN
#undef MPI_WIN_DUP_FN

/* Aligned as gfortran aligns common blocks (the linker merges these with
 * the modules' own declarations of them). */
#define COMMON_BLOCK __attribute__((aligned(32)))
struct fmpl_f_mpipriv1 mpipriv1_ COMMON_BLOCK;
struct fmpl_f_mpipriv2 mpipriv2_ COMMON_BLOCK;
struct fmpl_f_mpiprivc mpiprivc_ COMMON_BLOCK;
struct fmpl_f_intblock mpifcmb5_ COMMON_BLOCK, mpifcmb9_ COMMON_BLOCK;

/* ------------------------------------------------------------------ strings */

static char *owned(fmpl_f_strings *s, size_t size)
{
    if (s->count == (int)(sizeof s->owned / sizeof s->owned[0])) {
        fprintf(stderr, "FMPL: internal error: too many string arguments in one Fortran call\n");
        abort();
    }
    char *p = calloc(1, size);
    if (!p) {
        fprintf(stderr, "FMPL: out of memory converting a Fortran string argument\n");
        abort();
    }
    s->owned[s->count++] = p;
    return p;
}

const char *fmpl_f_string_in(fmpl_f_strings *s, const char *f, size_t len)
{
    while (len > 0 && f[len - 1] == ' ')
        len--;
    char *c = owned(s, len + 1);
    memcpy(c, f, len);
    return c;
}

char *fmpl_f_string_buffer(fmpl_f_strings *s, size_t len)
{
    return owned(s, len + MPI_MAX_LIBRARY_VERSION_STRING + 1);
}

void fmpl_f_string_out(char *f, size_t len, const char *c)
{
    size_t n = strlen(c);
    if (n > len)
        n = len;
    memcpy(f, c, n);
    memset(f + n, ' ', len - n);
}

void fmpl_f_strings_free(fmpl_f_strings *s)
{
    for (int i = 0; i < s->count; i++)
        free(s->owned[i]);
    s->count = 0;
}

/* --------------------------------------------------------------- attributes */

/* A predefined attribute's C value is a pointer to it, except MPI_WIN_BASE's
 * (the address itself); Fortran gets the value.  MPICH's Fortran keyvals are
 * the C keyvals plus one.  A user keyval's value is whatever was stored. */
enum attr_form { ATTR_STORED, ATTR_INT, ATTR_AINT, ATTR_ADDRESS };

static enum attr_form predefined_attr(MPI_Fint keyval, int *c_keyval)
{
    static const struct {
        int c_keyval;
        enum attr_form form;
    } predefined[] = {
        {MPI_TAG_UB, ATTR_INT},         {MPI_HOST, ATTR_INT},
        {MPI_IO, ATTR_INT},             {MPI_WTIME_IS_GLOBAL, ATTR_INT},
        {MPI_UNIVERSE_SIZE, ATTR_INT},  {MPI_LASTUSEDCODE, ATTR_INT},
        {MPI_APPNUM, ATTR_INT},         {MPI_WIN_BASE, ATTR_ADDRESS},
        {MPI_WIN_SIZE, ATTR_AINT},      {MPI_WIN_DISP_UNIT, ATTR_INT},
        {MPI_WIN_CREATE_FLAVOR, ATTR_INT}, {MPI_WIN_MODEL, ATTR_INT},
    };
    for (size_t i = 0; i < sizeof predefined / sizeof predefined[0]; i++)
        if (keyval == predefined[i].c_keyval + 1) {
            *c_keyval = predefined[i].c_keyval;
            return predefined[i].form;
        }
    *c_keyval = keyval;
    return ATTR_STORED;
}

typedef int get_attr_fn(int object, int keyval, void *value, int *flag);

static int get_attr(get_attr_fn *get, int object, MPI_Fint keyval, MPI_Aint *value,
                    MPI_Fint *flag)
{
    int c_keyval, found = 0;
    enum attr_form form = predefined_attr(keyval, &c_keyval);
    void *v = NULL;
    int rc = get(object, c_keyval, &v, &found);
    *flag = rc == MPI_SUCCESS && found;
    if (!*flag)
        return rc;
    switch (form) {
    case ATTR_INT: *value = *(const int *)v; break;
    case ATTR_AINT: *value = *(const MPI_Aint *)v; break;
    case ATTR_STORED:
    case ATTR_ADDRESS: *value = (MPI_Aint)v; break;
    }
    return rc;
}

void pmpi_comm_get_attr_(const MPI_Comm *comm, const MPI_Fint *keyval, MPI_Aint *value,
                         MPI_Fint *flag, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, get_attr(PMPI_Comm_get_attr, *comm, *keyval, value, flag));
}
FMPL_F_NAMES(comm_get_attr, COMM_GET_ATTR)
FMPL_F_F08_NAMES(comm_get_attr, pmpi_comm_get_attr_)

void pmpi_type_get_attr_(const MPI_Datatype *type, const MPI_Fint *keyval, MPI_Aint *value,
                         MPI_Fint *flag, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, get_attr(PMPI_Type_get_attr, *type, *keyval, value, flag));
}
FMPL_F_NAMES(type_get_attr, TYPE_GET_ATTR)
FMPL_F_F08_NAMES(type_get_attr, pmpi_type_get_attr_)

void pmpi_win_get_attr_(const MPI_Win *win, const MPI_Fint *keyval, MPI_Aint *value,
                        MPI_Fint *flag, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, get_attr(PMPI_Win_get_attr, *win, *keyval, value, flag));
}
FMPL_F_NAMES(win_get_attr, WIN_GET_ATTR)
FMPL_F_F08_NAMES(win_get_attr, pmpi_win_get_attr_)

/* MPI-1's MPI_ATTR_GET/PUT: INTEGER attribute values. */
void pmpi_attr_get_(const MPI_Comm *comm, const MPI_Fint *keyval, MPI_Fint *value,
                    MPI_Fint *flag, MPI_Fint *ierror)
{
    MPI_Aint v = 0;
    int rc = get_attr(PMPI_Comm_get_attr, *comm, *keyval, &v, flag);
    if (*flag)
        *value = (MPI_Fint)v;
    fmpl_f_set_ierror(ierror, rc);
}
FMPL_F_NAMES(attr_get, ATTR_GET)

void pmpi_attr_put_(const MPI_Comm *comm, const MPI_Fint *keyval, const MPI_Fint *value,
                    MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, PMPI_Comm_set_attr(*comm, *keyval, (void *)(MPI_Aint)*value));
}
FMPL_F_NAMES(attr_put, ATTR_PUT)

/* ------------------------------------------------------------------ keyvals */

/* A Fortran copy callback: (object, keyval, extra_state, value_in,
 * value_out, flag, ierror), all by reference.  MPI-2's take address-sized
 * values; MPI-1's (MPI_KEYVAL_CREATE) INTEGERs. */
typedef void fortran_copy_fn(MPI_Fint *, MPI_Fint *, void *, void *, void *, MPI_Fint *,
                             MPI_Fint *);
typedef void fortran_delete_fn(MPI_Fint *, MPI_Fint *, void *, void *, MPI_Fint *);

/* What the C keyval carries as its extra_state.  It lives as long as the
 * library may call back: to the end (a freed keyval's attributes may still
 * be deleted later), on a list so that it stays reachable. */
typedef struct fortran_keyval {
    struct fortran_keyval *next;
    fortran_copy_fn *copy;
    fortran_delete_fn *del;
    int integer_values; /* MPI-1 */
    MPI_Aint extra_state;
    MPI_Fint extra_state_int;
} fortran_keyval;

static fortran_keyval *_Atomic all_keyvals;

static int copy_trampoline(int old, int keyval, void *extra, void *in, void *out, int *flag)
{
    fortran_keyval *k = extra;
    MPI_Fint f_old = old, f_keyval = keyval, f_flag = 0, ierror = MPI_SUCCESS;
    MPI_Aint v_in = (MPI_Aint)in, v_out = 0;
    MPI_Fint i_in = (MPI_Fint)v_in, i_out = 0;
    if (k->integer_values)
        k->copy(&f_old, &f_keyval, &k->extra_state_int, &i_in, &i_out, &f_flag, &ierror);
    else
        k->copy(&f_old, &f_keyval, &k->extra_state, &v_in, &v_out, &f_flag, &ierror);
    *flag = f_flag != 0;
    if (*flag)
        *(void **)out = (void *)(k->integer_values ? (MPI_Aint)i_out : v_out);
    return ierror;
}

static int delete_trampoline(int object, int keyval, void *value, void *extra)
{
    fortran_keyval *k = extra;
    MPI_Fint f_object = object, f_keyval = keyval, ierror = MPI_SUCCESS;
    MPI_Aint v = (MPI_Aint)value;
    MPI_Fint i = (MPI_Fint)v;
    if (k->integer_values)
        k->del(&f_object, &f_keyval, &i, &k->extra_state_int, &ierror);
    else
        k->del(&f_object, &f_keyval, &v, &k->extra_state, &ierror);
    return ierror;
}

typedef int create_keyval_fn(MPI_Comm_copy_attr_function *, MPI_Comm_delete_attr_function *,
                             int *, void *);

static int create_keyval(create_keyval_fn *create, fortran_copy_fn *copy, fortran_delete_fn *del,
                         MPI_Fint *keyval, MPI_Aint extra_state, int integer_values)
{
    fortran_keyval *k = malloc(sizeof *k);
    if (!k)
        return MPI_ERR_NO_MEM;
    *k = (fortran_keyval){NULL, copy, del, integer_values, extra_state, (MPI_Fint)extra_state};
    int rc = create(copy_trampoline, delete_trampoline, keyval, k);
    if (rc != MPI_SUCCESS) {
        free(k);
        return rc;
    }
    k->next = atomic_load(&all_keyvals);
    while (!atomic_compare_exchange_weak(&all_keyvals, &k->next, k))
        ;
    return rc;
}

void pmpi_comm_create_keyval_(fortran_copy_fn *copy, fortran_delete_fn *del, MPI_Fint *keyval,
                              const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror,
                      create_keyval(PMPI_Comm_create_keyval, copy, del, keyval, *extra_state, 0));
}
FMPL_F_NAMES(comm_create_keyval, COMM_CREATE_KEYVAL)
FMPL_F_F08_NAMES(comm_create_keyval, pmpi_comm_create_keyval_)

void pmpi_type_create_keyval_(fortran_copy_fn *copy, fortran_delete_fn *del, MPI_Fint *keyval,
                              const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror,
                      create_keyval(PMPI_Type_create_keyval, copy, del, keyval, *extra_state, 0));
}
FMPL_F_NAMES(type_create_keyval, TYPE_CREATE_KEYVAL)
FMPL_F_F08_NAMES(type_create_keyval, pmpi_type_create_keyval_)

void pmpi_win_create_keyval_(fortran_copy_fn *copy, fortran_delete_fn *del, MPI_Fint *keyval,
                             const MPI_Aint *extra_state, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror,
                      create_keyval(PMPI_Win_create_keyval, copy, del, keyval, *extra_state, 0));
}
FMPL_F_NAMES(win_create_keyval, WIN_CREATE_KEYVAL)
FMPL_F_F08_NAMES(win_create_keyval, pmpi_win_create_keyval_)

void pmpi_keyval_create_(fortran_copy_fn *copy, fortran_delete_fn *del, MPI_Fint *keyval,
                         const MPI_Fint *extra_state, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror,
                      create_keyval(PMPI_Comm_create_keyval, copy, del, keyval, *extra_state, 1));
}
FMPL_F_NAMES(keyval_create, KEYVAL_CREATE)

/* The predefined callbacks, as Fortran routines.  Comm, type and window
 * variants are one function each (same arguments). */
void pmpi_comm_null_copy_fn_(MPI_Fint *old, MPI_Fint *keyval, void *extra, void *in, void *out,
                             MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra, (void)in, (void)out;
    *flag = 0;
    *ierror = MPI_SUCCESS;
}
FMPL_F_NAMES(comm_null_copy_fn, COMM_NULL_COPY_FN)
FMPL_F_NAMES_OF(type_null_copy_fn, TYPE_NULL_COPY_FN, pmpi_comm_null_copy_fn_)
FMPL_F_NAMES_OF(win_null_copy_fn, WIN_NULL_COPY_FN, pmpi_comm_null_copy_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_comm_null_copy_fn, pmpi_comm_null_copy_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_type_null_copy_fn, pmpi_comm_null_copy_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_win_null_copy_fn, pmpi_comm_null_copy_fn_)
FMPL_F_NAMES_OF(null_copy_fn, NULL_COPY_FN, pmpi_comm_null_copy_fn_)

void pmpi_comm_null_delete_fn_(MPI_Fint *object, MPI_Fint *keyval, void *value, void *extra,
                               MPI_Fint *ierror)
{
    (void)object, (void)keyval, (void)value, (void)extra;
    *ierror = MPI_SUCCESS;
}
FMPL_F_NAMES(comm_null_delete_fn, COMM_NULL_DELETE_FN)
FMPL_F_NAMES_OF(type_null_delete_fn, TYPE_NULL_DELETE_FN, pmpi_comm_null_delete_fn_)
FMPL_F_NAMES_OF(win_null_delete_fn, WIN_NULL_DELETE_FN, pmpi_comm_null_delete_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_comm_null_delete_fn, pmpi_comm_null_delete_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_type_null_delete_fn, pmpi_comm_null_delete_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_win_null_delete_fn, pmpi_comm_null_delete_fn_)
FMPL_F_NAMES_OF(null_delete_fn, NULL_DELETE_FN, pmpi_comm_null_delete_fn_)

void pmpi_comm_dup_fn_(MPI_Fint *old, MPI_Fint *keyval, void *extra, MPI_Aint *in, MPI_Aint *out,
                       MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra;
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}
FMPL_F_NAMES(comm_dup_fn, COMM_DUP_FN)
FMPL_F_NAMES_OF(type_dup_fn, TYPE_DUP_FN, pmpi_comm_dup_fn_)
FMPL_F_NAMES_OF(win_dup_fn, WIN_DUP_FN, pmpi_comm_dup_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_comm_dup_fn, pmpi_comm_dup_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_type_dup_fn, pmpi_comm_dup_fn_)
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_win_dup_fn, pmpi_comm_dup_fn_)

void pmpi_dup_fn_(MPI_Fint *old, MPI_Fint *keyval, void *extra, MPI_Fint *in, MPI_Fint *out,
                  MPI_Fint *flag, MPI_Fint *ierror)
{
    (void)old, (void)keyval, (void)extra;
    *out = *in;
    *flag = 1;
    *ierror = MPI_SUCCESS;
}
FMPL_F_NAMES(dup_fn, DUP_FN)

/* ----------------------------------------------------- generalized requests */

typedef void fortran_query_fn(MPI_Aint *, MPI_Fint *, MPI_Fint *);
typedef void fortran_free_fn(MPI_Aint *, MPI_Fint *);
typedef void fortran_cancel_fn(MPI_Aint *, MPI_Fint *, MPI_Fint *);

typedef struct {
    fortran_query_fn *query;
    fortran_free_fn *free;
    fortran_cancel_fn *cancel;
    MPI_Aint extra_state;
} fortran_grequest;

static int grequest_query(void *extra, MPI_Status *status)
{
    fortran_grequest *g = extra;
    MPI_Fint ierror = MPI_SUCCESS;
    g->query(&g->extra_state, (MPI_Fint *)(void *)status, &ierror);
    return ierror;
}

static int grequest_free(void *extra)
{
    fortran_grequest *g = extra;
    MPI_Fint ierror = MPI_SUCCESS;
    g->free(&g->extra_state, &ierror);
    free(g);
    return ierror;
}

static int grequest_cancel(void *extra, int complete)
{
    fortran_grequest *g = extra;
    MPI_Fint f_complete = complete != 0, ierror = MPI_SUCCESS;
    g->cancel(&g->extra_state, &f_complete, &ierror);
    return ierror;
}

void pmpi_grequest_start_(fortran_query_fn *query, fortran_free_fn *free_fn,
                          fortran_cancel_fn *cancel, const MPI_Aint *extra_state,
                          MPI_Request *request, MPI_Fint *ierror)
{
    fortran_grequest *g = malloc(sizeof *g);
    if (!g) {
        fmpl_f_set_ierror(ierror, MPI_ERR_NO_MEM);
        return;
    }
    *g = (fortran_grequest){query, free_fn, cancel, *extra_state};
    int rc = PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, g, request);
    if (rc != MPI_SUCCESS)
        free(g);
    fmpl_f_set_ierror(ierror, rc);
}
FMPL_F_NAMES(grequest_start, GREQUEST_START)
FMPL_F_F08_NAMES(grequest_start, pmpi_grequest_start_)

/* ----------------------------------------- MPI-1, removed in MPI-3.0 */

/* Addresses and extents as default INTEGERs, as MPI-1 had them: values
 * that do not fit are an error (MPI_ERR_ARG), not a silent truncation. */
static int to_fint(int rc, MPI_Aint v, MPI_Fint *out)
{
    if (rc != MPI_SUCCESS)
        return rc;
    if (v != (MPI_Fint)v)
        return MPI_ERR_ARG;
    *out = (MPI_Fint)v;
    return MPI_SUCCESS;
}

void pmpi_address_(void *location, MPI_Fint *address, MPI_Fint *ierror)
{
    MPI_Aint a = 0;
    fmpl_f_set_ierror(ierror, to_fint(PMPI_Get_address(FMPL_F_BUFFER(location), &a), a, address));
}
FMPL_F_NAMES(address, ADDRESS)

void pmpi_type_extent_(const MPI_Datatype *type, MPI_Fint *extent, MPI_Fint *ierror)
{
    MPI_Aint lb = 0, e = 0;
    fmpl_f_set_ierror(ierror, to_fint(PMPI_Type_get_extent(*type, &lb, &e), e, extent));
}
FMPL_F_NAMES(type_extent, TYPE_EXTENT)

void pmpi_type_lb_(const MPI_Datatype *type, MPI_Fint *displacement, MPI_Fint *ierror)
{
    MPI_Aint lb = 0, e = 0;
    fmpl_f_set_ierror(ierror, to_fint(PMPI_Type_get_extent(*type, &lb, &e), lb, displacement));
}
FMPL_F_NAMES(type_lb, TYPE_LB)

void pmpi_type_ub_(const MPI_Datatype *type, MPI_Fint *displacement, MPI_Fint *ierror)
{
    MPI_Aint lb = 0, e = 0;
    fmpl_f_set_ierror(ierror,
                      to_fint(PMPI_Type_get_extent(*type, &lb, &e), lb + e, displacement));
}
FMPL_F_NAMES(type_ub, TYPE_UB)

void pmpi_type_hvector_(const MPI_Fint *count, const MPI_Fint *blocklength,
                        const MPI_Fint *stride, const MPI_Datatype *oldtype,
                        MPI_Datatype *newtype, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror,
                      PMPI_Type_create_hvector(*count, *blocklength, *stride, *oldtype, newtype));
}
FMPL_F_NAMES(type_hvector, TYPE_HVECTOR)

static MPI_Aint *widen(const MPI_Fint *v, MPI_Fint n)
{
    MPI_Aint *w = malloc((n > 0 ? (size_t)n : 1) * sizeof *w);
    for (MPI_Fint i = 0; w && i < n; i++)
        w[i] = v[i];
    return w;
}

void pmpi_type_hindexed_(const MPI_Fint *count, const MPI_Fint *blocklengths,
                         const MPI_Fint *displacements, const MPI_Datatype *oldtype,
                         MPI_Datatype *newtype, MPI_Fint *ierror)
{
    MPI_Aint *d = widen(displacements, *count);
    int rc = d ? PMPI_Type_create_hindexed(*count, blocklengths, d, *oldtype, newtype)
               : MPI_ERR_NO_MEM;
    free(d);
    fmpl_f_set_ierror(ierror, rc);
}
FMPL_F_NAMES(type_hindexed, TYPE_HINDEXED)

void pmpi_type_struct_(const MPI_Fint *count, const MPI_Fint *blocklengths,
                       const MPI_Fint *displacements, const MPI_Datatype *types,
                       MPI_Datatype *newtype, MPI_Fint *ierror)
{
    MPI_Aint *d = widen(displacements, *count);
    int rc = d ? PMPI_Type_create_struct(*count, blocklengths, d, types, newtype)
               : MPI_ERR_NO_MEM;
    free(d);
    fmpl_f_set_ierror(ierror, rc);
}
FMPL_F_NAMES(type_struct, TYPE_STRUCT)

void pmpi_errhandler_create_(MPI_Comm_errhandler_function *function, MPI_Errhandler *errhandler,
                             MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, PMPI_Comm_create_errhandler(function, errhandler));
}
FMPL_F_NAMES(errhandler_create, ERRHANDLER_CREATE)

void pmpi_errhandler_set_(const MPI_Comm *comm, const MPI_Errhandler *errhandler,
                          MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, PMPI_Comm_set_errhandler(*comm, *errhandler));
}
FMPL_F_NAMES(errhandler_set, ERRHANDLER_SET)

void pmpi_errhandler_get_(const MPI_Comm *comm, MPI_Errhandler *errhandler, MPI_Fint *ierror)
{
    fmpl_f_set_ierror(ierror, PMPI_Comm_get_errhandler(*comm, errhandler));
}
FMPL_F_NAMES(errhandler_get, ERRHANDLER_GET)

/* MPI_F_SYNC_REG(buf): its only effect is that the compiler must assume the
 * buffer is read and written here (the call is opaque to it). */
void pmpi_f_sync_reg_(void *buf)
{
    __asm__ volatile("" : : "r"(buf) : "memory");
}
FMPL_F_NAMES(f_sync_reg, F_SYNC_REG)

int fmpl_f_string_arrays_unsupported(const char *func)
{
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, func,
                          "%s is not available from Fortran yet (its arrays of Fortran strings "
                          "are not converted); it works from C", func);
}
