/* fuzz-mcp.c: libFuzzer target for the HTTP side of the program as
 * app_handle() serves it: MCP's JSON-RPC parsing, the lifecycle and the
 * dispatch (fcgi/mcp/mcp*.c), the tools' argument checks and results
 * (fcgi/tools/tools*.c), the /artifacts/ route (fcgi/app/app.c), /api/run
 * (fcgi/web/web.c) and /api/cell (fcgi/web/web_cell.c), with the executor stubbed
 * (stubs.c: no process is started; kernels are on, so that run_cell and
 * reset_kernel are listed and reach the stub cell).
 *
 * The input: byte 0 picks the request, the rest is its body (or, for
 * /artifacts/, the path after it up to the first newline):
 *   bits 0-1  0: POST /mcp; 1: POST /mcp as 2026-07-28 (MCP-Protocol-Version,
 *             Mcp-Method, Mcp-Name and Mcp-Param-Workspace mirror the body,
 *             as a client sends them); 2: GET /artifacts/REST; 3: POST /api/run
 *   bit 2     send the Mcp-Session-Id of a live session made for this input;
 *             with 2: GET /metrics instead (after the session's requests:
 *             the counters they left; the body unused);
 *             with 3: POST /api/cell (a new notebook) instead of /api/run
 *             (and with bit 6: /api/cell/LINE, LINE the body's first line,
 *             the rest the body: a notebook's cell or its reset)
 *   bit 3     Accept: text/event-stream too (tools/call streams); with 2:
 *             the Mcp-Session-Id of a live session, so that REST is PATH
 *             in its output/ (PRIMS's form of the route)
 *   bits 4-5  the session's revision: 2025-03-26, 2025-06-18, 2025-11-25 (x2);
 *             with 3 and bit 2 clear, bit 4: POST /api/run/RUNID/input (the
 *             fixed run's question answered) instead of /api/run
 *   bit 6     /mcp: DELETE (bit 7 clear) or GET (bit 7 set) instead of POST;
 *             /artifacts/: runmyscript sends the file (accel_redirect off)
 *   bit 7     with bit 6 clear: MCP-Protocol-Version from the session
 * Each input starts from the same state: a fixed finished run with a few
 * files under a private state directory; sessions and runs made by the
 * input are removed after it. */
#include "config.h"

#include <dirent.h>
#include <json-c/json.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "cfg.h"
#include "fuzz.h"
#include "http.h"
#include "memio.h"
#include "workspace.h"

/* The fixed run: its id with and without a node, as a cluster has both. */
#define RUN_ID "0123456789abcdef0123456789abcdef"
#define NODE_RUN_ID "n1-fedcba9876543210fedcba9876543210"
/* The fixed notebook (a 2026-07-28 workspace), for /api/cell/WID. */
#define WS_ID "n1-00112233445566778899aabbccddeeff"

static struct cfg cfg, cfg_noaccel;
static char state[256];
static volatile sig_atomic_t cancel_all;

/* Serves one request; returns the response (caller frees). */
static char *serve_with(const struct cfg *c, const char *method, const char *uri, const char *session,
                        const char *version, bool sse, const char *body, size_t len, const char *ctype,
                        const char *const *extra)
{
    char env[16][600];
    char *envp[17];
    size_t n = 0;
    snprintf(env[n++], sizeof env[0], "REQUEST_METHOD=%s", method);
    snprintf(env[n++], sizeof env[0], "REQUEST_URI=%s", uri);
    snprintf(env[n++], sizeof env[0], "CONTENT_TYPE=%s", ctype);
    snprintf(env[n++], sizeof env[0], "CONTENT_LENGTH=%zu", len);
    snprintf(env[n++], sizeof env[0], "HTTP_HOST=127.0.0.1:8080");
    snprintf(env[n++], sizeof env[0], "REQUEST_SCHEME=http");
    snprintf(env[n++], sizeof env[0], "HTTP_ACCEPT=%s", sse ? "application/json, text/event-stream" : "application/json");
    if (session)
        snprintf(env[n++], sizeof env[0], "HTTP_MCP_SESSION_ID=%s", session);
    if (version)
        snprintf(env[n++], sizeof env[0], "HTTP_MCP_PROTOCOL_VERSION=%s", version);
    for (size_t i = 0; extra && extra[i] && n < 16; i++)
        snprintf(env[n++], sizeof env[0], "%s", extra[i]);
    for (size_t i = 0; i < n; i++)
        envp[i] = env[i];
    envp[n] = NULL;
    /* 4 MiB: a response that grows without bound is a bug. */
    struct mem io = {.in = body, .in_len = len};
    dbuf_init(&io.out, 4u << 20);
    struct http_io hio = {&io, mem_read, mem_write, mem_flush, envp};
    struct app app = {.cfg = c, .mode = "fastcgi", .cancel_all = &cancel_all, .exec = &fuzz_exec};
    app_handle(&app, &hio);
    fuzz_assert(io.out.len < io.out.max, "a response of 4 MiB or more");
    return dbuf_steal(&io.out, NULL);
}

