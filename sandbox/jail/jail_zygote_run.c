/* jail_zygote_run.c: a warm run's own side of a zygote (jail_zygote.c is
 * the zygote's): the run's init, C2, cloned by the zygote when the run
 * comes (jail__run_init) or made ahead as a spare (jail__spare_main), with
 * its view (the carried mounts, /proc, /tmp, /dev/shm, lo, HOME, the
 * worker's trees), the worker's go, the cgroups and the reaping; and the
 * script's process, C3, forked at the go or made ahead with its spare
 * (ahead_*), whose interpreter runs the script as `python3 SCRIPT` would.
 * Also what both sides share: libpython's functions (jail__py), what the
 * zygote found once for every run (the name, HOME's caches, the carried
 * mounts), and the descriptor passing the worker uses too. */
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

#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef RESOLVE_NO_SYMLINKS
#define RESOLVE_NO_SYMLINKS 0x04
#endif

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

#define PY_FILE_INPUT 257 /* Py_file_input: a module's statements */

struct jail_pyapi jail__py;

int jail__py_load(const char *lib)
{
    const struct util_dl_sym syms[] = {
        {"Py_SetProgramName", (void **)&jail__py.set_program_name},
        {"Py_InitializeEx", (void **)&jail__py.initialize_ex},
        {"PyRun_SimpleString", (void **)&jail__py.run_simple_string},
        {"PyRun_FileExFlags", (void **)&jail__py.run_file},
        {"PyImport_AddModule", (void **)&jail__py.add_module},
        {"PyModule_GetDict", (void **)&jail__py.module_dict},
        {"PyObject_GetAttrString", (void **)&jail__py.get_attr},
        {"PyObject_CallFunctionObjArgs", (void **)&jail__py.call},
        {"PyLong_AsLong", (void **)&jail__py.as_long},
        {"PyErr_Fetch", (void **)&jail__py.err_fetch},
        {"PyErr_NormalizeException", (void **)&jail__py.err_normalize},
        {"PyException_SetTraceback", (void **)&jail__py.set_traceback},
        {"PyErr_Clear", (void **)&jail__py.err_clear},
        {"PyErr_Print", (void **)&jail__py.err_print},
        {"Py_DecRef", (void **)&jail__py.decref},
        {"PyOS_BeforeFork", (void **)&jail__py.before_fork},
        {"PyOS_AfterFork_Parent", (void **)&jail__py.after_fork_parent},
        {"PyOS_AfterFork_Child", (void **)&jail__py.after_fork_child},
        {"Py_IncRef", (void **)&jail__py.incref},
        {"_Py_NoneStruct", (void **)&jail__py.none},
    };
    /* RTLD_GLOBAL: the extension modules it imports need its symbols. */
    return util_dl_load(lib, true, syms, ARRAY_SIZE(syms), "", NULL, 0);
}

/* _rms_run.end (sandbox/jail/runner.py, jail_py_runner): taken once the
 * zygote has made it, kept for every run. */
void *jail__py_end;
/* _rms_run (sandbox/jail/runner.py), kept: a run whose last expression is
 * shown leaves its exception in its exc. */
void *jail__py_runner;
/* The name a cold run's script has (/proc/PID/comm: the interpreter's
 * file name, as execve gives it), for each run's. */
char jail__py_comm[16];
/* Where the environment's caches are (RUNMYSCRIPT_WARM_HOME, as the pool
 * found them: jail_opts.home_from), laid into each run's HOME; "": none. */
char jail__home_from[PATH_MAX];

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
void jail__carry_scan(void)
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
    /* (where the kernel refuses a fresh one, the zygote's, which is the
     * container's, stays: jail__mount_proc) */
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        jail__must(errno == EPERM, efd, JAIL_STAGE_PROC);
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
    if (jail__home_from[0]) {
        int rc = jail__home_tree(jail__home_from, "/tmp/home", jail__home_from, JAIL_UID, false);
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
    int rc = ok && jail__py.run_simple_string(b.data) == 0 ? 0 : -1;
    dbuf_free(&b);
    return rc;
}

/* C3: the script. ahead: its process was made ahead with a spare's
 * (ahead_main), whose interpreter's after-fork work is done. */
