/* mcp_2026_answer.c: how the 2026-07-28 revision answers a request, for
 * every file that serves one (mcp_2026.c, mcp_2026_call.c, mcp_task.c): a
 * result completed with resultType and _meta's serverInfo, an error with
 * the request's id or none, each as one JSON body or as the last event of
 * the stream the request has open; -32021 for a capability the client did
 * not declare; and the workspace handle added to a tool's result. */
#include "config.h"

#include "mcp_internal.h"

#include <stdio.h>

#define META_SERVER "io.modelcontextprotocol/serverInfo"

/* An error as one JSON body: the request's id when there is one, else no
 * id at all (the schema allows none, never null). Steals data. */
static void error_body(struct mcp_2026_req *m, int status, int code, const char *message, json_object *data)
{
    json_object *e = mcp__rpc_error(m->id, code, message, data);
    if (!m->id)
        json_object_object_del(e, "id");
    log_msg(LOG_LVL_INFO, "%d: %s", status, message);
    mcp__send(m->resp, status, e);
    json_object_put(e);
}

json_object *mcp__2026_complete(json_object *result)
{
    json_object *meta = NULL;
    if (!json_object_object_get_ex(result, "resultType", NULL))
        json_object_object_add(result, "resultType", json_object_new_string("complete"));
    if (!json_object_object_get_ex(result, "_meta", &meta) || !json_object_is_type(meta, json_type_object)) {
        meta = json_object_new_object();
        json_object_object_add(result, "_meta", meta);
    }
    json_object_object_add(meta, META_SERVER, mcp__server_info());
    return result;
}

/* The answer to m's request: result (stolen) completed, as one JSON body or
 * as the last event of the stream m has open. */
void mcp__2026_answer(struct mcp_2026_req *m, json_object *result)
{
    json_object *r = mcp__rpc_result(m->id, mcp__2026_complete(result));
    if (m->sse_open) {
        size_t n;
        const char *s = mcp__to_json(r, &n);
        discard(http_sse_event(m->resp, s, n, true));
    } else {
        mcp__send(m->resp, 200, r);
    }
    json_object_put(r);
}

/* An error response on the stream m has open, or as one body. */
void mcp__2026_error(struct mcp_2026_req *m, int status, int code, const char *message, json_object *data)
{
    if (!m->sse_open) {
        error_body(m, status, code, message, data);
        return;
    }
    json_object *e = mcp__rpc_error(m->id, code, message, data);
    size_t n;
    const char *s = mcp__to_json(e, &n);
    discard(http_sse_event(m->resp, s, n, true));
    json_object_put(e);
}

bool mcp__client_has(json_object *caps, const char *extension)
{
    json_object *ext = NULL;
    return caps && json_object_object_get_ex(caps, "extensions", &ext) && json_object_is_type(ext, json_type_object) &&
           json_object_object_get_ex(ext, extension, NULL);
}

void mcp__missing_capability(struct mcp_2026_req *m, const char *capability, const char *message)
{
    json_object *data = json_object_new_object(), *req = json_object_new_object();
    if (capability) {
        json_object_object_add(req, capability, json_object_new_object());
    } else {
        json_object *ext = json_object_new_object();
        json_object_object_add(ext, MCP_EXT_TASKS, json_object_new_object());
        json_object_object_add(req, "extensions", ext);
    }
    json_object_object_add(data, "requiredCapabilities", req);
    error_body(m, 400, -32021, message, data);
}

void mcp__result_add_workspace(json_object *result, const char *wid)
{
    json_object *sc = NULL, *content = NULL;
    char line[WS_ID_MAX + 64];
    if (json_object_object_get_ex(result, "structuredContent", &sc) && json_object_is_type(sc, json_type_object))
        json_object_object_add(sc, "workspace", json_object_new_string(wid));
    if (json_object_object_get_ex(result, "content", &content) && json_object_is_type(content, json_type_array)) {
        int n = snprintf(line, sizeof line, "workspace: %s", wid);
        json_object_array_add(content, tools_text(line, (size_t)n));
    }
}
