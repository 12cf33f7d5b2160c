/* cfg.h: the configuration: one `key = value` file, every key also
 * settable as the environment variable RUNMYSCRIPT_KEY (upper case) and on
 * the command line with --set key=value. Later sources win: defaults, file,
 * environment, --set. Unknown keys and bad values are errors, never
 * ignored. */
#ifndef RMS_CFG_H
#define RMS_CFG_H

#include <stdbool.h>
#include <stddef.h>

#include "cfg_form.h"
#include "executor.h"
#include "util.h"

/* disk_reserve: bytes, or a share of the file system in percent (one of
 * them is 0). */
struct cfg_reserve {
    uint64_t bytes;
    uint32_t pct;
};
#define CFG_RESERVE_PCT_MAX 50

/* Every key is a row of a table (cfg/cfg_keys.c, and the limits'
 * sandbox/exec_limits.c) that says which field below holds it: a key the
 * executor reads is stored once, in exec (or fetch), parsed there (its
 * enums too); the others here. The strings are owned here and lent to
 * exec. */
struct cfg {
    char *config_file;        /* the file read, or NULL */
    char *state_dir;
    char *python;
    struct cfg_reserve disk_reserve; /* new runs are refused below this much free space */
    enum log_level log_level;
    enum log_format log_format;   /* text, or a JSON object a line (and one per request) */
    /* The HTTP front doors (serve, FastCGI on stdin, CGI). */
    uint64_t workers;             /* FastCGI workers of `serve`; 0: auto (cfg_workers) */
    uint64_t max_queued_runs;     /* more that may wait for a slot; past it: busy (503) */
    bool cancel_on_disconnect;    /* a client that hangs up cancels its run */
    int64_t session_ttl_ms;       /* idle MCP sessions older than this are reaped */
    int64_t drain_grace_ms;       /* SIGTERM: in-flight requests get this long; 0: auto */
    uint64_t request_bytes;       /* largest request body (HTTP 413 past it) */
    uint64_t request_memory;      /* request bodies held at once across the state_dir's
                                   * processes; CFG_AUTO: cfg_request_memory */
    int64_t request_memory_wait_ms; /* a body waits this long for room, then 503 */
    uint64_t max_sessions;        /* open MCP sessions at once (HTTP 503 past it); workspaces too */
    uint64_t max_tasks;           /* MCP tasks kept at once (working, or finished within task_ttl) */
    int64_t task_after_ms;        /* a run of a client with the tasks extension still going
                                   * after this long becomes a task; 0: at once */
    int64_t task_ttl_ms;          /* a finished task is kept this long after its last change */
    int64_t tools_list_ttl_ms;    /* ttlMs of tools/list and server/discover (2026-07-28) */
    uint64_t image_inline_bytes;  /* image artifacts up to this many bytes in all are sent inline */
    uint64_t preview_bytes;       /* preview_file shows this many bytes at most */
    char *auth_token;             /* bearer token for /mcp and /api/; NULL: none */
    char *allowed_hosts;          /* Host and Origin host names allowed (comma-separated) */
    char *metrics_allow;          /* peer addresses or networks that may read /metrics */
    char *allowed_origins;        /* more origins (scheme://host[:port]) /mcp and /api/ accept
                                   * besides the server's own; "" none, "*" any */
    char *mount_root;             /* file:// over stdio beneath it; NULL or "": none */
    uint64_t write_bytes;         /* the cap of a file write_file puts into a workspace */
    char *public_url;             /* base of artifact links; NULL: from the request */
    char *base_path;              /* public_url's path ("/tools/rms"), "" when none: the
                                   * site is under it; derived, not a key */
    char *artifacts_prefix;       /* base_path + "/artifacts/": result URLs; derived */
    struct form_limits form;      /* /api/run multipart bodies: form_* keys */
    uint64_t cgi_sse_padding;     /* CGI: bytes of SSE comment that push events through fcgiwrap's buffer */
    uint64_t max_streams;         /* open listen streams at once (503 past it); CFG_AUTO: cfg_max_streams */
    uint64_t max_streams_per_client; /* ... of one client (429 past it); CFG_AUTO: an eighth of them */
    uint64_t stream_buffer_bytes; /* a stream with more than this waiting for its client is closed */
    int64_t stream_stall_ms;      /* ... and one whose client took nothing for this long */
    char *node_id;                /* "NODE-" before run and session ids; NULL or "": none */
    int accel_redirect;           /* 1: nginx sends artifacts (X-Accel-Redirect); 0: we do;
                                   * -1 (auto): nginx for FastCGI, we for CGI (no nginx there) */
    bool test_fixture_tools;      /* test only: the conformance suite's fixture tools */
    char *data_dir;           /* holds import-names.tsv */
    char *index_url;          /* default | none | URL */
    char *extra_index_url;    /* "" or URLs */
    char *find_links;         /* "" or directories/URLs */
    char *warm_modules;       /* "" or module paths, space- or comma-separated */
    char *fetch_allow_text;   /* fetch_allow as given ("" when none) */
    char *egress_allow;       /* "" or rules (net_rules_parse) */
    char *egress_deny;        /* "" or rules */
    struct fetch_allow fetch_allow;
    struct exec_config exec;  /* points into the strings above */
    struct fetch_config fetch; /* limits, and allow pointing at fetch_allow */
};

