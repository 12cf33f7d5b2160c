/* mcp.h: MCP over Streamable HTTP (the legacy revisions 2025-03-26,
 * 2025-06-18 and 2025-11-25, and beside them the stateless 2026-07-28, whose
 * requests carry their revision in _meta) on POST/GET/DELETE /mcp: JSON-RPC 2.0, the lifecycle,
 * sessions on disk, and the dispatch of requests; tools/call answers over
 * server-sent events with progress and log notifications. Sessions live in
 * STATE/sessions/SID/ so that any worker, or a one-shot CGI process, serves
 * any request of any session:
 *
 *   session.json   negotiated revision, log level, client (rewritten atomically)
 *   workspace/     the scripts' cwd; output/ inside
 *   calls/KEY      one per tools/call in flight: its run id once known
 *   cancel/KEY     notifications/cancelled for that call arrived
 *   runs/RUNID     the session's runs, removed with it when it is reaped
 *
 * KEY is the SHA-256 of the request id with its JSON type ("i:5", "s:5"). */
#ifndef RMS_MCP_H
#define RMS_MCP_H

#include <stdbool.h>

#include "app_ctx.h"
#include "cfg.h"
#include "http.h"
#include "stream.h"
#include "tools.h"

#define MCP_JSON_DEPTH 64          /* nesting of a request body */
#define MCP_BATCH_MAX 64           /* messages in one 2025-03-26 batch */
#define MCP_SESSION_FILE_MAX 65536 /* bytes of session.json */
#define MCP_CLIENT_FIELD_MAX 256   /* bytes of clientInfo.name and .version kept in it */
#define MCP_KEEPALIVE_MS 15000     /* SSE comment after this much silence */
#define MCP_CGI_PROBE_MS 2000      /* CGI, 2026-07-28: a padded comment this often finds a gone client */
#define MCP_LATEST "2025-11-25"   /* the newest legacy revision (initialize) */
/* MCP_REVISION_2026 (tools.h) is the stateless revision: per-request _meta, no session. */

/* The MCP name of a log level ("warning"). */
const char *mcp_level_name(enum tools_level l);

/* Serves /mcp (the Host/Origin and token checks are done). */
void mcp_handle(const struct app *app, struct http_req *req, struct http_resp *resp);

/* Removes sessions and workspaces idle for longer than session_ttl with no
 * call in flight, and their runs, and finished tasks past task_ttl whose
 * process is gone; each kind at most one scan a minute (a stamp file), so
 * it may be called often. force: scan now. Returns the number removed (or
 * -errno when sessions or workspaces could not be read). */
int mcp_reap(const struct cfg *cfg, bool force);

/* The 2026-07-28 revision's workspaces (STATE/workspaces/WID: the layout
 * of a session, the handle its capability), which the web page's notebooks
 * are too. Opens the workspace wid (marked used), or with wid NULL makes
 * one within max_sessions (idle ones reaped first when there are too
 * many): id gets its handle, *dir its workspace/ directory (caller frees).
 * 0; -ENOENT (no such workspace, or wid is no id); -EUSERS (max_sessions
 * workspaces are open); other -errno. */
int mcp_workspace_open(const struct cfg *cfg, const char *wid, char id[WS_ID_MAX + 1], char **dir) must_check;
/* Ends the workspace wid now, as delete_workspace does: its calls
 * cancelled, its kernel ended, its files removed. 0, -ENOENT, other -errno. */
int mcp_workspace_delete(const struct app *app, const char *wid) must_check;

/* The output/ folder of the session sid, or with workspace of the
 * 2026-07-28 workspace of that handle (the GET /artifacts/PATH of a PRIMS
 * client), opened as a directory without following a symlink; marks it
 * used. The descriptor (caller closes); -ENOENT for no such live session
 * or workspace (or an id that is none), other -errno. */
int mcp_output_open(const struct cfg *cfg, bool workspace, const char *id) must_check;

/* The stream process's kind of subscriptions/listen (mcp_listen.c): it
 * follows the tasks of the listens kept with it and sends their
 * notifications, then the subscription's end. */
extern const struct stream_kind mcp_listen_kind;

/* `runmyscript mcp`: MCP over stdio (mcp_stdio.c) on in_fd and out_fd
 * until the client closes in_fd (or SIGTERM, SIGINT, SIGHUP), with a warm
 * pool of its own unless a server's serves cfg's state directory. The
 * exit status. */
int mcp_stdio_serve(const struct cfg *cfg, int in_fd, int out_fd);

/* True for a legacy revision we speak (one initialize may name). */
bool mcp_version_supported(const char *v);

#endif
