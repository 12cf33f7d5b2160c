/* jail.h: starting a run's process tree isolated and under its limits,
 * signalling all of it, and tearing all of it down. This module is the only
 * place that calls clone, unshare, mount, pivot_root or seccomp.
 *
 * Two modes. "namespaces+seccomp": new user, mount, PID, IPC, UTS, network
 * (and cgroup) namespaces, a fresh read-only root with only what Python
 * needs, an unprivileged uid, no capabilities, a seccomp filter, cgroup
 * memory and pids limits where the host has them. The fallback, for hosts
 * without user namespaces: rlimits, a session of its own, a clean
 * environment, no_new_privs, and where the kernel has them Landlock (the
 * file system view, TCP, signals and abstract sockets) and the seccomp
 * filter ("landlock+seccomp"; "rlimits" without either). */
#ifndef RMS_JAIL_H
#define RMS_JAIL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "executor.h"

#define JAIL_UID 1000   /* the sandbox user's uid and gid inside */

enum jail_mode { JAIL_MODE_NAMESPACES, JAIL_MODE_RLIMITS };

/* A directory or file of the host made visible inside (namespaces mode). */
enum {
    JAIL_BIND_RW = 1,        /* writable (default: read-only) */
    JAIL_BIND_OPTIONAL = 2,  /* skip it when the host path is missing */
    /* The host path's last component and the target inside are reached
     * without following a symlink, and the target must already exist: for
     * a directory a script can write (mounts/ of a session's workspace),
     * where a symlink swapped in would move the bind elsewhere. */
    JAIL_BIND_NOFOLLOW = 4,
    /* Part of the environment (a store entry it links): a zygote of the
     * environment has it in its root already, so a warm start leaves it
     * out of its request. */
    JAIL_BIND_ENV = 8,
};
struct jail_bind {
    const char *host;    /* absolute */
    const char *inside;  /* absolute */
    unsigned flags;
};
/* The most binds a caller may give: a run's own (6) and the package store
 * entries its environment links (at most EXEC_MAX_REQUIREMENTS * 8
 * wheels); the installer's, 20 with 16 local find_links directories. */
#define JAIL_BINDS_MAX (24 + EXEC_MAX_REQUIREMENTS * 8)

