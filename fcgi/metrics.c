/* metrics.c: the table of metrics (metrics.h), a row each: its name, help,
 * type, and where its value comes from: slots of the shared counters file
 * (one per combination of its labels' values, or a histogram's buckets,
 * sum and count) or a field of struct metrics_gauges read at the scrape.
 * The counters file's layout is made from the rows, so a row added or
 * changed starts the file again from zeros (its layout hash differs), and
 * the exposition is written from the same rows. */
#include "config.h"

#include "metrics.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define METRICS_DIR ".metrics"
#define METRICS_FILE "counters"

/* ------------------------------------------------------------ the labels */

struct dim {
    const char *label;
    const char *const *values; /* NULL-terminated */
};
static const char *const routes[] = {"/mcp", "/api/run", "/api/cell", "/artifacts/", "/healthz", "/metrics", "other", NULL};
static const char *const codes[] = {"200", "201", "202", "204", "206", "304", "400", "401", "403", "404", "405", "406",
                                    "409", "410", "413", "415", "422", "429", "500", "501", "502", "503", "507", "other",
                                    NULL};
static const char *const doors[] = {"mcp", "web", NULL};
/* result_status_name's names (test-metrics checks that each is here). */
static const char *const statuses[] = {"ok", "error", "timeout", "memory", "output_limit", "install_failed",
                                       "cancelled", "sandbox_error", "workspace_limit", NULL};
static const char *const starts[] = {"cold", "warm", NULL};
static const char *const reasons[] = {"busy", "low_disk", "caps", "request_memory", "streams", NULL};

enum { D_NONE, D_ROUTE, D_CODE, D_DOOR, D_STATUS, D_START, D_REASON };
static const struct dim dims[] = {
    [D_NONE] = {NULL, NULL},
    [D_ROUTE] = {"route", routes},
    [D_CODE] = {"code", codes},
    [D_DOOR] = {"door", doors},
    [D_STATUS] = {"status", statuses},
    [D_START] = {"start", starts},
    [D_REASON] = {"reason", reasons},
};

static size_t dim_size(int d)
{
    size_t n = 0;
    if (d == D_NONE)
        return 1;
    while (dims[d].values[n])
        n++;
    return n;
}

/* The index of value among d's values; the last ("other") when absent and
 * d has one, else SIZE_MAX. */
static size_t dim_index(int d, const char *value)
{
    size_t n = dim_size(d);
    for (size_t i = 0; i < n; i++)
        if (!strcmp(dims[d].values[i], value))
            return i;
    return !strcmp(dims[d].values[n - 1], "other") ? n - 1 : SIZE_MAX;
}

/* ------------------------------------------------------------- the table */

enum kind {
    K_COUNTER,   /* counted in the file, by up to three labels */
    K_HISTOGRAM, /* counted in the file: its buckets (in ms), +Inf, the sum (ms) and the count */
    K_GAUGE,     /* a field of struct metrics_gauges */
    K_READ,      /* the same, but a counter that another part keeps (the warm pool's) */
    K_INFO,      /* runmyscript_info: 1, with the version, mode and isolation as labels */
};

#define NB_MAX 12
struct row {
    const char *name;
    enum kind kind;
    const char *help;
    int dim[3];             /* K_COUNTER */
    bool sparse;            /* K_COUNTER: combinations still at 0 are left out (most never happen) */
    int64_t le_ms[NB_MAX];  /* K_HISTOGRAM: ascending, 0 ends it */
    size_t off;             /* K_GAUGE, K_READ: the field */
};

#define G(f) .off = offsetof(struct metrics_gauges, f)

