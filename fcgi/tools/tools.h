/* tools.h: the MCP tools: their table (names, descriptions, the JSON
 * schemas built into the program from fcgi/tools/schemas/), argument checks, and
 * the work: exec_run for the script tools, the session's workspace for
 * list_dir and preview_file, the transfers for mount_file, run_code's
 * files and persist_artifact. A tool sees its caller only through struct
 * tools_ctx: it knows nothing of JSON-RPC or of the stream it reports on. */
#ifndef RMS_TOOLS_H
#define RMS_TOOLS_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "app_ctx.h"
#include "cfg.h"

#define TOOLS_MAX_REQUIREMENTS EXEC_MAX_REQUIREMENTS /* entries of run_code's requirements (64) */
#define TOOLS_REQUIREMENT_MAX EXEC_REQUIREMENT_MAX          /* bytes of one requirement (512) */
#define TOOLS_NETWORK_MAX 16384 /* bytes of a call's network (its list of hosts) */
#define TOOLS_LIST_DIR_MAX 1000      /* entries list_dir returns */
#define TOOLS_TEXT_LOG_MAX (32 << 10) /* bytes of log in the text block */

/* RFC 5424 levels, as MCP names them, in ascending order: what a tool's
 * log notifications carry. */
enum tools_level {
    TOOLS_LOG_DEBUG, TOOLS_LOG_INFO, TOOLS_LOG_NOTICE, TOOLS_LOG_WARNING,
    TOOLS_LOG_ERROR, TOOLS_LOG_CRITICAL, TOOLS_LOG_ALERT, TOOLS_LOG_EMERGENCY,
};

/* What a tool is given for one call. The callbacks are the caller's (MCP's
 * tools/call); every one must be set, and is called on the caller's thread. */
struct tools_ctx {
    const struct cfg *cfg;
    const struct app_exec *exec;  /* the executor (app_exec_of) */
    const char *session_dir;      /* STATE/sessions/SID */
    const char *version;          /* the session's negotiated revision */
    const char *base_url;         /* scheme://host of artifact links, "" unknown */
    bool local;                   /* over stdio: the client is a local user on this machine, whose links are the
                                   * files themselves (file:// URLs, paths), who may see the server's paths, and
                                   * whose mount_file takes file:// URLs beneath mount_root */
    void *ctx;                    /* passed to the callbacks */
    /* A progress notification (dropped unless progress grows). */
    void (*progress)(void *ctx, double progress, double total, const char *message);
    /* A log notification; text[0..len) is sanitised to UTF-8 there. */
    void (*log)(void *ctx, enum tools_level level, const char *logger, const char *text, size_t len);
    /* Polled while a tool works: true stops it (the client cancelled, the
     * server stops). Also keeps the stream alive. */
    bool (*cancelled)(void *ctx);
    /* Why the tool was stopped when the client did not ask (the server
     * stopping), a clause; NULL: nothing to add. This one may be NULL. */
    const char *(*cancel_reason)(void *ctx);
    /* True when the client itself cancelled the call (send nothing). */
    bool (*client_cancelled)(void *ctx);
    /* The call's run is known: a cancel from another worker can find it. */
    void (*set_run)(void *ctx, const char *run_id);
    /* Asks the client for input (requests: an inputRequests object of the
     * tasks extension, borrowed) and waits for all of its answers
     * (*responses: new, caller puts). 0; -ECANCELED; -ENOTSUP where the
     * call cannot ask (it is no task). NULL: cannot ask either. */
    int (*ask)(void *ctx, json_object *requests, json_object **responses);
    /* The script of the call's run (run_id) asks its user, question n,
     * prompt its last line (exec_sink.question): the client is asked, and
     * its answer goes to exec_answer from whichever worker takes it. NULL:
     * the client cannot be asked, and the script reads EOF past its input. */
    void (*question)(void *ctx, const char *run_id, unsigned n, const char *prompt);
    /* 2026-07-28's multi round-trip requests: the call's inputResponses
     * (an object of objects) and its requestState as the tool left it
     * (opened, its integrity checked), both borrowed, NULL when the call
     * has none; and the client's capabilities (may be NULL). A tool that
     * needs input answers {"resultType": "input_required", "inputRequests",
     * "requestState": any JSON} (tools_input_required), which the door
     * seals. */
    json_object *input_responses;
    json_object *request_state;
    json_object *client_caps;
};

