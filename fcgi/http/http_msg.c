/* http_msg.c: struct http_io over memory, for a door served without HTTP
 * (MCP over stdio): the request is variables and a body the caller holds;
 * the response, as the door writes it, is taken apart again: its head
 * (status, headers) is skipped, and what it carries is handed on as
 * messages: a body whole when the door is done, or, for a stream of
 * server-sent events, each event's data as it comes (comments, the
 * keepalives and CGI's padding, are dropped). */
#include "config.h"

#include "http.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static ssize_t msg_read(void *ctx, char *buf, size_t n)
{
    struct http_msg *m = ctx;
    size_t left = m->len - m->off;
    size_t take = n < left ? n : left;
    memcpy(buf, m->body + m->off, take);
    m->off += take;
    return (ssize_t)take;
}

/* The data of one event block (lines without their newlines): its data
 * lines joined by "\n", handed on; nothing for a comment or an empty one. */
static int msg_event(struct http_msg *m, char *block, size_t n)
{
    struct dbuf data;
    int rc = 0;
    dbuf_init(&data, n + 1);
    for (size_t i = 0; i < n && rc == 0;) {
        char *nl = memchr(block + i, '\n', n - i);
        size_t len = nl ? (size_t)(nl - (block + i)) : n - i;
        const char *line = block + i;
        if (len >= 5 && !strncmp(line, "data:", 5)) {
            size_t skip = len > 5 && line[5] == ' ' ? 6 : 5;
            if (data.len)
                rc = dbuf_append(&data, "\n", 1);
            if (rc == 0)
                rc = dbuf_append(&data, line + skip, len - skip);
        }
        i += len + 1;
    }
    if (rc == 0 && data.len)
        rc = m->message(m->ctx, data.data, data.len);
    dbuf_free(&data);
    return rc;
}

/* What follows the head: the events of a stream as each one ends (a blank
 * line), or a body kept for http_msg_end. */
static int msg_body(struct http_msg *m, const char *buf, size_t n)
{
    int rc = dbuf_append(&m->body_buf, buf, n);
    if (rc < 0 || !m->sse)
        return rc;
    size_t start = 0;
    for (size_t i = 0; i + 1 < m->body_buf.len; i++) {
        if (m->body_buf.data[i] != '\n' || m->body_buf.data[i + 1] != '\n')
            continue;
        rc = msg_event(m, m->body_buf.data + start, i - start);
        if (rc < 0)
            return rc;
        start = i + 2;
        i++;
    }
    memmove(m->body_buf.data, m->body_buf.data + start, m->body_buf.len - start);
    m->body_buf.len -= start;
    return 0;
}

static int msg_write(void *ctx, const char *buf, size_t n)
{
    struct http_msg *m = ctx;
    if (m->in_body)
        return msg_body(m, buf, n);
    int rc = dbuf_append(&m->head, buf, n);
    if (rc < 0)
        return rc;
    char *end = m->head.len >= 4 ? memmem(m->head.data, m->head.len, "\r\n\r\n", 4) : NULL;
    if (!end)
        return 0;
    m->in_body = true;
    size_t head_len = (size_t)(end - m->head.data) + 4;
    *end = '\0';
    for (char *line = m->head.data; line && *line;) {
        char *next = strstr(line, "\r\n");
        if (next)
            *next = '\0';
        if (!strncasecmp(line, "Content-Type:", 13) && strstr(line + 13, "text/event-stream"))
            m->sse = true;
        line = next ? next + 2 : NULL;
    }
    rc = msg_body(m, m->head.data + head_len, m->head.len - head_len);
    m->head.len = head_len;
    return rc;
}

static int msg_flush(void *ctx)
{
    (void)ctx;
    return 0; /* each message went out whole */
}

static bool msg_gone(void *ctx)
{
    struct http_msg *m = ctx;
    return m->gone && m->gone(m->ctx);
}

void http_io_msg(struct http_msg *m, char **envp, const char *body, size_t len, size_t max,
                 int (*message)(void *ctx, const char *text, size_t len), bool (*gone)(void *ctx), void *ctx)
{
    memset(m, 0, sizeof *m);
    m->io = (struct http_io){m, msg_read, msg_write, msg_flush, envp, msg_gone};
    m->body = body;
    m->len = len;
    m->message = message;
    m->gone = gone;
    m->ctx = ctx;
    dbuf_init(&m->head, HTTP_HEADERS_MAX + 512);
    dbuf_init(&m->body_buf, max);
}

int http_msg_end(struct http_msg *m)
{
    int rc = 0;
    if (!m->sse && m->body_buf.len)
        rc = m->message(m->ctx, m->body_buf.data, m->body_buf.len);
    else if (m->sse && m->body_buf.len)
        rc = msg_event(m, m->body_buf.data, m->body_buf.len); /* a last event without its blank line */
    m->body_buf.len = 0;
    return rc;
}

void http_msg_free(struct http_msg *m)
{
    dbuf_free(&m->head);
    dbuf_free(&m->body_buf);
}
