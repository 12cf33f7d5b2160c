/* stream.c: a worker's side of a stream (stream.h): the handover of the
 * FastCGI connection to the stream process and the relay of the response's
 * bytes to it (the protocol: stream_internal.h); where there is no stream
 * process, the slots that bound the streams held here.
 *
 * Held streams (CGI, FastCGI on stdin) take slots as serve's admission
 * does (sandbox/admit.c): a file STATE/.streams/all.N (N < max_streams) and
 * c-KEY.N (N < max_streams_per_client, KEY the client's), each flock'd for
 * as long as the stream is open, so the caps hold across every process of
 * the state directory and a process killed with SIGKILL gives its slots
 * back. A slot's file is removed when it is given back (so files do not
 * pile up per client): a taker checks after its lock that the file it
 * locked is still the one of that name, and tries again if not. */
#include "config.h"

#include "stream.h"

#include <dirent.h>
#include <errno.h>
#include <fcgiapp.h>
#include <fcntl.h>
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
#include "stream_internal.h"

#define STREAM_SLOT_TRIES 4 /* a slot's file replaced under us this often: give up on it */
#define STREAM_OUT_MAX (64u << 20) /* the relay's local buffer never holds more than one message, but a
                                    * bound is a bound */

int stream_sock_path(const struct cfg *cfg, char *buf, size_t len)
{
    int n = snprintf(buf, len, "%s/" STREAM_DIR "/" STREAM_SOCK, cfg->state_dir);
    return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

void stream_client_key(const struct http_req *req, char *out, size_t outlen)
{
    char key[300];
    const char *addr = http_param(req, "REMOTE_ADDR");
    int n = snprintf(key, sizeof key, "addr:%s", addr && *addr ? addr : "unknown");
    char hex[65];
    sha256_hex(key, n > 0 && (size_t)n < sizeof key ? (size_t)n : sizeof key - 1, hex);
    snprintf(out, outlen, "%s", hex);
}

void stream_shared_sum(const struct stream_shared *shared, struct stream_counts *out)
{
    *out = (struct stream_counts){.cut = __atomic_load_n(&shared->cut_before, __ATOMIC_RELAXED)};
    for (int k = 0; k < STREAM_COUNT_SLOTS; k++) {
        const struct stream_counts *c = &shared->slot[k];
        out->open += __atomic_load_n(&c->open, __ATOMIC_RELAXED);
        out->counted += __atomic_load_n(&c->counted, __ATOMIC_RELAXED);
        out->buffered += __atomic_load_n(&c->buffered, __ATOMIC_RELAXED);
        out->cut += __atomic_load_n(&c->cut, __ATOMIC_RELAXED);
    }
}

void stream_req_init(struct stream_req *s, const struct cfg *cfg, const struct stream_shared *shared, void *fcgx)
{
    *s = (struct stream_req){.cfg = cfg, .shared = shared && shared->on ? shared : NULL, .fcgx = fcgx, .relay = -1,
                             .held = {-1, -1}};
    dbuf_init(&s->out, STREAM_OUT_MAX);
}

/* ------------------------------------------------------------- the relay */

/* One message to the stream process: type, then n bytes of data. Waits for
 * room at most STREAM_SEND_MS (the process reads at once: a full socket is
 * a process that hangs). 0, or -EPIPE (the relay is broken: the client is
 * gone as far as the worker can tell). */
static int relay_send(struct stream_req *s, char type, const void *data, size_t n)
{
    if (s->relay_failed || s->relay < 0)
        return -EPIPE;
    struct iovec iov[2] = {{&type, 1}, {(void *)data, n}};
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = n ? 2 : 1};
    int64_t until = util_now_ms() + STREAM_SEND_MS;
    for (;;) {
        ssize_t w = sendmsg(s->relay, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w >= 0)
            return 0;
        if (errno == EINTR)
            continue;
        int64_t left = until - util_now_ms();
        if ((errno == EAGAIN || errno == EWOULDBLOCK) && left > 0) {
            struct pollfd p = {.fd = s->relay, .events = POLLOUT};
            discard(poll(&p, 1, (int)left));
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            log_msg(LOG_LVL_ERROR, "the stream process took nothing for %d ms: the stream is given up", STREAM_SEND_MS);
        s->relay_failed = true;
        return -EPIPE;
    }
}

static int relay_flush_out(struct stream_req *s)
{
    int rc = 0;
    for (size_t off = 0; rc == 0 && off < s->out.len; off += STREAM_MSG_MAX) {
        size_t n = s->out.len - off < STREAM_MSG_MAX ? s->out.len - off : STREAM_MSG_MAX;
        rc = relay_send(s, STREAM_MSG_DATA, s->out.data + off, n);
    }
    s->out.len = 0;
    return rc;
}

static ssize_t relay_read(void *ctx, char *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return 0; /* the body was read before the stream opened */
}

static int relay_write(void *ctx, const char *buf, size_t n)
{
    struct stream_req *s = ctx;
    if (s->relay_failed)
        return -EPIPE;
    if (s->out.len + n > STREAM_MSG_MAX) {
        int rc = relay_flush_out(s);
        for (; rc == 0 && n >= STREAM_MSG_MAX; buf += STREAM_MSG_MAX, n -= STREAM_MSG_MAX)
            rc = relay_send(s, STREAM_MSG_DATA, buf, STREAM_MSG_MAX);
        if (rc < 0)
            return rc;
    }
    return n ? dbuf_append(&s->out, buf, n) : 0;
}

static int relay_flush(void *ctx)
{
    return relay_flush_out(ctx);
}

/* The stream process never writes after 'A': anything to read, or a
 * hang-up, means it closed its end. */
static bool relay_gone(void *ctx)
{
    struct stream_req *s = ctx;
    if (!s->relay_failed && s->relay >= 0) {
        struct pollfd p = {.fd = s->relay, .events = POLLIN | POLLRDHUP};
        if (poll(&p, 1, 0) > 0 && p.revents)
            s->relay_failed = true;
    }
    return s->relay_failed;
}

/* -------------------------------------------------------------- handover */

/* Connects to the stream process. The socket, or -errno (-EAGAIN: its
 * backlog is full, or it is not there). */
static int relay_connect(const struct cfg *cfg)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (stream_sock_path(cfg, a.sun_path, sizeof a.sun_path) < 0)
        return -ENAMETOOLONG;
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
        int e = errno;
        close(fd);
        return e == EAGAIN || e == ENOENT || e == ECONNREFUSED ? -EAGAIN : -e;
    }
    return fd;
}

