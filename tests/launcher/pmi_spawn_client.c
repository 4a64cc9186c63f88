/* A PMI-1 client of fmplrun's dynamic-process service, speaking the wire
 * protocol by hand on PMI_FD (no libfmpl): spawn requests (one and several
 * blocks, refusals), spawned processes' environment, arguments, working
 * directory and preput keys, per-group barriers, keys visible across
 * groups, name publishing and rendezvous queues.  launcher_cases.sh runs
 * it under fmplrun and checks its "ok" lines and exit statuses.
 *
 * usage: pmi_spawn_client MODE ARGS...
 *   parent WORKDIR UNIVERSE  initial ranks (-n 2): rank 0 spawns (WORKDIR
 *                            holds "noexec", executable but no program)
 *   child ...                the 2 processes of rank 0's first spawn
 *   appnum N                 the processes of its two-block spawn
 *   fail-parent PIDDIR KIND  -n 1: spawns 2 KIND, then waits
 *   fail-child PIDDIR        group rank 1 exits 5 after a barrier
 *   hang-child PIDDIR        waits (for --timeout)
 *   nobarrier-child PIDDIR   group rank 1 exits 0 without the barrier
 *   hosts A B HA HB          across hosts (--hosts A:2,B:2 -n 2: both ranks on
 *                            A; HA, HB: the hostnames A and B report):
 *                            spawns placed by default (onto B, started
 *                            then) and by info host/hosts, refusals,
 *                            keys, names and queues across hosts and groups
 *   hosts-child HOSTNAMES 0|1  a process of those spawns: HOSTNAMES, comma-
 *                            separated, is where each world rank must run;
 *                            1: both run on one job host (local ids 0, 1)
 *   hosts-unreachable B HA   -n 1 on A:1,B:1, B's ssh failing: a spawn onto B
 *                            is refused (B lost), B refused from then on, a
 *                            default spawn goes to A (whose hostname is HA)
 *   hosts-wdir A B HA WDIR PIDDIR  -n 1: WDIR exists on A only: a spawn
 *                            over A and B is refused by B (A's process,
 *                            a hosts-sleeper, killed), one on A runs there
 *   hosts-fail-parent DIR    -n 1: spawns 1 hosts-sleeper, waits
 *   hosts-sleeper DIR        records its pid, hostname and a /dev/shm file
 *                            of the job in DIR, then sleeps (to be killed)
 *   tag-parent               spawns 2 tag-child, which print a line */
#include "bootstrap/jobid.h"
#include "bootstrap/pmi1_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int pmi_fd = -1;
static char me[64] = "?"; /* for messages: "parent 0", "child 1", ... */
static char kvsname[FMPL_PMI1_KVSNAME_MAX];

__attribute__((format(printf, 2, 3), noreturn)) static void fail_if_reached(int line,
                                                                           const char *fmt, ...)
{
    fprintf(stderr, "pmi_spawn_client %s: FAIL (line %d): ", me, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}
#define check(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond))                                                                              \
            fail_if_reached(__LINE__, __VA_ARGS__);                                               \
    } while (0)

static void send_text(const char *text)
{
    for (size_t off = 0, len = strlen(text); off < len;) {
        ssize_t w = write(pmi_fd, text + off, len - off);
        check(w > 0 || errno == EINTR, "write to PMI_FD: %s", strerror(errno));
        if (w > 0)
            off += (size_t)w;
    }
}

/* One reply line (without its newline), in a static buffer. */
static const char *read_reply(void)
{
    static char line[FMPL_PMI1_LINE_MAX];
    size_t len = 0;
    for (;;) {
        char c;
        ssize_t got = read(pmi_fd, &c, 1);
        if (got < 0 && errno == EINTR)
            continue;
        check(got == 1, "PMI_FD closed by the launcher");
        if (c == '\n')
            break;
        check(len + 1 < sizeof line, "reply too long");
        line[len++] = c;
    }
    line[len] = '\0';
    return line;
}

