/* test-metrics.c: the Prometheus text exposition that /metrics writes
 * (fcgi/metrics.c): escaping of help text and label values, one HELP and
 * TYPE per family, a histogram's buckets cumulative with +Inf equal to the
 * count, the counters of a run and a request counted once in the file that
 * every process maps (two mappings of it see the same counts), every
 * result status a value of the status label; and metrics_allow. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "metrics.h"
#include "tap.h"

/* The value of the sample line that starts with prefix (name and labels),
 * or -1 when there is none. */
static double sample(const char *text, const char *prefix)
{
    size_t n = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        if (!strncmp(p, prefix, n) && p[n] == ' ')
            return strtod(p + n + 1, NULL);
    return -1;
}

static int count_lines(const char *text, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
        n += !strncmp(p, prefix, len);
    return n;
}

/* The writer's pieces. */
static void writer(void)
{
    struct dbuf b;
    dbuf_init(&b, 4096);
    ok(metrics_family(&b, "x_total", "counter", "a \\ b\nc") == 0, "family written");
    is_str(b.data, "# HELP x_total a \\\\ b\\nc\n# TYPE x_total counter\n", "help: \\ and newline escaped");
    dbuf_free(&b);
    dbuf_init(&b, 4096);
    const char *labels[] = {"a", "q\"\\\n", "b", "v", NULL};
    ok(metrics_sample(&b, "x", "_bucket", labels, 3) == 0, "sample written");
    is_str(b.data, "x_bucket{a=\"q\\\"\\\\\\n\",b=\"v\"} 3\n", "label values: \", \\ and newline escaped");
    dbuf_free(&b);
    dbuf_init(&b, 4096);
    ok(metrics_sample(&b, "y", NULL, NULL, 0.25) == 0 && metrics_sample(&b, "z", NULL, NULL, 1e15) == 0,
       "samples without labels");
    is_str(b.data, "y 0.25\nz 1000000000000000\n", "a fraction as it is, an integer without exponent");
    dbuf_free(&b);
    dbuf_init(&b, 16);
    is_int(metrics_sample(&b, "a_very_long_metric_name", NULL, NULL, 1), -E2BIG, "the ceiling holds");
    dbuf_free(&b);
}

/* metrics_allow: the peer's address against addresses and networks. */
static void allow(struct cfg *c)
{
    char none[] = "", any[] = "*", v6[] = "fd00::/8,192.0.2.0/33";
    ok(app_metrics_allowed(c, "127.0.0.1"), "loopback");
    ok(app_metrics_allowed(c, "127.9.9.9"), "127.0.0.0/8");
    ok(app_metrics_allowed(c, "::1"), "::1");
    ok(app_metrics_allowed(c, "10.1.200.3"), "10.1.0.0/16");
    ok(!app_metrics_allowed(c, "10.2.0.1"), "outside the network");
    ok(!app_metrics_allowed(c, "::2"), "another IPv6 address");
    ok(!app_metrics_allowed(c, NULL) && !app_metrics_allowed(c, "") && !app_metrics_allowed(c, "x"),
       "no address, or not one");
    c->metrics_allow = none;
    ok(!app_metrics_allowed(c, "127.0.0.1"), "empty: nobody");
    c->metrics_allow = any;
    ok(app_metrics_allowed(c, "192.0.2.1"), "*: anybody");
    c->metrics_allow = v6;
    ok(app_metrics_allowed(c, "fd12::1") && !app_metrics_allowed(c, "192.0.2.1"),
       "an IPv6 network; a bad prefix length matches nothing");
}

