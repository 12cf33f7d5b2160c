/* jail_child.c: what a forked child of the jail does before execve in
 * both modes (its rlimits, signals and descriptors), and how it reports a
 * failure there: (stage, errno, detail) on a close-on-exec pipe, which the
 * parent reads to tell "the sandbox failed" from "the script failed".
 * Also the steps a cold run's init (jail_init.c) and a zygote and its
 * runs (jail_zygote.c) share: every other descriptor closed, a namespace's
 * pid 1 forwarding signals, the loopback up, HOME laid out from an
 * environment's caches. */
#include "config.h"

#include "jail_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *stage_name(int s)
{
    switch (s) {
    case JAIL_STAGE_SETSID: return "setsid";
    case JAIL_STAGE_DUP: return "setting up stdin/stdout/stderr";
    case JAIL_STAGE_RLIMIT: return "setting resource limits";
    case JAIL_STAGE_NNP: return "setting no_new_privs";
    case JAIL_STAGE_CHDIR: return "entering the workspace";
    case JAIL_STAGE_EXEC: return "starting the interpreter";
    case JAIL_STAGE_MAPS: return "waiting for the uid maps";
    case JAIL_STAGE_MOUNT: return "making the mount namespace private";
    case JAIL_STAGE_ROOT: return "building the root file system";
    case JAIL_STAGE_PIVOT: return "pivot_root";
    case JAIL_STAGE_PROC: return "mounting /proc";
    case JAIL_STAGE_DEV: return "building /dev";
    case JAIL_STAGE_ETC: return "building /etc";
    case JAIL_STAGE_BIND: return "bind-mounting a directory";
    case JAIL_STAGE_NET: return "bringing up the loopback interface";
    case JAIL_STAGE_FORK: return "forking the script";
    case JAIL_STAGE_IDS: return "switching to the sandbox user";
    case JAIL_STAGE_CAPS: return "dropping capabilities";
    case JAIL_STAGE_SECCOMP: return "loading the seccomp filter";
    case JAIL_STAGE_INIT_EXEC: return "starting the sandbox's init";
    case JAIL_STAGE_LANDLOCK: return "restricting the fallback with Landlock";
    case JAIL_STAGE_CGROUP: return "entering the run's cgroups";
    case JAIL_STAGE_NET_OWN: return "setting up the run's own network";
    }
    return "starting";
}

_Noreturn void jail__child_fail_err(int errfd, int stage, int err, const char *what)
{
    struct jail_child_error m = {stage, err, ""};
    if (what)
        snprintf(m.what, sizeof m.what, "%s", what);
    ssize_t w = write(errfd, &m, sizeof m);
    (void)w;
    _exit(JAIL_CHILD_FAILED);
}

_Noreturn void jail__child_fail(int errfd, int stage)
{
    jail__child_fail_err(errfd, stage, errno, NULL);
}

void jail__must(int ok, int errfd, int stage)
{
    if (!ok)
        jail__child_fail(errfd, stage);
}

int jail__read_child_error(int fd, struct jail_child_error *m)
{
    ssize_t r;
    do
        r = read(fd, m, sizeof *m);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)sizeof *m;
}

bool jail__host_refused(const struct jail_child_error *m)
{
    switch (m->stage) {
    case JAIL_STAGE_MOUNT:
    case JAIL_STAGE_ROOT:
    case JAIL_STAGE_PIVOT:
    case JAIL_STAGE_PROC:
    case JAIL_STAGE_DEV:
        return m->err == EPERM || m->err == EACCES;
    default:
        return false;
    }
}

void jail__format_child_error(const struct jail_child_error *m, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s%s%s failed: %s", stage_name(m->stage), m->what[0] ? " " : "", m->what, strerror(m->err));
}

/* Counts the processes of the real uid (RLIMIT_NPROC counts them all, not
 * just the run's), so that the processes limit means "this many more". */
uint64_t jail__count_uid_processes(uid_t uid)
{
    cleanup_dir DIR *d = opendir("/proc");
    if (!d)
        return 0;
    uint64_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] < '1' || de->d_name[0] > '9')
            continue;
        struct stat st;
        if (fstatat(dirfd(d), de->d_name, &st, 0) == 0 && st.st_uid == uid)
            n++;
    }
    return n;
}

