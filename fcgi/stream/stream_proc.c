/* stream_proc.c: the stream process of `serve` (stream.h; what workers say
 * to it: stream_internal.h). One process, one epoll loop, every open
 * stream of the server: it writes each stream's FastCGI records itself
 * (FCGI_STDOUT for the response, FCGI_END_REQUEST at its end) on the
 * connection a worker handed it, from the bytes the worker relays (a call's
 * events, until its run ends) or that a kind of its own makes (a listen's
 * notifications, mcp_listen.c), with a keepalive comment on a kind's
 * stream after STREAM_KEEPALIVE_MS of silence.
 *
 * Nothing waits for a client: every socket is non-blocking, a stream's
 * bytes wait in its own buffer, and a client that does not take them is cut
 * (the connection closed: nginx ends the client's response) when more than
 * stream_buffer_bytes wait for it or it took nothing for stream_stall; its
 * worker sees that as a client gone, as it would on the connection itself
 * (a legacy call's run goes on and its result is kept; a 2026-07-28 call's
 * run is cancelled). nginx speaks one request per FastCGI connection here
 * (no fastcgi_keep_conn), so a connection is one request, and it is closed
 * after FCGI_END_REQUEST whatever the request's flags said.
 *
 * Stream counts for max_streams and max_streams_per_client are this
 * process's own (it admits streams one at a time, so a burst cannot pass
 * them); it also keeps descriptors in reserve so that it can always answer. */
#include "config.h"

#include "stream.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stream_internal.h"

#define PROC_SWEEP_MS 1000        /* stalls, keepalives, lingering closes, late hellos */
#define PROC_LINGER_MS 5000       /* after FCGI_END_REQUEST, the peer's close is awaited this long */
#define PROC_HELLO_MS 2000        /* a connection has this long to say hello */
#define PROC_FD_RESERVE 64        /* descriptors kept free: the process can always accept and answer */
#define PROC_EVENTS 256
#define PROC_RECV_MAX (STREAM_STATE_MAX + STREAM_KIND_MAX + 1) /* the largest message */
#define PROC_MSGS_PER_WAKE 64     /* messages of one relay per wake-up (the others get their turn) */
#define PROC_STOP_FLUSH_MS 2000   /* SIGTERM: the ends of the streams get this long to go out */
#define FCGI_RECORD_MAX 65528     /* content bytes of one record (a multiple of 8) */

enum ev_type { EV_LISTEN, EV_SERVER, EV_PENDING, EV_CLIENT, EV_RELAY };

struct ev {
    enum ev_type type;
    int fd;
    void *owner;  /* struct stream or struct pending */
};

struct pending {
    struct ev ev;
    int64_t until;
    struct pending *prev, *next;
};

struct stream {
    struct ev client, relay;   /* the FastCGI connection; the worker's (fd -1 once it is done) */
    uint16_t fcgi_id;
    bool counted;              /* a listen: max_streams counts it */
    char key[65];              /* the client's, for max_streams_per_client */
    char log_id[13];
    char *buf;                 /* FastCGI records waiting for the client: buf[off..len) */
    size_t off, len, cap;
    bool want_out;             /* EPOLLOUT is in its events */
    int64_t last_progress_ms;  /* the client last took bytes (or had none waiting) */
    int64_t last_write_ms;     /* bytes last queued (a kind's keepalive) */
    bool ending;               /* FCGI_END_REQUEST is queued */
    bool closing;              /* ... and written: waiting for the peer's close */
    int64_t close_by;
    bool dead;                 /* to be closed at the end of this turn */
    const char *why;           /* why it is closed (a log line), or NULL */
    struct kind_rt *kind;      /* carried by a kind, or NULL */
    void *data;                /* the kind's */
    struct http_io io;         /* for the kind */
    struct stream *prev, *next, *next_dead;
};

struct kind_rt {
    const struct stream_kind *k;
    void *ctx;
    int64_t next_tick;
};

struct client_count {
    char key[65];
    unsigned n;
};

struct proc {
    const struct cfg *cfg;
    struct stream_counts *shared;
    int ep, lfd, spare_fd;
    struct kind_rt *kinds;
    size_t nkinds;
    struct stream *streams;    /* every stream */
    struct stream *dead;       /* closed at the end of the turn */
    struct pending *pending;
    struct client_count *clients;
    size_t nclients, cap_clients;
    unsigned open, counted;
    uint64_t max_counted, max_per_client, buffer_max;
    int64_t stall_ms;
    long fds, fd_limit;        /* descriptors held, and how many may be */
    char *rbuf;                /* one message */
};

