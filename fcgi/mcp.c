/* mcp.c: JSON-RPC 2.0 and the MCP lifecycle over Streamable HTTP.
 *
 * A POST goes: Content-Type and Accept -> MCP-Protocol-Version -> the body
 * (request_bytes, MCP_JSON_DEPTH) -> one message or a 2025-03-26 batch ->
 * initialize makes a session; everything else needs a live one (400
 * without the header, 404 for one that is unknown or ended) -> notifications
 * and responses get 202 -> requests are dispatched. tools/call answers over
 * SSE when the client accepts it (progress and log notifications, then the
 * result, then the stream ends); every other answer is one JSON body.
 *
 * Concurrency: several requests of one session arrive at once on different
 * workers (a cancel while its call runs, parallel tools/list). Nothing is
 * kept in memory: the session's files are the only shared state, and each
 * is written whole (rename) or is a marker whose existence is the news. */
#include "config.h"

#include "mcp.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sha256.h"
#include "tools.h"
#include "executor.h"

static const char *const versions[] = {"2025-03-26", "2025-06-18", "2025-11-25"};

bool mcp_version_supported(const char *v)
{
    for (size_t i = 0; i < ARRAY_SIZE(versions); i++)
        if (!strcmp(v, versions[i]))
            return true;
    return false;
}

static const char *const level_names[] = {"debug", "info", "notice", "warning",
                                          "error", "critical", "alert", "emergency"};

const char *mcp_level_name(enum mcp_level l)
{
    return (size_t)l < ARRAY_SIZE(level_names) ? level_names[l] : "info";
}

static int level_parse(const char *s, enum mcp_level *l)
{
    for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
        if (!strcmp(s, level_names[i])) {
            *l = (enum mcp_level)i;
            return 0;
        }
    return -EINVAL;
}

static const char *to_json(json_object *o, size_t *len)
{
    return json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}

/* ---------------------------------------------------------------- JSON-RPC */

enum msg_kind { MSG_INVALID, MSG_REQUEST, MSG_NOTIFICATION, MSG_RESPONSE };

static bool id_ok(json_object *id)
{
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

/* What a message is; *id is its id when it has a usable one (borrowed). */
static enum msg_kind classify(json_object *m, json_object **id, const char **method, json_object **params)
{
    json_object *v = NULL, *mv = NULL;
    *id = NULL;
    *method = NULL;
    *params = NULL;
    if (!json_object_is_type(m, json_type_object))
        return MSG_INVALID;
    bool has_id = json_object_object_get_ex(m, "id", &v);
    if (has_id && id_ok(v))
        *id = v;
    if (!json_object_object_get_ex(m, "jsonrpc", &mv) || !json_object_is_type(mv, json_type_string) ||
        strcmp(json_object_get_string(mv), "2.0"))
        return MSG_INVALID;
    if (json_object_object_get_ex(m, "method", &mv)) {
        if (!json_object_is_type(mv, json_type_string))
            return MSG_INVALID;
        *method = json_object_get_string(mv);
        if (json_object_object_get_ex(m, "params", params) && *params &&
            !json_object_is_type(*params, json_type_object) && !json_object_is_type(*params, json_type_array))
            return MSG_INVALID;
        if (!has_id)
            return MSG_NOTIFICATION;
        return *id ? MSG_REQUEST : MSG_INVALID;
    }
    bool res = json_object_object_get_ex(m, "result", NULL), err = json_object_object_get_ex(m, "error", NULL);
    if (*id && res != err)
        return MSG_RESPONSE;
    return MSG_INVALID;
}

static json_object *rpc_new(json_object *id)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
    return o;
}

/* Steals result. */
static json_object *rpc_result(json_object *id, json_object *result)
{
    json_object *o = rpc_new(id);
    json_object_object_add(o, "result", result);
    return o;
}

/* Steals data (may be NULL). */
static json_object *rpc_error(json_object *id, int code, const char *message, json_object *data)
{
    json_object *o = rpc_new(id);
    json_object *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    if (data)
        json_object_object_add(e, "data", data);
    json_object_object_add(o, "error", e);
    return o;
}

/* A transport-level refusal: an HTTP status and a JSON-RPC error with no id. */
static void refuse(struct http_resp *resp, int status, int code, const char *message)
{
    json_object *o = rpc_error(NULL, code, message, NULL);
    size_t n;
    const char *s = to_json(o, &n);
    log_msg(LOG_LVL_INFO, "%d: %s", status, message);
    discard(http_send(resp, status, "application/json", s, n));
    json_object_put(o);
}

