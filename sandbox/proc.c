/* proc.c: run a trusted helper program to completion, output captured: a
 * fork and execve in a process group of its own, watched by supervise.c. */
#include "config.h"

#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"

#define PROC_EXEC_FAILED 127   /* the exit status of a child that could not start the program (as the shell's) */

/* In the forked child: stdin from /dev/null, stdout and stderr into the
 * pipe, nothing else open, then the program. */
static _Noreturn void proc_child(const char *const *argv, const char *const *envp, int out_w)
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    setpgid(0, 0);
    int nul = open("/dev/null", O_RDONLY);
    if (nul < 0 || dup2(nul, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0)
        _exit(PROC_EXEC_FAILED);
#ifdef SYS_close_range
    syscall(SYS_close_range, 3U, ~0U, 0);
#endif
    execve(argv[0], (char *const *)argv, (char *const *)envp);
    _exit(PROC_EXEC_FAILED);
}

/* The deadline passed: the helper's group goes, and the helper with it
 * should it have left the group. */
static void proc_stop(void *ctx, enum supervise_end why, int sig)
{
    pid_t pid = *(const pid_t *)ctx;
    (void)why;
    kill(-pid, sig);
    kill(pid, sig);
}

int proc_run(const char *const *argv, const char *const *envp, int64_t timeout_ms, size_t max_out, char **out,
             int *wstatus, void (*line_cb)(void *ctx, const char *line), void *ctx)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    /* Only our end is non-blocking: the helper's writes block as usual. */
    int rc = util_set_nonblock(p[0]);
    pid_t pid = rc < 0 ? -1 : fork();
    if (pid < 0) {
        int e = rc < 0 ? -rc : errno;
        close(p[0]);
        close(p[1]);
        return -e;
    }
    if (pid == 0)
        proc_child(argv, envp, p[1]);
    close(p[1]);
    struct supervise_capture cap;
    supervise_capture_init(&cap, max_out, line_cb, ctx);
    enum supervise_end end = supervise_capture_run(&cap, p[0], timeout_ms, proc_stop, &pid, out);
    close(p[0]);
    /* The output closed: the helper is done, or it left a child holding the
     * pipe open until now; either way its group goes. */
    kill(-pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *wstatus = st;
    return end == SUPERVISE_DEADLINE ? -ETIMEDOUT : 0;
}
