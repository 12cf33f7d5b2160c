/* stream_sup.c: serve's supervisor's side of the stream process (stream.h):
 * the stream socket, bound once so that every stream process inherits it
 * and a handover waits in its backlog while one is replaced; the process
 * started, watched, started again when it dies, replaced on SIGHUP (the old
 * one carries its streams to their end), and ended last in a drain.
 *
 * The stream process is not the server's child (the server's children are
 * its workers: what counts them, tests and operators, sees only them): an
 * intermediate forks it and exits; it watches the server through a pidfd
 * instead of a parent-death signal, and the server watches it through
 * another, as the warm pool does. */
#include "config.h"

#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define SUP_BACKLOG 4096          /* handovers waiting for the stream process */
#define SUP_NAME "rms-streams"    /* its name in ps */
#define SUP_STOP_MS 5000          /* the drain: SIGTERM, then SIGKILL this much later */
#define SUP_KILL_AGAIN_MS 1000000 /* ... and again only this much later */
#define SUP_QUICK_MS 1000         /* one that dies sooner than this after its start: the next waits this long */

static int sup_socket(const struct cfg *cfg)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    char dir[4096];
    if (stream_sock_path(cfg, a.sun_path, sizeof a.sun_path) < 0) {
        log_msg(LOG_LVL_WARN, "the state directory's path is too long for the stream socket: streams hold workers");
        return -1;
    }
    snprintf(dir, sizeof dir, "%s/" STREAM_DIR, cfg->state_dir);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        log_msg(LOG_LVL_WARN, "%s: %s: streams hold workers", dir, strerror(errno));
        return -1;
    }
    unlink(a.sun_path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, SUP_BACKLOG) < 0) {
        log_msg(LOG_LVL_WARN, "the stream socket %s: %s: streams hold workers", a.sun_path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    chmod(a.sun_path, 0600);
    return fd;
}

void stream_sup_init(struct stream_sup *s, const struct cfg *cfg, struct stream_shared *shared,
                     const struct stream_kind *const *kinds, size_t n, int lfd)
{
    *s = (struct stream_sup){.inited = true, .cfg = cfg, .shared = shared, .kinds = kinds, .nkinds = n, .lfd = lfd,
                             .cur = {0, -1, 0}, .kill_at = -1};
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        s->old[i] = (struct stream_sup_proc){0, -1, 0};
    s->sfd = sup_socket(cfg);
    shared->on = s->sfd >= 0;
}

/* A slot of counts no stream process has now. */
static int sup_free_slot(const struct stream_sup *s)
{
    for (int k = 0; k < STREAM_COUNT_SLOTS; k++) {
        bool used = s->cur.pidfd >= 0 && s->cur.slot == k;
        for (size_t i = 0; i < STREAM_SUP_OLD; i++)
            used |= s->old[i].pidfd >= 0 && s->old[i].slot == k;
        if (!used)
            return k;
    }
    return 0; /* (every old one and the current one have theirs: never) */
}

/* In the stream process, from the intermediate's fork. */
static void sup_child(struct stream_sup *s, int server_fd, int slot)
{
    sigset_t none;
    sigemptyset(&none);
    signal(SIGCHLD, SIG_DFL);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (s->lfd >= 0)
        close(s->lfd); /* it takes no FastCGI connection of its own */
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        if (s->old[i].pidfd >= 0)
            close(s->old[i].pidfd);
    prctl(PR_SET_NAME, SUP_NAME, 0, 0, 0);
    _exit(stream_proc_main(s->cfg, s->sfd, server_fd, s->kinds, s->nkinds, &s->shared->slot[slot]));
}

static void sup_start(struct stream_sup *s)
{
    int pp[2];
    s->again = util_now_ms() + SUP_QUICK_MS; /* unless it starts */
    if (pipe2(pp, O_CLOEXEC) < 0) {
        log_msg(LOG_LVL_ERROR, "the stream process: pipe: %s", strerror(errno));
        return;
    }
    int slot = sup_free_slot(s);
    memset(&s->shared->slot[slot], 0, sizeof s->shared->slot[slot]);
    pid_t server = getpid(), mid = fork();
    if (mid == 0) {
        int sup = (int)syscall(SYS_pidfd_open, server, 0);
        pid_t p = sup >= 0 && getppid() == server ? fork() : -1;
        if (p == 0) {
            close(pp[0]);
            close(pp[1]);
            sup_child(s, sup, slot);
        }
        discard(write(pp[1], &p, sizeof p));
        _exit(p > 0 ? 0 : 1);
    }
    close(pp[1]);
    pid_t p = -1;
    int rc = mid > 0 ? util_read_exact(pp[0], &p, sizeof p) : -errno;
    close(pp[0]);
    while (mid > 0 && waitpid(mid, NULL, 0) < 0 && errno == EINTR)
        ;
    int pidfd = rc == 0 && p > 0 ? (int)syscall(SYS_pidfd_open, p, 0) : -1;
    if (pidfd < 0) {
        log_msg(LOG_LVL_ERROR, "the stream process cannot start (%s): streams wait for it",
                strerror(rc < 0 ? -rc : errno ? errno : ECHILD));
        if (p > 0)
            kill(p, SIGKILL);
        return;
    }
    s->cur = (struct stream_sup_proc){p, pidfd, slot};
    log_msg(LOG_LVL_INFO, "the stream process %d started (its counts: slot %d)", (int)p, slot);
    __atomic_store_n(&s->shared->pid, (int)p, __ATOMIC_RELAXED);
    s->started = util_now_ms();
    s->again = 0;
}

static bool proc_alive(const struct stream_sup_proc *t)
{
    struct pollfd p = {t->pidfd, POLLIN, 0};
    return t->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

/* t has ended: what it counted goes (its cuts are kept). */
static void proc_forget(struct stream_sup *s, struct stream_sup_proc *t)
{
    if (t->pidfd >= 0)
        close(t->pidfd);
    struct stream_counts *c = &s->shared->slot[t->slot];
    __atomic_add_fetch(&s->shared->cut_before, __atomic_load_n(&c->cut, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    memset(c, 0, sizeof *c);
    *t = (struct stream_sup_proc){0, -1, 0};
}

static void proc_signal(const struct stream_sup_proc *t, int sig)
{
    if (t->pidfd >= 0)
        syscall(SYS_pidfd_send_signal, t->pidfd, sig, NULL, 0);
}

void stream_sup_check(struct stream_sup *s, int64_t now)
{
    if (!s->inited)
        return;
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        if (s->old[i].pidfd >= 0 && !proc_alive(&s->old[i]))
            proc_forget(s, &s->old[i]);
    if (s->cur.pidfd >= 0 && !proc_alive(&s->cur)) {
        __atomic_store_n(&s->shared->pid, 0, __ATOMIC_RELAXED);
        if (!s->stopping) {
            log_msg(LOG_LVL_ERROR, "the stream process %d ended; starting another (its streams are lost)", s->cur.pid);
            __atomic_add_fetch(&s->shared->restarts, 1, __ATOMIC_RELAXED);
            s->again = now - s->started < SUP_QUICK_MS ? now + SUP_QUICK_MS : now;
        }
        proc_forget(s, &s->cur);
    }
    if (!s->stopping && s->sfd >= 0 && s->cur.pidfd < 0 && now >= s->again)
        sup_start(s);
}

int stream_sup_pollfd(const struct stream_sup *s)
{
    return s->inited ? s->cur.pidfd : -1;
}

void stream_sup_reload(struct stream_sup *s)
{
    if (!s->inited || s->sfd < 0 || s->cur.pidfd < 0)
        return;
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        if (s->old[i].pidfd < 0) {
            proc_signal(&s->cur, SIGHUP);
            s->old[i] = s->cur;
            s->cur = (struct stream_sup_proc){0, -1, 0};
            __atomic_store_n(&s->shared->pid, 0, __ATOMIC_RELAXED);
            sup_start(s);
            return;
        }
    log_msg(LOG_LVL_WARN, "SIGHUP: too many stream processes still carry old streams; the current one stays");
}

bool stream_sup_drain(struct stream_sup *s, int64_t now)
{
    if (!s->inited)
        return true;
    s->stopping = true;
    stream_sup_check(s, now);
    bool any = s->cur.pidfd >= 0;
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        any |= s->old[i].pidfd >= 0;
    if (!any)
        return true;
    int sig = 0;
    if (s->kill_at < 0) {
        sig = SIGTERM;
        s->kill_at = now + SUP_STOP_MS;
    } else if (now >= s->kill_at) {
        sig = SIGKILL;
        s->kill_at = now + SUP_KILL_AGAIN_MS;
    }
    if (sig) {
        proc_signal(&s->cur, sig);
        for (size_t i = 0; i < STREAM_SUP_OLD; i++)
            proc_signal(&s->old[i], sig);
    }
    return false;
}

void stream_sup_kill(struct stream_sup *s)
{
    if (!s->inited)
        return;
    s->stopping = true;
    proc_signal(&s->cur, SIGKILL);
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        proc_signal(&s->old[i], SIGKILL);
}

void stream_sup_forget(struct stream_sup *s)
{
    if (!s->inited)
        return;
    if (s->sfd >= 0)
        close(s->sfd);
    s->sfd = -1;
    if (s->cur.pidfd >= 0)
        close(s->cur.pidfd);
    for (size_t i = 0; i < STREAM_SUP_OLD; i++)
        if (s->old[i].pidfd >= 0)
            close(s->old[i].pidfd);
    s->inited = false;
}

void stream_sup_free(struct stream_sup *s)
{
    if (!s->inited)
        return;
    char path[sizeof ((struct sockaddr_un *)0)->sun_path];
    if (s->sfd >= 0 && stream_sock_path(s->cfg, path, sizeof path) == 0)
        unlink(path);
    stream_sup_forget(s);
}
