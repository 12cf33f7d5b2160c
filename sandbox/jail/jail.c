/* jail.c: starting, signalling, reaping and tearing down a run's process
 * tree, the last three through the operations of the run's kind (struct
 * jail_ops, which the start chooses: the namespaces' and the fallback's
 * are here); the parts of the work live in jail_*.c (jail_internal.h):
 *   jail_child.c    a forked child's setup before execve, its failure report; the
 *                   steps init and a zygote share
 *   jail_seccomp.c  the seccomp filter and the dropping of capabilities
 *   jail_landlock.c the fallback's Landlock ruleset
 *   jail_cgroup.c   the run's cgroups (v2 delegated, or v1 as root)
 *   jail_uid.c      the run's host uid, its paths, the uid maps
 *   jail_mount.c    the mount plan and the new root
 *   jail_init.c     pid 1 of the namespaces, and the script it forks
 *   jail_tree.c     the run's process tree: one walk; the fallback's signal, stop, kill, reap
 *   jail_memory.c   the run's memory as a whole, where no cgroup holds it
 *   jail_tool.c     a trusted tool (the installer) run to completion
 *   jail_warm.c     a warm start (jail_start_warm) and a warm run's operations
 *
 * Theory of operation, namespaces mode:
 *
 *   parent (exec_run's process)
 *     clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS[|NEWNET][|NEWCGROUP]) ---> init
 *     writes init's uid/gid maps (inside uid 1000 = one host uid: ours when
 *     we are not root; a uid of its own from uid_base.. when we are), lets
 *     it go through a pipe, and has it enter the run's cgroups (it moves
 *     itself with cgroup v1; we move it with v2).
 *
 *   Why each namespace: the user namespace gives init the capabilities to
 *   build a root (mounts, pivot_root) that it holds only over its own
 *   namespaces, never over the host's; the mount namespace keeps that root
 *   and every mount of it away from the host; the PID namespace hides every
 *   other process and makes the run's processes one tree that dies with
 *   its pid 1; IPC keeps System V objects and POSIX queues apart; UTS lets
 *   the run have its own host name; the network namespace (unless the run
 *   may use the network) leaves only a loopback; the cgroup namespace
 *   shows the run its own cgroup as the root.
 *
 *   init (pid 1 of the new PID namespace, all capabilities in the new user
 *   namespace, none outside)
 *     builds a fresh root: a tmpfs with read-only, nosuid, nodev binds of
 *     /usr (and the merged-/usr symlinks), a minimal /etc, a minimal /dev,
 *     a private size-limited /tmp and /dev/shm, the namespace's own /proc
 *     (mounted while the old root is still attached: the kernel refuses a
 *     new proc where no full proc is visible), and the caller's binds (the
 *     workspace read-write, the environment read-only; a read-only bind is
 *     read-only in every mount below it too); pivot_root, the old root
 *     detached, the new root read-only. Then it forks the script and
 *     re-executes this program (the descriptor of /proc/self/exe the parent
 *     opened) as a fresh image with an empty environment, so that no
 *     process a script can see holds anything of the server: not its
 *     command line, environment, configuration or memory; the script waits
 *     for that before it goes on. init stays
 *     pid 1, because pid 1 is what the kernel hands orphans to and what
 *     takes the namespace down when it exits: it reaps orphans, forwards
 *     SIGTERM to every process of the namespace, and when the script exits
 *     it reports the script's wait status and resource use through a pipe
 *     and exits, which makes the kernel kill whatever is left of the
 *     namespace. Nothing survives.
 *
 *   script (forked by init)
 *     its own session, fds 0-2 only, rlimits, no supplementary groups,
 *     uid/gid 1000, every capability dropped (bounding, ambient, effective,
 *     permitted, inheritable; securebits locked), no_new_privs, the seccomp
 *     filter, execve.
 *
 *   The order of the start (start_namespaces): the run's uid, paths,
 *   cgroups and rlimits; the pipes; the clone; the maps, then "go"; while
 *   init builds its root, the parent sends the seccomp filter (and with
 *   cgroup v2 puts init into its cgroup), which init waits for only before
 *   it forks the script; with cgroup v1 init then moves itself into its
 *   cgroups, through the "tasks" files the parent opened before the clone
 *   (jail__cg_tasks_open: a move of one's own thread does without the lock
 *   a move by pid takes, and the RCU grace period its taking waits for,
 *   up to tens of ms); last, the parent waits for the setup report.
 *
 *   Failures before execve, in init or in the script, are written to a
 *   close-on-exec pipe as (stage, errno), so the parent tells "the sandbox
 *   failed" from "the script failed". The parent waits for that pipe to
 *   close before it starts the clock.
 *
 * Theory of operation, rlimits mode (the fallback):
 *   The calling process makes itself a child subreaper, so that every
 *   process the script leaves behind (a daemon that forked twice and called
 *   setsid() included) is re-parented to us rather than to init. The script
 *   is forked into its own session with no_new_privs, its rlimits, a clean
 *   environment and only fds 0-2. Without namespaces the script would have
 *   the host's file system, network and processes as far as its uid reaches
 *   (unprivileged: the server's uid, and with it the server): so where the
 *   kernel has them (landlock = auto) it then restricts itself with
 *   Landlock, whose rules are the jail's binds at their host paths plus the
 *   system the jail's root holds (jail_landlock.c), and loads the
 *   fallback's seccomp filter, which refuses besides the jail's list what
 *   the namespaces would have hidden (System V IPC, unix and, offline, IP
 *   sockets). The ruleset is built before the uid changes (root opens what
 *   the run's uid may not) and enforced after no_new_privs, the filter
 *   last. Landlock's ptrace rule also keeps the script from the server's
 *   /proc/PID/mem, environ and descriptors. Teardown walks our descendants through
 *   /proc/PID/task/TID/children, stops them all (a stopped process cannot
 *   fork), repeats until the set is stable, then kills and reaps them.
 */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* The fallback's name from what it had. */
