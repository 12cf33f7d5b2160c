/* app_metrics.c: GET /metrics (who may read it: metrics_allow, the peer's
 * address), the gauges read for it at each scrape, and what is done after
 * every request: its count by route and status, and its JSON line in the
 * log (log_format = json). The table of metrics and the exposition are
 * metrics.c's. */
#include "config.h"

#include "app.h"

#include <arpa/inet.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "executor.h"
#include "metrics.h"
#include "stream.h"

/* ------------------------------------------------------- metrics_allow */

/* Whether the address a (16 bytes, IPv4 mapped into IPv6) is in the
 * network text ("10.0.0.0/8", "::1", "127.0.0.1"). */
static bool in_network(const unsigned char *a, const char *text)
{
    char host[64];
    const char *slash = strchr(text, '/');
    size_t hn = slash ? (size_t)(slash - text) : strlen(text);
    if (hn >= sizeof host)
        return false;
    memcpy(host, text, hn);
    host[hn] = '\0';
    unsigned char net[16] = {0};
    int bits;
    struct in_addr v4;
    if (inet_pton(AF_INET, host, &v4) == 1) {
        net[10] = net[11] = 0xff;
        memcpy(net + 12, &v4, 4);
        bits = 96 + 32;
        if (slash) {
            char *end;
            long b = strtol(slash + 1, &end, 10);
            if (*end || end == slash + 1 || b < 0 || b > 32)
                return false;
            bits = 96 + (int)b;
        }
    } else if (inet_pton(AF_INET6, host, net) == 1) {
        bits = 128;
        if (slash) {
            char *end;
            long b = strtol(slash + 1, &end, 10);
            if (*end || end == slash + 1 || b < 0 || b > 128)
                return false;
            bits = (int)b;
        }
    } else {
        return false;
    }
    for (int i = 0; i < bits; i++) {
        unsigned char m = (unsigned char)(0x80 >> (i % 8));
        if ((a[i / 8] & m) != (net[i / 8] & m))
            return false;
    }
    return true;
}

bool app_metrics_allowed(const struct cfg *cfg, const char *addr)
{
    unsigned char a[16] = {0};
    struct in_addr v4;
    if (!addr)
        return false;
    if (inet_pton(AF_INET, addr, &v4) == 1) {
        a[10] = a[11] = 0xff;
        memcpy(a + 12, &v4, 4);
    } else if (inet_pton(AF_INET6, addr, a) != 1) {
        return false;
    }
    const char *list = cfg->metrics_allow ? cfg->metrics_allow : "";
    for (const char *p = list; *p;) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ", \t");
        char item[80];
        if (len == 1 && *p == '*')
            return true;
        if (len && len < sizeof item) {
            memcpy(item, p, len);
            item[len] = '\0';
            if (in_network(a, item))
                return true;
        }
        p += len;
    }
    return false;
}

/* ------------------------------------------------------------ /metrics */

/* What the gauges say now: the same sources as /healthz. */
static void gauges(const struct app *app, struct metrics_gauges *g)
{
    const struct cfg *cfg = app->cfg;
    *g = (struct metrics_gauges){.version = PACKAGE_VERSION, .mode = app->mode, .isolation = app_isolation(cfg)};
    g->workers_busy = app->workers ? __atomic_load_n(&app->workers->busy, __ATOMIC_RELAXED) : 1;
    g->workers = app->workers ? app->workers->total : 1;
    uint32_t running = 0, queued = 0;
    discard(probe_slots(cfg->state_dir, &cfg->exec.admit, &running, &queued)); /* zeros when unreadable */
    g->slots_busy = running;
    g->queued = queued;
    g->slots = exec_admit_max_running(&cfg->exec.admit);
    g->queue_places = cfg->exec.admit.max_queued;
    struct exec_warm_stats ws;
    discard(exec_warm_stats(cfg->state_dir, &ws)); /* zeros when there is no pool */
    g->warm_serving = ws.serving;
    g->warm_zygotes = (double)ws.envs;
    g->warm_hits = (double)ws.runs;
    g->warm_skipped = (double)ws.skipped;
    g->warm_spares = (double)ws.spares;
    struct exec_kernel_stats ks = {0};
    discard(app_exec_of(app)->kernel_stats(&cfg->exec, &ks)); /* zeros when none ever ran here */
    g->kernels_live = ks.live;
    g->kernels_busy = ks.busy;
    g->kernels_max = ks.max;
    g->kernels_memory = (double)ks.memory;
    g->kernels_memory_max = (double)ks.memory_max;
    uint64_t bytes = 0, files = 0;
    discard(ws_tree_usage(cfg->state_dir, "store", &bytes, &files)); /* zeros when there is none */
    g->store_bytes = (double)bytes;
    g->store_files = (double)files;
    discard(ws_tree_usage(cfg->state_dir, "envs", &bytes, &files));
    g->envs_bytes = (double)bytes;
    g->envs_files = (double)files;
    discard(ws_runs_usage(cfg->state_dir, &bytes, &files)); /* zeros when there is no ledger yet */
    g->runs_bytes = (double)bytes;
    g->runs_files = (double)files;
    struct ws_disk d = {0};
    char why[256];
    discard(ws_disk_check(&cfg->exec, &d, why, sizeof why)); /* d is filled either way */
    g->disk_free_bytes = (double)d.free_bytes;
    g->disk_free_inodes = (double)d.free_inodes;
    g->disk_reserve_bytes = (double)d.reserve_bytes;
    g->disk_reserve_inodes = (double)d.reserve_inodes;
    g->disk_low = d.low;
    const struct stream_shared *sh = app->workers && app->workers->streams.on ? &app->workers->streams : NULL;
    struct stream_counts n = {0};
    if (sh)
        stream_shared_sum(sh, &n);
    g->streams_open = sh ? (double)n.open : (double)stream_held_count(cfg);
    g->streams_max = (double)cfg_max_streams(cfg, sh != NULL);
    g->request_memory = (double)app_body_in_use(app);
    g->request_memory_max = (double)cfg_request_memory(cfg);
}

