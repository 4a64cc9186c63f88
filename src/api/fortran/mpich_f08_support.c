/* The parts of MPICH's mpi_f08 ABI that gen_fortran.py does not generate
 * (see mpich_f08.h): the sentinels, choice buffers given as gfortran array
 * descriptors, MPI_Sizeof, the status conversions and MPI_F_sync_reg. */
#include "api/fortran/mpich_f08.h"
#include "api/mpi/mpi_impl.h"

#include <string.h>

/* MPICH's names and sizes (a program built against MPICH's library may
 * hold copy relocations of them). */
MPI_Fint MPIR_F08_MPI_BOTTOM, MPIR_F08_MPI_IN_PLACE;
MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[MPI_F_STATUS_SIZE];
MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[MPI_F_STATUS_SIZE];
MPI_Fint fmpl_f08_errcodes_ignore[1];
MPI_Fint fmpl_f08_unweighted[1];
MPI_Fint fmpl_f08_weights_empty[1];
/* Never compared: FMPL's MPI_Comm_spawn refuses Fortran string arrays. */
char __mpi_f08_link_constants_MOD_mpi_argv_null[1];
char __mpi_f08_link_constants_MOD_mpi_argvs_null[1];
MPI_Fint __mpi_f08_types_MOD___def_init_mpi_f08_types_Mpi_status[MPI_F_STATUS_SIZE];

/* ------------------------------------------------------ choice buffers */

void *fmpl_f_desc_address(const fmpl_f_desc *d)
{
    return FMPL_F_BUFFER(d->base_addr);
}

static ptrdiff_t dim_extent(const fmpl_f_desc_dim *dim)
{
    return dim->upper_bound - dim->lower_bound + 1;
}

/* Elements one after the other, or nothing to reach: the address will do.
 * An assumed-size array (a negative extent, last dimension) is contiguous
 * in the dimensions before it. */
static int desc_contiguous(const fmpl_f_desc *d)
{
    ptrdiff_t expect = (ptrdiff_t)d->dtype.elem_len;
    for (int k = 0; k < d->dtype.rank; k++) {
        ptrdiff_t extent = dim_extent(&d->dim[k]);
        if (extent == 0)
            return 1;
        if (extent < 0)
            break;
        if (extent > 1 && d->dim[k].stride * d->span != expect)
            return 0;
        expect *= extent;
    }
    return 1;
}

static int section_unsupported(const char *func, const char *why)
{
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, func,
                          "%s: a non-contiguous array section as a choice buffer of MPICH's "
                          "mpi_f08 module is not supported %s; pass a contiguous array",
                          func, why);
}

/* count elements of datatype over the section's elements in array element
 * order: hvectors over the dimensions, the first innermost, of the whole
 * number of datatype elements in one array element. */
static int make_section(fmpl_f_choice *c, const fmpl_f_desc *d, MPI_Count count,
                        MPI_Datatype datatype, const char *func)
{
    MPI_Count size;
    MPI_Aint lb, extent;
    int rc = PMPI_Type_size_c(datatype, &size);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count elements = 1;
    for (int k = 0; k < d->dtype.rank; k++)
        elements *= dim_extent(&d->dim[k]);
    size_t elem_len = d->dtype.elem_len;
    if (size <= 0 || size != extent || lb != 0 || elem_len % (size_t)size != 0 ||
        count != elements * (MPI_Count)(elem_len / (size_t)size))
        return section_unsupported(func, "unless count elements of a contiguous datatype fill "
                                         "the section exactly");
    MPI_Datatype type, outer;
    rc = PMPI_Type_contiguous_c((MPI_Count)(elem_len / (size_t)size), datatype, &type);
    for (int k = 0; k < d->dtype.rank && rc == MPI_SUCCESS; k++) {
        rc = PMPI_Type_create_hvector_c(dim_extent(&d->dim[k]), 1,
                                        d->dim[k].stride * d->span, type, &outer);
        PMPI_Type_free(&type);
        type = outer;
    }
    if (rc == MPI_SUCCESS)
        rc = PMPI_Type_commit(&type);
    if (rc != MPI_SUCCESS)
        return rc;
    c->section = type;
    c->has_section = 1;
    return MPI_SUCCESS;
}

