/* The tool information interface (src/api/mpi/tool.c) and MPI-IO's handles
 * and error handlers before MPI-IO (src/api/mpi/file.c).
 *
 * MPI_T: usable before MPI_Init and after MPI_Finalize while initialised;
 * FMPL's tunables are its control variables: the count is positive, every
 * index has a name and description, lookup by name finds the same index,
 * FMPL_EAGER_MAX (set to 12k by the test's environment) reads "12k" and
 * FMPL_SPIN_COUNT reads its default, "auto", when unset; writing is refused
 * (MPI_T_ERR_CVAR_SET_NEVER); bad indices, names and handles get their
 * error classes; no performance variables, categories, events or sources;
 * sessions and MPI_T_PVAR_ALL_HANDLES work; calls without MPI_T_init_thread
 * return MPI_T_ERR_NOT_INITIALIZED.
 *
 * Files: MPI_File_open is refused with MPI_ERR_UNSUPPORTED_OPERATION
 * through MPI_FILE_NULL's handler (MPI_ERRORS_RETURN by default, although
 * MPI_COMM_WORLD's stays fatal); a user file handler set on MPI_FILE_NULL
 * is called with MPI_FILE_NULL and the code, and read back; a
 * communicator's handler is refused for files; c2f/f2c of MPI_FILE_NULL. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* The tool interface is checked before MPI_Init and after MPI_Finalize too,
 * where check.h's CHECK (MPI_Comm_rank, MPI_Abort) cannot be called. */
#define TCHECK(cond, ...)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                          \
            fprintf(stderr, "\n");                                                 \
            exit(1);                                                               \
        }                                                                          \
    } while (0)

static int cvar_index(const char *name)
{
    int idx = -1;
    int rc = MPI_T_cvar_get_index(name, &idx);
    TCHECK(rc == MPI_SUCCESS, "MPI_T_cvar_get_index(%s) returned %d", name, rc);
    return idx;
}

static void read_cvar(int idx, char *value, size_t cap)
{
    MPI_T_cvar_handle h;
    int count = 0;
    TCHECK(MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) == MPI_SUCCESS, "handle_alloc");
    TCHECK(count > 0 && (size_t)count <= cap, "count %d", count);
    memset(value, 'x', cap);
    TCHECK(MPI_T_cvar_read(h, value) == MPI_SUCCESS, "read");
    TCHECK((int)strlen(value) == count - 1, "read %zu chars for a count of %d", strlen(value),
          count);
    TCHECK(MPI_T_cvar_write(h, "1") == MPI_T_ERR_CVAR_SET_NEVER, "write not refused");
    TCHECK(MPI_T_cvar_handle_free(&h) == MPI_SUCCESS && h == MPI_T_CVAR_HANDLE_NULL, "free");
}

