/* fetch_guard.c: the SSRF guard's half that needs no libcurl: what an
 * address is (public, loopback, private, ...), the fetch_allow list that
 * lets some through, and the redaction of URLs for messages. The transfers
 * (fetch_transfer.c) ask fetch_addr_allowed() at connect time, for the
 * exact address libcurl is about to connect to. */
#include "config.h"

#include "fetch_internal.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- the address guard */

const char *fetch_addr_class_name(enum fetch_addr_class c)
{
    switch (c) {
    case FETCH_ADDR_PUBLIC: return "public";
    case FETCH_ADDR_UNSPECIFIED: return "unspecified";
    case FETCH_ADDR_LOOPBACK: return "loopback";
    case FETCH_ADDR_PRIVATE: return "private";
    case FETCH_ADDR_LINK_LOCAL: return "link-local";
    case FETCH_ADDR_SHARED: return "shared (carrier-grade NAT)";
    case FETCH_ADDR_UNIQUE_LOCAL: return "unique-local";
    case FETCH_ADDR_MULTICAST: return "multicast";
    case FETCH_ADDR_BROADCAST: return "broadcast";
    case FETCH_ADDR_RESERVED: return "reserved";
    case FETCH_ADDR_INVALID: return "not an IP address";
    }
    return "?";
}

/* An IPv4 address in host byte order. */
static enum fetch_addr_class classify4(uint32_t a)
{
    static const struct {
        uint32_t net;
        unsigned bits;
        enum fetch_addr_class cls;
    } ranges[] = {
        {0x00000000, 8, FETCH_ADDR_UNSPECIFIED},  /* 0/8 "this network" */
        {0x0a000000, 8, FETCH_ADDR_PRIVATE},      /* 10/8 */
        {0x64400000, 10, FETCH_ADDR_SHARED},      /* 100.64/10 */
        {0x7f000000, 8, FETCH_ADDR_LOOPBACK},     /* 127/8 */
        {0xa9fe0000, 16, FETCH_ADDR_LINK_LOCAL},  /* 169.254/16, cloud metadata */
        {0xac100000, 12, FETCH_ADDR_PRIVATE},     /* 172.16/12 */
        {0xc0000000, 24, FETCH_ADDR_RESERVED},    /* 192.0.0/24 IETF protocol assignments */
        {0xc0000200, 24, FETCH_ADDR_RESERVED},    /* 192.0.2/24 TEST-NET-1 */
        {0xc0586300, 24, FETCH_ADDR_RESERVED},    /* 192.88.99/24 6to4 relays (deprecated) */
        {0xc0a80000, 16, FETCH_ADDR_PRIVATE},     /* 192.168/16 */
        {0xc6120000, 15, FETCH_ADDR_RESERVED},    /* 198.18/15 benchmarking */
        {0xc6336400, 24, FETCH_ADDR_RESERVED},    /* 198.51.100/24 TEST-NET-2 */
        {0xcb007100, 24, FETCH_ADDR_RESERVED},    /* 203.0.113/24 TEST-NET-3 */
        {0xe0000000, 4, FETCH_ADDR_MULTICAST},    /* 224/4 */
        {0xffffffff, 32, FETCH_ADDR_BROADCAST},   /* before 240/4, which holds it */
        {0xf0000000, 4, FETCH_ADDR_RESERVED},     /* 240/4 */
    };
    for (size_t i = 0; i < ARRAY_SIZE(ranges); i++) {
        uint32_t mask = ranges[i].bits ? ~0u << (32 - ranges[i].bits) : 0;
        if ((a & mask) == ranges[i].net)
            return ranges[i].cls;
    }
    return FETCH_ADDR_PUBLIC;
}

static uint32_t be32_at(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static bool prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits)
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