static void send_message(struct http_resp *resp, int status, json_object *o)
{
    size_t n;
    const char *s = to_json(o, &n);
    discard(http_send(resp, status, "application/json", s, n));
}

/* The key of a request id: its type and value, hashed to a file name. */
static void id_key(json_object *id, char out[65])
{
    char buf[600];
    int n;
    if (json_object_is_type(id, json_type_int))
        n = snprintf(buf, sizeof buf, "i:%lld", (long long)json_object_get_int64(id));
    else
        n = snprintf(buf, sizeof buf, "s:%s", json_object_get_string(id));
    if (n < 0)
        n = 0;
    /* Long string ids: hash what fits plus the full length; ids are the
     * client's and need only be told apart within a session. */
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    sha256_update(&c, buf, (size_t)n);
    if (json_object_is_type(id, json_type_string)) {
        size_t len = (size_t)json_object_get_string_len(id);
        sha256_update(&c, json_object_get_string(id), len);
        sha256_update(&c, &len, sizeof len);
    }
    sha256_final(&c, d);
    util_hex(d, sizeof d, out);
}

/* ----------------------------------------------------------------- sessions */

struct session {
    char id[WS_ID_MAX + 1];
    char *dir;                /* STATE/sessions/SID */
    char version[16];
    enum mcp_level level;
    json_object *doc;         /* session.json as loaded */
};

static void session_free(struct session *s)
{
    free(s->dir);
    json_object_put(s->doc);
    memset(s, 0, sizeof *s);
}

static char *sessions_dir(const struct cfg *cfg)
{
    char *p;
    return asprintf(&p, "%s/sessions", cfg->state_dir) < 0 ? NULL : p;
}

static int session_write(const struct session *s)
{
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    size_t n;
    const char *text = to_json(s->doc, &n);
    return util_write_file_atomic(dfd, "session.json", text, n, 0600);
}

/* Loads a live session: 0, -ENOENT (unknown or ended), other -errno. Marks
 * it used (the idle clock restarts). */
static int session_load(const struct cfg *cfg, const char *sid, struct session *s)
{
    memset(s, 0, sizeof *s);
    if (!ws_id_valid(sid))
        return -ENOENT;
    snprintf(s->id, sizeof s->id, "%s", sid);
    if (asprintf(&s->dir, "%s/sessions/%s", cfg->state_dir, sid) < 0) {
        s->dir = NULL;
        return -ENOMEM;
    }
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? -ENOENT : -errno;
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(dfd, "session.json", MCP_SESSION_FILE_MAX, &text, &len);
    if (rc < 0)
        return rc == -ENOENT ? -ENOENT : rc;
    s->doc = json_tokener_parse(text);
    json_object *v;
    if (!json_object_is_type(s->doc, json_type_object) || !json_object_object_get_ex(s->doc, "version", &v) ||
        !mcp_version_supported(json_object_get_string(v)))
        return -EIO;
    snprintf(s->version, sizeof s->version, "%s", json_object_get_string(v));
    s->level = MCP_LOG_DEBUG;
    if (json_object_object_get_ex(s->doc, "log_level", &v))
        discard(level_parse(json_object_get_string(v), &s->level)); /* a bad one stays debug */
    /* The idle clock: the mtime of session.json. */
    cleanup_fd int fd = openat(dfd, "session.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        futimens(fd, NULL);
    return 0;
}

static int count_sessions(const struct cfg *cfg)
{
    cleanup_free char *dir = sessions_dir(cfg);
    cleanup_fd int dfd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (dfd < 0)
        return 0;
    cleanup_dir DIR *d = util_opendir_at(dfd);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d)))
        if (ws_id_valid(de->d_name))
            n++;
    return n;
}

