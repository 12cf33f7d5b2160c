/* mcp_2025.c: the legacy revisions 2025-03-26, 2025-06-18 and 2025-11-25:
 * JSON-RPC 2.0 and the MCP lifecycle over Streamable HTTP, with sessions.
 *
 * A POST (mcp.c has checked its transport and read its body) is one
 * message or a 2025-03-26 batch -> initialize makes a session; everything
 * else needs a live one (400 without the header, 404 for one that is
 * unknown or ended) -> notifications and responses get 202 -> requests are
 * dispatched. tools/call (mcp_2025_call.c) answers over SSE when the client
 * accepts it (progress and log notifications, then the result, then the
 * stream ends); every other answer is one JSON body. DELETE ends a session.
 *
 * Concurrency: several requests of one session arrive at once on different
 * workers (a cancel while its call runs, parallel tools/list). Nothing is
 * kept in memory: the session's files are the only shared state, and each
 * is written whole (rename) or is a marker whose existence is the news. */
#include "config.h"

#include "mcp_internal.h"
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* -------------------------------------------------------------- messages */

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

/* -------------------------------------------------------------- requests */

/* The prompts capability: a list that never changes while we run. */
static json_object *prompts_capability(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "listChanged", json_object_new_boolean(false));
    return o;
}

static json_object *initialize_result(const char *version)
{
    json_object *r = json_object_new_object();
    json_object *caps = json_object_new_object();
    json_object *tools = json_object_new_object();
    json_object_object_add(r, "protocolVersion", json_object_new_string(version));
    json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(caps, "logging", json_object_new_object());
    json_object_object_add(caps, "prompts", prompts_capability());
    json_object *res = json_object_new_object();
    json_object_object_add(res, "subscribe", json_object_new_boolean(true));
    json_object_object_add(res, "listChanged", json_object_new_boolean(false));
    json_object_object_add(caps, "resources", res);
    json_object_object_add(caps, "completions", json_object_new_object());
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", mcp__server_info());
    json_object_object_add(r, "instructions", json_object_new_string(tools_instructions()));
    return r;
}

static void initialize(struct mcp_2025_req *p, json_object *id, json_object *params)
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
    struct mcp_session s;
    json_object *ci = json_object_is_type(client, json_type_object) ? client : NULL;
    int rc = mcp__session_create(cfg, version, ci, &s);
    if (rc == -EDQUOT) { /* idle ones may be past session_ttl: reap, then once more */
        mcp__session_free(&s);
        discard(mcp_reap(cfg, true));
        rc = mcp__session_create(cfg, version, ci, &s);
    }
    if (rc == -EDQUOT) {
        mcp__session_free(&s);
        metrics_refused(cfg, METRICS_REFUSED_CAPS);
        char msg[120];
        snprintf(msg, sizeof msg, "Service unavailable: too many open sessions (max_sessions = %llu)",
                 (unsigned long long)cfg->max_sessions);
        mcp__refuse(p->resp, 503, -32000, msg);
        return;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "creating a session: %s", strerror(-rc));
        mcp__session_free(&s);
        json_object *e = mcp__rpc_error(id, -32603, "Internal error: cannot create a session", NULL);
        mcp__send(p->resp, 500, e);
        json_object_put(e);
        return;
    }
    /* What the client can answer, of what a server may ask (elicitation/create:
     * a script's input() becomes a question; 2025-06-18 on, the capability
     * came then), kept as names alone: client_caps {"elicitation": {}, ...}. */
    static const char *const askable[] = {"elicitation", "sampling", "roots"};
    json_object *caps = NULL, *cv = NULL, *kept = json_object_new_object();
    for (size_t i = 0; params && strcmp(version, "2025-03-26") && i < ARRAY_SIZE(askable); i++)
        if (json_object_object_get_ex(params, "capabilities", &caps) && json_object_is_type(caps, json_type_object) &&
            json_object_object_get_ex(caps, askable[i], &cv) && json_object_is_type(cv, json_type_object))
            json_object_object_add(kept, askable[i], json_object_new_object());
    json_object_object_add(s.doc, "client_caps", kept);
    if ((rc = mcp__session_write(&s)) < 0)
        log_msg(LOG_LVL_WARN, "session %s: saving its client's capabilities: %s", s.id, strerror(-rc));
    log_msg(LOG_LVL_INFO, "session %s: initialize, revision %s", s.id, version);
    discard(http_add_header(p->resp, "Mcp-Session-Id", "%s", s.id));
    json_object *r = mcp__rpc_result(id, initialize_result(version));
    mcp__send(p->resp, 200, r);
    json_object_put(r);
    mcp__session_free(&s);
    discard(mcp_reap(cfg, false));
}

static json_object *set_level(struct mcp_2025_req *p, json_object *id, json_object *params)
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

/* A result of mcp_res.c, or its error, as the response to id. */
static json_object *res_answer(json_object *id, json_object *r, struct mcp_res_err *e)
{
    return r ? mcp__rpc_result(id, r) : mcp__rpc_error(id, e->code, e->message, e->data);
}

