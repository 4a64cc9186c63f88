/* Launcher test rank: checks rank, size and launcher name, that every rank
 * slot is held by a different process, a put/fence/get exchange of long
 * values between all ranks, rejection of invalid keys and values, and
 * repeated put/fence/get/barrier rounds.  Works under fmplrun, under
 * mpiexec.hydra and as a singleton.  Exits non-zero on any mismatch.
 *
 * usage: lt_exchange [--expect-size N] [--expect-launcher NAME] [--rounds R] */
#include "bootstrap/bootstrap.h"
#include "base/error.h"
#include "base/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static fmpl_bootstrap *bs; /* global so leak checkers see it on early exits */

#define CHECK(cond, ...)                                                           \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "lt_exchange[%d]: %s:%d: check failed: %s: ",          \
                    bs ? bs->rank : -1, __FILE__, __LINE__, #cond);                \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(10);                                                              \
        }                                                                          \
    } while (0)

/* A value of `len` hex digits that depends on rank and salt. */
static void make_value(char *out, size_t len, int rank, int salt)
{
    unsigned x = (unsigned)rank * 2654435761u + (unsigned)salt * 40503u + 1;
    for (size_t i = 0; i < len; i++) {
        x = x * 1103515245u + 12345u;
        out[i] = "0123456789abcdef"[(x >> 16) & 15];
    }
    out[len] = '\0';
}

static void check_invalid_arguments(void)
{
    char buf[64];
    setenv("FMPL_ERRORS_QUIET", "1", 1);
    fmpl_error_init();
    CHECK(bs->put(bs, "k", "has space") == FMPL_ERR_ARG, "value with a space accepted");
    CHECK(bs->put(bs, "k", "") == FMPL_ERR_ARG, "empty value accepted");
    CHECK(bs->put(bs, "", "v") == FMPL_ERR_ARG, "empty key accepted");
    CHECK(bs->put(bs, "a=b", "v") == FMPL_ERR_ARG, "key with '=' accepted");
    char longkey[FMPL_BOOTSTRAP_KEY_MAX + 1];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = '\0';
    CHECK(bs->put(bs, longkey, "v") == FMPL_ERR_ARG, "too long key accepted");
    static char longval[FMPL_BOOTSTRAP_VALUE_MAX + 1];
    memset(longval, 'v', sizeof longval - 1);
    CHECK(bs->put(bs, "k", longval) == FMPL_ERR_ARG, "too long value accepted");
    /* Past the world, or past the universe a spawning launcher may fill. */
    int past = bs->spawn ? FMPL_UNIVERSE_MAX : bs->size;
    CHECK(bs->get(bs, past, "who", buf, sizeof buf) == FMPL_ERR_RANK, "bad rank accepted");
    CHECK(bs->get(bs, -1, "who", buf, sizeof buf) == FMPL_ERR_RANK, "rank -1 accepted");
    CHECK(bs->get(bs, 0, "blob", buf, 8) != FMPL_SUCCESS, "value overflowed a small buffer");
    CHECK(bs->get(bs, 0, "never-put", buf, sizeof buf) != FMPL_SUCCESS, "missing key found");
    unsetenv("FMPL_ERRORS_QUIET");
    fmpl_error_init();
}

