/* fmplrun's command line.  Options come first; the first word that is not
 * an option is the program, and every word after it belongs to the program. */
#include "fmplrun.h"
#include "fmpl.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: fmplrun [-n N] [--hosts LIST | --hostfile FILE] [options] PROGRAM [ARGS...]\n"
    "\n"
    "Start N ranks of PROGRAM and serve their PMI-1 requests (PMI_FD, PMI_RANK,\n"
    "PMI_SIZE, FMPL_LAUNCHER=fmplrun are set for each).  If any rank fails, the\n"
    "whole job is ended within a second.  Without --hosts every rank runs on\n"
    "this machine.  With --hosts or --hostfile, fmplrun starts one proxy per\n"
    "host (itself, through ssh), each starting that host's ranks; the hosts\n"
    "must see the program and fmplrun at the same paths, as on a cluster's\n"
    "shared file system.  The environment and working directory go along.\n"
    "\n"
    "options:\n"
    "  -n N, -np N         number of ranks (1..4096; with --hosts: the slots)\n"
    "  --hosts LIST        hosts and their slots: h1:2,h2:2 (slots: 1 if left out);\n"
    "                      each host's ranks in one block, in order\n"
    "  --hostfile FILE     one host a line: 'host', 'host:N' or 'host slots=N'\n"
    "  --launcher-exec CMD start proxies as 'CMD HOST COMMAND' (COMMAND: one shell\n"
    "                      command line, as ssh takes it); default: ssh -x -o\n"
    "                      BatchMode=yes; this host and localhost: no launcher\n"
    "  --head-address ADDR the address proxies connect back to (default: the\n"
    "                      address their ssh connection came from)\n"
    "  --connect-timeout S seconds a host's proxy has to connect (default 30)\n"
    "  --bind core|none    core: pin rank r to CPU (r mod C) of the C allowed CPUs;\n"
    "                      default: core when N <= C, else none (oversubscribed)\n"
    "  --tag-output        prefix every output line of rank r with \"[r] \", and of\n"
    "                      rank r of spawned group g with \"[g:r] \"\n"
    "  --universe-size U   what MPI_UNIVERSE_SIZE reports (default: the slots\n"
    "                      with --hosts, else the larger of N and the CPUs;\n"
    "                      never fewer than the processes running)\n"
    "  --timeout SECONDS   end the job after SECONDS (0: never, the default)\n"
    "  -v, --verbose       report binding, ranks and teardown (-v -v: PMI traffic)\n"
    "  -h, --help          this text\n"
    "  --version           print the version\n"
    "\n"
    "Only rank 0 reads standard input, and only when it is not a terminal\n"
    "(across hosts: never).  A rank's failure, or a host lost (its ssh ends, its\n"
    "proxy's connection breaks), ends the job on every host; a proxy that loses\n"
    "fmplrun kills its ranks, so nothing is left behind.\n"
    "SIGINT, SIGTERM and SIGHUP are forwarded to all ranks (SIGKILL after 1 s).\n"
    "\n"
    "MPI dynamic processes: a rank may spawn more processes (MPI_Comm_spawn);\n"
    "each spawn is a group, a world of its own, started like the initial ranks\n"
    "(same environment, binding, output relay) with PMI_SPAWNED=1.  Across\n"
    "hosts info host/hosts (h1,h2:3) names job hosts, else each process goes\n"
    "to the first host with a free slot (counting the live processes); that\n"
    "host's proxy starts it.  Every process has a universe index\n"
    "(FMPL_UNIVERSE_RANK; the ranks 0..N-1 first, then each spawn's in turn,\n"
    "4096 in the job's life).  A failure of any process ends the whole job;\n"
    "fmplrun returns when every process of every group has ended.  It also\n"
    "serves name publishing (MPI_Publish_name, MPI_Lookup_name).\n"
    "\n"
    "exit status:\n"
    "  0        every process (the ranks and any they spawned) exited 0\n"
    "  S        the exit status S of the first rank that failed, or the code it\n"
    "           passed to abort (1 when that code is 0)\n"
    "  128+K    the first failing rank was killed by signal K, or fmplrun\n"
    "           received signal K (e.g. 143 for SIGTERM)\n"
    "  1        a rank exited 0 while the others waited for it in a PMI barrier\n"
    "  124      --timeout expired\n"
    "  125      usage error or launcher failure\n"
    "  126      PROGRAM is not executable\n"
    "  127      PROGRAM was not found\n";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "fmplrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'fmplrun --help' for more information.\n");
    return FR_EXIT_LAUNCHER;
}