static int session_create(const struct cfg *cfg, const char *version, json_object *client, struct session *s)
{
    memset(s, 0, sizeof *s);
    int rc = ws_init_state(cfg->state_dir);
    if (rc < 0)
        return rc;
    for (int tries = 0; tries < 4; tries++) {
        rc = ws_new_id(cfg->exec.node_id, s->id);
        if (rc < 0)
            return rc;
        free(s->dir);
        if (asprintf(&s->dir, "%s/sessions/%s", cfg->state_dir, s->id) < 0) {
            s->dir = NULL;
            return -ENOMEM;
        }
        /* 0711: the fallback runs a script as a uid of its own, which must
         * pass through to workspace/; the id is the capability, and the
         * files that say something (session.json, calls/, ...) are 0600/0700. */
        if (mkdir(s->dir, 0711) == 0 && chmod(s->dir, 0711) == 0)
            break;
        if (errno != EEXIST)
            return -errno;
        rc = -EEXIST;
    }
    if (rc < 0)
        return rc;
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    static const char *const subs[] = {"workspace", "calls", "cancel", "runs"};
    for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
        if (mkdirat(dfd, subs[i], i == 0 ? 0755 : 0700) < 0)
            return -errno;
    snprintf(s->version, sizeof s->version, "%s", version);
    s->level = MCP_LOG_DEBUG;
    s->doc = json_object_new_object();
    json_object_object_add(s->doc, "version", json_object_new_string(version));
    json_object_object_add(s->doc, "log_level", json_object_new_string("debug"));
    json_object_object_add(s->doc, "created_ms", json_object_new_int64(util_wall_ms()));
    /* The client's name and version, each cut to MCP_CLIENT_FIELD_MAX bytes:
     * what the client sends must not grow session.json past what
     * session_load reads (MCP_SESSION_FILE_MAX). */
    json_object *v = NULL, *c = client ? json_object_new_object() : NULL;
    static const char *const fields[] = {"name", "version"};
    for (size_t i = 0; c && i < ARRAY_SIZE(fields); i++) {
        if (!json_object_object_get_ex(client, fields[i], &v) || !json_object_is_type(v, json_type_string))
            continue;
        size_t n = (size_t)json_object_get_string_len(v);
        cleanup_free char *clean = util_utf8_sanitize(json_object_get_string(v),
                                                      n > MCP_CLIENT_FIELD_MAX ? MCP_CLIENT_FIELD_MAX : n, &n);
        if (clean)
            json_object_object_add(c, fields[i], json_object_new_string_len(clean, (int)n));
    }
    if (c)
        json_object_object_add(s->doc, "client", c);
    /* session.json last: a directory without it is not a session yet. */
    return session_write(s);
}

