/* Choice buffers of MPICH's mpi_f08 module: gfortran array descriptors that
 * may describe non-contiguous array sections, which reach the C functions
 * as copies, kept copies or described by a datatype (mpich_f08.h says
 * which routine takes which way).
 *
 * A copy (fmpl_f_section) keeps what it needs of the descriptor, which
 * lives in the caller's frame: the section's first element, the element
 * length and, per dimension, the extent and the distance in bytes between
 * neighbours (negative for a reversed section).  Its temporary holds the
 * elements in array element order, the first dimension varying fastest:
 * the order in which a contiguous actual argument would hold them, so the
 * call's count and datatype mean what they mean with mpif.h.
 *
 * A kept copy (FMPL_F_KEEP_CHOICES) goes with the request the call
 * returned, wrapped by fmpl_mpi_request_wrap (api/mpi/request_wrap.c): the
 * wrapping request refills the copies at each MPI_Start, copies the written
 * ones back when the operation completes (before MPI_Wait or MPI_Test
 * returns), and frees them with itself. */
#include "api/fortran/mpich_f08.h"
#include "api/mpi/mpi_impl.h"

#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

/* Fortran 2018's largest rank. */
#define MAX_RANK 15

struct fmpl_f_section {
    char *first;
    size_t elem_len;
    int rank;
    int written;
    ptrdiff_t extent[MAX_RANK];
    ptrdiff_t step[MAX_RANK];
    alignas(max_align_t) unsigned char temp[]; /* every element, packed */
};

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

/* ---------------------------------------------------------------- copies */

/* Between the section and its temporary, in array element order: the first
 * dimension in the inner loop, the others counted like an odometer. */
static void section_transfer(fmpl_f_section *s, int into_temp)
{
    ptrdiff_t index[MAX_RANK] = {0};
    unsigned char *temp = s->temp;
    char *row = s->first;
    size_t len = s->elem_len;
    for (;;) {
        char *element = row;
        for (ptrdiff_t i = 0; i < s->extent[0]; i++, element += s->step[0], temp += len) {
            if (into_temp)
                memcpy(temp, element, len);
            else
                memcpy(element, temp, len);
        }
        int k = 1;
        for (; k < s->rank; k++) {
            row += s->step[k];
            if (++index[k] < s->extent[k])
                break;
            row -= s->step[k] * s->extent[k];
            index[k] = 0;
        }
        if (k == s->rank)
            return;
    }
}

int fmpl_f_choice_copy(fmpl_f_choice *c, const fmpl_f_desc *d, int written, const char *func)
{
    c->address = fmpl_f_desc_address(d);
    if (desc_contiguous(d))
        return MPI_SUCCESS;
    /* Non-contiguous: rank >= 1, every extent >= 1 (desc_contiguous). */
    size_t elements = 1;
    for (int k = 0; k < d->dtype.rank; k++)
        elements *= (size_t)dim_extent(&d->dim[k]);
    size_t bytes = elements * d->dtype.elem_len;
    fmpl_f_section *s = malloc(sizeof *s + bytes);
    if (!s)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func,
                              "%s: no memory for a %zu-byte copy of a non-contiguous array "
                              "section", func, bytes);
    s->first = d->base_addr;
    s->elem_len = d->dtype.elem_len;
    s->rank = d->dtype.rank;
    s->written = written;
    for (int k = 0; k < s->rank; k++) {
        s->extent[k] = dim_extent(&d->dim[k]);
        s->step[k] = d->dim[k].stride * d->span;
    }
    /* Read buffers need their data; written ones too, for what the call
     * leaves alone (a shorter message, a datatype with holes). */
    section_transfer(s, 1);
    c->copy = s;
    c->address = s->temp;
    return MPI_SUCCESS;
}

static void section_finish(fmpl_f_section *s)
{
    if (s->written)
        section_transfer(s, 0);
    free(s);
}

/* -------------------------------------------------- described sections */

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
        return section_unsupported(func, "in this call (it keeps using the buffer after "
                                         "returning) unless count elements of a contiguous "
                                         "datatype fill the section exactly");
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

int fmpl_f_choice_described(fmpl_f_choice *c, const fmpl_f_desc *d, MPI_Count count,
                            MPI_Datatype datatype, const char *func)
{
    c->address = fmpl_f_desc_address(d);
    if (count == 0 || desc_contiguous(d))
        return MPI_SUCCESS;
    if (count < 0)
        return section_unsupported(func, "in this call (it keeps using the buffer after "
                                         "returning, and has no count and datatype of this "
                                         "buffer alone)");
    return make_section(c, d, count, datatype, func);
}

void fmpl_f_choice_done_slow(fmpl_f_choice *c)
{
    if (c->copy)
        section_finish(c->copy);
    c->copy = NULL;
    if (c->has_section)
        PMPI_Type_free(&c->section);
    c->has_section = 0;
}

/* ------------------------------------------------------- kept copies */

/* A call's choices number three at most (MPI_Compare_and_swap). */
#define MAX_CHOICES 3

typedef struct kept_copies {
    int n;
    fmpl_f_section *copies[MAX_CHOICES];
} kept_copies;

static void kept_refill(void *state)
{
    kept_copies *k = state;
    for (int i = 0; i < k->n; i++)
        section_transfer(k->copies[i], 1);
}

static void kept_copy_back(void *state)
{
    kept_copies *k = state;
    for (int i = 0; i < k->n; i++)
        if (k->copies[i]->written)
            section_transfer(k->copies[i], 0);
}

static void kept_free(void *state)
{
    kept_copies *k = state;
    for (int i = 0; i < k->n; i++)
        free(k->copies[i]);
}

static const fmpl_mpi_request_hooks kept_hooks = {kept_refill, kept_copy_back, kept_free};

int fmpl_f_choices_keep_slow(MPI_Request *request, const char *func,
                             fmpl_f_choice *const *choices, int n)
{
    if (*request == MPI_REQUEST_NULL) /* nothing pending: copied back at once */
        return MPI_SUCCESS;
    kept_copies *k = fmpl_mpi_request_wrap(request, &kept_hooks, sizeof *k);
    if (!k) /* the operation is over, the choices still have their copies */
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_NO_MEM, func,
                              "%s: no memory for the request that keeps the copy of a "
                              "non-contiguous array section", func);
    for (int i = 0; i < n; i++) {
        if (choices[i]->copy && k->n < MAX_CHOICES) {
            k->copies[k->n++] = choices[i]->copy;
            choices[i]->copy = NULL;
        }
    }
    return MPI_SUCCESS;
}
