/* tools.c: the MCP tools. run_code and run_my_script call exec_run with a
 * sink that turns phases into progress notifications and output lines into
 * log notifications; list_dir and preview_file read the session's
 * workspace beneath its directory fd, following no symlink; mount_file,
 * run_code's files and persist_artifact move files with fetch.c, in this
 * worker, reporting bytes as progress. A script that
 * fails, and arguments that are wrong, come back as results with isError
 * (SEP-1303: the model reads the reason and corrects itself). */
#include "config.h"

#include "tools.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "executor.h"

#define TOOLS_LINKS_MAX 100         /* resource_link blocks in one result */
#define TOOLS_TEXT_ARTIFACTS_MAX 50 /* artifacts listed in the text block */
#define TOOLS_LOG_LINE_MAX 4096     /* a longer line goes out in pieces */
#define TOOLS_XFER_POLL_MS 100      /* progress and cancel checks of a transfer, at most this often */

/* ------------------------------------------------------------- the table */

static const char instructions[] =
    "runmyscript runs self-contained Python 3 scripts in a throw-away sandbox and returns the log and every "
    "file the script wrote.\n"
    "- Use run_code for work in steps: each call runs in this session's workspace, so files written by one "
    "call (in the current directory) are there for the next. Use run_my_script for a one-off run in a fresh, "
    "empty directory.\n"
    "- Write result files (plots, CSV, JSON, images, reports) into the directory named by the environment "
    "variable SCRIPT_OUTPUT: each one comes back as an artifact with a download link, a MIME type and a "
    "one-line summary, and all of them as one zip. Small images also come back inline.\n"
    "- Pass data with the input argument (run_code) or user_input (run_my_script): the script reads it from "
    "the file at os.environ['SCRIPT_INPUT'] (and from stdin).\n"
    "- Third-party packages: list them in requirements (run_code), or just import them: the server detects "
    "imports (and a PEP 723 `# /// script` block) and installs what is missing once, then reuses the cached "
    "environment. A package that cannot be installed returns status install_failed with the installer's "
    "reason.\n"
    "- Scripts have no network access while they run.\n"
    "- A failing script (exception, non-zero exit, timeout, memory or output limit) returns isError true with "
    "the status and the full log: read the traceback, fix the code and call again.\n"
    "- list_dir and preview_file look at the session's workspace (for example list_dir('output')) without "
    "running code.\n"
    "- Remote input files: mount_file(url, mount_path), or files=[{url, mountPath}] in run_code, downloads "
    "them into the workspace's mounts/ folder (read-only to scripts: open('mounts/' + mount_path)). To keep "
    "an output file, persist_artifact(relative_path, presigned_url) uploads it from output/ with an HTTP PUT.";

const char *tools_instructions(void)
{
    return instructions;
}

