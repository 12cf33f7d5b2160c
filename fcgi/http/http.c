/* http.c: requests and responses over FCGX streams or CGI's stdin/stdout,
 * and what every route answers with: the Accept match, a JSON body read
 * whole, an error body, the base of absolute links, base64. */
#include "config.h"

#include "http.h"

#include <ctype.h>
#include <errno.h>
#include <fcgiapp.h>
#include <json-c/json.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------ transports */

struct fcgx_ctx {
    FCGX_Stream *in, *out;
    int fd;
};

/* The peer closed its end (or the socket broke): a poll that does not wait.
 * Data waiting to be read is not a hang-up. */
static bool fd_hung_up(int fd, short events)
{
    struct pollfd p = {.fd = fd, .events = events};
    return fd >= 0 && poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

static bool fcgx_gone(void *ctx)
{
    struct fcgx_ctx *c = ctx;
    return fd_hung_up(c->fd, POLLRDHUP);
}

static ssize_t fcgx_read(void *ctx, char *buf, size_t n)
{
    struct fcgx_ctx *c = ctx;
    int want = n > 1 << 30 ? 1 << 30 : (int)n;
    int r = FCGX_GetStr(buf, want, c->in);
    if (r < 0 || (r == 0 && FCGX_GetError(c->in)))
        return -EIO;
    return r;
}

static int fcgx_write(void *ctx, const char *buf, size_t n)
{
    struct fcgx_ctx *c = ctx;
    while (n > 0) {
        int chunk = n > 1 << 30 ? 1 << 30 : (int)n;
        if (FCGX_PutStr(buf, chunk, c->out) != chunk) {
            int e = FCGX_GetError(c->out);
            return e == EAGAIN || e == EWOULDBLOCK ? -ETIMEDOUT : -EPIPE; /* ETIMEDOUT: http_io_stall's bound */
        }
        buf += chunk;
        n -= (size_t)chunk;
    }
    return 0;
}

static int fcgx_flush(void *ctx)
{
    struct fcgx_ctx *c = ctx;
    if (FCGX_FFlush(c->out) >= 0)
        return 0;
    int e = FCGX_GetError(c->out);
    return e == EAGAIN || e == EWOULDBLOCK ? -ETIMEDOUT : -EPIPE;
}

void http_io_fcgx(struct http_io *io, void *in, void *out, char **envp, int fd)
{
    /* One request at a time per process: the context can be static. */
    static struct fcgx_ctx c;
    c.in = in;
    c.out = out;
    c.fd = fd;
    *io = (struct http_io){&c, fcgx_read, fcgx_write, fcgx_flush, envp, fcgx_gone};
}

static uint64_t cgi_consumed; /* request body bytes read from stdin */

static ssize_t cgi_read(void *ctx, char *buf, size_t n)
{
    (void)ctx;
    for (;;) {
        ssize_t r = read(0, buf, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r > 0)
            cgi_consumed += (uint64_t)r;
        return r < 0 ? -errno : r;
    }
}

void http_cgi_drain(uint64_t max)
{
    const char *cl = getenv("CONTENT_LENGTH");
    char *end;
    if (!cl || !isdigit((unsigned char)cl[0]))
        return;
    errno = 0;
    unsigned long long want = strtoull(cl, &end, 10);
    if (errno || *end || want <= cgi_consumed || want - cgi_consumed > max)
        return;
    char buf[65536];
    while (cgi_consumed < want) {
        uint64_t left = want - cgi_consumed;
        if (cgi_read(NULL, buf, left < sizeof buf ? (size_t)left : sizeof buf) <= 0)
            break;
    }
}

#define CGI_WRITE_CHUNK 4096 /* PIPE_BUF on Linux: a pipe with room (POLLOUT) takes it without blocking */

static int cgi_stall_ms; /* http_io_stall's bound on stdout; 0: none */

/* With a bound, each write waits for room at most cgi_stall_ms and is of
 * at most CGI_WRITE_CHUNK bytes: a reader that takes nothing for that long
 * fails the write. */
static int cgi_write(void *ctx, const char *buf, size_t n)
{
    (void)ctx;
    if (cgi_stall_ms <= 0)
        return util_write_all(1, buf, n);
    while (n > 0) {
        struct pollfd p = {.fd = 1, .events = POLLOUT};
        int r = poll(&p, 1, cgi_stall_ms);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r == 0 ? -ETIMEDOUT : -errno;
        ssize_t w = write(1, buf, n < CGI_WRITE_CHUNK ? n : CGI_WRITE_CHUNK);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -errno;
        buf += w;
        n -= (size_t)w;
    }
    return 0;
}

static int cgi_flush(void *ctx)
{
    (void)ctx;
    return 0; /* writes go straight to the fd */
}

static bool cgi_gone(void *ctx)
{
    (void)ctx;
    return fd_hung_up(1, 0); /* the reader of stdout went away: POLLERR */
}

void http_io_cgi(struct http_io *io)
{
    *io = (struct http_io){NULL, cgi_read, cgi_write, cgi_flush, environ, cgi_gone};
}

void http_io_stall(struct http_io *io, int64_t ms)
{
    if (ms <= 0)
        return;
    int fd = io->write == fcgx_write ? ((struct fcgx_ctx *)io->ctx)->fd : io->write == cgi_write ? 1 : -1;
    /* A socket (FastCGI; a CGI program's stdout may be one too) fails a
     * send that waits longer (libfcgi then ends the request); a pipe is
     * bounded in cgi_write. */
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    if (fd >= 0)
        discard(setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv)); /* ENOTSOCK: a pipe */
    if (io->write == cgi_write)
        cgi_stall_ms = ms < (1 << 30) ? (int)ms : 1 << 30;
}

