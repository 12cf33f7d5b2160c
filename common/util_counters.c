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
 * counters) is started again from zeros under an exclusive flock, which
 * every opener takes while it checks. */
#include "config.h"

#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define COUNTERS_MAGIC 0x31727463736d72ull /* "rmsctr1" */

struct counters_head {
    uint64_t magic, layout, n, pad;
};

/* Whether the file's header (if it has one of the right size) is ours. */
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

int util_counters_open(const char *path, uint64_t layout, size_t n, struct util_counters *c)
{
    memset(c, 0, sizeof *c);
    if (n == 0 || n > UTIL_COUNTERS_MAX)
        return -EINVAL;
    size_t len = sizeof(struct counters_head) + n * sizeof(uint64_t);
    cleanup_fd int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    int rc;
    while ((rc = flock(fd, LOCK_EX)) < 0 && errno == EINTR)
        ;
    if (rc < 0)
        return -errno;
    errno = 0;
    if (!head_matches(fd, layout, n, len)) {
        /* Zeros, then the header last: a reader that maps it sees slots
         * of the right layout whatever it reads. */
        struct counters_head h = {.magic = COUNTERS_MAGIC, .layout = layout, .n = n};
        if (ftruncate(fd, 0) < 0 || ftruncate(fd, (off_t)len) < 0 ||
            pwrite(fd, &h, sizeof h, 0) != (ssize_t)sizeof h) {
            rc = errno ? -errno : -EIO;
            discard(flock(fd, LOCK_UN));
            return rc;
        }
    }
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    rc = map == MAP_FAILED ? -errno : 0;
    discard(flock(fd, LOCK_UN));
    if (rc < 0)
        return rc;
    c->map = map;
    c->len = len;
    c->slot = (uint64_t *)((char *)map + sizeof(struct counters_head));
    c->n = n;
    return 0;
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
