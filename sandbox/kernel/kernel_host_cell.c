/* kernel_host_cell.c: a cell in a kernel's host: its start (the workspace
 * given to the kernel's uid again, its start marked, the cell sent down
 * the channel), its watch at every wake-up (timeout and cpu_time, the disk
 * of output/ and the workspace, the kernel's memory all the time), its
 * interrupt (SIGINT through the kernel's pidfd: KeyboardInterrupt, and the
 * kernel killed if the cell runs on kernel_grace after), and its end: the
 * kernel's answer, or the kernel's death, made a result for the worker
 * (KERNEL_MSG_DONE). Between cells the watch ends an idle kernel. */
#include "config.h"

#include "kernel_internal.h"
#include "result.h"

#include "result_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workspace.h"

#define CELL_ANSWER_MS 2000   /* an answer the channel announced comes whole this soon */
#define CELL_REPORT_MS 1000   /* a dead kernel's init reports its end this soon */

/* The limits of a cell, as its worker sent them (by key, as the table
 * names them). */
static void limits_of(json_object *o, struct exec_limits *l)
{
    json_object *v;
    for (size_t i = 0; i < exec_limit_defs_n; i++)
        if (json_object_object_get_ex(o, exec_limit_defs[i].key, &v))
            exec_limit_set(l, &exec_limit_defs[i], (uint64_t)json_object_get_int64(v));
}

static void sys_out(void *ctx, enum result_stream stream, const char *data, size_t len)
{
    kernel__host_output(ctx, stream, data, len);
}

/* The channel's end: the kernel is gone (its pidfds say so next), or its
 * user's code closed the channel, and then the kernel can be told nothing
 * more: it is ended, which its pidfds say next too. */
static void chan_lost(struct host *h)
{
    close(h->k.chan);
    h->k.chan = -1;
    struct pollfd p = {h->k.py_pidfd, POLLIN, 0};
    if (h->k.py_pidfd >= 0 && poll(&p, 1, CELL_REPORT_MS) > 0)
        return;
    h->chan_lost = true;
    jail_kill_all(&h->k.proc);
}

