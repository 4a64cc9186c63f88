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
 *     sentinels, the handles' == and /= operators, MPI_Sizeof, the status
 *     conversions and the predefined callbacks.
 *
 * The entries are generated (mpich_f08_entries.c, by gen_fortran.py); the
 * rest is mpich_f08_support.c. */
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

/* One choice buffer of a call: its address and, for a non-contiguous array
 * section, a derived datatype made for the call that describes count
 * elements of datatype laid over the section (the call then passes 1 of it).
 * Zero-initialised before fmpl_f_choice_of. */
typedef struct {
    void *address;
    MPI_Datatype section;
    int has_section;
} fmpl_f_choice;

/* MPI_SUCCESS, or the error code of a section that no datatype of the call
 * can describe (count < 0: the call has no count and datatype of this
 * buffer alone), raised on MPI_COMM_WORLD with a message naming func. */
int fmpl_f_choice_of(fmpl_f_choice *c, const fmpl_f_desc *d, MPI_Count count,
                     MPI_Datatype datatype, const char *func);
void fmpl_f_choice_free(fmpl_f_choice *c);
#define FMPL_F_CHOICE_COUNT(c, count) ((c).has_section ? 1 : (count))
#define FMPL_F_CHOICE_TYPE(c, datatype) ((c).has_section ? (c).section : (datatype))

/* MPICH extensions FMPL does not have (MPIX_*, MPI_Delete_error_*): their
 * entries take nargs arguments before ierror, and fail with
 * MPI_ERR_UNSUPPORTED_OPERATION. */
int fmpl_f08_extension_unsupported(const char *func);
#define FMPL_F08_EXTENSION(mpi_name, pmpi_name, func, ...)                                    \
    void pmpi_name(__VA_ARGS__ MPI_Fint *ierror)                                              \
    {                                                                                         \
        fmpl_f_set_ierror(ierror, fmpl_f08_extension_unsupported(func));                      \
    }                                                                                         \
    FMPL_F_ALIAS(mpi_name, pmpi_name)
#define FMPL_F08_UNUSED(a) void *a __attribute__((unused))
#define FMPL_F08_EXTENSION_0(m, p, func) FMPL_F08_EXTENSION(m, p, func, )
#define FMPL_F08_EXTENSION_1(m, p, func) FMPL_F08_EXTENSION(m, p, func, FMPL_F08_UNUSED(a1),)
#define FMPL_F08_EXTENSION_2(m, p, func)                                                      \
    FMPL_F08_EXTENSION(m, p, func, FMPL_F08_UNUSED(a1), FMPL_F08_UNUSED(a2), )

/* Module mpi_f08_types' operators on a handle type (elemental LOGICAL
 * functions; with scalars, a plain call by reference), its default
 * initialisation (zero), and MPI_<Type>_f2c/_c2f (VALUE arguments; the
 * handles are the C handles). */
#define FMPL_F08_HANDLE_COMPARE(name, op)                                                     \
    int __mpi_f08_types_MOD_mpi_##name(const MPI_Fint *a, const MPI_Fint *b)                 \
    {                                                                                         \
        return *a op *b;                                                                      \
    }
#define FMPL_F08_HANDLE_TYPE(low, Type)                                                       \
    FMPL_F08_HANDLE_COMPARE(low##_eq, ==)                                                     \
    FMPL_F08_HANDLE_COMPARE(low##_neq, !=)                                                    \
    FMPL_F08_HANDLE_COMPARE(low##_f08_eq_f, ==)                                               \
    FMPL_F08_HANDLE_COMPARE(low##_f08_neq_f, !=)                                              \
    FMPL_F08_HANDLE_COMPARE(low##_f_eq_f08, ==)                                               \
    FMPL_F08_HANDLE_COMPARE(low##_f_neq_f08, !=)                                              \
    MPI_Fint __mpi_f08_types_MOD___def_init_mpi_f08_types_##Type;
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
