/* jail.c: starting, signalling and tearing down a run's process tree.
 *
 * Theory of operation, namespaces mode:
 *
 *   parent (exec_run's process)
 *     clone(NEWUSER|NEWNS|NEWPID|NEWIPC|NEWUTS[|NEWNET][|NEWCGROUP]) ---> init
 *     writes init's uid/gid maps (inside uid 1000 = one host uid: ours when
 *     we are not root; a uid of its own from uid_base.. when we are), puts
 *     init into the run's cgroups, then lets it go through a pipe.
 *
 *   init (pid 1 of the new PID namespace, all capabilities in the new user
 *   namespace, none outside)
 *     builds a fresh root: a tmpfs with read-only, nosuid, nodev binds of
 *     /usr (and the merged-/usr symlinks), a minimal /etc, a minimal /dev,
 *     a private size-limited /tmp and /dev/shm, the namespace's own /proc
 *     (mounted while the old root is still attached: the kernel refuses a
 *     new proc where no full proc is visible), and the caller's binds (the
 *     workspace read-write, the environment read-only); pivot_root, the old
 *     root detached, the new root read-only. Then it forks the script and
 *     stays pid 1: it reaps orphans, forwards SIGTERM to every process of
 *     the namespace, and when the script exits it reports the script's wait
 *     status and resource use through a pipe and exits, which makes the
 *     kernel kill whatever is left of the namespace. Nothing survives.
 *
 *   script (forked by init)
 *     its own session, fds 0-2 only, rlimits, no supplementary groups,
 *     uid/gid 1000, every capability dropped (bounding, ambient, effective,
 *     permitted, inheritable; securebits locked), no_new_privs, the seccomp
 *     filter, execve.
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
 *   environment and only fds 0-2. Teardown walks our descendants through
 *   /proc/PID/task/TID/children, stops them all (a stopped process cannot
 *   fork), repeats until the set is stable, then kills and reaps them.
 */
#include "config.h"

#include "jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <net/if.h>
#include <poll.h>
#include <grp.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "workspace.h"

#define JAIL_ROOT_SIZE "8m"          /* the root tmpfs holds only directories and /etc */

const char *jail_mode_name(enum jail_mode m)
{
    return m == JAIL_MODE_NAMESPACES ? "namespaces+seccomp" : "rlimits";
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

/* ---------------------------------------------------- shared child code */

enum child_stage {
    STAGE_SETSID = 1, STAGE_DUP, STAGE_RLIMIT, STAGE_NNP, STAGE_CHDIR, STAGE_EXEC, STAGE_MAPS, STAGE_MOUNT,
    STAGE_ROOT, STAGE_PIVOT, STAGE_PROC, STAGE_DEV, STAGE_ETC, STAGE_BIND, STAGE_NET, STAGE_FORK, STAGE_IDS,
    STAGE_CAPS, STAGE_SECCOMP,
};

static const char *stage_name(int s)
{
    switch (s) {
    case STAGE_SETSID: return "setsid";
    case STAGE_DUP: return "setting up stdin/stdout/stderr";
    case STAGE_RLIMIT: return "setting resource limits";
    case STAGE_NNP: return "setting no_new_privs";
    case STAGE_CHDIR: return "entering the workspace";
    case STAGE_EXEC: return "starting the interpreter";
    case STAGE_MAPS: return "waiting for the uid maps";
    case STAGE_MOUNT: return "making the mount namespace private";
    case STAGE_ROOT: return "building the root file system";
    case STAGE_PIVOT: return "pivot_root";
    case STAGE_PROC: return "mounting /proc";
    case STAGE_DEV: return "building /dev";
    case STAGE_ETC: return "building /etc";
    case STAGE_BIND: return "bind-mounting a directory";
    case STAGE_NET: return "bringing up the loopback interface";
    case STAGE_FORK: return "forking the script";
    case STAGE_IDS: return "switching to the sandbox user";
    case STAGE_CAPS: return "dropping capabilities";
    case STAGE_SECCOMP: return "loading the seccomp filter";
    }
    return "starting";
}

/* What a child reports when its setup fails. */
struct child_error {
    int stage;
    int err;
    char what[200];  /* the path or detail, may be empty */
};

/* In a forked child: report (stage, errno, detail) and exit. */
static _Noreturn void child_fail_what(int errfd, int stage, const char *what)
{
    struct child_error m = {stage, errno, ""};
    if (what)
        snprintf(m.what, sizeof m.what, "%s", what);
    ssize_t w = write(errfd, &m, sizeof m);
    (void)w;
    _exit(127);
}

static _Noreturn void child_fail(int errfd, int stage)
{
    child_fail_what(errfd, stage, NULL);
}

/* In the parent: reads the child's setup report. 1 and *m filled when the
 * child failed, 0 when the pipe closed without one (it exec'd). */
static int read_child_error(int fd, struct child_error *m)
{
    ssize_t r;
    do
        r = read(fd, m, sizeof *m);
    while (r < 0 && errno == EINTR);
    return r == (ssize_t)sizeof *m;
}

static void format_child_error(const struct child_error *m, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s%s%s failed: %s", stage_name(m->stage), m->what[0] ? " " : "", m->what, strerror(m->err));
}

struct rlimit_row {
    int resource;
    rlim_t value;
};

/* Counts the processes of the real uid (RLIMIT_NPROC counts them all, not
 * just the run's), so that the processes limit means "this many more". */
static uint64_t count_uid_processes(uid_t uid)
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
static size_t build_rlimits(const struct exec_limits *l, bool memory_by_cgroup, uint64_t nproc_base,
                            struct rlimit_row *rows)
{
    size_t n = 0;
    /* CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL. */
    if (l->cpu_ms > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_CPU, (rlim_t)((l->cpu_ms + 999) / 1000)};
    if (l->memory > 0 && !memory_by_cgroup)
        rows[n++] = (struct rlimit_row){RLIMIT_AS, (rlim_t)l->memory};
    if (l->file_size > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_FSIZE, (rlim_t)l->file_size};
    if (l->open_files > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_NOFILE, (rlim_t)l->open_files};
    if (l->processes > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_NPROC, (rlim_t)(l->processes + nproc_base)};
    /* No core dumps: they would land in the workspace and cost time. */
    rows[n++] = (struct rlimit_row){RLIMIT_CORE, 0};
    return n;
}

static void apply_rlimits(int efd, const struct rlimit_row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        struct rlimit rl = {rows[i].value, rows[i].value};
        if (rows[i].resource == RLIMIT_CPU)
            rl.rlim_max = rows[i].value + 1;
        if (setrlimit(rows[i].resource, &rl) < 0)
            child_fail(efd, STAGE_RLIMIT);
    }
}

/* Default dispositions, empty mask: what a fresh program expects. */
static void reset_signals(void)
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
static int setup_fds(int efd, int in, int out, int err)
{
    if (efd <= 2) {
        int moved = fcntl(efd, F_DUPFD_CLOEXEC, 3);
        if (moved < 0)
            child_fail(efd, STAGE_DUP);
        efd = moved;
    }
    /* Move the three sources above 2 first so that dup2 cannot clobber one
     * with another. */
    int src[3] = {in, out, err};
    for (int i = 0; i < 3; i++) {
        if (src[i] <= 2) {
            int moved = fcntl(src[i], F_DUPFD_CLOEXEC, 3);
            if (moved < 0)
                child_fail(efd, STAGE_DUP);
            src[i] = moved;
        }
    }
    for (int i = 0; i < 3; i++)
        if (dup2(src[i], i) < 0)
            child_fail(efd, STAGE_DUP);
    for (int fd = 3; fd < efd; fd++)
        close(fd);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)efd + 1, ~0U, 0) < 0)
#endif
    {
        for (int fd = efd + 1; fd < 65536; fd++)
            close(fd);
    }
    return efd;
}

/* ------------------------------------------------------------- seccomp */

