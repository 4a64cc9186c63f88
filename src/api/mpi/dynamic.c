/* Dynamic processes (MPI-4.0 chapter 11): ports, MPI_Comm_accept and
 * MPI_Comm_connect, MPI_Comm_spawn(_multiple), MPI_Comm_get_parent and
 * MPI_Comm_join.
 *
 * Every world of a job lives in one universe (bootstrap.h): fmplrun starts
 * spawned worlds in the job's key-value space with universe ranks of their
 * own; under Open MPI's mpirun the PMIx client gives them theirs and reaches
 * their keys across nspaces (bootstrap/pmix_dynamic.c).  Two worlds meet like this (group A accepts on a port, group B
 * connects to it; roots a and b):
 *   1. a: MPI_Open_port names the port "fmpl-port:<a>:<serial>";
 *   2. b: puts its group's universe ranks under key "cg<s>" (s: b's
 *      connection serial) and posts "<b>:<s>" to the launcher's queue named
 *      by the port (bootstrap post);
 *   3. a: takes the oldest request from that queue (polling), reads b's
 *      group, puts its own under "ag<b>_<s>"; b polls for it;
 *   4. each root broadcasts the other group to its own (two broadcasts);
 *   5. every member links with every member of the other group
 *      (runtime/link.c: segments mapped, channel and staging rings made);
 *   6. the members of both build one team over the universe team
 *      (A's members then B's, tag from <b, s>), and from it the
 *      intercommunicator exactly as MPI_Intercomm_create does
 *      (fmpl_mpi_inter_from_span).
 * Spawn = open a port, ask the launcher for the world with the port under
 * the preput key PARENT_ROOT_PORT_NAME, accept; a spawned world's MPI_Init
 * reads the key and connects (root 0 over MPI_COMM_WORLD): that
 * intercommunicator is MPI_Comm_get_parent's.  Join = each side opens a
 * port, the two swap names over the socket, the lower name accepts.
 *
 * Launchers that cannot spawn (mpiexec.hydra, srun --mpi=pmi2) leave the
 * bootstrap's operations NULL: every call fails at once with
 * MPI_ERR_UNSUPPORTED_OPERATION and says why.  A connect to a port whose
 * owner never accepts waits, as MPI allows; a port that is not FMPL's, or
 * an accept on another process's port, is MPI_ERR_PORT at once. */
#include "api/mpi/intercomm.h"
#include "api/mpi/mpi_impl.h"
#include "runtime/runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PORT_PREFIX "fmpl-port:"
#define PARENT_PORT_KEY "PARENT_ROOT_PORT_NAME"

static int port_serial, conn_serial;
static MPI_Comm parent_comm = MPI_COMM_NULL;

/* The launcher's dynamic-process operations, or an error for func. */
static int launcher(const char *func, MPI_Comm comm, fmpl_bootstrap **bs)
{
    *bs = NULL;
    if (fmpl_runtime_bootstrap(bs) != FMPL_SUCCESS || !(*bs)->spawn || !fmpl_team_universe())
        return fmpl_mpi_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, func,
                              "this job's launcher (%s) cannot start or join worlds; start the "
                              "job with fmplrun or Open MPI's mpirun",
                              *bs ? (*bs)->launcher : "none");
    return MPI_SUCCESS;
}

static int parse_port(const char *port, int *owner, int *serial)
{
    char tail;
    if (!port || strncmp(port, PORT_PREFIX, strlen(PORT_PREFIX)) != 0 ||
        sscanf(port + strlen(PORT_PREFIX), "%d:%d%c", owner, serial, &tail) != 2 || *owner < 0)
        return -1;
    return 0;
}

/* Universe ranks as text: runs "a-b" and single ranks, comma-separated (a
 * world is one run).  -1 when it does not fit. */
