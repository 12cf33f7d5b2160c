/* jail_internal.h: what the parts of the jail share: the child's failure
 * report, the rlimits, the seccomp filter and capabilities, the cgroups,
 * the uid slots, the mount plan and the root, init, the operations of each
 * kind of run, the run's process tree, and a warm run's request. Not for
 * the rest of sandbox/: jail.h is. */
#ifndef RMS_JAIL_INTERNAL_H
#define RMS_JAIL_INTERNAL_H

#include <limits.h>
#include <linux/filter.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mount.h> /* (and linux/mount.h with it: what the guards below test) */
#include <sys/types.h>
#include <wchar.h>

#include "jail.h"

/* ------------------------------------------------- jail_child.c */

/* Where a child's setup failed, for the report. */
enum jail_stage {
    JAIL_STAGE_SETSID = 1, JAIL_STAGE_DUP, JAIL_STAGE_RLIMIT, JAIL_STAGE_NNP, JAIL_STAGE_CHDIR, JAIL_STAGE_EXEC,
    JAIL_STAGE_MAPS, JAIL_STAGE_MOUNT, JAIL_STAGE_ROOT, JAIL_STAGE_PIVOT, JAIL_STAGE_PROC, JAIL_STAGE_DEV,
    JAIL_STAGE_ETC, JAIL_STAGE_BIND, JAIL_STAGE_NET, JAIL_STAGE_FORK, JAIL_STAGE_IDS, JAIL_STAGE_CAPS,
    JAIL_STAGE_SECCOMP, JAIL_STAGE_INIT_EXEC, JAIL_STAGE_LANDLOCK, JAIL_STAGE_CGROUP, JAIL_STAGE_NET_OWN,
};

#define JAIL_CHILD_FAILED 127   /* the exit status of a child whose setup failed (it reported why) */
/* mount_setattr(2) (Linux 5.12), where the C library does not name it
 * (the root's read-only remount, a warm run's detached trees). */
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef MOUNT_ATTR_NOSUID
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOUNT_ATTR_SIZE_VER0
struct mount_attr {
    uint64_t attr_set;
    uint64_t attr_clr;
    uint64_t propagation;
    uint64_t userns_fd;
};
#endif
/* open_tree(2) where the C library's headers predate it (a warm run's
 * detached trees: jail_warm.c, jail_zygote.c) */
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#define JAIL_MARK_WAIT_MS 50    /* the longest wait for the clock to pass a run's start mark */
#define JAIL_CG_TASKS 2         /* cgroup v1 hierarchies a run joins: memory, pids */
#define JAIL_FD_SCAN_MAX 65536  /* without close_range, descriptors are closed one by one up to here */

/* What a child reports when its setup fails. */
struct jail_child_error {
    int stage;
    int err;
    char what[200];  /* the path or detail, may be empty */
};

/* In a forked child: reports (stage, err, what) on errfd and exits.
 * what may be NULL. */
_Noreturn void jail__child_fail_err(int errfd, int stage, int err, const char *what);
/* The same with errno, which must be the failed call's. */
_Noreturn void jail__child_fail(int errfd, int stage);
/* jail__child_fail(errfd, stage) unless ok. */
void jail__must(int ok, int errfd, int stage);
/* In the parent: 1 and *m filled when the child reported a failure, 0
 * when the pipe closed without a report (it reached execve). */
int jail__read_child_error(int fd, struct jail_child_error *m);
/* "STAGE [WHAT] failed: REASON" into err. */
void jail__format_child_error(const struct jail_child_error *m, char *err, size_t errlen);
/* Whether init's failure is the host's refusal of the jail's own mounts
 * (a container's masked /proc, its seccomp profile refusing mount): no run
 * could have the namespaces here, so isolation = auto may fall back. A
 * failed bind of a run's own path is not. */
bool jail__host_refused(const struct jail_child_error *m);

struct jail_rlimit_row {
    int resource;
    rlim_t value;
};
#define JAIL_RLIMIT_ROWS 8      /* build_rlimits fills at most six */

