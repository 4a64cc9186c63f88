/* MPI-4.1's buffered-send buffers per communicator and per session, and
 * MPI_BUFFER_AUTOMATIC (src/api/mpi/bsend_scoped.c, bsend_pool.c):
 *  - which buffer a Bsend takes: the communicator's, else its session's
 *    (also for a communicator derived from a session's), else the
 *    process's; with none, MPI_ERR_BUFFER;
 *  - attach/detach (and the _c forms) give back what was attached, and
 *    MPI_BUFFER_AUTOMATIC for an automatic buffer, which holds more
 *    rendezvous messages at once than any fixed buffer attached here;
 *  - flush returns only once the receiver has the message (its receive is
 *    posted 200 ms late, and the buffer is scribbled over at once), iflush
 *    the same as a request; with nothing attached both are no-ops;
 *  - a communicator freed with messages in its buffer still delivers them;
 *  - argument errors: a second attach, a negative size, an invalid
 *    communicator or session. */
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, left, right;

static unsigned char byte_of(int from, int tag, int i)
{
    return (unsigned char)(from * 31 + tag * 7 + i);
}

static void fill(unsigned char *p, int n, int from, int tag)
{
    for (int i = 0; i < n; i++)
        p[i] = byte_of(from, tag, i);
}

static void check_data(const unsigned char *p, int n, int from, int tag)
{
    for (int i = 0; i < n; i++)
        CHECK(p[i] == byte_of(from, tag, i), "tag %d byte %d is %d, not %d", tag, i, p[i],
              byte_of(from, tag, i));
}

/* Send n bytes around the ring on comm with Bsend (tag), receive them from
 * the left and check them. */
static void ring(MPI_Comm comm, int n, int tag)
{
    unsigned char *s = malloc(n), *r = malloc(n);
    fill(s, n, rank, tag);
    CHECK_OK(MPI_Bsend(s, n, MPI_BYTE, right, tag, comm));
    memset(s, 0, n); /* the copy is in a buffer */
    CHECK_OK(MPI_Recv(r, n, MPI_BYTE, left, tag, comm, MPI_STATUS_IGNORE));
    check_data(r, n, left, tag);
    free(s);
    free(r);
}

