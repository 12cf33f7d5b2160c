/* jail_seccomp.c: the script's last steps before execve that take power
 * away: the seccomp filter (one builder for the jail and the fallback, each
 * kind built once per process, each rule with its reason) and the dropping
 * of every capability around the change of uid. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define JAIL_BPF_EXPORT_MAX (1 << 20) /* bytes of BPF libseccomp may export: far above any filter of ours */
#define JAIL_CAP_LAST_GUESS 40        /* the last capability when /proc does not say: above every kernel's */

/* Exports the filter's BPF into out (out->filter: caller frees) through a
 * memfd: libseccomp 2.5 exports only to an fd. 0 or a negative errno. */
static int export_bpf(scmp_filter_ctx ctx, struct sock_fprog *out)
{
    cleanup_fd int fd = memfd_create("rms-seccomp", MFD_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = seccomp_export_bpf(ctx, fd);
    if (rc < 0)
        return rc;
    if (lseek(fd, 0, SEEK_SET) < 0)
        return -errno;
    char *bpf = NULL;
    size_t len = 0;
    rc = util_read_fd(fd, JAIL_BPF_EXPORT_MAX, &bpf, &len);
    if (rc < 0)
        return rc;
    if (len == 0 || len % sizeof(struct sock_filter)) {
        free(bpf);
        return -EINVAL;
    }
    out->filter = (struct sock_filter *)bpf;
    out->len = (unsigned short)(len / sizeof(struct sock_filter));
    return 0;
}

#define JAIL_PRIO_PROCESS 0       /* setpriority's which for one process (PRIO_PROCESS) */
#define JAIL_IOPRIO_WHO_PROCESS 1 /* ioprio_set's which for one process */
#define JAIL_SOCK_TYPE_MASK 0xf /* the type of socket(2)'s type, without SOCK_NONBLOCK and SOCK_CLOEXEC */

/* What the fallback refuses besides the jail's list: it has no PID or
 * network namespace to keep the host's objects apart. */
static int fallback_rules(scmp_filter_ctx ctx, enum jail_filter kind)
{
    const uint32_t eacces = SCMP_ACT_ERRNO(EACCES);
    int rc = 0;
    /* Unix sockets by path reach the host's daemons (the server's own
     * FastCGI socket among them), and Landlock does not govern connecting
     * to one: no socket(AF_UNIX). socketpair(2) is another call and stays
     * (multiprocessing's pipes, asyncio's self-pipe). */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, eacces, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
    /* Nor a datagram pair: sendto and sendmsg of a datagram socket take
     * any address, a socketpair's end as well, and reach the host's
     * datagram sockets by path (syslog's, the journal's). A stream or
     * seqpacket pair refuses an address; a raw one is a datagram one. */
    static const int dgram_types[] = {SOCK_DGRAM, SOCK_RAW};
    for (size_t i = 0; i < ARRAY_SIZE(dgram_types) && rc == 0; i++)
        rc = seccomp_rule_add(ctx, eacces, SCMP_SYS(socketpair), 2, SCMP_A0(SCMP_CMP_EQ, AF_UNIX),
                              SCMP_A1(SCMP_CMP_MASKED_EQ, JAIL_SOCK_TYPE_MASK, dgram_types[i]));
    /* Steering another process, which the kernel allows the same uid
     * (the server's processes, run unprivileged) and Landlock does not
     * scope: its priority, I/O priority, scheduling class and CPUs. The
     * caller's own only: pid 0, as prlimit64 in the jail's list. */
    const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
    static const char *const by_pid[] = {"sched_setaffinity", "sched_setscheduler", "sched_setparam",
                                         "sched_setattr"};
    for (size_t i = 0; i < ARRAY_SIZE(by_pid) && rc == 0; i++) {
        int n = seccomp_syscall_resolve_name(by_pid[i]);
        if (n != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, eperm, n, 1, SCMP_A0(SCMP_CMP_NE, 0));
    }
    /* setpriority and ioprio_set name a process, a group or a user: only
     * the process 0 (PRIO_PROCESS, IOPRIO_WHO_PROCESS; nice(3) asks so). */
    static const struct {
        const char *name;
        uint64_t self;
    } by_who[] = {{"setpriority", JAIL_PRIO_PROCESS}, {"ioprio_set", JAIL_IOPRIO_WHO_PROCESS}};
    for (size_t i = 0; i < ARRAY_SIZE(by_who) && rc == 0; i++) {
        int n = seccomp_syscall_resolve_name(by_who[i].name);
        if (n == __NR_SCMP_ERROR)
            continue;
        rc = seccomp_rule_add(ctx, eperm, n, 1, SCMP_A0(SCMP_CMP_NE, by_who[i].self));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, eperm, n, 1, SCMP_A1(SCMP_CMP_NE, 0));
    }
    /* Without the network no IP socket at all: Landlock covers TCP only,
     * not UDP, ICMP or raw. */
    if (kind == JAIL_FILTER_FALLBACK_OFFLINE) {
        if (rc == 0)
            rc = seccomp_rule_add(ctx, eacces, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, eacces, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_INET6));
        if (rc == 0)
            rc = seccomp_rule_add(ctx, eacces, SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, AF_PACKET));
    }
    return rc;
}

