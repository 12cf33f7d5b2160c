/* test-result.c: the result JSON: its shape, UTF-8 safety, URLs. */
#include "config.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>

#include "result_log.h"
#include "result.h"
#include "tap.h"

/* A cell's result: its value, its kernel, its artifacts' change; a run's
 * has kernel and value null. */
static void test_cell_result(void)
{
    struct result r;
    size_t n;
    char *s;
    json_object *o, *v;
    /* A cell's result: its value, its kernel, its artifacts' change. */
    result_init(&r);
    strcpy(r.run_id, "0123456789abcdef0123456789abcdef");
    r.status = RESULT_STATUS_OK;
    r.value = strdup("42 \xff");
    r.value_truncated = true;
    r.kernel = (struct result_kernel){RESULT_KERNEL_NEW, 1, strdup("the last kernel exceeded memory")};
    r.artifacts = calloc(1, sizeof *r.artifacts);
    r.artifacts[0] = (struct result_artifact){strdup("cell-1-figure-1.png"), 10, strdup("image/png"), NULL, RESULT_ART_CHANGED};
    r.n_artifacts = 1;
    s = result_to_string(&r, false, &n);
    o = s ? json_tokener_parse(s) : NULL;
    json_object *k = NULL, *a = NULL;
    ok(o && json_object_object_get_ex(o, "value", &v) && !strcmp(json_object_get_string(v), "42 \xef\xbf\xbd"),
       "value, made valid UTF-8");
    ok(json_object_object_get_ex(o, "value_truncated", &v) && json_object_get_boolean(v), "value_truncated");
    ok(json_object_object_get_ex(o, "kernel", &k) && json_object_object_get_ex(k, "state", &v) &&
           !strcmp(json_object_get_string(v), "new"),
       "kernel.state");
    ok(json_object_object_get_ex(k, "cell", &v) && json_object_get_int(v) == 1, "kernel.cell");
    ok(json_object_object_get_ex(k, "reason", &v) && !strcmp(json_object_get_string(v), "the last kernel exceeded memory"),
       "kernel.reason");
    ok(json_object_object_get_ex(o, "artifacts", &a) &&
           json_object_object_get_ex(json_object_array_get_idx(a, 0), "change", &v) &&
           !strcmp(json_object_get_string(v), "changed"),
       "an artifact's change");
    json_object_put(o);
    free(s);
    result_free(&r);
    result_init(&r);
    s = result_to_string(&r, false, &n);
    o = s ? json_tokener_parse(s) : NULL;
    ok(o && json_object_object_get_ex(o, "kernel", &k) && k == NULL && json_object_object_get_ex(o, "value", &v) &&
           v == NULL,
       "a run's result: kernel and value null");
    json_object_put(o);
    free(s);
    result_free(&r);
}

/* A run whose script never started has no time: duration_ms is null. */
static void test_never_ran(void)
{
    struct result r;
    size_t n;
    result_init(&r);
    strcpy(r.run_id, "0123456789abcdef0123456789abcdef");
    r.status = RESULT_STATUS_INSTALL_FAILED;
    char *s = result_to_string(&r, false, &n);
    json_object *o = s ? json_tokener_parse(s) : NULL, *v = NULL;
    ok(o && json_object_object_get_ex(o, "duration_ms", &v) && v == NULL,
       "a script that never started: duration_ms is null, not 0");
    json_object_put(o);
    free(s);
    r.duration_ms = 0;
    s = result_to_string(&r, false, &n);
    o = s ? json_tokener_parse(s) : NULL;
    ok(o && json_object_object_get_ex(o, "duration_ms", &v) && json_object_is_type(v, json_type_int) &&
           json_object_get_int(v) == 0,
       "one that ran for less than a millisecond: 0");
    json_object_put(o);
    free(s);
    result_free(&r);
}

