/* app.c: the routes, the checks they share, /artifacts/ and /healthz (see
 * app.h); /mcp, /api/run and /api/cell are handed to mcp.c, web.c and
 * web_cell.c, /metrics to app_metrics.c. */
#include "config.h"

#include "app.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "executor.h"
#include "mcp.h"
#include "metrics.h"
#include "stream.h"
#include "web.h"

/* ------------------------------------------------------------ helpers */

bool app_host_allowed(const struct cfg *cfg, const char *name)
{
    const char *list = cfg->allowed_hosts ? cfg->allowed_hosts : "";
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ", \t");
        if ((len == 1 && *p == '*') || (len == n && len && !strncasecmp(p, name, n)))
            return true;
        p += len;
    }
    return false;
}

/* Answers a refusal: for /mcp a JSON-RPC error without an id (why holds
 * nothing a JSON string must escape: static text, or a host through
 * host_shown), as the MCP SDKs answer; else {"error": why}. */
static void deny(struct http_req *req, struct http_resp *resp, int status, bool jsonrpc, const char *why)
{
    log_msg(LOG_LVL_INFO, "%d %s %s: %s", status, req->method, req->path, why);
    if (jsonrpc) {
        char body[512];
        snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"error\":{\"code\":-32000,\"message\":\"%s\"},\"id\":null}",
                 why);
        discard(http_send_json(resp, status, body));
    } else {
        http_send_error(resp, status, why);
    }
}

/* The Host header as a refusal names it: at most 100 bytes, each byte
 * that is not a host name's (letters, digits, ".-:[]_") written "?", so
 * that the text needs no escaping in JSON nor in the log. */
static void host_shown(const char *host, char *out, size_t outlen)
{
    size_t i = 0;
    for (; host[i] && i < 100 && i + 1 < outlen; i++)
        out[i] = isalnum((unsigned char)host[i]) || strchr(".-:[]_", host[i]) ? host[i] : '?';
    out[i] = '\0';
}

/* The checks every dynamic route shares. Returns true when the request may
 * go on; otherwise the response is sent. For /mcp the body is a JSON-RPC
 * error without an id, as the MCP SDKs answer. auth: the route runs code
 * (/mcp, /api/): the token, and the Origin's whole origin (csrf). */
static bool guard(const struct app *app, struct http_req *req, struct http_resp *resp, bool jsonrpc, bool auth)
{
    char name[256];
    const char *host = http_header(req, "Host");
    const char *origin = http_header(req, "Origin");
    const char *why = NULL;
    char said[200];
    int status = 403;
    bool csrf = auth;

    /* DNS rebinding: a page on evil.example that resolves to 127.0.0.1 still
     * sends Host: evil.example, and a browser always sends its Origin. */
    if (host && (http_host_name(host, name, sizeof name) < 0 || !app_host_allowed(app->cfg, name))) {
        char shown[104];
        host_shown(host, shown, sizeof shown);
        snprintf(said, sizeof said, "Forbidden: Host %s is not allowed here (the server's allowed_hosts)", shown);
        why = said;
    }
    /* CSRF: a page of another origin (another port of the same host too)
     * must not run code here; elsewhere the Origin's host name is enough. */
    if (!why && origin && csrf && !app_origin_allowed(app->cfg, req, origin))
        why = "Forbidden: Origin not allowed (allowed_origins)";
    if (!why && origin && !csrf) {
        const char *auth_part = strstr(origin, "://");
        char authority[256];
        if (!auth_part || strlen(auth_part + 3) >= sizeof authority) {
            why = "Forbidden: Origin not allowed";
        } else {
            snprintf(authority, sizeof authority, "%s", auth_part + 3);
            authority[strcspn(authority, "/")] = '\0';
            if (http_host_name(authority, name, sizeof name) < 0 || !app_host_allowed(app->cfg, name))
                why = "Forbidden: Origin not allowed";
        }
    }
    if (!why && auth && app->cfg->auth_token) {
        const char *h = http_header(req, "Authorization");
        const char *tok = NULL;
        if (h && !strncasecmp(h, "Bearer ", 7)) {
            tok = h + 7;
            while (*tok == ' ')
                tok++;
        }
        /* Constant time in the token's length: no early exit on a mismatch. */
        const char *want = app->cfg->auth_token;
        size_t wn = strlen(want), tn = tok ? strlen(tok) : 0;
        unsigned diff = tok ? (unsigned)(wn ^ tn) : 1;
        for (size_t i = 0; i < wn; i++)
            diff |= (unsigned char)want[i] ^ (unsigned char)(tok && i < tn ? tok[i] : 0);
        if (diff) {
            status = 401;
            /* Two texts: the page tells a wrong token from none by this. */
            why = tok ? "Unauthorized: the bearer token is wrong" : "Unauthorized: a bearer token is required";
            discard(http_add_header(resp, "WWW-Authenticate", "Bearer realm=\"runmyscript\"%s",
                                    tok ? ", error=\"invalid_token\"" : ""));
        }
    }
    if (!why)
        return true;
    deny(req, resp, status, jsonrpc, why);
    return false;
}

