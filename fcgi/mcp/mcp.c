/* mcp.c: JSON-RPC 2.0 and the MCP lifecycle over Streamable HTTP.
 *
 * A POST goes: Content-Type and Accept -> MCP-Protocol-Version -> the body
 * (request_bytes, MCP_JSON_DEPTH) -> one message or a 2025-03-26 batch ->
 * initialize makes a session; everything else needs a live one (400
 * without the header, 404 for one that is unknown or ended) -> notifications
 * and responses get 202 -> requests are dispatched. tools/call answers over
 * SSE when the client accepts it (progress and log notifications, then the
 * result, then the stream ends); every other answer is one JSON body.
 *
 * Concurrency: several requests of one session arrive at once on different
 * workers (a cancel while its call runs, parallel tools/list). Nothing is
 * kept in memory: the session's files are the only shared state, and each
 * is written whole (rename) or is a marker whose existence is the news. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---------------------------------------------------------------- JSON-RPC */

enum msg_kind { MSG_INVALID, MSG_REQUEST, MSG_NOTIFICATION, MSG_RESPONSE };

/* What a message is; *id is its id when it has a usable one (borrowed). */
static enum msg_kind classify(json_object *m, json_object **id, const char **method, json_object **params)
{
    json_object *v = NULL, *mv = NULL;
    *id = NULL;
    *method = NULL;
    *params = NULL;
    if (!json_object_is_type(m, json_type_object))
        return MSG_INVALID;
    bool has_id = json_object_object_get_ex(m, "id", &v);
    if (has_id && mcp__rpc_id_ok(v))
        *id = v;
    if (!json_object_object_get_ex(m, "jsonrpc", &mv) || !json_object_is_type(mv, json_type_string) ||
        strcmp(json_object_get_string(mv), "2.0"))
        return MSG_INVALID;
    if (json_object_object_get_ex(m, "method", &mv)) {
        if (!json_object_is_type(mv, json_type_string))
            return MSG_INVALID;
        *method = json_object_get_string(mv);
        if (json_object_object_get_ex(m, "params", params) && *params &&
            !json_object_is_type(*params, json_type_object) && !json_object_is_type(*params, json_type_array))
            return MSG_INVALID;
        if (!has_id)
            return MSG_NOTIFICATION;
        return *id ? MSG_REQUEST : MSG_INVALID;
    }
    bool res = json_object_object_get_ex(m, "result", NULL), err = json_object_object_get_ex(m, "error", NULL);
    if (*id && res != err)
        return MSG_RESPONSE;
    return MSG_INVALID;
}

/* ---------------------------------------------------------------- dispatch */

struct post {
    const struct app *app;
    struct http_req *req;
    struct http_resp *resp;
    struct mcp_session s;
    bool want_sse;   /* the client accepts text/event-stream */
};

static json_object *initialize_result(const char *version)
{
    json_object *r = json_object_new_object();
    json_object *caps = json_object_new_object();
    json_object *tools = json_object_new_object();
    json_object_object_add(r, "protocolVersion", json_object_new_string(version));
    json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(caps, "logging", json_object_new_object());
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", mcp__server_info());
    json_object_object_add(r, "instructions", json_object_new_string(tools_instructions()));
    return r;
}

static void initialize(struct post *p, json_object *id, json_object *params)
{
    const struct cfg *cfg = p->app->cfg;
    json_object *v = NULL, *client = NULL;
    const char *version = MCP_LATEST;
    if (params && !json_object_is_type(params, json_type_object)) {
        json_object *e = mcp__rpc_error(id, -32602, "Invalid params: initialize takes an object", NULL);
        mcp__send(p->resp, 200, e);
        json_object_put(e);
        return;
    }
    /* The client's revision when we speak it, else our newest: the client
     * decides whether it can go on (lifecycle.mdx). */
    if (params && json_object_object_get_ex(params, "protocolVersion", &v) &&
        json_object_is_type(v, json_type_string) && mcp_version_supported(json_object_get_string(v)))
        version = json_object_get_string(v);
    if (params)
        json_object_object_get_ex(params, "clientInfo", &client);
    if (mcp__count_sessions(cfg) >= (int)cfg->max_sessions) {
        discard(mcp_reap(cfg, true));
        if (mcp__count_sessions(cfg) >= (int)cfg->max_sessions) {
            mcp__refuse(p->resp, 503, -32000, "Service unavailable: too many open sessions (max_sessions)");
            return;
        }
    }
    struct mcp_session s;
    int rc = mcp__session_create(cfg, version, json_object_is_type(client, json_type_object) ? client : NULL, &s);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "creating a session: %s", strerror(-rc));
        mcp__session_free(&s);
        json_object *e = mcp__rpc_error(id, -32603, "Internal error: cannot create a session", NULL);
        mcp__send(p->resp, 500, e);
        json_object_put(e);
        return;
    }
    log_msg(LOG_LVL_INFO, "session %s: initialize, revision %s", s.id, version);
    discard(http_add_header(p->resp, "Mcp-Session-Id", "%s", s.id));
    json_object *r = mcp__rpc_result(id, initialize_result(version));
    mcp__send(p->resp, 200, r);
    json_object_put(r);
    mcp__session_free(&s);
    discard(mcp_reap(cfg, false));
}