/* The number of FastCGI workers `serve` starts: the workers key, or when it
 * is 0, 4 + 4 x the online CPUs, and at least max_concurrent_runs +
 * max_queued_runs + CFG_SPARE_WORKERS, so that every run and queued run has
 * its worker and a few are left for other requests (see doc/serving.md). */
#define CFG_SPARE_WORKERS 2
/* max_queued_runs = auto (the default; see queue_auto in cfg.c and
 * doc/serving.md): 32 places per CPU, at least 64, within an eighth of the
 * memory at 4 MiB a queued call (its worker, its request, nginx's
 * connection: measured well below that, see doc/performance.md). */
#define CFG_AUTO KEY_AUTO /* a count key's "auto" */
#define CFG_QUEUE_PER_CPU 32
#define CFG_QUEUE_MIN 64
#define CFG_QUEUE_MEMORY_SHARE 8
#define CFG_QUEUED_CALL_BYTES (4ull << 20)
#define CFG_WORKERS_MAX 1024 /* the workers key's ceiling, and the automatic count's */
#define CFG_KERNELS_MAX 4096 /* the max_kernels key's ceiling */
unsigned cfg_workers(const struct cfg *c);
/* request_memory, with auto resolved: an eighth of the machine's memory,
 * and at least request_bytes (so that one body of the largest size fits). */
#define CFG_REQUEST_MEMORY_SHARE 8
uint64_t cfg_request_memory(const struct cfg *c);
/* max_streams = auto: CFG_STREAMS_AUTO where serve's stream process carries
 * the streams (process), else CFG_STREAMS_AUTO_HELD (each is held by a
 * process of the web server's: CGI, FastCGI on stdin); the ceiling of both
 * keys is CFG_STREAMS_MAX. max_streams_per_client = auto: an eighth of
 * max_streams, at least 1. */
#define CFG_STREAMS_AUTO 10000
#define CFG_STREAMS_AUTO_HELD 2
#define CFG_STREAMS_PER_CLIENT_SHARE 8
#define CFG_STREAMS_MAX 1000000
uint64_t cfg_max_streams(const struct cfg *c, bool process);
uint64_t cfg_max_streams_per_client(const struct cfg *c, bool process);
/* The drain grace: drain_grace, or when 0, timeout + kill_grace + 5 s. */
int64_t cfg_drain_grace_ms(const struct cfg *c);

/* Loads the configuration. file: an explicit file (must exist), or NULL to
 * look for $RUNMYSCRIPT_CONFIG, then runmyscript.conf next to the program
 * (self: argv[0]'s path, may be NULL), then SYSCONFDIR/runmyscript.conf.
 * sets: "key=value" strings from --set. On error returns -EINVAL (or
 * -errno) with a one-line reason in err naming the source (file and line,
 * variable, or --set). cfg_free() afterwards in every case. */
int cfg_load(struct cfg *c, const char *file, const char *self, const char *const *sets, size_t nsets, char *err,
             size_t errlen) must_check;
void cfg_free(struct cfg *c);

/* Sets one key from text; the same rules as the file. 0 or -EINVAL with a
 * reason in err. */
int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen) must_check;

/* Parses "60", "1.5s", "500ms", "2m", "1h" (bare numbers are seconds) into
 * milliseconds; "1048576", "64K", "1.5M", "2GiB" (binary units) into bytes.
 * 0 or -EINVAL. */
int cfg_parse_duration(const char *s, int64_t *ms) must_check;
int cfg_parse_size(const char *s, uint64_t *bytes) must_check;
int cfg_parse_bool(const char *s, bool *v) must_check;

/* Writes every key with its current value, one "key = value" line each,
 * into out (caller frees). */
char *cfg_dump(const struct cfg *c);

/* The value of key as cfg_dump prints it, into out; 0, or -ENOENT for no
 * such key (-E2BIG: cut to fit). */
int cfg_value(const struct cfg *c, const char *key, char *out, size_t n) must_check;

/* The documentation's tables of the keys (doc/configuration.md, which the
 * man page is made of), in Markdown, made from the rows: "keys" (every key
 * but the limits), "limits" (a run's) or "transfers" (a transfer's). NULL
 * for another name or no memory; caller frees. */
char *cfg_doc_table(const char *which);

/* The names of all keys, NULL-terminated (static). */
const char *const *cfg_keys(void);

#endif
