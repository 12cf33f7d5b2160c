/* jail_stdin.c: whether a run is waiting on its stdin, for a run whose
 * stdin is a pipe the executor feeds (a script that may ask its user): a
 * process of the run blocked in read() on a descriptor that is that pipe.
 * The kernel tells what a blocked task waits in (/proc/PID/syscall: the
 * call's number and arguments), and which file a descriptor is
 * (/proc/PID/fd/N), so no cooperation of the script's is needed: input(),
 * sys.stdin.readline() and os.read(0, ...) are all seen alike. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define JAIL_SYSCALL_TEXT_MAX 256 /* /proc/PID/syscall: a number and eight hex words */

struct stdin_look {
    char want[64]; /* "pipe:[INO]" */
};

/* 1 when pid is blocked in a read of the pipe, else 0. */
static int reading_pipe(pid_t pid, void *ctx)
{
    const struct stdin_look *l = ctx;
    char path[64], text[JAIL_SYSCALL_TEXT_MAX];
    snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0)
        return 0;
    text[n] = '\0';
    /* "running" while on a CPU; else "NR ARG0 ARG1 ...". */
    char *end;
    long nr = strtol(text, &end, 10);
    if (end == text || (nr != SYS_read && nr != SYS_readv))
        return 0;
    unsigned long fdn = strtoul(end, NULL, 16);
    if (fdn > 65535)
        return 0;
    char link[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%lu", (int)pid, fdn);
    ssize_t k = readlink(path, link, sizeof link - 1);
    if (k <= 0)
        return 0;
    link[k] = '\0';
    return !strcmp(link, l->want);
}

int jail_stdin_waiting(const struct jail_proc *p, ino_t pipe_ino)
{
    if (p->pid <= 0 || p->reaped)
        return 0;
    struct stdin_look l;
    snprintf(l.want, sizeof l.want, "pipe:[%llu]", (unsigned long long)pipe_ino);
    /* In the namespaces every process of the run descends from init (and
     * init itself never reads); in the fallback from us. */
    pid_t root = p->mode == JAIL_MODE_NAMESPACES ? p->pid : getpid();
    return jail__tree_each(root, reading_pipe, &l) > 0;
}
