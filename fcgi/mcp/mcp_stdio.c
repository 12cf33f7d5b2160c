/* mcp_stdio.c: MCP over stdio, the transport a client uses for a server it
 * starts as a command (`runmyscript mcp`): JSON-RPC messages on stdin and
 * stdout, one a line. Every message goes through the door as a POST of
 * /mcp does (mcp__post, headerless: there are no headers to mirror the
 * body), over a transport in memory (http_io_msg): the same revisions,
 * sessions, workspaces, tools, results and notifications as /mcp.
 *
 * Theory of operation. One process reads stdin. A request other than
 * initialize is served by a child of its own (a fork, as a CGI process
 * serves one request: the door keeps nothing in memory), whose messages
 * come back down a pipe, one line each, and go out on stdout whole; a
 * long tools/call so leaves the loop free for the next requests and for
 * notifications/cancelled. initialize, notifications and responses are
 * served in the process itself: they are quick, and initialize's
 * Mcp-Session-Id is the session every later message of a legacy revision
 * names, as an HTTP client's header would. A legacy call is cancelled by
 * the door (the marker its call polls); a 2026-07-28 call as its stream's
 * closing cancels it over HTTP: its pipe is closed. At the end of stdin,
 * or on SIGTERM, SIGINT or SIGHUP, the session is ended as DELETE ends it
 * (its calls are cancelled), the 2026-07-28 calls' pipes are closed, and
 * the children are waited for, at most kill_grace and MCP_STDIO_DRAIN_MS,
 * then killed. While it lives it keeps a warm pool of its own, unless a
 * server's already serves the state directory. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http.h"

#define MCP_STDIO_CHILDREN_MAX 64          /* requests served at once; stdin waits past it */
#define MCP_STDIO_MESSAGE_MAX (1024u << 20) /* bytes of one message a child sends (a result) */
#define MCP_STDIO_READ 65536               /* one read of stdin or of a child's pipe */
#define MCP_STDIO_TICK_MS 250              /* the loop's wake-up: children that ended, the drain */
#define MCP_STDIO_DRAIN_MS 5000            /* after stdin ends: beyond kill_grace, for the children */

/* One request served by a child. */
struct child {
    pid_t pid;             /* 0: a free slot; -1: reaped */
    int fd;                /* its pipe's read end; -1 once at its end or closed */
    struct dbuf line;      /* the message being read */
    char key[65];          /* the request id's key (mcp__id_key) */
    char *id;              /* the request id's JSON text (a legacy call's cancel names it) */
    bool is_2026;          /* cancelled by closing its pipe */
};

struct stdio {
    const struct app *app;
    int in, out;
    char sid[WS_ID_MAX + 1];  /* the legacy session initialize made, "" none */
    struct child c[MCP_STDIO_CHILDREN_MAX];
    struct dbuf in_buf;       /* stdin's bytes not yet a whole line */
    bool in_eof;              /* stdin ended (or the client left) */
    bool skipping;            /* the rest of an over-long line is dropped */
};

static volatile sig_atomic_t stop_asked;     /* the parent: end */
static volatile sig_atomic_t *child_cancel; /* a child: the app's cancel_all */

static void on_stop(int sig)
{
    (void)sig;
    stop_asked = 1;
}

static void on_child_stop(int sig)
{
    (void)sig;
    if (child_cancel)
        *child_cancel = 1;
}

/* text as one line on fd: a newline inside (JSON's white space, never in a
 * string, which escapes it) becomes a blank. */
static int put_line(int fd, const char *text, size_t len)
{
    struct dbuf b;
    dbuf_init(&b, len + 1);
    int rc = dbuf_append(&b, text, len);
    for (size_t i = 0; rc == 0 && i < b.len; i++)
        if (b.data[i] == '\n' || b.data[i] == '\r')
            b.data[i] = ' ';
    if (rc == 0)
        rc = dbuf_append(&b, "\n", 1);
    if (rc == 0)
        rc = util_write_all(fd, b.data, b.len);
    dbuf_free(&b);
    return rc;
}

static int to_stdout(void *ctx, const char *text, size_t len)
{
    struct stdio *st = ctx;
    int rc = put_line(st->out, text, len);
    if (rc < 0)
        st->in_eof = true; /* the client stopped reading: the end */
    return rc;
}

static int to_pipe(void *ctx, const char *text, size_t len)
{
    return put_line(*(int *)ctx, text, len);
}

/* The parent closed our pipe: its client cancelled (2026-07-28) or left. */
static bool pipe_gone(void *ctx)
{
    struct pollfd p = {*(int *)ctx, 0, 0};
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLERR | POLLHUP));
}

