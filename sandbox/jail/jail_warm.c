/* jail_warm.c: the worker's side of a warm start (jail_start_warm): the
 * run's uid slot, paths and cgroups as for a cold start, its binds as
 * detached mount trees, the request to the pool with every descriptor the
 * run needs, then the zygote's fork (a pidfd of the run's init) into the
 * cgroups, the seccomp filter, and the wait for the script's start. Also a
 * warm run's operations (struct jail_ops: its signal, reap and kill), which
 * go through its pidfd: the run is the zygote's child, not ours.
 * jail_zygote.c is the other side. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* Waits for fd to be readable, at most ms (< 0: for ever; past INT32_MAX:
 * INT32_MAX). 1, 0 on time out, -errno. */
static int wait_in(int fd, int64_t ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    int r;
    do
        r = poll(&p, 1, ms > INT32_MAX ? INT32_MAX : (int)ms);
    while (r < 0 && errno == EINTR);
    return r < 0 ? -errno : r;
}

/* --------------------------------------------- a warm run's operations */

/* A warm run is the zygote's child, not ours: it is reached through its
 * pidfd alone. */
static int warm_signal(struct jail_proc *p, int sig)
{
    return syscall(SYS_pidfd_send_signal, p->pidfd, sig, NULL, 0) < 0 ? -errno : 0;
}

/* 1 once the run's init has ended (with kill: SIGKILL first and a wait),
 * p->reaped and the status set; 0 while it runs; -errno. */
static int warm_reap(struct jail_proc *p, bool kill)
{
    if (kill)
        discard(warm_signal(p, SIGKILL));
    int r = wait_in(p->pidfd, kill ? -1 : 0);
    if (r <= 0)
        return r;
    /* The run's init is gone, and with it (the kernel waits for them when
     * a PID namespace's init exits) every process of the run. */
    struct rusage none;
    memset(&none, 0, sizeof none);
    p->reaped = true;
    jail__read_status(p, SIGKILL, &none);
    return 1;
}

static int warm_try_reap(struct jail_proc *p)
{
    return warm_reap(p, false);
}

static int warm_kill_all(struct jail_proc *p)
{
    if (!p->reaped)
        discard(warm_reap(p, true));
    return 0;
}

static const struct jail_ops warm_ops = {warm_signal, warm_try_reap, warm_kill_all};

/* -------------------------------------------------------- a warm start */

/* A bind as a detached copy of its mount, with its flags: the zygote's
 * fork moves it into its own mount namespace. Private: the copy would
 * otherwise join the peer group of a shared host mount, and a mount made
 * on one side would appear on the other. An fd or -errno. */