/* The exception's line of a traceback: what a failed script's error says. */
static void test_exception_line(void)
{
    struct {
        const char *log, *want;
    } cases[] = {
        {"hello\nTraceback (most recent call last):\n  File \"/job/script.py\", line 1, in <module>\n    x\n"
         "NameError: name 'x' is not defined\n",
         "NameError: name 'x' is not defined"},
        {"Traceback (most recent call last):\n  File \"a\", line 1\nKeyError: 'a'\n\nDuring handling of the above "
         "exception, another exception occurred:\n\nTraceback (most recent call last):\n  File \"a\", line 3\n"
         "ValueError: second\n",
         "ValueError: second"},
        {"Traceback (most recent call last):\n  File \"a\", line 1\nRuntimeError: two\nlines\n", "RuntimeError: two"},
        {"  File \"/job/script.py\", line 1\n    x = (\n        ^\nSyntaxError: '(' was never closed\n",
         "SyntaxError: '(' was never closed"},
        {"out\n  File \"/job/script.py\", line 2\n    if x\n        ^\nSyntaxError: expected ':'\n",
         "SyntaxError: expected ':'"},
        {"Traceback (most recent call last):\n  File \"a\", line 1\n[runmyscript] something else\n", NULL},
        {"Traceback (most recent call last):\n  File \"a\", line 1\nZeroDivisionError", "ZeroDivisionError"},
        {"just printed, then exit(1)\n", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        struct result_log log;
        bool marker;
        result_log_init(&log, 1 << 20);
        ok(result_log_append(&log, RESULT_STREAM_STDERR, cases[i].log, strlen(cases[i].log), &marker) >= 0,
           "case %zu: its log", i);
        char *got = result_log_exception(&log);
        if (cases[i].want)
            is_str(got, cases[i].want, "case %zu: the exception's line", i);
        else
            ok(got == NULL, "case %zu: no traceback, no line (%s)", i, got ? got : "NULL");
        free(got);
        result_log_free(&log);
    }
}

/* The network record: null without a network; with one, its totals, the
 * destinations reached and refused (a script's name made printable in
 * the text line and valid UTF-8 in the JSON), the limit; host-unfiltered
 * only its mode. */
static void test_network(void)
{
    struct result r;
    json_object *o, *n, *v, *e;
    result_init(&r);
    strcpy(r.run_id, "0123456789abcdef0123456789abcdef");
    r.status = RESULT_STATUS_OK;
    o = result_to_json(&r);
    ok(o && json_object_object_get_ex(o, "network", &n) && n == NULL, "no network: network is null");
    ok(result_network_summary(&r) == NULL, "no network: no text line");
    json_object_put(o);

    r.network.mode = NET_MODE_ON;
    r.network.bytes_in = 2048;
    r.network.bytes_out = 100;
    r.network.connections = 2;
    r.network.refused_connections = 3;
    r.network.reached = calloc(1, sizeof *r.network.reached);
    r.network.reached[0] = (struct net_dest){strdup("www.example.org"), "203.0.113.10", 443, 2048, 100, 2};
    r.network.n_reached = 1;
    r.network.refused = calloc(2, sizeof *r.network.refused);
    r.network.refused[0] = (struct net_refusal){NULL, "127.0.0.1", 80, NET_REFUSED_NEVER_REACHABLE, "loopback", 1};
    r.network.refused[1] = (struct net_refusal){strdup("evil\n\xff.example"), "", 0, NET_REFUSED_NAME, NULL, 2};
    r.network.n_refused = 2;
    r.network.limit = "net_connections";
    o = result_to_json(&r);
    n = NULL;
    ok(o && json_object_object_get_ex(o, "network", &n) && n, "network on: an object");
    ok(json_object_object_get_ex(n, "mode", &v) && !strcmp(json_object_get_string(v), "on"), "network.mode");
    ok(json_object_object_get_ex(n, "bytes_in", &v) && json_object_get_int64(v) == 2048, "network.bytes_in");
    ok(json_object_object_get_ex(n, "refused_connections", &v) && json_object_get_int64(v) == 3,
       "network.refused_connections");
    ok(json_object_object_get_ex(n, "limit", &v) && !strcmp(json_object_get_string(v), "net_connections"),
       "network.limit");
    ok(json_object_object_get_ex(n, "reached", &v) && json_object_array_length(v) == 1 &&
           (e = json_object_array_get_idx(v, 0)) && json_object_object_get_ex(e, "port", &v) &&
           json_object_get_int(v) == 443 && json_object_object_get_ex(e, "name", &v) &&
           !strcmp(json_object_get_string(v), "www.example.org"),
       "network.reached: name, port");
    ok(json_object_object_get_ex(n, "refused", &v) && json_object_array_length(v) == 2 &&
           (e = json_object_array_get_idx(v, 0)) && json_object_object_get_ex(e, "reason", &v) &&
           !strcmp(json_object_get_string(v), "never_reachable") && json_object_object_get_ex(e, "detail", &v) &&
           !strcmp(json_object_get_string(v), "loopback") && json_object_object_get_ex(e, "name", &v) && !v,
       "network.refused: by address, its reason and class, no name");
    ok(json_object_object_get_ex(n, "refused", &v) && (e = json_object_array_get_idx(v, 1)) &&
           json_object_object_get_ex(e, "address", &v) && !v && json_object_object_get_ex(e, "port", &v) && !v &&
           json_object_object_get_ex(e, "name", &v) && !strcmp(json_object_get_string(v), "evil\n\xef\xbf\xbd.example"),
       "network.refused: a name never resolved: no address, no port, the name valid UTF-8");
    json_object_put(o);
    char *line = result_network_summary(&r);
    is_str(line,
           "network: 2 connections, 2.0 KiB in, 100 B out; reached www.example.org:443; refused 127.0.0.1:80 "
           "(never_reachable: loopback), evil??.example (name_not_allowed); stopped at net_connections",
           "the text line");
    free(line);

    /* A kernel's cell's record crosses from its host as this JSON, and
     * reads back as the same record: the same text line (but the name the
     * JSON made valid UTF-8: \xff is U+FFFD, three bytes, three '?'). */
    bool oom = false;
    json_object *wire = result__network_json(&r.network, &oom);
    struct result back;
    result_init(&back);
    back.network.mode = NET_MODE_ON;
    ok(wire && result__network_from_json(wire, &back.network) == 0, "the record read back from its JSON");
    line = result_network_summary(&back);
    is_str(line,
           "network: 2 connections, 2.0 KiB in, 100 B out; reached www.example.org:443; refused 127.0.0.1:80 "
           "(never_reachable: loopback), evil????.example (name_not_allowed); stopped at net_connections",
           "read back: the same text line");
    free(line);
    ok(back.network.n_reached == 1 && back.network.reached[0].bytes_in == 2048 &&
           back.network.reached[0].connections == 2 && back.network.refused[0].detail &&
           !strcmp(back.network.refused[0].detail, "loopback") && back.network.refused[1].count == 2,
       "read back: the bytes, the connections, the detail (static) and the counts");
    result_free(&back);
    json_object_put(wire);
    json_object *bad = json_object_new_string("no record");
    result_init(&back);
    ok(result__network_from_json(bad, &back.network) == -EINVAL, "a JSON that is no record: -EINVAL");
    result_free(&back);
    json_object_put(bad);

    net_record_free(&r.network);
    r.network.mode = NET_MODE_HOST_UNFILTERED;
    o = result_to_json(&r);
    n = NULL;
    ok(o && json_object_object_get_ex(o, "network", &n) && json_object_object_get_ex(n, "mode", &v) &&
           !strcmp(json_object_get_string(v), "host-unfiltered") && json_object_object_get_ex(n, "reached", &v) && !v &&
           json_object_object_get_ex(n, "bytes_in", &v) && !v,
       "host-unfiltered: the mode, nothing counted");
    json_object_put(o);
    line = result_network_summary(&r);
    ok(line && strstr(line, "unfiltered"), "host-unfiltered: the text line says so");
    free(line);
    result_free(&r);
}

int main(void)
{
    test_network();
    test_never_ran();
    test_exception_line();
    struct result r;
    bool marker;
    result_init(&r);
    strcpy(r.run_id, "0123456789abcdef0123456789abcdef");
    r.status = RESULT_STATUS_OK;
    r.exit_code = 0;
    r.duration_ms = 12;
    r.isolation = "rlimits";
    r.url_prefix = "/artifacts/";
    is_int(result_log_append(&r.log, RESULT_STREAM_STDOUT, "ok \xff\xfe\n", 6, &marker), 6, "a chunk of output");
    r.artifacts = calloc(2, sizeof *r.artifacts);
    r.artifacts[0] = (struct result_artifact){strdup("plots/a b.png"), 10, strdup("image/png"), strdup("PNG image 1x1")};
    r.artifacts[1] = (struct result_artifact){strdup("bad\xff.txt"), 3, strdup("text/plain"), strdup("text, 1 line")};
    r.n_artifacts = 2;
    r.has_zip = true;

    size_t n;
    char *s = result_to_string(&r, false, &n);
    ok(s != NULL, "serialises");
    json_object *o = json_tokener_parse(s);
    ok(o != NULL, "the output parses as JSON");
    ok(util_utf8_valid(s, n), "the output is valid UTF-8 although the log was not");
    const char *keys[] = {"run_id", "status", "exit_code", "signal", "duration_ms", "logs", "logs_truncated",
                          "requirements", "artifacts", "zip_url", "workdir", "isolation"};
    int have = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        have += json_object_object_get_ex(o, keys[i], NULL);
    is_int(have, (long long)(sizeof keys / sizeof keys[0]), "every key of the result contract");
    json_object *v;
    json_object_object_get_ex(o, "status", &v);
    is_str(json_object_get_string(v), "ok", "status");
    json_object_object_get_ex(o, "signal", &v);
    ok(v == NULL, "signal is null");
    json_object_object_get_ex(o, "zip_url", &v);
    is_str(json_object_get_string(v), "/artifacts/0123456789abcdef0123456789abcdef.zip", "zip_url");
    json_object_object_get_ex(o, "artifacts", &v);
    json_object *a0 = json_object_array_get_idx(v, 0), *a1 = json_object_array_get_idx(v, 1), *u;
    json_object_object_get_ex(a0, "url", &u);
    is_str(json_object_get_string(u), "/artifacts/0123456789abcdef0123456789abcdef/plots/a%20b.png",
           "artifact URL, percent-encoded");
    json_object_object_get_ex(a1, "url", &u);
    is_str(json_object_get_string(u), "/artifacts/0123456789abcdef0123456789abcdef/bad%FF.txt",
           "a non-UTF-8 name keeps its bytes in the URL");
    json_object_object_get_ex(a1, "path", &u);
    is_str(json_object_get_string(u), "bad\xef\xbf\xbd.txt", "and shows U+FFFD in the path");
    json_object_put(o);
    free(s);

    r.status = RESULT_STATUS_ERROR;
    r.exit_code = -1;
    r.signal = 9;
    s = result_to_string(&r, false, &n);
    o = json_tokener_parse(s);
    json_object_object_get_ex(o, "signal", &v);
    is_str(json_object_get_string(v), "SIGKILL", "a signal by name");
    json_object_object_get_ex(o, "exit_code", &v);
    ok(v == NULL, "exit_code null when signalled");
    json_object_object_get_ex(o, "env_cache", &v);
    is_str(json_object_get_string(v), "none", "env_cache none by default");
    ok(json_object_object_get_ex(o, "install_log", &v) && v == NULL, "install_log null when no installer ran");
    ok(json_object_object_get_ex(o, "failed_requirement", &v) && v == NULL, "failed_requirement null");
    ok(json_object_object_get_ex(o, "env", &v) && v == NULL, "env null");
    json_object_put(o);
    free(s);

    /* An install that failed. */
    r.status = RESULT_STATUS_INSTALL_FAILED;
    r.requirements = calloc(1, sizeof *r.requirements);
    r.requirements[0] = strdup("pillow==9.4.0");
    r.n_requirements = 1;
    r.env_cache = RESULT_ENV_BUILT;
    strcpy(r.env_key, "00112233445566778899aabbccddeeff");
    r.install_log = strdup("ERROR: No matching distribution found for rms-missing\xff\n");
    r.failed_requirement = strdup("rms-broken");
    s = result_to_string(&r, false, &n);
    o = json_tokener_parse(s);
    json_object_object_get_ex(o, "status", &v);
    is_str(json_object_get_string(v), "install_failed", "status install_failed");
    json_object_object_get_ex(o, "requirements", &v);
    is_str(json_object_get_string(json_object_array_get_idx(v, 0)), "pillow==9.4.0", "requirements");
    json_object_object_get_ex(o, "env_cache", &v);
    is_str(json_object_get_string(v), "built", "env_cache built");
    json_object_object_get_ex(o, "env", &v);
    is_str(json_object_get_string(v), "00112233445566778899aabbccddeeff", "env: the key");
    json_object_object_get_ex(o, "failed_requirement", &v);
    is_str(json_object_get_string(v), "rms-broken", "failed_requirement");
    json_object_object_get_ex(o, "install_log", &v);
    is_str(json_object_get_string(v), "ERROR: No matching distribution found for rms-missing\xef\xbf\xbd\n",
           "install_log, made valid UTF-8");
    json_object_put(o);
    free(s);
    result_free(&r);

    test_cell_result();
    return tap_done();
}
