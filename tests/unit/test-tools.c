/* test-tools.c: the tool schemas built into the program against what the
 * code writes: every key result_client_json writes (what a client gets as
 * structuredContent) for a run with artifacts, requirements and an error,
 * and for a bare failure, is a property of the run tools' outputSchema
 * with a matching JSON type, and every key the schema requires is
 * written; so the two cannot drift. The client's result holds no path of
 * the server and only absolute URLs. Also: every schema
 * parses, the server's limits are patched into run_code's input, run_cell
 * and reset_kernel are listed only where kernels exist, and tools_call's
 * outcomes with the executor swapped for a table of stubs. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "result_log.h"
#include "executor.h"
#include "tap.h"
#include "tools.h"

/* The JSON type names a value of json-c type t satisfies. */
static bool type_fits(json_object *v, const char *name)
{
    switch (json_object_get_type(v)) {
    case json_type_null: return !strcmp(name, "null");
    case json_type_boolean: return !strcmp(name, "boolean");
    case json_type_int: return !strcmp(name, "integer") || !strcmp(name, "number");
    case json_type_double: return !strcmp(name, "number");
    case json_type_string: return !strcmp(name, "string");
    case json_type_array: return !strcmp(name, "array");
    case json_type_object: return !strcmp(name, "object");
    }
    return false;
}

/* Checks v against schema (type, properties, required, items); each
 * mismatch is a diagnostic and counts. */
static int check(json_object *v, json_object *schema, const char *path)
{
    int bad = 0;
    json_object *type, *props, *req, *items;
    if (json_object_object_get_ex(schema, "type", &type)) {
        bool fits = false;
        if (json_object_is_type(type, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(type); i++)
                fits = fits || type_fits(v, json_object_get_string(json_object_array_get_idx(type, i)));
        } else {
            fits = type_fits(v, json_object_get_string(type));
        }
        if (!fits) {
            diag("%s: a %s, the schema says %s", path, json_type_to_name(json_object_get_type(v)),
                 json_object_to_json_string(type));
            bad++;
        }
    }
    if (json_object_is_type(v, json_type_object)) {
        bool has_props = json_object_object_get_ex(schema, "properties", &props);
        json_object_object_foreach(v, key, val) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s.%s", path, key);
            json_object *ps;
            if (!has_props || !json_object_object_get_ex(props, key, &ps)) {
                diag("%s: written, but not in the schema's properties", sub);
                bad++;
                continue;
            }
            bad += check(val, ps, sub);
        }
        if (json_object_object_get_ex(schema, "required", &req))
            for (size_t i = 0; i < json_object_array_length(req); i++) {
                const char *k = json_object_get_string(json_object_array_get_idx(req, i));
                if (!json_object_object_get_ex(v, k, NULL)) {
                    diag("%s.%s: required by the schema, not written", path, k);
                    bad++;
                }
            }
    }
    if (json_object_is_type(v, json_type_array) && json_object_object_get_ex(schema, "items", &items))
        for (size_t i = 0; i < json_object_array_length(v); i++) {
            char sub[256];
            snprintf(sub, sizeof sub, "%s[%zu]", path, i);
            bad += check(json_object_array_get_idx(v, i), items, sub);
        }
    return bad;
}

static void add_artifact(struct result *r, const char *path, uint64_t size, const char *mime, const char *summary)
{
    r->artifacts = realloc(r->artifacts, (r->n_artifacts + 1) * sizeof *r->artifacts);
    struct result_artifact *a = &r->artifacts[r->n_artifacts++];
    a->path = strdup(path);
    a->size = size;
    a->mime = strdup(mime);
    a->summary = summary ? strdup(summary) : NULL;
    a->change = RESULT_ART_LISTED;
}

/* A run that has everything: limit, signal, log, requirements, an
 * environment, the installer's log, artifacts with URLs, a zip, an error. */