static int bind_tree(const struct jail_bind *b)
{
    cleanup_fd int src = open(b->host, O_PATH | O_DIRECTORY | O_CLOEXEC | ((b->flags & JAIL_BIND_NOFOLLOW) ? O_NOFOLLOW : 0));
    if (src < 0)
        return -errno;
    int t = (int)syscall(SYS_open_tree, src, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
    if (t < 0)
        return -errno;
    struct mount_attr a = {.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
                                       ((b->flags & JAIL_BIND_RW) ? 0 : MOUNT_ATTR_RDONLY),
                           .propagation = MS_PRIVATE};
    if (syscall(SYS_mount_setattr, t, "", AT_EMPTY_PATH, &a, sizeof a) < 0) {
        int e = errno;
        close(t);
        return -e;
    }
    return t;
}

/* The bind of o that goes to q's bind `inside`. */
static const struct jail_bind *bind_of(const struct jail_opts *o, const char *inside)
{
    for (size_t k = 0; k < o->n_binds; k++)
        if (!strcmp(o->binds[k].inside, inside))
            return &o->binds[k];
    return NULL;
}

/* The trees of q's binds, into trees, in q's order. Returns how many were
 * made before the first that failed (-errno in *e for it). */
static uint32_t trees_here(const struct jail_opts *o, const struct jail_warm_req *q, int *trees, int *e)
{
    *e = 0;
    for (uint32_t i = 0; i < q->n_binds; i++) {
        const struct jail_bind *b = bind_of(o, q->binds[i].inside);
        trees[i] = b ? bind_tree(b) : -EINVAL;
        if (trees[i] < 0) {
            *e = trees[i];
            return i;
        }
    }
    return q->n_binds;
}

/* What the child of trees_unprivileged sends back with the trees. */
struct trees_reply {
    int32_t err;     /* 0, or the -errno of bind `failed` */
    uint32_t failed; /* the bind at fault; n_binds: the namespaces */
    uint32_t made;   /* trees in the message */
};

/* The trees, made by a server that is not root: open_tree can clone a
 * mount only with CAP_SYS_ADMIN over the mount namespace it is in, which
 * only the host's root has over the host's. So a short-lived child makes
 * a user and mount namespace of its own (a copy of ours: the same paths,
 * the same files), clones the binds there, and sends the trees back; a
 * detached tree is moved into the run's namespace wherever it was made.
 * The child's namespace needs no uid map: it is created with every
 * capability in it, and its files are checked against our own uid as
 * always. The trees are bind_tree's, as root's: read-only (but the
 * workspace), nosuid, nodev, private. 0, or -errno with *failed the bind
 * at fault (q->n_binds: the namespaces or the child). */
static int trees_unprivileged(const struct jail_opts *o, const struct jail_warm_req *q, int *trees,
                              uint32_t *failed, int64_t wait_ms)
{
    int sv[2];
    *failed = q->n_binds;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sv[0]);
        close(sv[1]);
        return -e;
    }
    if (pid == 0) {
        /* A copy of the worker: system calls only, then _exit. */
        struct trees_reply r = {0, q->n_binds, 0};
        int made[JAIL_WARM_BINDS];
        close(sv[0]);
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
            r.err = -errno;
        else
            r.made = r.failed = trees_here(o, q, made, &r.err);
        _exit(jail__send_fds(sv[1], &r, sizeof r, made, r.made) < 0);
    }
    close(sv[1]);
    struct trees_reply r = {-EPIPE, q->n_binds, 0};
    int fds[JAIL_WARM_NFDS];
    size_t nfds = 0;
    int rc = wait_in(sv[0], wait_ms);
    ssize_t n = rc > 0 ? jail__recv_fds(sv[0], &r, sizeof r, fds, &nfds) : rc == 0 ? -ETIMEDOUT : rc;
    close(sv[0]);
    if (n != (ssize_t)sizeof r || nfds != r.made || r.made > q->n_binds || r.failed > q->n_binds ||
        (r.err == 0 && r.made != q->n_binds)) {
        /* It died, hung or said nonsense: none of it is used. */
        kill(pid, SIGKILL);
        r = (struct trees_reply){n < 0 ? (int32_t)n : n == 0 ? -EPIPE : -EPROTO, q->n_binds, 0};
    }
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    for (size_t i = 0; i < nfds; i++) {
        if (r.err == 0)
            trees[i] = fds[i];
        else
            close(fds[i]);
    }
    *failed = r.failed;
    return r.err;
}

/* Copies NUL-terminated strings into a \0-separated list ending in \0\0.
 * 0, or -E2BIG (cut: what fits is kept). */
static int pack(char *dst, size_t cap, const char *const *v, size_t n, bool cut)
{
    size_t at = 0;
    for (size_t i = 0; i < n && v[i]; i++) {
        size_t l = strlen(v[i]) + 1;
        if (at + l + 1 > cap && cut)
            break;
        if (at + l + 1 > cap)
            return -E2BIG;
        memcpy(dst + at, v[i], l);
        at += l;
    }
    dst[at] = '\0';
    return 0;
}

static size_t count_env(const char *const *envp)
{
    size_t n = 0;
    while (envp[n])
        n++;
    return n;
}

/* The request, from o: -EINVAL when o is not something a zygote can
 * start (binds it has no place for), -E2BIG when it does not fit. */
