/* net_rules.c: the egress policy's lists as text and as rules (egress_allow,
 * egress_deny, a call's network), and the names of the modes and reasons.
 * What a rule matches is net_policy.c's. */
#include "config.h"

#include "net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *net_mode_name(enum net_mode m)
{
    switch (m) {
    case NET_MODE_OFF: return "off";
    case NET_MODE_ON: return "on";
    case NET_MODE_HOST_UNFILTERED: return "host-unfiltered";
    }
    return "?";
}

const char *net_refusal_reason_name(enum net_refusal_reason r)
{
    switch (r) {
    case NET_REFUSED_NOT_ALLOWED: return "not_allowed";
    case NET_REFUSED_NAME: return "name_not_allowed";
    case NET_REFUSED_NEVER_REACHABLE: return "never_reachable";
    case NET_REFUSED_DENIED: return "denied";
    case NET_REFUSED_LIMIT: return "limit";
    case NET_REFUSED_UNREACHABLE: return "unreachable";
    }
    return "?";
}

void net_rules_free(struct net_rules *r)
{
    free(r->v);
    r->v = NULL;
    r->n = 0;
}

static int parse_number(const char *s, unsigned long max, unsigned long *v)
{
    char *end;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    *v = strtoul(s, &end, 10);
    return errno || *end || *v > max ? -EINVAL : 0;
}

/* A DNS name as a rule holds it: labels of letters, digits, '-' and '_'
 * (1 to 63 bytes, not starting or ending with '-'), at least one letter
 * somewhere, so that no run of digits and dots passes for a name. */
static bool name_ok(const char *s)
{
    size_t label = 0, len = strlen(s);
    bool alpha = false;
    if (!len || len > NET_NAME_MAX)
        return false;
    for (const char *p = s;; p++) {
        if (*p == '.' || !*p) {
            if (!label || label > 63 || p[-1] == '-' || p[-(ptrdiff_t)label] == '-')
                return false;
            if (!*p)
                return alpha;
            label = 0;
            continue;
        }
        if (!isalnum((unsigned char)*p) && *p != '-' && *p != '_')
            return false;
        alpha |= isalpha((unsigned char)*p) || *p == '-' || *p == '_';
        label++;
    }
}

/* One rule, tok writable; its reason in why: "name", "*.name",
 * "a.b.c.d[/n]", "x::y[/n]", each with ":port" ("[x::y/n]:port" for
 * IPv6). */
static int parse_rule(char *tok, struct net_rule *e, const char **why)
{
    char *host = tok, *port = NULL, *prefix = NULL;
    memset(e, 0, sizeof *e);
    if (tok[0] == '[') {
        char *close = strchr(tok, ']');
        if (!close)
            return *why = "an IPv6 address without its ']'", -EINVAL;
        *close = '\0';
        host = tok + 1;
        if (close[1] == ':')
            port = close + 2;
        else if (close[1])
            return *why = "text after ']' (a port is written [address]:port)", -EINVAL;
        e->family = AF_INET6;
    } else if (strchr(tok, ':') && strchr(strchr(tok, ':') + 1, ':')) {
        e->family = AF_INET6; /* a bare IPv6 address or range: a port needs [ ] */
    } else {
        char *colon = strchr(tok, ':');
        if (colon) {
            *colon = '\0';
            port = colon + 1;
        }
    }
    char *slash = strchr(host, '/');
    if (slash) {
        *slash = '\0';
        prefix = slash + 1;
    }
    unsigned long v;
    if (port && (parse_number(port, 65535, &v) < 0 || v == 0))
        return *why = "a port is 1 to 65535", -EINVAL;
    e->port = port ? (uint16_t)v : 0;
    if (!e->family) {
        if (inet_pton(AF_INET, host, e->addr) == 1)
            e->family = AF_INET;
        else if (strspn(host, "0123456789.") == strlen(host) ||
                 (host[0] == '0' && (host[1] == 'x' || host[1] == 'X')))
            return *why = "not an address (write IPv4 as four decimal numbers: a.b.c.d)", -EINVAL;
    }
    if (e->family == AF_INET6 && inet_pton(AF_INET6, host, e->addr) != 1)
        return *why = "not an IPv6 address", -EINVAL;
    if (e->family) {
        static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
        unsigned max = e->family == AF_INET ? 32 : 128;
        if (prefix && parse_number(prefix, max, &v) < 0)
            return *why = "a prefix length is 0 to 32 (IPv4) or 128 (IPv6)", -EINVAL;
        e->prefix = prefix ? (unsigned)v : max;
        if (e->family == AF_INET6 && !memcmp(e->addr, mapped, 12) && e->prefix >= 96) {
            memmove(e->addr, e->addr + 12, 4); /* ::ffff:a.b.c.d/n is a.b.c.d/(n-96) */
            memset(e->addr + 4, 0, 12);
            e->family = AF_INET;
            e->prefix -= 96;
        }
        return 0;
    }
    if (prefix)
        return *why = "a prefix length after a name", -EINVAL;
    e->is_name = true;
    if (host[0] == '*') {
        if (host[1] != '.')
            return *why = "a wildcard is written *.name", -EINVAL;
        e->wildcard = true;
        host += 2;
    }
    size_t n = strlen(host);
    if (n && host[n - 1] == '.')
        host[--n] = '\0';
    if (!name_ok(host))
        return *why = "not a DNS name", -EINVAL;
    for (size_t i = 0; i <= n; i++)
        e->name[i] = (char)tolower((unsigned char)host[i]);
    return 0;
}

int net_rules_parse(const char *text, struct net_rules *r, char *err, size_t errlen)
{
    r->v = NULL;
    r->n = 0;
    if (!text || !strcmp(text, "none"))
        return 0;
    cleanup_free char *copy = strdup(text);
    if (!copy) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = 0;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ", \t\n", &save); tok; tok = strtok_r(NULL, ", \t\n", &save)) {
        if (r->n == NET_RULES_MAX) {
            snprintf(err, errlen, "more than %d rules", NET_RULES_MAX);
            rc = -E2BIG;
            goto out;
        }
        if (!r->n) {
            r->v = calloc(NET_RULES_MAX, sizeof *r->v);
            if (!r->v) {
                snprintf(err, errlen, "out of memory");
                rc = -ENOMEM;
                goto out;
            }
        }
        char shown[80];
        snprintf(shown, sizeof shown, "%s", tok);
        const char *why = NULL;
        if (parse_rule(tok, &r->v[r->n], &why) < 0) {
            for (char *c = shown; *c; c++)
                if (*c < 0x20 || *c > 0x7e || *c == '\'')
                    *c = '?'; /* a client's text, shown back in one line */
            snprintf(err, errlen, "bad rule '%s': %s", shown, why);
            rc = -EINVAL;
            goto out;
        }
        r->n++;
    }
out:
    if (rc < 0)
        net_rules_free(r);
    return rc;
}