/* Creates STATE/runs/RUNID/cancel for the run recorded in calls/KEY. */
static void cancel_run_of(const struct cfg *cfg, int calls_fd, const char *key)
{
    char run_id[WS_ID_MAX + 1];
    cleanup_fd int fd = openat(calls_fd, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = pread(fd, run_id, sizeof run_id - 1, 0);
    if (n < WS_ID_LEN)
        return;
    run_id[n] = '\0'; /* exec_cancel refuses anything but an id */
    if (exec_cancel(cfg->state_dir, run_id) == 0)
        log_msg(LOG_LVL_INFO, "cancelling run %s", run_id);
}

/* Removes a session's runs (listed in SID/runs/) and then the session. */
static int session_remove(const struct cfg *cfg, int sessions_fd, const char *name, bool with_runs)
{
    if (with_runs) {
        cleanup_fd int rfd = openat(sessions_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_fd int lfd = rfd >= 0 ? openat(rfd, "runs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        cleanup_dir DIR *d = lfd >= 0 ? util_opendir_at(lfd) : NULL;
        cleanup_free char *runs = NULL;
        if (asprintf(&runs, "%s/runs", cfg->state_dir) < 0)
            runs = NULL;
        cleanup_fd int runs_fd = runs ? open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        struct dirent *de;
        while (d && runs_fd >= 0 && (de = readdir(d)))
            if (ws_id_valid(de->d_name))
                discard(util_rm_rf_at(runs_fd, de->d_name)); /* the reaper of runs retries */
    }
    return util_rm_rf_at(sessions_fd, name);
}

/* Ends a session now: cancels its calls in flight, renames it out of the
 * way (a request racing with this sees 404 at once), removes it. */
static int session_end(const struct cfg *cfg, struct session *s)
{
    cleanup_free char *sdir = sessions_dir(cfg);
    cleanup_fd int sfd = sdir ? open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (sfd < 0)
        return -errno;
    cleanup_fd int calls = openat(sfd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (calls >= 0) {
        cleanup_fd int cfd = openat(calls, "calls", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_dir DIR *d = cfd >= 0 ? util_opendir_at(cfd) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (de->d_name[0] != '.')
                cancel_run_of(cfg, cfd, de->d_name);
    }
    char dead[WS_ID_MAX + 16];
    unsigned char rnd[4];
    char hex[9];
    if (util_random(rnd, sizeof rnd) < 0)
        memset(rnd, 0, sizeof rnd);
    util_hex(rnd, sizeof rnd, hex);
    snprintf(dead, sizeof dead, ".ended-%s", hex);
    if (renameat(sfd, s->id, sfd, dead) < 0)
        return errno == ENOENT ? -ENOENT : -errno;
    return session_remove(cfg, sfd, dead, false);
}

int mcp_reap_sessions(const struct cfg *cfg, bool force)
{
    struct stat st;
    if (cfg->session_ttl_ms <= 0)
        return 0;
    cleanup_free char *sdir = sessions_dir(cfg);
    cleanup_fd int sfd = sdir ? open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (sfd < 0)
        return errno == ENOENT ? 0 : -errno;
    int64_t now = util_wall_ms();
    if (!force && fstatat(sfd, ".reaped", &st, 0) == 0 &&
        now - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) < 60000)
        return 0;
    int stamp = openat(sfd, ".reaped", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (stamp >= 0) {
        futimens(stamp, NULL);
        close(stamp);
    }
    cleanup_dir DIR *d = util_opendir_at(sfd);
    if (!d)
        return -errno;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        if (!strncmp(name, ".ended-", 7)) { /* a DELETE that did not finish */
            discard(util_rm_rf_at(sfd, name));
            continue;
        }
        if (!ws_id_valid(name))
            continue;
        cleanup_fd int dfd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            continue;
        int64_t used;
        if (fstatat(dfd, "session.json", &st, AT_SYMLINK_NOFOLLOW) == 0)
            used = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        else if (fstat(dfd, &st) == 0) /* being created, or broken: by its directory */
            used = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        else
            continue;
        if (now - used < cfg->session_ttl_ms)
            continue;
        /* A call in flight keeps its session, however long the run. */
        cleanup_fd int cfd = openat(dfd, "calls", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_dir DIR *cd = cfd >= 0 ? util_opendir_at(cfd) : NULL;
        bool busy = false;
        struct dirent *ce;
        while (cd && (ce = readdir(cd)))
            if (ce->d_name[0] != '.')
                busy = true;
        if (busy)
            continue;
        if (session_remove(cfg, sfd, name, true) == 0) {
            removed++;
            log_msg(LOG_LVL_INFO, "session %s idle for %llds: removed", name, (long long)((now - used) / 1000));
        }
    }
    return removed;
}

/* ------------------------------------------------------------ notifications */

static void call_send(struct mcp_call *c, json_object *msg, bool flush)
{
    size_t n;
    const char *s = to_json(msg, &n);
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

void mcp_call_progress(struct mcp_call *c, double progress, double total, const char *message)
{
    if (!c->progress_token || !c->sse)
        return;
    if (c->any_progress && !(progress > c->last_progress))
        return;
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
    call_send(c, m, true);
    json_object_put(m);
}

void mcp_call_log(struct mcp_call *c, enum mcp_level level, const char *logger, const char *text, size_t len)
{
    if (!c->sse || level < c->log_level)
        return;
    size_t clean_len;
    cleanup_free char *clean = util_utf8_sanitize(text, len, &clean_len);
    if (!clean)
        return;
    json_object *m = json_object_new_object();
    json_object *p = json_object_new_object();
    json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(m, "method", json_object_new_string("notifications/message"));
    json_object_object_add(p, "level", json_object_new_string(mcp_level_name(level)));
    if (logger)
        json_object_object_add(p, "logger", json_object_new_string(logger));
    json_object_object_add(p, "data", json_object_new_string_len(clean, (int)clean_len));
    json_object_object_add(m, "params", p);
    call_send(c, m, false);
    json_object_put(m);
}

bool mcp_call_client_cancelled(const struct mcp_call *c)
{
    char path[4096];
    if (!c->session_dir || !c->key[0])
        return false;
    snprintf(path, sizeof path, "%s/cancel/%s", c->session_dir, c->key);
    return access(path, F_OK) == 0;
}

bool mcp_call_cancelled(struct mcp_call *c)
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
    }
    if (c->app->cancel_all && *c->app->cancel_all)
        return true;
    /* MCP says a disconnection is not a cancellation (the result is kept
     * in the run directory); cancel_on_disconnect trades that for the CPU. */
    if (c->app->cfg->cancel_on_disconnect && http_client_gone(c->resp)) {
        if (!c->gone_logged)
            log_msg(LOG_LVL_INFO, "the client hung up: cancelling its run (cancel_on_disconnect)");
        c->gone_logged = true;
        return true;
    }
    return mcp_call_client_cancelled(c);
}

void mcp_call_set_run(struct mcp_call *c, const char *run_id)
{
    char path[4096];
    if (!c->session_dir)
        return;
    snprintf(path, sizeof path, "%s/runs/%s", c->session_dir, run_id);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    if (!c->key[0])
        return;
    snprintf(path, sizeof path, "%s/calls/%s", c->session_dir, c->key);
    fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
        discard(util_write_all(fd, run_id, strlen(run_id)));
        close(fd);
    }
    /* A cancel that came before the run existed is applied now too. */
    if (mcp_call_client_cancelled(c)) {
        snprintf(path, sizeof path, "%s/runs/%s/cancel", c->app->cfg->state_dir, run_id);
        fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            close(fd);
    }
}

/* ---------------------------------------------------------------- dispatch */

struct post {
    const struct app *app;
    struct http_req *req;
    struct http_resp *resp;
    struct session s;
    bool want_sse;   /* the client accepts text/event-stream */
    bool in_batch;
};

static json_object *server_info(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string("runmyscript"));
    json_object_object_add(o, "title", json_object_new_string("Run My Script"));
    json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
    return o;
}

static json_object *initialize_result(const char *version)
{
    json_object *r = json_object_new_object();
    json_object *caps = json_object_new_object();
    json_object *tools = json_object_new_object();
    json_object_object_add(r, "protocolVersion", json_object_new_string(version));
    json_object_object_add(tools, "listChanged", json_object_new_boolean(false));
    json_object_object_add(caps, "tools", tools);
    json_object_object_add(caps, "logging", json_object_new_object());
    json_object_object_add(r, "capabilities", caps);
    json_object_object_add(r, "serverInfo", server_info());
    json_object_object_add(r, "instructions", json_object_new_string(tools_instructions()));
    return r;
}

static void initialize(struct post *p, json_object *id, json_object *params)
{
    const struct cfg *cfg = p->app->cfg;
    json_object *v = NULL, *client = NULL;
    const char *version = MCP_LATEST;
    if (params && !json_object_is_type(params, json_type_object)) {
        json_object *e = rpc_error(id, -32602, "Invalid params: initialize takes an object", NULL);
        send_message(p->resp, 200, e);
        json_object_put(e);
        return;
    }
    /* The client's revision when we speak it, else our newest: the client
     * decides whether it can go on (lifecycle.mdx). */
    if (params && json_object_object_get_ex(params, "protocolVersion", &v) &&
        json_object_is_type(v, json_type_string) && mcp_version_supported(json_object_get_string(v)))
        version = json_object_get_string(v);
    if (params)
        json_object_object_get_ex(params, "clientInfo", &client);
    if (count_sessions(cfg) >= (int)cfg->max_sessions) {
        discard(mcp_reap_sessions(cfg, true));
        if (count_sessions(cfg) >= (int)cfg->max_sessions) {
            refuse(p->resp, 503, -32000, "Service unavailable: too many open sessions (max_sessions)");
            return;
        }
    }
    struct session s;
    int rc = session_create(cfg, version, json_object_is_type(client, json_type_object) ? client : NULL, &s);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "creating a session: %s", strerror(-rc));
        if (s.dir) {
            cleanup_free char *sdir = sessions_dir(cfg);
            cleanup_fd int sfd = sdir ? open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
            if (sfd >= 0 && ws_id_valid(s.id))
                discard(util_rm_rf_at(sfd, s.id));
        }
        session_free(&s);
        json_object *e = rpc_error(id, -32603, "Internal error: cannot create a session", NULL);
        send_message(p->resp, 500, e);
        json_object_put(e);
        return;
    }
    log_msg(LOG_LVL_INFO, "session %s: initialize, revision %s", s.id, version);
    discard(http_add_header(p->resp, "Mcp-Session-Id", "%s", s.id));
    json_object *r = rpc_result(id, initialize_result(version));
    send_message(p->resp, 200, r);
    json_object_put(r);
    session_free(&s);
    discard(mcp_reap_sessions(cfg, false));
}

