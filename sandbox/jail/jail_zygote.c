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
 *     its end as the interpreter's own end would be seen (zygote.py's
 *     end(): the traceback, the exit code, threads, atexit, the streams,
 *     __main__ cleared), without the teardown of what the zygote imported.
 *
 * The zygote keeps its capabilities in its own namespaces (it must make
 * each run's); it has no seccomp filter, and no script code ever runs in
 * it. libpython is loaded with dlopen: the program links nothing of Python.
 * This file holds the zygote's image and the descriptor passing both sides
 * use. */
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

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif

#define ZYGOTE_MAPS_MS 2000  /* the run's init waits this long for its maps */

int jail__send_fds(int sock, const void *buf, size_t len, const int *fds, size_t nfds)
{
    struct iovec iov = {(void *)buf, len};
    union {
        char b[CMSG_SPACE(sizeof(int) * JAIL_WARM_NFDS)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
    if (nfds > JAIL_WARM_NFDS)
        return -E2BIG;
    if (nfds) {
        memset(&u, 0, sizeof u);
        m.msg_control = u.b;
        m.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
        struct cmsghdr *c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
        memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
    }
    ssize_t w;
    do
        w = sendmsg(sock, &m, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0)
        return -errno;
    return (size_t)w == len ? 0 : -EMSGSIZE;
}

ssize_t jail__recv_fds(int sock, void *buf, size_t len, int *fds, size_t *nfds)
{
    struct iovec iov = {buf, len};
    union {
        char b[CMSG_SPACE(sizeof(int) * JAIL_WARM_NFDS)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b, .msg_controllen = sizeof u.b};
    ssize_t r;
    *nfds = 0;
    do
        r = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -errno;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < n; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (*nfds < JAIL_WARM_NFDS)
                fds[(*nfds)++] = fd;
            else
                close(fd);
        }
    }
    if (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
        for (size_t i = 0; i < *nfds; i++)
            close(fds[i]);
        *nfds = 0;
        return -EMSGSIZE;
    }
    return r;
}

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

/* What the zygote calls in libpython (the stable part of the C API;
 * PyObject is void here: the program includes nothing of Python). */
struct pyapi {
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

#define PY_FILE_INPUT 257 /* Py_file_input: a module's statements */

static struct pyapi py;

static int py_load(const char *lib)
{
    const struct util_dl_sym syms[] = {
        {"Py_SetProgramName", (void **)&py.set_program_name},
        {"Py_InitializeEx", (void **)&py.initialize_ex},
        {"PyRun_SimpleString", (void **)&py.run_simple_string},
        {"PyRun_FileExFlags", (void **)&py.run_file},
        {"PyImport_AddModule", (void **)&py.add_module},
        {"PyModule_GetDict", (void **)&py.module_dict},
        {"PyObject_GetAttrString", (void **)&py.get_attr},
        {"PyObject_CallFunctionObjArgs", (void **)&py.call},
        {"PyLong_AsLong", (void **)&py.as_long},
        {"PyErr_Fetch", (void **)&py.err_fetch},
        {"PyErr_NormalizeException", (void **)&py.err_normalize},
        {"PyException_SetTraceback", (void **)&py.set_traceback},
        {"PyErr_Clear", (void **)&py.err_clear},
        {"PyErr_Print", (void **)&py.err_print},
        {"Py_DecRef", (void **)&py.decref},
        {"PyOS_BeforeFork", (void **)&py.before_fork},
        {"PyOS_AfterFork_Parent", (void **)&py.after_fork_parent},
        {"PyOS_AfterFork_Child", (void **)&py.after_fork_child},
        {"Py_IncRef", (void **)&py.incref},
        {"_Py_NoneStruct", (void **)&py.none},
    };
    /* RTLD_GLOBAL: the extension modules it imports need its symbols. */
    return util_dl_load(lib, true, syms, ARRAY_SIZE(syms), "", NULL, 0);
}

/* _rms_warm.end (sandbox/jail/zygote.py, jail__py_zygote): taken once the
 * zygote has made it, kept for every run. */
static void *py_end;
/* _rms_run (sandbox/jail/runner.py), kept: a run whose last expression is
 * shown leaves its exception in its exc. */
static void *py_runner;
/* The name a cold run's script has (/proc/PID/comm: the interpreter's
 * file name, as execve gives it), for each run's. */
static char py_comm[16];
/* Where the environment's caches are (RUNMYSCRIPT_WARM_HOME, as the pool
 * found them: jail_opts.home_from), laid into each run's HOME; "": none. */
static char home_from[PATH_MAX];

/* True when this process has exactly one thread: a fork copies only the
 * calling thread, so another one (a BLAS pool) would be missing, holding
 * its locks, in every run. */
static bool single_threaded(void)
{
    cleanup_dir DIR *d = opendir("/proc/self/task");
    if (!d)
        return false;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] != '.')
            n++;
    return n == 1;
}

/* The run's own view in C2 (a new mount namespace): /proc of its PID
 * namespace, a fresh bounded /tmp (with HOME) and /dev/shm, the worker's
 * trees. Reports and exits on failure. */
/* The zygote's mounts below /tmp and /dev/shm (the store entries of an
 * environment whose state directory is there), which a run's fresh /tmp
 * and /dev/shm would hide: found once by the zygote, carried across by
 * each run (carry_take before its tmpfs mounts, carry_put after). */
static char **carry;
static size_t n_carry;

static bool carried_place(const char *path)
{
    return !strncmp(path, "/tmp/", 5) || !strncmp(path, "/dev/shm/", 9);
}

/* In the zygote: its mount points below those, from its mountinfo (field
 * 5, with the kernel's octal escapes of space, tab, newline, backslash). */
static void carry_scan(void)
{
    cleanup_free char *text = NULL;
    size_t n;
    if (util_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 1 << 20, &text, &n) < 0)
        return;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        char *f = line;
        for (int i = 0; i < 4 && f; i++)
            f = strchr(f, ' ') ? strchr(f, ' ') + 1 : NULL;
        if (!f)
            continue;
        char *end = strchr(f, ' ');
        if (end)
            *end = '\0';
        char path[PATH_MAX];
        size_t k = 0;
        for (const char *c = f; *c && k + 1 < sizeof path; c++) {
            if (c[0] == '\\' && c[1] >= '0' && c[1] <= '3' && c[2] && c[3]) {
                path[k++] = (char)((c[1] - '0') * 64 + (c[2] - '0') * 8 + (c[3] - '0'));
                c += 3;
            } else {
                path[k++] = *c;
            }
        }
        path[k] = '\0';
        char **grown;
        if (!carried_place(path) || !(grown = realloc(carry, (n_carry + 1) * sizeof *carry)))
            continue;
        carry = grown;
        if ((carry[n_carry] = strdup(path)))
            n_carry++;
    }
}