/* The filter: everything is allowed (Python and its C extensions need a wide
 * surface) except what lets a process leave or widen its sandbox, reach
 * the kernel's rarely-hardened corners, or look at other processes.
 * Compiled once per process into BPF (the parent does it before the clone:
 * a forked child would pay the allocations again in copy-on-write faults),
 * then only loaded by each script. */
static int build_seccomp(struct sock_fprog *out)
{
    scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
    if (!ctx)
        return -ENOMEM;
    int rc = 0;
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
#define DENY(name) \
    do { \
        int n_ = seccomp_syscall_resolve_name(name); \
        if (n_ != __NR_SCMP_ERROR && rc == 0) \
            rc = seccomp_rule_add(ctx, eperm, n_, 0); \
    } while (0)
    /* The 32-bit and x32 ABIs would bypass every rule below: kill on sight. */
    if (rc == 0)
        rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    /* Mounting would rebuild the view the jail gave. */
    DENY("mount");
    DENY("umount2");
    DENY("pivot_root");
    DENY("move_mount");
    DENY("open_tree");
    DENY("fsopen");
    DENY("fsconfig");
    DENY("fsmount");
    DENY("fspick");
    DENY("mount_setattr");
    /* New namespaces re-grant capabilities; joining one leaves ours. */
    DENY("unshare");
    DENY("setns");
    /* The kernel keyring is shared across namespaces. */
    DENY("keyctl");
    DENY("add_key");
    DENY("request_key");
    /* eBPF and perf: large attack surface, and perf observes other work. */
    DENY("bpf");
    DENY("perf_event_open");
    /* Looking into or steering other processes. */
    DENY("ptrace");
    DENY("process_vm_readv");
    DENY("process_vm_writev");
    DENY("kcmp");
    /* Replacing the kernel or loading code into it. */
    DENY("kexec_load");
    DENY("kexec_file_load");
    DENY("init_module");
    DENY("finit_module");
    DENY("delete_module");
    DENY("reboot");
    DENY("swapon");
    DENY("swapoff");
    /* io_uring bypasses seccomp for the operations it queues. */
    DENY("io_uring_setup");
    DENY("io_uring_enter");
    DENY("io_uring_register");
    /* userfaultfd makes kernel races easy to win. */
    DENY("userfaultfd");
    /* File handles open files by inode, past the mount view. */
    DENY("open_by_handle_at");
    DENY("name_to_handle_at");
    /* Process accounting writes a host file. */
    DENY("acct");
    /* clone3 passes its flags in memory a filter cannot read: ENOSYS makes
     * the C library fall back to clone, whose flags we can check. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0);
    /* clone with any namespace flag: a new user namespace would hand the
     * script every capability inside it. One rule per flag (masked equal). */
    static const uint64_t ns_flags[] = {CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
                                        CLONE_NEWUSER, CLONE_NEWPID,   CLONE_NEWNET};
    for (size_t i = 0; i < ARRAY_SIZE(ns_flags) && rc == 0; i++)
        rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1, SCMP_A0(SCMP_CMP_MASKED_EQ, ns_flags[i], ns_flags[i]));
    /* vsock reaches the hypervisor; netlink reaches kernel subsystems
     * (audit, netfilter, ...): only routing queries (NETLINK_ROUTE) stay,
     * which getaddrinfo and friends use. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_VSOCK));
    if (rc == 0)
        rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), SCMP_SYS(socket), 2, SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
                              SCMP_A2(SCMP_CMP_NE, 0 /* NETLINK_ROUTE */));
#undef DENY
    /* Export the BPF through a memfd (libseccomp 2.5 exports only to an fd). */
    int fd = -1;
    if (rc == 0 && (fd = memfd_create("rms-seccomp", MFD_CLOEXEC)) < 0)
        rc = -errno;
    if (rc == 0)
        rc = seccomp_export_bpf(ctx, fd);
    seccomp_release(ctx);
    if (rc == 0) {
        char *bpf = NULL;
        size_t len = 0;
        if (lseek(fd, 0, SEEK_SET) < 0)
            rc = -errno;
        if (rc == 0)
            rc = util_read_fd(fd, 1 << 20, &bpf, &len);
        if (rc == 0 && (len == 0 || len % sizeof(struct sock_filter))) {
            free(bpf);
            rc = -EINVAL;
        }
        if (rc == 0) {
            out->filter = (struct sock_filter *)bpf;
            out->len = (unsigned short)(len / sizeof(struct sock_filter));
        }
    }
    if (fd >= 0)
        close(fd);
    return rc;
}

/* The compiled filter, made on first use and kept for the process. */
static const struct sock_fprog *seccomp_program(int *rc_out)
{
    static struct sock_fprog prog;
    static int rc = 1;
    if (rc == 1)
        rc = build_seccomp(&prog);
    *rc_out = rc;
    return rc == 0 ? &prog : NULL;
}

/* Capabilities go in two steps around the uid change. Before it (this
 * needs CAP_SETPCAP): the securebits that keep a uid 0 or a file capability
 * from granting any, locked, and the bounding set emptied. */
static int drop_caps_before_setuid(void)
{
    int last = 40;
    char buf[16] = "";
    int fd = open("/proc/sys/kernel/cap_last_cap", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t r = read(fd, buf, sizeof buf - 1);
        if (r > 0)
            last = atoi(buf);
        close(fd);
    }
    if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
                                     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED) < 0)
        return -errno;
    for (int c = 0; c <= last; c++)
        if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
            return -errno;
    return 0;
}

/* After it: the ambient, effective, permitted and inheritable sets empty
 * (the uid change cleared them already when it left uid 0; not when the
 * uid stayed 1000, as it does for an unprivileged server). */
static int drop_caps_after_setuid(void)
{
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct d[2];
    memset(d, 0, sizeof d);
    if (syscall(SYS_capset, &h, d) < 0)
        return -errno;
    return 0;
}

/* ----------------------------------------------------------- the probe */

static char *v2_own_dir(void);

void jail_probe(struct jail_caps *c)
{
    memset(c, 0, sizeof *c);
    c->root = geteuid() == 0;
    /* Namespaces: a child tries to make them all. */
    int p[2];
    if (pipe2(p, O_CLOEXEC) == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            int e = 0;
            if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS) < 0)
                e = errno;
            ssize_t w = write(p[1], &e, sizeof e);
            (void)w;
            _exit(0);
        }
        close(p[1]);
        int e = -1;
        if (pid > 0 && read(p[0], &e, sizeof e) == (ssize_t)sizeof e) {
            c->userns = e == 0;
            if (e)
                snprintf(c->userns_error, sizeof c->userns_error, "unshare: %s", strerror(e));
        } else {
            snprintf(c->userns_error, sizeof c->userns_error, "the probe could not run");
        }
        close(p[0]);
        if (pid > 0)
            waitpid(pid, NULL, 0);
    }
    c->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && seccomp_api_get() >= 1;
    c->cgroup_v1_memory = c->root && access("/sys/fs/cgroup/memory/cgroup.procs", W_OK) == 0;
    c->cgroup_v1_pids = c->root && access("/sys/fs/cgroup/pids/cgroup.procs", W_OK) == 0;
    /* A delegated v2 cgroup: ours, writable, memory and pids enabled below. */
    cleanup_free char *v2 = v2_own_dir();
    c->cgroup_v2 = v2 != NULL;
}

/* ------------------------------------------------------------ cgroups */

/* This process's cgroup v2 directory when it is delegated to us: writable,
 * with memory and pids enabled for its children (cgroup.subtree_control).
 * Caller frees; NULL otherwise. */
