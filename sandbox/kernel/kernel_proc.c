/* kernel_proc.c: the kernel process of a kernel's host, beneath the
 * host's life (kernel_host.c) and a cell's watch (kernel_host_cell.c): its
 * start (the environment held, the channel, the jail as a session run's,
 * the hello with a pidfd of itself), its output routed to the cell's
 * worker or kept for the next cell, its memory and CPU time, its end (the
 * paths given back under the session's lock), and the host's counters and
 * the kernels' memory budget. */
#include "config.h"

#include "kernel_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "warm.h"

#define HOST_HELLO_MS 120000   /* a kernel's first word (a sanitizer build's cold start is slow) */
#define HOST_STOP_MS 2000      /* a kernel whose channel closed has this long to go */
#define HOST_SERVER_MS 2000    /* a warm kernel killed: the server's end, waited for this long */

void kernel__host_state(struct host *h)
{
    if (h->state_fd < 0)
        return;
    struct kernel_state s = {getpid(), h->cell.on, h->memory, h->last_used, h->k.cells};
    discard(kernel_state_write(h->state_fd, &s)); /* what /healthz shows: no durability needed */
}

/* ---------------------------------------------------- the kernel itself */

/* dir held (a shared lock on it, still at its name) into *fd, as a zygote
 * holds its environment: never evicted under it. */
