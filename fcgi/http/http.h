/* http.h: one HTTP request and its response as a FastCGI or CGI program
 * sees them: CGI-style variables, a body to read, and a response of
 * CGI-style headers ("Status: 200 OK") and a body, written in one piece or
 * streamed as server-sent events. The transport (FCGX streams, or stdin and
 * stdout for CGI) hides behind struct http_io. Beside them, what every
 * route answers with: the Accept match, a JSON body read whole, an error
 * body, the base of absolute links, base64. */
#ifndef RMS_HTTP_H
#define RMS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <json-c/json.h>

#include "util.h"

#define HTTP_HEADERS_MAX 8192   /* bytes of response headers we build */
#define HTTP_PATH_MAX 2048      /* bytes of a decoded request path */

/* The transport. read returns bytes read, 0 at the end of the body, or
 * -errno; write and flush return 0 or -errno. envp: the request's
 * variables, NAME=value strings, NULL-terminated (borrowed). */
struct http_io {
    void *ctx;
    ssize_t (*read)(void *ctx, char *buf, size_t n);
    int (*write)(void *ctx, const char *buf, size_t n);
    int (*flush)(void *ctx);
    char **envp;
    /* True when the peer (nginx, or the CGI server) has hung up; may be
     * NULL (never gone). Cheap: a poll with no wait. */
    bool (*gone)(void *ctx);
    /* The request's stream (stream.h: the server sets it; NULL: a
     * transport that has none). */
    struct stream_req *stream;
};

/* A transport over FCGX streams (in, out: FCGX_Stream *; fd: the
 * connection's socket, for gone), or over fd 0 and fd 1 with the process
 * environment (CGI). */
void http_io_fcgx(struct http_io *io, void *in, void *out, char **envp, int fd);
void http_io_cgi(struct http_io *io);
/* Bounds every later write of io's response (a stream held by this
 * process): a write whose peer takes nothing for ms fails, as if the peer
 * had gone. ms <= 0, or a transport of another kind: no bound. */
void http_io_stall(struct http_io *io, int64_t ms);
/* After a CGI response: reads and drops what is left of the request body
 * (CONTENT_LENGTH), at most max bytes. A CGI program that exits with body
 * bytes unread makes Apache's mod_cgid see a reset and lose the response
 * (a 401 or 413 sent before the body was read). */
void http_cgi_drain(uint64_t max);

/* A transport over memory, for a door served without HTTP (http_msg.c):
 * the request is envp and body[0..len) (both borrowed; read gives the
 * body); the response the door writes is taken apart again: its head is
 * skipped, a body is handed whole to message at http_msg_end, and each
 * event of a text/event-stream answer (its data lines joined) as soon as
 * it ends, comments dropped. max: the most a body (or an event) may hold;
 * past it the write fails (the door sees a gone client). gone (may be
 * NULL): whether whoever takes the messages went away. message returns 0,
 * or -errno, which fails the write. */
struct http_msg {
    struct http_io io;   /* what the door is given */
    const char *body;
    size_t len, off;
    struct dbuf head, body_buf;
    bool in_body, sse;
    int (*message)(void *ctx, const char *text, size_t len);
    bool (*gone)(void *ctx);
    void *ctx;
};
void http_io_msg(struct http_msg *m, char **envp, const char *body, size_t len, size_t max,
                 int (*message)(void *ctx, const char *text, size_t len), bool (*gone)(void *ctx), void *ctx);
/* After the door: the body, if any, to message. 0 or message's -errno. */
int http_msg_end(struct http_msg *m) must_check;
void http_msg_free(struct http_msg *m);

struct http_req {
    struct http_io *io;
    const char *method;        /* REQUEST_METHOD, "GET" when missing */
    char path[HTTP_PATH_MAX];  /* decoded path of REQUEST_URI, no query */
    bool path_ok;              /* false: undecodable (%00, bad escapes, too long) */
    char id[13];               /* request id for log lines */
};

/* Fills req from io's variables. */
void http_req_init(struct http_req *req, struct http_io *io);

/* A CGI variable (borrowed) or NULL. */
const char *http_param(const struct http_req *req, const char *name);
/* A request header by its HTTP name ("Mcp-Session-Id" reads
 * HTTP_MCP_SESSION_ID; "Content-Type" and "Content-Length" read the CGI
 * variables of those names). Borrowed, or NULL. */
const char *http_header(const struct http_req *req, const char *name);

/* Reads the whole body into *out (NUL-terminated, caller frees). -E2BIG when
 * CONTENT_LENGTH or the bytes that arrive pass max (then nothing more is
 * read), -EINVAL for a bad CONTENT_LENGTH, -EIO when the body ends short. */
int http_read_body(struct http_req *req, size_t max, char **out, size_t *len) must_check;

struct http_resp {
    struct http_io *io;
    struct dbuf headers;  /* "Name: value\r\n" lines added so far */
    int status;           /* sent, once started */
    bool started;         /* the headers are written */
    bool failed;          /* a write failed: the client is gone */
    int64_t last_write_ms;
};