/* request_memory: a body above APP_BODY_FREE takes room before it is read,
 * or is turned away with 503 when none comes in time. */
static bool body_room(const struct app *app, struct http_req *req, struct http_resp *resp, bool jsonrpc,
                      struct app_body *b)
{
    if (app_body_admit(app, req, resp, b) == 0)
        return true;
    discard(http_add_header(resp, "Retry-After", "%lld", (long long)((app->cfg->exec.retry_after_ms + 999) / 1000)));
    metrics_refused(app->cfg, METRICS_REFUSED_MEMORY);
    deny(req, resp, 503, jsonrpc, "Service unavailable: the request bodies in flight fill request_memory; try again later");
    return false;
}

/* ---------------------------------------------------------- /artifacts/ */

/* Sends the open file fd as the body (when nginx does not: accel_redirect
 * off, or a name it cannot take). */
static void send_file(struct http_req *req, struct http_resp *resp, int fd, const struct stat *st, const char *ct)
{
    if (http_add_header(resp, "Content-Length", "%lld", (long long)st->st_size) < 0 || http_start(resp, 200, ct) < 0)
        return;
    if (!strcmp(req->method, "HEAD"))
        return;
    char buf[65536];
    for (off_t off = 0; off < st->st_size;) {
        ssize_t r = pread(fd, buf, sizeof buf, off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || http_write(resp, buf, (size_t)r) < 0)
            break; /* the file shrank or the client left: the length tells it */
        off += r;
    }
}

/* Whether nginx sends the file: accel_redirect, whose auto means "under
 * FastCGI, unless we run as root" (a CGI program usually has no nginx in
 * front: Apache, shared hosts; as root with the jail a run's files belong
 * to its per-run uid, which nginx's user, www-data on Debian, cannot read:
 * the documented site setup must download with the defaults). */
static bool use_accel(const struct app *app)
{
    if (app->cfg->accel_redirect >= 0)
        return app->cfg->accel_redirect;
    return (!app->mode || strcmp(app->mode, "cgi") != 0) && geteuid() != 0;
}

/* Sends the artifact fd (st its stat) of path rel beneath an output/:
 * inline only for what a browser shows safely, nosniff and a sandboxing
 * CSP always. run_id: a run's, which nginx may send from its run directory
 * (accel_redirect); NULL: a session's workspace, which only runmyscript
 * sends (nginx's internal location covers runs/ only, and the artifacts
 * PRIMS's route serves are small). */
