/* MPI-4 sessions, in three orders given by argv[1]:
 *   none   sessions only, never MPI_Init: two sessions at once, finalized,
 *          then a third (the library starts again without restarting);
 *   world  MPI_Init first, sessions inside, MPI_Finalize last;
 *   after  a session first, then MPI_Init .. MPI_Finalize, the session
 *          still working after MPI_Finalize.
 * Each checks the process sets (names, truncation, sizes), groups from
 * them, MPI_Comm_create_from_group and an allreduce on the result, the
 * session's info and error handlers, and the errors. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int handler_calls, handler_code;

/* MPI_Finalize deletes MPI_COMM_SELF's attributes before MPI_Finalized
 * turns true (MPI 11.2.4), with or without sessions still open. */
static int self_deletes = 0, finalized_seen = -1;
static int self_delete(MPI_Comm comm, int key, void *value, void *extra)
{
    (void)comm;
    (void)key;
    (void)value;
    (void)extra;
    self_deletes++;
    MPI_Finalized(&finalized_seen);
    return MPI_SUCCESS;
}

static void watch_finalize(void)
{
    int key;
    CHECK_OK(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &key, NULL));
    CHECK_OK(MPI_Comm_set_attr(MPI_COMM_SELF, key, NULL));
}
static void on_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    handler_calls++;
    handler_code = *code;
}

/* Everything a session offers, on session s. */
static void exercise(MPI_Session s, const char *tag)
{
    int np;
    CHECK_OK(MPI_Session_get_num_psets(s, MPI_INFO_NULL, &np));
    CHECK(np >= 2, "%d process sets", np);
    int have_world = 0, have_self = 0;
    for (int i = 0; i < np; i++) {
        int len = 0;
        char name[MPI_MAX_PSET_NAME_LEN];
        CHECK_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL));
        CHECK(len > 1 && len <= MPI_MAX_PSET_NAME_LEN, "length %d", len);
        CHECK_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name));
        CHECK((int)strlen(name) == len - 1, "name %s, length %d", name, len);
        have_world |= !strcmp(name, "mpi://WORLD");
        have_self |= !strcmp(name, "mpi://SELF");
    }
    CHECK(have_world && have_self, "process sets %d %d", have_world, have_self);
    char shortname[5];
    int five = 5;
    CHECK_OK(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &five, shortname));
    CHECK(!strcmp(shortname, "mpi:"), "truncated name \"%s\"", shortname);

    MPI_Group world, self;
    CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &world));
    CHECK_OK(MPI_Group_from_session_pset(s, "mpi://self", &self)); /* any case */
    int wsize, wrank, ssize;
    CHECK_OK(MPI_Group_size(world, &wsize));
    CHECK_OK(MPI_Group_rank(world, &wrank));
    CHECK_OK(MPI_Group_size(self, &ssize));
    CHECK(ssize == 1 && wrank >= 0 && wrank < wsize, "groups %d %d %d", wsize, wrank, ssize);
    MPI_Info pinfo;
    char v[32];
    int flag;
    CHECK_OK(MPI_Session_get_pset_info(s, "mpi://WORLD", &pinfo));
    CHECK_OK(MPI_Info_get(pinfo, "mpi_size", sizeof v - 1, v, &flag));
    CHECK(flag && atoi(v) == wsize, "mpi_size %s", v);
    CHECK_OK(MPI_Info_free(&pinfo));

    MPI_Comm c;
    CHECK_OK(MPI_Comm_create_from_group(world, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c));
    int r, n, sum = -1;
    CHECK_OK(MPI_Comm_rank(c, &r));
    CHECK_OK(MPI_Comm_size(c, &n));
    CHECK(r == wrank && n == wsize, "comm rank %d size %d", r, n);
    CHECK_OK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == n * (n - 1) / 2, "allreduce %d", sum);
    MPI_Errhandler eh;
    CHECK_OK(MPI_Comm_get_errhandler(c, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "communicator's handler 0x%x", (unsigned)eh);
    CHECK_CLASS(MPI_Send(&r, 1, MPI_INT, n, 0, c), MPI_ERR_RANK); /* returns: its handler */
    CHECK_OK(MPI_Comm_free(&c));
    MPI_Comm one;
    CHECK_OK(MPI_Comm_create_from_group(self, "self-tag", MPI_INFO_NULL, MPI_ERRORS_RETURN, &one));
    CHECK_OK(MPI_Comm_size(one, &n));
    CHECK(n == 1, "self comm size %d", n);
    CHECK_OK(MPI_Comm_free(&one));
    CHECK_OK(MPI_Group_free(&world));
    CHECK_OK(MPI_Group_free(&self));

    /* errors, returned through the session's handler */
    MPI_Group g;
    CHECK_CLASS(MPI_Group_from_session_pset(s, "mpi://NOWHERE", &g), MPI_ERR_ARG);
    int len = 0;
    CHECK_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, np, &len, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_from_group(MPI_GROUP_NULL, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                           &c), MPI_ERR_GROUP);
    c = MPI_COMM_WORLD;
    CHECK_OK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &c));
    CHECK(c == MPI_COMM_NULL, "a communicator from the empty group");
}

