/* The one file this process must not leave behind if it is ended from
 * outside its own code: its shared segment's name in /dev/shm, which lives
 * from the segment's creation until every local peer has mapped it
 * (fabric/shm/shm_segment.h).  fmplrun removes a dead job's files itself;
 * other process managers (Open MPI's mpirun, Hydra) do not, so the paths
 * that end a process on an outside event call fmpl_exit_cleanup_now()
 * first: the PMIx client's lost-server handler (bootstrap/pmix.c); and
 * while a path is set, SIGTERM, SIGINT and SIGHUP (what mpirun and Hydra
 * send to end a job), when the program left them at their default, remove
 * it and then end the process as before.  The window is start-up only.
 *
 * Set and clear are called by the main thread; now() only unlinks, which
 * is async-signal-safe, so it may run on any thread at any moment. */
#ifndef FMPL_BASE_EXIT_CLEANUP_H
#define FMPL_BASE_EXIT_CLEANUP_H

/* path: absolute, copied (truncated paths are not recorded). */
void fmpl_exit_cleanup_set(const char *path);
void fmpl_exit_cleanup_clear(void);
void fmpl_exit_cleanup_now(void);

#endif