static int make_req(const struct jail_opts *o, struct jail_warm_req *q, const char *const *imports, size_t n,
                    const char **env_dir)
{
    memset(q, 0, sizeof *q);
    q->magic = JAIL_WARM_MAGIC;
    q->network = o->network;
    q->own_net = o->net_sock > 0;
    q->set_groups = geteuid() == 0;
    snprintf(q->tmp_opts, sizeof q->tmp_opts, "size=%llu,nr_inodes=%llu,mode=1777",
             (unsigned long long)o->limits->tmp_bytes, (unsigned long long)o->limits->tmp_files);
    *env_dir = NULL;
    for (size_t i = 0; i < o->n_binds; i++) {
        const struct jail_bind *b = &o->binds[i];
        if (!strcmp(b->inside, "/env") && !(b->flags & JAIL_BIND_RW)) {
            *env_dir = b->host;
            continue;
        }
        if ((b->flags & JAIL_BIND_ENV) && !(b->flags & JAIL_BIND_RW))
            continue; /* the zygote's root holds the environment's entries */
        /* The zygote's root has these places to mount on, and nothing else
         * (/job/site: a kernel's extra directory, on a directory of /job). */
        if ((strcmp(b->inside, "/work") && strcmp(b->inside, "/job") && strncmp(b->inside, "/work/", 6) &&
             strcmp(b->inside, "/job/site")) ||
            q->n_binds == JAIL_WARM_BINDS || strlen(b->inside) >= sizeof q->binds[0].inside)
            return -EINVAL;
        q->job = q->job || !strcmp(b->inside, "/job");
        struct jail_warm_bind *wb = &q->binds[q->n_binds++];
        snprintf(wb->inside, sizeof wb->inside, "%s", b->inside);
        wb->nofollow = (b->flags & JAIL_BIND_NOFOLLOW) != 0;
    }
    if (!*env_dir || !o->argv[0] || !o->argv[1] || o->argv[2] || strlen(*env_dir) >= sizeof q->env_dir)
        return -EINVAL;
    snprintf(q->env_dir, sizeof q->env_dir, "%s", *env_dir);
    q->value_limit = o->value_limit;
    if (snprintf(q->script, sizeof q->script, "%s", o->argv[1]) >= (int)sizeof q->script ||
        snprintf(q->value_file, sizeof q->value_file, "%s", o->value_file ? o->value_file : "") >=
            (int)sizeof q->value_file ||
        snprintf(q->cwd, sizeof q->cwd, "%s", o->cwd) >= (int)sizeof q->cwd ||
        snprintf(q->stdin_inside, sizeof q->stdin_inside, "%s", o->stdin_inside ? o->stdin_inside : "") >=
            (int)sizeof q->stdin_inside)
        return -E2BIG;
    int rc = pack(q->env, sizeof q->env, o->envp, count_env(o->envp), false);
    /* The imports only teach the pool: as many as fit. */
    if (rc == 0)
        rc = pack(q->imports, sizeof q->imports, imports, imports ? n : 0, true);
    return rc;
}

/* A connection to the pool: an fd, or -EAGAIN when none listens (no
 * server serves this state directory), before any work is done for it. */
static int pool_connect(const char *pool_sock)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (snprintf(a.sun_path, sizeof a.sun_path, "%s", pool_sock) >= (int)sizeof a.sun_path)
        return -ENAMETOOLONG;
    int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
        close(s);
        return -EAGAIN;
    }
    return s;
}

/* The request to the pool; its answer. 0 when a zygote took it, -EAGAIN
 * when none did, -errno. */
static int ask_pool(int s, const struct jail_warm_req *q, const int *fds, size_t nfds, int64_t wait_ms, char *err,
                    size_t errlen)
{
    int rc = jail__send_fds(s, q, sizeof *q, fds, nfds);
    if (rc < 0)
        return rc;
    rc = wait_in(s, wait_ms);
    char b = 0;
    ssize_t n = rc > 0 ? read(s, &b, 1) : 0;
    if (n != 1 || b != 'F')
        snprintf(err, errlen, "%s", rc == 0 ? "the pool did not answer within warm_wait"
                                    : rc < 0 || n < 0 ? "the pool's answer could not be read"
                                    : n == 0 ? "the pool closed the request unanswered"
                                             : "no zygote was ready");
    return n == 1 && b == 'F' ? 0 : -EAGAIN;
}

struct warm_fds {
    int err[2], st[2], go[2], ctl[2];
    int trees[JAIL_WARM_BINDS];
    size_t n_trees;
    int cg_tasks[JAIL_CG_TASKS]; /* the run's init moves itself with them */
    size_t n_cg_tasks;
};

static void warm_fds_close(struct warm_fds *w)
{
    int *all[] = {w->err, w->st, w->go, w->ctl};
    for (size_t i = 0; i < ARRAY_SIZE(all); i++)
        for (int k = 0; k < 2; k++)
            if (all[i][k] >= 0) {
                close(all[i][k]);
                all[i][k] = -1;
            }
    for (size_t i = 0; i < w->n_trees; i++)
        if (w->trees[i] >= 0)
            close(w->trees[i]);
    w->n_trees = 0;
    for (size_t i = 0; i < w->n_cg_tasks; i++)
        close(w->cg_tasks[i]);
    w->n_cg_tasks = 0;
}

/* The run's init, forked by the zygote: its pidfd into p, into the
 * cgroups, the filter, and the script's start. 0 or -errno with err. */