static volatile sig_atomic_t proc_term, proc_hup;

static void on_term(int sig)
{
    (void)sig;
    proc_term = 1;
}

static void on_hup(int sig)
{
    (void)sig;
    proc_hup = 1;
}

/* ------------------------------------------------------------ the clients */

static struct client_count *client_find(struct proc *p, const char *key)
{
    for (size_t i = 0; i < p->nclients; i++)
        if (!strcmp(p->clients[i].key, key))
            return &p->clients[i];
    return NULL;
}

static int client_add(struct proc *p, const char *key)
{
    struct client_count *c = client_find(p, key);
    if (c) {
        c->n++;
        return 0;
    }
    if (UTIL_GROW(p->clients, p->nclients, p->cap_clients, 16) < 0)
        return -ENOMEM;
    c = &p->clients[p->nclients++];
    snprintf(c->key, sizeof c->key, "%s", key);
    c->n = 1;
    return 0;
}

static void client_drop(struct proc *p, const char *key)
{
    struct client_count *c = client_find(p, key);
    if (c && --c->n == 0)
        *c = p->clients[--p->nclients];
}

/* ---------------------------------------------------------- the buffers */

static void set_out(struct proc *p, struct stream *s, bool want)
{
    if (s->want_out == want || s->client.fd < 0)
        return;
    struct epoll_event e = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0), .data.ptr = &s->client};
    if (epoll_ctl(p->ep, EPOLL_CTL_MOD, s->client.fd, &e) == 0)
        s->want_out = want;
}

static void kill_stream(struct stream *s, const char *why, struct proc *p)
{
    if (s->dead)
        return;
    s->dead = true;
    s->why = why;
    s->next_dead = p->dead;
    p->dead = s;
}

/* Writes what waits for the client, as far as it takes it. */
static void flush_client(struct proc *p, struct stream *s)
{
    while (!s->dead && s->off < s->len) {
        ssize_t w = write(s->client.fd, s->buf + s->off, s->len - s->off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            set_out(p, s, true);
            return;
        }
        if (w <= 0) {
            kill_stream(s, NULL, p); /* the client (nginx) is gone */
            return;
        }
        s->off += (size_t)w;
        __atomic_sub_fetch(&p->shared->buffered, (uint64_t)w, __ATOMIC_RELAXED);
        s->last_progress_ms = util_now_ms();
    }
    if (s->dead)
        return;
    /* Nothing waits: the buffer goes (an idle stream costs its struct). */
    s->off = s->len = 0;
    free(s->buf);
    s->buf = NULL;
    s->cap = 0;
    set_out(p, s, false);
    if (s->ending && !s->closing) {
        shutdown(s->client.fd, SHUT_WR);
        s->closing = true;
        s->close_by = util_now_ms() + PROC_LINGER_MS;
    }
}

static int queue(struct proc *p, struct stream *s, const void *data, size_t n)
{
    if (s->len + n > s->cap) {
        if (s->off) {
            memmove(s->buf, s->buf + s->off, s->len - s->off);
            s->len -= s->off;
            s->off = 0;
        }
        if (s->len + n > s->cap) {
            size_t cap = s->cap ? s->cap : 4096;
            while (cap < s->len + n)
                cap *= 2;
            char *b = realloc(s->buf, cap);
            if (!b)
                return -ENOMEM;
            s->buf = b;
            s->cap = cap;
        }
    }
    if (s->off == s->len)
        s->last_progress_ms = util_now_ms(); /* the stall clock starts with the first byte waiting */
    memcpy(s->buf + s->len, data, n);
    s->len += n;
    __atomic_add_fetch(&p->shared->buffered, (uint64_t)n, __ATOMIC_RELAXED);
    return 0;
}

static void record_header(unsigned char h[8], int type, uint16_t id, size_t len, size_t pad)
{
    h[0] = 1; /* FCGI_VERSION_1 */
    h[1] = (unsigned char)type;
    h[2] = (unsigned char)(id >> 8);
    h[3] = (unsigned char)id;
    h[4] = (unsigned char)(len >> 8);
    h[5] = (unsigned char)len;
    h[6] = (unsigned char)pad;
    h[7] = 0;
}