enum {
    R_REQUESTS, R_RUNS, R_CELLS, R_REFUSALS, R_WARM_MISSES, R_QUEUE_WAIT, R_INSTALL, R_SCRIPT,
};
static const struct row table[] = {
    [R_REQUESTS] = {"runmyscript_requests_total", K_COUNTER, "Requests answered, by route and HTTP status.",
                    {D_ROUTE, D_CODE}, .sparse = true},
    [R_RUNS] = {"runmyscript_runs_total", K_COUNTER,
                "Runs with a result, by front door, status and start (warm: forked from a zygote).",
                {D_DOOR, D_STATUS, D_START}, .sparse = true},
    [R_CELLS] = {"runmyscript_cells_total", K_COUNTER, "Kernel cells with a result, by front door, status and start.",
                 {D_DOOR, D_STATUS, D_START}, .sparse = true},
    [R_REFUSALS] = {"runmyscript_refusals_total", K_COUNTER,
                    "Calls turned away before they ran: busy (no run slot or queue place), low_disk (disk_reserve), "
                    "caps (max_sessions, max_tasks), request_memory, streams (max_streams).",
                    {D_REASON}},
    [R_WARM_MISSES] = {"runmyscript_warm_misses_total", K_COUNTER,
                       "Runs started cold while the warm pool was serving.", {D_NONE}},
    [R_QUEUE_WAIT] = {"runmyscript_queue_wait_seconds", K_HISTOGRAM,
                      "Time a run waited for a run slot (0 when one was free).",
                      .le_ms = {5, 50, 100, 500, 1000, 2500, 5000, 10000, 30000, 60000}},
    [R_INSTALL] = {"runmyscript_install_seconds", K_HISTOGRAM,
                   "Time a run spent installing its requirements (runs that installed).",
                   .le_ms = {100, 500, 1000, 2500, 5000, 10000, 30000, 60000, 120000, 300000}},
    [R_SCRIPT] = {"runmyscript_script_seconds", K_HISTOGRAM, "Wall time of the script of a run or a cell.",
                  .le_ms = {10, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000}},
    {"runmyscript_info", K_INFO, "The server: its version, process model and what runs get for isolation."},
    {"runmyscript_workers_busy", K_GAUGE, "FastCGI workers of serve serving a request (1 of 1 elsewhere).",
     G(workers_busy)},
    {"runmyscript_workers", K_GAUGE, "FastCGI workers of serve.", G(workers)},
    {"runmyscript_run_slots_busy", K_GAUGE, "Run slots held (scripts running) across the state directory.",
     G(slots_busy)},
    {"runmyscript_run_slots", K_GAUGE, "Run slots (max_concurrent_runs).", G(slots)},
    {"runmyscript_runs_queued", K_GAUGE, "Runs waiting for a run slot.", G(queued)},
    {"runmyscript_queue_places", K_GAUGE, "Places in the queue (max_queued_runs).", G(queue_places)},
    {"runmyscript_warm_serving", K_GAUGE, "1 while the warm pool listens for this state directory.",
     G(warm_serving)},
    {"runmyscript_warm_zygotes", K_GAUGE, "Environments with a zygote ready.", G(warm_zygotes)},
    {"runmyscript_warm_spares", K_GAUGE, "Runs' inits the ready zygotes hold made ahead (warm_spares each).",
     G(warm_spares)},
    {"runmyscript_warm_hits_total", K_READ, "Runs handed to a zygote since the warm pool started.", G(warm_hits)},
    {"runmyscript_warm_skipped_modules", K_GAUGE, "Modules a zygote could not import safely, skipped.",
     G(warm_skipped)},
    {"runmyscript_kernels_live", K_GAUGE, "Kernels alive.", G(kernels_live)},
    {"runmyscript_kernels_busy", K_GAUGE, "Kernels running a cell.", G(kernels_busy)},
    {"runmyscript_kernels_max", K_GAUGE, "max_kernels.", G(kernels_max)},
    {"runmyscript_kernels_memory_bytes", K_GAUGE, "Memory the kernels hold.", G(kernels_memory)},
    {"runmyscript_kernels_memory_max_bytes", K_GAUGE, "kernel_memory: the kernels' memory in all.",
     G(kernels_memory_max)},
    {"runmyscript_store_bytes", K_GAUGE, "Bytes on disk of the package store (STATE/store).", G(store_bytes)},
    {"runmyscript_store_files", K_GAUGE, "Inodes of the package store.", G(store_files)},
    {"runmyscript_envs_bytes", K_GAUGE, "Bytes on disk of the environments (STATE/envs).", G(envs_bytes)},
    {"runmyscript_envs_files", K_GAUGE, "Inodes of the environments.", G(envs_files)},
    {"runmyscript_run_records_bytes", K_GAUGE, "Bytes of the run records (STATE/runs), against runs_bytes.",
     G(runs_bytes)},
    {"runmyscript_run_records_files", K_GAUGE, "Inodes of the run records, against runs_files.", G(runs_files)},
    {"runmyscript_disk_free_bytes", K_GAUGE, "Free bytes of the state directory's file system.",
     G(disk_free_bytes)},
    {"runmyscript_disk_free_inodes", K_GAUGE, "Free inodes of the state directory's file system.",
     G(disk_free_inodes)},
    {"runmyscript_disk_reserve_bytes", K_GAUGE, "disk_reserve in bytes: below it new runs are refused.",
     G(disk_reserve_bytes)},
    {"runmyscript_disk_reserve_inodes", K_GAUGE, "disk_reserve in inodes.", G(disk_reserve_inodes)},
    {"runmyscript_disk_low", K_GAUGE, "1 while new runs are refused for disk_reserve.", G(disk_low)},
    {"runmyscript_streams_open", K_GAUGE, "Event streams open (subscriptions/listen).", G(streams_open)},
    {"runmyscript_streams_max", K_GAUGE, "max_streams.", G(streams_max)},
    {"runmyscript_request_memory_bytes", K_GAUGE, "Request bodies in flight, against request_memory.",
     G(request_memory)},
    {"runmyscript_request_memory_max_bytes", K_GAUGE, "request_memory.", G(request_memory_max)},
};

