/* net.h: the engine of a run's own network (sandbox/net/): the egress
 * policy and its matcher (net_policy.c), the resolver (net_dns.c) and the
 * proxy (net_proxy.c) that hold it for one run, on the server's side of the
 * run's network namespace (doc/isolation.md, "The network"). Its public
 * face is executor/network.h; this is for the executor's own files. */
#ifndef RMS_NET_H
#define RMS_NET_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "executor/network.h"
#include "ipaddr.h"

#define NET_LEARNED_MAX 4096  /* (name, address) pairs the resolver gave one run */
#define NET_OWN_MAX 256       /* the server's own addresses, never reachable */

/* A name the resolver answered with an address: what lets a connection to
 * that address through under a name rule. */
struct net_learned {
    char name[NET_NAME_MAX + 1];
    struct ipaddr addr;
};

/* The policy of one run: the server's lists, the call's narrowing, the
 * server's own addresses, and what the resolver learned. The proxy's two
 * threads share it (lock). */
struct net_policy {
    struct net_rules allow, deny, call;
    bool has_call;                 /* the call gave a list: both must allow */
    /* The allow-list is the operator's own sources (the installer's
     * index and find-links hosts): what it names is reached even on a
     * class no script may reach (an index on the server's loopback or a
     * private network); everything else is refused as for a run. */
    bool sources;
    struct ipaddr own[NET_OWN_MAX];
    size_t n_own;
    struct net_learned *learned;   /* NET_LEARNED_MAX of them, a ring past it */
    size_t n_learned, next_learned;
    pthread_mutex_t lock;
};

/* Makes the policy from the lists' texts (allow, deny: the server's; call:
 * exec_spec.network, NULL or "on" for none). 0, or -EINVAL with the reason
 * in err, -ENOMEM. */
int net_policy_init(struct net_policy *p, const char *allow, const char *deny, const char *call, char *err,
                    size_t errlen) must_check;
void net_policy_free(struct net_policy *p);
/* Reads the addresses of this network namespace's interfaces into p->own
 * (the server's: the proxy calls it where it connects from). 0 or -errno. */
int net_policy_own_addresses(struct net_policy *p) must_check;

/* Whether a DNS name (lower case, no final dot) may be resolved: a name rule
 * of the allow-list (and of the call's) matches it and none of egress_deny
 * does. When not, *why is NET_REFUSED_NAME or NET_REFUSED_DENIED. */
bool net_policy_name_ok(const struct net_policy *p, const char *name, enum net_refusal_reason *why);
/* Whether an address may be connected to, checked in this order: its class
 * (never reachable), the server's own, egress_deny, then the allow-lists
 * (an address rule, or a name rule matching a name the resolver answered
 * with it; the port too; both lists when the call gave one). port 0: a
 * resolver's answer (no port yet): the allow-lists are not asked. Allowed:
 * true, and *name the name it was learned under (static in p until the
 * next learn, copy it) or NULL. Refused: false, *why and *detail (static). */
bool net_policy_check(struct net_policy *p, const struct ipaddr *a, const char **name, enum net_refusal_reason *why,
                      const char **detail);
/* Remembers that the resolver answered name with a. */
void net_policy_learn(struct net_policy *p, const char *name, const struct ipaddr *a);
/* Whether rule r covers the address a (port included, 0: any). */
bool net_rule_covers_addr(const struct net_rule *r, const struct ipaddr *a);
/* Whether rule r covers the name (lower case). */
bool net_rule_covers_name(const struct net_rule *r, const char *name);
/* The address as text ("198.51.100.7", "2001:db8::1"). */
void net_addr_text(const struct ipaddr *a, char out[NET_ADDR_TEXT]);

/* ------------------------------------------------------------ the record */

/* Adds what a connection carried to the destination (name may be NULL),
 * or counts a refusal; entries past NET_RECORD_MAX are counted in dropped.
 * -ENOMEM. */
int net__record_reach(struct net_record *rec, const char *name, const struct ipaddr *a, uint64_t in, uint64_t out,
                      uint64_t conns) must_check;
int net__record_refuse(struct net_record *rec, const char *name, const struct ipaddr *a,
                       enum net_refusal_reason why, const char *detail) must_check;
/* A refusal's detail as its static string (net_refusal.detail), from its
 * text; NULL for a text that is none of them. */
const char *net__record_detail(const char *text);
/* The record written to fd and read back (net_proxy_stop): the proxy's
 * process to the run's. 0 or -errno. */
int net__record_write(int fd, const struct net_record *rec) must_check;
int net__record_read(int fd, struct net_record *rec, int64_t deadline_ms) must_check;

/* ----------------------------------------------------------- the resolver */

/* Answers one DNS query (q, qlen) into ans (at most anscap bytes, the
 * answer's length in *anslen) under the policy, asking the host's resolver
 * (getaddrinfo) for an allowed name and keeping only the addresses the
 * policy lets through; a refused name is NXDOMAIN, recorded in rec (under
 * lock). 0, or -EINVAL for a message that is no query (no answer). */
int net_dns_answer(struct net_policy *p, struct net_record *rec, pthread_mutex_t *lock, const unsigned char *q,
                   size_t qlen, unsigned char *ans, size_t anscap, size_t *anslen) must_check;

/* -------------------------------------------------------------- the proxy */

/* The sockets of the run's namespace the proxy serves, as the jail's init
 * sends them (jail.h: a byte of which are there, then those, in this
 * order): TCP for IPv4 and IPv6, DNS for IPv4 and IPv6. */
enum { NET_FD_TCP4, NET_FD_TCP6, NET_FD_DNS4, NET_FD_DNS6, NET_FD_N };

/* A run's proxy and resolver: a process of its own, in the server's
 * network namespace. */
struct net_proxy {
    pid_t pid;
    int ctl;   /* closing it ends the proxy */
    int rec;   /* the record comes back on it */
};

/* Starts the proxy under the policy (copied into the process) with the
 * limits; the process ends with the caller. It takes its sockets from
 * sock (borrowed: the caller closes its copy), where the jail's init
 * sends them, whenever that is: so the proxy may start before the jail;
 * if sock's other end closes first (the jail did not start), the proxy
 * ends. 0, or -errno with nothing started. */
int net_proxy_start(struct net_proxy *px, const struct net_policy *pol, int sock, uint64_t max_bytes,
                    uint64_t max_conns) must_check;
/* The record of what it saw since its start or the last take, into rec
 * (empty, mode left as it is), while it serves on: a kernel's network,
 * for each cell. A connection is counted in the first record it is in
 * (open or closed), its bytes in the record of when they went. 0, or -errno (-ESRCH: no proxy; -ETIMEDOUT). */
int net_proxy_take(struct net_proxy *px, struct net_record *rec) must_check;
/* Ends it and fills rec (mode left as it is) with what it saw; 0, or
 * -errno when the record could not be had (rec then has the totals it
 * had, none). Safe on a proxy never started (pid 0). */
int net_proxy_stop(struct net_proxy *px, struct net_record *rec);

#endif