/* The response's next bytes, as FCGI_STDOUT records (padded to 8, as
 * libfcgi does). A client with more than stream_buffer_bytes waiting is
 * cut. */
static void send_stdout(struct proc *p, struct stream *s, const char *data, size_t n)
{
    static const char zeros[8];
    if (s->dead || s->ending)
        return;
    bool was_empty = s->off == s->len;
    while (n > 0) {
        size_t c = n > FCGI_RECORD_MAX ? FCGI_RECORD_MAX : n, pad = (8 - c % 8) % 8;
        unsigned char h[8];
        record_header(h, 6 /* FCGI_STDOUT */, s->fcgi_id, c, pad);
        if (queue(p, s, h, 8) < 0 || queue(p, s, data, c) < 0 || queue(p, s, zeros, pad) < 0) {
            kill_stream(s, "out of memory", p);
            return;
        }
        data += c;
        n -= c;
    }
    s->last_write_ms = util_now_ms();
    if (s->len - s->off > p->buffer_max) {
        kill_stream(s, "more than stream_buffer_bytes wait for the client", p);
        return;
    }
    if (was_empty)
        flush_client(p, s);
}

/* The response's end: FCGI_STDOUT's empty record and FCGI_END_REQUEST
 * (status 0, FCGI_REQUEST_COMPLETE); the connection closes once they are
 * out. */
static void send_end(struct proc *p, struct stream *s)
{
    if (s->dead || s->ending)
        return;
    unsigned char r[24] = {0};
    record_header(r, 6 /* FCGI_STDOUT */, s->fcgi_id, 0, 0);
    record_header(r + 8, 3 /* FCGI_END_REQUEST */, s->fcgi_id, 8, 0);
    bool was_empty = s->off == s->len;
    if (queue(p, s, r, sizeof r) < 0) {
        kill_stream(s, "out of memory", p);
        return;
    }
    s->ending = true;
    if (was_empty)
        flush_client(p, s);
}

/* ------------------------------------------------------------- the kinds */

static ssize_t kind_read(void *ctx, char *buf, size_t n)
{
    (void)ctx;
    (void)buf;
    (void)n;
    return 0;
}

static struct proc *the_proc; /* one per process: the kinds' io reaches it through here */

static int kind_write(void *ctx, const char *buf, size_t n)
{
    struct stream *s = ctx;
    if (s->dead || s->ending)
        return -EPIPE;
    send_stdout(the_proc, s, buf, n);
    return s->dead ? -EPIPE : 0;
}

static int kind_flush(void *ctx)
{
    struct stream *s = ctx;
    return s->dead ? -EPIPE : 0; /* written as it comes */
}

static bool kind_gone(void *ctx)
{
    struct stream *s = ctx;
    return s->dead || s->ending;
}

struct http_io *stream_io(struct stream *s)
{
    return &s->io;
}

void stream_end(struct stream *s)
{
    s->kind = NULL;
    s->data = NULL;
    send_end(the_proc, s);
}

void stream_set_data(struct stream *s, void *data)
{
    s->data = data;
}

void *stream_data(const struct stream *s)
{
    return s->data;
}

static void keep_as(struct proc *p, struct stream *s, const char *msg, size_t n)
{
    size_t kn = strnlen(msg, n < STREAM_KIND_MAX ? n : STREAM_KIND_MAX);
    struct kind_rt *k = NULL;
    for (size_t i = 0; kn < n && i < p->nkinds; i++)
        if (strlen(p->kinds[i].k->name) == kn && !memcmp(p->kinds[i].k->name, msg, kn))
            k = &p->kinds[i];
    if (!k) {
        log_msg(LOG_LVL_ERROR, "a stream kept as an unknown kind: ended");
        send_end(p, s);
        return;
    }
    s->io = (struct http_io){s, kind_read, kind_write, kind_flush, NULL, kind_gone, NULL};
    s->kind = k;
    s->last_write_ms = util_now_ms();
    int rc = k->k->open(k->ctx, s, msg + kn + 1, n - kn - 1);
    if (rc < 0) {
        s->kind = NULL;
        log_msg(LOG_LVL_ERROR, "a %s stream could not be carried on: %s", k->k->name, strerror(-rc));
        send_end(p, s);
    }
}

/* ------------------------------------------------------------ the streams */