static const char run_output_schema[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"run_id\":{\"type\":\"string\",\"description\":\"128-bit random id of the run (32 hex digits, after NODE- on a node of a cluster)\"},"
    "\"status\":{\"type\":\"string\",\"description\":\"ok, error (the script failed), timeout, memory, "
    "output_limit, install_failed, cancelled, or sandbox_error (the service failed)\"},"
    "\"limit\":{\"type\":[\"string\",\"null\"],\"description\":\"the limit that was crossed\"},"
    "\"exit_code\":{\"type\":[\"integer\",\"null\"]},"
    "\"signal\":{\"type\":[\"string\",\"null\"]},"
    "\"duration_ms\":{\"type\":\"integer\"},"
    "\"cpu_ms\":{\"type\":\"integer\"},"
    "\"logs\":{\"type\":\"string\",\"description\":\"stdout and stderr in the order they arrived\"},"
    "\"logs_truncated\":{\"type\":\"boolean\"},"
    "\"requirements\":{\"type\":\"array\",\"items\":{\"type\":[\"string\",\"null\"]}},"
    "\"env_cache\":{\"type\":\"string\",\"description\":\"none, hit or built\"},"
    "\"env\":{\"type\":[\"string\",\"null\"]},"
    "\"install_log\":{\"type\":[\"string\",\"null\"]},"
    "\"failed_requirement\":{\"type\":[\"string\",\"null\"]},"
    "\"artifacts\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":[\"string\",\"null\"]},\"size\":{\"type\":\"integer\"},\"mime\":{\"type\":\"string\"},"
    "\"summary\":{\"type\":[\"string\",\"null\"]},\"url\":{\"type\":\"string\"}},"
    "\"required\":[\"path\",\"size\",\"mime\"]}},"
    "\"zip_url\":{\"type\":[\"string\",\"null\"]},"
    "\"zip\":{\"type\":[\"string\",\"null\"]},"
    "\"artifacts_skipped\":{\"type\":\"integer\"},"
    "\"workdir\":{\"type\":[\"string\",\"null\"]},"
    "\"isolation\":{\"type\":[\"string\",\"null\"]},"
    "\"error\":{\"type\":[\"string\",\"null\"]}},"
    "\"required\":[\"run_id\",\"status\",\"logs\",\"artifacts\"]}";

static const char run_code_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"code\":{\"type\":\"string\",\"description\":\"The complete Python 3 script, with all its imports. "
    "It runs in the session's workspace (the current directory). Read input from the file at "
    "os.environ['SCRIPT_INPUT']; write every result file into os.environ['SCRIPT_OUTPUT'].\"},"
    "\"requirements\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":64,"
    "\"description\":\"Third-party packages as PEP 508 requirement specifiers, e.g. [\\\"pandas\\\", "
    "\\\"numpy==1.26.4\\\"] (no pip options, paths or URLs). Optional: imports the script makes are "
    "detected and installed too. Installed once into a cached environment; the result's requirements list "
    "what the environment holds.\"},"
    "\"files\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"url\":{\"type\":\"string\",\"description\":\"http or https URL of the file\"},"
    "\"mountPath\":{\"type\":\"string\",\"description\":\"where it goes, relative to the workspace's "
    "mounts/ folder: 'data/train.csv' is read by the script as mounts/data/train.csv\"}},"
    "\"required\":[\"url\",\"mountPath\"],\"additionalProperties\":false},"
    "\"description\":\"Remote files to download into the workspace's mounts/ folder before the run, as "
    "mount_file does (read-only to the script; the same URL to the same path again is not downloaded "
    "again). If one cannot be fetched, nothing is run and the error names it.\"},"
    "\"input\":{\"type\":\"string\",\"description\":\"Data for the script (JSON, CSV, text, base64): the file "
    "at SCRIPT_INPUT holds exactly these bytes, and so does stdin.\"},"
    "\"timeout\":{\"type\":\"number\",\"exclusiveMinimum\":0,\"description\":\"Wall-clock limit in seconds; "
    "the default and the maximum is the server's limit.\"}},"
    "\"required\":[\"code\"],\"additionalProperties\":false}";

static const char run_my_script_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"code\":{\"type\":\"string\",\"description\":\"The complete Python 3 script, with all its imports. Read "
    "the input from the file at os.environ['SCRIPT_INPUT']; write every output file into "
    "os.environ['SCRIPT_OUTPUT'].\"},"
    "\"user_input\":{\"type\":\"string\",\"description\":\"Input for the script: plain text, JSON, Markdown or "
    "base64 (an image, say). It is the content of the file at SCRIPT_INPUT (and stdin); empty when left "
    "out.\"}},"
    "\"required\":[\"code\"],\"additionalProperties\":false}";

static const char list_dir_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"dir_path\":{\"type\":\"string\",\"description\":\"A folder relative to the session's workspace: '' or '.' "
    "for its top, 'output' for the files run_code scripts wrote to SCRIPT_OUTPUT. No absolute paths, no "
    "'..'.\"}},\"additionalProperties\":false}";

static const char list_dir_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\"},"
    "\"entries\":{\"type\":\"array\",\"items\":{\"type\":\"object\",\"properties\":{"
    "\"name\":{\"type\":\"string\"},\"type\":{\"type\":\"string\",\"description\":\"file, directory, symlink or "
    "other\"},\"size\":{\"type\":\"integer\"}},\"required\":[\"name\",\"type\"]}},"
    "\"truncated\":{\"type\":\"boolean\"}},\"required\":[\"path\",\"entries\",\"truncated\"]}";

static const char preview_file_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"relative_path\":{\"type\":\"string\",\"description\":\"A file relative to the session's workspace, e.g. "
    "'output/result.csv'. No absolute paths, no '..', no symbolic links.\"}},"
    "\"required\":[\"relative_path\"],\"additionalProperties\":false}";

static const char preview_file_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},\"mime\":{\"type\":\"string\"},"
    "\"binary\":{\"type\":\"boolean\"},\"truncated\":{\"type\":\"boolean\"},"
    "\"text\":{\"type\":[\"string\",\"null\"]}},"
    "\"required\":[\"path\",\"size\",\"mime\",\"binary\",\"truncated\"]}";

static const char mount_file_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"url\":{\"type\":\"string\",\"description\":\"http or https URL of the file to download. Only public "
    "addresses are fetched (unless the server's fetch_allow lists others); redirects are followed a few times, "
    "each one checked again.\"},"
    "\"mount_path\":{\"type\":\"string\",\"description\":\"Where the file goes, relative to the workspace's "
    "mounts/ folder: 'data/train.csv' becomes mounts/data/train.csv, which run_code scripts read (read-only). "
    "No absolute paths, no '..'.\"}},"
    "\"required\":[\"url\",\"mount_path\"],\"additionalProperties\":false}";

static const char mount_file_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"mounted_as\":{\"type\":\"string\",\"description\":\"the file relative to the workspace, "
    "mounts/MOUNT_PATH\"},"
    "\"bytes\":{\"type\":\"integer\"},"
    "\"sha256\":{\"type\":\"string\",\"description\":\"SHA-256 of the bytes, lower-case hex\"},"
    "\"mime\":{\"type\":\"string\"}},"
    "\"required\":[\"mounted_as\",\"bytes\",\"sha256\",\"mime\"]}";

static const char persist_artifact_input[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"relative_path\":{\"type\":\"string\",\"description\":\"A file the scripts wrote, relative to the "
    "workspace's output/ folder (SCRIPT_OUTPUT), e.g. 'plots/plot.png'. No absolute paths, no '..', no "
    "symbolic links.\"},"
    "\"presigned_url\":{\"type\":\"string\",\"description\":\"http or https URL that accepts the file with "
    "an HTTP PUT, such as a presigned upload URL of an object store.\"}},"
    "\"required\":[\"relative_path\",\"presigned_url\"],\"additionalProperties\":false}";

static const char persist_artifact_output[] =
    "{\"type\":\"object\",\"properties\":{"
    "\"uploaded_bytes\":{\"type\":\"integer\"},"
    "\"status\":{\"type\":\"integer\",\"description\":\"the HTTP status of the PUT (2xx)\"}},"
    "\"required\":[\"uploaded_bytes\",\"status\"]}";

static const char empty_input[] = "{\"type\":\"object\",\"properties\":{}}";

struct tool_def {
    const char *name, *title, *description;
    const char *input, *output; /* JSON Schema text; output may be NULL */
    bool read_only;
    bool fixture;               /* test_fixture_tools only */
    bool open_world;            /* talks to the outside (and is idempotent) */
};

static const struct tool_def defs[] = {
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
     run_code_input, run_output_schema, false, false},
    {"run_my_script", "Run my script",
     "Run a self-contained Python 3 script in a fresh, empty sandbox (nothing persists between calls), "
     "Run My Script style: user_input becomes the file at os.environ['SCRIPT_INPUT'], every file the script "
     "writes into os.environ['SCRIPT_OUTPUT'] comes back as an artifact with a link and a summary, plus a zip "
     "of them all, and the log holds stdout and stderr. Packages the script imports are installed (cached). "
     "No network access while it runs. A failing script returns isError true with the full log.",
     run_my_script_input, run_output_schema, false, false},
    {"list_dir", "List workspace files",
     "List the files and folders of this session's workspace, where run_code scripts run and leave their "
     "files (output/ holds what they wrote to SCRIPT_OUTPUT). dir_path is relative to the workspace; "
     "symbolic links are listed, never followed.",
     list_dir_input, list_dir_output, true, false},
    {"preview_file", "Preview a workspace file",
     "Show the start of a text file in this session's workspace (the first preview_bytes, 8 KiB by default; "
     "a longer file is cut with a note saying so). For a binary file it gives the size and type instead. "
     "relative_path is relative to the workspace, e.g. 'output/result.csv'.",
     preview_file_input, preview_file_output, true, false},
    {"mount_file", "Mount a remote file",
     "Download a file from an http or https URL into this session's workspace, at mounts/MOUNT_PATH, where "
     "run_code scripts read it (read-only; open('mounts/MOUNT_PATH') from the current directory). Returns "
     "mounted_as, bytes, sha256 and mime. Mounting the same URL to the same path again in the session is a "
     "no-op. Only public addresses are fetched; downloads are capped in size and time. A failure (HTTP "
     "error, timeout, too large, refused address) returns isError true naming the URL and the reason.",
     mount_file_input, mount_file_output, false, false, true},
    {"persist_artifact", "Upload an output file",
     "Upload a file the scripts wrote to output/ (SCRIPT_OUTPUT) with an HTTP PUT to a URL you provide, such "
     "as a presigned upload URL of an object store, so that it outlives the session. relative_path is "
     "relative to output/. Returns uploaded_bytes and the HTTP status. Uploads are capped in size; a failure "
     "returns isError true naming the URL (without its query) and the reason.",
     persist_artifact_input, persist_artifact_output, false, false, true},
    /* The conformance suite's fixtures (test_fixture_tools = on only). */
    {"test_simple_text", NULL, "Test fixture: returns a simple text block.", empty_input, NULL, true, true},
    {"test_image_content", NULL, "Test fixture: returns a 1x1 PNG image block.", empty_input, NULL, true, true},
    {"test_audio_content", NULL, "Test fixture: returns a short WAV audio block.", empty_input, NULL, true, true},
    {"test_embedded_resource", NULL, "Test fixture: returns an embedded text resource.", empty_input, NULL, true,
     true},
    {"test_multiple_content_types", NULL, "Test fixture: returns text, image and resource blocks.", empty_input,
     NULL, true, true},
    {"test_tool_with_logging", NULL, "Test fixture: sends three log notifications, then a result.", empty_input,
     NULL, true, true},
    {"test_tool_with_progress", NULL, "Test fixture: sends progress 0, 50, 100 of 100, then a result.",
     empty_input, NULL, true, true},
    {"test_error_handling", NULL, "Test fixture: always returns a tool error (isError true).", empty_input, NULL,
     true, true},
};

json_object *tools_list(const struct cfg *cfg, const char *version)
{
    json_object *arr = json_object_new_array();
    bool new_fields = strcmp(version, "2025-06-18") >= 0; /* title, outputSchema */
    for (size_t i = 0; i < ARRAY_SIZE(defs); i++) {
        const struct tool_def *d = &defs[i];
        if (d->fixture && !cfg->test_fixture_tools)
            continue;
        json_object *t = json_object_new_object();
        json_object_object_add(t, "name", json_object_new_string(d->name));
        if (d->title && new_fields)
            json_object_object_add(t, "title", json_object_new_string(d->title));
        json_object_object_add(t, "description", json_object_new_string(d->description));
        json_object *in = json_tokener_parse(d->input);
        if (!strcmp(d->name, "run_code")) {
            /* The timeout's maximum and the most files are the server's. */
            json_object *props, *timeout, *files;
            if (json_object_object_get_ex(in, "properties", &props) &&
                json_object_object_get_ex(props, "timeout", &timeout))
                json_object_object_add(timeout, "maximum",
                                       json_object_new_double((double)cfg->exec.limits.wall_ms / 1000.0));
            if (json_object_object_get_ex(in, "properties", &props) &&
                json_object_object_get_ex(props, "files", &files))
                json_object_object_add(files, "maxItems",
                                       json_object_new_int64((int64_t)cfg->fetch.limits.mount_files));
        }
        json_object_object_add(t, "inputSchema", in);
        if (d->output && new_fields)
            json_object_object_add(t, "outputSchema", json_tokener_parse(d->output));
        json_object *ann = json_object_new_object();
        json_object_object_add(ann, "readOnlyHint", json_object_new_boolean(d->read_only));
        json_object_object_add(ann, "destructiveHint", json_object_new_boolean(false));
        json_object_object_add(ann, "idempotentHint", json_object_new_boolean(d->read_only || d->open_world));
        json_object_object_add(ann, "openWorldHint", json_object_new_boolean(d->open_world));
        json_object_object_add(t, "annotations", ann);
        json_object_array_add(arr, t);
    }
    return arr;
}

/* ---------------------------------------------------------------- results */

static json_object *text_block(const char *s, size_t n)
{
    json_object *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("text"));
    json_object_object_add(b, "text", json_object_new_string_len(s, (int)n));
    return b;
}

