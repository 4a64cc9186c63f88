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
 * Keys are per process: put(key) publishes "<my universe rank>.<key>",
 * get(universe rank, key) reads another process's.  The universe is every
 * process of the job, spawned ones included (MPI_Comm_spawn): a process's
 * universe rank is its world rank plus universe_base, its world's first
 * universe rank (0 for the job's first world).  A value is visible to others after fence().  Put
 * each key once per job (several puts before its first fence are fine: the
 * last wins): once a peer has read it, a PMIx client may keep returning the
 * value it read first. */
#ifndef FMPL_BOOTSTRAP_H
#define FMPL_BOOTSTRAP_H

#include <stddef.h>

#define FMPL_BOOTSTRAP_VALUE_MAX 1024  /* longest value, including the NUL */
#define FMPL_BOOTSTRAP_KEY_MAX 64
/* Universe ranks a launcher that spawns may hand out (fmplrun's limit). */
#define FMPL_UNIVERSE_MAX 4096

/* One command of a spawn (MPI_Comm_spawn_multiple has several). */
typedef struct fmpl_spawn_cmd {
    const char *command;      /* program */
    const char *const *argv;  /* its arguments, NULL-terminated (argv[0] not included) */
    int maxprocs;
    const char *wdir, *path, *host; /* MPI's reserved info keys, or NULL */
} fmpl_spawn_cmd;

typedef struct fmpl_bootstrap {
    int rank;              /* in this process's world */
    int size;              /* of its world */
    int universe_rank;     /* in the universe: rank + universe_base */
    int universe_base;
    int universe_size;     /* MPI_UNIVERSE_SIZE: processes the launcher offers room
                              for (>= size), 0 when unknown */
    int spawned;           /* this world was started by a spawn */
    int universe_hosts;    /* hosts the job's worlds may run on (fmplrun's
                              FMPL_JOB_HOSTS; 0 when unknown): above 1, a
                              spawned or connected world may be on another host */
    int appnum;            /* which command of an MPMD start or a spawn this is (0) */
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

    /* Dynamic processes; NULL where the launcher offers none (then every
     * MPI call needing them fails at once with a message).  fmplrun
     * (pmi1_dynamic.c) and PMIx (pmix_dynamic.c) set them; a PMIx server
     * that turns out not to serve them (srun --mpi=pmix) makes the first
     * call fail at once with FMPL_ERR_UNSUPPORTED.
     * spawn: starts one new world of the commands' processes, in order;
     * the preput keys are readable in it with get_preput.  *first is its
     * world rank 0's universe rank. */
    int (*spawn)(struct fmpl_bootstrap *bs, int ncmds, const fmpl_spawn_cmd *cmds,
                 int npreput, const char *const *keys, const char *const *values, int *first);
    /* A key the spawner gave this world (FMPL_ERR_ARG when absent). */
    int (*get_preput)(struct fmpl_bootstrap *bs, const char *key, char *value, size_t len);
    /* The name service: publish fails (FMPL_ERR_ARG) when the name is
     * taken; lookup and unpublish (FMPL_ERR_ARG) when it is not published. */
    int (*publish)(struct fmpl_bootstrap *bs, const char *service, const char *port);
    int (*unpublish)(struct fmpl_bootstrap *bs, const char *service);
    int (*lookup)(struct fmpl_bootstrap *bs, const char *service, char *port, size_t len);
    /* Rendezvous queues kept by the launcher: post appends a value, take
     * removes the oldest one or answers FMPL_ERR_NOT_PENDING at once when
     * the queue is empty. */
    int (*post)(struct fmpl_bootstrap *bs, const char *queue, const char *value);
    int (*take)(struct fmpl_bootstrap *bs, const char *queue, char *value, size_t len);
    /* get() of a key that may not be there yet: FMPL_ERR_NOT_PENDING at once
     * when it is absent (the caller polls).  NULL where absence cannot be told
     * from failure. */
    int (*try_get)(struct fmpl_bootstrap *bs, int universe_rank, const char *key, char *value,
                   size_t len);
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