static enum fetch_addr_class classify6(const unsigned char *a)
{
    static const unsigned char zero[16] = {0};
    uint32_t v4;
    if (!memcmp(a, zero, 16))
        return FETCH_ADDR_UNSPECIFIED;
    if (!memcmp(a, zero, 15) && a[15] == 1)
        return FETCH_ADDR_LOOPBACK;
    if (v6_embedded_v4(a, &v4))
        return classify4(v4);
    if (!memcmp(a, zero, 12))
        return FETCH_ADDR_RESERVED; /* IPv4-compatible ::a.b.c.d (deprecated) */
    if (a[0] == 0x20 && a[1] == 0x02) {
        /* 6to4 2002:AABB:CCDD::/48 routes to a.b.c.d: what it carries is
         * what it reaches. */
        enum fetch_addr_class c = classify4(be32_at(a + 2));
        return c;
    }
    static const struct {
        unsigned char net[16];
        unsigned bits;
        enum fetch_addr_class cls;
    } ranges[] = {
        {{0x00, 0x64, 0xff, 0x9b, 0x00, 0x01}, 48, FETCH_ADDR_PRIVATE}, /* 64:ff9b:1::/48 local NAT64 */
        {{0x01, 0x00}, 64, FETCH_ADDR_RESERVED},                        /* 100::/64 discard */
        {{0x20, 0x01, 0x0d, 0xb8}, 32, FETCH_ADDR_RESERVED},            /* 2001:db8::/32 documentation */
        {{0x20, 0x01, 0x00, 0x00}, 23, FETCH_ADDR_RESERVED},            /* 2001::/23: Teredo, benchmarking, ... */
        {{0x3f, 0xff}, 20, FETCH_ADDR_RESERVED},                        /* 3fff::/20 documentation */
        {{0xfc}, 7, FETCH_ADDR_UNIQUE_LOCAL},                           /* fc00::/7 */
        {{0xfe, 0x80}, 10, FETCH_ADDR_LINK_LOCAL},                      /* fe80::/10 */
        {{0xfe, 0xc0}, 10, FETCH_ADDR_PRIVATE},                         /* fec0::/10 site-local (deprecated) */
        {{0xff}, 8, FETCH_ADDR_MULTICAST},                              /* ff00::/8 */
    };
    for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
        if (prefix_eq(a, ranges[i].net, ranges[i].bits))
            return ranges[i].cls;
    /* Only 2000::/3 is allocated as global unicast; the rest is reserved. */
    if ((a[0] & 0xe0) != 0x20)
        return FETCH_ADDR_RESERVED;
    return FETCH_ADDR_PUBLIC;
}

enum fetch_addr_class fetch_addr_classify(const struct sockaddr *sa, socklen_t len)
{
    if (!sa || len < (socklen_t)sizeof(sa_family_t))
        return FETCH_ADDR_INVALID;
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
    return FETCH_ADDR_INVALID;
}

void fetch_allow_free(struct fetch_allow *a)
{
    free(a->v);
    a->v = NULL;
    a->n = 0;
}

static int parse_port(const char *s, uint16_t *port)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v == 0 || v > 65535)
        return -EINVAL;
    *port = (uint16_t)v;
    return 0;
}

static int parse_prefix(const char *s, unsigned max, unsigned *bits)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || *end || v > max)
        return -EINVAL;
    *bits = (unsigned)v;
    return 0;
}

/* One entry: "a.b.c.d", "a.b.c.d/n", "a.b.c.d:port", "x::y", "x::y/n",
 * "[x::y]", "[x::y]:port". */
static int parse_allow_entry(char *tok, struct fetch_allow_entry *e)
{
    char *addr = tok, *port = NULL, *prefix = NULL;
    memset(e, 0, sizeof *e);
    if (tok[0] == '[') {
        char *close = strchr(tok, ']');
        if (!close)
            return -EINVAL;
        *close = '\0';
        addr = tok + 1;
        if (close[1] == ':')
            port = close + 2;
        else if (close[1] == '/')
            prefix = close + 2;
        else if (close[1])
            return -EINVAL;
        e->family = AF_INET6;
    } else {
        char *slash = strchr(tok, '/');
        if (slash) {
            *slash = '\0';
            prefix = slash + 1;
        }
        char *colon = strchr(tok, ':');
        if (colon && strchr(colon + 1, ':')) {
            e->family = AF_INET6; /* a bare IPv6 address takes no port */
        } else {
            e->family = AF_INET;
            if (colon) {
                if (prefix)
                    return -EINVAL; /* "10.0.0.0/8:80": one or the other */
                *colon = '\0';
                port = colon + 1;
            }
        }
    }
    if (inet_pton(e->family, addr, e->addr) != 1)
        return -EINVAL;
    unsigned max = e->family == AF_INET ? 32 : 128;
    e->prefix = max;
    if (prefix && parse_prefix(prefix, max, &e->prefix) < 0)
        return -EINVAL;
    if (port && parse_port(port, &e->port) < 0)
        return -EINVAL;
    /* Host bits past the prefix are ignored (10.1.2.3/8 is 10/8). */
    return 0;
}

