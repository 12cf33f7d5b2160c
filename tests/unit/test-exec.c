/* test-exec.c: the ordered log and its cap, the limit table, script checks,
 * session runs keeping their own copy of what they produced, the result
 * of a run whose process died, and the outcome exec_run sets. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "admit.h"
#include "result_log.h"
#include "executor.h"
#include "tap.h"

static void test_log(void)
{
    struct result_log log;
    bool marker;
    result_log_init(&log, 10);
    is_int(result_log_append(&log, RESULT_STREAM_STDOUT, "abc", 3, &marker), 3, "stdout chunk kept");
    ok(!marker, "no marker yet");
    is_int(result_log_append(&log, RESULT_STREAM_STDOUT, "de", 2, &marker), 2, "same stream again");
    is_int((long long)log.n_chunks, 1, "consecutive chunks of one stream merge");
    is_int(result_log_append(&log, RESULT_STREAM_STDERR, "ERR", 3, &marker), 3, "stderr chunk kept");
    is_int((long long)log.n_chunks, 2, "a new stream starts a chunk");
    is_int(result_log_append(&log, RESULT_STREAM_STDOUT, "fghij", 5, &marker), 2, "only what fits is kept");
    ok(marker, "the marker is added at the cut");
    ok(log.truncated, "truncated");
    is_int(result_log_append(&log, RESULT_STREAM_STDOUT, "more", 4, &marker), 0, "nothing after the cut");
    ok(!marker, "the marker comes once");
    is_int((long long)log.dropped, 7, "dropped bytes are counted");
    is_int((long long)log.n_chunks, 4, "stdout, stderr, stdout, system");
    ok(log.chunks[0].stream == RESULT_STREAM_STDOUT && log.chunks[1].stream == RESULT_STREAM_STDERR &&
           log.chunks[2].stream == RESULT_STREAM_STDOUT && log.chunks[3].stream == RESULT_STREAM_SYSTEM,
       "streams in order");
    ok(!strncmp(log.buf.data, "abcdeERRfg\n[runmyscript] log truncated", 38), "the text in order with the marker");
    is_int(result_log_append(&log, RESULT_STREAM_SYSTEM, "[sys]\n", 6, &marker), 6, "system lines pass the cap");
    result_log_free(&log);
}

static void test_limits(void)
{
    struct exec_limits l;
    exec_limits_default(&l);
    is_int(l.wall_ms, 60000, "timeout defaults to 60 s");
    is_int(l.install_ms, 300000, "install_time defaults to 300 s");
    is_int((long long)l.log_bytes, 1 << 20, "log_bytes defaults to 1 MiB");
    ok(l.workspace_bytes >= l.output_bytes && l.workspace_files >= l.output_files,
       "the workspace's bound holds output/'s: workspace_* at least output_*");
    const char *keys[] = {"timeout", "cpu_time", "memory", "file_size", "open_files", "processes",
                          "log_bytes", "output_bytes", "output_files", "kill_grace", "tmp_bytes", "tmp_files",
                          "code_bytes", "input_bytes", "install_time", "workspace_bytes", "workspace_files", "value_bytes",
                          "net_bytes", "net_connections"};
    int found = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const struct key_def *d = exec_limit_find(keys[i]);
        if (d && d->doc && *d->doc && exec_limit_get(&l, d) == d->dflt && d->dflt >= d->min &&
            d->dflt <= d->max)
            found++;
        else
            diag("limit %s: missing or inconsistent", keys[i]);
    }
    is_int(found, (long long)(sizeof keys / sizeof keys[0]), "every limit has a row, a default in range, a breach");
    is_int((long long)exec_limit_defs_n, (long long)(sizeof keys / sizeof keys[0]), "and no other rows");
    const struct key_def *d = exec_limit_find("memory");
    exec_limit_set(&l, d, 12345);
    is_int((long long)l.memory, 12345, "exec_limit_set writes the field");
    ok(exec_limit_find("nope") == NULL, "unknown limit");
}

static void test_check(void)
{
    struct exec_limits l;
    char why[200] = "";
    exec_limits_default(&l);
    is_int(exec_check_code("print(1)\n", 9, &l, why, sizeof why), 0, "a script");
    is_int(exec_check_code("", 0, &l, why, sizeof why), -EINVAL, "empty");
    is_str(why, "the script is empty", "says empty");
    is_int(exec_check_code("print('\xff')", 10, &l, why, sizeof why), -EINVAL, "not UTF-8");
    is_str(why, "the script is not valid UTF-8", "says not UTF-8");
    is_int(exec_check_code("a\0b", 3, &l, why, sizeof why), -EINVAL, "NUL");
    l.code_bytes = 4;
    is_int(exec_check_code("print(1)", 8, &l, why, sizeof why), -E2BIG, "over code_bytes");
    is_str(why, "the script (8 B) is larger than code_bytes (4 B)", "names code_bytes, with its value and the script's size");
}

static char *slurp(const char *dir, const char *rel)
{
    char path[4096];
    char *text = NULL;
    size_t len;
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    if (util_read_file_at(AT_FDCWD, path, 1 << 20, &text, &len) < 0)
        return NULL;
    return text;
}

/* Two runs in one session workspace rewrite the same output file: each run
 * directory keeps what its own run wrote (its URLs and zip serve that). */