/* In the run's init, before its /tmp and /dev/shm: a detached copy of each
 * (its flags kept: read-only, nosuid, nodev). */
static void carry_take(int *trees, int efd)
{
    for (size_t i = 0; i < n_carry; i++) {
        trees[i] = (int)syscall(SYS_open_tree, AT_FDCWD, carry[i], OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (trees[i] < 0)
            jail__child_fail_err(efd, JAIL_STAGE_BIND, errno, carry[i]);
    }
}

/* And after: each at its place again, in the order the zygote had them. */
static void carry_put(const int *trees, int efd)
{
    for (size_t i = 0; i < n_carry; i++) {
        if (util_mkdir_p(carry[i], 0755) < 0 ||
            syscall(SYS_move_mount, trees[i], "", AT_FDCWD, carry[i], MOVE_MOUNT_F_EMPTY_PATH) < 0)
            jail__child_fail_err(efd, JAIL_STAGE_BIND, errno, carry[i]);
        close(trees[i]);
    }
}

/* The run's own view, first what needs no uid map (a spare makes it
 * before its run is known: its new user namespace has no map yet, and
 * makes no file): the zygote's carried mounts taken (into *trees), /proc
 * of its PID namespace, a fresh bounded /tmp and /dev/shm with tmp_opts,
 * lo up. Reports on efd (-1: exits) and exits on failure. */
static void mounts_early(const char *tmp_opts, bool network, int **trees, int efd)
{
    /* Every mount is private already: the zygote's init made them so. */
    *trees = n_carry ? calloc(n_carry, sizeof **trees) : NULL;
    if (n_carry && !*trees)
        jail__child_fail_err(efd, JAIL_STAGE_BIND, ENOMEM, NULL);
    carry_take(*trees, efd);
    jail__must(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0, efd, JAIL_STAGE_PROC);
    jail__must(mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, tmp_opts) == 0, efd, JAIL_STAGE_ROOT);
    jail__must(mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, tmp_opts) == 0, efd, JAIL_STAGE_DEV);
    /* (the host name is the zygote's, which its init set) */
    if (!network) {
        int rc = jail__loopback_up();
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_NET, -rc, NULL);
    }
}