static size_t buckets(const struct row *r)
{
    size_t n = 0;
    while (n < NB_MAX && r->le_ms[n])
        n++;
    return n;
}

/* How many slots of the file a row takes. */
static size_t row_slots(const struct row *r)
{
    if (r->kind == K_HISTOGRAM)
        return buckets(r) + 3; /* the buckets, +Inf, the sum, the count */
    if (r->kind != K_COUNTER)
        return 0;
    return dim_size(r->dim[0]) * dim_size(r->dim[1]) * dim_size(r->dim[2]);
}

static size_t row_base(size_t ri)
{
    size_t base = 0;
    for (size_t i = 0; i < ri; i++)
        base += row_slots(&table[i]);
    return base;
}

/* The file's layout: a hash (FNV-1a) of what places the slots. */
static uint64_t layout(size_t *n)
{
    uint64_t h = 1469598103934665603ull;
    *n = 0;
    for (size_t i = 0; i < ARRAY_SIZE(table); i++) {
        const struct row *r = &table[i];
        size_t s = row_slots(r);
        if (!s)
            continue;
        char buf[512];
        int len = snprintf(buf, sizeof buf, "%s/%zu/%d.%d.%d/%lld", r->name, s, r->dim[0], r->dim[1], r->dim[2],
                           (long long)r->le_ms[0]);
        for (int k = 0; k < len && k < (int)sizeof buf; k++)
            h = (h ^ (unsigned char)buf[k]) * 1099511628211ull;
        *n += s;
    }
    return h;
}

/* ---------------------------------------------------------- the counting */

/* The mapping this process made (a cache of the file's place: the counts
 * are in the file), and the state directory it is of. */
static struct util_counters counters;
static char counters_dir[PATH_MAX];
static char last_run[WS_ID_MAX + 1];

struct util_counters *metrics_counters(const struct cfg *cfg)
{
    char path[PATH_MAX];
    if (!cfg || !cfg->state_dir ||
        (size_t)snprintf(path, sizeof path, "%s/" METRICS_DIR "/" METRICS_FILE, cfg->state_dir) >= sizeof path)
        return NULL;
    /* One stat a call: a newer program's table may have replaced the file. */
    if (counters.slot && !strcmp(counters_dir, cfg->state_dir) && util_counters_current(&counters, path))
        return &counters;
    util_counters_close(&counters);
    snprintf(counters_dir, sizeof counters_dir, "%s", cfg->state_dir);
    *strrchr(path, '/') = '\0';
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return NULL;
    strcat(path, "/" METRICS_FILE);
    size_t n;
    uint64_t lay = layout(&n);
    int rc = util_counters_open(path, lay, n, &counters);
    if (rc < 0) {
        log_msg(LOG_LVL_WARN, "metrics: cannot map %s: %s (nothing is counted)", path, strerror(-rc));
        return NULL;
    }
    return &counters;
}

