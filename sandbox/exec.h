/* exec.h: the executor core. exec_run() is the one entry point every front
 * door (MCP, the web page, the CLI) calls to run a script: it makes the run's
 * workspace, prepares the Python environment, runs the script under its
 * limits while streaming output to a sink, collects the artifacts and the
 * zip, and fills a result. No HTTP, JSON-RPC or FastCGI in here. */
#ifndef RMS_EXEC_H
#define RMS_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "admit.h"
#include "deps.h"
#include "util.h"
#include "workspace.h"

/* ---------------------------------------------------------------- limits */

/* Every limit a run has. Each has a name, a configuration key, a default and
 * a documented outcome when breached: see exec_limit_defs[]. 0 means
 * "unlimited" only where the table says it may. */
struct exec_limits {
    int64_t wall_ms;        /* timeout: wall clock of the script */
    int64_t cpu_ms;         /* cpu_time: CPU seconds of the script (RLIMIT_CPU) */
    uint64_t memory;        /* memory: bytes of address space (or cgroup memory) */
    uint64_t file_size;     /* file_size: largest file the script may write (RLIMIT_FSIZE) */
    uint64_t open_files;    /* open_files: descriptors per process (RLIMIT_NOFILE) */
    uint64_t processes;     /* processes: tasks of the run (RLIMIT_NPROC / pids cgroup) */
    uint64_t log_bytes;     /* log_bytes: stdout+stderr kept in the log */
    uint64_t output_bytes;  /* output_bytes: total bytes of output/ */
    uint64_t output_files;  /* output_files: number of files in output/ */
    int64_t kill_grace_ms;  /* kill_grace: SIGTERM -> SIGKILL delay at the end */
    uint64_t tmp_bytes;     /* tmp_bytes: size of the private /tmp and /dev/shm (jail) */
    uint64_t tmp_files;     /* tmp_files: inodes of each */
    uint64_t code_bytes;    /* code_bytes: largest script a request may carry */
    uint64_t input_bytes;   /* input_bytes: largest input a request may carry */
    int64_t install_ms;     /* install_time: wall clock of the installer */
};

enum exec_limit_unit { EXEC_UNIT_MS, EXEC_UNIT_BYTES, EXEC_UNIT_COUNT };

/* One row per limit: the table the config parser, the README and the tests
 * are checked against. */
struct exec_limit_def {
    const char *key;         /* configuration key, also the name in results */
    enum exec_limit_unit unit;
    size_t offset;           /* into struct exec_limits */
    uint64_t dflt;
    uint64_t min, max;       /* accepted range */
    const char *breach;      /* what happens when breached, one line */
};
extern const struct exec_limit_def exec_limit_defs[];
extern const size_t exec_limit_defs_n;

/* The same for any struct of limits laid out by a table of rows (the
 * fetch limits): read or write a field, fill in the defaults, find a row. */
uint64_t exec_limit_field_get(const void *limits, const struct exec_limit_def *d);
void exec_limit_field_set(void *limits, const struct exec_limit_def *d, uint64_t v);
void exec_limit_fields_default(void *limits, size_t size, const struct exec_limit_def *defs, size_t n);
const struct exec_limit_def *exec_limit_row(const struct exec_limit_def *defs, size_t n, const char *key);

/* Fills l with the defaults of exec_limit_defs[]. */
void exec_limits_default(struct exec_limits *l);
/* Reads or writes the field of a limit by its row. */
uint64_t exec_limit_get(const struct exec_limits *l, const struct exec_limit_def *d);
void exec_limit_set(struct exec_limits *l, const struct exec_limit_def *d, uint64_t v);
/* The row for key, or NULL. */
const struct exec_limit_def *exec_limit_find(const char *key);

/* ------------------------------------------------------------ the config */

enum exec_isolation {
    EXEC_ISOLATION_AUTO,       /* namespaces where the host has them, else rlimits */
    EXEC_ISOLATION_NAMESPACES, /* refuse to run without them */
    EXEC_ISOLATION_RLIMITS,    /* force the fallback (tests, shared hosts) */
};

/* Server-wide settings exec_run() needs; the front door fills it from the
 * configuration file. All strings are borrowed for the life of the struct. */