static void test_session_snapshot(void)
{
    char tmp[] = "/tmp/rms-test-exec-XXXXXX";
    char state[300], ws[300];
    if (!mkdtemp(tmp)) {
        ok(0, "mkdtemp");
        return;
    }
    snprintf(state, sizeof state, "%s/state", tmp);
    snprintf(ws, sizeof ws, "%s/workspace", tmp);
    mkdir(ws, 0755);
    struct exec_config cfg = {.state_dir = state, .python = "/usr/bin/python3", .url_prefix = "/artifacts/",
                              .isolation = EXEC_ISOLATION_AUTO,
                              /* the jail where the host has it, else the fallback */
                              .require_isolation = false, .uid_base = 800000, .uid_count = 1024};
    exec_limits_default(&cfg.limits);
    const char *code[] = {
        "import os\nd = os.environ['SCRIPT_OUTPUT']\nopen(d + '/a.txt', 'w').write('one')\n"
        "os.makedirs(d + '/sub', exist_ok=True)\nopen(d + '/sub/b.txt', 'w').write('bee')\n",
        "import os\nopen(os.environ['SCRIPT_OUTPUT'] + '/a.txt', 'w').write('second run')\n",
    };
    struct result r[2];
    for (int i = 0; i < 2; i++) {
        struct exec_spec spec;
        exec_spec_init(&spec, &cfg);
        spec.code = code[i];
        spec.code_len = strlen(code[i]);
        spec.workspace = ws;
        result_init(&r[i]);
        is_int(exec_run(&spec, NULL, &r[i]), 0, "session run %d ran", i + 1);
        is_int(r[i].status, RESULT_STATUS_OK, "session run %d ok", i + 1);
    }
    char *a1 = slurp(r[0].run_dir, "output/a.txt"), *b1 = slurp(r[0].run_dir, "output/sub/b.txt");
    char *a2 = slurp(r[1].run_dir, "output/a.txt"), *b2 = slurp(r[1].run_dir, "output/sub/b.txt");
    char *aw = slurp(ws, "output/a.txt");
    is_str(a1, "one", "run 1 keeps its own a.txt after run 2 rewrote it");
    is_str(b1, "bee", "run 1 keeps nested files");
    is_str(a2, "second run", "run 2 has its a.txt");
    ok(b2 == NULL, "run 2 lists only what it made: not sub/b.txt, which run 1 left and run 2 did not touch");
    is_str(aw, "second run", "the workspace holds the latest");
    is_int((long long)r[0].n_artifacts, 2, "run 1 lists two artifacts");
    ok(r[0].n_artifacts == 2 && r[0].artifacts[0].size == 3, "run 1's listed size is its own");
    ok(r[0].n_artifacts == 2 && r[0].artifacts[0].change == RESULT_ART_NEW && r[0].artifacts[1].change == RESULT_ART_NEW,
       "run 1's files are both new");
    ok(r[1].n_artifacts == 1 && !strcmp(r[1].artifacts[0].path, "a.txt") && r[1].artifacts[0].change == RESULT_ART_CHANGED,
       "run 2 lists one artifact, a.txt, changed");
    json_object *j = result_to_json(&r[1]), *arts, *chg;
    ok(j && json_object_object_get_ex(j, "artifacts", &arts) && json_object_array_length(arts) == 1 &&
           json_object_object_get_ex(json_object_array_get_idx(arts, 0), "change", &chg) &&
           !strcmp(json_object_get_string(chg), "changed"),
       "the result says \"change\": \"changed\"");
    json_object_put(j);
    ok(r[0].has_zip && r[1].has_zip, "both runs have a zip");
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "unzip -p %s/artifacts.zip a.txt 2>/dev/null | grep -qx one", r[0].run_dir);
    is_int(system(cmd), 0, "run 1's zip holds run 1's a.txt");
    free(a1), free(b1), free(a2), free(b2), free(aw);
    result_free(&r[0]);
    result_free(&r[1]);
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    discard(system(cmd));
}

