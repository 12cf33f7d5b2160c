/* net_dns.c: the resolver of a run whose network is on. Every DNS query of
 * the run comes here (the jail's rules send UDP port 53 of any address to
 * it): a name the policy allows is asked of the host's own resolver
 * (getaddrinfo), and answered with the addresses the policy lets through,
 * each remembered as that name's (what a connection to it is then allowed
 * under); any other name is NXDOMAIN, so that the script's library says
 * plainly that the name is unknown. One question, A or AAAA; every other
 * type of an allowed name gets an empty answer. */
#include "config.h"

#include "net.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <string.h>

#define DNS_HEADER 12
#define DNS_TYPE_A 1
#define DNS_TYPE_AAAA 28
#define DNS_CLASS_IN 1
#define DNS_RCODE_SERVFAIL 2
#define DNS_RCODE_NXDOMAIN 3
#define DNS_RCODE_NOTIMP 4
#define DNS_TTL 30          /* seconds: what the host resolver said is not ours to promise longer */
#define DNS_ANSWERS_MAX 16  /* addresses in one answer */
#define DNS_UDP_MAX 512     /* an answer without EDNS fits in this */

/* The question's name into name (lower case, no final dot) and where the
 * question ends in *end. -EINVAL for compression, a label too long or a
 * name that is not one a rule can match. */
static int read_qname(const unsigned char *q, size_t qlen, char name[NET_NAME_MAX + 1], size_t *end)
{
    size_t i = DNS_HEADER, n = 0;
    for (;;) {
        if (i >= qlen)
            return -EINVAL;
        unsigned l = q[i++];
        if (l == 0)
            break;
        if (l > 63 || i + l > qlen || n + l + 1 > NET_NAME_MAX)
            return -EINVAL;
        if (n)
            name[n++] = '.';
        for (unsigned k = 0; k < l; k++) {
            unsigned char c = q[i + k];
            if (!isalnum(c) && c != '-' && c != '_')
                return -EINVAL;
            name[n++] = (char)tolower(c);
        }
        i += l;
    }
    name[n] = '\0';
    *end = i;
    return 0;
}

static void put16(unsigned char *p, unsigned v)
{
    p[0] = (unsigned char)(v >> 8);
    p[1] = (unsigned char)v;
}

int net_dns_answer(struct net_policy *p, struct net_record *rec, pthread_mutex_t *lock, const unsigned char *q,
                   size_t qlen, unsigned char *ans, size_t anscap, size_t *anslen)
{
    char name[NET_NAME_MAX + 1];
    size_t qend;
    /* A query: QR 0, opcode 0, one question. */
    if (qlen < DNS_HEADER || anscap < DNS_UDP_MAX || (q[2] & 0x80) || (q[2] & 0x78) || q[4] != 0 || q[5] != 1)
        return -EINVAL;
    bool named = read_qname(q, qlen, name, &qend) == 0;
    if (named && qend + 4 > qlen)
        return -EINVAL;
    size_t qsize = named ? qend + 4 : 0;
    if (qsize > DNS_UDP_MAX)
        return -EINVAL;
    unsigned qtype = named ? (unsigned)(q[qend] << 8 | q[qend + 1]) : 0;
    unsigned qclass = named ? (unsigned)(q[qend + 2] << 8 | q[qend + 3]) : 0;

    memset(ans, 0, DNS_HEADER);
    memcpy(ans, q, 2);                      /* the id */
    ans[2] = (unsigned char)(0x80 | (q[2] & 0x01)); /* QR, RD as asked */
    ans[3] = 0x80;                          /* RA */
    unsigned rcode = 0, n_ans = 0;
    size_t len = DNS_HEADER;
    if (named) {
        memcpy(ans + DNS_HEADER, q + DNS_HEADER, qsize - DNS_HEADER);
        put16(ans + 4, 1);
        len = qsize;
    }
    enum net_refusal_reason why;
    bool allowed = named && net_policy_name_ok(p, name, &why);
    if (named && !allowed) {
        pthread_mutex_lock(lock);
        discard(net__record_refuse(rec, name, NULL, why, NULL));
        pthread_mutex_unlock(lock);
    }
    if (!named) {
        rcode = DNS_RCODE_NOTIMP;
    } else if (!allowed) {
        rcode = DNS_RCODE_NXDOMAIN;
    } else if (qclass == DNS_CLASS_IN && (qtype == DNS_TYPE_A || qtype == DNS_TYPE_AAAA)) {
        struct addrinfo hints = {.ai_family = qtype == DNS_TYPE_A ? AF_INET : AF_INET6, .ai_socktype = SOCK_STREAM};
        struct addrinfo *res = NULL;
        int g = getaddrinfo(name, NULL, &hints, &res);
        if (g == EAI_NONAME || g == EAI_NODATA || g == EAI_ADDRFAMILY) {
            rcode = g == EAI_NONAME ? DNS_RCODE_NXDOMAIN : 0;
        } else if (g) {
            rcode = DNS_RCODE_SERVFAIL;
        } else {
            size_t rd = qtype == DNS_TYPE_A ? 4 : 16;
            pthread_mutex_lock(lock);
            for (struct addrinfo *ai = res; ai && n_ans < DNS_ANSWERS_MAX && len + 12 + rd <= DNS_UDP_MAX;
                 ai = ai->ai_next) {
                struct ipaddr a;
                const char *nm, *detail;
                if (ipaddr_from_sockaddr(ai->ai_addr, ai->ai_addrlen, &a) < 0)
                    continue;
                a.port = 0;
                if (!net_policy_check(p, &a, &nm, &why, &detail)) {
                    /* A name that resolves to the loopback, a private or
                     * link-local address (DNS rebinding): not given. */
                    discard(net__record_refuse(rec, name, &a, why, detail));
                    continue;
                }
                if ((size_t)(a.family == AF_INET ? 4 : 16) != rd)
                    continue; /* an IPv4-mapped answer to AAAA: its A answer gives it */
                net_policy_learn(p, name, &a);
                unsigned char *r = ans + len;
                put16(r, 0xc000 | DNS_HEADER); /* the question's name */
                put16(r + 2, qtype);
                put16(r + 4, DNS_CLASS_IN);
                r[6] = 0, r[7] = 0;
                put16(r + 8, DNS_TTL);
                put16(r + 10, (unsigned)rd);
                memcpy(r + 12, a.a, rd);
                len += 12 + rd;
                n_ans++;
            }
            pthread_mutex_unlock(lock);
            freeaddrinfo(res);
        }
    }
    ans[3] |= (unsigned char)rcode;
    put16(ans + 6, n_ans);
    *anslen = len;
    return 0;
}