/* Then, with the run's maps: /tmp and /dev/shm bounded as the run asks
 * (remount: a spare's were made before it asked), HOME (and the
 * environment's caches in it), the carried mounts put back, the worker's
 * trees at /work (/job, mounts/). */
static void mounts_late(const struct jail_warm_req *q, const int *fds, int *trees, bool remount, int efd)
{
    if (remount) {
        jail__must(mount(NULL, "/tmp", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, q->tmp_opts) == 0, efd, JAIL_STAGE_ROOT);
        jail__must(mount(NULL, "/dev/shm", NULL, MS_REMOUNT | MS_NOSUID | MS_NODEV, q->tmp_opts) == 0, efd,
                   JAIL_STAGE_DEV);
    }
    jail__must(mkdir("/tmp/home", 0700) == 0 && chown("/tmp/home", JAIL_UID, JAIL_UID) == 0, efd, JAIL_STAGE_ROOT);
    if (home_from[0]) {
        int rc = jail__home_tree(home_from, "/tmp/home", home_from, JAIL_UID, false);
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_ROOT, -rc, "HOME from the environment's caches");
    }
    carry_put(trees, efd);
    free(trees);
    for (uint32_t i = 0; i < q->n_binds; i++) {
        const struct jail_warm_bind *b = &q->binds[i];
        int tree = fds[JAIL_WARM_FD_BIND0 + i];
        int rc;
        if (b->nofollow) {
            struct {
                uint64_t flags, mode, resolve;
            } how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, RESOLVE_NO_SYMLINKS};
            int t = (int)syscall(SYS_openat2, AT_FDCWD, b->inside, &how, sizeof how);
            if (t < 0)
                jail__child_fail_err(efd, JAIL_STAGE_BIND, errno, b->inside);
            rc = (int)syscall(SYS_move_mount, tree, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
            close(t);
        } else {
            rc = (int)syscall(SYS_move_mount, tree, "", AT_FDCWD, b->inside, MOVE_MOUNT_F_EMPTY_PATH);
        }
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_BIND, errno, b->inside);
        close(tree);
    }
}

/* _rms_warm.FN(blob) (zygote.py's child or ahead) with the script's path
 * and the environment (KEY=VALUE\0...\0\0) as hex: nothing of them is
 * Python. 0, or -1 (Python printed why). */
static int warm_call(const char *fn, const char *script, const char *env)
{
    struct dbuf b;
    size_t len = 0;
    for (const char *e = env; *e; e += strlen(e) + 1)
        len += strlen(e) + 1;
    dbuf_init(&b, 2 * (strlen(script) + len) + 128);
    int ok = dbuf_printf(&b, "__import__('sys').modules['_rms_warm'].%s('", fn) == 0;
    for (size_t i = 0; ok && script[i]; i++)
        ok = dbuf_printf(&b, "%02x", (unsigned char)script[i]) == 0;
    for (const char *e = env; ok && *e; e += strlen(e) + 1) {
        ok = dbuf_printf(&b, "00") == 0;
        for (size_t i = 0; ok && e[i]; i++)
            ok = dbuf_printf(&b, "%02x", (unsigned char)e[i]) == 0;
    }
    ok = ok && dbuf_printf(&b, "')") == 0;
    int rc = ok && py.run_simple_string(b.data) == 0 ? 0 : -1;
    dbuf_free(&b);
    return rc;
}

