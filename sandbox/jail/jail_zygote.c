/* jail_zygote.c: a zygote, the warm start of runs. It is a process in a
 * jail of its own (jail_opts.zygote: the environment's root, no workspace)
 * that loaded the interpreter's libpython, imported the modules the
 * environment's scripts import, and then only forks: never a line of a
 * script. Each run is a fork of it that gets everything a cold run gets,
 * in this order:
 *
 *   zygote --clone--> C2 in new user, mount, IPC, UTS, network (unless the
 *     run may use it) and PID namespaces; the zygote writes its maps
 *     (inside 1000 is the run's uid of the zygote's range, so its host uid
 *     is the run's uid slot as in a cold run), hands the worker a pidfd of
 *     it, and reaps it in the end.
 *   C2: pid 1 of the run: a fresh /proc, /tmp and /dev/shm, the worker's
 *     detached mount trees moved to /work (/job, mounts/), lo up; waits for
 *     the worker's go and the seccomp filter; into the run's cgroups (it
 *     moves itself with cgroup v1, the worker moved it with v2); a cgroup
 *     namespace; forks C3 (or hands the run to the C3 a spare made ahead)
 *     and is the run's init as
 *     jail_init.c's is: reaps, forwards SIGTERM, reports the script's end.
 *   C3: its session, fds 0-2, rlimits, capabilities dropped, uid 1000,
 *     no_new_privs, the filter; closes the error pipe (the worker's "it
 *     started"), then the interpreter's after-fork hooks and the script as
 *     __main__ the way `python3 SCRIPT` runs it (PyRun_FileExFlags), and
 *     its end as the interpreter's own end would be seen (runner.py's
 *     end(): the traceback, the exit code, threads, atexit, the streams,
 *     __main__ cleared), without the teardown of what the zygote imported.
 *
 * The zygote keeps its capabilities in its own namespaces (it must make
 * each run's); it has no seccomp filter, and no script code ever runs in
 * it. libpython is loaded with dlopen: the program links nothing of Python.
 * This file holds the zygote's image (its start, its loop, the spares it
 * keeps, the clone of a run's init); jail_zygote_run.c the run's side of
 * it, C2 and C3, and the descriptor passing both sides use. */
#include "config.h"

#include "jail_internal.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wchar.h>

#define ZYGOTE_MAPS_MS 2000  /* the run's init waits this long for its maps */

/* ----------------------------------------------------- the zygote's side */

/* In init's child (jail_init.c) instead of the script's execve: the
 * zygote's own image, uid 0 of its namespaces with their capabilities,
 * fd 0 the pool's socket, 1 and 2 its log. */
_Noreturn void jail__zygote_exec(struct jail_ns_ctx *c)
{
    const struct jail_opts *o = c->o;
    int efd = c->err_w;
    if (setsid() < 0)
        jail__child_fail(efd, JAIL_STAGE_SETSID);
    /* The program's descriptor must survive jail__setup_fds, which keeps
     * only 0-2 and efd: it rides on efd's place and efd moves above. */
    int self = fcntl(c->self_exe, F_DUPFD_CLOEXEC, 3);
    if (self < 0)
        jail__child_fail(efd, JAIL_STAGE_DUP);
    int moved = fcntl(efd, F_DUPFD_CLOEXEC, self + 1);
    if (moved < 0)
        jail__child_fail(efd, JAIL_STAGE_DUP);
    int fds[3] = {o->fd_in, o->fd_out, o->fd_err};
    for (int i = 0; i < 3; i++)
        if ((fds[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, moved + 1)) < 0)
            jail__child_fail(moved, JAIL_STAGE_DUP);
    for (int i = 0; i < 3; i++)
        if (dup2(fds[i], i) < 0)
            jail__child_fail(moved, JAIL_STAGE_DUP);
    const int keep[] = {0, 1, 2, self, moved};
    jail__close_all_except(keep, ARRAY_SIZE(keep));
    jail__apply_rlimits(moved, c->rows, c->nrows);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        jail__child_fail(moved, JAIL_STAGE_NNP);
    const char *argv[] = {"runmyscript-zygote", JAIL_ZYGOTE_ARG, o->zygote_lib, o->argv[0],
                          o->zygote_modules ? o->zygote_modules : "", NULL};
    syscall(SYS_execveat, self, "", argv, o->envp, AT_EMPTY_PATH);
    jail__child_fail(moved, JAIL_STAGE_EXEC);
}