/* Info and error handlers of a session made with thread_level FUNNELED. */
static void info_and_handlers(void)
{
    MPI_Info hints, used;
    MPI_Session s;
    CHECK_OK(MPI_Info_create(&hints));
    CHECK_OK(MPI_Info_set(hints, "thread_level", "MPI_THREAD_FUNNELED"));
    CHECK_OK(MPI_Session_init(hints, MPI_ERRORS_RETURN, &s));
    CHECK_OK(MPI_Info_free(&hints));
    CHECK_OK(MPI_Session_get_info(s, &used));
    char v[64];
    int flag;
    CHECK_OK(MPI_Info_get(used, "thread_level", sizeof v - 1, v, &flag));
    CHECK(flag && !strcmp(v, "MPI_THREAD_FUNNELED"), "thread_level %s", flag ? v : "absent");
    CHECK_OK(MPI_Info_free(&used));

    MPI_Errhandler mine, got;
    CHECK_OK(MPI_Session_create_errhandler(on_error, &mine));
    CHECK_OK(MPI_Session_set_errhandler(s, mine));
    CHECK_OK(MPI_Session_get_errhandler(s, &got));
    CHECK(got == mine, "get_errhandler");
    CHECK_OK(MPI_Errhandler_free(&got));
    handler_calls = 0;
    CHECK_OK(MPI_Session_call_errhandler(s, MPI_ERR_OTHER));
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_OTHER, "handler %d %d", handler_calls,
          handler_code);
    MPI_Group g;
    CHECK_CLASS(MPI_Group_from_session_pset(s, "nonsense", &g), MPI_ERR_ARG);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_ARG, "handler on error %d",
          handler_calls);
    CHECK_OK(MPI_Errhandler_free(&mine)); /* the session keeps its reference */
    CHECK_OK(MPI_Session_call_errhandler(s, MPI_ERR_ARG));
    CHECK(handler_calls == 3, "handler after free %d", handler_calls);
    CHECK_OK(MPI_Session_finalize(&s));
    CHECK(s == MPI_SESSION_NULL, "handle not reset");
}

static void check_initialized(int want_init, int want_fin)
{
    int i, f;
    CHECK_OK(MPI_Initialized(&i));
    CHECK_OK(MPI_Finalized(&f));
    CHECK(i == want_init && f == want_fin, "initialized %d finalized %d", i, f);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "none";
    MPI_Session s1, s2;
    if (!strcmp(mode, "world")) {
        MPI_Init(&argc, &argv);
        /* errors tied to no session go to MPI_COMM_SELF's handler */
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        int np;
        CHECK_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &np),
                    MPI_ERR_SESSION);
    }
    check_initialized(strcmp(mode, "world") == 0, 0);
    CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
    exercise(s1, "first");
    if (!strcmp(mode, "after")) {
        MPI_Init(&argc, &argv);
        check_initialized(1, 0);
        int r, sum = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        exercise(s1, "inside-world");
        watch_finalize();
        MPI_Finalize();
        check_initialized(1, 1);
        CHECK(self_deletes == 1 && finalized_seen == 0, "MPI_COMM_SELF's delete: %d, %d",
              self_deletes, finalized_seen);
        exercise(s1, "after-world"); /* the session outlives the world model */
    }
    /* a second session at the same time */
    CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    exercise(s2, "second");
    info_and_handlers();
    CHECK_OK(MPI_Session_finalize(&s2));
    CHECK_OK(MPI_Session_finalize(&s1));
    if (!strcmp(mode, "none")) {
        /* every session is gone: start again */
        check_initialized(0, 0);
        CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1));
        exercise(s1, "again");
        CHECK_OK(MPI_Session_finalize(&s1));
        check_initialized(0, 0);
    }
    if (!strcmp(mode, "world")) {
        int np;
        CHECK_CLASS(MPI_Session_get_num_psets(s1, MPI_INFO_NULL, &np), MPI_ERR_SESSION);
        int r;
        MPI_Comm_rank(MPI_COMM_WORLD, &r);
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0)
            printf("mpi session (%s) ok\n", mode);
        watch_finalize();
        MPI_Finalize();
        check_initialized(1, 1);
        CHECK(self_deletes == 1 && finalized_seen == 0, "MPI_COMM_SELF's delete: %d, %d",
              self_deletes, finalized_seen);
        /* finalized with no session open: this process cannot start again */
        CHECK_CLASS(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s1), MPI_ERR_OTHER);
    } else {
        printf("mpi session (%s) ok\n", mode);
    }
    return 0;
}