/* C3: the script. ahead: its process was made ahead with a spare's
 * (ahead_main), whose interpreter's after-fork work is done. */
static _Noreturn void run_script(const struct jail_warm_req *q, const int *fds, int efd,
                                 const struct sock_fprog *filter, bool ahead)
{
    prctl(PR_SET_NAME, py_comm);
    efd = jail__script_drop(efd, q->stdin_inside[0] ? q->stdin_inside : NULL, fds[JAIL_WARM_FD_IN],
                            fds[JAIL_WARM_FD_OUT], fds[JAIL_WARM_FD_ERR], q->rows, q->nrows, q->set_groups, q->cwd,
                            filter);
    FILE *fp = fopen(q->script, "rb");
    if (!fp)
        jail__child_fail_err(efd, JAIL_STAGE_EXEC, errno, q->script);
    /* Where a cold run's execve would close the error pipe. */
    close(efd);
    /* The signals as the zygote's interpreter left them (its SIGINT
     * handler, SIGPIPE and SIGXFSZ ignored); init blocked them all. */
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (!ahead)
        py.after_fork_child();
    if (warm_call("child", q->script, q->env) != 0)
        _exit(JAIL_CHILD_FAILED);
    /* The script in __main__ as python's main runs it (or through the
     * runner, as a cold run is, when its last expression is shown); its
     * end, and the interpreter's, in zygote.py's end(). */
    void *type = NULL, *exc = NULL, *tb = NULL;
    if (q->value_file[0]) {
        fclose(fp);
        char *call = jail_runner_call(q->script, q->value_file, q->value_limit, false);
        if (!call || py.run_simple_string(call) != 0)
            _exit(JAIL_CHILD_FAILED);
        free(call);
        exc = py.get_attr(py_runner, "exc");
        if (exc == py.none) {
            py.decref(exc);
            exc = NULL;
        }
    } else {
        if (py.run_simple_string("__import__('sys').modules.pop('_rms_run', None)") != 0)
            _exit(JAIL_CHILD_FAILED);
        void *main = py.add_module("__main__");
        void *globals = main ? py.module_dict(main) : NULL;
        void *res = globals ? py.run_file(fp, q->script, PY_FILE_INPUT, globals, globals, 1, NULL) : NULL;
        if (res) {
            py.decref(res);
        } else {
            py.err_fetch(&type, &exc, &tb);
            py.err_normalize(&type, &exc, &tb);
            if (exc && tb)
                py.set_traceback(exc, tb);
        }
    }
    void *st = exc ? py.call(py_end, exc, NULL) : py.call(py_end, NULL);
    py.decref(type);
    py.decref(exc);
    py.decref(tb);
    long status = 1;
    if (st) {
        status = py.as_long(st);
        py.err_clear(); /* past a C long: -1, as python's own exit */
        py.decref(st);
    } else {
        py.err_print();
    }
    fflush(NULL);
    _exit((int)status);
}

/* The run's init until the script ends: it reaps every process and then
 * reports the script's status and the resource use of all, as a cold
 * run's init does (init_report in jail_init.c). One thing more: a cold run dies
 * with its worker (its init's parent-death signal); a warm one is the
 * zygote's child, so its init watches the status pipe, whose other end
 * only the worker holds: when the worker is gone, so is the run. */
