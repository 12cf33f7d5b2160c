/* mcp_call.c: one tools/call as it is served: its progress and log
 * notifications on the SSE stream (flushed at most every 50 ms, with a
 * keepalive comment after MCP_KEEPALIVE_MS of silence), the client's cancel
 * (a marker another worker may have made), and the tools' view of it. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void call_send(struct mcp_call *c, json_object *msg, bool flush)
{
    size_t n;
    const char *s = mcp__to_json(msg, &n);
    if (!c->sse || c->resp->failed)
        return;
    int64_t now = util_now_ms();
    if (!flush && now - c->last_flush_ms >= 50)
        flush = true;
    discard(http_sse_event(c->resp, s, n, flush)); /* a gone client: the run goes on, its result is kept */
    if (flush) {
        c->last_flush_ms = now;
        c->pending = false;
    } else {
        c->pending = true;
    }
}

static json_object *number(double v)
{
    if (v == floor(v) && fabs(v) < 9e15)
        return json_object_new_int64((int64_t)v);
    return json_object_new_double(v);
}

json_object *mcp__progress_msg(struct mcp_call *c, double progress, double total, const char *message)
{
    if (!c->progress_token || (c->any_progress && !(progress > c->last_progress)))
        return NULL;
    c->any_progress = true;
    c->last_progress = progress;
    json_object *m = json_object_new_object();
    json_object *p = json_object_new_object();
    json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(m, "method", json_object_new_string("notifications/progress"));
    json_object_object_add(p, "progressToken", json_object_get(c->progress_token));
    json_object_object_add(p, "progress", number(progress));
    if (total > 0)
        json_object_object_add(p, "total", number(total));
    if (message)
        json_object_object_add(p, "message", json_object_new_string(message));
    json_object_object_add(m, "params", p);
    return m;
}

json_object *mcp__log_msg(const struct mcp_call *c, enum tools_level level, const char *logger, const char *text,
                          size_t len)
{
    if (level < c->log_level)
        return NULL;
    size_t clean_len;
    cleanup_free char *clean = util_utf8_sanitize(text, len, &clean_len);
    if (!clean)
        return NULL;
    json_object *m = json_object_new_object();
    json_object *p = json_object_new_object();
    json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(m, "method", json_object_new_string("notifications/message"));
    json_object_object_add(p, "level", json_object_new_string(mcp_level_name(level)));
    if (logger)
        json_object_object_add(p, "logger", json_object_new_string(logger));
    json_object_object_add(p, "data", json_object_new_string_len(clean, (int)clean_len));
    json_object_object_add(m, "params", p);
    return m;
}

/* notifications/progress when the request has a progressToken, with
 * progress strictly increasing (a value not above the last is dropped). */
static void call_progress(struct mcp_call *c, double progress, double total, const char *message)
{
    json_object *m = c->sse ? mcp__progress_msg(c, progress, total, message) : NULL;
    if (m)
        call_send(c, m, true);
    json_object_put(m);
}

/* notifications/message when level is at or above the call's. */
static void call_log(struct mcp_call *c, enum tools_level level, const char *logger, const char *text, size_t len)
{
    json_object *m = c->sse ? mcp__log_msg(c, level, logger, text, len) : NULL;
    if (m)
        call_send(c, m, false);
    json_object_put(m);
}

/* True when the client sent notifications/cancelled for this call. */
static bool call_client_cancelled(const struct mcp_call *c)
{
    char path[4096];
    /* 2026-07-28: closing the stream is the client's cancel. */
    if (c->is_2026 && http_client_gone(c->resp))
        return true;
    if (!c->session_dir || !c->key[0])
        return false;
    snprintf(path, sizeof path, "%s/cancel/%s", c->session_dir, c->key);
    return access(path, F_OK) == 0;
}

/* True when the client cancelled the call (from any worker) or the server
 * is stopping runs. Also keeps the stream alive and pushes out buffered
 * events. */