/* "--name=value" or "--name value": the value, advancing *i; NULL if absent. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t len = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, len) == 0 && a[len] == '=')
        return a + len + 1;
    if (*i + 1 >= argc)
        return NULL;
    return argv[++*i];
}

static int is_option(const char *a, const char *name)
{
    size_t len = strlen(name);
    return strncmp(a, name, len) == 0 && (a[len] == '\0' || a[len] == '=');
}

int fr_parse_args(int argc, char **argv, fr_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->bind = FR_BIND_DEFAULT;
    opt->connect_timeout = 30;
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0')
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(a, "--version") == 0) {
            printf("fmplrun (FMPL) %s\n", FMPL_VERSION_STRING);
            return 0;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            opt->verbose++;
        } else if (strcmp(a, "-vv") == 0) {
            opt->verbose += 2;
        } else if (strcmp(a, "--tag-output") == 0) {
            opt->tag_output = 1;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0) {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs a number of ranks", a);
            const char *v = argv[++i];
            char *end;
            errno = 0;
            long n = strtol(v, &end, 10);
            if (end == v || *end || errno || n < 1 || n > FR_MAX_RANKS)
                return usage_error("invalid number of ranks '%s' (expected 1..4096)", v);
            opt->nranks = (int)n;
        } else if (is_option(a, "--bind")) {
            const char *v = option_value(argc, argv, &i, "--bind");
            if (!v)
                return usage_error("option '%s' needs 'core' or 'none'", a);
            if (strcmp(v, "core") == 0)
                opt->bind = FR_BIND_CORE;
            else if (strcmp(v, "none") == 0)
                opt->bind = FR_BIND_NONE;
            else
                return usage_error("invalid --bind '%s' (expected core or none)", v);
        } else if (is_option(a, "--universe-size")) {
            const char *v = option_value(argc, argv, &i, "--universe-size");
            char *end;
            errno = 0;
            long u = v ? strtol(v, &end, 10) : 0;
            if (!v || end == v || *end || errno || u < 1 || u > FR_MAX_RANKS)
                return usage_error("invalid --universe-size '%s' (expected 1..4096)",
                                   v ? v : "");
            opt->universe_size = (int)u;
        } else if (is_option(a, "--timeout")) {
            const char *v = option_value(argc, argv, &i, "--timeout");
            if (!v)
                return usage_error("option '%s' needs a number of seconds", a);
            char *end;
            double t = strtod(v, &end);
            if (end == v || *end || !isfinite(t) || t < 0 || t > 1e7)
                return usage_error("invalid --timeout '%s' (expected seconds >= 0)", v);
            opt->timeout = t;
        } else if (is_option(a, "--hosts") || is_option(a, "--host") || is_option(a, "-hosts")) {
            const char *name = is_option(a, "--hosts") ? "--hosts"
                               : is_option(a, "--host") ? "--host" : "-hosts";
            if (!(opt->hosts = option_value(argc, argv, &i, name)) || !*opt->hosts)
                return usage_error("option '%s' needs a list of hosts (h1:2,h2:2)", a);
        } else if (is_option(a, "--hostfile") || is_option(a, "-f")) {
            if (!(opt->hostfile = option_value(argc, argv, &i, a[1] == 'f' ? "-f" : "--hostfile")))
                return usage_error("option '%s' needs a file", a);
        } else if (is_option(a, "--launcher-exec")) {
            if (!(opt->launcher_exec = option_value(argc, argv, &i, "--launcher-exec")) ||
                !*opt->launcher_exec)
                return usage_error("option '%s' needs a command", a);
        } else if (is_option(a, "--head-address")) {
            if (!(opt->head_address = option_value(argc, argv, &i, "--head-address")))
                return usage_error("option '%s' needs an address", a);
        } else if (is_option(a, "--connect-timeout")) {
            const char *v = option_value(argc, argv, &i, "--connect-timeout");
            char *end;
            double t = v ? strtod(v, &end) : 0;
            if (!v || end == v || *end || !isfinite(t) || t <= 0 || t > 1e6)
                return usage_error("invalid --connect-timeout '%s' (expected seconds > 0)",
                                   v ? v : "");
            opt->connect_timeout = t;
        } else if (is_option(a, "--proxy")) { /* internal: started by a head fmplrun */
            if (!(opt->proxy_head = option_value(argc, argv, &i, "--proxy")))
                return usage_error("option '%s' needs HOST:PORT", a);
        } else if (is_option(a, "--proxy-job")) {
            if (!(opt->proxy_job = option_value(argc, argv, &i, "--proxy-job")))
                return usage_error("option '%s' needs a job name", a);
        } else if (is_option(a, "--proxy-wdir")) {
            if (!(opt->proxy_wdir = option_value(argc, argv, &i, "--proxy-wdir")))
                return usage_error("option '%s' needs a directory", a);
        } else if (is_option(a, "--proxy-host")) {
            const char *v = option_value(argc, argv, &i, "--proxy-host");
            if (!v || sscanf(v, "%d", &opt->proxy_host) != 1 || opt->proxy_host < 0)
                return usage_error("invalid --proxy-host '%s'", v ? v : "");
        } else if (is_option(a, "--proxy-ranks")) {
            const char *v = option_value(argc, argv, &i, "--proxy-ranks");
            if (!v || sscanf(v, "%d:%d", &opt->proxy_first, &opt->proxy_count) != 2 ||
                opt->proxy_first < 0 || opt->proxy_count < 0)
                return usage_error("invalid --proxy-ranks '%s' (expected FIRST:COUNT)",
                                   v ? v : "");
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (opt->hosts && opt->hostfile)
        return usage_error("%s--hosts and --hostfile exclude each other", "");
    if (opt->proxy_head && (!opt->proxy_job || opt->nranks == 0 ||
                            opt->proxy_first + opt->proxy_count > opt->nranks))
        return usage_error("%s--proxy needs --proxy-job, -n and --proxy-ranks within -n", "");
    if (opt->nranks == 0 && !opt->hosts && !opt->hostfile)
        return usage_error("%smissing -n N (the number of ranks)", "");
    if (i >= argc)
        return usage_error("%smissing the program to run", "");
    opt->argv = argv + i;
    return -1;
}