static char *serve(const struct cfg *c, const char *method, const char *uri, const char *session, const char *version,
                   bool sse, const char *body, size_t len, const char *ctype)
{
    return serve_with(c, method, uri, session, version, sse, body, len, ctype, NULL);
}

/* The headers a 2026-07-28 client sends with body: what they mirror of it
 * (into hdr, "NAME=VALUE" CGI variables; NULL-ended). */
static void modern_headers(const char *body, size_t len, char hdr[4][600], const char *out[5])
{
    size_t n = 0;
    char *text = strndup(body, len);
    json_object *m = text ? json_tokener_parse(text) : NULL, *v, *params = NULL, *meta = NULL, *args = NULL;
    free(text);
    if (json_object_object_get_ex(m, "params", &params) && json_object_object_get_ex(params, "_meta", &meta) &&
        json_object_object_get_ex(meta, "io.modelcontextprotocol/protocolVersion", &v))
        snprintf(hdr[n++], 600, "HTTP_MCP_PROTOCOL_VERSION=%.500s", json_object_get_string(v));
    else
        snprintf(hdr[n++], 600, "HTTP_MCP_PROTOCOL_VERSION=2026-07-28");
    if (json_object_object_get_ex(m, "method", &v))
        snprintf(hdr[n++], 600, "HTTP_MCP_METHOD=%.500s", json_object_get_string(v));
    if (json_object_object_get_ex(params, "name", &v) || json_object_object_get_ex(params, "taskId", &v))
        snprintf(hdr[n++], 600, "HTTP_MCP_NAME=%.500s", json_object_get_string(v));
    if (json_object_object_get_ex(params, "arguments", &args) && json_object_object_get_ex(args, "workspace", &v))
        snprintf(hdr[n++], 600, "HTTP_MCP_PARAM_WORKSPACE=%.500s", json_object_get_string(v));
    json_object_put(m);
    for (size_t i = 0; i < n; i++)
        out[i] = hdr[i];
    out[n] = NULL;
}

/* A live session of revision version: its id into sid. */
static void new_session(const char *version, char sid[WS_ID_MAX + 1])
{
    char body[300];
    int n = snprintf(body, sizeof body,
                     "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"%s\","
                     "\"capabilities\":{},\"clientInfo\":{\"name\":\"fuzz\",\"version\":\"1\"}}}",
                     version);
    char *resp = serve(&cfg, "POST", "/mcp", NULL, NULL, false, body, (size_t)n, "application/json");
    const char *h = resp ? strstr(resp, "Mcp-Session-Id: ") : NULL;
    fuzz_assert(h, "initialize made no session");
    h += strlen("Mcp-Session-Id: ");
    size_t len = strcspn(h, "\r\n");
    fuzz_assert(len <= WS_ID_MAX, "a session id too long");
    memcpy(sid, h, len);
    sid[len] = '\0';
    fuzz_assert(ws_id_valid(sid), "initialize gave an invalid session id");
    free(resp);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    fuzz_assert(f, "cannot write a fixture file");
    fputs(text, f);
    fclose(f);
}

static void make_run(const char *id)
{
    char dir[400], out[420];
    snprintf(dir, sizeof dir, "%s/runs/%s", state, id);
    snprintf(out, sizeof out, "%s/output", dir);
    fuzz_assert(util_mkdir_p(out, 0755) == 0, "cannot make the fixed run");
    write_file(dir, "result.json", "{}");
    write_file(dir, "artifacts.zip", "PK\005\006\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0");
    write_file(out, "a.txt", "hello\n");
    write_file(out, "b.csv", "x,y\n1,2\n");
    write_file(out, "img.png", "\x89PNG\r\n\x1a\n");
    char sub[440];
    snprintf(sub, sizeof sub, "%s/sub", out);
    fuzz_assert(mkdir(sub, 0755) == 0 || errno == EEXIST, "cannot make output/sub");
    write_file(sub, "c.json", "[1,2,3]");
    char link[440];
    snprintf(link, sizeof link, "%s/link", out);
    discard(symlink("/etc/passwd", link));
}

