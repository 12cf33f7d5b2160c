/* executor/result.h: results: a run's result, and what the calls give back as
 * JSON. Part of the executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_RESULT_H
#define RMS_EXECUTOR_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <json-c/json.h>

#include "executor/network.h"
#include "executor/outcome.h"
#include "executor/workspace.h"
#include "executor/transfer.h"
#include "util.h"

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
    RESULT_KERNEL_RESTORED,  /* "restored": the last kernel was saved as it stopped (reason says why it
                            * stopped), and this cell's new kernel loaded its state first: restored
                            * says which names came back and which did not */
};
const char *result_kernel_state_name(enum result_kernel_state s);

struct result_kernel {
    enum result_kernel_state state;
    uint64_t cell;              /* this cell's number in its kernel: 1 for a new one, then 2, 3, ... */
    char *reason;               /* new or restarted: why, one line ("the last kernel exceeded memory");
                                 * NULL for the workspace's first kernel and for kept */
    char *restored;             /* restored: the kernel's report as JSON text (an object: names
                                 * [[NAME, TYPE]], failed and skipped [[NAME, TYPE, REASON]],
                                 * modules, cells, python, differs), else NULL */
};

/* A run's stdin while its front door could ask its user (exec_sink.question). */
struct result_input {
    bool live;                  /* its stdin was a pipe: the input, then the answers */
    unsigned questions;         /* questions it asked */
    unsigned answered;          /* of them, answered */
    const char *closed;         /* why its stdin was closed before the end (static), or NULL:
                                 * "no_answer" (input_wait passed), "declined", "question_limit"
                                 * (input_questions), "closed" (the pipe failed) */
};

/* Where the run's environment came from. */
enum result_env_cache {
    RESULT_ENV_NONE,   /* standard library only: the base environment */
    RESULT_ENV_HIT,    /* an environment built before */
    RESULT_ENV_BUILT,  /* built for this run */
};
const char *result_env_cache_name(enum result_env_cache c);

#define RESULT_OUTSIDE_NAMES 5 /* files named of those a run wrote outside output/ */

struct result {
    char run_id[WS_ID_MAX + 1]; /* 128 random bits as 32 hex digits, after NODE- in a cluster */
    char *run_dir;              /* STATE/runs/RUNID */
    char *workdir;              /* the script's cwd */
    char *output_dir;           /* SCRIPT_OUTPUT */
    enum exec_outcome outcome;  /* what came of the call (exec_run, exec_kernel_cell) */
    enum result_status status;
    const char *limit;          /* key of the breached limit, or NULL */
    int exit_code;              /* -1 when killed by a signal or never started */
    int signal;                 /* 0, or the signal that ended the script */
    int64_t duration_ms;        /* the script's wall time; -1 (null in JSON) when no script ran */
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
    /* Regular files the script wrote in its working directory outside
     * output/ (and a session's mounts/), which the caller does not get
     * back: how many, and the first few in path order (paths from the
     * working directory); exec_run fills them, a cell leaves them 0. */
    uint64_t outside_files;
    char *outside_names[RESULT_OUTSIDE_NAMES];
    size_t n_outside_names;
    bool has_zip;               /* artifacts.zip complete and published */
    char *zip_path;
    const char *isolation;      /* "namespaces+seccomp", or the fallback's: "landlock+seccomp",
                                 * "landlock", "rlimits+seccomp", "rlimits" */
    char *error;                /* sandbox_error, install_failed, cancelled by the server: one line for a user;
                                 * error: what to change, when the log says an optional package is missing,
                                 * else the exception's line of the traceback ("NameError: name 'x' is ...") */
    char *advice;               /* for the operator, never a client: what to change in the configuration
                                 * (install_failed, a requirement not found: where the installer looked and
                                 * the keys that say so), or NULL */
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
    struct result_input input;  /* its questions to its user, if it could ask */
    /* What the run did on the network (executor/network.h): its mode, the
     * totals, the destinations reached and those refused, and which limit
     * stopped the network. A limit that stops the network does not stop the
     * run: its connections are cut and new ones refused, the status is the
     * script's own, and r->limit names it (unless another limit ended the
     * run). */
    struct net_record network;
};
void result_init(struct result *r);
void result_free(struct result *r);

/* Builds the result object (caller puts it with json_object_put), or NULL on
 * ENOMEM. Every string in it is valid UTF-8: bytes that are not (a script's
 * binary output, a file name) are replaced by U+FFFD; artifact URLs are
 * percent-encoded from the raw bytes so that they still reach the file.
 * Besides a run's keys (doc/architecture.md, "The result"): "value" (the
 * last expression's text, or null) and "value_truncated"; "kernel", null
 * for a run, for a cell {"state": "new" | "kept" | "restarted", "cell": N,
 * "reason": string or null}; "input", null for a run whose
 * stdin was its input alone, else {"questions": N, "answered": N, "closed":
 * null or why}; and in a session's call (a workspace) each
 * artifact's "change": "new" or "changed" (only files the call created or
 * changed are listed). */
json_object *result_to_json(const struct result *r);

/* The result as the HTTP doors hand it to a client (MCP's
 * structuredContent, /api/run's answer): result_to_json without the
 * server's own paths and the operator's advice (no "workdir", no "zip",
 * no "advice"), every URL absolute on the
 * origin (scheme://host[:port]) of base_url (http_base_url's; the URLs
 * already hold public_url's path; left relative to the site when NULL or
 * "": /api/run, whose page links them relative to itself), and the
 * state directory's path, wherever a string holds it (an error of the
 * service, the installer's log, a traceback in the fallback), written as
 * "STATE" (result_redact). Caller puts it; NULL on ENOMEM. */
json_object *result_client_json(const struct result *r, const char *base_url, const struct exec_config *cfg);
/* The result as MCP over stdio hands it to its client, a local user on
 * this machine (as the command line's --json, the server's paths are kept):
 * result_to_json with "workdir" and "zip", and each artifact's "url" and
 * "zip_url" the file:// URL of the file itself. Caller puts it; NULL on
 * ENOMEM. */
json_object *result_local_json(const struct result *r);
/* "file://" and path percent-encoded (result_url_path); caller frees, NULL
 * on ENOMEM. */
char *result_file_url(const char *path);
/* The same redaction for one string the doors send (a log line, an
 * installer line): a copy with cfg->state_dir written as "STATE" and each
 * local directory of cfg->deps.find_links (a path, or a file:// URL's) as
 * "WHEELHOUSE" ("Looking in links: ..." of the installer), so that no path
 * of the server reaches a client (caller frees; NULL on ENOMEM). */
char *result_redact(const char *s, size_t n, const struct exec_config *cfg, size_t *out_len);

/* The run's network record (r->network) as one line for a text result:
 * "network: 3 connections, 1.2 KiB in, 310 B out; reached www.example.org:443;
 * refused 127.0.0.1:80 (never_reachable: loopback)", the first few of each
 * list named, names reduced to printable ASCII. NULL when the run had no
 * network (mode off), or on ENOMEM. Caller frees. */
char *result_network_summary(const struct result *r);

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

#endif
