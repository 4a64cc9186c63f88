/* MPI-4.1 functions FMPL has: status field accessors and
 * MPI_Status_set_elements_c, MPI_Request_get_status_any/all/some (which
 * leave every request as it is), MPI_Type_get_value_index,
 * MPI_Get_hw_resource_info and MPI_Remove_error_class/code/string.
 * Runs at 2 ranks and more (ranks 0 and 1 exchange; the rest check the
 * local calls). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static void status_fields(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    CHECK_OK(MPI_Status_set_source(&st, 7));
    CHECK_OK(MPI_Status_set_tag(&st, 99));
    CHECK_OK(MPI_Status_set_error(&st, MPI_ERR_TAG));
    int v;
    CHECK_OK(MPI_Status_get_source(&st, &v));
    CHECK(v == 7 && st.MPI_SOURCE == 7, "source %d", v);
    CHECK_OK(MPI_Status_get_tag(&st, &v));
    CHECK(v == 99 && st.MPI_TAG == 99, "tag %d", v);
    CHECK_OK(MPI_Status_get_error(&st, &v));
    CHECK(v == MPI_ERR_TAG && st.MPI_ERROR == MPI_ERR_TAG, "error %d", v);
    CHECK_OK(MPI_Status_set_elements_c(&st, MPI_DOUBLE, (MPI_Count)3 << 31));
    MPI_Count n;
    CHECK_OK(MPI_Get_elements_c(&st, MPI_DOUBLE, &n));
    CHECK(n == (MPI_Count)3 << 31, "elements %lld", (long long)n);
    CHECK_OK(MPI_Get_count_c(&st, MPI_BYTE, &n));
    CHECK(n == ((MPI_Count)3 << 31) * 8, "bytes %lld", (long long)n);
    CHECK_CLASS(MPI_Status_get_tag(&st, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Status_set_source(MPI_STATUS_IGNORE, 1), MPI_ERR_ARG);
}

/* Rank 0 posts three receives; rank 1 sends the second only, then (after a
 * barrier) the others.  The queries must see exactly what arrived and leave
 * the requests to MPI_Waitall. */
