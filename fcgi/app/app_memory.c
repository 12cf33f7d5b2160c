/* app_memory.c: the memory budget of request bodies in flight
 * (request_memory), shared by every process of the state directory: each
 * request may be up to request_bytes and every worker may hold one, and
 * nothing bounded the sum (100 workers at 96 MiB are 9.6 GiB of a machine
 * that may have 4). A body above APP_BODY_FREE takes its size from the
 * budget before it is read (its Content-Length: nginx has the whole body
 * by then, in its own buffers or a temporary file, so a request that waits
 * holds no memory of ours) and gives it back when its answer is sent; one
 * that does not fit waits up to request_memory_wait for room, then gets
 * 503 with Retry-After. Smaller bodies are bounded by the workers alone.
 *
 * The budget is STATE/.mem/: one file per body in flight,
 * r-BYTES-PID-RANDOM, flock'd by its process for as long as it holds the
 * body, counted and made under the cap's lock (util_cap_take): a process
 * killed with the lock held gives its bytes back with its descriptors, and
 * the next count removes its file. */
#include "config.h"

#include "app.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define APP_MEM_DIR ".mem"
#define APP_MEM_POLL_MS 25 /* a waiting body looks for room this often */

static int mem_dir(const struct cfg *cfg)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/" APP_MEM_DIR, cfg->state_dir) >= sizeof path)
        return -ENAMETOOLONG;
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* A body in flight weighs its bytes; the file of one whose process is gone
 * (its lock free) is removed and weighs nothing. */
static uint64_t mem_weigh(int dirfd, const char *name, void *ctx)
{
    (void)ctx;
    unsigned long long bytes;
    if (sscanf(name, "r-%llu-", &bytes) != 1)
        return 0;
    cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return 0;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
        unlinkat(dirfd, name, 0);
        return 0;
    }
    return bytes;
}

struct mem_new {
    struct app_body *b;
    uint64_t bytes;
};

static int mem_make(int dirfd, void *ctx)
{
    struct mem_new *m = ctx;
    uint32_t rnd = 0;
    if (util_random(&rnd, sizeof rnd) < 0)
        rnd = (uint32_t)time(NULL);
    snprintf(m->b->name, sizeof m->b->name, "r-%llu-%ld-%08x", (unsigned long long)m->bytes, (long)getpid(), rnd);
    int fd = openat(dirfd, m->b->name, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    if (flock(fd, LOCK_EX) < 0) {
        int rc = -errno;
        close(fd);
        unlinkat(dirfd, m->b->name, 0);
        return rc;
    }
    m->b->fd = fd;
    return 0;
}

static int mem_none(int dirfd, void *ctx)
{
    (void)dirfd, (void)ctx;
    return -EDQUOT;
}

int app_body_admit(const struct app *app, struct http_req *req, struct http_resp *resp, struct app_body *b)
{
    const struct cfg *cfg = app->cfg;
    *b = (struct app_body){.fd = -1};
    const char *cl = http_header(req, "Content-Length");
    char *end = NULL;
    unsigned long long bytes = cl && *cl ? strtoull(cl, &end, 10) : 0;
    /* Small bodies, and bodies the handler refuses by their length (413)
     * without reading them, take nothing. */
    if (!end || *end || bytes <= APP_BODY_FREE || bytes > cfg->request_bytes)
        return 0;
    cleanup_fd int dfd = mem_dir(cfg);
    if (dfd < 0) {
        log_msg(LOG_LVL_WARN, "request memory: %s: the body goes without it", strerror(-dfd));
        return 0;
    }
    uint64_t max = cfg_request_memory(cfg);
    int64_t give_up = util_now_ms() + cfg->request_memory_wait_ms;
    struct mem_new m = {.b = b, .bytes = bytes};
    for (;;) {
        struct util_cap cap = {.max = max, .need = bytes, .weigh = mem_weigh, .make = mem_make, .ctx = &m};
        int rc = util_cap_take(dfd, &cap);
        if (rc == 0)
            return 0;
        if (rc != -EDQUOT) {
            log_msg(LOG_LVL_WARN, "request memory: %s: the body goes without it", strerror(-rc));
            return 0;
        }
        if (util_now_ms() >= give_up || http_client_gone(resp))
            break;
        struct timespec ts = {0, APP_MEM_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    log_msg(LOG_LVL_WARN, "request memory full: a body of %llu bytes waited %llds for room in request_memory",
            bytes, (long long)(cfg->request_memory_wait_ms / 1000));
    return -EBUSY;
}

void app_body_release(const struct app *app, struct app_body *b)
{
    if (b->fd < 0)
        return;
    cleanup_fd int dfd = mem_dir(app->cfg);
    if (dfd >= 0)
        unlinkat(dfd, b->name, 0);
    close(b->fd); /* and with it the lock: a file left behind is stale */
    *b = (struct app_body){.fd = -1};
}

uint64_t app_body_in_use(const struct app *app)
{
    cleanup_fd int dfd = mem_dir(app->cfg);
    if (dfd < 0)
        return 0;
    /* A cap that takes nothing: the count alone. */
    struct util_cap cap = {.max = 0, .need = 1, .weigh = mem_weigh, .make = mem_none};
    discard(util_cap_take(dfd, &cap));
    return cap.used;
}