struct jail_opts {
    enum jail_mode mode;
    /* Namespaces: bound inside. The fallback: host and inside are the same
     * path, and they are its Landlock rules (JAIL_BIND_RW: read-write, else
     * read and execute). */
    const struct jail_bind *binds;
    size_t n_binds;
    const char *const *argv;        /* argv[0] absolute (as seen inside) */
    /* A script run so that its last expression's value can be had
     * (runner.py): cold, argv is this ({python, "-c", the runner}); warm,
     * the zygote calls the runner's main on argv[1] with value_file (as
     * seen inside) and value_limit. NULL: argv as it is. */
    const char *const *runner_argv;
    const char *value_file;
    uint64_t value_limit;
    /* The host's Python interpreter the run uses (a venv's bin/python3 links
     * to it): when it lives outside /usr (a /opt or pyenv build) its prefix
     * is bound read-only at the same path. NULL: none. */
    const char *interpreter;
    const char *const *envp;
    const char *cwd;                /* as seen inside */
    int fd_in, fd_out, fd_err;      /* become 0, 1, 2 */
    /* Namespaces mode: stdin is this file, opened inside the new root,
     * instead of fd_in (NULL: fd_in). An input bound read-only stays so:
     * a descriptor the parent opened reopens (/proc/self/fd/0) read-write
     * through the host's mount. */
    const char *stdin_inside;
    const struct exec_limits *limits;
    bool network;                   /* keep the host's network (installs; script_network = host-unfiltered) */
    /* Namespaces mode, network off: 0 or -1 (descriptor 0 is never one).
     * Else a network of the run's own
     * (script_network = on): a socket (one end of a socketpair) on which
     * init, in the run's network namespace, sends the sockets of the
     * server's proxy and resolver (in one message: see below) once its rules hold
     * every TCP connection and DNS query for them. */
    int net_sock;
    /* With net_sock: the loopback's TCP goes to the proxy too (the
     * installer's: an operator's index may listen on the server's
     * loopback); a run's loopback stays its own. Cold starts only. */
    bool net_all;
    enum exec_landlock landlock;    /* the fallback: Landlock and the filter (auto), required (on), neither (off) */
    bool shared_proc;               /* exec_config.shared_proc: jail__mount_proc */
    const char *state_dir;          /* uid slots and the root mount point live here */
    const char *tag;                /* names the run's cgroups (a run id) */
    uint32_t uid_base, uid_count;   /* host uids for runs when we are root */
    /* Host paths whose ownership moves to the run's uid before it starts
     * (root only: the workspace a run writes). Recursive, no symlink
     * followed. */
    const char *const *chown_paths;
    size_t n_chown_paths;
    /* A name directly under each chown path that keeps its owner, with all
     * below it (NULL: none): a session's mounts/, the server's and
     * read-only, so that the rlimits fallback's script, a uid of its own
     * when we are root, cannot write it either. */
    const char *chown_keep;
    /* A zygote (jail_zygote.c) instead of a script: init's child keeps
     * uid 0 and the capabilities of the namespaces, gets no filter, and
     * becomes this program's zygote image, which loads zygote_lib
     * (libpython) for argv[0] (the interpreter as seen inside) and imports
     * zygote_modules (comma-separated); fd_in is the pool's socket. As
     * root the namespace maps the whole uid range, so that each run's
     * namespace can be given its slot's uid. */
    bool zygote;
    const char *zygote_lib;
    const char *zygote_modules;
    /* Inside: a directory (an environment's caches, /env/.rms-cache/home)
     * whose tree HOME (/tmp/home) gets before the script starts: its
     * directories made, the script's, and a symlink for each file (the
     * cache stays the environment's, read-only); NULL: none. Namespaces
     * only (the fallback's HOME is the run directory's: its layout). */
    const char *home_from;
    /* The run's start as a file's ctime (NULL: not wanted): once the
     * run's paths are given to it and before the script can run, the jail
     * touches mark->fd and keeps its ctime in mark->at (mark->taken); with
     * mark->wait the script is let go only once a second stamp of it, or
     * else the clock, has passed it, so that a file the script writes has
     * a later ctime than every file before it (a file given to the run
     * changed its ctime then too). */
    struct jail_mark *mark;
};

struct jail_mark {
    int fd;
    bool wait;
    bool taken;
    struct timespec at;
};

struct jail_ops;

/* A started run. */
struct jail_proc {
    enum jail_mode mode;
    /* How this kind of run is signalled, reaped and killed (jail_internal.h),
     * chosen by its start: the namespaces', the fallback's or a warm run's. */
    const struct jail_ops *ops;
    pid_t pid;            /* rlimits: the script; namespaces: its init (pid 1 inside) */
    int pidfd;            /* readable when pid has exited; -1 when unsupported */
    int status_fd;        /* namespaces: the init reports the script's exit here */
    bool reaped;
    int wstatus;          /* the script's, valid once reaped */
    bool unreported;      /* namespaces: init ended without its report of the script (killed
                           * from outside: for a warm run, its zygote died), so wstatus is
                           * init's, not the script's */
    struct rusage ru;     /* of the run's processes */
    int uid_lock;         /* held for the run: its host uid is ours */
    char **given;         /* paths chowned to host_uid, taken back at the end */
    char *given_keep;     /* jail_opts.chown_keep, left alone both ways */
    mode_t *given_mode;   /* each given path's mode before the run, put back after */
    uid_t host_uid;
    char *cg_memory;      /* cgroup v1/v2 directories made for the run, or NULL */
    char *cg_pids;
    bool cg_v2;
    bool memory_breached; /* filled by jail_finish(), or set by the caller's
                           * memory watch (jail_memory_check) */
    bool pids_breached;
    int64_t deleted_next_ms; /* jail_deleted_bytes: when it looks again */
    uint64_t deleted_held;   /* and what it found last */
    int landlock_abi;     /* the fallback: the Landlock ABI it enforced, 0: none */
    bool seccomp;         /* the fallback: the seccomp filter was loaded */
    bool unavailable;     /* jail_start failed because the host cannot make
                           * the namespaces (or has no seccomp), not because
                           * of this run: the fallback may be used */
};