static _Noreturn void run_init_watch(int status_w, pid_t script, const sigset_t *none)
{
    sigset_t mask = *none;
    sigaddset(&mask, SIGCHLD);
    sigset_t chld;
    sigemptyset(&chld);
    sigaddset(&chld, SIGCHLD);
    int sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK);
    sigprocmask(SIG_SETMASK, &mask, NULL); /* SIGCHLD comes through sfd */
    int st = 0;
    for (;;) {
        pid_t w;
        while ((w = waitpid(-1, &st, WNOHANG)) > 0)
            if (w == script) {
                struct jail_status_msg msg = {.status = st};
                getrusage(RUSAGE_CHILDREN, &msg.ru);
                ssize_t wr = write(status_w, &msg, sizeof msg);
                (void)wr;
                _exit(0);
            }
        struct pollfd p[2] = {{status_w, 0, 0}, {sfd, POLLIN, 0}};
        int r = poll(p, sfd >= 0 ? 2 : 1, sfd >= 0 ? -1 : 100);
        if (r > 0 && (p[0].revents & (POLLERR | POLLHUP))) {
            kill(-1, SIGKILL);
            _exit(1);
        }
        struct signalfd_siginfo si;
        while (sfd >= 0 && read(sfd, &si, sizeof si) == (ssize_t)sizeof si)
            ;
    }
}

/* C2: the run's pid 1. */
static _Noreturn void run_init(const struct jail_warm_req *q, int *fds);

/* ------------------------------------------ the script's process ahead */

/* A spare makes its run's script process ahead too (C3, its pid 2): a
 * fork of it once its view is made, whose interpreter has done its
 * after-fork work (PyOS_AfterFork_Child: the threads' state, the locks,
 * the os.register_at_fork hooks, random's fresh seed) and which then
 * waits, its signals blocked, holding nothing but its socket to the
 * spare. At the run the spare, now its init, hands it what the fork would
 * have inherited (the request, the script's descriptors and the error
 * pipe, the cgroups' tasks files, the filter); it moves itself into the
 * cgroups, takes a cgroup namespace and goes on as a forked script does
 * (run_script). A fork and the after-fork work, about a millisecond and a
 * half of a warm call, are off its path. It is the spare's, made with it
 * and for its one run; where it cannot be used (it is gone, or the worker
 * moved init into the run's cgroups itself, as with cgroup v2, where a
 * child is not moved with it) it is killed and the script forked as
 * before. */
struct ahead_msg {
    struct jail_warm_req q;
    uint32_t n;                      /* the filter's instructions */
    struct sock_filter bpf[JAIL_BPF_MAX];
};
#define AHEAD_NFDS 4                 /* JAIL_WARM_FD_IN, _OUT, _ERR, _ERRPIPE: the order of enum jail_warm_fd */
static pid_t ahead_pid = -1;         /* in a spare: its script's process, waiting */
static int ahead_sock = -1;
static char ahead_cg[4096];          /* the spare's /proc/self/cgroup when it made it */
static int ahead_tasks[JAIL_CG_TASKS] = {-1, -1}; /* init's tasks files, for it */
static size_t n_ahead_tasks;

static _Noreturn void ahead_main(int sock)
{
    static struct ahead_msg m;
    jail__close_all_except(&sock, 1);
    py.after_fork_child();
    /* child()'s work on a stand-in, this process's own environment */
    struct dbuf env;
    dbuf_init(&env, 4096);
    int ok = 0;
    for (char **e = environ; ok == 0 && *e; e++)
        ok = dbuf_append(&env, *e, strlen(*e) + 1);
    if (ok == 0 && dbuf_append(&env, "", 1) == 0)
        discard(warm_call("ahead", "/job/script.py", env.data));
    dbuf_free(&env);
    int fds[AHEAD_NFDS + JAIL_CG_TASKS];
    size_t nfds = 0;
    ssize_t r = jail__recv_fds(sock, &m, sizeof m, fds, &nfds);
    if (r != (ssize_t)sizeof m || nfds < AHEAD_NFDS || nfds != AHEAD_NFDS + m.q.n_cg_tasks || m.n == 0 ||
        m.n > ARRAY_SIZE(m.bpf))
        _exit(JAIL_CHILD_FAILED); /* the spare is gone, or it forks the script instead */
    close(sock);
    int efd = fds[JAIL_WARM_FD_ERRPIPE];
    int rc = jail__cg_enter_self(fds + AHEAD_NFDS, m.q.n_cg_tasks);
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CGROUP, -rc, NULL);
    discard(unshare(CLONE_NEWCGROUP));
    struct sock_fprog filter = {(unsigned short)m.n, m.bpf};
    run_script(&m.q, fds, efd, &filter, true);
}