/* One message through the door (method POST, or DELETE to end the
 * session), its answers to message(ctx). */
static void serve(struct stdio *st, const char *method, const char *body, size_t len,
                  int (*message)(void *ctx, const char *text, size_t len), bool (*gone)(void *ctx), void *ctx)
{
    char rm[32], cl[48], sid[WS_ID_MAX + 32];
    char uri[] = "REQUEST_URI=/mcp", ct[] = "CONTENT_TYPE=application/json",
         accept[] = "HTTP_ACCEPT=application/json, text/event-stream";
    snprintf(rm, sizeof rm, "REQUEST_METHOD=%s", method);
    snprintf(cl, sizeof cl, "CONTENT_LENGTH=%zu", len);
    snprintf(sid, sizeof sid, "HTTP_MCP_SESSION_ID=%s", st->sid);
    char *env[] = {rm, uri, ct, cl, accept, st->sid[0] ? sid : NULL, NULL};
    struct http_msg m;
    http_io_msg(&m, env, body, len, MCP_STDIO_MESSAGE_MAX, message, gone, ctx);
    struct http_req req;
    struct http_resp resp;
    http_req_init(&req, &m.io);
    http_resp_init(&resp, &m.io);
    log_set_id(req.id);
    if (!strcmp(method, "POST"))
        mcp__post(st->app, &req, &resp, true);
    else
        mcp_handle(st->app, &req, &resp);
    discard(http_msg_end(&m)); /* a client that left needs nothing more */
    /* initialize's answer names the session the next messages belong to. */
    const char *h = resp.headers.data ? strstr(resp.headers.data, "Mcp-Session-Id: ") : NULL;
    if (h && !st->sid[0]) {
        h += strlen("Mcp-Session-Id: ");
        size_t n = strcspn(h, "\r\n");
        if (n <= WS_ID_MAX) {
            memcpy(st->sid, h, n);
            st->sid[n] = '\0';
        }
    }
    http_resp_free(&resp);
    http_msg_free(&m);
}

/* ------------------------------------------------------------- children */

static struct child *free_slot(struct stdio *st)
{
    for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++)
        if (!st->c[i].pid)
            return &st->c[i];
    return NULL;
}

/* A request served by a child; its answers come down a pipe. */
static void spawn(struct stdio *st, struct child *c, const char *body, size_t len, json_object *id, bool is_2026)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        log_msg(LOG_LVL_ERROR, "stdio: a pipe for a request: %s", strerror(errno));
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        log_msg(LOG_LVL_ERROR, "stdio: fork for a request: %s", strerror(errno));
        close(p[0]);
        close(p[1]);
        return;
    }
    if (pid == 0) {
        /* Nothing of the protocol's streams but our pipe: stdout is the
         * parent's alone. */
        close(p[0]);
        for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++)
            if (st->c[i].fd >= 0 && st->c[i].pid)
                close(st->c[i].fd);
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
        }
        struct sigaction sa = {.sa_handler = on_child_stop};
        sigemptyset(&sa.sa_mask);
        child_cancel = st->app->cancel_all;
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        serve(st, "POST", body, len, to_pipe, pipe_gone, &p[1]);
        _exit(0);
    }
    close(p[1]);
    if (util_set_nonblock(p[0]) < 0)
        log_msg(LOG_LVL_WARN, "stdio: a request's pipe stays blocking");
    *c = (struct child){.pid = pid, .fd = p[0], .is_2026 = is_2026};
    dbuf_init(&c->line, MCP_STDIO_MESSAGE_MAX + 1);
    if (id) {
        mcp__id_key(id, c->key);
        c->id = strdup(mcp__to_json(id, &(size_t){0}));
    }
}

/* What a child sent: each whole line out on stdout. */
static void child_read(struct stdio *st, struct child *c)
{
    char buf[MCP_STDIO_READ];
    for (;;) {
        ssize_t n = read(c->fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n <= 0)
            break;
        for (ssize_t i = 0; i < n;) {
            char *nl = memchr(buf + i, '\n', (size_t)(n - i));
            size_t take = nl ? (size_t)(nl - (buf + i)) : (size_t)(n - i);
            if (dbuf_append(&c->line, buf + i, take) < 0)
                c->line.len = 0; /* past MCP_STDIO_MESSAGE_MAX: dropped (the child's writes fail first) */
            if (nl) {
                discard(to_stdout(st, c->line.data, c->line.len));
                c->line.len = 0;
            }
            i += (ssize_t)take + (nl ? 1 : 0);
        }
    }
    close(c->fd);
    c->fd = -1;
}