/* A result: content [text], isError; steals structured (may be NULL). */
static json_object *simple_result(const char *text, bool is_error, json_object *structured)
{
    json_object *r = json_object_new_object();
    json_object *content = json_object_new_array();
    json_object_array_add(content, text_block(text, strlen(text)));
    json_object_object_add(r, "content", content);
    if (structured)
        json_object_object_add(r, "structuredContent", structured);
    json_object_object_add(r, "isError", json_object_new_boolean(is_error));
    return r;
}

static json_object *arg_error(const char *fmt, ...) printf_like(1, 2);
static json_object *arg_error(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return simple_result(msg, true, NULL);
}

/* Unknown arguments are refused with the list of known ones: a model that
 * misspelled one learns it at once. */
static json_object *check_known(json_object *args, const char *const *known, const char *tool)
{
    if (!args)
        return NULL;
    json_object_object_foreach(args, k, v)
    {
        (void)v;
        bool ok = false;
        for (const char *const *p = known; *p; p++)
            ok = ok || !strcmp(*p, k);
        if (!ok) {
            char list[256] = "";
            for (const char *const *p = known; *p; p++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", p == known ? "" : ", ", *p);
            return arg_error("%s: unknown argument '%.100s' (it takes: %s)", tool, k, list);
        }
    }
    return NULL;
}

static json_object *get_arg(json_object *args, const char *key)
{
    json_object *v = NULL;
    if (args && json_object_object_get_ex(args, key, &v) && !json_object_is_type(v, json_type_null))
        return v;
    return NULL;
}

/* Appends text to b cut to fit (a cut UTF-8 sequence becomes U+FFFD later). */
static void put_text(struct dbuf *b, const char *s, size_t n)
{
    size_t room = b->max > b->len ? b->max - b->len : 0;
    discard(dbuf_append(b, s, n < room ? n : room));
}

static void summary_text(struct mcp_call *c, const struct exec_result *r, struct dbuf *b)
{
    char hs[32];
    discard(dbuf_printf(b, "status: %s", exec_status_name(r->status)));
    if (r->limit)
        discard(dbuf_printf(b, " (limit %s)", r->limit));
    if (r->signal)
        discard(dbuf_printf(b, ", killed by signal %d", r->signal));
    else if (r->exit_code >= 0)
        discard(dbuf_printf(b, ", exit code %d", r->exit_code));
    discard(dbuf_printf(b, ", %lld ms, run %s\n", (long long)r->duration_ms, r->run_id));
    if (r->error)
        discard(dbuf_printf(b, "error: %s\n", r->error));
    if (r->n_requirements == 0 && r->status != EXEC_STATUS_SANDBOX_ERROR) {
        /* nothing */
    }
    const struct exec_log *log = &r->log;
    discard(dbuf_printf(b, "--- log%s ---\n", r->log.truncated ? " (truncated at log_bytes)" : ""));
    if (log->buf.len <= TOOLS_TEXT_LOG_MAX) {
        put_text(b, log->buf.data ? log->buf.data : "", log->buf.len);
    } else {
        /* The start (where the problem often begins) and the end (the
         * traceback); the whole log is in structuredContent.logs. */
        size_t head = TOOLS_TEXT_LOG_MAX / 4, tail = TOOLS_TEXT_LOG_MAX - head;
        put_text(b, log->buf.data, head);
        discard(dbuf_printf(b, "\n[... %zu bytes left out here; structuredContent.logs has them all ...]\n",
                            log->buf.len - head - tail));
        put_text(b, log->buf.data + log->buf.len - tail, tail);
    }
    if (b->len && b->data[b->len - 1] != '\n')
        discard(dbuf_append(b, "\n", 1));
    if (r->n_artifacts == 0) {
        discard(dbuf_printf(b, "--- no artifacts (files written to SCRIPT_OUTPUT come back here) ---\n"));
        return;
    }
    discard(dbuf_printf(b, "--- artifacts (%zu) ---\n", r->n_artifacts));
    for (size_t i = 0; i < r->n_artifacts && i < TOOLS_TEXT_ARTIFACTS_MAX; i++) {
        const struct exec_artifact *a = &r->artifacts[i];
        cleanup_free char *enc = result_url_path(a->path);
        util_human_size(a->size, hs, sizeof hs);
        discard(dbuf_printf(b, "%s  %s  %s  %s/artifacts/%s/%s\n", a->path, hs, a->summary ? a->summary : "",
                            c->base_url, r->run_id, enc ? enc : ""));
    }
    if (r->n_artifacts > TOOLS_TEXT_ARTIFACTS_MAX)
        discard(dbuf_printf(b, "... and %zu more (structuredContent.artifacts lists them all)\n",
                            r->n_artifacts - TOOLS_TEXT_ARTIFACTS_MAX));
    if (r->has_zip)
        discard(dbuf_printf(b, "all as one zip: %s/artifacts/%s.zip\n", c->base_url, r->run_id));
}

static bool inline_image(const char *mime)
{
    return !strcmp(mime, "image/png") || !strcmp(mime, "image/jpeg") || !strcmp(mime, "image/gif") ||
           !strcmp(mime, "image/webp");
}

static json_object *run_result(struct mcp_call *c, const struct exec_result *r)
{
    const struct cfg *cfg = c->app->cfg;
    json_object *res = json_object_new_object();
    json_object *content = json_object_new_array();

    struct dbuf b;
    dbuf_init(&b, TOOLS_TEXT_LOG_MAX + 16384);
    summary_text(c, r, &b);
    size_t tn;
    cleanup_free char *text = util_utf8_sanitize(b.data ? b.data : "", b.len, &tn);
    dbuf_free(&b);
    if (text)
        json_object_array_add(content, text_block(text, tn));

    /* Small images inline, within one budget for the whole result. */
    cleanup_free char *out_dir = NULL;
    if (asprintf(&out_dir, "%s/output", r->run_dir) < 0)
        out_dir = NULL;
    cleanup_fd int ofd = out_dir ? open(out_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    uint64_t budget = cfg->image_inline_bytes;
    for (size_t i = 0; ofd >= 0 && i < r->n_artifacts; i++) {
        const struct exec_artifact *a = &r->artifacts[i];
        if (!inline_image(a->mime) || a->size == 0 || a->size > budget)
            continue;
        cleanup_fd int fd = ws_open_beneath(ofd, a->path, O_RDONLY | O_NONBLOCK, 0);
        cleanup_free char *data = NULL;
        size_t n;
        if (fd < 0 || util_read_fd(fd, (size_t)a->size, &data, &n) < 0)
            continue;
        cleanup_free char *b64 = app_base64((const unsigned char *)data, n, NULL);
        if (!b64)
            continue;
        budget -= n;
        json_object *img = json_object_new_object();
        json_object_object_add(img, "type", json_object_new_string("image"));
        json_object_object_add(img, "data", json_object_new_string(b64));
        json_object_object_add(img, "mimeType", json_object_new_string(a->mime));
        json_object_array_add(content, img);
    }

    /* resource_link exists from 2025-06-18 on; links need an absolute base. */
    if (strcmp(c->version, "2025-06-18") >= 0 && c->base_url[0]) {
        size_t links = 0;
        for (size_t i = 0; i < r->n_artifacts && links < TOOLS_LINKS_MAX; i++, links++) {
            const struct exec_artifact *a = &r->artifacts[i];
            cleanup_free char *enc = result_url_path(a->path);
            cleanup_free char *uri = NULL;
            cleanup_free char *name = util_utf8_sanitize(a->path, strlen(a->path), NULL);
            if (!enc || !name || asprintf(&uri, "%s/artifacts/%s/%s", c->base_url, r->run_id, enc) < 0)
                continue;
            json_object *l = json_object_new_object();
            json_object_object_add(l, "type", json_object_new_string("resource_link"));
            json_object_object_add(l, "uri", json_object_new_string(uri));
            json_object_object_add(l, "name", json_object_new_string(name));
            json_object_object_add(l, "mimeType", json_object_new_string(a->mime));
            json_object_object_add(l, "size", json_object_new_int64((int64_t)a->size));
            if (a->summary) {
                cleanup_free char *sum = util_utf8_sanitize(a->summary, strlen(a->summary), NULL);
                if (sum)
                    json_object_object_add(l, "description", json_object_new_string(sum));
            }
            json_object_array_add(content, l);
        }
        if (r->has_zip) {
            cleanup_free char *uri = NULL;
            if (asprintf(&uri, "%s/artifacts/%s.zip", c->base_url, r->run_id) >= 0) {
                json_object *l = json_object_new_object();
                json_object_object_add(l, "type", json_object_new_string("resource_link"));
                json_object_object_add(l, "uri", json_object_new_string(uri));
                json_object_object_add(l, "name", json_object_new_string("artifacts.zip"));
                json_object_object_add(l, "mimeType", json_object_new_string("application/zip"));
                json_object_object_add(l, "description", json_object_new_string("all artifacts of the run"));
                json_object_array_add(content, l);
            }
        }
    }
    json_object_object_add(res, "content", content);
    json_object_object_add(res, "structuredContent", result_to_json(r));
    json_object_object_add(res, "isError", json_object_new_boolean(r->status != EXEC_STATUS_OK));
    return res;
}

/* ------------------------------------------------------------- the runs */

/* One entry of run_code's files: borrowed from the arguments. */
struct file_arg {
    const char *url, *path;
};

struct run_ctx {
    struct mcp_call *call;
    struct exec_result *r;
    bool recorded;
    struct dbuf line[3];  /* the partial line of each stream */
};

static const enum mcp_level stream_level[] = {MCP_LOG_INFO, MCP_LOG_WARNING, MCP_LOG_NOTICE};
static const char *const stream_logger[] = {"stdout", "stderr", "runmyscript"};

static void emit_line(struct run_ctx *x, enum exec_stream s)
{
    struct dbuf *b = &x->line[s];
    size_t n = b->len;
    while (n && (b->data[n - 1] == '\n' || b->data[n - 1] == '\r'))
        n--;
    mcp_call_log(x->call, stream_level[s], stream_logger[s], b->data ? b->data : "", n);
    b->len = 0;
}

static void on_output(void *ctx, enum exec_stream s, const char *data, size_t len)
{
    struct run_ctx *x = ctx;
    if ((size_t)s >= ARRAY_SIZE(x->line))
        return;
    struct dbuf *b = &x->line[s];
    while (len) {
        const char *nl = memchr(data, '\n', len);
        size_t take = nl ? (size_t)(nl - data) + 1 : len;
        if (take > TOOLS_LOG_LINE_MAX - b->len)
            take = TOOLS_LOG_LINE_MAX - b->len;
        discard(dbuf_append(b, data, take)); /* fits: the buffer's max is the line max */
        data += take;
        len -= take;
        if (b->len >= TOOLS_LOG_LINE_MAX || b->data[b->len - 1] == '\n')
            emit_line(x, s);
    }
}

static void on_phase(void *ctx, enum exec_phase p, const char *detail)
{
    static const char *const what[] = {"queued", "resolving the environment", "installing requirements",
                                       "running", "collecting artifacts", "done"};
    struct run_ctx *x = ctx;
    if (!x->recorded && x->r->run_id[0]) {
        x->recorded = true;
        mcp_call_set_run(x->call, x->r->run_id);
    }
    if (p == EXEC_PHASE_DONE || p == EXEC_PHASE_COLLECTING)
        for (size_t s = 0; s < ARRAY_SIZE(x->line); s++)
            if (x->line[s].len)
                emit_line(x, (enum exec_stream)s);
    char msg[160];
    snprintf(msg, sizeof msg, "%s%s%s", (size_t)p < ARRAY_SIZE(what) ? what[p] : "working", detail ? ": " : "",
             detail ? detail : "");
    /* The call said "queued" (0) when it began; a wait that exec_run
     * reports (for a run slot, or the session's other run) is 0.5, since
     * progress must grow. */
    double progress = p == EXEC_PHASE_QUEUED ? 0.5 : (double)p;
    mcp_call_progress(x->call, progress, (double)EXEC_PHASE_DONE, msg);
}

static void on_install_line(void *ctx, const char *line)
{
    struct run_ctx *x = ctx;
    mcp_call_log(x->call, MCP_LOG_INFO, "installer", line, strlen(line));
}

static bool on_cancelled(void *ctx)
{
    struct run_ctx *x = ctx;
    return mcp_call_cancelled(x->call);
}

static int mount_files(struct mcp_call *c, const struct file_arg *files, size_t n_files, json_object **result);

static int run(struct mcp_call *c, const char *code, size_t code_len, const char *input, size_t input_len,
               const char *const *reqs, size_t n_reqs, const struct file_arg *files, size_t n_files, int64_t wall_ms,
               bool in_session, json_object **result)
{
    const struct cfg *cfg = c->app->cfg;
    struct exec_spec spec;
    exec_spec_init(&spec, &cfg->exec);
    spec.code = code;
    spec.code_len = code_len;
    spec.input = input;
    spec.input_len = input_len;
    spec.requirements = reqs;
    spec.n_requirements = n_reqs;
    if (wall_ms > 0)
        spec.limits.wall_ms = wall_ms;
    cleanup_free char *workspace = NULL;
    if (in_session && asprintf(&workspace, "%s/workspace", c->session_dir) < 0)
        return -ENOMEM;
    spec.workspace = workspace;

    const char *why = NULL;
    int rc = exec_check_code(code, code_len, &spec.limits, &why);
    if (rc == 0 && spec.limits.input_bytes && input_len > spec.limits.input_bytes) {
        rc = -E2BIG;
        why = "the input is larger than input_bytes";
    }
    if (rc < 0) {
        *result = arg_error("%s; nothing was run", why);
        return 0;
    }
    /* Requirements (the list and a PEP 723 block) are checked before
     * anything is made: a refusal is the caller's to fix. */
    char rwhy[512] = "";
    rc = exec_check_requirements(&spec, rwhy, sizeof rwhy);
    if (rc == -EINVAL) {
        *result = arg_error("%s; nothing was run", rwhy);
        return 0;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "checking requirements: %s", rwhy);
        return rc;
    }
    if (mcp_call_client_cancelled(c))
        return -ECANCELED;

    mcp_call_progress(c, (double)EXEC_PHASE_QUEUED, (double)EXEC_PHASE_DONE, "queued");
    /* The files first: one that cannot be fetched is the caller's to fix,
     * and nothing runs without it. */
    rc = mount_files(c, files, n_files, result);
    if (rc < 0 || *result)
        return rc;

    struct exec_result r;
    struct run_ctx x = {.call = c, .r = &r};
    for (size_t i = 0; i < ARRAY_SIZE(x.line); i++)
        dbuf_init(&x.line[i], TOOLS_LOG_LINE_MAX);
    struct exec_sink sink = {
        .ctx = &x, .phase = on_phase, .output = on_output, .install_line = on_install_line,
        .cancelled = on_cancelled,
    };
    exec_result_init(&r);
    rc = exec_run(&spec, &sink, &r);
    for (size_t i = 0; i < ARRAY_SIZE(x.line); i++)
        dbuf_free(&x.line[i]);
    if (r.status == EXEC_STATUS_CANCELLED && mcp_call_client_cancelled(c)) {
        rc = -ECANCELED;
    } else if (rc == -EBUSY) {
        /* Not a failure of the service: the caller should come back later. */
        *result = simple_result(r.error, true, NULL);
        rc = 0;
    } else if (rc < 0) {
        *result = result_to_json(&r);
        log_msg(LOG_LVL_ERROR, "run %s: sandbox error: %s", r.run_id, r.error ? r.error : strerror(-rc));
    } else {
        *result = run_result(c, &r);
        log_msg(LOG_LVL_INFO, "run %s: %s in %lld ms", r.run_id, exec_status_name(r.status),
                (long long)r.duration_ms);
    }
    exec_result_free(&r);
    /* -ENOENT means "no such tool" to tools_call's caller; a missing file
     * (the import map, the interpreter) is a sandbox error like the rest. */
    return rc == -ENOENT ? -EIO : rc;
}

static int run_code(struct mcp_call *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"code", "requirements", "files", "input", "timeout", NULL};
    const struct cfg *cfg = c->app->cfg;
    if ((*result = check_known(args, known, "run_code")))
        return 0;
    json_object *code = get_arg(args, "code"), *reqs = get_arg(args, "requirements"), *files = get_arg(args, "files"),
                *input = get_arg(args, "input"), *timeout = get_arg(args, "timeout");
    if (!code || !json_object_is_type(code, json_type_string)) {
        *result = arg_error("run_code: code (a string holding the whole Python script) is required");
        return 0;
    }
    size_t n_files = files && json_object_is_type(files, json_type_array) ? json_object_array_length(files) : 0;
    if (files && !json_object_is_type(files, json_type_array)) {
        *result = arg_error("run_code: files must be a list of {\"url\": ..., \"mountPath\": ...} objects; "
                            "nothing was run");
        return 0;
    }
    if (n_files > cfg->fetch.limits.mount_files) {
        *result = arg_error("run_code: at most %llu files (mount_files); nothing was run",
                            (unsigned long long)cfg->fetch.limits.mount_files);
        return 0;
    }
    cleanup_free struct file_arg *file_v = n_files ? calloc(n_files, sizeof *file_v) : NULL;
    if (n_files && !file_v)
        return -ENOMEM;
    for (size_t i = 0; i < n_files; i++) {
        static const char *const fknown[] = {"url", "mountPath", NULL};
        json_object *e = json_object_array_get_idx(files, i);
        json_object *u = NULL, *mp = NULL;
        if (json_object_is_type(e, json_type_object)) {
            u = get_arg(e, "url");
            mp = get_arg(e, "mountPath");
            char what[48];
            snprintf(what, sizeof what, "run_code: files[%zu]", i);
            if ((*result = check_known(e, fknown, what)))
                return 0;
        }
        if (!u || !mp || !json_object_is_type(u, json_type_string) || !json_object_is_type(mp, json_type_string)) {
            *result = arg_error("run_code: files[%zu] must be an object with url and mountPath, both strings, "
                                "e.g. {\"url\": \"https://example.org/data.csv\", \"mountPath\": \"data.csv\"}; "
                                "nothing was run",
                                i);
            return 0;
        }
        file_v[i] = (struct file_arg){json_object_get_string(u), json_object_get_string(mp)};
        /* Every URL and path is checked before the first download. */
        char err[FETCH_ERR_MAX];
        int rc = fetch_url_check(file_v[i].url, err, sizeof err);
        if (rc == -EINVAL) {
            cleanup_free char *clean = util_utf8_sanitize(err, strlen(err), NULL);
            *result = arg_error("run_code: files[%zu]: %s; nothing was run", i, clean ? clean : "a bad URL");
            return 0;
        }
        if (!ws_rel_path_ok(file_v[i].path)) {
            cleanup_free char *clean = util_utf8_sanitize(file_v[i].path, strlen(file_v[i].path), NULL);
            *result = arg_error("run_code: files[%zu]: mountPath '%.200s' is not a safe path relative to mounts/ "
                                "(no '..', '.', empty parts or leading '/'); nothing was run",
                                i, clean ? clean : "?");
            return 0;
        }
    }
    if (input && !json_object_is_type(input, json_type_string)) {
        *result = arg_error("run_code: input must be a string (JSON, CSV, text or base64)");
        return 0;
    }
    int64_t wall_ms = 0;
    if (timeout) {
        double s = json_object_get_double(timeout);
        double max = (double)cfg->exec.limits.wall_ms / 1000.0;
        if ((!json_object_is_type(timeout, json_type_int) && !json_object_is_type(timeout, json_type_double)) ||
            !(s > 0) || s > max) {
            *result = arg_error("run_code: timeout must be a number of seconds above 0 and at most %g (the "
                                "server's limit)",
                                max);
            return 0;
        }
        wall_ms = (int64_t)(s * 1000.0);
        if (wall_ms < 100)
            wall_ms = 100;
    }
    size_t n_reqs = 0;
    cleanup_free const char **req_v = NULL;
    if (reqs) {
        if (!json_object_is_type(reqs, json_type_array)) {
            *result = arg_error("run_code: requirements must be a list of strings such as [\"pandas\"]");
            return 0;
        }
        n_reqs = json_object_array_length(reqs);
        if (n_reqs > TOOLS_MAX_REQUIREMENTS) {
            *result = arg_error("run_code: at most %d requirements", TOOLS_MAX_REQUIREMENTS);
            return 0;
        }
        req_v = calloc(n_reqs + 1, sizeof *req_v);
        if (!req_v)
            return -ENOMEM;
        for (size_t i = 0; i < n_reqs; i++) {
            json_object *e = json_object_array_get_idx(reqs, i);
            const char *s = json_object_get_string(e);
            size_t len = (size_t)json_object_get_string_len(e);
            bool ok = json_object_is_type(e, json_type_string) && len > 0 && len <= TOOLS_REQUIREMENT_MAX;
            for (size_t k = 0; ok && k < len; k++)
                ok = (unsigned char)s[k] >= 0x20 && s[k] != 0x7f;
            if (!ok) {
                *result = arg_error("run_code: requirements[%zu] must be a requirement specifier such as "
                                    "\"numpy==1.26.4\" (1 to %d printable characters)",
                                    i, TOOLS_REQUIREMENT_MAX);
                return 0;
            }
            req_v[i] = s;
        }
    }
    return run(c, json_object_get_string(code), (size_t)json_object_get_string_len(code),
               input ? json_object_get_string(input) : NULL, input ? (size_t)json_object_get_string_len(input) : 0,
               req_v, n_reqs, file_v, n_files, wall_ms, true, result);
}

