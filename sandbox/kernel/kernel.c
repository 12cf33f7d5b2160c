/* kernel.c: a kernel's place on disk (STATE/kernels/KEY), the frames a
 * worker and a kernel's host exchange and those of the host's channel to
 * its kernel, the host's counters, the max_kernels slots, and ending a
 * kernel from any process: reset, end, eviction, and the counters for
 * /healthz (exec_kernel_reset, exec_kernel_end, exec_kernel_stats). */
#include "config.h"

#include "kernel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sha256.h"

#define KERNEL_POLL_MS 20       /* how often an ending host is looked for */
#define KERNEL_ACK_MS 5000      /* a host answers an END this soon */

int kernel_dir(const char *state_dir, const char *workspace, char *out, size_t outlen, char key[KERNEL_KEY_LEN + 1])
{
    char real[PATH_MAX];
    if (!realpath(workspace, real))
        return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
    char hex[65];
    sha256_hex(real, strlen(real), hex);
    memcpy(key, hex, KERNEL_KEY_LEN);
    key[KERNEL_KEY_LEN] = '\0';
    if ((size_t)snprintf(out, outlen, "%s/" KERNEL_DIR "/%s", state_dir, key) >= outlen)
        return -ENAMETOOLONG;
    return 0;
}

/* ------------------------------------------------------------- frames */

/* Waits until fd is readable, at most until deadline (< 0: for ever). 1,
 * 0 on time out, -errno. */
static int readable(int fd, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline < 0 ? -1 : deadline - util_now_ms();
        if (deadline >= 0 && left < 0)
            left = 0;
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, left > INT32_MAX ? INT32_MAX : (int)left);
        if (r < 0 && errno == EINTR)
            continue;
        return r < 0 ? -errno : r;
    }
}

/* Reads n bytes by deadline: 0, -EPIPE (the end came first), -ETIMEDOUT,
 * -errno. */
static int read_by(int fd, void *buf, size_t n, int64_t deadline)
{
    size_t got = 0;
    while (got < n) {
        int r = readable(fd, deadline);
        if (r < 0)
            return r;
        if (r == 0)
            return -ETIMEDOUT;
        ssize_t k = read(fd, (char *)buf + got, n - got);
        if (k < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (k < 0)
            return errno == ECONNRESET ? -EPIPE : -errno;
        if (k == 0)
            return -EPIPE;
        got += (size_t)k;
    }
    return 0;
}

static int write_iov(int fd, const void *a, size_t na, const void *b, size_t nb)
{
    int rc = util_write_all(fd, a, na);
    if (rc == 0 && nb)
        rc = util_write_all(fd, b, nb);
    return rc == -ECONNRESET ? -EPIPE : rc;
}

int kernel_send(int fd, enum kernel_msg type, const void *data, size_t len)
{
    if (len > KERNEL_FRAME_MAX)
        return -EMSGSIZE;
    unsigned char head[5];
    uint32_t n = (uint32_t)len;
    head[0] = (unsigned char)type;
    memcpy(head + 1, &n, sizeof n);
    return write_iov(fd, head, sizeof head, data, len);
}

int kernel_send_json(int fd, enum kernel_msg type, json_object *o)
{
    size_t n;
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
    return s ? kernel_send(fd, type, s, n) : -ENOMEM;
}

/* The payload of a frame whose length is known: into *data (NUL-terminated). */
static int read_payload(int fd, size_t n, size_t max, int64_t deadline, char **data)
{
    *data = NULL;
    if (n > max)
        return -EMSGSIZE;
    char *b = malloc(n + 1);
    if (!b)
        return -ENOMEM;
    int rc = read_by(fd, b, n, deadline);
    if (rc < 0) {
        free(b);
        return rc;
    }
    b[n] = '\0';
    *data = b;
    return 0;
}

int kernel_recv(int fd, int64_t timeout_ms, size_t max, char *type, char **data, size_t *len)
{
    int64_t deadline = timeout_ms < 0 ? -1 : util_now_ms() + timeout_ms;
    unsigned char head[5];
    *data = NULL;
    *len = 0;
    int rc = read_by(fd, head, sizeof head, deadline);
    if (rc < 0)
        return rc;
    uint32_t n;
    memcpy(&n, head + 1, sizeof n);
    *type = (char)head[0];
    rc = read_payload(fd, n, max, deadline, data);
    if (rc == 0)
        *len = n;
    return rc;
}

const char *kernel_network_key(const char *network)
{
    return !network || !strcmp(network, "on") ? "" : network;
}

int kernel_connect(const char *dir)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if ((size_t)snprintf(a.sun_path, sizeof a.sun_path, "%s/sock", dir) >= sizeof a.sun_path)
        return -ENAMETOOLONG;
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    if (connect(s, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(s);
        return e == ENOENT || e == ECONNREFUSED ? -ENOENT : -e;
    }
    return s;
}

int kernel_chan_send(int fd, json_object *o)
{
    size_t n;
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN, &n);
    if (!s)
        return -ENOMEM;
    if (n > UINT32_MAX)
        return -EMSGSIZE;
    unsigned char head[4] = {(unsigned char)(n >> 24), (unsigned char)(n >> 16), (unsigned char)(n >> 8),
                             (unsigned char)n};
    return write_iov(fd, head, sizeof head, s, n);
}