/* Processes of the real uid now (RLIMIT_NPROC counts them all). */
uint64_t jail__count_uid_processes(uid_t uid);
/* The rlimits of a run into rows (JAIL_RLIMIT_ROWS); returns how many.
 * memory_by_cgroup: no RLIMIT_AS. nproc_base: processes the uid already
 * has where the limit is counted. */
size_t jail__build_rlimits(const struct exec_limits *l, bool memory_by_cgroup, uint64_t nproc_base,
                           struct jail_rlimit_row *rows);
/* In the child: sets them, or reports and exits. */
void jail__apply_rlimits(int efd, const struct jail_rlimit_row *rows, size_t n);
/* In the child: default dispositions, empty mask. */
void jail__reset_signals(void);
/* In the child: in, out and err become 0-2, nothing else but efd stays
 * open; returns efd, moved above 2 if it was not. */
int jail__setup_fds(int efd, int in, int out, int err);
/* The script's own process, cold (before its execve) or warm (before its
 * file runs): its session, stdin (stdin_inside opened, or in), stdout and
 * stderr, rlimits, every capability dropped, uid and gid JAIL_UID (and no
 * groups: set_groups), no_new_privs, cwd, then the filter, which binds
 * from here on. Returns efd, moved above 2; reports and exits on failure. */
int jail__script_drop(int efd, const char *stdin_inside, int in, int out, int err, const struct jail_rlimit_row *rows,
                      size_t nrows, bool set_groups, const char *cwd, const struct sock_fprog *filter);
/* Closes every descriptor but the n in keep (close_range above the last). */
void jail__close_all_except(const int *keep, size_t n);
/* In a namespace's pid 1: SIGTERM, SIGINT and SIGHUP forwarded to every
 * process of it. */
void jail__init_forward_signals(void);
/* In init, in the run's new network namespace, for a run whose network is
 * on (jail_opts.net_sock): the loopback up, a default route through it,
 * the rules (jail_net.c) that send every TCP connection to the proxy's
 * port and every DNS query to the resolver's and drop the rest, and the
 * proxy's and resolver's sockets bound there and sent on sock
 * (jail.h says how). all: the loopback's TCP too (jail_opts.net_all). 0, or
 * -errno with the step in what. */
int jail__net_own(int sock, bool all, char *what, size_t n) must_check;
/* In a spare, before its run is known: the rules loaded and the sockets
 * bound, so that a networked run taken from it adds only the default
 * route and hands the sockets over (jail__net_own). Without the route a
 * run that takes the spare without network reaches nothing but its
 * loopback, as it would with no rules. Only where the zygote has loaded
 * libnftables (it has served a networked run); 0 or -errno (the run then
 * makes what is missing itself). */
int jail__net_ahead(void);
/* In a spare handed a run without network: the sockets made ahead closed
 * (the rules stay, inert without a route). */
void jail__net_ahead_drop(void);

/* ifconfig lo up, inside a new network namespace. 0 or -errno. */
int jail__loopback_up(void);

/* Mounts the pid namespace's own /proc at path (made already). Where the
 * kernel refuses one (EPERM: in a user namespace it gives a /proc only
 * where the one there is fully visible, and a container's has paths
 * masked by mounts over them) and may_share (shared_proc), binds the /proc this mount namespace has,
 * the container's, with the mounts that mask it (MS_REC: a bind of it
 * alone would unmask them, and is refused): a run then sees the
 * container's processes, as the fallback's runs would, and can signal
 * none of them (its pid namespace). *shared (may be NULL) says which.
 * 0, or -1 with errno (the fresh mount's). */
int jail__mount_proc(const char *path, bool may_share, bool *shared) must_check;
/* Lays the tree of the directory src into the directory dst: each of its
 * directories made in dst (0700, given to uid), each file or symlink in it
 * a symlink in dst to link_base/ and its path below src (what the run sees
 * of src there), given to uid; at most JAIL_HOME_TREE_MAX entries and
 * JAIL_HOME_TREE_DEPTH levels, the rest left out. With may_keep_owner a
 * uid the namespace does not map (an unprivileged server's zygote) keeps
 * what it has. 0 (nothing at src too) or -errno. */