static _Noreturn void run_script(const struct jail_warm_req *q, const int *fds, int efd,
                                 const struct sock_fprog *filter, bool ahead)
{
    prctl(PR_SET_NAME, jail__py_comm);
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
        jail__py.after_fork_child();
    if (warm_call("child", q->script, q->env) != 0)
        _exit(JAIL_CHILD_FAILED);
    /* The script in __main__ as python's main runs it (or through the
     * runner, as a cold run is, when its last expression is shown); its
     * end, and the interpreter's, in runner.py's end(). */
    void *type = NULL, *exc = NULL, *tb = NULL;
    if (q->value_file[0]) {
        fclose(fp);
        char *call = jail_runner_call(q->script, q->value_file, q->value_limit, false);
        if (!call || jail__py.run_simple_string(call) != 0)
            _exit(JAIL_CHILD_FAILED);
        free(call);
        exc = jail__py.get_attr(jail__py_runner, "exc");
        if (exc == jail__py.none) {
            jail__py.decref(exc);
            exc = NULL;
        }
    } else {
        if (jail__py.run_simple_string("__import__('sys').modules.pop('_rms_run', None)") != 0)
            _exit(JAIL_CHILD_FAILED);
        void *main = jail__py.add_module("__main__");
        void *globals = main ? jail__py.module_dict(main) : NULL;
        void *res = globals ? jail__py.run_file(fp, q->script, PY_FILE_INPUT, globals, globals, 1, NULL) : NULL;
        if (res) {
            jail__py.decref(res);
        } else {
            jail__py.err_fetch(&type, &exc, &tb);
            jail__py.err_normalize(&type, &exc, &tb);
            if (exc && tb)
                jail__py.set_traceback(exc, tb);
        }
    }
    void *st = exc ? jail__py.call(jail__py_end, exc, NULL) : jail__py.call(jail__py_end, NULL);
    jail__py.decref(type);
    jail__py.decref(exc);
    jail__py.decref(tb);
    long status = 1;
    if (st) {
        status = jail__py.as_long(st);
        jail__py.err_clear(); /* past a C long: -1, as python's own exit */
        jail__py.decref(st);
    } else {
        jail__py.err_print();
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


/* True when this process has exactly one thread: a fork copies only the
 * calling thread, so another one (a BLAS pool) would be missing, holding
 * its locks, in every run. */
bool jail__single_threaded(void)
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
static char *ahead_cg;               /* the spare's /proc/self/cgroup when it made it */
#define AHEAD_CG_MAX 16384           /* (its size at most) */
static int ahead_tasks[JAIL_CG_TASKS] = {-1, -1}; /* init's tasks files, for it */
static size_t n_ahead_tasks;

static _Noreturn void ahead_main(int sock)
{
    static struct ahead_msg m;
    jail__close_all_except(&sock, 1);
    jail__py.after_fork_child();
    /* child()'s work on a stand-in, this process's own environment */
    struct dbuf env;
    dbuf_init(&env, 4096);
    int ok = 0;
    for (char **e = environ; ok == 0 && *e; e++)
        ok = dbuf_append(&env, *e, strlen(*e) + 1);
    if (ok == 0 && dbuf_append(&env, "", 1) == 0)
        discard(warm_call("ahead", "/job/script.py", env.data));
    dbuf_free(&env);
    /* A thread started before the drop would keep what the script's
     * process drops (the filter and the capabilities are a thread's own):
     * such a process is not used (the spare forks the script instead). */
    if (!jail__single_threaded())
        _exit(JAIL_CHILD_FAILED);
    int fds[JAIL_WARM_NFDS]; /* (what jail__recv_fds may fill) */
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
    size_t n;
    bool cg = util_read_file_at(AT_FDCWD, "/proc/self/cgroup", AHEAD_CG_MAX, &ahead_cg, &n) == 0;
    sigset_t all, old;
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid_t pid = cg ? fork() : -1;
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
        cleanup_free char *now = NULL;
        size_t n;
        if (util_read_file_at(AT_FDCWD, "/proc/self/cgroup", AHEAD_CG_MAX, &now, &n) < 0 ||
            strcmp(now, ahead_cg) != 0) {
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

/* A network of the run's own (jail_net.c), made as a cold run's init makes
 * it: in the run's namespace, before anything of the script. */
static void run_net(const struct jail_warm_req *q, int *fds, int efd)
{
    int sock = JAIL_WARM_NET_FD(q, fds);
    if (sock < 0)
        return;
    char what[sizeof ((struct jail_child_error *)0)->what] = "";
    int rc = jail__net_own(sock, false, what, sizeof what);
    if (rc < 0)
        jail__child_fail_err(efd, JAIL_STAGE_NET_OWN, -rc, what);
}

/* C2: the run's pid 1. */
_Noreturn void jail__run_init(const struct jail_warm_req *q, int *fds)
{
    int efd = fds[JAIL_WARM_FD_ERRPIPE];
    int *trees = NULL;
    prctl(PR_SET_DUMPABLE, 0);
    mounts_early(q->tmp_opts, q->network, &trees, efd);
    run_net(q, fds, efd);
    mounts_late(q, fds, trees, false, efd);
    run_go(q, fds);
}

/* ------------------------------------------------------------ spares */

char jail__spare_tmp[sizeof ((struct jail_warm_req *)0)->tmp_opts];
#define SPARE_COMM "rms-spare"        /* its name until it is handed a run (the pool counts its memory) */

/* In the spare: its view, then the wait for a run. The zygote's death
 * (before a run) or its closing the socket ends it. */
_Noreturn void jail__spare_main(int sock)
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
    mounts_early(jail__spare_tmp, false, &trees, -1);
    ahead_make();
    /* (after the script's process, which must not hold its sockets) */
    discard(jail__net_ahead());
    int fds[JAIL_WARM_NFDS];
    size_t nfds = 0;
    ssize_t r = jail__recv_fds(sock, &q, sizeof q, fds, &nfds);
    if (r != (ssize_t)sizeof q || q.magic != JAIL_WARM_MAGIC || q.network || nfds != JAIL_WARM_FDS(&q))
        _exit(0);
    close(sock);
    /* A run now: it lives on if the zygote goes, as a run cloned for it
     * would (its worker watches it). */
    prctl(PR_SET_PDEATHSIG, 0);
    prctl(PR_SET_NAME, comm);
    if (JAIL_WARM_NET_FD(&q, fds) < 0)
        jail__net_ahead_drop();
    run_net(&q, fds, fds[JAIL_WARM_FD_ERRPIPE]);
    mounts_late(&q, fds, trees, strcmp(q.tmp_opts, jail__spare_tmp) != 0, fds[JAIL_WARM_FD_ERRPIPE]);
    run_go(&q, fds);
}