/* In a spare, once its view is made: the script's process ahead. */
static void ahead_make(void)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return;
    cleanup_fd int cg = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
    ssize_t n = cg >= 0 ? read(cg, ahead_cg, sizeof ahead_cg - 1) : -1;
    ahead_cg[n > 0 ? n : 0] = '\0';
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = n > 0 ? fork() : -1;
    if (pid == 0)
        ahead_main(sv[1]);
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        return;
    }
    ahead_pid = pid;
    ahead_sock = sv[0];
}

static void ahead_drop(void)
{
    if (ahead_pid > 0) {
        kill(ahead_pid, SIGKILL);
        discard(waitpid(ahead_pid, NULL, 0));
    }
    if (ahead_sock >= 0)
        close(ahead_sock);
    ahead_pid = -1;
    ahead_sock = -1;
    for (size_t i = 0; i < n_ahead_tasks; i++)
        close(ahead_tasks[i]);
    n_ahead_tasks = 0;
}

/* In the run's init, before it joins the cgroups: the process made
 * ahead (its pid) if it can join them as init does, with the tasks files
 * (cgroup v1) or because there are none to join; 0 when there is none, or
 * it is dropped: the worker moved init (cgroup v2). */
static pid_t ahead_ready(const struct jail_warm_req *q, const int *cg_tasks)
{
    if (ahead_pid <= 0)
        return 0;
    if (q->n_cg_tasks == 0) {
        char now[sizeof ahead_cg];
        cleanup_fd int cg = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
        ssize_t n = cg >= 0 ? read(cg, now, sizeof now - 1) : -1;
        now[n > 0 ? n : 0] = '\0';
        if (n <= 0 || strcmp(now, ahead_cg) != 0) {
            ahead_drop();
            return 0;
        }
    }
    for (n_ahead_tasks = 0; n_ahead_tasks < q->n_cg_tasks; n_ahead_tasks++)
        if ((ahead_tasks[n_ahead_tasks] = fcntl(cg_tasks[n_ahead_tasks], F_DUPFD_CLOEXEC, 3)) < 0) {
            ahead_drop();
            return 0;
        }
    return ahead_pid;
}

/* The run to the process made ahead: its pid, or 0 when it could not take
 * it (it is dropped: the caller forks). Its descriptors stay ours to
 * close. */
static pid_t ahead_give(const struct jail_warm_req *q, const int *fds, const struct sock_fprog *filter)
{
    static struct ahead_msg m;
    m.q = *q;
    m.n = filter->len;
    memcpy(m.bpf, filter->filter, filter->len * sizeof filter->filter[0]);
    int give[AHEAD_NFDS + JAIL_CG_TASKS];
    for (size_t i = 0; i < AHEAD_NFDS; i++)
        give[i] = fds[i];
    for (size_t i = 0; i < n_ahead_tasks; i++)
        give[AHEAD_NFDS + i] = ahead_tasks[i];
    pid_t pid = ahead_pid;
    if (n_ahead_tasks != q->n_cg_tasks ||
        jail__send_fds(ahead_sock, &m, sizeof m, give, AHEAD_NFDS + n_ahead_tasks) < 0) {
        ahead_drop();
        return 0;
    }
    ahead_pid = -1; /* it is the script's process now */
    ahead_drop();   /* (its socket and our copies of the tasks files) */
    return pid;
}

/* C2 once its view is made (by itself, or ahead by a spare): the
 * worker's go, the cgroups, the script's fork, then the run's init. */