struct exec_config {
    const char *state_dir;      /* absolute; STATE of DESIGN.md */
    const char *python;         /* interpreter scripts run with */
    const char *url_prefix;     /* "/artifacts/" for result URLs; NULL: no URLs */
    const char *node_id;        /* run ids are NODE-HEX (a cluster); NULL: HEX */
    enum exec_isolation isolation;
    bool require_isolation;     /* refuse to run without the namespaces */
    bool script_network;
    uint32_t uid_base, uid_count; /* host uids for runs when we are root */
    struct exec_limits limits;  /* defaults for a call */
    int64_t run_ttl_ms;         /* run directories older than this are reaped */
    struct deps_config deps;    /* installer, index, import map, env cache */
    bool auto_deps;             /* default of exec_spec.auto_deps */
    struct admit_config admit;  /* run slots and the queue (admit.h) */
    int64_t retry_after_ms;     /* retry_after: what a busy answer tells the client */
};

/* ------------------------------------------------------------- the spec */

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

/* ----------------------------------------------------------- the sink */

enum exec_phase {
    EXEC_PHASE_QUEUED,
    EXEC_PHASE_RESOLVING,
    EXEC_PHASE_INSTALLING,
    EXEC_PHASE_RUNNING,
    EXEC_PHASE_COLLECTING,
    EXEC_PHASE_DONE,
};
const char *exec_phase_name(enum exec_phase p);

enum exec_stream {
    EXEC_STREAM_STDOUT,
    EXEC_STREAM_STDERR,
    EXEC_STREAM_SYSTEM,  /* lines from runmyscript itself: limits, truncation */
};
const char *exec_stream_name(enum exec_stream s);

/* How exec_run() talks to its front door while it works. Every callback is
 * optional (NULL) and is called on the caller's thread. Data pointers are
 * borrowed for the duration of the call. The result's run_id is filled
 * before the first callback, so a callback may read it. */
struct exec_sink {
    void *ctx;
    void (*phase)(void *ctx, enum exec_phase phase, const char *detail);
    /* A chunk of the script's output as it arrives; only what the log keeps
     * (past log_bytes the sink sees the truncation marker and nothing more). */
    void (*output)(void *ctx, enum exec_stream stream, const char *data, size_t len);
    /* Each line of the installer's output, while an environment is built
     * (the phase is "installing", its detail the requirements). */
    void (*install_line)(void *ctx, const char *line);
    /* Polled a few times a second while the script runs; returning true
     * cancels the run (status "cancelled"). */
    bool (*cancelled)(void *ctx);
};

/* ---------------------------------------------------------- the result */

enum exec_status {
    EXEC_STATUS_OK,
    EXEC_STATUS_ERROR,          /* the script failed (non-zero exit or signal) */
    EXEC_STATUS_TIMEOUT,        /* wall or CPU time limit */
    EXEC_STATUS_MEMORY,         /* memory limit */
    EXEC_STATUS_OUTPUT_LIMIT,   /* file_size, output_bytes or output_files */
    EXEC_STATUS_INSTALL_FAILED,
    EXEC_STATUS_CANCELLED,
    EXEC_STATUS_SANDBOX_ERROR,  /* the service failed, not the script */
};
const char *exec_status_name(enum exec_status s);

struct exec_chunk {
    enum exec_stream stream;
    size_t off, len;            /* into exec_log.buf */
};

/* The ordered log: one buffer, and the chunks in arrival order, each with
 * its stream. */
struct exec_log {
    struct dbuf buf;
    struct exec_chunk *chunks;
    size_t n_chunks, cap_chunks;
    uint64_t limit;             /* log_bytes */
    uint64_t dropped;           /* bytes discarded past the limit */
    bool truncated;
};
void exec_log_init(struct exec_log *log, uint64_t limit);
void exec_log_free(struct exec_log *log);
/* Appends a chunk, cutting it at the limit; on the first cut it appends the
 * truncation marker (a SYSTEM chunk). Returns the number of bytes of data
 * kept (0 .. len); *marker is set when this call added the marker. -ENOMEM
 * on allocation failure. SYSTEM chunks are always kept. */
int exec_log_append(struct exec_log *log, enum exec_stream stream, const char *data, size_t len,
                    bool *marker) must_check;

struct exec_artifact {
    char *path;     /* relative to output/, raw bytes from the file system */
    uint64_t size;
    char *mime;
    char *summary;
};

