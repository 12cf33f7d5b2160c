/* jail_net.c: a run's own network (script_network = on), the jail's half:
 * in init, inside the run's new network namespace and before anything of
 * the script runs, the loopback, a default route through it, and the
 * nftables rules that redirect every TCP connection to the proxy's port
 * and every DNS query to the resolver's, and drop everything else; then
 * the proxy's and the resolver's sockets, made there and handed to the
 * server (sandbox/net/), which decides on the server's side of the
 * namespace what a connection reaches. The script cannot change any of it:
 * it has no capability in its namespace.
 *
 * Why redirect to sockets of the namespace, and not a veth pair or a
 * user-space network stack (pasta, slirp4netns): a redirected connection
 * is a local one, with no interface, no address plan and no process per
 * run; the proxy reads the address the script asked for from the
 * connection itself (SO_ORIGINAL_DST) and connects from the server's own
 * namespace; and it works the same as root and in an unprivileged user
 * namespace (whose nftables take `redirect` but no `tproxy`). */
#include "config.h"

#include "jail_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define JAIL_NET_PROXY_PORT 1   /* where TCP connections are redirected (tcpmux: nothing a script would run) */
#define JAIL_NET_DNS_PORT 53    /* the resolver: what resolv.conf names, and where DNS is redirected */
#define JAIL_NET_BACKLOG 1024   /* connections the script may open before the proxy accepts them */

/* libnftables, loaded where the rules are made (jail_net_load). */
#define NFT_FUNCS(X) X(ctx_new) X(ctx_free) X(ctx_buffer_output) X(ctx_buffer_error) X(ctx_get_error_buffer) \
    X(run_cmd_from_buffer)
static struct {
#define X(f) __typeof__(nft_##f) *f;
    NFT_FUNCS(X)
#undef X
} nft;

int jail_net_load(char *err, size_t errlen)
{
    if (nft.ctx_new)
        return 0;
    const struct util_dl_sym syms[] = {
#define X(f) {"nft_" #f, (void **)&nft.f},
        NFT_FUNCS(X)
#undef X
    };
    return util_dl_load(LIBNFTABLES_SONAME, false, syms, ARRAY_SIZE(syms), "the run's network: ", err, errlen);
}

/* The rules, in one table of the namespace's own. Loopback stays the
 * script's own (a server it runs and talks to); a DNS query to any address
 * goes to the resolver, every other TCP connection to the proxy; what is
 * left (UDP, ICMP, raw) is refused on the way out, which the script sees at
 * once (EPERM), never a timeout. The proxy's and the resolver's answers go
 * back to the connection's source, which a connection to the outside takes
 * as 0.0.0.0 (lo's 127.0.0.1 is host-scoped): they pass as replies. */
#define RULES_HEAD                                                                                                   \
    "table inet runmyscript {\n"                                                                                    \
    "  chain nat_out {\n"                                                                                           \
    "    type nat hook output priority -100; policy accept;\n"                                                      \
    "    meta l4proto udp udp dport 53 redirect to :53\n"
#define RULES_TAIL                                                                                                   \
    "    meta l4proto tcp redirect to :1\n"                                                                         \
    "  }\n"                                                                                                         \
    "  chain filter_out {\n"                                                                                        \
    "    type filter hook output priority 0; policy drop;\n"                                                        \
    "    ct state established,related accept\n"                                                                     \
    "    ip daddr 127.0.0.0/8 accept\n"                                                                             \
    "    ip6 daddr ::1 accept\n"                                                                                    \
    "  }\n"                                                                                                         \
    "}\n"
static const char jail_net_rules[] = RULES_HEAD "    ip daddr 127.0.0.0/8 return\n"
                                                "    ip6 daddr ::1 return\n" RULES_TAIL;
/* The installer's (jail_opts.net_all): its loopback redirected too, where an
 * operator's index may listen on the server's. */
static const char jail_net_rules_all[] = RULES_HEAD RULES_TAIL;
_Static_assert(JAIL_NET_PROXY_PORT == 1 && JAIL_NET_DNS_PORT == 53, "the ports the rules name");