static char *v2_own_dir(void)
{
    cleanup_free char *cg = NULL;
    size_t n;
    if (util_read_file_at(AT_FDCWD, "/proc/self/cgroup", 65536, &cg, &n) < 0)
        return NULL;
    char *line = strstr(cg, "0::");
    if (!line || (line != cg && line[-1] != '\n'))
        return NULL;
    char *end = strchr(line, '\n');
    if (end)
        *end = '\0';
    const char *mnt = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";
    char *dir;
    if (asprintf(&dir, "%s%s", mnt, line + 3) < 0)
        return NULL;
    char path[PATH_MAX];
    cleanup_free char *ctl = NULL;
    snprintf(path, sizeof path, "%s/cgroup.subtree_control", dir);
    if (access(dir, W_OK) < 0 || util_read_file_at(AT_FDCWD, path, 4096, &ctl, &n) < 0 || !strstr(ctl, "memory") ||
        !strstr(ctl, "pids")) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* The directory of this process's cgroup in a v1 hierarchy (caller frees). */
static char *v1_own_dir(const char *controller)
{
    cleanup_free char *cg = NULL;
    size_t n;
    if (util_read_file_at(AT_FDCWD, "/proc/self/cgroup", 65536, &cg, &n) < 0)
        return NULL;
    for (char *line = cg, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *c1 = strchr(line, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c2 = '\0';
        /* The controller list may hold several, comma-separated. */
        for (char *tok = c1 + 1, *comma; tok; tok = comma ? comma + 1 : NULL) {
            comma = strchr(tok, ',');
            size_t len = comma ? (size_t)(comma - tok) : strlen(tok);
            if (len == strlen(controller) && !strncmp(tok, controller, len)) {
                char *p;
                if (asprintf(&p, "/sys/fs/cgroup/%s%s", controller, c2 + 1) < 0)
                    return NULL;
                return p;
            }
        }
    }
    return NULL;
}

static int write_text(const char *dir, const char *file, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    return util_write_all(fd, text, strlen(text));
}

/* Makes DIR/rms-TAG under our own cgroup of a controller; NULL when the
 * controller is not ours to use. */
static char *cg_make(const char *controller, const char *tag)
{
    cleanup_free char *own = v1_own_dir(controller);
    char *dir;
    if (!own || access(own, W_OK) < 0)
        return NULL;
    if (asprintf(&dir, "%s/rms-%s", own, tag) < 0)
        return NULL;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        free(dir);
        return NULL;
    }
    return dir;
}

/* cgroup v2, delegated: one directory with memory.max and pids.max. */
static bool cg_setup_v2(struct jail_proc *p, const struct jail_opts *o)
{
    char v[32];
    cleanup_free char *own = v2_own_dir();
    char *dir;
    if (!own || asprintf(&dir, "%s/rms-%s", own, o->tag) < 0)
        return false;
    if (mkdir(dir, 0755) < 0) {
        free(dir);
        return false;
    }
    int rc = 0;
    if (o->limits->memory > 0) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->memory);
        rc = write_text(dir, "memory.max", v);
        if (rc == 0)
            discard(write_text(dir, "memory.swap.max", "0")); /* absent without swap */
    }
    if (rc == 0 && o->limits->processes > 0) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->processes + 1);
        rc = write_text(dir, "pids.max", v);
    }
    if (rc < 0) {
        rmdir(dir);
        free(dir);
        return false;
    }
    p->cg_v2 = true;
    p->cg_memory = dir;
    return true;
}

static void cg_setup(struct jail_proc *p, const struct jail_opts *o)
{
    char v[32];
    if (!o->tag)
        return;
    if (cg_setup_v2(p, o) || geteuid() != 0)
        return;
    if (o->limits->memory > 0 && (p->cg_memory = cg_make("memory", o->tag))) {
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->memory);
        /* memsw (memory + swap) where swap accounting is on, so that swap
         * is no way around the limit. Order matters: memsw >= memory. */
        if (write_text(p->cg_memory, "memory.limit_in_bytes", v) < 0) {
            discard(util_rm_rf_at(AT_FDCWD, p->cg_memory));
            free(p->cg_memory);
            p->cg_memory = NULL;
        } else {
            discard(write_text(p->cg_memory, "memory.memsw.limit_in_bytes", v)); /* absent without swap accounting */
        }
    }
    if (o->limits->processes > 0 && (p->cg_pids = cg_make("pids", o->tag))) {
        /* Plus one: the namespace's init is in the cgroup too. */
        snprintf(v, sizeof v, "%llu", (unsigned long long)o->limits->processes + 1);
        if (write_text(p->cg_pids, "pids.max", v) < 0) {
            rmdir(p->cg_pids);
            free(p->cg_pids);
            p->cg_pids = NULL;
        }
    }
}

static int cg_enter(const char *dir, pid_t pid)
{
    char v[32];
    snprintf(v, sizeof v, "%d", (int)pid);
    return write_text(dir, "cgroup.procs", v);
}

/* Reads "key value" from a flat-keyed cgroup file. */
static long long cg_read_key(const char *dir, const char *file, const char *key)
{
    char path[PATH_MAX];
    cleanup_free char *text = NULL;
    size_t n;
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (util_read_file_at(AT_FDCWD, path, 65536, &text, &n) < 0)
        return -1;
    size_t kl = strlen(key);
    for (char *line = text; line && *line;) {
        if (!strncmp(line, key, kl) && line[kl] == ' ')
            return atoll(line + kl + 1);
        line = strchr(line, '\n');
        if (line)
            line++;
    }
    return -1;
}

static void cg_remove(char **dir)
{
    if (!*dir)
        return;
    /* The namespace is dead, but its last processes may still be exiting. */
    for (int i = 0; i < 200 && rmdir(*dir) < 0 && errno == EBUSY; i++)
        usleep(1000);
    free(*dir);
    *dir = NULL;
}

/* -------------------------------------------------------- uid slots */

/* Takes a host uid of its own for the run (root only): the lock file
 * STATE/.uids/N, held until the run is over. */
static int take_uid(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (o->uid_count == 0) {
        snprintf(err, errlen, "no uids to run as (uid_count = 0)");
        return -EINVAL;
    }
    snprintf(dir, sizeof dir, "%s/.uids", o->state_dir);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -errno;
    }
    uint32_t start;
    if (util_random(&start, sizeof start) < 0)
        start = (uint32_t)getpid();
    for (uint32_t i = 0; i < o->uid_count; i++) {
        uint32_t slot = (start + i) % o->uid_count;
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%u", dir, slot);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            p->uid_lock = fd;
            /* uid_base itself is the namespaces' root (see start_namespaces). */
            p->host_uid = (uid_t)(o->uid_base + 1 + slot);
            return 0;
        }
        close(fd);
    }
    snprintf(err, errlen, "all %u sandbox uids are in use", o->uid_count);
    return -EAGAIN;
}

/* chown -R without following symlinks; keep, directly under the top, is
 * left as it is. */
static int chown_tree(int dirfd, const char *name, uid_t uid, gid_t gid, int depth, const char *keep)
{
    if (depth == 1 && keep && !strcmp(name, keep))
        return 0;
    if (fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) || depth > 64)
        return 0;
    cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    cleanup_dir DIR *d = util_opendir_at(fd);
    if (!d)
        return -errno;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        int r = chown_tree(fd, de->d_name, uid, gid, depth + 1, keep);
        if (r < 0 && rc == 0)
            rc = r;
    }
    return rc;
}

/* Gives the run's paths to its uid for the run; jail_finish takes them back
 * before the uid is released, so that a later run that gets the same uid
 * owns nothing of this one's. chown_keep is left to the server both ways. */
static int give_paths(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    p->given = calloc(o->n_chown_paths + 1, sizeof *p->given);
    if (!p->given)
        return -ENOMEM;
    if (o->chown_keep && !(p->given_keep = strdup(o->chown_keep)))
        return -ENOMEM;
    for (size_t i = 0; i < o->n_chown_paths; i++) {
        if (!(p->given[i] = strdup(o->chown_paths[i])))
            return -ENOMEM;
        int rc = chown_tree(AT_FDCWD, o->chown_paths[i], p->host_uid, p->host_uid, 0, o->chown_keep);
        if (rc < 0) {
            snprintf(err, errlen, "giving %s to the sandbox uid: %s", o->chown_paths[i], strerror(-rc));
            return rc;
        }
    }
    return 0;
}