static int run_my_script(struct mcp_call *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"code", "user_input", NULL};
    if ((*result = check_known(args, known, "run_my_script")))
        return 0;
    json_object *code = get_arg(args, "code"), *input = get_arg(args, "user_input");
    if (!code || !json_object_is_type(code, json_type_string)) {
        *result = arg_error("run_my_script: code (a string holding the whole Python script) is required");
        return 0;
    }
    if (input && !json_object_is_type(input, json_type_string)) {
        *result = arg_error("run_my_script: user_input must be a string (text, JSON, Markdown or base64)");
        return 0;
    }
    return run(c, json_object_get_string(code), (size_t)json_object_get_string_len(code),
               input ? json_object_get_string(input) : NULL, input ? (size_t)json_object_get_string_len(input) : 0,
               NULL, 0, NULL, 0, 0, false, result);
}

/* ------------------------------------------------------- the workspace */

static int open_workspace(struct mcp_call *c)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/workspace", c->session_dir);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* "", ".", "./" and trailing slashes: the path as ws_rel_path_ok wants it
 * ("" for the top). Copies into out. */
static void normalise(const char *in, char *out, size_t outlen)
{
    while (in[0] == '.' && in[1] == '/')
        in += 2;
    snprintf(out, outlen, "%s", in);
    size_t n = strlen(out);
    while (n && out[n - 1] == '/')
        out[--n] = '\0';
    if (!strcmp(out, "."))
        out[0] = '\0';
}