static void make_workspace(const char *id)
{
    char dir[400];
    snprintf(dir, sizeof dir, "%s/workspaces/%s", state, id);
    static const char *const subs[] = {"workspace", "calls", "cancel", "runs"};
    for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
        char sub[440];
        snprintf(sub, sizeof sub, "%s/%s", dir, subs[i]);
        fuzz_assert(util_mkdir_p(sub, 0755) == 0, "cannot make the fixed workspace");
    }
    write_file(dir, "session.json", "{\"version\":\"2026-07-28\",\"log_level\":\"debug\"}");
}

static void load_cfg(struct cfg *c, bool accel)
{
    char err[300], set_state[300];
    snprintf(set_state, sizeof set_state, "state_dir=%s", state);
    const char *sets[] = {set_state, "log_level=error", "node_id=n1", "session_ttl=1h", "max_sessions=50",
                          "preview_bytes=512", accel ? "accel_redirect=on" : "accel_redirect=off",
                          "test_fixture_tools=on"};
    fuzz_assert(cfg_load(c, "/dev/null", NULL, sets, ARRAY_SIZE(sets), err, sizeof err) == 0, err);
    c->exec.kernels.on = true; /* as serve's workers have them */
    log_set_level(LOG_LVL_ERROR);
}

/* The private state directory goes when the target exits (libFuzzer ends
 * with exit(); a crash leaves it for a look). */
static void remove_state(void)
{
    discard(util_rm_rf_at(AT_FDCWD, state));
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(state, sizeof state, "%s/rms-fuzz-mcp.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    fuzz_assert(mkdtemp(state), "mkdtemp");
    atexit(remove_state);
    load_cfg(&cfg, true);
    load_cfg(&cfg_noaccel, false);
    fuzz_assert(ws_init_state(state) == 0, "cannot make the state directory");
    make_run(RUN_ID);
    make_run(NODE_RUN_ID);
    make_workspace(WS_ID);
    return 0;
}

/* Removes what an input made: every session, workspace and task but the
 * fixed notebook, and every run but the two fixed ones. */
static void reset(void)
{
    static const char *const subs[] = {"sessions", "workspaces", "tasks", "runs"};
    for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", state, subs[i]);
        int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
            continue;
        DIR *d = util_opendir_at(dfd);
        struct dirent *de;
        while (d && (de = readdir(d))) {
            if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || !strcmp(de->d_name, RUN_ID) ||
                !strcmp(de->d_name, NODE_RUN_ID) || !strcmp(de->d_name, WS_ID))
                continue;
            discard(util_rm_rf_at(dfd, de->d_name));
        }
        if (d)
            closedir(d);
        close(dfd);
    }
    make_workspace(WS_ID); /* delete_workspace may have ended it */
}

static bool is_internal(json_object *m)
{
    json_object *e, *code;
    return json_object_object_get_ex(m, "error", &e) && json_object_object_get_ex(e, "code", &code) &&
           json_object_get_int(code) == -32603;
}

/* Whether a response carries a JSON-RPC -32603: its body, each message of
 * a batch, each event of a stream. */