static void fd_close(struct proc *p, struct ev *e)
{
    if (e->fd < 0)
        return;
    epoll_ctl(p->ep, EPOLL_CTL_DEL, e->fd, NULL);
    close(e->fd);
    e->fd = -1;
    p->fds--;
}

static void close_relay(struct proc *p, struct stream *s)
{
    fd_close(p, &s->relay);
}

static void free_stream(struct proc *p, struct stream *s)
{
    log_set_id(s->log_id);
    if (s->why) {
        log_msg(LOG_LVL_WARN, "stream closed: %s", s->why);
        __atomic_add_fetch(&p->shared->cut, 1, __ATOMIC_RELAXED);
    }
    if (s->kind)
        s->kind->k->gone(s->kind->ctx, s);
    close_relay(p, s);
    fd_close(p, &s->client);
    __atomic_sub_fetch(&p->shared->buffered, (uint64_t)(s->len - s->off), __ATOMIC_RELAXED);
    if (s->counted) {
        p->counted--;
        __atomic_sub_fetch(&p->shared->counted, 1, __ATOMIC_RELAXED);
        client_drop(p, s->key);
    }
    p->open--;
    __atomic_sub_fetch(&p->shared->open, 1, __ATOMIC_RELAXED);
    if (s->prev)
        s->prev->next = s->next;
    else
        p->streams = s->next;
    if (s->next)
        s->next->prev = s->prev;
    free(s->buf);
    free(s);
    log_set_id(NULL);
}

static void bury(struct proc *p)
{
    while (p->dead) {
        struct stream *s = p->dead;
        p->dead = s->next_dead;
        free_stream(p, s);
    }
}

static int ep_add(struct proc *p, struct ev *e, uint32_t events)
{
    struct epoll_event ee = {.events = events, .data.ptr = e};
    return epoll_ctl(p->ep, EPOLL_CTL_ADD, e->fd, &ee) < 0 ? -errno : 0;
}

/* What the hello asks: the answer, and the stream made when it is 'A'. */
static char admit(struct proc *p, const struct stream_hello *h, int cfd, int rfd, struct stream **out)
{
    bool counted = h->use == STREAM_USE_LISTEN;
    *out = NULL;
    if (p->fds + 2 + PROC_FD_RESERVE > p->fd_limit)
        return STREAM_MSG_FULL;
    if (counted && p->counted >= p->max_counted)
        return STREAM_MSG_FULL;
    struct client_count *c = counted ? client_find(p, h->client) : NULL;
    if (c && c->n >= p->max_per_client)
        return STREAM_MSG_CLIENT_FULL;
    struct stream *s = calloc(1, sizeof *s);
    if (!s || (counted && client_add(p, h->client) < 0)) {
        free(s);
        return STREAM_MSG_FULL;
    }
    s->client = (struct ev){EV_CLIENT, cfd, s};
    s->relay = (struct ev){EV_RELAY, rfd, s};
    s->fcgi_id = h->fcgi_id;
    s->counted = counted;
    memcpy(s->key, h->client, sizeof s->key);
    memcpy(s->log_id, h->log_id, sizeof s->log_id);
    s->key[sizeof s->key - 1] = s->log_id[sizeof s->log_id - 1] = '\0';
    s->last_progress_ms = s->last_write_ms = util_now_ms();
    *out = s;
    return STREAM_MSG_ADMIT;
}

static void pending_unlink(struct proc *p, struct pending *pd)
{
    epoll_ctl(p->ep, EPOLL_CTL_DEL, pd->ev.fd, NULL);
    if (pd->prev)
        pd->prev->next = pd->next;
    else
        p->pending = pd->next;
    if (pd->next)
        pd->next->prev = pd->prev;
    free(pd);
}

/* A connection that never said hello: closed (its worker keeps its
 * request: nothing of it came here). */
static void pending_drop(struct proc *p, struct pending *pd)
{
    close(pd->ev.fd);
    pending_unlink(p, pd);
    p->fds--;
}

/* The FastCGI connection that came with a hello (SCM_RIGHTS), or -1; any
 * other descriptor that came is closed. */
static int hello_fd(struct msghdr *mh)
{
    int cfd = -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
            continue;
        size_t k = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
            if (cfd < 0)
                cfd = fd;
            else
                close(fd);
        }
    }
    return cfd;
}

/* A stream made of an admitted hello joins the loop: 0, or -errno (then
 * nothing of it is kept). */
