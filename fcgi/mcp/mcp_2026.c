/* mcp_2026.c: the stateless revision 2026-07-28 beside the legacy ones on
 * the same endpoint. A request carries its revision, capabilities and log
 * level in params._meta; the HTTP headers mirror the body (MCP-Protocol-
 * Version, Mcp-Method, Mcp-Name, Mcp-Param-Workspace) and must match it, so
 * that a proxy may route on them without reading the body. There is no
 * session: state that spans calls is a workspace, an explicit handle that
 * run_code returns and the workspace tools take. Closing a request's
 * stream cancels its run. tools/call is in mcp_2026_call.c, tasks (the
 * io.modelcontextprotocol/tasks extension) in mcp_task.c, and how a
 * request is answered in mcp_2026_answer.c.
 *
 * Checked in this order, each failure a JSON-RPC error with the request's
 * id: a JSON-RPC request (notifications get 202) -> Mcp-Method equal to the
 * method (-32020) -> _meta with the revision
 * and the client's capabilities (-32602) -> MCP-Protocol-Version present and
 * equal to it (-32020) -> a revision we speak (-32022, listing them) ->
 * Mcp-Name and Mcp-Param-Workspace equal to the body (-32020) -> the
 * method (404 and -32601 for one we do not serve). */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define MIRRORED_HEADER_MAX 4096 /* bytes of a mirrored header we compare */

/* params._meta of a message, when it is an object (borrowed). */
static json_object *meta_of(json_object *msg)
{
    json_object *params = NULL, *meta = NULL;
    if (json_object_is_type(msg, json_type_object) && json_object_object_get_ex(msg, "params", &params) &&
        json_object_is_type(params, json_type_object) && json_object_object_get_ex(params, "_meta", &meta) &&
        json_object_is_type(meta, json_type_object))
        return meta;
    return NULL;
}

bool mcp__is_2026(const struct http_req *req, json_object *msg)
{
    const char *v = mcp__json_string(meta_of(msg), META_VERSION);
    if (v)
        return !mcp_version_supported(v);
    const char *pv = http_header(req, "MCP-Protocol-Version");
    return pv && *pv && !mcp_version_supported(pv);
}

/* ------------------------------------------------------------- headers */

static int b64_digit(int c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

/* The value a mirrored header carries: its text with the blanks around it
 * trimmed, or the bytes of "=?base64?...?=" decoded. -EINVAL for a byte a
 * header must not hold or bad Base64. out (n bytes, NUL-ended) caller frees. */
static int header_value(const char *h, char **out, size_t *n)
{
    size_t len = strlen(h);
    *out = NULL;
    if (len > MIRRORED_HEADER_MAX)
        return -EINVAL;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)h[i];
        if ((c < 0x20 && c != '\t') || c >= 0x7f)
            return -EINVAL;
    }
    while (len && (*h == ' ' || *h == '\t'))
        h++, len--;
    while (len && (h[len - 1] == ' ' || h[len - 1] == '\t'))
        len--;
    if (len >= 11 && !strncmp(h, "=?base64?", 9) && !strncmp(h + len - 2, "?=", 2)) {
        const char *p = h + 9, *end = h + len - 2;
        if ((end - p) % 4) /* padded Base64 only: a cut value is refused */
            return -EINVAL;
        cleanup_free char *buf = malloc((size_t)(end - p) + 1);
        size_t o = 0;
        unsigned acc = 0;
        int bits = 0;
        if (!buf)
            return -ENOMEM;
        for (; p < end && *p != '='; p++) {
            int d = b64_digit((unsigned char)*p);
            if (d < 0)
                return -EINVAL;
            acc = (acc << 6) | (unsigned)d;
            bits += 6;
            if (bits >= 8) {
                bits -= 8;
                buf[o++] = (char)((acc >> bits) & 0xff);
            }
        }
        if (end - p > 2)
            return -EINVAL;
        for (; p < end; p++)
            if (*p != '=')
                return -EINVAL;
        buf[o] = '\0';
        *n = o;
        *out = steal_pointer(&buf);
        return 0;
    }
    *out = strndup(h, len);
    *n = len;
    return *out ? 0 : -ENOMEM;
}

