/* exec_ctx.c: a call's context, what every step of exec_run() and
 * exec_kernel_cell() uses of it: its spec at the config's defaults, how it reports
 * while it works (its phases and its output to the front door's sink, its
 * own lines into the log, the one-line reason of a failure of the
 * service), whether it was asked to stop (the sink, or RUN/cancel from any
 * process) and how it ends cancelled, and whether it may fall back to the
 * isolation without namespaces. Beneath the steps: it calls none of them. */
#include "config.h"

#include "exec_ctx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "result_log.h"
#include "workspace.h"

void exec_spec_init(struct exec_spec *spec, const struct exec_config *cfg)
{
    memset(spec, 0, sizeof *spec);
    spec->cfg = cfg;
    spec->limits = cfg->limits;
    spec->auto_deps = cfg->auto_deps;
}

void exec__set_error(struct result *r, const char *fmt, ...)
{
    va_list ap;
    free(r->error);
    va_start(ap, fmt);
    if (vasprintf(&r->error, fmt, ap) < 0)
        r->error = NULL;
    va_end(ap);
    r->status = RESULT_STATUS_SANDBOX_ERROR;
}

void exec__phase(struct run *run, enum exec_phase p, const char *detail)
{
    if (run->sink && run->sink->phase)
        run->sink->phase(run->sink->ctx, p, detail);
}

/* A chunk into the log, and to the sink unless quiet. */
static void emit(struct run *run, enum result_stream stream, const char *data, size_t len, bool quiet)
{
    bool marker = false;
    int kept = result_log_append(&run->r->log, stream, data, len, &marker);
    if (kept < 0)
        return;
    if (!quiet && run->sink && run->sink->output) {
        if (kept > 0)
            run->sink->output(run->sink->ctx, stream, data, (size_t)kept);
        if (marker) {
            const struct result_chunk *c = &run->r->log.chunks[run->r->log.n_chunks - 1];
            run->sink->output(run->sink->ctx, RESULT_STREAM_SYSTEM, run->r->log.buf.data + c->off, c->len);
        }
    }
}

void exec__emit(struct run *run, enum result_stream stream, const char *data, size_t len)
{
    emit(run, stream, data, len, false);
}

static void system_line(struct run *run, bool quiet, const char *fmt, va_list ap)
{
    char line[512];
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    line[n] = '\0';
    /* Start on a new line when the script's output ended mid-line. */
    const struct result_log *log = &run->r->log;
    if (log->buf.len && log->buf.data[log->buf.len - 1] != '\n')
        emit(run, RESULT_STREAM_SYSTEM, "\n", 1, quiet);
    emit(run, RESULT_STREAM_SYSTEM, line, (size_t)n, quiet);
}

void exec__system_line(struct run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    system_line(run, false, fmt, ap);
    va_end(ap);
}

void exec__log_line(struct run *run, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    system_line(run, true, fmt, ap);
    va_end(ap);
}

int exec_cancel(const char *state_dir, const char *run_id)
{
    if (!ws_id_valid(run_id))
        return -ENOENT;
    cleanup_free char *dir = ws_run_path(state_dir, run_id);
    if (!dir)
        return -ENOMEM;
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
    if (faccessat(dfd, "result.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return -EALREADY;
    int fd = openat(dfd, "cancel", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

bool exec__cancel_requested(struct run *run)
{
    if (run->sink && run->sink->cancelled && run->sink->cancelled(run->sink->ctx))
        return true;
    /* Another process (any worker) cancels by creating RUN/cancel. */
    return faccessat(run->run_fd, "cancel", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

void exec__cancelled(struct run *run, const char *when)
{
    const char *why = run->sink && run->sink->cancel_reason ? run->sink->cancel_reason(run->sink->ctx) : NULL;
    run->r->status = RESULT_STATUS_CANCELLED;
    exec__system_line(run, "[runmyscript] the run was cancelled%s%s%s%s", when ? " " : "", when ? when : "",
                      why ? ": " : "", why ? why : "");
    if (why) {
        free(run->r->error);
        run->r->error = strdup(why);
    }
}

/* Set once a start found that this host cannot make the namespaces, so
 * that later runs of this process go straight to the fallback. */
bool exec__namespaces_unavailable;

/* The fallback is taken only when the config allows it: isolation = auto
 * and require_isolation = off. */
bool exec__may_fall_back(const struct exec_config *cfg)
{
    return cfg->isolation == EXEC_ISOLATION_AUTO && !cfg->require_isolation;
}