static int stream_join(struct proc *p, struct stream *s)
{
    if (util_set_nonblock(s->client.fd) < 0 || ep_add(p, &s->client, EPOLLIN | EPOLLRDHUP) < 0)
        return -EIO;
    if (ep_add(p, &s->relay, EPOLLIN | EPOLLRDHUP) < 0) {
        epoll_ctl(p->ep, EPOLL_CTL_DEL, s->client.fd, NULL);
        return -EIO;
    }
    p->fds++; /* the client's; the relay was counted as the pending connection */
    s->next = p->streams;
    if (p->streams)
        p->streams->prev = s;
    p->streams = s;
    p->open++;
    __atomic_add_fetch(&p->shared->open, 1, __ATOMIC_RELAXED);
    if (s->counted) {
        p->counted++;
        __atomic_add_fetch(&p->shared->counted, 1, __ATOMIC_RELAXED);
    }
    return 0;
}

/* A connection's hello: its FastCGI connection admitted as a stream, or
 * refused (closed unwritten). The pending connection is consumed. */
static void hello(struct proc *p, struct pending *pd)
{
    struct stream_hello h;
    char cbuf[CMSG_SPACE(sizeof(int) * 4)];
    struct iovec iov = {&h, sizeof h};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t n = recvmsg(pd->ev.fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    int cfd = n > 0 ? hello_fd(&mh) : -1, rfd = pd->ev.fd;
    pending_unlink(p, pd);
    struct stream *s = NULL;
    char answer = STREAM_MSG_FULL;
    if (n == (ssize_t)sizeof h && h.type == STREAM_MSG_HELLO && cfd >= 0 && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
        answer = admit(p, &h, cfd, rfd, &s);
    else if (n != 0)
        log_msg(LOG_LVL_ERROR, "a malformed hello on the stream socket: dropped");
    if (s && stream_join(p, s) < 0) {
        if (s->counted)
            client_drop(p, s->key);
        free(s);
        s = NULL;
        answer = STREAM_MSG_FULL;
    }
    if (s) {
        /* Ours now. A worker that died before it read this: its relay's
         * end of file ends the request. */
        discard(send(rfd, &answer, 1, MSG_NOSIGNAL));
        return;
    }
    if (cfd >= 0)
        close(cfd); /* before the answer: the worker's copy is the only one when it reads it */
    if (n > 0)
        discard(send(rfd, &answer, 1, MSG_NOSIGNAL));
    close(rfd);
    p->fds--;
}

/* The worker's messages (stream_internal.h), as many as have come. */
static void relay_in(struct proc *p, struct stream *s)
{
    for (int i = 0; i < PROC_MSGS_PER_WAKE && !s->dead && s->relay.fd >= 0; i++) {
        ssize_t n = recv(s->relay.fd, p->rbuf, PROC_RECV_MAX, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0 || n > (ssize_t)PROC_RECV_MAX) {
            if (n != 0)
                log_msg(LOG_LVL_ERROR, "a broken message from a worker: its stream ends");
            close_relay(p, s); /* the worker died (or broke the protocol): the request ends here */
            send_end(p, s);
            return;
        }
        switch (p->rbuf[0]) {
        case STREAM_MSG_DATA:
            send_stdout(p, s, p->rbuf + 1, (size_t)n - 1);
            break;
        case STREAM_MSG_END:
            close_relay(p, s);
            send_end(p, s);
            return;
        case STREAM_MSG_KEEP:
            close_relay(p, s);
            keep_as(p, s, p->rbuf + 1, (size_t)n - 1);
            return;
        default:
            log_msg(LOG_LVL_ERROR, "an unknown message from a worker: its stream ends");
            close_relay(p, s);
            send_end(p, s);
            return;
        }
    }
}

/* The client's side: nginx sends nothing after the request, so anything
 * but data (dropped) is its close. */
static void client_in(struct proc *p, struct stream *s, uint32_t events)
{
    char junk[4096];
    for (;;) {
        ssize_t n = read(s->client.fd, junk, sizeof junk);
        if (n > 0)
            continue;
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !(events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            return;
        kill_stream(s, NULL, p);
        return;
    }
}

static void accept_all(struct proc *p)
{
    for (;;) {
        int fd = accept4(p->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR)
            continue;
        if (fd < 0 && (errno == EMFILE || errno == ENFILE) && p->spare_fd >= 0) {
            /* No descriptor for it: take it with the spare and close it; its
             * worker sees the close and keeps its request. */
            close(p->spare_fd);
            int f = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
            if (f >= 0)
                close(f);
            p->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
            log_msg(LOG_LVL_ERROR, "the stream process is out of descriptors: a handover refused");
            continue;
        }
        if (fd < 0)
            return;
        struct ucred cr;
        socklen_t cl = sizeof cr;
        struct pending *pd = NULL;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 || (cr.uid != geteuid() && cr.uid != 0) ||
            !(pd = calloc(1, sizeof *pd))) {
            close(fd);
            continue;
        }
        pd->ev = (struct ev){EV_PENDING, fd, pd};
        pd->until = util_now_ms() + PROC_HELLO_MS;
        if (ep_add(p, &pd->ev, EPOLLIN | EPOLLRDHUP) < 0) {
            close(fd);
            free(pd);
            continue;
        }
        p->fds++;
        pd->next = p->pending;
        if (p->pending)
            p->pending->prev = pd;
        p->pending = pd;
    }
}

/* Once a second: cut the stalled, keep the kinds' streams alive, close
 * what lingered long enough, drop hellos that never came. */
static void sweep(struct proc *p, int64_t now)
{
    for (struct stream *s = p->streams; s; s = s->next) {
        if (s->dead)
            continue;
        if (s->closing) {
            if (now >= s->close_by)
                kill_stream(s, NULL, p);
            continue;
        }
        if (s->off < s->len && now - s->last_progress_ms >= p->stall_ms) {
            kill_stream(s, "the client took nothing for stream_stall", p);
            continue;
        }
        if (s->kind && !s->ending && now - s->last_write_ms >= STREAM_KEEPALIVE_MS)
            send_stdout(p, s, ": keepalive\n\n", 13);
    }
    for (struct pending *pd = p->pending, *next; pd; pd = next) {
        next = pd->next;
        if (now >= pd->until)
            pending_drop(p, pd);
    }
}

/* ------------------------------------------------------------- the loop */

/* Raises the descriptor limit as far as the process may, and says what it
 * is. */
static long fd_limit(uint64_t want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 1024;
    if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want) {
        struct rlimit more = {want, want}; /* root may raise the hard limit */
        if (setrlimit(RLIMIT_NOFILE, &more) == 0)
            rl = more;
    }
    rl.rlim_cur = rl.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
        getrlimit(RLIMIT_NOFILE, &rl);
    return rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > (1u << 24) ? 1 << 24 : (long)rl.rlim_cur;
}

static int proc_init(struct proc *p, const struct cfg *cfg, int lfd, int server_fd, const struct stream_kind *const *kinds,
                     size_t n, struct stream_counts *shared)
{
    *p = (struct proc){.cfg = cfg, .shared = shared, .lfd = lfd, .spare_fd = -1};
    p->max_counted = cfg_max_streams(cfg, true);
    p->max_per_client = cfg_max_streams_per_client(cfg, true);
    p->buffer_max = cfg->stream_buffer_bytes;
    p->stall_ms = cfg->stream_stall_ms;
    p->fd_limit = fd_limit(p->max_counted * 2 + 1024);
    if ((uint64_t)p->fd_limit < p->max_counted + PROC_FD_RESERVE + 16)
        log_msg(LOG_LVL_WARN, "the stream process may hold %ld descriptors: fewer than max_streams = %llu streams fit",
                p->fd_limit, (unsigned long long)p->max_counted);
    p->fds = 16; /* stdio, the log, the listening socket, epoll, the spare: a margin */
    p->rbuf = malloc(PROC_RECV_MAX);
    p->kinds = calloc(n ? n : 1, sizeof *p->kinds);
    p->ep = epoll_create1(EPOLL_CLOEXEC);
    p->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (!p->rbuf || !p->kinds || p->ep < 0 || util_set_nonblock(lfd) < 0) /* accept4 must not wait */
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        p->kinds[i] = (struct kind_rt){kinds[i], kinds[i]->init(cfg), util_now_ms()};
        p->nkinds++;
    }
    static struct ev lev, sev;
    lev = (struct ev){EV_LISTEN, lfd, NULL};
    sev = (struct ev){EV_SERVER, server_fd, NULL};
    if (server_fd >= 0 && ep_add(p, &sev, EPOLLIN) < 0)
        return -errno;
    return ep_add(p, &lev, EPOLLIN);
}

