/* What a spawned command may be, shared by fmplrun (tools/fmplrun/
 * dynamic.c) and libfmpl's PMIx client (pmix_dynamic.c), so that
 * MPI_Comm_spawn checks a command the same way under both launchers:
 * the host must be this one, the working directory a directory, the
 * program found and executable.  Header-only, like jobid.h: fmplrun links
 * nothing of libfmpl. */
#ifndef FMPL_BOOTSTRAP_SPAWN_RULES_H
#define FMPL_BOOTSTRAP_SPAWN_RULES_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* localhost, or this machine's name (with or without its domain). */
static inline int fmpl_spawn_host_is_here(const char *name)
{
    char me[256];
    if (strcmp(name, "localhost") == 0)
        return 1;
    if (gethostname(me, sizeof me) != 0)
        return 0;
    me[sizeof me - 1] = '\0';
    size_t short_len = strcspn(me, ".");
    return strcmp(name, me) == 0 ||
           (strlen(name) == short_len && strncmp(name, me, short_len) == 0);
}

/* DIR/NAME into path[len], DIR taken from base when relative (base NULL:
 * left relative).  0, or ENAMETOOLONG when it does not fit. */
static inline int fmpl_spawn_join_path(char *path, size_t len, const char *base,
                                       const char *dir, size_t dlen, const char *name)
{
    int n;
    if (base && (dlen == 0 || dir[0] != '/'))
        n = snprintf(path, len, "%s/%.*s%s%s", base, (int)dlen, dir, dlen ? "/" : "", name);
    else
        n = snprintf(path, len, "%.*s%s%s", (int)dlen, dir, dlen ? "/" : "", name);
    return n < 0 || (size_t)n >= len ? ENAMETOOLONG : 0;
}

/* errno-style result of looking PROG up like execvp would: in DIRS
 * (colon-separated; NULL: $PATH) unless it holds a '/'.  BASE (NULL: none)
 * is the directory relative names are taken from; the result is then
 * absolute. */
static inline int fmpl_spawn_find_program(const char *prog, const char *dirs, const char *base,
                                          char *path, size_t len)
{
    struct stat st;
    if (strchr(prog, '/')) {
        if (fmpl_spawn_join_path(path, len, prog[0] == '/' ? NULL : base, "", 0, prog))
            return ENAMETOOLONG;
        if (stat(path, &st) != 0)
            return errno;
        if (S_ISDIR(st.st_mode))
            return EISDIR;
        return access(path, X_OK) == 0 ? 0 : errno;
    }
    if (!dirs)
        dirs = getenv("PATH");
    if (!dirs || !*dirs)
        dirs = "/usr/local/bin:/usr/bin:/bin";
    int err = ENOENT;
    while (*dirs) {
        const char *colon = strchr(dirs, ':');
        size_t dlen = colon ? (size_t)(colon - dirs) : strlen(dirs);
        if (fmpl_spawn_join_path(path, len, base, dlen ? dirs : ".", dlen ? dlen : 1, prog))
            err = ENAMETOOLONG;
        else if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
            if (access(path, X_OK) == 0)
                return 0;
            err = EACCES;
        }
        dirs += dlen + (colon ? 1 : 0);
    }
    return err;
}

/* The absolute directory a command starts in, into dir[len]: info wdir
 * (relative to ours), else ours.  0; -errno when ours cannot be read; an
 * errno when wdir cannot be entered. */
static inline int fmpl_spawn_start_dir(const char *wdir, char *dir, size_t len)
{
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        return -errno;
    if (!wdir)
        snprintf(dir, len, "%s", cwd);
    else if (wdir[0] == '/')
        snprintf(dir, len, "%s", wdir);
    else
        snprintf(dir, len, "%s/%s", cwd, wdir);
    struct stat st;
    if (!wdir)
        return 0;
    return stat(dir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR
                                       : access(dir, X_OK) != 0 ? errno : 0;
}

#endif