#define JAIL_HOME_TREE_MAX 1024
#define JAIL_HOME_TREE_DEPTH 8
int jail__home_tree(const char *src, const char *dst, const char *link_base, uid_t uid, bool may_keep_owner);

/* ------------------------------------------------ jail_seccomp.c */

/* Which filter: one builder, what differs is what the run lacks. The jail
 * leans on its namespaces for System V IPC, other processes and sockets;
 * the fallback has none and refuses those in the filter itself. */
enum jail_filter {
    JAIL_FILTER_JAIL,             /* the namespaces' script and installer, a memory cgroup holding them */
    JAIL_FILTER_JAIL_WATCHED,     /* the same where the executor's watch holds memory: no memfd_create */
    JAIL_FILTER_FALLBACK,         /* the fallback with the network (script_network, installs) */
    JAIL_FILTER_FALLBACK_OFFLINE, /* the fallback without: no AF_INET/AF_INET6 sockets either */
    JAIL_FILTER_N
};
/* The compiled filter of that kind, made on first use and kept for the
 * process; NULL with *rc = -errno when it cannot be built. */
const struct sock_fprog *jail__seccomp_program(enum jail_filter kind, int *rc);
/* Whether this kernel and libseccomp can filter. */
bool jail__seccomp_usable(void);
/* In the script, around its change of uid: 0 or -errno. */
int jail__drop_caps_before_setuid(void);
int jail__drop_caps_after_setuid(void);

/* ------------------------------------------------- jail_cgroup.c */

/* Whether this process's cgroup v2 is delegated to us (memory and pids
 * enabled for its children). */
bool jail__cg_v2_delegated(void);
/* Makes the run's cgroups (o->tag) with its memory and pids limits, where
 * the host lets us; fills p->cg_*. Without them the run still goes. */
void jail__cg_setup(struct jail_proc *p, const struct jail_opts *o);
/* Puts pid into the cgroup directory dir. 0 or -errno. */
int jail__cg_enter(const char *dir, pid_t pid) must_check;
/* o->mark, if any: touched, its ctime kept (jail_opts.mark); then, right
 * before the script may run, the wait for the clock to pass it. */
void jail__mark_take(const struct jail_opts *o);
void jail__mark_wait(const struct jail_opts *o);
/* cgroup v1: opens (here, with our credentials, which are what a write
 * to them is checked with) the "tasks" files of p's cgroups into fds, for
 * the run's init to move itself with jail__cg_enter_self. A process that
 * writes "0" there moves alone, without the lock every fork and exit of
 * the machine takes (whose taking waits for an RCU grace period, up to
 * tens of ms), which a write of a pid to cgroup.procs takes. Returns how
 * many (0: none to open, cgroup v2 or no cgroups), or -errno. */
int jail__cg_tasks_open(const struct jail_proc *p, int fds[JAIL_CG_TASKS]) must_check;
/* In the run's init, single-threaded: moves itself into each of the n
 * cgroups and closes the fds. 0 or -errno. */
int jail__cg_enter_self(int *fds, size_t n) must_check;
/* After the run: the breach counters into p, the cgroups removed. */
void jail__cg_collect(struct jail_proc *p);

/* ---------------------------------------------------- jail_uid.c */

/* Root only: a host uid of the run's own (p->host_uid, p->uid_lock held
 * until jail__uid_release). 0 or -errno with a reason in err. */
int jail__take_uid(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen) must_check;
/* Root only: o->chown_paths become p->host_uid's for the run (p->given). */
int jail__give_paths(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen) must_check;
/* Takes the given paths back and lets the uid go. Safe to call twice. */
void jail__uid_release(struct jail_proc *p);
/* Writes the namespace's uid and gid maps of the new init pid. 0 or -errno. */
int jail__write_maps(pid_t pid, bool root_user, uint32_t uid_base, uid_t host_uid) must_check;
/* A zygote's maps: as root inside 0..uid_count are uid_base.., so that
 * inside 1 + N is uid slot N's host uid; unprivileged inside 0 is our
 * uid. 0 or -errno. */
