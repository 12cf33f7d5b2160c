/* tools.c: the MCP tool table (names, descriptions, annotations, the
 * schemas built from fcgi/tools/schemas/ with the server's limits patched in),
 * tools/list and the call dispatch. The tools themselves: tools_run.c,
 * tools_ws.c, tools_xfer.c, and the test program's tools_fixture.c; the
 * helpers their results are made with: tools_result.c. */
#include "config.h"

#include "tools_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- the table */

/* The instructions, in two versions where the revisions differ: a legacy
 * session is the workspace; 2026-07-28 has none, and a workspace is a
 * handle the calls pass. */
#define INSTRUCTIONS(WORK_IN_STEPS, LOOK_AT, TAIL) \
    "runmyscript runs self-contained Python 3 scripts in a throw-away sandbox and returns the log and every " \
    "file the script wrote.\n" \
    "- Use run_code for work in steps: " WORK_IN_STEPS " Use run_my_script for a one-off run in a fresh, " \
    "empty directory.\n" \
    "- Write result files (plots, CSV, JSON, images, reports) into the directory named by the environment " \
    "variable SCRIPT_OUTPUT: each one comes back as an artifact with a download link, a MIME type and a " \
    "one-line summary, and all of them as one zip. Small images also come back inline.\n" \
    "- Pass data with the input argument (run_code) or user_input (run_my_script): the script reads it from " \
    "the file at os.environ['SCRIPT_INPUT'] (and from stdin). Past that input, the script's input() asks the " \
    "user through your client when it answers elicitation (the prompt is the question); else it reads EOF.\n" \
    "- Third-party packages: list them in requirements (run_code), or just import them: the server detects " \
    "imports (and a PEP 723 `# /// script` block) and installs what is missing once, then reuses the cached " \
    "environment. A package that cannot be installed returns status install_failed with the installer's " \
    "reason.\n" \
    "- Scripts have no network access while they run, unless this server allows some hosts: then they reach " \
    "only those (never the server's own, private or link-local addresses), a refused host fails at once, and " \
    "the result's network lists what was reached and what was refused. The network argument narrows it for " \
    "one call: \"off\", or the hosts the script needs.\n" \
    "- A failing script (exception, non-zero exit, timeout, memory or output limit) returns isError true with " \
    "the status and the full log: read the traceback, fix the code and call again.\n" \
    "- list_dir and preview_file look at " LOOK_AT " (for example list_dir('output')) without running code.\n" \
    "- Where tools/list has run_cell, the workspace also has a kernel: one Python that stays alive, so that names " \
    "one cell defines (variables, functions, imports, a DataFrame loaded once) are there in the next run_cell, " \
    "and the value of a cell's last expression comes back; reset_kernel drops the names and keeps the files.\n" \
    "- Remote input files: mount_file(url, mount_path), or files=[{url, mountPath}] in run_code, downloads " \
    "them into the workspace's mounts/ folder (read-only to scripts: open('mounts/' + mount_path)). To keep " \
    "an output file, persist_artifact(relative_path, presigned_url) uploads it from output/ with an HTTP PUT." TAIL

static const char instructions[] = INSTRUCTIONS(
    "each call runs in this session's workspace, so files written by one call (in the current directory) are "
    "there for the next.",
    "the session's workspace", "");
static const char instructions_2026[] = INSTRUCTIONS(
    "the first call makes a workspace and returns its handle (structuredContent.workspace); pass it as "
    "workspace to the next calls (run_code, list_dir, preview_file, mount_file, persist_artifact), and the "
    "files one call wrote (in the current directory) are there for the next. A call without it starts a new, "
    "empty workspace.",
    "a workspace (its handle as workspace)",
    "\n- delete_workspace removes a workspace and its files when the work is done.");

const char *tools_instructions(void)
{
    return instructions;
}

const char *tools_instructions_2026(void)
{
    return instructions_2026;
}

