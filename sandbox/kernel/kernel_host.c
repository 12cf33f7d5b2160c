/* kernel_host.c: a kernel's host, the trusted process that keeps one
 * workspace's kernel alive between the requests that run its cells.
 *
 * Theory of operation. A worker that runs a workspace's first cell starts
 * the host (kernel__host_start: exec_detach, so that it is neither the
 * worker's child nor the supervisor's) and waits for its word. The host
 * takes the workspace's lock (STATE/kernels/KEY/lock: one host per
 * workspace) and a max_kernels slot (the least recently used idle kernel
 * of another workspace is stopped when none is free, and others are while
 * the kernels together hold more than kernel_memory), writes the kernel's
 * script (sandbox/jail/display.py and sandbox/kernel/kernel.py) into its
 * run directory job/, and starts it as a session's run is started
 * (exec__start_script: warm from the environment's zygote where it may,
 * else cold, or in the fallback), with fd 0 a socketpair: the channel. The
 * kernel says hello on it and sends a pidfd of itself, through which the
 * host interrupts it (SIGINT) in any mode. Then the host listens on
 * KEY/sock, and serves what its peers send (struct kernel_msg): a worker's
 * INFO, CELL, ADD and RESTART, anyone's END. An ADD puts the packages of a
 * larger environment into the kernel's extra directory, KEY/site, which
 * the kernel sees read-only (at /job/site in the jail, at its path in the
 * fallback) and has on sys.path after its environment's site-packages;
 * RESTART starts a kernel of the larger environment instead. It watches the kernel all the
 * while: its stdout and stderr (a cell's log; between cells kept for the
 * next one, up to HOST_IDLE_OUT), its end (pidfds), its memory where no
 * cgroup holds it, the server (a pidfd: the server's end is the kernel's)
 * and kernel_idle. A cell's limits are watched here (kernel_host_cell.c).
 * When the kernel ends, for whatever reason, the host says why in
 * KEY/ended, gives everything back and exits: the next cell starts a new
 * host and says that reason. */
#include "config.h"

#include "kernel_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "kernel.h"
#include "warm.h"

#define HOST_START_MS 180000   /* a worker waits this long for its host's word */
#define HOST_LOCK_POLL_MS 20   /* a host that is going, looked for this often */
#define HOST_LOCK_SLACK_MS 5000 /* and waited for this long past the kernel's grace */

static volatile sig_atomic_t host_stop;

static void on_term(int sig)
{
    (void)sig;
    host_stop = 1;
}

/* ---------------------------------------------------------------- peers */

static void peer_close(struct host *h, size_t i)
{
    if (h->cell.on && h->cell.peer == h->peers[i])
        kernel__cell_peer_gone(h);
    close(h->peers[i]);
    h->peers[i] = -1;
}

static void peer_accept(struct host *h)
{
    int c = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0)
        return;
    /* A worker that stops reading does not hold the host up for long. */
    struct timeval tv = {HOST_SEND_MS / 1000, 0};
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    for (size_t i = 0; i < HOST_PEERS; i++)
        if (h->peers[i] < 0) {
            h->peers[i] = c;
            return;
        }
    close(c); /* more than its peers at once: someone else's turn */
}

static int send_info(struct host *h, int fd)
{
    json_object *o = json_object_new_object(), *reqs = json_object_new_array();
    if (!o || !reqs) {
        json_object_put(o);
        json_object_put(reqs);
        return -ENOMEM;
    }
    for (size_t i = 0; i < h->k.reqs.n; i++)
        json_object_array_add(reqs, json_object_new_string(h->k.reqs.v[i]));
    const char *env = h->k.view_dir ? h->k.view_dir : h->k.env_dir; /* with what was added in place */
    json_object_object_add(o, "env", json_object_new_string(env ? env : ""));
    json_object_object_add(o, "requirements", reqs);
    json_object_object_add(o, "cells", json_object_new_int64((int64_t)h->k.cells));
    json_object_object_add(o, "busy", json_object_new_boolean(h->cell.on));
    json_object_object_add(o, "network", json_object_new_string(kernel_network_key(h->network)));
    int rc = kernel_send_json(fd, KERNEL_MSG_INFO, o);
    json_object_put(o);
    return rc;
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                          : NULL;
}

