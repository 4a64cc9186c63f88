/* The Fortran binding's conversions, shared by the generated entry points
 * (mpi_fortran_entries.c) and the hand-written ones (fortran_support.c).
 *
 * How Fortran arguments reach C (gfortran's calling convention, which
 * MPICH's Fortran library also assumes):
 *   - every argument by reference; handles are MPICH's Fortran INTEGERs,
 *     equal to the C handles (mpi.h: typedef int MPI_Comm ...), so arrays of
 *     handles and TYPE(MPI_Comm) (a BIND(C) type holding one INTEGER) pass
 *     unchanged;
 *   - INTEGER(KIND=MPI_ADDRESS_KIND/MPI_OFFSET_KIND/MPI_COUNT_KIND) are
 *     MPI_Aint, MPI_Offset and MPI_Count (8 bytes);
 *   - a Fortran status is the C MPI_Status, field for field (MPI_SOURCE is
 *     element 3 of the INTEGER array, mpif.h's MPI_SOURCE = 3);
 *   - LOGICAL is a 4-byte integer, .TRUE. = 1: inputs are tested against 0,
 *     outputs written by C as 0/1 are valid LOGICALs;
 *   - CHARACTER arguments carry a hidden length (size_t) appended after all
 *     other arguments, in order; Fortran strings are blank-padded, not
 *     NUL-terminated;
 *   - an absent OPTIONAL argument (the ierror of `use mpi_f08`) is NULL;
 *   - Fortran callbacks take every argument by reference too: MPI's user
 *     reduction functions and error handlers then have C's own signature,
 *     and are passed to C as they are.
 *   - MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE, MPI_ERRCODES_IGNORE,
 *     MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY and MPI_ARGV(S)_NULL are variables in
 *     common blocks named and laid out as MPICH's (so that programs compiled
 *     with MPICH's mpif.h use this library's), recognised by address; those
 *     of MPICH's mpi_f08 module too (C globals and module variables);
 *   - the entries MPICH's mpi_f08 module calls for routines with choice
 *     buffers (mpi_<name>_f08ts_) get each buffer as a gfortran array
 *     descriptor: mpich_f08.h. */
#ifndef FMPL_API_FORTRAN_FORTRAN_H
#define FMPL_API_FORTRAN_FORTRAN_H

#include <mpi.h>
#include <stddef.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int) && sizeof(MPI_Comm) == sizeof(MPI_Fint),
               "Fortran handles are the C handles");
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(MPI_Fint),
               "a Fortran status is a C status");

/* The common blocks of mpif.h (the same layout and sizes as MPICH's). */
extern struct fmpl_f_mpipriv1 {
    MPI_Fint bottom, in_place, status_ignore[MPI_F_STATUS_SIZE];
} mpipriv1_;
extern struct fmpl_f_mpipriv2 {
    MPI_Fint statuses_ignore[MPI_F_STATUS_SIZE], errcodes_ignore[1];
} mpipriv2_;
extern struct fmpl_f_mpiprivc {
    char argvs_null[1], argv_null[1];
} mpiprivc_;
extern struct fmpl_f_intblock {
    MPI_Fint value[1];
} mpifcmb5_, mpifcmb9_; /* MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY */

/* The sentinels of MPICH's mpi_f08 module (programs built with it pass
 * these): C globals and module variables of MPICH's libmpichfort, defined
 * in mpich_f08_support.c with MPICH's names and sizes. */
extern MPI_Fint MPIR_F08_MPI_BOTTOM, MPIR_F08_MPI_IN_PLACE;
extern MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[MPI_F_STATUS_SIZE];
extern MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[MPI_F_STATUS_SIZE];
extern MPI_Fint fmpl_f08_errcodes_ignore[1] __asm__("__mpi_f08_link_constants_MOD_mpi_errcodes_ignore");
extern MPI_Fint fmpl_f08_unweighted[1] __asm__("__mpi_f08_link_constants_MOD_mpi_unweighted");
extern MPI_Fint fmpl_f08_weights_empty[1] __asm__("__mpi_f08_link_constants_MOD_mpi_weights_empty");

/* `name` is another name of `target` (weak: a profiling library's own
 * mpi_send_ wins, and reaches the library through pmpi_send_). */