int jail__write_zygote_maps(pid_t pid, bool root_user, uint32_t uid_base, uint32_t uid_count) must_check;

/* ------------------------------------------------ jail_landlock.c */

/* The fallback's file system view as Landlock rules: each a path and what
 * may be done beneath it. Computed by the parent (no allocation in the
 * child), opened by the child before its uid changes. */
struct jail_ll_rule {
    const char *path;   /* borrowed: jail_opts, a static list, or prefix */
    uint64_t access;    /* LANDLOCK_ACCESS_FS_*, within the handled set */
    bool optional;      /* skipped when the path is missing */
};

/* /usr, its links, the prefix, /etc and /dev entries, /proc/self (33), and
 * the caller's binds (JAIL_BINDS_MAX). */
#define JAIL_LL_RULES_MAX (40 + JAIL_BINDS_MAX)

/* The /etc directories that /usr's symlinks point into (see
 * jail__etc_dirs_find), as "/etc/NAME". */
#define JAIL_ETC_DIRS_MAX 8
#define JAIL_ETC_DIR_LEN 64
struct jail_etc_dirs {
    char v[JAIL_ETC_DIRS_MAX][JAIL_ETC_DIR_LEN];
    size_t n;
};

struct jail_ll_plan {
    int abi;                   /* the kernel's Landlock ABI; 0: none */
    uint64_t fs, net, scoped;  /* what the ruleset handles */
    struct jail_ll_rule rules[JAIL_LL_RULES_MAX];
    size_t n;
    char prefix[PATH_MAX];     /* the interpreter's prefix outside /usr */
    struct jail_etc_dirs etc;  /* named by rules */
};

/* The kernel's Landlock ABI version (0 when it has none or it is off),
 * asked once per process. */
int jail__landlock_abi(void);
/* The plan for a fallback run of o. 0, or -E2BIG when there are too many
 * binds. */
int jail__landlock_plan(const struct jail_opts *o, struct jail_ll_plan *pl) must_check;
/* In the child, before its uid changes (root may open more than the run's
 * uid): the ruleset of the plan, its fd into *fd. 0 or -errno with the
 * path at fault in *what. */
int jail__landlock_ruleset(const struct jail_ll_plan *pl, int *fd, const char **what) must_check;
/* In the child, after no_new_privs: the ruleset from now on, for it and
 * everything it starts. 0 or -errno. */
int jail__landlock_enforce(int fd) must_check;

/* -------------------------------------------------- jail_mount.c */

/* What of the host's /etc and /dev a run may read (the jail binds them, the
 * fallback's Landlock rules name them): one list for both. */
extern const char *const jail__etc_files[];
extern const size_t jail__n_etc_files;
/* Fills d with the host's /etc directories that /usr's symlinks lead into
 * (Debian's alternatives: libblas.so.3, liblapack.so.3, java, editor; the
 * interpreter's sitecustomize.py; Java's configuration), found by name in
 * one read of /etc, so that those links resolve in a run as on the host. */
void jail__etc_dirs_find(struct jail_etc_dirs *d);
extern const char *const jail__dev_nodes[];
extern const size_t jail__n_dev_nodes;
/* The merged-/usr links (or directories on older systems). */
extern const char *const jail__usr_links[];
extern const size_t jail__n_usr_links;
/* The interpreter's prefix into buf when it is not under /usr (a /opt or
 * pyenv build), else NULL. */
const char *jail__python_prefix(const char *argv0, char *buf, size_t n);

/* One thing the new root gets from the host: a bind of a file or directory
 * opened (O_PATH) while it could still be seen, or a symlink. */
