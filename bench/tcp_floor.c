/* tcp-floor: what plain TCP sockets do between two hosts, with no MPI and
 * no libfabric: the floor under every library that talks TCP there.
 *
 *   host B:  tcp-floor --server [--port P]
 *   host A:  tcp-floor HOST_B [--port P] [--iters N] [--mib M]
 *
 * One connection (TCP_NODELAY).  Latency: 8-byte ping-pong, one-way = round
 * trip / 2, the receiver busy-polling with non-blocking recv (as a library
 * that polls does), then again with blocking recv (sleeping in the kernel).
 * Bandwidth: M MiB streamed in 1 MiB and 4 MiB writes into 1 MiB reads,
 * timed until the receiver's one-byte acknowledgement of the last byte.
 * Prints one line per figure.  bench/README.md ("Across hosts") runs it
 * between the namespace hosts of tools/testcluster. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { MSG = 8, CHUNK_IN = 1 << 20 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "tcp-floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* n bytes into buf; busy: poll with MSG_DONTWAIT instead of sleeping. */
static void recv_all(int fd, char *buf, size_t n, int busy)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = recv(fd, buf + got, n - got, busy ? MSG_DONTWAIT : 0);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0)
            die("peer closed");
        else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            die("recv");
    }
}

static void send_all(int fd, const char *buf, size_t n)
{
    for (size_t put = 0; put < n;) {
        ssize_t w = send(fd, buf + put, n - put, MSG_NOSIGNAL);
        if (w > 0)
            put += (size_t)w;
        else if (errno != EINTR && errno != EAGAIN)
            die("send");
    }
}

/* The plan both sides follow: iters ping-pongs busy, iters blocking, then
 * for each write size `mib` MiB streamed and acknowledged. */
typedef struct plan {
    uint32_t iters, mib;
} plan;

static const size_t write_sizes[] = {1u << 20, 4u << 20};

static void serve(int fd)
{
    plan p;
    recv_all(fd, (char *)&p, sizeof p, 0);
    char msg[MSG];
    for (int busy = 1; busy >= 0; busy--)
        for (uint32_t i = 0; i < p.iters; i++) {
            recv_all(fd, msg, MSG, busy);
            send_all(fd, msg, MSG);
        }
    char *buf = malloc(CHUNK_IN);
    if (!buf)
        die("malloc");
    for (size_t k = 0; k < sizeof write_sizes / sizeof write_sizes[0]; k++) {
        size_t total = (size_t)p.mib << 20;
        for (size_t got = 0; got < total;) {
            size_t want = total - got < CHUNK_IN ? total - got : CHUNK_IN;
            ssize_t r = recv(fd, buf, want, 0);
            if (r <= 0)
                die("recv");
            got += (size_t)r;
        }
        send_all(fd, "k", 1);
    }
    free(buf);
}

static void measure(int fd, plan p)
{
    send_all(fd, (const char *)&p, sizeof p);
    char msg[MSG] = {0};
    for (int busy = 1; busy >= 0; busy--) {
        uint32_t warm = p.iters / 10;
        double t0 = 0;
        for (uint32_t i = 0; i < p.iters; i++) {
            if (i == warm)
                t0 = now();
            send_all(fd, msg, MSG);
            recv_all(fd, msg, MSG, busy);
        }
        printf("latency 8 B one-way, %s: %.2f us\n", busy ? "busy-polling" : "blocking recv",
               (now() - t0) / (p.iters - warm) / 2 * 1e6);
    }
    char *buf = calloc(1, write_sizes[1]);
    if (!buf)
        die("calloc");
    for (size_t k = 0; k < sizeof write_sizes / sizeof write_sizes[0]; k++) {
        size_t total = (size_t)p.mib << 20, w = write_sizes[k];
        double t0 = now();
        for (size_t put = 0; put < total; put += w)
            send_all(fd, buf, total - put < w ? total - put : w);
        char ack;
        recv_all(fd, &ack, 1, 0);
        printf("bandwidth, %zu MiB writes: %.0f MB/s\n", w >> 20, total / (now() - t0) / 1e6);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    const char *host = NULL, *port = "5997";
    int server = 0;
    plan p = {.iters = 20000, .mib = 2048};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--server"))
            server = 1;
        else if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = argv[++i];
        else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
            p.iters = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--mib") && i + 1 < argc)
            p.mib = (uint32_t)strtoul(argv[++i], NULL, 10);
        else if (argv[i][0] != '-' && !host)
            host = argv[i];
        else {
            fprintf(stderr, "usage: tcp-floor --server [--port P]\n"
                            "       tcp-floor HOST [--port P] [--iters N] [--mib M]\n");
            return 2;
        }
    }
    if (!server && !host) {
        fprintf(stderr, "tcp-floor: name the server's host, or pass --server\n");
        return 2;
    }
    if (p.iters < 10)
        p.iters = 10;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM,
                             .ai_flags = server ? AI_PASSIVE : 0},
                    *ai;
    int rc = getaddrinfo(server ? NULL : host, port, &hints, &ai);
    if (rc) {
        fprintf(stderr, "tcp-floor: %s: %s\n", server ? "port" : host, gai_strerror(rc));
        return 1;
    }
    int one = 1, fd = socket(ai->ai_family, ai->ai_socktype, 0);
    if (fd < 0)
        die("socket");
    if (server) {
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 1))
            die("bind");
        int c = accept(fd, NULL, NULL);
        if (c < 0)
            die("accept");
        setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        serve(c);
        close(c);
    } else {
        double give_up = now() + 10;
        while (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            if (now() > give_up)
                die("connect");
            usleep(10000);
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        measure(fd, p);
    }
    close(fd);
    freeaddrinfo(ai);
    return 0;
}
