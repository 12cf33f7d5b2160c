/* exec_report.c: how a run reports while it works, for every part of
 * exec_run(): its phases and its output to the front door's sink, its own
 * lines into the log, and the one-line reason of a failure of the service. */
#include "config.h"

#include "exec_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "exec_log.h"

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