static void serve_artifact(const struct app *app, struct http_req *req, struct http_resp *resp, int fd,
                           const struct stat *st, const char *rel, const char *run_id)
{
    unsigned char head[4096];
    ssize_t hn = pread(fd, head, sizeof head, 0);
    const char *base = strrchr(rel, '/');
    base = base ? base + 1 : rel;
    const char *mime = ws_mime(head, hn > 0 ? (size_t)hn : 0, base);
    cleanup_free char *enc_base = result_url_path(base);
    if (!enc_base) {
        http_send_error(resp, 500, "out of memory");
        return;
    }
    /* nginx takes X-Accel-Redirect as a path as it is (no percent-decoding)
     * and splits it at '?': a name nginx cannot take, and any name when we
     * run without nginx (accel off), is sent from here. */
    bool accel = run_id && use_accel(app) && strcspn(rel, "?%#\\") == strlen(rel);
    for (const unsigned char *q = (const unsigned char *)rel; *q && accel; q++)
        accel = *q >= 0x20 && *q < 0x7f;
    if (accel)
        discard(http_add_header(resp, "X-Accel-Redirect", "%s%s/output/%s", APP_ACCEL_PREFIX, run_id, rel));
    /* Inline for what a browser shows safely; the rest downloads. Never
     * inline HTML or SVG from a script: it would run on our origin. */
    bool inline_ok = !strncmp(mime, "image/", 6) && strcmp(mime, "image/svg+xml");
    inline_ok = inline_ok || !strcmp(mime, "text/plain") || !strcmp(mime, "text/csv") ||
                !strcmp(mime, "application/json") || !strcmp(mime, "application/pdf");
    discard(http_add_header(resp, "Content-Disposition", "%s; filename*=UTF-8''%s",
                            inline_ok ? "inline" : "attachment", enc_base));
    discard(http_add_header(resp, "X-Content-Type-Options", "nosniff"));
    discard(http_add_header(resp, "Content-Security-Policy", "sandbox; default-src 'none'"));
    char ct[128];
    snprintf(ct, sizeof ct, "%s%s", mime, !strncmp(mime, "text/", 5) ? "; charset=utf-8" : "");
    if (accel) {
        discard(http_send(resp, 200, ct, "", 0));
        return;
    }
    send_file(req, resp, fd, st, ct);
}

/* PRIMS's route, GET /artifacts/PATH with the session's id in
 * Mcp-Session-Id (or a 2026-07-28 workspace's handle in
 * Mcp-Param-Workspace): output/PATH of that workspace. 400 for a path that
 * is empty, absolute or has a "." or ".." part; 404 for no such session
 * or file; 403 for a path that leaves output/ (a symlink on the way, a
 * file with another name elsewhere). */
static void artifacts_by_header(const struct app *app, struct http_req *req, struct http_resp *resp,
                                const char *sid, const char *wid, const char *rel)
{
    if (sid && wid) {
        http_send_error(resp, 400, "name the session (Mcp-Session-Id) or the workspace (Mcp-Param-Workspace), not both");
        return;
    }
    if (!ws_rel_path_ok(rel)) {
        http_send_error(resp, 400, "the path must be relative to output/, without . or .. parts");
        return;
    }
    cleanup_fd int ofd = mcp_output_open(app->cfg, wid != NULL, sid ? sid : wid);
    if (ofd < 0) {
        http_send_error(resp, 404, ofd == -ENOENT ? "no such session or workspace (or it has ended)"
                                                  : "this workspace has no output");
        return;
    }
    struct stat st;
    cleanup_fd int fd = ws_open_beneath(ofd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    if (fd == -ELOOP || fd == -EXDEV) {
        http_send_error(resp, 403, "the path leaves output/");
        return;
    }
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        http_send_error(resp, 404, "no such file in this workspace's output");
        return;
    }
    /* A hard link to a file outside output/ is never an artifact (art.c). */
    if (st.st_nlink != 1) {
        http_send_error(resp, 403, "the path leaves output/ (the file has another name)");
        return;
    }
    serve_artifact(app, req, resp, fd, &st, rel, NULL);
}