static int encode_ranks(const int *r, int n, char *out, size_t len)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && r[j + 1] == r[j] + 1)
            j++;
        int w = j > i ? snprintf(out + used, len - used, "%s%d-%d", i ? "," : "", r[i], r[j])
                      : snprintf(out + used, len - used, "%s%d", i ? "," : "", r[i]);
        if (w < 0 || (size_t)w >= len - used)
            return -1;
        used += (size_t)w;
        i = j + 1;
    }
    return 0;
}

/* The ranks of `text` into out[max]; their number, or -1 when malformed. */
static int decode_ranks(const char *text, int *out, int max)
{
    int n = 0;
    const char *p = text;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 0)
            return -1;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a)
                return -1;
        }
        for (long v = a; v <= b; v++) {
            if (n == max)
                return -1;
            out[n++] = (int)v;
        }
        p = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return n;
}

/* ------------------------------------------------------------ ports */

static void new_port(const fmpl_bootstrap *bs, char *port)
{
    snprintf(port, MPI_MAX_PORT_NAME, PORT_PREFIX "%d:%d", bs->universe_rank, ++port_serial);
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    (void)info;
    if (!port_name)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Open_port", "port_name is NULL");
    fmpl_bootstrap *bs;
    int rc = launcher("MPI_Open_port", MPI_COMM_WORLD, &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    new_port(bs, port_name);
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Open_port)

int PMPI_Close_port(const char *port_name)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_bootstrap *bs;
    int rc = launcher("MPI_Close_port", MPI_COMM_WORLD, &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    int owner, serial;
    if (parse_port(port_name, &owner, &serial) != 0 || owner != bs->universe_rank ||
        serial < 1 || serial > port_serial)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_PORT, "MPI_Close_port",
                              "'%.80s' is not a port this process opened",
                              port_name ? port_name : "(null)");
    return MPI_SUCCESS; /* nothing is held: requests left on it are never taken */
}
FMPL_MPI_WEAK(Close_port)

/* ------------------------------------------------------------ meeting */

typedef struct meeting {
    int status;  /* an MPI error class, MPI_SUCCESS to go on */
    int tag;     /* of the team of both groups */
    int nremote;
} meeting;

/* Steps 2-3 at the root; fills *m and remote[] (FMPL_UNIVERSE_MAX). */
static void root_meet(fmpl_bootstrap *bs, int accepting, const char *port, const int *mine,
                      int nmine, meeting *m, int *remote, char *why, size_t why_len)
{
    char value[FMPL_BOOTSTRAP_VALUE_MAX], list[FMPL_BOOTSTRAP_VALUE_MAX], key[64];
    int owner, serial, polls = 0, rc = FMPL_SUCCESS;
    m->status = MPI_ERR_PORT;
    if (parse_port(port, &owner, &serial) != 0) {
        snprintf(why, why_len, "'%.80s' is not a port name of FMPL (MPI_Open_port)", port);
        return;
    }
    if (accepting && owner != bs->universe_rank) {
        snprintf(why, why_len, "port '%.80s' was opened by another process", port);
        return;
    }
    m->status = MPI_ERR_OTHER;
    if (encode_ranks(mine, nmine, list, sizeof list) != 0) {
        snprintf(why, why_len, "the group's %d ranks do not fit one launcher value", nmine);
        return;
    }
    int b, s;
    if (accepting) {
        while ((rc = bs->take(bs, port, value, sizeof value)) == FMPL_ERR_NOT_PENDING)
            fmpl_runtime_poll_pause(&polls);
        if (rc == FMPL_ERR_UNSUPPORTED)
            m->status = MPI_ERR_UNSUPPORTED_OPERATION; /* srun's PMIx: no queues */
        if (rc != FMPL_SUCCESS || sscanf(value, "%d:%d", &b, &s) != 2) {
            snprintf(why, why_len, "taking a connection request from the launcher failed");
            return;
        }
        snprintf(key, sizeof key, "cg%d", s);
        if (bs->get(bs, b, key, value, sizeof value) != FMPL_SUCCESS) {
            snprintf(why, why_len, "process %d's group is not in the launcher", b);
            return;
        }
        snprintf(key, sizeof key, "ag%d_%d", b, s);
        if (bs->put(bs, key, list) != FMPL_SUCCESS) {
            snprintf(why, why_len, "publishing the group failed");
            return;
        }
    } else {
        b = bs->universe_rank;
        s = ++conn_serial;
        snprintf(key, sizeof key, "cg%d", s);
        snprintf(value, sizeof value, "%d:%d", b, s);
        if (bs->put(bs, key, list) != FMPL_SUCCESS ||
            (rc = bs->post(bs, port, value)) != FMPL_SUCCESS) {
            if (rc == FMPL_ERR_UNSUPPORTED)
                m->status = MPI_ERR_UNSUPPORTED_OPERATION;
            snprintf(why, why_len, "posting the connection request failed");
            return;
        }
        snprintf(key, sizeof key, "ag%d_%d", b, s);
        while ((rc = bs->try_get(bs, owner, key, value, sizeof value)) == FMPL_ERR_NOT_PENDING)
            fmpl_runtime_poll_pause(&polls);
        if (rc != FMPL_SUCCESS) {
            snprintf(why, why_len, "reading the accepting group failed");
            return;
        }
    }
    m->nremote = decode_ranks(value, remote, FMPL_UNIVERSE_MAX);
    if (m->nremote < 1) {
        snprintf(why, why_len, "the other group's ranks '%.60s' are malformed", value);
        return;
    }
    m->tag = (int)(((unsigned)b * 2654435761u + (unsigned)s) & 0x3fffffff);
    m->status = MPI_SUCCESS;
}

