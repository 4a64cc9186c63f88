/* fmpl_info: what FMPL finds on this machine and every tunable it reads.
 *   fmpl_info            version, backends, launchers, tunables
 *   fmpl_info -t         tunables only (name, default, current value, meaning)
 *   fmpl_info --version  how this FMPL was built (like mpichversion)
 * CMA is probed the way the library does it, against a child process. */
#include "fmpl.h"
#include "mpi.h"
#include "fmpl_build_info.h"
#include "base/tunable.h"
#include "bootstrap/bootstrap.h"
#include "collectives/collectives.h"
#include "fabric/fabric.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static void print_tunable(const fmpl_tunable *t, void *ctx)
{
    (void)ctx;
    const char *set = getenv(t->name);
    printf("  %-22s default %-8s%s%s%s\n      %s\n", t->name, t->default_value,
           set ? " (set: " : "", set ? set : "", set ? ")" : "", t->help);
}

static int cmp_tunables(const void *a, const void *b)
{
    return strcmp((*(const fmpl_tunable *const *)a)->name, (*(const fmpl_tunable *const *)b)->name);
}

static void collect(const fmpl_tunable *t, void *ctx)
{
    const fmpl_tunable ***p = ctx;
    *(*p)++ = t;
}

static void print_tunables(void)
{
    const fmpl_tunable *list[256], **end = list;
    fmpl_tunable_foreach(collect, &end);
    qsort(list, (size_t)(end - list), sizeof *list, cmp_tunables);
    printf("Tunables (environment variables):\n");
    for (const fmpl_tunable **p = list; p < end; p++)
        print_tunable(*p, NULL);
}

/* Read a word from a child through process_vm_readv, as ranks do. */
static void probe_cma(void)
{
    static volatile unsigned long long word = 0x464d504cull;
    pid_t child = fork();
    if (child == 0) {
        pause();
        _exit(0);
    }
    unsigned long long got = 0;
    struct iovec l = {.iov_base = &got, .iov_len = sizeof got};
    struct iovec r = {.iov_base = (void *)&word, .iov_len = sizeof got};
    ssize_t n = process_vm_readv(child, &l, 1, &r, 1, 0);
    int e = errno;
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    if (n == (ssize_t)sizeof got && got == word)
        printf("  CMA (process_vm_readv/writev): usable -- private buffers move with one copy\n");
    else
        printf("  CMA (process_vm_readv/writev): NOT usable (%s) -- private buffers are staged "
               "through shared memory (two copies)%s\n",
               n < 0 ? strerror(e) : "short read",
               e == EPERM ? "; ptrace restrictions (Yama ptrace_scope, containers) cause this" : "");
}

static void print_line(const char *text, void *ctx)
{
    (void)ctx;
    printf("  %s\n", text);
}

static int on_path(const char *prog)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", prog);
    return system(cmd) == 0;
}

/* Also the source of fmpl_info.1 (tools/man). */
static const char usage_text[] =
    "usage: fmpl_info [-t | --version | --help]\n"
    "\n"
    "Without options: FMPL's version, the backends and launchers it finds on this\n"
    "machine (shared memory, single-copy CMA between processes, mpiexec.hydra,\n"
    "Open MPI's mpirun with PMIx), the collective algorithms it selects, and\n"
    "every tunable (environment variable) with its default, its value when set,\n"
    "and what it does.\n"
    "\n"
    "options:\n"
    "  -t          the tunables only\n"
    "  --version   how this FMPL was built: version, MPI standard and ABI,\n"
    "              compiler, build type, options, installation prefix\n"
    "  -h, --help  this text\n"
    "\n"
    "exit status:\n"
    "  0  success\n"
    "  2  usage error\n";

/* Like mpichversion: one "FMPL <what>: <value>" line each. */
static void print_version(void)
{
    printf("FMPL Version:       %s\n", FMPL_VERSION_STRING);
    printf("FMPL MPI standard:  %d.%d (C API)\n", MPI_VERSION, MPI_SUBVERSION);
    printf("FMPL ABI:           MPICH (libmpi.so.12, also named libmpich.so.12)\n");
    printf("FMPL Source:        %s\n", FMPL_BUILD_SOURCE);
    printf("FMPL Build type:    %s\n", FMPL_BUILD_TYPE);
    printf("FMPL CC:            %s\n", FMPL_BUILD_CC);
    printf("FMPL CFLAGS:        %s\n", FMPL_BUILD_CFLAGS);
    printf("FMPL Options:       %s\n", FMPL_BUILD_OPTIONS);
    printf("FMPL Prefix:        %s\n", FMPL_BUILD_PREFIX);
    printf("FMPL Backends:      %s; bootstraps: PMI-1%s\n", FMPL_BUILD_BACKENDS,
           fmpl_bootstrap_has_pmix() ? ", PMIx" : "");
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "-t") == 0) {
        print_tunables();
        return 0;
    }
    if (argc == 2 && strcmp(argv[1], "--version") == 0) {
        print_version();
        return 0;
    }
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        fputs(usage_text, stdout);
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "fmpl_info: unknown argument '%s'\n%s", argv[1], usage_text);
        return 2;
    }
    printf("FMPL %s\n\nBackends:\n", FMPL_VERSION_STRING);
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) == 0)
        printf("  shared memory: /dev/shm, %.1f GiB free\n",
               (double)vfs.f_bavail * (double)vfs.f_frsize / (1024.0 * 1024 * 1024));
    else
        printf("  shared memory: /dev/shm NOT available (%s)\n", strerror(errno));
    probe_cma();
    /* Providers found, the one the backend would choose and why; its
     * tunables (FMPL_NET_*, FMPL_FABRIC) are in the list below. */
    fmpl_fab_net_describe(print_line, NULL);
    printf("\nLaunchers:\n  fmplrun: yes (PMI-1 server)\n");
    printf("  mpiexec.hydra (PMI-1): %s\n", on_path("mpiexec.hydra") ? "found" : "not found");
    printf("  Open MPI mpirun (PMIx): %s; PMIx support %s\n",
           on_path("mpirun.openmpi") ? "found" : "not found",
           fmpl_bootstrap_has_pmix() ? "built in"
                                     : "NOT built in (install libpmix-dev, reconfigure, rebuild)");
    printf("\nCollective algorithms:\n  %s\n\n", fmpl_coll_describe_selection());
    print_tunables();
    return 0;
}
