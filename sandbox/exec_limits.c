/* exec_limits.c: the table of every limit a run and a transfer have: a
 * configuration key each (common/key.h: key, unit, default, range, what
 * crossing it does), and the code that reads and writes a struct of limits
 * through its rows. The configuration reads, prints and documents these
 * rows as it does its own (cfg/cfg_keys.c). */
#include "config.h"

#include "exec_limits.h"

#include "util.h"

#include <stddef.h>
#include <string.h>

/* A row of a limit: LIMITS is the struct of limits its field is in. */
#define LIMIT_DOC(k, t, f, d, lo, hi, dd, text)                                                                     \
    {.key = k, .type = t, .flags = KEY_F_LIMIT, .offset = offsetof(LIMITS, f), .size = sizeof(((LIMITS *)0)->f), \
     .dflt = d, .min = lo, .max = hi, .doc_default = dd, .doc = text}
#define LIMIT(k, t, f, d, lo, hi, text) LIMIT_DOC(k, t, f, d, lo, hi, NULL, text)

/* ------------------------------------------------------------ run limits */

#define LIMITS struct exec_limits

const struct key_def exec_limit_defs[] = {
    LIMIT("timeout", KEY_DURATION, wall_ms, 60000, 100, 24ull * 3600 * 1000,
          "status `timeout`, limit `wall_time`: SIGTERM to every process of the run, SIGKILL after "
          "`kill_grace`"),
    LIMIT("cpu_time", KEY_DURATION, cpu_ms, 300000, 1000, 24ull * 3600 * 1000,
          "status `timeout`, limit `cpu_time`: SIGXCPU, then SIGKILL a second later (per process in the "
          "rlimits fallback)"),
    LIMIT("memory", KEY_SIZE, memory, 2 * GIB, 64 * MIB, 1024 * GIB,
          "status `memory`: the whole run's memory; the cgroup's OOM killer ends the run, or where no "
          "cgroup holds it the executor's watch kills it when its processes together pass it (summed every "
          "100 ms, [Isolation](isolation.md#memory-mode-by-mode)); a single process past it gets "
          "`MemoryError` (RLIMIT_AS)"),
    LIMIT("file_size", KEY_SIZE, file_size, 1 * GIB, 1 * MIB, 1024 * GIB,
          "status `output_limit`, limit `file_size`: writes past it fail with EFBIG"),
    LIMIT("open_files", KEY_COUNT, open_files, 1024, 32, 1048576,
          "the script gets EMFILE; the status is the script's own"),
    LIMIT("processes", KEY_COUNT, processes, 256, 8, 1000000,
          "the script gets EAGAIN from `fork`; the status is the script's own (`limit` says `processes` "
          "when the pids cgroup saw it). In the fallback, RLIMIT_NPROC binds no root process"),
    LIMIT("log_bytes", KEY_SIZE, log_bytes, 1 * MIB, 1 * KIB, 1 * GIB,
          "status `output_limit`, limit `log_bytes`: the log is cut with a `[runmyscript] log truncated` "
          "marker, `logs_truncated` is true, and the run is stopped at once (SIGTERM, SIGKILL after "
          "`kill_grace`), so that a runaway `print` loop ends there instead of at its `timeout`; what it "
          "wrote to `SCRIPT_OUTPUT` before is collected as usual"),
    LIMIT("output_bytes", KEY_SIZE, output_bytes, 1 * GIB, 1 * KIB, 1024 * GIB,
          "status `output_limit`: checked every 0.5 s while the script runs (the run is stopped) and after;"
          " files past the limit, in path order, are not listed (and, for a run without a session, removed "
          "with the rest of what `output/` holds but its artifacts)"),
    LIMIT("output_files", KEY_COUNT, output_files, 10000, 1, 10000000,
          "the same, for the number of files"),
    LIMIT("kill_grace", KEY_DURATION, kill_grace_ms, 2000, 0, 60000,
          "the delay between SIGTERM and SIGKILL"),
    LIMIT("tmp_bytes", KEY_SIZE, tmp_bytes, 256 * MIB, 1 * MIB, 64 * GIB,
          "size of the private `/tmp` and of `/dev/shm` (each): writes fail with ENOSPC; the status is the "
          "script's own. In the rlimits fallback, where `HOME` and `TMPDIR` are the run directory's `home/`"
          " and `tmp/`, the two together are held to it the way `workspace_bytes` is held (status "
          "`workspace_limit`, limit `tmp_bytes`; they are removed after every run)"),
    LIMIT("tmp_files", KEY_COUNT, tmp_files, 65536, 64, 100000000,
          "inodes of each: creating files fails with ENOSPC; in the fallback, status `workspace_limit`, "
          "limit `tmp_files`, for `home/` and `tmp/`"),
    LIMIT("code_bytes", KEY_SIZE, code_bytes, 1 * MIB, 1 * KIB, 256 * MIB,
          "the request is refused before anything runs (CLI exit 65)"),
    LIMIT("input_bytes", KEY_SIZE, input_bytes, 64 * MIB, 0, 16 * GIB,
          "the same, for the input (0: no limit)"),
    LIMIT("install_time", KEY_DURATION, install_ms, 300000, 1000, 24ull * 3600 * 1000,
          "status `install_failed`, limit `install_time`: the installer is killed, nothing is published, "
          "the script does not run"),
    /* Above output_bytes and output_files: output/ is a part of the
     * workspace, so the smaller of the two bounds it. */
    LIMIT("workspace_bytes", KEY_SIZE, workspace_bytes, 4 * GIB, 1 * MIB, 64 * 1024 * GIB,
          "status `workspace_limit`: the disk of everything the script can write, `output/` included: the "
          "run directory of a run alone (its `script.py` and `input` too), a session's workspace (its "
          "`mounts/` and the files earlier runs left too), and in the fallback the run directory with its "
          "`home/` and `tmp/`. Every file, directory and link counts, with the larger of its size and its "
          "blocks. Checked every 0.5 s while the script runs (the run is stopped: SIGTERM, SIGKILL after "
          "`kill_grace`) and when it ends. A session run that passes it loses every file it wrote (a ctime "
          "after its start), its artifacts included, so that the session is back under the bound. A "
          "`mount_file` (or `--mount`, `fetch --session`) that would take the workspace past it is refused."
          " `output/` being part of the workspace, the smaller of `output_bytes` and this bounds it"),
    LIMIT("workspace_files", KEY_COUNT, workspace_files, 50000, 16, 100000000,
          "the same, for the number of names (a file with several names counts once per name), however deep"
          " the tree nests"),
    LIMIT("value_bytes", KEY_SIZE, value_bytes, 64 * KIB, 1 * KIB, 64 * MIB,
          "the text of the last expression's value (`value` in the result) is cut there with a marker and "
          "`value_truncated` is true; the status is the script's own"),
    LIMIT("net_bytes", KEY_SIZE, net_bytes, 1 * GIB, 1 * KIB, 1024 * GIB,
          "with `script_network = on`: the bytes of every connection of the run, in and out together; past "
          "it the run's network stops (its connections are reset, new ones refused) but the run goes on: the "
          "status is the script's own, `limit` and `network.limit` say `net_bytes`"),
    LIMIT("net_connections", KEY_COUNT, net_connections, 1000, 1, 1000000,
          "the same for the connections a run opens: the one past it is refused (`network.refused` says "
          "`limit`), `limit` and `network.limit` say `net_connections`"),
};
const size_t exec_limit_defs_n = ARRAY_SIZE(exec_limit_defs);