static void full_result(struct result *r)
{
    result_init(r);
    snprintf(r->run_id, sizeof r->run_id, "0123456789abcdef0123456789abcdef");
    r->status = RESULT_STATUS_INSTALL_FAILED;
    r->limit = "wall_time";
    r->exit_code = 1;
    r->signal = 9;
    r->duration_ms = 1234;
    r->cpu_ms = 56;
    bool marker;
    discard(result_log_append(&r->log, RESULT_STREAM_STDOUT, "hello\n", 6, &marker));
    discard(result_log_append(&r->log, RESULT_STREAM_STDERR, "oops\n", 5, &marker));
    r->requirements = calloc(2, sizeof *r->requirements);
    r->requirements[0] = strdup("numpy==1.26.4");
    r->requirements[1] = strdup("pandas==2.2.0");
    r->n_requirements = 2;
    r->env_cache = RESULT_ENV_BUILT;
    snprintf(r->env_key, sizeof r->env_key, "0123456789abcdef0123456789abcdef");
    r->install_log = strdup("Collecting numpy\n");
    r->failed_requirement = strdup("nosuchpackage");
    add_artifact(r, "plot.png", 1000, "image/png", "a 640x480 PNG");
    add_artifact(r, "data/table.csv", 20, "text/csv", NULL);
    r->artifacts_skipped = 1;
    r->has_zip = true;
    r->zip_path = strdup("/state/runs/x/artifacts.zip");
    r->workdir = strdup("/state/runs/x/work");
    r->isolation = "namespaces+seccomp";
    r->error = strdup("cannot install nosuchpackage: /state/envs/.tmp-x/bin/pip failed");
    r->url_prefix = "/artifacts/";
    /* A network record: one destination reached, one address and one name
     * refused. */
    r->network.mode = NET_MODE_ON;
    r->network.bytes_in = 1000;
    r->network.bytes_out = 100;
    r->network.connections = 1;
    r->network.refused_connections = 2;
    r->network.reached = calloc(1, sizeof *r->network.reached);
    r->network.reached[0] = (struct net_dest){strdup("www.example.org"), "203.0.113.10", 443, 1000, 100, 1};
    r->network.n_reached = 1;
    r->network.refused = calloc(2, sizeof *r->network.refused);
    r->network.refused[0] = (struct net_refusal){NULL, "10.0.0.1", 80, NET_REFUSED_NEVER_REACHABLE, "private", 1};
    r->network.refused[1] = (struct net_refusal){strdup("other.example"), "", 0, NET_REFUSED_NAME, NULL, 1};
    r->network.n_refused = 2;
    r->network.limit = "net_bytes";
}

/* A cell of a kernel: its value, the kernel, flagged artifacts. */
static void cell_result(struct result *r, enum result_kernel_state state)
{
    full_result(r);
    r->status = RESULT_STATUS_OK;
    r->value = strdup("   a  b\n0  1  2");
    r->value_truncated = true;
    r->kernel.state = state;
    r->kernel.cell = 3;
    r->kernel.reason = state == RESULT_KERNEL_KEPT ? NULL : strdup("the last kernel exceeded memory");
    if (state == RESULT_KERNEL_RESTORED)
        r->kernel.restored = strdup("{\"names\": [[\"df\", \"pandas.core.frame.DataFrame\"]], \"failed\": [], "
                                    "\"skipped\": [[\"fh\", \"_io.TextIOWrapper\", \"TypeError\"]], \"modules\": "
                                    "[\"pandas\"], \"cells\": 4, \"python\": \"3.11.2\", \"differs\": []}");
    r->artifacts[0].change = RESULT_ART_NEW;
    r->artifacts[1].change = RESULT_ART_CHANGED;
}

static int check_result(json_object *schema, const struct result *r, const char *what)
{
    struct exec_config ec = {.state_dir = "/state/"};
    json_object *res = result_client_json(r, "https://run.example.org/base", &ec);
    ok(res != NULL, "%s: serialized", what);
    int bad = check(res, schema, "structuredContent");
    const char *text = json_object_to_json_string_ext(res, JSON_C_TO_STRING_NOSLASHESCAPE);
    ok(!strstr(text, "/state"), "%s: no path of the state directory in it", what);
    ok(!json_object_object_get_ex(res, "workdir", NULL) && !json_object_object_get_ex(res, "zip", NULL),
       "%s: no workdir, no zip", what);
    ok(!json_object_object_get_ex(res, "advice", NULL), "%s: no advice (the operator's)", what);
    json_object *arts, *v;
    if (json_object_object_get_ex(res, "artifacts", &arts) && json_object_array_length(arts) > 0) {
        json_object *a = json_object_array_get_idx(arts, 0);
        ok(json_object_object_get_ex(a, "url", &v) &&
               !strcmp(json_object_get_string(v), "https://run.example.org/artifacts/0123456789abcdef0123456789abcdef/plot.png"),
           "%s: an artifact's URL is absolute on the base's origin (%s)", what, json_object_get_string(v));
        ok(json_object_object_get_ex(res, "zip_url", &v) && !strncmp(json_object_get_string(v), "https://", 8),
           "%s: so is the zip's", what);
        ok(json_object_object_get_ex(res, "error", &v) && strstr(json_object_get_string(v), "STATE/envs/"),
           "%s: the state directory in a sentence is written STATE (%s)", what, json_object_get_string(v));
    }
    json_object_put(res);
    return bad;
}

