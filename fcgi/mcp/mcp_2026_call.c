/* mcp_2026_call.c: tools/call in the stateless revision 2026-07-28. The call
 * names its workspace (an explicit handle; run_code and mount_file make one
 * when it names none), its log level and progress token in _meta; it is
 * answered over its own event stream, whose closing cancels the run; and,
 * for a client that declares the tasks extension, a script run still going
 * after task_after becomes a task (mcp_task.c). */
#include "config.h"

#include "mcp_internal.h"
#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define META_LEVEL "io.modelcontextprotocol/logLevel"

/* args without its workspace key (a new object, caller puts; NULL stays NULL). */
static json_object *args_without_workspace(json_object *args)
{
    if (!args)
        return NULL;
    json_object *copy = json_object_new_object();
    json_object_object_foreach(args, k, v)
    {
        if (strcmp(k, "workspace"))
            json_object_object_add(copy, k, json_object_get(v));
    }
    return copy;
}

/* The call's workspace into *ws: loaded from the handle the arguments name,
 * or made for a tool that makes one. 0, or 1 with an isError *refusal (the
 * model's mistake: an unknown handle, none where one is needed), or a
 * negative errno (the service failed). */
static int call_workspace(const struct cfg *cfg, const char *tool, json_object *args, struct mcp_session *ws,
                          json_object **refusal)
{
    enum tools_ws_use use = tools_workspace_use(tool);
    json_object *w = tools_arg(args, "workspace");
    *refusal = NULL;
    memset(ws, 0, sizeof *ws);
    if (use == TOOLS_WS_NONE) {
        if (w)
            *refusal = tools_error_result("%s: unknown argument 'workspace' (it runs in a fresh directory)", tool);
        return w ? 1 : 0;
    }
    if (w) {
        if (!json_object_is_type(w, json_type_string)) {
            *refusal = tools_error_result("%s: workspace must be a string (the handle a call returned)", tool);
            return 1;
        }
        int rc = mcp__workspace_load(cfg, json_object_get_string(w), ws);
        if (rc == -ENOENT) {
            *refusal = tools_error_result(
                "%s: unknown workspace '%.80s' (deleted, or idle for longer than session_ttl); call run_code "
                "without workspace to start a new one",
                tool, json_object_get_string(w));
            return 1;
        }
        return rc;
    }
    if (use == TOOLS_WS_NEED) {
        *refusal = tools_error_result("%s: needs workspace, the handle run_code returns", tool);
        return 1;
    }
    int rc = mcp__workspace_make(cfg, ws);
    if (rc == -EUSERS) {
        *refusal = tools_error_result("%s: too many open workspaces on this server (max_sessions = %llu); delete "
                                      "one with delete_workspace, or try again later",
                                      tool, (unsigned long long)cfg->max_sessions);
        return 1;
    }
    if (rc == 0)
        log_msg(LOG_LVL_INFO, "workspace %s: made for %s", ws->id, tool);
    return rc;
}

/* delete_workspace: ends it as DELETE ends a session. */
static void delete_workspace(struct mcp_2026_req *m, struct mcp_session *ws)
{
    char text[WS_ID_MAX + 64];
    int rc = mcp__session_end(m->app, ws);
    if (rc < 0 && rc != -ENOENT) {
        log_msg(LOG_LVL_ERROR, "deleting workspace %s: %s", ws->id, strerror(-rc));
        mcp__2026_error(m, 500, -32603, "Internal error: cannot delete the workspace", NULL);
        return;
    }
    log_msg(LOG_LVL_INFO, "workspace %s deleted by the client", ws->id);
    snprintf(text, sizeof text, "workspace %s deleted", ws->id);
    mcp__2026_answer(m, tools_text_result(text, false));
}

/* The call's mcp_call: no session, the _meta's level and token. false: a
 * bad log level, answered. */
static bool call_init(struct mcp_2026_req *m, struct mcp_call *c, const char *dir)
{
    json_object *token = NULL;
    const char *lv = mcp__json_string(m->meta, META_LEVEL);
    enum tools_level level = MCP_LOG_NONE; /* no level asked: no log notifications */
    if (lv && mcp__level_parse(lv, &level) < 0) {
        mcp__2026_error(m, 200, -32602, "Invalid params: _meta's logLevel must be one of debug, info, notice, "
                                        "warning, error, critical, alert, emergency", NULL);
        return false;
    }
    if (json_object_object_get_ex(m->meta, "progressToken", &token) && !mcp__rpc_id_ok(token))
        token = NULL;
    *c = (struct mcp_call){
        .app = m->app,
        .resp = m->resp,
        .session_dir = dir,
        .version = MCP_REVISION_2026,
        .log_level = level,
        .progress_token = token,
        .last_flush_ms = util_now_ms(),
        .is_2026 = true,
    };
    /* The key of calls/KEY: a random one, since request ids are the
     * client's and two clients may share a workspace. */
    unsigned char rnd[16];
    if (util_random(rnd, sizeof rnd) < 0)
        memset(rnd, 0, sizeof rnd);
    util_hex(rnd, sizeof rnd, c->key);
    http_base_url(m->req, m->app->cfg->public_url, c->base_url, sizeof c->base_url);
    return true;
}