bool http_client_gone(struct http_resp *resp)
{
    return resp->failed || (resp->io->gone && resp->io->gone(resp->io->ctx));
}

/* ---------------------------------------------------------------- request */

const char *http_param(const struct http_req *req, const char *name)
{
    size_t n = strlen(name);
    for (char **e = req->io->envp; e && *e; e++)
        if (!strncmp(*e, name, n) && (*e)[n] == '=')
            return *e + n + 1;
    return NULL;
}

const char *http_header(const struct http_req *req, const char *name)
{
    char var[128];
    if (!strcasecmp(name, "Content-Type"))
        return http_param(req, "CONTENT_TYPE");
    if (!strcasecmp(name, "Content-Length"))
        return http_param(req, "CONTENT_LENGTH");
    size_t n = strlen(name);
    if (n + 6 > sizeof var)
        return NULL;
    memcpy(var, "HTTP_", 5);
    for (size_t i = 0; i < n; i++)
        var[5 + i] = name[i] == '-' ? '_' : (char)toupper((unsigned char)name[i]);
    var[5 + n] = '\0';
    return http_param(req, var);
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int http_pct_decode(const char *s, size_t n, char *out, size_t outlen)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n)
                return -EINVAL;
            int h = hexval(s[i + 1]), l = hexval(s[i + 2]);
            if (h < 0 || l < 0)
                return -EINVAL;
            c = (char)(h * 16 + l);
            if (c == '\0')
                return -EINVAL;
            i += 2;
        } else if (c == '\0') {
            return -EINVAL;
        }
        if (o + 1 >= outlen)
            return -EINVAL;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

void http_req_init(struct http_req *req, struct http_io *io)
{
    memset(req, 0, sizeof *req);
    req->io = io;
    req->method = http_param(req, "REQUEST_METHOD");
    if (!req->method || !*req->method)
        req->method = "GET";
    unsigned char rnd[6];
    if (util_random(rnd, sizeof rnd) == 0)
        util_hex(rnd, sizeof rnd, req->id);
    else
        snprintf(req->id, sizeof req->id, "req");
    const char *uri = http_param(req, "REQUEST_URI");
    if (!uri || !*uri)
        uri = http_param(req, "SCRIPT_NAME"); /* some CGI servers: no REQUEST_URI */
    if (!uri)
        uri = "/";
    size_t n = strcspn(uri, "?#");
    req->path_ok = http_pct_decode(uri, n, req->path, sizeof req->path) == 0;
    if (!req->path_ok)
        req->path[0] = '\0';
}

int http_read_body(struct http_req *req, size_t max, char **out, size_t *len)
{
    const char *cl = http_param(req, "CONTENT_LENGTH");
    unsigned long long want = 0;
    bool known = cl && *cl;
    if (known) {
        char *end;
        errno = 0;
        if (!isdigit((unsigned char)cl[0]))
            return -EINVAL;
        want = strtoull(cl, &end, 10);
        if (errno || *end)
            return -EINVAL;
        if (want > max)
            return -E2BIG;
    }
    struct dbuf b;
    dbuf_init(&b, max);
    char chunk[65536];
    for (;;) {
        size_t ask = sizeof chunk;
        if (known) {
            if (b.len >= want)
                break;
            if (want - b.len < ask)
                ask = (size_t)(want - b.len);
        }
        ssize_t r = req->io->read(req->io->ctx, chunk, ask);
        if (r < 0) {
            dbuf_free(&b);
            return (int)r;
        }
        if (r == 0)
            break;
        int rc = dbuf_append(&b, chunk, (size_t)r);
        if (rc < 0) {
            dbuf_free(&b);
            return rc;
        }
    }
    if (known && b.len < want) {
        dbuf_free(&b);
        return -EIO;
    }
    *out = dbuf_steal(&b, len);
    return *out ? 0 : -ENOMEM;
}

