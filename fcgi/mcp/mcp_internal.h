/* mcp_internal.h: what the files of mcp/ share, from the bottom up: the
 * protocol's words and JSON-RPC's messages (mcp_proto.c), sessions and
 * workspaces on disk (mcp_session.c), the tools/call being served and its
 * notifications (mcp_call.c), the 2026-07-28 revision's answers
 * (mcp_2026_answer.c), its tasks (mcp_task.c), calls (mcp_2026_call.c) and
 * requests (mcp_2026.c), and the legacy revisions' calls (mcp_2025_call.c)
 * and requests (mcp_2025.c). mcp.c, the door, hands a POST to one of the
 * two revisions; mcp_reap.c (mcp.h) reaps what is left on disk. */
#ifndef RMS_MCP_INTERNAL_H
#define RMS_MCP_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "executor.h"
#include "mcp.h"

static inline void mcp__json_put(json_object **o)
{
    json_object_put(*o);
}
#define cleanup_json __attribute__((cleanup(mcp__json_put)))

/* The protocol's words (mcp_proto.c). Every revision we speak, 2026-07-28
 * first (new array); the level of its MCP name (0, or -EINVAL); serverInfo:
 * name, title, version (new object). */
json_object *mcp__supported_versions(void);
int mcp__level_parse(const char *s, enum tools_level *l) must_check;
json_object *mcp__server_info(void);
/* o[key] when it is a string (borrowed), else NULL. */
const char *mcp__json_string(json_object *o, const char *key);
/* Compact JSON text of o (borrowed from o). */
const char *mcp__to_json(json_object *o, size_t *len);

/* JSON-RPC messages (mcp_proto.c). True for an id JSON-RPC allows here (a
 * string or an integer). The response to id (borrowed; NULL puts "id":
 * null) with result (stolen); an error with data (stolen, may be NULL); a
 * refusal of the transport (an HTTP status and an error with no id, sent
 * and logged); o sent as one JSON body. */
bool mcp__rpc_id_ok(json_object *id);
json_object *mcp__rpc_result(json_object *id, json_object *result);
json_object *mcp__rpc_error(json_object *id, int code, const char *message, json_object *data);
void mcp__refuse(struct http_resp *resp, int status, int code, const char *message);
void mcp__send(struct http_resp *resp, int status, json_object *o);
/* The file name of a request id within a session (mcp.h). */
void mcp__id_key(json_object *id, char out[65]);

/* STATE/KIND/ID/FILE (mcp_state.c): KIND's document of ID (sessions,
 * workspaces: session.json; tasks: task.json) read, at most max bytes, as a
 * JSON object. ID goes into idbuf (WS_ID_MAX + 1 bytes), STATE/KIND/ID
 * into *dir (caller frees), the object into *doc (caller puts); each may
 * be set when it fails. 0; -ENOENT (no such ID, or not an id); -EIO (not
 * a JSON object); other -errno. dfd, when not NULL, gets the directory
 * open (caller closes). */
int mcp__state_load(const struct cfg *cfg, const char *kind, const char *id, const char *file, size_t max,
                    char *idbuf, char **dir, json_object **doc, int *dfd) must_check;

/* Sessions and workspaces on disk (mcp_session.c). A live session, as
 * session.json says (mcp__session_load, mcp__session_create). */
struct mcp_session {
    char id[WS_ID_MAX + 1];
    char *dir;                /* STATE/sessions/SID */
    char version[16];
    enum tools_level level;
    json_object *doc;         /* session.json as loaded */
};

void mcp__session_free(struct mcp_session *s);
#define cleanup_session __attribute__((cleanup(mcp__session_free)))
/* Rewrites session.json from s->doc (atomically). 0 or -errno. */
int mcp__session_write(const struct mcp_session *s) must_check;
/* Loads a live session: 0, -ENOENT (unknown or ended), other -errno. Marks
 * it used (the idle clock restarts). s is to be freed either way. */