/* A run whose process died in a cluster (a NODE-HEX id) is marked with its
 * whole id in its result.json, the node prefix included. */
static void test_orphan_node_id(void)
{
    char tmp[] = "/tmp/rms-test-exec-XXXXXX";
    if (!mkdtemp(tmp)) {
        ok(0, "mkdtemp");
        return;
    }
    char state[300], run[400];
    snprintf(state, sizeof state, "%s/state", tmp);
    is_int(ws_init_state(state), 0, "orphans: the state directory");
    const char *id = "node7-0123456789abcdef0123456789abcdef";
    ok(ws_id_valid(id), "orphans: a node-prefixed id is an id");
    snprintf(run, sizeof run, "%s/runs/%s", state, id);
    is_int(mkdir(run, 0700), 0, "orphans: a run directory without a result");
    /* Older than a run that is only starting. */
    struct timespec old[2] = {{.tv_sec = time(NULL) - 60}, {.tv_sec = time(NULL) - 60}};
    is_int(utimensat(AT_FDCWD, run, old, 0), 0, "orphans: made old");
    struct exec_config cfg = {.state_dir = state, .python = "/usr/bin/python3"};
    exec_limits_default(&cfg.limits);
    is_int(exec_mark_orphans(&cfg), 1, "orphans: one run marked");
    char *text = slurp(run, "result.json");
    json_object *o = text ? json_tokener_parse(text) : NULL, *v = NULL;
    ok(o && json_object_object_get_ex(o, "run_id", &v), "orphans: result.json has a run_id");
    is_str(v ? json_object_get_string(v) : NULL, id, "orphans: the whole node-prefixed id is recorded");
    ok(v && json_object_object_get_ex(o, "status", &v) && !strcmp(json_object_get_string(v), "sandbox_error"),
       "orphans: status sandbox_error");
    if (o)
        json_object_put(o);
    free(text);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    discard(system(cmd));
}

/* The outcome of exec_run for each way a call ends (enum exec_outcome),
 * the errno beside it as the cause, and what is made for it. */
static int stop_accepted(void *ctx)
{
    (*(int *)ctx)++;
    return -EPIPE;
}

static int count_accepted(void *ctx)
{
    (*(int *)ctx)++;
    return 0;
}

static void run_outcome(const struct exec_config *cfg, const char *code, const char *input,
                        int (*accepted)(void *ctx), enum exec_outcome want, int want_rc, const char *what)
{
    struct exec_spec spec;
    exec_spec_init(&spec, cfg);
    spec.code = code;
    spec.code_len = strlen(code);
    spec.input = input;
    spec.input_len = input ? strlen(input) : 0;
    int calls = 0;
    struct exec_sink sink = {.ctx = &calls, .accepted = accepted};
    struct result r;
    result_init(&r);
    int rc = exec_run(&spec, &sink, &r);
    is_str(exec_outcome_name(r.outcome), exec_outcome_name(want), "%s: outcome %s", what, exec_outcome_name(want));
    is_int(rc, want_rc, "%s: the errno beside it", what);
    if (want == EXEC_OUTCOME_DONE) {
        ok(r.run_id[0] && r.status == RESULT_STATUS_OK, "%s: a run, recorded, ok", what);
    } else {
        ok(!r.run_id[0] && !r.run_dir, "%s: nothing made", what);
        ok(want == EXEC_OUTCOME_STOPPED ? !r.error : r.error && r.error[0], "%s: %s", what,
           want == EXEC_OUTCOME_STOPPED ? "no error of the executor's" : "the reason in r->error");
    }
    is_int(calls, want == EXEC_OUTCOME_DONE || want == EXEC_OUTCOME_STOPPED || want == EXEC_OUTCOME_BUSY,
           "%s: accepted called %s", what, calls ? "once" : "never");
    result_free(&r);
}

