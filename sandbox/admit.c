/* admit.c: run slots and queue places as flock'd files under STATE/.admit.
 *
 * Why files and not a shared counter: the processes that share a state
 * directory are not all children of one parent (CGI, the CLI, two `serve`
 * instances), and a process killed with SIGKILL must give its slot back.
 * The kernel drops an flock when the last descriptor of its open file goes,
 * which is exactly that. Slot files are opened read-only (flock does not
 * care), so that the only file closed after writing in STATE/.admit is
 * "wake", which a run touches when it gives back its slot: queued runs wait
 * for that with inotify and take the slot at once, and look anyway every
 * ADMIT_POLL_MS (a holder that died touches nothing). The queue is a
 * bound, not a FIFO: whoever tries first after a release wins. */
#include "config.h"

#include "admit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

uint32_t admit_max_running(const struct admit_config *c)
{
    if (c->max_running)
        return c->max_running;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > ADMIT_MAX_SLOTS ? ADMIT_MAX_SLOTS : (uint32_t)n;
}

static int admit__dir(const char *state_dir)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s/.admit", state_dir) >= sizeof dir)
        return -ENAMETOOLONG;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    return fd < 0 ? -errno : fd;
}

/* Tries slots kind.0 .. kind.(n-1), starting at a random one so that
 * contenders spread out. Returns the held fd, -EAGAIN when all are held,
 * or -errno. probe: only count the held ones into *held, take nothing. */
static int admit__try(int dfd, const char *kind, uint32_t n, bool probe, uint32_t *held)
{
    uint32_t start = 0;
    if (!probe && util_random(&start, sizeof start) < 0)
        start = (uint32_t)getpid();
    int err = 0;
    for (uint32_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "%s.%u", kind, n ? (start + i) % n : 0);
        int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0) {
            err = -errno;
            continue;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (!probe)
                return fd;
            flock(fd, LOCK_UN);
        } else if (held) {
            (*held)++;
        }
        close(fd);
    }
    return err && err != -EAGAIN ? err : -EAGAIN;
}

int admit_enter(const char *state_dir, const struct admit_config *c, struct admit_ticket *t)
{
    t->run_fd = t->queue_fd = t->dir_fd = -1;
    cleanup_fd int dfd = admit__dir(state_dir);
    if (dfd < 0)
        return dfd;
    int fd = admit__try(dfd, "run", admit_max_running(c), false, NULL);
    if (fd >= 0) {
        t->run_fd = fd;
    } else if (fd != -EAGAIN) {
        return fd;
    } else if (c->max_queued == 0) {
        return -EBUSY;
    } else {
        fd = admit__try(dfd, "queue", c->max_queued, false, NULL);
        if (fd < 0)
            return fd == -EAGAIN ? -EBUSY : fd;
        t->queue_fd = fd;
    }
    t->dir_fd = steal_fd(&dfd);
    return 0;
}

int admit_wait(const char *state_dir, const struct admit_config *c, struct admit_ticket *t,
               bool (*cancelled)(void *ctx), void *ctx)
{
    if (t->run_fd >= 0)
        return 0;
    if (t->dir_fd < 0)
        return -EINVAL;
    /* Watch before trying, so that no release falls between the two. */
    cleanup_fd int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (ino >= 0) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/.admit", state_dir);
        if (inotify_add_watch(ino, dir, IN_CLOSE_WRITE | IN_ONLYDIR | IN_DONT_FOLLOW) < 0) {
            close(ino);
            ino = -1; /* polling alone still works */
        }
    }
    int64_t give_up = util_now_ms() + c->queue_wait_ms;
    uint32_t n = admit_max_running(c);
    for (;;) {
        int fd = admit__try(t->dir_fd, "run", n, false, NULL);
        if (fd >= 0) {
            close(t->queue_fd);
            t->queue_fd = -1;
            t->run_fd = fd;
            return 0;
        }
        int rc = 0;
        if (fd != -EAGAIN)
            rc = fd;
        else if (cancelled && cancelled(ctx))
            rc = -ECANCELED;
        else if (util_now_ms() >= give_up)
            rc = -ETIMEDOUT;
        if (rc < 0) {
            admit_leave(t);
            return rc;
        }
        if (ino < 0) {
            usleep(ADMIT_POLL_MS * 1000);
            continue;
        }
        struct pollfd pfd = {.fd = ino, .events = POLLIN};
        if (poll(&pfd, 1, ADMIT_POLL_MS) > 0) {
            char buf[4096];
            while (read(ino, buf, sizeof buf) > 0)
                ; /* drain: any event means "try again" */
        }
    }
}

void admit_leave(struct admit_ticket *t)
{
    /* Closing the descriptor drops the lock (no other copy: O_CLOEXEC, and
     * the jail closes what it does not pass on). */
    if (t->run_fd >= 0) {
        close(t->run_fd);
        /* Wake the queued runs: a close after writing is what they watch. */
        int w = t->dir_fd >= 0 ? openat(t->dir_fd, "wake", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
        if (w >= 0)
            close(w);
    }
    if (t->queue_fd >= 0)
        close(t->queue_fd);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    t->run_fd = t->queue_fd = t->dir_fd = -1;
}

int admit_count(const char *state_dir, const struct admit_config *c, uint32_t *running, uint32_t *queued)
{
    *running = *queued = 0;
    cleanup_fd int dfd = admit__dir(state_dir);
    if (dfd < 0)
        return dfd;
    int rc = admit__try(dfd, "run", admit_max_running(c), true, running);
    if (rc != -EAGAIN && rc < 0)
        return rc;
    rc = admit__try(dfd, "queue", c->max_queued, true, queued);
    return rc != -EAGAIN && rc < 0 ? rc : 0;
}