static void test_output_schema(const struct cfg *cfg)
{
    static const char *const run_tools[] = {"run_code", "run_my_script", "run_cell"};
    for (size_t t = 0; t < ARRAY_SIZE(run_tools); t++) {
        if (!strcmp(run_tools[t], "run_cell")) {
            /* A cell's result always names its kernel (run_cell.output.json
             * requires it over run.output.json). */
            json_object *schema = tools_output_schema(cfg, "run_cell"), *req, *props, *k, *type;
            struct result r;
            int bad = 0;
            for (int st = RESULT_KERNEL_NEW; st <= RESULT_KERNEL_RESTORED; st++) {
                cell_result(&r, (enum result_kernel_state)st);
                bad += check_result(schema, &r, result_kernel_state_name((enum result_kernel_state)st));
                result_free(&r);
            }
            is_int(bad, 0, "run_cell: a cell's result (new, kept, restarted, restored) fits its schema");
            bool required = false;
            json_object_object_get_ex(schema, "required", &req);
            for (size_t i = 0; req && i < json_object_array_length(req); i++)
                required = required || !strcmp(json_object_get_string(json_object_array_get_idx(req, i)), "kernel");
            ok(required && json_object_object_get_ex(schema, "properties", &props) &&
                   json_object_object_get_ex(props, "kernel", &k) && json_object_object_get_ex(k, "type", &type) &&
                   json_object_is_type(type, json_type_string) && !strcmp(json_object_get_string(type), "object"),
               "run_cell: kernel is required and an object (run.output.json allows null for a run)");
            json_object_object_get_ex(props, "value", &k);
            ok(k != NULL, "run_cell: value is in its schema (run.output.json's)");
            result_init(&r);
            r.kernel.state = RESULT_KERNEL_NONE;
            ok(check_result(schema, &r, "a run's result") > 0, "run_cell: a result without a kernel does not fit");
            result_free(&r);
            json_object_put(schema);
            continue;
        }
        json_object *schema = tools_output_schema(cfg, run_tools[t]);
        ok(schema != NULL, "%s has an output schema", run_tools[t]);
        struct result r;
        full_result(&r);
        is_int(check_result(schema, &r, "a full result"), 0, "%s: a full result fits the schema", run_tools[t]);
        result_free(&r);
        result_init(&r); /* a bare sandbox error: every optional field null */
        is_int(check_result(schema, &r, "a bare result"), 0, "%s: a bare failure fits the schema", run_tools[t]);
        result_free(&r);
        json_object_put(schema);
    }
    ok(tools_output_schema(cfg, "no_such_tool") == NULL, "no schema for an unknown tool");
}

static void test_list(struct cfg *cfg)
{
    cfg->exec.limits.wall_ms = 42500;
    cfg->fetch.limits.mount_files = 7;
    json_object *tools = tools_list(cfg, "2025-11-25");
    size_t n = json_object_array_length(tools);
    is_int((long long)n, 7, "seven tools (no fixtures in this program)");
    int parsed = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(tools, i), *in, *out, *name;
        json_object_object_get_ex(t, "name", &name);
        bool ok_in = json_object_object_get_ex(t, "inputSchema", &in) && json_object_is_type(in, json_type_object);
        bool ok_out = json_object_object_get_ex(t, "outputSchema", &out) && json_object_is_type(out, json_type_object);
        parsed += ok_in && ok_out;
        if (!strcmp(json_object_get_string(name), "run_code")) {
            json_object *props, *timeout, *files, *v;
            json_object_object_get_ex(in, "properties", &props);
            json_object_object_get_ex(props, "timeout", &timeout);
            json_object_object_get_ex(props, "files", &files);
            ok(json_object_object_get_ex(timeout, "maximum", &v) && json_object_get_double(v) == 42.5,
               "run_code: the timeout's maximum is the server's wall time");
            ok(json_object_object_get_ex(files, "maxItems", &v) && json_object_get_int64(v) == 7,
               "run_code: files' maxItems is mount_files");
            json_object *reqs;
            json_object_object_get_ex(props, "requirements", &reqs);
            ok(json_object_object_get_ex(reqs, "maxItems", &v) && json_object_get_int64(v) == TOOLS_MAX_REQUIREMENTS,
               "run_code: requirements' maxItems is TOOLS_MAX_REQUIREMENTS");
        }
    }
    is_int(parsed, (long long)n, "every tool's input and output schema parses to an object");
    json_object_put(tools);
    tools = tools_list(cfg, "2025-03-26");
    json_object *first = json_object_array_get_idx(tools, 0);
    ok(!json_object_object_get_ex(first, "outputSchema", NULL) && !json_object_object_get_ex(first, "title", NULL),
       "2025-03-26: no outputSchema, no title");
    json_object_put(tools);
}