/* The arguments accept, connect and spawn share: an intracommunicator, a
 * root in it, where the new communicator goes (set to MPI_COMM_NULL), and
 * a launcher that can join worlds.  MPI_SUCCESS or the reported error. */
static int check_collective(const char *func, MPI_Comm comm, int root, MPI_Comm *newcomm,
                            fmpl_mpi_comm **c, fmpl_bootstrap **bs)
{
    *c = fmpl_mpi_comm_get(comm);
    if (!*c)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_COMM, func, "invalid communicator 0x%x",
                              (unsigned)comm);
    if ((*c)->inter)
        return fmpl_mpi_error(comm, MPI_ERR_COMM, func, "comm is an intercommunicator");
    if (!newcomm)
        return fmpl_mpi_error(comm, MPI_ERR_ARG, func, "the new communicator's address is NULL");
    if (root < 0 || root >= (*c)->team->size)
        return fmpl_mpi_error(comm, MPI_ERR_ROOT, func, "root %d is outside 0 .. %d", root,
                              (*c)->team->size - 1);
    *newcomm = MPI_COMM_NULL;
    return launcher(func, comm, bs);
}

/* Accept (accepting) or connect, collective over comm (checked). */
static int meet(const char *func, const char *port, int root, MPI_Comm comm, fmpl_mpi_comm *c,
                fmpl_bootstrap *bs, int accepting, MPI_Comm *newcomm)
{
    fmpl_team *lt = c->team;
    int rc;
    int *remote = malloc(FMPL_UNIVERSE_MAX * sizeof *remote);
    int *members = malloc((size_t)(FMPL_UNIVERSE_MAX + lt->size) * sizeof *members);
    if (!remote || !members) {
        free(remote);
        free(members);
        return fmpl_mpi_error(comm, MPI_ERR_NO_MEM, func, "no memory");
    }
    meeting m = {MPI_SUCCESS, 0, 0};
    char why[200] = "";
    if (lt->rank == root)
        root_meet(bs, accepting, port, lt->world, lt->size, &m, remote, why, sizeof why);
    rc = PMPI_Bcast(&m, 3, MPI_INT, root, comm);
    if (rc == MPI_SUCCESS && m.status == MPI_SUCCESS)
        rc = PMPI_Bcast(remote, m.nremote, MPI_INT, root, comm);
    if (rc == MPI_SUCCESS && m.status != MPI_SUCCESS && lt->rank != root)
        snprintf(why, sizeof why, "the root (rank %d) could not meet the other group", root);
    if (rc == MPI_SUCCESS && m.status == MPI_SUCCESS) {
        int lrc = fmpl_runtime_link(remote, m.nremote);
        if (lrc != FMPL_SUCCESS) {
            m.status = fmpl_mpi_error_class_of(lrc);
            snprintf(why, sizeof why, "linking with the other group failed: %s",
                     fmpl_error_string(lrc));
        }
    }
    if (rc == MPI_SUCCESS && m.status == MPI_SUCCESS) {
        /* Group A: the one whose first member has the lower universe rank. */
        int side = lt->world[0] < remote[0] ? 0 : 1;
        const int *a = side == 0 ? lt->world : remote, *b = side == 0 ? remote : lt->world;
        int na = side == 0 ? lt->size : m.nremote, nb = side == 0 ? m.nremote : lt->size;
        memcpy(members, a, (size_t)na * sizeof *members);
        memcpy(members + na, b, (size_t)nb * sizeof *members);
        fmpl_team *span;
        int frc = fmpl_team_from_members(fmpl_team_universe(), na + nb, members, m.tag, &span);
        if (frc != FMPL_SUCCESS) {
            m.status = fmpl_mpi_error_class_of(frc);
            snprintf(why, sizeof why, "building the team of both groups failed");
        } else {
            m.status = fmpl_mpi_inter_from_span(c, span, side, lt->size, newcomm);
            if (m.status != MPI_SUCCESS)
                snprintf(why, sizeof why, "building the intercommunicator failed");
        }
    }
    free(remote);
    free(members);
    if (rc != MPI_SUCCESS)
        return rc;
    if (m.status != MPI_SUCCESS)
        return fmpl_mpi_error(comm, m.status, func, "%s", why);
    return MPI_SUCCESS;
}