/* True when header name is present and holds exactly want; else answers
 * -32020 HeaderMismatch and returns false. want NULL: the header must be
 * absent (the body has no value for it). */
static bool header_matches(struct mcp_2026_req *m, const char *name, const char *want)
{
    const char *h = http_header(m->req, name);
    char msg[300];
    if (m->headerless || (!want && !h))
        return true;
    if (!h) {
        snprintf(msg, sizeof msg, "Header mismatch: the %s header is required", name);
        mcp__2026_error(m, 400, -32020, msg, NULL);
        return false;
    }
    cleanup_free char *v = NULL;
    size_t n = 0;
    if (header_value(h, &v, &n) < 0) {
        snprintf(msg, sizeof msg, "Header mismatch: the %s header holds characters a header must not (or bad Base64)",
                 name);
        mcp__2026_error(m, 400, -32020, msg, NULL);
        return false;
    }
    if (!want || n != strlen(want) || memcmp(v, want, n)) {
        snprintf(msg, sizeof msg, "Header mismatch: the %s header does not match the request body", name);
        mcp__2026_error(m, 400, -32020, msg, NULL);
        return false;
    }
    return true;
}

/* The body's value that Mcp-Name mirrors for method, or NULL when the
 * method has none. *applies says whether the method has one at all. */
static const char *name_source(struct mcp_2026_req *m, bool *applies)
{
    static const char *const by_name[] = {"tools/call", "prompts/get"};
    static const char *const by_task[] = {"tasks/get", "tasks/update", "tasks/cancel"};
    const char *key = NULL;
    for (size_t i = 0; i < ARRAY_SIZE(by_name); i++)
        if (!strcmp(m->method, by_name[i]))
            key = "name";
    for (size_t i = 0; i < ARRAY_SIZE(by_task); i++)
        if (!strcmp(m->method, by_task[i]))
            key = "taskId";
    if (!strcmp(m->method, "resources/read"))
        key = "uri";
    *applies = key != NULL;
    return key ? mcp__json_string(m->params, key) : NULL;
}

/* The routing headers against the body: Mcp-Method, Mcp-Name and, for a
 * tools/call, Mcp-Param-Workspace. false: the error is sent. */
static bool check_routing(struct mcp_2026_req *m)
{
    bool applies = false;
    const char *name = name_source(m, &applies);
    if (applies && !name) {
        mcp__2026_error(m, 400, -32602, "Invalid params: the request needs its name (or uri, or taskId)", NULL);
        return false;
    }
    if (applies && !header_matches(m, "Mcp-Name", name))
        return false;
    if (strcmp(m->method, "tools/call"))
        return true;
    json_object *args = NULL, *w = NULL;
    if (json_object_object_get_ex(m->params, "arguments", &args) && json_object_is_type(args, json_type_object))
        json_object_object_get_ex(args, "workspace", &w);
    if (w && json_object_is_type(w, json_type_null))
        w = NULL;
    /* A workspace that is not a string is the tool's to refuse; the header
     * then has nothing to mirror. */
    if (w && !json_object_is_type(w, json_type_string))
        return true;
    return header_matches(m, "Mcp-Param-Workspace", w ? json_object_get_string(w) : NULL);
}