/* The 2026-07-28 list: the same tools in the same order, delete_workspace,
 * the workspace argument (mirrored into Mcp-Param-Workspace) on exactly the
 * tools that use one, required where they need one, and taskSupport on the
 * script tools. A legacy list has none of it. */
static void test_list_modern(struct cfg *cfg)
{
    json_object *legacy = tools_list(cfg, "2025-11-25"), *modern = tools_list(cfg, "2026-07-28");
    size_t n = json_object_array_length(modern);
    is_int((long long)n, 8, "2026-07-28: eight tools");
    int same_order = 0, ws_ok = 0, legacy_ws = 0, tasks_ok = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(modern, i), *name, *in, *props, *w, *v, *req, *ex;
        json_object_object_get_ex(t, "name", &name);
        const char *nm = json_object_get_string(name);
        if (i < json_object_array_length(legacy)) {
            json_object *lt = json_object_array_get_idx(legacy, i), *ln, *lin, *lprops;
            json_object_object_get_ex(lt, "name", &ln);
            same_order += !strcmp(nm, json_object_get_string(ln));
            json_object_object_get_ex(lt, "inputSchema", &lin);
            legacy_ws += json_object_object_get_ex(lin, "properties", &lprops) &&
                         json_object_object_get_ex(lprops, "workspace", NULL);
        }
        json_object_object_get_ex(t, "inputSchema", &in);
        bool has = json_object_object_get_ex(in, "properties", &props) && json_object_object_get_ex(props, "workspace", &w);
        bool hdr = has && json_object_object_get_ex(w, "x-mcp-header", &v) && !strcmp(json_object_get_string(v), "Workspace");
        bool required = false;
        if (json_object_object_get_ex(in, "required", &req))
            for (size_t k = 0; k < json_object_array_length(req); k++)
                required = required || !strcmp(json_object_get_string(json_object_array_get_idx(req, k)), "workspace");
        enum tools_ws_use use = tools_workspace_use(nm);
        ws_ok += use == TOOLS_WS_NONE ? !has : hdr && required == (use == TOOLS_WS_NEED);
        bool task = json_object_object_get_ex(t, "execution", &ex) && json_object_object_get_ex(ex, "taskSupport", &v) &&
                    !strcmp(json_object_get_string(v), "optional");
        tasks_ok += task == (tools_task_support(cfg, nm) == TOOLS_TASK_AFTER);
        if (i == n - 1)
            ok(!strcmp(nm, "delete_workspace"), "2026-07-28: delete_workspace is listed last (%s)", nm);
    }
    /* 2026-07-28 has no sessions: no description (nor its instructions)
     * speaks of one; configuration keys may be named (session_ttl). */
    int sessionless = 0;
    for (size_t i = 0; i < n; i++) {
        json_object *t = json_object_array_get_idx(modern, i), *d;
        json_object_object_get_ex(t, "description", &d);
        char text[4096];
        snprintf(text, sizeof text, "%s", json_object_get_string(d));
        for (char *k; (k = strstr(text, "session_ttl"));)
            memset(k, '_', 11);
        sessionless += !strstr(text, "session");
        if (strstr(text, "session"))
            diag("speaks of a session: %s", text);
    }
    is_int(sessionless, (long long)n, "2026-07-28: no tool's description speaks of a session");
    ok(!strstr(tools_instructions_2026(), "session") && strstr(tools_instructions_2026(), "workspace"),
       "2026-07-28: nor do the instructions, which speak of workspace handles");
    ok(strstr(tools_instructions(), "this session's workspace") != NULL, "the legacy instructions keep the session");
    is_int(same_order, 7, "2026-07-28: the legacy tools first, in their order");
    is_int(ws_ok, (long long)n, "2026-07-28: workspace (x-mcp-header Workspace) where a tool uses one, required where it "
                                "needs one");
    is_int(legacy_ws, 0, "a legacy list has no workspace argument");
    is_int(tasks_ok, (long long)n, "2026-07-28: run_code and run_my_script may become tasks, nothing else");
    ok(tools_workspace_use("run_code") == TOOLS_WS_MAKE && tools_workspace_use("mount_file") == TOOLS_WS_MAKE &&
           tools_workspace_use("list_dir") == TOOLS_WS_NEED && tools_workspace_use("run_my_script") == TOOLS_WS_NONE,
       "run_code and mount_file make a workspace, list_dir needs one, run_my_script has none");
    ok(tools_needs_capability(cfg, "run_code") == NULL, "no tool of ours needs a client capability");
    json_object_put(legacy);
    json_object_put(modern);
}

/* Where kernels exist (serve: cfg->exec.kernels.on) run_cell,
 * reset_kernel and save_kernel are listed, run_cell after run_code, all
 * with a workspace in 2026-07-28 (made by run_cell, needed by the other
 * two), run_cell as a task like run_code; elsewhere none is. */
