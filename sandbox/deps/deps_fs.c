/* deps_fs.c: the file-tree helpers of the environments and the package
 * store, beneath both: the lock files of their builds, the removal and
 * the eviction of a tree made read-only, a tree copied or hard linked
 * into another, read-only modes; and the crash-safety tests' way in,
 * a kill at a named step of what writes them. */
#include "config.h"

#include "deps_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

#define DEPS_LOCK_TRIES 100 /* lock files eviction may unlink under a waiter */

/* ------------------------------------------------------------ faults */

void deps__fault(const char *step)
{
    /* The crash-safety tests kill the process at a named step, the way a
     * SIGKILL or a power cut would, to show what it leaves. */
    const char *at = getenv("RMS_FAULT_KILL_AT");
    if (at && !strcmp(at, step)) {
        log_msg(LOG_LVL_WARN, "RMS_FAULT_KILL_AT=%s: killing the process here", step);
        raise(SIGKILL);
    }
}

/* ------------------------------------------------------------ locks */

int deps__lock_file(const char *path, bool *waited, int *out)
{
    for (int tries = 0; tries < DEPS_LOCK_TRIES; tries++) {
        cleanup_fd int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
        if (fd < 0)
            return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            if (errno != EWOULDBLOCK)
                return -errno;
            if (waited)
                *waited = true;
            log_msg(LOG_LVL_INFO, "waiting for the lock %s: another run is building this environment", path);
            while (flock(fd, LOCK_EX) < 0)
                if (errno != EINTR)
                    return -errno;
        }
        struct stat a, b;
        if (fstat(fd, &a) < 0)
            return -errno;
        if (stat(path, &b) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
            *out = steal_fd(&fd);
            return 0;
        }
    }
    return -EDEADLK;
}

/* ---------------------------------------------- removal and eviction */

static int set_writable(int parent, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)depth, (void)ctx;
    if (!S_ISDIR(st->st_mode))
        return 0; /* only directories need it for unlinking */
    return fchmodat(parent, name, (st->st_mode & 07777) | 0700, 0) < 0 ? -errno : 0;
}

int deps__remove_tree(int parent, const char *name)
{
    struct util_walk w = {.pre = set_writable};
    discard(util_walk_at(parent, name, &w)); /* what fails shows below */
    return util_rm_rf_at(parent, name);
}

int deps__evict_dir(int parent, const char *name, bool (*in_use)(void *ctx), void *ctx)
{
    cleanup_fd int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0 || (in_use && in_use(ctx)))
        return -EBUSY;
    char id[WS_ID_MAX + 1], trash[NAME_MAX + 1];
    int rc = ws_new_id(NULL, id);
    if (rc < 0)
        return rc;
    snprintf(trash, sizeof trash, ".trash-%.200s-%.8s", name, id);
    if (renameat(parent, name, parent, trash) < 0)
        return -errno;
    close(steal_fd(&fd));
    discard(deps__remove_tree(parent, trash));
    char lockname[NAME_MAX + 1];
    snprintf(lockname, sizeof lockname, ".%.200s.lock", name);
    cleanup_fd int lfd = openat(parent, lockname, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (lfd >= 0 && flock(lfd, LOCK_EX | LOCK_NB) == 0)
        unlinkat(parent, lockname, 0);
    return 0;
}

/* -------------------------------------------- copies and hard links */

/* The tree at src put into dst (an existing directory): directories made
 * (an existing one is shared: two packages of one namespace), files hard
 * linked (copied where a link cannot go: another file system), a file
 * that is there already replaced (the later wheel wins, as with pip). */
struct link_walk {
    int dst;
    bool link;
    size_t copied;
};

static int link_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct link_walk *c = ctx;
    if (depth == 0)
        return 0;
    if (S_ISDIR(st->st_mode)) {
        if (mkdirat(c->dst, name, c->link ? 0755 : st->st_mode & 07777) < 0 && (!c->link || errno != EEXIST))
            return -errno;
        int t = openat(c->dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (t < 0)
            return -errno;
        close(c->dst);
        c->dst = t;
        return 0;
    }
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
        if (n < 0)
            return -errno;
        target[n] = '\0';
        return symlinkat(target, c->dst, name) < 0 ? -errno : 0;
    }
    if (!S_ISREG(st->st_mode))
        return 0;
    if (c->link) {
        if (linkat(dirfd, name, c->dst, name, 0) == 0)
            return 0;
        if (errno == EEXIST && unlinkat(c->dst, name, 0) == 0 && linkat(dirfd, name, c->dst, name, 0) == 0)
            return 0;
        if (errno != EXDEV && errno != EPERM && errno != EMLINK)
            return -errno;
        c->copied++;
    }
    int rc = util_copy_file(dirfd, name, c->dst, name);
    if (rc == 0 && fchmodat(c->dst, name, st->st_mode & 07777, 0) < 0)
        rc = -errno;
    return rc;
}

static int link_post(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct link_walk *c = ctx;
    (void)dirfd, (void)name, (void)st;
    if (depth == 0)
        return 0;
    int up = openat(c->dst, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (up < 0)
        return -errno;
    close(c->dst);
    c->dst = up;
    return 0;
}

int deps__tree_put(int srcfd, const char *src, int dstfd, bool link, size_t *copied)
{
    struct link_walk c = {fcntl(dstfd, F_DUPFD_CLOEXEC, 3), link, 0};
    struct util_walk w = {.pre = link_pre, .post = link_post, .ctx = &c};
    if (c.dst < 0)
        return -errno;
    int rc = util_walk_at(srcfd, src, &w);
    close(c.dst);
    if (copied)
        *copied += c.copied;
    return rc;
}

/* ------------------------------------------------------------ modes */

int deps__readonly_walk(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)ctx, (void)depth;
    if (S_ISLNK(st->st_mode))
        return 0; /* chmod would follow it */
    mode_t mode = S_ISDIR(st->st_mode) || (st->st_mode & 0111) ? 0555 : 0444;
    if ((st->st_mode & 07777) == mode)
        return 0; /* a linked file, already so */
    if (!*name) /* the top of a walk of "" is dirfd itself */
        return fchmod(dirfd, mode) < 0 ? -errno : 0;
    return fchmodat(dirfd, name, mode, 0) < 0 ? -errno : 0;
}
