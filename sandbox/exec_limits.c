/* exec_limits.c: the table of every limit a run and a transfer have (key,
 * unit, default, range, what a breach does), and the code that reads and
 * writes a struct of limits through its rows. The configuration, the
 * documentation's tables and the tests are checked against these rows. */
#include "config.h"

#include "exec_limits.h"

#include "util.h"

#include <stddef.h>
#include <string.h>

/* ------------------------------------------------------------ run limits */

#define LIMIT(k, u, f, d, lo, hi, b) {k, u, offsetof(struct exec_limits, f), d, lo, hi, b}

const struct exec_limit_def exec_limit_defs[] = {
    LIMIT("timeout", EXEC_UNIT_MS, wall_ms, 60000, 100, 24ull * 3600 * 1000,
          "status timeout (limit wall_time): SIGTERM to every process of the run, SIGKILL after kill_grace"),
    LIMIT("cpu_time", EXEC_UNIT_MS, cpu_ms, 300000, 1000, 24ull * 3600 * 1000,
          "status timeout (limit cpu_time): the kernel sends SIGXCPU, then SIGKILL a second later"),
    LIMIT("memory", EXEC_UNIT_BYTES, memory, 2 * GIB, 64 * MIB, 1024 * GIB,
          "status memory: allocations fail (MemoryError) or the run is killed"),
    LIMIT("file_size", EXEC_UNIT_BYTES, file_size, 1 * GIB, 1 * MIB, 1024 * GIB,
          "status output_limit (limit file_size): writes past it fail with EFBIG"),
    LIMIT("open_files", EXEC_UNIT_COUNT, open_files, 1024, 32, 1048576,
          "the script gets EMFILE; the status is the script's own"),
    LIMIT("processes", EXEC_UNIT_COUNT, processes, 256, 8, 1000000,
          "the script gets EAGAIN from fork; the status is the script's own"),
    LIMIT("log_bytes", EXEC_UNIT_BYTES, log_bytes, 1 * MIB, 1 * KIB, 1 * GIB,
          "status output_limit (limit log_bytes): the log is cut with a marker, logs_truncated is true, the run is stopped"),
    LIMIT("output_bytes", EXEC_UNIT_BYTES, output_bytes, 1 * GIB, 1 * KIB, 1024 * GIB,
          "status output_limit (limit output_bytes): the run is stopped, files past it are not listed"),
    LIMIT("output_files", EXEC_UNIT_COUNT, output_files, 10000, 1, 10000000,
          "status output_limit (limit output_files): the run is stopped, files past it are not listed"),
    LIMIT("kill_grace", EXEC_UNIT_MS, kill_grace_ms, 2000, 0, 60000,
          "time between SIGTERM and SIGKILL when a run is stopped"),
    LIMIT("tmp_bytes", EXEC_UNIT_BYTES, tmp_bytes, 256 * MIB, 1 * MIB, 64 * GIB,
          "writes to /tmp or /dev/shm fail with ENOSPC; the status is the script's own (namespaces mode); "
          "in the fallback, status workspace_limit (limit tmp_bytes) for the run directory's tmp/ and home/"),
    LIMIT("tmp_files", EXEC_UNIT_COUNT, tmp_files, 65536, 64, 100000000,
          "creating files in /tmp or /dev/shm fails with ENOSPC; the status is the script's own; "
          "in the fallback, status workspace_limit (limit tmp_files)"),
    LIMIT("code_bytes", EXEC_UNIT_BYTES, code_bytes, 1 * MIB, 1 * KIB, 256 * MIB,
          "the request is refused before anything runs (CLI exit 65, HTTP 413)"),
    LIMIT("input_bytes", EXEC_UNIT_BYTES, input_bytes, 64 * MIB, 0, 16 * GIB,
          "the request is refused before anything runs (CLI exit 65, HTTP 413)"),
    LIMIT("install_time", EXEC_UNIT_MS, install_ms, 300000, 1000, 24ull * 3600 * 1000,
          "status install_failed (limit install_time): the installer is killed, nothing is published, "
          "the script does not run"),
    /* Above output_bytes and output_files: output/ is a part of the
     * workspace, so the smaller of the two bounds it. */
    LIMIT("workspace_bytes", EXEC_UNIT_BYTES, workspace_bytes, 4 * GIB, 1 * MIB, 64 * 1024 * GIB,
          "status workspace_limit (limit workspace_bytes): the run is stopped, what it wrote past the bound is removed"),
    LIMIT("workspace_files", EXEC_UNIT_COUNT, workspace_files, 50000, 16, 100000000,
          "status workspace_limit (limit workspace_files): the run is stopped, what it wrote past the bound is removed"),
    LIMIT("value_bytes", EXEC_UNIT_BYTES, value_bytes, 64 * KIB, 1 * KIB, 64 * MIB,
          "the value of the last expression is cut with a marker and value_truncated is true; the status is the script's own"),
};
const size_t exec_limit_defs_n = ARRAY_SIZE(exec_limit_defs);

