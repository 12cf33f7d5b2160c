/* tools_run.c: the script tools, run_code (in the session's workspace, with
 * requirements, files and a timeout), run_my_script (a fresh directory) and
 * run_cell (a cell of the workspace's kernel, exec_kernel_cell), and reset_kernel.
 * All call the executor with a sink that turns phases into progress
 * notifications and output lines into log notifications, and answer with a
 * text summary (the kernel and the last expression's value too), small
 * images inline, links and the result JSON. A script that fails, and
 * arguments that are wrong, are results with isError (SEP-1303: the model
 * reads the reason and corrects itself). */
#include "config.h"

#include "tools_internal.h"

#include "cfg_outcome.h"
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOLS_LINKS_MAX 100         /* resource_link blocks in one result */
#define TOOLS_TEXT_ARTIFACTS_MAX 50 /* artifacts listed in the text block */
#define TOOLS_LOG_LINE_MAX 4096     /* a longer line goes out in pieces */

/* Appends text to b cut to fit (a cut UTF-8 sequence becomes U+FFFD later). */
static void put_text(struct dbuf *b, const char *s, size_t n)
{
    size_t room = b->max > b->len ? b->max - b->len : 0;
    discard(dbuf_append(b, s, n < room ? n : room));
}

/* What a restored kernel's report says, in a few lines: the names back,
 * and each one that is not with its type and reason (at most
 * TOOLS_RESTORED_LIST of each; structuredContent.kernel.restored has them
 * all). */
#define TOOLS_RESTORED_LIST 20
static void restored_list(struct dbuf *b, json_object *rep, const char *key, const char *head, bool why)
{
    json_object *l;
    if (!json_object_object_get_ex(rep, key, &l) || !json_object_is_type(l, json_type_array) ||
        !json_object_array_length(l))
        return;
    size_t n = json_object_array_length(l);
    discard(dbuf_printf(b, "%s", head));
    for (size_t i = 0; i < n && i < TOOLS_RESTORED_LIST; i++) {
        json_object *e = json_object_array_get_idx(l, i);
        const char *name = json_object_get_string(json_object_array_get_idx(e, 0));
        const char *type = json_object_get_string(json_object_array_get_idx(e, 1));
        const char *reason = why ? json_object_get_string(json_object_array_get_idx(e, 2)) : NULL;
        discard(dbuf_printf(b, "%s%s (%s%s%s)", i ? ", " : " ", name ? name : "?", type ? type : "?",
                            reason ? ": " : "", reason ? reason : ""));
    }
    discard(dbuf_printf(b, "%s\n", n > TOOLS_RESTORED_LIST ? ", ..." : ""));
}

static void restored_text(struct dbuf *b, const char *report)
{
    json_object *rep = report ? json_tokener_parse(report) : NULL, *d;
    if (!rep || !json_object_is_type(rep, json_type_object)) {
        json_object_put(rep);
        return;
    }
    restored_list(b, rep, "names", "restored:", false);
    restored_list(b, rep, "failed", "not restored:", true);
    restored_list(b, rep, "skipped", "not saved:", true);
    if (json_object_object_get_ex(rep, "differs", &d) && json_object_is_type(d, json_type_array))
        for (size_t i = 0; i < json_object_array_length(d) && i < TOOLS_RESTORED_LIST; i++)
            discard(dbuf_printf(b, "the state differs: %s\n", json_object_get_string(json_object_array_get_idx(d, i))));
    json_object_put(rep);
}

/* in_session: a call in a workspace, whose artifacts are only the files it
 * created or changed. */