int mcp__session_load(const struct cfg *cfg, const char *sid, struct mcp_session *s) must_check;
/* Makes a session of revision version (client: clientInfo, may be NULL),
 * one of at most max_sessions, counted and made in one step (a race of
 * many ends at the cap exactly). 0; -EDQUOT when max_sessions are open;
 * or -errno, with nothing of it left on disk. s is to be freed either
 * way. */
int mcp__session_create(const struct cfg *cfg, const char *version, json_object *client,
                        struct mcp_session *s) must_check;
/* Cancels the run that the call KEY started (in calls_fd), if any. */
void mcp__cancel_run_of(const struct app *app, int calls_fd, const char *key);
/* In calls/ (calls_fd), .KEY.RUNID names the run the call KEY started:
 * that name into name (len bytes). 0, -ENOENT (no run yet) or -errno. */
#define MCP_CALL_RUN_NAME_MAX (1 + 64 + 1 + WS_ID_MAX + 1)
int mcp__call_run_name(int calls_fd, const char *key, char *name, size_t len) must_check;
/* Removes the session name of sessions_fd (sessions/ or workspaces/), with
 * its runs (listed in its runs/) when with_runs. 0 or -errno. */
int mcp__session_remove(const struct cfg *cfg, int sessions_fd, const char *name, bool with_runs);
/* Ends a session now: cancels its calls in flight, takes its session.json
 * away (a request racing with this sees 404 at once), ends its kernel
 * (exec_kernel_end, by the workspace's path), renames it out of the way,
 * removes it. 0, -ENOENT (already gone), other -errno. */
int mcp__session_end(const struct app *app, struct mcp_session *s) must_check;

/* Workspaces (the 2026-07-28 revision's explicit handles): the layout of a
 * session (workspace/, calls/, cancel/, runs/, mounts.json) under
 * STATE/workspaces/WID, with session.json saying revision 2026-07-28. The
 * handle is the capability, as a session id is. Loaded, made, ended and
 * reaped as sessions are (the same contracts as mcp__session_load, _create,
 * _end; max_sessions and session_ttl hold for each kind apart). */
int mcp__workspace_load(const struct cfg *cfg, const char *wid, struct mcp_session *s) must_check;
int mcp__workspace_create(const struct cfg *cfg, struct mcp_session *s) must_check;
/* mcp__workspace_create within max_sessions (idle ones reaped first when
 * there are too many): -EUSERS when that many are open (mcp_workspace.c). */
int mcp__workspace_make(const struct cfg *cfg, struct mcp_session *s) must_check;

/* Resources and completions, for both revisions (mcp_res.c). A method
 * that fails gives NULL and fills an error: its HTTP status (2026-07-28),
 * its JSON-RPC code and message, and data (new, or NULL) for the answer. */
struct mcp_res_err {
    int status, code;
    char message[300];
    json_object *data;
};
#define MCP_SUBSCRIPTIONS_MAX 64 /* resources one session (or one listen) follows */
/* resources/list (s: the legacy session, whose files are listed; NULL in
 * 2026-07-28, which has no session: the fixtures only), templates/list,
 * and read (s as for list; in 2026-07-28 the URI's workspace handle names
 * the workspace). *is_file: the result is of a workspace's file, which a
 * run may change (not to be cached as the fixtures are). New results. */
json_object *mcp__res_list(const struct cfg *cfg, const struct mcp_session *s);
json_object *mcp__res_templates(const struct cfg *cfg);
json_object *mcp__res_read(const struct cfg *cfg, const struct mcp_session *s, json_object *params,
                           struct mcp_res_err *e, bool *is_file);
/* completion/complete: a path of the workspace template, the session's
 * workspace id, a prompt's argument named requirements or package (the
 * packages the import map knows), a fixture prompt's argument. New result
 * or NULL. */
json_object *mcp__complete(const struct cfg *cfg, const struct mcp_session *s, json_object *params,
                           struct mcp_res_err *e);
