/* net_policy.c: the egress policy of one run, and its matcher: what a name
 * and an address are allowed, checked on the address a connection actually
 * goes to (an IPv4-mapped IPv6 address as its IPv4 one; whatever text the
 * script wrote it as: the kernel parsed it already). */
#include "config.h"

#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int net_policy_init(struct net_policy *p, const char *allow, const char *deny, const char *call, char *err,
                    size_t errlen)
{
    memset(p, 0, sizeof *p);
    char why[200];
    int rc = net_rules_parse(allow, &p->allow, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "egress_allow: %s", why);
        goto out;
    }
    if ((rc = net_rules_parse(deny, &p->deny, why, sizeof why)) < 0) {
        snprintf(err, errlen, "egress_deny: %s", why);
        goto out;
    }
    p->has_call = call && strcmp(call, "on") != 0;
    if (p->has_call && (rc = net_rules_parse(call, &p->call, why, sizeof why)) < 0) {
        snprintf(err, errlen, "network: %s", why);
        goto out;
    }
    p->learned = calloc(NET_LEARNED_MAX, sizeof *p->learned);
    if (!p->learned) {
        snprintf(err, errlen, "out of memory");
        rc = -ENOMEM;
        goto out;
    }
    rc = pthread_mutex_init(&p->lock, NULL) == 0 ? 0 : -ENOMEM;
out:
    if (rc < 0) {
        net_rules_free(&p->allow);
        net_rules_free(&p->deny);
        net_rules_free(&p->call);
        free(p->learned);
        memset(p, 0, sizeof *p);
    }
    return rc;
}

void net_policy_free(struct net_policy *p)
{
    if (!p->learned)
        return;
    net_rules_free(&p->allow);
    net_rules_free(&p->deny);
    net_rules_free(&p->call);
    free(p->learned);
    pthread_mutex_destroy(&p->lock);
    memset(p, 0, sizeof *p);
}

int net_policy_own_addresses(struct net_policy *p)
{
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) < 0)
        return -errno;
    p->n_own = 0;
    for (struct ifaddrs *i = ifa; i && p->n_own < NET_OWN_MAX; i = i->ifa_next) {
        if (!i->ifa_addr)
            continue;
        socklen_t len = i->ifa_addr->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
        if (ipaddr_from_sockaddr(i->ifa_addr, len, &p->own[p->n_own]) == 0) {
            p->own[p->n_own].port = 0;
            p->n_own++;
        }
    }
    freeifaddrs(ifa);
    return 0;
}

void net_addr_text(const struct ipaddr *a, char out[NET_ADDR_TEXT])
{
    if (!inet_ntop(a->family, a->a, out, NET_ADDR_TEXT))
        snprintf(out, NET_ADDR_TEXT, "?");
}

bool net_rule_covers_addr(const struct net_rule *r, const struct ipaddr *a)
{
    return !r->is_name && r->family == a->family && ipaddr_prefix_eq(a->a, r->addr, r->prefix) &&
           (r->port == 0 || a->port == 0 || r->port == a->port);
}

bool net_rule_covers_name(const struct net_rule *r, const char *name)
{
    if (!r->is_name)
        return false;
    if (!r->wildcard)
        return !strcmp(name, r->name);
    size_t n = strlen(name), m = strlen(r->name);
    return n > m + 1 && name[n - m - 1] == '.' && !strcmp(name + n - m, r->name);
}

static bool rules_cover_name(const struct net_rules *rs, const char *name, uint16_t port)
{
    for (size_t i = 0; i < rs->n; i++)
        if (net_rule_covers_name(&rs->v[i], name) && (port == 0 || rs->v[i].port == 0 || rs->v[i].port == port))
            return true;
    return false;
}

static bool rules_cover_addr(const struct net_rules *rs, const struct ipaddr *a)
{
    for (size_t i = 0; i < rs->n; i++)
        if (net_rule_covers_addr(&rs->v[i], a))
            return true;
    return false;
}