static int rules_load(bool all, char *what, size_t n)
{
    if (!nft.ctx_new) {
        snprintf(what, n, "libnftables is not loaded");
        return -ENOSYS;
    }
    struct nft_ctx *ctx = nft.ctx_new(NFT_CTX_DEFAULT);
    if (!ctx)
        return -ENOMEM;
    nft.ctx_buffer_output(ctx);
    nft.ctx_buffer_error(ctx);
    int rc = nft.run_cmd_from_buffer(ctx, all ? jail_net_rules_all : jail_net_rules) == 0 ? 0 : -EPERM;
    if (rc < 0) {
        const char *e = nft.ctx_get_error_buffer(ctx);
        snprintf(what, n, "nftables: %.*s", (int)strcspn(e ? e : "", "\n"), e ? e : "");
    }
    nft.ctx_free(ctx);
    return rc;
}

/* A default route through lo with the loopback's own address as its
 * source (rtnetlink: the old ioctl cannot say the source): a connection to
 * any address leaves by the loopback, where the rules catch it, from
 * 127.0.0.1 or ::1, to which the answers then come back. */
static int route_add(int family, const void *src, size_t srclen)
{
    cleanup_fd int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0)
        return -errno;
    struct {
        struct nlmsghdr n;
        struct rtmsg r;
        char attrs[64];
    } req;
    memset(&req, 0, sizeof req);
    req.n.nlmsg_len = NLMSG_LENGTH(sizeof req.r);
    req.n.nlmsg_type = RTM_NEWROUTE;
    req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_EXCL | NLM_F_ACK;
    req.r.rtm_family = (unsigned char)family;
    req.r.rtm_table = RT_TABLE_MAIN;
    req.r.rtm_protocol = RTPROT_BOOT;
    req.r.rtm_scope = RT_SCOPE_LINK;
    req.r.rtm_type = RTN_UNICAST;
    int oif = (int)if_nametoindex("lo");
    const struct {
        unsigned short type;
        const void *data;
        size_t len;
    } attrs[] = {{RTA_OIF, &oif, sizeof oif}, {RTA_PREFSRC, src, srclen}};
    for (size_t i = 0; i < ARRAY_SIZE(attrs); i++) {
        struct rtattr *a = (struct rtattr *)((char *)&req + NLMSG_ALIGN(req.n.nlmsg_len));
        a->rta_type = attrs[i].type;
        a->rta_len = (unsigned short)RTA_LENGTH(attrs[i].len);
        memcpy(RTA_DATA(a), attrs[i].data, attrs[i].len);
        req.n.nlmsg_len = NLMSG_ALIGN(req.n.nlmsg_len) + RTA_ALIGN(a->rta_len);
    }
    struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
    if (sendto(fd, &req, req.n.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof kernel) < 0)
        return -errno;
    union {
        struct nlmsghdr n;
        char buf[512];
    } ack;
    ssize_t r;
    do
        r = recv(fd, &ack, sizeof ack, 0);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        return -errno;
    if (r < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) || ack.n.nlmsg_type != NLMSG_ERROR)
        return -EPROTO;
    const struct nlmsgerr *e = NLMSG_DATA(&ack.n);
    return e->error; /* 0, or -errno */
}

static int routes_add(void)
{
    const struct in_addr lo4 = {htonl(INADDR_LOOPBACK)};
    int rc = route_add(AF_INET, &lo4, sizeof lo4);
    if (rc < 0)
        return rc;
    rc = route_add(AF_INET6, &in6addr_loopback, sizeof in6addr_loopback);
    /* A host without IPv6 (or with it off on lo): the run has IPv4 only. */
    return rc == -EAFNOSUPPORT || rc == -EADDRNOTAVAIL || rc == -EACCES || rc == -EOPNOTSUPP ? 0 : rc;
}

/* A socket bound to the loopback's port: -errno, or for IPv6 where the
 * host has none, -EAFNOSUPPORT. */
static int bound(int family, int type, uint16_t port)
{
    int fd = socket(family, type | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    int one = 1, rc = 0;
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        len = sizeof *in;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        in6->sin6_addr = in6addr_loopback;
        len = sizeof *in6;
        if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) < 0)
            rc = -errno;
    }
    if (rc == 0 && bind(fd, (struct sockaddr *)&ss, len) < 0)
        rc = -errno;
    if (rc == 0 && type == SOCK_STREAM && listen(fd, JAIL_NET_BACKLOG) < 0)
        rc = -errno;
    if (rc < 0) {
        close(fd);
        return family == AF_INET6 && (rc == -EADDRNOTAVAIL || rc == -EAFNOSUPPORT) ? -EAFNOSUPPORT : rc;
    }
    return fd;
}

/* A spare's network made ahead (jail__net_ahead), in the spare's own
 * process: whether its rules are loaded, and its sockets, bound. */
static struct {
    bool rules;
    unsigned char mask;
    int fds[JAIL_NET_N];
    int nfds;
} ahead;