static int take_run(const struct jail_opts *o, struct jail_proc *p, struct warm_fds *w, int64_t wait_ms, char *err,
                    size_t errlen)
{
    int64_t t0 = util_now_ms();
    int rc = wait_in(w->ctl[0], wait_ms);
    int fds[1];
    size_t nfds = 0;
    char b;
    if (rc > 0)
        rc = (int)jail__recv_fds(w->ctl[0], &b, 1, fds, &nfds);
    if (rc <= 0 || nfds != 1) {
        struct jail_child_error ce;
        if (wait_in(w->err[0], 0) > 0 && jail__read_child_error(w->err[0], &ce)) {
            jail__format_child_error(&ce, err, errlen);
            return ce.err ? -ce.err : -EIO;
        }
        snprintf(err, errlen, "the zygote did not fork the run in time");
        for (size_t i = 0; i < nfds; i++)
            close(fds[i]);
        return -ETIMEDOUT;
    }
    p->pidfd = fds[0];
    p->pid = util_pidfd_pid(p->pidfd);
    if (p->pid <= 0) {
        snprintf(err, errlen, "the run's init has no pid here");
        return -ESRCH;
    }
    int64_t t1 = util_now_ms();
    const struct sock_fprog *prog = jail__ready(o, p, w->n_cg_tasks > 0, &rc, err, errlen);
    int64_t t2 = util_now_ms();
    if (!prog)
        return rc;
    uint32_t n = prog->len;
    if (util_write_all(w->go[1], "g", 1) < 0 || util_write_all(w->go[1], &n, sizeof n) < 0 ||
        util_write_all(w->go[1], prog->filter, n * sizeof prog->filter[0]) < 0)
        n = 0; /* the run's init gave up: its report says why */
    close(w->go[1]);
    w->go[1] = -1;
    struct jail_child_error ce;
    if (jail__read_child_error(w->err[0], &ce)) {
        jail__format_child_error(&ce, err, errlen);
        return ce.err ? -ce.err : -EIO;
    }
    if (n == 0) {
        snprintf(err, errlen, "the run's init went away");
        return -EPIPE;
    }
    log_msg(LOG_LVL_DEBUG, "timing: warm fork %lld ms, cgroups and filter %lld ms, start %lld ms", (long long)(t1 - t0),
            (long long)(t2 - t1), (long long)(util_now_ms() - t2));
    return 0;
}

/* Who the run is, as for a cold start (jail.c: ns_identity): as root a
 * uid slot of its own and its paths given to it, unprivileged our uid
 * (the zygote's 0); its start mark, cgroups (and their tasks files, for
 * the run's init) and rlimits. 0 or -errno with err. */
static int warm_identity(const struct jail_opts *o, struct jail_proc *p, struct jail_warm_req *q, struct warm_fds *w,
                         char *err, size_t errlen)
{
    bool root_user = geteuid() == 0;
    int rc;
    if (root_user) {
        if ((rc = jail__take_uid(o, p, err, errlen)) < 0 || (rc = jail__give_paths(o, p, err, errlen)) < 0)
            return rc;
        q->run_uid = p->host_uid - o->uid_base;
    } else {
        p->host_uid = geteuid();
        q->run_uid = 0;
    }
    jail__mark_take(o);
    jail__cg_setup(p, o);
    if ((rc = jail__cg_tasks_open(p, w->cg_tasks)) < 0) {
        snprintf(err, errlen, "opening the run's cgroups: %s", strerror(-rc));
        return rc;
    }
    w->n_cg_tasks = (size_t)rc;
    q->n_cg_tasks = (uint32_t)rc;
    bool no_as = p->cg_memory != NULL;
#ifdef __SANITIZE_ADDRESS__
    /* A sanitizer build's zygote is this program, instrumented: the run's
     * allocations are the sanitizer's, whose reserved shadow counts
     * against RLIMIT_AS, so under it none would succeed. The watch alone
     * holds memory there (a cgroup where there is one); a real build's
     * zygote is not instrumented and gets RLIMIT_AS as a cold run does. */
    no_as = true;
#endif
    q->nrows = (uint32_t)jail__build_rlimits(o->limits, no_as, 0, q->rows);
    return 0;
}