static void errors(MPI_Comm dup)
{
    char b[256];
    void *addr = b;
    int n = -1;
    MPI_Count nc = -1;
    CHECK_OK(MPI_Comm_detach_buffer(dup, &addr, &n));
    CHECK(addr == NULL && n == 0, "detach with nothing attached: %p %d", addr, n);
    CHECK_OK(MPI_Comm_flush_buffer(dup));
    MPI_Request req;
    int flag = 0;
    CHECK_OK(MPI_Comm_iflush_buffer(dup, &req));
    CHECK_OK(MPI_Test(&req, &flag, MPI_STATUS_IGNORE));
    CHECK(flag && req == MPI_REQUEST_NULL, "iflush with nothing attached is complete");
    int x = 1;
    CHECK_CLASS(MPI_Bsend(&x, 1, MPI_INT, right, 0, dup), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Comm_attach_buffer(dup, b, -1), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_attach_buffer(MPI_COMM_NULL, b, 256), MPI_ERR_COMM);
    CHECK_OK(MPI_Comm_attach_buffer(dup, b, 256));
    CHECK_CLASS(MPI_Comm_attach_buffer(dup, b, 256), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0), MPI_ERR_BUFFER);
    /* a message bigger than the buffer: the communicator's, not another */
    char big[512] = {0};
    CHECK_CLASS(MPI_Bsend(big, 512, MPI_BYTE, right, 0, dup), MPI_ERR_BUFFER);
    CHECK_OK(MPI_Comm_detach_buffer_c(dup, &addr, &nc));
    CHECK(addr == b && nc == 256, "detach_c: %p %ld", addr, (long)nc);
    CHECK_OK(MPI_Comm_attach_buffer_c(dup, b, 200));
    CHECK_OK(MPI_Comm_detach_buffer(dup, &addr, &n));
    CHECK(addr == b && n == 200, "detach: %p %d", addr, n);
    CHECK_OK(MPI_Buffer_flush());
    CHECK_OK(MPI_Buffer_iflush(&req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

/* The communicator's buffer comes before the process's; after detaching
 * it, the process's serves again. */
static void precedence(MPI_Comm dup)
{
    enum { N = 3000 };
    int small = 100 + MPI_BSEND_OVERHEAD, big = N + MPI_BSEND_OVERHEAD;
    char *pb = malloc(small), *cb = malloc(big);
    CHECK_OK(MPI_Buffer_attach(pb, small));
    CHECK_OK(MPI_Comm_attach_buffer(dup, cb, big));
    unsigned char s[N];
    CHECK_CLASS(MPI_Bsend(s, N, MPI_BYTE, right, 1, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    ring(dup, N, 2);     /* through the communicator's buffer */
    ring(MPI_COMM_WORLD, 100, 3); /* the process's still has room */
    void *addr;
    int n;
    CHECK_OK(MPI_Comm_detach_buffer(dup, &addr, &n));
    CHECK(addr == cb && n == big, "detach: %p %d", addr, n);
    CHECK_CLASS(MPI_Bsend(s, N, MPI_BYTE, right, 4, dup), MPI_ERR_BUFFER);
    ring(dup, 100, 5);   /* the process's again */
    CHECK_OK(MPI_Buffer_detach(&addr, &n));
    CHECK(addr == pb && n == small, "detach: %p %d", addr, n);
    free(pb);
    free(cb);
}

/* MPI_BUFFER_AUTOMATIC: 20 rendezvous messages of 64 KiB in flight at once
 * from one buffer, on a communicator and for the process. */
static void automatic(MPI_Comm dup)
{
    enum { N = 65536, K = 20 };
    for (int which = 0; which < 2; which++) {
        MPI_Comm comm = which ? MPI_COMM_WORLD : dup;
        if (which)
            CHECK_OK(MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0));
        else
            CHECK_OK(MPI_Comm_attach_buffer(dup, MPI_BUFFER_AUTOMATIC, 0));
        unsigned char *s = malloc(N), *r = malloc(N);
        for (int k = 0; k < K; k++) {
            fill(s, N, rank, 10 + k);
            CHECK_OK(MPI_Bsend(s, N, MPI_BYTE, right, 10 + k, comm));
        }
        memset(s, 0, N);
        MPI_Barrier(MPI_COMM_WORLD); /* all are buffered before any is received */
        for (int k = K - 1; k >= 0; k--) {
            CHECK_OK(MPI_Recv(r, N, MPI_BYTE, left, 10 + k, comm, MPI_STATUS_IGNORE));
            check_data(r, N, left, 10 + k);
        }
        void *addr = NULL;
        MPI_Count n = -1;
        if (which)
            CHECK_OK(MPI_Buffer_detach_c(&addr, &n));
        else
            CHECK_OK(MPI_Comm_detach_buffer_c(dup, &addr, &n));
        CHECK(addr == MPI_BUFFER_AUTOMATIC, "detach gave %p, not MPI_BUFFER_AUTOMATIC", addr);
        free(s);
        free(r);
    }
}

/* Flush (blocking, or as a request) returns only once the receiver has the
 * message: rank 0 sends 1 MB to rank 1, which posts its receive 200 ms
 * late; rank 0 scribbles over the still attached buffer as soon as the
 * flush is done, and rank 1 must get the data intact. */
static void flush(MPI_Comm dup, int nonblocking)
{
    enum { N = 1 << 20 };
    int bsize = N + MPI_BSEND_OVERHEAD;
    char *b = malloc(bsize);
    unsigned char *s = malloc(N), *r = malloc(N);
    int tag = 60 + nonblocking;
    CHECK_OK(MPI_Comm_attach_buffer(dup, b, bsize));
    if (size == 1) { /* nobody else: the receive goes first */
        MPI_Request rr;
        CHECK_OK(MPI_Irecv(r, N, MPI_BYTE, 0, tag, dup, &rr));
        fill(s, N, 0, tag);
        CHECK_OK(MPI_Bsend(s, N, MPI_BYTE, 0, tag, dup));
        CHECK_OK(MPI_Comm_flush_buffer(dup));
        CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        check_data(r, N, 0, tag);
    } else if (rank == 0) {
        fill(s, N, 0, tag);
        CHECK_OK(MPI_Bsend(s, N, MPI_BYTE, 1, tag, dup));
        if (nonblocking) {
            MPI_Request req;
            CHECK_OK(MPI_Comm_iflush_buffer(dup, &req));
            CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
            CHECK(req == MPI_REQUEST_NULL, "iflush request freed");
        } else {
            CHECK_OK(MPI_Comm_flush_buffer(dup));
        }
        memset(b, 0xee, bsize); /* the receiver must not see this */
    } else if (rank == 1) {
        usleep(200000);
        CHECK_OK(MPI_Recv(r, N, MPI_BYTE, 0, tag, dup, MPI_STATUS_IGNORE));
        check_data(r, N, 0, tag);
    }
    void *addr;
    int n;
    CHECK_OK(MPI_Comm_detach_buffer(dup, &addr, &n));
    CHECK(addr == b && n == bsize, "detach: %p %d", addr, n);
    MPI_Barrier(MPI_COMM_WORLD);
    free(b);
    free(s);
    free(r);
}

/* Freeing a communicator whose buffer holds a rendezvous message: the
 * message still arrives. */
static void free_with_pending(void)
{
    enum { N = 200000 };
    static char b[N + MPI_BSEND_OVERHEAD]; /* stays valid until MPI_Finalize */
    MPI_Comm c;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
    CHECK_OK(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Comm_attach_buffer(c, b, sizeof b));
    unsigned char *s = malloc(N), *r = malloc(N);
    fill(s, N, rank, 70);
    MPI_Request rr;
    CHECK_OK(MPI_Irecv(r, N, MPI_BYTE, left, 70, c, &rr));
    CHECK_OK(MPI_Bsend(s, N, MPI_BYTE, right, 70, c));
    memset(s, 0, N);
    CHECK_OK(MPI_Comm_free(&c));
    CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
    check_data(r, N, left, 70);
    MPI_Barrier(MPI_COMM_WORLD);
    free(s);
    free(r);
}

/* A session's buffer serves the communicators made from its process set
 * (and their duplicates); a communicator's own buffer still comes first. */
static void session_buffers(void)
{
    MPI_Session ses;
    CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &ses));
    MPI_Group g;
    CHECK_OK(MPI_Group_from_session_pset(ses, "mpi://WORLD", &g));
    MPI_Comm sc, sdup;
    CHECK_OK(MPI_Comm_create_from_group(g, "fmpl.test.bsend_scoped", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &sc));
    CHECK_OK(MPI_Group_free(&g));
    CHECK_OK(MPI_Comm_dup(sc, &sdup));
    int x = 1;
    CHECK_CLASS(MPI_Bsend(&x, 1, MPI_INT, right, 0, sc), MPI_ERR_BUFFER);
    enum { N = 5000 };
    int bsize = N + MPI_BSEND_OVERHEAD;
    char *b = malloc(bsize);
    CHECK_OK(MPI_Session_attach_buffer(ses, b, bsize));
    CHECK_CLASS(MPI_Session_attach_buffer(ses, b, bsize), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bsend(&x, 1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    ring(sc, N, 80);
    ring(sdup, N, 81);
    CHECK_OK(MPI_Session_flush_buffer(ses));
    MPI_Request req;
    CHECK_OK(MPI_Session_iflush_buffer(ses, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    /* the communicator's own buffer first: too small for N */
    char cb[100 + MPI_BSEND_OVERHEAD];
    CHECK_OK(MPI_Comm_attach_buffer(sdup, cb, sizeof cb));
    unsigned char s[N];
    CHECK_CLASS(MPI_Bsend(s, N, MPI_BYTE, right, 82, sdup), MPI_ERR_BUFFER);
    void *addr;
    int n;
    CHECK_OK(MPI_Comm_detach_buffer(sdup, &addr, &n));
    MPI_Count nc;
    CHECK_OK(MPI_Session_detach_buffer_c(ses, &addr, &nc));
    CHECK(addr == b && nc == bsize, "session detach_c: %p %ld", addr, (long)nc);
    CHECK_CLASS(MPI_Bsend(&x, 1, MPI_INT, right, 0, sc), MPI_ERR_BUFFER);
    CHECK_OK(MPI_Session_attach_buffer_c(ses, MPI_BUFFER_AUTOMATIC, 0));
    ring(sc, 3 * N, 83);
    CHECK_OK(MPI_Session_detach_buffer(ses, &addr, &n));
    CHECK(addr == MPI_BUFFER_AUTOMATIC, "session detach gave %p", addr);
    /* finalizing delivers what the session's buffer holds */
    CHECK_OK(MPI_Session_attach_buffer(ses, b, bsize));
    ring(sc, N, 84);
    CHECK_OK(MPI_Comm_free(&sdup));
    CHECK_OK(MPI_Comm_free(&sc));
    CHECK_OK(MPI_Session_finalize(&ses));
    CHECK_CLASS(MPI_Session_flush_buffer(ses), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Session_attach_buffer(MPI_SESSION_NULL, b, bsize), MPI_ERR_SESSION);
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    errors(dup);
    precedence(dup);
    automatic(dup);
    flush(dup, 0);
    flush(dup, 1);
    free_with_pending();
    session_buffers();
    MPI_Comm_free(&dup);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_bsend_scoped: ok on %d ranks\n", size);
    MPI_Finalize();
    return 0;
}