/* The per-request _meta and the revision. false: the error is sent. */
static bool check_meta(struct mcp_2026_req *m)
{
    const char *pv = http_header(m->req, "MCP-Protocol-Version");
    json_object *caps = NULL;
    m->meta = meta_of(m->msg);
    const char *v = mcp__json_string(m->meta, META_VERSION);
    if (!v || !m->meta || !json_object_object_get_ex(m->meta, META_CAPS, &caps) ||
        !json_object_is_type(caps, json_type_object)) {
        mcp__2026_error(m, 400, -32602,
                        "Invalid params: _meta must carry " META_VERSION " and " META_CAPS " (an object)", NULL);
        return false;
    }
    m->caps = caps;
    if (m->headerless)
        pv = v; /* nothing mirrors the body: it says the revision alone */
    if (!pv) {
        mcp__2026_error(m, 400, -32020, "Header mismatch: the MCP-Protocol-Version header is required", NULL);
        return false;
    }
    if (strcmp(pv, v)) {
        mcp__2026_error(m, 400, -32020,
                        "Header mismatch: MCP-Protocol-Version does not match _meta's protocolVersion", NULL);
        return false;
    }
    if (strcmp(v, MCP_REVISION_2026)) {
        json_object *data = json_object_new_object();
        json_object_object_add(data, "supported", mcp__supported_versions());
        json_object_object_add(data, "requested", json_object_new_string(v));
        mcp__2026_error(m, 400, -32022, "Unsupported protocol version", data);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------ methods */

static json_object *discover_result(const struct cfg *cfg)
{
    json_object *r = json_object_new_object(), *caps = json_object_new_object();
    json_object *tools = json_object_new_object(), *ext = json_object_new_object();
    json_object_object_add(r, "supportedVersions", mcp__supported_versions());
    json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(caps, "logging", json_object_new_object());
    json_object_object_add(caps, "prompts", json_object_new_object());
    json_object_object_add(caps, "resources", json_object_new_object());
    json_object_object_add(caps, "completions", json_object_new_object());
    json_object_object_add(ext, MCP_EXT_TASKS, json_object_new_object());
    json_object_object_add(caps, "extensions", ext);
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "instructions", json_object_new_string(tools_instructions_2026()));
    json_object_object_add(r, "ttlMs", json_object_new_int64(cfg->tools_list_ttl_ms));
    json_object_object_add(r, "cacheScope", json_object_new_string("public"));
    return r;
}

static json_object *list_result(const struct cfg *cfg)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "tools", tools_list(cfg, MCP_REVISION_2026));
    /* The list is the same for every caller and changes only with the
     * configuration: public, and fresh for tools_list_ttl. */
    json_object_object_add(r, "ttlMs", json_object_new_int64(cfg->tools_list_ttl_ms));
    json_object_object_add(r, "cacheScope", json_object_new_string("public"));
    return r;
}

/* A cacheable result (stolen) with its hints: public ones are the same
 * for every caller and change with the configuration only; a workspace's
 * file is its workspace's, and a run may change it at any time. */
static json_object *cacheable(const struct cfg *cfg, json_object *r, bool private)
{
    json_object_object_add(r, "ttlMs", json_object_new_int64(private ? 0 : cfg->tools_list_ttl_ms));
    json_object_object_add(r, "cacheScope", json_object_new_string(private ? "private" : "public"));
    return r;
}

/* resources/... and completion/complete; false for another method. */
static bool resources(struct mcp_2026_req *m)
{
    const struct cfg *cfg = m->app->cfg;
    struct mcp_res_err e = {0};
    json_object *r = NULL;
    bool is_file = false;
    if (!strcmp(m->method, "resources/list"))
        r = cacheable(cfg, mcp__res_list(cfg, NULL), false);
    else if (!strcmp(m->method, "resources/templates/list"))
        r = cacheable(cfg, mcp__res_templates(cfg), false);
    else if (!strcmp(m->method, "resources/read")) {
        if ((r = mcp__res_read(cfg, NULL, m->params, &e, &is_file)))
            r = cacheable(cfg, r, is_file);
    } else if (!strcmp(m->method, "completion/complete"))
        r = mcp__complete(cfg, NULL, m->params, &e);
    else
        return false;
    if (r)
        mcp__2026_answer(m, r);
    else
        mcp__2026_error(m, e.status, e.code, e.message, e.data);
    return true;
}