/* --------------------------------------------------------------- response */

const char *http_reason(int status)
{
    switch (status) {
    case 200: return "OK";
    case 202: return "Accepted";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 409: return "Conflict";
    case 413: return "Content Too Large";
    case 415: return "Unsupported Media Type";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 507: return "Insufficient Storage";
    default: return "Unknown";
    }
}

void http_resp_init(struct http_resp *resp, struct http_io *io)
{
    memset(resp, 0, sizeof *resp);
    resp->io = io;
    dbuf_init(&resp->headers, HTTP_HEADERS_MAX);
}

void http_resp_free(struct http_resp *resp)
{
    dbuf_free(&resp->headers);
}

int http_add_header(struct http_resp *resp, const char *name, const char *fmt, ...)
{
    char value[4096];
    va_list ap;
    if (resp->started)
        return 0;
    va_start(ap, fmt);
    int n = vsnprintf(value, sizeof value, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof value)
        return -E2BIG;
    if (strpbrk(value, "\r\n"))
        return -EINVAL;
    return dbuf_printf(&resp->headers, "%s: %s\r\n", name, value);
}

/* A write or flush of the transport's that failed: the response is over
 * (-ETIMEDOUT: its client took nothing for stream_stall, http_io_stall). */
static int transport_failed(struct http_resp *resp, int rc)
{
    if (rc == -ETIMEDOUT)
        log_msg(LOG_LVL_WARN, "stream closed: the client took nothing for stream_stall");
    resp->failed = true;
    return rc;
}

static int out(struct http_resp *resp, const char *data, size_t len)
{
    if (resp->failed)
        return -EPIPE;
    int rc = resp->io->write(resp->io->ctx, data, len);
    if (rc < 0)
        transport_failed(resp, rc);
    resp->last_write_ms = util_now_ms();
    return rc;
}

static int write_head(struct http_resp *resp, int status, const char *content_type, const size_t *length)
{
    char line[256];
    if (resp->started)
        return -EALREADY;
    resp->started = true;
    resp->status = status;
    int n = snprintf(line, sizeof line, "Status: %d %s\r\n", status, http_reason(status));
    int rc = out(resp, line, (size_t)n);
    if (rc == 0 && content_type) {
        n = snprintf(line, sizeof line, "Content-Type: %s\r\n", content_type);
        rc = out(resp, line, (size_t)n);
    }
    if (rc == 0 && length) {
        n = snprintf(line, sizeof line, "Content-Length: %zu\r\n", *length);
        rc = out(resp, line, (size_t)n);
    }
    if (rc == 0 && resp->headers.len)
        rc = out(resp, resp->headers.data, resp->headers.len);
    if (rc == 0)
        rc = out(resp, "\r\n", 2);
    return rc;
}

int http_send(struct http_resp *resp, int status, const char *content_type, const char *body, size_t len)
{
    int rc = write_head(resp, status, content_type, &len);
    if (rc == 0 && len)
        rc = out(resp, body, len);
    return rc;
}

int http_send_json(struct http_resp *resp, int status, const char *json)
{
    return http_send(resp, status, "application/json", json, strlen(json));
}

int http_start(struct http_resp *resp, int status, const char *content_type)
{
    int rc = write_head(resp, status, content_type, NULL);
    return rc ? rc : http_flush(resp);
}

int http_write(struct http_resp *resp, const char *data, size_t len)
{
    return out(resp, data, len);
}

int http_flush(struct http_resp *resp)
{
    if (resp->failed)
        return -EPIPE;
    int rc = resp->io->flush(resp->io->ctx);
    return rc < 0 ? transport_failed(resp, rc) : rc;
}

int http_sse_pad(struct http_resp *resp, uint64_t bytes)
{
    static const char spaces[1024] = {[0 ... 1023] = ' '};
    int rc = http_write(resp, ":", 1);
    for (uint64_t left = bytes; rc == 0 && left > 0;) {
        size_t n = left < sizeof spaces ? (size_t)left : sizeof spaces;
        rc = http_write(resp, spaces, n);
        left -= n;
    }
    if (rc == 0)
        rc = http_write(resp, "\n\n", 2);
    return rc == 0 ? http_flush(resp) : rc;
}