static void summary_text(const struct tools_ctx *c, const struct result *r, bool in_session, struct dbuf *b)
{
    char hs[32];
    discard(dbuf_printf(b, "status: %s", result_status_name(r->status)));
    if (r->limit)
        discard(dbuf_printf(b, " (limit %s)", r->limit));
    if (r->signal)
        discard(dbuf_printf(b, ", killed by signal %d", r->signal));
    else if (r->exit_code >= 0)
        discard(dbuf_printf(b, ", exit code %d", r->exit_code));
    if (r->duration_ms >= 0)
        discard(dbuf_printf(b, ", %lld ms, run %s\n", (long long)r->duration_ms, r->run_id));
    else
        discard(dbuf_printf(b, ", the script did not run, run %s\n", r->run_id));
    char hint[TOOLS_HINT_MAX];
    if (tools__hint(c->cfg->data_dir, r, hint, sizeof hint))
        discard(dbuf_printf(b, "hint: %s\n", hint));
    if (r->kernel.state != RESULT_KERNEL_NONE)
        discard(dbuf_printf(b, "kernel: %s, cell %llu%s%s\n", result_kernel_state_name(r->kernel.state),
                            (unsigned long long)r->kernel.cell, r->kernel.reason ? " - " : "",
                            r->kernel.reason ? r->kernel.reason : ""));
    if (r->kernel.state == RESULT_KERNEL_RESTORED)
        restored_text(b, r->kernel.restored);
    if (r->error)
        discard(dbuf_printf(b, "error: %s\n", r->error));
    cleanup_free char *net = result_network_summary(r);
    if (net)
        discard(dbuf_printf(b, "%s\n", net));
    const struct result_log *log = &r->log;
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
    if (r->value) {
        /* The last expression's value, as a notebook shows it (Out[N]). */
        discard(dbuf_printf(b, "--- value%s ---\n", r->value_truncated ? " (truncated at value_bytes)" : ""));
        put_text(b, r->value, strlen(r->value));
        if (b->len && b->data[b->len - 1] != '\n')
            discard(dbuf_append(b, "\n", 1));
    }
    const char *which = in_session ? " this call created or changed" : "";
    if (r->n_artifacts == 0) {
        discard(dbuf_printf(b, "--- no artifacts%s (files written to SCRIPT_OUTPUT come back here) ---\n", which));
        return;
    }
    discard(dbuf_printf(b, "--- artifacts%s (%zu) ---\n", which, r->n_artifacts));
    for (size_t i = 0; i < r->n_artifacts && i < TOOLS_TEXT_ARTIFACTS_MAX; i++) {
        const struct result_artifact *a = &r->artifacts[i];
        cleanup_free char *enc = result_url_path(a->path);
        util_human_size(a->size, hs, sizeof hs);
        if (c->local)
            discard(dbuf_printf(b, "%s  %s  %s  %s/output/%s\n", a->path, hs, a->summary ? a->summary : "",
                                r->run_dir, a->path));
        else
            discard(dbuf_printf(b, "%s  %s  %s  %s/artifacts/%s/%s\n", a->path, hs, a->summary ? a->summary : "",
                                c->base_url, r->run_id, enc ? enc : ""));
    }
    if (r->n_artifacts > TOOLS_TEXT_ARTIFACTS_MAX)
        discard(dbuf_printf(b, "... and %zu more (structuredContent.artifacts lists them all)\n",
                            r->n_artifacts - TOOLS_TEXT_ARTIFACTS_MAX));
    if (r->has_zip && c->local)
        discard(dbuf_printf(b, "all as one zip: %s\n", r->zip_path));
    else if (r->has_zip)
        discard(dbuf_printf(b, "all as one zip: %s/artifacts/%s.zip\n", c->base_url, r->run_id));
}

/* The result as the client gets it: with local files over stdio. */
static json_object *client_json(const struct tools_ctx *c, const struct result *r)
{
    return c->local ? result_local_json(r) : result_client_json(r, c->base_url, &c->cfg->exec);
}

static bool inline_image(const char *mime)
{
    return !strcmp(mime, "image/png") || !strcmp(mime, "image/jpeg") || !strcmp(mime, "image/gif") ||
           !strcmp(mime, "image/webp");
}