static json_object *set_level(struct post *p, json_object *id, json_object *params)
{
    json_object *v;
    enum mcp_level l;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "level", &v) ||
        !json_object_is_type(v, json_type_string) || level_parse(json_object_get_string(v), &l) < 0)
        return rpc_error(id, -32602,
                         "Invalid params: level must be one of debug, info, notice, warning, error, critical, "
                         "alert, emergency",
                         NULL);
    json_object_object_add(p->s.doc, "log_level", json_object_new_string(level_names[l]));
    int rc = session_write(&p->s);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "saving the log level: %s", strerror(-rc));
        return rpc_error(id, -32603, "Internal error: cannot save the log level", NULL);
    }
    p->s.level = l;
    return rpc_result(id, json_object_new_object());
}

/* tools/call. Returns the response, or NULL when nothing must be sent
 * (the client cancelled the call). In SSE mode the stream is open. */
static json_object *call_tool(struct post *p, json_object *id, json_object *params, bool sse)
{
    json_object *name = NULL, *args = NULL, *meta = NULL, *token = NULL;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "name", &name) ||
        !json_object_is_type(name, json_type_string))
        return rpc_error(id, -32602, "Invalid params: tools/call needs the tool's name", NULL);
    if (json_object_object_get_ex(params, "arguments", &args) && args &&
        !json_object_is_type(args, json_type_object))
        return rpc_error(id, -32602, "Invalid params: arguments must be an object", NULL);
    if (json_object_object_get_ex(params, "_meta", &meta) && json_object_is_type(meta, json_type_object) &&
        json_object_object_get_ex(meta, "progressToken", &token) && !id_ok(token))
        token = NULL;

    struct mcp_call c = {
        .app = p->app,
        .req = p->req,
        .resp = p->resp,
        .session_dir = p->s.dir,
        .version = p->s.version,
        .log_level = p->s.level,
        .sse = sse,
        .progress_token = token,
        .last_flush_ms = util_now_ms(),
    };
    id_key(id, c.key);
    app_base_url(p->app, p->req, c.base_url, sizeof c.base_url);

    /* calls/KEY says "in flight" (a cancel from another worker finds the
     * run through it; the reaper leaves the session alone). */
    char path[4096];
    snprintf(path, sizeof path, "%s/calls/%s", p->s.dir, c.key);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    json_object *result = NULL;
    int rc = tools_call(&c, json_object_get_string(name), args, &result);
    unlink(path);
    snprintf(path, sizeof path, "%s/cancel/%s", p->s.dir, c.key);
    unlink(path);
    if (rc == -ECANCELED) {
        json_object_put(result);
        log_msg(LOG_LVL_INFO, "tools/call %s cancelled by the client: no response", json_object_get_string(name));
        return NULL;
    }
    if (rc == -ENOENT) {
        char msg[300];
        snprintf(msg, sizeof msg, "Invalid params: unknown tool '%.200s' (tools/list names them)",
                 json_object_get_string(name));
        return rpc_error(id, -32602, msg, NULL);
    }
    if (rc < 0) {
        /* The service failed, not the script: -32603 with the run's result
         * (status sandbox_error, error says why) as data. */
        return rpc_error(id, -32603, "Internal error: the sandbox failed (see data.error)", result);
    }
    return rpc_result(id, result);
}