static const char *open_error(int rc)
{
    switch (-rc) {
    case ENOENT: return "there is no such file or folder";
    case ELOOP: return "it is (or passes through) a symbolic link, which is never followed";
    case EXDEV: return "it leads out of the workspace";
    case ENOTDIR: return "a part of it is not a folder";
    case EINVAL: return "it must be relative to the workspace, without '..' or empty parts";
    case EACCES: return "permission denied";
    default: return strerror(-rc);
    }
}

struct entry {
    char *name;
    const char *type;
    int64_t size;
};

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

static int list_dir(struct mcp_call *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"dir_path", NULL};
    if ((*result = check_known(args, known, "list_dir")))
        return 0;
    json_object *dp = get_arg(args, "dir_path");
    if (dp && !json_object_is_type(dp, json_type_string)) {
        *result = arg_error("list_dir: dir_path must be a string");
        return 0;
    }
    char rel[1100];
    normalise(dp ? json_object_get_string(dp) : "", rel, sizeof rel);
    cleanup_fd int ws = open_workspace(c);
    if (ws < 0)
        return ws;
    cleanup_fd int dfd = -1;
    if (!rel[0])
        dfd = fcntl(ws, F_DUPFD_CLOEXEC, 0);
    else if (!ws_rel_path_ok(rel))
        dfd = -EINVAL;
    else
        dfd = ws_open_beneath(ws, rel, O_RDONLY | O_DIRECTORY, 0);
    if (dfd < 0) {
        *result = arg_error("list_dir: cannot list '%s': %s", rel[0] ? rel : ".", open_error(dfd));
        return 0;
    }
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    struct entry *v = NULL;
    size_t n = 0, cap = 0;
    bool truncated = false;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        if (n == TOOLS_LIST_DIR_MAX) {
            truncated = true;
            break;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            struct entry *nv = realloc(v, cap * sizeof *nv);
            if (!nv)
                break;
            v = nv;
        }
        struct stat st;
        struct entry *e = &v[n];
        e->size = -1;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        e->type = S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "directory" : S_ISLNK(st.st_mode) ? "symlink" : "other";
        if (S_ISREG(st.st_mode))
            e->size = (int64_t)st.st_size;
        e->name = util_utf8_sanitize(de->d_name, strlen(de->d_name), NULL);
        if (e->name)
            n++;
    }
    if (n > 1)
        qsort(v, n, sizeof *v, cmp_entry);
    json_object *sc = json_object_new_object();
    json_object *entries = json_object_new_array();
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    discard(dbuf_printf(&b, "workspace/%s: %zu entr%s%s\n", rel, n, n == 1 ? "y" : "ies",
                        truncated ? " (more not shown)" : ""));
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "name", json_object_new_string(v[i].name));
        json_object_object_add(e, "type", json_object_new_string(v[i].type));
        if (v[i].size >= 0)
            json_object_object_add(e, "size", json_object_new_int64(v[i].size));
        json_object_array_add(entries, e);
        char hs[32] = "";
        if (v[i].size >= 0)
            util_human_size((uint64_t)v[i].size, hs, sizeof hs);
        discard(dbuf_printf(&b, "%s%s  %s\n", v[i].name, !strcmp(v[i].type, "directory") ? "/" : "",
                            v[i].size >= 0 ? hs : v[i].type));
        free(v[i].name);
    }
    free(v);
    json_object_object_add(sc, "path", json_object_new_string(rel));
    json_object_object_add(sc, "entries", entries);
    json_object_object_add(sc, "truncated", json_object_new_boolean(truncated));
    cleanup_free char *text = dbuf_steal(&b, NULL);
    *result = simple_result(text ? text : "", false, sc);
    return 0;
}

