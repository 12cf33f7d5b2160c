/* executor/network.h: a run's network: the modes of script_network, the
 * egress policy (egress_allow, egress_deny, a call's narrowing), and the
 * record of what a run reached and what was refused. Part of the executor's
 * public API: executor.h includes every part; sandbox/net/ enforces it
 * (doc/isolation.md, "The network"). */
#ifndef RMS_EXECUTOR_NETWORK_H
#define RMS_EXECUTOR_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* script_network: what network a run has. */
enum net_mode {
    NET_MODE_OFF,             /* "off": none; the run's own namespace with a loopback only (the default) */
    NET_MODE_ON,              /* "on": the run's own namespace, every TCP connection and DNS query through
                               * the server's proxy and resolver, which hold egress_allow and egress_deny
                               * and count net_bytes and net_connections; nothing else leaves */
    NET_MODE_HOST_UNFILTERED, /* "host-unfiltered": the host's own network namespace as it is, no policy, no
                               * limit, no record (its loopback, its private networks, the metadata
                               * address): only for a host that holds nothing a script may not reach */
};
/* "off", "on", "host-unfiltered" (static). */
const char *net_mode_name(enum net_mode m);

#define NET_RULES_MAX 256        /* entries of egress_allow, egress_deny, or a call's network */
#define NET_NAME_MAX 253         /* a DNS name, dots included, no final dot */
#define NET_ADDR_TEXT 46         /* INET6_ADDRSTRLEN: an address as text */
#define NET_RECORD_MAX 256       /* destinations kept in a record, and refusals: the rest are counted */

/* One rule of a policy list, parsed: a name (exact, or "*.example.com": any
 * name beneath example.com, not example.com itself), or an address or CIDR
 * range (IPv4 or IPv6; an IPv4-mapped IPv6 one is its IPv4), each with an
 * optional port (0: every port). Written "example.com", "*.example.com:443",
 * "198.51.100.0/24", "198.51.100.0/24:443", "2001:db8::/32", "[2001:db8::1]:443",
 * "[2001:db8::/32]:443".
 * An address is read only in its dotted-decimal or IPv6 form: a rule of
 * digits and dots that is no dotted quad ("2130706433", "0177.0.0.1") is a
 * parse error, never a name. (What a script connects to is checked as the
 * address the connection carries, whatever form the script wrote it in.) */
struct net_rule {
    bool is_name;
    bool wildcard;              /* "*." name */
    char name[NET_NAME_MAX + 1]; /* lower case, no trailing dot, without the "*." */
    int family;                 /* AF_INET or AF_INET6 (addresses) */
    unsigned char addr[16];     /* network byte order */
    unsigned prefix;            /* bits; 32 or 128 for one address */
    uint16_t port;              /* 0: any */
};

/* A parsed list (owns v; net_rules_free). */
struct net_rules {
    struct net_rule *v;
    size_t n;
};

/* Parses a list in egress_allow's syntax: rules separated by commas and
 * blanks; NULL, "" and "none" are the empty list. 0, or -EINVAL with a
 * one-line reason in err that names the rule at fault (a door shows it as
 * it is), -E2BIG past NET_RULES_MAX, -ENOMEM. On error r is empty. */
int net_rules_parse(const char *text, struct net_rules *r, char *err, size_t errlen) must_check;
void net_rules_free(struct net_rules *r);

/* ------------------------------------------------------------- the record */

/* Why a destination was refused. */
enum net_refusal_reason {
    NET_REFUSED_NOT_ALLOWED,     /* "not_allowed": no rule of the allow-list (the server's, and the call's
                                  * when it narrowed it) covers the address and port, nor a name that the
                                  * resolver answered with it */
    NET_REFUSED_NAME,            /* "name_not_allowed": a DNS query for a name no rule allows (the script
                                  * saw NXDOMAIN) */
    NET_REFUSED_NEVER_REACHABLE, /* "never_reachable": the address is of a class no rule opens (loopback, the
                                  * server's own, private, shared, unique-local, link-local, multicast,
                                  * unspecified, broadcast); detail names the class */
    NET_REFUSED_DENIED,          /* "denied": egress_deny covers it */
    NET_REFUSED_LIMIT,           /* "limit": net_connections or net_bytes was reached; detail names it */
    NET_REFUSED_UNREACHABLE,     /* "unreachable": allowed, but the server's own connection failed (detail:
                                  * the error, "connection refused", "timed out") */
};
/* "not_allowed", "name_not_allowed", ... (static). */
const char *net_refusal_reason_name(enum net_refusal_reason r);

/* A destination the run reached (a name, an address and a port: one entry
 * however many connections went there). */
struct net_dest {
    char *name;                 /* the name the resolver answered with this address, or NULL (by address) */
    char addr[NET_ADDR_TEXT];   /* the address connected to, IPv4 as a.b.c.d */
    uint16_t port;
    uint64_t bytes_in;          /* bytes the script received from it */
    uint64_t bytes_out;         /* bytes the script sent to it */
    uint64_t connections;
};

/* A destination refused (one entry per name or address, port and reason). */
struct net_refusal {
    char *name;                 /* the name asked for, or NULL */
    char addr[NET_ADDR_TEXT];   /* the address, "" for a name that was never resolved */
    uint16_t port;              /* 0 for a DNS query */
    enum net_refusal_reason reason;
    const char *detail;         /* static: the address class, the limit's key, the error; or NULL */
    uint64_t count;             /* attempts */
};

/* What a run did on the network: struct result's `network` (the JSON's
 * "network": null when mode is off; doc/internals.md, "The result in
 * detail"). Filled by the executor for NET_MODE_ON; for host-unfiltered
 * only mode is set (nothing is counted). */
struct net_record {
    enum net_mode mode;         /* the run's, after the call's narrowing ("off" for a call that said off) */
    uint64_t bytes_in, bytes_out; /* every connection together */
    uint64_t connections;       /* connections made through the proxy */
    uint64_t refused_connections; /* connections and queries refused */
    struct net_dest *reached;   /* owned; n_reached of them, in the order first reached */
    size_t n_reached;
    struct net_refusal *refused; /* owned; in the order first refused */
    size_t n_refused;
    uint64_t dropped;           /* entries past NET_RECORD_MAX, not listed (still counted above) */
    const char *limit;          /* "net_bytes" or "net_connections" when one stopped the network, else NULL
                                 * (static) */
};
void net_record_init(struct net_record *rec);
void net_record_free(struct net_record *rec);

#endif
