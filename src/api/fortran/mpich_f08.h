/* What programs built with MPICH's `use mpi_f08` (MPICH 4.0, gfortran)
 * need of the library besides the entries they share with mpif.h:
 *
 *   - for routines with choice buffers MPICH's module declares the buffer
 *     TYPE(*), DIMENSION(..) in a procedure without BIND(C), so gfortran
 *     passes its own array descriptor (below), not the address, to
 *     mpi_<name>_f08ts_ (pmpir_<name>_f08ts_ for pmpi_f08; _large_ appended
 *     for the MPI_Count forms).  Every other argument is passed as mpif.h
 *     passes it (fortran.h);
 *   - module data and procedures under gfortran's names
 *     __<module>_MOD_<name>: the handle constants (a program may pass
 *     MPI_COMM_WORLD by reference to the module's read-only copy), the
 *     sentinels, the handles' == and /= operators, the status conversions
 *     and the predefined callbacks.
 *
 * The entries are generated (mpich_f08_entries.c, by gen_fortran.py); the
 * rest is mpich_f08_support.c and, for choice buffers,
 * mpich_f08_sections.c.  MPI_Sizeof (of MPICH's `use mpi` too) and the
 * derived types' own data are Fortran, compiled under MPICH's module names
 * (mpich_modules/mpich_module_data.f90, generated). */
#ifndef FMPL_API_FORTRAN_MPICH_F08_H
#define FMPL_API_FORTRAN_MPICH_F08_H

#include "api/fortran/fortran.h"

#include <stddef.h>

/* gfortran's array descriptor (GCC 8 and later, libgfortran 5's ABI): the
 * first element is at base_addr; element i_1..i_rank at
 * base_addr + span * sum((i_k - lower_bound_k) * stride_k).  A scalar has
 * rank 0. */
typedef struct {
    ptrdiff_t stride, lower_bound, upper_bound;
} fmpl_f_desc_dim;
typedef struct {
    void *base_addr;
    size_t offset;
    struct {
        size_t elem_len;
        int version;
        signed char rank, type;
        signed short attribute;
    } dtype;
    ptrdiff_t span;
    fmpl_f_desc_dim dim[];
} fmpl_f_desc;

/* The address a buffer starts at (MPI_BOTTOM and MPI_IN_PLACE for the
 * sentinels), whatever the layout: MPI_Get_address, MPI_Free_mem. */
void *fmpl_f_desc_address(const fmpl_f_desc *d);

/* Choice buffers (mpich_f08_sections.c).  MPICH's mpi_f08 module says
 * MPI_SUBARRAYS_SUPPORTED = .TRUE. and passes an array section as it is, in
 * any call.  A buffer whose elements follow one another (a whole array, a
 * contiguous section, a scalar, a sentinel) is used in place: one test on
 * the way in, one on the way out.  A non-contiguous section reaches the C
 * function one of three ways, chosen per routine by gen_fortran.py:
 *   copy       blocking calls: a contiguous temporary filled from the
 *              section before the call and, for a buffer the call writes,
 *              copied back after it (what a compiler does for an
 *              explicit-shape dummy argument);
 *   kept copy  calls that return a request (nonblocking, persistent): the
 *              same temporary, handed to the request (FMPL_F_KEEP_CHOICES):
 *              copied back when it completes, refilled at each MPI_Start;
 *   described  the other calls that hold on to the buffer after returning
 *              (one-sided origin and result buffers, partitioned
 *              communication, MPI_Win_create, MPI_Buffer_attach): a derived
 *              datatype over the section, when the call's own count and
 *              datatype fill it exactly; otherwise the call fails with
 *              MPI_ERR_UNSUPPORTED_OPERATION naming it.
 * An fmpl_f_choice is zero-initialised, set by fmpl_f_choice_copy or
 * fmpl_f_choice_described, and ended by fmpl_f_choice_done. */
typedef struct fmpl_f_section fmpl_f_section;
typedef struct {
    void *address;          /* what the C function gets */
    fmpl_f_section *copy;   /* copy: the section and its temporary (address) */
    MPI_Datatype section;   /* described: 1 of it covers the section */
    int has_section;
} fmpl_f_choice;

/* Does the call write the buffer (copied back after it)? */
enum { FMPL_F_READ = 0, FMPL_F_WRITTEN = 1 };

/* MPI_SUCCESS, or MPI_ERR_NO_MEM for a temporary (raised on
 * MPI_COMM_WORLD, naming func). */
int fmpl_f_choice_copy(fmpl_f_choice *c, const fmpl_f_desc *d, int written, const char *func);
/* MPI_SUCCESS, or the error of a section that no datatype of the call can
 * describe (count < 0: the call has no count and datatype of this buffer
 * alone), raised on MPI_COMM_WORLD with a message naming func. */
int fmpl_f_choice_described(fmpl_f_choice *c, const fmpl_f_desc *d, MPI_Count count,
                            MPI_Datatype datatype, const char *func);
#define FMPL_F_CHOICE_COUNT(c, count) ((c).has_section ? 1 : (count))
#define FMPL_F_CHOICE_TYPE(c, datatype) ((c).has_section ? (c).section : (datatype))