/* MPI_Comm_accept and MPI_Comm_connect. */
static int checked_meet(const char *func, const char *port, int root, MPI_Comm comm,
                        int accepting, MPI_Comm *newcomm)
{
    fmpl_mpi_comm *c;
    fmpl_bootstrap *bs;
    int rc = check_collective(func, comm, root, newcomm, &c, &bs);
    return rc != MPI_SUCCESS ? rc : meet(func, port, root, comm, c, bs, accepting, newcomm);
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    (void)info;
    return checked_meet("MPI_Comm_accept", port_name, root, comm, 1, newcomm);
}
FMPL_MPI_WEAK(Comm_accept)

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(comm);
    (void)info;
    return checked_meet("MPI_Comm_connect", port_name, root, comm, 0, newcomm);
}
FMPL_MPI_WEAK(Comm_connect)

/* ------------------------------------------------------------ spawn */

/* An info value of a spawn command, copied into buf, or NULL. */
static const char *info_value(MPI_Info info, const char *key, char *buf, int len)
{
    int flag = 0;
    if (info == MPI_INFO_NULL || PMPI_Info_get(info, key, len - 1, buf, &flag) != MPI_SUCCESS ||
        !flag)
        return NULL;
    return buf;
}

/* The root's part: check the commands, start the world with the port.
 * An MPI error class, with why filled. */