/* ------------------------------------------------- the namespace init */

/* One thing the new root gets from the host: a bind of a file or directory
 * the parent opened (O_PATH) while it could still see it, or a symlink. */
struct plan_item {
    int fd;                 /* -1 for a symlink */
    char inside[PATH_MAX];  /* absolute */
    char link[PATH_MAX];    /* symlink target */
    bool is_dir;
    bool nofollow;          /* JAIL_BIND_NOFOLLOW */
    unsigned long extra;    /* MS_RDONLY, MS_NOSUID, ... added to what is locked */
};

#define PLAN_MAX 48

struct ns_ctx {
    const struct jail_opts *o;
    int err_w;                   /* (stage, errno) pipe, write end */
    int go_r;                    /* the parent says "maps written", then sends the filter */
    int status_w;                /* init reports the script's end */
    struct rlimit_row rows[8];
    size_t nrows;
    bool set_groups;             /* we may (and must) clear supplementary groups */
    char tmp_opts[64];
    struct plan_item plan[PLAN_MAX];
    size_t n_plan;
    struct sock_fprog seccomp;   /* received from the parent before the fork */
    struct sock_filter bpf[1024];
};

static void must(int ok, int efd, int stage)
{
    if (!ok)
        child_fail(efd, stage);
}

/* The mount flags of the mount at path that a remount must keep: in a user
 * namespace the kernel locks the flags a mount had when it came from the
 * outer namespace, and a remount that drops one fails with EPERM. */
static unsigned long locked_flags(const char *path)
{
    struct statvfs sv;
    unsigned long fl = 0;
    if (statvfs(path, &sv) < 0)
        return 0;
    if (sv.f_flag & ST_NOSUID)
        fl |= MS_NOSUID;
    if (sv.f_flag & ST_NODEV)
        fl |= MS_NODEV;
    if (sv.f_flag & ST_NOEXEC)
        fl |= MS_NOEXEC;
    if (sv.f_flag & ST_RDONLY)
        fl |= MS_RDONLY;
    if (sv.f_flag & ST_NOATIME)
        fl |= MS_NOATIME;
    if (sv.f_flag & ST_NODIRATIME)
        fl |= MS_NODIRATIME;
    if (sv.f_flag & ST_RELATIME)
        fl |= MS_RELATIME;
    return fl;
}

/* Binds the file open at fd onto target (made first: a directory, or an
 * empty file), then remounts it with extra flags on top of the locked ones. */
static int bind_fd(int fd, const char *target, bool is_dir, unsigned long extra)
{
    char src[64];
    if (is_dir) {
        if (util_mkdir_p(target, 0755) < 0)
            return -1;
    } else {
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", target);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            if (util_mkdir_p(parent, 0755) < 0)
                return -1;
        }
        int t = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (t < 0)
            return -1;
        close(t);
    }
    snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
    if (mount(src, target, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -1;
    return mount(NULL, target, NULL, MS_BIND | MS_REMOUNT | extra | locked_flags(target), NULL);
}

/* The same for a JAIL_BIND_NOFOLLOW bind: the target, root + inside, must
 * exist and is reached beneath root without following any symlink (a
 * script may have made one where a directory was); the bind and the
 * remount then go through /proc/self/fd, never through the name again. */
static int bind_fd_beneath(int fd, const char *root, const char *inside, bool is_dir, unsigned long extra)
{
    char src[64], dst[64];
    int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return -1;
    const char *rel = inside;
    while (*rel == '/')
        rel++;
    int t = ws_open_beneath(rfd, rel, O_PATH | (is_dir ? O_DIRECTORY : 0), 0);
    struct stat st;
    if (t < 0 || fstat(t, &st) < 0 || (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))) {
        if (t >= 0)
            close(t);
        close(rfd);
        errno = t < 0 ? -t : ENOTDIR;
        return -1;
    }
    snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
    snprintf(dst, sizeof dst, "/proc/self/fd/%d", t);
    int rc = mount(src, dst, NULL, MS_BIND | MS_REC, NULL);
    close(t);
    if (rc < 0) {
        close(rfd);
        return -1;
    }
    /* Opened again, the path now crosses into the new mount: its root is
     * what the remount must name. */
    t = ws_open_beneath(rfd, rel, O_PATH | (is_dir ? O_DIRECTORY : 0), 0);
    close(rfd);
    if (t < 0) {
        errno = -t;
        return -1;
    }
    snprintf(dst, sizeof dst, "/proc/self/fd/%d", t);
    rc = mount(NULL, dst, NULL, MS_BIND | MS_REMOUNT | extra | locked_flags(dst), NULL);
    int e = errno;
    close(t);
    errno = e;
    return rc;
}

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
    for (int fd = max + 1; fd < 65536; fd++)
        close(fd);
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    int rc = util_write_all(fd, text, strlen(text));
    close(fd);
    return rc < 0 ? -1 : 0;
}

/* The interpreter's prefix when it is not under /usr (a /opt or pyenv
 * build): bound at the same path so that it finds its standard library. */
