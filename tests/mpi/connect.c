/* MPI_Open_port, MPI_Comm_accept/MPI_Comm_connect, the name service and
 * MPI_Comm_join under fmplrun (issue 16):
 *  - the parents spawn two worlds, "server" and "client" (2 processes
 *    each), which are linked to the parents only; the server's root opens
 *    a port and publishes it; the client's root looks it up (retrying until
 *    it is there) and both worlds meet: data both ways, every byte checked,
 *    and a reduction over the new intercommunicator; then each disconnects
 *    from the other and from the parents;
 *  - errors: a port name that is not FMPL's, and an accept on a port this
 *    process did not open, fail at once with MPI_ERR_PORT;
 *  - with 2 parents or more, ranks 0 and 1 join over a loopback TCP socket
 *    (MPI_Comm_join) and exchange a message. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"

static const char service[] = "fmpl connect test";

static void meet(MPI_Comm world, int server)
{
    int rank;
    MPI_Comm_rank(world, &rank);
    char port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm other;
    if (server) {
        if (rank == 0) {
            CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
            CHECK_OK(MPI_Publish_name(service, MPI_INFO_NULL, port));
        }
        CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, world, &other));
        if (rank == 0) {
            CHECK_OK(MPI_Unpublish_name(service, MPI_INFO_NULL, port));
            CHECK_OK(MPI_Close_port(port));
        }
    } else {
        if (rank == 0) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
            while (MPI_Lookup_name(service, MPI_INFO_NULL, port) != MPI_SUCCESS)
                usleep(1000); /* the server may not have published yet */
        }
        CHECK_OK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, world));
        CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, world, &other));
    }
    int rsize;
    CHECK_OK(MPI_Comm_remote_size(other, &rsize));
    CHECK(rsize == 2, "remote size %d", rsize);
    enum { N = 300000 };
    static int data[N];
    int peer = rank; /* server rank i pairs with client rank i */
    for (int i = 0; i < N; i++)
        data[i] = server ? i ^ rank : -1;
    if (server) {
        CHECK_OK(MPI_Send(data, N, MPI_INT, peer, 9, other));
    } else {
        CHECK_OK(MPI_Recv(data, N, MPI_INT, peer, 9, other, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            CHECK(data[i] == (i ^ rank), "word %d is %d", i, data[i]);
        CHECK_OK(MPI_Send(&rank, 1, MPI_INT, peer, 10, other));
    }
    if (server) {
        int got = -1;
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, 10, other, MPI_STATUS_IGNORE));
        CHECK(got == rank, "reply %d", got);
    }
    int mine = server ? 1 : 100, sum = 0;
    CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, other));
    CHECK(sum == (server ? 200 : 2), "allreduce gave %d", sum);
    CHECK_OK(MPI_Comm_disconnect(&other));
}

static void join_pair(int rank)
{
    int fd = -1;
    if (rank == 0) {
        int ls = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t len = sizeof a;
        CHECK(ls >= 0 && bind(ls, (struct sockaddr *)&a, sizeof a) == 0 && listen(ls, 1) == 0 &&
                  getsockname(ls, (struct sockaddr *)&a, &len) == 0,
              "loopback listen failed");
        int port = ntohs(a.sin_port);
        CHECK_OK(MPI_Send(&port, 1, MPI_INT, 1, 20, MPI_COMM_WORLD));
        /* Waiting for the connection stays in MPI: over the network
         * backend a peer may need this process's progress meanwhile (its
         * remote reads of this process's memory: docs/cluster.md,
         * "Progress"), and the peer connects only once it got the port. */
        CHECK(fcntl(ls, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK refused");
        while ((fd = accept(ls, NULL, NULL)) < 0) {
            CHECK(errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR, "accept failed");
            int flag;
            CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag,
                                MPI_STATUS_IGNORE));
            usleep(100);
        }
        close(ls);
    } else {
        int port;
        CHECK_OK(MPI_Recv(&port, 1, MPI_INT, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        CHECK(connect(fd, (struct sockaddr *)&a, sizeof a) == 0, "loopback connect failed");
    }
    CHECK(fd >= 0, "no socket");
    MPI_Comm joined;
    CHECK_OK(MPI_Comm_join(fd, &joined));
    int rsize, v = 77 + rank, got = -1;
    CHECK_OK(MPI_Comm_remote_size(joined, &rsize));
    CHECK(rsize == 1, "joined remote size %d", rsize);
    CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, joined,
                          MPI_STATUS_IGNORE));
    CHECK(got == 78 - rank, "join exchange gave %d", got);
    CHECK_OK(MPI_Comm_disconnect(&joined));
    close(fd);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent;
    CHECK_OK(MPI_Comm_get_parent(&parent));
    if (parent != MPI_COMM_NULL) {
        meet(MPI_COMM_WORLD, argc > 1 && strcmp(argv[1], "server") == 0);
        CHECK_OK(MPI_Comm_disconnect(&parent));
        MPI_Finalize();
        return 0;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm server, client, c;
    char *sargs[] = {"server", NULL}, *cargs[] = {"client", NULL};
    CHECK_OK(MPI_Comm_spawn(argv[0], sargs, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &server,
                            MPI_ERRCODES_IGNORE));
    CHECK_OK(MPI_Comm_spawn(argv[0], cargs, 2, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &client,
                            MPI_ERRCODES_IGNORE));
    CHECK_OK(MPI_Comm_disconnect(&server)); /* after the two worlds met and left */
    CHECK_OK(MPI_Comm_disconnect(&client));

    CHECK_CLASS(MPI_Comm_connect("not-a-port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c),
                MPI_ERR_PORT);
    CHECK_CLASS(MPI_Comm_accept("fmpl-port:99999:1", MPI_INFO_NULL, 0, MPI_COMM_SELF, &c),
                MPI_ERR_PORT);
    CHECK_CLASS(MPI_Close_port("fmpl-port:99999:1"), MPI_ERR_PORT);
    if (size >= 2 && rank < 2)
        join_pair(rank);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    MPI_Finalize();
    if (rank == 0)
        printf("connect ok on %d ranks\n", size);
    return 0;
}