static json_object *str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* What the kernel's network did during the cell: its proxy's record since
 * the cell before (taken whether the worker is there or not, so that the
 * next cell's is its own), as the result shows it; NULL without a
 * network of the kernel's own, or when the record could not be had. */
static json_object *cell_network(struct host *h)
{
    if (h->k.net.px.pid <= 0)
        return NULL;
    struct net_record rec;
    net_record_init(&rec);
    rec.mode = NET_MODE_ON;
    int rc = net_proxy_take(&h->k.net.px, &rec);
    bool oom = false;
    json_object *o = rc == 0 ? result__network_json(&rec, &oom) : NULL;
    if (rc < 0)
        log_msg(LOG_LVL_WARN, "the cell's network record: %s", strerror(-rc));
    net_record_free(&rec);
    return o;
}

/* The cell's end: its result to the worker (if it is there still), the
 * cell's state let go, the kernel idle again. */
static void cell_done(struct host *h, enum result_status status, const char *limit, int exit_code, int sig,
                      json_object *value, bool truncated, const char *error)
{
    struct cell *c = &h->cell;
    int64_t now = util_now_ms();
    json_object *o = json_object_new_object(), *net = cell_network(h);
    if (o && c->peer >= 0) {
        json_object_object_add(o, "status", json_object_new_int(status));
        json_object_object_add(o, "limit", str_or_null(limit));
        json_object_object_add(o, "exit_code", json_object_new_int(exit_code));
        json_object_object_add(o, "signal", json_object_new_int(sig));
        json_object_object_add(o, "duration_ms", json_object_new_int64(now - c->t0));
        uint64_t cpu = kernel__proc_cpu(h);
        json_object_object_add(o, "cpu_ms", json_object_new_int64(cpu > c->cpu0 ? (int64_t)(cpu - c->cpu0) : 0));
        json_object_object_add(o, "cell", json_object_new_int64((int64_t)h->k.cells));
        json_object_object_add(o, "value", value ? json_object_get(value) : NULL);
        json_object_object_add(o, "value_truncated", json_object_new_boolean(truncated));
        json_object_object_add(o, "isolation", str_or_null(h->k.isolation));
        json_object_object_add(o, "warm", json_object_new_boolean(h->k.warm));
        json_object_object_add(o, "error", str_or_null(error));
        json_object_object_add(o, "memory", json_object_new_int64((int64_t)h->memory));
        json_object_object_add(o, "restored", c->restored ? json_object_get(c->restored) : NULL);
        json_object_object_add(o, "network", json_object_get(net));
        if (kernel_send_json(c->peer, KERNEL_MSG_DONE, o) < 0)
            log_msg(LOG_LVL_INFO, "the cell's worker is gone: its result is only on disk if it wrote it");
    }
    json_object_put(o);
    json_object_put(net);
    json_object_put(c->restored);
    c->restored = NULL;
    if (c->run.out_fd >= 0)
        close(c->run.out_fd);
    if (c->run.session_lock >= 0)
        close(c->run.session_lock);
    result_free(&c->r);
    c->on = false;
    c->peer = -1;
    h->last_used = util_wall_ms();
    h->last_cell = now;
    kernel__host_state(h);
}

void kernel__cell_refuse(struct host *h, int peer, const char *err)
{
    struct cell *c = &h->cell;
    if (!c->on) {
        memset(c, 0, sizeof *c);
        result_init(&c->r);
        c->run.out_fd = c->run.session_lock = -1;
        c->t0 = util_now_ms();
        c->cpu0 = kernel__proc_cpu(h);
    }
    c->peer = peer;
    cell_done(h, RESULT_STATUS_SANDBOX_ERROR, NULL, -1, 0, NULL, false, err);
}

/* Where the kernel sees the workspace's output/: /work/output in the
 * namespaces, the workspace's own path in the fallback. */
static void out_inside(const struct host *h, char *buf, size_t n)
{
    if (h->k.proc.mode == JAIL_MODE_RLIMITS)
        snprintf(buf, n, "%s/output", h->workspace);
    else
        snprintf(buf, n, "/work/output");
}

/* What the cell's watch needs of a run: output/ (made again if a cell
 * removed it), the workspace, the kernel's run directory. */
static int cell_run(struct host *h)
{
    struct cell *c = &h->cell;
    exec_spec_init(&c->spec, h->cfg);
    c->spec.limits = c->lim;
    c->spec.workspace = h->workspace;
    result_init(&c->r);
    result_log_free(&c->r.log);
    result_log_init(&c->r.log, c->lim.log_bytes);
    c->sink = (struct exec_sink){.ctx = h, .output = sys_out};
    c->run = (struct run){.spec = &c->spec, .sink = &c->sink, .r = &c->r, .run_fd = h->job_fd, .out_fd = -1,
                          .session_lock = -1, .ticket = ADMIT_TICKET_INIT};
    c->run.session_lock = open(h->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (c->run.session_lock < 0)
        return -errno;
    if (mkdirat(c->run.session_lock, "output", 0755) == 0 && geteuid() == 0)
        discard(fchownat(c->run.session_lock, "output", h->k.proc.host_uid, h->k.proc.host_uid, AT_SYMLINK_NOFOLLOW));
    c->run.out_fd = openat(c->run.session_lock, "output", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return c->run.out_fd < 0 ? -errno : 0;
}

void kernel__cell_begin(struct host *h, int peer, json_object *o)
{
    struct cell *c = &h->cell;
    struct kproc *k = &h->k;
    if (c->on) {
        kernel__cell_refuse(h, peer, "the kernel is running another cell");
        return;
    }
    json_object *code = NULL, *lim = NULL;
    if (!json_object_object_get_ex(o, "code", &code) || !json_object_is_type(code, json_type_string) ||
        !json_object_object_get_ex(o, "limits", &lim)) {
        kernel__cell_refuse(h, peer, "a cell without code");
        return;
    }
    memset(c, 0, sizeof *c);
    c->lim = h->limits;
    limits_of(lim, &c->lim);
    /* A session run between two cells took the workspace and gave it to
     * the server: the kernel's uid gets it back before the cell's start
     * is marked (a chown changes every ctime). */
    int rc = jail_regive(&k->proc);
    if (rc == 0)
        rc = cell_run(h);
    if (rc < 0) {
        char err[160];
        snprintf(err, sizeof err, "the workspace could not be given to the kernel: %s", strerror(-rc));
        kernel__cell_refuse(h, peer, err);
        return;
    }
    exec__disk_mark(&c->run, NULL, &c->since);
    c->on = true;
    c->peer = peer;
    c->t0 = util_now_ms();
    c->deadline = c->t0 + c->lim.wall_ms;
    c->next_measure = c->t0 + HOST_MEASURE_MS;
    c->cpu0 = kernel__proc_cpu(h);
    k->cells++;
    kernel__host_state(h);
    kernel__host_flush_idle(h);
    char out[PATH_MAX + 16];
    out_inside(h, out, sizeof out);
    json_object *m = json_object_new_object();
    if (m) {
        json_object_object_add(m, "cell", json_object_new_int64((int64_t)k->cells));
        json_object_object_add(m, "code", json_object_get(code));
        json_object_object_add(m, "out", json_object_new_string(out));
        json_object_object_add(m, "limit", json_object_new_int64((int64_t)c->lim.value_bytes));
        /* Its extra directory, as it sees it: on sys.path from now on. */
        char site[PATH_MAX + 8];
        snprintf(site, sizeof site, "%s/site", k->proc.mode == JAIL_MODE_RLIMITS ? h->dir : "/job");
        if (!k->site_no[0] && k->site_fd >= 0)
            json_object_object_add(m, "site", json_object_new_string(site));
        /* The first cell of a kernel that follows a saved one restores
         * its state first (kernel.py, in the jail). */
        if (h->restore) {
            char state[PATH_MAX + 32];
            kernel__save_path(h, state, sizeof state);
            json_object_object_add(m, "restore", json_object_new_string(state));
            h->restore = false;
            if (kernel_restore_mark(h->dir, false) < 0)
                log_msg(LOG_LVL_WARN, "cannot clear the mark of the kernel's restore");
        }
    }
    /* A kernel that cannot take it is gone, or going: its pidfds say so. */
    if (!m || k->chan < 0 || kernel_chan_send(k->chan, m) < 0) {
        log_msg(LOG_LVL_WARN, "the kernel did not take its cell");
        if (k->chan >= 0)
            chan_lost(h);
    }
    json_object_put(m);
}

static const char *why_status_limit(enum kernel_cell_why why, const struct cell *c, enum result_status *st)
{
    switch (why) {
    case KERNEL_CELL_WHY_WALL:
        *st = RESULT_STATUS_TIMEOUT;
        return "wall_time";
    case KERNEL_CELL_WHY_CPU:
        *st = RESULT_STATUS_TIMEOUT;
        return "cpu_time";
    case KERNEL_CELL_WHY_CANCEL:
        *st = RESULT_STATUS_CANCELLED;
        return NULL;
    case KERNEL_CELL_WHY_OUTPUT:
        *st = RESULT_STATUS_OUTPUT_LIMIT;
        return c->limit;
    case KERNEL_CELL_WHY_WORKSPACE:
        *st = RESULT_STATUS_WORKSPACE_LIMIT;
        return c->limit;
    default:
        *st = RESULT_STATUS_ERROR;
        return NULL;
    }
}

/* The disk once the cell is over, and what a cell past a bound of it
 * wrote, removed (as a session run's). */
static void disk_end(struct host *h)
{
    struct cell *c = &h->cell;
    bool crossed = c->why == KERNEL_CELL_WHY_WORKSPACE || c->why == KERNEL_CELL_WHY_OUTPUT;
    if (!crossed) {
        const char *limit = exec__disk_over(&c->run, &h->k.proc, h->k.proc.mode == JAIL_MODE_RLIMITS, true,
                                            c->why_text, sizeof c->why_text);
        if (limit) {
            crossed = true;
            exec__system_line(&c->run, "[runmyscript] %s by the time the cell ended", c->why_text);
            c->why = !strncmp(limit, "output_", 7) ? KERNEL_CELL_WHY_OUTPUT : KERNEL_CELL_WHY_WORKSPACE;
            c->limit = limit;
        }
    }
    if (crossed)
        exec__disk_cut(&c->run, &c->since);
}

void kernel__cell_answer(struct host *h)
{
    struct cell *c = &h->cell;
    json_object *a = NULL;
    int rc = kernel_chan_recv(h->k.chan, CELL_ANSWER_MS, c->lim.value_bytes + HOST_ANSWER_SLACK, &a);
    if (rc == -EPIPE) {
        chan_lost(h);
        return;
    }
    if (rc < 0) {
        /* Not an answer: a cell that wrote to the channel. The kernel can
         * no longer be told from its user's code: it goes. */
        log_msg(LOG_LVL_WARN, "the kernel's channel: %s", strerror(-rc));
        jail_kill_all(&h->k.proc);
        return;
    }
    kernel__proc_drain(h);
    json_object *v;
    const char *st = json_object_object_get_ex(a, "status", &v) ? json_object_get_string(v) : "";
    int exit_code = json_object_object_get_ex(a, "exit_code", &v) ? json_object_get_int(v) : 1;
    json_object *value = json_object_object_get_ex(a, "value", &v) && json_object_is_type(v, json_type_string) ? v : NULL;
    bool trunc = json_object_object_get_ex(a, "value_truncated", &v) && json_object_get_boolean(v);
    /* A state restored: its report goes to the worker as the kernel made
     * it (the user's words, which the worker only passes on), and the
     * cells count on from the saved kernel's. */
    if (json_object_object_get_ex(a, "restored", &v) && json_object_is_type(v, json_type_object)) {
        c->restored = json_object_get(v);
        json_object *n;
        int64_t cell = json_object_object_get_ex(a, "cell", &n) ? json_object_get_int64(n) : 0;
        if (cell > (int64_t)h->k.cells && cell < ((int64_t)1 << 40))
            h->k.cells = (uint64_t)cell;
    }
    enum result_status status = RESULT_STATUS_OK;
    const char *limit = NULL;
    disk_end(h);
    if (!strcmp(st, "interrupted") || c->why == KERNEL_CELL_WHY_OUTPUT || c->why == KERNEL_CELL_WHY_WORKSPACE) {
        limit = why_status_limit(c->why, c, &status);
    } else if (!strcmp(st, "memory")) {
        /* An allocation past RLIMIT_AS (no cgroup holds the kernel): it
         * failed, and the kernel lives on. */
        char hs[32];
        util_human_size(h->limits.memory, hs, sizeof hs);
        exec__system_line(&c->run, "[runmyscript] the cell ran out of memory (memory = %s: an allocation failed); the "
                          "kernel and its names stay", hs);
        status = RESULT_STATUS_MEMORY;
        limit = "memory";
    } else if (strcmp(st, "ok")) {
        status = RESULT_STATUS_ERROR;
    }
    if (status == RESULT_STATUS_OK)
        exit_code = 0;
    else if (exit_code == 0)
        exit_code = 1;
    cell_done(h, status, limit, exit_code & 0xff, 0, value, trunc, NULL);
    json_object_put(a);
    kernel__host_budget(h);
}

void kernel__cell_stray(struct host *h)
{
    json_object *a = NULL;
    int rc = kernel_chan_recv(h->k.chan, CELL_ANSWER_MS, HOST_ANSWER_SLACK, &a);
    json_object_put(a);
    if (rc == -EPIPE) {
        chan_lost(h);
        return;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_WARN, "the kernel wrote to its channel between cells: it goes");
        snprintf(h->end_reason, sizeof h->end_reason, "the last kernel wrote to its own channel and was stopped");
        h->ending = true;
    }
}

void kernel__cell_kernel_gone(struct host *h)
{
    struct cell *c = &h->cell;
    struct kproc *k = &h->k;
    kernel__proc_drain(h);
    /* The kernel's init reports how its script ended, then goes: that
     * report first (a kill now would take its place), then the rest. */
    int st;
    struct rusage ru;
    struct pollfd p = {k->proc.pidfd, POLLIN, 0};
    if (!h->killed_it && k->proc.pidfd >= 0)
        discard(poll(&p, 1, CELL_REPORT_MS));
    discard(jail_try_reap(&k->proc, &st, &ru));
    jail_kill_all(&k->proc);
    /* The worker whose cell this is holds the session's lock. */
    kernel__proc_stop(h, c->on);
    char why[KERNEL_REASON_MAX];
    kernel__proc_why_gone(h, why, sizeof why);
    if (!h->end_reason[0])
        snprintf(h->end_reason, sizeof h->end_reason, "%s", why);
    if (!c->on)
        return;
    int wst = k->proc.wstatus;
    int sig = WIFSIGNALED(wst) ? WTERMSIG(wst) : 0;
    int code = WIFEXITED(wst) ? WEXITSTATUS(wst) : -1;
    enum result_status status;
    const char *limit = NULL;
    char err[KERNEL_REASON_MAX + 64];
    if (k->proc.memory_breached) {
        char hs[32];
        util_human_size(h->limits.memory, hs, sizeof hs);
        exec__system_line(&c->run, "[runmyscript] the kernel used up its memory limit (memory = %s) and was killed; "
                          "the next cell starts a new kernel, with the workspace's files", hs);
        cell_done(h, RESULT_STATUS_MEMORY, "memory", -1, sig, NULL, false, NULL);
        return;
    }
    if (h->chan_lost) {
        cell_done(h, RESULT_STATUS_ERROR, NULL, -1, sig, NULL, false,
                  "the cell closed its kernel's channel to the host, and the kernel was stopped; the next cell starts "
                  "a new kernel, with the workspace's files");
        return;
    }
    if (h->killed_it) {
        limit = why_status_limit(c->why, c, &status);
        exec__system_line(&c->run, "[runmyscript] the cell did not stop within kernel_grace of its interrupt: the "
                          "kernel was killed; the next cell starts a new kernel, with the workspace's files");
        snprintf(err, sizeof err, "the cell ignored its interrupt and its kernel was killed: the names of the cells "
                 "before are gone, the files stay");
        cell_done(h, status, limit, -1, sig, NULL, false, err);
        return;
    }
    if (sig) {
        snprintf(err, sizeof err, "the kernel's process was killed (signal %d) while the cell ran; the next cell "
                 "starts a new kernel, with the workspace's files", sig);
        cell_done(h, RESULT_STATUS_SANDBOX_ERROR, NULL, -1, sig, NULL, false, err);
        return;
    }
    snprintf(err, sizeof err, "the kernel exited (status %d) while the cell ran; the next cell starts a new kernel, "
             "with the workspace's files", code);
    cell_done(h, RESULT_STATUS_ERROR, NULL, code, 0, NULL, false, err);
}

void kernel__cell_interrupt(struct host *h, enum kernel_cell_why why)
{
    struct cell *c = &h->cell;
    if (!c->on || c->kill_at)
        return; /* the first reason stands */
    c->why = why;
    c->kill_at = util_now_ms() + h->cfg->kernels.grace_ms;
    const struct exec_limits *l = &c->lim;
    if (why == KERNEL_CELL_WHY_WALL)
        exec__system_line(&c->run, "[runmyscript] the cell passed its time limit (timeout = %.3g s) and was interrupted",
                          (double)l->wall_ms / 1000.0);
    else if (why == KERNEL_CELL_WHY_CPU)
        exec__system_line(&c->run, "[runmyscript] the cell used up its CPU time (cpu_time = %.3g s) and was interrupted",
                          (double)l->cpu_ms / 1000.0);
    else if (why == KERNEL_CELL_WHY_CANCEL)
        exec__system_line(&c->run, "[runmyscript] the cell was cancelled and interrupted");
    else
        exec__system_line(&c->run, "[runmyscript] %s; the cell was interrupted", c->why_text);
    if (syscall(SYS_pidfd_send_signal, h->k.py_pidfd, SIGINT, NULL, 0) < 0)
        log_msg(LOG_LVL_WARN, "interrupting the kernel: %s", strerror(errno));
}

void kernel__cell_peer_gone(struct host *h)
{
    struct cell *c = &h->cell;
    c->peer = -1;
    c->peer_failed = false;
    kernel__cell_interrupt(h, KERNEL_CELL_WHY_CANCEL);
}

void kernel__cell_cancel_end(struct host *h, const char *reason)
{
    struct cell *c = &h->cell;
    if (!c->on)
        return;
    kernel__proc_drain(h);
    exec__system_line(&c->run, "[runmyscript] %s while the cell ran", reason);
    char err[KERNEL_REASON_MAX + 32];
    snprintf(err, sizeof err, "%s while the cell ran", reason);
    cell_done(h, RESULT_STATUS_CANCELLED, NULL, -1, 0, NULL, false, err);
}

/* The cell's limits at a wake-up: the deadline, the CPU time, the disk
 * (every HOST_MEASURE_MS), and past its interrupt's grace the kill. */
static bool cell_watch(struct host *h, int64_t now)
{
    struct cell *c = &h->cell;
    if (c->peer_failed)
        kernel__cell_peer_gone(h);
    if (c->kill_at) {
        if (now < c->kill_at)
            return false;
        h->killed_it = true;
        jail_kill_all(&h->k.proc);
        kernel__cell_kernel_gone(h);
        return true;
    }
    if (now >= c->deadline) {
        kernel__cell_interrupt(h, KERNEL_CELL_WHY_WALL);
        return false;
    }
    uint64_t cpu = kernel__proc_cpu(h);
    if (c->lim.cpu_ms && cpu > c->cpu0 && cpu - c->cpu0 >= (uint64_t)c->lim.cpu_ms) {
        kernel__cell_interrupt(h, KERNEL_CELL_WHY_CPU);
        return false;
    }
    if (now < c->next_measure)
        return false;
    c->next_measure = now + HOST_MEASURE_MS;
    const char *limit =
        exec__disk_over(&c->run, &h->k.proc, h->k.proc.mode == JAIL_MODE_RLIMITS, true, c->why_text, sizeof c->why_text);
    if (limit) {
        c->limit = limit;
        kernel__cell_interrupt(h, !strncmp(limit, "output_", 7) ? KERNEL_CELL_WHY_OUTPUT : KERNEL_CELL_WHY_WORKSPACE);
    }
    return false;
}

bool kernel__cell_tick(struct host *h, int64_t now)
{
    if (now >= h->next_memory) {
        bool over = false;
        uint64_t was = h->memory;
        h->next_memory = now + JAIL_MEMORY_WATCH_MS;
        kernel__proc_memory(h, &over);
        /* What /healthz shows: written when it moved by a MiB. */
        if (h->memory > was + MIB || h->memory + MIB < was)
            kernel__host_state(h);
        if (over) {
            log_msg(LOG_LVL_INFO, "the kernel holds %llu bytes, past memory: killed", (unsigned long long)h->memory);
            jail_kill_all(&h->k.proc);
            kernel__cell_kernel_gone(h);
            return true;
        }
    }
    if (h->cell.on)
        return cell_watch(h, now);
    int64_t idle = h->cfg->kernels.idle_ms;
    if (idle > 0 && now - h->last_cell > idle) {
        char hs[32];
        snprintf(hs, sizeof hs, "%.3g s", (double)idle / 1000.0);
        snprintf(h->end_reason, sizeof h->end_reason,
                 "the last kernel had no cell for kernel_idle (%s) and was stopped", hs);
        h->save_at_end = true;
        return true;
    }
    return false;
}
