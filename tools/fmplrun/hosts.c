/* --hosts and --hostfile: which hosts run the job and how many ranks each.
 *   --hosts h1:2,h2:2          host[:slots], comma-separated (slots: 1)
 *   --hostfile FILE            one host a line: "host", "host:N" or
 *                              "host slots=N"; '#' starts a comment
 * A host named twice adds up its slots.  Ranks go to the hosts in order,
 * each host's in one block (ranks 0-1 on h1, 2-3 on h2): a host fills its
 * slots before the next one starts.  With more ranks than slots the extra
 * ranks are spread over the hosts in turn (those hosts are oversubscribed);
 * -n defaults to the number of slots. */
#include "fmplrun.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int add_host(fr_job *job, const char *name, size_t len, long slots, const char *where)
{
    if (len == 0 || len >= sizeof job->hosts[0].name) {
        fr_msg("%s: a host name is empty or longer than %zu characters", where,
               sizeof job->hosts[0].name - 1);
        return -1;
    }
    if (slots < 1 || slots > FR_MAX_RANKS) {
        fr_msg("%s: host '%.*s' has %ld slots (expected 1..%d)", where, (int)len, name, slots,
               FR_MAX_RANKS);
        return -1;
    }
    for (int h = 0; h < job->nhosts; h++)
        if (strlen(job->hosts[h].name) == len && strncmp(job->hosts[h].name, name, len) == 0) {
            job->hosts[h].slots += (int)slots;
            return 0;
        }
    fr_host *more = realloc(job->hosts, (size_t)(job->nhosts + 1) * sizeof *more);
    if (!more) {
        fr_msg("out of memory for the host list");
        return -1;
    }
    job->hosts = more;
    fr_host *h = &job->hosts[job->nhosts++];
    memset(h, 0, sizeof *h);
    memcpy(h->name, name, len);
    h->name[len] = '\0';
    h->slots = (int)slots;
    h->pid = -1;
    h->stdin_fd = h->conn.fd = h->out.fd = h->err.fd = -1;
    return 0;
}

/* "host" or "host:N". */
static int parse_entry(fr_job *job, const char *e, size_t len, const char *where)
{
    const char *colon = memchr(e, ':', len);
    long slots = 1;
    size_t nlen = len;
    if (colon) {
        nlen = (size_t)(colon - e);
        char num[16];
        size_t dl = len - nlen - 1;
        if (dl == 0 || dl >= sizeof num) {
            fr_msg("%s: invalid slot count in '%.*s'", where, (int)len, e);
            return -1;
        }
        memcpy(num, colon + 1, dl);
        num[dl] = '\0';
        char *end;
        errno = 0;
        slots = strtol(num, &end, 10);
        if (*end || errno) {
            fr_msg("%s: invalid slot count in '%.*s'", where, (int)len, e);
            return -1;
        }
    }
    return add_host(job, e, nlen, slots, where);
}

static int parse_list(fr_job *job, const char *list)
{
    const char *p = list;
    while (*p) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (parse_entry(job, p, len, "--hosts") != 0)
            return -1;
        p += len + (comma ? 1 : 0);
    }
    return 0;
}

static int parse_file(fr_job *job, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fr_msg("cannot open the hostfile %s: %s", path, strerror(errno));
        return -1;
    }
    char line[1024], where[1100];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        snprintf(where, sizeof where, "%s:%d", path, lineno);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        size_t end = strlen(line);
        while (end > 0 && isspace((unsigned char)line[end - 1]))
            line[--end] = '\0';
        char *w = line;
        while (isspace((unsigned char)*w))
            w++;
        size_t len = strcspn(w, " \t\r\n");
        if (len == 0)
            continue;
        char *rest = w + len;
        while (isspace((unsigned char)*rest))
            rest++;
        if (strncmp(rest, "slots=", 6) == 0) {
            char *end;
            long slots = strtol(rest + 6, &end, 10);
            while (isspace((unsigned char)*end))
                end++;
            if (end == rest + 6 || *end) {
                fr_msg("%s: invalid 'slots=' in the hostfile", where);
                rc = -1;
            } else {
                rc = add_host(job, w, len, slots, where);
            }
        } else if (*rest) {
            fr_msg("%s: unexpected '%.40s' (expected 'host', 'host:N' or 'host slots=N')", where,
                   rest);
            rc = -1;
        } else {
            rc = parse_entry(job, w, len, where);
        }
    }
    fclose(f);
    if (rc == 0 && job->nhosts == 0) {
        fr_msg("the hostfile %s names no host", path);
        rc = -1;
    }
    return rc;
}

int fr_hosts_plan(fr_job *job)
{
    if ((job->opt.hosts && parse_list(job, job->opt.hosts) != 0) ||
        (job->opt.hostfile && parse_file(job, job->opt.hostfile) != 0))
        return FR_EXIT_LAUNCHER;
    int slots = 0;
    for (int h = 0; h < job->nhosts; h++)
        slots += job->hosts[h].slots;
    if (job->opt.nranks == 0)
        job->opt.nranks = slots > FR_MAX_RANKS ? FR_MAX_RANKS : slots;
    int n = job->opt.nranks, left = n;
    for (int h = 0; h < job->nhosts; h++) {
        job->hosts[h].count = left < job->hosts[h].slots ? left : job->hosts[h].slots;
        left -= job->hosts[h].count;
    }
    for (int h = 0; left > 0; h = (h + 1) % job->nhosts, left--)
        job->hosts[h].count++;
    int first = 0;
    for (int h = 0; h < job->nhosts; h++) {
        job->hosts[h].first = first;
        first += job->hosts[h].count;
    }
    return 0;
}
