/* net_proxy.c: the proxy and resolver of one run whose network is on: a
 * process of its own in the server's network namespace that holds the
 * listening sockets the jail made in the run's (jail_net.c), and for each
 * connection the script opens reads the address it asked for
 * (SO_ORIGINAL_DST), checks that address against the policy
 * (net_policy.c), connects to it from here and relays, counting the bytes
 * against net_bytes and the connections against net_connections. A refused
 * connection is reset at once, so the script's library fails fast; each is
 * recorded. A thread answers the DNS queries (net_dns.c) meanwhile, since
 * the host's resolver blocks.
 *
 * Theory of operation: one epoll loop; a connection is two sockets and a
 * pipe each way, the bytes spliced through it (the kernel moves them: no
 * copy through this process); a pipe is filled only when it is empty and
 * emptied before the next read, so a slow side holds the other back
 * (nothing grows with a fast one). The run's end closes ctl: the proxy closes what
 * is left, writes the record on rec and exits; the run's process reads it
 * (net_proxy_stop). A byte on ctl asks for the record so far instead
 * (net_proxy_take: a kernel's, after each cell), which starts anew. The proxy dies with the run's process (its parent). */
#include "config.h"

#include "net.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* linux/netfilter_ipv4.h and ip6_tables.h, which clash with netinet/in.h:
 * the address a redirected connection was sent to. */
#ifndef SO_ORIGINAL_DST
#define SO_ORIGINAL_DST 80
#endif
#ifndef IP6T_SO_ORIGINAL_DST
#define IP6T_SO_ORIGINAL_DST 80
#endif

#define NET_BUF (256 * 1024)       /* bytes in flight each way of a connection (its pipe's size) */
#define NET_EVENTS 64
#define NET_STOP_WAIT_MS 3000      /* the record must come back within this */
#define NET_DNS_POLL_MS 100        /* the resolver looks for the end this often */

enum { TAG_LISTEN, TAG_CTL, TAG_CLIENT, TAG_UPSTREAM };

/* One direction of a connection: a pipe the bytes are spliced through
 * (the kernel moves them; no copy through the proxy's memory). */
struct pbuf {
    int p[2];    /* the pipe, -1 -1 when not made */
    size_t len;  /* bytes in it */
    bool eof;    /* the source said it has no more */
    bool shut;   /* and the sink was told (shutdown SHUT_WR) */
};

struct conn {
    bool used;
    bool connecting;
    int cfd, ufd;
    struct pbuf c2u, u2c;
    struct ipaddr dst;
    char *name;            /* the allowed name, or NULL */
    uint64_t in, out;
    /* What a take of the record (record_take) counted of it already: it
     * is counted in the first record it is in, its bytes in the record of
     * when they went. */
    uint64_t taken_in, taken_out;
    bool taken;
};

struct proxy {
    struct net_policy *pol;
    struct net_record rec;
    int fds[NET_FD_N];
    int ctl, ep, rec_w;
    struct conn *conns;
    size_t n_conns;
    uint64_t max_bytes, max_conns, bytes, made;
    atomic_bool stopping;
};

static uint64_t tag(unsigned kind, size_t i)
{
    return (uint64_t)i << 2 | kind;
}