static const char *fallback_name(bool landlock, bool seccomp)
{
    return landlock && seccomp ? "landlock+seccomp" : landlock ? "landlock" : seccomp ? "rlimits+seccomp" : "rlimits";
}

const char *jail_proc_isolation(const struct jail_proc *p)
{
    if (p->mode == JAIL_MODE_NAMESPACES)
        return "namespaces+seccomp";
    return fallback_name(p->landlock_abi > 0, p->seccomp);
}

const char *probe_fallback_isolation(const struct probe_caps *c, enum exec_landlock l)
{
    if (l == EXEC_LANDLOCK_OFF)
        return fallback_name(false, false);
    if (l == EXEC_LANDLOCK_ON && !c->landlock_abi)
        return NULL;
    return fallback_name(c->landlock_abi > 0, c->seccomp);
}

enum jail_mode jail_mode_for(enum exec_isolation isolation)
{
    return isolation == EXEC_ISOLATION_RLIMITS ? JAIL_MODE_RLIMITS : JAIL_MODE_NAMESPACES;
}

int jail_prepare_rlimits(const char *run_dir)
{
    cleanup_fd int dfd = open(run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    if (mkdirat(dfd, "home", 0700) < 0 && errno != EEXIST)
        return -errno;
    if (mkdirat(dfd, "tmp", 0700) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* A non-blocking wait for our child pid: 1 with *st and *r once it has
 * ended, 0 while it runs, -errno. */
static int wait_child(pid_t pid, int *st, struct rusage *r)
{
    pid_t w = wait4(pid, st, WNOHANG, r);
    return w < 0 ? -errno : w > 0;
}

/* ------------------------------------------------- the namespaces mode */

/* This program (O_PATH, close-on-exec), for init to re-execute
 * (jail_init.c): its path may be gone from the new root, the descriptor
 * is not. An fd, or -errno. */
static int self_exe_open(void)
{
    int fd = open("/proc/self/exe", O_PATH | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* The pipes between the parent and init, each {read end, write end}. */
struct ns_pipes {
    int err[2];   /* (stage, errno) reports of init and the script */
    int go[2];    /* "maps written", then the seccomp filter */
    int st[2];    /* init's report of the script's end */
};

static void ns_pipes_close(struct ns_pipes *pp)
{
    int *all[] = {pp->err, pp->go, pp->st};
    for (size_t i = 0; i < ARRAY_SIZE(all); i++)
        for (int k = 0; k < 2; k++)
            if (all[i][k] >= 0) {
                close(all[i][k]);
                all[i][k] = -1;
            }
}

/* Who the run is and what bounds it, before the clone: as root a host uid
 * of its own and its paths given to it, the cgroups, the rlimits. */
static int ns_identity(const struct jail_opts *o, struct jail_proc *p, struct jail_ns_ctx *c, char *err,
                       size_t errlen)
{
    bool root_user = geteuid() == 0;
    if (o->zygote) {
        /* No uid slot: every run forked from it takes its own. */
        p->host_uid = root_user ? o->uid_base : geteuid();
    } else if (root_user) {
        int rc = jail__take_uid(o, p, err, errlen);
        if (rc < 0)
            return rc;
        rc = jail__give_paths(o, p, err, errlen);
        if (rc < 0)
            return rc;
    } else {
        p->host_uid = geteuid();
    }
    jail__mark_take(o);
    jail__cg_setup(p, o);
    bool memory_by_cgroup = p->cg_memory != NULL;
    /* RLIMIT_NPROC is counted per user namespace (Linux 5.14+): a fresh one
     * starts at zero. */
    c->nrows = jail__build_rlimits(o->limits, memory_by_cgroup, 0, c->rows);
    c->set_groups = root_user;
    return 0;
}

/* The clone into the new namespaces. Returns init's pid (0 in init), or
 * -errno with a reason in err and p->unavailable set when it is the
 * host's doing. */
static pid_t ns_clone(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (!o->network)
        flags |= CLONE_NEWNET;
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
        p->unavailable = true;
        snprintf(err, errlen, "the kernel has no seccomp");
        return -ENOSYS;
    }
    /* The server is not dumpable (a process of its uid cannot read it), and
     * a child inherits that: but an unprivileged parent can write the uid
     * map of a dumpable child only (the /proc files of one that is not are
     * root's). So init is made dumpable, and makes itself not dumpable
     * again once the maps are written; the parent is so for the clone. */
    int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
    if (dumpable == 0)
        prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0 && errno == EINVAL && (flags & CLONE_NEWCGROUP)) {
        /* A kernel without cgroup namespaces: the rest still holds. */
        flags &= ~(unsigned long)CLONE_NEWCGROUP;
        pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    }
    int e = errno;
    if (pid != 0 && dumpable == 0)
        prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    if (pid < 0) {
        /* What clone answers where user namespaces are off, capped or
         * filtered: the host's doing, not this run's. */
        p->unavailable = e == EPERM || e == EINVAL || e == ENOSPC || e == EUSERS || e == EACCES;
        snprintf(err, errlen, "cannot make the namespaces: %s", strerror(e));
        return -e;
    }
    return pid;
}

const struct sock_fprog *jail__ready(const struct jail_opts *o, struct jail_proc *p, bool self_enter, int *rc,
                                     char *err, size_t errlen)
{
    *rc = 0;
    /* (cgroup v1: init moves itself, jail__cg_tasks_open) */
    if (p->cg_memory && !self_enter)
        *rc = jail__cg_enter(p->cg_memory, p->pid);
    if (*rc == 0 && p->cg_pids && !self_enter)
        *rc = jail__cg_enter(p->cg_pids, p->pid);
    if (*rc < 0) {
        snprintf(err, errlen, "putting the run into its cgroups: %s", strerror(-*rc));
        return NULL;
    }
    const struct sock_fprog *prog =
        jail__seccomp_program(p->cg_memory ? JAIL_FILTER_JAIL : JAIL_FILTER_JAIL_WATCHED, rc);
    if (!prog) {
        snprintf(err, errlen, "building the seccomp filter: %s", strerror(-*rc));
        return NULL;
    }
    jail__mark_wait(o); /* init forks the script once it has the filter */
    return prog;
}

/* Lets init go: the maps, "go", then (while init builds its root, on the
 * other core) the cgroups (unless init enters them itself: self_enter)
 * and the filter, which init waits for only before it forks the script.
 * 0 or -errno with a reason in err. */
static int ns_release(const struct jail_opts *o, struct jail_proc *p, struct ns_pipes *pp, bool self_enter,
                      char *err, size_t errlen)
{
    int rc = o->zygote ? jail__write_zygote_maps(p->pid, geteuid() == 0, o->uid_base, o->uid_count)
                       : jail__write_maps(p->pid, geteuid() == 0, o->uid_base, p->host_uid);
    if (rc < 0) {
        snprintf(err, errlen, "setting up the namespace's uid maps: %s", strerror(-rc));
        return rc;
    }
    if (write(pp->go[1], "g", 1) != 1) {
        int e = errno;
        snprintf(err, errlen, "starting the namespace: %s", strerror(e));
        return -e;
    }
    const struct sock_fprog *prog = jail__ready(o, p, self_enter, &rc, err, errlen);
    if (!prog)
        return rc;
    uint32_t n = prog->len;
    if ((rc = util_write_all(pp->go[1], &n, sizeof n)) < 0 ||
        (rc = util_write_all(pp->go[1], prog->filter, n * sizeof prog->filter[0])) < 0) {
        /* EPIPE: init gave up already; its report says why, and whether
         * it was the host's doing (a container's masked /proc refuses the
         * mount before the filter is written as often as after). */
        struct jail_child_error early;
        if (jail__read_child_error(pp->err[0], &early)) {
            jail__format_child_error(&early, err, errlen);
            p->unavailable = jail__host_refused(&early);
            return early.err ? -early.err : -EIO;
        }
        snprintf(err, errlen, "starting the namespace: %s", strerror(-rc));
        return rc;
    }
    close(pp->go[1]);
    pp->go[1] = -1;
    return 0;
}

/* Our copies of the descriptors init moves itself into its cgroups with. */
static void cg_tasks_close(struct jail_ns_ctx *c)
{
    for (size_t i = 0; i < c->n_cg_tasks; i++)
        close(c->cg_tasks[i]);
    c->n_cg_tasks = 0;
}

static int start_namespaces(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    static struct jail_ns_ctx c; /* large (the filter): not on the stack */
    struct ns_pipes pp = {{-1, -1}, {-1, -1}, {-1, -1}};
    int rc;

    memset(&c, 0, sizeof c);
    /* For this run's binds: an environment may link hundreds of store
     * entries, most runs a few (calloc maps it: untouched pages cost
     * nothing). */
    c.plan_cap = JAIL_PLAN_FIXED + o->n_binds;
    cleanup_free struct jail_plan_item *plan = c.plan = calloc(c.plan_cap, sizeof *c.plan);
    if (!plan) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    c.o = o;
    c.err_w = c.go_r = c.status_w = -1;
    c.reaper_go[0] = c.reaper_go[1] = -1;
    c.self_exe = -1;
    snprintf(c.tmp_opts, sizeof c.tmp_opts, "size=%llu,nr_inodes=%llu,mode=1777",
             (unsigned long long)o->limits->tmp_bytes, (unsigned long long)o->limits->tmp_files);
    rc = ns_identity(o, p, &c, err, errlen);
    if (rc < 0)
        return rc;
    rc = jail__cg_tasks_open(p, c.cg_tasks);
    if (rc < 0) {
        snprintf(err, errlen, "opening the run's cgroups: %s", strerror(-rc));
        goto fail;
    }
    c.n_cg_tasks = (size_t)rc;
    c.self_exe = self_exe_open();
    if (c.self_exe < 0) {
        rc = c.self_exe;
        snprintf(err, errlen, "opening this program for the sandbox's init: %s", strerror(-rc));
        goto fail;
    }
    if (pipe2(pp.err, O_CLOEXEC) < 0 || pipe2(pp.go, O_CLOEXEC) < 0 || pipe2(pp.st, O_CLOEXEC) < 0) {
        int e = errno;
        snprintf(err, errlen, "pipe: %s", strerror(e));
        rc = -e;
        goto fail;
    }
    c.err_w = pp.err[1];
    c.go_r = pp.go[0];
    c.status_w = pp.st[1];
    pid_t pid = ns_clone(o, p, err, errlen);
    if (pid < 0) {
        rc = pid;
        goto fail;
    }
    if (pid == 0) {
        close(pp.err[0]);
        close(pp.go[1]);
        close(pp.st[0]);
        jail__init_main(&c);
    }
    p->pid = pid;
    close(pp.err[1]);
    close(pp.go[0]);
    close(pp.st[1]);
    pp.err[1] = pp.go[0] = pp.st[1] = -1;
    bool self_enter = c.n_cg_tasks > 0;
    cg_tasks_close(&c);

    rc = ns_release(o, p, &pp, self_enter, err, errlen);
    if (rc < 0)
        goto fail_child;
    /* Wait for setup: EOF when the script has exec'd, a report otherwise. */
    struct jail_child_error ce;
    int failed = jail__read_child_error(pp.err[0], &ce);
    close(pp.err[0]);
    pp.err[0] = -1;
    if (failed) {
        rc = ce.err ? -ce.err : -EIO;
        jail__format_child_error(&ce, err, errlen);
        p->unavailable = jail__host_refused(&ce);
        goto fail_child;
    }
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    p->status_fd = pp.st[0];
    jail__plan_free(&c);
    close(c.self_exe);
    return 0;

fail_child:
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    p->reaped = true;
    p->pid = -1;
fail:
    ns_pipes_close(&pp);
    cg_tasks_close(&c);
    jail__plan_free(&c);
    if (c.self_exe >= 0)
        close(c.self_exe);
    jail_finish(p);
    return rc;
}

/* A started run of the namespaces: its operations (jail_proc.ops). */

/* init forwards it to every process of the namespace. */
static int ns_signal(struct jail_proc *p, int sig)
{
    return kill(p->pid, sig) < 0 ? -errno : 0;
}

/* Namespaces: init is gone; its report (if it made one) says how the script
 * ended. Without one, init was killed (the parent's SIGKILL at the end of
 * the grace), and so was the script. */
void jail__read_status(struct jail_proc *p, int init_status, const struct rusage *init_ru)
{
    struct jail_status_msg msg;
    ssize_t r = -1;
    if (p->status_fd >= 0) {
        do
            r = read(p->status_fd, &msg, sizeof msg);
        while (r < 0 && errno == EINTR);
    }
    p->unreported = r != (ssize_t)sizeof msg;
    if (r == (ssize_t)sizeof msg) {
        p->wstatus = msg.status;
        p->ru = msg.ru;
    } else {
        p->wstatus = WIFSIGNALED(init_status) ? init_status : (SIGKILL & 0x7f);
        p->ru = *init_ru;
    }
}

/* init reaped (st, r): the script's status from its report. */
static void ns_reaped(struct jail_proc *p, int st, const struct rusage *r)
{
    p->reaped = true;
    jail__read_status(p, st, r);
    /* CPU: init's children include the script and every orphan it
     * reaped; init's own share is negligible. */
    p->ru.ru_utime = r->ru_utime;
    p->ru.ru_stime = r->ru_stime;
}

static int ns_reap(struct jail_proc *p)
{
    int st;
    struct rusage r;
    int rc = wait_child(p->pid, &st, &r);
    if (rc > 0)
        ns_reaped(p, st, &r);
    return rc;
}

static int ns_kill_all(struct jail_proc *p)
{
    if (!p->reaped) {
        int st;
        struct rusage r;
        kill(p->pid, SIGKILL);
        /* Reaping init returns only once the kernel has killed and
         * collected every process of its namespace. */
        while (wait4(p->pid, &st, 0, &r) < 0 && errno == EINTR)
            ;
        ns_reaped(p, st, &r);
    }
    return 0;
}

static const struct jail_ops ns_ops = {ns_signal, ns_reap, ns_kill_all};

/* ---------------------------------------------------- the rlimits mode */

/* What the fallback's child restricts itself with under o->landlock: the
 * Landlock plan (pl->abi 0: none) and the filter (*prog NULL: none). 0 or
 * -errno with a reason in err. */
static int rlimits_sandbox(const struct jail_opts *o, struct jail_ll_plan *pl, const struct sock_fprog **prog,
                           char *err, size_t errlen)
{
    int rc = 0;
    memset(pl, 0, sizeof *pl);
    *prog = NULL;
    if (o->landlock == EXEC_LANDLOCK_OFF)
        return 0;
    if (o->landlock == EXEC_LANDLOCK_ON && !jail__landlock_abi()) {
        snprintf(err, errlen, "landlock = on, and this kernel has no Landlock (Linux 5.13 or later, lsm=landlock)");
        return -ENOSYS;
    }
    rc = jail__landlock_plan(o, pl);
    if (rc < 0) {
        snprintf(err, errlen, "the Landlock rules: %s", strerror(-rc));
        return rc;
    }
    if (jail__seccomp_usable()) {
        *prog = jail__seccomp_program(o->network ? JAIL_FILTER_FALLBACK : JAIL_FILTER_FALLBACK_OFFLINE, &rc);
        if (!*prog) {
            snprintf(err, errlen, "building the seccomp filter: %s", strerror(-rc));
            return rc;
        }
    }
    return 0;
}

/* In the fallback's child, after no_new_privs: Landlock, then the filter
 * (which the Landlock calls must not meet). Reports and exits on failure. */
static void rlimits_enforce(int efd, int llfd, const struct sock_fprog *prog)
{
    int rc = llfd >= 0 ? jail__landlock_enforce(llfd) : 0;
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_LANDLOCK, -rc, NULL);
    if (llfd >= 0)
        close(llfd);
    if (prog && syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
        jail__child_fail(efd, JAIL_STAGE_SECCOMP);
}

static int start_rlimits(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    int pipefd[2];
    struct jail_rlimit_row rows[JAIL_RLIMIT_ROWS];
    struct jail_ll_plan ll;
    const struct sock_fprog *prog;

    int rc = rlimits_sandbox(o, &ll, &prog, err, errlen);
    if (rc < 0)
        return rc;

    /* Orphans of the run come to us, not to init: see the theory above. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        int e = errno;
        snprintf(err, errlen, "cannot become a child subreaper: %s", strerror(e));
        return -e;
    }
    /* As root, the script still never runs as root: it gets a uid of its
     * own, as in the namespaces, and the workspace becomes its. */
    bool root_user = geteuid() == 0;
    uid_t uid = getuid();
    if (root_user) {
        rc = jail__take_uid(o, p, err, errlen);
        if (rc < 0)
            return rc;
        rc = jail__give_paths(o, p, err, errlen);
        if (rc < 0)
            return rc;
        uid = p->host_uid;
    }
    jail__mark_take(o);
    /* RLIMIT_NPROC counts every process of the uid, not just the run's. A
     * uid of the run's own (locked, its last run fully killed) has none. */
    uint64_t have = o->limits->processes > 0 && !root_user ? jail__count_uid_processes(uid) : 0;
    size_t nrows = jail__build_rlimits(o->limits, false, have, rows);

    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        int e = errno;
        snprintf(err, errlen, "pipe: %s", strerror(e));
        return -e;
    }
    pid_t parent = getpid(); /* for the child: did its parent die already? */
    jail__mark_wait(o);
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(pipefd[0]);
        close(pipefd[1]);
        snprintf(err, errlen, "fork: %s", strerror(e));
        return -e;
    }
    if (pid == 0) {
        int efd = pipefd[1];
        close(pipefd[0]);
        jail__reset_signals();
        if (setsid() < 0)
            jail__child_fail(efd, JAIL_STAGE_SETSID);
        efd = jail__setup_fds(efd, o->fd_in, o->fd_out, o->fd_err);
        int llfd = -1;
        const char *what = NULL;
        int lrc = ll.abi ? jail__landlock_ruleset(&ll, &llfd, &what) : 0;
        if (lrc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_LANDLOCK, -lrc, what);
        jail__apply_rlimits(efd, rows, nrows);
        if (root_user && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0))
            jail__child_fail(efd, JAIL_STAGE_IDS);
        /* After the change of uid (which clears it): the script dies with
         * its parent (a killed worker). Its own children do not: the
         * fallback has no PID namespace to take them along. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            jail__child_fail_err(efd, JAIL_STAGE_IDS, ESRCH, NULL); /* the parent died already */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            jail__child_fail(efd, JAIL_STAGE_NNP);
        if (chdir(o->cwd) < 0)
            jail__child_fail(efd, JAIL_STAGE_CHDIR);
        rlimits_enforce(efd, llfd, prog);
        execve(o->argv[0], (char *const *)(o->runner_argv ? o->runner_argv : o->argv), (char *const *)o->envp);
        jail__child_fail(efd, JAIL_STAGE_EXEC);
    }

    close(pipefd[1]);
    p->pid = pid;
    p->landlock_abi = ll.abi;
    p->seccomp = prog != NULL;
    struct jail_child_error ce;
    int failed = jail__read_child_error(pipefd[0], &ce);
    close(pipefd[0]);
    if (failed) {
        while (waitpid(pid, &p->wstatus, 0) < 0 && errno == EINTR)
            ;
        p->reaped = true;
        jail__format_child_error(&ce, err, errlen);
        if (root_user && ce.err == EACCES) {
            size_t n = strlen(err);
            snprintf(err + n, errlen - n,
                     " (the fallback runs scripts as uid %u: every directory above the state directory must be "
                     "searchable by it)",
                     (unsigned)uid);
        }
        return ce.err ? -ce.err : -EIO;
    }
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    return 0;
}