static void test_list_kernels(struct cfg *cfg)
{
    static const char *const want[] = {"run_code",   "run_cell",         "reset_kernel", "save_kernel",
                                       "run_my_script", "list_dir", "preview_file", "mount_file", "write_file", "persist_artifact"};
    cfg->exec.kernels.on = true;
    json_object *tools = tools_list(cfg, "2025-11-25"), *modern = tools_list(cfg, "2026-07-28");
    size_t n = json_object_array_length(tools);
    int order = 0;
    for (size_t i = 0; i < n && i < ARRAY_SIZE(want); i++) {
        json_object *name;
        json_object_object_get_ex(json_object_array_get_idx(tools, i), "name", &name);
        order += !strcmp(json_object_get_string(name), want[i]);
    }
    is_int((long long)n, 10, "with kernels: ten tools");
    is_int(order, 10, "run_cell, reset_kernel and save_kernel after run_code");
    is_int((long long)json_object_array_length(modern), 11, "2026-07-28 with kernels: eleven (delete_workspace)");
    json_object *cell = json_object_array_get_idx(modern, 1), *in, *props, *ex, *v, *d;
    ok(json_object_object_get_ex(cell, "inputSchema", &in) && json_object_object_get_ex(in, "properties", &props) &&
           json_object_object_get_ex(props, "workspace", NULL) && json_object_object_get_ex(props, "timeout", &v) &&
           json_object_object_get_ex(v, "maximum", NULL),
       "run_cell: a workspace argument, and the server's timeout maximum");
    ok(json_object_object_get_ex(cell, "execution", &ex) && json_object_object_get_ex(ex, "taskSupport", &v) &&
           !strcmp(json_object_get_string(v), "optional"),
       "run_cell may become a task");
    ok(tools_workspace_use("run_cell") == TOOLS_WS_MAKE && tools_workspace_use("reset_kernel") == TOOLS_WS_NEED &&
           tools_workspace_use("save_kernel") == TOOLS_WS_NEED,
       "run_cell makes a workspace, reset_kernel and save_kernel need one");
    ok(json_object_object_get_ex(cell, "description", &d) && strstr(json_object_get_string(d), "variables, functions, "
                                                                   "classes, imports, open files, threads") &&
           strstr(json_object_get_string(d), "persist") && strstr(json_object_get_string(d), "last expression"),
       "run_cell's description says what stays, that files persist, and that the value comes back");
    json_object_put(tools);
    json_object_put(modern);
    cfg->exec.kernels.on = false;
    tools = tools_list(cfg, "2026-07-28");
    bool any = false;
    for (size_t i = 0; i < json_object_array_length(tools); i++) {
        json_object *name;
        json_object_object_get_ex(json_object_array_get_idx(tools, i), "name", &name);
        any = any || !strcmp(json_object_get_string(name), "run_cell") ||
              !strcmp(json_object_get_string(name), "reset_kernel") || !strcmp(json_object_get_string(name), "save_kernel");
    }
    ok(!any, "without kernels (CGI, the CLI) none of them is listed");
    json_object_put(tools);
}

/* ------------------------------------------------ tools_call's outcomes */

static int runs;          /* calls of the stub run */
static int stub_rc;       /* what it returns */
static enum result_status stub_status;
static bool client_cancel;
static char recorded[WS_ID_MAX + 1];

static int stub_requirements(const struct exec_spec *spec, char *err, size_t errlen);

/* As exec_run: the checks first (a refusal makes nothing and calls no
 * sink), then sink->accepted, then the run; the outcome set as it sets
 * it. */
static int stub_run(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r)
{
    char err[256] = "";
    int rc = exec_check_code(spec->code, spec->code_len, &spec->limits, err, sizeof err);
    if (rc == 0)
        rc = stub_requirements(spec, err, sizeof err);
    if (rc < 0) {
        r->error = strdup(err);
        r->outcome = rc == -E2BIG ? EXEC_OUTCOME_TOO_LARGE : EXEC_OUTCOME_REFUSED;
        return rc;
    }
    if (sink->accepted && (rc = sink->accepted(sink->ctx)) < 0) {
        r->outcome = EXEC_OUTCOME_STOPPED;
        return rc;
    }
    runs++;
    snprintf(r->run_id, sizeof r->run_id, "0123456789abcdef0123456789abcdef");
    r->run_dir = strdup("/nonexistent/run");
    r->url_prefix = spec->cfg->url_prefix;
    if (sink->phase)
        sink->phase(sink->ctx, EXEC_PHASE_RUNNING, NULL);
    r->status = stub_status;
    r->exit_code = 0;
    if (stub_rc < 0)
        r->error = strdup("stub: the sandbox failed");
    r->outcome = stub_rc == 0 ? EXEC_OUTCOME_DONE : stub_rc == -EBUSY ? EXEC_OUTCOME_BUSY : EXEC_OUTCOME_FAILED;
    return stub_rc;
}

