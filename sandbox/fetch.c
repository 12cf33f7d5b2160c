/* fetch.c: the fetch module's settings, its outcomes' names, and the
 * read-only rule of mounts/ in the rlimits fallback. The module's parts:
 * the address guard and the allowlist (fetch_guard.c), the transfers over
 * libcurl (fetch_transfer.c), the session's mounts and uploads
 * (fetch_session.c); what they share is in fetch_internal.h. */
#include "config.h"

#include "fetch_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

#define FETCH_MOUNT_DEPTH 64 /* directory levels fetch_mounts_chmod_ro walks */

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

static int chmod_ro_dir(int dfd, int depth)
{
    if (depth > FETCH_MOUNT_DEPTH)
        return 0;
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                continue;
            int r = chmod_ro_dir(sub, depth + 1);
            close(sub);
            if (r < 0 && rc == 0)
                rc = r;
        } else if (S_ISREG(st.st_mode) && (st.st_mode & 0222)) {
            /* Opened, not named: fchmod acts on what was checked, never on
             * a symlink swapped in after the stat. */
            cleanup_fd int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                continue;
            if (fchmod(fd, st.st_mode & 07777 & ~(mode_t)0222) < 0 && rc == 0)
                rc = -errno;
        }
    }
    return rc;
}

int fetch_mounts_chmod_ro(int workspace_fd)
{
    int mfd = ws_mounts_open(workspace_fd, false);
    if (mfd < 0)
        return mfd == -ENOENT || mfd == -ELOOP ? 0 : mfd;
    int rc = chmod_ro_dir(mfd, 0);
    close(mfd);
    return rc;
}