/* Waits for the stream process's answer to a hello: its byte, 0 when it
 * closed the connection (it died: its copy of the connection went with it),
 * -ETIMEDOUT. */
static int relay_reply(int fd)
{
    int64_t until = util_now_ms() + STREAM_REPLY_MS;
    for (;;) {
        int64_t left = until - util_now_ms();
        struct pollfd p = {.fd = fd, .events = POLLIN};
        int r = poll(&p, 1, left > 0 ? (int)left : 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -ETIMEDOUT;
        char c;
        ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        return n == 1 ? (unsigned char)c : 0;
    }
}

/* Swaps req's transport for the relay: every later write of the response
 * goes to the stream process. */
static void relay_attach(struct stream_req *s, struct http_io *io)
{
    io->ctx = s;
    io->read = relay_read;
    io->write = relay_write;
    io->flush = relay_flush;
    io->gone = relay_gone;
}

/* Hands req's connection to the stream process (see stream_internal.h).
 * 0 (relayed from now on), -EBUSY or -EUSERS (refused: still ours), -EAGAIN
 * (no stream process: still ours), or another -errno (still ours). */
static int hand_over(struct stream_req *s, struct http_req *req, enum stream_use use)
{
    FCGX_Request *r = s->fcgx;
    if (FCGX_FFlush(r->out) < 0)
        return -EPIPE;
    int fd = relay_connect(s->cfg);
    if (fd < 0)
        return fd;
    struct stream_hello h = {.type = STREAM_MSG_HELLO, .use = (char)use, .fcgi_id = (uint16_t)r->requestId};
    stream_client_key(req, h.client, sizeof h.client);
    snprintf(h.log_id, sizeof h.log_id, "%s", req->id);
    char cbuf[CMSG_SPACE(sizeof(int))] = {0};
    struct iovec iov = {&h, sizeof h};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &r->ipcFd, sizeof(int));
    ssize_t w;
    do
        w = sendmsg(fd, &mh, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0) {
        int e = errno;
        close(fd);
        return e == EAGAIN ? -EAGAIN : -e;
    }
    int reply = relay_reply(fd);
    if (reply == STREAM_MSG_ADMIT || reply == -ETIMEDOUT) {
        s->relay = fd;
        s->handed_over = true;
        if (reply == -ETIMEDOUT) {
            /* It may still take the connection: never write it from here
             * too. The request is given up (the client sees it end). */
            log_msg(LOG_LVL_ERROR, "the stream process did not answer in %d ms: the stream is given up",
                    STREAM_REPLY_MS);
            s->relay_failed = true;
        }
        relay_attach(s, req->io);
        return 0;
    }
    close(fd);
    if (reply == STREAM_MSG_FULL)
        return -EBUSY;
    if (reply == STREAM_MSG_CLIENT_FULL)
        return -EUSERS;
    log_msg(LOG_LVL_WARN, "the stream process closed the handover (%d): the stream stays with the worker", reply);
    return -EAGAIN;
}