/* An END: the kernel goes (a running cell too with busy_too: it ends
 * cancelled), and so does the host once it has answered. */
static void on_end(struct host *h, int fd, json_object *o)
{
    const char *reason = str_of(o, "reason");
    json_object *b;
    bool busy_too = json_object_object_get_ex(o, "busy_too", &b) && json_object_get_boolean(b);
    bool save = json_object_object_get_ex(o, "save", &b) && json_object_get_boolean(b);
    bool ok = !h->cell.on || busy_too;
    json_object *a = json_object_new_object();
    if (a) {
        json_object_object_add(a, "ok", json_object_new_boolean(ok));
        discard(kernel_send_json(fd, KERNEL_MSG_ACK, a)); /* a peer gone gets nothing */
        json_object_put(a);
    }
    if (!ok)
        return;
    snprintf(h->end_reason, sizeof h->end_reason, "%s", reason && *reason ? reason : "the kernel was stopped");
    if (h->cell.on)
        kernel__cell_cancel_end(h, h->end_reason);
    h->ending = true;
    h->save_at_end = save;
}

/* A SAVE, from a worker that holds the workspace's lock: the state saved
 * now, the kernel kept; an ACK says how ({"ok", "reason", "report"}). */
static void on_save(struct host *h, int fd)
{
    json_object *report = NULL;
    char why[KERNEL_REASON_MAX];
    int rc = kernel__save(h, true, &report, why, sizeof why);
    json_object *a = json_object_new_object();
    if (a) {
        json_object_object_add(a, "ok", json_object_new_boolean(rc > 0));
        json_object_object_add(a, "reason", json_object_new_string(why));
        json_object_object_add(a, "report", report ? json_object_get(report) : NULL);
        discard(kernel_send_json(fd, KERNEL_MSG_ACK, a)); /* a worker gone gets nothing */
    }
    json_object_put(a);
    json_object_put(report);
    h->last_cell = util_now_ms(); /* a checkpoint is a use: kernel_idle counts from it */
}

/* The requirement specs of a RESTART or an ADD (borrowed from o, in an
 * array the caller frees), or NULL. */
static const char **reqs_of(json_object *o, size_t *n)
{
    json_object *reqs = NULL;
    json_object_object_get_ex(o, "requirements", &reqs);
    *n = reqs && json_object_is_type(reqs, json_type_array) ? json_object_array_length(reqs) : 0;
    const char **v = calloc(*n + 1, sizeof *v);
    for (size_t i = 0; v && i < *n; i++)
        if (!(v[i] = json_object_get_string(json_object_array_get_idx(reqs, i)))) {
            free(v);
            return NULL;
        }
    return v;
}

/* A RESTART, from the worker whose cell comes next (it holds the session's
 * lock): the kernel goes, and one of the environment given starts. */
static void on_restart(struct host *h, int fd, json_object *o)
{
    const char *env = str_of(o, "env");
    size_t n;
    const char **v = reqs_of(o, &n);
    char err[512] = "";
    int rc = env && v ? 0 : -EINVAL;
    if (rc == 0) {
        kernel__proc_stop(h, true);
        const char *code = str_of(o, "code");
        rc = kernel__proc_boot(h, env, v, n, code ? code : "", code ? strlen(code) : 0, err, sizeof err);
    }
    free(v);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "the kernel's restart: %s", err);
        snprintf(h->end_reason, sizeof h->end_reason, "the last kernel could not restart (%s)", err);
        kernel__cell_refuse(h, fd, err);
        h->ending = true;
        return;
    }
    h->last_used = util_wall_ms();
    h->killed_it = h->chan_lost = false;
    kernel__host_state(h);
}

/* An ADD, from the worker whose cell comes next: the packages of the
 * larger environment it needs put where the live kernel sees them
 * (kernel__proc_add), or why they cannot be; an ACK says which
 * ({"ok", "added", "reason"}). */