/* resources/subscribe (on) and unsubscribe of params.uri in s's
 * session.json (at most MCP_SUBSCRIPTIONS_MAX). 0, or < 0 with e filled. */
int mcp__res_subscribe(struct mcp_session *s, json_object *params, bool on, struct mcp_res_err *e) must_check;
/* The watch of followed files (workspace:// URIs, each of the workspace
 * in dir: STATE/sessions/SID or STATE/workspaces/WID): what each is when
 * added, then what changed since (an inode, a size, an mtime: a file
 * written, replaced, made or removed). Zeroed to start; freed. */
struct mcp_res_seen {
    uint64_t ino;
    int64_t size, mtime_ns;
};
struct mcp_res_watch {
    size_t n;
    char *uri[MCP_SUBSCRIPTIONS_MAX];
    char *dir[MCP_SUBSCRIPTIONS_MAX];
    struct mcp_res_seen seen[MCP_SUBSCRIPTIONS_MAX];
};
/* Follows uri of dir's workspace, as seen (NULL: as it is now). 0;
 * -E2BIG (MCP_SUBSCRIPTIONS_MAX are followed); -EINVAL (not a workspace
 * URI); -ENOMEM. */
int mcp__res_watch_add(struct mcp_res_watch *w, const char *uri, const char *dir, const struct mcp_res_seen *seen);
/* w (set here) follows those of uris (a JSON array) that are of the
 * workspace of dir whose id is id (others' and fixtures' are passed over). */
void mcp__res_watch_start(struct mcp_res_watch *w, json_object *uris, const char *dir, const char *id);
/* Adds the URIs changed since the last look to changed (an array); their count. */
int mcp__res_watch_changed(struct mcp_res_watch *w, json_object *changed);
void mcp__res_watch_free(struct mcp_res_watch *w);
/* notifications/resources/updated of uri (new). */
json_object *mcp__res_updated(const char *uri);

/* One tools/call being served, of either revision (mcp_call.c). */
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
    bool is_2026;                 /* 2026-07-28: a closed stream is a cancel */
    int64_t last_probe_ms;        /* CGI: the last padded write that looks for a gone client */
    bool can_ask;                 /* the client takes elicitation/create on this call's stream */
    json_object *input_responses; /* 2026-07-28: the request's inputResponses, its requestState opened, */
    json_object *request_state;   /* the client's capabilities (all borrowed, NULL: none): the tools' */
    json_object *client_caps;     /* (tools_ctx), a task's runner's too */
};

/* ------------------------------------- multi round-trip requests (mcp_input.c) */

#define MCP_STATE_MAX (64 * 1024) /* bytes of a requestState's JSON */
struct mcp_2026_req;
/* state (borrowed) sealed for the client: "rs1.HEX(JSON).HEX(HMAC)" under
 * the server's key (new string, caller frees), or NULL. */
char *mcp__state_seal(const struct cfg *cfg, json_object *state);
/* A sealed requestState opened: 0 with *state (caller puts); -EBADMSG when
 * it fails its check (changed, not ours); another -errno. */
int mcp__state_open(const struct cfg *cfg, const char *token, json_object **state) must_check;
/* The request's inputResponses (borrowed; each must be an object) and its
 * requestState opened (*state: caller puts): 0, or a negative errno once
 * m has been answered (-32602, or -32603 when the key cannot be read). */
int mcp__input_params(struct mcp_2026_req *m, json_object **responses, json_object **state) must_check;
/* An InputRequiredResult's requestState (any JSON a tool or a prompt put
 * there) sealed in place; other results are left alone. 0 or -errno. */
int mcp__input_seal(const struct cfg *cfg, json_object *result) must_check;

/* The id of the elicitation/create request that asks the client the
 * question n of the run run_id of the call key: "runmyscript-ask:N:KEY:RUNID"
 * into out (len bytes). */
