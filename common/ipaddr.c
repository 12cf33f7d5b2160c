/* ipaddr.c: what an IP address is, by the ranges of the IANA special-purpose
 * registries, and an address read from a sockaddr as a policy compares it. */
#include "config.h"

#include "ipaddr.h"

#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

const char *ipaddr_class_name(enum ipaddr_class c)
{
    switch (c) {
    case IPADDR_PUBLIC: return "public";
    case IPADDR_UNSPECIFIED: return "unspecified";
    case IPADDR_LOOPBACK: return "loopback";
    case IPADDR_PRIVATE: return "private";
    case IPADDR_LINK_LOCAL: return "link-local";
    case IPADDR_SHARED: return "shared (carrier-grade NAT)";
    case IPADDR_UNIQUE_LOCAL: return "unique-local";
    case IPADDR_MULTICAST: return "multicast";
    case IPADDR_BROADCAST: return "broadcast";
    case IPADDR_RESERVED: return "reserved";
    case IPADDR_INVALID: return "not an IP address";
    }
    return "?";
}

/* An IPv4 address in host byte order. */
static enum ipaddr_class classify4(uint32_t a)
{
    static const struct {
        uint32_t net;
        unsigned bits;
        enum ipaddr_class cls;
    } ranges[] = {
        {0x00000000, 8, IPADDR_UNSPECIFIED},  /* 0/8 "this network" */
        {0x0a000000, 8, IPADDR_PRIVATE},      /* 10/8 */
        {0x64400000, 10, IPADDR_SHARED},      /* 100.64/10 */
        {0x7f000000, 8, IPADDR_LOOPBACK},     /* 127/8 */
        {0xa9fe0000, 16, IPADDR_LINK_LOCAL},  /* 169.254/16, cloud metadata */
        {0xac100000, 12, IPADDR_PRIVATE},     /* 172.16/12 */
        {0xc0000000, 24, IPADDR_RESERVED},    /* 192.0.0/24 IETF protocol assignments */
        {0xc0000200, 24, IPADDR_RESERVED},    /* 192.0.2/24 TEST-NET-1 */
        {0xc0586300, 24, IPADDR_RESERVED},    /* 192.88.99/24 6to4 relays (deprecated) */
        {0xc0a80000, 16, IPADDR_PRIVATE},     /* 192.168/16 */
        {0xc6120000, 15, IPADDR_RESERVED},    /* 198.18/15 benchmarking */
        {0xc6336400, 24, IPADDR_RESERVED},    /* 198.51.100/24 TEST-NET-2 */
        {0xcb007100, 24, IPADDR_RESERVED},    /* 203.0.113/24 TEST-NET-3 */
        {0xe0000000, 4, IPADDR_MULTICAST},    /* 224/4 */
        {0xffffffff, 32, IPADDR_BROADCAST},   /* before 240/4, which holds it */
        {0xf0000000, 4, IPADDR_RESERVED},     /* 240/4 */
    };
    for (size_t i = 0; i < ARRAY_SIZE(ranges); i++) {
        uint32_t mask = ranges[i].bits ? ~0u << (32 - ranges[i].bits) : 0;
        if ((a & mask) == ranges[i].net)
            return ranges[i].cls;
    }
    return IPADDR_PUBLIC;
}

static uint32_t be32_at(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

bool ipaddr_prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
{
    unsigned full = bits / 8, rest = bits % 8;
    if (memcmp(a, b, full))
        return false;
    if (!rest)
        return true;
    unsigned char m = (unsigned char)(0xff << (8 - rest));
    return (a[full] & m) == (b[full] & m);
}

/* When a carries an IPv4 address in one of the forms we map (mapped, SIIT,
 * NAT64), stores it in *v4 (host order). */
static bool v6_embedded_v4(const unsigned char *a, uint32_t *v4)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char siit[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (!memcmp(a, mapped, 12) || !memcmp(a, siit, 12) || !memcmp(a, nat64, 12)) {
        *v4 = be32_at(a + 12);
        return true;
    }
    return false;
}

static enum ipaddr_class classify6(const unsigned char *a)
{
    static const unsigned char zero[16] = {0};
    uint32_t v4;
    if (!memcmp(a, zero, 16))
        return IPADDR_UNSPECIFIED;
    if (!memcmp(a, zero, 15) && a[15] == 1)
        return IPADDR_LOOPBACK;
    if (v6_embedded_v4(a, &v4))
        return classify4(v4);
    if (!memcmp(a, zero, 12))
        return IPADDR_RESERVED; /* IPv4-compatible ::a.b.c.d (deprecated) */
    if (a[0] == 0x20 && a[1] == 0x02) {
        /* 6to4 2002:AABB:CCDD::/48 routes to a.b.c.d: what it carries is
         * what it reaches. */
        enum ipaddr_class c = classify4(be32_at(a + 2));
        return c;
    }
    static const struct {
        unsigned char net[16];
        unsigned bits;
        enum ipaddr_class cls;
    } ranges[] = {
        {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, IPADDR_PRIVATE}, /* 64:ff9b:1::/48 local NAT64 */
        {{0x01, 0x00}, 64, IPADDR_RESERVED},                        /* 100::/64 discard */
        {{0x20, 0x01, 0x0d, 0xb8}, 32, IPADDR_RESERVED},            /* 2001:db8::/32 documentation */
        {{0x20, 0x01, 0x00, 0x00}, 23, IPADDR_RESERVED},            /* 2001::/23: Teredo, benchmarking, ... */
        {{0x3f, 0xff}, 20, IPADDR_RESERVED},                        /* 3fff::/20 documentation */
        {{0xfc}, 7, IPADDR_UNIQUE_LOCAL},                           /* fc00::/7 */
        {{0xfe, 0x80}, 10, IPADDR_LINK_LOCAL},                      /* fe80::/10 */
        {{0xfe, 0xc0}, 10, IPADDR_PRIVATE},                         /* fec0::/10 site-local (deprecated) */
        {{0xff}, 8, IPADDR_MULTICAST},                              /* ff00::/8 */
    };
    for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
        if (ipaddr_prefix_eq(a, ranges[i].net, ranges[i].bits))
            return ranges[i].cls;
    /* Only 2000::/3 is allocated as global unicast; the rest is reserved. */
    if ((a[0] & 0xe0) != 0x20)
        return IPADDR_RESERVED;
    return IPADDR_PUBLIC;
}

enum ipaddr_class ipaddr_classify(const struct sockaddr *sa, socklen_t len)
{
    if (!sa || len < (socklen_t)sizeof(sa_family_t))
        return IPADDR_INVALID;
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        return classify4(ntohl(in.sin_addr.s_addr));
    }
    if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        return classify6(in6.sin6_addr.s6_addr);
    }
    return IPADDR_INVALID;
}

int ipaddr_from_sockaddr(const struct sockaddr *sa, socklen_t len, struct ipaddr *out)
{
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    memset(out, 0, sizeof *out);
    if (sa && sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        out->family = AF_INET;
        memcpy(out->a, &in.sin_addr, 4);
        out->port = ntohs(in.sin_port);
        return 0;
    }
    if (sa && sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        out->port = ntohs(in6.sin6_port);
        if (!memcmp(in6.sin6_addr.s6_addr, mapped, 12)) {
            out->family = AF_INET;
            memcpy(out->a, in6.sin6_addr.s6_addr + 12, 4);
        } else {
            out->family = AF_INET6;
            memcpy(out->a, in6.sin6_addr.s6_addr, 16);
        }
        return 0;
    }
    return -EAFNOSUPPORT;
}