__attribute__((format(printf, 1, 2))) static const char *ask(const char *fmt, ...)
{
    char line[FMPL_PMI1_LINE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    strcat(line, "\n");
    send_text(line);
    return read_reply();
}

/* The value of key in a reply ("" when absent). */
static const char *val(const char *reply, const char *key)
{
    static char v[4][FMPL_PMI1_VALLEN_MAX];
    static int next;
    char *out = v[next++ % 4];
    if (fmpl_pmi1_field(reply, key, out, FMPL_PMI1_VALLEN_MAX) != 0)
        out[0] = '\0';
    return out;
}

static void expect_reply(const char *reply, const char *cmd, const char *rc)
{
    check(strcmp(val(reply, "cmd"), cmd) == 0 && strcmp(val(reply, "rc"), rc) == 0,
          "expected cmd=%s rc=%s, got '%s'", cmd, rc, reply);
}

static int env_int(const char *name)
{
    const char *v = getenv(name);
    check(v && *v, "%s is not set", name);
    return atoi(v);
}

static void pmi_init(void)
{
    pmi_fd = env_int("PMI_FD");
    const char *r = ask("cmd=init pmi_version=1 pmi_subversion=1");
    expect_reply(r, "response_to_init", "0");
    r = ask("cmd=get_my_kvsname");
    snprintf(kvsname, sizeof kvsname, "%s", val(r, "kvsname"));
    check(kvsname[0], "no kvsname in '%s'", r);
}

static void finalize(void)
{
    check(strcmp(val(ask("cmd=finalize"), "cmd"), "finalize_ack") == 0, "no finalize_ack");
}

static void barrier(void)
{
    check(strcmp(ask("cmd=barrier_in"), "cmd=barrier_out") == 0, "barrier failed");
}

static void put(const char *key, const char *value)
{
    expect_reply(ask("cmd=put kvsname=%s key=%s value=%s", kvsname, key, value), "put_result",
                 "0");
}

/* The value of key, or NULL when the store has none. */
static const char *get(const char *key)
{
    const char *r = ask("cmd=get kvsname=%s key=%s", kvsname, key);
    check(strcmp(val(r, "cmd"), "get_result") == 0, "bad get reply '%s'", r);
    return strcmp(val(r, "rc"), "0") == 0 ? val(r, "value") : NULL;
}

/* Poll for a key another process puts later (bounded: 20 s). */
static const char *get_eventually(const char *key)
{
    for (int i = 0; i < 4000; i++) {
        const char *v = get(key);
        if (v)
            return v;
        usleep(5000);
    }
    fail_if_reached(__LINE__, "key %s never appeared", key);
}

static const char *take_eventually(const char *queue)
{
    for (int i = 0; i < 4000; i++) {
        const char *r = ask("cmd=fmpl_take queue=%s", queue);
        if (strcmp(val(r, "rc"), "0") == 0) {
            expect_reply(r, "fmpl_take_result", "0");
            return val(r, "value");
        }
        check(strcmp(r, "cmd=fmpl_take_result rc=-1 msg=empty") == 0, "bad take reply '%s'", r);
        usleep(5000);
    }
    fail_if_reached(__LINE__, "queue %s stayed empty", queue);
}

static int int_reply(const char *request, const char *cmd, const char *key)
{
    const char *r = ask("%s", request);
    check(strcmp(val(r, "cmd"), cmd) == 0 && val(r, key)[0], "bad reply '%s' to %s", r, request);
    return atoi(val(r, key));
}

/* One command of a spawn request. */
typedef struct block {
    int nprocs;
    const char *exec;
    const char *const *args;  /* NULL-terminated; NULL: none */
    const char *const *info;  /* key, value, ..., NULL */
} block;

/* Send a spawn of nb blocks with the preput pairs (key, value, ..., NULL);
 * the reply. */
static const char *spawn(const block *b, int nb, const char *const *preput)
{
    for (int i = 0; i < nb; i++) {
        char text[16384];
        size_t off = 0;
        int nargs = 0, ninfo = 0, npre = 0;
        while (b[i].args && b[i].args[nargs])
            nargs++;
        while (b[i].info && b[i].info[2 * ninfo])
            ninfo++;
        while (preput && preput[2 * npre])
            npre++;
#define ADD(...) (off += (size_t)snprintf(text + off, sizeof text - off, __VA_ARGS__))
        ADD("mcmd=spawn\nnprocs=%d\nexecname=%s\ntotspawns=%d\nspawnssofar=%d\nargcnt=%d\n",
            b[i].nprocs, b[i].exec, nb, i + 1, nargs);
        for (int a = 0; a < nargs; a++)
            ADD("arg%d=%s\n", a + 1, b[i].args[a]);
        ADD("preput_num=%d\n", npre);
        for (int p = 0; p < npre; p++)
            ADD("preput_key_%d=%s\npreput_val_%d=%s\n", p, preput[2 * p], p, preput[2 * p + 1]);
        ADD("info_num=%d\n", ninfo);
        for (int k = 0; k < ninfo; k++)
            ADD("info_key_%d=%s\ninfo_val_%d=%s\n", k, b[i].info[2 * k], k, b[i].info[2 * k + 1]);
        ADD("endcmd\n");
#undef ADD
        check(off < sizeof text, "spawn request too long for the test");
        send_text(text);
    }
    return read_reply();
}

static void expect_refusal(const char *reply, const char *why)
{
    expect_reply(reply, "spawn_result", "-1");
    check(strstr(val(reply, "msg"), why), "refusal '%s' lacks '%s'", reply, why);
}

static void self_path(char *path, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", path, len - 1);
    check(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
    path[n] = '\0';
}

static void record_pid(const char *dir)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/pid.%ld", dir, (long)getpid());
    FILE *f = fopen(path, "w");
    check(f, "cannot write %s", path);
    fprintf(f, "%s\n", me);
    fclose(f);
}

/* ------------------------------------------------------------ the modes */

static void parent(const char *workdir, int universe)
{
    int rank = env_int("PMI_RANK");
    snprintf(me, sizeof me, "parent %d", rank);
    check(!getenv("PMI_SPAWNED"), "PMI_SPAWNED set in an initial rank");
    check(env_int("FMPL_UNIVERSE_RANK") == rank && env_int("FMPL_UNIVERSE_BASE") == 0,
          "initial rank's universe index or base wrong");
    pmi_init();
    check(int_reply("cmd=get_universe_size", "universe_size", "size") == universe,
          "universe size is not %d", universe);
    check(int_reply("cmd=get_appnum", "appnum", "appnum") == 0, "appnum of an initial rank");
    if (rank == 0) {
        char self[PATH_MAX], dir[PATH_MAX];
        self_path(self, sizeof self);
        snprintf(dir, sizeof dir, "%s", self);
        *strrchr(dir, '/') = '\0';
        const char *base = strrchr(self, '/') + 1;

        /* Names: publish, a second publish of the same name, a lookup of none. */
        expect_reply(ask("cmd=publish_name service=svc-a port=tag#1"), "publish_result", "0");
        expect_reply(ask("cmd=publish_name service=svc-a port=other"), "publish_result", "-1");
        expect_reply(ask("cmd=lookup_name service=svc-none"), "lookup_result", "-1");

        /* Refusals: nothing may start. */
        block missing = {1, "no-such-program-xyz", NULL, NULL};
        expect_refusal(spawn(&missing, 1, NULL), "cannot_execute_'no-such-program-xyz'");
        const char *far_info[] = {"host", "no-such-host.invalid", NULL};
        block far = {1, self, NULL, far_info};
        expect_refusal(spawn(&far, 1, NULL), "unknown_host_'no-such-host.invalid'");
        block huge = {4095, self, NULL, NULL}; /* 2 + 4095 > FR_MAX_RANKS */
        expect_refusal(spawn(&huge, 1, NULL), "universe_full");
        const char *bad_wdir[] = {"wdir", "/no/such/dir", NULL};
        block lost = {1, self, NULL, bad_wdir};
        expect_refusal(spawn(&lost, 1, NULL), "cannot_enter_wdir_'/no/such/dir'");

        /* Two children: arguments with spaces, preput keys, a working directory. */
        const char *args[] = {"child", "arg with  spaces", " lead", "x=y", "", NULL};
        const char *info[] = {"wdir", workdir, "soft", "ignored", NULL};
        const char *preput[] = {"parent_kvs", kvsname, "expected_wdir", workdir,
                                "greeting", "hello-preput", NULL};
        block kids = {2, self, args, info};
        const char *r = spawn(&kids, 1, preput);
        expect_reply(r, "spawn_result", "0");
        check(atoi(val(r, "fmpl_universe_first")) == 2, "first spawn at '%s'", r);

        /* Two blocks (MPI_Comm_spawn_multiple): the first found through
         * info path, each with its appnum. */
        const char *app0[] = {"appnum", "0", NULL}, *app1[] = {"appnum", "1", NULL};
        const char *path_info[] = {"path", dir, NULL};
        block multi[2] = {{1, base, app0, path_info}, {1, self, app1, NULL}};
        r = spawn(multi, 2, NULL);
        expect_reply(r, "spawn_result", "0");
        check(atoi(val(r, "fmpl_universe_first")) == 4, "second spawn at '%s'", r);

        /* Keys and queues across groups. */
        put("parent.key", "from-parent");
        expect_reply(ask("cmd=fmpl_post queue=down value=v1"), "fmpl_post_result", "0");
        expect_reply(ask("cmd=fmpl_post queue=down value=v2"), "fmpl_post_result", "0");
        check(strcmp(get_eventually("child.0"), "child0-says-hi") == 0, "child.0's value");
        check(strcmp(take_eventually("up"), "from-child-1") == 0, "queue up's value");
        check(strcmp(ask("cmd=fmpl_take queue=up"), "cmd=fmpl_take_result rc=-1 msg=empty") == 0,
              "queue up not empty after its one value");
        check(!get("greeting"), "a spawned group's preput key seen by its parent");

        /* The children looked svc-a up before posting: now it may go. */
        expect_reply(ask("cmd=unpublish_name service=svc-a"), "unpublish_result", "0");
        expect_reply(ask("cmd=unpublish_name service=svc-a"), "unpublish_result", "-1");
        expect_reply(ask("cmd=lookup_name service=svc-a"), "lookup_result", "-1");

        /* A program that passes the checks but cannot be executed: refused
         * after the fork, and its processes' ends do not end the job. */
        char noexec[PATH_MAX];
        snprintf(noexec, sizeof noexec, "%s/noexec", workdir);
        block bad = {2, noexec, NULL, NULL};
        expect_refusal(spawn(&bad, 1, NULL), "Exec_format_error");
    }
    barrier(); /* group 0's: rank 1 waits here all along */
    finalize();
    printf("parent rank %d ok\n", rank);
}

static void child(int argc, char **argv)
{
    int rank = env_int("PMI_RANK");
    snprintf(me, sizeof me, "child %d", rank);
    const char *spawned = getenv("PMI_SPAWNED");
    check(spawned && strcmp(spawned, "1") == 0, "PMI_SPAWNED is not 1");
    check(env_int("PMI_SIZE") == 2 && (rank == 0 || rank == 1), "world rank %d of %d", rank,
          env_int("PMI_SIZE"));
    check(env_int("FMPL_UNIVERSE_BASE") == 2 && env_int("FMPL_UNIVERSE_RANK") == 2 + rank,
          "universe index %d, base %d", env_int("FMPL_UNIVERSE_RANK"),
          env_int("FMPL_UNIVERSE_BASE"));
    check(strcmp(getenv("FMPL_LAUNCHER"), "fmplrun") == 0, "FMPL_LAUNCHER");
    check(argc == 6 && strcmp(argv[2], "arg with  spaces") == 0 && strcmp(argv[3], " lead") == 0 &&
              strcmp(argv[4], "x=y") == 0 && strcmp(argv[5], "") == 0,
          "arguments not passed intact (argc %d)", argc);
    pmi_init();
    const char *parent_kvs = get("parent_kvs");
    check(parent_kvs && strcmp(parent_kvs, kvsname) == 0, "kvsname differs from the parent's");
    const char *greeting = get("greeting");
    check(greeting && strcmp(greeting, "hello-preput") == 0, "preput key greeting");
    char cwd[PATH_MAX], want[PATH_MAX];
    const char *wdir = get("expected_wdir");
    check(wdir && realpath(wdir, want) && getcwd(cwd, sizeof cwd) && strcmp(cwd, want) == 0,
          "working directory is not info wdir");
    check(int_reply("cmd=get_appnum", "appnum", "appnum") == 0, "appnum of a one-block spawn");
    check(int_reply("cmd=get_universe_size", "universe_size", "size") == 8, "universe size");

    char key[32], value[64];
    snprintf(key, sizeof key, "child.%d", rank);
    snprintf(value, sizeof value, "child%d-says-hi", rank);
    put(key, value);
    if (rank == 0) {
        const char *r = ask("cmd=lookup_name service=svc-a");
        expect_reply(r, "lookup_result", "0");
        check(strcmp(val(r, "port"), "tag#1") == 0, "looked up '%s'", r);
    } else {
        expect_reply(ask("cmd=publish_name service=svc-a port=mine"), "publish_result", "-1");
    }
    barrier(); /* the group's own: both children, not the parents */
    snprintf(key, sizeof key, "child.%d", 1 - rank);
    snprintf(value, sizeof value, "child%d-says-hi", 1 - rank);
    const char *other = get(key);
    check(other && strcmp(other, value) == 0, "the other child's key after the barrier");
    if (rank == 0) {
        check(strcmp(get_eventually("parent.key"), "from-parent") == 0, "the parent's key");
        check(strcmp(take_eventually("down"), "v1") == 0, "queue down: first value");
        check(strcmp(take_eventually("down"), "v2") == 0, "queue down: second value");
    } else {
        expect_reply(ask("cmd=fmpl_post queue=up value=from-child-1"), "fmpl_post_result", "0");
    }
    finalize();
    printf("child rank %d ok\n", rank);
}

static void appnum(int n)
{
    snprintf(me, sizeof me, "appnum %d", n);
    check(env_int("PMI_SIZE") == 2 && env_int("PMI_RANK") == n, "world rank of a two-block spawn");
    check(env_int("FMPL_UNIVERSE_BASE") == 4 && env_int("FMPL_UNIVERSE_RANK") == 4 + n,
          "universe index of a two-block spawn");
    pmi_init();
    check(int_reply("cmd=get_appnum", "appnum", "appnum") == n, "appnum is not %d", n);
    barrier();
    finalize();
    printf("appnum rank %d ok\n", n);
}

static void fail_parent(const char *piddir, const char *kind)
{
    snprintf(me, sizeof me, "fail-parent");
    record_pid(piddir);
    pmi_init();
    char self[PATH_MAX];
    self_path(self, sizeof self);
    const char *args[] = {kind, piddir, NULL};
    block kids = {2, self, args, NULL};
    expect_reply(spawn(&kids, 1, NULL), "spawn_result", "0");
    sleep(60); /* ended by fmplrun when the child fails, or at --timeout */
    fail_if_reached(__LINE__, "still running after the children's failure");
}

static void fail_child(const char *piddir, const char *kind)
{
    int rank = env_int("PMI_RANK");
    snprintf(me, sizeof me, "%s %d", kind, rank);
    record_pid(piddir);
    pmi_init();
    if (rank == 1 && strcmp(kind, "nobarrier-child") == 0)
        exit(0); /* while rank 0 waits for it in the barrier */
    barrier(); /* both pids are recorded */
    if (rank == 1 && strcmp(me, "fail-child 1") == 0)
        exit(5);
    sleep(60);
    fail_if_reached(__LINE__, "still running after the other child's failure");
}

static const char *my_hostname(void)
{
    static char name[256];
    check(gethostname(name, sizeof name) == 0, "gethostname: %s", strerror(errno));
    name[sizeof name - 1] = '\0';
    return name;
}

/* Spawn 2 kids (their arguments: where each must run, in world rank
 * order; "1" if both go to one job host) with the info pairs; check the
 * answer's first universe index. */
/* Children first..first+n-1 each reported that they run on `host`. */
static void expect_children_on(int first, int n, const char *host)
{
    for (int i = first; i < first + n; i++) {
        char key[32], want[300];
        snprintf(key, sizeof key, "hosts.child.%d", i);
        snprintf(want, sizeof want, "child-%d-on-%s", i, host);
        const char *v = get_eventually(key);
        check(strcmp(v, want) == 0, "%s is '%s', expected '%s'", key, v, want);
    }
}

static void hosts_spawn(const char *where, int one_host, const char *const *info, int first)
{
    char self[PATH_MAX];
    self_path(self, sizeof self);
    const char *args[] = {"hosts-child", where, one_host ? "1" : "0", NULL};
    const char *preput[] = {"hosts_greeting", "hello-across", NULL};
    block b = {2, self, args, info};
    const char *r = spawn(&b, 1, preput);
    expect_reply(r, "spawn_result", "0");
    check(atoi(val(r, "fmpl_universe_first")) == first, "spawn at '%s', expected %d", r, first);
}

static void hosts(const char *a, const char *b, const char *ha, const char *hb)
{
    int rank = env_int("PMI_RANK");
    snprintf(me, sizeof me, "hosts %d", rank);
    check(strcmp(my_hostname(), ha) == 0, "initial rank on %s, not %s", my_hostname(), ha);
    pmi_init();
    check(int_reply("cmd=get_universe_size", "universe_size", "size") == 4,
          "universe size is not the 4 slots");
    if (rank == 0) {
        char self[PATH_MAX];
        self_path(self, sizeof self);
        /* Refused at once by the head: a host not in the job. */
        const char *far_info[] = {"host", "no-such-host.invalid", NULL};
        block far = {1, self, NULL, far_info};
        expect_refusal(spawn(&far, 1, NULL), "unknown_host_'no-such-host.invalid'");
        const char *mixed_info[] = {"hosts", a, "host", "not-a-job-host", NULL};
        expect_refusal(spawn(&(block){2, self, NULL, mixed_info}, 1, NULL),
                       "unknown_host_'not-a-job-host'");
        expect_reply(ask("cmd=publish_name service=svc-kids port=kids-port"), "publish_result",
                     "0");
        /* Default placement: A's 2 slots are taken, both go to B (whose
         * proxy starts now). */
        char where[600];
        snprintf(where, sizeof where, "%s,%s", hb, hb);
        hosts_spawn(where, 1, NULL, 2);
        /* info hosts: B then A, one each; info host A:2: both on A. */
        const char *b_then_a[] = {"hosts", "", NULL};
        char list[600];
        snprintf(list, sizeof list, "%s,%s", b, a);
        b_then_a[1] = list;
        snprintf(where, sizeof where, "%s,%s", hb, ha);
        hosts_spawn(where, 0, b_then_a, 4);
        char a2[300];
        snprintf(a2, sizeof a2, "%s:2", a);
        const char *on_a[] = {"host", a2, NULL};
        snprintf(where, sizeof where, "%s,%s", ha, ha);
        hosts_spawn(where, 1, on_a, 6);

        /* Every child answers through the key-value space and a queue. */
        put("hosts.parent", "from-the-parent");
        for (int i = 2; i < 8; i++) {
            char key[32], want[64];
            snprintf(key, sizeof key, "hosts.child.%d", i);
            snprintf(want, sizeof want, "child-%d-on-%s", i, i < 4 || i == 4 ? hb : ha);
            const char *v = get_eventually(key);
            check(strcmp(v, want) == 0, "%s is '%s', expected '%s'", key, v, want);
        }
        int took = 0;
        for (int i = 0; i < 6; i++)
            took += strncmp(take_eventually("hosts.up"), "up-", 3) == 0;
        check(took == 6, "queue hosts.up held %d good values of 6", took);
        /* Refused by B's proxy: checked where it would run.  (Such a
         * refusal comes after the head placed the processes: their
         * universe indices are spent.) */
        char on_b[300];
        snprintf(on_b, sizeof on_b, "on_%s:_", b);
        const char *bad_wdir[] = {"host", b, "wdir", "/no/such/dir", NULL};
        const char *r = spawn(&(block){1, self, NULL, bad_wdir}, 1, NULL);
        expect_refusal(r, on_b);
        expect_refusal(r, "cannot_enter_wdir_'/no/such/dir'");
        const char *to_b[] = {"host", b, NULL};
        r = spawn(&(block){2, "no-such-program-xyz", NULL, to_b}, 1, NULL);
        expect_refusal(r, on_b);
        expect_refusal(r, "cannot_execute_'no-such-program-xyz'");
        expect_reply(ask("cmd=publish_name service=svc-h port=p-h"), "publish_result", "0");
        expect_reply(ask("cmd=fmpl_post queue=hq value=x1"), "fmpl_post_result", "0");
    }
    barrier();
    if (rank == 1) {
        const char *r = ask("cmd=lookup_name service=svc-h");
        expect_reply(r, "lookup_result", "0");
        check(strcmp(val(r, "port"), "p-h") == 0, "looked up '%s'", r);
        check(strcmp(take_eventually("hq"), "x1") == 0, "queue hq's value");
    }
    finalize();
    printf("hosts rank %d ok\n", rank);
}

static void hosts_unreachable(const char *b, const char *ha)
{
    snprintf(me, sizeof me, "hosts-unreachable");
    pmi_init();
    char self[PATH_MAX], why[300];
    self_path(self, sizeof self);
    put("hosts.parent", "from-the-parent");
    expect_reply(ask("cmd=publish_name service=svc-kids port=kids-port"), "publish_result", "0");
    const char *to_b[] = {"host", b, NULL};
    const char *r = spawn(&(block){1, self, NULL, to_b}, 1, NULL);
    snprintf(why, sizeof why, "on_%s:_host_lost_before_it_started_them:_", b);
    expect_refusal(r, why);
    snprintf(why, sizeof why, "host_%s_is_lost", b);
    expect_refusal(spawn(&(block){1, self, NULL, to_b}, 1, NULL), why);
    /* The default placement passes the lost host over. */
    char where[600];
    snprintf(where, sizeof where, "%s,%s", ha, ha);
    hosts_spawn(where, 1, NULL, 2);
    expect_children_on(2, 2, ha);
    finalize();
    printf("hosts-unreachable ok\n");
}

static void hosts_wdir(const char *a, const char *b, const char *ha, const char *wdir,
                       const char *piddir)
{
    snprintf(me, sizeof me, "hosts-wdir");
    pmi_init();
    char self[PATH_MAX], list[600], why[1200];
    self_path(self, sizeof self);
    put("hosts.parent", "from-the-parent");
    expect_reply(ask("cmd=publish_name service=svc-kids port=kids-port"), "publish_result", "0");
    /* A starts its process (it would sleep a minute), B refuses: the spawn
     * fails and A's process is killed, without ending the job. */
    snprintf(list, sizeof list, "%s,%s", a, b);
    const char *both[] = {"hosts", list, "wdir", wdir, NULL};
    const char *args[] = {"hosts-sleeper", piddir, NULL};
    const char *r = spawn(&(block){2, self, args, both}, 1, NULL);
    snprintf(why, sizeof why, "on_%s:_cannot_enter_wdir_'%s'", b, wdir);
    expect_refusal(r, why);
    /* On A the same wdir is fine. */
    char a2[300], where[600];
    snprintf(a2, sizeof a2, "%s:2", a);
    snprintf(where, sizeof where, "%s,%s", ha, ha);
    const char *on_a[] = {"host", a2, "wdir", wdir, NULL};
    hosts_spawn(where, 1, on_a, 3);
    expect_children_on(3, 2, ha);
    finalize();
    printf("hosts-wdir ok\n");
}

static void hosts_child(const char *where, int one_host)
{
    int rank = env_int("PMI_RANK"), index = env_int("FMPL_UNIVERSE_RANK");
    snprintf(me, sizeof me, "hosts-child %d (universe index %d)", rank, index);
    const char *spawned = getenv("PMI_SPAWNED");
    check(spawned && strcmp(spawned, "1") == 0, "PMI_SPAWNED is not 1");
    check(env_int("PMI_SIZE") == 2 && env_int("FMPL_UNIVERSE_BASE") == index - rank,
          "world rank %d of %d, universe index %d", rank, env_int("PMI_SIZE"), index);
    /* Where it must run: item `rank` of the list; local ids count per host. */
    char copy[600], *save = NULL, *want = NULL;
    snprintf(copy, sizeof copy, "%s", where);
    char *first = strtok_r(copy, ",", &save), *second = strtok_r(NULL, ",", &save);
    want = rank == 0 ? first : second;
    check(want && strcmp(my_hostname(), want) == 0, "runs on %s, expected %s", my_hostname(),
          want ? want : "?");
    check(env_int("MPI_LOCALNRANKS") == (one_host ? 2 : 1) &&
              env_int("MPI_LOCALRANKID") == (one_host ? rank : 0),
          "local rank %d of %d", env_int("MPI_LOCALRANKID"), env_int("MPI_LOCALNRANKS"));
    pmi_init();
    const char *greeting = get("hosts_greeting");
    check(greeting && strcmp(greeting, "hello-across") == 0, "preput key hosts_greeting");
    check(strcmp(get_eventually("hosts.parent"), "from-the-parent") == 0, "the parent's key");
    const char *r = ask("cmd=lookup_name service=svc-kids");
    expect_reply(r, "lookup_result", "0");
    check(strcmp(val(r, "port"), "kids-port") == 0, "looked up '%s'", r);
    barrier(); /* its group's */
    char key[32], value[300];
    snprintf(key, sizeof key, "hosts.child.%d", index);
    snprintf(value, sizeof value, "child-%d-on-%s", index, my_hostname());
    put(key, value);
    snprintf(value, sizeof value, "up-%d", index);
    expect_reply(ask("cmd=fmpl_post queue=hosts.up value=%s", value), "fmpl_post_result", "0");
    finalize();
    printf("hosts-child %d ok on %s\n", index, my_hostname());
}

static void hosts_fail_parent(const char *piddir)
{
    snprintf(me, sizeof me, "hosts-fail-parent");
    record_pid(piddir);
    pmi_init();
    char self[PATH_MAX];
    self_path(self, sizeof self);
    const char *args[] = {"hosts-sleeper", piddir, NULL};
    expect_reply(spawn(&(block){1, self, args, NULL}, 1, NULL), "spawn_result", "0");
    sleep(60); /* ended by fmplrun when the child is killed, or at --timeout */
    fail_if_reached(__LINE__, "still running after its child was killed");
}

/* Records where it runs (DIR/sleeper: "PID HOSTNAME JOBID") and leaves a
 * /dev/shm file of the job there, for the launcher's cleanup to remove. */
static void hosts_sleeper(const char *piddir)
{
    snprintf(me, sizeof me, "hosts-sleeper");
    record_pid(piddir);
    pmi_init();
    char job[FMPL_JOB_ID_MAX], prefix[FMPL_JOB_ID_MAX + 16], path[PATH_MAX];
    fmpl_job_id_from_kvsname(kvsname, job);
    fmpl_shm_job_prefix(job, prefix, sizeof prefix);
    snprintf(path, sizeof path, "/dev/shm%ssleeper", prefix);
    int fd = open(path, O_CREAT | O_WRONLY, 0600);
    check(fd >= 0, "cannot create %s: %s", path, strerror(errno));
    close(fd);
    char rec[PATH_MAX], tmp[PATH_MAX];
    snprintf(rec, sizeof rec, "%s/sleeper", piddir);
    snprintf(tmp, sizeof tmp, "%s/sleeper.tmp", piddir);
    FILE *f = fopen(tmp, "w");
    check(f, "cannot write %s", tmp);
    fprintf(f, "%ld %s %s\n", (long)getpid(), my_hostname(), job);
    fclose(f);
    check(rename(tmp, rec) == 0, "rename %s: %s", tmp, strerror(errno));
    sleep(60);
    fail_if_reached(__LINE__, "still running a minute later");
}

static void tag_parent(void)
{
    snprintf(me, sizeof me, "tag-parent");
    pmi_init();
    char self[PATH_MAX];
    self_path(self, sizeof self);
    const char *args[] = {"tag-child", NULL};
    block kids = {2, self, args, NULL};
    expect_reply(spawn(&kids, 1, NULL), "spawn_result", "0");
    /* Alive until both children asked for the universe's size. */
    get_eventually("asked.0");
    get_eventually("asked.1");
    finalize();
    printf("parent done\n");
}

static void tag_child(void)
{
    snprintf(me, sizeof me, "tag-child");
    pmi_init();
    /* Without --universe-size: the CPUs, but never fewer than the three
     * processes running (the parent waits for both answers, each child
     * for the other's in the barrier below). */
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int want = cpus > 3 ? (int)cpus : 3;
    check(int_reply("cmd=get_universe_size", "universe_size", "size") == want,
          "universe size is not %d", want);
    char key[32];
    snprintf(key, sizeof key, "asked.%d", env_int("PMI_RANK"));
    put(key, "1");
    barrier();
    finalize();
    printf("hello from child %d\n", env_int("PMI_RANK"));
    fprintf(stderr, "stderr of child %d\n", env_int("PMI_RANK"));
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "parent") == 0 && argc == 4)
        parent(argv[2], atoi(argv[3]));
    else if (strcmp(mode, "child") == 0)
        child(argc, argv);
    else if (strcmp(mode, "appnum") == 0 && argc == 3)
        appnum(atoi(argv[2]));
    else if (strcmp(mode, "fail-parent") == 0 && argc == 4)
        fail_parent(argv[2], argv[3]);
    else if ((strcmp(mode, "fail-child") == 0 || strcmp(mode, "hang-child") == 0 ||
              strcmp(mode, "nobarrier-child") == 0) && argc == 3)
        fail_child(argv[2], mode);
    else if (strcmp(mode, "hosts") == 0 && argc == 6)
        hosts(argv[2], argv[3], argv[4], argv[5]);
    else if (strcmp(mode, "hosts-child") == 0 && argc == 4)
        hosts_child(argv[2], atoi(argv[3]));
    else if (strcmp(mode, "hosts-unreachable") == 0 && argc == 4)
        hosts_unreachable(argv[2], argv[3]);
    else if (strcmp(mode, "hosts-wdir") == 0 && argc == 7)
        hosts_wdir(argv[2], argv[3], argv[4], argv[5], argv[6]);
    else if (strcmp(mode, "hosts-fail-parent") == 0 && argc == 3)
        hosts_fail_parent(argv[2]);
    else if (strcmp(mode, "hosts-sleeper") == 0 && argc == 3)
        hosts_sleeper(argv[2]);
    else if (strcmp(mode, "tag-parent") == 0)
        tag_parent();
    else if (strcmp(mode, "tag-child") == 0)
        tag_child();
    else
        fail_if_reached(__LINE__, "usage: pmi_spawn_client parent WORKDIR UNIVERSE | hosts A B HA HB "
                 "| fail-parent DIR KIND | hosts-fail-parent DIR | tag-parent");
    return 0;
}