#define MCP_ASK_ID_MAX (32 + 64 + WS_ID_MAX + 8)
void mcp__ask_id(char *out, size_t len, unsigned n, const char *key, const char *run_id);
/* The elicitation/create request (new object) for version's client: the
 * prompt as its message, a schema of one string field, "answer"; with id
 * NULL, 2026-07-28's input request (method and params alone). */
json_object *mcp__ask_request(const char *version, const char *id, const char *prompt);
/* The line of input an elicitation's result (borrowed, may be NULL) gives:
 * accept's content.answer (borrowed, *len bytes), or NULL (declined,
 * cancelled, malformed, longer than EXEC_ANSWER_MAX): its input is closed. */
const char *mcp__ask_answer(json_object *result, size_t *len);
/* A tool's own request to the client in a legacy session (tools_ctx.ask):
 * the JSON-RPC request (new) for input request name (its key in the tool's
 * requests: letters, digits, _ and -) of request {method, params}, of the
 * call key; NULL for a name that cannot be one. */
json_object *mcp__req_message(const char *key, const char *name, json_object *request);
/* The client's responses to every request of requests (borrowed) of the
 * call key, once all came (1, *responses new: each the response's result,
 * or its error), taken away; 0 while some are missing; -errno. */
int mcp__req_replies(const char *session_dir, const char *key, json_object *requests, json_object **responses);
/* A client's response to one of our requests (a legacy session's):
 * an elicitation/create's answer, accept with content.answer, becomes the
 * answer to the script's question (exec_answer), anything else (decline,
 * cancel, an error) closes its input. Checked against the session: only a
 * run that a call of its own has in flight. Unknown ids are ignored. */
void mcp__ask_response(const struct app *app, const char *session_dir, json_object *id, json_object *msg);

/* The tools' view of c: its callbacks send notifications/progress (only
 * with a progressToken, and only growing) and notifications/message (at or
 * above the session's level), poll the client's cancel (a marker from any
 * worker), the server's shutdown and, with cancel_on_disconnect, a gone
 * client, and record the call's run so that a cancel finds it. */
void mcp__call_tools_ctx(struct mcp_call *c, struct tools_ctx *t);
/* The tools' view of c (the configuration, the executor, its session or
 * workspace, its revision, the base of artifact links) with the callbacks
 * of callbacks (the rest of it is not read), called with ctx: one
 * builder for a call served on its stream and a task's runner. */
void mcp__tools_ctx(const struct mcp_call *c, void *ctx, const struct tools_ctx *callbacks, struct tools_ctx *t);
/* Calls tool through t as c, which is "in flight" meanwhile: calls/KEY of
 * c's session or workspace, if it has one, says so (the reaper leaves the
 * session alone; a cancel finds the run through it), and is gone after,
 * with cancel/KEY. It makes and frees no inode: it is a second name, first
 * of calls/.flight (empty: no run yet), then of the session's runs/RUNID.
 * On a file system without a journal the allocator skips, for a minute and
 * more, every inode freed: one made and freed per call slows every later
 * file made. */
enum tools_outcome mcp__call_tool(struct mcp_call *c, const struct tools_ctx *t, const char *tool, json_object *args,
                                  json_object **result);
/* Records c's run: runs/RUNID of its session or workspace (removed with
 * it), which holds the id, calls/KEY a name of it (where a cancel finds
 * the run), and applies a cancel that came first. */
void mcp__call_set_run(struct mcp_call *c, const char *run_id);
/* The notifications of c (new, caller puts), or NULL when none is due:
 * progress only with a progressToken and only growing (it records the
 * value); a log line only at or above c's level (text sanitised to UTF-8). */
json_object *mcp__progress_msg(struct mcp_call *c, double progress, double total, const char *message);
json_object *mcp__log_msg(const struct mcp_call *c, enum tools_level level, const char *logger, const char *text,
                          size_t len);

