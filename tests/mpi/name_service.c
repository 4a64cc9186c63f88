/* MPI's name service under a launcher that keeps names (fmplrun): a name
 * published by one rank is found by every rank, with its port intact (both
 * may hold spaces and any punctuation); publishing a taken name and
 * unpublishing a free one fail with MPI_ERR_SERVICE, looking up a free one
 * with MPI_ERR_NAME; NULL and over-long arguments with MPI_ERR_ARG and
 * MPI_ERR_PORT.  Under a launcher without a name service (argv[1] ==
 * "--unsupported": mpiexec.hydra) every call fails at once with
 * MPI_ERR_UNSUPPORTED_OPERATION. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    char got[MPI_MAX_PORT_NAME];
    const char *service = "fmpl test: service #1 = \"x\"";
    const char *port = "a port name with spaces, = and % signs";

    if (argc > 1 && strcmp(argv[1], "--unsupported") == 0) {
        CHECK_CLASS(MPI_Publish_name(service, MPI_INFO_NULL, port),
                    MPI_ERR_UNSUPPORTED_OPERATION);
        CHECK_CLASS(MPI_Lookup_name(service, MPI_INFO_NULL, got), MPI_ERR_UNSUPPORTED_OPERATION);
        CHECK_CLASS(MPI_Unpublish_name(service, MPI_INFO_NULL, port),
                    MPI_ERR_UNSUPPORTED_OPERATION);
        MPI_Finalize();
        if (rank == 0)
            puts("name service refused as expected");
        return 0;
    }

    int flag = 0, *universe = NULL;
    CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag));
    CHECK(flag && *universe >= size, "MPI_UNIVERSE_SIZE %d < %d ranks", flag ? *universe : -1,
          size);

    CHECK_CLASS(MPI_Lookup_name(service, MPI_INFO_NULL, got), MPI_ERR_NAME);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD)); /* nobody publishes before all looked */
    if (rank == 0) {
        CHECK_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        CHECK_CLASS(MPI_Publish_name(service, MPI_INFO_NULL, "another"), MPI_ERR_SERVICE);
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    memset(got, 'z', sizeof got);
    CHECK_OK(MPI_Lookup_name(service, MPI_INFO_NULL, got));
    CHECK(strcmp(got, port) == 0, "looked up '%s'", got);
    /* Names are per service: one per rank, all visible to all. */
    char mine[64], theirs[64], their_port[64];
    snprintf(mine, sizeof mine, "rank-%d", rank);
    snprintf(their_port, sizeof their_port, "port of %d", rank);
    CHECK_OK(MPI_Publish_name(mine, MPI_INFO_NULL, their_port));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    for (int r = 0; r < size; r++) {
        snprintf(theirs, sizeof theirs, "rank-%d", r);
        snprintf(their_port, sizeof their_port, "port of %d", r);
        CHECK_OK(MPI_Lookup_name(theirs, MPI_INFO_NULL, got));
        CHECK(strcmp(got, their_port) == 0, "rank %d's name gave '%s'", r, got);
    }
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    snprintf(their_port, sizeof their_port, "port of %d", rank);
    CHECK_OK(MPI_Unpublish_name(mine, MPI_INFO_NULL, their_port));

    CHECK_CLASS(MPI_Publish_name(NULL, MPI_INFO_NULL, port), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Publish_name("", MPI_INFO_NULL, port), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Publish_name(service, MPI_INFO_NULL, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Publish_name("x", MPI_INFO_NULL, ""), MPI_ERR_PORT);
    CHECK_CLASS(MPI_Lookup_name(service, MPI_INFO_NULL, NULL), MPI_ERR_ARG);

    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == 0)
        CHECK_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    CHECK_CLASS(MPI_Lookup_name(service, MPI_INFO_NULL, got), MPI_ERR_NAME);
    CHECK_CLASS(MPI_Unpublish_name(service, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    MPI_Finalize();
    if (rank == 0)
        puts("name service ok");
    return 0;
}