static json_object *run_result(const struct tools_ctx *c, const struct result *r, bool in_session)
{
    const struct cfg *cfg = c->cfg;
    json_object *res = json_object_new_object();
    json_object *content = json_object_new_array();

    struct dbuf b;
    dbuf_init(&b, TOOLS_TEXT_LOG_MAX + 16384 + (r->value ? strlen(r->value) : 0));
    summary_text(c, r, in_session, &b);
    size_t rn, tn;
    /* The server's paths are written STATE, unless the client is a local
     * user (over stdio), whose links are those paths. */
    cleanup_free char *redacted = NULL;
    if (!c->local) {
        redacted = result_redact(b.data ? b.data : "", b.len, &cfg->exec, &rn);
    } else if ((redacted = malloc(b.len + 1))) {
        memcpy(redacted, b.data ? b.data : "", b.len);
        redacted[b.len] = '\0';
        rn = b.len;
    }
    dbuf_free(&b);
    cleanup_free char *text = redacted ? util_utf8_sanitize(redacted, rn, &tn) : NULL;
    if (text)
        json_object_array_add(content, tools__text_block(text, tn));

    /* Small images inline, within one budget for the whole result. */
    cleanup_free char *out_dir = NULL;
    if (asprintf(&out_dir, "%s/output", r->run_dir) < 0)
        out_dir = NULL;
    cleanup_fd int ofd = out_dir ? open(out_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    uint64_t budget = cfg->image_inline_bytes;
    for (size_t i = 0; ofd >= 0 && i < r->n_artifacts; i++) {
        const struct result_artifact *a = &r->artifacts[i];
        if (!inline_image(a->mime) || a->size == 0 || a->size > budget)
            continue;
        cleanup_fd int fd = ws_open_beneath(ofd, a->path, O_RDONLY | O_NONBLOCK, 0);
        cleanup_free char *data = NULL;
        size_t n;
        if (fd < 0 || util_read_fd(fd, (size_t)a->size, &data, &n) < 0)
            continue;
        cleanup_free char *b64 = http_base64((const unsigned char *)data, n, NULL);
        if (!b64)
            continue;
        budget -= n;
        json_object *img = json_object_new_object();
        json_object_object_add(img, "type", json_object_new_string("image"));
        json_object_object_add(img, "data", json_object_new_string(b64));
        json_object_object_add(img, "mimeType", json_object_new_string(a->mime));
        json_object_array_add(content, img);
    }

    /* resource_link exists from 2025-06-18 on; links need an absolute base
     * (over stdio: file:// URLs of the files themselves). */
    if (strcmp(c->version, "2025-06-18") >= 0 && (c->base_url[0] || c->local)) {
        size_t links = 0;
        for (size_t i = 0; i < r->n_artifacts && links < TOOLS_LINKS_MAX; i++, links++) {
            const struct result_artifact *a = &r->artifacts[i];
            cleanup_free char *enc = result_url_path(a->path);
            cleanup_free char *uri = NULL;
            cleanup_free char *name = util_utf8_sanitize(a->path, strlen(a->path), NULL);
            if (c->local) {
                cleanup_free char *path = NULL;
                uri = asprintf(&path, "%s/output/%s", r->run_dir, a->path) < 0 ? NULL : result_file_url(path);
            } else if (enc && asprintf(&uri, "%s/artifacts/%s/%s", c->base_url, r->run_id, enc) < 0) {
                uri = NULL;
            }
            if (!uri || !name)
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
            if (c->local)
                uri = result_file_url(r->zip_path);
            else if (asprintf(&uri, "%s/artifacts/%s.zip", c->base_url, r->run_id) < 0)
                uri = NULL;
            if (uri) {
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
    json_object *sc = client_json(c, r);
    char hint[TOOLS_HINT_MAX];
    const char *h = tools__hint(c->cfg->data_dir, r, hint, sizeof hint);
    json_object_object_add(sc, "feedback", h ? json_object_new_string(h) : NULL);
    json_object_object_add(res, "structuredContent", sc);
    json_object_object_add(res, "isError", json_object_new_boolean(r->status != RESULT_STATUS_OK));
    return res;
}

/* ------------------------------------------------------------- the runs */

struct run_ctx {
    const struct tools_ctx *call;
    struct result *r;
    bool recorded;
    struct dbuf line[3];  /* the partial line of each stream */
    const struct file_arg *files; /* run_code's, mounted once exec_run accepts the call */
    size_t n_files;
    bool accepted;        /* exec_run's checks passed: on_accepted ran */
    json_object *refusal; /* on_accepted's isError answer (a file failed), or NULL */
};

static const enum tools_level stream_level[] = {TOOLS_LOG_INFO, TOOLS_LOG_WARNING, TOOLS_LOG_NOTICE};
static const char *const stream_logger[] = {"stdout", "stderr", "runmyscript"};

static void emit_line(struct run_ctx *x, enum result_stream s)
{
    struct dbuf *b = &x->line[s];
    size_t n = b->len;
    while (n && (b->data[n - 1] == '\n' || b->data[n - 1] == '\r'))
        n--;
    tools__log(x->call, stream_level[s], stream_logger[s], b->data ? b->data : "", n);
    b->len = 0;
}

static void on_output(void *ctx, enum result_stream s, const char *data, size_t len)
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
        tools__set_run(x->call, x->r->run_id);
    }
    if (p == EXEC_PHASE_DONE || p == EXEC_PHASE_COLLECTING)
        for (size_t s = 0; s < ARRAY_SIZE(x->line); s++)
            if (x->line[s].len)
                emit_line(x, (enum result_stream)s);
    char msg[160];
    snprintf(msg, sizeof msg, "%s%s%s", (size_t)p < ARRAY_SIZE(what) ? what[p] : "working", detail ? ": " : "",
             detail ? detail : "");
    /* The call said "queued" (0) when it began; a wait that exec_run
     * reports (for a run slot, or the session's other run) is 0.5, since
     * progress must grow. */
    double progress = p == EXEC_PHASE_QUEUED ? 0.5 : (double)p;
    tools__progress(x->call, progress, (double)EXEC_PHASE_DONE, msg);
}

static void on_install_line(void *ctx, const char *line)
{
    struct run_ctx *x = ctx;
    tools__log(x->call, TOOLS_LOG_INFO, "installer", line, strlen(line));
}

/* The script asks: the lines it printed go out first, its prompt (the
 * line not yet ended) is the question's. */
static void on_question(void *ctx, unsigned n, const char *prompt)
{
    struct run_ctx *x = ctx;
    for (size_t s = 0; s < ARRAY_SIZE(x->line); s++)
        if (x->line[s].len)
            emit_line(x, (enum result_stream)s);
    x->call->question(x->call->ctx, x->r->run_id, n, prompt);
}

static bool on_cancelled(void *ctx)
{
    struct run_ctx *x = ctx;
    return tools__cancelled(x->call);
}

static const char *on_cancel_reason(void *ctx)
{
    struct run_ctx *x = ctx;
    return x->call->cancel_reason ? x->call->cancel_reason(x->call->ctx) : NULL;
}

/* exec_run accepted the call: "queued", then run_code's files into the
 * session's mounts/ (a file that cannot be fetched is the caller's to fix,
 * and nothing runs without it). A refusal stops the run before anything
 * is made for it. */
static int on_accepted(void *ctx)
{
    struct run_ctx *x = ctx;
    x->accepted = true;
    if (tools__client_cancelled(x->call))
        return -ECANCELED;
    tools__progress(x->call, (double)EXEC_PHASE_QUEUED, (double)EXEC_PHASE_DONE, "queued");
    int rc = tools__mount_files(x->call, x->files, x->n_files, &x->refusal);
    if (rc == 0 && x->refusal)
        rc = -ECANCELED;
    return rc;
}

/* A script tool's call, its arguments checked: what run hands exec_run.
 * Borrowed from the arguments, but files and reqs, which run_code's checks
 * allocate (run_args_free). */
struct run_args {
    const char *tool;         /* the tool's name, for its refusals */
    const char *code, *input; /* input NULL: none */
    size_t code_len, input_len;
    const char **reqs;        /* n_reqs requirements (NULL-ended), or NULL */
    size_t n_reqs;
    struct file_arg *files;   /* n_files of run_code's files, or NULL */
    size_t n_files;
    int64_t wall_ms;          /* the call's timeout; 0: the server's */
    const char *network;      /* the call's network (exec_spec.network); NULL: the server's */
    bool in_session;          /* in the session's workspace (run_code), else a fresh directory */
    bool cell;                /* a cell of the workspace's kernel (run_cell): exec_kernel_cell */
    bool notebook;            /* code is a Jupyter notebook (exec_spec.notebook) */
};

static void run_args_free(struct run_args *a)
{
    free(a->files);
    free(a->reqs);
}

static int run(const struct tools_ctx *c, const struct run_args *a, json_object **result)
{
    const struct cfg *cfg = c->cfg;
    struct exec_spec spec;
    exec_spec_init(&spec, &cfg->exec);
    spec.code = a->code;
    spec.code_len = a->code_len;
    spec.input = a->input;
    spec.input_len = a->input_len;
    spec.requirements = a->reqs;
    spec.n_requirements = a->n_reqs;
    if (a->wall_ms > 0)
        spec.limits.wall_ms = a->wall_ms;
    cleanup_free char *workspace = NULL;
    if (a->in_session && asprintf(&workspace, "%s/workspace", c->session_dir) < 0)
        return -ENOMEM;
    spec.workspace = workspace;
    if (a->notebook)
        spec.notebook = TOOLS_NOTEBOOK_NAME;
    spec.network = a->network;

    /* exec_run checks the code, the input's size and the requirements
     * before anything is made, and only then calls on_accepted, which says
     * "queued" and downloads run_code's files (or stops if the client has
     * left): a refused call has cost nothing and is checked once. */
    struct result r;
    struct run_ctx x = {.call = c, .r = &r, .files = a->files, .n_files = a->n_files};
    int (*call)(const struct exec_spec *, const struct exec_sink *, struct result *) =
        a->cell ? c->exec->cell : c->exec->run;
    for (size_t i = 0; i < ARRAY_SIZE(x.line); i++)
        dbuf_init(&x.line[i], TOOLS_LOG_LINE_MAX);
    struct exec_sink sink = {
        .ctx = &x, .phase = on_phase, .output = on_output, .install_line = on_install_line,
        .cancelled = on_cancelled, .cancel_reason = on_cancel_reason, .accepted = on_accepted,
        .question = c->question && !a->cell ? on_question : NULL,
    };
    result_init(&r);
    struct metrics_run meter;
    metrics_run_begin(&meter, &sink);
    int rc = call(&spec, &meter.sink, &r);
    metrics_run_end(c->cfg, &meter, METRICS_DOOR_MCP, a->cell, &r);
    for (size_t i = 0; i < ARRAY_SIZE(x.line); i++)
        dbuf_free(&x.line[i]);
    const struct cfg_outcome *o = cfg_outcome(r.outcome);
    if (r.outcome == EXEC_OUTCOME_STOPPED) {
        /* on_accepted stopped it (rc is its return): a file failed (its
         * isError answer), the client left (-ECANCELED), or the service
         * failed. */
        *result = steal_pointer(&x.refusal);
        if (*result)
            rc = 0;
    } else if (r.outcome == EXEC_OUTCOME_DONE) {
        if (r.status == RESULT_STATUS_CANCELLED && tools__client_cancelled(c)) {
            rc = -ECANCELED;
        } else {
            *result = run_result(c, &r, a->in_session);
            log_msg(LOG_LVL_INFO, "run %s: %s in %lld ms", r.run_id, result_status_name(r.status),
                    (long long)r.duration_ms);
        }
    } else if (o->jsonrpc_code) {
        /* The service failed: a JSON-RPC error (tools_call), with the
         * run's result as its data when there is a run. */
        if (x.accepted)
            *result = client_json(c, &r);
        log_msg(LOG_LVL_ERROR, "run %s: sandbox error: %s", r.run_id[0] ? r.run_id : "(none made)",
                r.error ? r.error : strerror(-rc));
    } else if (o->retry) {
        /* Not a failure of the service (busy, low on disk): nothing ran;
         * the caller should come back later, as r.error says. */
        *result = tools__simple_result(r.error, true, NULL);
        rc = 0;
    } else {
        /* The executor's checks refused the call (the code, the input, the
         * requirements; a cell where there are no kernels): the caller's
         * to fix, and nothing was made. */
        *result = tools__arg_error("%s; nothing was run", r.error ? r.error : "the call was refused");
        rc = 0;
    }
    result_free(&r);
    return rc;
}

/* ------------------------------------------------- run_code's arguments */

/* Each check of an argument of run_code (v: NULL when it is missing or
 * null) takes it into a, or refuses it with an isError *result (the
 * caller's to fix; nothing was run); 0, or -ENOMEM. */
static int arg_code(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    (void)c;
    if (!v || !json_object_is_type(v, json_type_string)) {
        *result = tools__arg_error("%s: code (a string holding the whole Python %s) is required", a->tool,
                                   a->cell ? "cell" : "script");
        return 0;
    }
    a->code = json_object_get_string(v);
    a->code_len = (size_t)json_object_get_string_len(v);
    return 0;
}

/* files[i], e: an object of url and mountPath, both strings, the URL one
 * the guard would fetch and the path a safe one. NULL, or the refusal. */
static json_object *check_file(const char *tool, json_object *e, size_t i, struct file_arg *f)
{
    static const char *const fknown[] = {"url", "mountPath", NULL};
    json_object *u = NULL, *mp = NULL, *refusal;
    if (json_object_is_type(e, json_type_object)) {
        u = tools__get_arg(e, "url");
        mp = tools__get_arg(e, "mountPath");
        char what[48];
        snprintf(what, sizeof what, "%s: files[%zu]", tool, i);
        if ((refusal = tools__check_known(e, fknown, what)))
            return refusal;
    }
    if (!u || !mp || !json_object_is_type(u, json_type_string) || !json_object_is_type(mp, json_type_string))
        return tools__arg_error("%s: files[%zu] must be an object with url and mountPath, both strings, "
                                "e.g. {\"url\": \"https://example.org/data.csv\", \"mountPath\": \"data.csv\"}; "
                                "nothing was run",
                                tool, i);
    *f = (struct file_arg){json_object_get_string(u), json_object_get_string(mp)};
    char err[FETCH_ERR_MAX];
    int rc = fetch_url_check(f->url, err, sizeof err);
    if (rc == -EINVAL) {
        cleanup_free char *clean = util_utf8_sanitize(err, strlen(err), NULL);
        return tools__arg_error("%s: files[%zu]: %s; nothing was run", tool, i, clean ? clean : "a bad URL");
    }
    if (!ws_rel_path_ok(f->path)) {
        cleanup_free char *clean = util_utf8_sanitize(f->path, strlen(f->path), NULL);
        return tools__arg_error("%s: files[%zu]: mountPath '%.200s' is not a safe path relative to mounts/ "
                                "(no '..', '.', empty parts or leading '/'); nothing was run",
                                tool, i, clean ? clean : "?");
    }
    return NULL;
}

/* files: a list of at most mount_files; every URL and path is checked
 * before the first download. */
static int arg_files(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    size_t n = v && json_object_is_type(v, json_type_array) ? json_object_array_length(v) : 0;
    if (v && !json_object_is_type(v, json_type_array)) {
        *result = tools__arg_error("%s: files must be a list of {\"url\": ..., \"mountPath\": ...} objects; "
                                   "nothing was run",
                                   a->tool);
        return 0;
    }
    if (n > c->cfg->fetch.limits.mount_files) {
        *result = tools__arg_error("%s: at most %llu files (mount_files); nothing was run", a->tool,
                                   (unsigned long long)c->cfg->fetch.limits.mount_files);
        return 0;
    }
    a->files = n ? calloc(n, sizeof *a->files) : NULL;
    if (n && !a->files)
        return -ENOMEM;
    a->n_files = n;
    for (size_t i = 0; i < n && !*result; i++)
        *result = check_file(a->tool, json_object_array_get_idx(v, i), i, &a->files[i]);
    return 0;
}

static int arg_input(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    (void)c;
    if (v && !json_object_is_type(v, json_type_string)) {
        *result = tools__arg_error("%s: input must be a string (JSON, CSV, text or base64)", a->tool);
        return 0;
    }
    a->input = v ? json_object_get_string(v) : NULL;
    a->input_len = v ? (size_t)json_object_get_string_len(v) : 0;
    return 0;
}

/* notebook: true when code is a Jupyter notebook's JSON. */
static int arg_notebook(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    (void)c;
    if (v && !json_object_is_type(v, json_type_boolean)) {
        *result = tools__arg_error("%s: notebook must be true (code is a Jupyter notebook's JSON) or false", a->tool);
        return 0;
    }
    a->notebook = v && json_object_get_boolean(v);
    return 0;
}

/* timeout: seconds above 0 and at most the server's wall time (100 ms at
 * the least). */
static int arg_timeout(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    if (!v)
        return 0;
    double s = json_object_get_double(v);
    double max = (double)c->cfg->exec.limits.wall_ms / 1000.0;
    if ((!json_object_is_type(v, json_type_int) && !json_object_is_type(v, json_type_double)) || !(s > 0) ||
        s > max) {
        *result = tools__arg_error("%s: timeout must be a number of seconds above 0 and at most %g (the "
                                   "server's limit)",
                                   a->tool, max);
        return 0;
    }
    a->wall_ms = (int64_t)(s * 1000.0);
    if (a->wall_ms < 100)
        a->wall_ms = 100;
    return 0;
}

/* v is a string of 1 to max printable bytes (no control character). */
static bool printable_string(json_object *v, size_t max)
{
    const char *s = json_object_get_string(v);
    size_t len = (size_t)json_object_get_string_len(v);
    bool ok = json_object_is_type(v, json_type_string) && len > 0 && len <= max;
    for (size_t k = 0; ok && k < len; k++)
        ok = (unsigned char)s[k] >= 0x20 && s[k] != 0x7f;
    return ok;
}

/* network: "off", "on", or a list in egress_allow's syntax, at most
 * TOOLS_NETWORK_MAX printable bytes; exec_run checks what it says against
 * the server's (a list that does not parse, or one where the server gives
 * no network, is refused there with the reason). */
static int arg_network(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    (void)c;
    if (!v)
        return 0;
    if (!printable_string(v, TOOLS_NETWORK_MAX)) {
        *result = tools__arg_error("%s: network must be \"off\", \"on\" or a list of the hosts the script may "
                                   "reach, within the server's egress_allow, such as \"api.example.com, "
                                   "*.example.org:443, 198.51.100.0/24\" (1 to %d printable characters)",
                                   a->tool, TOOLS_NETWORK_MAX);
        return 0;
    }
    a->network = json_object_get_string(v);
    return 0;
}

/* requirements: at most TOOLS_MAX_REQUIREMENTS strings of 1 to
 * TOOLS_REQUIREMENT_MAX printable bytes (exec_run checks what they say). */
static int arg_requirements(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result)
{
    (void)c;
    if (!v)
        return 0;
    if (!json_object_is_type(v, json_type_array)) {
        *result = tools__arg_error("%s: requirements must be a list of strings such as [\"pandas\"]", a->tool);
        return 0;
    }
    size_t n = json_object_array_length(v);
    if (n > TOOLS_MAX_REQUIREMENTS) {
        *result = tools__arg_error("%s: at most %d requirements", a->tool, TOOLS_MAX_REQUIREMENTS);
        return 0;
    }
    a->reqs = calloc(n + 1, sizeof *a->reqs);
    if (!a->reqs)
        return -ENOMEM;
    a->n_reqs = n;
    for (size_t i = 0; i < n; i++) {
        json_object *e = json_object_array_get_idx(v, i);
        if (!printable_string(e, TOOLS_REQUIREMENT_MAX)) {
            *result = tools__arg_error("%s: requirements[%zu] must be a requirement specifier such as "
                                       "\"numpy==1.26.4\" (1 to %d printable characters)",
                                       a->tool, i, TOOLS_REQUIREMENT_MAX);
            return 0;
        }
        a->reqs[i] = json_object_get_string(e);
    }
    return 0;
}

/* run_code's arguments, checked in this order (the first refusal is the
 * answer). */
static const struct {
    const char *name;
    int (*check)(const struct tools_ctx *c, json_object *v, struct run_args *a, json_object **result);
} run_code_args[] = {
    {"code", arg_code},       {"files", arg_files},           {"input", arg_input},
    {"timeout", arg_timeout}, {"requirements", arg_requirements}, {"notebook", arg_notebook},
    {"network", arg_network},
};

/* run_code and run_cell: their arguments (known: the names it takes,
 * NULL-ended), checked in the order of run_code_args, then the run. */
static int session_tool(const struct tools_ctx *c, json_object *args, const char *const *known, struct run_args *a,
                        json_object **result)
{
    if ((*result = tools__check_known(args, known, a->tool)))
        return 0;
    int rc = 0;
    for (size_t i = 0; i < ARRAY_SIZE(run_code_args) && rc == 0 && !*result; i++) {
        json_object *v = tools__get_arg(args, run_code_args[i].name);
        bool takes = false;
        for (size_t k = 0; known[k]; k++)
            takes = takes || !strcmp(known[k], run_code_args[i].name);
        if (takes)
            rc = run_code_args[i].check(c, v, a, result);
    }
    if (rc == 0 && !*result)
        rc = run(c, a, result);
    run_args_free(a);
    return rc;
}

int tools__run_code(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"code", "requirements", "files", "input", "timeout", "notebook", "network",
                                        NULL};
    struct run_args a = {.tool = "run_code", .in_session = true};
    return session_tool(c, args, known, &a, result);
}

/* Where kernels exist: the kernels run_cell and reset_kernel need (0 with
 * an isError *result saying why where there are none: CGI, the CLI). */
static bool kernels_here(const struct tools_ctx *c, const char *tool, json_object **result)
{
    if (c->cfg->exec.kernels.on)
        return true;
    if (c->local)
        *result = tools__arg_error("%s: runmyscript mcp runs no kernels. They live beside the workers of a served "
                                   "instance (runmyscript serve, or ./quickstart serve): connect to its /mcp over "
                                   "HTTP for them. Here, use run_code: the workspace's files persist between its "
                                   "calls",
                                   tool);
    else
        *result = tools__arg_error("%s: this server has no kernels: they live beside the workers of runmyscript "
                                   "serve, and this one (CGI) has no process that outlives a call to keep a "
                                   "kernel's names. Use run_code: the workspace's files persist between its calls",
                                   tool);
    return false;
}

int tools__run_cell(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"code", "requirements", "files", "timeout", "network", NULL};
    struct run_args a = {.tool = "run_cell", .in_session = true, .cell = true};
    if (!kernels_here(c, a.tool, result))
        return 0;
    return session_tool(c, args, known, &a, result);
}