static void artifacts(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    const char *rest = req->path + strlen("/artifacts/");
    char run_id[WS_ID_MAX + 1];
    const char *rel = NULL;
    bool zip = false;

    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
        discard(http_add_header(resp, "Allow", "GET, HEAD"));
        http_send_error(resp, 405, "use GET");
        return;
    }
    /* PATH of a session's workspace, named by a header, as PRIMS serves it. */
    const char *sid = http_header(req, "Mcp-Session-Id"), *wid = http_header(req, "Mcp-Param-Workspace");
    if (sid || wid) {
        artifacts_by_header(app, req, resp, sid, wid, rest);
        return;
    }
    /* RUNID/PATH or RUNID.zip; RUNID may carry a node id (a cluster). */
    size_t idn = ws_id_prefix(rest);
    if (idn == 0) {
        http_send_error(resp, 400, "/artifacts/PATH needs the mcp-session-id header (or is /artifacts/RUNID/PATH)");
        return;
    }
    memcpy(run_id, rest, idn);
    run_id[idn] = '\0';
    if (!strcmp(rest + idn, ".zip"))
        zip = true;
    else if (rest[idn] == '/' && ws_rel_path_ok(rest + idn + 1))
        rel = rest + idn + 1;
    else {
        http_send_error(resp, 404, "no such file");
        return;
    }

    cleanup_free char *run_dir = ws_run_path(app->cfg->state_dir, run_id);
    cleanup_fd int dfd = run_dir ? open(run_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
    struct stat st;
    /* Only finished runs: result.json is what publishes one. */
    if (dfd < 0 || fstatat(dfd, "result.json", &st, AT_SYMLINK_NOFOLLOW) < 0) {
        http_send_error(resp, 404, "no such run (or it has not finished, or it was removed)");
        return;
    }
    if (zip) {
        cleanup_fd int zfd = openat(dfd, "artifacts.zip", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (zfd < 0 || fstat(zfd, &st) < 0 || !S_ISREG(st.st_mode)) {
            http_send_error(resp, 404, "this run has no zip (it wrote no files)");
            return;
        }
        discard(http_add_header(resp, "Content-Disposition", "attachment; filename=\"%s.zip\"", run_id));
        if (use_accel(app)) {
            discard(http_add_header(resp, "X-Accel-Redirect", "%s%s/artifacts.zip", APP_ACCEL_PREFIX, run_id));
            discard(http_send(resp, 200, "application/zip", "", 0));
        } else {
            send_file(req, resp, zfd, &st, "application/zip");
        }
        return;
    }
    cleanup_fd int ofd = openat(dfd, "output", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_fd int fd = ofd >= 0 ? ws_open_beneath(ofd, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0) : -ENOENT;
    /* A regular file with no other name: a hard link to a file outside
     * output/ is never an artifact (art.c), so it is not served. */
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
        http_send_error(resp, 404, "no such file in this run's output");
        return;
    }
    serve_artifact(app, req, resp, fd, &st, rel, run_id);
}

/* --------------------------------------------------------------- /healthz */

static json_object *python_info(const struct app *app)
{
    const struct cfg *cfg = app->cfg;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "path", json_object_new_string(cfg->python));
    char err[256];
    cleanup_free char *env_dir = NULL;
    cleanup_free char *text = NULL;
    size_t len;
    json_object *version = NULL;
    if (app_exec_of(app)->base_env(&cfg->exec, &env_dir, err, sizeof err) == 0) {
        cleanup_free char *cfgfile = NULL;
        if (asprintf(&cfgfile, "%s/pyvenv.cfg", env_dir) >= 0 &&
            util_read_file_at(AT_FDCWD, cfgfile, 65536, &text, &len) == 0) {
            for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (!strncmp(line, "version", 7)) {
                    char *eq = strchr(line, '=');
                    if (eq) {
                        eq++;
                        while (*eq == ' ')
                            eq++;
                        if (util_utf8_valid(eq, strlen(eq)))
                            version = json_object_new_string(eq);
                        break;
                    }
                }
            }
        }
    }
    json_object_object_add(o, "version", version);
    return o;
}

