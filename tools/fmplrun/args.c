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
    "usage: fmplrun -n N [options] PROGRAM [ARGS...]\n"
    "\n"
    "Start N ranks of PROGRAM and serve their PMI-1 requests (PMI_FD, PMI_RANK,\n"
    "PMI_SIZE, FMPL_LAUNCHER=fmplrun are set for each).  If any rank fails, the\n"
    "whole job is ended within a second.\n"
    "\n"
    "options:\n"
    "  -n N, -np N         number of ranks (1..4096)\n"
    "  --bind core|none    core: pin rank r to CPU (r mod C) of the C allowed CPUs;\n"
    "                      default: core when N <= C, else none (oversubscribed)\n"
    "  --tag-output        prefix every output line of rank r with \"[r] \"\n"
    "  --timeout SECONDS   end the job after SECONDS (0: never, the default)\n"
    "  -v, --verbose       report binding, ranks and teardown (-v -v: PMI traffic)\n"
    "  -h, --help          this text\n"
    "  --version           print the version\n"
    "\n"
    "Only rank 0 reads standard input, and only when it is not a terminal.\n"
    "SIGINT, SIGTERM and SIGHUP are forwarded to all ranks (SIGKILL after 1 s).\n"
    "\n"
    "exit status:\n"
    "  0        every rank exited 0\n"
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
        } else if (is_option(a, "--timeout")) {
            const char *v = option_value(argc, argv, &i, "--timeout");
            if (!v)
                return usage_error("option '%s' needs a number of seconds", a);
            char *end;
            double t = strtod(v, &end);
            if (end == v || *end || !isfinite(t) || t < 0 || t > 1e7)
                return usage_error("invalid --timeout '%s' (expected seconds >= 0)", v);
            opt->timeout = t;
        } else {
            return usage_error("unknown option '%s'", a);
        }
    }
    if (opt->nranks == 0)
        return usage_error("%smissing -n N (the number of ranks)", "");
    if (i >= argc)
        return usage_error("%smissing the program to run", "");
    opt->argv = argv + i;
    return -1;
}