static void on_add(struct host *h, int fd, json_object *o)
{
    const char *env = str_of(o, "env");
    size_t n;
    const char **v = reqs_of(o, &n);
    struct strv added = {0};
    char why[512] = "";
    int rc = 1;
    if (h->cell.on)
        snprintf(why, sizeof why, "the kernel is still running a cell");
    else
        rc = env && v ? kernel__proc_add(h, env, v, n, &added, why, sizeof why) : -EINVAL;
    free(v);
    if (rc < 0 && !why[0])
        snprintf(why, sizeof why, "%s", strerror(-rc));
    if (rc < 0)
        log_msg(LOG_LVL_WARN, "packages for the live kernel: %s", why);
    else if (rc == 0)
        log_msg(LOG_LVL_INFO, "%zu packages added to the live kernel", added.n);
    json_object *a = json_object_new_object(), *l = json_object_new_array();
    if (a && l) {
        for (size_t i = 0; i < added.n; i++)
            json_object_array_add(l, json_object_new_string(added.v[i]));
        json_object_object_add(a, "ok", json_object_new_boolean(rc == 0));
        json_object_object_add(a, "added", steal_pointer(&l));
        json_object_object_add(a, "reason", json_object_new_string(why));
        discard(kernel_send_json(fd, KERNEL_MSG_ACK, a)); /* a worker gone gets nothing */
    }
    json_object_put(a);
    json_object_put(l);
    strv_free(&added);
    if (rc == 0)
        kernel__host_state(h);
}

static void peer_frame(struct host *h, size_t i)
{
    int fd = h->peers[i];
    char type = 0;
    cleanup_free char *data = NULL;
    size_t len;
    int rc = kernel_recv(fd, HOST_PEER_MS, KERNEL_FRAME_MAX, &type, &data, &len);
    if (rc < 0) {
        peer_close(h, i);
        return;
    }
    if (type == KERNEL_MSG_INTERRUPT) {
        if (h->cell.on && h->cell.peer == fd)
            kernel__cell_interrupt(h, KERNEL_CELL_WHY_CANCEL);
        return;
    }
    json_object *o = json_tokener_parse(data);
    if (!o || !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        peer_close(h, i);
        return;
    }
    if (type == KERNEL_MSG_INFO)
        rc = send_info(h, fd);
    else if (type == KERNEL_MSG_END)
        on_end(h, fd, o);
    else if (type == KERNEL_MSG_RESTART && !h->cell.on)
        on_restart(h, fd, o);
    else if (type == KERNEL_MSG_ADD)
        on_add(h, fd, o);
    else if (type == KERNEL_MSG_SAVE)
        on_save(h, fd);
    else if (type == KERNEL_MSG_CELL)
        kernel__cell_begin(h, fd, o);
    else
        rc = -EPROTO;
    json_object_put(o);
    if (rc < 0)
        peer_close(h, i);
}

/* ---------------------------------------------------------------- life */

static int listen_at(struct host *h)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/sock", h->dir_fd);
    unlinkat(h->dir_fd, "sock", 0);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    mode_t old = umask(077);
    int rc = bind(s, (struct sockaddr *)&a, sizeof a) < 0 || listen(s, 16) < 0 ? -errno : 0;
    umask(old);
    if (rc < 0) {
        close(s);
        return rc;
    }
    return s;
}

/* The kernel's directory: its lock (one host per workspace), job/ with the
 * kernel's script, the state file. 0 or -errno with err. */