/* Whether a tool's call may become a task (the tasks extension of
 * 2026-07-28): never; when the run is still going after task_after (the
 * script tools); at once; at once, and the client must declare the
 * extension (the fixtures of the conformance suite use the last two). */
enum tools_task { TOOLS_TASK_NEVER, TOOLS_TASK_AFTER, TOOLS_TASK_AT_ONCE, TOOLS_TASK_REQUIRED };
enum tools_task tools_task_support(const struct cfg *cfg, const char *name);
/* Whether a task tool asks the client for its input in rounds
 * (InputRequiredResult) before it becomes a task: called without
 * inputResponses it answers at once. None of ours; a fixture does. */
bool tools_task_gathers(const struct cfg *cfg, const char *name);
/* Whether the tool runs a script that may ask its user (run_code,
 * run_my_script; run_cell's kernel does not). */
bool tools_may_ask(const char *name);
/* The client capability a tool cannot work without ("sampling"), or NULL:
 * a 2026-07-28 client that does not declare it gets -32021. None of ours
 * needs one; a fixture of the conformance suite does. */
const char *tools_needs_capability(const struct cfg *cfg, const char *name);

#define MCP_REVISION_2026 "2026-07-28"          /* the revision without sessions */
#define TOOLS_DELETE_WORKSPACE "delete_workspace" /* its tool that ends a workspace */

/* The tools array of tools/list for revision version (new object, caller
 * puts); in the same order every time. Fixture tools only in a program
 * built with them (tests/runmyscript-test) and with test_fixture_tools on.
 * For 2026-07-28 the workspace tools take a workspace argument (with
 * x-mcp-header Workspace) and delete_workspace is listed. */
json_object *tools_list(const struct cfg *cfg, const char *version);

/* For the door's own answers (a refusal before a tool runs,
 * delete_workspace): a text block (new); a result of one text block with
 * isError (new); the same with a formatted text; the argument key of args
 * (borrowed; NULL when missing or null); whether tools_call knows name. */
json_object *tools_text(const char *s, size_t n);
json_object *tools_text_result(const char *text, bool is_error);
json_object *tools_error_result(const char *fmt, ...) printf_like(1, 2);
/* A 2026-07-28 InputRequiredResult (new): requests (an object of input
 * requests, stolen) and state (any JSON, stolen; NULL: none), which the
 * door seals into requestState. */
json_object *tools_input_required(json_object *requests, json_object *state);
json_object *tools_arg(json_object *args, const char *key);
bool tools_known(const struct cfg *cfg, const char *name);

/* How a tool uses a workspace in the 2026-07-28 revision: not at all, makes
 * one when the call names none (run_code, mount_file), or needs one. */
enum tools_ws_use { TOOLS_WS_NONE, TOOLS_WS_MAKE, TOOLS_WS_NEED };
enum tools_ws_use tools_workspace_use(const char *name);

/* The instructions of the initialize result, and of server/discover
 * (workspace handles instead of a session) (static). */
const char *tools_instructions(void);
const char *tools_instructions_2026(void);

/* The prompts (tools_prompt.c). TOOLS_PROMPT_ARG_MAX is the bytes of one
 * argument prompts/get takes. tools_prompts_list: prompts/list's array
 * (new, caller puts), the fixture prompts too in the test program with
 * test_fixture_tools on. tools_prompt_get: prompts/get's result for
 * revision version (new in *result, caller puts; responses: 2026-07-28's
 * inputResponses, borrowed, or NULL; a prompt that needs input answers an
 * InputRequiredResult, tools_input_required): 0; -ENOENT for a prompt
 * we do not have, -EINVAL for arguments that do not fit it (both the
 * caller's mistake, said in err); another -errno when the service failed. */