uint64_t exec_limit_get(const struct exec_limits *l, const struct key_def *d)
{
    return key_get(l, d);
}

void exec_limit_set(struct exec_limits *l, const struct key_def *d, uint64_t v)
{
    key_put(l, d, v);
}

void exec_limits_default(struct exec_limits *l)
{
    memset(l, 0, sizeof *l);
    key_defaults(l, exec_limit_defs, exec_limit_defs_n);
}

const struct key_def *exec_limit_find(const char *key)
{
    return key_find(exec_limit_defs, exec_limit_defs_n, key);
}

/* ------------------------------------------------------- transfer limits */

#undef LIMITS
#define LIMITS struct fetch_limits

const struct key_def fetch_limit_defs[] = {
    LIMIT("fetch_bytes", KEY_SIZE, fetch_bytes, 100 * MIB, 1 * KIB, 64 * GIB,
          "the download fails, before the body when `Content-Length` says so, else mid-stream; nothing is "
          "left"),
    LIMIT_DOC("upload_bytes", KEY_SIZE, upload_bytes, 20 * MIB, 1 * KIB, 64 * GIB, "20 MiB (PRIMS's cap)",
              "the upload is refused before anything is sent (the read side stops at the cap should the file "
          "grow)"),
    LIMIT("fetch_connect_timeout", KEY_DURATION, connect_timeout_ms, 10000, 100, 600000,
          "the transfer fails: no connection within this time"),
    LIMIT("fetch_timeout", KEY_DURATION, timeout_ms, 120000, 100, 24ull * 3600 * 1000,
          "the transfer fails when it takes longer, redirects included"),
    LIMIT("fetch_redirects", KEY_COUNT, redirects, 5, 0, 50,
          "the transfer fails at the redirect past it (0: redirects are errors)"),
    LIMIT("mount_files", KEY_COUNT, mount_files, 1000, 1, 10000,
          "mounting a new path into a session that has this many is refused; a `run_code` with more `files`"
          " entries is refused before anything is fetched"),
    LIMIT("mount_bytes", KEY_SIZE, mount_bytes, 1 * GIB, 1 * KIB, 1024 * GIB,
          "a mount that would take a session's mounted files past it fails (mid-stream if need be)"),
};
const size_t fetch_limit_defs_n = ARRAY_SIZE(fetch_limit_defs);

uint64_t fetch_limit_get(const struct fetch_limits *l, const struct key_def *d)
{
    return key_get(l, d);
}

void fetch_limit_set(struct fetch_limits *l, const struct key_def *d, uint64_t v)
{
    key_put(l, d, v);
}

void fetch_limits_default(struct fetch_limits *l)
{
    memset(l, 0, sizeof *l);
    key_defaults(l, fetch_limit_defs, fetch_limit_defs_n);
}

const struct key_def *fetch_limit_find(const char *key)
{
    return key_find(fetch_limit_defs, fetch_limit_defs_n, key);
}