struct jail_plan_item {
    int fd;                 /* -1 for a symlink */
    char inside[PATH_MAX];  /* absolute */
    char link[PATH_MAX];    /* symlink target */
    bool is_dir;
    bool nofollow;          /* JAIL_BIND_NOFOLLOW */
    unsigned long extra;    /* MS_RDONLY, MS_NOSUID, ... added to what is locked */
};

/* /usr, its links, the prefix, /etc and /dev entries (31), and the
 * caller's binds; the plan is allocated for what a run has. */
#define JAIL_PLAN_FIXED 32
#define JAIL_PLAN_MAX (JAIL_PLAN_FIXED + JAIL_BINDS_MAX)
#define JAIL_BPF_MAX 1024       /* instructions of the seccomp filter init receives */

/* What init and the script need, set up by the parent before the clone
 * (and the plan and the filter by init itself). */
struct jail_ns_ctx {
    const struct jail_opts *o;
    int err_w;                   /* (stage, errno) pipe, write end */
    int go_r;                    /* the parent says "maps written", then sends the filter */
    int status_w;                /* init reports the script's end */
    int self_exe;                /* this program (O_PATH), which init re-executes */
    int reaper_go[2];            /* init, re-executed, tells the script to go on */
    struct jail_rlimit_row rows[JAIL_RLIMIT_ROWS];
    size_t nrows;
    bool set_groups;             /* we may (and must) clear supplementary groups */
    char tmp_opts[64];
    struct jail_plan_item *plan; /* plan_cap of them, allocated by the parent */
    size_t n_plan, plan_cap;
    struct sock_fprog seccomp;   /* received from the parent before the fork */
    struct sock_filter bpf[JAIL_BPF_MAX];
    int cg_tasks[JAIL_CG_TASKS]; /* jail__cg_tasks_open's, moved into by init itself */
    size_t n_cg_tasks;
};

/* In init: opens everything of the host the root will hold. 0 or -errno
 * with the path in err. */
int jail__plan_make(struct jail_ns_ctx *c, char *err, size_t errlen) must_check;
/* Closes the plan's descriptors. */
void jail__plan_free(struct jail_ns_ctx *c);
/* In init: builds the new root from the plan and moves into it, or
 * reports and exits. */
void jail__build_root(struct jail_ns_ctx *c);

/* --------------------------------------------------- jail_init.c */

/* What init writes on status_w when the script has ended. */
struct jail_status_msg {
    int status;          /* the script's wait status */
    struct rusage ru;    /* of every process init reaped */
};

/* pid 1 of the run's namespaces: waits for the parent, builds the root,
 * forks the script, re-executes itself (a fresh image) and reports the
 * script's end. Never returns. */
_Noreturn void jail__init_main(struct jail_ns_ctx *c);

/* -------------------------------------------------------- jail.c */

/* What differs between the kinds of run once one is started: the start
 * chooses the table (jail_proc.ops), jail_signal, jail_try_reap and
 * jail_kill_all go through it. Each kind's is beside its start: the
 * namespaces' and the fallback's in jail.c, a warm run's in jail_warm.c. */
struct jail_ops {
    /* sig to every process of the run, which is started and not yet
     * reaped. 0 or -errno. */
    int (*signal)(struct jail_proc *p, int sig);
    /* Non-blocking, for a run not yet reaped: 1 once it has ended
     * (p->reaped, p->wstatus and p->ru set), 0 while it runs, -errno. */
    int (*reap)(struct jail_proc *p);
    /* Kills every process of the started run (p->pid > 0) that is still
     * there and reaps them, p's status kept; safe once reaped. Returns how
     * many it killed besides p->pid (the fallback; the others 0: the
     * kernel kills a PID namespace with its init). */
    int (*kill_all)(struct jail_proc *p);
};
/* The parent's last steps before a run's init may fork the script, a cold
 * start's and a warm one's: init into its cgroups (unless it enters them
 * itself: self_enter), the seccomp filter for it, the start mark's wait.
 * The filter, or NULL with *rc (-errno) and a reason in err. */
