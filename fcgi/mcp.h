/* mcp.h: MCP over Streamable HTTP (revisions 2025-03-26, 2025-06-18 and
 * 2025-11-25) on POST/GET/DELETE /mcp: JSON-RPC 2.0, the lifecycle,
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

#include <json-c/json.h>
#include <stdbool.h>

#include "app.h"
#include "http.h"

#define MCP_JSON_DEPTH 64          /* nesting of a request body */
#define MCP_BATCH_MAX 64           /* messages in one 2025-03-26 batch */
#define MCP_SESSION_FILE_MAX 65536 /* bytes of session.json */
#define MCP_CLIENT_FIELD_MAX 256   /* bytes of clientInfo.name and .version kept in it */
#define MCP_KEEPALIVE_MS 15000     /* SSE comment after this much silence */
#define MCP_LATEST "2025-11-25"

/* RFC 5424 levels, as MCP names them, in ascending order. */
enum mcp_level {
    MCP_LOG_DEBUG, MCP_LOG_INFO, MCP_LOG_NOTICE, MCP_LOG_WARNING,
    MCP_LOG_ERROR, MCP_LOG_CRITICAL, MCP_LOG_ALERT, MCP_LOG_EMERGENCY,
};
const char *mcp_level_name(enum mcp_level l);

/* One tools/call being served; tools.c reads it and reports through it. */
struct mcp_call {
    const struct app *app;
    struct http_req *req;
    struct http_resp *resp;
    const char *session_dir;      /* STATE/sessions/SID */
    const char *version;          /* the session's negotiated revision */
    enum mcp_level log_level;     /* send notifications/message at or above */
    bool sse;                     /* notifications can be sent (the stream is open) */
    json_object *progress_token;  /* borrowed from the request, or NULL */
    double last_progress;
    bool any_progress;
    char key[65];                 /* the request id's key (see above) */
    char base_url[512];           /* scheme://host of artifact links, "" unknown */
    int64_t last_flush_ms;
    bool pending;                 /* events written but not flushed */
    bool gone_logged;             /* "the client hung up" was logged */
};

/* Serves /mcp (the Host/Origin and token checks are done). */
void mcp_handle(const struct app *app, struct http_req *req, struct http_resp *resp);

/* Sends notifications/progress when the request has a progressToken, with
 * progress strictly increasing (a value not above the last is dropped). */
void mcp_call_progress(struct mcp_call *c, double progress, double total, const char *message);
/* Sends notifications/message when level is at or above the session's;
 * text[0..len) is sanitised to UTF-8. */
void mcp_call_log(struct mcp_call *c, enum mcp_level level, const char *logger, const char *text, size_t len);
/* Polled while a call works: true when the client cancelled it (from any
 * worker) or the server is stopping runs. Also keeps the stream alive and
 * pushes out buffered events. */
bool mcp_call_cancelled(struct mcp_call *c);
/* True when the client sent notifications/cancelled for this call. */
bool mcp_call_client_cancelled(const struct mcp_call *c);
/* Records the call's run (so that a cancel from another worker finds it)
 * and adds it to the session's runs. */
void mcp_call_set_run(struct mcp_call *c, const char *run_id);

/* Removes sessions idle for longer than session_ttl with no call in
 * flight, and their runs; at most one scan a minute (a stamp file), so it
 * may be called often. force: scan now. Returns the number removed. */
int mcp_reap_sessions(const struct cfg *cfg, bool force);

/* True for a revision we speak. */
bool mcp_version_supported(const char *v);

#endif