static void fds_close(int *fds, int *nfds)
{
    for (int i = 0; i < *nfds; i++)
        close(fds[i]);
    *nfds = 0;
}

/* The four sockets bound (those the host has) into fds, which are said by
 * *mask. 0, or -errno with the socket in what (nothing left open). */
static int sockets_make(int fds[JAIL_NET_N], int *nfds, unsigned char *mask, char *what, size_t n)
{
    static const struct {
        int family, type;
        uint16_t port;
    } want[JAIL_NET_N] = {
        [JAIL_NET_TCP4] = {AF_INET, SOCK_STREAM, JAIL_NET_PROXY_PORT},
        [JAIL_NET_TCP6] = {AF_INET6, SOCK_STREAM, JAIL_NET_PROXY_PORT},
        [JAIL_NET_DNS4] = {AF_INET, SOCK_DGRAM, JAIL_NET_DNS_PORT},
        [JAIL_NET_DNS6] = {AF_INET6, SOCK_DGRAM, JAIL_NET_DNS_PORT},
    };
    *nfds = 0;
    *mask = 0;
    for (int i = 0; i < JAIL_NET_N; i++) {
        int fd = bound(want[i].family, want[i].type, want[i].port);
        if (fd == -EAFNOSUPPORT)
            continue;
        if (fd < 0) {
            snprintf(what, n, "the %s socket", i == JAIL_NET_TCP4 || i == JAIL_NET_TCP6 ? "proxy's" : "resolver's");
            fds_close(fds, nfds);
            return fd;
        }
        *mask |= (unsigned char)(1u << i);
        fds[(*nfds)++] = fd;
    }
    if (!(*mask & (1u << JAIL_NET_TCP4)) || !(*mask & (1u << JAIL_NET_DNS4))) {
        snprintf(what, n, "the IPv4 loopback");
        fds_close(fds, nfds);
        return -EADDRNOTAVAIL;
    }
    return 0;
}

/* The sockets sent on sock with a byte saying which are there. */
static int sockets_send(int sock, const int *fds, int nfds, unsigned char mask, char *what, size_t n)
{
    char cbuf[CMSG_SPACE(sizeof(int) * JAIL_NET_N)];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec iov = {.iov_base = &mask, .iov_len = 1};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
                         .msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds)};
    struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
    if (!cm) /* (never: cbuf is there) */
        return -EINVAL;
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
    memcpy(CMSG_DATA(cm), fds, sizeof(int) * (size_t)nfds);
    if (sendmsg(sock, &msg, MSG_NOSIGNAL) != 1) {
        int rc = -errno;
        snprintf(what, n, "handing the sockets to the server");
        return rc;
    }
    return 0;
}

int jail__net_ahead(void)
{
    char what[128];
    /* Only where the zygote loaded the library: it did for a networked
     * run, and a zygote that never served one makes spares without. */
    if (!nft.ctx_new)
        return -ENOSYS;
    int rc = rules_load(false, what, sizeof what);
    if (rc < 0)
        return rc;
    ahead.rules = true;
    return sockets_make(ahead.fds, &ahead.nfds, &ahead.mask, what, sizeof what);
}

void jail__net_ahead_drop(void)
{
    fds_close(ahead.fds, &ahead.nfds);
}

int jail__net_own(int sock, bool all, char *what, size_t n)
{
    int rc;
    /* A spare that made its network ahead has the loopback up, the rules
     * and (where it could bind them) the sockets: the route and the
     * handover are left, the route last of all since with it (and only
     * with it) a connection leaves the loopback. */
    if (!ahead.rules || all) {
        /* A warm run's zygote loaded it for its runs and spares; a
         * cold run's init (a program of its own) loads it here, and says
         * so in what when the host lacks it. */
        if ((rc = jail_net_load(what, n)) < 0)
            return rc;
        if ((rc = jail__loopback_up()) < 0)
            return snprintf(what, n, "the loopback"), rc;
        if ((rc = rules_load(all, what, n)) < 0)
            return rc;
    }
    if (!ahead.nfds && (rc = sockets_make(ahead.fds, &ahead.nfds, &ahead.mask, what, n)) < 0)
        return rc;
    if ((rc = routes_add()) < 0)
        snprintf(what, n, "the default route");
    else
        rc = sockets_send(sock, ahead.fds, ahead.nfds, ahead.mask, what, n);
    fds_close(ahead.fds, &ahead.nfds);
    return rc;
}