static void statuses_of_many(int rank)
{
    if (rank > 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        return;
    }
    int buf[3] = {-1, -1, -1};
    if (rank == 1) {
        int v = 20;
        MPI_Send(&v, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        v = 10;
        MPI_Send(&v, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        v = 30;
        MPI_Send(&v, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
        return;
    }
    MPI_Request req[4];
    for (int i = 0; i < 3; i++)
        MPI_Irecv(&buf[i], 1, MPI_INT, 1, i + 1, MPI_COMM_WORLD, &req[i]);
    req[3] = MPI_REQUEST_NULL;
    MPI_Barrier(MPI_COMM_WORLD); /* the tag-2 message was sent */
    int index = -5, flag = 0;
    MPI_Status st;
    for (int spins = 0; !flag && spins < 10000000; spins++)
        CHECK_OK(MPI_Request_get_status_any(4, req, &index, &flag, &st));
    CHECK(flag && index == 1 && st.MPI_TAG == 2 && st.MPI_SOURCE == 1 && buf[1] == 20,
          "any: flag %d index %d tag %d buf %d", flag, index, st.MPI_TAG, buf[1]);
    CHECK(req[1] != MPI_REQUEST_NULL, "get_status_any freed the request");
    CHECK_OK(MPI_Request_get_status_all(4, req, &flag, MPI_STATUSES_IGNORE));
    CHECK(!flag, "all complete while two messages are still to come");
    int outcount = -5, indices[4];
    MPI_Status sts[4];
    CHECK_OK(MPI_Request_get_status_some(4, req, &outcount, indices, sts));
    CHECK(outcount == 1 && indices[0] == 1 && sts[0].MPI_TAG == 2, "some: %d", outcount);
    MPI_Barrier(MPI_COMM_WORLD); /* now the others come */
    flag = 0;
    for (int spins = 0; !flag && spins < 10000000; spins++)
        CHECK_OK(MPI_Request_get_status_all(4, req, &flag, sts));
    CHECK(flag, "all never complete");
    for (int i = 0; i < 3; i++)
        CHECK(sts[i].MPI_TAG == i + 1 && sts[i].MPI_SOURCE == 1, "status %d: tag %d", i,
              sts[i].MPI_TAG);
    CHECK(sts[3].MPI_SOURCE == MPI_ANY_SOURCE && sts[3].MPI_TAG == MPI_ANY_TAG,
          "the null request's status is not empty");
    CHECK_OK(MPI_Request_get_status_some(4, req, &outcount, indices, sts));
    CHECK(outcount == 3, "some after all: %d", outcount);
    for (int i = 0; i < 3; i++)
        CHECK(req[i] != MPI_REQUEST_NULL, "request %d was freed", i);
    CHECK_OK(MPI_Waitall(4, req, MPI_STATUSES_IGNORE));
    CHECK(buf[0] == 10 && buf[1] == 20 && buf[2] == 30, "data %d %d %d", buf[0], buf[1],
          buf[2]);
    /* Nothing active: any says complete with no index, some says undefined. */
    CHECK_OK(MPI_Request_get_status_any(4, req, &index, &flag, &st));
    CHECK(flag && index == MPI_UNDEFINED, "any of nulls: %d %d", flag, index);
    CHECK_OK(MPI_Request_get_status_some(4, req, &outcount, indices, sts));
    CHECK(outcount == MPI_UNDEFINED, "some of nulls: %d", outcount);
    req[0] = (MPI_Request)0x12345;
    CHECK_CLASS(MPI_Request_get_status_all(1, req, &flag, sts), MPI_ERR_REQUEST);
}

static void value_index(void)
{
    struct {
        MPI_Datatype v, i, pair;
    } cases[] = {{MPI_FLOAT, MPI_INT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_INT, MPI_DOUBLE_INT},
                 {MPI_LONG, MPI_INT, MPI_LONG_INT},   {MPI_SHORT, MPI_INT, MPI_SHORT_INT},
                 {MPI_INT, MPI_INT, MPI_2INT},        {MPI_LONG_DOUBLE, MPI_INT, MPI_LONG_DOUBLE_INT},
                 {MPI_REAL, MPI_REAL, MPI_2REAL},     {MPI_INTEGER, MPI_INTEGER, MPI_2INTEGER},
                 {MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION},
                 {MPI_DOUBLE, MPI_LONG, MPI_DATATYPE_NULL}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        MPI_Datatype t = (MPI_Datatype)-1;
        CHECK_OK(MPI_Type_get_value_index(cases[k].v, cases[k].i, &t));
        CHECK(t == cases[k].pair, "case %zu: 0x%x", k, (unsigned)t);
    }
    MPI_Datatype t;
    CHECK_CLASS(MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &t), MPI_ERR_TYPE);
}

static void error_classes(void)
{
    int cls, code, got;
    char text[MPI_MAX_ERROR_STRING];
    int len;
    CHECK_OK(MPI_Add_error_class(&cls));
    CHECK_OK(MPI_Add_error_code(cls, &code));
    CHECK_OK(MPI_Add_error_string(code, "a code of mine"));
    CHECK_OK(MPI_Add_error_string(cls, "a class of mine"));
    /* MPI-4.1 9.5: removal goes in the reverse order of adding (the
     * string, then the code, then the class); mpi4py's test_errorcode
     * checks each wrong order is refused. */
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* it still has a code */
    CHECK_CLASS(MPI_Remove_error_code(code), MPI_ERR_ARG); /* it still has its string */
    int second; /* a second code: the class goes only once both have */
    CHECK_OK(MPI_Add_error_code(cls, &second));
    CHECK_OK(MPI_Remove_error_code(second));
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG);
    CHECK_OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "a code of mine") == 0, "string %s", text);
    CHECK_OK(MPI_Remove_error_string(code));
    CHECK_OK(MPI_Error_string(code, text, &len));
    CHECK(strcmp(text, "a code of mine") != 0, "string not removed");
    CHECK_CLASS(MPI_Remove_error_string(code), MPI_ERR_ARG); /* no string any more */
    CHECK_CLASS(MPI_Remove_error_code(cls), MPI_ERR_ARG); /* a class, not a code */
    CHECK_OK(MPI_Remove_error_code(code));
    CHECK_CLASS(MPI_Remove_error_code(code), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_string(code, "x"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Remove_error_class(cls), MPI_ERR_ARG); /* it still has its string */
    CHECK_OK(MPI_Error_string(cls, text, &len));
    CHECK(strcmp(text, "a class of mine") == 0, "class string %s", text);
    CHECK_OK(MPI_Remove_error_string(cls));
    CHECK_OK(MPI_Remove_error_class(cls));
    CHECK_CLASS(MPI_Add_error_code(cls, &got), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Remove_error_class(MPI_ERR_TAG), MPI_ERR_ARG); /* predefined */
    int again;
    CHECK_OK(MPI_Add_error_class(&again));
    CHECK(again != cls && again != code, "a removed value was handed out again");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    status_fields();
    statuses_of_many(rank);
    value_index();
    error_classes();
    MPI_Info hw;
    CHECK_OK(MPI_Get_hw_resource_info(&hw));
    int nkeys = -1;
    CHECK_OK(MPI_Info_get_nkeys(hw, &nkeys));
    CHECK(nkeys >= 0, "nkeys %d", nkeys);
    CHECK_OK(MPI_Info_free(&hw));
    MPI_Finalize();
    if (rank == 0)
        puts("mpi41 ok");
    return 0;
}