/* ------------------------------------------------------------ held slots */

static int streams_dir(const struct cfg *cfg)
{
    char dir[4096];
    if ((size_t)snprintf(dir, sizeof dir, "%s/" STREAM_DIR, cfg->state_dir) >= sizeof dir)
        return -ENAMETOOLONG;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    return fd < 0 ? -errno : fd;
}

/* Takes one of the slots prefix.0 .. prefix.(n-1): its locked fd (its name
 * into name), -EAGAIN when all are held, or -errno. */
static int slot_take(int dfd, const char *prefix, uint64_t n, char *name, size_t namelen)
{
    int err = 0;
    for (uint64_t i = 0; i < n; i++) {
        snprintf(name, namelen, "%s.%llu", prefix, (unsigned long long)i);
        for (int t = 0; t < STREAM_SLOT_TRIES; t++) {
            int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
            if (fd < 0) {
                err = -errno;
                break;
            }
            if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
                close(fd);
                break; /* held: the next one */
            }
            struct stat a, b;
            /* Still the file of that name (its holder removes it when it gives
             * it back, and may have between our open and our lock)? */
            if (fstat(fd, &a) == 0 && fstatat(dfd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino &&
                a.st_dev == b.st_dev)
                return fd;
            close(fd);
        }
    }
    return err ? err : -EAGAIN;
}

static void slots_release(struct stream_req *s)
{
    cleanup_fd int dfd = -1;
    for (int i = 0; i < 2; i++) {
        if (s->held[i] < 0)
            continue;
        if (dfd < 0)
            dfd = streams_dir(s->cfg);
        if (dfd >= 0)
            unlinkat(dfd, s->held_path[i], 0); /* while it is still locked: see the top */
        close(s->held[i]);
        s->held[i] = -1;
    }
}

/* A held listen's two slots. 0, -EBUSY (max_streams), -EUSERS (the
 * client's), or -errno. One process at a time takes them
 * (STATE/.streams/.lock): a slot of max_streams held for a moment by a listen that its
 * client's cap then refuses must not make another listen see max_streams
 * reached, and be answered for the wrong cap. */
static int slots_take(struct stream_req *s, struct http_req *req)
{
    char key[65], prefix[40];
    cleanup_fd int dfd = streams_dir(s->cfg);
    if (dfd < 0)
        return dfd;
    cleanup_fd int lock = openat(dfd, ".lock", O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lock < 0)
        return -errno;
    while (flock(lock, LOCK_EX) < 0)
        if (errno != EINTR)
            return -errno;
    int fd = slot_take(dfd, "all", cfg_max_streams(s->cfg, false), s->held_path[0], sizeof s->held_path[0]);
    if (fd < 0)
        return fd == -EAGAIN ? -EBUSY : fd;
    s->held[0] = fd;
    stream_client_key(req, key, sizeof key);
    snprintf(prefix, sizeof prefix, "c-%.16s", key);
    fd = slot_take(dfd, prefix, cfg_max_streams_per_client(s->cfg, false), s->held_path[1], sizeof s->held_path[1]);
    if (fd < 0) {
        slots_release(s);
        return fd == -EAGAIN ? -EUSERS : fd;
    }
    s->held[1] = fd;
    return 0;
}

