/* metrics.h: what GET /metrics says, one table of metrics (metrics.c): the
 * counters the front doors add to as they serve (requests, runs and cells,
 * refusals, the histograms of a run's times), kept in a file of the state
 * directory that every process serving it maps (STATE/.metrics/counters,
 * util_counters), and the gauges read when /metrics is asked; and the
 * writer of the Prometheus text exposition format. */
#ifndef RMS_METRICS_H
#define RMS_METRICS_H

#include <stdbool.h>
#include <stdint.h>

#include "cfg.h"
#include "executor.h"
#include "util.h"

/* The front door a run or a cell came through (MCP over HTTP and stdio,
 * MCP tasks; the web page's /api/run and /api/cell). */
enum metrics_door { METRICS_DOOR_MCP, METRICS_DOOR_WEB };

/* Why a call was turned away before it ran (runmyscript_refusals_total). */
enum metrics_refusal {
    METRICS_REFUSED_BUSY,     /* every run slot and queue place taken */
    METRICS_REFUSED_LOW_DISK, /* the state directory's disk below disk_reserve */
    METRICS_REFUSED_CAPS,     /* max_sessions or max_tasks reached */
    METRICS_REFUSED_MEMORY,   /* no room in request_memory in time */
    METRICS_REFUSED_STREAMS,  /* max_streams or max_streams_per_client reached */
};

/* The counters file of cfg's state directory, made and mapped once per
 * process (borrowed; the counts are in the file, not here). NULL when it
 * cannot be (then nothing is counted: a request is never failed for its
 * metrics). */
struct util_counters *metrics_counters(const struct cfg *cfg);

/* Counts one request answered: route is one of the table's routes ("/mcp",
 * "/api/run", "/api/cell", "/artifacts/", "/healthz", "/metrics"; another
 * counts as "other"), status its HTTP status. */
void metrics_request(const struct cfg *cfg, const char *route, int status);
/* Counts one call turned away. */
void metrics_refused(const struct cfg *cfg, enum metrics_refusal why);

/* A run's meter: it stands between exec_run (or exec_kernel_cell) and a
 * front door's sink, to time the phases; metrics_run_end counts the
 * outcome. The inner sink is borrowed and must outlive the call. */
struct metrics_run {
    struct exec_sink sink;        /* hand this to exec_run */
    const struct exec_sink *inner;
    int64_t phase_ms;             /* when the current phase began (monotonic) */
    enum exec_phase phase;
    bool phased;                  /* a phase was seen */
    int64_t queue_ms, install_ms; /* time in the queued and installing phases */
    bool installed;               /* an installing phase was seen */
};
void metrics_run_begin(struct metrics_run *m, const struct exec_sink *inner);
/* Counts the call once it returned: a run or a cell (cell) through door,
 * by r's status and start; BUSY and LOW_DISK as refusals; the histograms
 * of the run's times. Also notes r's run id for the request's log line. */
void metrics_run_end(const struct cfg *cfg, struct metrics_run *m, enum metrics_door door, bool cell,
                     const struct result *r);

/* The run id the current request's last run had ("" when it ran none);
 * metrics_request_begin forgets it (a process serves one request at a
 * time). */
void metrics_request_begin(void);
const char *metrics_last_run(void);

/* What the gauges say, read by the route at each scrape. */
struct metrics_gauges {
    double workers_busy, workers;
    double slots_busy, slots, queued, queue_places;
    double warm_serving, warm_zygotes, warm_hits, warm_skipped, warm_spares;
    double kernels_live, kernels_busy, kernels_max, kernels_memory, kernels_memory_max;
    double store_bytes, store_files, envs_bytes, envs_files, runs_bytes, runs_files;
    double disk_free_bytes, disk_free_inodes, disk_reserve_bytes, disk_reserve_inodes, disk_low;
    double streams_open, streams_max;
    double request_memory, request_memory_max;
    const char *version, *mode, *isolation; /* runmyscript_info's labels */
};

/* The Content-Type of the exposition. */
#define METRICS_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"
/* The exposition's ceiling (its size is fixed by the table: a few KiB). */
#define METRICS_TEXT_MAX (256 * 1024)

/* Writes every metric of the table into b (dbuf_init'd by the caller, who
 * frees it): the counters from c (NULL: zeros), the gauges from g. 0,
 * -ENOMEM or -E2BIG. */
int metrics_write(struct dbuf *b, const struct util_counters *c, const struct metrics_gauges *g) must_check;

/* The writer's two pieces, for the table and its test. A family's
 * "# HELP" (\ and newline escaped) and "# TYPE" lines; a sample line:
 * name and suffix ("_bucket", "" for none), labels as name, value pairs
 * ending in NULL (values escaped: \, " and newline), the value (an
 * integer when it is one). 0, -ENOMEM or -E2BIG. */
int metrics_family(struct dbuf *b, const char *name, const char *type, const char *help) must_check;
int metrics_sample(struct dbuf *b, const char *name, const char *suffix, const char *const *labels,
                   double value) must_check;

#endif
