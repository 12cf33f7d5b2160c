/* util_counters.c: a file of shared counters (util.h, util_counters_open):
 * 64-bit slots in a file every process maps shared and adds to with atomic
 * builtins. The processes that serve one state directory are not children
 * of one parent (serve's workers and its replacements, CGI processes,
 * FastCGI processes a manager starts, an MCP task's process) and keep
 * nothing in memory from one request to the next, so what they count
 * together lives in a file they all map: an add is one atomic instruction
 * on the page, with no lock and no write(2).
 *
 * The file starts with a header (a magic, the caller's layout, the number
 * of slots); a file whose header differs (another version's table of
 * counters) is replaced by a new one of zeros, renamed over it under an
 * exclusive flock of the directory, which every opener takes while it
 * checks; a process that mapped the old one sees it is no longer the
 * file's (util_counters_current) and maps the new. */
#include "config.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define COUNTERS_MAGIC 0x31727463736d72ull /* "rmsctr1" */

struct counters_head {
    uint64_t magic, layout, n, pad;
};

/* Whether the file's header (and its size) is of this layout. */
static bool head_matches(int fd, uint64_t layout, size_t n, size_t len)
{
    struct stat st;
    struct counters_head h;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size != len)
        return false;
    if (pread(fd, &h, sizeof h, 0) != (ssize_t)sizeof h)
        return false;
    return h.magic == COUNTERS_MAGIC && h.layout == layout && h.n == n;
}

/* Makes a new file of the layout beside path and renames it over path:
 * a process still mapping the old one keeps a whole file (a file cut
 * under a mapping would fault its next add). Under the directory's lock. */
static int replace(int dfd, const char *name, uint64_t layout, size_t n, size_t len)
{
    char tmp[NAME_MAX + 1];
    if ((size_t)snprintf(tmp, sizeof tmp, ".%.200s.%ld", name, (long)getpid()) >= sizeof tmp)
        return -ENAMETOOLONG;
    discard(unlinkat(dfd, tmp, 0)); /* one a killed process left */
    cleanup_fd int fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    struct counters_head h = {.magic = COUNTERS_MAGIC, .layout = layout, .n = n};
    int rc = 0;
    if (ftruncate(fd, (off_t)len) < 0 || pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
        renameat(dfd, tmp, dfd, name) < 0)
        rc = errno ? -errno : -EIO;
    if (rc < 0)
        discard(unlinkat(dfd, tmp, 0));
    return rc;
}

int util_counters_open(const char *path, uint64_t layout, size_t n, struct util_counters *c)
{
    memset(c, 0, sizeof *c);
    if (n == 0 || n > UTIL_COUNTERS_MAX)
        return -EINVAL;
    size_t len = sizeof(struct counters_head) + n * sizeof(uint64_t);
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    const char *name = slash ? slash + 1 : path;
    if ((size_t)snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".") >= sizeof dir)
        return -ENAMETOOLONG;
    if (!*dir)
        snprintf(dir, sizeof dir, "/");
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    int rc;
    while ((rc = flock(dfd, LOCK_EX)) < 0 && errno == EINTR)
        ;
    if (rc < 0)
        return -errno;
    cleanup_fd int fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || !head_matches(fd, layout, n, len)) {
        rc = fd < 0 && errno != ENOENT ? -errno : replace(dfd, name, layout, n, len);
        if (rc == 0) {
            if (fd >= 0)
                close(fd);
            fd = openat(dfd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
            rc = fd < 0 ? -errno : 0;
        }
    } else {
        rc = 0;
    }
    struct stat st;
    void *map = MAP_FAILED;
    if (rc == 0 && fstat(fd, &st) < 0)
        rc = -errno;
    if (rc == 0) {
        map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        rc = map == MAP_FAILED ? -errno : 0;
    }
    discard(flock(dfd, LOCK_UN));
    if (rc < 0)
        return rc;
    c->map = map;
    c->len = len;
    c->slot = (uint64_t *)((char *)map + sizeof(struct counters_head));
    c->n = n;
    c->dev = st.st_dev;
    c->ino = st.st_ino;
    return 0;
}

bool util_counters_current(const struct util_counters *c, const char *path)
{
    struct stat st;
    return c->map && stat(path, &st) == 0 && st.st_dev == c->dev && st.st_ino == c->ino;
}

void util_counters_add(struct util_counters *c, size_t i, uint64_t v)
{
    if (c->slot && i < c->n)
        __atomic_fetch_add(&c->slot[i], v, __ATOMIC_RELAXED);
}

uint64_t util_counters_get(const struct util_counters *c, size_t i)
{
    return c->slot && i < c->n ? __atomic_load_n(&c->slot[i], __ATOMIC_RELAXED) : 0;
}

void util_counters_close(struct util_counters *c)
{
    if (c->map)
        munmap(c->map, c->len);
    memset(c, 0, sizeof *c);
}
