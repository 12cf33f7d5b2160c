/* stubs.c: the executor, stubbed for the fuzz targets that drive the HTTP
 * side (fcgi/): fuzz_exec is a table of struct app_exec that a target puts
 * in its struct app, so that no process is started, nothing is installed
 * and no script runs. The stub run still does what the front doors rely
 * on: a run id, phases, output through the sink (the script's text, as if
 * it printed itself), a status and artifacts whose names come from the
 * script ("#artifact NAME" lines; "#sandbox-error" anywhere makes the run a
 * failure of the service), so the result serializer, the notifications
 * and the links are exercised with hostile bytes; a cell's stub (run_cell,
 * /api/cell) adds a kernel and the last expression's value, also the
 * script's bytes, and flags its artifacts new or changed. The requirement check is
 * the real parser without the interpreter (deps_declared, no
 * requires-python): the real one asks Python for its version. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app_ctx.h"
#include "deps.h"
#include "result_log.h"
#include "executor.h"
#include "fuzz.h"
#include "workspace.h"

bool fuzz_stub_failed;

static int stub_check_requirements(const struct exec_spec *spec, char *err, size_t errlen)
{
    struct deps_set set = {0};
    int rc = deps_declared(&spec->cfg->deps, spec->requirements, spec->n_requirements, spec->code, spec->code_len,
                           NULL, &set, err, errlen);
    deps_set_free(&set);
    return rc;
}

static int stub_base_env(const struct exec_config *cfg, char **env_dir, char *err, size_t errlen)
{
    (void)cfg;
    *env_dir = NULL;
    snprintf(err, errlen, "stub: no interpreter");
    return -ENOSYS;
}

static int add_artifact(struct result *r, const char *name, size_t len)
{
    struct result_artifact *v = realloc(r->artifacts, (r->n_artifacts + 1) * sizeof *v);
    if (!v)
        return -ENOMEM;
    r->artifacts = v;
    struct result_artifact *a = &v[r->n_artifacts];
    a->path = strndup(name, len);
    a->size = len;
    a->mime = strdup(len % 2 ? "image/png" : "text/plain");
    a->summary = strndup(name, len);
    if (!a->path || !a->mime || !a->summary) {
        free(a->path);
        free(a->mime);
        free(a->summary);
        return -ENOMEM;
    }
    r->n_artifacts++;
    return 0;
}

static int stub_run(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r)
{
    const struct exec_config *cfg = spec->cfg;
    /* As exec_run: the checks first (a refusal makes nothing and calls no
     * sink), then sink->accepted; the outcome as it sets it (FAILED, as
     * result_init left it, where the stub fails). */
    char err[512];
    int rc = exec_check_code(spec->code, spec->code_len, &spec->limits, err, sizeof err);
    if (rc == 0 && spec->limits.input_bytes && spec->input_len > spec->limits.input_bytes) {
        rc = -E2BIG;
        snprintf(err, sizeof err, "the input is larger than input_bytes");
    }
    if (rc == 0)
        rc = stub_check_requirements(spec, err, sizeof err);
    if (rc < 0) {
        r->error = strdup(err);
        r->outcome = rc == -E2BIG ? EXEC_OUTCOME_TOO_LARGE : rc == -EINVAL ? EXEC_OUTCOME_REFUSED : EXEC_OUTCOME_FAILED;
        return rc;
    }
    if (sink && sink->accepted && (rc = sink->accepted(sink->ctx)) < 0) {
        r->outcome = EXEC_OUTCOME_STOPPED;
        return rc;
    }
    rc = ws_new_id(cfg->node_id, r->run_id);
    if (rc < 0)
        return rc;
    r->url_prefix = cfg->url_prefix;
    r->isolation = "namespaces+seccomp";
    if (asprintf(&r->run_dir, "%s/runs/%s", cfg->state_dir, r->run_id) < 0) {
        r->run_dir = NULL;
        return -ENOMEM;
    }
    if (sink && sink->phase) {
        sink->phase(sink->ctx, EXEC_PHASE_RESOLVING, NULL);
        sink->phase(sink->ctx, EXEC_PHASE_RUNNING, NULL);
    }
    /* The script "prints" its own text on stdout and its input on stderr,
     * in chunks of a size the text picks, through the log as exec_run
     * keeps it. */
    const char *src[2] = {spec->code, spec->input};
    size_t len[2] = {spec->code_len, spec->input ? spec->input_len : 0};
    size_t step = spec->code_len ? (unsigned char)spec->code[0] % 61 + 1 : 1;
    for (int s = 0; s < 2; s++)
        for (size_t off = 0; off < len[s]; off += step) {
            size_t n = len[s] - off < step ? len[s] - off : step;
            bool marker = false;
            int kept = result_log_append(&r->log, (enum result_stream)s, src[s] + off, n, &marker);
            if (kept < 0)
                return kept;
            if (sink && sink->output && kept > 0)
                sink->output(sink->ctx, (enum result_stream)s, src[s] + off, (size_t)kept);
            if (sink && sink->cancelled && sink->cancelled(sink->ctx)) {
                r->status = RESULT_STATUS_CANCELLED;
                goto done;
            }
        }
    for (const char *p = spec->code, *end = spec->code + spec->code_len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl ? nl : end;
        if (eol - p > 10 && !memcmp(p, "#artifact ", 10) && (rc = add_artifact(r, p + 10, (size_t)(eol - p - 10))) < 0)
            return rc;
        p = nl ? nl + 1 : end;
    }
    r->has_zip = r->n_artifacts > 0;
    /* A failure of the service only when the script asks for one: the
     * target checks that nothing else is reported as one. */
    r->status = memmem(spec->code, spec->code_len, "#sandbox-error", 14) ? RESULT_STATUS_SANDBOX_ERROR
                                                                          : (enum result_status)(spec->code_len % 7);
    r->exit_code = r->status == RESULT_STATUS_OK ? 0 : 1;
    if (r->status == RESULT_STATUS_SANDBOX_ERROR) {
        fuzz_stub_failed = true;
        r->error = strdup("stub: the sandbox failed");
        return -EIO;
    }
