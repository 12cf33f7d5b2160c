/* mcp_2025_call.c: tools/call in the legacy revisions (2025-03-26,
 * 2025-06-18, 2025-11-25): a call of the request's session, with the
 * session's revision and log level, _meta's progress token and the request
 * id's key (which notifications/cancelled names), whose result or failure
 * becomes the JSON-RPC response. What the calls of both revisions share
 * (the notifications, the cancel, the tools' callbacks) is mcp_call.c. */
#include "config.h"

#include "mcp_internal.h"

#include <stdio.h>

json_object *mcp__2025_call(struct mcp_2025_req *p, json_object *id, json_object *params, bool sse)
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
    if (json_object_object_get_ex(p->s.doc, "client_caps", &c.client_caps) &&
        json_object_is_type(c.client_caps, json_type_object))
        c.can_ask = json_object_object_get_ex(c.client_caps, "elicitation", NULL);
    else
        c.client_caps = NULL;
    mcp__id_key(id, c.key);
    http_base_url(p->req, p->app->cfg->public_url, c.base_url, sizeof c.base_url);
    struct tools_ctx t;
    mcp__call_tools_ctx(&c, &t);

    /* The session's followed files: what a run or a cell changes of them
     * is told on the call's stream before its result. */
    struct mcp_res_watch w;
    json_object *subs = NULL;
    json_object_object_get_ex(p->s.doc, "subscriptions", &subs);
    mcp__res_watch_start(&w, sse ? subs : NULL, p->s.dir, p->s.id);
    json_object *result = NULL;
    enum tools_outcome out = mcp__call_tool(&c, &t, json_object_get_string(name), args, &result);
    if (w.n && out != TOOLS_CANCELLED) {
        json_object *changed = json_object_new_array();
        for (int i = 0, n = mcp__res_watch_changed(&w, changed); i < n; i++) {
            json_object *note = mcp__res_updated(json_object_get_string(json_object_array_get_idx(changed, (size_t)i)));
            size_t len;
            const char *text = mcp__to_json(note, &len);
            discard(http_sse_event(p->resp, text, len, true));
            json_object_put(note);
        }
        json_object_put(changed);
    }
    mcp__res_watch_free(&w);
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