int tools__reset_kernel(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"to", NULL};
    if ((*result = tools__check_known(args, known, "reset_kernel")) || !kernels_here(c, "reset_kernel", result))
        return 0;
    json_object *to = tools__get_arg(args, "to");
    const char *want = to && json_object_is_type(to, json_type_string) ? json_object_get_string(to) : NULL;
    if (to && (!want || (strcmp(want, "new") && strcmp(want, "saved")))) {
        *result = tools__arg_error("reset_kernel: to is \"new\" (an empty kernel, the default) or \"saved\" (the "
                                   "state save_kernel saved)");
        return 0;
    }
    bool saved = want && !strcmp(want, "saved");
    cleanup_free char *workspace = NULL;
    if (asprintf(&workspace, "%s/workspace", c->session_dir) < 0)
        return -ENOMEM;
    char err[512] = "";
    int rc = saved ? c->exec->kernel_restore(&c->cfg->exec, workspace, err, sizeof err)
                   : c->exec->kernel_reset(&c->cfg->exec, workspace);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "reset_kernel: %s%s%s", strerror(-rc), err[0] ? ": " : "", err);
        return rc;
    }
    if (rc > 0) {
        *result = tools__arg_error("reset_kernel: %s; the kernel was left as it was", err);
        return 0;
    }
    json_object *sc = json_object_new_object();
    json_object_object_add(sc, "reset", json_object_new_boolean(true));
    json_object_object_add(sc, "to", json_object_new_string(saved ? "saved" : "new"));
    *result = tools__simple_result(saved ? "reset_kernel: the kernel of this workspace is gone; the next run_cell "
                                           "starts from its saved state (kernel.state restored), which the workspace "
                                           "keeps."
                                         : "reset_kernel: the kernel of this workspace is gone with its names "
                                           "(variables, imports, open files); the workspace's files stay. The next "
                                           "run_cell starts a new kernel (kernel.state new).",
                                   false, sc);
    return 0;
}