int main(int argc, char **argv)
{
    int expect_size = -1, rounds = 3;
    const char *expect_launcher = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--expect-size") == 0)
            expect_size = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--expect-launcher") == 0)
            expect_launcher = argv[i + 1];
        else if (strcmp(argv[i], "--rounds") == 0)
            rounds = atoi(argv[i + 1]);
        else {
            fprintf(stderr, "lt_exchange: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    fmpl_log_init();
    fmpl_error_init();
    CHECK(fmpl_bootstrap_init(&bs) == FMPL_SUCCESS, "bootstrap init failed");
    int rank = bs->rank, size = bs->size;
    CHECK(size >= 1 && rank >= 0 && rank < size, "rank %d size %d", rank, size);
    if (expect_size > 0)
        CHECK(size == expect_size, "size %d, expected %d", size, expect_size);
    if (expect_launcher)
        CHECK(strcmp(bs->launcher, expect_launcher) == 0, "launcher %s, expected %s",
              bs->launcher, expect_launcher);
    CHECK(bs->job_id[0] != '\0', "empty job id");
    CHECK(strspn(bs->job_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") ==
              strlen(bs->job_id),
          "job id '%s' not safe in file names", bs->job_id);
    if (size == 1 && strcmp(bs->launcher, "singleton") == 0)
        CHECK(strncmp(bs->job_id, "single-", 7) == 0, "singleton job id '%s'", bs->job_id);

    /* Every rank publishes who it is and a long value; the first blob is
     * overwritten, so only the second may be read back. */
    char who[64], blob[FMPL_BOOTSTRAP_VALUE_MAX], got[FMPL_BOOTSTRAP_VALUE_MAX];
    snprintf(who, sizeof who, "r%dp%ld", rank, (long)getpid());
    CHECK(bs->put(bs, "who", who) == FMPL_SUCCESS, "put who");
    make_value(blob, 100, rank, 999);
    CHECK(bs->put(bs, "blob", blob) == FMPL_SUCCESS, "put blob (first)");
    make_value(blob, FMPL_BOOTSTRAP_VALUE_MAX - 1, rank, 0);
    CHECK(bs->put(bs, "blob", blob) == FMPL_SUCCESS, "put blob");
    CHECK(bs->fence(bs) == FMPL_SUCCESS, "fence");

    long *pids = calloc((size_t)size, sizeof *pids);
    CHECK(pids != NULL, "out of memory");
    for (int i = 0; i < size; i++) {
        int r = -1;
        CHECK(bs->get(bs, i, "who", got, sizeof got) == FMPL_SUCCESS, "get who of %d", i);
        CHECK(sscanf(got, "r%dp%ld", &r, &pids[i]) == 2 && r == i, "rank %d's who is '%s'", i,
              got);
        for (int j = 0; j < i; j++)
            CHECK(pids[j] != pids[i], "ranks %d and %d are the same process %ld", j, i, pids[i]);
        make_value(blob, FMPL_BOOTSTRAP_VALUE_MAX - 1, i, 0);
        CHECK(bs->get(bs, i, "blob", got, sizeof got) == FMPL_SUCCESS, "get blob of %d", i);
        CHECK(strcmp(got, blob) == 0, "blob of rank %d differs", i);
    }
    free(pids);
    check_invalid_arguments();

    /* Rounds: a fresh key per round, read from the next rank after the
     * fence, then a plain barrier. */
    for (int k = 0; k < rounds; k++) {
        char key[32], val[32], want[32];
        snprintf(key, sizeof key, "round%d", k);
        snprintf(val, sizeof val, "%d-%d", rank, k);
        CHECK(bs->put(bs, key, val) == FMPL_SUCCESS, "put %s", key);
        CHECK(bs->fence(bs) == FMPL_SUCCESS, "fence in round %d", k);
        int peer = (rank + 1) % size;
        snprintf(want, sizeof want, "%d-%d", peer, k);
        CHECK(bs->get(bs, peer, key, got, sizeof got) == FMPL_SUCCESS, "get %s", key);
        CHECK(strcmp(got, want) == 0, "round %d: got '%s' from %d, want '%s'", k, got, peer, want);
        CHECK(bs->barrier(bs) == FMPL_SUCCESS, "barrier in round %d", k);
    }

    printf("lt_exchange: rank %d of %d ok (launcher %s, job %s, %d rounds)\n", rank, size,
           bs->launcher, bs->job_id, rounds);
    fflush(stdout);
    CHECK(fmpl_bootstrap_finalize(&bs) == FMPL_SUCCESS, "finalize");
    CHECK(bs == NULL, "finalize left the pointer set");
    return 0;
}
