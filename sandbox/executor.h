/* executor.h: the executor's one public header, and all a front door (MCP,
 * the web page in fcgi/, the CLI in cli/) may include from sandbox/. exec_run() is
 * the one entry point that runs a script: it makes the run's workspace,
 * prepares the Python environment, runs the script under its limits while
 * streaming output to a sink, collects the artifacts and the zip, and fills
 * a result. A section per concept: the workspace (ids and safe paths of
 * the state directory), the configuration, the transfers (mount_file,
 * persist_artifact, input from a URL), the results (and as JSON), a run
 * (exec_run, cancelling it, checking a call before anything is made for
 * it), kernels (exec_kernel_cell: a live Python per workspace), probing the host,
 * and the warm pool. No HTTP, JSON-RPC or FastCGI
 * in here; the rest of sandbox/ is internal (each module's own header). */
#ifndef RMS_EXECUTOR_H
#define RMS_EXECUTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include <json-c/json.h>

#include "exec_limits.h"
#include "util.h"

/* ----------- the workspace: ids, the state directory, safe paths in it */

#define WS_ID_LEN 32  /* hex digits of a 128-bit id */
#define WS_NODE_MAX 16 /* bytes of a node id (config node_id) */
#define WS_ID_MAX (WS_NODE_MAX + 1 + WS_ID_LEN) /* NODE-HEX, the longest id */

/* Run and session ids are 128 random bits as WS_ID_LEN lower-case hex
 * digits, prefixed with "NODE-" when the configuration names the node
 * (node_id), so that a front nginx can tell from the id alone which
 * backend holds the files (nginx/cluster.conf.in). */

/* True when s is a node id: 1 to WS_NODE_MAX of [a-z0-9]. */
bool ws_node_valid(const char *s);

/* Fills out (WS_ID_MAX + 1 bytes) with a new id: 128 random bits as
 * lower-case hex, after "NODE-" when node is not NULL (node must be
 * ws_node_valid; -EINVAL otherwise). 0 or -errno from getrandom. */
int ws_new_id(const char *node, char out[WS_ID_MAX + 1]) must_check;
/* True when s is exactly an id: WS_ID_LEN lower-case hex digits, or a
 * node id, '-', and those. Nothing else (no '/', no '.', no upper case). */
bool ws_id_valid(const char *s);
/* The length of the id at the start of s, up to the first '/' or '.'
 * (the artifact routes: RUNID/PATH, RUNID.zip), or 0 when that is no id. */
size_t ws_id_prefix(const char *s);

/* Creates STATE and its sub-directories when missing. 0 or -errno. */
int ws_init_state(const char *state_dir) must_check;

/* Whether this process can use STATE as ws_init_state and a run would:
 * STATE and each of its sub-directories that exists writable and
 * searchable by our effective uid, on a file system mounted read-write,
 * or, where STATE does not exist yet, its nearest ancestor such that it
 * can be made. Makes and changes nothing (a health check may call it
 * often). 0, or -errno with the reason (naming the directory and the uid)
 * in err. */
int ws_state_check(const char *state_dir, char *err, size_t errlen) must_check;

/* Path of the run directory for an id (caller frees), or NULL (ENOMEM, or
 * EINVAL for an id that is not one of ours). */
char *ws_run_path(const char *state_dir, const char *id);

/* True when rel is a safe relative path for use under a directory a client
 * owns: non-empty, at most 1024 bytes, not absolute, no "." or ".."
 * components, no empty components. (Other bytes are the file system's
 * business; whoever prints a path escapes it.) */
bool ws_rel_path_ok(const char *rel);

/* Opens rel beneath dirfd without following any symlink on the way
 * (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it, a
 * component walk with O_NOFOLLOW otherwise). flags as for openat; O_CREAT
 * is allowed for the last component only. Returns an fd or -errno (-ELOOP
 * for a symlink, -EXDEV for an escape, -EINVAL for an unsafe path). */
int ws_open_beneath(int dirfd, const char *rel, int flags, mode_t mode) must_check;

/* Removes run directories older than ttl_ms. It does the scan at most once a
 * minute per state directory (a stamp file), so callers may call it on every
 * run. Returns the number removed or -errno (workspace_runs.c). */
int ws_reap_runs(const char *state_dir, int64_t ttl_ms);
/* Removes the run directory of run_id and takes it out of the run records'
 * ledger (a session's runs when the session goes). 0, -ENOENT, -EINVAL
 * for an id that is not one, or -errno. */
int ws_run_remove(const char *state_dir, const char *run_id) must_check;
/* What the run records hold in all, as the ledger says (runs_bytes,
 * runs_files): 0 with the bytes and inodes, or -errno. */
int ws_runs_usage(const char *state_dir, uint64_t *bytes, uint64_t *files) must_check;

/* The file system of the state directory against disk_reserve. */
struct exec_config;
struct ws_disk {
    uint64_t total_bytes, free_bytes, reserve_bytes;
    uint64_t total_inodes, free_inodes, reserve_inodes;
    bool low; /* free space or free inodes below the reserve */
};
/* Fills d; -ENOSPC with a sentence for the client in err (no path in it)
 * when the space or the inodes left are below disk_reserve: new runs are
 * refused (exec_run does it before anything is made). 0 otherwise, also
 * when the file system cannot be asked. */
int ws_disk_check(const struct exec_config *cfg, struct ws_disk *d, char *err, size_t errlen);

/* ----------------- the configuration: what a server gives all its runs */