/* The filter: everything is allowed (Python and its C extensions need a wide
 * surface) except what lets a process leave or widen its sandbox, reach
 * the kernel's rarely-hardened corners, or look at other processes.
 * Compiled once per process into BPF (the parent does it before the clone:
 * a forked child would pay the allocations again in copy-on-write faults),
 * then only loaded by each script. */
static int build_seccomp(enum jail_filter kind, struct sock_fprog *out)
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
    /* Taking another process's descriptors. */
    DENY("pidfd_getfd");
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
    /* Changing another process's limits (a server's, so that its teardown
     * fails): prlimit64 with a pid other than 0, which is the caller. The C
     * library's getrlimit and setrlimit pass 0. */
    if (rc == 0)
        rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(prlimit64), 1, SCMP_A0(SCMP_CMP_NE, 0));
    /* System V IPC, in every mode. In the fallback it is the host's:
     * segments, semaphores and queues of every other run and program. In
     * the jail it is the run's own namespace, but a segment no process has
     * attached is no process's memory, so the watch that bounds a run
     * without a cgroup cannot see it. Python's multiprocessing uses POSIX
     * semaphores and shared memory (files in /dev/shm), not these. */
    static const char *const sysv[] = {"shmget", "shmat",  "shmdt",  "shmctl", "semget", "semop",
                                       "semtimedop", "semctl", "msgget", "msgsnd", "msgrcv", "msgctl"};
    for (size_t i = 0; i < ARRAY_SIZE(sysv) && rc == 0; i++) {
        int n = seccomp_syscall_resolve_name(sysv[i]);
        if (n != __NR_SCMP_ERROR)
            rc = seccomp_rule_add(ctx, eperm, n, 0);
    }
#undef DENY
    /* Where the executor's watch holds memory (no cgroup: the fallback, the
     * jail without one), a memfd is memory it can see only while a process
     * holds it: sent through a socket and closed, it lives in the socket's
     * queue, out of every process's sight. No memfd_create there (files of
     * the jail's /tmp are held to tmp_bytes however they are held). */
    if (rc == 0 && kind != JAIL_FILTER_JAIL)
        rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(memfd_create), 0);
    if (rc == 0 && kind != JAIL_FILTER_JAIL && kind != JAIL_FILTER_JAIL_WATCHED)
        rc = fallback_rules(ctx, kind);
    if (rc == 0)
        rc = export_bpf(ctx, out);
    seccomp_release(ctx);
    return rc;
}

/* The compiled filters, each made on first use and kept for the process. */
const struct sock_fprog *jail__seccomp_program(enum jail_filter kind, int *rc_out)
{
    static struct sock_fprog prog[JAIL_FILTER_N];
    static int rc[JAIL_FILTER_N] = {1, 1, 1, 1};
    if (rc[kind] == 1)
        rc[kind] = build_seccomp(kind, &prog[kind]);
    *rc_out = rc[kind];
    return rc[kind] == 0 ? &prog[kind] : NULL;
}

/* Capabilities go in two steps around the uid change. Before it (this
 * needs CAP_SETPCAP): the securebits that keep a uid 0 or a file capability
 * from granting any, locked, and the bounding set emptied. */
int jail__drop_caps_before_setuid(void)
{
    int last = JAIL_CAP_LAST_GUESS;
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
int jail__drop_caps_after_setuid(void)
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

bool jail__seccomp_usable(void)
{
    return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && seccomp_api_get() >= 1;
}