static _Noreturn void run_go(const struct jail_warm_req *q, int *fds)
{
    int efd = fds[JAIL_WARM_FD_ERRPIPE];
    /* The worker's go and the filter (as init of a cold run receives
     * them); then into the run's cgroups: with cgroup v1 we move ourselves
     * (through the worker's tasks files), with v2 the worker moved us. */
    static struct sock_filter bpf[JAIL_BPF_MAX];
    char go;
    uint32_t n = 0;
    int gfd = fds[JAIL_WARM_FD_GO];
    if (util_read_exact(gfd, &go, 1) < 0 || util_read_exact(gfd, &n, sizeof n) < 0 || n == 0 ||
        n > ARRAY_SIZE(bpf) || util_read_exact(gfd, bpf, n * sizeof bpf[0]) < 0)
        jail__child_fail_err(efd, JAIL_STAGE_SECCOMP, EPIPE, NULL);
    close(gfd);
    int *cg_tasks = fds + JAIL_WARM_FD_BIND0 + q->n_binds;
    pid_t script = ahead_ready(q, cg_tasks);
    int rc = jail__cg_enter_self(cg_tasks, q->n_cg_tasks);
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_CGROUP, -rc, NULL);
    struct sock_fprog filter = {(unsigned short)n, bpf};
    /* Its cgroup is the root of what it sees. */
    discard(unshare(CLONE_NEWCGROUP));
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &all, NULL);
    if (script > 0)
        script = ahead_give(q, fds, &filter);
    if (script <= 0 && (script = fork()) < 0)
        jail__child_fail(efd, JAIL_STAGE_FORK);
    if (script == 0)
        run_script(q, fds, efd, &filter, false);
    /* Nothing but the status pipe: the script's descriptors are its own. */
    int status_w = fds[JAIL_WARM_FD_STATUS];
    jail__close_all_except(&status_w, 1);
    jail__init_forward_signals();
    signal(SIGPIPE, SIG_IGN);
    run_init_watch(status_w, script, &none);
}

static _Noreturn void run_init(const struct jail_warm_req *q, int *fds)
{
    int efd = fds[JAIL_WARM_FD_ERRPIPE];
    int *trees = NULL;
    prctl(PR_SET_DUMPABLE, 0);
    mounts_early(q->tmp_opts, q->network, &trees, efd);
    mounts_late(q, fds, trees, false, efd);
    run_go(q, fds);
}

/* The maps of the run's new user namespace: inside 0 and 1000 are the
 * zygote's 0 and the run's uid of its range. run_uid 0 (the server is
 * unprivileged: the zygote's namespace maps only its 0, the server's uid):
 * 1000 alone, as a cold unprivileged run maps only 1000 to the server's
 * uid; the run's init is then 1000 with its capabilities from the clone. */
static int write_run_maps(pid_t pid, uint32_t run_uid)
{
    char path[64], map[64];
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
static char spare_tmp[sizeof ((struct jail_warm_req *)0)->tmp_opts]; /* what they mounted /tmp with */
#define SPARE_COMM "rms-spare"        /* its name until it is handed a run (the pool counts its memory) */

/* In the spare: its view, then the wait for a run. The zygote's death
 * (before a run) or its closing the socket ends it. */
static _Noreturn void spare_main(int sock)
{
    static struct jail_warm_req q;
    char comm[16] = "";
    int *trees = NULL;
    /* (a zygote gone before this reads as the end of sock below: its
     * parent is outside its PID namespace, getppid() says 0) */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_GET_NAME, comm);
    prctl(PR_SET_NAME, SPARE_COMM);
    jail__close_all_except(&sock, 1);
    mounts_early(spare_tmp, false, &trees, -1);
    ahead_make();
    int fds[JAIL_WARM_NFDS];
    size_t nfds = 0;
    ssize_t r = jail__recv_fds(sock, &q, sizeof q, fds, &nfds);
    if (r != (ssize_t)sizeof q || q.magic != JAIL_WARM_MAGIC || q.network ||
        nfds != (size_t)JAIL_WARM_FD_BIND0 + q.n_binds + q.n_cg_tasks)
        _exit(0);
    close(sock);
    /* A run now: it lives on if the zygote goes, as a run cloned for it
     * would (its worker watches it). */
    prctl(PR_SET_PDEATHSIG, 0);
    prctl(PR_SET_NAME, comm);
    mounts_late(&q, fds, trees, strcmp(q.tmp_opts, spare_tmp) != 0, fds[JAIL_WARM_FD_ERRPIPE]);
    run_go(&q, fds);
}