/* After the call: copies back what it wrote, frees the temporary or the
 * datatype (MPI lets a type be freed while an operation started with it is
 * pending).  Nothing left after FMPL_F_KEEP_CHOICES took the copies. */
void fmpl_f_choice_done_slow(fmpl_f_choice *c);
static inline void fmpl_f_choice_done(fmpl_f_choice *c)
{
    if (__builtin_expect(c->copy != NULL || c->has_section, 0))
        fmpl_f_choice_done_slow(c);
}

/* After a call that returned *request (rc == MPI_SUCCESS): when any of the
 * choices is a copy, *request becomes a request of its own that completes
 * with the call's, copies the written copies back then (each MPI_Start of a
 * persistent one refills them first) and frees them with itself; the
 * copies leave the choices.  Returns rc, or MPI_ERR_NO_MEM (the call's
 * operation completed first, its output copied back). */
int fmpl_f_choices_keep_slow(MPI_Request *request, const char *func,
                             fmpl_f_choice *const *choices, int n);
static inline int fmpl_f_choices_keep(int rc, MPI_Request *request, const char *func,
                                      fmpl_f_choice *const *choices, int n)
{
    for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
        if (__builtin_expect(choices[i]->copy != NULL, 0))
            return fmpl_f_choices_keep_slow(request, func, choices, n);
    return rc;
}
#define FMPL_F_KEEP_CHOICES(rc, request, func, ...)                                          \
    fmpl_f_choices_keep(rc, request, func, (fmpl_f_choice *const[]){__VA_ARGS__},            \
                        (int)(sizeof((fmpl_f_choice *const[]){__VA_ARGS__}) /                \
                              sizeof(fmpl_f_choice *)))

/* An MPICH extension's mpi_f08 entry p<prefix>r_<low>_f08_ (and
 * <prefix>_<low>_f08_): calls the C function cfunc of FMPL's libmpi with
 * args, its value to ierror. */
#define FMPL_F_EXTENSION(prefix, low, cfunc, params, args)                                    \
    void p##prefix##r_##low##_f08_ params                                                     \
    {                                                                                         \
        fmpl_f_set_ierror(ierror, cfunc args);                                                \
    }                                                                                         \
    FMPL_F_ALIAS(prefix##_##low##_f08_, p##prefix##r_##low##_f08_)
/* The mpif.h-style names of an MPICH extension's entry (MPICH's library
 * has them; no header declares them). */
#define FMPL_F_MPIX_NAMES(low, UP, target)                                                    \
    FMPL_F_ALIAS(mpix_##low##_, target)                                                       \
    FMPL_F_ALIAS(mpix_##low##__, target)                                                      \
    FMPL_F_ALIAS(mpix_##low, target)                                                          \
    FMPL_F_ALIAS(MPIX_##UP, target)                                                           \
    FMPL_F_ALIAS(pmpix_##low##_, target)                                                      \
    FMPL_F_ALIAS(pmpix_##low##__, target)                                                     \
    FMPL_F_ALIAS(pmpix_##low, target)                                                         \
    FMPL_F_ALIAS(PMPIX_##UP, target)

/* Module mpi_f08_types' operators on a handle type (elemental LOGICAL
 * functions; with scalars, a plain call by reference) and
 * MPI_<Type>_f2c/_c2f (VALUE arguments; the handles are the C handles).
 * The types' own data (__def_init_*, __vtab_*, __copy_*) is gfortran's,
 * from mpich_modules/mpich_module_data.f90. */
#define FMPL_F08_HANDLE_COMPARE(name, op)                                                     \
    int __mpi_f08_types_MOD_mpi_##name(const MPI_Fint *a, const MPI_Fint *b)                 \
    {                                                                                         \
        return *a op *b;                                                                      \
    }
#define FMPL_F08_HANDLE_TYPE(low)                                                             \
    FMPL_F08_HANDLE_COMPARE(low##_eq, ==)                                                     \
    FMPL_F08_HANDLE_COMPARE(low##_neq, !=)                                                    \
    FMPL_F08_HANDLE_COMPARE(low##_f08_eq_f, ==)                                               \
    FMPL_F08_HANDLE_COMPARE(low##_f08_neq_f, !=)                                              \
    FMPL_F08_HANDLE_COMPARE(low##_f_eq_f08, ==)                                               \
    FMPL_F08_HANDLE_COMPARE(low##_f_neq_f08, !=)
#define FMPL_F08_HANDLE_CONVERSIONS(low)                                                      \
    MPI_Fint __mpi_f08_types_MOD_mpi_##low##_f2c(MPI_Fint handle)                            \
    {                                                                                         \
        return handle;                                                                        \
    }                                                                                         \
    MPI_Fint __mpi_f08_types_MOD_mpi_##low##_c2f(MPI_Fint handle)                            \
    {                                                                                         \
        return handle;                                                                        \
    }

/* A handle constant of module mpi_f08_compile_constants (TYPE(MPI_Comm),
 * PARAMETER :: MPI_COMM_WORLD ...: 4 read-only bytes). */
#define FMPL_F08_CONSTANT(low, value)                                                         \
    const MPI_Fint __mpi_f08_compile_constants_MOD_##low = (MPI_Fint)(value);

#endif