static int stub_requirements(const struct exec_spec *spec, char *err, size_t errlen)
{
    for (size_t i = 0; i < spec->n_requirements; i++)
        if (!strcmp(spec->requirements[i], "bad")) {
            snprintf(err, errlen, "requirements[%zu]: refused", i);
            return -EINVAL;
        }
    return 0;
}

/* A cell: the run's stub, then its kernel (kept, the third cell) and the
 * last expression's value. */
static int cells;
static int stub_cell(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r)
{
    int rc = stub_run(spec, sink, r);
    if (rc < 0 || !sink->accepted)
        return rc;
    cells++;
    r->kernel.state = RESULT_KERNEL_KEPT;
    r->kernel.cell = 3;
    r->value = strdup("42");
    return rc;
}

static char reset_of[256];
static int stub_reset(const struct exec_config *cfg, const char *workspace)
{
    (void)cfg;
    snprintf(reset_of, sizeof reset_of, "%s", workspace);
    return 0;
}

/* save: the report a kernel gives, or (save_refuse) nothing saved with
 * its reason; restore: no saved state (restore_none), or done. */
static bool save_refuse, restore_none;
static char saved_of[256], restored_of[256];
static int stub_save(const struct exec_config *cfg, const char *workspace, char **report, char *err, size_t errlen)
{
    (void)cfg;
    snprintf(saved_of, sizeof saved_of, "%s", workspace);
    *report = NULL;
    if (save_refuse) {
        snprintf(err, errlen, "its state passed kernel_save_bytes (kernel_save_bytes = 1 KiB) and was not saved");
        return 1;
    }
    snprintf(err, errlen, "its 2 names were saved (1.2 KiB; 1 could not be)");
    *report = strdup("{\"saved\": true, \"bytes\": 1234, \"names\": [[\"x\", \"int\"], [\"f\", \"function\"]], "
                     "\"skipped\": [[\"fh\", \"_io.TextIOWrapper\", \"TypeError: cannot pickle\"]], \"n_names\": 2}");
    return *report ? 0 : -ENOMEM;
}
static int stub_restore(const struct exec_config *cfg, const char *workspace, char *err, size_t errlen)
{
    (void)cfg;
    if (restore_none) {
        snprintf(err, errlen, "the workspace has no saved kernel state (save_kernel makes one)");
        return 1;
    }
    snprintf(restored_of, sizeof restored_of, "%s", workspace);
    return 0;
}

static const struct app_exec stub_exec = {
    .run = stub_run,
    .cancel = exec_cancel,
    .base_env = probe_base_env,
    .cell = stub_cell,
    .kernel_reset = stub_reset,
    .kernel_save = stub_save,
    .kernel_restore = stub_restore,
};

/* The text block of a result. */
static const char *text_of(json_object *res)
{
    json_object *content, *text;
    if (!json_object_object_get_ex(res, "content", &content) ||
        !json_object_object_get_ex(json_object_array_get_idx(content, 0), "text", &text))
        return "";
    return json_object_get_string(text);
}

static void no_progress(void *ctx, double progress, double total, const char *message)
{
    (void)ctx, (void)progress, (void)total, (void)message;
}
static void no_log(void *ctx, enum tools_level level, const char *logger, const char *text, size_t len)
{
    (void)ctx, (void)level, (void)logger, (void)text, (void)len;
}
static bool cancelled(void *ctx)
{
    (void)ctx;
    return client_cancel;
}
static void set_run(void *ctx, const char *run_id)
{
    (void)ctx;
    snprintf(recorded, sizeof recorded, "%s", run_id);
}

static enum tools_outcome call(const struct tools_ctx *t, const char *name, const char *args_json, json_object **res)
{
    json_object *args = args_json ? json_tokener_parse(args_json) : NULL;
    enum tools_outcome out = tools_call(t, name, args, res);
    json_object_put(args);
    return out;
}

static bool is_error(json_object *res, const char *text_part)
{
    json_object *v, *content, *text;
    if (!json_object_object_get_ex(res, "isError", &v) || !json_object_get_boolean(v))
        return false;
    if (!json_object_object_get_ex(res, "content", &content))
        return false;
    json_object *b = json_object_array_get_idx(content, 0);
    return json_object_object_get_ex(b, "text", &text) && strstr(json_object_get_string(text), text_part);
}

/* save_kernel, and reset_kernel to the state it saved: through the
 * table's kernel_save and kernel_restore (t: kernels on). */