static int hold_dir(const char *dir, int *fd)
{
    *fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*fd < 0 || flock(*fd, LOCK_SH) < 0)
        return -errno;
    struct stat a, b;
    if (fstat(*fd, &a) < 0 || stat(dir, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
        return -ENOENT;
    return 0;
}

/* The environment held while the kernel lives. */
static int hold_env(struct kproc *k, const char *env_dir)
{
    int rc = hold_dir(env_dir, &k->env_fd);
    if (rc < 0)
        return rc;
    return (k->env_dir = strdup(env_dir)) ? 0 : -ENOMEM;
}

/* The kernel's extra directory, KEY/site, empty (what an earlier kernel
 * of the workspace had added is in this one's environment), the
 * server's: the kernel only reads it. Its path into path. */
static int site_make(struct host *h, char *path, size_t n)
{
    struct kproc *k = &h->k;
    snprintf(path, n, "%s/site", h->dir);
    int rc = util_rm_rf_at(h->dir_fd, "site");
    if ((rc < 0 && rc != -ENOENT) || mkdirat(h->dir_fd, "site", 0755) < 0)
        return rc < 0 && rc != -ENOENT ? rc : -errno;
    k->site_fd = openat(h->dir_fd, "site", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (k->site_fd < 0 || fchmod(k->site_fd, 0755) < 0)
        return -errno;
    return 0;
}

/* Why the kernel started in run cannot be given packages in place, into
 * k->site_no ("" when it can). */
static void site_reach(struct kproc *k)
{
    k->site_no[0] = '\0';
    if (k->proc.mode == JAIL_MODE_RLIMITS && k->proc.landlock_abi == 0 && geteuid() != 0)
        snprintf(k->site_no, sizeof k->site_no,
                 "the kernel runs in the rlimits fallback without Landlock and as the server's own uid, so nothing "
                 "would keep it from writing a directory of packages given to it");
}

int kernel__proc_add(struct host *h, const char *env, const char *const *reqs, size_t n, struct strv *added,
                    char *why, size_t whylen)
{
    struct kproc *k = &h->k;
    if (k->site_no[0] || k->site_fd < 0) {
        snprintf(why, whylen, "%s", k->site_no[0] ? k->site_no : "the kernel has no directory for packages");
        return 1;
    }
    int fd = -1;
    int rc = hold_dir(env, &fd);
    if (rc < 0) {
        if (fd >= 0)
            close(fd);
        snprintf(why, whylen, "holding the larger environment: %s", strerror(-rc));
        return rc;
    }
    rc = deps_env_extend(k->view_dir ? k->view_dir : k->env_dir, env, k->site_fd, added, why, whylen);
    struct strv now = {0};
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = strv_push(&now, reqs[i], strlen(reqs[i]));
    char *dir = rc == 0 ? strdup(env) : NULL;
    if (rc == 0 && !dir)
        rc = -ENOMEM;
    if (rc != 0) {
        if (rc == -ENOMEM)
            snprintf(why, whylen, "out of memory");
        strv_free(&now);
        close(fd);
        return rc;
    }
    /* The kernel's environment is the larger one from now on: its next
     * cells compare with it, and a restart starts with all of it. */
    strv_free(&k->reqs);
    k->reqs = now;
    if (k->view_fd >= 0)
        close(k->view_fd);
    free(k->view_dir);
    k->view_dir = dir;
    k->view_fd = fd;
    return 0;
}

/* The kernel's hello: one byte with a pidfd of itself, then {"hello": PID}. */
static int take_hello(struct kproc *k, char *err, size_t errlen)
{
    int rc = kernel_chan_recv_fd(k->chan, HOST_HELLO_MS, &k->py_pidfd);
    json_object *o = NULL;
    if (rc == 0)
        rc = kernel_chan_recv(k->chan, HOST_HELLO_MS, 4096, &o);
    json_object *v;
    if (rc == 0 && !json_object_object_get_ex(o, "hello", &v))
        rc = -EPROTO;
    json_object_put(o);
    if (rc < 0) {
        snprintf(err, errlen, "the kernel did not start (%s)",
                 rc == -EPIPE ? "it ended at once" : rc == -ETIMEDOUT ? "no word from it" : strerror(-rc));
        return rc;
    }
    k->py_pid = util_pidfd_pid(k->py_pidfd);
    return 0;
}

/* What a kernel that did not start wrote to stderr, its last line, after
 * the reason in err. */
static void last_words(struct kproc *k, char *err, size_t errlen)
{
    char buf[4096];
    struct pollfd p = {k->err_r, POLLIN, 0};
    ssize_t n = poll(&p, 1, 200) > 0 ? read(k->err_r, buf, sizeof buf - 1) : 0;
    if (n <= 0)
        return;
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
        n--;
    buf[n] = '\0';
    char *line = strrchr(buf, '\n');
    line = line ? line + 1 : buf;
    size_t len = strlen(err), clean = 0;
    cleanup_free char *text = util_utf8_sanitize(line, strlen(line), &clean);
    if (text && len + 3 < errlen)
        snprintf(err + len, errlen - len, ": %.*s", (int)clean, text);
}

/* Starts the kernel of env_dir (requirements: the specs it was made for;
 * code: the cell that starts it). 0, or -errno with err. */
int kernel__proc_boot(struct host *h, const char *env_dir, const char *const *reqs, size_t n, const char *code,
                     size_t code_len, char *err, size_t errlen)
{
    struct kproc *k = &h->k;
    int sv[2] = {-1, -1}, op[2] = {-1, -1}, ep[2] = {-1, -1};
    memset(k, 0, sizeof *k);
    k->chan = k->out_r = k->err_r = k->py_pidfd = k->env_fd = k->view_fd = k->site_fd = -1;
    k->proc.pid = k->proc.pidfd = k->proc.status_fd = k->proc.uid_lock = -1;
    k->net = (struct exec_net){.sv = {-1, -1}, .px = {.ctl = -1, .rec = -1}};
    int rc = hold_env(k, env_dir);
    for (size_t i = 0; rc == 0 && i < n; i++)
        rc = strv_push(&k->reqs, reqs[i], strlen(reqs[i]));
    if (rc < 0) {
        snprintf(err, errlen, "holding the kernel's environment: %s", strerror(-rc));
        return rc;
    }
    char site[PATH_MAX + 8];
    if ((rc = site_make(h, site, sizeof site)) < 0) {
        snprintf(err, errlen, "the kernel's directory for packages: %s", strerror(-rc));
        return rc;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(op, O_CLOEXEC) < 0 ||
        pipe2(ep, O_CLOEXEC) < 0) {
        rc = -errno;
        snprintf(err, errlen, "the kernel's channel: %s", strerror(-rc));
        goto out;
    }
    /* The kernel is started as a session's run: its run directory job/,
     * its workspace, the limits of the cell that starts it but for the CPU
     * time (a cell's, watched here) and its time (it has none). */
    struct exec_spec spec;
    exec_spec_init(&spec, h->cfg);
    spec.limits = h->limits;
    spec.limits.cpu_ms = 0;
    spec.workspace = h->workspace;
    spec.network = h->network;
    spec.code = code;
    spec.code_len = code_len;
    struct result r;
    result_init(&r);
    snprintf(r.run_id, sizeof r.run_id, "k%.16s-%08x", h->key, (unsigned)util_now_ms());
    r.run_dir = strdup(h->job);
    r.workdir = strdup(h->workspace);
    struct run run = {.spec = &spec, .r = &r, .run_fd = h->job_fd, .out_fd = -1, .session_lock = -1,
                      .ticket = ADMIT_TICKET_INIT, .kernel = true, .site = site};
    if (!r.run_dir || !r.workdir)
        rc = -ENOMEM;
    else if ((rc = exec__net_begin(&run, &k->net)) == 0)
        rc = exec__start_script(&run, env_dir, sv[1], op[1], ep[1], NULL, &k->proc);
    if (rc < 0)
        snprintf(err, errlen, "%s", r.error ? r.error : strerror(-rc));
    /* The kernel's ends are its own: ours would hide its end. */
    close(sv[1]);
    close(op[1]);
    close(ep[1]);
    sv[1] = op[1] = ep[1] = -1;
    k->warm = r.warm;
    k->isolation = r.isolation;
    site_reach(k);
    result_free(&r);
    if (rc < 0) {
        exec__net_end(NULL, &k->net);
        goto out;
    }
    k->up = true;
    k->chan = steal_fd(&sv[0]);
    k->out_r = steal_fd(&op[0]);
    k->err_r = steal_fd(&ep[0]);
    if (util_set_nonblock(k->out_r) < 0 || util_set_nonblock(k->err_r) < 0) {
        rc = -errno;
        snprintf(err, errlen, "the kernel's output: %s", strerror(-rc));
        goto out;
    }
    rc = take_hello(k, err, errlen);
    if (rc < 0)
        last_words(k, err, errlen);
out:
    for (int i = 0; i < 2; i++) {
        if (sv[i] >= 0)
            close(sv[i]);
        if (op[i] >= 0)
            close(op[i]);
        if (ep[i] >= 0)
            close(ep[i]);
    }
    return rc;
}

/* What the kernel holds: its cgroup's counter, or where no cgroup holds it
 * the memory watch's sum (memory: past the limit, 1). */
void kernel__proc_memory(struct host *h, bool *over)
{
    struct kproc *k = &h->k;
    *over = false;
    if (!k->up)
        return;
    if (k->proc.cg_memory) {
        char path[PATH_MAX + 32];
        cleanup_free char *text = NULL;
        size_t n;
        snprintf(path, sizeof path, "%s/%s", k->proc.cg_memory, k->proc.cg_v2 ? "memory.current" : "memory.usage_in_bytes");
        if (util_read_file_at(AT_FDCWD, path, 64, &text, &n) == 0)
            h->memory = strtoull(text, NULL, 10);
        return;
    }
    uint64_t held = 0;
    int rc = jail_memory_check(&k->proc, h->limits.memory, &held);
    h->memory = held;
    if (rc > 0) {
        k->proc.memory_breached = true;
        *over = true;
    }
}

/* Reads what the kernel wrote to stdout and stderr (both non-blocking) into
 * the cell's log or the buffer between cells. */
void kernel__proc_drain(struct host *h)
{
    struct kproc *k = &h->k;
    int fds[2] = {k->out_r, k->err_r};
    char buf[65536];
    for (int i = 0; i < 2; i++) {
        for (int rounds = 0; fds[i] >= 0 && rounds < 64; rounds++) {
            ssize_t n = read(fds[i], buf, sizeof buf);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            kernel__host_output(h, i == 0 ? RESULT_STREAM_STDOUT : RESULT_STREAM_STDERR, buf, (size_t)n);
        }
    }
}

/* Whether the kernel's paths may go back to the server now: the
 * session's lock is free (taken into *fd until they have), so no call of
 * the workspace has them. A call that holds it (a session's run, a cell of
 * a kernel to come) gives them to its own uid and back itself. */
static bool may_give_back(struct host *h, int *fd)
{
    *fd = open(h->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*fd >= 0 && flock(*fd, LOCK_EX | LOCK_NB) == 0)
        return true;
    return false;
}

/* Ends the kernel (its channel closed: it exits; else it is killed), reads
 * what it left, gives back its paths (with locked the session's lock is
 * held by the worker whose cell this is; else only when the lock is free),
 * its uid, its cgroups and its environment. */
void kernel__proc_stop(struct host *h, bool locked)
{
    struct kproc *k = &h->k;
    if (!k->up)
        goto env;
    if (k->chan >= 0) {
        close(k->chan);
        k->chan = -1;
    }
    struct pollfd p = {k->proc.pidfd, POLLIN, 0};
    if (k->proc.pidfd >= 0 && !k->proc.reaped)
        discard(poll(&p, 1, HOST_STOP_MS)); /* its end, or the time */
    jail_kill_all(&k->proc);
    int st;
    struct rusage ru;
    discard(jail_try_reap(&k->proc, &st, &ru));
    kernel__proc_drain(h);
    int lock = -1;
    if (!locked && !may_give_back(h, &lock))
        jail_keep_paths(&k->proc);
    jail_proc_free(&k->proc); /* jail_finish: the paths, the uid, the cgroups */
    exec__net_end(NULL, &k->net); /* the kernel is gone: its network goes */
    if (lock >= 0)
        close(lock);
    k->up = false;
env:
    if (k->py_pidfd >= 0)
        close(k->py_pidfd);
    if (k->out_r >= 0)
        close(k->out_r);
    if (k->err_r >= 0)
        close(k->err_r);
    if (k->env_fd >= 0)
        close(k->env_fd);
    if (k->view_fd >= 0)
        close(k->view_fd);
    if (k->site_fd >= 0)
        close(k->site_fd);
    k->py_pidfd = k->out_r = k->err_r = k->env_fd = k->view_fd = k->site_fd = -1;
    free(k->env_dir);
    free(k->view_dir);
    k->env_dir = k->view_dir = NULL;
    strv_free(&k->reqs);
}

/* A warm kernel is a fork of a zygote, whose pool ends with the server
 * (and is started anew on a reload): it dies with them, killed, often
 * before the server itself is gone. The server's end is waited for a
 * little, and the pool's looked at. */
static bool went_with_server(const struct host *h)
{
    struct pollfd p = {h->server_pidfd, POLLIN, 0};
    return h->server_pidfd >= 0 && poll(&p, 1, HOST_SERVER_MS) > 0;
}

static bool went_with_pool(const struct host *h)
{
    char sock[PATH_MAX];
    return warm_sock_path(h->cfg->state_dir, sock, sizeof sock) == 0 && access(sock, F_OK) < 0;
}

/* Why the kernel ended on its own (its process gone), for the next cell. */
void kernel__proc_why_gone(const struct host *h, char *why, size_t n)
{
    const struct kproc *k = &h->k;
    int st = k->proc.wstatus;
    bool killed = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && !h->killed_it && !h->chan_lost &&
                  !k->proc.memory_breached;
    /* Killed with the server or its pool, it was not saved (an idle one
     * is saved before): said, so that this reason is told from a save's. */
    const char *unsaved = h->cell.on ? "; it was in the middle of a cell, and its names were not saved"
                                     : "; its names were not saved";
    if (killed && k->warm && went_with_server(h))
        snprintf(why, n, "the server was restarted, and the last kernel ended with it%s", unsaved);
    else if (killed && k->warm && went_with_pool(h))
        snprintf(why, n, "the warm pool the last kernel was forked from ended (the server stopped or reloaded), "
                         "and the kernel with it%s", unsaved);
    else if (h->chan_lost)
        snprintf(why, n, "a cell of the last kernel closed its channel to its host, and the kernel was stopped");
    else if (k->proc.memory_breached)
        snprintf(why, n, "the last kernel exceeded memory");
    else if (h->killed_it)
        snprintf(why, n, "the last cell did not stop within kernel_grace of its interrupt, and its kernel was killed");
    else if (WIFSIGNALED(st))
        snprintf(why, n, "the last kernel's process was killed (signal %d) from outside", WTERMSIG(st));
    else if (WIFEXITED(st))
        snprintf(why, n, "the last kernel exited (status %d)", WEXITSTATUS(st));
    else
        snprintf(why, n, "the last kernel ended");
}

void kernel__host_budget(struct host *h)
{
    const struct exec_kernels *kc = &h->cfg->kernels;
    if (!kc->memory)
        return;
    char why[160];
    snprintf(why, sizeof why, "the last kernel was stopped to keep the kernels within kernel_memory");
    int64_t wait = kc->grace_ms + h->cfg->limits.kill_grace_ms + 5000;
    for (int i = 0; i < (int)kc->max; i++) {
        uint64_t others = kernel_memory_others(h->cfg->state_dir, h->dir);
        if (others + h->memory <= kc->memory || kernel_evict_lru(h->cfg->state_dir, h->dir, why, wait) <= 0)
            return;
    }
}


void kernel__host_output(struct host *h, enum result_stream stream, const char *data, size_t len)
{
    if (h->cell.on && h->cell.peer >= 0) {
        /* One frame per chunk: the stream's byte, then the bytes. */
        char *buf = malloc(len + 1);
        int rc = buf ? 0 : -ENOMEM;
        if (rc == 0) {
            buf[0] = (char)stream;
            memcpy(buf + 1, data, len);
            rc = kernel_send(h->cell.peer, KERNEL_MSG_OUTPUT, buf, len + 1);
        }
        free(buf);
        if (rc < 0)
            h->cell.peer_failed = true; /* the cell's watch sees to it */
        return;
    }
    if (h->cell.on)
        return; /* its worker went: nobody reads this cell's log */
    /* Between cells (a thread of the user's): kept for the next cell. */
    if (h->idle_cut)
        return;
    if (h->idle_out.len + len + 2 > HOST_IDLE_OUT) {
        h->idle_cut = true;
        return;
    }
    char tag = (char)stream;
    uint32_t n = (uint32_t)len;
    if (dbuf_append(&h->idle_out, &tag, 1) < 0 || dbuf_append(&h->idle_out, &n, sizeof n) < 0 ||
        dbuf_append(&h->idle_out, data, len) < 0)
        h->idle_cut = true;
}

void kernel__host_flush_idle(struct host *h)
{
    struct dbuf *b = &h->idle_out;
    size_t at = 0;
    while (b->data && at + 5 <= b->len) {
        char tag = b->data[at];
        uint32_t n;
        memcpy(&n, b->data + at + 1, sizeof n);
        if (at + 5 + n > b->len)
            break;
        kernel__host_output(h, (enum result_stream)tag, b->data + at + 5, n);
        at += 5 + n;
    }
    static const char cut[] = "[runmyscript] more output came between the cells than is kept (64 KiB); the rest "
                              "was dropped";
    if (h->idle_cut)
        kernel__host_output(h, RESULT_STREAM_SYSTEM, cut, sizeof cut - 1);
    b->len = 0;
    h->idle_cut = false;
}

uint64_t kernel__proc_cpu(const struct host *h)
{
    char path[64];
    cleanup_free char *text = NULL;
    size_t n;
    if (h->k.py_pid <= 0)
        return 0;
    snprintf(path, sizeof path, "/proc/%d/stat", (int)h->k.py_pid);
    if (util_read_file_at(AT_FDCWD, path, 4096, &text, &n) < 0)
        return 0;
    /* After the command's closing parenthesis: state is field 3, utime
     * 14, stime 15, cutime 16, cstime 17. */
    const char *p = strrchr(text, ')');
    unsigned long long f[17] = {0};
    if (!p)
        return 0;
    p++;
    for (int i = 3; i <= 17 && *p; i++) {
        while (*p == ' ')
            p++;
        f[i - 1] = strtoull(p, (char **)&p, 10);
        if (i == 3)
            while (*p && *p != ' ')
                p++;
    }
    long tck = sysconf(_SC_CLK_TCK);
    return tck > 0 ? (f[13] + f[14] + f[15] + f[16]) * 1000 / (uint64_t)tck : 0;
}