static const struct tools_def defs[] = {
    {"run_code", "Run Python code",
     "Run a self-contained Python 3 script in a throw-away sandbox and get back its log and every file it "
     "wrote. The script runs in this session's workspace (the current directory), which persists between "
     "calls of the session, so work can go in steps. Write result files into the folder named by the "
     "environment variable SCRIPT_OUTPUT: each comes back as an artifact with a download link, a MIME type "
     "and a one-line summary (small images also inline), plus a zip of them all. Pass data with input: the "
     "script reads it from the file at os.environ['SCRIPT_INPUT'] (and stdin). Third-party packages are "
     "installed from requirements and from the script's imports (cached between calls). No network access "
     "while the script runs. A script that fails returns isError true with the status and the full log (the "
     "traceback): fix the code and call again. files downloads remote files into mounts/ first (as "
     "mount_file does).",
     tools__schema_run_code_input, tools__schema_run_output, tools__run_code, false, false,
     "Run a self-contained Python 3 script in a throw-away sandbox and get back its log and every file it "
     "wrote. The script runs in a workspace (the current directory) whose files persist between the calls "
     "that name it: a call without workspace makes a new one and returns its handle in "
     "structuredContent.workspace; pass it as workspace to go on in steps. Write result files into the folder "
     "named by the environment variable SCRIPT_OUTPUT: each comes back as an artifact with a download link, a "
     "MIME type and a one-line summary (small images also inline), plus a zip of them all. Pass data with "
     "input: the script reads it from the file at os.environ['SCRIPT_INPUT'] (and stdin). Third-party "
     "packages are installed from requirements and from the script's imports (cached between calls). No "
     "network access while the script runs. A script that fails returns isError true with the status and the "
     "full log (the traceback): fix the code and call again. files downloads remote files into mounts/ first "
     "(as mount_file does)."},
    {"run_cell", "Run a notebook cell",
     "Run Python code as the next cell of this workspace's kernel: one Python process that stays alive between "
     "calls, as a Jupyter notebook's does. The names one cell defines are there in the next: variables, "
     "functions, classes, imports, open files, threads it started. So load data once (a CSV into a DataFrame, a "
     "fitted model) and work on it call after call, sending only the new code. The value of the cell's last "
     "expression comes back as text, as a notebook shows it (structuredContent.value, and in the text; a pandas "
     "DataFrame as pandas prints it; None gives nothing); a matplotlib figure left open at the end, or a PIL "
     "image as the last value, comes back as a PNG artifact and inline image. Files in the workspace (the "
     "current directory) persist as for run_code, and a cell's artifacts are the files it created or changed "
     "in SCRIPT_OUTPUT. structuredContent.kernel says whether the kernel is new, kept (the names of the cells "
     "before are there) or restarted (they are gone, the files stay; reason says why), and the cell's number. "
     "A cell past its timeout is interrupted (KeyboardInterrupt) and the kernel keeps its names; past the memory "
     "limit the kernel is killed and the next cell starts a new one, with the files intact. One cell runs at a "
     "time; reset_kernel drops the names. Packages a cell imports are installed and added to the running kernel "
     "(its names stay), unless one needs another version of a package the kernel has: then it restarts. No "
     "network access while it runs. A failing cell returns isError true with the traceback, and the names it had defined before the "
     "error stay.",
     tools__schema_run_cell_input, tools__schema_run_output, tools__run_cell, false, false},
    {"reset_kernel", "Reset the kernel",
     "Stop this workspace's kernel: every name the cells defined (variables, imports, open files, threads) is "
     "gone, the workspace's files stay. The next run_cell starts a new kernel (kernel.state new). A cell "
     "running in it is interrupted first. With to: \"saved\", the next run_cell starts from the state "
     "save_kernel saved (kernel.state restored): a checkpoint to return to.",
     tools__schema_reset_kernel_input, tools__schema_reset_kernel_output, tools__reset_kernel, false, false},
    {"save_kernel", "Save the kernel",
     "Save this workspace's kernel now, between cells, and keep it running: its names (variables, DataFrames, "
     "arrays, functions, classes and their instances, lambdas; each on its own, so one that cannot be saved, "
     "an open file, a socket, a generator, a lock, is listed and the others are kept), the modules its cells "
     "imported and its cells' count, as a file of the workspace. reset_kernel with to: \"saved\" returns to "
     "it, e.g. after a risky cell. A kernel the server stops (idle, room for others, a restart) is saved the "
     "same way by itself, and the next run_cell restores it (kernel.state restored).",
     tools__schema_empty_input, tools__schema_save_kernel_output, tools__save_kernel, false, false},
    {"run_my_script", "Run my script",
     "Run a self-contained Python 3 script in a fresh, empty sandbox (nothing persists between calls), "
     "Run My Script style: user_input becomes the file at os.environ['SCRIPT_INPUT'], every file the script "
     "writes into os.environ['SCRIPT_OUTPUT'] comes back as an artifact with a link and a summary, plus a zip "
     "of them all, and the log holds stdout and stderr. Packages the script imports are installed (cached). "
     "No network access while it runs. A failing script returns isError true with the full log.",
     tools__schema_run_my_script_input, tools__schema_run_output, tools__run_my_script, false, false},
    {"list_dir", "List workspace files",
     "List the files and folders of this session's workspace, where run_code scripts run and leave their "
     "files (output/ holds what they wrote to SCRIPT_OUTPUT). dir_path is relative to the workspace; "
     "symbolic links are listed, never followed.",
     tools__schema_list_dir_input, tools__schema_list_dir_output, tools__list_dir, true, false,
     "List the files and folders of a workspace (workspace: the handle run_code returned), where run_code "
     "scripts run and leave their files (output/ holds what they wrote to SCRIPT_OUTPUT). dir_path is "
     "relative to the workspace; symbolic links are listed, never followed."},
    {"preview_file", "Preview a workspace file",
     "Show the start of a text file in this session's workspace (the first preview_bytes, 8 KiB by default; "
     "a longer file is cut with a note saying so). For a binary file it gives the size and type instead. "
     "relative_path is relative to the workspace, e.g. 'output/result.csv'.",
     tools__schema_preview_file_input, tools__schema_preview_file_output, tools__preview_file, true, false,
     "Show the start of a text file in a workspace (workspace: the handle run_code returned; the first "
     "preview_bytes, 8 KiB by default; a longer file is cut with a note saying so). For a binary file it gives "
     "the size and type instead. relative_path is relative to the workspace, e.g. 'output/result.csv'."},
    {"mount_file", "Mount a remote file",
     "Download a file from an http or https URL into this session's workspace, at mounts/MOUNT_PATH, where "
     "run_code scripts read it (read-only; open('mounts/MOUNT_PATH') from the current directory). Returns "
     "mounted_as, bytes, sha256 and mime. Mounting the same URL to the same path again in the session is a "
     "no-op. Only public addresses are fetched; downloads are capped in size and time. A failure (HTTP "
     "error, timeout, too large, refused address) returns isError true naming the URL and the reason.",
     tools__schema_mount_file_input, tools__schema_mount_file_output, tools__mount_file, false, true,
     "Download a file from an http or https URL into a workspace (workspace: a handle run_code or mount_file "
     "returned; without it a new workspace is made and its handle returned), at mounts/MOUNT_PATH, where "
     "run_code scripts read it (read-only; open('mounts/MOUNT_PATH') from the current directory). Returns "
     "mounted_as, bytes, sha256 and mime. Mounting the same URL to the same path again in the workspace is a "
     "no-op. Only public addresses are fetched; downloads are capped in size and time. A failure (HTTP "
     "error, timeout, too large, refused address) returns isError true naming the URL and the reason."},
    {"write_file", "Write a file into the workspace",
     "Write a file you have (text, or bytes in base64) into this session's workspace, at mounts/PATH, where "
     "run_code scripts read it (read-only; open('mounts/PATH') from the current directory): a CSV, a "
     "spreadsheet, a helper module. Returns mounted_as, bytes, sha256 and mime. Capped in size (write_bytes); "
     "a file already at PATH is replaced. For a file on the web, mount_file fetches it.",
     tools__schema_write_file_input, tools__schema_mount_file_output, tools__write_file, false, false,
     "Write a file you have (text, or bytes in base64) into a workspace (workspace: a handle run_code or "
     "write_file returned; without it a new workspace is made and its handle returned), at mounts/PATH, where "
     "run_code scripts read it (read-only; open('mounts/PATH') from the current directory): a CSV, a "
     "spreadsheet, a helper module. Returns mounted_as, bytes, sha256 and mime. Capped in size (write_bytes); "
     "a file already at PATH is replaced. For a file on the web, mount_file fetches it."},
    {"persist_artifact", "Upload an output file",
     "Upload a file the scripts wrote to output/ (SCRIPT_OUTPUT) with an HTTP PUT to a URL you provide, such "
     "as a presigned upload URL of an object store, so that it outlives the session. relative_path is "
     "relative to output/. Returns uploaded_bytes and the HTTP status. Uploads are capped in size; a failure "
     "returns isError true naming the URL (without its query) and the reason.",
     tools__schema_persist_artifact_input, tools__schema_persist_artifact_output, tools__persist_artifact, false, true,
     "Upload a file the scripts of a workspace (workspace: its handle) wrote to output/ (SCRIPT_OUTPUT) with "
     "an HTTP PUT to a URL you provide, such as a presigned upload URL of an object store, so that it "
     "outlives the workspace. relative_path is relative to output/. Returns uploaded_bytes and the HTTP "
     "status. Uploads are capped in size; a failure returns isError true naming the URL (without its query) "
     "and the reason."},
};