/* The 2026-07-28 revision. */
#define MCP_EXT_TASKS "io.modelcontextprotocol/tasks" /* the tasks extension's identifier */
#define MCP_LOG_NONE ((enum tools_level)(TOOLS_LOG_EMERGENCY + 1)) /* no log notifications at all */

/* One 2026-07-28 request being served (mcp_2026.c, mcp_2026_call.c,
 * mcp_task.c). */
struct mcp_2026_req {
    const struct app *app;
    struct http_req *req;
    struct http_resp *resp;
    json_object *msg;      /* the body (borrowed, as are the next four) */
    json_object *id;       /* the request's id */
    json_object *params;   /* its params, or NULL */
    json_object *meta;     /* params._meta */
    json_object *caps;     /* _meta's clientCapabilities (an object) */
    const char *method;
    bool want_sse;         /* the client accepts text/event-stream */
    bool sse_open;         /* the answer is an event stream, started */
    bool headerless;       /* no HTTP headers (stdio): none to check against the body */
};

/* prompts/list and prompts/get for revision version (mcp_prompt.c;
 * params borrowed, may be NULL): 0 with *result (new, caller puts), or a
 * JSON-RPC error code (-32602 the caller's mistake, -32601 no such
 * method, -32603 the service failed) with its message in msg; responses:
 * 2026-07-28's inputResponses (borrowed, checked), or NULL. */
int mcp__prompts(const struct cfg *cfg, const char *version, const char *method, json_object *params,
                 json_object *responses, json_object **result, char *msg, size_t msglen) must_check;

/* The answers of the 2026-07-28 revision (mcp_2026_answer.c). Adds
 * resultType "complete" (unless it has one) and _meta's serverInfo to
 * result; returns it. */
json_object *mcp__2026_complete(json_object *result);
/* The answer to m's request (result stolen, completed) or an error (data
 * stolen), as one JSON body or on the stream m has open. */
void mcp__2026_answer(struct mcp_2026_req *m, json_object *result);
void mcp__2026_error(struct mcp_2026_req *m, int status, int code, const char *message, json_object *data);
/* Answers 400 -32021 MissingRequiredClientCapability with
 * data.requiredCapabilities naming capability, or (NULL) the tasks
 * extension. */
void mcp__missing_capability(struct mcp_2026_req *m, const char *capability, const char *message);
/* True when the client's capabilities (may be NULL) declare extension. */
bool mcp__client_has(json_object *caps, const char *extension);
/* Adds the workspace handle to a tool's result: structuredContent.workspace
 * and a text block. */
void mcp__result_add_workspace(json_object *result, const char *wid);

/* The tasks extension (mcp_task.c). Whether m's tools/call of tool becomes
 * a task: 1 (then *delay_ms says after how long; 0: at once), 0 (served as
 * it comes), -1 (a tool that must run as a task and the client did not
 * declare the extension: the -32021 error is sent). */
int mcp__task_mode(struct mcp_2026_req *m, const char *tool, int64_t *delay_ms);
/* mcp__task_call's delay for a call whose script may ask (a client of
 * 2026-07-28 that declares elicitation, without the tasks extension): the
 * run is a task no one is told of, and the call is answered when it ends,
 * or with an InputRequiredResult when its script asks (multi round-trip
 * requests; the run goes on, within input_wait). */
#define MCP_TASK_ROUNDS (-1)
/* A call again with the requestState of such an answer (state: opened;
 * tool: the call's): its responses recorded (the script's answer), then
 * answered as the first call was. 0 when state names no task (the tool's
 * own state); 1 when m is answered (-32602 for another tool's state, or a
 * task that is gone). */
int mcp__task_resume(struct mcp_2026_req *m, const char *tool, json_object *state, json_object *responses);
/* Serves m's tools/call as a task: the run goes on in a process of its own;
 * the stream carries its notifications until it ends (then its result) or
 * task_after passes (then the task's handle). c is the call's (its level,
 * token, key); args borrowed; wid the workspace's handle or NULL. 0: m is
 * answered; -EDQUOT: max_tasks are kept, nothing is made and m is not
 * answered. */