static void count(const struct cfg *cfg, size_t ri, const char *v0, const char *v1, const char *v2)
{
    struct util_counters *c = metrics_counters(cfg);
    const struct row *r = &table[ri];
    const char *v[3] = {v0, v1, v2};
    size_t idx = 0;
    if (!c)
        return;
    for (int k = 0; k < 3; k++) {
        size_t i = r->dim[k] == D_NONE ? 0 : dim_index(r->dim[k], v[k] ? v[k] : "");
        if (i == SIZE_MAX)
            return; /* a value the table does not know: not counted */
        idx = idx * dim_size(r->dim[k]) + i;
    }
    util_counters_add(c, row_base(ri) + idx, 1);
}

static void observe(const struct cfg *cfg, size_t ri, int64_t ms)
{
    struct util_counters *c = metrics_counters(cfg);
    const struct row *r = &table[ri];
    if (!c)
        return;
    if (ms < 0)
        ms = 0;
    size_t nb = buckets(r), base = row_base(ri), b = 0;
    while (b < nb && ms > r->le_ms[b])
        b++;
    util_counters_add(c, base + b, 1); /* its own bucket (b == nb: +Inf); written cumulative */
    util_counters_add(c, base + nb + 1, (uint64_t)ms);
    util_counters_add(c, base + nb + 2, 1);
}

void metrics_request(const struct cfg *cfg, const char *route, int status)
{
    char code[16];
    snprintf(code, sizeof code, "%d", status);
    count(cfg, R_REQUESTS, route, code, NULL);
}

void metrics_refused(const struct cfg *cfg, enum metrics_refusal why)
{
    if ((size_t)why < ARRAY_SIZE(reasons) - 1)
        count(cfg, R_REFUSALS, reasons[why], NULL, NULL);
}

void metrics_request_begin(void)
{
    last_run[0] = '\0';
}

const char *metrics_last_run(void)
{
    return last_run;
}

/* ------------------------------------------------------------ the meter */

static void meter_phase(void *ctx, enum exec_phase phase, const char *detail)
{
    struct metrics_run *m = ctx;
    int64_t now = util_now_ms();
    if (m->phased && m->phase != phase) {
        if (m->phase == EXEC_PHASE_QUEUED)
            m->queue_ms += now - m->phase_ms;
        else if (m->phase == EXEC_PHASE_INSTALLING)
            m->install_ms += now - m->phase_ms;
    }
    if (!m->phased || m->phase != phase) {
        m->phase = phase;
        m->phase_ms = now;
    }
    m->phased = true;
    if (phase == EXEC_PHASE_INSTALLING)
        m->installed = true;
    if (m->inner->phase)
        m->inner->phase(m->inner->ctx, phase, detail);
}

/* The door's other callbacks, through the meter (the sink has one
 * context for all of them: the meter's). */
static void meter_output(void *ctx, enum result_stream stream, const char *data, size_t len)
{
    const struct exec_sink *in = ((struct metrics_run *)ctx)->inner;
    if (in->output)
        in->output(in->ctx, stream, data, len);
}

static void meter_install_line(void *ctx, const char *line)
{
    const struct exec_sink *in = ((struct metrics_run *)ctx)->inner;
    if (in->install_line)
        in->install_line(in->ctx, line);
}

static bool meter_cancelled(void *ctx)
{
    const struct exec_sink *in = ((struct metrics_run *)ctx)->inner;
    return in->cancelled ? in->cancelled(in->ctx) : false;
}

static const char *meter_cancel_reason(void *ctx)
{
    const struct exec_sink *in = ((struct metrics_run *)ctx)->inner;
    return in->cancel_reason ? in->cancel_reason(in->ctx) : NULL;
}

