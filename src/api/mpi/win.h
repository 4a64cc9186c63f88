/* Windows inside the binding: lookup with its error, epoch checks, and the
 * pieces win.c, win_sync.c and win_ops.c share. */
#ifndef FMPL_API_MPI_WIN_H
#define FMPL_API_MPI_WIN_H

#include "api/mpi/mpi_impl.h"
#include "api/mpi/mpi_objects.h"
#include "rma/rma.h"

/* The windows' handle table (win.c); fmpl_mpi_win_get inline, for the
 * one-sided calls' fast paths. */
extern fmpl_mpi_table fmpl_mpi_wins;
static inline fmpl_mpi_win *fmpl_mpi_win_lookup(MPI_Win h)
{
    return fmpl_mpi_table_get(&fmpl_mpi_wins, h);
}

/* Look the window up or report MPI_ERR_WIN from `func`. */
#define FMPL_GET_WIN(win, w, func)                                                 \
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);                                          \
    fmpl_mpi_win *w = fmpl_mpi_win_lookup(win);                                    \
    if (!w)                                                                        \
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_WIN, (func),                 \
                              "invalid window 0x%x", (unsigned)(win))

/* May this process access target t now (an access epoch that covers it)? */
static inline int fmpl_mpi_win_may_access(const fmpl_mpi_win *w, int t)
{
    if (w->fence || w->lock_all || w->locks[t])
        return 1;
    for (int i = 0; i < w->naccess && w->access; i++)
        if (w->access[i] == t)
            return 1;
    return 0;
}

/* Some epoch (access or exposure) is open other than a fence's. */
static inline int fmpl_mpi_win_in_epoch(const fmpl_mpi_win *w)
{
    return w->lock_all || w->nlocks || w->access || w->nexpose >= 0;
}

#endif
