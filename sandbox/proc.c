/* proc.c: run a trusted helper program to completion, output captured. */
#include "config.h"

#include "proc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void emit_lines(struct dbuf *pending, void (*line_cb)(void *, const char *), void *ctx, bool flush)
{
    size_t start = 0;
    for (size_t i = 0; i < pending->len; i++) {
        if (pending->data[i] == '\n') {
            pending->data[i] = '\0';
            line_cb(ctx, pending->data + start);
            start = i + 1;
        }
    }
    if (flush && start < pending->len) {
        line_cb(ctx, pending->data + start);
        start = pending->len;
    }
    if (!pending->data)
        return; /* nothing came yet (a helper killed before its first byte) */
    memmove(pending->data, pending->data + start, pending->len - start);
    pending->len -= start;
    pending->data[pending->len] = '\0';
}

int proc_run(const char *const *argv, const char *const *envp, int64_t timeout_ms, size_t max_out, char **out,
             int *wstatus, void (*line_cb)(void *ctx, const char *line), void *ctx)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        return -e;
    }
    if (pid == 0) {
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        int nul = open("/dev/null", O_RDONLY);
        if (nul < 0 || dup2(nul, 0) < 0 || dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
            _exit(127);
#ifdef SYS_close_range
        syscall(SYS_close_range, 3U, ~0U, 0);
#endif
        execve(argv[0], (char *const *)argv, (char *const *)envp);
        _exit(127);
    }
    close(p[1]);
    struct dbuf buf, pending;
    dbuf_init(&buf, max_out);
    dbuf_init(&pending, 1 << 20);
    int64_t deadline = util_now_ms() + timeout_ms;
    bool timed_out = false;
    char chunk[8192];
    for (;;) {
        int64_t left = deadline - util_now_ms();
        if (left <= 0 && !timed_out) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            timed_out = true;
        }
        struct pollfd pfd = {p[0], POLLIN, 0};
        int pr = poll(&pfd, 1, timed_out ? 1000 : (int)(left > 1000 ? 1000 : left));
        if (pr < 0 && errno != EINTR)
            break;
        if (pr <= 0)
            continue;
        ssize_t r = read(p[0], chunk, sizeof chunk);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        discard(dbuf_append(&buf, chunk, (size_t)r)); /* past max_out: dropped */
        if (line_cb) {
            if (dbuf_append(&pending, chunk, (size_t)r) < 0)
                emit_lines(&pending, line_cb, ctx, true);
            else
                emit_lines(&pending, line_cb, ctx, false);
        }
    }
    close(p[0]);
    if (line_cb)
        emit_lines(&pending, line_cb, ctx, true);
    dbuf_free(&pending);
    /* The output closed: the helper is done, or it left a child holding the
     * pipe open until now; either way its group goes. */
    kill(-pid, SIGKILL);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    *wstatus = st;
    *out = dbuf_steal(&buf, NULL);
    return timed_out ? -ETIMEDOUT : 0;
}
