/* fetch_guard.c: the SSRF guard's half that needs no libcurl: whether an
 * address may be reached (common/ipaddr.c says what it is), the fetch_allow list that
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
                        enum ipaddr_class *cls)
{
    enum ipaddr_class c = ipaddr_classify(sa, len);
    if (cls)
        *cls = c;
    if (c == IPADDR_PUBLIC)
        return true;
    if (c == IPADDR_INVALID || !allow)
        return false;
    /* The address (IPv4-mapped IPv6 as the IPv4 it maps) and the port. */
    struct ipaddr ia;
    if (ipaddr_from_sockaddr(sa, len, &ia) < 0)
        return false;
    for (size_t i = 0; i < allow->n; i++) {
        const struct fetch_allow_entry *e = &allow->v[i];
        if (e->family == ia.family && ipaddr_prefix_eq(ia.a, e->addr, e->prefix) && (e->port == 0 || e->port == ia.port))
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