static int meter_accepted(void *ctx)
{
    const struct exec_sink *in = ((struct metrics_run *)ctx)->inner;
    return in->accepted ? in->accepted(in->ctx) : 0;
}

static void meter_question(void *ctx, unsigned n, const char *prompt)
{
    const struct exec_sink *in = ((struct metrics_run *)ctx)->inner;
    in->question(in->ctx, n, prompt);
}

void metrics_run_begin(struct metrics_run *m, const struct exec_sink *inner)
{
    *m = (struct metrics_run){.inner = inner};
    m->sink = (struct exec_sink){
        .ctx = m, .phase = meter_phase, .output = inner->output ? meter_output : NULL,
        .install_line = inner->install_line ? meter_install_line : NULL,
        .cancelled = inner->cancelled ? meter_cancelled : NULL,
        .cancel_reason = inner->cancel_reason ? meter_cancel_reason : NULL,
        .accepted = inner->accepted ? meter_accepted : NULL,
        .question = inner->question ? meter_question : NULL,
    };
}

void metrics_run_end(const struct cfg *cfg, struct metrics_run *m, enum metrics_door door, bool cell,
                     const struct result *r)
{
    if (r->run_id[0])
        snprintf(last_run, sizeof last_run, "%s", r->run_id);
    if (r->outcome == EXEC_OUTCOME_BUSY) {
        metrics_refused(cfg, METRICS_REFUSED_BUSY);
        return;
    }
    if (r->outcome == EXEC_OUTCOME_LOW_DISK) {
        metrics_refused(cfg, METRICS_REFUSED_LOW_DISK);
        return;
    }
    if (!r->run_id[0] || (r->outcome != EXEC_OUTCOME_DONE && r->outcome != EXEC_OUTCOME_FAILED &&
                          r->outcome != EXEC_OUTCOME_DISK_FULL))
        return; /* refused or stopped before anything ran: the request's status says it */
    if (m->phased && m->phase == EXEC_PHASE_QUEUED)
        m->queue_ms += util_now_ms() - m->phase_ms;
    count(cfg, cell ? R_CELLS : R_RUNS, doors[door], result_status_name(r->status), r->warm ? "warm" : "cold");
    observe(cfg, R_QUEUE_WAIT, m->queue_ms);
    if (m->installed)
        observe(cfg, R_INSTALL, m->install_ms);
    if (r->outcome == EXEC_OUTCOME_DONE && r->duration_ms >= 0)
        observe(cfg, R_SCRIPT, r->duration_ms);
    if (!cell && !r->warm) {
        struct exec_warm_stats ws;
        if (exec_warm_stats(cfg->state_dir, &ws) == 0 && ws.serving)
            count(cfg, R_WARM_MISSES, NULL, NULL, NULL);
    }
}

/* ----------------------------------------------------------- the writer */

/* Appends s with the characters of esc ("\\\n" or "\\\"\n") escaped. */
static int put_escaped(struct dbuf *b, const char *s, bool quote)
{
    int rc = 0;
    for (const char *p = s; *p && rc == 0; p++) {
        if (*p == '\\')
            rc = dbuf_append(b, "\\\\", 2);
        else if (*p == '\n')
            rc = dbuf_append(b, "\\n", 2);
        else if (*p == '"' && quote)
            rc = dbuf_append(b, "\\\"", 2);
        else
            rc = dbuf_append(b, p, 1);
    }
    return rc;
}

static int put(struct dbuf *b, const char *s)
{
    return dbuf_append(b, s, strlen(s));
}

int metrics_family(struct dbuf *b, const char *name, const char *type, const char *help)
{
    int rc = put(b, "# HELP ");
    if (!rc) rc = put(b, name);
    if (!rc) rc = put(b, " ");
    if (!rc) rc = put_escaped(b, help, false);
    if (!rc) rc = put(b, "\n# TYPE ");
    if (!rc) rc = put(b, name);
    if (!rc) rc = put(b, " ");
    if (!rc) rc = put(b, type);
    if (!rc) rc = put(b, "\n");
    return rc;
}

