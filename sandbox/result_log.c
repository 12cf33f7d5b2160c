/* result_log.c: a run's ordered log: stdout, stderr and runmyscript's own
 * lines in one buffer, chunk by chunk in arrival order, cut with a marker
 * at log_bytes. */
#include "config.h"

#include "result_log.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

void result_log_init(struct result_log *log, uint64_t limit)
{
    memset(log, 0, sizeof *log);
    /* The buffer's ceiling leaves room for the marker and system lines. */
    dbuf_init(&log->buf, (size_t)limit + 64 * 1024);
    log->limit = limit;
}

void result_log_free(struct result_log *log)
{
    dbuf_free(&log->buf);
    free(log->chunks);
    memset(log, 0, sizeof *log);
}

static int log_push(struct result_log *log, enum result_stream stream, const char *data, size_t len)
{
    if (len == 0)
        return 0;
    /* Consecutive chunks of one stream merge: fewer, longer chunks. */
    if (log->n_chunks && log->chunks[log->n_chunks - 1].stream == stream) {
        int rc = dbuf_append(&log->buf, data, len);
        if (rc < 0)
            return rc;
        log->chunks[log->n_chunks - 1].len += len;
        return 0;
    }
    if (UTIL_GROW(log->chunks, log->n_chunks, log->cap_chunks, 16) < 0)
        return -ENOMEM;
    size_t off = log->buf.len;
    int rc = dbuf_append(&log->buf, data, len);
    if (rc < 0)
        return rc;
    log->chunks[log->n_chunks++] = (struct result_chunk){stream, off, len};
    return 0;
}

/* Bytes of script output in the log (system chunks do not count). */
static uint64_t log_script_bytes(const struct result_log *log)
{
    uint64_t n = 0;
    for (size_t i = 0; i < log->n_chunks; i++)
        if (log->chunks[i].stream != RESULT_STREAM_SYSTEM)
            n += log->chunks[i].len;
    return n;
}

int result_log_append(struct result_log *log, enum result_stream stream, const char *data, size_t len, bool *marker)
{
    *marker = false;
    if (stream == RESULT_STREAM_SYSTEM) {
        /* System lines are small and few; the buffer's slack holds them. */
        int rc = log_push(log, stream, data, len);
        return rc == -E2BIG ? 0 : (rc < 0 ? rc : (int)len);
    }
    if (log->truncated) {
        log->dropped += len;
        return 0;
    }
    uint64_t used = log_script_bytes(log);
    size_t keep = len;
    if (used + len > log->limit)
        keep = (size_t)(log->limit - used);
    int rc = log_push(log, stream, data, keep);
    if (rc < 0)
        return rc;
    if (keep < len) {
        char line[200];
        char hs[32];
        util_human_size(log->limit, hs, sizeof hs);
        log->truncated = true;
        log->dropped += len - keep;
        int n = snprintf(line, sizeof line,
                         "\n[runmyscript] log truncated: the output passed log_bytes (%s); "
                         "the run is stopped (status output_limit)\n",
                         hs);
        rc = log_push(log, RESULT_STREAM_SYSTEM, line, (size_t)n);
        if (rc < 0 && rc != -E2BIG)
            return rc;
        *marker = true;
    }
    return (int)keep;
}


/* The start of the last line at or before p within [from, p]: s with
 * s == from or s[-1] == '\n'. */
static const char *line_start(const char *from, const char *p)
{
    while (p > from && p[-1] != '\n')
        p--;
    return p;
}

/* An exception's line: a dotted name (NameError, json.decoder.JSONDecodeError),
 * alone or before ": ". */
static bool exception_line(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && (isalnum((unsigned char)s[k]) || s[k] == '_' || s[k] == '.'))
        k++;
    return k > 0 && !isdigit((unsigned char)s[0]) && (k == n || (k + 1 < n && s[k] == ':' && s[k + 1] == ' '));
}

/* The last line of the log's last Python traceback: the exception's type
 * and message ("NameError: name 'x' is not defined"), the one line that
 * says why a script failed. After "Traceback (most recent call last):"
 * come the frames, each indented; the first line that is not is the
 * exception's (a message of several lines gives its first). A script that
 * does not compile has no such head: its block starts at '  File "'. */
char *result_log_exception(const struct result_log *log)
{
    static const char head[] = "Traceback (most recent call last):\n", frame[] = "  File \"";
    if (!log->buf.data || !log->buf.len)
        return NULL;
    const char *end = log->buf.data + log->buf.len;
    const char *from = log->buf.len > RESULT_EXCEPTION_TAIL ? end - RESULT_EXCEPTION_TAIL : log->buf.data;
    const char *block = NULL;
    /* The last line that is a traceback's head, or a frame after a line
     * that is not indented (a SyntaxError's block). */
    for (const char *p = end; !block && p > from;) {
        const char *ls = line_start(from, p - 1);
        size_t n = (size_t)(p - ls);
        if (n >= sizeof head - 1 && !memcmp(ls, head, sizeof head - 1))
            block = ls + sizeof head - 1;
        else if (n >= sizeof frame - 1 && !memcmp(ls, frame, sizeof frame - 1) &&
                 (ls == from || *line_start(from, ls - 1) != ' '))
            block = ls;
        p = ls;
    }
    for (const char *line = block; line && line < end;) {
        const char *nl = memchr(line, '\n', (size_t)(end - line));
        size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
        while (n && (line[n - 1] == '\r' || line[n - 1] == ' '))
            n--;
        if (n && line[0] != ' ' && line[0] != '\t') {
            if (!exception_line(line, n))
                return NULL;
            size_t out_n;
            return util_utf8_sanitize(line, n < RESULT_EXCEPTION_MAX ? n : RESULT_EXCEPTION_MAX, &out_n);
        }
        line = nl ? nl + 1 : end;
    }
    return NULL;
}