/* Closes fd with a reset: the other end gets ECONNRESET at once. */
static void rst_close(int fd)
{
    struct linger l = {.l_onoff = 1, .l_linger = 0};
    (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    close(fd);
}

static void refuse(struct proxy *P, int cfd, const char *name, const struct ipaddr *a, enum net_refusal_reason why,
                   const char *detail)
{
    rst_close(cfd);
    pthread_mutex_lock(&P->pol->lock);
    discard(net__record_refuse(&P->rec, name, a, why, detail));
    pthread_mutex_unlock(&P->pol->lock);
}

static void pbuf_close(struct pbuf *b)
{
    for (int i = 0; i < 2; i++)
        if (b->p[i] >= 0)
            close(b->p[i]);
    b->p[0] = b->p[1] = -1;
}

static int pbuf_open(struct pbuf *b)
{
    if (pipe2(b->p, O_CLOEXEC | O_NONBLOCK) < 0) {
        b->p[0] = b->p[1] = -1;
        return -errno;
    }
    (void)fcntl(b->p[1], F_SETPIPE_SZ, NET_BUF); /* (a smaller pipe only slows it) */
    return 0;
}

/* What c did since the last take into the record (under the lock). */
static void conn_record(struct proxy *P, struct conn *c)
{
    if (c->taken && c->in == c->taken_in && c->out == c->taken_out)
        return;
    discard(net__record_reach(&P->rec, c->name, &c->dst, c->in - c->taken_in, c->out - c->taken_out, !c->taken));
    c->taken_in = c->in;
    c->taken_out = c->out;
    c->taken = true;
}

static void conn_close(struct proxy *P, struct conn *c, bool reset)
{
    if (c->cfd >= 0)
        reset ? rst_close(c->cfd) : (void)close(c->cfd);
    if (c->ufd >= 0)
        reset ? rst_close(c->ufd) : (void)close(c->ufd);
    pthread_mutex_lock(&P->pol->lock);
    conn_record(P, c);
    pthread_mutex_unlock(&P->pol->lock);
    free(c->name);
    pbuf_close(&c->c2u);
    pbuf_close(&c->u2c);
    memset(c, 0, sizeof *c);
    c->cfd = c->ufd = -1;
}

/* The limit of bytes was reached: every connection is cut, new ones are
 * refused. */
static void cut_all(struct proxy *P, const char *limit)
{
    if (!P->rec.limit)
        P->rec.limit = limit;
    for (size_t i = 0; i < P->n_conns; i++)
        if (P->conns[i].used)
            conn_close(P, &P->conns[i], true);
}

static void interest(struct proxy *P, struct conn *c, size_t i)
{
    struct epoll_event ec = {.data.u64 = tag(TAG_CLIENT, i)}, eu = {.data.u64 = tag(TAG_UPSTREAM, i)};
    if (!c->connecting && !c->c2u.eof && c->c2u.len == 0)
        ec.events |= EPOLLIN;
    if (c->u2c.len)
        ec.events |= EPOLLOUT;
    if (c->connecting || c->c2u.len)
        eu.events |= EPOLLOUT;
    if (!c->connecting && !c->u2c.eof && c->u2c.len == 0)
        eu.events |= EPOLLIN;
    epoll_ctl(P->ep, EPOLL_CTL_MOD, c->cfd, &ec);
    epoll_ctl(P->ep, EPOLL_CTL_MOD, c->ufd, &eu);
}

/* Moves what it can from src to dst through b, counting into *count. 0,
 * 1 when the budget of bytes ran out, or -1 on an error of either side. */
static int pump(struct proxy *P, int src, int dst, struct pbuf *b, uint64_t *count)
{
    if (b->len == 0 && !b->eof) {
        uint64_t left = P->max_bytes > P->bytes ? P->max_bytes - P->bytes : 0;
        if (left == 0)
            return 1;
        ssize_t r = splice(src, NULL, b->p[1], NULL, left < NET_BUF ? (size_t)left : NET_BUF,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (r > 0) {
            b->len = (size_t)r;
            P->bytes += (uint64_t)r;
            *count += (uint64_t)r;
        } else if (r == 0) {
            b->eof = true;
        } else if (errno != EAGAIN && errno != EINTR) {
            return -1;
        }
    }
    if (b->len) {
        ssize_t w = splice(b->p[0], NULL, dst, NULL, b->len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (w > 0)
            b->len -= (size_t)w;
        else if (w < 0 && errno != EAGAIN && errno != EINTR)
            return -1;
    }
    if (b->eof && b->len == 0 && !b->shut) {
        shutdown(dst, SHUT_WR);
        b->shut = true;
    }
    return 0;
}

static const char *connect_error(int e)
{
    switch (e) {
    case ECONNREFUSED: return "connection refused";
    case ETIMEDOUT: return "timed out";
    case ENETUNREACH: return "network unreachable";
    case EHOSTUNREACH: return "host unreachable";
    }
    return "failed";
}

static void conn_event(struct proxy *P, size_t i, unsigned kind, uint32_t events)
{
    struct conn *c = &P->conns[i];
    if ((events & EPOLLERR) || (kind == TAG_CLIENT && (events & EPOLLHUP))) {
        if (!c->connecting || kind == TAG_CLIENT) {
            conn_close(P, c, true); /* a side reset: so is the other */
            return;
        }
    }
    if (c->connecting) {
        if (kind != TAG_UPSTREAM)
            return;
        int e = 0;
        socklen_t el = sizeof e;
        if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &el) < 0)
            e = errno;
        if (e == EINPROGRESS || e == EALREADY)
            return;
        if (e) {
            log_msg(LOG_LVL_DEBUG, "network: the connection out failed: %s", strerror(e));
            refuse(P, c->cfd, c->name, &c->dst, NET_REFUSED_UNREACHABLE, connect_error(e));
            close(c->ufd);
            free(c->name);
            pbuf_close(&c->c2u);
            pbuf_close(&c->u2c);
            memset(c, 0, sizeof *c);
            return;
        }
        c->connecting = false;
    }
    int a = pump(P, c->cfd, c->ufd, &c->c2u, &c->out);
    int b = a < 0 ? a : pump(P, c->ufd, c->cfd, &c->u2c, &c->in);
    if (a > 0 || b > 0) {
        cut_all(P, "net_bytes");
        return;
    }
    if (a < 0 || b < 0) {
        log_msg(LOG_LVL_DEBUG, "network: a connection's relay failed: %s", strerror(errno));
        conn_close(P, c, true);
        return;
    }
    if (c->c2u.shut && c->u2c.shut) {
        conn_close(P, c, false);
        return;
    }
    interest(P, c, i);
}

/* A slot for a new connection (the array grows by doubling). */
static struct conn *conn_slot(struct proxy *P, size_t *idx)
{
    for (size_t i = 0; i < P->n_conns; i++)
        if (!P->conns[i].used) {
            *idx = i;
            return &P->conns[i];
        }
    size_t n = P->n_conns ? P->n_conns * 2 : 16;
    struct conn *v = realloc(P->conns, n * sizeof *v);
    if (!v)
        return NULL;
    memset(v + P->n_conns, 0, (n - P->n_conns) * sizeof *v);
    P->conns = v;
    *idx = P->n_conns;
    P->n_conns = n;
    return &P->conns[*idx];
}

/* The address the script connected to, read off the redirected connection. */
static int original_dst(int fd, bool v6, struct ipaddr *a)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof ss;
    memset(&ss, 0, sizeof ss);
    int rc = v6 ? getsockopt(fd, SOL_IPV6, IP6T_SO_ORIGINAL_DST, &ss, &len)
                : getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &ss, &len);
    if (rc < 0)
        return -errno;
    return ipaddr_from_sockaddr((struct sockaddr *)&ss, len, a);
}

