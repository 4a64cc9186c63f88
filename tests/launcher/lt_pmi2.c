/* The PMI-2 client (src/bootstrap/pmi2.c) against a scripted server, no
 * Slurm needed: a child process serves the socket the client finds in
 * PMI_FD, checks each request word for word as Slurm's pmi2 plugin would
 * read it, and answers as Slurm does.  Also checks the wire helpers of
 * pmi2_wire.h and that the environment srun --mpi=pmi2 sets selects PMI-2.
 * A full-size value (FMPL_BOOTSTRAP_VALUE_MAX - 1 characters) goes through
 * put, fence and get.  Exit 0 on success. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/pmi2_wire.h"
#include "base/error.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(cond)                                                                \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "lt_pmi2: %s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                        \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static void read_exactly(int fd, char *buf, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t r = read(fd, buf + off, len - off);
        if (r <= 0)
            exit(2); /* the client went away */
        off += (size_t)r;
    }
}

static void reply(int fd, const char *body)
{
    char msg[FMPL_PMI2_HEADER_LEN + FMPL_PMI2_MSG_MAX + 1];
    size_t n = strlen(body);
    fmpl_pmi2_header(msg, (int)n);
    memcpy(msg + FMPL_PMI2_HEADER_LEN, body, n);
    CHECK(write(fd, msg, FMPL_PMI2_HEADER_LEN + n) == (ssize_t)(FMPL_PMI2_HEADER_LEN + n));
}

/* The server: one client of rank 0 in a job of 1, one key. */
static void serve(int fd)
{
    char line[128];
    size_t n = 0;
    do
        read_exactly(fd, line + n, 1);
    while (line[n++] != '\n' && n < sizeof line - 1);
    line[n] = '\0';
    CHECK(strcmp(line, "cmd=init pmi_version=2 pmi_subversion=0\n") == 0);
    const char *init_ok = "cmd=response_to_init rc=0 pmi_version=2 pmi_subversion=0\n";
    CHECK(write(fd, init_ok, strlen(init_ok)) == (ssize_t)strlen(init_ok));

    static char body[FMPL_PMI2_MSG_MAX + 1], key[128], value[FMPL_PMI2_MSG_MAX + 1],
        out[FMPL_PMI2_MSG_MAX + 64];
    int fenced = 0;
    for (;;) {
        char header[FMPL_PMI2_HEADER_LEN + 1] = {0};
        read_exactly(fd, header, FMPL_PMI2_HEADER_LEN);
        int len = fmpl_pmi2_parse_header(header);
        CHECK(len > 0 && len <= FMPL_PMI2_MSG_MAX);
        read_exactly(fd, body, (size_t)len);
        body[len] = '\0';
        CHECK(body[len - 1] == ';');
        if (strcmp(body, "cmd=fullinit;pmijobid=42.0;pmirank=0;threaded=FALSE;") == 0) {
            reply(fd, "cmd=fullinit-response;rc=0;pmi-version=2;pmi-subversion=0;rank=0;"
                      "size=1;appnum=-1;debugged=FALSE;pmiverbose=FALSE;");
        } else if (strcmp(body, "cmd=job-getid;") == 0) {
            reply(fd, "cmd=job-getid-response;rc=0;jobid=42.0;");
        } else if (strncmp(body, "cmd=kvs-put;", 12) == 0) {
            CHECK(fmpl_pmi2_field(body, "key", key, sizeof key) == 0);
            CHECK(fmpl_pmi2_field(body, "value", value, sizeof value) == 0);
            reply(fd, "cmd=kvs-put-response;rc=0;");
        } else if (strcmp(body, "cmd=kvs-fence;") == 0) {
            fenced = 1;
            reply(fd, "cmd=kvs-fence-response;rc=0;");
        } else if (strncmp(body, "cmd=kvs-get;jobid=42.0;srcid=0;key=", 35) == 0) {
            char want[sizeof key + 1];
            snprintf(want, sizeof want, "%s;", key);
            if (fenced && strcmp(body + 35, want) == 0)
                snprintf(out, sizeof out, "cmd=kvs-get-response;rc=0;found=TRUE;value=%s;", value);
            else
                snprintf(out, sizeof out, "cmd=kvs-get-response;rc=0;found=FALSE;");
            reply(fd, out);
        } else if (strcmp(body, "cmd=finalize;") == 0) {
            reply(fd, "cmd=finalize-response;rc=0;");
            exit(0);
        } else {
            fprintf(stderr, "lt_pmi2: server: unexpected request '%s'\n", body);
            exit(3);
        }
    }
}

