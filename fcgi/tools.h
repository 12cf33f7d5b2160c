/* tools.h: the MCP tools: their table (names, descriptions, the JSON
 * schemas built into the program from fcgi/schemas/), argument checks, and
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

#define TOOLS_MAX_REQUIREMENTS DEPS_MAX_REQUIREMENTS /* entries of run_code's requirements (64) */
#define TOOLS_REQUIREMENT_MAX DEPS_SPEC_MAX          /* bytes of one requirement (512) */
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
    void *ctx;                    /* passed to the callbacks */
    /* A progress notification (dropped unless progress grows). */
    void (*progress)(void *ctx, double progress, double total, const char *message);
    /* A log notification; text[0..len) is sanitised to UTF-8 there. */
    void (*log)(void *ctx, enum tools_level level, const char *logger, const char *text, size_t len);
    /* Polled while a tool works: true stops it (the client cancelled, the
     * server stops). Also keeps the stream alive. */
    bool (*cancelled)(void *ctx);
    /* True when the client itself cancelled the call (send nothing). */
    bool (*client_cancelled)(void *ctx);
    /* The call's run is known: a cancel from another worker can find it. */
    void (*set_run)(void *ctx, const char *run_id);
};

/* The tools array of tools/list for a session of revision version (new
 * object, caller puts). Fixture tools only in a program built with them
 * (tests/runmyscript-test) and with test_fixture_tools on. */
json_object *tools_list(const struct cfg *cfg, const char *version);

/* The instructions of the initialize result (static). */
const char *tools_instructions(void);

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

/* The JSON Schema of a tool's output as tools/list serves it (new object,
 * caller puts), or NULL for a tool without one or an unknown tool. */
json_object *tools_output_schema(const struct cfg *cfg, const char *name);

#endif