int fmpl_f_choice_of(fmpl_f_choice *c, const fmpl_f_desc *d, MPI_Count count,
                     MPI_Datatype datatype, const char *func)
{
    c->address = fmpl_f_desc_address(d);
    if (count == 0 || desc_contiguous(d))
        return MPI_SUCCESS;
    if (count < 0)
        return section_unsupported(func, "in this call (its count and datatype describe "
                                         "more than this buffer)");
    return make_section(c, d, count, datatype, func);
}

void fmpl_f_choice_free(fmpl_f_choice *c)
{
    if (c->has_section)
        PMPI_Type_free(&c->section);
}

int fmpl_f08_extension_unsupported(const char *func)
{
    return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_UNSUPPORTED_OPERATION, func,
                          "%s is an MPICH extension that FMPL does not have", func);
}

/* MPI_F_sync_reg: a call the compiler cannot see through is all it is. */
void pmpir_f_sync_reg_f08ts_(const fmpl_f_desc *buf, MPI_Fint *ierror)
{
    (void)buf;
    fmpl_f_set_ierror(ierror, MPI_SUCCESS);
}
FMPL_F_ALIAS(mpi_f_sync_reg_f08ts_, pmpir_f_sync_reg_f08ts_)

/* --------------------------------------------- module mpi_f08_types */

/* MPI_Sizeof's specifics take x assumed-rank: the size of one element. */
void __mpi_f08_types_MOD_mpi_sizeof_xint32(const fmpl_f_desc *x, MPI_Fint *size,
                                           MPI_Fint *ierror)
{
    *size = (MPI_Fint)x->dtype.elem_len;
    fmpl_f_set_ierror(ierror, MPI_SUCCESS);
}
#define FMPL_F08_SIZEOF(kind)                                                                 \
    FMPL_F_ALIAS(__mpi_f08_types_MOD_mpi_sizeof_##kind, __mpi_f08_types_MOD_mpi_sizeof_xint32)
FMPL_F08_SIZEOF(xint8)
FMPL_F08_SIZEOF(xint16)
FMPL_F08_SIZEOF(xint64)
FMPL_F08_SIZEOF(xreal32)
FMPL_F08_SIZEOF(xreal64)
FMPL_F08_SIZEOF(xreal128)
FMPL_F08_SIZEOF(xcomplex32)
FMPL_F08_SIZEOF(xcomplex64)
FMPL_F08_SIZEOF(xcomplex128)
FMPL_F08_SIZEOF(logical)
FMPL_F08_SIZEOF(character)

/* TYPE(MPI_Status), INTEGER(MPI_STATUS_SIZE) and MPICH's C status type
 * c_Status are the same five integers. */
void __mpi_f08_types_MOD_mpi_status_f2f08(const MPI_Fint *from, MPI_Fint *to, MPI_Fint *ierror)
{
    memcpy(to, from, MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
    fmpl_f_set_ierror(ierror, MPI_SUCCESS);
}
FMPL_F_ALIAS(__mpi_f08_types_MOD_mpi_status_f082f, __mpi_f08_types_MOD_mpi_status_f2f08)

void __mpi_f08_types_MOD_mpi_status_c_assign_f08(const MPI_Fint *from, MPI_Fint *to)
{
    memcpy(to, from, MPI_F_STATUS_SIZE * sizeof(MPI_Fint));
}
FMPL_F_ALIAS(__mpi_f08_types_MOD_mpi_status_f08_assign_c,
             __mpi_f08_types_MOD_mpi_status_c_assign_f08)

/* ------------------------------------- module mpi_f08_callbacks (I/O) */

/* MPI_CONVERSION_FN_NULL(_C): does nothing (FMPL has no MPI_Register_datarep
 * either); ierror is the seventh argument of both. */
void __mpi_f08_callbacks_MOD_mpi_conversion_fn_null(void *userbuf, void *datatype, void *count,
                                                     void *filebuf, void *position,
                                                     void *extra_state, MPI_Fint *ierror)
{
    (void)userbuf, (void)datatype, (void)count, (void)filebuf, (void)position,
        (void)extra_state;
    *ierror = MPI_SUCCESS;
}
FMPL_F_ALIAS(__mpi_f08_callbacks_MOD_mpi_conversion_fn_null_c,
             __mpi_f08_callbacks_MOD_mpi_conversion_fn_null)