/* The table machinery, for any struct of limits described by rows (the
 * fetch limits use it too). */
static uint64_t exec_limit_field_get(const void *limits, const struct exec_limit_def *d)
{
    const char *base = (const char *)limits + d->offset;
    if (d->unit == EXEC_UNIT_MS) {
        int64_t v;
        memcpy(&v, base, sizeof v);
        return (uint64_t)v;
    }
    uint64_t v;
    memcpy(&v, base, sizeof v);
    return v;
}

static void exec_limit_field_set(void *limits, const struct exec_limit_def *d, uint64_t v)
{
    char *base = (char *)limits + d->offset;
    if (d->unit == EXEC_UNIT_MS) {
        int64_t s = (int64_t)v;
        memcpy(base, &s, sizeof s);
    } else {
        memcpy(base, &v, sizeof v);
    }
}

static void exec_limit_fields_default(void *limits, size_t size, const struct exec_limit_def *defs, size_t n)
{
    memset(limits, 0, size);
    for (size_t i = 0; i < n; i++)
        exec_limit_field_set(limits, &defs[i], defs[i].dflt);
}

static const struct exec_limit_def *exec_limit_row(const struct exec_limit_def *defs, size_t n, const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(defs[i].key, key))
            return &defs[i];
    return NULL;
}

uint64_t exec_limit_get(const struct exec_limits *l, const struct exec_limit_def *d)
{
    return exec_limit_field_get(l, d);
}

void exec_limit_set(struct exec_limits *l, const struct exec_limit_def *d, uint64_t v)
{
    exec_limit_field_set(l, d, v);
}

void exec_limits_default(struct exec_limits *l)
{
    exec_limit_fields_default(l, sizeof *l, exec_limit_defs, exec_limit_defs_n);
}

const struct exec_limit_def *exec_limit_find(const char *key)
{
    return exec_limit_row(exec_limit_defs, exec_limit_defs_n, key);
}

/* ------------------------------------------------------- transfer limits */

#undef LIMIT
#define LIMIT(k, u, f, d, lo, hi, b) {k, u, offsetof(struct fetch_limits, f), d, lo, hi, b}

const struct exec_limit_def fetch_limit_defs[] = {
    LIMIT("fetch_bytes", EXEC_UNIT_BYTES, fetch_bytes, 100 * MIB, 1 * KIB, 64 * GIB,
          "the download fails (before the body when Content-Length says so, else mid-stream) and leaves nothing"),
    LIMIT("upload_bytes", EXEC_UNIT_BYTES, upload_bytes, 20 * MIB, 1 * KIB, 64 * GIB,
          "the upload is refused before anything is sent (and stops at the cap should the file grow)"),
    LIMIT("fetch_connect_timeout", EXEC_UNIT_MS, connect_timeout_ms, 10000, 100, 600000,
          "the transfer fails: no connection within this time"),
    LIMIT("fetch_timeout", EXEC_UNIT_MS, timeout_ms, 120000, 100, 24ull * 3600 * 1000,
          "the transfer fails when it takes longer, redirects included; nothing is left"),
    LIMIT("fetch_redirects", EXEC_UNIT_COUNT, redirects, 5, 0, 50,
          "the transfer fails at the redirect past it"),
    LIMIT("mount_files", EXEC_UNIT_COUNT, mount_files, 1000, 1, 10000,
          "mount_file into a new path of the session is refused"),
    LIMIT("mount_bytes", EXEC_UNIT_BYTES, mount_bytes, 1 * GIB, 1 * KIB, 1024 * GIB,
          "the mount fails (mid-stream if need be) when the session's mounted files would pass it"),
};
const size_t fetch_limit_defs_n = ARRAY_SIZE(fetch_limit_defs);

uint64_t fetch_limit_get(const struct fetch_limits *l, const struct exec_limit_def *d)
{
    return exec_limit_field_get(l, d);
}

void fetch_limit_set(struct fetch_limits *l, const struct exec_limit_def *d, uint64_t v)
{
    exec_limit_field_set(l, d, v);
}

void fetch_limits_default(struct fetch_limits *l)
{
    exec_limit_fields_default(l, sizeof *l, fetch_limit_defs, fetch_limit_defs_n);
}

const struct exec_limit_def *fetch_limit_find(const char *key)
{
    return exec_limit_row(fetch_limit_defs, fetch_limit_defs_n, key);
}
