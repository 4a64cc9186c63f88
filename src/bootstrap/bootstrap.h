/* Bootstrap: who am I, how many are we, and a key-value space with a fence.
 *
 * One client serves every launcher that speaks the PMI-1 wire protocol on an
 * inherited socket (PMI_FD): FMPL's own fmplrun and MPICH's mpiexec.hydra;
 * a PMI-2 client (pmi2.c) serves Slurm's srun --mpi=pmi2 on the same kind
 * of socket.
 * A PMIx client (pmix.c, built when libpmix is found) serves PMIx process
 * managers such as Open MPI's mpirun.  Without a launcher the process is a
 * singleton (rank 0 of 1).
 *
 * Keys are per rank: put(key) publishes "<my rank>.<key>", get(rank, key)
 * reads another rank's.  A value is visible to others after fence().  Put
 * each key once per job (several puts before its first fence are fine: the
 * last wins): once a peer has read it, a PMIx client may keep returning the
 * value it read first. */
#ifndef FMPL_BOOTSTRAP_H
#define FMPL_BOOTSTRAP_H

#include <stddef.h>

#define FMPL_BOOTSTRAP_VALUE_MAX 1024  /* longest value, including the NUL */
#define FMPL_BOOTSTRAP_KEY_MAX 64

typedef struct fmpl_bootstrap {
    int rank;
    int size;
    const char *launcher;  /* "fmplrun", "pmi1" (another PMI-1 launcher), "pmi2"
                              (srun --mpi=pmi2), "pmix", "singleton" */
    char job_id[128];      /* unique per job, safe in file names */

    int (*put)(struct fmpl_bootstrap *bs, const char *key, const char *value);
    int (*fence)(struct fmpl_bootstrap *bs);     /* commit puts, then barrier */
    int (*get)(struct fmpl_bootstrap *bs, int rank, const char *key, char *value,
               size_t len);
    int (*barrier)(struct fmpl_bootstrap *bs);
    /* Ends the whole job with exit code `code`; does not return. */
    void (*abort)(struct fmpl_bootstrap *bs, int code, const char *message)
        __attribute__((noreturn));
    int (*finalize)(struct fmpl_bootstrap *bs);
    void *impl;
} fmpl_bootstrap;

/* Picks the implementation from the environment (PMI_FD set: PMI-2 under
 * srun --mpi=pmi2, else PMI-1, see bootstrap.c; else PMIX_RANK or
 * PMIX_NAMESPACE set: PMIx, or an error in a build without PMIx; nothing:
 * singleton).  Returns FMPL_SUCCESS or FMPL_ERR_BOOTSTRAP
 * after logging why. */
int fmpl_bootstrap_init(fmpl_bootstrap **bs);
/* Finalize and free; *bs becomes NULL. */
int fmpl_bootstrap_finalize(fmpl_bootstrap **bs);
/* 1 when this build has the PMIx client (jobs started by Open MPI's mpirun). */
int fmpl_bootstrap_has_pmix(void);

/* Prefix of every shared-memory file a job creates: "/fmpl-<job_id>-".
 * fmplrun removes files with this prefix when the job ends, whatever way;
 * other launchers (mpirun) do not, so files of a job whose rank died during
 * start-up, before the segments are unlinked, stay behind. */
#define FMPL_SHM_PREFIX "/fmpl-"

#endif