/* Every result status is a value of the status label. */
static void every_status(const struct cfg *cfg, const struct metrics_gauges *g)
{
    struct exec_sink inner = {0};
    struct metrics_run m;
    struct result r;
    struct dbuf b;
    result_init(&r);
    r.outcome = EXEC_OUTCOME_DONE;
    for (int s = RESULT_STATUS_OK; s <= RESULT_STATUS_WORKSPACE_LIMIT; s++) {
        snprintf(r.run_id, sizeof r.run_id, "%032x", 9);
        r.status = (enum result_status)s;
        metrics_run_begin(&m, &inner);
        metrics_run_end(cfg, &m, METRICS_DOOR_MCP, false, &r);
        char want[160];
        snprintf(want, sizeof want, "runmyscript_runs_total{door=\"mcp\",status=\"%s\",start=\"cold\"}",
                 result_status_name((enum result_status)s));
        dbuf_init(&b, METRICS_TEXT_MAX);
        discard(metrics_write(&b, metrics_counters(cfg), g));
        ok(sample(b.data ? b.data : "", want) >= 1, "status %s counted", result_status_name((enum result_status)s));
        dbuf_free(&b);
    }

}

int main(void)
{
    struct dbuf b;
    writer();

    /* Counting in the shared file. */
    char dir[] = "/tmp/test-metrics-XXXXXX";
    ok(mkdtemp(dir) != NULL, "a state directory");
    char allowed[] = "127.0.0.0/8, ::1 10.1.0.0/16";
    struct cfg cfg = {.state_dir = dir, .metrics_allow = allowed};
    ok(metrics_counters(&cfg) != NULL, "the counters file is made and mapped");
    metrics_request(&cfg, "/mcp", 200);
    metrics_request(&cfg, "/mcp", 200);
    metrics_request(&cfg, "/nowhere", 599);
    metrics_refused(&cfg, METRICS_REFUSED_BUSY);

    struct exec_sink inner = {0};
    struct metrics_run m;
    struct result r;
    result_init(&r);
    metrics_run_begin(&m, &inner);
    ok(m.sink.ctx == &m && m.sink.phase != NULL && m.sink.output == NULL, "the meter wraps only what the door has");
    m.sink.phase(m.sink.ctx, EXEC_PHASE_QUEUED, "");
    usleep(30000);
    m.sink.phase(m.sink.ctx, EXEC_PHASE_INSTALLING, "x");
    usleep(120000);
    m.sink.phase(m.sink.ctx, EXEC_PHASE_RUNNING, "");
    snprintf(r.run_id, sizeof r.run_id, "%032x", 7);
    r.outcome = EXEC_OUTCOME_DONE;
    r.status = RESULT_STATUS_OK;
    r.duration_ms = 700;
    metrics_run_end(&cfg, &m, METRICS_DOOR_WEB, false, &r);
    ok(m.queue_ms >= 25 && m.install_ms >= 100, "the phases timed (queued %lld ms, installing %lld ms)",
       (long long)m.queue_ms, (long long)m.install_ms);
    is_str(metrics_last_run(), r.run_id, "the request's run noted");
    metrics_request_begin();
    is_str(metrics_last_run(), "", "and forgotten at the next request");
    r.outcome = EXEC_OUTCOME_BUSY;
    r.run_id[0] = '\0';
    metrics_run_begin(&m, &inner);
    metrics_run_end(&cfg, &m, METRICS_DOOR_MCP, false, &r);

    /* A second mapping (another process's) sees the same counts. */
    struct util_counters other;
    char path[256];
    snprintf(path, sizeof path, "%s/.metrics/counters", dir);
    ok(util_counters_open(path, 1, 4, &other) == 0, "another layout opens");
    util_counters_close(&other);

    struct metrics_gauges g = {.version = "1.0", .mode = "serve", .isolation = "a\"b", .slots = 2, .disk_low = 1};
    dbuf_init(&b, METRICS_TEXT_MAX);
    ok(metrics_write(&b, metrics_counters(&cfg), &g) == 0, "the exposition written");
    const char *t = b.data ? b.data : "";
    /* The file was started again for another layout just above: what was
     * counted before it is gone, and counting goes on from zero. */
    is_int((int)sample(t, "runmyscript_requests_total{route=\"/mcp\",code=\"200\"}"), -1,
           "a file of another layout starts from zeros");
    dbuf_free(&b);

    metrics_request(&cfg, "/mcp", 200);
    metrics_request(&cfg, "/mcp", 200);
    metrics_request(&cfg, "/nowhere", 599);
    metrics_refused(&cfg, METRICS_REFUSED_BUSY);
    snprintf(r.run_id, sizeof r.run_id, "%032x", 8);
    r.outcome = EXEC_OUTCOME_DONE;
    r.status = RESULT_STATUS_TIMEOUT;
    r.warm = true;
    r.duration_ms = 700;
    metrics_run_begin(&m, &inner);
    metrics_run_end(&cfg, &m, METRICS_DOOR_MCP, true, &r);
    r.warm = false;
    r.duration_ms = 400000;
    metrics_run_begin(&m, &inner);
    metrics_run_end(&cfg, &m, METRICS_DOOR_WEB, false, &r);

    dbuf_init(&b, METRICS_TEXT_MAX);
    ok(metrics_write(&b, metrics_counters(&cfg), &g) == 0, "the exposition written again");
    t = b.data ? b.data : "";
    is_int((int)sample(t, "runmyscript_requests_total{route=\"/mcp\",code=\"200\"}"), 2, "requests by route and code");
    is_int((int)sample(t, "runmyscript_requests_total{route=\"other\",code=\"other\"}"), 1,
           "an unknown route and code: other");
    is_int(count_lines(t, "runmyscript_requests_total{route=\"/api/run\""), 0, "combinations never seen: left out");
    is_int((int)sample(t, "runmyscript_cells_total{door=\"mcp\",status=\"timeout\",start=\"warm\"}"), 1,
           "a cell by door, status and start");
    is_int((int)sample(t, "runmyscript_runs_total{door=\"web\",status=\"timeout\",start=\"cold\"}"), 1,
           "a run by door, status and start");
    is_int((int)sample(t, "runmyscript_refusals_total{reason=\"busy\"}"), 1, "a busy refusal");
    is_int((int)sample(t, "runmyscript_refusals_total{reason=\"caps\"}"), 0, "every reason, 0 too");
    is_int((int)sample(t, "runmyscript_script_seconds_bucket{le=\"0.5\"}"), 0, "script: nothing at 0.5 s");
    is_int((int)sample(t, "runmyscript_script_seconds_bucket{le=\"1\"}"), 1, "script: 0.7 s in le=1");
    is_int((int)sample(t, "runmyscript_script_seconds_bucket{le=\"300\"}"), 1, "script: cumulative");
    is_int((int)sample(t, "runmyscript_script_seconds_bucket{le=\"+Inf\"}"), 2, "script: 400 s only in +Inf");
    is_int((int)sample(t, "runmyscript_script_seconds_count"), 2, "+Inf equals the count");
    ok(sample(t, "runmyscript_script_seconds_sum") == 400.7, "the sum in seconds");
    is_int((int)sample(t, "runmyscript_queue_wait_seconds_count"), 2, "every run that ran waited (0 or more)");
    is_int((int)sample(t, "runmyscript_install_seconds_count"), 0, "no install: not observed");
    is_int((int)sample(t, "runmyscript_run_slots"), 2, "a gauge from the snapshot");
    is_int((int)sample(t, "runmyscript_disk_low"), 1, "another");
    is_int((int)sample(t, "runmyscript_info{version=\"1.0\",mode=\"serve\",isolation=\"a\\\"b\"}"), 1,
           "info: its labels escaped");
    is_int(count_lines(t, "# TYPE runmyscript_runs_total counter"), 1, "one TYPE a family");
    is_int(count_lines(t, "# TYPE runmyscript_script_seconds histogram"), 1, "a histogram's TYPE");
    is_int(count_lines(t, "# HELP "), count_lines(t, "# TYPE "), "a HELP for every TYPE");
    ok(t[0] && t[strlen(t) - 1] == '\n', "ends with a newline");
    dbuf_free(&b);

    every_status(&cfg, &g);
    allow(&cfg);

    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    discard(system(cmd));
    return tap_done();
}