static void test_outcomes(void)
{
    char tmp[] = "/tmp/rms-test-exec-XXXXXX";
    char state[300];
    if (!mkdtemp(tmp)) {
        ok(0, "mkdtemp");
        return;
    }
    snprintf(state, sizeof state, "%s/state", tmp);
    struct exec_config cfg = {.state_dir = state, .python = "/usr/bin/python3", .url_prefix = "/artifacts/",
                              .isolation = EXEC_ISOLATION_AUTO, .uid_base = 800000, .uid_count = 1024,
                              .admit = {.max_running = 1, .max_queued = 0}, .retry_after_ms = 2000};
    exec_limits_default(&cfg.limits);
    cfg.limits.input_bytes = 8;

    struct result fresh;
    result_init(&fresh);
    is_int(fresh.outcome, EXEC_OUTCOME_FAILED, "result_init: failed until a call says otherwise");
    result_free(&fresh);

    run_outcome(&cfg, "", NULL, count_accepted, EXEC_OUTCOME_REFUSED, -EINVAL, "an empty script");
    run_outcome(&cfg, "print(1)\n", "more than eight bytes", count_accepted, EXEC_OUTCOME_TOO_LARGE, -E2BIG,
                "an input past input_bytes");
    run_outcome(&cfg, "# /// script\n# dependencies = ['-e .']\n# ///\n", NULL, count_accepted,
                EXEC_OUTCOME_REFUSED, -EINVAL, "an installer option as a requirement");
    run_outcome(&cfg, "print(1)\n", NULL, stop_accepted, EXEC_OUTCOME_STOPPED, -EPIPE, "accepted stops it");
    run_outcome(&cfg, "print(1)\n", NULL, count_accepted, EXEC_OUTCOME_DONE, 0, "a script that runs");

    /* The one run slot held elsewhere, no queue: busy, turned away. */
    struct admit_ticket held = ADMIT_TICKET_INIT;
    is_int(admit_enter(state, &cfg.admit, &held), 0, "the one run slot taken");
    run_outcome(&cfg, "print(1)\n", NULL, count_accepted, EXEC_OUTCOME_BUSY, -EBUSY, "no run slot, no queue");
    admit_leave(&held);

    /* More kept free than any disk has. */
    cfg.disk_reserve_bytes = UINT64_MAX / 4;
    run_outcome(&cfg, "print(1)\n", NULL, count_accepted, EXEC_OUTCOME_LOW_DISK, -ENOSPC, "below disk_reserve");

    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf %s", tmp);
    discard(system(cmd));
}

int main(void)
{
    test_outcomes();
    test_orphan_node_id();
    test_session_snapshot();
    test_log();
    test_limits();
    test_check();
    ok(!strcmp(result_status_name(RESULT_STATUS_OUTPUT_LIMIT), "output_limit") &&
           !strcmp(result_status_name(RESULT_STATUS_WORKSPACE_LIMIT), "workspace_limit") &&
           !strcmp(result_status_name(RESULT_STATUS_SANDBOX_ERROR), "sandbox_error") &&
           !strcmp(result_status_name(RESULT_STATUS_INSTALL_FAILED), "install_failed"),
       "status names of the result contract");
    ok(!strcmp(result_env_cache_name(RESULT_ENV_NONE), "none") && !strcmp(result_env_cache_name(RESULT_ENV_HIT), "hit") &&
           !strcmp(result_env_cache_name(RESULT_ENV_BUILT), "built"),
       "env_cache names: none, hit, built");
    ok(!strcmp(exec_outcome_name(EXEC_OUTCOME_DONE), "done") && !strcmp(exec_outcome_name(EXEC_OUTCOME_BUSY), "busy") &&
           !strcmp(exec_outcome_name(EXEC_OUTCOME_FAILED), "failed") &&
           !strcmp(exec_outcome_name((enum exec_outcome)EXEC_OUTCOME_N), "failed"),
       "outcome names, and failed for a value out of range");
    return tap_done();
}