static json_object *set_level(struct post *p, json_object *id, json_object *params)
{
    json_object *v;
    enum tools_level l;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "level", &v) ||
        !json_object_is_type(v, json_type_string) || mcp__level_parse(json_object_get_string(v), &l) < 0)
        return mcp__rpc_error(id, -32602,
                         "Invalid params: level must be one of debug, info, notice, warning, error, critical, "
                         "alert, emergency",
                         NULL);
    json_object_object_add(p->s.doc, "log_level", json_object_new_string(mcp_level_name(l)));
    int rc = mcp__session_write(&p->s);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "saving the log level: %s", strerror(-rc));
        return mcp__rpc_error(id, -32603, "Internal error: cannot save the log level", NULL);
    }
    p->s.level = l;
    return mcp__rpc_result(id, json_object_new_object());
}

/* tools/call. Returns the response, or NULL when nothing must be sent
 * (the client cancelled the call). In SSE mode the stream is open. */
static json_object *call_tool(struct post *p, json_object *id, json_object *params, bool sse)
{
    json_object *name = NULL, *args = NULL, *meta = NULL, *token = NULL;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "name", &name) ||
        !json_object_is_type(name, json_type_string))
        return mcp__rpc_error(id, -32602, "Invalid params: tools/call needs the tool's name", NULL);
    if (json_object_object_get_ex(params, "arguments", &args) && args &&
        !json_object_is_type(args, json_type_object))
        return mcp__rpc_error(id, -32602, "Invalid params: arguments must be an object", NULL);
    if (json_object_object_get_ex(params, "_meta", &meta) && json_object_is_type(meta, json_type_object) &&
        json_object_object_get_ex(meta, "progressToken", &token) && !mcp__rpc_id_ok(token))
        token = NULL;

    struct mcp_call c = {
        .app = p->app,
        .resp = p->resp,
        .session_dir = p->s.dir,
        .version = p->s.version,
        .log_level = p->s.level,
        .sse = sse,
        .progress_token = token,
        .last_flush_ms = util_now_ms(),
    };
    mcp__id_key(id, c.key);
    http_base_url(p->req, p->app->cfg->public_url, c.base_url, sizeof c.base_url);
    struct tools_ctx t;
    mcp__call_tools_ctx(&c, &t);

    json_object *result = NULL;
    enum tools_outcome out = mcp__call_tool(&c, &t, json_object_get_string(name), args, &result);
    switch (out) {
    case TOOLS_CANCELLED:
        json_object_put(result);
        log_msg(LOG_LVL_INFO, "tools/call %s cancelled by the client: no response", json_object_get_string(name));
        return NULL;
    case TOOLS_UNKNOWN: {
        char msg[300];
        snprintf(msg, sizeof msg, "Invalid params: unknown tool '%.200s' (tools/list names them)",
                 json_object_get_string(name));
        return mcp__rpc_error(id, -32602, msg, NULL);
    }
    case TOOLS_FAILED:
        /* The service failed, not the script: -32603 with the run's result
         * (status sandbox_error, error says why) as data. */
        return mcp__rpc_error(id, -32603, "Internal error: the sandbox failed (see data.error)", result);
    case TOOLS_RESULT:
        break;
    }
    return mcp__rpc_result(id, result);
}