/* A started run of the fallback: its operations (jail_proc.ops). Its
 * processes are our descendants (we are their subreaper): jail_tree.c
 * walks them. */

static int rlimits_signal(struct jail_proc *p, int sig)
{
    jail__tree_signal(p->pid, sig);
    return 0;
}

static int rlimits_reap(struct jail_proc *p)
{
    int st;
    struct rusage r;
    int rc = wait_child(p->pid, &st, &r);
    if (rc > 0) {
        p->reaped = true;
        p->wstatus = st;
        p->ru = r;
    }
    return rc;
}

static const struct jail_ops rlimits_ops = {rlimits_signal, rlimits_reap, jail__tree_kill};

/* ----------------------------------------------------- any started run */

int jail_start(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->mode = o->mode;
    p->ops = o->mode == JAIL_MODE_NAMESPACES ? &ns_ops : &rlimits_ops;
    p->pid = -1;
    p->pidfd = -1;
    p->status_fd = -1;
    p->uid_lock = -1;
    if (o->n_binds > JAIL_BINDS_MAX) {
        snprintf(err, errlen, "more than %d binds (an environment of that many wheels?)", JAIL_BINDS_MAX);
        return -E2BIG;
    }
    if (o->mode == JAIL_MODE_NAMESPACES)
        return start_namespaces(o, p, err, errlen);
    if (o->net_sock > 0) {
        /* The fallback has no network namespace to hold the policy in:
         * refused, never open. */
        snprintf(err, errlen, "a network of the run's own (script_network = on) needs the namespace jail, which "
                              "this run does not have");
        return -ENOTSUP;
    }
    return start_rlimits(o, p, err, errlen);
}

int jail_signal(struct jail_proc *p, int sig)
{
    if (p->pid <= 0 || p->reaped)
        return 0;
    return p->ops->signal(p, sig);
}

int jail_try_reap(struct jail_proc *p, int *wstatus, struct rusage *ru)
{
    if (!p->reaped) {
        int rc = p->ops->reap(p);
        if (rc <= 0)
            return rc;
    }
    *wstatus = p->wstatus;
    *ru = p->ru;
    return 1;
}

int jail_kill_all(struct jail_proc *p)
{
    if (p->pid <= 0)
        return 0;
    return p->ops->kill_all(p);
}

void jail_finish(struct jail_proc *p)
{
    jail__cg_collect(p);
    jail__uid_release(p);
}

void jail_proc_free(struct jail_proc *p)
{
    jail_finish(p);
    if (p->pidfd >= 0)
        close(p->pidfd);
    if (p->status_fd >= 0)
        close(p->status_fd);
    p->pidfd = p->status_fd = -1;
}
