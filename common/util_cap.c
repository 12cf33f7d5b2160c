/* util_cap.c: the one way a counted cap is taken (util.h, util_cap_take):
 * the entries of a directory that count are counted, and the new one is
 * made, under one exclusive flock of the directory's .cap.lock, so that
 * processes racing for the last place end with exactly the cap. A check
 * followed by a creation without the lock lets every racer pass the check
 * before any of them creates: a burst of 100 ends 99 past the cap.
 *
 * Why a lock and not a shared counter: the processes that share a state
 * directory are not children of one parent (serve's workers, CGI processes,
 * an MCP task's process), and what they count outlives them (a session),
 * or must be given back when its holder is killed (a reservation of
 * request memory, whose flock the kernel drops): counting the entries
 * themselves never drifts from what is there. The lock is held while the
 * directory is read and the one entry is made, nothing more. */
#include "config.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#define CAP_LOCK ".cap.lock"

int util_cap_take(int dirfd, struct util_cap *c)
{
    c->used = 0;
    if (!c->weigh || !c->make)
        return -EINVAL;
    cleanup_fd int lfd = openat(dirfd, CAP_LOCK, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lfd < 0)
        return -errno;
    while (flock(lfd, LOCK_EX) < 0)
        if (errno != EINTR)
            return -errno;
    /* Under the lock: nobody else counts or makes an entry now. */
    cleanup_dir DIR *d = util_opendir_at(dirfd);
    if (!d)
        return -errno;
    uint64_t used = 0;
    for (;;) {
        errno = 0; /* readdir's end and its failure differ only by it (weigh may set it) */
        struct dirent *de = readdir(d);
        if (!de) {
            if (errno)
                return -errno;
            break;
        }
        if (de->d_name[0] == '.' && (!de->d_name[1] || !strcmp(de->d_name, "..") || !strcmp(de->d_name, CAP_LOCK)))
            continue;
        uint64_t w = c->weigh(dirfd, de->d_name, c->ctx);
        used = used + w < used ? UINT64_MAX : used + w;
    }
    c->used = used;
    if (used > c->max || c->need > c->max - used)
        return -EDQUOT; /* the lock goes with lfd: nothing was made */
    return c->make(dirfd, c->ctx);
}