/* One request (not initialize). Returns the response, NULL for none. */
static json_object *dispatch(struct post *p, json_object *id, const char *method, json_object *params, bool sse)
{
    if (!strcmp(method, "ping"))
        return mcp__rpc_result(id, json_object_new_object());
    if (!strcmp(method, "tools/list")) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "tools", tools_list(p->app->cfg, p->s.version));
        return mcp__rpc_result(id, r);
    }
    if (!strcmp(method, "tools/call"))
        return call_tool(p, id, params, sse);
    if (!strcmp(method, "logging/setLevel"))
        return set_level(p, id, params);
    if (!strcmp(method, "initialize"))
        return mcp__rpc_error(id, -32600, "Invalid Request: the session is already initialized", NULL);
    char msg[300];
    snprintf(msg, sizeof msg, "Method not found: %.200s", method);
    return mcp__rpc_error(id, -32601, msg, NULL);
}

static void notification(struct post *p, const char *method, json_object *params)
{
    if (strcmp(method, "notifications/cancelled"))
        return; /* initialized, progress, roots/list_changed, ...: nothing to do */
    json_object *rid = NULL;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "requestId", &rid) ||
        !mcp__rpc_id_ok(rid))
        return; /* malformed: MAY be ignored (cancellation.mdx) */
    char key[65], path[4096];
    mcp__id_key(rid, key);
    /* The marker only for a call in flight: a late cancel leaves nothing. */
    snprintf(path, sizeof path, "%s/calls", p->s.dir);
    cleanup_fd int cfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (cfd < 0 || fstatat(cfd, key, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    snprintf(path, sizeof path, "%s/cancel/%s", p->s.dir, key);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    mcp__cancel_run_of(p->app, cfd, key);
}

/* ----------------------------------------------------------------- the POST */

static bool need_session(struct post *p)
{
    const char *sid = http_header(p->req, "Mcp-Session-Id");
    if (!sid || !*sid) {
        mcp__refuse(p->resp, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
        return false;
    }
    int rc = mcp__session_load(p->app->cfg, sid, &p->s);
    if (rc == -ENOENT) {
        mcp__refuse(p->resp, 404, -32001, "Session not found");
        return false;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "loading a session: %s", strerror(-rc));
        mcp__refuse(p->resp, 500, -32603, "Internal error: cannot read the session");
        return false;
    }
    return true;
}

static void batch(struct post *p, json_object *arr)
{
    size_t n = json_object_array_length(arr);
    if (n == 0) {
        mcp__refuse(p->resp, 400, -32600, "Invalid Request: empty batch");
        return;
    }
    if (n > MCP_BATCH_MAX) {
        mcp__refuse(p->resp, 413, -32600, "Invalid Request: more than 64 messages in a batch");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(arr, i), *v;
        if (json_object_is_type(m, json_type_object) && json_object_object_get_ex(m, "method", &v) &&
            json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), "initialize")) {
            mcp__refuse(p->resp, 400, -32600, "Invalid Request: initialize must not be part of a batch");
            return;
        }
    }
    if (!need_session(p))
        return;
    if (strcmp(p->s.version, "2025-03-26")) {
        mcp__refuse(p->resp, 400, -32600, "Invalid Request: JSON-RPC batches are not part of this protocol revision");
        return;
    }
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(arr, i), *id, *params;
        const char *method;
        switch (classify(m, &id, &method, &params)) {
        case MSG_INVALID:
            json_object_array_add(out, mcp__rpc_error(id, -32600, "Invalid Request", NULL));
            break;
        case MSG_NOTIFICATION:
            notification(p, method, params);
            break;
        case MSG_RESPONSE:
            break; /* we send no requests, so no response is awaited */
        case MSG_REQUEST: {
            json_object *r = dispatch(p, id, method, params, false);
            if (r)
                json_object_array_add(out, r);
            break;
        }
        }
    }
    if (json_object_array_length(out) == 0)
        discard(http_send(p->resp, 202, NULL, "", 0));
    else
        mcp__send(p->resp, 200, out);
    json_object_put(out);
}