const struct sock_fprog *jail__ready(const struct jail_opts *o, struct jail_proc *p, bool self_enter, int *rc,
                                     char *err, size_t errlen);
/* Namespaces: init is gone; its report (if it made one) on p->status_fd
 * says how the script ended, else init_status (killed) and init_ru. */
void jail__read_status(struct jail_proc *p, int init_status, const struct rusage *init_ru);

/* --------------------------------------------------- jail_tree.c */

/* The walk of the run's processes: visit(pid, ctx) for every descendant
 * of root as of now (root itself excluded), each before its children are
 * read. A nonzero return of visit ends the walk and is returned; 0 once
 * every one was visited. A process that ends or is born meanwhile may be
 * missed: a snapshot, not a freeze. */
int jail__tree_each(pid_t root, int (*visit)(pid_t pid, void *ctx), void *ctx);
/* The fallback: sig to pid's process group and to every descendant of
 * ours. */
void jail__tree_signal(pid_t pid, int sig);
/* The fallback: stops, kills and reaps every descendant of ours; p->pid's
 * status is kept in p. Returns how many it killed besides p->pid. */
int jail__tree_kill(struct jail_proc *p);

/* -------------------------------------------- jail_warm.c, jail_zygote.c */

/* A warm run's request: what the worker asks the zygote of its environment
 * for (through the pool, which reads only env_dir and imports), in one
 * SOCK_SEQPACKET message with the descriptors of enum jail_warm_fd. */
#define JAIL_WARM_MAGIC 0x524d5731u  /* "RMW1": the layout below */
#define JAIL_WARM_BINDS 4            /* the workspace, /job, mounts/ */
#define JAIL_WARM_TEXT 4096          /* the environment; the imports */
struct jail_warm_bind {
    char inside[256];
    uint32_t nofollow;               /* JAIL_BIND_NOFOLLOW: reached beneath / without a symlink */
};
struct jail_warm_req {
    uint32_t magic;
    char env_dir[PATH_MAX];          /* the host path of the environment: which zygote */
    uint32_t job;                    /* a session's run: /job is bound (the zygote must have it) */
    uint32_t run_uid;                /* the run's uid in the zygote's namespace (1 + its slot;
                                      * 0 when the server is unprivileged: its uid, the zygote's 0) */
    uint32_t network, set_groups;
    uint32_t own_net;                /* a network of the run's own: its init sets it up and sends the
                                      * proxy's sockets on the last descriptor (jail_opts.net_sock) */
    char tmp_opts[64];
    uint32_t nrows;
    struct jail_rlimit_row rows[JAIL_RLIMIT_ROWS];
    uint32_t n_binds;
    struct jail_warm_bind binds[JAIL_WARM_BINDS];
    uint32_t n_cg_tasks;             /* the cgroups' tasks files, after the binds' trees */
    char stdin_inside[256];
    char cwd[256];
    char script[256];                /* argv[1] as seen inside */
    char value_file[256];            /* jail_opts.value_file ("": the script runs as it is) */
    uint64_t value_limit;
    char env[JAIL_WARM_TEXT];        /* KEY=VALUE\0...\0\0 */
    char imports[JAIL_WARM_TEXT];    /* module paths the script imports (matplotlib.pyplot), NUL-separated,
                                      * \0\0 at the end; as many as fit */
};
enum jail_warm_fd {
    JAIL_WARM_FD_IN, JAIL_WARM_FD_OUT, JAIL_WARM_FD_ERR,
    JAIL_WARM_FD_ERRPIPE,            /* (stage, errno) reports; closed when the script starts */
    JAIL_WARM_FD_STATUS,             /* the run's init reports the script's end here */
    JAIL_WARM_FD_GO,                 /* the worker's "go" and the seccomp filter */
    JAIL_WARM_FD_CTL,                /* the run's init comes back here as a pidfd */
    JAIL_WARM_FD_BIND0,              /* a detached mount tree per bind, then the cgroups' tasks files, then
                                      * with own_net the socket of the run's network */
    JAIL_WARM_NFDS = JAIL_WARM_FD_BIND0 + JAIL_WARM_BINDS + JAIL_CG_TASKS + 1,
};
/* How many descriptors come with q, and the network's socket among them
 * (-1 without own_net). */