/* The installer runs will use: the installer key, and for auto what deps
 * picks (uv when it is on the server's PATH, else pip). */
static const char *installer_name(const struct cfg *cfg)
{
    if (cfg->exec.deps.installer != EXEC_INSTALLER_AUTO)
        return cfg->exec.deps.installer == EXEC_INSTALLER_UV ? "uv" : "pip";
    const char *path = getenv("PATH");
    for (const char *p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        char cand[4096];
        if (n && (size_t)snprintf(cand, sizeof cand, "%.*s/uv", (int)n, p) < sizeof cand &&
            access(cand, X_OK) == 0)
            return "uv";
        p += n;
        if (*p == ':')
            p++;
    }
    return "pip";
}

/* The kernels of this state_dir (a snapshot of their hosts' counters): on
 * says whether this server starts them (serve). */
static json_object *kernels_info(const struct app *app)
{
    struct exec_kernel_stats ks = {0};
    discard(app_exec_of(app)->kernel_stats(&app->cfg->exec, &ks)); /* zeros when none ever ran here */
    json_object *k = json_object_new_object();
    json_object_object_add(k, "on", json_object_new_boolean(app_kernels(app)));
    json_object_object_add(k, "live", json_object_new_int64(ks.live));
    json_object_object_add(k, "busy", json_object_new_int64(ks.busy));
    json_object_object_add(k, "max", json_object_new_int64(ks.max));
    json_object_object_add(k, "memory", json_object_new_int64((int64_t)ks.memory));
    json_object_object_add(k, "memory_max", json_object_new_int64((int64_t)ks.memory_max));
    return k;
}

/* The state directory's disk and its run records, for /healthz. */
static json_object *disk_info(const struct app *app, const struct ws_disk *d, const char *why)
{
    json_object *o = json_object_new_object();
    uint64_t bytes = 0, files = 0;
    discard(ws_runs_usage(app->cfg->state_dir, &bytes, &files)); /* zeros when there is no ledger yet */
    json_object_object_add(o, "free_bytes", json_object_new_int64((int64_t)d->free_bytes));
    json_object_object_add(o, "reserve_bytes", json_object_new_int64((int64_t)d->reserve_bytes));
    json_object_object_add(o, "free_inodes", json_object_new_int64((int64_t)d->free_inodes));
    json_object_object_add(o, "reserve_inodes", json_object_new_int64((int64_t)d->reserve_inodes));
    json_object_object_add(o, "low", json_object_new_boolean(d->low));
    json_object_object_add(o, "error", why ? json_object_new_string(why) : NULL);
    json_object_object_add(o, "runs_bytes", json_object_new_int64((int64_t)bytes));
    json_object_object_add(o, "runs_files", json_object_new_int64((int64_t)files));
    return o;
}

/* The streams: those serve's stream process carries, and those held by the
 * processes of this state directory (CGI, FastCGI on stdin). */
static json_object *streams_info(const struct app *app)
{
    json_object *o = json_object_new_object();
    const struct stream_shared *sh = app->workers && app->workers->streams.on ? &app->workers->streams : NULL;
    struct stream_counts n = {0};
    if (sh)
        stream_shared_sum(sh, &n);
    int pid = sh ? __atomic_load_n(&sh->pid, __ATOMIC_RELAXED) : 0;
    json_object_object_add(o, "process", json_object_new_string(!sh ? "none" : pid > 0 ? "running" : "starting"));
    json_object_object_add(o, "open", json_object_new_int64(n.open));
    json_object_object_add(o, "listens", json_object_new_int64(n.counted));
    json_object_object_add(o, "held", json_object_new_int64(sh ? 0 : stream_held_count(app->cfg)));
    json_object_object_add(o, "max", json_object_new_int64((int64_t)cfg_max_streams(app->cfg, sh != NULL)));
    json_object_object_add(o, "max_per_client",
                           json_object_new_int64((int64_t)cfg_max_streams_per_client(app->cfg, sh != NULL)));
    json_object_object_add(o, "buffered_bytes", json_object_new_int64((int64_t)n.buffered));
    json_object_object_add(o, "cut", json_object_new_int64((int64_t)n.cut));
    json_object_object_add(o, "restarts", json_object_new_int64(sh ? __atomic_load_n(&sh->restarts, __ATOMIC_RELAXED) : 0));
    return o;
}