#define TOOLS_PROMPT_ARG_MAX 65536
json_object *tools_prompts_list(const struct cfg *cfg);
/* Whether prompts/get knows the prompt name and it takes the argument arg
 * (completion/complete answers only for those). */
bool tools_prompt_has_arg(const struct cfg *cfg, const char *name, const char *arg);
int tools_prompt_get(const struct cfg *cfg, const char *version, const char *name, json_object *args,
                     json_object *responses, json_object **result, char *err, size_t errlen) must_check;

/* What came of a call. */
enum tools_outcome {
    TOOLS_RESULT,     /* *result is a CallToolResult (a tool that failed, or
                       * bad arguments, is a result with isError true) */
    TOOLS_UNKNOWN,    /* there is no tool of that name: *result is NULL */
    TOOLS_CANCELLED,  /* the client cancelled the call: send nothing */
    TOOLS_FAILED,     /* the service failed; *result may hold the sandbox_error
                       * result JSON for the error's data (caller puts) */
};

/* Calls the tool name with args (an object, or NULL). */
enum tools_outcome tools_call(const struct tools_ctx *t, const char *name, json_object *args,
                              json_object **result) must_check;

/* Resources: a workspace's files, workspace://ID/PATH (tools_res.c), with
 * the guards of preview_file and /artifacts/ (beneath the workspace, no
 * symlink followed, a regular file with one link). */
#define TOOLS_RES_LIST_MAX 1000        /* files resources/list names of a workspace */
#define TOOLS_RES_READ_MAX (16 << 20)  /* bytes of a file resources/read returns */
#define TOOLS_COMPLETE_MAX 100         /* values of one completion (the protocol's own cap) */
/* The workspace ID (into id) and the path (*rel, borrowed from uri) of a
 * workspace:// URI: 0, or -ENOENT for a URI that is not one (or whose path
 * is not safe: ws_rel_path_ok). */
int tools_resource_parse(const char *uri, char id[WS_ID_MAX + 1], const char **rel) must_check;
/* resources/list's array (new): the fixtures (the test program, with
 * test_fixture_tools on), then the files of the workspace of dir
 * (STATE/sessions/SID or STATE/workspaces/WID, whose id is id; NULL: none),
 * at most TOOLS_RES_LIST_MAX, in the order of the walk. */
json_object *tools_resources(const struct cfg *cfg, const char *dir, const char *id);
/* resources/templates/list's array (new). */
json_object *tools_resource_templates(const struct cfg *cfg);
/* resources/read of uri, the file rel of dir's workspace: *result is a
 * ReadResourceResult (new, caller puts): text when the file is UTF-8
 * without NUL, else a base64 blob. 0; -ENOENT (no such file, or one the
 * guards refuse); -EFBIG (over TOOLS_RES_READ_MAX); other -errno. */
int tools_resource_read(const char *dir, const char *uri, const char *rel, json_object **result) must_check;
/* The same for a fixture's URI: 0, or -ENOENT. */
int tools_resource_fixture(const struct cfg *cfg, const char *uri, json_object **result) must_check;
/* The paths of dir's workspace (files, as resources name them) that begin
 * with prefix: *values (new array, caller puts; at most TOOLS_COMPLETE_MAX),
 * *more when there were more. 0 or -errno. */
int tools_complete_path(const char *dir, const char *prefix, json_object **values, bool *more) must_check;
/* The packages the import map knows (exec_packages_each) whose name or
 * import name begins with prefix: as tools_complete_path. */
int tools_complete_package(const struct cfg *cfg, const char *prefix, json_object **values, bool *more) must_check;
/* The fixture completions of a prompt's argument (the test program):
 * *values (new, caller puts), or -ENOENT for a prompt it does not know. */
int tools_complete_fixture(const struct cfg *cfg, const char *prompt, const char *arg, const char *value,
                           json_object **values) must_check;

/* The JSON Schema of a tool's output as tools/list serves it (new object,
 * caller puts), or NULL for a tool without one or an unknown tool. */
json_object *tools_output_schema(const struct cfg *cfg, const char *name);

#endif