/* Where the run's environment came from. */
enum exec_env_cache {
    EXEC_ENV_NONE,   /* standard library only: the base environment */
    EXEC_ENV_HIT,    /* an environment built before */
    EXEC_ENV_BUILT,  /* built for this run */
};
const char *exec_env_cache_name(enum exec_env_cache c);

struct exec_result {
    char run_id[WS_ID_MAX + 1]; /* 128 random bits as 32 hex digits, after NODE- in a cluster */
    char *run_dir;              /* STATE/runs/RUNID */
    char *workdir;              /* the script's cwd */
    char *output_dir;           /* SCRIPT_OUTPUT */
    enum exec_status status;
    const char *limit;          /* key of the breached limit, or NULL */
    int exit_code;              /* -1 when killed by a signal or never started */
    int signal;                 /* 0, or the signal that ended the script */
    int64_t duration_ms;        /* the script's wall time */
    int64_t cpu_ms;             /* user + system CPU of the script */
    int64_t max_rss_kb;
    struct exec_log log;
    char **requirements;        /* name==version: what the environment holds */
    size_t n_requirements;
    enum exec_env_cache env_cache;
    char env_key[33];           /* the environment's key, "" for none */
    char *install_log;          /* the installer's output when it ran, or NULL */
    char *failed_requirement;   /* install_failed: the requirement that failed, or NULL */
    struct exec_artifact *artifacts;
    size_t n_artifacts;
    uint64_t artifacts_skipped; /* entries of output/ that are not artifacts */
    bool has_zip;               /* artifacts.zip complete and published */
    char *zip_path;
    const char *isolation;      /* "namespaces+seccomp" or "rlimits" */
    char *error;                /* sandbox_error, install_failed: a one-line user-facing reason */
    const char *url_prefix;     /* copied from the config for the serializer */
};
void exec_result_init(struct exec_result *r);
void exec_result_free(struct exec_result *r);

/* Runs one script. Always fills r (call exec_result_init first): a script
 * that fails is a result with its status, not an error. Returns 0 when the
 * result is complete and recorded (result.json written), or a negative errno
 * when the service itself failed; then r->status is SANDBOX_ERROR and
 * r->error says why in one line. -EBUSY: the script never started because
 * every run slot and queue place was taken (or it waited queue_wait for a
 * slot); nothing is kept on disk (r->run_id is ""), r->error says when to
 * try again (cfg->retry_after_ms), and the front door answers "busy".
 * While it waits for a slot the sink gets the queued phase and cancelled()
 * is polled. */
int exec_run(const struct exec_spec *spec, const struct exec_sink *sink, struct exec_result *r) must_check;

/* Asks the run run_id (under state_dir) to stop, from any process: creates
 * RUN/cancel, which the exec_run() of that run polls with its deadline; the
 * run ends with status "cancelled". 0; -ENOENT (no such run, or not a valid
 * id); -EALREADY (it has finished: result.json exists); other -errno. */
int exec_cancel(const char *state_dir, const char *run_id) must_check;

/* Checks a script before anything is made for it: not empty, at most
 * code_bytes, valid UTF-8, no NUL. 0, or -EINVAL / -E2BIG with *why set to
 * a static one-line reason a front door can show as it is. */
int exec_check_code(const char *code, size_t len, const struct exec_limits *lim, const char **why) must_check;

/* Checks a call's requirements before anything is made for it: the
 * explicit list and the script's PEP 723 block are valid PEP 508
 * requirements with no installer options, paths or URLs (unless the
 * configuration allows direct references), and the block's requires-python
 * matches the interpreter. 0; -EINVAL with a one-line reason in why (show
 * it as it is: the request is refused); another -errno when the service
 * cannot tell (the interpreter is missing), reason in why. exec_run()
 * checks the same and returns -EINVAL without a result on a refusal. */
int exec_check_requirements(const struct exec_spec *spec, char *why, size_t whylen) must_check;

/* Marks runs whose process died before it recorded a result (a worker
 * killed mid-run): every STATE/runs/RUNID without result.json whose lock
 * nobody holds (exec_run holds an flock on the run directory while it
 * works) gets a result.json with status sandbox_error. Returns how many were
 * marked, or -errno. */
int exec_mark_orphans(const struct exec_config *cfg);

/* Initialises spec with cfg's defaults: limits copied, auto_deps from cfg. */
void exec_spec_init(struct exec_spec *spec, const struct exec_config *cfg);

#endif