/* What isolation a started run has (static string): "namespaces+seccomp";
 * in the fallback "landlock+seccomp", "landlock" (no seccomp here),
 * "rlimits+seccomp" (no Landlock here) or "rlimits" (neither, or
 * landlock = off). */
const char *jail_proc_isolation(const struct jail_proc *p);

/* The mode a run asks for: namespaces unless the isolation config forces
 * the fallback. Whether the host allows them, jail_start finds out (and
 * says so in jail_proc.unavailable). */
enum jail_mode jail_mode_for(enum exec_isolation isolation);

/* Creates on the host what the rlimits mode needs before the start (home
 * and tmp directories under run_dir). 0 or -errno. */
int jail_prepare_rlimits(const char *run_dir) must_check;

/* The sockets init sends on jail_opts.net_sock, in the run's network
 * namespace, in one message: a byte whose bit i says that socket i is
 * there, and the sockets in this order (the proxy's NET_FD_*): a
 * listening TCP socket every TCP connection of the run is redirected to
 * (its original destination is SO_ORIGINAL_DST), and a UDP socket every
 * DNS query goes to, each for IPv4 and IPv6 (IPv6 absent where the host
 * has none). */
enum { JAIL_NET_TCP4, JAIL_NET_TCP6, JAIL_NET_DNS4, JAIL_NET_DNS6, JAIL_NET_N };
/* Loads what a run of its own network needs (libnftables, loaded once per
 * process: the zygote's, a cold run's init, the installer's caller). 0, or -errno with the reason in
 * err. */
int jail_net_load(char *err, size_t errlen) must_check;

/* Starts the run. On failure returns -errno and writes a one-line reason
 * into err; nothing is left running. */
int jail_start(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen) must_check;

/* Starts the run as a fork of the zygote the pool at pool_sock keeps for
 * o's environment (the bind whose inside is /env), in namespaces of its
 * own as jail_start's: root only (the workspace goes over as a detached
 * mount tree, which only the host's root can make). imports (n, may be
 * NULL) are the script's, for the pool to learn; the pool's answer and the
 * zygote's fork may each take wait_ms. 0 when the script
 * started; -EAGAIN when the pool has no zygote ready for it (one may be
 * starting); another -errno with a reason in err when the warm start
 * failed. On any failure nothing of the run is left and the caller starts
 * it cold. */
int jail_start_warm(const struct jail_opts *o, const char *pool_sock, const char *const *imports, size_t n,
                    int64_t wait_ms, struct jail_proc *p, char *err, size_t errlen) must_check;

/* How a notebook shows a value (sandbox/jail/display.py, built in): the
 * Python text that defines _rms_display_make, which the runner of a
 * script ending in an expression and a kernel's loop both use. */
extern const char jail_py_display[];
/* runner.py (built in): after jail_py_display, the runner of a script whose
 * last expression is displayed (jail_opts.runner_argv), and the end of a
 * run through it or warm; jail_runner_call is the line that calls it. */
extern const char jail_py_runner[];
/* The Python line that runs script with the runner (hex-quoted: nothing of
 * the paths is Python), cold or warm, into a new string (caller frees), or
 * NULL. */
char *jail_runner_call(const char *script, const char *value_file, uint64_t limit, bool cold);

/* Sends sig to every process of the run. 0 or -errno. */
int jail_signal(struct jail_proc *p, int sig);

/* Non-blocking: 1 and *wstatus, *ru filled once the script has exited (in
 * namespaces mode: once the whole namespace is gone), 0 while it runs,
 * -errno on error. */
int jail_try_reap(struct jail_proc *p, int *wstatus, struct rusage *ru) must_check;

/* Kills every process of the run that is still there and reaps them; the
 * script's status is kept for jail_try_reap. Safe to call more than once.
 * Returns how many processes besides the first it killed (rlimits mode;
 * namespaces mode returns 0: the kernel kills the namespace). */