#define EXEC_MAX_SLOTS 4096   /* ceiling of max_running and of max_queued */
struct exec_admit_config {
    uint32_t max_running;   /* max_concurrent_runs; 0: the number of online CPUs */
    uint32_t max_queued;    /* max_queued_runs; 0: no queue, busy at once */
    int64_t queue_wait_ms;  /* queue_wait: the longest a run waits for a slot */
};

/* max_running with 0 resolved to the number of online CPUs. */
uint32_t exec_admit_max_running(const struct exec_admit_config *c);

enum exec_installer {
    EXEC_INSTALLER_AUTO, /* uv when it is on PATH, else pip */
    EXEC_INSTALLER_UV,
    EXEC_INSTALLER_PIP,
};

/* Server-wide settings (config keys of the same names). Strings are
 * borrowed for the life of the struct. */
struct exec_deps_config {
    const char *data_dir;        /* data_dir: its import-names.tsv replaces the built-in map; NULL or "": built-in */
    enum exec_installer installer;
    const char *index_url;       /* NULL: the installer's default; "none": no index */
    const char *extra_index_url; /* NULL, or URLs separated by spaces */
    const char *find_links;      /* NULL, or directories/URLs separated by spaces */
    bool only_binary;            /* wheels only: no setup.py runs at install time */
    bool requirement_urls;       /* allow `name @ URL` direct references */
    uint64_t cache_bytes;        /* env_cache_size: 0 means no cap */
    bool package_store;          /* package_store: environments assembled from STATE/store (pip only) */
    uint64_t store_bytes;        /* store_bytes: the store and the environments together; 0: no cap */
};

enum exec_isolation {
    EXEC_ISOLATION_AUTO,       /* namespaces where the host has them, else rlimits */
    EXEC_ISOLATION_NAMESPACES, /* refuse to run without them */
    EXEC_ISOLATION_RLIMITS,    /* force the fallback (tests, shared hosts) */
};

/* The fallback's Landlock and seccomp filter (config landlock). */
enum exec_landlock {
    EXEC_LANDLOCK_AUTO, /* both where the kernel has them */
    EXEC_LANDLOCK_ON,   /* refuse a fallback run where the kernel has no Landlock */
    EXEC_LANDLOCK_OFF,  /* neither: the plain rlimits fallback */
};

/* The warm pool (warm_* config keys): a zygote per environment that runs
 * are forked from (doc/performance.md, doc/isolation.md). */
struct exec_warm {
    bool on;                    /* warm: off makes every run cold */
    uint32_t envs;              /* warm_envs: environments kept warm at once */
    int64_t idle_ms;            /* warm_idle: a zygote unused this long goes */
    uint64_t memory;            /* warm_memory: what the zygotes may hold together; 0: no cap */
    uint32_t runs;              /* warm_runs: a zygote is replaced after this many runs; 0: never */
    int64_t lifetime_ms;        /* warm_lifetime: ... or after this long; 0: never */
    const char *modules;        /* warm_modules: imported in every zygote besides what runs import */
    uint32_t spares;            /* warm_spares: runs' inits (their namespaces, /proc, /tmp) a busy zygote
                                 * makes ahead, 0 to 8; 0: each run's is made when it comes */
    int64_t wait_ms;            /* warm_wait: a run waits this long for the pool's answer and the
                                 * zygote's fork, then starts cold */
};

/* Kernels (the kernel_* and max_kernels config keys): a live Python per
 * workspace that keeps its names from one cell to the next (exec_kernel_cell).
 * A kernel outlives the request that started it, so only a server whose
 * processes outlive their requests has them: `runmyscript serve` sets on;
 * the CLI and CGI leave it off, and exec_kernel_cell then refuses with a reason
 * that says so. */
struct exec_kernels {
    bool on;                    /* kernels may start here (serve's workers set it) */
    /* The process whose end ends every kernel: serve's supervisor. 0: the
     * caller's parent (a worker's parent is the supervisor). A caller that
     * is no worker (an MCP task's detached process, whose parent is init)
     * must set it: with no parent but init, exec_kernel_cell refuses to start a
     * kernel (it would outlive the server). */
    pid_t server;
    int64_t idle_ms;            /* kernel_idle: a kernel without a cell this long is stopped */
    uint32_t max;               /* max_kernels: kernels live at once; the least recently used idle one
                                 * makes room for a new one */
    uint64_t memory;            /* kernel_memory: what all kernels may hold together (their cgroups or
                                 * the memory watch); past it idle ones are stopped, least recently used
                                 * first; 0: no budget */
    int64_t grace_ms;           /* kernel_grace: how long an interrupted cell may go on before its kernel
                                 * is killed */
};

/* Server-wide settings exec_run() needs; the front door fills it from the
 * configuration file. All strings are borrowed for the life of the struct. */
struct exec_config {
    const char *state_dir;      /* absolute: STATE in doc/architecture.md */
    const char *python;         /* interpreter scripts run with */
    const char *url_prefix;     /* "/artifacts/" for result URLs; NULL: no URLs */
    const char *node_id;        /* run ids are NODE-HEX (a cluster); NULL: HEX */
    enum exec_isolation isolation;
    bool require_isolation;     /* refuse to run without the namespaces */
    enum exec_landlock landlock;
    bool script_network;
    uint32_t uid_base, uid_count; /* host uids for runs when we are root */
    struct exec_limits limits;  /* defaults for a call */
    int64_t run_ttl_ms;         /* run directories older than this are reaped */
    uint64_t runs_bytes;        /* runs_bytes: run records in all, bytes; 0: no cap */
    uint64_t runs_files;        /* runs_files: ... and inodes; 0: no cap */
    uint64_t disk_reserve_bytes; /* disk_reserve: new runs are refused below this free space, */
    uint32_t disk_reserve_pct;  /* or below this share of the state_dir's file system (space and inodes) */
    struct exec_deps_config deps;    /* installer, index, import map, env cache */
    bool auto_deps;             /* default of exec_spec.auto_deps */
    struct exec_admit_config admit;  /* run slots and the queue (admit.h) */
    int64_t retry_after_ms;     /* retry_after: what a busy answer tells the client */
    struct exec_warm warm;      /* the warm pool */
    struct exec_kernels kernels; /* exec_kernel_cell's kernels */
};