int mcp__task_call(struct mcp_2026_req *m, struct mcp_call *c, const char *tool, json_object *args, const char *wid,
                   int64_t delay_ms);
/* True while the process that runs the task in dir (STATE/tasks/TID)
 * holds its lock. */
bool mcp__task_alive(const char *dir);
/* True for a method of the tasks extension we serve (tasks/get, ...). */
bool mcp__task_method(const char *method);
/* Serves it (the client declared the extension). */
void mcp__task_serve(struct mcp_2026_req *m);
/* The task tid as a subscription sees it: its id (into id, WS_ID_MAX + 1
 * bytes), when it last changed, whether it has ended (a task whose process
 * died is marked failed first), and when view is not NULL the task as
 * tasks/get shows it (new, caller puts). 0, -ENOENT (no such task, or
 * reaped), other -errno. */
int mcp__task_look(const struct cfg *cfg, const char *tid, char *id, int64_t *updated_ms, bool *ended,
                   json_object **view) must_check;

/* subscriptions/listen (mcp_listen.c): an acknowledgement, then
 * notifications/tasks for the followed tasks (notifications.taskIds, with
 * the extension) until they have all ended; nothing else here ever
 * changes. In serve the stream process carries it after the first look
 * (mcp_listen_kind, mcp.h); elsewhere the worker (or CGI process) does. */
void mcp__listen(struct mcp_2026_req *m);

/* tools/call in the 2026-07-28 revision (mcp_2026_call.c): the workspace
 * handle, the log level and progress token of _meta, a stream whose closing
 * cancels the run; a task instead when the client declared the tasks
 * extension and the call becomes one. */
void mcp__2026_call(struct mcp_2026_req *m);

/* The 2026-07-28 revision's requests (mcp_2026.c). True when msg (a POST's body) and
 * the request's headers speak it: its _meta names a revision that is not a
 * legacy one, or MCP-Protocol-Version is present and not a legacy one. */
bool mcp__is_2026(const struct http_req *req, json_object *msg);
/* Serves one 2026-07-28 POST whose body is msg (borrowed): the transport
 * rules, then server/discover, tools/list, tools/call and the tasks.
 * headerless: a message that came without HTTP (stdio), which has no
 * headers to mirror the body, so their rules do not apply. */
void mcp__2026_post(const struct app *app, struct http_req *req, struct http_resp *resp, json_object *msg,
                    bool want_sse, bool headerless);

/* One request of a legacy revision being served (mcp_2025.c,
 * mcp_2025_call.c). */
struct mcp_2025_req {
    const struct app *app;
    struct http_req *req;
    struct http_resp *resp;
    struct mcp_session s;  /* the request's session, once loaded */
    bool want_sse;         /* the client accepts text/event-stream */
};

/* tools/call of p's session (mcp_2025_call.c). Returns the response, or
 * NULL when nothing must be sent (the client cancelled the call). sse: the
 * stream is open, and the call's notifications go on it. */
json_object *mcp__2025_call(struct mcp_2025_req *p, json_object *id, json_object *params, bool sse);

/* The door (mcp.c): one POST's transport checked, its body read and handed
 * to its revision; headerless as mcp__2026_post has it. mcp_handle serves
 * an HTTP request with it, mcp_stdio.c each message of stdio. */
void mcp__post(const struct app *app, struct http_req *req, struct http_resp *resp, bool headerless);

/* The legacy revisions (mcp_2025.c). Serves one POST whose body is msg
 * (borrowed): one message or a batch, initialize or a request, a
 * notification or a response of a session; serves DELETE, which ends the
 * request's session. */
void mcp__2025_post(const struct app *app, struct http_req *req, struct http_resp *resp, json_object *msg,
                    bool want_sse);
void mcp__2025_delete(const struct app *app, struct http_req *req, struct http_resp *resp);

#endif