static bool call_cancelled(struct mcp_call *c)
{
    if (c->sse && !c->resp->failed) {
        int64_t now = util_now_ms();
        if (c->pending && now - c->last_flush_ms >= 50) {
            discard(http_flush(c->resp));
            c->pending = false;
            c->last_flush_ms = now;
        }
        if (now - c->resp->last_write_ms >= MCP_KEEPALIVE_MS)
            discard(http_sse_comment(c->resp, "keepalive"));
        /* A CGI process learns that the client went only from a write
         * through fcgiwrap's buffer: in 2026-07-28, where that is the
         * cancel, a padded comment every MCP_CGI_PROBE_MS. */
        if (c->is_2026 && !strcmp(c->app->mode, "cgi") && now - c->last_probe_ms >= MCP_CGI_PROBE_MS) {
            c->last_probe_ms = now;
            discard(http_sse_pad(c->resp, c->app->cfg->cgi_sse_padding));
        }
    }
    if (c->app->cancel_all && *c->app->cancel_all)
        return true;
    /* MCP says a disconnection is not a cancellation (the result is kept
     * in the run directory); cancel_on_disconnect trades that for the CPU. */
    if ((c->is_2026 || c->app->cfg->cancel_on_disconnect) && http_client_gone(c->resp)) {
        if (!c->gone_logged)
            log_msg(LOG_LVL_INFO, "the client hung up: cancelling its run (%s)",
                    c->is_2026 ? "its stream was the call's" : "cancel_on_disconnect");
        c->gone_logged = true;
        return true;
    }
    return call_client_cancelled(c);
}

#define CALL_ANCHOR ".flight" /* in calls/: what a call in flight is a name of before its run has an id */