/* The rlimits of a run, computed before forking. memory_by_cgroup: the
 * cgroup holds memory, so no RLIMIT_AS (which would also count address
 * space that libraries reserve but never touch). nproc_base: processes the
 * uid already has in the namespace the limit is counted in. */
size_t jail__build_rlimits(const struct exec_limits *l, bool memory_by_cgroup, uint64_t nproc_base,
                           struct jail_rlimit_row *rows)
{
    size_t n = 0;
    /* CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL. */
    if (l->cpu_ms > 0)
        rows[n++] = (struct jail_rlimit_row){RLIMIT_CPU, (rlim_t)((l->cpu_ms + 999) / 1000)};
    if (l->memory > 0 && !memory_by_cgroup)
        rows[n++] = (struct jail_rlimit_row){RLIMIT_AS, (rlim_t)l->memory};
    if (l->file_size > 0)
        rows[n++] = (struct jail_rlimit_row){RLIMIT_FSIZE, (rlim_t)l->file_size};
    if (l->open_files > 0)
        rows[n++] = (struct jail_rlimit_row){RLIMIT_NOFILE, (rlim_t)l->open_files};
    if (l->processes > 0)
        rows[n++] = (struct jail_rlimit_row){RLIMIT_NPROC, (rlim_t)(l->processes + nproc_base)};
    /* No core dumps: they would land in the workspace and cost time. */
    rows[n++] = (struct jail_rlimit_row){RLIMIT_CORE, 0};
    return n;
}

void jail__apply_rlimits(int efd, const struct jail_rlimit_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct rlimit rl = {rows[i].value, rows[i].value};
        if (rows[i].resource == RLIMIT_CPU)
            rl.rlim_max = rows[i].value + 1;
        if (setrlimit(rows[i].resource, &rl) < 0)
            jail__child_fail(efd, JAIL_STAGE_RLIMIT);
    }
}

int jail__script_drop(int efd, const char *stdin_inside, int in, int out, int err, const struct jail_rlimit_row *rows,
                      size_t nrows, bool set_groups, const char *cwd, const struct sock_fprog *filter)
{
    if (setsid() < 0)
        jail__child_fail(efd, JAIL_STAGE_SETSID);
    if (stdin_inside && (in = open(stdin_inside, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        jail__child_fail_err(efd, JAIL_STAGE_DUP, errno, stdin_inside);
    efd = jail__setup_fds(efd, in, out, err);
    jail__apply_rlimits(efd, rows, nrows);
    int rc = jail__drop_caps_before_setuid();
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CAPS, -rc, NULL);
    if (set_groups && setgroups(0, NULL) < 0)
        jail__child_fail(efd, JAIL_STAGE_IDS);
    if (setresgid(JAIL_UID, JAIL_UID, JAIL_UID) < 0 || setresuid(JAIL_UID, JAIL_UID, JAIL_UID) < 0)
        jail__child_fail(efd, JAIL_STAGE_IDS);
    rc = jail__drop_caps_after_setuid();
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CAPS, -rc, NULL);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        jail__child_fail(efd, JAIL_STAGE_NNP);
    if (chdir(cwd) < 0)
        jail__child_fail(efd, JAIL_STAGE_CHDIR);
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, filter) < 0)
        jail__child_fail(efd, JAIL_STAGE_SECCOMP);
    return efd;
}