static int root_spawn(fmpl_bootstrap *bs, int count, char *commands[], char **argvs[],
                      const int maxprocs[], const MPI_Info infos[], const char *port, char *why,
                      size_t why_len)
{
    fmpl_spawn_cmd *cmds = calloc((size_t)count, sizeof *cmds);
    char(*values)[3][1024] = calloc((size_t)count, sizeof *values);
    if (!cmds || !values) {
        free(cmds);
        free(values);
        snprintf(why, why_len, "no memory");
        return MPI_ERR_NO_MEM;
    }
    int rc = MPI_SUCCESS, total = 0;
    for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
        if (!commands || !commands[i] || !*commands[i]) {
            snprintf(why, why_len, "command %d is NULL or empty", i);
            rc = MPI_ERR_ARG;
        } else if (!maxprocs || maxprocs[i] < 1) {
            snprintf(why, why_len, "maxprocs of command %d is %d (at least 1)", i,
                     maxprocs ? maxprocs[i] : 0);
            rc = MPI_ERR_ARG;
        } else {
            MPI_Info info = infos ? infos[i] : MPI_INFO_NULL;
            cmds[i].command = commands[i];
            cmds[i].argv = argvs ? (const char *const *)argvs[i] : NULL;
            cmds[i].maxprocs = maxprocs[i];
            cmds[i].wdir = info_value(info, "wdir", values[i][0], sizeof values[i][0]);
            cmds[i].path = info_value(info, "path", values[i][1], sizeof values[i][1]);
            cmds[i].host = info_value(info, "host", values[i][2], sizeof values[i][2]);
            total += maxprocs[i];
        }
    }
    if (rc == MPI_SUCCESS && total > FMPL_UNIVERSE_MAX) {
        snprintf(why, why_len, "%d processes asked for; a job holds at most %d", total,
                 FMPL_UNIVERSE_MAX);
        rc = MPI_ERR_SPAWN;
    }
    if (rc == MPI_SUCCESS) {
        const char *key = PARENT_PORT_KEY;
        int first;
        int frc = bs->spawn(bs, count, cmds, 1, &key, &port, &first);
        if (frc != FMPL_SUCCESS) {
            snprintf(why, why_len, "the launcher did not start it (%s; its reason is above)",
                     fmpl_error_string(frc));
            /* A launcher that turns out not to serve spawns (srun's PMIx). */
            rc = frc == FMPL_ERR_UNSUPPORTED ? MPI_ERR_UNSUPPORTED_OPERATION : MPI_ERR_SPAWN;
        }
    }
    free(cmds);
    free(values);
    return rc;
}

static int spawn_common(const char *func, int count, char *commands[], char **argvs[],
                        const int maxprocs[], const MPI_Info infos[], int root, MPI_Comm comm,
                        MPI_Comm *intercomm, int errcodes[])
{
    FMPL_MPI_CHECK_READY(comm);
    fmpl_mpi_comm *c;
    fmpl_bootstrap *bs;
    int rc = check_collective(func, comm, root, intercomm, &c, &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    char port[MPI_MAX_PORT_NAME] = "", why[300] = "";
    int status[2] = {MPI_SUCCESS, 0}; /* {class, processes started} */
    if (c->team->rank == root) {
        if (count < 1) {
            status[0] = MPI_ERR_ARG;
            snprintf(why, sizeof why, "count is %d (at least 1)", count);
        } else {
            new_port(bs, port);
            status[0] = root_spawn(bs, count, commands, argvs, maxprocs, infos, port, why,
                                   sizeof why);
            for (int i = 0; status[0] == MPI_SUCCESS && i < count; i++)
                status[1] += maxprocs[i];
        }
    }
    rc = PMPI_Bcast(status, 2, MPI_INT, root, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (errcodes != MPI_ERRCODES_IGNORE && c->team->rank != root && status[0] == MPI_SUCCESS)
        for (int i = 0; i < status[1]; i++)
            errcodes[i] = MPI_SUCCESS;
    if (status[0] != MPI_SUCCESS) {
        if (c->team->rank != root)
            snprintf(why, sizeof why, "the root (rank %d) could not spawn", root);
        return fmpl_mpi_error(comm, status[0], func, "%s", why);
    }
    if (errcodes != MPI_ERRCODES_IGNORE && c->team->rank == root)
        for (int i = 0; i < status[1]; i++)
            errcodes[i] = MPI_SUCCESS;
    return meet(func, port, root, comm, c, bs, 1, intercomm);
}

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    FMPL_CORE_GUARD();
    char *commands[1] = {(char *)command};
    char **argvs[1] = {argv};
    return spawn_common("MPI_Comm_spawn", 1, commands, argvs, &maxprocs, &info, root, comm,
                        intercomm, array_of_errcodes);
}
FMPL_MPI_WEAK(Comm_spawn)

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm,
                             int array_of_errcodes[])
{
    FMPL_CORE_GUARD();
    return spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv,
                        array_of_maxprocs, array_of_info, root, comm, intercomm,
                        array_of_errcodes);
}
FMPL_MPI_WEAK(Comm_spawn_multiple)