/* The input schema of d, with the values that are not the file's patched
 * in: run_code's and run_cell's timeout maximum (wall_ms) and most files (mount_files),
 * the server's, and its most requirements (the file says 64 too, where
 * json_object_object_add keeps the key's place). */
static json_object *input_schema(const struct cfg *cfg, const struct tools_def *d)
{
    json_object *in = json_tokener_parse(d->input);
    if (strcmp(d->name, "run_code") && strcmp(d->name, "run_cell"))
        return in;
    json_object *props, *timeout, *files, *reqs;
    if (!json_object_object_get_ex(in, "properties", &props))
        return in;
    if (json_object_object_get_ex(props, "timeout", &timeout))
        json_object_object_add(timeout, "maximum", json_object_new_double((double)cfg->exec.limits.wall_ms / 1000.0));
    if (json_object_object_get_ex(props, "files", &files))
        json_object_object_add(files, "maxItems", json_object_new_int64((int64_t)cfg->fetch.limits.mount_files));
    if (json_object_object_get_ex(props, "requirements", &reqs))
        json_object_object_add(reqs, "maxItems", json_object_new_int(TOOLS_MAX_REQUIREMENTS));
    return in;
}

/* The 2026-07-28 revision has no session: a tool that works in a workspace
 * takes its handle, mirrored into the Mcp-Param-Workspace header
 * (x-mcp-header) so that a proxy routes the call to the node that holds it. */