bool net_policy_name_ok(const struct net_policy *p, const char *name, enum net_refusal_reason *why)
{
    if (rules_cover_name(&p->deny, name, 0)) {
        *why = NET_REFUSED_DENIED;
        return false;
    }
    if (!rules_cover_name(&p->allow, name, 0) || (p->has_call && !rules_cover_name(&p->call, name, 0))) {
        *why = NET_REFUSED_NAME;
        return false;
    }
    return true;
}

/* The classes no rule opens. Documentation and other reserved ranges are
 * not among them: an allow-list may name them (the tests' hosts are
 * there). */
static bool never_class(enum ipaddr_class c)
{
    return c != IPADDR_PUBLIC && c != IPADDR_RESERVED;
}

/* Whether a list allows a: by address, or by a name learned for it. */
static bool list_allows(const struct net_policy *p, const struct net_rules *rs, const struct ipaddr *a,
                        const char **name)
{
    if (rules_cover_addr(rs, a))
        return true;
    for (size_t i = 0; i < p->n_learned; i++) {
        const struct net_learned *l = &p->learned[i];
        if (l->addr.family == a->family && !memcmp(l->addr.a, a->a, 16) && rules_cover_name(rs, l->name, a->port)) {
            *name = l->name;
            return true;
        }
    }
    return false;
}

bool net_policy_check(struct net_policy *p, const struct ipaddr *a, const char **name, enum net_refusal_reason *why,
                      const char **detail)
{
    *name = NULL;
    *detail = NULL;
    if (p->sources && !rules_cover_addr(&p->deny, a)) {
        /* The operator's sources: named, so reached wherever they are. */
        if (a->port == 0)
            return true;
        if (list_allows(p, &p->allow, a, name))
            return true;
    }
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    socklen_t len;
    if (a->family == AF_INET) {
        struct sockaddr_in *in = (struct sockaddr_in *)&ss;
        in->sin_family = AF_INET;
        memcpy(&in->sin_addr, a->a, 4);
        len = sizeof *in;
    } else {
        struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
        in6->sin6_family = AF_INET6;
        memcpy(&in6->sin6_addr, a->a, 16);
        len = sizeof *in6;
    }
    enum ipaddr_class c = ipaddr_classify((struct sockaddr *)&ss, len);
    if (never_class(c)) {
        *why = NET_REFUSED_NEVER_REACHABLE;
        *detail = ipaddr_class_name(c);
        return false;
    }
    for (size_t i = 0; i < p->n_own; i++)
        if (p->own[i].family == a->family && !memcmp(p->own[i].a, a->a, 16)) {
            *why = NET_REFUSED_NEVER_REACHABLE;
            *detail = "the server's own";
            return false;
        }
    if (rules_cover_addr(&p->deny, a)) {
        *why = NET_REFUSED_DENIED;
        return false;
    }
    if (a->port == 0)
        return true; /* a resolver's answer: the lists are the name's */
    const char *n1 = NULL, *n2 = NULL;
    if (!list_allows(p, &p->allow, a, &n1) || (p->has_call && !list_allows(p, &p->call, a, &n2))) {
        *why = NET_REFUSED_NOT_ALLOWED;
        return false;
    }
    *name = n1 ? n1 : n2;
    return true;
}

void net_policy_learn(struct net_policy *p, const char *name, const struct ipaddr *a)
{
    for (size_t i = 0; i < p->n_learned; i++)
        if (!strcmp(p->learned[i].name, name) && p->learned[i].addr.family == a->family &&
            !memcmp(p->learned[i].addr.a, a->a, 16))
            return;
    struct net_learned *l = &p->learned[p->next_learned];
    snprintf(l->name, sizeof l->name, "%s", name);
    l->addr = *a;
    l->addr.port = 0;
    p->next_learned = (p->next_learned + 1) % NET_LEARNED_MAX;
    if (p->n_learned < NET_LEARNED_MAX)
        p->n_learned++;
}
