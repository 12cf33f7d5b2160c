/* jail.c: starting, signalling and tearing down a script's process tree.
 *
 * Theory of operation (rlimits mode, the fallback):
 *   The calling process makes itself a child subreaper once, so that every
 *   process the script leaves behind (a daemon that forked twice and called
 *   setsid() included) is re-parented to us rather than to init. The script
 *   is forked into its own session and process group, with no_new_privs, its
 *   rlimits, a clean environment and only fds 0-2. A failure between fork and
 *   execve is written to a close-on-exec pipe as (stage, errno) so that the
 *   parent can tell "the sandbox failed" from "the script failed".
 *   Teardown walks our descendants through /proc/PID/task/TID/children,
 *   stops them all (a stopped process cannot fork), repeats until the set is
 *   stable, then kills and reaps them. Nothing of the run survives it.
 */
#include "config.h"

#include "jail.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* ------------------------------------------------------------ the view */

int jail_view(enum exec_isolation isolation, const struct jail_mounts *m, struct jail_view *v)
{
    (void)isolation; /* the rlimits mode sees the host's paths */
    memset(v, 0, sizeof *v);
    v->run_dir = strdup(m->run_dir);
    v->workspace = strdup(m->workspace);
    v->env_dir = strdup(m->env_dir);
    if (asprintf(&v->home, "%s/home", m->run_dir) < 0)
        v->home = NULL;
    if (asprintf(&v->tmp, "%s/tmp", m->run_dir) < 0)
        v->tmp = NULL;
    if (!v->run_dir || !v->workspace || !v->env_dir || !v->home || !v->tmp) {
        jail_view_free(v);
        return -ENOMEM;
    }
    return 0;
}

void jail_view_free(struct jail_view *v)
{
    free(v->run_dir);
    free(v->workspace);
    free(v->env_dir);
    free(v->home);
    free(v->tmp);
    memset(v, 0, sizeof *v);
}