/* One spare more, when fewer than wanted wait. 0, or -errno (none made). */
static int spare_make(void)
{
    int sv[2];
    if (n_spares >= spares_want || !single_threaded())
        return 0;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
        return -errno;
    py.before_fork();
    pid_t pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID |
                                              CLONE_NEWNET | SIGCHLD,
                               NULL, NULL, NULL, NULL);
    if (pid == 0)
        spare_main(sv[1]);
    py.after_fork_parent();
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
        nfds != (size_t)JAIL_WARM_FD_BIND0 + q->n_binds + q->n_cg_tasks) {
        rc = -EINVAL;
        goto out;
    }
    if (!single_threaded()) {
        rc = -EDEADLK;
        goto out;
    }
    /* Busy from now on: spares like this run's /tmp are made ahead. */
    if (!spare_tmp[0])
        snprintf(spare_tmp, sizeof spare_tmp, "%s", q->tmp_opts);
    if (!q->network && (rc = spare_take(q, fds, nfds)) != -EAGAIN)
        goto out;
    rc = 0;
    if (pipe2(ack, O_CLOEXEC) < 0) {
        rc = -errno;
        goto out;
    }
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID |
                          (q->network ? 0 : CLONE_NEWNET);
    py.before_fork();
    pid_t init = (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
    if (init == 0) {
        close(ack[1]);
        char b;
        struct pollfd p = {ack[0], POLLIN, 0};
        if (poll(&p, 1, ZYGOTE_MAPS_MS) != 1 || read(ack[0], &b, 1) != 1 || b != 'm')
            jail__child_fail_err(fds[JAIL_WARM_FD_ERRPIPE], JAIL_STAGE_MAPS, ETIMEDOUT, NULL);
        close(ack[0]);
        run_init(q, fds);
    }
    py.after_fork_parent();
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
    if (argc != 5 || py_load(argv[2]) < 0) {
        fprintf(stderr, "runmyscript: the zygote cannot load %s\n", argc > 2 ? argv[2] : "libpython");
        _exit(JAIL_CHILD_FAILED);
    }
    wchar_t prog[PATH_MAX];
    if (mbstowcs(prog, argv[3], ARRAY_SIZE(prog)) == (size_t)-1)
        _exit(JAIL_CHILD_FAILED);
    const char *slash = strrchr(argv[3], '/');
    snprintf(py_comm, sizeof py_comm, "%s", slash ? slash + 1 : argv[3]);
    const char *hf = getenv("RUNMYSCRIPT_WARM_HOME");
    snprintf(home_from, sizeof home_from, "%s", hf && hf[0] == '/' ? hf : "");
    py.set_program_name(prog);
    py.initialize_ex(1);
    if (py.run_simple_string(jail__py_zygote) != 0)
        _exit(JAIL_CHILD_FAILED);
    /* The runner (display.py, runner.py), for the runs whose last
     * expression is shown: its module kept, out of sys.modules in a run. */
    char *runner;
    if (asprintf(&runner, "%s%s", jail_py_display, jail_py_runner) < 0 || py.run_simple_string(runner) != 0 ||
        !(py_runner = py.add_module("_rms_run")))
        _exit(JAIL_CHILD_FAILED);
    py.incref(py_runner);
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
    if (!ok || py.run_simple_string(b.data) != 0)
        _exit(JAIL_CHILD_FAILED);
    dbuf_free(&b);
    carry_scan();
    void *warm = py.add_module("_rms_warm");
    if (!warm || !(py_end = py.get_attr(warm, "end")))
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
        bool more = spare_tmp[0] && n_spares < spares_want;
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