done:
    if (sink && sink->phase)
        sink->phase(sink->ctx, EXEC_PHASE_DONE, result_status_name(r->status));
    r->outcome = EXEC_OUTCOME_DONE;
    return 0;
}

/* An MCP task's process, in this one: fn runs to its end at once, its
 * lines wait in the pipe (what does not fit is dropped, as for a worker
 * that stopped listening), and the caller reads them. No process starts. */
static int stub_detach(int (*fn)(void *arg, int fd), void *arg, int keep_fd, bool keep_stderr, int *read_fd)
{
    int p[2];
    (void)keep_fd, (void)keep_stderr;
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
        return -errno;
    discard(fn(arg, p[1])); /* it closes p[1] */
    *read_fd = p[0];
    return 0;
}

/* A cell: the run's stub in the workspace (one exec_kernel_cell requires), then
 * its kernel (its state and number from the code's length) and the
 * value: the script's first line, whatever its bytes. */
static int stub_cell(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r)
{
    fuzz_assert(spec->workspace && spec->workspace[0] == '/', "a cell without its workspace");
    int rc = stub_run(spec, sink, r);
    if (!r->run_id[0]) /* refused, or stopped by accepted: no cell */
        return rc;
    r->kernel.state = (enum result_kernel_state)(RESULT_KERNEL_NEW + spec->code_len % 3);
    r->kernel.cell = spec->code_len % 50 + 1;
    if (r->kernel.state != RESULT_KERNEL_KEPT && !(r->kernel.reason = strdup("stub: a new kernel")))
        return -ENOMEM;
    const char *nl = memchr(spec->code, '\n', spec->code_len);
    size_t vn = nl ? (size_t)(nl - spec->code) : spec->code_len;
    if (vn && !(r->value = strndup(spec->code, vn)))
        return -ENOMEM;
    for (size_t i = 0; i < r->n_artifacts; i++)
        r->artifacts[i].change = i % 2 ? RESULT_ART_CHANGED : RESULT_ART_NEW;
    return rc;
}

static int stub_kernel_call(const struct exec_config *cfg, const char *workspace)
{
    (void)cfg;
    fuzz_assert(workspace && workspace[0] == '/', "a kernel call without its workspace");
    return 0;
}

static int stub_kernel_stats(const struct exec_config *cfg, struct exec_kernel_stats *st)
{
    memset(st, 0, sizeof *st);
    st->max = cfg->kernels.max;
    return 0;
}

static int stub_kernel_save(const struct exec_config *cfg, const char *workspace, char **report, char *err,
                            size_t errlen)
{
    (void)cfg;
    (void)workspace;
    snprintf(err, errlen, "stub: saved");
    *report = strdup("{\"saved\": true, \"bytes\": 1, \"names\": [[\"x\", \"int\"]], \"skipped\": []}");
    return *report ? 0 : -ENOMEM;
}

static int stub_kernel_restore(const struct exec_config *cfg, const char *workspace, char *err, size_t errlen)
{
    (void)cfg;
    (void)workspace;
    snprintf(err, errlen, "stub: no saved state");
    return 1;
}

const struct app_exec fuzz_exec = {
    .run = stub_run,
    .cancel = exec_cancel,
    .answer = exec_answer,
    .base_env = stub_base_env,
    .detach = stub_detach,
    .cell = stub_cell,
    .kernel_reset = stub_kernel_call,
    .kernel_end = stub_kernel_call,
    .kernel_stats = stub_kernel_stats,
    .kernel_save = stub_kernel_save,
    .kernel_restore = stub_kernel_restore,
};