static int calls_open(const char *session_dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/calls", session_dir);
    return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static void call_mark(const char *session_dir, const char *key)
{
    cleanup_fd int cfd = calls_open(session_dir);
    if (cfd < 0)
        return;
    for (int i = 0; i < 2; i++) {
        if (linkat(cfd, CALL_ANCHOR, cfd, key, 0) == 0 || errno == EEXIST)
            return;
        if (errno != ENOENT)
            break;
        int fd = openat(cfd, CALL_ANCHOR, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600); /* once a session */
        if (fd < 0)
            break;
        close(fd);
    }
    /* No hard links here: a file of its own. */
    int fd = openat(cfd, key, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
}

static void call_unmark(const char *session_dir, const char *key)
{
    char path[4096], run[MCP_CALL_RUN_NAME_MAX];
    cleanup_fd int cfd = calls_open(session_dir);
    if (cfd >= 0 && mcp__call_run_name(cfd, key, run, sizeof run) == 0)
        unlinkat(cfd, run, 0);
    snprintf(path, sizeof path, "%s/calls/%s", session_dir, key);
    unlink(path);
    snprintf(path, sizeof path, "%s/cancel/%s", session_dir, key);
    unlink(path);
}

/* A name of calls/.flight (no inode of its own: on a file system without
 * a journal the costliest part of making a file), or where there are no
 * hard links (or too many: EMLINK) an empty file. */
static void name_anchor(int cfd, int dirfd, const char *name)
{
    if (linkat(cfd, CALL_ANCHOR, dirfd, name, 0) == 0 || errno == EEXIST)
        return;
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
}

enum tools_outcome mcp__call_tool(struct mcp_call *c, const struct tools_ctx *t, const char *tool, json_object *args,
                                  json_object **result)
{
    if (c->session_dir)
        call_mark(c->session_dir, c->key);
    enum tools_outcome out = tools_call(t, tool, args, result);
    if (c->session_dir)
        call_unmark(c->session_dir, c->key);
    return out;
}

void mcp__call_set_run(struct mcp_call *c, const char *run_id)
{
    char name[MCP_CALL_RUN_NAME_MAX], runs[4096];
    if (!c->session_dir)
        return;
    cleanup_fd int cfd = calls_open(c->session_dir);
    /* runs/RUNID lists the run by its name; calls/.KEY.RUNID says, by its
     * name too, which run the call in flight started (a cancel from
     * another worker reads it: mcp__cancel_run_of). Neither is a file of
     * its own. */
    snprintf(runs, sizeof runs, "%s/runs", c->session_dir);
    cleanup_fd int rfd = open(runs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd >= 0 && rfd >= 0)
        name_anchor(cfd, rfd, run_id);
    if (cfd >= 0 && c->key[0] && (size_t)snprintf(name, sizeof name, ".%s.%s", c->key, run_id) < sizeof name)
        name_anchor(cfd, cfd, name);
    /* A cancel that came before the run existed is applied now too. */
    if (call_client_cancelled(c))
        discard(app_cancel_run(c->app, run_id)); /* the run polls the marker; nothing else to do */
}

/* ------------------------------------------------- the tools' callbacks */

static void ctx_progress(void *ctx, double progress, double total, const char *message)
{
    call_progress(ctx, progress, total, message);
}

static void ctx_log(void *ctx, enum tools_level level, const char *logger, const char *text, size_t len)
{
    call_log(ctx, level, logger, text, len);
}

static bool ctx_cancelled(void *ctx)
{
    return call_cancelled(ctx);
}

static const char *ctx_cancel_reason(void *ctx)
{
    const struct mcp_call *c = ctx;
    return app_stop_reason(c->app);
}

static bool ctx_client_cancelled(void *ctx)
{
    return call_client_cancelled(ctx);
}

static void ctx_set_run(void *ctx, const char *run_id)
{
    mcp__call_set_run(ctx, run_id);
}

/* A tool asks the client: in a legacy session, requests of its own on
 * the call's stream, whose responses (POSTed apart, any worker takes them:
 * mcp_ask.c) it waits for, at most input_wait. 2026-07-28 asks in rounds
 * (InputRequiredResult) or through a task instead. */
static int ctx_ask(void *ctx, json_object *requests, json_object **responses)
{
    struct mcp_call *c = ctx;
    *responses = NULL;
    if (c->is_2026 || !c->sse || !c->session_dir)
        return -ENOTSUP;
    json_object_object_foreach(requests, k, v)
    {
        json_object *m = mcp__req_message(c->key, k, v);
        if (!m)
            return -EINVAL;
        call_send(c, m, true);
        json_object_put(m);
    }
    int64_t give_up = util_now_ms() + c->app->cfg->exec.limits.input_wait_ms;
    for (;;) {
        int rc = mcp__req_replies(c->session_dir, c->key, requests, responses);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        if (call_cancelled(c))
            return -ECANCELED;
        if (util_now_ms() > give_up)
            return -ETIMEDOUT;
        usleep(20000);
    }
}

/* The script asks: elicitation/create on the call's stream, flushed. */
static void ctx_question(void *ctx, const char *run_id, unsigned n, const char *prompt)
{
    struct mcp_call *c = ctx;
    char id[MCP_ASK_ID_MAX];
    mcp__ask_id(id, sizeof id, n, c->key, run_id);
    json_object *m = mcp__ask_request(c->version, id, prompt);
    if (m)
        call_send(c, m, true);
    json_object_put(m);
}

/* The callbacks of a call served on its own stream. */
static const struct tools_ctx call_callbacks = {
    .progress = ctx_progress, .log = ctx_log, .cancelled = ctx_cancelled, .cancel_reason = ctx_cancel_reason,
    .client_cancelled = ctx_client_cancelled, .set_run = ctx_set_run, .ask = ctx_ask, .question = ctx_question,
};

void mcp__tools_ctx(const struct mcp_call *c, void *ctx, const struct tools_ctx *callbacks, struct tools_ctx *t)
{
    *t = *callbacks;
    t->cfg = c->app->cfg;
    t->exec = app_exec_of(c->app);
    t->session_dir = c->session_dir;
    t->version = c->version;
    t->base_url = c->base_url;
    t->local = c->app->mode && !strcmp(c->app->mode, "stdio");
    t->input_responses = c->input_responses;
    t->request_state = c->request_state;
    t->client_caps = c->client_caps;
    t->ctx = ctx;
}

void mcp__call_tools_ctx(struct mcp_call *c, struct tools_ctx *t)
{
    mcp__tools_ctx(c, c, &call_callbacks, t);
    if (!c->can_ask || !c->sse)
        t->question = NULL;
}