static void post(struct post *p)
{
    const struct cfg *cfg = p->app->cfg;
    const char *ct = http_header(p->req, "Content-Type");
    if (!ct || strncasecmp(ct, "application/json", 16) || (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
        mcp__refuse(p->resp, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
        return;
    }
    /* Accept: we answer JSON, and tools/call over SSE when the client
     * accepts it. A client that accepts neither gets 406. */
    const char *accept = http_header(p->req, "Accept");
    p->want_sse = accept && http_accepts(accept, "text/event-stream");
    if (accept && *accept && !p->want_sse && !http_accepts(accept, "application/json")) {
        mcp__refuse(p->resp, 406, -32000, "Not Acceptable: Accept must list application/json or text/event-stream");
        return;
    }
    json_object *msg = NULL;
    int rc = http_read_json(p->req, (size_t)cfg->request_bytes, MCP_JSON_DEPTH, &msg);
    if (rc == -E2BIG) {
        mcp__refuse(p->resp, 413, -32000, "Content Too Large: the request body is larger than request_bytes");
        return;
    }
    if (rc == -EIO) {
        mcp__refuse(p->resp, 400, -32700, "Parse error: cannot read the request body");
        return;
    }
    if (rc < 0) {
        mcp__refuse(p->resp, 400, -32700, "Parse error: the body is not valid JSON (or nests too deep)");
        return;
    }
    /* Both eras on one endpoint: a body or header that names a revision
     * after the legacy ones is served statelessly (mcp_2026.c). */
    if (mcp__is_2026(p->req, msg)) {
        mcp__2026_post(p->app, p->req, p->resp, msg, p->want_sse);
        json_object_put(msg);
        return;
    }
    if (json_object_is_type(msg, json_type_array)) {
        batch(p, msg);
        json_object_put(msg);
        return;
    }
    json_object *id, *params;
    const char *method;
    enum msg_kind kind = classify(msg, &id, &method, &params);
    if (kind == MSG_INVALID) {
        json_object *e = mcp__rpc_error(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message", NULL);
        mcp__send(p->resp, 400, e);
        json_object_put(e);
        json_object_put(msg);
        return;
    }
    if (kind == MSG_REQUEST && !strcmp(method, "initialize")) {
        const char *sid = http_header(p->req, "Mcp-Session-Id");
        struct mcp_session old = {0};
        if (sid && *sid && mcp__session_load(cfg, sid, &old) == 0) {
            mcp__session_free(&old);
            json_object *e = mcp__rpc_error(id, -32600, "Invalid Request: this session is already initialized", NULL);
            mcp__send(p->resp, 400, e);
            json_object_put(e);
        } else {
            mcp__session_free(&old);
            initialize(p, id, params);
        }
        json_object_put(msg);
        return;
    }
    if (!need_session(p)) {
        json_object_put(msg);
        return;
    }
    discard(http_add_header(p->resp, "Mcp-Session-Id", "%s", p->s.id));
    if (kind != MSG_REQUEST) {
        if (kind == MSG_NOTIFICATION)
            notification(p, method, params);
        discard(http_send(p->resp, 202, NULL, "", 0));
        json_object_put(msg);
        return;
    }
    bool sse = p->want_sse && !strcmp(method, "tools/call");
    if (sse && http_sse_start(p->resp) < 0) {
        json_object_put(msg);
        return;
    }
    json_object *r = dispatch(p, id, method, params, sse);
    if (sse) {
        if (r) {
            size_t n;
            const char *s = mcp__to_json(r, &n);
            discard(http_sse_event(p->resp, s, n, true));
        }
    } else if (r) {
        mcp__send(p->resp, 200, r);
    } else {
        discard(http_send(p->resp, 202, NULL, "", 0)); /* cancelled: there is no response */
    }
    json_object_put(r);
    json_object_put(msg);
}

void mcp_handle(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    struct post p = {.app = app, .req = req, .resp = resp};
    if (!strcmp(req->method, "POST")) {
        post(&p);
    } else if (!strcmp(req->method, "DELETE")) {
        if (need_session(&p)) {
            int rc = mcp__session_end(app, &p.s);
            if (rc == -ENOENT)
                mcp__refuse(resp, 404, -32001, "Session not found");
            else if (rc < 0)
                mcp__refuse(resp, 500, -32603, "Internal error: cannot end the session");
            else {
                log_msg(LOG_LVL_INFO, "session %s ended by the client", p.s.id);
                discard(http_send(resp, 200, NULL, "", 0));
            }
        }
    } else {
        /* No standalone server stream: we send nothing unsolicited. */
        discard(http_add_header(resp, "Allow", "POST, DELETE"));
        mcp__refuse(resp, 405, -32000, "Method Not Allowed: this server offers no GET stream; POST requests");
    }
    mcp__session_free(&p.s);
}