static const char workspace_description[] =
    "The workspace handle an earlier call returned (structuredContent.workspace): its files persist between "
    "calls (and its kernel the names of run_cell's cells). Leave it out of run_code, run_cell, mount_file or "
    "write_file to start a new workspace.";

enum tools_ws_use tools_workspace_use(const char *name)
{
    static const char *const make[] = {"run_code", "run_cell", "mount_file", "write_file"};
    static const char *const need[] = {"list_dir", "preview_file", "persist_artifact", "reset_kernel",
                                       "save_kernel", TOOLS_DELETE_WORKSPACE};
    for (size_t i = 0; i < ARRAY_SIZE(make); i++)
        if (!strcmp(name, make[i]))
            return TOOLS_WS_MAKE;
    for (size_t i = 0; i < ARRAY_SIZE(need); i++)
        if (!strcmp(name, need[i]))
            return TOOLS_WS_NEED;
    return TOOLS_WS_NONE;
}

static void add_workspace_param(json_object *in, bool required)
{
    json_object *props = NULL, *w = json_object_new_object(), *req = NULL;
    if (!json_object_object_get_ex(in, "properties", &props)) {
        props = json_object_new_object();
        json_object_object_add(in, "properties", props);
    }
    json_object_object_add(w, "type", json_object_new_string("string"));
    json_object_object_add(w, "description", json_object_new_string(workspace_description));
    json_object_object_add(w, "x-mcp-header", json_object_new_string("Workspace"));
    json_object_object_add(props, "workspace", w);
    if (!required)
        return;
    if (!json_object_object_get_ex(in, "required", &req)) {
        req = json_object_new_array();
        json_object_object_add(in, "required", req);
    }
    json_object_array_add(req, json_object_new_string("workspace"));
}