int kernel_chan_recv(int fd, int64_t timeout_ms, size_t max, json_object **o)
{
    int64_t deadline = timeout_ms < 0 ? -1 : util_now_ms() + timeout_ms;
    unsigned char head[4];
    *o = NULL;
    int rc = read_by(fd, head, sizeof head, deadline);
    if (rc < 0)
        return rc;
    size_t n = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
    cleanup_free char *body = NULL;
    rc = read_payload(fd, n, max, deadline, &body);
    if (rc < 0)
        return rc;
    json_tokener *tok = json_tokener_new_ex(16);
    if (!tok)
        return -ENOMEM;
    json_object *v = json_tokener_parse_ex(tok, body, (int)n);
    bool whole = json_tokener_get_error(tok) == json_tokener_success && tok->char_offset == (int)n;
    json_tokener_free(tok);
    if (!v || !whole || !json_object_is_type(v, json_type_object)) {
        json_object_put(v);
        return -EPROTO;
    }
    *o = v;
    return 0;
}

int kernel_chan_recv_fd(int fd, int64_t timeout_ms, int *pidfd)
{
    *pidfd = -1;
    int r = readable(fd, timeout_ms < 0 ? -1 : util_now_ms() + timeout_ms);
    if (r < 0)
        return r;
    if (r == 0)
        return -ETIMEDOUT;
    char b;
    struct iovec iov = {&b, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int) * 4)];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf};
    ssize_t n;
    do
        n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    if (n == 0)
        return -EPIPE;
    int got = -1;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int f;
            memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof f);
            if (got < 0)
                got = f;
            else
                close(f);
        }
    }
    if (got < 0 || b != 'h' || (m.msg_flags & MSG_CTRUNC)) {
        if (got >= 0)
            close(got);
        return -EPROTO;
    }
    *pidfd = got;
    return 0;
}

/* ---------------------------------------------------------- the state */

int kernel_state_write(int fd, const struct kernel_state *s)
{
    char buf[KERNEL_STATE_LEN];
    int n = snprintf(buf, sizeof buf, "host %d\nbusy %d\nmemory %llu\nlast %lld\ncells %llu\n", (int)s->host,
                     s->busy ? 1 : 0, (unsigned long long)s->memory, (long long)s->last_used,
                     (unsigned long long)s->cells);
    if (n < 0 || n >= (int)sizeof buf)
        return -EOVERFLOW;
    memset(buf + n, ' ', sizeof buf - 1 - (size_t)n);
    buf[sizeof buf - 1] = '\n';
    return pwrite(fd, buf, sizeof buf, 0) == (ssize_t)sizeof buf ? 0 : -EIO;
}

int kernel_state_read(const char *dir, struct kernel_state *s)
{
    char path[PATH_MAX];
    cleanup_free char *text = NULL;
    size_t n;
    memset(s, 0, sizeof *s);
    if ((size_t)snprintf(path, sizeof path, "%s/state", dir) >= sizeof path)
        return -ENAMETOOLONG;
    int rc = util_read_file_at(AT_FDCWD, path, 4096, &text, &n);
    if (rc < 0)
        return rc;
    int host = 0, busy = 0;
    unsigned long long mem = 0, cells = 0;
    long long last = 0;
    if (sscanf(text, "host %d\nbusy %d\nmemory %llu\nlast %lld\ncells %llu", &host, &busy, &mem, &last, &cells) != 5)
        return -EINVAL;
    *s = (struct kernel_state){host, busy != 0, mem, last, cells};
    return 0;
}