static void test_save_kernel(const struct tools_ctx *t)
{
    json_object *res, *v, *rsc = NULL, *rs = tools_output_schema(t->cfg, "reset_kernel");
    is_int(call(t, "save_kernel", NULL, &res), TOOLS_RESULT, "save_kernel: a result");
    ok(json_object_object_get_ex(res, "isError", &v) && !json_object_get_boolean(v) &&
           !strcmp(saved_of, "/nonexistent/session/workspace") && strstr(text_of(res), "2 names were saved"),
       "... the session's workspace's kernel saved, the text says what (%s)", text_of(res));
    json_object *ss = tools_output_schema(t->cfg, "save_kernel"), *ssc = NULL, *names = NULL, *skipped = NULL;
    ok(json_object_object_get_ex(res, "structuredContent", &ssc) && check(ssc, ss, "save_kernel") == 0,
       "... its structuredContent fits its outputSchema");
    ok(ssc && json_object_object_get_ex(ssc, "names", &names) && json_object_array_length(names) == 2 &&
           json_object_object_get_ex(ssc, "skipped", &skipped) && json_object_array_length(skipped) == 1,
       "... the names saved and the one that could not be");
    json_object_put(res);
    save_refuse = true;
    is_int(call(t, "save_kernel", NULL, &res), TOOLS_RESULT, "save_kernel past kernel_save_bytes: a result");
    ok(is_error(res, "nothing was saved: its state passed kernel_save_bytes"), "... an error with the reason (%s)",
       text_of(res));
    json_object_put(res);
    save_refuse = false;
    json_object_put(ss);
    is_int(call(t, "reset_kernel", "{\"to\":\"saved\"}", &res), TOOLS_RESULT, "reset_kernel to saved: a result");
    ok(!strcmp(restored_of, "/nonexistent/session/workspace") && json_object_object_get_ex(res, "structuredContent", &rsc) &&
           check(rsc, rs, "reset_kernel") == 0 && strstr(json_object_to_json_string(rsc), "\"saved\""),
       "... through the table's restore, to: saved in its structuredContent");
    json_object_put(res);
    restore_none = true;
    is_int(call(t, "reset_kernel", "{\"to\":\"saved\"}", &res), TOOLS_RESULT, "reset_kernel to saved, none saved");
    ok(is_error(res, "no saved kernel state"), "... an error that says so (%s)", text_of(res));
    json_object_put(res);
    restore_none = false;
    is_int(call(t, "reset_kernel", "{\"to\":\"yesterday\"}", &res), TOOLS_RESULT, "reset_kernel to nonsense");
    ok(is_error(res, "to is \"new\""), "... says what to takes (%s)", text_of(res));
    json_object_put(res);
    json_object_put(rs);
}