/* The maps of the run's new user namespace: inside 0 and 1000 are the
 * zygote's 0 and the run's uid of its range. run_uid 0 (the server is
 * unprivileged: the zygote's namespace maps only its 0, the server's uid):
 * 1000 alone, as a cold unprivileged run maps only 1000 to the server's
 * uid; the run's init is then 1000 with its capabilities from the clone. */
/* pid (of the zygote's pid namespace) as the /proc the zygote has numbers
 * it: the same pid where that /proc is its namespace's own, the
 * container's number where it is the container's (jail__mount_proc): a
 * pidfd's fdinfo names its process in the pid namespace of the /proc it is
 * read from. >0, or -errno. */
static pid_t proc_pid(pid_t pid)
{
    cleanup_fd int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pfd < 0)
        return -errno;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pfd);
    cleanup_free char *text = NULL;
    size_t n = 0;
    int rc = util_read_file_at(AT_FDCWD, path, 4096, &text, &n);
    if (rc < 0)
        return rc;
    const char *at = strstr(text, "\nPid:");
    long v = at ? strtol(at + 5, NULL, 10) : 0;
    return v > 0 ? (pid_t)v : -ESRCH;
}

static int write_run_maps(pid_t pid, uint32_t run_uid)
{
    char path[64], map[64];
    pid = proc_pid(pid);
    if (pid < 0)
        return pid;
    if (run_uid == 0)
        snprintf(map, sizeof map, "%u 0 1\n", JAIL_UID);
    else
        snprintf(map, sizeof map, "0 0 1\n%u %u 1\n", JAIL_UID, run_uid);
    static const char *const files[] = {"uid_map", "gid_map"};
    for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
        snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, files[i]);
        cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
            return -errno;
        int rc = util_write_all(fd, map, strlen(map));
        if (rc < 0)
            return rc;
    }
    return 0;
}

static void close_fds(int *fds, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (fds[i] >= 0)
            close(fds[i]);
}

/* ------------------------------------------------------------ spares */

/* A spare is a run's init made ahead (C2 before its request): cloned into
 * new namespaces of its own, its /proc, /tmp, /dev/shm and lo made, then
 * waiting. A request goes to one (the zygote writes its maps, then hands
 * it the request), which does only what needs the run: HOME, the binds,
 * the worker's go; and it is the run's init from there, never another's.
 * A zygote that served a run keeps warm_spares of them
 * (RUNMYSCRIPT_WARM_SPARES); each is killed with the zygote until it is
 * handed a run. */
struct spare {
    pid_t pid;
    int sock;                         /* the request goes here */
};
static struct spare spares[JAIL_WARM_SPARES_MAX];
static size_t n_spares, spares_want;
static unsigned spares_lost;          /* spares that ended unused, in a row: past SPARES_LOST_MAX, no more */
#define SPARES_LOST_MAX 3

/* One spare more, when fewer than wanted wait. 0, or -errno (none made). */
static int spare_make(void)
{
    int sv[2];
    if (n_spares >= spares_want || !jail__single_threaded())
        return 0;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    jail__py.before_fork();
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID |
                                              CLONE_NEWNET | SIGCHLD,
                               NULL, NULL, NULL, NULL);
    if (pid == 0)
        jail__spare_main(sv[1]);
    jail__py.after_fork_parent();
    int e = errno;
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return -e;
    }
    spares[n_spares++] = (struct spare){pid, sv[0]};
    return 0;
}

/* A spare that ended (reaped) is no longer one; one that cannot make its
 * view (the host refuses a mount) would end again and again: after a few
 * in a row, no more are made, and runs are cloned as they come. */
static void spare_gone(pid_t pid)
{
    for (size_t i = 0; i < n_spares; i++)
        if (spares[i].pid == pid) {
            close(spares[i].sock);
            spares[i] = spares[--n_spares];
            if (++spares_lost >= SPARES_LOST_MAX) {
                spares_want = 0;
                fprintf(stderr, "runmyscript: the zygote's spares end unused; it makes no more\n");
            }
            return;
        }
}

/* The request to the newest spare: its maps, the request, its pidfd to
 * the worker. 0; -EAGAIN with nothing done when no spare could take it
 * (the caller clones one); another -errno once the run was given to one
 * (it is killed). */