/* resources/... and completion/complete; NULL for another method. */
static json_object *resources(struct mcp_2025_req *p, json_object *id, const char *method, json_object *params)
{
    const struct cfg *cfg = p->app->cfg;
    struct mcp_res_err e = {0};
    bool is_file;
    if (!strcmp(method, "resources/list"))
        return mcp__rpc_result(id, mcp__res_list(cfg, &p->s));
    if (!strcmp(method, "resources/templates/list"))
        return mcp__rpc_result(id, mcp__res_templates(cfg));
    if (!strcmp(method, "resources/read"))
        return res_answer(id, mcp__res_read(cfg, &p->s, params, &e, &is_file), &e);
    if (!strcmp(method, "completion/complete"))
        return res_answer(id, mcp__complete(cfg, &p->s, params, &e), &e);
    bool on = !strcmp(method, "resources/subscribe");
    if (on || !strcmp(method, "resources/unsubscribe"))
        return res_answer(id, mcp__res_subscribe(&p->s, params, on, &e) < 0 ? NULL : json_object_new_object(), &e);
    return NULL;
}

/* One request (not initialize). Returns the response, NULL for none. */
static json_object *dispatch(struct mcp_2025_req *p, json_object *id, const char *method, json_object *params,
                             bool sse)
{
    if (!strcmp(method, "ping"))
        return mcp__rpc_result(id, json_object_new_object());
    if (!strcmp(method, "tools/list")) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "tools", tools_list(p->app->cfg, p->s.version));
        return mcp__rpc_result(id, r);
    }
    if (!strcmp(method, "tools/call"))
        return mcp__2025_call(p, id, params, sse);
    if (!strcmp(method, "logging/setLevel"))
        return set_level(p, id, params);
    if (!strcmp(method, "prompts/list") || !strcmp(method, "prompts/get")) {
        json_object *r = NULL;
        char msg[400];
        int code = mcp__prompts(p->app->cfg, p->s.version, method, params, NULL, &r, msg, sizeof msg);
        return code ? mcp__rpc_error(id, code, msg, NULL) : mcp__rpc_result(id, r);
    }
    if (!strncmp(method, "resources/", 10) || !strcmp(method, "completion/complete")) {
        json_object *r = resources(p, id, method, params);
        if (r)
            return r;
    }
    if (!strcmp(method, "initialize"))
        return mcp__rpc_error(id, -32600, "Invalid Request: the session is already initialized", NULL);
    char msg[300];
    snprintf(msg, sizeof msg, "Method not found: %.200s", method);
    return mcp__rpc_error(id, -32601, msg, NULL);
}

static void notification(struct mcp_2025_req *p, const char *method, json_object *params)
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

/* ------------------------------------------------------------------ POST */

static bool need_session(struct mcp_2025_req *p)
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

static void batch(struct mcp_2025_req *p, json_object *arr)
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
            mcp__ask_response(p->app, p->s.dir, id, m); /* a script's question answered */
            break;
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

/* initialize, which needs no session: one already live under the
 * request's Mcp-Session-Id is refused. */
static void initialize_once(struct mcp_2025_req *p, json_object *id, json_object *params)
{
    const char *sid = http_header(p->req, "Mcp-Session-Id");
    struct mcp_session old = {0};
    if (sid && *sid && mcp__session_load(p->app->cfg, sid, &old) == 0) {
        mcp__session_free(&old);
        json_object *e = mcp__rpc_error(id, -32600, "Invalid Request: this session is already initialized", NULL);
        mcp__send(p->resp, 400, e);
        json_object_put(e);
    } else {
        mcp__session_free(&old);
        initialize(p, id, params);
    }
}

/* A request of the loaded session, dispatched: tools/call as server-sent
 * events when the client accepts them, the rest as one JSON body. */
static void request(struct mcp_2025_req *p, json_object *id, const char *method, json_object *params)
{
    bool sse = p->want_sse && !strcmp(method, "tools/call");
    if (sse)
        stream_open_call(p->req, p->resp); /* in serve: the stream process writes it from here on */
    if (sse && http_sse_start(p->resp) < 0)
        return;
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
}

/* One message (not a batch): what it is, its session, then its work. */
static void message(struct mcp_2025_req *p, json_object *msg)
{
    json_object *id, *params;
    const char *method;
    enum msg_kind kind = classify(msg, &id, &method, &params);
    if (kind == MSG_INVALID) {
        json_object *e = mcp__rpc_error(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message", NULL);
        mcp__send(p->resp, 400, e);
        json_object_put(e);
        return;
    }
    if (kind == MSG_REQUEST && !strcmp(method, "initialize")) {
        initialize_once(p, id, params);
        return;
    }
    if (!need_session(p))
        return;
    discard(http_add_header(p->resp, "Mcp-Session-Id", "%s", p->s.id));
    if (kind != MSG_REQUEST) {
        if (kind == MSG_NOTIFICATION)
            notification(p, method, params);
        else
            mcp__ask_response(p->app, p->s.dir, id, msg);
        discard(http_send(p->resp, 202, NULL, "", 0));
        return;
    }
    request(p, id, method, params);
}

void mcp__2025_post(const struct app *app, struct http_req *req, struct http_resp *resp, json_object *msg,
                    bool want_sse)
{
    struct mcp_2025_req p = {.app = app, .req = req, .resp = resp, .want_sse = want_sse};
    if (json_object_is_type(msg, json_type_array))
        batch(&p, msg);
    else
        message(&p, msg);
    mcp__session_free(&p.s);
}

void mcp__2025_delete(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    struct mcp_2025_req p = {.app = app, .req = req, .resp = resp};
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
    mcp__session_free(&p.s);
}