/* Children that ended: their slots free once their pipes are done too. */
static void reap(struct stdio *st)
{
    for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++) {
        struct child *c = &st->c[i];
        if (c->pid > 0 && waitpid(c->pid, NULL, WNOHANG) == c->pid)
            c->pid = -1;
        if (c->pid < 0 && c->fd < 0) {
            dbuf_free(&c->line);
            free(c->id);
            *c = (struct child){.fd = -1};
        }
    }
}

static size_t live(const struct stdio *st)
{
    size_t n = 0;
    for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++)
        n += st->c[i].pid != 0;
    return n;
}

/* notifications/cancelled of a 2026-07-28 call: its stream (our pipe to
 * its child) closes, which is that revision's cancel. */
static void cancel_2026(struct stdio *st, json_object *params)
{
    json_object *rid = NULL;
    char key[65];
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "requestId", &rid) ||
        !mcp__rpc_id_ok(rid))
        return;
    mcp__id_key(rid, key);
    for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++) {
        struct child *c = &st->c[i];
        if (c->pid && c->fd >= 0 && c->is_2026 && !strcmp(c->key, key)) {
            close(c->fd);
            c->fd = -1;
        }
    }
}

/* ------------------------------------------------------------- messages */

static bool is_2026(json_object *msg)
{
    char *env[] = {NULL};
    struct http_io io = {.envp = env};
    struct http_req req;
    http_req_init(&req, &io);
    return mcp__is_2026(&req, msg);
}

/* One line of stdin: a request (other than initialize) to a child; the
 * rest served here. */
static void message(struct stdio *st, const char *line, size_t len)
{
    json_object *msg = NULL, *id = NULL, *params = NULL;
    const char *method = NULL;
    if (http_parse_json(line, len, MCP_JSON_DEPTH, &msg) == 0 && json_object_is_type(msg, json_type_object)) {
        method = mcp__json_string(msg, "method");
        json_object_object_get_ex(msg, "id", &id);
        json_object_object_get_ex(msg, "params", &params);
    }
    bool request = method && id && strcmp(method, "initialize");
    bool batch = json_object_is_type(msg, json_type_array);
    if (method && !id && !strcmp(method, "notifications/cancelled"))
        cancel_2026(st, params); /* a legacy one: the door's, below */
    struct child *c = (request || batch) ? free_slot(st) : NULL;
    if (c)
        spawn(st, c, line, len, id, msg && is_2026(msg));
    else
        serve(st, "POST", line, len, to_stdout, NULL, st);
    json_object_put(msg);
}

/* stdin's whole lines to message(), while a child can take a request
 * (the rest wait in in_buf); one longer than request_bytes is answered as
 * the door answers a body that large, and dropped. */
static void lines(struct stdio *st)
{
    size_t start = 0;
    struct dbuf *b = &st->in_buf;
    for (size_t i = 0; i < b->len && free_slot(st); i++) {
        if (b->data[i] != '\n')
            continue;
        size_t n = i - start;
        if (n && b->data[start + n - 1] == '\r')
            n--;
        if (!st->skipping && n)
            message(st, b->data + start, n);
        st->skipping = false;
        start = i + 1;
    }
    memmove(b->data, b->data + start, b->len - start);
    b->len -= start;
    if (b->len > st->app->cfg->request_bytes && !memchr(b->data, '\n', b->len) && !st->skipping) {
        char why[120], hs[32];
        util_human_size(st->app->cfg->request_bytes, hs, sizeof hs);
        snprintf(why, sizeof why, "Content Too Large: the message is larger than request_bytes (%s)", hs);
        json_object *e = mcp__rpc_error(NULL, -32000, why, NULL);
        size_t n;
        const char *s = mcp__to_json(e, &n);
        discard(to_stdout(st, s, n));
        json_object_put(e);
        st->skipping = true;
    }
    if (st->skipping && !memchr(b->data, '\n', b->len))
        b->len = 0;
}

static void read_stdin(struct stdio *st)
{
    char buf[MCP_STDIO_READ];
    ssize_t n = read(st->in, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        st->in_eof = true;
        if (st->in_buf.len && !st->skipping)
            message(st, st->in_buf.data, st->in_buf.len); /* a last message without its newline */
        st->in_buf.len = 0;
        return;
    }
    if (dbuf_append(&st->in_buf, buf, (size_t)n) < 0) {
        st->in_eof = true;
        return;
    }
    lines(st);
}

