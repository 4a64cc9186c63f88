/* Line-oriented connections between the head fmplrun and its proxies: text
 * lines ending in '\n', each at most FMPL_PMI1_LINE_MAX plus a short prefix
 * (the longest is a relayed PMI line).  Writes block until done (the
 * messages are small and both ends read all the time); reads take what is
 * there and hand every complete line to a callback. */
#include "fmplrun.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

size_t fr_vline(char *line, size_t cap, const char *fmt, va_list ap)
{
    int n = vsnprintf(line, cap - 1, fmt, ap);
    if (n < 0)
        return 0;
    if (n > (int)cap - 2)
        n = (int)cap - 2; /* cut short: the protocol's lines are shorter */
    line[n++] = '\n';
    line[n] = '\0';
    return (size_t)n;
}

int fr_send_all(int fd, const char *p, size_t len)
{
    for (size_t off = 0; off < len;) {
        ssize_t w = fd >= 0 ? send(fd, p + off, len - off, MSG_NOSIGNAL) : -1;
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1; /* the peer is gone: the reader side notices and reports */
        off += (size_t)w;
    }
    return 0;
}

int fr_conn_send(fr_conn *c, const char *line, size_t len)
{
    return fr_send_all(c->fd, line, len);
}

int fr_conn_sendf(fr_conn *c, const char *fmt, ...)
{
    char line[sizeof c->buf];
    va_list ap;
    va_start(ap, fmt);
    size_t n = fr_vline(line, sizeof line, fmt, ap);
    va_end(ap);
    return n ? fr_send_all(c->fd, line, n) : -1;
}

int fr_conn_read(fr_conn *c, void (*fn)(void *ctx, char *line), void *ctx)
{
    if (c->fd < 0)
        return -1;
    ssize_t got = recv(c->fd, c->buf + c->len, sizeof c->buf - c->len, MSG_DONTWAIT);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (got <= 0)
        return -1;
    c->len += (size_t)got;
    size_t start = 0;
    char *nl;
    while (c->fd >= 0 && (nl = memchr(c->buf + start, '\n', c->len - start)) != NULL) {
        *nl = '\0';
        fn(ctx, c->buf + start);
        start = (size_t)(nl - c->buf) + 1;
    }
    if (c->fd < 0)
        return -1; /* the callback closed it */
    c->len -= start;
    memmove(c->buf, c->buf + start, c->len);
    if (c->len == sizeof c->buf)
        return -1; /* a line longer than any the protocol sends: not our peer */
    return 0;
}