static int preview_file(struct mcp_call *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"relative_path", NULL};
    const struct cfg *cfg = c->app->cfg;
    if ((*result = check_known(args, known, "preview_file")))
        return 0;
    json_object *rp = get_arg(args, "relative_path");
    if (!rp || !json_object_is_type(rp, json_type_string)) {
        *result = arg_error("preview_file: relative_path (a file relative to the workspace) is required");
        return 0;
    }
    char rel[1100];
    normalise(json_object_get_string(rp), rel, sizeof rel);
    cleanup_fd int ws = open_workspace(c);
    if (ws < 0)
        return ws;
    cleanup_fd int fd = ws_rel_path_ok(rel) ? ws_open_beneath(ws, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0) : -EINVAL;
    struct stat st;
    if (fd < 0) {
        *result = arg_error("preview_file: cannot open '%s': %s", rel, open_error(fd));
        return 0;
    }
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode)) {
        *result = arg_error("preview_file: '%s' is %s, not a file%s", rel,
                            S_ISDIR(st.st_mode) ? "a folder" : "a special file",
                            S_ISDIR(st.st_mode) ? " (list_dir lists it)" : "");
        return 0;
    }
    size_t cap = (size_t)cfg->preview_bytes;
    cleanup_free unsigned char *buf = malloc(cap + 1);
    if (!buf)
        return -ENOMEM;
    size_t got = 0;
    while (got < cap) {
        ssize_t r = pread(fd, buf + got, cap - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    bool truncated = (uint64_t)st.st_size > got;
    const char *base = strrchr(rel, '/');
    const char *mime = art_mime(buf, got, base ? base + 1 : rel);
    /* Text: valid UTF-8 with no NUL, except a sequence cut at the end. */
    size_t check = got;
    if (truncated) {
        size_t back = 0;
        while (back < 3 && back < check && (buf[check - 1 - back] & 0xc0) == 0x80)
            back++;
        if (back < check && buf[check - 1 - back] >= 0xc0)
            check -= back + 1;
    }
    bool binary = memchr(buf, '\0', got) != NULL || !util_utf8_valid((const char *)buf, check);
    char hs[32], ps[32];
    util_human_size((uint64_t)st.st_size, hs, sizeof hs);
    util_human_size(got, ps, sizeof ps);
    json_object *sc = json_object_new_object();
    json_object_object_add(sc, "path", json_object_new_string(rel));
    json_object_object_add(sc, "size", json_object_new_int64((int64_t)st.st_size));
    json_object_object_add(sc, "mime", json_object_new_string(mime));
    json_object_object_add(sc, "binary", json_object_new_boolean(binary));
    json_object_object_add(sc, "truncated", json_object_new_boolean(truncated));
    struct dbuf b;
    dbuf_init(&b, cap + 4096);
    if (binary) {
        json_object_object_add(sc, "text", NULL);
        discard(dbuf_printf(&b, "%s: a binary file (%s, %s); not shown", rel, mime, hs));
    } else {
        json_object_object_add(sc, "text", json_object_new_string_len((const char *)buf, (int)check));
        discard(dbuf_append(&b, buf, check));
        if (truncated)
            discard(dbuf_printf(&b, "\n[truncated: this shows the first %s of %s; the file is %s]", ps, hs, rel));
    }
    cleanup_free char *text = dbuf_steal(&b, NULL);
    *result = simple_result(text ? text : "", false, sc);
    return 0;
}

/* ------------------------------------------------------------ transfers */

/* A transfer's progress notifications and the client's cancel, polled by
 * fetch.c while bytes move. Values run from lo towards hi as the bytes
 * come (hi 0: the byte count itself, total the announced size). */
struct xfer_progress {
    struct mcp_call *call;
    const char *what;          /* "downloading URL": the message's start */
    double lo, hi, steps;      /* steps: the notifications' total (hi > 0) */
    int64_t last_ms;
};

static bool on_xfer(void *ctx, uint64_t done, uint64_t total)
{
    struct xfer_progress *x = ctx;
    int64_t now = util_now_ms();
    if (x->last_ms && now - x->last_ms < TOOLS_XFER_POLL_MS)
        return false;
    x->last_ms = now;
    if (done > 0) {
        char msg[700], hd[32], ht[32] = "";
        util_human_size(done, hd, sizeof hd);
        if (total)
            util_human_size(total, ht, sizeof ht);
        snprintf(msg, sizeof msg, "%s: %s%s%s", x->what, hd, total ? " of " : "", ht);
        if (x->hi > 0) {
            /* A fraction that only grows, also when the size is unknown. */
            double f = total ? (double)done / (double)total : (double)done / ((double)done + (1 << 20));
            if (f > 1)
                f = 1;
            f = 0.01 + 0.99 * f; /* above the start's value */
            mcp_call_progress(x->call, x->lo + (x->hi - x->lo) * f, x->steps, msg);
        } else {
            mcp_call_progress(x->call, (double)done, (double)total, msg);
        }
    }
    return mcp_call_cancelled(x->call);
}

/* One transfer of a call: the URL as it may be shown, the progress
 * message, and the server's fetch settings with this call's progress and
 * cancel. Not to be moved once started (it points into itself). */
struct xfer_call {
    char shown[512];           /* the URL redacted (fetch_url_redact) */
    char what[600];            /* "VERB URL" */
    char err[FETCH_ERR_MAX];
    struct xfer_progress xp;
    struct fetch_config fc;
};

/* Sets t up for url and sends the first progress notification: at lo
 * when the values run between lo and hi of steps, else at 0 (bytes). */
static void xfer_start(struct mcp_call *c, struct xfer_call *t, const char *verb, const char *url, double lo,
                       double hi, double steps)
{
    fetch_url_redact(url, t->shown, sizeof t->shown);
    snprintf(t->what, sizeof t->what, "%s %s", verb, t->shown);
    t->err[0] = '\0';
    t->xp = (struct xfer_progress){.call = c, .what = t->what, .lo = lo, .hi = hi, .steps = steps};
    t->fc = c->app->cfg->fetch;
    t->fc.progress = on_xfer;
    t->fc.progress_ctx = &t->xp;
    mcp_call_progress(c, hi > 0 ? lo + (hi - lo) * 0.005 : 0, steps, t->what);
}

/* A failed transfer: -ECANCELED when the client cancelled (send nothing),
 * else an isError result "TOOL: REASON TAIL" with fetch.c's one-line reason
 * (the URL in it without its query). */
static int xfer_error(struct mcp_call *c, const char *tool, int rc, const char *err, const char *tail,
                      json_object **result)
{
    if (rc == -ECANCELED && mcp_call_client_cancelled(c))
        return -ECANCELED;
    log_msg(LOG_LVL_INFO, "%s failed: %s", tool, strerror(-rc));
    cleanup_free char *clean = util_utf8_sanitize(err, strlen(err), NULL);
    *result = arg_error("%s: %s%s", tool, clean ? clean : strerror(-rc), tail);
    return 0;
}

static json_object *mount_result(const char *shown, const struct fetch_mount *m)
{
    json_object *sc = result_mount_json(m);
    if (!sc)
        return NULL;
    char hs[32], text[1200];
    util_human_size(m->bytes, hs, sizeof hs);
    cleanup_free char *as = util_utf8_sanitize(m->mounted_as, strlen(m->mounted_as), NULL);
    snprintf(text, sizeof text,
             "%s %s as %s (%s, %s, sha256 %s). Scripts read it at %s, relative to their current directory "
             "(read-only).",
             m->reused ? "already mounted (not fetched again):" : "mounted", shown, as ? as : "?", hs, m->mime,
             m->sha256, as ? as : "?");
    return simple_result(text, false, sc);
}

static int mount_file(struct mcp_call *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"url", "mount_path", NULL};
    if ((*result = check_known(args, known, "mount_file")))
        return 0;
    json_object *url = get_arg(args, "url"), *mp = get_arg(args, "mount_path");
    if (!url || !json_object_is_type(url, json_type_string) || !mp || !json_object_is_type(mp, json_type_string)) {
        *result = arg_error("mount_file: url (an http or https URL) and mount_path (a path relative to mounts/, "
                            "e.g. 'data/train.csv') are required, both strings");
        return 0;
    }
    struct xfer_call t;
    xfer_start(c, &t, "downloading", json_object_get_string(url), 0, 0, 0);
    struct fetch_mount m;
    int rc = fetch_mount(&t.fc, c->session_dir, json_object_get_string(url), json_object_get_string(mp), &m, t.err,
                         sizeof t.err);
    if (rc < 0)
        return xfer_error(c, "mount_file", rc, t.err, "", result);
    *result = mount_result(t.shown, &m);
    log_msg(LOG_LVL_INFO, "mount_file: %s %llu bytes", m.reused ? "kept" : "mounted", (unsigned long long)m.bytes);
    fetch_mount_free(&m);
    return *result ? 0 : -ENOMEM;
}