bool kernel_alive(const char *dir)
{
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/lock", dir) >= sizeof path)
        return false;
    cleanup_fd int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0)
        return false; /* (ours until the close: a host starting now waits on nothing but its own try) */
    return errno == EWOULDBLOCK;
}

int kernel_ended_write(const char *dir, const char *reason)
{
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    size_t n = strnlen(reason, KERNEL_REASON_MAX - 1);
    return util_write_file_atomic(dfd, "ended", reason, n, 0600);
}

void kernel_ended_take(const char *dir, char *reason, size_t n)
{
    char path[PATH_MAX];
    cleanup_free char *text = NULL;
    size_t len = 0;
    reason[0] = '\0';
    if ((size_t)snprintf(path, sizeof path, "%s/ended", dir) >= sizeof path)
        return;
    if (util_read_file_at(AT_FDCWD, path, KERNEL_REASON_MAX, &text, &len) < 0)
        return;
    unlink(path);
    /* One line of ours: nothing but printable text is kept. */
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++)
        if ((unsigned char)text[i] >= 0x20 && text[i] != 0x7f)
            reason[k++] = text[i];
    reason[k] = '\0';
}

/* --------------------------------------------------------------- slots */

static int slots_dir(const char *state_dir, char *out, size_t n)
{
    if ((size_t)snprintf(out, n, "%s/" KERNEL_SLOTS_DIR, state_dir) >= n)
        return -ENAMETOOLONG;
    if (mkdir(out, 0700) < 0 && errno != EEXIST)
        return -errno;
    return 0;
}

int kernel_slot_take(const char *state_dir, uint32_t max)
{
    char dir[PATH_MAX];
    int rc = slots_dir(state_dir, dir, sizeof dir);
    if (rc < 0)
        return rc;
    for (uint32_t i = 0; i < max; i++) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/slot.%u", dir, i);
        int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0)
            return -errno;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return fd;
        close(fd);
    }
    return -EBUSY;
}

/* Calls fn for each held slot with the kernel directory its host wrote in
 * it: the live kernels, at most max_kernels of them whatever the number of
 * workspaces. Stops at fn's nonzero return and returns it. */
static int each_live(const char *state_dir, int (*fn)(const char *dir, void *ctx), void *ctx)
{
    char sdir[PATH_MAX];
    if ((size_t)snprintf(sdir, sizeof sdir, "%s/" KERNEL_SLOTS_DIR, state_dir) >= sizeof sdir)
        return -ENAMETOOLONG;
    cleanup_fd int dfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "slot.", 5))
            continue;
        cleanup_fd int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) == 0 || errno != EWOULDBLOCK)
            continue; /* free: no kernel holds it */
        char key[KERNEL_KEY_LEN + 1] = "";
        if (pread(fd, key, KERNEL_KEY_LEN, 0) != KERNEL_KEY_LEN)
            continue; /* a host that has not written its key yet */
        char dir[PATH_MAX];
        if ((size_t)snprintf(dir, sizeof dir, "%s/" KERNEL_DIR "/%s", state_dir, key) >= sizeof dir ||
            strspn(key, "0123456789abcdef") != KERNEL_KEY_LEN)
            continue;
        int rc = fn(dir, ctx);
        if (rc)
            return rc;
    }
    return 0;
}

struct lru {
    const char *except;
    char best[PATH_MAX];
    int64_t best_used;
    uint64_t memory;
};

static int lru_visit(const char *dir, void *ctx)
{
    struct lru *l = ctx;
    struct kernel_state s;
    if (kernel_state_read(dir, &s) < 0)
        return 0;
    if (l->except && !strcmp(dir, l->except))
        return 0;
    l->memory += s.memory;
    if (!s.busy && (!l->best[0] || s.last_used < l->best_used)) {
        snprintf(l->best, sizeof l->best, "%s", dir);
        l->best_used = s.last_used;
    }
    return 0;
}