static int spare_take(const struct jail_warm_req *q, int *fds, size_t nfds)
{
    while (n_spares) {
        struct spare sp = spares[--n_spares];
        int rc = write_run_maps(sp.pid, q->run_uid);
        if (rc == 0)
            rc = jail__send_fds(sp.sock, q, sizeof *q, fds, nfds);
        close(sp.sock);
        if (rc < 0) {
            kill(sp.pid, SIGKILL); /* dead already, or of no use: the next one */
            continue;
        }
        int pidfd = (int)syscall(SYS_pidfd_open, sp.pid, 0);
        rc = pidfd < 0 ? -errno : jail__send_fds(fds[JAIL_WARM_FD_CTL], "p", 1, &pidfd, 1);
        if (pidfd >= 0)
            close(pidfd);
        if (rc < 0)
            kill(sp.pid, SIGKILL);
        else
            spares_lost = 0;
        return rc;
    }
    return -EAGAIN;
}

/* The zygote's end: its spares go (their socket closed), then it waits
 * for its runs. */
static void spares_end(void)
{
    spares_want = 0;
    for (size_t i = 0; i < n_spares; i++)
        close(spares[i].sock);
    n_spares = 0;
}

/* One request: the run's init cloned into its namespaces, its maps, its
 * pidfd to the worker. 0, or -errno (the worker's descriptors are closed
 * either way: it sees the end of its pipes). */
static int serve_one(const struct jail_warm_req *q, int *fds, size_t nfds)
{
    int ack[2] = {-1, -1};
    int rc = 0;
    if (q->n_binds > JAIL_WARM_BINDS || q->n_cg_tasks > JAIL_CG_TASKS ||
        nfds != JAIL_WARM_FDS(q)) {
        rc = -EINVAL;
        goto out;
    }
    if (!jail__single_threaded()) {
        rc = -EDEADLK;
        goto out;
    }
    /* Busy from now on: spares like this run's /tmp are made ahead. */
    if (!jail__spare_tmp[0])
        snprintf(jail__spare_tmp, sizeof jail__spare_tmp, "%s", q->tmp_opts);
    /* A networked run's init loads its rules with libnftables: loaded here
     * once, every later run and spare of this zygote has it. */
    if (q->own_net) {
        char why[128];
        if (jail_net_load(why, sizeof why) < 0)
            log_msg(LOG_LVL_WARN, "the zygote: %s", why);
    }
    if (!q->network && (rc = spare_take(q, fds, nfds)) != -EAGAIN)
        goto out;
    rc = 0;
    if (pipe2(ack, O_CLOEXEC) < 0) {
        rc = -errno;
        goto out;
    }
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID |
                          (q->network ? 0 : CLONE_NEWNET);
    jail__py.before_fork();
    pid_t init = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (init == 0) {
        close(ack[1]);
        char b;
        struct pollfd p = {ack[0], POLLIN, 0};
        if (poll(&p, 1, ZYGOTE_MAPS_MS) != 1 || read(ack[0], &b, 1) != 1 || b != 'm')
            jail__child_fail_err(fds[JAIL_WARM_FD_ERRPIPE], JAIL_STAGE_MAPS, ETIMEDOUT, NULL);
        close(ack[0]);
        jail__run_init(q, fds);
    }
    jail__py.after_fork_parent();
    if (init < 0) {
        rc = -errno;
        goto out;
    }
    int pidfd = -1;
    if ((rc = write_run_maps(init, q->run_uid)) == 0 && (rc = write(ack[1], "m", 1) == 1 ? 0 : -EPIPE) == 0) {
        pidfd = (int)syscall(SYS_pidfd_open, init, 0);
        rc = pidfd < 0 ? -errno : jail__send_fds(fds[JAIL_WARM_FD_CTL], "p", 1, &pidfd, 1);
    }
    if (pidfd >= 0)
        close(pidfd);
    /* Without its maps, or with a worker that gave up on it, nothing of
     * the run may go on. */
    if (rc < 0)
        kill(init, SIGKILL);
out:
    close_fds(fds, nfds);
    close_fds(ack, ARRAY_SIZE(ack));
    return rc;
}

/* argv: NAME JAIL_ZYGOTE_ARG LIBPYTHON PYTHON MODULES (comma-separated).
 * fd 0 is the pool's socket: "r" goes out once the imports are done, then
 * a request in comes per run. The zygote ends when the pool closes it,
 * once the runs it started are over. */