static void healthz(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    (void)req;
    json_object *o = json_object_new_object();
    /* A state directory this process cannot write fails every run
     * (sandbox_error): not healthy, and why. Below disk_reserve new runs
     * are refused (everything else is served): low_disk. */
    char why[PATH_MAX + 200] = "", dwhy[256] = "";
    bool healthy = ws_state_check(app->cfg->state_dir, why, sizeof why) == 0;
    struct ws_disk disk;
    bool low = ws_disk_check(&app->cfg->exec, &disk, dwhy, sizeof dwhy) == -ENOSPC;
    json_object_object_add(o, "status", json_object_new_string(!healthy ? "error" : low ? "low_disk" : "ok"));
    if (!healthy)
        json_object_object_add(o, "error", json_object_new_string(why));
    json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
    json_object_object_add(o, "mode", json_object_new_string(app->mode));
    json_object_object_add(o, "isolation", json_object_new_string(app_isolation(app->cfg)));
    char iso[32] = "";
    discard(cfg_value(app->cfg, "isolation", iso, sizeof iso)); /* the key is there, its names short */
    json_object_object_add(o, "isolation_config", json_object_new_string(iso));
    json_object_object_add(o, "landlock_abi", json_object_new_int(app_host_caps()->landlock_abi));
    json_object_object_add(o, "python", python_info(app));
    json_object_object_add(o, "installer", json_object_new_string(installer_name(app->cfg)));
    json_object *w = json_object_new_object();
    if (app->workers) {
        json_object_object_add(w, "busy", json_object_new_int((int)__atomic_load_n(&app->workers->busy, __ATOMIC_RELAXED)));
        json_object_object_add(w, "total", json_object_new_int((int)app->workers->total));
    } else {
        json_object_object_add(w, "busy", json_object_new_int(1));
        json_object_object_add(w, "total", json_object_new_int(1));
    }
    json_object_object_add(o, "workers", w);
    /* Admission across every process of this state_dir (a snapshot). */
    const struct exec_admit_config *ac = &app->cfg->exec.admit;
    uint32_t running = 0, queued = 0;
    json_object *runs = json_object_new_object();
    discard(probe_slots(app->cfg->state_dir, ac, &running, &queued)); /* zeros when the slots cannot be read */
    json_object_object_add(runs, "running", json_object_new_int64(running));
    json_object_object_add(runs, "queued", json_object_new_int64(queued));
    json_object_object_add(runs, "max_running", json_object_new_int64(exec_admit_max_running(ac)));
    json_object_object_add(runs, "max_queued", json_object_new_int64(ac->max_queued));
    json_object_object_add(o, "runs", runs);
    /* The warm pool of a server serving this state_dir (zeros: none). */
    struct exec_warm_stats ws;
    discard(exec_warm_stats(app->cfg->state_dir, &ws)); /* zeros when there is no pool */
    json_object *warm = json_object_new_object();
    json_object_object_add(warm, "serving", json_object_new_boolean(ws.serving));
    json_object_object_add(warm, "envs", json_object_new_int64((int64_t)ws.envs));
    json_object_object_add(warm, "runs", json_object_new_int64((int64_t)ws.runs));
    json_object_object_add(warm, "skipped", json_object_new_int64((int64_t)ws.skipped));
    json_object_object_add(warm, "spares", json_object_new_int64((int64_t)ws.spares));
    json_object_object_add(o, "warm", warm);
    json_object_object_add(o, "kernels", kernels_info(app));
    json_object_object_add(o, "disk", disk_info(app, &disk, low ? dwhy : NULL));
    json_object *rq = json_object_new_object();
    json_object_object_add(rq, "memory_bytes", json_object_new_int64((int64_t)app_body_in_use(app)));
    json_object_object_add(rq, "memory_max", json_object_new_int64((int64_t)cfg_request_memory(app->cfg)));
    json_object_object_add(o, "requests", rq);
    /* The most a client may ask of a run (the page's Timeout field takes
     * it as its maximum), in ms as the run event says its limits. */
    json_object *lim = json_object_new_object();
    json_object_object_add(lim, "timeout", json_object_new_int64((int64_t)app->cfg->exec.limits.wall_ms));
    json_object_object_add(o, "limits", lim);
    json_object_object_add(o, "streams", streams_info(app));
    discard(http_add_header(resp, "Cache-Control", "no-store"));
    discard(http_send_json(resp, healthy ? 200 : 503,
                           json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)));
    json_object_put(o);
}