#define JAIL_WARM_FDS(q) ((size_t)JAIL_WARM_FD_BIND0 + (q)->n_binds + (q)->n_cg_tasks + ((q)->own_net ? 1 : 0))
#define JAIL_WARM_NET_FD(q, fds) ((q)->own_net ? (fds)[JAIL_WARM_FD_BIND0 + (q)->n_binds + (q)->n_cg_tasks] : -1)
#define JAIL_ZYGOTE_ARG "--sandbox-zygote"  /* argv[1] of a zygote's image */
#define JAIL_WARM_SPARES_MAX 8               /* a zygote's spares (warm_spares' ceiling) */

/* A SOCK_SEQPACKET message with up to JAIL_WARM_NFDS descriptors: sent
 * (0 or -errno) and received (its length, fds filled and *nfds set, or
 * -errno; 0 at the end of the stream). */
int jail__send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds) must_check;
ssize_t jail__recv_fds(int sock, void *buf, size_t len, int *fds, size_t *nfds) must_check;
/* In a child of init that becomes a zygote (jail_opts.zygote), once init
 * said go and its signals are reset: the image of this program as a
 * zygote. Never returns. */
_Noreturn void jail__zygote_exec(struct jail_ns_ctx *c);
/* sandbox/jail/zygote.py, the Python half of a zygote, built in (common/embed.sh). */
extern const char jail__py_zygote[];

/* ---------------------------------------------------- jail_zygote_run.c */

/* What the zygote calls in libpython (the stable part of the C API;
 * PyObject is void here: the program includes nothing of Python). */
struct jail_pyapi {
    void (*set_program_name)(const wchar_t *);
    void (*initialize_ex)(int);
    int (*run_simple_string)(const char *);
    void *(*run_file)(FILE *, const char *, int, void *, void *, int, void *);
    void *(*add_module)(const char *);
    void *(*module_dict)(void *);
    void *(*get_attr)(void *, const char *);
    void *(*call)(void *, ...);
    long (*as_long)(void *);
    void (*err_fetch)(void **, void **, void **);
    void (*err_normalize)(void **, void **, void **);
    int (*set_traceback)(void *, void *);
    void (*err_clear)(void);
    void (*err_print)(void);
    void (*decref)(void *);
    void (*before_fork)(void);
    void (*after_fork_parent)(void);
    void (*after_fork_child)(void);
    void (*incref)(void *);
    void *none;            /* Py_None */
};
extern struct jail_pyapi jail__py;
/* Loads libpython at lib into jail__py (RTLD_GLOBAL). 0 or -errno. */
int jail__py_load(const char *lib) must_check;
/* What the zygote found once, for every run: _rms_run and its end
 * (runner.py), the name a cold run's script has (the
 * interpreter's file name), where the environment's caches are ("": none). */
extern void *jail__py_end, *jail__py_runner;
extern char jail__py_comm[16];
extern char jail__home_from[PATH_MAX];
/* True when this process has exactly one thread: a fork copies only the
 * calling thread, and a thread's filter and capabilities are its own. */
bool jail__single_threaded(void);
/* In the zygote, once: its mounts below /tmp and /dev/shm, which each run
 * carries over into its fresh ones. */
void jail__carry_scan(void);
/* The /tmp options the zygote's spares are made with ("": not busy yet). */
extern char jail__spare_tmp[sizeof ((struct jail_warm_req *)0)->tmp_opts];
/* C2 cloned for a run once its maps are written: its view, the go, the
 * script. Never returns. */
_Noreturn void jail__run_init(const struct jail_warm_req *q, int *fds);
/* C2 cloned ahead as a spare: its view and its script's process made, then
 * the wait for one run on sock. Never returns. */
_Noreturn void jail__spare_main(int sock);

#endif