/* Tools that need kernels: listed only where they exist (cfg->exec.kernels.on:
 * serve's workers). */
static bool kernel_tool(const char *name)
{
    return !strcmp(name, "run_cell") || !strcmp(name, "reset_kernel") || !strcmp(name, "save_kernel");
}

/* The output schema of d: its file, with what a tool's own file adds to it
 * (run_cell.output.json to run.output.json: its properties replaced or
 * added, its required names appended). */
static json_object *output_schema(const struct tools_def *d)
{
    const char *add_text = !strcmp(d->name, "run_cell") ? tools__schema_run_cell_output : NULL;
    json_object *out = json_tokener_parse(d->output), *more = add_text ? json_tokener_parse(add_text) : NULL;
    json_object *props = NULL, *add = NULL, *req = NULL, *add_req = NULL;
    if (more && json_object_object_get_ex(out, "properties", &props) &&
        json_object_object_get_ex(more, "properties", &add)) {
        json_object_object_foreach(add, k, v)
        {
            json_object_object_add(props, k, json_object_get(v));
        }
    }
    if (more && json_object_object_get_ex(out, "required", &req) && json_object_object_get_ex(more, "required", &add_req))
        for (size_t i = 0; i < json_object_array_length(add_req); i++)
            json_object_array_add(req, json_object_get(json_object_array_get_idx(add_req, i)));
    json_object_put(more);
    return out;
}

static json_object *tool_json(const struct cfg *cfg, const struct tools_def *d, const char *version)
{
    bool new_fields = strcmp(version, "2025-06-18") >= 0; /* title, outputSchema */
    json_object *t = json_object_new_object();
    json_object_object_add(t, "name", json_object_new_string(d->name));
    if (d->title && new_fields)
        json_object_object_add(t, "title", json_object_new_string(d->title));
    const char *description = !strcmp(version, MCP_REVISION_2026) && d->description_2026 ? d->description_2026
                                                                                          : d->description;
    json_object_object_add(t, "description", json_object_new_string(description));
    json_object *in = input_schema(cfg, d);
    enum tools_ws_use use = tools_workspace_use(d->name);
    if (!strcmp(version, MCP_REVISION_2026) && use != TOOLS_WS_NONE)
        add_workspace_param(in, use == TOOLS_WS_NEED);
    json_object_object_add(t, "inputSchema", in);
    enum tools_task task = tools_task_support(cfg, d->name);
    if (!strcmp(version, MCP_REVISION_2026) && task != TOOLS_TASK_NEVER) {
        json_object *ex = json_object_new_object();
        json_object_object_add(ex, "taskSupport", json_object_new_string(task == TOOLS_TASK_REQUIRED ? "required"
                                                                                                    : "optional"));
        json_object_object_add(t, "execution", ex);
    }
    if (d->output && new_fields)
        json_object_object_add(t, "outputSchema", output_schema(d));
    json_object *ann = json_object_new_object();
    json_object_object_add(ann, "readOnlyHint", json_object_new_boolean(d->read_only));
    json_object_object_add(ann, "destructiveHint", json_object_new_boolean(false));
    json_object_object_add(ann, "idempotentHint", json_object_new_boolean(d->read_only || d->open_world));
    json_object_object_add(ann, "openWorldHint", json_object_new_boolean(d->open_world));
    json_object_object_add(t, "annotations", ann);
    return t;
}