/* ----------------------------------------------------------------- routes */

/* A deployment under a path (public_url = https://host/tools/rms, a shared
 * host's subdirectory): the requests arrive as /tools/rms/mcp and route as
 * /mcp. A path outside the base is left as it is (and is not found). */
static void strip_base_path(const struct app *app, struct http_req *req)
{
    const char *base = app->cfg->base_path;
    size_t n = base ? strlen(base) : 0;
    if (n && !strncmp(req->path, base, n) && req->path[n] == '/')
        memmove(req->path, req->path + n, strlen(req->path + n) + 1);
}

void app_handle(const struct app *app, struct http_io *io)
{
    struct http_req req;
    struct http_resp resp;
    struct app_body body = {.fd = -1};
    int64_t started = util_now_ms();
    const char *route = "other";
    metrics_request_begin();
    http_req_init(&req, io);
    http_resp_init(&resp, io);
    log_set_id(req.id);
    if (req.path_ok)
        strip_base_path(app, &req);

    if (!req.path_ok) {
        http_send_error(&resp, 400, "bad request path");
    } else if (!strcmp(req.path, "/mcp")) {
        route = "/mcp";
        if (guard(app, &req, &resp, true, true) && body_room(app, &req, &resp, true, &body))
            mcp_handle(app, &req, &resp);
    } else if (!strncmp(req.path, "/api/", 5)) {
        route = !strncmp(req.path, "/api/run", 8) ? "/api/run" : !strncmp(req.path, "/api/cell", 9) ? "/api/cell" : "other";
        if (guard(app, &req, &resp, false, true) && body_room(app, &req, &resp, false, &body)) {
            if (!strcmp(req.path, "/api/run"))
                web_api_run(app, &req, &resp);
            else if (!strncmp(req.path, "/api/run/", 9))
                web_api_run_sub(app, &req, &resp, req.path + 9);
            else if (!strcmp(req.path, "/api/cell"))
                web_api_cell(app, &req, &resp);
            else if (!strncmp(req.path, "/api/cell/", 10))
                web_api_cell_sub(app, &req, &resp, req.path + 10);
            else
                http_send_error(&resp, 404, "no such API");
        }
    } else if (!strncmp(req.path, "/artifacts/", 11)) {
        route = "/artifacts/";
        if (guard(app, &req, &resp, false, false))
            artifacts(app, &req, &resp);
    } else if (!strcmp(req.path, "/healthz")) {
        route = "/healthz";
        if (guard(app, &req, &resp, false, false))
            healthz(app, &req, &resp);
    } else if (!strcmp(req.path, "/metrics")) {
        route = "/metrics";
        if (guard(app, &req, &resp, false, false))
            app_metrics(app, &req, &resp);
    } else {
        http_send_error(&resp, 404, "not found");
    }
    if (!resp.started)
        http_send_error(&resp, 500, "no response");
    app_body_release(app, &body);
    app_request_done(app, &req, &resp, route, started);
    http_resp_free(&resp);
    log_set_id(NULL);
}