/* Answers what tools_call made of the call. */
static void call_answer(struct mcp_2026_req *m, const char *tool, enum tools_outcome out, json_object *result,
                          const struct mcp_session *ws)
{
    char msg[300];
    switch (out) {
    case TOOLS_CANCELLED:
        json_object_put(result);
        log_msg(LOG_LVL_INFO, "tools/call %s cancelled: the client closed its stream", tool);
        return;
    case TOOLS_UNKNOWN:
        snprintf(msg, sizeof msg, "Invalid params: unknown tool '%.200s' (tools/list names them)", tool);
        mcp__2026_error(m, 200, -32602, msg, NULL);
        return;
    case TOOLS_FAILED:
        mcp__2026_error(m, 500, -32603, "Internal error: the sandbox failed (see data.error)", result);
        return;
    case TOOLS_RESULT:
        break;
    }
    if (ws->dir)
        mcp__result_add_workspace(result, ws->id);
    if (mcp__input_seal(m->app->cfg, result) < 0) {
        json_object_put(result);
        mcp__2026_error(m, 500, -32603, "Internal error: cannot seal the requestState", NULL);
        return;
    }
    mcp__2026_answer(m, result);
}

void mcp__2026_call(struct mcp_2026_req *m)
{
    json_object *name = NULL, *args = NULL, *refusal = NULL;
    if (!json_object_object_get_ex(m->params, "name", &name) || !json_object_is_type(name, json_type_string)) {
        mcp__2026_error(m, 200, -32602, "Invalid params: tools/call needs the tool's name", NULL);
        return;
    }
    if (json_object_object_get_ex(m->params, "arguments", &args) && args &&
        !json_object_is_type(args, json_type_object)) {
        mcp__2026_error(m, 200, -32602, "Invalid params: arguments must be an object", NULL);
        return;
    }
    const char *tool = json_object_get_string(name);
    json_object *responses = NULL;
    cleanup_json json_object *state = NULL;
    if (mcp__input_params(m, &responses, &state) < 0)
        return;
    if (state && mcp__task_resume(m, tool, state, responses))
        return; /* the script of a run that asked is answered */
    if (!tools_known(m->app->cfg, tool) && strcmp(tool, TOOLS_DELETE_WORKSPACE)) {
        call_answer(m, tool, TOOLS_UNKNOWN, NULL, &(struct mcp_session){0});
        return;
    }
    const char *need = tools_needs_capability(m->app->cfg, tool);
    if (need && !json_object_object_get_ex(m->caps, need, NULL)) {
        mcp__missing_capability(m, need, "Missing required client capability (see data.requiredCapabilities)");
        return;
    }
    int64_t delay = 0;
    int task = mcp__task_mode(m, tool, &delay);
    if (task < 0)
        return;
    /* A task that gathers its input first asks in rounds (InputRequiredResult)
     * and becomes a task once it has answers. */
    if (task && !responses && tools_task_gathers(m->app->cfg, tool))
        task = 0;
    /* A script that may ask a client that can answer: its run is a task
     * (unannounced), so that the call can be answered with the question
     * while the run goes on. */
    if (!task && tools_may_ask(tool) && m->caps && json_object_object_get_ex(m->caps, "elicitation", NULL) &&
        m->app->cfg->exec.limits.input_questions > 0) {
        task = 1;
        delay = MCP_TASK_ROUNDS;
    }
    cleanup_session struct mcp_session ws = {0};
    int rc = call_workspace(m->app->cfg, tool, args, &ws, &refusal);
    bool made = rc == 0 && ws.dir && !tools_arg(args, "workspace");
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "the workspace of %s: %s", tool, strerror(-rc));
        mcp__2026_error(m, 500, -32603, "Internal error: cannot open or make the workspace", NULL);
        return;
    }
    if (rc == 1) {
        mcp__2026_answer(m, refusal);
        return;
    }
    if (!strcmp(tool, TOOLS_DELETE_WORKSPACE)) {
        delete_workspace(m, &ws);
        return;
    }
    struct mcp_call c;
    if (!call_init(m, &c, ws.dir))
        return;
    c.input_responses = responses;
    c.request_state = state;
    c.client_caps = m->caps;
    cleanup_json json_object *targs = args_without_workspace(args);
    if (task) {
        discard(mcp_reap(m->app->cfg, false)); /* at most once a minute; the only reaper a CGI server has */
        rc = mcp__task_call(m, &c, tool, targs, ws.dir ? ws.id : NULL, delay);
        if (rc == -EDQUOT) { /* finished ones may be past task_ttl: reap, then once more */
            discard(mcp_reap(m->app->cfg, true));
            rc = mcp__task_call(m, &c, tool, targs, ws.dir ? ws.id : NULL, delay);
        }
        if (rc == -EDQUOT) {
            metrics_refused(m->app->cfg, METRICS_REFUSED_CAPS);
            if (made)
                discard(mcp__session_end(m->app, &ws)); /* nothing ran in it */
            mcp__2026_answer(m, tools_error_result("%s: too many tasks on this server (max_tasks = %llu); try again "
                                                   "later", tool, (unsigned long long)m->app->cfg->max_tasks));
        }
        return;
    }
    if (m->want_sse) {
        stream_open_call(m->req, m->resp); /* in serve: the stream process writes it from here on */
        if (http_sse_start(m->resp) < 0)
            return;
        m->sse_open = c.sse = true;
    }
    struct tools_ctx t;
    mcp__call_tools_ctx(&c, &t);
    json_object *result = NULL;
    enum tools_outcome out = mcp__call_tool(&c, &t, tool, targs, &result);
    /* A workspace made for a call that was refused before it did anything
     * (its arguments: no structuredContent) goes again, so that a model's
     * mistakes do not pile up workspaces. */
    if (made && out == TOOLS_RESULT && !json_object_object_get_ex(result, "structuredContent", NULL) &&
        mcp__session_end(m->app, &ws) == 0) {
        mcp__session_free(&ws);
        log_msg(LOG_LVL_INFO, "%s refused its arguments: its new workspace is removed", tool);
    }
    call_answer(m, tool, out, result, &ws);
}
