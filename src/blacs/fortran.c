/* BLACS-FMPL's Fortran interface, as ScaLAPACK calls it: lower-case names
 * with a trailing underscore, every argument by reference.  Character
 * arguments (scope, top, uplo, diag, order) are read by their first
 * letter; the lengths gfortran appends are not needed.  Each routine is
 * the C one. */
#include "blacs/blacs.h"

void blacs_pinfo_(int *mypnum, int *nprocs) { Cblacs_pinfo(mypnum, nprocs); }
void blacs_setup_(int *mypnum, int *nprocs) { Cblacs_setup(mypnum, nprocs); }
void blacs_get_(const int *context, const int *what, int *val)
{
    blacs_get(*context, *what, val, 1);
}
void blacs_set_(const int *context, const int *what, const int *val)
{
    Cblacs_set(*context, *what, val);
}
void blacs_gridinit_(int *context, const char *order, const int *nprow, const int *npcol)
{
    Cblacs_gridinit(context, order, *nprow, *npcol);
}
void blacs_gridmap_(int *context, const int *usermap, const int *ldumap, const int *nprow,
                    const int *npcol)
{
    Cblacs_gridmap(context, usermap, *ldumap, *nprow, *npcol);
}
void blacs_gridinfo_(const int *context, int *nprow, int *npcol, int *myrow, int *mycol)
{
    Cblacs_gridinfo(*context, nprow, npcol, myrow, mycol);
}
void blacs_gridexit_(const int *context) { Cblacs_gridexit(*context); }
void blacs_exit_(const int *cont) { Cblacs_exit(*cont); }
void blacs_abort_(const int *context, const int *errornum) { Cblacs_abort(*context, *errornum); }
void blacs_barrier_(const int *context, const char *scope) { Cblacs_barrier(*context, scope); }
void blacs_freebuff_(const int *context, const int *wait) { Cblacs_freebuff(*context, *wait); }
int blacs_pnum_(const int *context, const int *prow, const int *pcol)
{
    return Cblacs_pnum(*context, *prow, *pcol);
}
void blacs_pcoord_(const int *context, const int *pnum, int *prow, int *pcol)
{
    Cblacs_pcoord(*context, *pnum, prow, pcol);
}
int sys2blacs_handle_(const int *mpi_comm) { return Csys2blacs_handle(*mpi_comm); }
int blacs2sys_handle_(const int *handle) { return Cblacs2sys_handle(*handle); }
void free_blacs_system_handle_(const int *handle) { Cfree_blacs_system_handle(*handle); }
double dwalltime00_(void) { return Cdwalltime00(); }
double dcputime00_(void) { return Cdcputime00(); }

#define BLACS_FORTRAN(t, T)                                                                    \
    void t##gesd2d_(const int *ctx, const int *m, const int *n, const T *a, const int *lda,    \
                    const int *rdest, const int *cdest)                                        \
    {                                                                                          \
        C##t##gesd2d(*ctx, *m, *n, a, *lda, *rdest, *cdest);                                   \
    }                                                                                          \
    void t##gerv2d_(const int *ctx, const int *m, const int *n, T *a, const int *lda,          \
                    const int *rsrc, const int *csrc)                                          \
    {                                                                                          \
        C##t##gerv2d(*ctx, *m, *n, a, *lda, *rsrc, *csrc);                                     \
    }                                                                                          \
    void t##trsd2d_(const int *ctx, const char *uplo, const char *diag, const int *m,          \
                    const int *n, const T *a, const int *lda, const int *rdest,                \
                    const int *cdest)                                                          \
    {                                                                                          \
        C##t##trsd2d(*ctx, uplo, diag, *m, *n, a, *lda, *rdest, *cdest);                       \
    }                                                                                          \
    void t##trrv2d_(const int *ctx, const char *uplo, const char *diag, const int *m,          \
                    const int *n, T *a, const int *lda, const int *rsrc, const int *csrc)      \
    {                                                                                          \
        C##t##trrv2d(*ctx, uplo, diag, *m, *n, a, *lda, *rsrc, *csrc);                         \
    }                                                                                          \
    void t##gebs2d_(const int *ctx, const char *scope, const char *top, const int *m,          \
                    const int *n, const T *a, const int *lda)                                  \
    {                                                                                          \
        C##t##gebs2d(*ctx, scope, top, *m, *n, a, *lda);                                       \
    }                                                                                          \
    void t##gebr2d_(const int *ctx, const char *scope, const char *top, const int *m,          \
                    const int *n, T *a, const int *lda, const int *rsrc, const int *csrc)      \
    {                                                                                          \
        C##t##gebr2d(*ctx, scope, top, *m, *n, a, *lda, *rsrc, *csrc);                         \
    }                                                                                          \
    void t##trbs2d_(const int *ctx, const char *scope, const char *top, const char *uplo,      \
                    const char *diag, const int *m, const int *n, const T *a, const int *lda)  \
    {                                                                                          \
        C##t##trbs2d(*ctx, scope, top, uplo, diag, *m, *n, a, *lda);                           \
    }                                                                                          \
    void t##trbr2d_(const int *ctx, const char *scope, const char *top, const char *uplo,      \
                    const char *diag, const int *m, const int *n, T *a, const int *lda,        \
                    const int *rsrc, const int *csrc)                                          \
    {                                                                                          \
        C##t##trbr2d(*ctx, scope, top, uplo, diag, *m, *n, a, *lda, *rsrc, *csrc);             \
    }                                                                                          \
    void t##gsum2d_(const int *ctx, const char *scope, const char *top, const int *m,          \
                    const int *n, T *a, const int *lda, const int *rdest, const int *cdest)    \
    {                                                                                          \
        C##t##gsum2d(*ctx, scope, top, *m, *n, a, *lda, *rdest, *cdest);                       \
    }                                                                                          \
    void t##gamx2d_(const int *ctx, const char *scope, const char *top, const int *m,          \
                    const int *n, T *a, const int *lda, int *ra, int *ca, const int *ldia,     \
                    const int *rdest, const int *cdest)                                        \
    {                                                                                          \
        C##t##gamx2d(*ctx, scope, top, *m, *n, a, *lda, ra, ca, *ldia, *rdest, *cdest);        \
    }                                                                                          \
    void t##gamn2d_(const int *ctx, const char *scope, const char *top, const int *m,          \
                    const int *n, T *a, const int *lda, int *ra, int *ca, const int *ldia,     \
                    const int *rdest, const int *cdest)                                        \
    {                                                                                          \
        C##t##gamn2d(*ctx, scope, top, *m, *n, a, *lda, ra, ca, *ldia, *rdest, *cdest);        \
    }

BLACS_FORTRAN(i, int)
BLACS_FORTRAN(s, float)
BLACS_FORTRAN(d, double)
BLACS_FORTRAN(c, void)
BLACS_FORTRAN(z, void)
