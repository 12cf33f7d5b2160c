/* jail_probe.c: what this host lets the jail do (probe_host), told by
 * doing it: a child makes the namespaces a run gets and, in them, the
 * mounts a run's root needs (a tmpfs, /proc, pivot_root, the root made
 * read-only). A container may allow the namespaces and refuse some of the
 * mounts, so that unshare alone would promise what no run can have; where
 * it refuses only a fresh /proc (its own is masked) and sethostname (its
 * seccomp profile), runs get the container's /proc and name, as the probe
 * says (probe_caps). */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the probe tried last, for the reason it gives. */
enum probe_step { PROBE_UNSHARE = 1, PROBE_MAPS, PROBE_FORK, PROBE_PRIVATE, PROBE_TMPFS, PROBE_PROC, PROBE_PIVOT, PROBE_RDONLY, PROBE_HOSTNAME };

struct probe_report {
    int step;
    int err;
    bool proc_shared;   /* the container's /proc bound (jail__mount_proc) */
    bool hostname_kept; /* sethostname refused: runs keep the container's */
};

static const char *step_name(int s)
{
    switch (s) {
    case PROBE_UNSHARE: return "unshare";
    case PROBE_MAPS: return "writing the uid map";
    case PROBE_FORK: return "fork into the namespaces";
    case PROBE_PRIVATE: return "making the mount namespace private";
    case PROBE_TMPFS: return "mounting a tmpfs";
    case PROBE_PROC: return "mounting /proc (a container's masked /proc refuses it)";
    case PROBE_PIVOT: return "pivot_root";
    case PROBE_RDONLY: return "making the root read-only";
    case PROBE_HOSTNAME: return "sethostname (a container's seccomp profile refuses it)";
    default: return "the probe";
    }
}

static struct probe_report probe_seen;

static _Noreturn void probe_report(int fd, int step, int err)
{
    struct probe_report m = probe_seen;
    m.step = step;
    m.err = err;
    ssize_t w = write(fd, &m, sizeof m);
    (void)w;
    _exit(0);
}

/* In the new namespaces, as pid 1 of the new pid namespace: a run's root
 * in miniature (jail__build_root's steps, without the binds). */
static _Noreturn void probe_mounts(int fd)
{
    static const char R[] = "/tmp"; /* where jail__build_root builds */
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        probe_report(fd, PROBE_PRIVATE, errno);
    if (mount("tmpfs", R, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=755") < 0)
        probe_report(fd, PROBE_TMPFS, errno);
    if (mkdir("/tmp/proc", 0555) < 0 || mkdir("/tmp/dev", 0755) < 0)
        probe_report(fd, PROBE_TMPFS, errno);
    if (mount("tmpfs", "/tmp/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "size=4k,mode=755") < 0 ||
        mount(NULL, "/tmp/dev", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=4k,mode=755") < 0)
        probe_report(fd, PROBE_TMPFS, errno);
    if (jail__mount_proc("/tmp/proc", true, &probe_seen.proc_shared) < 0)
        probe_report(fd, PROBE_PROC, errno);
    if (chdir(R) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 || umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
        probe_report(fd, PROBE_PIVOT, errno);
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) < 0)
        probe_report(fd, PROBE_RDONLY, errno);
    /* A container's default seccomp profile refuses it without
     * CAP_SYS_ADMIN, even in a UTS namespace of one's own: runs then keep
     * the container's name (jail_init.c). */
    if (sethostname("runmyscript", 11) < 0) {
        if (errno != EPERM)
            probe_report(fd, PROBE_HOSTNAME, errno);
        probe_seen.hostname_kept = true;
    }
    probe_report(fd, 0, 0);
}

/* Writes a /proc/self map file: 0 or -1 with errno (ENOENT for
 * setgroups, which old kernels lack, is no failure). */
static int write_map(const char *path, const char *line)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT && strstr(path, "setgroups") ? 0 : -1;
    ssize_t w = write(fd, line, strlen(line));
    int e = errno;
    close(fd);
    errno = e;
    return w == (ssize_t)strlen(line) ? 0 : -1;
}

/* The child: the namespaces, then pid 1 of them tries the mounts. */
static _Noreturn void probe_child(int fd)
{
    char uid_line[32], gid_line[32];
    snprintf(uid_line, sizeof uid_line, "0 %u 1", (unsigned)geteuid());
    snprintf(gid_line, sizeof gid_line, "0 %u 1", (unsigned)getegid());
    /* The /proc files of a process that is not dumpable are root's, its
     * maps too: the server is not (and a child inherits that). */
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
        probe_report(fd, PROBE_UNSHARE, errno);
    /* Our own ids mapped to 0, as an unprivileged process may: a file
     * made by an unmapped id fails (EOVERFLOW). */
    if (write_map("/proc/self/setgroups", "deny") < 0 || write_map("/proc/self/uid_map", uid_line) < 0 ||
        write_map("/proc/self/gid_map", gid_line) < 0)
        probe_report(fd, PROBE_MAPS, errno);
    /* /proc belongs to the pid namespace of the process that mounts it:
     * only a child is in the new one. */
    pid_t pid = fork();
    if (pid < 0)
        probe_report(fd, PROBE_FORK, errno);
    if (pid == 0)
        probe_mounts(fd);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    _exit(0);
}

/* Whether the namespaces and a run's mounts can be made: true, or false
 * with the step that failed in err. */
static bool probe_namespaces(struct probe_caps *c, char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "the probe could not run: %s", strerror(errno));
        return false;
    }
    pid_t pid = fork();
    if (pid == 0) {
        close(p[0]);
        probe_child(p[1]);
    }
    close(p[1]);
    struct probe_report m = {-1, 0};
    ssize_t r = -1;
    if (pid > 0)
        do
            r = read(p[0], &m, sizeof m);
        while (r < 0 && errno == EINTR);
    close(p[0]);
    if (pid > 0)
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
    if (r != (ssize_t)sizeof m) {
        snprintf(err, errlen, "the probe could not run");
        return false;
    }
    if (m.step == 0) {
        c->proc_shared = m.proc_shared;
        c->hostname_kept = m.hostname_kept;
        return true;
    }
    snprintf(err, errlen, "%s: %s", step_name(m.step), strerror(m.err));
    return false;
}

bool probe_namespaces_usable(const struct probe_caps *c, bool shared_proc)
{
    return c->userns && (!c->proc_shared || shared_proc);
}

void probe_host(struct probe_caps *c)
{
    memset(c, 0, sizeof *c);
    c->root = geteuid() == 0;
    c->userns = probe_namespaces(c, c->userns_error, sizeof c->userns_error);
    c->seccomp = jail__seccomp_usable();
    c->landlock_abi = jail__landlock_abi();
    c->cgroup_v1_memory = c->root && access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) == 0;
    c->cgroup_v1_pids = c->root && access("/sys/fs/cgroup/pids/cgroup.procs", W_OK) == 0;
    /* A delegated v2 cgroup: ours, writable, memory and pids enabled below. */
    c->cgroup_v2 = jail__cg_v2_delegated();
    c->memory_watch_ms = JAIL_MEMORY_WATCH_MS;
}
