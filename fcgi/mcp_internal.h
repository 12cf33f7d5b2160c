/* mcp_internal.h: what the parts of MCP share: the session on disk
 * (mcp_session.c), the tools/call being served and its notifications
 * (mcp_call.c), and the JSON text of a message. mcp.c is JSON-RPC, the
 * lifecycle and the dispatch. */
#ifndef RMS_MCP_INTERNAL_H
#define RMS_MCP_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "executor.h"
#include "mcp.h"

/* A live session, as session.json says (session_load, session_create). */
struct mcp_session {
    char id[WS_ID_MAX + 1];
    char *dir;                /* STATE/sessions/SID */
    char version[16];
    enum tools_level level;
    json_object *doc;         /* session.json as loaded */
};

void mcp__session_free(struct mcp_session *s);
/* Rewrites session.json from s->doc (atomically). 0 or -errno. */
int mcp__session_write(const struct mcp_session *s) must_check;
/* Loads a live session: 0, -ENOENT (unknown or ended), other -errno. Marks
 * it used (the idle clock restarts). s is to be freed either way. */
int mcp__session_load(const struct cfg *cfg, const char *sid, struct mcp_session *s) must_check;
/* The number of sessions on disk. */
int mcp__count_sessions(const struct cfg *cfg);
/* Makes a session of revision version (client: clientInfo, may be NULL).
 * 0, or -errno with nothing of it left on disk. s is to be freed either
 * way. */
int mcp__session_create(const struct cfg *cfg, const char *version, json_object *client,
                        struct mcp_session *s) must_check;
/* Cancels the run that calls/KEY (in calls_fd) names, if any. */
void mcp__cancel_run_of(const struct app *app, int calls_fd, const char *key);
/* Ends a session now: cancels its calls in flight, renames it out of the
 * way (a request racing with this sees 404 at once), removes it. 0,
 * -ENOENT (already gone), other -errno. */
int mcp__session_end(const struct app *app, struct mcp_session *s) must_check;

/* The level of its MCP name: 0, or -EINVAL. */
int mcp__level_parse(const char *s, enum tools_level *l) must_check;
/* Compact JSON text of o (borrowed from o). */
const char *mcp__to_json(json_object *o, size_t *len);

/* One tools/call being served. */
struct mcp_call {
    const struct app *app;
    struct http_resp *resp;
    const char *session_dir;      /* STATE/sessions/SID */
    const char *version;          /* the session's negotiated revision */
    enum tools_level log_level;   /* send notifications/message at or above */
    bool sse;                     /* notifications can be sent (the stream is open) */
    json_object *progress_token;  /* borrowed from the request, or NULL */
    double last_progress;
    bool any_progress;
    char key[65];                 /* the request id's key (mcp.h) */
    char base_url[512];           /* scheme://host of artifact links, "" unknown */
    int64_t last_flush_ms;
    bool pending;                 /* events written but not flushed */
    bool gone_logged;             /* "the client hung up" was logged */
};

/* The tools' view of c: its callbacks send notifications/progress (only
 * with a progressToken, and only growing) and notifications/message (at or
 * above the session's level), poll the client's cancel (a marker from any
 * worker), the server's shutdown and, with cancel_on_disconnect, a gone
 * client, and record the call's run so that a cancel finds it. */
void mcp__call_tools_ctx(struct mcp_call *c, struct tools_ctx *t);

#endif