int metrics_sample(struct dbuf *b, const char *name, const char *suffix, const char *const *labels, double value)
{
    int rc = put(b, name);
    if (!rc && suffix)
        rc = put(b, suffix);
    for (size_t i = 0; !rc && labels && labels[i]; i += 2) {
        rc = put(b, i ? "," : "{");
        if (!rc) rc = put(b, labels[i]);
        if (!rc) rc = put(b, "=\"");
        if (!rc) rc = put_escaped(b, labels[i + 1] ? labels[i + 1] : "", true);
        if (!rc) rc = put(b, "\"");
        if (!rc && !labels[i + 2]) rc = put(b, "}");
    }
    char num[64];
    if (value == (double)(int64_t)value && value < 9007199254740992.0 && value > -9007199254740992.0)
        snprintf(num, sizeof num, " %lld\n", (long long)value);
    else
        snprintf(num, sizeof num, " %.17g\n", value);
    if (!rc)
        rc = put(b, num);
    return rc;
}

static const char *type_name(enum kind k)
{
    return k == K_HISTOGRAM ? "histogram" : k == K_GAUGE || k == K_INFO ? "gauge" : "counter";
}

/* A counter's samples: every combination of its labels' values. */
static int write_counter(struct dbuf *b, const struct util_counters *c, const struct row *r, size_t base)
{
    size_t n[3] = {dim_size(r->dim[0]), dim_size(r->dim[1]), dim_size(r->dim[2])};
    int rc = 0;
    for (size_t i = 0; i < n[0] * n[1] * n[2] && !rc; i++) {
        size_t at[3] = {i / (n[1] * n[2]), i / n[2] % n[1], i % n[2]};
        const char *labels[7];
        size_t l = 0;
        for (int k = 0; k < 3; k++) {
            if (r->dim[k] == D_NONE)
                continue;
            labels[l++] = dims[r->dim[k]].label;
            labels[l++] = dims[r->dim[k]].values[at[k]];
        }
        labels[l] = NULL;
        uint64_t v = util_counters_get(c, base + i);
        if (v || !r->sparse)
            rc = metrics_sample(b, r->name, NULL, labels, (double)v);
    }
    return rc;
}

static int write_histogram(struct dbuf *b, const struct util_counters *c, const struct row *r, size_t base)
{
    size_t nb = buckets(r);
    uint64_t cum = 0;
    int rc = 0;
    for (size_t i = 0; i <= nb && !rc; i++) {
        char le[32];
        if (i < nb)
            snprintf(le, sizeof le, "%g", (double)r->le_ms[i] / 1000);
        else
            snprintf(le, sizeof le, "+Inf");
        cum += util_counters_get(c, base + i);
        const char *labels[] = {"le", le, NULL};
        rc = metrics_sample(b, r->name, "_bucket", labels, (double)cum);
    }
    if (!rc)
        rc = metrics_sample(b, r->name, "_sum", NULL, (double)util_counters_get(c, base + nb + 1) / 1000);
    if (!rc)
        rc = metrics_sample(b, r->name, "_count", NULL, (double)util_counters_get(c, base + nb + 2));
    return rc;
}

int metrics_write(struct dbuf *b, const struct util_counters *c, const struct metrics_gauges *g)
{
    static const struct util_counters none;
    if (!c)
        c = &none;
    size_t base = 0;
    int rc = 0;
    for (size_t i = 0; i < ARRAY_SIZE(table) && !rc; i++) {
        const struct row *r = &table[i];
        rc = metrics_family(b, r->name, type_name(r->kind), r->help);
        if (rc)
            break;
        if (r->kind == K_COUNTER)
            rc = write_counter(b, c, r, base);
        else if (r->kind == K_HISTOGRAM)
            rc = write_histogram(b, c, r, base);
        else if (r->kind == K_INFO) {
            const char *labels[] = {"version", g->version ? g->version : "", "mode", g->mode ? g->mode : "",
                                    "isolation", g->isolation ? g->isolation : "", NULL};
            rc = metrics_sample(b, r->name, NULL, labels, 1);
        } else
            rc = metrics_sample(b, r->name, NULL, NULL, *(const double *)((const char *)g + r->off));
        base += row_slots(r);
    }
    return rc;
}