static bool internal_error(const char *resp)
{
    const char *body = strstr(resp, "\r\n\r\n");
    if (!body)
        return false;
    body += 4;
    bool found = false;
    bool sse = !strncmp(body, "event:", 6) || !strncmp(body, ":", 1);
    for (const char *p = body; p && *p && !found;) {
        const char *line = p;
        const char *nl = strchr(p, '\n');
        p = nl ? nl + 1 : NULL;
        if (sse && strncmp(line, "data: ", 6))
            continue;
        size_t len = nl ? (size_t)(nl - line) : strlen(line);
        if (sse) {
            line += 6;
            len -= 6;
        } else {
            len = strlen(line);
            p = NULL;
        }
        char *text = strndup(line, len);
        json_object *o = text ? json_tokener_parse(text) : NULL;
        free(text);
        if (json_object_is_type(o, json_type_array)) {
            for (size_t i = 0; i < json_object_array_length(o); i++)
                found = found || is_internal(json_object_array_get_idx(o, i));
        } else {
            found = is_internal(o);
        }
        json_object_put(o);
    }
    return found;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const versions[] = {"2025-03-26", "2025-06-18", "2025-11-25", "2025-11-25"};
    if (size == 0)
        return 0;
    unsigned flags = data[0];
    const char *body = (const char *)data + 1;
    size_t len = size - 1;
    const char *version = versions[(flags >> 4) & 3];
    char sid[WS_ID_MAX + 1];
    const char *session = NULL;
    if (flags & 4) {
        new_session(version, sid);
        session = sid;
    }
    char *resp = NULL;
    fuzz_stub_failed = false;
    switch (flags & 3) {
    case 0: {
        const char *method = !(flags & 64) ? "POST" : (flags & 128) ? "GET" : "DELETE";
        resp = serve(&cfg, method, "/mcp", session, !(flags & 64) && (flags & 128) ? version : NULL, flags & 8, body,
                     len, "application/json");
        break;
    }
    case 1: {
        char hdr[4][600];
        const char *extra[5];
        modern_headers(body, len, hdr, extra);
        resp = serve_with(&cfg, "POST", "/mcp", session, NULL, flags & 8, body, len, "application/json", extra);
        break;
    }
    case 2: {
        if (flags & 4) {
            resp = serve(&cfg, "GET", "/metrics", NULL, NULL, false, "", 0, "");
            fuzz_assert(strstr(resp, "runmyscript_requests_total") || strstr(resp, "403"),
                        "/metrics: the exposition, or refused");
            break;
        }
        /* The URI as nginx passes it: the bytes after /artifacts/ up to a
         * newline, percent-encoded or not as the input says. */
        char uri[HTTP_PATH_MAX + 64];
        size_t n = 0;
        while (n < len && body[n] != '\n' && body[n] != '\0')
            n++;
        if (n > HTTP_PATH_MAX)
            n = HTTP_PATH_MAX;
        snprintf(uri, sizeof uri, "/artifacts/%.*s", (int)n, body);
        if (flags & 8) {
            new_session(version, sid);
            session = sid;
        }
        resp = serve(flags & 64 ? &cfg_noaccel : &cfg, flags & 128 ? "HEAD" : "GET", uri, session, NULL, false, "", 0,
                     "");
        /* Whatever the path, nothing outside a run's output/ (and its zip)
         * is ever named or sent. */
        fuzz_assert(!strstr(resp, "root:"), "/etc/passwd was sent");
        const char *x = strstr(resp, "X-Accel-Redirect: ");
        if (x) {
            x += strlen("X-Accel-Redirect: ");
            fuzz_assert(!strncmp(x, APP_ACCEL_PREFIX RUN_ID "/", strlen(APP_ACCEL_PREFIX RUN_ID "/")) ||
                            !strncmp(x, APP_ACCEL_PREFIX NODE_RUN_ID "/", strlen(APP_ACCEL_PREFIX NODE_RUN_ID "/")),
                        "X-Accel-Redirect outside the fixed runs");
            size_t xl = strcspn(x, "\r\n");
            for (size_t i = 0; i + 2 < xl; i++)
                fuzz_assert(!(x[i] == '/' && x[i + 1] == '.' && x[i + 2] == '.'), "X-Accel-Redirect with ..");
        }
        break;
    }
    case 3:
        if (!(flags & 4) && (flags & 16)) {
            resp = serve(&cfg, "POST", "/api/run/" RUN_ID "/input", NULL, NULL, false, body, len, "application/json");
        } else if (!(flags & 4)) {
            resp = serve(&cfg, "POST", "/api/run", NULL, NULL, false, body, len, "application/json");
        } else if (!(flags & 64)) {
            resp = serve(&cfg, "POST", "/api/cell", NULL, NULL, flags & 8, body, len, "application/json");
        } else {
            char uri[HTTP_PATH_MAX + 64];
            size_t n = 0;
            while (n < len && body[n] != '\n' && body[n] != '\0')
                n++;
            snprintf(uri, sizeof uri, "/api/cell/%.*s", (int)(n > HTTP_PATH_MAX ? HTTP_PATH_MAX : n), body);
            size_t skip = n < len ? n + 1 : n;
            resp = serve(&cfg, "POST", uri, NULL, NULL, flags & 8, body + skip, len - skip, "application/json");
        }
        break;
    }
    fuzz_assert(resp && !strncmp(resp, "Status: ", 8), "no status line");
    /* What a client sends is never a failure of the service: -32603 and
     * 500 come only from a stubbed run that failed as the service. */
    if (!fuzz_stub_failed)
        fuzz_assert(strncmp(resp, "Status: 500", 11) && !internal_error(resp),
                    "a request was answered as a failure of the service");
    if (getenv("FUZZ_MCP_PRINT")) /* to see what a seed does */
        fprintf(stderr, "---- response\n%s\n", resp);
    free(resp);
    reset();
    return 0;
}