int fmpl_mpi_dynamic_start(void)
{
    fmpl_bootstrap *bs = NULL;
    if (fmpl_runtime_bootstrap(&bs) != FMPL_SUCCESS || !bs->spawned)
        return MPI_SUCCESS;
    char port[MPI_MAX_PORT_NAME];
    if (!bs->get_preput || bs->get_preput(bs, PARENT_PORT_KEY, port, sizeof port) != FMPL_SUCCESS)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_SPAWN, "MPI_Init",
                              "this process was spawned, but its launcher (%s) gave no parent "
                              "port (%s)",
                              bs->launcher, PARENT_PORT_KEY);
    int rc = checked_meet("MPI_Init", port, 0, MPI_COMM_WORLD, 0, &parent_comm);
    if (rc == MPI_SUCCESS) /* its default name (MPI-4.0 11.8.1) */
        snprintf(fmpl_mpi_comm_get(parent_comm)->name, MPI_MAX_OBJECT_NAME, "MPI_COMM_PARENT");
    return rc;
}

void fmpl_mpi_dynamic_forget(MPI_Comm comm)
{
    if (comm != MPI_COMM_NULL && comm == parent_comm)
        parent_comm = MPI_COMM_NULL;
}

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    FMPL_CORE_GUARD();
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    if (!parent)
        return fmpl_mpi_error(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_get_parent",
                              "parent is NULL");
    *parent = parent_comm;
    return MPI_SUCCESS;
}
FMPL_MPI_WEAK(Comm_get_parent)

/* ------------------------------------------------------------ join */

/* All of len bytes to (writing) or from fd: 0, or -1 (errno says why; 0
 * when the other end closed). */
static int move_all(int fd, void *buf, size_t len, int writing)
{
    char *p = buf;
    while (len) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    FMPL_CORE_GUARD();
    static const char func[] = "MPI_Comm_join";
    FMPL_MPI_CHECK_READY(MPI_COMM_WORLD);
    fmpl_mpi_comm *self;
    fmpl_bootstrap *bs;
    int rc = check_collective(func, MPI_COMM_SELF, 0, intercomm, &self, &bs);
    if (rc != MPI_SUCCESS)
        return rc;
    char mine[MPI_MAX_PORT_NAME], theirs[MPI_MAX_PORT_NAME];
    new_port(bs, mine);
    errno = 0;
    if (move_all(fd, mine, sizeof mine, 1) != 0 || move_all(fd, theirs, sizeof theirs, 0) != 0)
        return fmpl_mpi_error(MPI_COMM_SELF, MPI_ERR_OTHER, func,
                              "swapping port names over descriptor %d failed: %s", fd,
                              strerror(errno));
    theirs[sizeof theirs - 1] = '\0';
    int cmp = strcmp(mine, theirs);
    if (cmp == 0)
        return fmpl_mpi_error(MPI_COMM_SELF, MPI_ERR_OTHER, func,
                              "descriptor %d leads back to this process", fd);
    return meet(func, cmp < 0 ? mine : theirs, 0, MPI_COMM_SELF, self, bs, cmp < 0, intercomm);
}
FMPL_MPI_WEAK(Comm_join)
