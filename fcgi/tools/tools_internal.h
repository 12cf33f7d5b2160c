/* tools_internal.h: what the parts of the tools module share: the table's
 * entry, the schemas built into the program (tools_schemas.c, generated from
 * fcgi/tools/schemas/), the result and argument helpers, and each tool's entry
 * point (tools_run.c, tools_ws.c, tools_xfer.c, tools_fixture.c). A tool
 * returns 0 with *result, -ECANCELED when the client cancelled the call, or
 * another -errno when the service failed (tools_call makes the outcome). */
#ifndef RMS_TOOLS_INTERNAL_H
#define RMS_TOOLS_INTERNAL_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "executor.h"
#include "http.h"
#include "tools.h"
#include "util.h"

/* A tool's work: 0 with *result (an isError one for the caller's mistakes),
 * -ECANCELED when the client cancelled, another -errno when it failed. */
typedef int tools__fn(const struct tools_ctx *c, json_object *args, json_object **result);

/* One tool of tools/list. */
struct tools_def {
    const char *name, *title, *description;
    const char *input, *output; /* JSON Schema text; output may be NULL */
    tools__fn *call;            /* NULL: a fixture tool (tools__fixture_call) */
    bool read_only;
    bool open_world;            /* talks to the outside (and is idempotent) */
    const char *description_2026; /* in 2026-07-28, which has workspace handles, not
                                   * sessions; NULL: description */
};

/* The conformance suite's fixture tools: tools_fixture.c in the test
 * program, none (tools_nofixture.c) in the one that is installed. */
extern const struct tools_def tools__fixture_defs[];
extern const size_t tools__n_fixture_defs;
/* Calls the fixture tool name (one of tools__fixture_defs), as a tools__fn. */
int tools__fixture_call(const struct tools_ctx *c, const char *name, json_object *args, json_object **result) must_check;
/* Whether fixture tool name runs as a task (tools_task_support), and the
 * client capability it needs (tools_needs_capability). */
enum tools_task tools__fixture_task(const char *name);
/* The fixture resources and templates (added to arr), a fixture resource
 * read (0, -ENOENT), a fixture prompt's completions (0, -ENOENT). */
void tools__fixture_resources(json_object *arr);
void tools__fixture_templates(json_object *arr);
int tools__fixture_read(const char *uri, json_object **result) must_check;
int tools__fixture_complete(const char *prompt, const char *arg, const char *value, json_object **values) must_check;
const char *tools__fixture_needs(const char *name);
bool tools__fixture_gathers(const char *name);

/* One prompt of prompts/list (tools_prompt.c): its arguments (at most
 * TOOLS_PROMPT_ARGS, the unused ones with name NULL), checked before get
 * runs; get appends the messages to messages and returns 0 or -errno. */
#define TOOLS_PROMPT_ARGS 3
/* The executed notebook of a run_code or run_my_script with notebook: true,
 * in output/ (not notebook.ipynb, which is a kernel's cells). */
#define TOOLS_NOTEBOOK_NAME "executed.ipynb"
struct tools_prompt_def {
    const char *name, *title, *description;
    struct {
        const char *name, *description;
        bool required;
    } args[TOOLS_PROMPT_ARGS];
    int (*get)(const char *version, json_object *args, json_object *messages);
    /* Optional: the inputRequests (new) a prompt still needs, given the
     * client's responses (NULL: none); NULL when it has what it needs. */
    json_object *(*needs)(json_object *responses);
};
/* The conformance suite's fixture prompts: tools_fixture.c in the test
 * program, none in the one that is installed. */
extern const struct tools_prompt_def tools__fixture_prompts[];
extern const size_t tools__n_fixture_prompts;

/* A short hint for the model about run r, into buf (len bytes), or NULL
 * when none helps (tools_hint.c); data_dir is the configuration's (whose
 * import map names a missing module's package; NULL: the built-in map). */
#define TOOLS_HINT_MAX 512
const char *tools__hint(const char *data_dir, const struct result *r, char *buf, size_t len);

/* fcgi/tools/schemas/NAME.json, as generated. */
extern const char tools__schema_run_output[], tools__schema_run_code_input[], tools__schema_run_my_script_input[],
    tools__schema_list_dir_input[], tools__schema_list_dir_output[], tools__schema_preview_file_input[],
    tools__schema_preview_file_output[], tools__schema_mount_file_input[], tools__schema_mount_file_output[], tools__schema_write_file_input[],
    tools__schema_persist_artifact_input[], tools__schema_persist_artifact_output[], tools__schema_empty_input[],
    tools__schema_run_cell_input[], tools__schema_run_cell_output[], tools__schema_reset_kernel_output[],
    tools__schema_reset_kernel_input[], tools__schema_save_kernel_output[];

/* Results (new objects). */
json_object *tools__text_block(const char *s, size_t n);
/* content [text], isError; steals structured (may be NULL). */
json_object *tools__simple_result(const char *text, bool is_error, json_object *structured);
/* An isError result whose text is the formatted message. */
#define tools__arg_error tools_error_result
/* An isError result naming the first argument not in known (NULL-ended),
 * or NULL when all are known. */
json_object *tools__check_known(json_object *args, const char *const *known, const char *tool);
/* The argument key (borrowed), NULL when missing or null. */
json_object *tools__get_arg(json_object *args, const char *key);

/* One entry of run_code's files: borrowed from the arguments. */
struct file_arg {
    const char *url, *path;
};

/* The tools. */
int tools__run_code(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__run_my_script(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__run_cell(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__reset_kernel(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__save_kernel(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__list_dir(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__preview_file(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__mount_file(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__write_file(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
int tools__persist_artifact(const struct tools_ctx *c, json_object *args, json_object **result) must_check;
/* run_code's files, into the session's mounts/ before the run. 0 with
 * *result NULL when all are there; 0 with an isError *result when one
 * failed (nothing runs); -ECANCELED or another -errno. */
int tools__mount_files(const struct tools_ctx *c, const struct file_arg *files, size_t n_files,
                       json_object **result) must_check;

/* The caller's callbacks (struct tools_ctx). */
static inline void tools__progress(const struct tools_ctx *c, double progress, double total, const char *message)
{
    c->progress(c->ctx, progress, total, message);
}
/* A log line to the client: the server's paths in it (the installer's
 * lines, a traceback in the fallback) written as STATE and WHEELHOUSE. */
static inline void tools__log(const struct tools_ctx *c, enum tools_level level, const char *logger, const char *text,
                              size_t len)
{
    size_t n = 0;
    char *clean = result_redact(text, len, &c->cfg->exec, &n);
    c->log(c->ctx, level, logger, clean ? clean : text, clean ? n : len);
    free(clean);
}
static inline bool tools__cancelled(const struct tools_ctx *c)
{
    return c->cancelled(c->ctx);
}
static inline bool tools__client_cancelled(const struct tools_ctx *c)
{
    return c->client_cancelled(c->ctx);
}
static inline void tools__set_run(const struct tools_ctx *c, const char *run_id)
{
    c->set_run(c->ctx, run_id);
}

#endif