static void dispatch(struct mcp_2026_req *m)
{
    const struct cfg *cfg = m->app->cfg;
    if (!strcmp(m->method, "server/discover")) {
        mcp__2026_answer(m, discover_result(cfg));
    } else if (!strcmp(m->method, "tools/list")) {
        mcp__2026_answer(m, list_result(cfg));
    } else if (!strcmp(m->method, "tools/call")) {
        mcp__2026_call(m);
    } else if (!strcmp(m->method, "prompts/list") || !strcmp(m->method, "prompts/get")) {
        json_object *r = NULL, *responses = NULL;
        cleanup_json json_object *state = NULL;
        char msg[400];
        if (mcp__input_params(m, &responses, &state) < 0)
            return;
        int code = mcp__prompts(cfg, MCP_REVISION_2026, m->method, m->params, responses, &r, msg, sizeof msg);
        if (code)
            mcp__2026_error(m, code == -32603 ? 500 : 200, code, msg, NULL);
        else
            mcp__2026_answer(m, r);
    } else if (!strcmp(m->method, "subscriptions/listen")) {
        mcp__listen(m);
    } else if (resources(m)) {
    } else if (!strncmp(m->method, "tasks/", 6) && mcp__task_method(m->method)) {
        if (!mcp__client_has(m->caps, MCP_EXT_TASKS)) {
            mcp__missing_capability(m, NULL, "Missing required client capability: the " MCP_EXT_TASKS " extension");
            return;
        }
        mcp__task_serve(m);
    } else {
        /* The removed ping, logging/setLevel and initialize land here. */
        char msg[300];
        snprintf(msg, sizeof msg, "Method not found: %.200s", m->method);
        mcp__2026_error(m, 404, -32601, msg, NULL);
    }
}

void mcp__2026_post(const struct app *app, struct http_req *req, struct http_resp *resp, json_object *msg,
                    bool want_sse, bool headerless)
{
    struct mcp_2026_req m = {.app = app, .req = req, .resp = resp, .msg = msg, .want_sse = want_sse,
                             .headerless = headerless};
    if (!json_object_is_type(msg, json_type_object)) {
        mcp__2026_error(&m, 400, -32600, "Invalid Request: batches are not part of revision " MCP_REVISION_2026, NULL);
        return;
    }
    json_object *v = NULL;
    if (json_object_object_get_ex(msg, "id", &v) && mcp__rpc_id_ok(v))
        m.id = v;
    bool has_method = json_object_object_get_ex(msg, "method", &v) && json_object_is_type(v, json_type_string);
    if (!json_object_object_get_ex(msg, "jsonrpc", &v) || !json_object_is_type(v, json_type_string) ||
        strcmp(json_object_get_string(v), "2.0") || !has_method) {
        mcp__2026_error(&m, 400, -32600, "Invalid Request: a JSON-RPC 2.0 request is expected", NULL);
        return;
    }
    json_object_object_get_ex(msg, "method", &v);
    m.method = json_object_get_string(v);
    if (!json_object_object_get_ex(msg, "id", NULL)) {
        /* A notification: the revision defines none over HTTP (closing a
         * stream cancels), so there is nothing to do with it. */
        discard(http_send(resp, 202, NULL, "", 0));
        return;
    }
    if (!m.id) {
        mcp__2026_error(&m, 400, -32600, "Invalid Request: the id must be a string or an integer", NULL);
        return;
    }
    if (json_object_object_get_ex(msg, "params", &m.params) && !json_object_is_type(m.params, json_type_object)) {
        mcp__2026_error(&m, 400, -32602, "Invalid params: params must be an object", NULL);
        return;
    }
    /* Mcp-Method first: a proxy may already have routed on it. */
    if (!header_matches(&m, "Mcp-Method", m.method) || !check_meta(&m) || !check_routing(&m))
        return;
    dispatch(&m);
}