/* Default dispositions, empty mask: what a fresh program expects. */
void jail__reset_signals(void)
{
    sigset_t none;
    /* Dispositions first: a signal let through before them would run a
     * handler of the parent's. */
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* fds 0-2 from the caller, nothing else but efd (close-on-exec) survives.
 * Returns efd, possibly moved above 2. */
int jail__setup_fds(int efd, int in, int out, int err)
{
    if (efd <= 2) {
        int moved = fcntl(efd, F_DUPFD_CLOEXEC, 3);
        if (moved < 0)
            jail__child_fail(efd, JAIL_STAGE_DUP);
        efd = moved;
    }
    /* Move the three sources above 2 first so that dup2 cannot clobber one
     * with another. */
    int src[3] = {in, out, err};
    for (int i = 0; i < 3; i++) {
        if (src[i] <= 2) {
            int moved = fcntl(src[i], F_DUPFD_CLOEXEC, 3);
            if (moved < 0)
                jail__child_fail(efd, JAIL_STAGE_DUP);
            src[i] = moved;
        }
    }
    for (int i = 0; i < 3; i++)
        if (dup2(src[i], i) < 0)
            jail__child_fail(efd, JAIL_STAGE_DUP);
    for (int fd = 3; fd < efd; fd++)
        close(fd);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)efd + 1, ~0U, 0) < 0)
#endif
    {
        for (int fd = efd + 1; fd < JAIL_FD_SCAN_MAX; fd++)
            close(fd);
    }
    return efd;
}

/* The steps a cold run's init and script (jail_init.c) share with a zygote
 * and a warm run's init (jail_zygote.c). */

void jail__close_all_except(const int *keep, size_t n)
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

static volatile sig_atomic_t init_forward;

/* SIGTERM, SIGINT and SIGHUP to every process of the namespace. */
static void init_on_signal(int sig)
{
    init_forward = sig;
    /* pid 1 reaches every other process of its namespace with -1. */
    kill(-1, sig);
}

void jail__init_forward_signals(void)
{
    struct sigaction sa = {.sa_handler = init_on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

int jail__loopback_up(void)
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

/* jail__home_tree's walk: one directory, depth levels down; *left entries
 * may still be made. */
static int home_tree_dir(char *src, char *dst, char *link, int depth, uid_t uid, bool may_keep, int *left)
{
    cleanup_dir DIR *d = opendir(src);
    if (!d)
        return errno == ENOENT && depth == 0 ? 0 : -errno;
    size_t ls = strlen(src), ld = strlen(dst), ll = strlen(link);
    int rc = 0;
    for (struct dirent *e; rc == 0 && *left > 0 && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        size_t n = strlen(e->d_name);
        if (ls + n + 2 > PATH_MAX || ld + n + 2 > PATH_MAX || ll + n + 2 > PATH_MAX)
            continue;
        src[ls] = dst[ld] = link[ll] = '/';
        memcpy(src + ls + 1, e->d_name, n + 1);
        memcpy(dst + ld + 1, e->d_name, n + 1);
        memcpy(link + ll + 1, e->d_name, n + 1);
        struct stat st;
        (*left)--;
        if (lstat(src, &st) == 0 && S_ISDIR(st.st_mode)) {
            if (depth + 1 < JAIL_HOME_TREE_DEPTH) {
                rc = mkdir(dst, 0700) < 0 && errno != EEXIST ? -errno : 0;
                if (rc == 0 && lchown(dst, uid, uid) < 0 && !(may_keep && errno == EINVAL))
                    rc = -errno;
                if (rc == 0)
                    rc = home_tree_dir(src, dst, link, depth + 1, uid, may_keep, left);
            }
        } else if (symlink(link, dst) < 0 && errno != EEXIST) {
            rc = -errno;
        } else if (lchown(dst, uid, uid) < 0 && !(may_keep && errno == EINVAL)) {
            rc = -errno;
        }
        src[ls] = dst[ld] = link[ll] = '\0';
    }
    return rc;
}

int jail__home_tree(const char *src, const char *dst, const char *link_base, uid_t uid, bool may_keep_owner)
{
    char s[PATH_MAX], d[PATH_MAX], l[PATH_MAX];
    int left = JAIL_HOME_TREE_MAX;
    if (snprintf(s, sizeof s, "%s", src) >= (int)sizeof s || snprintf(d, sizeof d, "%s", dst) >= (int)sizeof d ||
        snprintf(l, sizeof l, "%s", link_base) >= (int)sizeof l)
        return -ENAMETOOLONG;
    return home_tree_dir(s, d, l, 0, uid, may_keep_owner, &left);
}