int tools__save_kernel(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {NULL};
    if ((*result = tools__check_known(args, known, "save_kernel")) || !kernels_here(c, "save_kernel", result))
        return 0;
    cleanup_free char *workspace = NULL, *report = NULL;
    if (asprintf(&workspace, "%s/workspace", c->session_dir) < 0)
        return -ENOMEM;
    char why[1024] = "";
    int rc = c->exec->kernel_save(&c->cfg->exec, workspace, &report, why, sizeof why);
    if (rc == -EBUSY || rc > 0) {
        *result = tools__arg_error("save_kernel: nothing was saved: %s", why[0] ? why : "the workspace is busy");
        return 0;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "save_kernel: %s%s%s", strerror(-rc), why[0] ? ": " : "", why);
        return rc;
    }
    /* The kernel's report: its lists are its user's names, passed on. */
    json_object *rep = report ? json_tokener_parse(report) : NULL, *v;
    json_object *sc = json_object_new_object();
    json_object_object_add(sc, "saved", json_object_new_boolean(true));
    json_object_object_add(sc, "bytes", json_object_new_int64(rep && json_object_object_get_ex(rep, "bytes", &v)
                                                                  ? json_object_get_int64(v) : 0));
    json_object_object_add(sc, "names", rep && json_object_object_get_ex(rep, "names", &v) &&
                                                json_object_is_type(v, json_type_array)
                                            ? json_object_get(v) : json_object_new_array());
    json_object_object_add(sc, "skipped", rep && json_object_object_get_ex(rep, "skipped", &v) &&
                                                  json_object_is_type(v, json_type_array)
                                              ? json_object_get(v) : json_object_new_array());
    json_object_object_add(sc, "reason", json_object_new_string(why));
    json_object_put(rep);
    cleanup_free char *text = NULL;
    if (asprintf(&text, "save_kernel: the kernel's state is saved, and the kernel runs on: %s. reset_kernel with "
                        "to \"saved\" returns to it.", why) < 0)
        text = NULL;
    *result = tools__simple_result(text ? text : "save_kernel: saved", false, sc);
    return 0;
}

int tools__run_my_script(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"code", "user_input", "notebook", "network", NULL};
    if ((*result = tools__check_known(args, known, "run_my_script")))
        return 0;
    json_object *code = tools__get_arg(args, "code"), *input = tools__get_arg(args, "user_input");
    struct run_args a = {.tool = "run_my_script"};
    if (arg_notebook(c, tools__get_arg(args, "notebook"), &a, result) < 0 || *result)
        return 0;
    if (!code || !json_object_is_type(code, json_type_string)) {
        *result = tools__arg_error("run_my_script: code (a string holding the whole Python script) is required");
        return 0;
    }
    if (input && !json_object_is_type(input, json_type_string)) {
        *result = tools__arg_error("run_my_script: user_input must be a string (text, JSON, Markdown or base64)");
        return 0;
    }
    a.code = json_object_get_string(code);
    a.code_len = (size_t)json_object_get_string_len(code);
    a.input = input ? json_object_get_string(input) : NULL;
    a.input_len = input ? (size_t)json_object_get_string_len(input) : 0;
    int rc = arg_network(c, tools__get_arg(args, "network"), &a, result);
    if (rc < 0 || *result)
        return rc;
    return run(c, &a, result);
}