void http_resp_init(struct http_resp *resp, struct http_io *io);
void http_resp_free(struct http_resp *resp);

/* Adds a header to send. Values with CR, LF or NUL are refused (-EINVAL);
 * -E2BIG past HTTP_HEADERS_MAX. Ignored (0) once the response started. */
int http_add_header(struct http_resp *resp, const char *name, const char *fmt, ...) printf_like(3, 4);

/* Sends a whole response: status, the added headers, Content-Type when not
 * NULL, Content-Length, and the body. 0 or -errno (resp->failed is set). */
int http_send(struct http_resp *resp, int status, const char *content_type, const char *body, size_t len);
/* A JSON body. */
int http_send_json(struct http_resp *resp, int status, const char *json);

/* True when the client is gone: a write failed, or the transport says the
 * peer hung up. */
bool http_client_gone(struct http_resp *resp);

/* Starts a streamed response (no Content-Length) and flushes the headers. */
int http_start(struct http_resp *resp, int status, const char *content_type);
/* Writes part of a started body; flush pushes it out now. */
int http_write(struct http_resp *resp, const char *data, size_t len);
int http_flush(struct http_resp *resp);

/* Starts a server-sent-event stream (text/event-stream, no caching, no
 * proxy buffering). */
int http_sse_start(struct http_resp *resp);
/* One event "event: message" whose data is one line of JSON (the caller
 * guarantees no newline in it; compact JSON has none). No event ids: we do
 * not replay, so a client must not try to resume. flush: push it out now. */
int http_sse_event(struct http_resp *resp, const char *json, size_t len, bool flush);
/* The same with an event name of the caller's (a static word such as
 * "phase": no newline). */
int http_sse_named(struct http_resp *resp, const char *event, const char *json, size_t len, bool flush);
/* A comment of bytes blanks, flushed: under CGI, what pushes the events
 * written so far through fcgiwrap's buffer, and the write that finds a
 * client gone. 0 or -errno (resp is then failed). */
int http_sse_pad(struct http_resp *resp, uint64_t bytes) must_check;
/* A comment line, which clients ignore: keeps proxies from timing out. */
int http_sse_comment(struct http_resp *resp, const char *text);

/* The reason phrase of a status code. */
const char *http_reason(int status);

/* Percent-decodes s[0..n) into out (outlen bytes with the NUL). Refuses
 * %00, bad escapes and overlong results (-EINVAL). '+' stays '+'. */
int http_pct_decode(const char *s, size_t n, char *out, size_t outlen) must_check;

/* The host name of a Host header or of an Origin's authority: lower-cased,
 * port dropped, brackets of an IPv6 literal kept. 0, or -EINVAL for a value
 * that is not a plain host[:port]. */
int http_host_name(const char *host, char *out, size_t outlen) must_check;

/* The media ranges of an Accept header against type ("text/html"):
 * returns how closely the most specific range that names it does (3
 * type/subtype, 2 type/ *, 1 * / *; 0 none: *q is 0), with that range's q
 * in *q (1 when it gives none). wildcards false: only 3 counts. Media
 * types compare case-insensitively; parameters other than q are ignored. */
int http_accept_q(const char *accept, const char *type, bool wildcards, double *q);

/* True when Accept lets the client take type: a range names it (wildcards
 * included) and the most specific such range has a q above 0 ("q=0" is
 * "not acceptable"). NULL accepts nothing. */
bool http_accepts(const char *accept, const char *type);
/* The same, counting only a range that names type itself (no wildcard):
 * how a client says it prefers type to the default. */
bool http_accepts_named(const char *accept, const char *type);

/* Base64 (RFC 4648, padded) of n bytes (caller frees), or NULL. */
char *http_base64(const unsigned char *p, size_t n, size_t *out_len);
/* Standard base64 (RFC 4648, padding optional, whitespace skipped) into a
 * new buffer (caller frees) of *out_len bytes; NULL when s is not base64
 * (errno EINVAL) or on ENOMEM. */
unsigned char *http_base64_decode(const char *s, size_t n, size_t *out_len);

/* The scheme://host[:port] absolute links start with: public_url when set
 * (its trailing '/' dropped), else from the request (REQUEST_SCHEME or
 * HTTPS, and the Host header, which the caller's allowlist accepted). ""
 * when there is no way to know. */
void http_base_url(const struct http_req *req, const char *public_url, char *out, size_t outlen);

/* An error answer: {"error": message} with the status. */
void http_send_error(struct http_resp *resp, int status, const char *message);

/* Parses text[0..len) as one JSON value (strict, UTF-8 checked, at most
 * depth deep) followed by nothing but white space. 0 with *out (caller
 * puts), -EBADMSG for anything else, -ENOMEM. */
int http_parse_json(const char *text, size_t len, int depth, json_object **out) must_check;
/* Reads the request body (at most max bytes, http_read_body) and parses it
 * with http_parse_json. 0 with *out; -E2BIG past max; -EIO when the body
 * cannot be read; -EBADMSG when it is not JSON; -ENOMEM. */
int http_read_json(struct http_req *req, size_t max, int depth, json_object **out) must_check;

#endif