int jail_start_warm(const struct jail_opts *o, const char *pool_sock, const char *const *imports, size_t n,
                    int64_t wait_ms, struct jail_proc *p, char *err, size_t errlen)
{
    static struct jail_warm_req q; /* large: not on the stack */
    struct warm_fds w = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}, {-1}, 0};
    const char *env_dir;
    cleanup_fd int pool = -1;
    int rc;

    memset(p, 0, sizeof *p);
    p->mode = JAIL_MODE_NAMESPACES;
    p->ops = &warm_ops;
    p->pid = p->pidfd = p->status_fd = p->uid_lock = -1;
    bool root_user = geteuid() == 0;
    if (o->mode != JAIL_MODE_NAMESPACES || o->zygote) {
        snprintf(err, errlen, "warm starts need the namespaces");
        return -ENOTSUP;
    }
    rc = make_req(o, &q, imports, n, &env_dir);
    if (rc < 0) {
        snprintf(err, errlen, "this run does not fit a zygote: %s", strerror(-rc));
        return rc;
    }
    int64_t ts = util_now_ms();
    /* No work for a run when no pool listens. The request's connection is
     * made again once the request is ready: the pool gives a connection
     * only WARM_CLIENT_MS to send it, less than the work below may take on
     * a loaded machine (a closed request would make the run cold). */
    pool = pool_connect(pool_sock);
    if (pool < 0) {
        snprintf(err, errlen, "no pool: %s", strerror(-pool));
        return pool;
    }
    close(pool);
    pool = -1;
    if ((rc = warm_identity(o, p, &q, &w, err, errlen)) < 0)
        goto out;
    uint32_t failed = q.n_binds;
    int64_t tt = util_now_ms();
    if (root_user) {
        w.n_trees = failed = trees_here(o, &q, w.trees, &rc);
        /* Root without CAP_SYS_ADMIN over this mount namespace (a
         * container's root) may not clone a mount either: its trees are
         * made as another user's are, in a namespace of their own. */
        if (rc == -EPERM) {
            for (size_t i = 0; i < w.n_trees; i++)
                close(w.trees[i]);
            w.n_trees = 0;
            root_user = false;
        }
    }
    if (!root_user) {
        rc = trees_unprivileged(o, &q, w.trees, &failed, wait_ms);
        w.n_trees = rc == 0 ? q.n_binds : 0;
    }
    if (rc < 0) {
        if (failed < q.n_binds)
            snprintf(err, errlen, "the bind of %s: %s", q.binds[failed].inside, strerror(-rc));
        else
            snprintf(err, errlen, "a mount namespace for the binds: %s", strerror(-rc));
        goto out;
    }
    log_msg(LOG_LVL_DEBUG, "timing: warm trees %lld ms", (long long)(util_now_ms() - tt));
    if (pipe2(w.err, O_CLOEXEC) < 0 || pipe2(w.st, O_CLOEXEC) < 0 || pipe2(w.go, O_CLOEXEC) < 0 ||
        socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, w.ctl) < 0) {
        rc = -errno;
        snprintf(err, errlen, "pipe: %s", strerror(-rc));
        goto out;
    }
    int fds[JAIL_WARM_NFDS] = {o->fd_in, o->fd_out, o->fd_err, w.err[1], w.st[1], w.go[0], w.ctl[1]};
    for (size_t i = 0; i < w.n_trees; i++)
        fds[JAIL_WARM_FD_BIND0 + i] = w.trees[i];
    for (size_t i = 0; i < w.n_cg_tasks; i++)
        fds[JAIL_WARM_FD_BIND0 + w.n_trees + i] = w.cg_tasks[i];
    if (q.own_net)
        fds[JAIL_WARM_FD_BIND0 + w.n_trees + w.n_cg_tasks] = o->net_sock;
    log_msg(LOG_LVL_DEBUG, "timing: warm request ready %lld ms", (long long)(util_now_ms() - ts));
    pool = pool_connect(pool_sock);
    if (pool < 0)
        snprintf(err, errlen, "the pool went away: %s", strerror(-pool));
    rc = pool < 0 ? pool : ask_pool(pool, &q, fds, JAIL_WARM_FDS(&q), wait_ms, err, errlen);
    /* The zygote has its copies: ours of its ends would hide its end. */
    int *theirs[] = {&w.err[1], &w.st[1], &w.go[0], &w.ctl[1]};
    for (size_t i = 0; i < ARRAY_SIZE(theirs); i++) {
        close(*theirs[i]);
        *theirs[i] = -1;
    }
    if (rc < 0) {
        if (rc != -EAGAIN)
            snprintf(err, errlen, "the pool: %s", strerror(-rc));
        goto out;
    }
    rc = take_run(o, p, &w, wait_ms, err, errlen);
    if (rc < 0)
        goto out;
    p->status_fd = steal_fd(&w.st[0]);
    warm_fds_close(&w);
    return 0;
out:
    warm_fds_close(&w);
    if (p->pidfd >= 0) {
        discard(warm_reap(p, true));
        close(p->pidfd);
    }
    p->pidfd = -1;
    p->pid = -1;
    p->reaped = true;
    jail_finish(p);
    return rc;
}