/* run_code's files, into the session's mounts/ before the run. 0 with
 * *result NULL when all are there; 0 with an isError *result when one
 * failed (nothing runs); -ECANCELED or another -errno. */
static int mount_files(struct mcp_call *c, const struct file_arg *files, size_t n_files, json_object **result)
{
    *result = NULL;
    for (size_t i = 0; i < n_files; i++) {
        char verb[48];
        snprintf(verb, sizeof verb, "downloading files[%zu]", i);
        /* Between "queued" (0) and the next phase (1), file after file. */
        struct xfer_call t;
        xfer_start(c, &t, verb, files[i].url, 0.99 * (double)i / (double)n_files,
                   0.99 * (double)(i + 1) / (double)n_files, (double)EXEC_PHASE_DONE);
        struct fetch_mount m;
        int rc = fetch_mount(&t.fc, c->session_dir, files[i].url, files[i].path, &m, t.err, sizeof t.err);
        if (rc < 0) {
            char tool[64];
            snprintf(tool, sizeof tool, "run_code: files[%zu]", i);
            return xfer_error(c, tool, rc, t.err, "; nothing was run", result);
        }
        char hs[32];
        util_human_size(m.bytes, hs, sizeof hs);
        cleanup_free char *as = util_utf8_sanitize(m.mounted_as, strlen(m.mounted_as), NULL);
        char line[800];
        snprintf(line, sizeof line, "%s %s as %s (%s, sha256 %.12s...)", m.reused ? "kept" : "mounted", t.shown,
                 as ? as : "?", hs, m.sha256);
        mcp_call_log(c, MCP_LOG_INFO, "runmyscript", line, strlen(line));
        fetch_mount_free(&m);
    }
    return 0;
}