uint64_t kernel_memory_others(const char *state_dir, const char *except_dir)
{
    struct lru l = {.except = except_dir};
    discard(each_live(state_dir, lru_visit, &l)); /* what could be read */
    return l.memory;
}

int kernel_evict_lru(const char *state_dir, const char *except_dir, const char *reason, int64_t wait_ms)
{
    /* A kernel that turns busy while it is asked is passed over for the
     * next one; a few tries are enough for any race. */
    for (int tries = 0; tries < 8; tries++) {
        struct lru l = {.except = except_dir};
        int rc = each_live(state_dir, lru_visit, &l);
        if (rc < 0)
            return rc;
        if (!l.best[0])
            return 0;
        rc = kernel_end_at(l.best, reason, false, wait_ms);
        if (rc == 0)
            return 1;
        if (rc != -EBUSY)
            return rc;
    }
    return 0;
}

int kernel_end_at(const char *dir, const char *reason, bool busy_too, int64_t wait_ms)
{
    cleanup_fd int s = kernel_connect(dir);
    if (s == -ENOENT)
        return 0;
    if (s < 0)
        return s;
    json_object *o = json_object_new_object();
    if (!o)
        return -ENOMEM;
    json_object_object_add(o, "reason", json_object_new_string(reason));
    json_object_object_add(o, "busy_too", json_object_new_boolean(busy_too));
    int rc = kernel_send_json(s, KERNEL_MSG_END, o);
    json_object_put(o);
    char type = 0;
    cleanup_free char *ack = NULL;
    size_t n;
    if (rc == 0)
        rc = kernel_recv(s, KERNEL_ACK_MS + wait_ms, 4096, &type, &ack, &n);
    if (rc == -EPIPE)
        rc = 0; /* it went before it answered: gone all the same */
    else if (rc == 0 && (type != KERNEL_MSG_ACK || strstr(ack, "false")))
        return -EBUSY;
    else if (rc < 0)
        return rc;
    for (int64_t end = util_now_ms() + wait_ms; kernel_alive(dir);) {
        if (util_now_ms() > end)
            return -ETIMEDOUT;
        usleep(KERNEL_POLL_MS * 1000);
    }
    return 0;
}

/* ----------------------------------------- the executor's calls, here */

static int64_t end_wait(const struct exec_config *cfg)
{
    return cfg->kernels.grace_ms + cfg->limits.kill_grace_ms + 5000;
}

/* Ends workspace's kernel, if it has one, with reason for its next cell
 * (a running cell too); its directory goes as well with forget. */
static int end_kernel(const struct exec_config *cfg, const char *workspace, const char *reason, bool forget)
{
    char dir[PATH_MAX], key[KERNEL_KEY_LEN + 1];
    int rc = kernel_dir(cfg->state_dir, workspace, dir, sizeof dir, key);
    if (rc == -ENOENT)
        return 0;
    if (rc == 0)
        rc = kernel_end_at(dir, reason, true, end_wait(cfg));
    if (rc == 0 && forget && (rc = util_rm_rf_at(AT_FDCWD, dir)) == -ENOENT)
        rc = 0;
    return rc;
}

int exec_kernel_reset(const struct exec_config *cfg, const char *workspace)
{
    return end_kernel(cfg, workspace, "the kernel was reset", false);
}

int exec_kernel_end(const struct exec_config *cfg, const char *workspace)
{
    return end_kernel(cfg, workspace, "the workspace ended", true);
}

static int stats_visit(const char *dir, void *ctx)
{
    struct exec_kernel_stats *s = ctx;
    struct kernel_state k;
    s->live++;
    if (kernel_state_read(dir, &k) == 0) {
        s->busy += k.busy;
        s->memory += k.memory;
    }
    return 0;
}

int exec_kernel_stats(const struct exec_config *cfg, struct exec_kernel_stats *s)
{
    memset(s, 0, sizeof *s);
    s->max = cfg->kernels.max;
    s->memory_max = cfg->kernels.memory;
    int rc = each_live(cfg->state_dir, stats_visit, s);
    return rc < 0 ? rc : 0;
}