static int host_dir(struct host *h, char *err, size_t errlen)
{
    /* Searchable, not listable: the fallback's kernel (a uid of its own as
     * root) reaches its script in job/ through them; the socket and the
     * rest are the server's alone. */
    char kdir[PATH_MAX];
    snprintf(kdir, sizeof kdir, "%s/" KERNEL_DIR, h->cfg->state_dir);
    if ((mkdir(kdir, 0711) < 0 && errno != EEXIST) || (mkdir(h->dir, 0711) < 0 && errno != EEXIST) ||
        (h->dir_fd = open(h->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        int rc = -errno;
        snprintf(err, errlen, "the kernel's directory: %s", strerror(-rc));
        return rc;
    }
    /* One host per workspace. One that is ending (a reset just before
     * this cell) lets go within a few seconds. */
    h->lock_fd = openat(h->dir_fd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    int64_t give_up = util_now_ms() + h->cfg->kernels.grace_ms + h->cfg->limits.kill_grace_ms + HOST_LOCK_SLACK_MS +
                      (h->cfg->kernels.save_bytes ? KERNEL_SAVE_MS : 0); /* (and the state it saves) */
    while (h->lock_fd >= 0 && flock(h->lock_fd, LOCK_EX | LOCK_NB) < 0 && util_now_ms() < give_up)
        usleep(HOST_LOCK_POLL_MS * 1000);
    if (h->lock_fd < 0 || flock(h->lock_fd, LOCK_EX | LOCK_NB) < 0) {
        snprintf(err, errlen, "the workspace has a kernel already");
        return -EEXIST;
    }
    /* A fresh job/ for each kernel: what the last one's fallback left in
     * its home/ and tmp/ is nothing of this one's. */
    int rc = util_rm_rf_at(h->dir_fd, "job");
    if ((rc < 0 && rc != -ENOENT) || mkdirat(h->dir_fd, "job", 0755) < 0 ||
        (h->job_fd = openat(h->dir_fd, "job", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 ||
        mkdirat(h->job_fd, "site", 0755) < 0) { /* where the jail binds KEY/site */
        rc = rc < 0 && rc != -ENOENT ? rc : -errno;
        snprintf(err, errlen, "the kernel's run directory: %s", strerror(-rc));
        return rc;
    }
    size_t n1 = strlen(jail_py_display), n2 = strlen(kernel__py_kernel);
    cleanup_free char *script = malloc(n1 + n2 + 1);
    if (!script)
        return -ENOMEM;
    memcpy(script, jail_py_display, n1);
    memcpy(script + n1, kernel__py_kernel, n2 + 1);
    if ((rc = util_write_file_new(h->job_fd, "script.py", script, n1 + n2, 0644)) < 0 ||
        (rc = util_write_file_new(h->job_fd, "input", "", 0, 0644)) < 0) {
        snprintf(err, errlen, "the kernel's script: %s", strerror(-rc));
        return rc;
    }
    h->state_fd = openat(h->dir_fd, "state", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    snprintf(h->job, sizeof h->job, "%s/job", h->dir);
    return 0;
}

/* The kernel's own tools in job/tools, beside its script (read-only in
 * the jail at /job/tools): cloudpickle, which its saves and restores use
 * where its environment has none, linked from the package store entry of
 * the environment the worker had for it. Without it the kernel saves with
 * the standard pickle, and says what that could not save. */
static void host_tools(struct host *h, const struct kernel_start *ks)
{
    if (!ks->pickler_env || !ks->base_env)
        return;
    cleanup_fd int fd = -1;
    struct strv added = {0};
    char why[512] = "";
    int rc = mkdirat(h->job_fd, "tools", 0755) < 0 ? -errno : 0;
    if (rc == 0 && (fd = openat(h->job_fd, "tools", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        rc = -errno;
    if (rc == 0)
        rc = deps_env_extend(ks->base_env, ks->pickler_env, fd, &added, why, sizeof why);
    if (rc != 0)
        log_msg(LOG_LVL_WARN, "cloudpickle for the kernel's saves: %s", why[0] ? why : strerror(-rc));
    strv_free(&added);
}

/* A max_kernels slot: a free one, or one the least recently used idle
 * kernel gives up; then room in kernel_memory. 0 or -errno with err. */
static int host_slot(struct host *h, char *err, size_t errlen)
{
    const struct exec_kernels *kc = &h->cfg->kernels;
    char why[160];
    snprintf(why, sizeof why, "the last kernel was stopped to make room for another (max_kernels = %u)", kc->max);
    int64_t wait = kc->grace_ms + h->cfg->limits.kill_grace_ms + 5000;
    for (;;) {
        h->slot_fd = kernel_slot_take(h->cfg->state_dir, kc->max);
        if (h->slot_fd >= 0)
            break;
        int rc = h->slot_fd == -EBUSY ? kernel_evict_lru(h->cfg->state_dir, h->dir, why, wait) : h->slot_fd;
        if (rc == 0) {
            snprintf(err, errlen, "all %u kernels (max_kernels) are running cells; try again", kc->max);
            return -EBUSY;
        }
        if (rc < 0) {
            snprintf(err, errlen, "a kernel slot: %s", strerror(-rc));
            return rc;
        }
    }
    if (pwrite(h->slot_fd, h->key, KERNEL_KEY_LEN, 0) != KERNEL_KEY_LEN) {
        snprintf(err, errlen, "the kernel slot: %s", strerror(errno));
        return -EIO;
    }
    kernel__host_budget(h);
    return 0;
}

/* The host's loop: its peers, the kernel's output, channel and end, the
 * server, the idle time and the cell's watch, until the kernel ends. */
static void host_loop(struct host *h)
{
    while (!h->ending && !host_stop) {
        struct pollfd p[8 + HOST_PEERS];
        size_t n = 0, peer0;
        struct kproc *k = &h->k;
        p[n++] = (struct pollfd){h->listen_fd, POLLIN, 0};
        p[n++] = (struct pollfd){h->server_pidfd, POLLIN, 0};
        p[n++] = (struct pollfd){k->out_r, POLLIN, 0};
        p[n++] = (struct pollfd){k->err_r, POLLIN, 0};
        p[n++] = (struct pollfd){k->chan, POLLIN, 0};
        p[n++] = (struct pollfd){k->py_pidfd, POLLIN, 0};
        p[n++] = (struct pollfd){k->proc.pidfd, POLLIN, 0};
        peer0 = n;
        for (size_t i = 0; i < HOST_PEERS; i++)
            p[n++] = (struct pollfd){h->peers[i], POLLIN, 0};
        int r = poll(p, n, HOST_TICK_MS);
        if (r < 0 && errno != EINTR)
            break;
        int64_t now = util_now_ms();
        if (p[1].revents) {
            snprintf(h->end_reason, sizeof h->end_reason, "the server was restarted, and the last kernel ended with it");
            h->save_at_end = true;
            break;
        }
        if (p[2].revents || p[3].revents)
            kernel__proc_drain(h);
        if (p[4].revents && h->cell.on)
            kernel__cell_answer(h);
        else if (p[4].revents && !(p[5].revents || p[6].revents))
            kernel__cell_stray(h); /* words between cells: the kernel's user wrote to its channel */
        if (p[5].revents || p[6].revents) {
            kernel__cell_kernel_gone(h);
            break;
        }
        if (p[0].revents)
            peer_accept(h);
        for (size_t i = 0; i < HOST_PEERS; i++)
            if (p[peer0 + i].revents && h->peers[i] >= 0)
                peer_frame(h, i);
        if (kernel__cell_tick(h, now))
            break;
    }
    if (host_stop && !h->end_reason[0]) {
        snprintf(h->end_reason, sizeof h->end_reason, "the kernel's host was stopped");
        h->save_at_end = true;
    }
}

/* The host's end: the kernel's (unless gone), the reason for the next
 * cell, and everything given back. */
static void host_end(struct host *h, bool locked)
{
    /* A kernel in the middle of a cell is not saved: its names are half
     * made, and it would answer the cell before the save. */
    bool save = h->save_at_end && !h->cell.on;
    if (h->save_at_end && h->cell.on) {
        /* Said, so that the next cell's reason tells a kernel that was
         * not saved from one that was (a drain's cell past drain_grace). */
        size_t n = strlen(h->end_reason);
        snprintf(h->end_reason + n, sizeof h->end_reason - n,
                 "; it was in the middle of a cell, and its names were not saved");
    }
    if (h->cell.on)
        kernel__cell_cancel_end(h, h->end_reason[0] ? h->end_reason : "the kernel ended");
    /* No peer reaches a host that is going. */
    if (h->listen_fd >= 0) {
        unlinkat(h->dir_fd, "sock", 0);
        close(h->listen_fd);
        h->listen_fd = -1;
    }
    for (size_t i = 0; i < HOST_PEERS; i++)
        if (h->peers[i] >= 0)
            close(h->peers[i]);
    if (save)
        kernel__save_at_end(h);
    kernel__proc_stop(h, locked);
    if (h->end_reason[0] && h->dir_fd >= 0 && kernel_ended_write(h->dir, h->end_reason) < 0)
        log_msg(LOG_LVL_WARN, "cannot record why the kernel ended");
    log_msg(LOG_LVL_INFO, "kernel ended: %s", h->end_reason[0] ? h->end_reason : "?");
    if (h->state_fd >= 0) {
        struct kernel_state s = {getpid(), false, 0, h->last_used, 0};
        discard(kernel_state_write(h->state_fd, &s));
        close(h->state_fd);
    }
    dbuf_free(&h->idle_out);
}

/* The detached host: fd is the pipe to the worker that waits for a line,
 * "0 warm|cold" or "-ERRNO reason". */
static int host_main(void *arg, int fd)
{
    const struct kernel_start *ks = arg;
    static struct host h;
    char err[512] = "";
    memset(&h, 0, sizeof h);
    h.cfg = ks->cfg;
    h.workspace = ks->workspace;
    h.limits = *ks->limits;
    h.network = ks->network ? strdup(ks->network) : NULL; /* (held for the host's life) */
    h.server_pidfd = 4; /* exec_detach's kept descriptor */
    h.restore = ks->restore;
    h.dir_fd = h.lock_fd = h.slot_fd = h.state_fd = h.listen_fd = h.job_fd = -1;
    h.k.chan = h.k.out_r = h.k.err_r = h.k.py_pidfd = h.k.env_fd = h.k.view_fd = h.k.site_fd = -1;
    h.k.proc.pid = h.k.proc.pidfd = h.k.proc.status_fd = h.k.proc.uid_lock = -1;
    h.cell.peer = -1;
    for (size_t i = 0; i < HOST_PEERS; i++)
        h.peers[i] = -1;
    snprintf(h.dir, sizeof h.dir, "%s", ks->dir);
    snprintf(h.key, sizeof h.key, "%s", ks->key);
    dbuf_init(&h.idle_out, HOST_IDLE_OUT + 128);
    char id[32];
    snprintf(id, sizeof id, "kernel-%.12s", h.key);
    log_set_id(id);
    prctl(PR_SET_NAME, "rms-kernel-host");
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGHUP, SIG_IGN);

    int rc = host_dir(&h, err, sizeof err);
    if (rc == 0)
        host_tools(&h, ks);
    if (rc == 0)
        rc = host_slot(&h, err, sizeof err);
    if (rc == 0 && (h.listen_fd = listen_at(&h)) < 0) {
        rc = h.listen_fd;
        snprintf(err, sizeof err, "the kernel's socket: %s", strerror(-rc));
    }
    if (rc == 0)
        rc = kernel__proc_boot(&h, ks->env_dir, ks->requirements, ks->n_requirements, ks->code, ks->code_len, err,
                              sizeof err);
    char line[640];
    if (rc < 0) {
        snprintf(line, sizeof line, "%d %s\n", rc, err);
        discard(util_write_all(fd, line, strlen(line)));
        h.end_reason[0] = '\0';
        host_end(&h, true); /* the worker that waits holds the session's lock */
        return 1;
    }
    h.last_used = util_wall_ms();
    h.last_cell = util_now_ms();
    kernel__host_state(&h);
    log_msg(LOG_LVL_INFO, "kernel started (%s, %s) for %s", h.k.warm ? "warm" : "cold", h.k.isolation, h.workspace);
    snprintf(line, sizeof line, "0 %s\n", h.k.warm ? "warm" : "cold");
    discard(util_write_all(fd, line, strlen(line)));
    close(fd);
    host_loop(&h);
    host_end(&h, false);
    return 0;
}

int kernel__host_start(const struct kernel_start *ks, bool *warm, char *err, size_t errlen)
{
    int rfd = -1;
    *warm = false;
    /* stderr kept: the host's log is the server's, as a worker's is. */
    int rc = exec_detach(host_main, (void *)ks, ks->server_pidfd, true, &rfd);
    if (rc < 0) {
        snprintf(err, errlen, "the kernel's host did not start: %s", strerror(-rc));
        return rc;
    }
    char line[640];
    size_t got = 0;
    int64_t end = util_now_ms() + HOST_START_MS;
    while (got + 1 < sizeof line && !memchr(line, '\n', got)) {
        struct pollfd p = {rfd, POLLIN, 0};
        int64_t left = end - util_now_ms();
        if (left <= 0 || poll(&p, 1, (int)left) <= 0)
            break;
        ssize_t n = read(rfd, line + got, sizeof line - 1 - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    close(rfd);
    line[got] = '\0';
    char *nl = strchr(line, '\n');
    if (!nl) {
        snprintf(err, errlen, "the kernel's host gave no word");
        return -EIO;
    }
    *nl = '\0';
    char *rest = NULL;
    long v = strtol(line, &rest, 10);
    if (rest && *rest == ' ')
        rest++;
    if (v < 0) {
        snprintf(err, errlen, "%s", rest ? rest : "the kernel did not start");
        return (int)v;
    }
    *warm = rest && !strcmp(rest, "warm");
    return 0;
}