int http_sse_start(struct http_resp *resp)
{
    int rc = http_add_header(resp, "Cache-Control", "no-cache, no-transform");
    if (rc == 0)
        rc = http_add_header(resp, "X-Accel-Buffering", "no");
    if (rc < 0)
        return rc;
    return http_start(resp, 200, "text/event-stream");
}

int http_sse_event(struct http_resp *resp, const char *json, size_t len, bool flush)
{
    return http_sse_named(resp, "message", json, len, flush);
}

int http_sse_named(struct http_resp *resp, const char *event, const char *json, size_t len, bool flush)
{
    int rc = out(resp, "event: ", 7);
    if (rc == 0)
        rc = out(resp, event, strlen(event));
    if (rc == 0)
        rc = out(resp, "\ndata: ", 7);
    if (rc == 0)
        rc = out(resp, json, len);
    if (rc == 0)
        rc = out(resp, "\n\n", 2);
    if (rc == 0 && flush)
        rc = http_flush(resp);
    return rc;
}

int http_sse_comment(struct http_resp *resp, const char *text)
{
    char line[128];
    int n = snprintf(line, sizeof line, ": %s\n\n", text);
    if (n < 0 || (size_t)n >= sizeof line)
        return -EINVAL;
    int rc = out(resp, line, (size_t)n);
    return rc ? rc : http_flush(resp);
}

/* ------------------------------------------------------------------ text */

int http_host_name(const char *host, char *out_, size_t outlen)
{
    size_t n = 0;
    const char *p = host;
    if (!*p)
        return -EINVAL;
    if (*p == '[') {
        const char *close = strchr(p, ']');
        if (!close)
            return -EINVAL;
        for (const char *q = p + 1; q < close; q++)
            if (!isxdigit((unsigned char)*q) && *q != ':' && *q != '.')
                return -EINVAL;
        n = (size_t)(close - p) + 1;
        p = close + 1;
    } else {
        while (p[n] && p[n] != ':') {
            unsigned char c = (unsigned char)p[n];
            if (!isalnum(c) && c != '-' && c != '.' && c != '_')
                return -EINVAL;
            n++;
        }
        if (n == 0)
            return -EINVAL;
        p += n;
    }
    if (*p == ':') {
        p++;
        if (!*p)
            return -EINVAL;
        for (; *p; p++)
            if (!isdigit((unsigned char)*p))
                return -EINVAL;
    } else if (*p) {
        return -EINVAL;
    }
    if (n + 1 > outlen)
        return -EINVAL;
    for (size_t i = 0; i < n; i++)
        out_[i] = (char)tolower((unsigned char)host[i]);
    out_[n] = '\0';
    return 0;
}

/* How closely a media range names type: 3 type/subtype, 2 type/ *, 1 * / *,
 * 0 not at all. */
static int range_match(const char *range, size_t n, const char *type)
{
    const char *slash = strchr(type, '/');
    size_t major = slash ? (size_t)(slash - type) : strlen(type);
    if (n == strlen(type) && !strncasecmp(range, type, n))
        return 3;
    if (n == major + 2 && !strncasecmp(range, type, major) && !strncmp(range + major, "/*", 2))
        return 2;
    if (n == 3 && !strncmp(range, "*/*", 3))
        return 1;
    return 0;
}

/* The q of the parameters p[0..n) (";a=b;q=0.5"): 1 when there is none. */
static double range_q(const char *p, size_t n)
{
    double q = 1;
    for (const char *end = p + n; p < end; p++) {
        if (*p != ';')
            continue;
        const char *r = p + 1;
        while (r < end && (*r == ' ' || *r == '\t'))
            r++;
        if (end - r >= 2 && (r[0] == 'q' || r[0] == 'Q') && r[1] == '=') {
            char num[16];
            size_t k = strcspn(r + 2, ";,");
            if (k >= sizeof num)
                k = sizeof num - 1;
            memcpy(num, r + 2, k);
            num[k] = '\0';
            char *stop;
            double v = strtod(num, &stop);
            if (stop != num)
                q = v;
        }
    }
    return q;
}

int http_accept_q(const char *accept, const char *type, bool wildcards, double *q)
{
    int best = 0;
    *q = 0;
    for (const char *p = accept ? accept : ""; *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ",");
        size_t e = strcspn(p, ";,");
        while (e && (p[e - 1] == ' ' || p[e - 1] == '\t'))
            e--;
        int m = range_match(p, e, type);
        if (!wildcards && m < 3)
            m = 0;
        /* The most specific range that names the type decides (RFC 9110
         * 12.5.1); among equals, the first. */
        if (m > best) {
            best = m;
            *q = range_q(p + e, n - e);
        }
        p += n;
    }
    return best;
}