static void test_call(struct cfg *cfg)
{
    struct tools_ctx t = {
        .cfg = cfg, .exec = &stub_exec, .session_dir = "/nonexistent/session", .version = "2025-11-25",
        .base_url = "http://127.0.0.1", .progress = no_progress, .log = no_log, .cancelled = cancelled,
        .client_cancelled = cancelled, .set_run = set_run,
    };
    json_object *res = NULL, *v;
    cfg->exec.limits.code_bytes = 1000;
    cfg->exec.url_prefix = "/artifacts/";

    is_int(call(&t, "no_such_tool", NULL, &res), TOOLS_UNKNOWN, "an unknown tool");
    ok(res == NULL, "... has no result");
    cfg->test_fixture_tools = true;
    is_int(call(&t, "test_simple_text", NULL, &res), TOOLS_UNKNOWN, "no fixture tools in this program");
    cfg->test_fixture_tools = false;

    stub_rc = 0, stub_status = RESULT_STATUS_OK;
    is_int(call(&t, "run_code", "{\"code\":\"print(1)\"}", &res), TOOLS_RESULT, "run_code: a result");
    is_int(runs, 1, "... through the table's run");
    is_str(recorded, "0123456789abcdef0123456789abcdef", "... which recorded the run");
    ok(json_object_object_get_ex(res, "isError", &v) && !json_object_get_boolean(v), "... not an error");
    json_object_put(res);

    is_int(call(&t, "run_code", "{\"code\":\"print(1)\",\"requirements\":[\"bad\"]}", &res), TOOLS_RESULT,
           "refused requirements: a result");
    ok(is_error(res, "requirements[0]: refused; nothing was run"), "... an error naming the refusal");
    is_int(runs, 1, "... and nothing ran");
    json_object_put(res);

    /* Refused before run_code's files are fetched: the executor's checks
     * come first, the downloads only once it has accepted the call. */
    is_int(call(&t, "run_code",
                "{\"code\":\"print(1)\",\"requirements\":[\"bad\"],"
                "\"files\":[{\"url\":\"http://127.0.0.1:9/f\",\"mountPath\":\"f\"}]}", &res),
           TOOLS_RESULT, "refused requirements with files: a result");
    ok(is_error(res, "requirements[0]: refused; nothing was run"), "... the refusal, not a download's failure");
    is_int(runs, 1, "... and nothing ran");
    json_object_put(res);

    is_int(call(&t, "run_my_script", "{\"code\":\"\"}", &res), TOOLS_RESULT, "empty code: a result");
    ok(is_error(res, "nothing was run"), "... an error");
    json_object_put(res);

    stub_rc = -EIO, stub_status = RESULT_STATUS_SANDBOX_ERROR;
    is_int(call(&t, "run_my_script", "{\"code\":\"print(1)\"}", &res), TOOLS_FAILED, "the sandbox failed");
    ok(json_object_object_get_ex(res, "status", &v) && !strcmp(json_object_get_string(v), "sandbox_error"),
       "... with the result for the error's data");
    json_object_put(res);

    stub_rc = -ENOENT; /* a file the executor needs is missing: no "unknown tool" */
    is_int(call(&t, "run_my_script", "{\"code\":\"print(1)\"}", &res), TOOLS_FAILED, "-ENOENT from the run");
    json_object_put(res);
    is_int(call(&t, "list_dir", NULL, &res), TOOLS_FAILED, "a session without its workspace: a failure");
    json_object_put(res);

    /* run_cell and reset_kernel: refused with a reason where there are
     * no kernels, else through the table's cell and kernel_reset. */
    stub_rc = 0, stub_status = RESULT_STATUS_OK;
    is_int(call(&t, "run_cell", "{\"code\":\"x + 1\"}", &res), TOOLS_RESULT, "run_cell without kernels: a result");
    ok(is_error(res, "runmyscript serve") && cells == 0, "... an error saying kernels need serve; nothing ran");
    json_object_put(res);
    is_int(call(&t, "reset_kernel", NULL, &res), TOOLS_RESULT, "reset_kernel without kernels: a result");
    ok(is_error(res, "no kernels") && !reset_of[0], "... an error too");
    json_object_put(res);
    cfg->exec.kernels.on = true;
    is_int(call(&t, "run_cell", "{\"code\":\"x + 1\"}", &res), TOOLS_RESULT, "run_cell: a result");
    is_int(cells, 1, "... through the table's cell");
    ok(strstr(text_of(res), "kernel: kept, cell 3\n") && strstr(text_of(res), "--- value ---\n42\n"),
       "... the text names the kernel and shows the value");
    ok(strstr(text_of(res), "no artifacts this call created or changed"), "... and speaks of this call's files");
    json_object_put(res);
    is_int(call(&t, "run_cell", "{\"code\":\"1\",\"input\":\"x\"}", &res), TOOLS_RESULT,
           "run_cell with input: a result");
    ok(is_error(res, "run_cell: unknown argument"), "... refused: a cell takes no input (%s)", text_of(res));
    json_object_put(res);
    is_int(call(&t, "run_cell", "{\"code\":1}", &res), TOOLS_RESULT, "run_cell with a number for code");
    ok(is_error(res, "run_cell: code (a string holding the whole Python cell) is required"), "... says so (%s)",
       text_of(res));
    json_object_put(res);
    is_int(call(&t, "reset_kernel", NULL, &res), TOOLS_RESULT, "reset_kernel: a result");
    ok(json_object_object_get_ex(res, "isError", &v) && !json_object_get_boolean(v) &&
           !strcmp(reset_of, "/nonexistent/session/workspace"),
       "... the session's workspace's kernel reset (%s)", reset_of);
    json_object *rs = tools_output_schema(cfg, "reset_kernel"), *rsc = NULL;
    ok(json_object_object_get_ex(res, "structuredContent", &rsc) && check(rsc, rs, "reset_kernel") == 0,
       "... its structuredContent fits its outputSchema");
    json_object_put(res);

    json_object_put(rs);
    test_save_kernel(&t);
    cfg->exec.kernels.on = false;

    stub_rc = 0, stub_status = RESULT_STATUS_CANCELLED, client_cancel = true;
    is_int(call(&t, "run_my_script", "{\"code\":\"print(1)\"}", &res), TOOLS_CANCELLED,
           "the client cancelled: nothing to send");
    json_object_put(res);
    client_cancel = false;
}

int main(void)
{
    struct cfg cfg = {0};
    test_output_schema(&cfg);
    test_list(&cfg);
    test_list_modern(&cfg);
    test_list_kernels(&cfg);
    test_call(&cfg);
    return tap_done();
}