/* Checks the data a run reads from the configuration: with data_dir set
 * (not NULL or empty), data_dir/import-names.tsv must be there, readable
 * and well formed. 0, or -errno with a one-line reason in err (a front door
 * refuses to start on it: a configuration error, not a failed run). */
int exec_check_data(const char *data_dir, char *err, size_t errlen) must_check;

/* ----------- transfers: mount_file, persist_artifact, input from a URL */

#define FETCH_ERR_MAX 512          /* a good size for the err buffers below */

/* The parsed fetch_allow: addresses, CIDR ranges, each with an optional
 * port. */
struct fetch_allow_entry {
    int family;                /* AF_INET or AF_INET6 */
    unsigned char addr[16];    /* network byte order; 4 bytes for AF_INET */
    unsigned prefix;           /* bits that must match */
    uint16_t port;             /* 0: any port */
};
struct fetch_allow {
    struct fetch_allow_entry *v; /* owned (fetch_allow_free) */
    size_t n;
};
/* Parses "127.0.0.1, 10.0.0.0/8 192.168.1.5:8080 [::1]:8443 fd00::/8"
 * (entries separated by commas and/or white space; IPv6 with a port in
 * brackets; no host names) into a (zeroed or freed) a. 0, or -EINVAL /
 * -E2BIG (more than FETCH_ALLOW_MAX) with a one-line reason naming the
 * entry in err; a is left empty then. */
int fetch_allow_parse(const char *text, struct fetch_allow *a, char *err, size_t errlen) must_check;
void fetch_allow_free(struct fetch_allow *a);

/* Checks a URL before anything is sent: at most FETCH_URL_MAX bytes, one
 * that libcurl parses, scheme http or https, a host. 0 or -EINVAL with a
 * one-line reason in err (the URL in it redacted). Needs libcurl (it loads
 * it): -ENOSYS when it cannot be loaded. */
int fetch_url_check(const char *url, char *err, size_t errlen) must_check;

/* Writes url into out (outlen bytes, truncated with "...") without what may
 * be a secret: the user and password, the query and the fragment; bytes
 * outside printable ASCII are %-escaped. For error messages and logs. */
void fetch_url_redact(const char *url, char *out, size_t outlen);

/* Server-wide settings of the fetch module; the front door fills it from
 * the configuration. allow is borrowed for the life of the struct. */