bool http_accepts(const char *accept, const char *type)
{
    double q;
    return http_accept_q(accept, type, true, &q) && q > 0;
}

bool http_accepts_named(const char *accept, const char *type)
{
    double q;
    return http_accept_q(accept, type, false, &q) && q > 0;
}

/* ------------------------------------------------------------ answers */

char *http_base64(const unsigned char *p, size_t n, size_t *out_len)
{
    static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (n > (SIZE_MAX / 4) * 3 - 3)
        return NULL;
    size_t o = 0, len = (n + 2) / 3 * 4;
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
        out[o++] = tbl[v >> 18];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = tbl[(v >> 6) & 63];
        out[o++] = tbl[v & 63];
    }
    if (i < n) {
        uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
        out[o++] = tbl[v >> 18];
        out[o++] = tbl[(v >> 12) & 63];
        out[o++] = i + 1 < n ? tbl[(v >> 6) & 63] : '=';
        out[o++] = '=';
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

void http_base_url(const struct http_req *req, const char *public_url, char *out, size_t outlen)
{
    out[0] = '\0';
    if (public_url && *public_url) {
        snprintf(out, outlen, "%s", public_url);
        size_t n = strlen(out);
        while (n && out[n - 1] == '/')
            out[--n] = '\0';
        return;
    }
    const char *host = http_header(req, "Host");
    char name[256];
    if (!host || http_host_name(host, name, sizeof name) < 0)
        return;
    const char *scheme = http_param(req, "REQUEST_SCHEME");
    const char *https = http_param(req, "HTTPS");
    if (!scheme || (strcmp(scheme, "http") && strcmp(scheme, "https")))
        scheme = (https && *https && strcasecmp(https, "off")) ? "https" : "http";
    snprintf(out, outlen, "%s://%s", scheme, host);
}

void http_send_error(struct http_resp *resp, int status, const char *message)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "error", json_object_new_string(message));
    discard(http_send_json(resp, status, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
    json_object_put(o);
}

int http_parse_json(const char *text, size_t len, int depth, json_object **out)
{
    *out = NULL;
    json_tokener *tok = json_tokener_new_ex(depth);
    if (!tok)
        return -ENOMEM;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, text, (int)len);
    bool complete = json_tokener_get_error(tok) == json_tokener_success;
    /* White space may follow the value (RFC 8259: ws value ws), nothing
     * else may. */
    for (size_t i = complete ? (size_t)tok->char_offset : len; i < len; i++)
        if (text[i] != ' ' && text[i] != '\n' && text[i] != '\r' && text[i] != '\t')
            complete = false;
    json_tokener_free(tok);
    if (!complete || !o) {
        json_object_put(o);
        return -EBADMSG;
    }
    *out = o;
    return 0;
}

int http_read_json(struct http_req *req, size_t max, int depth, json_object **out)
{
    cleanup_free char *body = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = http_read_body(req, max, &body, &len);
    if (rc == -E2BIG)
        return rc;
    if (rc < 0)
        return -EIO;
    if (len > (size_t)INT32_MAX) /* json_tokener takes an int */
        return -E2BIG;
    return http_parse_json(body, len, depth, out);
}

unsigned char *http_base64_decode(const char *s, size_t n, size_t *out_len)
{
    unsigned char *out = malloc(n / 4 * 3 + 3);
    if (!out)
        return NULL;
    size_t o = 0, pad = 0;
    uint32_t v = 0;
    unsigned k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int d;
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
            continue;
        if (c == '=') {
            pad++;
            continue;
        }
        if (pad)
            goto bad; /* data after the padding */
        if (c >= 'A' && c <= 'Z')
            d = c - 'A';
        else if (c >= 'a' && c <= 'z')
            d = c - 'a' + 26;
        else if (c >= '0' && c <= '9')
            d = c - '0' + 52;
        else if (c == '+')
            d = 62;
        else if (c == '/')
            d = 63;
        else
            goto bad;
        v = v << 6 | (uint32_t)d;
        if (++k == 4) {
            out[o++] = (unsigned char)(v >> 16);
            out[o++] = (unsigned char)(v >> 8);
            out[o++] = (unsigned char)v;
            v = 0;
            k = 0;
        }
    }
    if (k == 1 || pad > 2)
        goto bad;
    if (k == 2)
        out[o++] = (unsigned char)(v >> 4);
    else if (k == 3) {
        out[o++] = (unsigned char)(v >> 10);
        out[o++] = (unsigned char)(v >> 2);
    }
    *out_len = o;
    return out;
bad:
    free(out);
    errno = EINVAL;
    return NULL;
}
