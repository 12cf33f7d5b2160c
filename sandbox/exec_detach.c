/* exec_detach.c: work that outlives the process that asked for it (an MCP
 * task runs on after the worker answered): a double fork into a session of
 * its own, so that neither the worker nor the supervisor of `serve` waits
 * for it, with only the descriptors the work needs left open. */
#include "config.h"

#include "executor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Every descriptor from first on closed. */
static void close_others(int first)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0) == 0)
        return;
#endif
    for (int fd = first; fd < 65536; fd++)
        close(fd);
}

/* The grandchild: the descriptors as exec_detach says, then fn. */
static _Noreturn void detached(int (*fn)(void *, int), void *arg, int keep_fd, bool keep_stderr, int wfd)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    signal(SIGPIPE, SIG_IGN); /* the caller may close its end at any time */
    int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || (!keep_stderr && dup2(nul, 2) < 0))
        _exit(126);
    /* fd 3 is the pipe, fd 4 the kept descriptor. */
    if (wfd != 3 && (dup2(wfd, 3) < 0))
        _exit(126);
    if (keep_fd >= 0 && keep_fd != 4 && dup2(keep_fd, 4) < 0)
        _exit(126);
    close_others(keep_fd >= 0 ? 5 : 4);
    _exit(fn(arg, 3) & 0xff);
}

int exec_detach(int (*fn)(void *arg, int fd), void *arg, int keep_fd, bool keep_stderr, int *read_fd)
{
    int p[2], own_keep = -1;
    *read_fd = -1;
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    /* Out of the way of dup2 to 3 and 4 in the child. */
    if (keep_fd >= 0 && keep_fd < 5) {
        int k = fcntl(keep_fd, F_DUPFD_CLOEXEC, 5);
        if (k < 0) {
            int e = errno;
            close(p[0]);
            close(p[1]);
            return -e;
        }
        keep_fd = own_keep = k;
    }
    int w = p[1] < 5 ? fcntl(p[1], F_DUPFD_CLOEXEC, 5) : p[1];
    pid_t pid = w < 0 ? -1 : fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        if (w >= 0 && w != p[1])
            close(w);
        if (own_keep >= 0)
            close(own_keep);
        return -e;
    }
    if (pid == 0) {
        setsid();
        pid_t g = fork();
        if (g != 0)
            _exit(g < 0 ? 1 : 0);
        detached(fn, arg, keep_fd, keep_stderr, w);
    }
    close(p[1]);
    if (w != p[1])
        close(w);
    if (own_keep >= 0)
        close(own_keep);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        close(p[0]);
        return -EAGAIN;
    }
    *read_fd = p[0];
    return 0;
}