static const char *python_prefix(const char *argv0, char *buf, size_t n)
{
    char real[PATH_MAX];
    if (!realpath(argv0, real))
        return NULL;
    /* PREFIX/bin/pythonX.Y */
    char *slash = strrchr(real, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    slash = strrchr(real, '/');
    if (!slash || strcmp(slash, "/bin"))
        return NULL;
    *slash = '\0';
    if (!real[0] || !strncmp(real, "/usr", 4))
        return NULL;
    snprintf(buf, n, "%s", real);
    return buf;
}

/* ------------------------------------------------- the plan (parent) */

static void plan_free(struct ns_ctx *c)
{
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            close(c->plan[i].fd);
    c->n_plan = 0;
}

/* Adds a bind of host at inside. Missing host paths fail unless optional. */
static int plan_bind_at(struct ns_ctx *c, const char *host, const char *inside, unsigned long extra, bool optional,
                        bool nofollow, char *err, size_t errlen)
{
    if (c->n_plan == PLAN_MAX) {
        snprintf(err, errlen, "(too many)");
        return -E2BIG;
    }
    struct plan_item *it = &c->plan[c->n_plan];
    it->fd = open(host, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    struct stat st;
    if (it->fd < 0 || fstat(it->fd, &st) < 0) {
        int e = errno;
        if (it->fd >= 0)
            close(it->fd);
        if (optional && e == ENOENT)
            return 0;
        snprintf(err, errlen, "%s", host);
        return -e;
    }
    if (S_ISLNK(st.st_mode)) {
        /* O_PATH|O_NOFOLLOW opened the symlink itself. */
        close(it->fd);
        snprintf(err, errlen, "%s (a symlink)", host);
        return -ELOOP;
    }
    it->is_dir = S_ISDIR(st.st_mode);
    it->nofollow = nofollow;
    it->extra = extra;
    it->link[0] = '\0';
    snprintf(it->inside, sizeof it->inside, "%s", inside);
    c->n_plan++;
    return 0;
}

static int plan_bind(struct ns_ctx *c, const char *host, const char *inside, unsigned long extra, bool optional,
                     char *err, size_t errlen)
{
    return plan_bind_at(c, host, inside, extra, optional, false, err, errlen);
}

static int plan_link(struct ns_ctx *c, const char *target, const char *inside)
{
    if (c->n_plan == PLAN_MAX)
        return -E2BIG;
    struct plan_item *it = &c->plan[c->n_plan++];
    it->fd = -1;
    snprintf(it->inside, sizeof it->inside, "%s", inside);
    snprintf(it->link, sizeof it->link, "%s", target);
    return 0;
}

/* Everything of the host the root will hold, opened by init in its new
 * mount namespace (a bind's source must be a mount of the caller's
 * namespace) while it still has the parent's view of the host: the state
 * directory may be mode 0700, owned by a uid the namespace does not map. */
static int plan_make(struct ns_ctx *c, char *err, size_t errlen)
{
    const struct jail_opts *o = c->o;
    const unsigned long RO = MS_RDONLY | MS_NOSUID | MS_NODEV;
    int rc;
    char q[PATH_MAX];

    rc = plan_bind(c, "/usr", "/usr", RO, false, err, errlen);
    /* The merged-/usr links (or directories on older systems). */
    static const char *const tops[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(tops); i++) {
        struct stat st;
        char link[PATH_MAX];
        if (lstat(tops[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlink(tops[i], link, sizeof link - 1);
            if (n <= 0)
                continue;
            link[n] = '\0';
            rc = plan_link(c, link, tops[i]);
        } else if (S_ISDIR(st.st_mode)) {
            rc = plan_bind(c, tops[i], tops[i], RO, true, err, errlen);
        }
    }
    const char *pp = o->interpreter ? python_prefix(o->interpreter, q, sizeof q) : NULL;
    if (rc == 0 && pp)
        rc = plan_bind(c, pp, pp, RO, false, err, errlen);
    /* /etc: only what Python and the C library read. */
    static const char *const etc[] = {
        "/etc/ld.so.cache", "/etc/ssl",      "/etc/ca-certificates", "/etc/localtime", "/etc/nsswitch.conf",
        "/etc/mime.types",  "/etc/fonts",    "/etc/timezone",        "/etc/pki",
    };
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(etc); i++)
        rc = plan_bind(c, etc[i], etc[i], RO, true, err, errlen);
    if (rc == 0 && o->network)
        rc = plan_bind(c, "/etc/resolv.conf", "/etc/resolv.conf", RO, true, err, errlen);
    /* /dev: a few nodes of the host's. */
    static const char *const nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(nodes); i++)
        rc = plan_bind(c, nodes[i], nodes[i], MS_NOSUID | MS_NOEXEC, false, err, errlen);
    /* The caller's: the workspace, the environment, ... */
    for (size_t i = 0; rc == 0 && i < o->n_binds; i++) {
        const struct jail_bind *b = &o->binds[i];
        rc = plan_bind_at(c, b->host, b->inside,
                          MS_NOSUID | MS_NODEV | ((b->flags & JAIL_BIND_RW) ? 0 : MS_RDONLY),
                          b->flags & JAIL_BIND_OPTIONAL, b->flags & JAIL_BIND_NOFOLLOW, err, errlen);
    }
    if (rc < 0)
        plan_free(c);
    return rc;
}

/* ------------------------------------------------- the root (init) */

#define JAIL_BASE "/tmp"   /* where init builds the root, in its own mount
                            * namespace: a directory every system has */

static void build_root(struct ns_ctx *c)
{
    int efd = c->err_w;
    const char *R = JAIL_BASE;
    char p[PATH_MAX];

    must(mount("tmpfs", R, "tmpfs", MS_NOSUID | MS_NODEV, "size=" JAIL_ROOT_SIZE ",mode=755") == 0, efd, STAGE_ROOT);

    /* /dev is a small tmpfs of its own; the nodes come with the plan. */
    snprintf(p, sizeof p, "%s/dev", R);
    must(mkdir(p, 0755) == 0, efd, STAGE_DEV);
    must(mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=755") == 0, efd, STAGE_DEV);

    /* /tmp, private and bounded; HOME lives there. Before the binds: one may
     * sit below /tmp (a state directory there, for the installer). */
    snprintf(p, sizeof p, "%s/tmp", R);
    must(mkdir(p, 01777) == 0, efd, STAGE_ROOT);
    must(mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) == 0, efd, STAGE_ROOT);
    snprintf(p, sizeof p, "%s/tmp/home", R);
    must(mkdir(p, 0700) == 0 && chown(p, JAIL_UID, JAIL_UID) == 0, efd, STAGE_ROOT);

    for (size_t i = 0; i < c->n_plan; i++) {
        const struct plan_item *it = &c->plan[i];
        snprintf(p, sizeof p, "%s%s", R, it->inside);
        if (it->fd < 0) {
            if (symlink(it->link, p) < 0)
                child_fail_what(efd, STAGE_ROOT, it->inside);
        } else if (it->nofollow ? bind_fd_beneath(it->fd, R, it->inside, it->is_dir, it->extra) < 0
                                : bind_fd(it->fd, p, it->is_dir, it->extra) < 0) {
            child_fail_what(efd, STAGE_BIND, it->inside);
        }
    }

    /* /etc files of our own. */
    snprintf(p, sizeof p, "%s/etc", R);
    must(util_mkdir_p(p, 0755) == 0, efd, STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/passwd", R);
    must(write_file(p, "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
                       "sandbox:x:1000:1000:sandbox:/tmp/home:/bin/sh\n"
                       "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                    0644) == 0,
         efd, STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/group", R);
    must(write_file(p, "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n", 0644) == 0, efd, STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/hosts", R);
    must(write_file(p, "127.0.0.1\tlocalhost runmyscript\n::1\tlocalhost ip6-localhost ip6-loopback\n", 0644) == 0,
         efd, STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/hostname", R);
    must(write_file(p, "runmyscript\n", 0644) == 0, efd, STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/os-release", R);
    must(symlink("../usr/lib/os-release", p) == 0, efd, STAGE_ETC);

    static const char *const links[][2] = {
        {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
        {"/proc/self/fd/2", "stderr"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
        snprintf(p, sizeof p, "%s/dev/%s", R, links[i][1]);
        must(symlink(links[i][0], p) == 0, efd, STAGE_DEV);
    }
    snprintf(p, sizeof p, "%s/dev/shm", R);
    must(mkdir(p, 01777) == 0, efd, STAGE_DEV);
    must(mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) == 0, efd, STAGE_DEV);
    /* /dev itself read-only: unprivileged, init and the script share a uid,
     * and the tmpfs would be the script's to write. */
    snprintf(p, sizeof p, "%s/dev", R);
    must(mount(NULL, p, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, "size=64k,mode=755") == 0, efd,
         STAGE_DEV);

    /* The namespace's own /proc, while the old root (with the host's full
     * /proc) is still visible: the kernel demands one. */
    snprintf(p, sizeof p, "%s/proc", R);
    must(mkdir(p, 0555) == 0, efd, STAGE_PROC);
    must(mount("proc", p, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0, efd, STAGE_PROC);

    /* Switch roots: pivot onto the new root itself, then detach the old one
     * that now sits underneath. */
    must(chdir(R) == 0, efd, STAGE_PIVOT);
    must(syscall(SYS_pivot_root, ".", ".") == 0, efd, STAGE_PIVOT);
    must(umount2(".", MNT_DETACH) == 0, efd, STAGE_PIVOT);
    must(chdir("/") == 0, efd, STAGE_PIVOT);
    /* The root itself read-only from here on. */
    must(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) == 0, efd,
         STAGE_ROOT);
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            close(c->plan[i].fd);
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
static _Noreturn void script_main(struct ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    reset_signals();
    if (setsid() < 0)
        child_fail(efd, STAGE_SETSID);
    efd = setup_fds(efd, o->fd_in, o->fd_out, o->fd_err);
    apply_rlimits(efd, c->rows, c->nrows);
    int rc = drop_caps_before_setuid();
    if (rc < 0) {
        errno = -rc;
        child_fail(efd, STAGE_CAPS);
    }
    if (c->set_groups && setgroups(0, NULL) < 0)
        child_fail(efd, STAGE_IDS);
    if (setresgid(JAIL_UID, JAIL_UID, JAIL_UID) < 0 || setresuid(JAIL_UID, JAIL_UID, JAIL_UID) < 0)
        child_fail(efd, STAGE_IDS);
    rc = drop_caps_after_setuid();
    if (rc < 0) {
        errno = -rc;
        child_fail(efd, STAGE_CAPS);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        child_fail(efd, STAGE_NNP);
    if (chdir(o->cwd) < 0)
        child_fail(efd, STAGE_CHDIR);
    /* Last before execve: from here on the filter binds. */
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &c->seccomp) < 0)
        child_fail(efd, STAGE_SECCOMP);
    execve(o->argv[0], (char *const *)o->argv, (char *const *)o->envp);
    child_fail(efd, STAGE_EXEC);
}

/* pid 1 of the run's namespaces. */
static _Noreturn void init_main(struct ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    char go;
    ssize_t r;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    do
        r = read(c->go_r, &go, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1) {
        errno = EPIPE;
        child_fail(efd, STAGE_MAPS);
    }
    /* Nothing we mount may reach the host's mount tree. */
    must(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0, efd, STAGE_MOUNT);
    char what[200] = "";
    int rc = plan_make(c, what, sizeof what);
    if (rc < 0) {
        errno = -rc;
        child_fail_what(efd, STAGE_BIND, what);
    }
    /* As root, our host uid 0 is not mapped inside (on purpose): become the
     * namespace's own root, an unprivileged host uid, so that the files we
     * make in our tmpfs have an owner the namespace can name. */
    if (c->set_groups && (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0))
        child_fail(efd, STAGE_IDS);
    /* A change of credentials clears the parent-death signal: set it again,
     * or a killed parent (a worker killed mid-run) leaves the run alive. If
     * the parent died before this line, the read of the filter below fails
     * and we exit. */
    if (c->set_groups)
        prctl(PR_SET_PDEATHSIG, SIGKILL);
    /* Nothing of the parent's (its sockets, its other files) stays open in
     * the namespace: only our pipes and the script's three. */
    int keep[PLAN_MAX + 6] = {efd, c->status_w, o->fd_in, o->fd_out, o->fd_err, c->go_r};
    size_t nkeep = 6;
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            keep[nkeep++] = c->plan[i].fd;
    close_all_except(keep, nkeep);
    build_root(c);
    if (sethostname("runmyscript", 11) < 0)
        child_fail(efd, STAGE_ROOT);
    if (!o->network) {
        rc = loopback_up();
        if (rc < 0) {
            errno = -rc;
            child_fail(efd, STAGE_NET);
        }
    }

    /* The parent has meanwhile put us into the cgroups and compiled the
     * seccomp filter: its length, then its instructions. */
    uint32_t n = 0;
    if (util_read_exact(c->go_r, &n, sizeof n) < 0 || n == 0 || n > ARRAY_SIZE(c->bpf) ||
        util_read_exact(c->go_r, c->bpf, n * sizeof c->bpf[0]) < 0) {
        errno = EPIPE;
        child_fail(efd, STAGE_SECCOMP);
    }
    c->seccomp.len = (unsigned short)n;
    c->seccomp.filter = c->bpf;
    close(c->go_r);

    /* Forward the parent's SIGTERM (the wall limit, a cancel) to all. */
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
        child_fail(efd, STAGE_FORK);
    /* The script holds the error pipe until its execve; init lets go. */
    close(efd);
    close(o->fd_in);
    close(o->fd_out);
    close(o->fd_err);

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
    /* The script is done: report, and leave. The kernel kills the rest of
     * the namespace when pid 1 exits. */
    struct rusage all;
    getrusage(RUSAGE_CHILDREN, &all);
    struct {
        int status;
        struct rusage ru;
    } msg = {st, all};
    ssize_t w = write(c->status_w, &msg, sizeof msg);
    (void)w;
    _exit(0);
}

static int write_map(pid_t pid, const char *file, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    return util_write_all(fd, text, strlen(text));
}

static int start_namespaces(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    static struct ns_ctx c; /* large (the plan): not on the stack */
    int errp[2] = {-1, -1}, gop[2] = {-1, -1}, stp[2] = {-1, -1};
    bool root_user = geteuid() == 0;
    int rc;

    memset(&c, 0, sizeof c);
    c.o = o;
    c.err_w = c.go_r = c.status_w = -1;
    snprintf(c.tmp_opts, sizeof c.tmp_opts, "size=%llu,nr_inodes=%llu,mode=1777",
             (unsigned long long)o->limits->tmp_bytes, (unsigned long long)o->limits->tmp_files);

    if (root_user) {
        rc = take_uid(o, p, err, errlen);
        if (rc < 0)
            return rc;
        rc = give_paths(o, p, err, errlen);
        if (rc < 0)
            return rc;
    } else {
        p->host_uid = geteuid();
    }
    cg_setup(p, o);
    bool memory_by_cgroup = p->cg_memory != NULL;
    /* RLIMIT_NPROC is counted per user namespace (Linux 5.14+): a fresh one
     * starts at zero. */
    c.nrows = build_rlimits(o->limits, memory_by_cgroup, 0, c.rows);
    c.set_groups = root_user;

    if (pipe2(errp, O_CLOEXEC) < 0 || pipe2(gop, O_CLOEXEC) < 0 || pipe2(stp, O_CLOEXEC) < 0) {
        rc = -errno;
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        goto fail;
    }
    c.err_w = errp[1];
    c.go_r = gop[0];
    c.status_w = stp[1];

    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP;
    if (!o->network)
        flags |= CLONE_NEWNET;
    if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0) {
        rc = -ENOSYS;
        p->unavailable = true;
        snprintf(err, errlen, "the kernel has no seccomp");
        goto fail;
    }
    pid_t pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (pid < 0 && errno == EINVAL && (flags & CLONE_NEWCGROUP)) {
        /* A kernel without cgroup namespaces: the rest still holds. */
        flags &= ~(unsigned long)CLONE_NEWCGROUP;
        pid = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    }
    if (pid < 0) {
        rc = -errno;
        /* What clone answers where user namespaces are off, capped or
         * filtered: the host's doing, not this run's. */
        p->unavailable = errno == EPERM || errno == EINVAL || errno == ENOSPC || errno == EUSERS || errno == EACCES;
        snprintf(err, errlen, "cannot make the namespaces: %s", strerror(errno));
        goto fail;
    }
    if (pid == 0) {
        close(errp[0]);
        close(gop[1]);
        close(stp[0]);
        init_main(&c);
    }
    p->pid = pid;
    close(errp[1]);
    close(gop[0]);
    close(stp[1]);
    errp[1] = gop[0] = stp[1] = -1;

    /* The maps: inside uid/gid 1000 is the run's host uid. As root, inside
     * 0 is uid_base, an unprivileged host uid that owns nothing outside,
     * for init's own files; host root is never mapped. Unprivileged, we
     * may map only ourselves. */
    char map[96];
    if (root_user)
        snprintf(map, sizeof map, "0 %u 1\n%u %u 1\n", o->uid_base, JAIL_UID, (unsigned)p->host_uid);
    else
        snprintf(map, sizeof map, "%u %u 1\n", JAIL_UID, (unsigned)p->host_uid);
    rc = root_user ? 0 : write_map(pid, "setgroups", "deny");
    if (rc == 0)
        rc = write_map(pid, "uid_map", map);
    if (rc == 0) {
        if (!root_user)
            snprintf(map, sizeof map, "%u %u 1\n", JAIL_UID, (unsigned)getegid());
        rc = write_map(pid, "gid_map", map);
    }
    if (rc < 0) {
        snprintf(err, errlen, "setting up the namespace's uid maps: %s", strerror(-rc));
        goto fail_child;
    }
    if (write(gop[1], "g", 1) != 1) {
        rc = -errno;
        snprintf(err, errlen, "starting the namespace: %s", strerror(errno));
        goto fail_child;
    }
    /* While init builds its root (on the other core), the cgroups and the
     * filter: init waits for them only before it forks the script. */
    if (p->cg_memory)
        rc = cg_enter(p->cg_memory, pid);
    if (rc == 0 && p->cg_pids)
        rc = cg_enter(p->cg_pids, pid);
    if (rc < 0) {
        snprintf(err, errlen, "putting the run into its cgroups: %s", strerror(-rc));
        goto fail_child;
    }
    const struct sock_fprog *prog = seccomp_program(&rc);
    if (!prog) {
        snprintf(err, errlen, "building the seccomp filter: %s", strerror(-rc));
        goto fail_child;
    }
    uint32_t n = prog->len;
    if ((rc = util_write_all(gop[1], &n, sizeof n)) < 0 ||
        (rc = util_write_all(gop[1], prog->filter, n * sizeof prog->filter[0])) < 0) {
        /* EPIPE: init gave up already; its report says why. */
        struct child_error early;
        if (read_child_error(errp[0], &early)) {
            rc = early.err ? -early.err : -EIO;
            format_child_error(&early, err, errlen);
        } else {
            snprintf(err, errlen, "starting the namespace: %s", strerror(-rc));
        }
        goto fail_child;
    }
    close(gop[1]);
    gop[1] = -1;

    /* Wait for setup: EOF when the script has exec'd, a report otherwise. */
    struct child_error ce;
    int failed = read_child_error(errp[0], &ce);
    close(errp[0]);
    errp[0] = -1;
    if (failed) {
        rc = ce.err ? -ce.err : -EIO;
        format_child_error(&ce, err, errlen);
        goto fail_child;
    }
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    p->status_fd = stp[0];
    plan_free(&c);
    return 0;

fail_child:
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
        ;
    p->reaped = true;
    p->pid = -1;
fail:
    for (int i = 0; i < 2; i++) {
        if (errp[i] >= 0)
            close(errp[i]);
        if (gop[i] >= 0)
            close(gop[i]);
        if (stp[i] >= 0)
            close(stp[i]);
    }
    plan_free(&c);
    jail_finish(p);
    return rc;
}

/* ---------------------------------------------------- the rlimits mode */

static int start_rlimits(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    int pipefd[2];
    struct rlimit_row rows[8];

    /* Orphans of the run come to us, not to init: see the theory above. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        snprintf(err, errlen, "cannot become a child subreaper: %s", strerror(errno));
        return -errno;
    }
    /* As root, the script still never runs as root: it gets a uid of its
     * own, as in the namespaces, and the workspace becomes its. */
    bool root_user = geteuid() == 0;
    uid_t uid = getuid();
    if (root_user) {
        int rc = take_uid(o, p, err, errlen);
        if (rc < 0)
            return rc;
        rc = give_paths(o, p, err, errlen);
        if (rc < 0)
            return rc;
        uid = p->host_uid;
    }
    /* RLIMIT_NPROC counts every process of the uid, not just the run's. A
     * uid of the run's own (locked, its last run fully killed) has none. */
    uint64_t have = o->limits->processes > 0 && !root_user ? count_uid_processes(uid) : 0;
    size_t nrows = build_rlimits(o->limits, false, have, rows);

    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -errno;
    }
    pid_t parent = getpid(); /* for the child: did its parent die already? */
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
        reset_signals();
        if (setsid() < 0)
            child_fail(efd, STAGE_SETSID);
        efd = setup_fds(efd, o->fd_in, o->fd_out, o->fd_err);
        apply_rlimits(efd, rows, nrows);
        if (root_user && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 || setresuid(uid, uid, uid) < 0))
            child_fail(efd, STAGE_IDS);
        /* After the change of uid (which clears it): the script dies with
         * its parent (a killed worker). Its own children do not: the
         * fallback has no PID namespace to take them along. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent)
            child_fail(efd, STAGE_IDS); /* the parent died already */
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            child_fail(efd, STAGE_NNP);
        if (chdir(o->cwd) < 0)
            child_fail(efd, STAGE_CHDIR);
        execve(o->argv[0], (char *const *)o->argv, (char *const *)o->envp);
        child_fail(efd, STAGE_EXEC);
    }

    close(pipefd[1]);
    p->pid = pid;
    struct child_error ce;
    int failed = read_child_error(pipefd[0], &ce);
    close(pipefd[0]);
    if (failed) {
        while (waitpid(pid, &p->wstatus, 0) < 0 && errno == EINTR)
            ;
        p->reaped = true;
        format_child_error(&ce, err, errlen);
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

int jail_start(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->mode = o->mode;
    p->pid = -1;
    p->pidfd = -1;
    p->status_fd = -1;
    p->uid_lock = -1;
    if (o->mode == JAIL_MODE_NAMESPACES)
        return start_namespaces(o, p, err, errlen);
    return start_rlimits(o, p, err, errlen);
}

/* --------------------------------------------------- the process tree */

struct pidset {
    pid_t *v;
    size_t n, cap;
};

static bool pidset_has(const struct pidset *s, pid_t pid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i] == pid)
            return true;
    return false;
}

static int pidset_add(struct pidset *s, pid_t pid)
{
    if (pidset_has(s, pid))
        return 0;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 64;
        pid_t *v = realloc(s->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = pid;
    return 1;
}

/* Adds the children of every task of pid to s; returns how many were new. */
static int add_children(struct pidset *s, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
    cleanup_dir DIR *d = opendir(path);
    if (!d)
        return 0;
    int added = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (de->d_name[0] == '.')
            continue;
        char cpath[300];
        snprintf(cpath, sizeof cpath, "/proc/%d/task/%s/children", (int)pid, de->d_name);
        cleanup_free char *buf = NULL;
        size_t len;
        if (util_read_file_at(AT_FDCWD, cpath, 1 << 20, &buf, &len) < 0)
            continue;
        for (char *tok = buf, *end; *tok; tok = end) {
            long c = strtol(tok, &end, 10);
            if (end == tok)
                break;
            if (c > 0 && pidset_add(s, (pid_t)c) > 0)
                added++;
        }
    }
    return added;
}

/* All descendants of this process, as of now. */
static void collect_descendants(struct pidset *s)
{
    s->n = 0;
    add_children(s, getpid());
    for (size_t i = 0; i < s->n; i++)
        add_children(s, s->v[i]);
}

int jail_signal(struct jail_proc *p, int sig)
{
    if (p->pid <= 0 || p->reaped)
        return 0;
    if (p->mode == JAIL_MODE_NAMESPACES) {
        /* init forwards it to every process of the namespace. */
        return kill(p->pid, sig) < 0 ? -errno : 0;
    }
    struct pidset s = {0};
    /* The process group first (cheap, and covers the common case), then
     * every descendant that left it. */
    kill(-p->pid, sig);
    collect_descendants(&s);
    for (size_t i = 0; i < s.n; i++)
        kill(s.v[i], sig);
    free(s.v);
    return 0;
}

/* Namespaces: init is gone; its report (if it made one) says how the script
 * ended. Without one, init was killed (the parent's SIGKILL at the end of
 * the grace), and so was the script. */
static void read_status(struct jail_proc *p, int init_status, const struct rusage *init_ru)
{
    struct {
        int status;
        struct rusage ru;
    } msg;
    ssize_t r = -1;
    if (p->status_fd >= 0) {
        do
            r = read(p->status_fd, &msg, sizeof msg);
        while (r < 0 && errno == EINTR);
    }
    if (r == (ssize_t)sizeof msg) {
        p->wstatus = msg.status;
        p->ru = msg.ru;
    } else {
        p->wstatus = WIFSIGNALED(init_status) ? init_status : (SIGKILL & 0x7f);
        p->ru = *init_ru;
    }
}

int jail_try_reap(struct jail_proc *p, int *wstatus, struct rusage *ru)
{
    if (!p->reaped) {
        int st;
        struct rusage r;
        pid_t w = wait4(p->pid, &st, WNOHANG, &r);
        if (w < 0)
            return -errno;
        if (w == 0)
            return 0;
        p->reaped = true;
        if (p->mode == JAIL_MODE_NAMESPACES) {
            read_status(p, st, &r);
            /* CPU: init's children include the script and every orphan it
             * reaped; init's own share is negligible. */
            p->ru.ru_utime = r.ru_utime;
            p->ru.ru_stime = r.ru_stime;
        } else {
            p->wstatus = st;
            p->ru = r;
        }
    }
    *wstatus = p->wstatus;
    *ru = p->ru;
    return 1;
}

/* Reaps every exited child; the first process's status is kept. */
static void reap_children(struct jail_proc *p)
{
    struct pidset s = {0};
    add_children(&s, getpid());
    for (size_t i = 0; i < s.n; i++) {
        if (s.v[i] == p->pid) {
            if (!p->reaped && wait4(p->pid, &p->wstatus, WNOHANG, &p->ru) == p->pid)
                p->reaped = true;
            continue;
        }
        waitpid(s.v[i], NULL, WNOHANG);
    }
    free(s.v);
}

int jail_kill_all(struct jail_proc *p)
{
    if (p->pid <= 0)
        return 0;
    if (p->mode == JAIL_MODE_NAMESPACES) {
        if (!p->reaped) {
            int st;
            struct rusage r;
            kill(p->pid, SIGKILL);
            /* Reaping init returns only once the kernel has killed and
             * collected every process of its namespace. */
            while (wait4(p->pid, &st, 0, &r) < 0 && errno == EINTR)
                ;
            p->reaped = true;
            read_status(p, st, &r);
            p->ru.ru_utime = r.ru_utime;
            p->ru.ru_stime = r.ru_stime;
        }
        return 0;
    }

    struct pidset s = {0}, stopped = {0}, killed = {0};
    /* Freeze: stop every descendant until a pass finds no new one. */
    for (int round = 0; round < 1000; round++) {
        collect_descendants(&s);
        int fresh = 0;
        for (size_t i = 0; i < s.n; i++) {
            if (pidset_add(&stopped, s.v[i]) > 0) {
                kill(s.v[i], SIGSTOP);
                fresh++;
            }
        }
        if (!fresh)
            break;
    }
    /* Kill the frozen tree, then keep killing and reaping until nothing is
     * left (killed parents hand their children to us). A zombie still
     * answers kill(), so "left" means "not yet reaped". */
    int64_t give_up = util_now_ms() + 5000;
    for (;;) {
        collect_descendants(&s);
        for (size_t i = 0; i < s.n; i++)
            if (kill(s.v[i], SIGKILL) == 0)
                discard(pidset_add(&killed, s.v[i]));
        reap_children(p);
        collect_descendants(&s);
        if (s.n == 0 || util_now_ms() > give_up)
            break;
        usleep(500);
    }
    int n = (int)killed.n;
    if (pidset_has(&killed, p->pid))
        n--;
    free(s.v);
    free(stopped.v);
    free(killed.v);
    return n;
}

void jail_finish(struct jail_proc *p)
{
    if (p->cg_v2 && p->cg_memory) {
        p->memory_breached = p->memory_breached || cg_read_key(p->cg_memory, "memory.events", "oom_kill") > 0;
        p->pids_breached = p->pids_breached || cg_read_key(p->cg_memory, "pids.events", "max") > 0;
    } else if (p->cg_memory) {
        /* oom_kill (Linux 4.13+) counts kills; failcnt counts allocations
         * that hit the limit and had to reclaim or fail. */
        long long kills = cg_read_key(p->cg_memory, "memory.oom_control", "oom_kill");
        p->memory_breached = p->memory_breached || kills > 0;
    }
    if (p->cg_pids)
        p->pids_breached = p->pids_breached || cg_read_key(p->cg_pids, "pids.events", "max") > 0;
    cg_remove(&p->cg_memory);
    cg_remove(&p->cg_pids);
    for (size_t i = 0; p->given && p->given[i]; i++) {
        int rc = chown_tree(AT_FDCWD, p->given[i], geteuid(), getegid(), 0, p->given_keep);
        if (rc < 0 && rc != -ENOENT)
            log_msg(LOG_LVL_ERROR, "taking back %s from uid %u: %s", p->given[i], (unsigned)p->host_uid,
                    strerror(-rc));
        free(p->given[i]);
    }
    free(p->given);
    p->given = NULL;
    free(p->given_keep);
    p->given_keep = NULL;
    if (p->uid_lock >= 0) {
        close(p->uid_lock);
        p->uid_lock = -1;
    }
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

/* ------------------------------------------------------------ tools */

static void tool_lines(const struct jail_tool *t, struct dbuf *pending, bool flush)
{
    size_t start = 0;
    for (size_t i = 0; i < pending->len; i++) {
        if (pending->data[i] == '\n') {
            pending->data[i] = '\0';
            t->line(t->ctx, pending->data + start);
            start = i + 1;
        }
    }
    if (flush && start < pending->len) {
        t->line(t->ctx, pending->data + start);
        start = pending->len;
    }
    if (pending->data) {
        memmove(pending->data, pending->data + start, pending->len - start);
        pending->len -= start;
        pending->data[pending->len] = '\0';
    }
}

int jail_run_tool(const struct jail_tool *t, int *wstatus, char **output, char *err, size_t errlen)
{
    struct jail_opts o = t->o;
    struct jail_proc p;
    int outp[2] = {-1, -1};
    cleanup_fd int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (nul < 0 || pipe2(outp, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "setting up the tool's output: %s", strerror(errno));
        return -errno;
    }
    o.fd_in = nul;
    o.fd_out = outp[1];
    o.fd_err = outp[1];
    int rc = jail_start(&o, &p, err, errlen);
    if (rc < 0 && p.unavailable && t->may_fall_back) {
        /* The tool's binds are at the same paths inside and out: the
         * fallback needs nothing rewritten. */
        log_msg(LOG_LVL_WARN, "no namespaces here (%s): running the tool with the rlimits fallback", err);
        jail_proc_free(&p);
        o.mode = JAIL_MODE_RLIMITS;
        rc = jail_start(&o, &p, err, errlen);
    }
    close(outp[1]);
    if (rc < 0) {
        close(outp[0]);
        jail_proc_free(&p);
        return rc;
    }
    struct dbuf buf, pending;
    dbuf_init(&buf, t->max_output);
    dbuf_init(&pending, 1 << 20);
    int64_t deadline = util_now_ms() + t->timeout_ms;
    bool timed_out = false;
    char chunk[8192];
    for (;;) {
        int64_t left = deadline - util_now_ms();
        if (left <= 0 && !timed_out) {
            jail_kill_all(&p);
            timed_out = true;
        }
        struct pollfd pfd = {outp[0], POLLIN, 0};
        int pr = poll(&pfd, 1, timed_out ? 1000 : (int)(left > 1000 ? 1000 : left));
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        ssize_t r = read(outp[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break; /* EOF: every process of the tool is gone or closed it */
        discard(dbuf_append(&buf, chunk, (size_t)r)); /* past max_output: dropped */
        if (t->line) {
            if (dbuf_append(&pending, chunk, (size_t)r) < 0)
                tool_lines(t, &pending, true);
            else
                tool_lines(t, &pending, false);
        }
    }
    close(outp[0]);
    if (t->line)
        tool_lines(t, &pending, true);
    dbuf_free(&pending);
    /* The output closed: the tool is done, or about to be. Give it a moment
     * to exit on its own (in the namespaces, init must still report the
     * status), then whatever is left of it goes. */
    struct rusage ru;
    int64_t until = util_now_ms() + 2000;
    int reaped;
    while ((reaped = jail_try_reap(&p, wstatus, &ru)) == 0 && util_now_ms() < until) {
        struct pollfd pfd = {p.pidfd, POLLIN, 0};
        if (p.pidfd < 0 || poll(&pfd, 1, 50) < 0)
            usleep(10000);
    }
    jail_kill_all(&p);
    if (reaped <= 0 && jail_try_reap(&p, wstatus, &ru) < 0)
        *wstatus = SIGKILL & 0x7f;
    jail_proc_free(&p);
    *output = dbuf_steal(&buf, NULL);
    return timed_out ? -ETIMEDOUT : 0;
}
