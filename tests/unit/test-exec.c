/* test-exec.c: the ordered log and its cap, the limit table, script checks. */
#include "config.h"

#include <errno.h>

#include "exec.h"
#include "tap.h"

static void test_log(void)
{
    struct exec_log log;
    bool marker;
    exec_log_init(&log, 10);
    is_int(exec_log_append(&log, EXEC_STREAM_STDOUT, "abc", 3, &marker), 3, "stdout chunk kept");
    ok(!marker, "no marker yet");
    is_int(exec_log_append(&log, EXEC_STREAM_STDOUT, "de", 2, &marker), 2, "same stream again");
    is_int((long long)log.n_chunks, 1, "consecutive chunks of one stream merge");
    is_int(exec_log_append(&log, EXEC_STREAM_STDERR, "ERR", 3, &marker), 3, "stderr chunk kept");
    is_int((long long)log.n_chunks, 2, "a new stream starts a chunk");
    is_int(exec_log_append(&log, EXEC_STREAM_STDOUT, "fghij", 5, &marker), 2, "only what fits is kept");
    ok(marker, "the marker is added at the cut");
    ok(log.truncated, "truncated");
    is_int(exec_log_append(&log, EXEC_STREAM_STDOUT, "more", 4, &marker), 0, "nothing after the cut");
    ok(!marker, "the marker comes once");
    is_int((long long)log.dropped, 7, "dropped bytes are counted");
    is_int((long long)log.n_chunks, 4, "stdout, stderr, stdout, system");
    ok(log.chunks[0].stream == EXEC_STREAM_STDOUT && log.chunks[1].stream == EXEC_STREAM_STDERR &&
           log.chunks[2].stream == EXEC_STREAM_STDOUT && log.chunks[3].stream == EXEC_STREAM_SYSTEM,
       "streams in order");
    ok(!strncmp(log.buf.data, "abcdeERRfg\n[runmyscript] log truncated", 38), "the text in order with the marker");
    is_int(exec_log_append(&log, EXEC_STREAM_SYSTEM, "[sys]\n", 6, &marker), 6, "system lines pass the cap");
    exec_log_free(&log);
}

static void test_limits(void)
{
    struct exec_limits l;
    exec_limits_default(&l);
    is_int(l.wall_ms, 60000, "timeout defaults to 60 s");
    is_int(l.install_ms, 300000, "install_time defaults to 300 s");
    is_int((long long)l.log_bytes, 1 << 20, "log_bytes defaults to 1 MiB");
    const char *keys[] = {"timeout", "cpu_time", "memory", "file_size", "open_files", "processes",
                          "log_bytes", "output_bytes", "output_files", "kill_grace", "tmp_bytes", "tmp_files",
                          "code_bytes", "input_bytes", "install_time"};
    int found = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const struct exec_limit_def *d = exec_limit_find(keys[i]);
        if (d && d->breach && *d->breach && exec_limit_get(&l, d) == d->dflt && d->dflt >= d->min &&
            d->dflt <= d->max)
            found++;
        else
            diag("limit %s: missing or inconsistent", keys[i]);
    }
    is_int(found, (long long)(sizeof keys / sizeof keys[0]), "every limit has a row, a default in range, a breach");
    is_int((long long)exec_limit_defs_n, (long long)(sizeof keys / sizeof keys[0]), "and no other rows");
    const struct exec_limit_def *d = exec_limit_find("memory");
    exec_limit_set(&l, d, 12345);
    is_int((long long)l.memory, 12345, "exec_limit_set writes the field");
    ok(exec_limit_find("nope") == NULL, "unknown limit");
}

static void test_check(void)
{
    struct exec_limits l;
    const char *why = NULL;
    exec_limits_default(&l);
    is_int(exec_check_code("print(1)\n", 9, &l, &why), 0, "a script");
    is_int(exec_check_code("", 0, &l, &why), -EINVAL, "empty");
    is_str(why, "the script is empty", "says empty");
    is_int(exec_check_code("print('\xff')", 10, &l, &why), -EINVAL, "not UTF-8");
    is_str(why, "the script is not valid UTF-8", "says not UTF-8");
    is_int(exec_check_code("a\0b", 3, &l, &why), -EINVAL, "NUL");
    l.code_bytes = 4;
    is_int(exec_check_code("print(1)", 8, &l, &why), -E2BIG, "over code_bytes");
    ok(strstr(why, "code_bytes") != NULL, "names code_bytes");
}

int main(void)
{
    test_log();
    test_limits();
    test_check();
    ok(!strcmp(exec_status_name(EXEC_STATUS_OUTPUT_LIMIT), "output_limit") &&
           !strcmp(exec_status_name(EXEC_STATUS_SANDBOX_ERROR), "sandbox_error") &&
           !strcmp(exec_status_name(EXEC_STATUS_INSTALL_FAILED), "install_failed"),
       "status names of DESIGN.md");
    ok(!strcmp(exec_env_cache_name(EXEC_ENV_NONE), "none") && !strcmp(exec_env_cache_name(EXEC_ENV_HIT), "hit") &&
           !strcmp(exec_env_cache_name(EXEC_ENV_BUILT), "built"),
       "env_cache names: none, hit, built");
    return tap_done();
}
