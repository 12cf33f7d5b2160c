/* web_cell.c: /api/cell, the page's notebook (see web.h). A cell runs in
 * the kernel of the notebook's workspace, one of the 2026-07-28 revision's
 * workspaces (mcp_workspace_open): the id the page keeps is its
 * capability, as a handle is an agent's (and, in the path, what a
 * cluster's nginx routes by), and the first cell of a notebook, POST
 * /api/cell, makes one; the next ones are POST /api/cell/WID. The request,
 * the run and the event stream are /api/run's (web__serve); POST
 * /api/cell/WID/reset drops the kernel's names and keeps the files; POST
 * /api/cell/WID/file puts a file into its mounts/ (web_file.c; POST
 * /api/cell/file into a new notebook's, when no cell has run yet). Kernels
 * live only beside serve's workers: elsewhere every route here answers 501
 * saying so. */
#include "config.h"

#include "web_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp.h"

/* The notebook's workspace: the one wid names, or (NULL) a new one. */
static int cell_open(const struct app *app, const char *wid, struct web_ws *ws, char *err, size_t errlen)
{
    int rc = mcp_workspace_open(app->cfg, wid, ws->id, &ws->dir);
    ws->made = rc == 0 && !wid;
    if (rc == 0)
        return 0;
    if (rc == -ENOENT) {
        snprintf(err, errlen, "unknown workspace%s%s (deleted, or idle for longer than session_ttl): send the cell "
                              "without one to start a new notebook",
                 wid && ws_id_valid(wid) ? " " : "", wid && ws_id_valid(wid) ? wid : "");
        return 404;
    }
    if (rc == -EUSERS) {
        snprintf(err, errlen, "too many open workspaces on this server (max_sessions): try again later");
        return 503;
    }
    log_msg(LOG_LVL_ERROR, "/api/cell: the workspace: %s", strerror(-rc));
    snprintf(err, errlen, "cannot open or make the notebook's workspace");
    return 500;
}

static void cell_close(const struct app *app, struct web_ws *ws, bool drop)
{
    if (drop && ws->id[0] && mcp_workspace_delete(app, ws->id) == 0)
        log_msg(LOG_LVL_INFO, "workspace %s: made for a cell that was refused: removed", ws->id);
    free(ws->dir);
    ws->dir = NULL;
}

static const struct web_door cell_door = {
    .route = "/api/cell",
    .fields = (1u << WEB_F_CODE) | (1u << WEB_F_REQUIREMENTS) | (1u << WEB_F_TIMEOUT) | (1u << WEB_F_NETWORK),
    .cell = true,
    .open = cell_open,
    .close = cell_close,
};

/* Kernels exist here (serve), or the request is answered 501 saying why. */
static bool kernels_here(const struct app *app, struct http_resp *resp)
{
    if (app_kernels(app))
        return true;
    http_send_error(resp, 501, app_kernels_absent(app));
    return false;
}

void web_api_cell(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    if (kernels_here(app, resp))
        web__serve(app, req, resp, &cell_door, NULL);
}

/* POST api/cell/WID/reset: the kernel's names go, the files stay. */
static void reset(const struct app *app, struct http_req *req, struct http_resp *resp, const char *wid)
{
    if (strcmp(req->method, "POST")) {
        discard(http_add_header(resp, "Allow", "POST"));
        http_send_error(resp, 405, "use POST");
        return;
    }
    struct web_ws ws = {0};
    int rc = mcp_workspace_open(app->cfg, wid, ws.id, &ws.dir);
    if (rc == 0)
        rc = app_exec_of(app)->kernel_reset(&app->cfg->exec, ws.dir);
    free(ws.dir);
    if (rc == -ENOENT) {
        http_send_error(resp, 404, "no such workspace (deleted, or idle for longer than session_ttl)");
    } else if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "/api/cell: reset of %s: %s", wid, strerror(-rc));
        http_send_error(resp, 500, "cannot reset the notebook's kernel");
    } else {
        log_msg(LOG_LVL_INFO, "workspace %s: kernel reset from the page", wid);
        discard(http_send_json(resp, 200, "{\"reset\":true}"));
    }
}

/* POST api/cell/WID/save: the kernel's state saved now, the kernel kept:
 * 200 with the kernel's report ({"saved": true, "bytes", "names",
 * "skipped", "reason"}), 409 when nothing was saved (no live kernel, a cell
 * running, past kernel_save_bytes: the reason), 404. */
static void save(const struct app *app, struct http_req *req, struct http_resp *resp, const char *wid)
{
    if (strcmp(req->method, "POST")) {
        discard(http_add_header(resp, "Allow", "POST"));
        http_send_error(resp, 405, "use POST");
        return;
    }
    struct web_ws ws = {0};
    cleanup_free char *report = NULL;
    char why[1024] = "";
    int rc = mcp_workspace_open(app->cfg, wid, ws.id, &ws.dir);
    if (rc == 0)
        rc = app_exec_of(app)->kernel_save(&app->cfg->exec, ws.dir, &report, why, sizeof why);
    free(ws.dir);
    if (rc == -ENOENT) {
        http_send_error(resp, 404, "no such workspace (deleted, or idle for longer than session_ttl)");
        return;
    }
    if (rc > 0 || rc == -EBUSY) {
        http_send_error(resp, 409, why[0] ? why : "the notebook's kernel is busy");
        return;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "/api/cell: save of %s: %s", wid, strerror(-rc));
        http_send_error(resp, 500, "cannot save the notebook's kernel");
        return;
    }
    /* The kernel's report as it made it (its names are the user's), and
     * the host's summary. */
    json_object *o = report ? json_tokener_parse(report) : NULL;
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        o = json_object_new_object();
    }
    json_object_object_add(o, "reason", json_object_new_string(why));
    discard(http_send_json(resp, 200, json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN)));
    json_object_put(o);
}

void web_api_cell_sub(const struct app *app, struct http_req *req, struct http_resp *resp, const char *rest)
{
    char wid[WS_ID_MAX + 1];
    if (!strcmp(rest, "file")) { /* a file before any cell: a new workspace */
        if (kernels_here(app, resp))
            web__cell_file(app, req, resp, NULL);
        return;
    }
    size_t idn = ws_id_prefix(rest); /* WID, or NODE-WID in a cluster */
    if (idn == 0 ||
        (rest[idn] && strcmp(rest + idn, "/reset") && strcmp(rest + idn, "/file") && strcmp(rest + idn, "/save"))) {
        http_send_error(resp, 404, "no such API (POST api/cell/WORKSPACE runs a cell of that notebook, "
                                   "POST api/cell/WORKSPACE/reset drops its names, POST api/cell/WORKSPACE/save "
                                   "saves them, POST api/cell/WORKSPACE/file puts a file into its mounts/, POST "
                                   "api/cell/file into a new notebook's)");
        return;
    }
    if (!kernels_here(app, resp))
        return;
    memcpy(wid, rest, idn);
    wid[idn] = '\0';
    if (!strcmp(rest + idn, "/file"))
        web__cell_file(app, req, resp, wid);
    else if (!strcmp(rest + idn, "/save"))
        save(app, req, resp, wid);
    else if (rest[idn])
        reset(app, req, resp, wid);
    else
        web__serve(app, req, resp, &cell_door, wid);
}
