/* Parameterized Fortran 90 types: MPI_Type_create_f90_real, _complex and
 * _integer (MPI-4.0 19.1.9).
 *
 * Each call selects the smallest kind gfortran has whose decimal precision
 * and exponent range (as Fortran's SELECTED_REAL_KIND and
 * SELECTED_INT_KIND count them) reach the arguments; MPI_UNDEFINED leaves
 * one of p and r free.  The type it returns behaves as that sized type
 * (MPI_REAL8, MPI_INTEGER4, ...) in every operation, but is its own handle:
 * MPI_Type_get_envelope reports MPI_COMBINER_F90_REAL (COMPLEX, INTEGER)
 * with the arguments as its integers, and the standard makes it predefined,
 * so MPI_Type_free refuses it.  The same arguments return the same handle
 * (one type per distinct (kind of call, p, r), kept for the life of the
 * process, as the datatype table keeps its types),
 * as the standard allows and MPICH does, so programs may call it in loops. */
#include "api/mpi/mpi_impl.h"

typedef struct f90_type {
    int combiner; /* MPI_COMBINER_F90_* */
    int p, r;     /* the arguments (p unused for integers) */
    MPI_Datatype handle;
} f90_type;

enum { F90_MAX = 64 }; /* distinct calls: far more than there are kinds */
static f90_type made[F90_MAX];
static int nmade;

/* gfortran's kinds: precision and range of REAL(4), REAL(8), REAL(16) (IEEE
 * binary128), and range of INTEGER(1, 2, 4, 8). */
static const struct {
    int precision, range;
    MPI_Datatype real, complex;
} reals[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};
static const struct {
    int range;
    MPI_Datatype type;
} integers[] = {{2, MPI_INTEGER1}, {4, MPI_INTEGER2}, {9, MPI_INTEGER4}, {18, MPI_INTEGER8}};

int fmpl_mpi_type_f90_params(MPI_Datatype t, int *combiner, int ints[2], int *nints)
{
    for (int i = 0; i < nmade; i++) {
        if (made[i].handle != t)
            continue;
        *combiner = made[i].combiner;
        if (made[i].combiner == MPI_COMBINER_F90_INTEGER) {
            ints[0] = made[i].r;
            *nints = 1;
        } else {
            ints[0] = made[i].p;
            ints[1] = made[i].r;
            *nints = 2;
        }
        return 1;
    }
    return 0;
}

static int make(const char *func, int combiner, int p, int r, MPI_Datatype base,
                MPI_Datatype *newtype)
{
    if (!newtype)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func, "newtype is NULL");
    for (int i = 0; i < nmade; i++)
        if (made[i].combiner == combiner && made[i].p == p && made[i].r == r) {
            *newtype = made[i].handle;
            return MPI_SUCCESS;
        }
    if (nmade == F90_MAX)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_INTERN, func,
                              "more than %d distinct parameterized types", F90_MAX);
    MPI_Datatype t;
    int rc = PMPI_Type_dup(base, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    made[nmade++] = (f90_type){combiner, p, r, t};
    *newtype = t;
    return MPI_SUCCESS;
}

static int select_real(const char *func, int p, int r, int complex, MPI_Datatype *newtype)
{
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                              "p and r are both MPI_UNDEFINED");
    for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++)
        if ((p == MPI_UNDEFINED || p <= reals[k].precision) &&
            (r == MPI_UNDEFINED || r <= reals[k].range))
            return make(func, complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r,
                        complex ? reals[k].complex : reals[k].real, newtype);
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                          "no %s kind has precision %d and range %d (REAL(16): 33 and 4931)",
                          complex ? "COMPLEX" : "REAL", p, r);
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    return select_real("MPI_Type_create_f90_real", p, r, 0, newtype);
}
FMPL_MPI_WEAK(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    return select_real("MPI_Type_create_f90_complex", p, r, 1, newtype);
}
FMPL_MPI_WEAK(Type_create_f90_complex)

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Type_create_f90_integer";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    for (size_t k = 0; k < sizeof integers / sizeof integers[0]; k++)
        if (r <= integers[k].range)
            return make(func, MPI_COMBINER_F90_INTEGER, 0, r, integers[k].type, newtype);
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, func,
                          "no INTEGER kind has range %d (INTEGER(8): 18)", r);
}
FMPL_MPI_WEAK(Type_create_f90_integer)