/* One request (not initialize). Returns the response, NULL for none. */
static json_object *dispatch(struct post *p, json_object *id, const char *method, json_object *params, bool sse)
{
    if (!strcmp(method, "ping"))
        return rpc_result(id, json_object_new_object());
    if (!strcmp(method, "tools/list")) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "tools", tools_list(p->app->cfg, p->s.version));
        return rpc_result(id, r);
    }
    if (!strcmp(method, "tools/call"))
        return call_tool(p, id, params, sse);
    if (!strcmp(method, "logging/setLevel"))
        return set_level(p, id, params);
    if (!strcmp(method, "initialize"))
        return rpc_error(id, -32600, "Invalid Request: the session is already initialized", NULL);
    char msg[300];
    snprintf(msg, sizeof msg, "Method not found: %.200s", method);
    return rpc_error(id, -32601, msg, NULL);
}

static void notification(struct post *p, const char *method, json_object *params)
{
    if (strcmp(method, "notifications/cancelled"))
        return; /* initialized, progress, roots/list_changed, ...: nothing to do */
    json_object *rid = NULL;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "requestId", &rid) ||
        !id_ok(rid))
        return; /* malformed: MAY be ignored (cancellation.mdx) */
    char key[65], path[4096];
    id_key(rid, key);
    /* The marker only for a call in flight: a late cancel leaves nothing. */
    snprintf(path, sizeof path, "%s/calls", p->s.dir);
    cleanup_fd int cfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    struct stat st;
    if (cfd < 0 || fstatat(cfd, key, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return;
    snprintf(path, sizeof path, "%s/cancel/%s", p->s.dir, key);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    cancel_run_of(p->app->cfg, cfd, key);
}

/* ----------------------------------------------------------------- the POST */

static json_object *parse_body(const char *body, size_t len)
{
    json_tokener *tok = json_tokener_new_ex(MCP_JSON_DEPTH);
    if (!tok)
        return NULL;
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    json_object *o = json_tokener_parse_ex(tok, body, (int)len);
    bool complete = json_tokener_get_error(tok) == json_tokener_success;
    /* Trailing whitespace is fine, anything else is not. */
    for (size_t i = (size_t)tok->char_offset; complete && i < len; i++)
        if (body[i] != ' ' && body[i] != '\n' && body[i] != '\r' && body[i] != '\t')
            complete = false;
    json_tokener_free(tok);
    if (!complete || !o) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static bool need_session(struct post *p)
{
    const char *sid = http_header(p->req, "Mcp-Session-Id");
    if (!sid || !*sid) {
        refuse(p->resp, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
        return false;
    }
    int rc = session_load(p->app->cfg, sid, &p->s);
    if (rc == -ENOENT) {
        refuse(p->resp, 404, -32001, "Session not found");
        return false;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "loading a session: %s", strerror(-rc));
        refuse(p->resp, 500, -32603, "Internal error: cannot read the session");
        return false;
    }
    return true;
}

static void batch(struct post *p, json_object *arr)
{
    size_t n = json_object_array_length(arr);
    if (n == 0) {
        refuse(p->resp, 400, -32600, "Invalid Request: empty batch");
        return;
    }
    if (n > MCP_BATCH_MAX) {
        refuse(p->resp, 413, -32600, "Invalid Request: more than 64 messages in a batch");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(arr, i), *v;
        if (json_object_is_type(m, json_type_object) && json_object_object_get_ex(m, "method", &v) &&
            json_object_is_type(v, json_type_string) && !strcmp(json_object_get_string(v), "initialize")) {
            refuse(p->resp, 400, -32600, "Invalid Request: initialize must not be part of a batch");
            return;
        }
    }
    if (!need_session(p))
        return;
    if (strcmp(p->s.version, "2025-03-26")) {
        refuse(p->resp, 400, -32600, "Invalid Request: JSON-RPC batches are not part of this protocol revision");
        return;
    }
    json_object *out = json_object_new_array();
    for (size_t i = 0; i < n; i++) {
        json_object *m = json_object_array_get_idx(arr, i), *id, *params;
        const char *method;
        switch (classify(m, &id, &method, &params)) {
        case MSG_INVALID:
            json_object_array_add(out, rpc_error(id, -32600, "Invalid Request", NULL));
            break;
        case MSG_NOTIFICATION:
            notification(p, method, params);
            break;
        case MSG_RESPONSE:
            break; /* we send no requests, so no response is awaited */
        case MSG_REQUEST: {
            json_object *r = dispatch(p, id, method, params, false);
            if (r)
                json_object_array_add(out, r);
            break;
        }
        }
    }
    if (json_object_array_length(out) == 0)
        discard(http_send(p->resp, 202, NULL, "", 0));
    else
        send_message(p->resp, 200, out);
    json_object_put(out);
}

static void post(struct post *p)
{
    const struct cfg *cfg = p->app->cfg;
    const char *ct = http_header(p->req, "Content-Type");
    if (!ct || strncasecmp(ct, "application/json", 16) || (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
        refuse(p->resp, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
        return;
    }
    /* Accept: we answer JSON, and tools/call over SSE when the client
     * accepts it. A client that accepts neither gets 406. */
    const char *accept = http_header(p->req, "Accept");
    p->want_sse = accept && http_accepts(accept, "text/event-stream");
    if (accept && *accept && !p->want_sse && !http_accepts(accept, "application/json")) {
        refuse(p->resp, 406, -32000, "Not Acceptable: Accept must list application/json or text/event-stream");
        return;
    }
    const char *pv = http_header(p->req, "MCP-Protocol-Version");
    if (pv && !mcp_version_supported(pv)) {
        refuse(p->resp, 400, -32000,
               "Bad Request: unsupported MCP-Protocol-Version (supported: 2025-03-26, 2025-06-18, 2025-11-25)");
        return;
    }
    cleanup_free char *body = NULL;
    size_t len = 0;
    int rc = http_read_body(p->req, (size_t)cfg->request_bytes, &body, &len);
    if (rc == -E2BIG) {
        refuse(p->resp, 413, -32000, "Content Too Large: the request body is larger than request_bytes");
        return;
    }
    if (rc < 0) {
        refuse(p->resp, 400, -32700, "Parse error: cannot read the request body");
        return;
    }
    json_object *msg = parse_body(body, len);
    if (!msg) {
        refuse(p->resp, 400, -32700, "Parse error: the body is not valid JSON (or nests too deep)");
        return;
    }
    if (json_object_is_type(msg, json_type_array)) {
        batch(p, msg);
        json_object_put(msg);
        return;
    }
    json_object *id, *params;
    const char *method;
    enum msg_kind kind = classify(msg, &id, &method, &params);
    if (kind == MSG_INVALID) {
        json_object *e = rpc_error(id, -32600, "Invalid Request: not a JSON-RPC 2.0 message", NULL);
        send_message(p->resp, 400, e);
        json_object_put(e);
        json_object_put(msg);
        return;
    }
    if (kind == MSG_REQUEST && !strcmp(method, "initialize")) {
        const char *sid = http_header(p->req, "Mcp-Session-Id");
        struct session old = {0};
        if (sid && *sid && session_load(cfg, sid, &old) == 0) {
            session_free(&old);
            json_object *e = rpc_error(id, -32600, "Invalid Request: this session is already initialized", NULL);
            send_message(p->resp, 400, e);
            json_object_put(e);
        } else {
            session_free(&old);
            initialize(p, id, params);
        }
        json_object_put(msg);
        return;
    }
    if (!need_session(p)) {
        json_object_put(msg);
        return;
    }
    discard(http_add_header(p->resp, "Mcp-Session-Id", "%s", p->s.id));
    if (kind != MSG_REQUEST) {
        if (kind == MSG_NOTIFICATION)
            notification(p, method, params);
        discard(http_send(p->resp, 202, NULL, "", 0));
        json_object_put(msg);
        return;
    }
    bool sse = p->want_sse && !strcmp(method, "tools/call");
    if (sse && http_sse_start(p->resp) < 0) {
        json_object_put(msg);
        return;
    }
    json_object *r = dispatch(p, id, method, params, sse);
    if (sse) {
        if (r) {
            size_t n;
            const char *s = to_json(r, &n);
            discard(http_sse_event(p->resp, s, n, true));
        }
    } else if (r) {
        send_message(p->resp, 200, r);
    } else {
        discard(http_send(p->resp, 202, NULL, "", 0)); /* cancelled: there is no response */
    }
    json_object_put(r);
    json_object_put(msg);
}

void mcp_handle(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    struct post p = {.app = app, .req = req, .resp = resp};
    if (!strcmp(req->method, "POST")) {
        post(&p);
    } else if (!strcmp(req->method, "DELETE")) {
        if (need_session(&p)) {
            int rc = session_end(app->cfg, &p.s);
            if (rc == -ENOENT)
                refuse(resp, 404, -32001, "Session not found");
            else if (rc < 0)
                refuse(resp, 500, -32603, "Internal error: cannot end the session");
            else {
                log_msg(LOG_LVL_INFO, "session %s ended by the client", p.s.id);
                discard(http_send(resp, 200, NULL, "", 0));
            }
        }
    } else {
        /* No standalone server stream: we send nothing unsolicited. */
        discard(http_add_header(resp, "Allow", "POST, DELETE"));
        refuse(resp, 405, -32000, "Method Not Allowed: this server offers no GET stream; POST requests");
    }
    session_free(&p.s);
}