/* ------------------------------------------------------------ the loop */

/* The client is done: its calls are cancelled, as the client's own
 * notifications/cancelled would (a legacy call's) or a closed stream
 * (2026-07-28's); once they have ended, the session ends too (main). */
static void end(struct stdio *st)
{
    for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++) {
        struct child *c = &st->c[i];
        if (!c->pid)
            continue;
        if (c->is_2026 && c->fd >= 0) {
            close(c->fd);
            c->fd = -1;
        } else if (!c->is_2026 && c->id && st->sid[0]) {
            cleanup_free char *note = NULL;
            if (asprintf(&note, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                                "\"params\":{\"requestId\":%s,\"reason\":\"the client is gone\"}}", c->id) >= 0)
                serve(st, "POST", note, strlen(note), to_stdout, NULL, st);
        }
    }
}

static void loop(struct stdio *st)
{
    int64_t drain_until = -1;
    for (;;) {
        reap(st);
        if (drain_until < 0 && st->in_buf.len && free_slot(st))
            lines(st); /* lines that waited for a child */
        if ((st->in_eof || stop_asked) && drain_until < 0) {
            end(st);
            drain_until = util_now_ms() + st->app->cfg->exec.limits.kill_grace_ms + MCP_STDIO_DRAIN_MS;
        }
        if (drain_until >= 0 && !live(st))
            return;
        if (drain_until >= 0 && util_now_ms() >= drain_until) {
            for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++)
                if (st->c[i].pid > 0)
                    kill(st->c[i].pid, SIGKILL);
            drain_until = util_now_ms() + MCP_STDIO_DRAIN_MS; /* for the reaping */
        }
        struct pollfd p[MCP_STDIO_CHILDREN_MAX + 1];
        struct child *who[MCP_STDIO_CHILDREN_MAX + 1];
        size_t n = 0;
        if (drain_until < 0 && free_slot(st)) {
            p[n] = (struct pollfd){st->in, POLLIN, 0};
            who[n++] = NULL;
        }
        for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++)
            if (st->c[i].pid && st->c[i].fd >= 0) {
                p[n] = (struct pollfd){st->c[i].fd, POLLIN, 0};
                who[n++] = &st->c[i];
            }
        int r = poll(p, n, MCP_STDIO_TICK_MS);
        if (r < 0 && errno != EINTR) {
            log_msg(LOG_LVL_ERROR, "stdio: poll: %s", strerror(errno));
            st->in_eof = true;
        }
        for (size_t i = 0; r > 0 && i < n; i++) {
            if (!p[i].revents)
                continue;
            if (who[i])
                child_read(st, who[i]);
            else
                read_stdin(st);
        }
    }
}

int mcp_stdio_serve(const struct cfg *cfg, int in_fd, int out_fd)
{
    static volatile sig_atomic_t cancel_all;
    struct app app = {.cfg = cfg, .mode = "stdio", .cancel_all = &cancel_all};
    static struct stdio st; /* large: the children's slots */
    st = (struct stdio){.app = &app, .in = in_fd, .out = out_fd};
    for (size_t i = 0; i < MCP_STDIO_CHILDREN_MAX; i++)
        st.c[i].fd = -1;
    dbuf_init(&st.in_buf, (size_t)cfg->request_bytes + MCP_STDIO_READ);

    struct sigaction sa = {.sa_handler = on_stop};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGCHLD, SIG_DFL);

    discard(exec_mark_orphans(&cfg->exec)); /* runs of one that was killed */
    struct exec_warm_pool pool = {.pid = -1, .pidfd = -1};
    if (cfg->exec.warm.on && !exec_warm_serving(cfg->state_dir) && exec_warm_serve(&cfg->exec, &pool) < 0)
        log_msg(LOG_LVL_WARN, "stdio: no warm pool: runs start cold");
    log_msg(LOG_LVL_INFO, "serving MCP over stdio (state %s, warm pool: %s)", cfg->state_dir,
            pool.pid > 0 ? "its own" : exec_warm_serving(cfg->state_dir) ? "a server's" : "none");
    loop(&st);
    if (st.sid[0]) /* the session's calls are over: it goes, as DELETE ends it */
        serve(&st, "DELETE", "", 0, to_stdout, NULL, &st);
    exec_warm_stop(&pool);
    dbuf_free(&st.in_buf);
    discard(mcp_reap(cfg, false));
    log_msg(LOG_LVL_INFO, "stdio: the client is gone: stopped");
    return 0;
}