static void accept_one(struct proxy *P, int cfd, bool v6)
{
    struct ipaddr dst;
    if (original_dst(cfd, v6, &dst) < 0) {
        /* Not redirected: the script connected to the proxy's own port. */
        memset(&dst, 0, sizeof dst);
        dst.family = v6 ? AF_INET6 : AF_INET;
        if (v6)
            dst.a[15] = 1;
        else
            dst.a[0] = 127, dst.a[3] = 1;
    }
    const char *name, *detail;
    enum net_refusal_reason why;
    char shown[NET_ADDR_TEXT];
    net_addr_text(&dst, shown);
    pthread_mutex_lock(&P->pol->lock);
    bool ok = net_policy_check(P->pol, &dst, &name, &why, &detail);
    log_msg(LOG_LVL_DEBUG, "network: a connection to %s port %u: %s", shown, dst.port,
            ok ? "allowed" : net_refusal_reason_name(why));
    char *copy = ok && name ? strdup(name) : NULL;
    pthread_mutex_unlock(&P->pol->lock);
    if (!ok)
        return refuse(P, cfd, NULL, &dst, why, detail);
    if (P->rec.limit) {
        free(copy);
        return refuse(P, cfd, NULL, &dst, NET_REFUSED_LIMIT, P->rec.limit);
    }
    if (P->made >= P->max_conns) {
        P->rec.limit = "net_connections";
        free(copy);
        return refuse(P, cfd, NULL, &dst, NET_REFUSED_LIMIT, "net_connections");
    }
    size_t i;
    struct conn *c = conn_slot(P, &i);
    struct pbuf b1 = {.p = {-1, -1}}, b2 = {.p = {-1, -1}};
    int ufd = socket(dst.family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (!c || pbuf_open(&b1) < 0 || pbuf_open(&b2) < 0 || ufd < 0) {
        pbuf_close(&b1), pbuf_close(&b2), free(copy);
        if (ufd >= 0)
            close(ufd);
        return refuse(P, cfd, NULL, &dst, NET_REFUSED_UNREACHABLE, "failed");
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (dst.family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = htons(dst.port);
        memcpy(&in->sin_addr, dst.a, 4);
        len = sizeof *in;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(dst.port);
        memcpy(&in6->sin6_addr, dst.a, 16);
        len = sizeof *in6;
    }
    if (connect(ufd, (struct sockaddr *)&ss, len) < 0 && errno != EINPROGRESS) {
        int e = errno;
        close(ufd);
        pbuf_close(&b1), pbuf_close(&b2);
        refuse(P, cfd, copy, &dst, NET_REFUSED_UNREACHABLE, connect_error(e));
        free(copy);
        return;
    }
    P->made++;
    *c = (struct conn){.used = true, .connecting = true, .cfd = cfd, .ufd = ufd, .dst = dst, .name = copy};
    c->c2u = b1;
    c->u2c = b2;
    struct epoll_event ec = {.data.u64 = tag(TAG_CLIENT, i)}, eu = {.events = EPOLLOUT, .data.u64 = tag(TAG_UPSTREAM, i)};
    if (epoll_ctl(P->ep, EPOLL_CTL_ADD, cfd, &ec) < 0 || epoll_ctl(P->ep, EPOLL_CTL_ADD, ufd, &eu) < 0)
        conn_close(P, c, true);
}

static void accept_all(struct proxy *P, int which)
{
    for (;;) {
        int cfd = accept4(P->fds[which], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0)
            return;
        accept_one(P, cfd, which == NET_FD_TCP6);
    }
}

/* The resolver's thread: a query at a time from either socket. */
static void *dns_main(void *arg)
{
    struct proxy *P = arg;
    unsigned char q[1500], ans[512];
    /* ctl too: its end (the run's) wakes us at once, not at the next look. */
    struct pollfd pf[3] = {{.fd = P->fds[NET_FD_DNS4], .events = POLLIN},
                           {.fd = P->fds[NET_FD_DNS6], .events = POLLIN},
                           {.fd = P->ctl, .events = 0}}; /* its end only (POLLHUP): a byte is the loop's */
    while (!atomic_load(&P->stopping)) {
        if (poll(pf, 3, NET_DNS_POLL_MS) <= 0)
            continue;
        if (pf[2].revents)
            break;
        for (int k = 0; k < 2; k++) {
            if (pf[k].fd < 0 || !(pf[k].revents & POLLIN))
                continue;
            struct sockaddr_storage from;
            socklen_t flen = sizeof from;
            ssize_t r = recvfrom(pf[k].fd, q, sizeof q, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
            size_t alen;
            if (r > 0 && net_dns_answer(P->pol, &P->rec, &P->pol->lock, q, (size_t)r, ans, sizeof ans, &alen) == 0)
                discard(sendto(pf[k].fd, ans, alen, MSG_DONTWAIT | MSG_NOSIGNAL, (struct sockaddr *)&from, flen));
        }
    }
    return NULL;
}

/* The record so far on rec_w, and a new one begun (a kernel's cell's
 * record: net_proxy_take), the connections still open in it with what
 * they carried so far. The limit that stopped the network stays: it
 * holds for the rest of the proxy's life. Under the resolver's lock. */
static void record_take(struct proxy *P)
{
    pthread_mutex_lock(&P->pol->lock);
    for (size_t i = 0; i < P->n_conns; i++)
        if (P->conns[i].used)
            conn_record(P, &P->conns[i]);
    int rc = net__record_write(P->rec_w, &P->rec);
    const char *limit = P->rec.limit;
    enum net_mode mode = P->rec.mode;
    net_record_free(&P->rec);
    P->rec.limit = limit;
    P->rec.mode = mode;
    pthread_mutex_unlock(&P->pol->lock);
    if (rc < 0)
        log_msg(LOG_LVL_WARN, "the network's record could not be handed over: %s", strerror(-rc));
}

/* ctl readable: a byte asks for the record; its end (0, an error) is the
 * run's end. Whether the proxy ends. */
static bool ctl_event(struct proxy *P)
{
    char b[16];
    ssize_t r = read(P->ctl, b, sizeof b);
    if (r < 0)
        return errno != EINTR && errno != EAGAIN;
    for (ssize_t i = 0; i < r; i++)
        record_take(P);
    return r == 0;
}

static int proxy_loop(struct proxy *P)
{
    P->ep = epoll_create1(EPOLL_CLOEXEC);
    if (P->ep < 0)
        return -errno;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = tag(TAG_CTL, 0)};
    if (epoll_ctl(P->ep, EPOLL_CTL_ADD, P->ctl, &ev) < 0)
        return -errno;
    for (int i = NET_FD_TCP4; i <= NET_FD_TCP6; i++) {
        if (P->fds[i] < 0)
            continue;
        ev = (struct epoll_event){.events = EPOLLIN, .data.u64 = tag(TAG_LISTEN, (size_t)i)};
        if (util_set_nonblock(P->fds[i]) < 0 || epoll_ctl(P->ep, EPOLL_CTL_ADD, P->fds[i], &ev) < 0)
            return -errno;
    }
    pthread_t dns;
    if (pthread_create(&dns, NULL, dns_main, P) != 0)
        return -EAGAIN;
    struct epoll_event evs[NET_EVENTS];
    for (bool done = false; !done;) {
        int n = epoll_wait(P->ep, evs, NET_EVENTS, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        for (int k = 0; k < n; k++) {
            unsigned kind = evs[k].data.u64 & 3;
            size_t i = (size_t)(evs[k].data.u64 >> 2);
            if (kind == TAG_CTL)
                done = ctl_event(P);
            else if (kind == TAG_LISTEN)
                accept_all(P, (int)i);
            else if (i < P->n_conns && P->conns[i].used)
                conn_event(P, i, kind, evs[k].events);
        }
    }
    atomic_store(&P->stopping, true);
    pthread_join(dns, NULL);
    for (size_t i = 0; i < P->n_conns; i++)
        if (P->conns[i].used)
            conn_close(P, &P->conns[i], true);
    return 0;
}

/* The sockets from the jail's init (jail.h says how they come). 0; 1
 * when sock ended without them (the jail did not start); -errno. */
static int take_sockets(int sock, int fds[NET_FD_N])
{
    for (int i = 0; i < NET_FD_N; i++)
        fds[i] = -1;
    unsigned char mask = 0;
    char cbuf[CMSG_SPACE(sizeof(int) * NET_FD_N)];
    struct iovec iov = {.iov_base = &mask, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t r;
    do
        r = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (r < 0 && errno == EINTR);
    if (r <= 0)
        return r < 0 ? -errno : 1;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
        return -EPROTO;
    size_t got = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int), k = 0;
    int in[NET_FD_N];
    memcpy(in, CMSG_DATA(cm), sizeof(int) * (got < NET_FD_N ? got : NET_FD_N));
    for (int i = 0; i < NET_FD_N; i++)
        if (mask & (1u << i))
            fds[i] = k < got ? in[k++] : -1;
    if ((msg.msg_flags & MSG_CTRUNC) || k != got || fds[NET_FD_TCP4] < 0 || fds[NET_FD_DNS4] < 0)
        return -EPROTO;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* Closes every descriptor from 3 up but keep[] (n of them). */
static void close_others(int *keep, size_t n)
{
    qsort(keep, n, sizeof *keep, cmp_int);
    unsigned lo = 3;
    for (size_t i = 0; i < n; i++) {
        if (keep[i] < (int)lo)
            continue;
        if ((unsigned)keep[i] > lo)
            close_range(lo, (unsigned)keep[i] - 1, 0);
        lo = (unsigned)keep[i] + 1;
    }
    close_range(lo, ~0u, 0);
}

static _Noreturn void proxy_main(struct proxy *P, int sock, int rec_w)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    prctl(PR_SET_NAME, "rms-net-proxy");
    /* Out of the caller's process group and terminal, as the jail's
     * processes are: a Ctrl-C on the command line cancels the run through
     * the executor, and must not end the proxy under it first. */
    (void)setsid();
    sigset_t none;
    sigemptyset(&none);
    for (int s = 1; s < NSIG; s++)
        if (s != SIGKILL && s != SIGSTOP)
            signal(s, SIG_DFL);
    signal(SIGPIPE, SIG_IGN);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (getppid() == 1)
        _exit(1);
    P->rec_w = rec_w;
    int keep[] = {sock, P->ctl, rec_w};
    close_others(keep, ARRAY_SIZE(keep));
    /* Six descriptors a connection (two sockets, two pipes): as many as the
     * hard limit allows, past the worker's soft one. */
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
        nofile.rlim_cur = nofile.rlim_max;
        (void)setrlimit(RLIMIT_NOFILE, &nofile);
    }
    /* The jail's sockets, or the run's end (ctl) before them. */
    struct pollfd pf[2] = {{.fd = sock, .events = POLLIN}, {.fd = P->ctl, .events = POLLIN}};
    int rc;
    while ((rc = poll(pf, 2, -1)) < 0 && errno == EINTR)
        ;
    rc = rc < 0 ? -errno : (pf[0].revents & POLLIN) ? take_sockets(sock, P->fds) : 1;
    close(sock);
    if (rc == 1)
        _exit(net__record_write(rec_w, &P->rec) == 0 ? 0 : 1); /* no jail: nothing to serve */
    if (rc == 0)
        rc = net_policy_own_addresses(P->pol);
    if (rc == 0)
        rc = proxy_loop(P);
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "the run's network proxy: %s", strerror(-rc));
    _exit(net__record_write(rec_w, &P->rec) == 0 && rc == 0 ? 0 : 1);
}

int net_proxy_start(struct net_proxy *px, const struct net_policy *pol, int sock, uint64_t max_bytes,
                    uint64_t max_conns)
{
    int ctl[2], rec[2];
    *px = (struct net_proxy){.pid = 0, .ctl = -1, .rec = -1};
    if (pipe2(ctl, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(rec, O_CLOEXEC) < 0) {
        int e = errno;
        close(ctl[0]), close(ctl[1]);
        return -e;
    }
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(ctl[0]), close(ctl[1]), close(rec[0]), close(rec[1]);
        return -e;
    }
    if (pid == 0) {
        static struct proxy P;
        P.pol = (struct net_policy *)pol; /* our copy of the caller's memory */
        P.ctl = ctl[0];
        P.max_bytes = max_bytes;
        P.max_conns = max_conns;
        close(ctl[1]);
        close(rec[0]);
        proxy_main(&P, sock, rec[1]);
    }
    close(ctl[0]);
    close(rec[1]);
    px->pid = pid;
    px->ctl = ctl[1];
    px->rec = rec[0];
    return 0;
}

int net_proxy_stop(struct net_proxy *px, struct net_record *rec)
{
    if (px->pid <= 0)
        return 0;
    close(px->ctl);
    px->ctl = -1;
    enum net_mode mode = rec->mode;
    int rc = net__record_read(px->rec, rec, util_now_ms() + NET_STOP_WAIT_MS);
    rec->mode = mode;
    close(px->rec);
    px->rec = -1;
    if (rc < 0)
        kill(px->pid, SIGKILL);
    int st;
    while (waitpid(px->pid, &st, 0) < 0 && errno == EINTR)
        ;
    px->pid = 0;
    return rc;
}

int net_proxy_take(struct net_proxy *px, struct net_record *rec)
{
    if (px->pid <= 0)
        return -ESRCH;
    char b = 'r';
    ssize_t w;
    do
        w = write(px->ctl, &b, 1);
    while (w < 0 && errno == EINTR);
    if (w != 1)
        return w < 0 ? -errno : -EIO;
    enum net_mode mode = rec->mode;
    int rc = net__record_read(px->rec, rec, util_now_ms() + NET_STOP_WAIT_MS);
    rec->mode = mode;
    return rc;
}