static void check_wire_helpers(void)
{
    char msg[FMPL_PMI2_HEADER_LEN + 1] = {0}, out[16];
    fmpl_pmi2_header(msg, 42);
    CHECK(memcmp(msg, "42    ", 6) == 0);
    CHECK(fmpl_pmi2_parse_header("42    ") == 42);
    CHECK(fmpl_pmi2_parse_header("   113") == 113); /* Hydra pads on the left */
    CHECK(fmpl_pmi2_parse_header("      ") == -1);
    CHECK(fmpl_pmi2_parse_header("4 2   ") == -1);
    const char *body = "cmd=kvs-get-response;rc=0;found=TRUE;value=abc;";
    CHECK(fmpl_pmi2_field(body, "value", out, sizeof out) == 0 && strcmp(out, "abc") == 0);
    CHECK(fmpl_pmi2_field(body, "found", out, sizeof out) == 0 && strcmp(out, "TRUE") == 0);
    CHECK(fmpl_pmi2_field(body, "val", out, sizeof out) == -1);
    CHECK(fmpl_pmi2_field(body, "cmd", out, 4) == -2);
    CHECK(fmpl_pmi2_field("cmd=x;rc=7", "rc", out, sizeof out) == 0 && strcmp(out, "7") == 0);
    fmpl_pmi2_sanitize("a;b=c\nd", out, sizeof out);
    CHECK(strcmp(out, "a_b_c_d") == 0);
}

int main(void)
{
    check_wire_helpers();

    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t server = fork();
    CHECK(server >= 0);
    if (server == 0) {
        close(sv[0]);
        serve(sv[1]);
    }
    close(sv[1]);
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", sv[0]);
    /* What srun --mpi=pmi2 sets for a task (see tests/cluster/pmi2.sh). */
    setenv("PMI_FD", fd_text, 1);
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "1", 1);
    setenv("PMI_JOBID", "42.0", 1);
    setenv("SLURM_MPI_TYPE", "pmi2", 1);
    unsetenv("FMPL_LAUNCHER");
    unsetenv("FMPL_PMI_VERSION");
    fmpl_log_init();
    fmpl_error_init();

    fmpl_bootstrap *bs;
    CHECK(fmpl_bootstrap_init(&bs) == FMPL_SUCCESS);
    CHECK(strcmp(bs->launcher, "pmi2") == 0);
    CHECK(bs->rank == 0 && bs->size == 1);
    CHECK(strcmp(bs->job_id, "pmi2-42.0") == 0);

    static char big[FMPL_BOOTSTRAP_VALUE_MAX], got[FMPL_BOOTSTRAP_VALUE_MAX];
    for (size_t i = 0; i < sizeof big - 1; i++)
        big[i] = "0123456789abcdef"[i % 16];
    CHECK(bs->put(bs, "addr", big) == FMPL_SUCCESS);
    CHECK(bs->get(bs, 0, "addr", got, sizeof got) != FMPL_SUCCESS); /* not fenced yet */
    CHECK(bs->fence(bs) == FMPL_SUCCESS);
    CHECK(bs->get(bs, 0, "addr", got, sizeof got) == FMPL_SUCCESS);
    CHECK(strcmp(got, big) == 0);
    CHECK(bs->get(bs, 0, "addr", got, 16) != FMPL_SUCCESS); /* buffer too small */
    CHECK(bs->barrier(bs) == FMPL_SUCCESS);
    CHECK(fmpl_bootstrap_finalize(&bs) == FMPL_SUCCESS);

    int status;
    CHECK(waitpid(server, &status, 0) == server);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    printf("lt_pmi2 ok\n");
    return 0;
}