int jail_prepare(const struct jail_mounts *m)
{
    cleanup_fd int dfd = open(m->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    if (mkdirat(dfd, "home", 0700) < 0 && errno != EEXIST)
        return -errno;
    if (mkdirat(dfd, "tmp", 0700) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* ---------------------------------------------------------- the child */

enum child_stage { STAGE_SETSID = 1, STAGE_DUP, STAGE_RLIMIT, STAGE_NNP, STAGE_CHDIR, STAGE_EXEC };

static const char *stage_name(int s)
{
    switch (s) {
    case STAGE_SETSID: return "setsid";
    case STAGE_DUP: return "setting up stdin/stdout/stderr";
    case STAGE_RLIMIT: return "setting resource limits";
    case STAGE_NNP: return "setting no_new_privs";
    case STAGE_CHDIR: return "entering the workspace";
    case STAGE_EXEC: return "starting the interpreter";
    }
    return "starting";
}

/* In the forked child: report (stage, errno) and exit. Only async-signal-safe
 * calls from here on. */
static _Noreturn void child_fail(int errfd, int stage)
{
    int msg[2] = {stage, errno};
    ssize_t w = write(errfd, msg, sizeof msg);
    (void)w;
    _exit(127);
}

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

struct rlimit_row {
    int resource;
    rlim_t value;
};

static size_t build_rlimits(const struct exec_limits *l, struct rlimit_row *rows)
{
    size_t n = 0;
    /* CPU: the soft limit sends SIGXCPU, the hard one a second later SIGKILL. */
    if (l->cpu_ms > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_CPU, (rlim_t)((l->cpu_ms + 999) / 1000)};
    if (l->memory > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_AS, (rlim_t)l->memory};
    if (l->file_size > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_FSIZE, (rlim_t)l->file_size};
    if (l->open_files > 0)
        rows[n++] = (struct rlimit_row){RLIMIT_NOFILE, (rlim_t)l->open_files};
    if (l->processes > 0) {
        /* RLIMIT_NPROC counts every process of the uid; root is exempt. */
        uint64_t have = getuid() == 0 ? 0 : count_uid_processes(getuid());
        rows[n++] = (struct rlimit_row){RLIMIT_NPROC, (rlim_t)(l->processes + have)};
    }
    /* No core dumps: they would land in the workspace and cost time. */
    rows[n++] = (struct rlimit_row){RLIMIT_CORE, 0};
    return n;
}

int jail_start(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    int pipefd[2];
    struct rlimit_row rows[8];
    size_t nrows;

    memset(p, 0, sizeof *p);
    p->pid = -1;
    p->pidfd = -1;
    p->isolation = "rlimits";

    if (o->isolation == EXEC_ISOLATION_NAMESPACES) {
        snprintf(err, errlen, "isolation with namespaces is required but not available here");
        return -ENOSYS;
    }

    /* Orphans of the run come to us, not to init: see the theory above. */
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0) {
        snprintf(err, errlen, "cannot become a child subreaper: %s", strerror(errno));
        return -errno;
    }
    nrows = build_rlimits(o->limits, rows);

    if (pipe2(pipefd, O_CLOEXEC) < 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -errno;
    }

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
        /* Default signal dispositions and an empty mask for the script. */
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        for (int s = 1; s < NSIG; s++)
            if (s != SIGKILL && s != SIGSTOP)
                signal(s, SIG_DFL);
        if (setsid() < 0)
            child_fail(efd, STAGE_SETSID);
        /* fds 0-2 from the caller; move the error pipe above them first. */
        if (efd <= 2) {
            int moved = fcntl(efd, F_DUPFD_CLOEXEC, 3);
            if (moved < 0)
                child_fail(efd, STAGE_DUP);
            efd = moved;
        }
        if (dup2(o->fd_in, 0) < 0 || dup2(o->fd_out, 1) < 0 || dup2(o->fd_err, 2) < 0)
            child_fail(efd, STAGE_DUP);
        /* No inherited descriptors: close everything above 2 but the error
         * pipe, which is close-on-exec. */
        for (int fd = 3; fd < efd; fd++)
            close(fd);
#ifdef SYS_close_range
        if (syscall(SYS_close_range, (unsigned)efd + 1, ~0U, 0) < 0)
#endif
        {
            for (int fd = efd + 1; fd < 65536; fd++)
                close(fd);
        }
        for (size_t i = 0; i < nrows; i++) {
            struct rlimit rl = {rows[i].value, rows[i].value};
            if (rows[i].resource == RLIMIT_CPU)
                rl.rlim_max = rows[i].value + 1;
            if (setrlimit(rows[i].resource, &rl) < 0)
                child_fail(efd, STAGE_RLIMIT);
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            child_fail(efd, STAGE_NNP);
        if (chdir(o->cwd) < 0)
            child_fail(efd, STAGE_CHDIR);
        execve(o->argv[0], (char *const *)o->argv, (char *const *)o->envp);
        child_fail(efd, STAGE_EXEC);
    }

    close(pipefd[1]);
    p->pid = pid;
    int msg[2];
    ssize_t r;
    do
        r = read(pipefd[0], msg, sizeof msg);
    while (r < 0 && errno == EINTR);
    close(pipefd[0]);
    if (r == (ssize_t)sizeof msg) {
        /* The child reported a failure and exited. */
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
            ;
        p->reaped = true;
        snprintf(err, errlen, "%s failed: %s", stage_name(msg[0]), strerror(msg[1]));
        return msg[1] ? -msg[1] : -EIO;
    }
    p->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    return 0;
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
    struct pidset s = {0};
    if (p->pid <= 0)
        return 0;
    /* The process group first (cheap, and covers the common case), then
     * every descendant that left it. Once the first process is reaped its
     * pid may name somebody else's group: only the walk is safe then. */
    if (!p->reaped)
        kill(-p->pid, sig);
    collect_descendants(&s);
    for (size_t i = 0; i < s.n; i++)
        kill(s.v[i], sig);
    free(s.v);
    return 0;
}

int jail_try_reap(struct jail_proc *p, int *wstatus, struct rusage *ru)
{
    if (!p->reaped) {
        pid_t r = wait4(p->pid, &p->wstatus, WNOHANG, &p->ru);
        if (r < 0)
            return -errno;
        if (r == 0)
            return 0;
        p->reaped = true;
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
    struct pidset s = {0}, stopped = {0}, killed = {0};
    if (p->pid <= 0)
        return 0;
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
                (void)pidset_add(&killed, s.v[i]);
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

void jail_proc_free(struct jail_proc *p)
{
    if (p->pidfd >= 0)
        close(p->pidfd);
    p->pidfd = -1;
}