static _Noreturn void zygote_main(int argc, char **argv)
{
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (argc != 5 || jail__py_load(argv[2]) < 0) {
        fprintf(stderr, "runmyscript: the zygote cannot load %s\n", argc > 2 ? argv[2] : "libpython");
        _exit(JAIL_CHILD_FAILED);
    }
    wchar_t prog[PATH_MAX];
    if (mbstowcs(prog, argv[3], ARRAY_SIZE(prog)) == (size_t)-1)
        _exit(JAIL_CHILD_FAILED);
    const char *slash = strrchr(argv[3], '/');
    snprintf(jail__py_comm, sizeof jail__py_comm, "%s", slash ? slash + 1 : argv[3]);
    const char *hf = getenv("RUNMYSCRIPT_WARM_HOME");
    snprintf(jail__home_from, sizeof jail__home_from, "%s", hf && hf[0] == '/' ? hf : "");
    jail__py.set_program_name(prog);
    jail__py.initialize_ex(1);
    if (jail__py.run_simple_string(jail__py_zygote) != 0)
        _exit(JAIL_CHILD_FAILED);
    /* The runner (display.py, runner.py), for the runs whose last
     * expression is shown: its module kept, out of sys.modules in a run. */
    char *runner;
    if (asprintf(&runner, "%s%s", jail_py_display, jail_py_runner) < 0 || jail__py.run_simple_string(runner) != 0 ||
        !(jail__py_runner = jail__py.add_module("_rms_run")))
        _exit(JAIL_CHILD_FAILED);
    jail__py.incref(jail__py_runner);
    free(runner);
    /* The imports, one try each. Names are module paths the pool checked
     * ([A-Za-z0-9_.] only): quoting them is enough. */
    struct dbuf b;
    dbuf_init(&b, 64 * 1024);
    int ok = dbuf_printf(&b, "__import__('sys').modules['_rms_warm'].imp([") == 0;
    for (char *m = argv[4], *next; ok && m && *m; m = next) {
        next = strchr(m, ',');
        if (next)
            *next++ = '\0';
        ok = dbuf_printf(&b, "'%s',", m) == 0;
    }
    ok = ok && dbuf_printf(&b, "])") == 0;
    if (!ok || jail__py.run_simple_string(b.data) != 0)
        _exit(JAIL_CHILD_FAILED);
    dbuf_free(&b);
    jail__carry_scan();
    if (!(jail__py_end = jail__py.get_attr(jail__py_runner, "end")))
        _exit(JAIL_CHILD_FAILED);
    if (write(0, "r", 1) != 1)
        _exit(0);
    static struct jail_warm_req q;
    const char *want = getenv("RUNMYSCRIPT_WARM_SPARES");
    unsigned long ws = want ? strtoul(want, NULL, 10) : 0;
    spares_want = ws < JAIL_WARM_SPARES_MAX ? ws : JAIL_WARM_SPARES_MAX;
    for (;;) {
        pid_t gone;
        while ((gone = waitpid(-1, NULL, WNOHANG)) > 0)
            spare_gone(gone);
        /* A request first; with none waiting, a spare more (once busy). */
        bool more = jail__spare_tmp[0] && n_spares < spares_want;
        struct pollfd p = {0, POLLIN, 0};
        int pr = poll(&p, 1, more ? 0 : 1000);
        if (pr < 0 && errno != EINTR)
            break;
        if (pr == 0 && more && spare_make() < 0)
            spares_want = n_spares; /* (the namespaces are out: the clone path says why, per run) */
        if (pr <= 0)
            continue;
        int fds[JAIL_WARM_NFDS];
        size_t nfds = 0;
        ssize_t r = jail__recv_fds(0, &q, sizeof q, fds, &nfds);
        if (r == 0 || (r < 0 && r != -EMSGSIZE && r != -EAGAIN))
            break;
        if (r != (ssize_t)sizeof q || q.magic != JAIL_WARM_MAGIC) {
            close_fds(fds, nfds);
            continue;
        }
        int rc = serve_one(&q, fds, nfds);
        /* Nothing of this run stays in what the next spare is made from. */
        memset(&q, 0, sizeof q);
        if (rc == -EDEADLK) {
            /* A thread appeared: this zygote can serve no one safely. */
            fprintf(stderr, "runmyscript: the zygote has more than one thread; it stops\n");
            break;
        }
    }
    /* The pool is gone or let us go: the runs we started end first. */
    spares_end();
    close(0);
    while (wait(NULL) > 0 || errno == EINTR)
        ;
    _exit(0);
}

/* A zygote's image starts here, before the main() of the program that
 * links the sandbox, as init's fresh image does (jail_init.c). */
__attribute__((constructor)) static void zygote_entry(int argc, char **argv, char **envp)
{
    (void)envp;
    if (argc >= 2 && argv && argv[1] && !strcmp(argv[1], JAIL_ZYGOTE_ARG))
        zygote_main(argc, argv);
}