int jail_kill_all(struct jail_proc *p);

/* How often the executor sums a run's memory where no memory cgroup holds
 * it (jail_memory_check). */
#define JAIL_MEMORY_WATCH_MS 100

/* The run's memory as a whole, where no memory cgroup holds it (the
 * namespaces without one, and the fallback): what its processes hold of
 * anonymous and shared memory and swap, the memfds and deleted tmpfs files
 * they hold open (each once), and in the namespaces the pages of its /tmp
 * and /dev/shm, into *held. The cheap counters of each process
 * while their sum stays at or under limit (it is an upper bound); past it,
 * the proportional sizes (a page that N processes share counts once in
 * all), which are *held then. Returns 1 when *held passes limit, else 0;
 * 0 with *held = 0 when a cgroup holds the run (its own limit applies) or
 * the run has ended. A process that ends mid-count counts 0. */
int jail_memory_check(struct jail_proc *p, uint64_t limit, uint64_t *held) must_check;

/* Whether the run waits on its stdin: 1 when one of its processes is
 * blocked in read() (or readv()) on the pipe whose inode is pipe_ino (the
 * executor's end of the script's stdin), else 0 (the run ended, or none
 * is; a process the kernel does not let us look at counts as not). */
int jail_stdin_waiting(const struct jail_proc *p, ino_t pipe_ino) must_check;

/* The disk that the run's processes hold through descriptors of files
 * deleted from device dev (the workspace's), each once and counted as the
 * walk of a tree counts a file (the larger of size and blocks), into
 * *bytes: no walk of the workspace sees them. A look never takes more
 * than a tenth of the time: until ten times as long as the last took has
 * passed, *bytes is what it found. 0 with *bytes = 0 when the run has
 * ended, or -errno (*bytes what was found). */
int jail_deleted_bytes(struct jail_proc *p, dev_t dev, uint64_t *bytes) must_check;

/* Gives a long-lived run (a kernel) its paths again where something took
 * them back: a session's run in the same workspace between two cells gives
 * the workspace to its own uid and then to the server. Root only (else
 * nothing to do); a path whose top is the run's already is left as it is.
 * 0 or -errno. */
int jail_regive(struct jail_proc *p) must_check;

/* The run's paths stay as they are when it ends: another call holds the
 * workspace now (a session's run, a new kernel), which gives it to its own
 * uid and back itself; a path given back under it would be taken from it.
 * Call before jail_finish. */
void jail_keep_paths(struct jail_proc *p);

/* After the run: reads the cgroups' breach counters into p, removes the
 * cgroups, releases the uid. */
void jail_finish(struct jail_proc *p);

/* Closes what jail_start opened (calls jail_finish if needed). */
void jail_proc_free(struct jail_proc *p);

/* A trusted tool (the package installer) run to completion in the jail:
 * the same namespaces as a script, with the binds given (its environment
 * directory and cache), usually with the network. */
struct jail_tool {
    struct jail_opts o;        /* fd_in/fd_out/fd_err are ignored: stdin is
                                * /dev/null, stdout and stderr one pipe */
    int64_t timeout_ms;        /* killed (SIGKILL) past this */
    size_t max_output;         /* bytes kept in *output; the rest is dropped */
    void (*line)(void *ctx, const char *line); /* each output line, optional */
    bool (*cancelled)(void *ctx);             /* polled: true kills it, optional */
    void *ctx;
    bool may_fall_back;        /* the rlimits mode when the host cannot make
                                * the namespaces (binds must be at the same
                                * paths inside as outside) */
};

/* Runs t to its end. 0 with *wstatus (and *output, caller frees) when it
 * ran, -ETIMEDOUT when it was killed for time, -ECANCELED when
 * t->cancelled said so (*wstatus and *output set too), or -errno with a
 * reason in err when it could not start: -ENOTSUP when it has a network
 * of its own (net_sock) and would fall back, which has none. */
int jail_run_tool(const struct jail_tool *t, int *wstatus, char **output, char *err, size_t errlen) must_check;

#endif