static void check_tool_interface(void)
{
    int n = -1, provided = -1;
    TCHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "cvar_get_num before init");
    TCHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "finalize before init");
    TCHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "init");
    TCHECK(provided == MPI_THREAD_SINGLE, "provided %d", provided);
    TCHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "nested init");

    TCHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n > 10, "%d control variables", n);
    for (int i = 0; i < n; i++) {
        char name[256], desc[1024];
        int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum en;
        TCHECK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &en, desc, &desc_len,
                                  &bind, &scope) == MPI_SUCCESS, "cvar_get_info(%d)", i);
        TCHECK(name_len == (int)strlen(name) + 1 && strncmp(name, "FMPL_", 5) == 0,
              "name %s, length %d", name, name_len);
        TCHECK(desc_len == (int)strlen(desc) + 1 && strlen(desc) > 10, "desc of %s", name);
        TCHECK(type == MPI_CHAR && en == MPI_T_ENUM_NULL && bind == MPI_T_BIND_NO_OBJECT &&
              scope == MPI_T_SCOPE_CONSTANT && verbosity == MPI_T_VERBOSITY_USER_BASIC,
              "properties of %s", name);
        TCHECK(cvar_index(name) == i, "%s found at another index", name);
        int need = 0;
        TCHECK(MPI_T_cvar_get_info(i, NULL, &need, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
                  MPI_SUCCESS && need == name_len, "length query for %s: %d", name, need);
        char small[6];
        int small_len = sizeof small;
        MPI_T_cvar_get_info(i, small, &small_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        TCHECK(small_len == 6 && strncmp(small, name, 5) == 0 && small[5] == '\0',
              "truncated name of %s: %s (%d)", name, small, small_len);
    }
    char value[256];
    read_cvar(cvar_index("FMPL_EAGER_MAX"), value, sizeof value);
    TCHECK(strcmp(value, "12k") == 0, "FMPL_EAGER_MAX reads %s, the environment has 12k", value);
    if (!getenv("FMPL_SPIN_COUNT")) {
        read_cvar(cvar_index("FMPL_SPIN_COUNT"), value, sizeof value);
        TCHECK(strcmp(value, "auto") == 0, "FMPL_SPIN_COUNT's default reads %s", value);
    }
    int idx;
    TCHECK(MPI_T_cvar_get_index("NO_SUCH_VARIABLE", &idx) == MPI_T_ERR_INVALID_NAME, "name");
    MPI_T_cvar_handle h;
    int count;
    TCHECK(MPI_T_cvar_handle_alloc(n, NULL, &h, &count) == MPI_T_ERR_INVALID_INDEX, "index n");
    TCHECK(MPI_T_cvar_handle_alloc(-1, NULL, &h, &count) == MPI_T_ERR_INVALID_INDEX, "index -1");
    h = MPI_T_CVAR_HANDLE_NULL;
    TCHECK(MPI_T_cvar_handle_free(&h) == MPI_T_ERR_INVALID_HANDLE, "free of a null handle");

    int num;
    TCHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS && num == 0, "pvars %d", num);
    TCHECK(MPI_T_category_get_num(&num) == MPI_SUCCESS && num == 0, "categories %d", num);
    TCHECK(MPI_T_event_get_num(&num) == MPI_SUCCESS && num == 0, "events %d", num);
    TCHECK(MPI_T_source_get_num(&num) == MPI_SUCCESS && num == 0, "sources %d", num);
    TCHECK(MPI_T_category_changed(&num) == MPI_SUCCESS, "category_changed");
    TCHECK(MPI_T_category_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
              MPI_T_ERR_INVALID_INDEX, "category 0");
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    TCHECK(MPI_T_pvar_session_create(&s) == MPI_SUCCESS, "session");
    TCHECK(MPI_T_pvar_handle_alloc(s, 0, NULL, &ph, &count) == MPI_T_ERR_INVALID_INDEX, "pvar 0");
    TCHECK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "start all");
    TCHECK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "stop all");
    TCHECK(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "reset all");
    TCHECK(MPI_T_pvar_session_free(&s) == MPI_SUCCESS && s == MPI_T_PVAR_SESSION_NULL, "free");
    TCHECK(MPI_T_pvar_session_free(&s) == MPI_T_ERR_INVALID_SESSION, "double free");

    TCHECK(MPI_T_finalize() == MPI_SUCCESS, "finalize (inner)");
    TCHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS, "still initialised once");
    TCHECK(MPI_T_finalize() == MPI_SUCCESS, "finalize (outer)");
    TCHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "after the last finalize");
}

static int handler_calls, handler_code;
static MPI_File handler_file = (MPI_File)1;

static void file_handler(MPI_File *file, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *file;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm, (void)code;
}

static void check_files(void)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh;
    /* MPI_COMM_WORLD keeps MPI_ERRORS_ARE_FATAL: file errors must not use it. */
    CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh == MPI_ERRORS_RETURN, "the default file handler is 0x%x", (unsigned)eh);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, "tool-test-file", MPI_MODE_RDONLY, MPI_INFO_NULL,
                              &fh), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(fh == MPI_FILE_NULL, "the handle was changed");
    CHECK_CLASS(MPI_File_delete("tool-test-file", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_OPERATION);

    MPI_Errhandler mine;
    CHECK_OK(MPI_File_create_errhandler(file_handler, &mine));
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, mine));
    CHECK_OK(MPI_Errhandler_free(&mine)); /* MPI_FILE_NULL keeps it alive */
    CHECK_CLASS(MPI_File_open(MPI_COMM_SELF, "x", MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(handler_calls == 1 && error_class(handler_code) == MPI_ERR_UNSUPPORTED_OPERATION &&
          handler_file == MPI_FILE_NULL, "handler called %d times, code %d", handler_calls,
          handler_code);
    CHECK_OK(MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO));
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO, "call_errhandler: %d, %d",
          handler_calls, handler_code);
    CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    CHECK(eh != MPI_ERRORS_RETURN && eh != MPI_ERRHANDLER_NULL, "get returned 0x%x",
          (unsigned)eh);
    CHECK_OK(MPI_Errhandler_free(&eh));

    MPI_Errhandler for_comms;
    CHECK_OK(MPI_Comm_create_errhandler(comm_handler, &for_comms));
    CHECK_CLASS(MPI_File_set_errhandler(MPI_FILE_NULL, for_comms), MPI_ERR_ARG);
    CHECK(handler_calls == 3, "the refusal went to the file handler (%d)", handler_calls);
    CHECK_OK(MPI_Errhandler_free(&for_comms));
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_File_set_errhandler((MPI_File)&fh, MPI_ERRORS_RETURN), MPI_ERR_FILE);
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0 && MPI_File_f2c(0) == MPI_FILE_NULL, "c2f/f2c");
}

int main(int argc, char **argv)
{
    check_tool_interface();
    MPI_Init(&argc, &argv);
    check_tool_interface();
    check_files();
    MPI_Finalize();
    check_tool_interface();
    puts("tool ok");
    return 0;
}
