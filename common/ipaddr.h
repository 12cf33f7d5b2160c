/* ipaddr.h: what an IP address is (public, loopback, private, link-local,
 * ...) and the few operations on addresses that the fetch guard and a run's
 * network policy share: an address read from a sockaddr (an IPv4-mapped
 * IPv6 address as its IPv4), and a prefix compared. */
#ifndef RMS_IPADDR_H
#define RMS_IPADDR_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* What an address is. */
enum ipaddr_class {
    IPADDR_PUBLIC,
    IPADDR_UNSPECIFIED,  /* 0.0.0.0/8, :: */
    IPADDR_LOOPBACK,     /* 127/8, ::1 */
    IPADDR_PRIVATE,      /* 10/8, 172.16/12, 192.168/16, fec0::/10, 64:ff9b:1::/48 */
    IPADDR_LINK_LOCAL,   /* 169.254/16 (cloud metadata), fe80::/10 */
    IPADDR_SHARED,       /* 100.64/10, carrier-grade NAT */
    IPADDR_UNIQUE_LOCAL, /* fc00::/7 */
    IPADDR_MULTICAST,    /* 224/4, ff00::/8 */
    IPADDR_BROADCAST,    /* 255.255.255.255 */
    IPADDR_RESERVED,     /* documentation, benchmarking, 240/4, 192.0.0/24,
                          * IPv4-compatible ::a.b.c.d, Teredo and the
                          * rest of 2001::/23, 100::/64, ... */
    IPADDR_INVALID,      /* not IPv4 or IPv6, or too short */
};
/* "public", "loopback", "private", ... (static). */
const char *ipaddr_class_name(enum ipaddr_class c);

/* Classifies an address. IPv6 forms that carry an IPv4 address (mapped
 * ::ffff:a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) are classified by the IPv4 address they carry. */
enum ipaddr_class ipaddr_classify(const struct sockaddr *sa, socklen_t len);

/* An address as a policy compares it: an IPv4-mapped IPv6 address is its
 * IPv4 one. */
struct ipaddr {
    int family;              /* AF_INET or AF_INET6 */
    unsigned char a[16];     /* network byte order; IPv4 in the first 4 */
    uint16_t port;           /* host order */
};
/* Reads sa (AF_INET or AF_INET6, len long enough) into *out. 0, or
 * -EAFNOSUPPORT. */
int ipaddr_from_sockaddr(const struct sockaddr *sa, socklen_t len, struct ipaddr *out);
/* Whether the first bits of a and b are equal. */
bool ipaddr_prefix_eq(const unsigned char *a, const unsigned char *b, unsigned bits);

#endif