#define FMPL_F_ALIAS(name, target) \
    extern __typeof__(target) name __attribute__((weak, alias(#target)));

/* MPICH's names of one Fortran entry point pmpi_<low>_ (defined): the
 * gfortran, g77 (two underscores), no-underscore and upper-case spellings of
 * the MPI_ and PMPI_ names.  FMPL_F_NAMES_OF gives them to another
 * function (all of them, pmpi_<low>_ too). */
#define FMPL_F_NAMES(low, UP)                                                                 \
    FMPL_F_ALIAS(mpi_##low##_, pmpi_##low##_)                                                 \
    FMPL_F_OTHER_NAMES(low, UP, pmpi_##low##_)
#define FMPL_F_NAMES_OF(low, UP, target)                                                      \
    FMPL_F_ALIAS(pmpi_##low##_, target)                                                       \
    FMPL_F_ALIAS(mpi_##low##_, target)                                                        \
    FMPL_F_OTHER_NAMES(low, UP, target)
#define FMPL_F_OTHER_NAMES(low, UP, target)                                                   \
    FMPL_F_ALIAS(mpi_##low##__, target)                                                       \
    FMPL_F_ALIAS(mpi_##low, target)                                                           \
    FMPL_F_ALIAS(MPI_##UP, target)                                                            \
    FMPL_F_ALIAS(pmpi_##low##__, target)                                                      \
    FMPL_F_ALIAS(pmpi_##low, target)                                                          \
    FMPL_F_ALIAS(PMPI_##UP, target)

/* The `use mpi_f08` names of a hand-written entry: FMPL's mpi_<low>_f08_ and
 * pmpi_<low>_f08_, and MPICH's pmpir_<low>_f08_ (its pmpi_f08 module). */
#define FMPL_F_F08_NAMES(low, target)                                                         \
    FMPL_F_ALIAS(mpi_##low##_f08_, target)                                                    \
    FMPL_F_ALIAS(pmpi_##low##_f08_, target)                                                   \
    FMPL_F_ALIAS(pmpir_##low##_f08_, target)

static inline void *fmpl_f_buffer(void *buf)
{
    if (buf == &mpipriv1_.bottom || buf == &MPIR_F08_MPI_BOTTOM)
        return MPI_BOTTOM;
    if (buf == &mpipriv1_.in_place || buf == &MPIR_F08_MPI_IN_PLACE)
        return MPI_IN_PLACE;
    return buf;
}
#define FMPL_F_BUFFER(buf) fmpl_f_buffer((void *)(buf))

static inline MPI_Status *fmpl_f_status(MPI_Fint *status)
{
    if (status == mpipriv1_.status_ignore || status == MPIR_F08_MPI_STATUS_IGNORE_OBJ)
        return MPI_STATUS_IGNORE;
    return (MPI_Status *)(void *)status;
}

static inline MPI_Status *fmpl_f_statuses(MPI_Fint *statuses)
{
    if (statuses == mpipriv2_.statuses_ignore || statuses == MPIR_F08_MPI_STATUSES_IGNORE_OBJ)
        return MPI_STATUSES_IGNORE;
    return (MPI_Status *)(void *)statuses;
}

static inline int *fmpl_f_errcodes(int *errcodes)
{
    if (errcodes == mpipriv2_.errcodes_ignore || errcodes == fmpl_f08_errcodes_ignore)
        return MPI_ERRCODES_IGNORE;
    return errcodes;
}

static inline int *fmpl_f_weights(const int *weights)
{
    if (weights == mpifcmb5_.value || weights == fmpl_f08_unweighted)
        return MPI_UNWEIGHTED;
    if (weights == mpifcmb9_.value || weights == fmpl_f08_weights_empty)
        return MPI_WEIGHTS_EMPTY;
    return (int *)weights;
}

static inline void fmpl_f_set_ierror(MPI_Fint *ierror, int rc)
{
    if (ierror) /* NULL: mpi_f08's ierror left out */
        *ierror = rc;
}

/* Request indices are 1-based in Fortran (MPI_WAITANY, MPI_WAITSOME ...);
 * MPI_UNDEFINED stays. */
static inline void fmpl_f_index_from_c(int rc, int n, int *indices)
{
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
        return;
    for (int i = 0; i < n; i++)
        if (indices[i] >= 0)
            indices[i]++;
}

/* The C strings of one call (freed together at its end). */
typedef struct {
    char *owned[4];
    int count;
} fmpl_f_strings;

/* A Fortran CHARACTER input as a C string, trailing blanks removed. */
const char *fmpl_f_string_in(fmpl_f_strings *s, const char *f, size_t len);
/* A C buffer for a string output of a Fortran CHARACTER*(len): room for
 * anything the C function may write (the MPI_MAX_* lengths) and len. */
char *fmpl_f_string_buffer(fmpl_f_strings *s, size_t len);
/* Copy a C string into a Fortran CHARACTER*(len), blank-padded or cut. */
void fmpl_f_string_out(char *f, size_t len, const char *c);
void fmpl_f_strings_free(fmpl_f_strings *s);

/* The entries whose arguments are arrays of Fortran strings (MPI_Comm_spawn,
 * _spawn_multiple) until they are converted: MPI_ERR_UNSUPPORTED_OPERATION
 * with a message, through MPI_COMM_WORLD's handler. */
int fmpl_f_string_arrays_unsupported(const char *func);

#endif