void app_metrics(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    if (strcmp(req->method, "GET") && strcmp(req->method, "HEAD")) {
        discard(http_add_header(resp, "Allow", "GET, HEAD"));
        http_send_error(resp, 405, "use GET");
        return;
    }
    const char *peer = http_param(req, "REMOTE_ADDR");
    if (!app_metrics_allowed(app->cfg, peer)) {
        log_msg(LOG_LVL_INFO, "403 /metrics: %s is not in metrics_allow", peer ? peer : "(no address)");
        http_send_error(resp, 403, "Forbidden: this client may not read /metrics (metrics_allow)");
        return;
    }
    struct metrics_gauges g;
    gauges(app, &g);
    struct dbuf b;
    dbuf_init(&b, METRICS_TEXT_MAX);
    int rc = metrics_write(&b, metrics_counters(app->cfg), &g);
    discard(http_add_header(resp, "Cache-Control", "no-store"));
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "/metrics: %s", strerror(-rc));
        http_send_error(resp, 500, "the metrics could not be written");
    } else {
        discard(http_send(resp, 200, METRICS_CONTENT_TYPE, b.data, b.len));
    }
    dbuf_free(&b);
}

/* ------------------------------------------------------ each request */

void app_request_done(const struct app *app, const struct http_req *req, const struct http_resp *resp,
                      const char *route, int64_t started_ms)
{
    int status = resp->started ? resp->status : 500;
    metrics_request(app->cfg, route, status);
    if (!log_json())
        return;
    /* json-c escapes every string (a client's bytes too: a path, an
     * address), so a line is one line whatever was sent. */
    json_object *o = json_object_new_object();
    char when[40];
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t w = strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(when + w, sizeof when - w, ".%03ldZ", ts.tv_nsec / 1000000);
    const char *run = metrics_last_run();
    const char *peer = http_param(req, "REMOTE_ADDR");
    json_object_object_add(o, "time", json_object_new_string(when));
    json_object_object_add(o, "level", json_object_new_string("info"));
    json_object_object_add(o, "pid", json_object_new_int64((int64_t)getpid()));
    json_object_object_add(o, "id", json_object_new_string(req->id));
    json_object_object_add(o, "msg", json_object_new_string("request"));
    json_object_object_add(o, "method", json_object_new_string(req->method));
    json_object_object_add(o, "route", json_object_new_string(route));
    json_object_object_add(o, "path", req->path_ok && util_utf8_valid(req->path, strlen(req->path))
                                          ? json_object_new_string(req->path)
                                          : NULL);
    json_object_object_add(o, "status", json_object_new_int(status));
    json_object_object_add(o, "duration_ms", json_object_new_int64(util_now_ms() - started_ms));
    json_object_object_add(o, "run_id", run && *run ? json_object_new_string(run) : NULL);
    json_object_object_add(o, "client", peer && util_utf8_valid(peer, strlen(peer)) ? json_object_new_string(peer) : NULL);
    log_json_line(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}
