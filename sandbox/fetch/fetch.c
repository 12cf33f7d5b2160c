/* fetch.c: the fetch module's settings, its outcomes' names, and the
 * read-only rule of mounts/ in the rlimits fallback. The module's parts:
 * the address guard and the allowlist (fetch_guard.c), the transfers over
 * libcurl (fetch_transfer.c), the session's mounts and uploads
 * (fetch_session.c); what they share is in fetch_internal.h. */
#include "config.h"

#include "fetch_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

void fetch_config_init(struct fetch_config *c)
{
    memset(c, 0, sizeof *c);
    fetch_limits_default(&c->limits);
}

const char *fetch_strerror(int rc)
{
    if (rc == FETCH_E_HTTP)
        return "the server answered with an HTTP error";
    return strerror(-rc);
}

/* ---------------------------------------------------- read-only mounts */

/* Each regular file that anyone may write loses its write bits. */
static int ro_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    int *first = ctx;
    (void)depth;
    if (!S_ISREG(st->st_mode) || !(st->st_mode & 0222))
        return 0;
    /* Opened, not named: fchmod acts on what was checked, never on a
     * symlink swapped in after the stat. */
    struct stat now;
    cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &now) < 0 || !S_ISREG(now.st_mode))
        return 0;
    if (fchmod(fd, now.st_mode & 07777 & ~(mode_t)0222) < 0 && *first == 0)
        *first = -errno;
    return 0;
}

/* A directory below mounts/ that cannot be opened is passed over. */
static int ro_fail(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx)
{
    (void)dirfd, (void)name, (void)st, (void)ctx;
    return depth == 0 ? err : 0;
}

int fetch_mounts_chmod_ro(int workspace_fd)
{
    int mfd = ws_mounts_open(workspace_fd, false);
    if (mfd < 0)
        return mfd == -ENOENT || mfd == -ELOOP ? 0 : mfd;
    int first = 0;
    struct util_walk w = {.pre = ro_pre, .fail = ro_fail, .ctx = &first};
    int rc = util_walk_at(mfd, "", &w);
    close(mfd);
    return rc < 0 ? rc : first;
}
