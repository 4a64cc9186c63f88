/* User error handlers: called with the communicator and the code (a send to
 * an invalid rank gives MPI_ERR_RANK), the code returned after; alive after
 * MPI_Errhandler_free while a communicator uses it; inherited by MPI_Comm_dup;
 * MPI_Comm_call_errhandler; MPI_ERRORS_RETURN calls nothing; user error
 * classes, codes and strings; the MPI-1 names; error classes. */
#include "check.h"

#include <string.h>

static int calls;
static MPI_Comm last_comm;
static int last_code;

static void handler(MPI_Comm *comm, int *code, ...)
{
    calls++;
    last_comm = *comm;
    last_code = *code;
}

static int calls2;
static void handler2(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    calls2++;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n, x = 1, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);

    MPI_Errhandler eh, got;
    CHECK_OK(MPI_Comm_create_errhandler(handler, &eh));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh));
    CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &got));
    CHECK(got == eh, "get_errhandler gave %#x, set %#x", got, eh);
    CHECK_OK(MPI_Errhandler_free(&got));
    CHECK_OK(MPI_Errhandler_free(&eh)); /* the communicator keeps it */
    CHECK(eh == MPI_ERRHANDLER_NULL, "freed handle is %#x", eh);

    /* An invalid rank: the handler runs with the communicator and code. */
    rc = MPI_Send(&x, 1, MPI_INT, n + 3, 0, MPI_COMM_WORLD);
    CHECK(calls == 1, "handler called %d times", calls);
    CHECK(last_comm == MPI_COMM_WORLD, "handler got communicator %#x", last_comm);
    CHECK(error_class(last_code) == MPI_ERR_RANK, "handler got code %d", last_code);
    CHECK(rc == last_code, "MPI_Send returned %d, the handler saw %d", rc, last_code);
    rc = MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    CHECK(calls == 2 && error_class(last_code) == MPI_ERR_TAG && rc == last_code,
          "negative tag: calls %d code %d rc %d", calls, last_code, rc);
    /* Errors without a communicator are raised on MPI_COMM_WORLD. */
    int size;
    rc = MPI_Group_size(MPI_GROUP_NULL, &size);
    CHECK(calls == 3 && error_class(rc) == MPI_ERR_GROUP && last_comm == MPI_COMM_WORLD,
          "group error: calls %d rc %d", calls, rc);

    /* Inherited by a duplicate, which the handler then sees. */
    MPI_Comm dup;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    rc = MPI_Send(&x, 1, MPI_INT, -7, 0, dup);
    CHECK(calls == 4 && last_comm == dup && error_class(rc) == MPI_ERR_RANK,
          "error on the dup: calls %d comm %#x rc %d", calls, last_comm, rc);

    /* MPI_Comm_call_errhandler: the handler runs, MPI_SUCCESS comes back. */
    CHECK_OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
    CHECK(calls == 5 && last_code == MPI_ERR_OTHER && last_comm == dup,
          "call_errhandler: calls %d code %d", calls, last_code);

    /* Another handler on the dup only. */
    MPI_Errhandler eh2;
    CHECK_OK(MPI_Comm_create_errhandler(handler2, &eh2));
    CHECK_OK(MPI_Comm_set_errhandler(dup, eh2));
    CHECK_OK(MPI_Errhandler_free(&eh2));
    MPI_Send(&x, 1, MPI_INT, -7, 0, dup);
    CHECK(calls == 5 && calls2 == 1, "second handler: calls %d calls2 %d", calls, calls2);
    CHECK_OK(MPI_Comm_free(&dup));

    /* User error classes, codes and strings. */
    int cls, code, cls2;
    char s[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_OK(MPI_Add_error_class(&cls));
    CHECK_OK(MPI_Add_error_code(cls, &code));
    CHECK_OK(MPI_Add_error_code(MPI_ERR_ARG, &cls2)); /* a code of a predefined class */
    CHECK(cls > MPI_ERR_LASTCODE && code != cls && cls2 != code, "class %d code %d code2 %d", cls,
          code, cls2);
    int c;
    CHECK_OK(MPI_Error_class(code, &c));
    CHECK(c == cls, "class of the user code: %d", c);
    CHECK_OK(MPI_Error_class(cls, &c));
    CHECK(c == cls, "class of the user class: %d", c);
    CHECK_OK(MPI_Error_class(cls2, &c));
    CHECK(c == MPI_ERR_ARG, "class of the code of MPI_ERR_ARG: %d", c);
    CHECK_OK(MPI_Error_string(code, s, &len));
    CHECK(len == 0 && s[0] == '\0', "string of a code without one: '%s'", s);
    CHECK_OK(MPI_Add_error_string(cls, "my class"));
    CHECK_OK(MPI_Add_error_string(code, "my code"));
    CHECK_OK(MPI_Add_error_string(code, "my code, again"));
    CHECK_OK(MPI_Error_string(code, s, &len));
    CHECK(!strcmp(s, "my code, again") && len == (int)strlen(s), "code string '%s'", s);
    CHECK_OK(MPI_Error_string(cls, s, &len));
    CHECK(!strcmp(s, "my class"), "class string '%s'", s);
    CHECK_OK(MPI_Error_string(MPI_ERR_RANK, s, &len));
    CHECK(len > 0, "MPI_ERR_RANK has no string");
    CHECK_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, code));
    CHECK(calls == 6 && last_code == code, "user code through the handler: %d", last_code);

    /* MPI_ERRORS_RETURN: no handler, the code is returned. */
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_Send(&x, 1, MPI_INT, n, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_OK(MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER));
    CHECK(calls == 6, "a handler ran under MPI_ERRORS_RETURN");

    /* Errors of the error calls themselves. */
    int tmp;
    CHECK_CLASS(MPI_Add_error_code(cls + 1000, &tmp), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_code(code, &tmp), MPI_ERR_ARG); /* a code is not a class */
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_RANK, "no"), MPI_ERR_ARG);
    char big[MPI_MAX_ERROR_STRING + 1];
    memset(big, 'x', MPI_MAX_ERROR_STRING);
    big[MPI_MAX_ERROR_STRING] = '\0';
    CHECK_CLASS(MPI_Add_error_string(code, big), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, 0x12345), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_errhandler(NULL, &eh), MPI_ERR_ARG);
    MPI_Errhandler null = MPI_ERRHANDLER_NULL;
    CHECK_CLASS(MPI_Errhandler_free(&null), MPI_ERR_ARG);
    MPI_Errhandler pre = MPI_ERRORS_RETURN;
    CHECK_OK(MPI_Errhandler_free(&pre)); /* a predefined handle: nothing freed */
    CHECK(pre == MPI_ERRHANDLER_NULL, "freed predefined handle is %#x", pre);
    CHECK_CLASS(MPI_Comm_call_errhandler(MPI_COMM_NULL, MPI_ERR_OTHER), MPI_ERR_COMM);

    /* The MPI-1 names. */
    CHECK_OK(MPI_Errhandler_create(handler, &eh));
    CHECK_OK(MPI_Errhandler_set(MPI_COMM_WORLD, eh));
    CHECK_OK(MPI_Errhandler_get(MPI_COMM_WORLD, &got));
    CHECK(got == eh, "MPI_Errhandler_get");
    CHECK_OK(MPI_Errhandler_free(&got));
    CHECK_OK(MPI_Errhandler_free(&eh));
    rc = MPI_Recv(&x, 1, MPI_INT, n + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(calls == 7 && error_class(rc) == MPI_ERR_RANK, "MPI-1 handler: calls %d", calls);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi error handlers ok on %d ranks\n", n);
    MPI_Finalize();
    return 0;
}
