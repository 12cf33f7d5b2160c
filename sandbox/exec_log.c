/* exec_log.c: a run's ordered log: stdout, stderr and runmyscript's own
 * lines in one buffer, chunk by chunk in arrival order, cut with a marker
 * at log_bytes. */
#include "config.h"

#include "exec_log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