unsigned stream_held_count(const struct cfg *cfg)
{
    cleanup_fd int dfd = streams_dir(cfg);
    if (dfd < 0)
        return 0;
    cleanup_dir DIR *d = util_opendir_at(dfd);
    unsigned n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        if (strncmp(e->d_name, "all.", 4))
            continue;
        cleanup_fd int fd = openat(dfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK)
            n++;
    }
    return n;
}

/* ------------------------------------------------------------------ API */

static int refuse(struct http_resp *resp, int rc, int retry_s, int *status, const char **why)
{
    *status = rc == -EUSERS ? 429 : 503;
    *why = rc == -EBUSY    ? "too many open streams on this server (max_streams)"
           : rc == -EUSERS ? "too many open streams from this client (max_streams_per_client)"
                           : "streams are unavailable for a moment (the stream process is starting)";
    discard(http_add_header(resp, "Retry-After", "%d", retry_s));
    log_msg(LOG_LVL_WARN, "a stream refused: %s", *why);
    return rc;
}

int stream_open(struct http_req *req, struct http_resp *resp, enum stream_use use, int *status, const char **why)
{
    struct stream_req *s = req->io->stream;
    *status = 0;
    *why = NULL;
    if (!s || s->handed_over || s->held[0] >= 0)
        return 0; /* a transport without streams (a test's), or already open */
    int retry_s = (int)((s->cfg->exec.retry_after_ms + 999) / 1000);
    if (s->fcgx && s->shared && __atomic_load_n(&s->shared->pid, __ATOMIC_RELAXED) > 0) {
        int rc = hand_over(s, req, use);
        if (rc == 0)
            return 0;
        if ((rc == -EBUSY || rc == -EUSERS) && use == STREAM_USE_LISTEN)
            return refuse(resp, rc, retry_s, status, why);
        if (rc != -EAGAIN && rc != -EBUSY && rc != -EUSERS)
            log_msg(LOG_LVL_ERROR, "handing a stream over: %s", strerror(-rc));
    }
    /* It stays here: its writes are bounded by stream_stall as the stream
     * process bounds its own (what waits for the client is in the kernel's
     * buffers and the web server's, not here). */
    http_io_stall(req->io, s->cfg->stream_stall_ms);
    if (use == STREAM_USE_CALL)
        return 0; /* a run's stream: admission bounds it; it stays here */
    if (s->shared)
        /* serve without its stream process (being started again): a listen
         * would hold a worker with nothing to run. */
        return refuse(resp, -EAGAIN, 1, status, why);
    int rc = slots_take(s, req);
    if (rc == -EBUSY || rc == -EUSERS)
        return refuse(resp, rc, retry_s, status, why);
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "the slots of a held stream: %s (not counted)", strerror(-rc));
    return 0;
}

void stream_open_call(struct http_req *req, struct http_resp *resp)
{
    int status;
    const char *why;
    discard(stream_open(req, resp, STREAM_USE_CALL, &status, &why)); /* 0 for a call, always */
}

int stream_keep(struct http_req *req, const char *kind, const char *state, size_t len)
{
    struct stream_req *s = req->io->stream;
    if (!s || !s->handed_over)
        return -ENOTSUP;
    size_t kn = strlen(kind);
    if (kn >= STREAM_KIND_MAX || len > STREAM_STATE_MAX)
        return -E2BIG;
    int rc = relay_flush_out(s);
    cleanup_free char *msg = malloc(kn + 1 + len);
    if (rc == 0 && !msg)
        rc = -ENOMEM;
    if (rc == 0) {
        memcpy(msg, kind, kn + 1);
        memcpy(msg + kn + 1, state, len);
        rc = relay_send(s, STREAM_MSG_KEEP, msg, kn + 1 + len);
    }
    if (rc == 0) {
        s->kept = true;
        close(s->relay);
        s->relay = -1;
    }
    return rc;
}

bool stream_req_end(struct stream_req *s)
{
    bool handed = s->handed_over;
    if (handed && s->relay >= 0) {
        if (relay_flush_out(s) == 0)
            discard(relay_send(s, STREAM_MSG_END, NULL, 0)); /* a broken relay: the process has ended it */
        close(s->relay);
        s->relay = -1;
    }
    slots_release(s);
    dbuf_free(&s->out);
    return handed;
}