struct fetch_config {
    struct fetch_limits limits;
    const struct fetch_allow *allow;  /* fetch_allow; NULL: nothing allowlisted */
    const char *user_agent;           /* NULL: "runmyscript/VERSION" */
    /* Called on the caller's thread while a transfer runs (NULL: never),
     * at least once a second and whenever bytes move: done is the bytes
     * received (a download) or sent (an upload) so far, total what the
     * server announced or the file's size (0: unknown). Returning true
     * stops the transfer: it fails with -ECANCELED and leaves no file. */
    bool (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;               /* borrowed */
    /* The bound of a session's workspace (the run limits workspace_bytes
     * and workspace_files; 0: none): fetch_mount refuses a file that would
     * take the workspace past it. */
    uint64_t workspace_bytes, workspace_files;
};
void fetch_config_init(struct fetch_config *c);

/* What a download produced. */
struct fetch_file {
    uint64_t bytes;
    char sha256[65];       /* lower-case hex, computed while streaming */
    const char *mime;      /* static: ws_mime() of the first bytes and the name */
    long http_status;      /* the final response's status; on failure too (0: none came) */
};

/* The one outcome of a transfer that is neither success nor a negative
 * errno: the server answered with an HTTP error status (>= 400); the
 * status is in fetch_file.http_status or fetch_upload_result.status, and
 * in err. Its value is below every errno (Linux's end at 4095), so a
 * switch on the return code tells it apart from them. */
enum fetch_outcome {
    FETCH_E_HTTP = -4096 - 1,
};
/* A short name of a transfer's return code for logs: FETCH_E_HTTP's, or
 * strerror's for a negative errno (static). The user-facing reason is err. */
const char *fetch_strerror(int rc);

/* Errors, from all the transfer functions below: 0 on success, else
 * FETCH_E_HTTP or a negative errno, always with a one-line reason in err
 * (the one channel for the message) naming the URL (redacted:
 * fetch_url_redact) and the HTTP status, the curl error or the limit:
 *   FETCH_E_HTTP  the server answered with an HTTP error status (>= 400)
 *   -EINVAL     a bad URL (scheme, syntax, length) or an unsafe path
 *   -EACCES     the guard refused the address (not public, not allowlisted)
 *   -EFBIG      a size limit (fetch_bytes, upload_bytes, mount_bytes)
 *   -EDQUOT     mount_files
 *   -ETIMEDOUT  fetch_connect_timeout or fetch_timeout
 *   -ELOOP      more than fetch_redirects redirects, or a symlink in a path
 *   -EPROTO     the final answer is no file and no HTTP error: a redirect
 *               with fetch_redirects = 0, or another status outside 2xx
 *               below 400
 *   -EPROTONOSUPPORT  a redirect to a scheme other than http or https
 *   -EHOSTUNREACH, -ECONNREFUSED, -EIO  the network or the server failed
 *   -ENOSYS     libcurl cannot be loaded
 *   -ECANCELED  the progress callback asked to stop
 *   -EPERM      (fetch_mount) workspace/mounts/ is not the server's
 *   other       the local file system (-ENOSPC, -EISDIR, ...)
 * No function ever leaves a partial file under a final name. */

/* Downloads url into dirfd/rel: rel must pass ws_rel_path_ok; missing
 * directories on the way are made (0755) and none is followed if a
 * symlink. The bytes go to a temporary file in the final directory
 * (".fetch-RANDOM.part", mode 0644 less the umask; 0444 for fetch_mount),
 * fsync'd and renamed over rel only when
 * whole; on failure it is removed. At most limits.fetch_bytes, or max_bytes
 * when that is smaller and not 0 (max_name: the key that set it, for the
 * error), are accepted: a larger Content-Length fails before the body, a
 * body that grows past the cap fails as it does. dirfd is borrowed. */
int fetch_download(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel, uint64_t max_bytes,
                   const char *max_name, struct fetch_file *out, char *err, size_t errlen) must_check;

/* Downloads url into memory, with the same cap as fetch_download; a NUL is
 * appended (not counted in *len); *data is the caller's to free. For the
 * CLI's --input-url and the page's "input from URL" (max_bytes =
 * input_bytes). */
int fetch_to_memory(const struct fetch_config *cfg, const char *url, uint64_t max_bytes, const char *max_name,
                    char **data, size_t *len, struct fetch_file *out, char *err, size_t errlen) must_check;

/* What an upload did. */
struct fetch_upload_result {
    uint64_t uploaded_bytes;
    long status;           /* the final HTTP status (2xx on success) */
};

/* HTTP PUT of the regular file dirfd/rel (opened beneath dirfd, no symlink
 * followed anywhere on the way: ws_open_beneath) to url. A file larger than
 * limits.upload_bytes is refused before anything is sent, and the read side
 * stops at the cap while streaming. A final status >= 400 is an error
 * (FETCH_E_HTTP, the status in out->status and in err). dirfd is
 * borrowed. */
int fetch_upload(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel,
                 struct fetch_upload_result *out, char *err, size_t errlen) must_check;

/* A session directory (STATE/sessions/SID, doc/architecture.md) holds workspace/,
 * the script's cwd, whose mounts/ receives the mounted files, and, next to
 * workspace/ where no script can write, mounts.json: the record of what was
 * mounted from where (with a lock file, mounts.lock). */

/* What fetch_mount returns: the shape of mount_file's result. */
struct fetch_mount {
    char *mounted_as;      /* "mounts/PATH", relative to the workspace (owned) */
    uint64_t bytes;
    char sha256[65];
    const char *mime;      /* static */
    bool reused;           /* the same URL was already at PATH: nothing was fetched */
};
void fetch_mount_free(struct fetch_mount *m);

/* mount_file(url, mount_path): downloads url into
 * session_dir/workspace/mounts/MOUNT_PATH (fetch_download's rules) and
 * records it. When the record says the same URL (compared by its SHA-256,
 * query included) already went to the same path and the file is still the
 * one written then (regular, same inode, size and mtime), nothing is
 * fetched and the recorded values come back with reused set. A mount that
 * would pass mount_files or mount_bytes for the session is refused; the
 * check is made again, under the record's lock, before the file is
 * published, so concurrent mounts cannot pass them together. Concurrent
 * mounts into one session each write a temporary file of their own.
 * session_dir must exist; workspace/ and mounts/ are made when missing. */
int fetch_mount(const struct fetch_config *cfg, const char *session_dir, const char *url, const char *mount_path,
                struct fetch_mount *out, char *err, size_t errlen) must_check;

/* persist_artifact(relative_path, presigned_url): fetch_upload of
 * session_dir/workspace/output/RELATIVE_PATH. */
int fetch_persist(const struct fetch_config *cfg, const char *session_dir, const char *relative_path, const char *url,
                  struct fetch_upload_result *out, char *err, size_t errlen) must_check;

/* ------- results: a run's result, and what the calls give back as JSON */

enum result_stream {
    RESULT_STREAM_STDOUT,
    RESULT_STREAM_STDERR,
    RESULT_STREAM_SYSTEM,  /* lines from runmyscript itself: limits, truncation */
};
const char *result_stream_name(enum result_stream s);

enum result_status {
    RESULT_STATUS_OK,
    RESULT_STATUS_ERROR,          /* the script failed (non-zero exit or signal) */
    RESULT_STATUS_TIMEOUT,        /* wall or CPU time limit */
    RESULT_STATUS_MEMORY,         /* memory limit */
    RESULT_STATUS_OUTPUT_LIMIT,   /* file_size, output_bytes or output_files */
    RESULT_STATUS_INSTALL_FAILED,
    RESULT_STATUS_CANCELLED,
    RESULT_STATUS_SANDBOX_ERROR,  /* the service failed, not the script */
    RESULT_STATUS_WORKSPACE_LIMIT, /* workspace_bytes or workspace_files; tmp_bytes or tmp_files in the fallback */
};
const char *result_status_name(enum result_status s);

struct result_chunk {
    enum result_stream stream;
    size_t off, len;            /* into result_log.buf */
};

/* The ordered log: one buffer, and the chunks in arrival order, each with
 * its stream. */
struct result_log {
    struct dbuf buf;
    struct result_chunk *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t limit;             /* log_bytes */
    uint64_t dropped;           /* bytes discarded past the limit */
    bool truncated;
};
/* What a session's call did to an artifact (a call without a workspace
 * lists every file of its own output/: RESULT_ART_LISTED). */
enum result_art_change {
    RESULT_ART_LISTED,  /* a call without a workspace: no flag ("change" absent from the JSON) */
    RESULT_ART_NEW,     /* "new": the file was not in output/ before the call */
    RESULT_ART_CHANGED, /* "changed": it was, and the call rewrote it (size, times or inode differ) */
};
const char *result_art_change_name(enum result_art_change c);

struct result_artifact {
    char *path;     /* relative to output/, raw bytes from the file system */
    uint64_t size;
    char *mime;
    char *summary;
    enum result_art_change change;
};

/* Which kernel ran a cell (exec_kernel_cell). */
enum result_kernel_state {
    RESULT_KERNEL_NONE,      /* not a cell (exec_run): "kernel" is null in the JSON */
    RESULT_KERNEL_NEW,       /* "new": the workspace had no kernel (its first cell, or the last one ended:
                            * reason says why) and this cell started one */
    RESULT_KERNEL_KEPT,      /* "kept": the kernel of the cells before ran it, with their names */
    RESULT_KERNEL_RESTARTED, /* "restarted": the kernel had to restart for this cell (a package its
                            * environment could not take in while running): the names of the cells
                            * before are gone, the files stay; reason says why */
};
const char *result_kernel_state_name(enum result_kernel_state s);

struct result_kernel {
    enum result_kernel_state state;
    uint64_t cell;              /* this cell's number in its kernel: 1 for a new one, then 2, 3, ... */
    char *reason;               /* new or restarted: why, one line ("the last kernel exceeded memory");
                                 * NULL for the workspace's first kernel and for kept */
};

/* Where the run's environment came from. */
enum result_env_cache {
    RESULT_ENV_NONE,   /* standard library only: the base environment */
    RESULT_ENV_HIT,    /* an environment built before */
    RESULT_ENV_BUILT,  /* built for this run */
};
const char *result_env_cache_name(enum result_env_cache c);

struct result {
    char run_id[WS_ID_MAX + 1]; /* 128 random bits as 32 hex digits, after NODE- in a cluster */
    char *run_dir;              /* STATE/runs/RUNID */
    char *workdir;              /* the script's cwd */
    char *output_dir;           /* SCRIPT_OUTPUT */
    enum result_status status;
    const char *limit;          /* key of the breached limit, or NULL */
    int exit_code;              /* -1 when killed by a signal or never started */
    int signal;                 /* 0, or the signal that ended the script */
    int64_t duration_ms;        /* the script's wall time */
    int64_t cpu_ms;             /* user + system CPU of the script */
    int64_t max_rss_kb;
    struct result_log log;
    char **requirements;        /* name==version: what the environment holds */
    size_t n_requirements;
    enum result_env_cache env_cache;
    char env_key[33];           /* the environment's key, "" for none */
    char *install_log;          /* the installer's output when it ran, or NULL */
    char *failed_requirement;   /* install_failed: the requirement that failed, or NULL */
    struct result_artifact *artifacts;
    size_t n_artifacts;
    uint64_t artifacts_skipped; /* entries of output/ that are not artifacts */
    bool has_zip;               /* artifacts.zip complete and published */
    char *zip_path;
    const char *isolation;      /* "namespaces+seccomp", or the fallback's: "landlock+seccomp",
                                 * "landlock", "rlimits+seccomp", "rlimits" */
    char *error;                /* sandbox_error, install_failed, cancelled by the server: one line for a user */
    bool warm;                  /* forked from a zygote ("start": "warm"), else "cold" */
    const char *url_prefix;     /* copied from the config for the serializer */
    /* The value of the script's or the cell's last expression as a
     * notebook shows it: its repr (a pandas DataFrame as pandas prints it,
     * truncated as pandas does), cut at value_bytes; NULL when the last
     * statement is no expression, its value is None, or it was shown as
     * an image (a PIL image: a PNG artifact; so is every matplotlib figure
     * still open at the end). exec_run and exec_kernel_cell both fill it. */
    char *value;
    bool value_truncated;       /* the repr was longer than value_bytes */
    struct result_kernel kernel; /* exec_kernel_cell: the kernel that ran the cell */
};
void result_init(struct result *r);
void result_free(struct result *r);

/* The MIME type of a file from its first bytes (head, n of them; pass at
 * least 4 KiB where the file has them) and then its name. Static string. */
const char *ws_mime(const unsigned char *head, size_t n, const char *name);

/* Builds the result object (caller puts it with json_object_put), or NULL on
 * ENOMEM. Every string in it is valid UTF-8: bytes that are not (a script's
 * binary output, a file name) are replaced by U+FFFD; artifact URLs are
 * percent-encoded from the raw bytes so that they still reach the file.
 * Besides a run's keys (doc/architecture.md, "The result"): "value" (the
 * last expression's text, or null) and "value_truncated"; "kernel", null
 * for a run, for a cell {"state": "new" | "kept" | "restarted", "cell": N,
 * "reason": string or null}; and in a session's call (a workspace) each
 * artifact's "change": "new" or "changed" (only files the call created or
 * changed are listed). */
json_object *result_to_json(const struct result *r);

/* The result as the HTTP doors hand it to a client (MCP's
 * structuredContent, /api/run's answer): result_to_json without the
 * server's own paths (no "workdir", no "zip"), every URL absolute on the
 * origin (scheme://host[:port]) of base_url (http_base_url's; the URLs
 * already hold public_url's path; left relative to the site when NULL or
 * "": /api/run, whose page links them relative to itself), and the
 * state directory's path, wherever a string holds it (an error of the
 * service, the installer's log, a traceback in the fallback), written as
 * "STATE". Caller puts it; NULL on ENOMEM. */
json_object *result_client_json(const struct result *r, const char *base_url, const char *state_dir);
/* The same redaction for one string the doors send (a log line, an
 * installer line): a copy with state_dir written as "STATE" (caller frees;
 * NULL on ENOMEM). */
char *result_redact(const char *s, size_t n, const char *state_dir, size_t *out_len);

/* Serialises the result (caller frees). pretty: indented for people. */
char *result_to_string(const struct result *r, bool pretty, size_t *len);

/* mount_file's result: {"mounted_as", "bytes", "sha256", "mime"} (caller
 * puts it), or NULL on ENOMEM. */
json_object *result_mount_json(const struct fetch_mount *m);

/* persist_artifact's result: {"uploaded_bytes", "status"}. */
json_object *result_upload_json(const struct fetch_upload_result *u);

/* Percent-encodes a relative path for a URL: unreserved bytes and '/' stay,
 * everything else becomes %XX (caller frees). */
char *result_url_path(const char *path);

/* --------- a run: its spec, its sink, exec_run and the calls beside it */

#define EXEC_REQUIREMENT_MAX 512        /* bytes of one requirement string */
#define EXEC_MAX_REQUIREMENTS 64 /* requirements of one run, all sources */

/* One call. Strings are borrowed for the duration of exec_run(). */
struct exec_spec {
    const struct exec_config *cfg;
    const char *code;           /* the script's source, code_len bytes */
    size_t code_len;
    const char *input;          /* bytes for SCRIPT_INPUT and stdin; may be NULL */
    size_t input_len;
    struct exec_limits limits;  /* this call's limits (start from cfg->limits) */
    /* Explicit requirement strings (PEP 508), winning over the script's
     * PEP 723 block and its imports for the same distribution. */
    const char *const *requirements;
    size_t n_requirements;
    bool auto_deps;             /* find requirements from the imports too */
    /* Optional session workspace (absolute path of an existing directory):
     * the script's cwd, and its output/ is SCRIPT_OUTPUT. NULL: the run
     * directory is the workspace. */
    const char *workspace;
};

/* Initialises spec with cfg's defaults: limits copied, auto_deps from cfg. */
void exec_spec_init(struct exec_spec *spec, const struct exec_config *cfg);

enum exec_phase {
    EXEC_PHASE_QUEUED,
    EXEC_PHASE_RESOLVING,
    EXEC_PHASE_INSTALLING,
    EXEC_PHASE_RUNNING,
    EXEC_PHASE_COLLECTING,
    EXEC_PHASE_DONE,
};
const char *exec_phase_name(enum exec_phase p);

/* How exec_run() talks to its front door while it works. Every callback is
 * optional (NULL) and is called on the caller's thread. Data pointers are
 * borrowed for the duration of the call. The result's run_id is filled
 * before the first callback, so a callback may read it. */
struct exec_sink {
    void *ctx;
    void (*phase)(void *ctx, enum exec_phase phase, const char *detail);
    /* A chunk of the script's output as it arrives; only what the log keeps
     * (past log_bytes the sink sees the truncation marker and nothing more). */
    void (*output)(void *ctx, enum result_stream stream, const char *data, size_t len);
    /* Each line of the installer's output, while an environment is built
     * (the phase is "installing", its detail the requirements). */
    void (*install_line)(void *ctx, const char *line);
    /* Polled a few times a second while the script runs; returning true
     * cancels the run (status "cancelled"). */
    bool (*cancelled)(void *ctx);
    /* Asked once, when a run is cancelled: why, when it is not the
     * client's own cancel (the server stopping), a short clause; NULL
     * when there is nothing to add. It ends the log's "the run was
     * cancelled" line and is the result's error. */
    const char *(*cancel_reason)(void *ctx);
    /* Called once, when the call has passed exec_run's checks and before
     * anything is made for it: the place for a front door's own work that
     * must come after the checks and before the run (run_code downloads
     * its files here). 0 goes on; a negative errno refuses the run:
     * exec_run returns it with nothing made (r->run_id "", r->error not
     * set: the front door has its own answer). */
    int (*accepted)(void *ctx);
};

/* Runs one script. Always fills r (call result_init first): a script
 * that fails is a result with its status, not an error. Returns 0 when the
 * result is complete and recorded (result.json written), or a negative errno
 * when the service itself failed; then r->status is SANDBOX_ERROR and
 * r->error says why in one line. -EBUSY: the script never started because
 * every run slot and queue place was taken (or it waited queue_wait for a
 * slot); nothing is kept on disk (r->run_id is ""), r->error says when to
 * try again (cfg->retry_after_ms), and the front door answers "busy".
 * While it waits for a slot the sink gets the queued phase and cancelled()
 * is polled.
 *
 * A call the executor refuses is refused first, before anything is made
 * (no run directory, no slot, no sink callback, r->run_id ""): exec_run
 * makes the checks of exec_check_code (-EINVAL, -E2BIG), of input_bytes
 * (-E2BIG) and of exec_check_requirements (-EINVAL), with the same
 * one-line reason in r->error, to be shown as it is: the caller's request
 * is at fault, not the service. When the interpreter cannot be asked, that
 * is another -errno, reason in r->error. A front door may rely on exec_run
 * alone for these checks: rc -EINVAL or -E2BIG with r->run_id[0] == '\0'
 * is "refused, nothing was run" (the MCP and web doors rely on it); the
 * exec_check_* functions are for a caller that wants the answer without a
 * run (the CLI, before its own work), and sink->accepted for a front
 * door's work that must wait for the checks. */
int exec_run(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r) must_check;

/* Checks a script before anything is made for it: not empty, at most
 * code_bytes, valid UTF-8, no NUL. 0, or -EINVAL / -E2BIG with a one-line
 * reason in err (with the sizes and the limit's value where one is
 * passed) a front door can show as it is. */
int exec_check_code(const char *code, size_t len, const struct exec_limits *lim, char *err, size_t errlen) must_check;

/* Checks a call's requirements before anything is made for it: the
 * explicit list and the script's PEP 723 block are valid PEP 508
 * requirements with no installer options, paths or URLs (unless the
 * configuration allows direct references), and the block's requires-python
 * matches the interpreter. 0; -EINVAL with a one-line reason in err (show
 * it as it is: the request is refused); another -errno when the service
 * cannot tell (the interpreter is missing), reason in err. exec_run()
 * makes the same check itself and refuses the same calls (see there). */
int exec_check_requirements(const struct exec_spec *spec, char *err, size_t errlen) must_check;

/* Asks the run run_id (under state_dir) to stop, from any process: creates
 * RUN/cancel, which the exec_run() of that run polls with its deadline; the
 * run ends with status "cancelled". 0; -ENOENT (no such run, or not a valid
 * id); -EALREADY (it has finished: result.json exists); other -errno. */
int exec_cancel(const char *state_dir, const char *run_id) must_check;

/* Marks runs whose process died before it recorded a result (a worker
 * killed mid-run): every STATE/runs/RUNID without result.json whose lock
 * nobody holds (exec_run holds an flock on the run directory while it
 * works) gets a result.json with status sandbox_error. Returns how many were
 * marked, or -errno. */
int exec_mark_orphans(const struct exec_config *cfg);

/* Runs fn(arg, fd) in a process of its own that outlives the caller: a
 * double fork, a new session, signals back to their defaults, stdin and
 * stdout on /dev/null, stderr kept only with keep_stderr (else /dev/null: a
 * CGI server waits for the stderr it handed out), and nothing else open but
 * keep_fd (may be -1: inherited as it is, with its locks) and fd, the write
 * end of a pipe whose read end *read_fd is the caller's (close-on-exec;
 * caller closes). The process exits with fn's return when fn returns.
 * For work that must not hold the caller (an MCP task: the worker answers
 * and goes back to its requests). 0, or -errno with nothing started. */
int exec_detach(int (*fn)(void *arg, int fd), void *arg, int keep_fd, bool keep_stderr, int *read_fd) must_check;

/* ------------------------------ kernels: a live Python per workspace */

/* A kernel is one long-lived Python process per workspace, in a jail like
 * a session run's (its own namespaces, uid, cgroup and seccomp filter, the
 * workspace at /work, no network unless script_network; forked from the
 * environment's zygote where the warm pool has one, else started cold; in
 * the fallback where the host has no namespaces), watched by a small host
 * process of its own outside the jail that outlives the request that
 * started it (doc/architecture.md, "A cell"). Cells run one at a time in
 * its __main__: the names one cell defines (variables, functions, classes,
 * imports, open files, threads) are there in the next; the files of the
 * workspace persist as for runs. A workspace is named by its path: two
 * paths, two kernels that share nothing. */

/* Runs spec->code as a cell in the kernel of spec->workspace (required:
 * an existing directory, as exec_run's session workspace), starting one
 * when the workspace has none. The same sink and result as exec_run (the
 * phases, the output as it comes, installer lines, cancelled(), accepted;
 * the same checks first, refused the same way), and the same return: 0
 * with a complete, recorded result (STATE/runs/RUNID of the cell, its
 * artifacts reachable by the run id), -EBUSY turned away (see below), or
 * another -errno when the service failed (status sandbox_error, reason in
 * r->error). spec->input must be empty (-EINVAL: a cell reads no input).
 * What differs from a run:
 *   - r->kernel: new, kept or restarted, the cell's number, the reason;
 *     r->value: the last expression (both as described at struct
 *     result);
 *   - r->artifacts: only the files of output/ this cell created or changed,
 *     each flagged; a figure still open at the end of the cell, or a PIL
 *     image as its value, is a PNG artifact (output/cell-N-*.png);
 *   - one cell at a time per kernel: a second one waits (phase queued) at
 *     most queue_wait, then -EBUSY with the reason in r->error;
 *   - a running cell holds a run slot (admission, as a run); an idle
 *     kernel holds none;
 *   - limits: timeout (and cpu_time, output_*, workspace_*) interrupt the
 *     cell (KeyboardInterrupt in the kernel): status timeout (or
 *     output_limit, workspace_limit) and the kernel and its names stay; a
 *     cell that goes on kernel_grace after its interrupt has its kernel
 *     killed (the status says so in r->error; the next cell starts a new
 *     kernel). memory is the kernel's as a whole: past it the kernel is
 *     killed, status memory, and the next cell starts a new one with the
 *     workspace's files intact. The other limits of the cell that starts
 *     a kernel (memory, processes, open_files, tmp_*, file_size) are that
 *     kernel's for its life;
 *   - cancelled() and exec_cancel(RUNID) interrupt the cell: status
 *     cancelled, the kernel stays;
 *   - a kernel that dies under a cell (killed from outside, os._exit)
 *     ends the cell at once: status sandbox_error (killed by a signal we
 *     did not send) or error (it exited), with the reason; never a hung
 *     call;
 *   - a cell that imports what the kernel's environment lacks gets it from
 *     the package store; the kernel restarts with the larger environment
 *     (r->kernel.state restarted, the reason names the packages).
 * Without kernels here (cfg->kernels.on false: the CLI, CGI) it returns
 * -ENOTSUP with nothing made and r->error saying that kernels live only
 * under `runmyscript serve`. */
int exec_kernel_cell(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r) must_check;

/* Ends the kernel of workspace, if it has one, and its names with it; the
 * files stay, and the next cell starts a new kernel (state new, reason "the
 * kernel was reset"). A cell running in it is interrupted first (status
 * cancelled). 0 (also when there was no kernel), or -errno. */
int exec_kernel_reset(const struct exec_config *cfg, const char *workspace) must_check;

/* Ends the kernel of workspace, if it has one, for good: the workspace is
 * going (delete_workspace, a session ended or reaped). Waits until the
 * kernel's processes are gone (at most kernel_grace and a second), so that
 * the caller may remove the workspace after. 0 (also when there was no
 * kernel), or -errno. */
int exec_kernel_end(const struct exec_config *cfg, const char *workspace) must_check;

/* What /healthz shows of the kernels of a state directory. */
struct exec_kernel_stats {
    uint32_t live;              /* kernels running (idle or in a cell) */
    uint32_t busy;              /* of them, running a cell */
    uint32_t max;               /* max_kernels */
    uint64_t memory;            /* what the live kernels hold together, in bytes */
    uint64_t memory_max;        /* kernel_memory (0: no budget) */
};
/* Reads the kernels' counters (a snapshot: each kernel's host writes its
 * own). 0 or -errno; no kernel ever ran here is 0 with live 0. */
int exec_kernel_stats(const struct exec_config *cfg, struct exec_kernel_stats *s) must_check;

/* -------------------------- probing: what the host and the server have */

/* What this host supports, for check-sandbox and the mode decision. */
struct probe_caps {
    bool userns;          /* user+mount+pid+net+ipc+uts namespaces can be made */
    char userns_error[128];
    bool seccomp;
    bool cgroup_v1_memory, cgroup_v1_pids;  /* writable v1 hierarchies (root) */
    bool cgroup_v2;       /* a delegated v2 cgroup with memory and pids */
    bool root;
    /* Where no memory cgroup holds a run, the executor sums the memory of
     * its processes this often and kills it past `memory`. */
    int memory_watch_ms;
    int landlock_abi;     /* the kernel's Landlock ABI version, 0: none */
};

/* Probes the host (forks a child that tries the namespaces). */
void probe_host(struct probe_caps *c);

/* The isolation a fallback run gets on the host c describes under the
 * landlock setting (static string, as result.isolation names it), or
 * NULL when landlock = on and the kernel has no Landlock (fallback runs
 * are refused). */
const char *probe_fallback_isolation(const struct probe_caps *c, enum exec_landlock l);

/* How many run slots and queue places are held right now (a snapshot, for
 * /healthz and messages). It tries each lock for an instant, so a caller
 * entering at that very instant may find that slot taken and queue. 0 or
 * -errno. */
int probe_slots(const char *state_dir, const struct exec_admit_config *c, uint32_t *running, uint32_t *queued) must_check;

/* The base environment of cfg's interpreter (STATE/envs/base-KEY, a venv
 * with the standard library only), made first when missing: *env_dir is
 * its directory (caller frees). For /healthz, which reads the Python
 * version from it. 0, or -errno with a one-line reason in err. */
int probe_base_env(const struct exec_config *cfg, char **env_dir, char *err, size_t errlen) must_check;

/* Whether environments can be hard links into the package store: 1 when a
 * probe file made in STATE/store links into STATE/envs (the state
 * directory standing for either when not made yet; nothing is left), 0
 * when it cannot (environments are then copies), -errno when it could not
 * be told. For check-sandbox. */
int probe_store_links(const struct exec_config *cfg);

/* -------------------------- the warm pool: the zygotes beside a server */

/* The warm pool of a server. */
struct exec_warm_pool {
    pid_t pid;                  /* -1: none */
    int pidfd;                  /* the server watches it through this (owned) */
};
/* Starts the warm pool for cfg's state directory (the server's supervisor
 * calls it; the pool is not its child, ends when the server does, or on
 * exec_warm_stop) and fills pool, with pid -1 when warm is off or cannot
 * be had here (not root: then every run starts cold). 0 or -errno. The
 * pool has its own copy of cfg. */
int exec_warm_serve(const struct exec_config *cfg, struct exec_warm_pool *pool) must_check;
/* True while the pool runs. */
bool exec_warm_alive(const struct exec_warm_pool *pool);
/* Stops the pool (and its zygotes, and their runs) and waits for it;
 * pool is none after. Safe on none. */
void exec_warm_stop(struct exec_warm_pool *pool);

/* True when a warm pool listens for state_dir (its socket takes a
 * connection): a server's, which runs of any process of state_dir use. */
bool exec_warm_serving(const char *state_dir);

/* What /healthz shows of the pool. */
struct exec_warm_stats {
    bool serving;               /* a pool listens for this state directory */
    uint64_t envs;              /* environments with a zygote ready */
    uint64_t runs;              /* runs handed to a zygote since the pool started */
    uint64_t skipped;           /* modules a zygote could not import safely, skipped (STATE/.warm/learned
                                 * names them, per environment) */
};
/* Reads the pool's counters. 0, -ENOENT when no pool ever ran here, or
 * -errno. */
int exec_warm_stats(const char *state_dir, struct exec_warm_stats *s) must_check;

#endif