/* A legacy session ends with DELETE /mcp; a workspace with this tool. The
 * MCP door does its work (tools_call never sees it). */
static const struct tools_def delete_workspace_def = {
    TOOLS_DELETE_WORKSPACE, "Delete a workspace",
    "Delete a workspace and everything in it (its files, its mounts, the runs made in it) now, instead of "
    "when it has been idle for the server's session_ttl. A run in it is cancelled.",
    "{\"type\": \"object\", \"properties\": {}, \"additionalProperties\": false}", NULL, NULL, false, false};

json_object *tools_list(const struct cfg *cfg, const char *version)
{
    json_object *arr = json_object_new_array();
    for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
        if (!kernel_tool(defs[i].name) || cfg->exec.kernels.on) /* kernels live beside serve's workers only */
            json_object_array_add(arr, tool_json(cfg, &defs[i], version));
    if (!strcmp(version, MCP_REVISION_2026))
        json_object_array_add(arr, tool_json(cfg, &delete_workspace_def, version));
    for (size_t i = 0; cfg->test_fixture_tools && i < tools__n_fixture_defs; i++)
        json_object_array_add(arr, tool_json(cfg, &tools__fixture_defs[i], version));
    return arr;
}

json_object *tools_output_schema(const struct cfg *cfg, const char *name)
{
    (void)cfg; /* no output schema holds a value of the server's */
    for (size_t i = 0; i < ARRAY_SIZE(defs); i++)
        if (!strcmp(defs[i].name, name))
            return defs[i].output ? output_schema(&defs[i]) : NULL;
    return NULL;
}

/* ------------------------------------------------------------- dispatch */

static const struct tools_def *find_def(const struct tools_def *v, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(name, v[i].name))
            return &v[i];
    return NULL;
}

enum tools_task tools_task_support(const struct cfg *cfg, const char *name)
{
    if (!strcmp(name, "run_code") || !strcmp(name, "run_my_script") || !strcmp(name, "run_cell"))
        return TOOLS_TASK_AFTER;
    return cfg->test_fixture_tools ? tools__fixture_task(name) : TOOLS_TASK_NEVER;
}

bool tools_may_ask(const char *name)
{
    return !strcmp(name, "run_code") || !strcmp(name, "run_my_script");
}

bool tools_task_gathers(const struct cfg *cfg, const char *name)
{
    return cfg->test_fixture_tools && tools__fixture_gathers(name);
}

const char *tools_needs_capability(const struct cfg *cfg, const char *name)
{
    return cfg->test_fixture_tools ? tools__fixture_needs(name) : NULL;
}

bool tools_known(const struct cfg *cfg, const char *name)
{
    return find_def(defs, ARRAY_SIZE(defs), name) ||
           (cfg->test_fixture_tools && find_def(tools__fixture_defs, tools__n_fixture_defs, name));
}

enum tools_outcome tools_call(const struct tools_ctx *t, const char *name, json_object *args, json_object **result)
{
    *result = NULL;
    const struct tools_def *d = find_def(defs, ARRAY_SIZE(defs), name);
    if (!d && t->cfg->test_fixture_tools)
        d = find_def(tools__fixture_defs, tools__n_fixture_defs, name);
    if (!d)
        return TOOLS_UNKNOWN;
    int rc = d->call ? d->call(t, args, result) : tools__fixture_call(t, name, args, result);
    if (rc == -ECANCELED)
        return TOOLS_CANCELLED;
    return rc < 0 ? TOOLS_FAILED : TOOLS_RESULT;
}