int fetch_allow_parse(const char *text, struct fetch_allow *a, char *err, size_t errlen)
{
    a->v = NULL;
    a->n = 0;
    if (!text)
        return 0;
    cleanup_free char *copy = strdup(text);
    if (!copy) {
        snprintf(err, errlen, "fetch_allow: out of memory");
        return -ENOMEM;
    }
    size_t cap = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ", \t\r\n", &save); tok; tok = strtok_r(NULL, ", \t\r\n", &save)) {
        if (a->n == FETCH_ALLOW_MAX) {
            snprintf(err, errlen, "fetch_allow: more than %d entries", FETCH_ALLOW_MAX);
            fetch_allow_free(a);
            return -E2BIG;
        }
        if (UTIL_GROW(a->v, a->n, cap, 8) < 0) {
            fetch_allow_free(a);
            snprintf(err, errlen, "fetch_allow: out of memory");
            return -ENOMEM;
        }
        char shown[80];
        snprintf(shown, sizeof shown, "%s", tok);
        if (parse_allow_entry(tok, &a->v[a->n]) < 0) {
            snprintf(err, errlen,
                     "fetch_allow: '%s' is not an address, a CIDR range or address:port "
                     "(IPv6 with a port in brackets: [::1]:8080)",
                     shown);
            fetch_allow_free(a);
            return -EINVAL;
        }
        a->n++;
    }
    return 0;
}

bool fetch_addr_allowed(const struct sockaddr *sa, socklen_t len, const struct fetch_allow *allow,
                        enum fetch_addr_class *cls)
{
    enum fetch_addr_class c = fetch_addr_classify(sa, len);
    if (cls)
        *cls = c;
    if (c == FETCH_ADDR_PUBLIC)
        return true;
    if (c == FETCH_ADDR_INVALID || !allow)
        return false;
    /* The address (IPv4-mapped IPv6 as the IPv4 it maps) and the port. */
    int family;
    unsigned char addr[16];
    uint16_t port;
    if (sa->sa_family == AF_INET) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        family = AF_INET;
        memcpy(addr, &in.sin_addr, 4);
        port = ntohs(in.sin_port);
    } else {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        port = ntohs(in6.sin6_port);
        if (!memcmp(in6.sin6_addr.s6_addr, mapped, 12)) {
            family = AF_INET;
            memcpy(addr, in6.sin6_addr.s6_addr + 12, 4);
        } else {
            family = AF_INET6;
            memcpy(addr, in6.sin6_addr.s6_addr, 16);
        }
    }
    for (size_t i = 0; i < allow->n; i++) {
        const struct fetch_allow_entry *e = &allow->v[i];
        if (e->family == family && prefix_eq(addr, e->addr, e->prefix) && (e->port == 0 || e->port == port))
            return true;
    }
    return false;
}

/* "127.0.0.1 port 80" or "[::1] port 80". */
void fetch__describe_sockaddr(const struct sockaddr *sa, socklen_t len, char *out, size_t n)
{
    char host[INET6_ADDRSTRLEN] = "?";
    unsigned port = 0;
    if (sa->sa_family == AF_INET && len >= (socklen_t)sizeof(struct sockaddr_in)) {
        struct sockaddr_in in;
        memcpy(&in, sa, sizeof in);
        inet_ntop(AF_INET, &in.sin_addr, host, sizeof host);
        port = ntohs(in.sin_port);
        snprintf(out, n, "%s port %u", host, port);
    } else if (sa->sa_family == AF_INET6 && len >= (socklen_t)sizeof(struct sockaddr_in6)) {
        struct sockaddr_in6 in6;
        memcpy(&in6, sa, sizeof in6);
        inet_ntop(AF_INET6, &in6.sin6_addr, host, sizeof host);
        port = ntohs(in6.sin6_port);
        snprintf(out, n, "[%s] port %u", host, port);
    } else {
        snprintf(out, n, "an address of family %d", sa->sa_family);
    }
}

/* ----------------------------------------------------------------- URLs */

void fetch_url_redact(const char *url, char *out, size_t outlen)
{
    if (!outlen)
        return;
    /* Everything from the first '?' or '#' on may be a signature: cut it,
     * whatever the syntax around it. Then the user info of the authority. */
    size_t end = strcspn(url, "?#");
    const char *auth = strstr(url, "://");
    size_t skip_from = 0, skip_to = 0;
    if (auth && (size_t)(auth - url) < end) {
        size_t a0 = (size_t)(auth - url) + 3;
        size_t a1 = a0 + strcspn(url + a0, "/?#");
        for (size_t i = a1; i > a0; i--) {
            if (url[i - 1] == '@') {
                skip_from = a0;
                skip_to = i;
                break;
            }
        }
    }
    size_t o = 0;
    bool cut = false;
    for (size_t i = 0; i < end; i++) {
        if (i >= skip_from && i < skip_to)
            continue;
        unsigned char ch = (unsigned char)url[i];
        char esc[4];
        size_t k;
        if (ch > 0x20 && ch < 0x7f) {
            esc[0] = (char)ch;
            k = 1;
        } else {
            snprintf(esc, sizeof esc, "%%%02X", ch);
            k = 3;
        }
        if (o + k + 4 > outlen) {
            cut = true;
            break;
        }
        memcpy(out + o, esc, k);
        o += k;
    }
    if (cut && outlen >= 4) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}