static int persist_artifact(struct mcp_call *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"relative_path", "presigned_url", NULL};
    if ((*result = check_known(args, known, "persist_artifact")))
        return 0;
    json_object *rp = get_arg(args, "relative_path"), *url = get_arg(args, "presigned_url");
    if (!rp || !json_object_is_type(rp, json_type_string) || !url || !json_object_is_type(url, json_type_string)) {
        *result = arg_error("persist_artifact: relative_path (a file relative to output/, e.g. 'plots/plot.png') "
                            "and presigned_url (an http or https URL that accepts a PUT) are required, both "
                            "strings");
        return 0;
    }
    const char *rel = json_object_get_string(rp);
    if (!ws_rel_path_ok(rel)) {
        cleanup_free char *clean = util_utf8_sanitize(rel, strlen(rel), NULL);
        *result = arg_error("persist_artifact: '%.200s' is not a safe path relative to output/ (no '..', '.', "
                            "empty parts or leading '/'); nothing was sent",
                            clean ? clean : "?");
        return 0;
    }
    struct xfer_call t;
    xfer_start(c, &t, "uploading to", json_object_get_string(url), 0, 0, 0);
    struct fetch_upload_result u;
    int rc = fetch_persist(&t.fc, c->session_dir, rel, json_object_get_string(url), &u, t.err, sizeof t.err);
    if (rc < 0) {
        size_t n = strlen(t.err);
        if (rc == -ENOENT && !strncmp(rel, "output/", 7))
            snprintf(t.err + n, sizeof t.err - n,
                     " (relative_path is relative to output/ already: leave 'output/' out)");
        return xfer_error(c, "persist_artifact", rc, t.err, "", result);
    }
    json_object *sc = result_upload_json(&u);
    if (!sc)
        return -ENOMEM;
    char hs[32], text[800];
    util_human_size(u.uploaded_bytes, hs, sizeof hs);
    cleanup_free char *clean = util_utf8_sanitize(rel, strlen(rel), NULL);
    snprintf(text, sizeof text, "uploaded output/%.200s (%s) to %s: HTTP %ld", clean ? clean : "?", hs, t.shown,
             u.status);
    *result = simple_result(text, false, sc);
    log_msg(LOG_LVL_INFO, "persist_artifact: %llu bytes, HTTP %ld", (unsigned long long)u.uploaded_bytes, u.status);
    return 0;
}

/* ------------------------------------------------------------- fixtures */

/* The conformance suite's fixtures: the names, content and notification
 * counts its tools-call scenarios check. */
static const char fixture_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
static const char fixture_wav[] = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

static json_object *media_block(const char *type, const char *data, const char *mime)
{
    json_object *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string(type));
    json_object_object_add(b, "data", json_object_new_string(data));
    json_object_object_add(b, "mimeType", json_object_new_string(mime));
    return b;
}

static json_object *resource_block(const char *uri, const char *mime, const char *text)
{
    json_object *b = json_object_new_object(), *r = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("resource"));
    json_object_object_add(r, "uri", json_object_new_string(uri));
    json_object_object_add(r, "mimeType", json_object_new_string(mime));
    json_object_object_add(r, "text", json_object_new_string(text));
    json_object_object_add(b, "resource", r);
    return b;
}

static json_object *content_result(json_object *content)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "content", content);
    return r;
}

static void pause_ms(struct mcp_call *c, int ms)
{
    int64_t end = util_now_ms() + ms;
    while (util_now_ms() < end) {
        usleep(10000);
        discard(mcp_call_cancelled(c)); /* pushes out what is buffered */
    }
}

static int fixture(struct mcp_call *c, const char *name, json_object **result)
{
    json_object *content = json_object_new_array();
    if (!strcmp(name, "test_simple_text")) {
        const char *t = "This is a simple text response for testing.";
        json_object_array_add(content, text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_image_content")) {
        json_object_array_add(content, media_block("image", fixture_png, "image/png"));
    } else if (!strcmp(name, "test_audio_content")) {
        json_object_array_add(content, media_block("audio", fixture_wav, "audio/wav"));
    } else if (!strcmp(name, "test_embedded_resource")) {
        json_object_array_add(content, resource_block("test://embedded-resource", "text/plain",
                                                      "This is an embedded resource content."));
    } else if (!strcmp(name, "test_multiple_content_types")) {
        const char *t = "Multiple content types test:";
        json_object_array_add(content, text_block(t, strlen(t)));
        json_object_array_add(content, media_block("image", fixture_png, "image/png"));
        json_object_array_add(content, resource_block("test://mixed-content-resource", "application/json",
                                                      "{\"test\":\"data\",\"value\":123}"));
    } else if (!strcmp(name, "test_tool_with_logging")) {
        static const char *const msgs[] = {"Tool execution started", "Tool processing data",
                                           "Tool execution completed"};
        for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
            if (i)
                pause_ms(c, 50);
            mcp_call_log(c, MCP_LOG_INFO, "fixture", msgs[i], strlen(msgs[i]));
        }
        const char *t = "Tool with logging executed successfully";
        json_object_array_add(content, text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_tool_with_progress")) {
        for (int p = 0; p <= 100; p += 50) {
            char msg[64];
            if (p)
                pause_ms(c, 50);
            snprintf(msg, sizeof msg, "Completed step %d of 100", p);
            mcp_call_progress(c, p, 100, msg);
        }
        const char *t = "Tool with progress executed successfully";
        json_object_array_add(content, text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_error_handling")) {
        json_object_put(content);
        *result = simple_result("This tool intentionally returns an error for testing", true, NULL);
        return 0;
    } else {
        json_object_put(content);
        return -ENOENT;
    }
    *result = content_result(content);
    return 0;
}

/* ------------------------------------------------------------- dispatch */

int tools_call(struct mcp_call *call, const char *name, json_object *args, json_object **result)
{
    *result = NULL;
    if (!strcmp(name, "run_code"))
        return run_code(call, args, result);
    if (!strcmp(name, "run_my_script"))
        return run_my_script(call, args, result);
    if (!strcmp(name, "list_dir"))
        return list_dir(call, args, result);
    if (!strcmp(name, "preview_file"))
        return preview_file(call, args, result);
    if (!strcmp(name, "mount_file"))
        return mount_file(call, args, result);
    if (!strcmp(name, "persist_artifact"))
        return persist_artifact(call, args, result);
    if (call->app->cfg->test_fixture_tools && !strncmp(name, "test_", 5))
        return fixture(call, name, result);
    return -ENOENT;
}
