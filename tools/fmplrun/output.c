/* --tag-output: relay each rank's stdout and stderr line by line, every
 * line prefixed with "[r] " ("[g:r] " for rank r of spawned group g) and
 * written with one write(2), so lines of different ranks never mix.  A line
 * longer than the buffer is cut into pieces, each written as its own tagged
 * line.  Across hosts the head relays each proxy's output the same way,
 * untagged (tag ""): the proxy tagged it already when asked to. */
#include "fmplrun.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int fr_stream_open(fr_stream *s, int fd, int dest, const char *tag)
{
    snprintf(s->tag, sizeof s->tag, "%s", tag);
    s->buf = malloc(FR_STREAM_BUF);
    if (!s->buf)
        return -1;
    s->fd = fd;
    s->dest = dest;
    s->len = 0;
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    return 0;
}

static void write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* our stdout is gone: drop the output */
        p += w;
        n -= (size_t)w;
    }
}

static void emit(const fr_stream *s, const char *line, size_t len)
{
    char out[FR_STREAM_BUF + sizeof s->tag + 1];
    size_t n = strlen(s->tag);
    memcpy(out, s->tag, n);
    memcpy(out + n, line, len);
    out[n + len] = '\n';
    write_all(s->dest, out, n + len + 1);
}

/* Emit every complete line in the buffer; a full buffer without a newline
 * is emitted as one piece. */
static void emit_lines(fr_stream *s)
{
    size_t start = 0;
    for (;;) {
        char *nl = memchr(s->buf + start, '\n', s->len - start);
        if (!nl)
            break;
        size_t len = (size_t)(nl - (s->buf + start));
        emit(s, s->buf + start, len);
        start += len + 1;
    }
    if (start == 0 && s->len == FR_STREAM_BUF) {
        emit(s, s->buf, s->len);
        start = s->len;
    }
    s->len -= start;
    memmove(s->buf, s->buf + start, s->len);
}

void fr_stream_readable(fr_stream *s)
{
    if (s->fd < 0)
        return;
    ssize_t r = read(s->fd, s->buf + s->len, FR_STREAM_BUF - s->len);
    if (r < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (r <= 0) {
        fr_stream_close(s);
        return;
    }
    s->len += (size_t)r;
    emit_lines(s);
}

void fr_stream_close(fr_stream *s)
{
    if (s->fd >= 0) {
        /* Take what is still in the pipe without blocking. */
        ssize_t r;
        int rounds = 0; /* bounded: a grandchild may still be writing */
        while (rounds++ < 16 && s->len < FR_STREAM_BUF &&
               (r = read(s->fd, s->buf + s->len, FR_STREAM_BUF - s->len)) > 0) {
            s->len += (size_t)r;
            emit_lines(s);
        }
        close(s->fd);
        s->fd = -1;
    }
    if (s->buf) {
        emit_lines(s);
        if (s->len > 0)
            emit(s, s->buf, s->len); /* last line had no newline */
        free(s->buf);
        s->buf = NULL;
        s->len = 0;
    }
}
