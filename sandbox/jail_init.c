/* jail_init.c: pid 1 of a run's namespaces and the script it forks. init
 * is a clone of this program: it waits for its uid maps, builds the root,
 * takes the seccomp filter from the parent, forks the script, reaps every
 * orphan, forwards SIGTERM to every process of the namespace, and when the
 * script exits reports its status and exits, which makes the kernel kill
 * whatever is left. The script drops everything and execs. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define JAIL_HOSTNAME "runmyscript"

/* Closes every descriptor but those in keep. */
static void close_all_except(const int *keep, size_t n)
{
    int max = 0;
    for (size_t i = 0; i < n; i++)
        if (keep[i] > max)
            max = keep[i];
    for (int fd = 0; fd <= max; fd++) {
        bool kept = false;
        for (size_t i = 0; i < n; i++)
            kept = kept || keep[i] == fd;
        if (!kept)
            close(fd);
    }
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)max + 1, ~0U, 0) == 0)
        return;
#endif
    for (int fd = max + 1; fd < JAIL_FD_SCAN_MAX; fd++)
        close(fd);
}

/* ifconfig lo up, inside the new network namespace. */
static int loopback_up(void)
{
    cleanup_fd int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "lo");
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        return -errno;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        return -errno;
    return 0;
}

static volatile sig_atomic_t init_forward;

static void init_on_signal(int sig)
{
    init_forward = sig;
    /* pid 1 reaches every other process of its namespace with -1. */
    kill(-1, sig);
}

/* The script, forked by init: drop everything, exec. */
static _Noreturn void script_main(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    jail__reset_signals();
    if (setsid() < 0)
        jail__child_fail(efd, JAIL_STAGE_SETSID);
    efd = jail__setup_fds(efd, o->fd_in, o->fd_out, o->fd_err);
    jail__apply_rlimits(efd, c->rows, c->nrows);
    int rc = jail__drop_caps_before_setuid();
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CAPS, -rc, NULL);
    if (c->set_groups && setgroups(0, NULL) < 0)
        jail__child_fail(efd, JAIL_STAGE_IDS);
    if (setresgid(JAIL_UID, JAIL_UID, JAIL_UID) < 0 || setresuid(JAIL_UID, JAIL_UID, JAIL_UID) < 0)
        jail__child_fail(efd, JAIL_STAGE_IDS);
    rc = jail__drop_caps_after_setuid();
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CAPS, -rc, NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        jail__child_fail(efd, JAIL_STAGE_NNP);
    if (chdir(o->cwd) < 0)
        jail__child_fail(efd, JAIL_STAGE_CHDIR);
    /* Last before execve: from here on the filter binds. */
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &c->seccomp) < 0)
        jail__child_fail(efd, JAIL_STAGE_SECCOMP);
    execve(o->argv[0], (char *const *)o->argv, (char *const *)o->envp);
    jail__child_fail(efd, JAIL_STAGE_EXEC);
}

/* pid 1 of the run's namespaces. */
/* The steps that still need the host's view, before the root is built:
 * the parent's go (the maps are written), a private mount tree, the plan
 * opened, init's own uid inside, and nothing of the parent's left open. */
static void init_prepare(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    char go;
    ssize_t r;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    do
        r = read(c->go_r, &go, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        jail__child_fail_err(efd, JAIL_STAGE_MAPS, EPIPE, NULL);
    /* Nothing we mount may reach the host's mount tree. */
    jail__must(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, efd, JAIL_STAGE_MOUNT);
    char what[sizeof ((struct jail_child_error *)0)->what] = "";
    int rc = jail__plan_make(c, what, sizeof what);
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_BIND, -rc, what);
    /* As root, our host uid 0 is not mapped inside (on purpose): become the
     * namespace's own root, an unprivileged host uid, so that the files we
     * make in our tmpfs have an owner the namespace can name. */
    if (c->set_groups && (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
        jail__child_fail(efd, JAIL_STAGE_IDS);
    /* A change of credentials clears the parent-death signal: set it again,
     * or a killed parent (a worker killed mid-run) leaves the run alive. If
     * the parent died before this line, the read of the filter later fails
     * and we exit. */
    if (c->set_groups)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Nothing of the parent's (its sockets, its other files) stays open in
     * the namespace: only our pipes and the script's three. */
    const int pipes_and_stdio[] = {efd, c->status_w, o->fd_in, o->fd_out, o->fd_err, c->go_r};
    int keep[ARRAY_SIZE(pipes_and_stdio) + JAIL_PLAN_MAX];
    size_t nkeep = 0;
    for (size_t i = 0; i < ARRAY_SIZE(pipes_and_stdio); i++)
        keep[nkeep++] = pipes_and_stdio[i];
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            keep[nkeep++] = c->plan[i].fd;
    close_all_except(keep, nkeep);
}

/* The parent has meanwhile put us into the cgroups and compiled the
 * seccomp filter: its length, then its instructions. */
static void init_receive_filter(struct jail_ns_ctx *c)
{
    uint32_t n = 0;
    if (util_read_exact(c->go_r, &n, sizeof n) < 0 || n == 0 || n > ARRAY_SIZE(c->bpf) ||
        util_read_exact(c->go_r, c->bpf, n * sizeof c->bpf[0]) < 0)
        jail__child_fail_err(c->err_w, JAIL_STAGE_SECCOMP, EPIPE, NULL);
    c->seccomp.len = (unsigned short)n;
    c->seccomp.filter = c->bpf;
    close(c->go_r);
}

/* Forwards the parent's SIGTERM (the wall limit, a cancel) to all, and
 * forks the script. Returns its pid. */
static pid_t init_fork_script(struct jail_ns_ctx *c)
{
    struct sigaction sa = {.sa_handler = init_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);

    /* vfork: the script shares our memory until its execve, so no page of
     * ours is copied for it. Signals stay blocked across it, so that none
     * runs our handler in the child before the child resets them. */
    sigset_t blocked, old;
    sigfillset(&blocked);
    sigprocmask(SIG_SETMASK, &blocked, &old);
    pid_t script = vfork();
    if (script == 0)
        script_main(c);
    sigprocmask(SIG_SETMASK, &old, NULL);
    if (script < 0)
        jail__child_fail(c->err_w, JAIL_STAGE_FORK);
    return script;
}

/* Reaps every process until the script is done, then reports its status
 * and the resource use of all and leaves. The kernel kills the rest of the
 * namespace when pid 1 exits. */
static _Noreturn void init_report(struct jail_ns_ctx *c, pid_t script)
{
    int st = 0;
    struct rusage ru;
    for (;;) {
        pid_t w = wait4(-1, &st, 0, &ru);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            _exit(1);
        if (w == script)
            break;
    }
    struct jail_status_msg msg = {.status = st};
    getrusage(RUSAGE_CHILDREN, &msg.ru);
    ssize_t w = write(c->status_w, &msg, sizeof msg);
    (void)w;
    _exit(0);
}

_Noreturn void jail__init_main(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;

    init_prepare(c);
    jail__build_root(c);
    if (sethostname(JAIL_HOSTNAME, sizeof JAIL_HOSTNAME - 1) < 0)
        jail__child_fail(efd, JAIL_STAGE_ROOT);
    if (!o->network) {
        int rc = loopback_up();
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_NET, -rc, NULL);
    }
    init_receive_filter(c);
    pid_t script = init_fork_script(c);
    /* The script holds the error pipe until its execve; init lets go. */
    close(efd);
    close(o->fd_in);
    close(o->fd_out);
    close(o->fd_err);
    init_report(c, script);
}