static void dispatch(struct proc *p, struct epoll_event *e)
{
    struct ev *ev = e->data.ptr;
    switch (ev->type) {
    case EV_LISTEN:
        accept_all(p);
        break;
    case EV_SERVER:
        proc_term = 1; /* the server is gone: so are we */
        break;
    case EV_PENDING:
        hello(p, ev->owner);
        break;
    case EV_CLIENT: {
        struct stream *s = ev->owner;
        if (e->events & EPOLLOUT)
            flush_client(p, s);
        if (!s->dead && (e->events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
            client_in(p, s, e->events);
        break;
    }
    case EV_RELAY:
        relay_in(p, ev->owner);
        break;
    }
}

/* SIGTERM: every stream ends (a kind's is told it is gone), and what is
 * queued gets PROC_STOP_FLUSH_MS to go out. */
static void stop_all(struct proc *p)
{
    for (struct stream *s = p->streams; s; s = s->next) {
        if (s->kind) {
            s->kind->k->gone(s->kind->ctx, s);
            s->kind = NULL;
        }
        close_relay(p, s);
        send_end(p, s);
    }
    int64_t until = util_now_ms() + PROC_STOP_FLUSH_MS;
    struct epoll_event evs[PROC_EVENTS];
    while (p->streams && util_now_ms() < until) {
        bool busy = false;
        for (struct stream *s = p->streams; s; s = s->next)
            busy |= !s->dead && !s->closing;
        if (!busy)
            break;
        int n = epoll_wait(p->ep, evs, PROC_EVENTS, 100);
        for (int i = 0; i < n; i++)
            if (((struct ev *)evs[i].data.ptr)->type == EV_CLIENT)
                dispatch(p, &evs[i]);
        bury(p);
    }
    while (p->streams) {
        kill_stream(p->streams, NULL, p);
        bury(p);
    }
}

int stream_proc_main(const struct cfg *cfg, int lfd, int server_fd, const struct stream_kind *const *kinds, size_t n,
                     struct stream_counts *shared)
{
    struct proc p;
    struct sigaction sa = {.sa_handler = on_term};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &(struct sigaction){.sa_handler = SIG_IGN}, NULL);
    sa.sa_handler = on_hup;
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (proc_init(&p, cfg, lfd, server_fd, kinds, n, shared) < 0) {
        log_msg(LOG_LVL_ERROR, "the stream process cannot start");
        return 1;
    }
    the_proc = &p;
    log_msg(LOG_LVL_INFO, "the stream process carries streams (max_streams %llu, per client %llu, %ld descriptors)",
            (unsigned long long)p.max_counted, (unsigned long long)p.max_per_client, p.fd_limit);
    struct epoll_event evs[PROC_EVENTS];
    int64_t next_sweep = util_now_ms() + PROC_SWEEP_MS;
    bool draining = false;
    while (!proc_term) {
        int64_t now = util_now_ms(), wake = next_sweep;
        for (size_t i = 0; i < p.nkinds; i++)
            if (p.kinds[i].next_tick < wake)
                wake = p.kinds[i].next_tick;
        int nev = epoll_wait(p.ep, evs, PROC_EVENTS, wake > now ? (int)(wake - now) : 0);
        for (int i = 0; i < nev; i++)
            dispatch(&p, &evs[i]);
        now = util_now_ms();
        for (size_t i = 0; i < p.nkinds; i++) {
            if (now >= p.kinds[i].next_tick) {
                p.kinds[i].k->tick(p.kinds[i].ctx, now);
                p.kinds[i].next_tick = now + p.kinds[i].k->tick_ms;
            }
        }
        if (now >= next_sweep) {
            sweep(&p, now);
            next_sweep = now + PROC_SWEEP_MS;
        }
        bury(&p);
        if (proc_hup && !draining) {
            /* A new configuration: a new stream process takes the new
             * streams; this one carries its own to their end. */
            draining = true;
            epoll_ctl(p.ep, EPOLL_CTL_DEL, p.lfd, NULL);
            close(p.lfd);
            log_msg(LOG_LVL_INFO, "the stream process hands new streams to its successor; %u open", p.open);
        }
        if (draining && !p.streams && !p.pending)
            return 0;
    }
    stop_all(&p);
    return 0;
}
