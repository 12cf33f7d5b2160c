/* test-net.c: the engine of a run's network, its parts that send no packet:
 * the rules' syntax (egress_allow, egress_deny, a call's network), the
 * policy's matcher on addresses built in memory (the never-reachable
 * classes whatever the lists say, IPv4-mapped forms, the server's own
 * addresses, egress_deny, names learned from the resolver, ports, a call's
 * narrowing), the resolver's answers to queries built here, and the record
 * (its entries, their ceiling, and its way across processes). */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <unistd.h>

#include "net.h"
#include "tap.h"

static struct ipaddr addr(const char *text, uint16_t port)
{
    struct sockaddr_storage ss;
    memset(&ss, 0, sizeof ss);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    socklen_t len;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        len = sizeof *in;
    } else if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(port);
        len = sizeof *in6;
    } else {
        fprintf(stderr, "bad test address %s\n", text);
        exit(2);
    }
    struct ipaddr a;
    if (ipaddr_from_sockaddr((struct sockaddr *)&ss, len, &a) < 0)
        exit(2);
    return a;
}

static void test_rules(void)
{
    struct net_rules r;
    char err[256] = "";
    is_int(net_rules_parse("api.example.com, *.Example.COM:443 198.51.100.0/24 198.51.100.0/24:8080,"
                           "2001:db8::/32 [2001:db8::1]:443 [2001:db8:1::/48]:80 ::ffff:203.0.113.9 files.example.net.",
                           &r, err, sizeof err),
           0, "a list of every form parses (%s)", err);
    is_int((int)r.n, 9, "nine rules");
    ok(r.v[0].is_name && !r.v[0].wildcard && !strcmp(r.v[0].name, "api.example.com") && r.v[0].port == 0, "a name");
    ok(r.v[1].is_name && r.v[1].wildcard && !strcmp(r.v[1].name, "example.com") && r.v[1].port == 443,
       "a wildcard with a port, in lower case");
    ok(!r.v[2].is_name && r.v[2].family == AF_INET && r.v[2].prefix == 24 && r.v[2].port == 0, "a CIDR range");
    ok(r.v[3].prefix == 24 && r.v[3].port == 8080, "a CIDR range with a port");
    ok(r.v[4].family == AF_INET6 && r.v[4].prefix == 32, "an IPv6 range");
    ok(r.v[5].family == AF_INET6 && r.v[5].prefix == 128 && r.v[5].port == 443, "an IPv6 address with a port");
    ok(r.v[6].family == AF_INET6 && r.v[6].prefix == 48 && r.v[6].port == 80, "an IPv6 range with a port");
    ok(r.v[7].family == AF_INET && r.v[7].prefix == 32, "an IPv4-mapped address is its IPv4 one");
    ok(r.v[8].is_name && !strcmp(r.v[8].name, "files.example.net"), "a final dot is dropped");
    net_rules_free(&r);
    is_int(net_rules_parse(NULL, &r, err, sizeof err), 0, "NULL is the empty list");
    is_int(net_rules_parse("none", &r, err, sizeof err), 0, "so is none");
    is_int((int)r.n, 0, "with nothing in it");

    static const struct {
        const char *text, *why;
    } bad[] = {
        {"2130706433", "not an address"},         /* 127.0.0.1 as one number */
        {"0177.0.0.1", "not an address"},          /* in octal */
        {"0x7f.0.0.1", "not an address"},
        {"127.1", "not an address"},
        {"example.com:0", "a port is 1 to 65535"},
        {"example.com:65536", "a port is 1 to 65535"},
        {"example.com/8", "a prefix length after a name"},
        {"10.0.0.0/33", "a prefix length"},
        {"[2001:db8::1", "without its ']'"},
        {"*example.com", "a wildcard is written"},
        {"exa mple.com,-bad-.com", "not a DNS name"},
        {"under_score.ok,a..b", "not a DNS name"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        err[0] = '\0';
        ok(net_rules_parse(bad[i].text, &r, err, sizeof err) == -EINVAL && strstr(err, bad[i].why),
           "'%s' is refused: %s", bad[i].text, err);
        ok(r.v == NULL && r.n == 0, "and leaves the list empty");
    }
    ok(net_rules_parse("ok.example, \x01\xff.example", &r, err, sizeof err) == -EINVAL &&
           !strchr(err, '\x01') && !strchr(err, '\xff'),
       "the reason shows a client's bytes as ? (%s)", err);
    char many[NET_RULES_MAX * 12 + 32] = "";
    for (int i = 0; i <= NET_RULES_MAX; i++)
        snprintf(many + strlen(many), sizeof many - strlen(many), "h%d.test,", i);
    is_int(net_rules_parse(many, &r, err, sizeof err), -E2BIG, "past NET_RULES_MAX rules: E2BIG (%s)", err);
}

/* check TEXT PORT: "ok NAME" or the reason's name and detail. */
static const char *check(struct net_policy *p, const char *text, uint16_t port)
{
    static char out[128];
    struct ipaddr a = addr(text, port);
    const char *name, *detail;
    enum net_refusal_reason why;
    if (net_policy_check(p, &a, &name, &why, &detail))
        snprintf(out, sizeof out, "ok%s%s", name ? " " : "", name ? name : "");
    else
        snprintf(out, sizeof out, "%s%s%s", net_refusal_reason_name(why), detail ? " " : "", detail ? detail : "");
    return out;
}

static void test_policy(void)
{
    struct net_policy p;
    char err[256] = "";
    const char *wide = "*.lab.test, api.example:443, 198.51.100.0/24, 10.0.0.0/8, 127.0.0.0/8, 169.254.0.0/16, "
                       "100.64.0.0/10, fd00::/8, 224.0.0.0/4, 2001:db8::/32, 0.0.0.0/8";
    is_int(net_policy_init(&p, wide, "198.51.100.66, blocked.lab.test", NULL, err, sizeof err), 0, "a policy (%s)", err);
    /* Never reachable, whatever the lists say: the actual address's class. */
    is_str(check(&p, "127.0.0.1", 80), "never_reachable loopback", "loopback");
    is_str(check(&p, "::1", 80), "never_reachable loopback", "IPv6 loopback");
    is_str(check(&p, "::ffff:127.0.0.1", 80), "never_reachable loopback", "IPv4-mapped loopback");
    is_str(check(&p, "::ffff:0:127.0.0.1", 80), "never_reachable loopback", "SIIT loopback");
    is_str(check(&p, "2002:7f00:1::1", 80), "never_reachable loopback", "6to4 of the loopback");
    is_str(check(&p, "10.1.2.3", 80), "never_reachable private", "RFC 1918");
    is_str(check(&p, "192.168.1.1", 80), "never_reachable private", "RFC 1918, 192.168/16");
    is_str(check(&p, "100.64.0.1", 80), "never_reachable shared (carrier-grade NAT)", "CGNAT");
    is_str(check(&p, "169.254.169.254", 80), "never_reachable link-local", "the metadata address");
    is_str(check(&p, "::ffff:169.254.169.254", 80), "never_reachable link-local", "IPv4-mapped metadata address");
    is_str(check(&p, "fe80::1", 80), "never_reachable link-local", "IPv6 link-local");
    is_str(check(&p, "fd00::1", 80), "never_reachable unique-local", "unique-local");
    is_str(check(&p, "224.0.0.1", 80), "never_reachable multicast", "multicast");
    is_str(check(&p, "ff02::1", 80), "never_reachable multicast", "IPv6 multicast");
    is_str(check(&p, "0.0.0.0", 80), "never_reachable unspecified", "unspecified");
    is_str(check(&p, "255.255.255.255", 80), "never_reachable broadcast", "broadcast");
    /* The server's own addresses. */
    p.own[p.n_own++] = addr("198.51.100.2", 0);
    p.own[p.n_own++] = addr("2001:db8::2", 0);
    is_str(check(&p, "198.51.100.2", 8080), "never_reachable the server's own", "the server's own address");
    is_str(check(&p, "::ffff:198.51.100.2", 8080), "never_reachable the server's own", "... IPv4-mapped");
    is_str(check(&p, "2001:db8::2", 443), "never_reachable the server's own", "... IPv6");
    /* egress_deny, over the allow-list. */
    is_str(check(&p, "198.51.100.66", 80), "denied", "egress_deny");
    /* The allow-list by range, documentation addresses included. */
    is_str(check(&p, "198.51.100.7", 80), "ok", "an address of an allowed range");
    is_str(check(&p, "2001:db8:5::7", 80), "ok", "an IPv6 one");
    is_str(check(&p, "203.0.113.20", 80), "not_allowed", "an address of no rule");
    is_str(check(&p, "8.8.8.8", 53), "not_allowed", "a public address of no rule");
    /* Names: allowed as the resolver learned them, with the rule's port. */
    enum net_refusal_reason why;
    ok(net_policy_name_ok(&p, "www.lab.test", &why), "a name under a wildcard");
    ok(!net_policy_name_ok(&p, "lab.test", &why) && why == NET_REFUSED_NAME, "not the wildcard's own name");
    ok(!net_policy_name_ok(&p, "evil-lab.test", &why) && why == NET_REFUSED_NAME, "nor a name that ends the same");
    ok(!net_policy_name_ok(&p, "blocked.lab.test", &why) && why == NET_REFUSED_DENIED, "a name egress_deny names");
    ok(net_policy_name_ok(&p, "api.example", &why), "an exact name");
    ok(!net_policy_name_ok(&p, "other.example", &why) && why == NET_REFUSED_NAME, "another name");
    struct ipaddr api = addr("203.0.113.11", 0);
    net_policy_learn(&p, "api.example", &api);
    is_str(check(&p, "203.0.113.11", 443), "ok api.example", "an address the resolver gave an allowed name");
    is_str(check(&p, "::ffff:203.0.113.11", 443), "ok api.example", "... reached IPv4-mapped");
    is_str(check(&p, "203.0.113.11", 80), "not_allowed", "on a port its rule does not name");
    is_str(check(&p, "203.0.113.12", 443), "not_allowed", "its neighbour");
    /* A resolver's answer (port 0): the classes and egress_deny only. */
    is_str(check(&p, "127.0.0.1", 0), "never_reachable loopback", "an answer of the loopback is not given");
    is_str(check(&p, "203.0.113.99", 0), "ok", "a public answer is");
    net_policy_free(&p);

    /* A call's list narrows: both must allow; it cannot widen. */
    is_int(net_policy_init(&p, "*.lab.test, 198.51.100.0/24", NULL, "api.lab.test:443, 198.51.100.7, 203.0.113.0/24",
                           err, sizeof err),
           0, "a policy with a call's list (%s)", err);
    ok(net_policy_name_ok(&p, "api.lab.test", &why), "a name both allow");
    ok(!net_policy_name_ok(&p, "www.lab.test", &why), "a name the call leaves out");
    is_str(check(&p, "198.51.100.7", 80), "ok", "an address both allow");
    is_str(check(&p, "198.51.100.8", 80), "not_allowed", "an address the call leaves out");
    is_str(check(&p, "203.0.113.5", 80), "not_allowed", "an address only the call names: no widening");
    struct ipaddr w = addr("198.51.100.30", 0);
    net_policy_learn(&p, "api.lab.test", &w);
    is_str(check(&p, "198.51.100.30", 443), "ok api.lab.test", "a learned name both allow, on the call's port");
    is_str(check(&p, "198.51.100.30", 80), "not_allowed", "and not on another port");
    net_policy_free(&p);
    ok(net_policy_init(&p, "*.lab.test", NULL, "bad rule!", err, sizeof err) == -EINVAL && strstr(err, "network: "),
       "a call's bad list is refused, named (%s)", err);
    ok(net_policy_init(&p, "a..b", NULL, NULL, err, sizeof err) == -EINVAL && strstr(err, "egress_allow: "),
       "a bad egress_allow, named (%s)", err);

    /* The ring of learned names keeps the newest. */
    is_int(net_policy_init(&p, "*.t", NULL, NULL, err, sizeof err), 0, "a policy for the ring");
    char nm[32];
    for (int i = 0; i < NET_LEARNED_MAX + 10; i++) {
        struct ipaddr a = addr("203.0.113.1", 0);
        a.a[2] = (unsigned char)(i >> 8), a.a[3] = (unsigned char)i;
        snprintf(nm, sizeof nm, "h%d.t", i);
        net_policy_learn(&p, nm, &a);
    }
    is_int((int)p.n_learned, NET_LEARNED_MAX, "NET_LEARNED_MAX pairs kept");
    net_policy_free(&p);
}

/* A query for name (type qtype) into q; its length. */
static size_t query(unsigned char *q, const char *name, unsigned qtype)
{
    unsigned char hdr[12] = {0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    memcpy(q, hdr, 12);
    size_t n = 12;
    for (const char *s = name; *s;) {
        size_t l = strcspn(s, ".");
        q[n++] = (unsigned char)l;
        memcpy(q + n, s, l);
        n += l;
        s += l + (s[l] == '.');
    }
    q[n++] = 0;
    q[n++] = (unsigned char)(qtype >> 8), q[n++] = (unsigned char)qtype;
    q[n++] = 0, q[n++] = 1;
    return n;
}

static void test_dns(void)
{
    struct net_policy p;
    struct net_record rec;
    char err[128];
    unsigned char q[512], a[512];
    size_t alen = 0;
    net_record_init(&rec);
    is_int(net_policy_init(&p, "localhost, *.lab.test", NULL, NULL, err, sizeof err), 0, "a policy for the resolver");
    size_t n = query(q, "Other.Example", 1);
    is_int(net_dns_answer(&p, &rec, &p.lock, q, n, a, sizeof a, &alen), 0, "a query for a name not allowed");
    ok(a[0] == 0x12 && a[1] == 0x34 && (a[2] & 0x80) && (a[3] & 0x0f) == 3, "is answered NXDOMAIN, its id kept");
    ok(rec.n_refused == 1 && rec.refused[0].reason == NET_REFUSED_NAME && !strcmp(rec.refused[0].name, "other.example"),
       "and recorded, in lower case, as name_not_allowed");
    n = query(q, "localhost", 1);
    is_int(net_dns_answer(&p, &rec, &p.lock, q, n, a, sizeof a, &alen), 0, "an allowed name that is the loopback");
    ok((a[3] & 0x0f) == 0 && a[6] == 0 && a[7] == 0, "gets no address (DNS rebinding)");
    ok(rec.n_refused == 2 && rec.refused[1].reason == NET_REFUSED_NEVER_REACHABLE &&
           !strcmp(rec.refused[1].addr, "127.0.0.1"),
       "and the refusal names the address and why");
    n = query(q, "www.lab.test", 16);
    is_int(net_dns_answer(&p, &rec, &p.lock, q, n, a, sizeof a, &alen), 0, "a TXT query of an allowed name");
    ok((a[3] & 0x0f) != 3 && a[7] == 0, "has no answer, and is no NXDOMAIN");
    q[2] |= 0x80;
    ok(net_dns_answer(&p, &rec, &p.lock, q, n, a, sizeof a, &alen) == -EINVAL, "an answer is not a query");
    ok(net_dns_answer(&p, &rec, &p.lock, q, 7, a, sizeof a, &alen) == -EINVAL, "nor is a short message");
    n = query(q, "www.lab.test", 1);
    q[12] = 0xc0; /* a compression pointer in a question */
    is_int(net_dns_answer(&p, &rec, &p.lock, q, n, a, sizeof a, &alen), 0, "a name it cannot read");
    ok((a[3] & 0x0f) == 4, "is answered NOTIMP");
    net_policy_free(&p);
    net_record_free(&rec);
}

static void test_record(void)
{
    struct net_record rec, back;
    net_record_init(&rec);
    net_record_init(&back);
    struct ipaddr a = addr("198.51.100.7", 80), b = addr("2001:db8::7", 443);
    ok(net__record_reach(&rec, "www.lab.test", &a, 100, 20, 1) == 0 && net__record_reach(&rec, "www.lab.test", &a, 5, 1, 1) == 0,
       "two connections to one destination");
    ok(net__record_reach(&rec, NULL, &b, 7, 3, 1) == 0, "one by address");
    is_int((int)rec.n_reached, 2, "are two destinations");
    ok(rec.reached[0].bytes_in == 105 && rec.reached[0].bytes_out == 21 && rec.reached[0].connections == 2,
       "the first with both connections' bytes");
    ok(rec.bytes_in == 112 && rec.bytes_out == 24 && rec.connections == 3, "the totals");
    struct ipaddr l = addr("127.0.0.1", 8080);
    for (int i = 0; i < 3; i++)
        ok(net__record_refuse(&rec, NULL, &l, NET_REFUSED_NEVER_REACHABLE, "loopback") == 0, "a refusal (%d)", i);
    ok(rec.n_refused == 1 && rec.refused[0].count == 3 && rec.refused_connections == 3, "counted on one entry");
    for (int i = 0; i < NET_RECORD_MAX + 5; i++) {
        struct ipaddr x = addr("203.0.113.1", (uint16_t)(1 + i));
        discard(net__record_refuse(&rec, NULL, &x, NET_REFUSED_NOT_ALLOWED, NULL));
    }
    is_int((int)rec.n_refused, NET_RECORD_MAX, "refusals stop at NET_RECORD_MAX");
    is_int((int)rec.dropped, 6, "the rest are counted in dropped");
    rec.limit = "net_connections";
    int pfd[2];
    if (pipe(pfd) < 0)
        return;
    if (fork() == 0) {
        close(pfd[0]);
        _exit(net__record_write(pfd[1], &rec) == 0 ? 0 : 1);
    }
    close(pfd[1]);
    is_int(net__record_read(pfd[0], &back, util_now_ms() + 5000), 0, "the record crosses a pipe");
    close(pfd[0]);
    ok(back.n_reached == 2 && back.reached[0].name && !strcmp(back.reached[0].name, "www.lab.test") &&
           back.reached[1].name == NULL && !strcmp(back.reached[1].addr, "2001:db8::7") && back.reached[1].port == 443,
       "its destinations");
    ok(back.n_refused == NET_RECORD_MAX && back.refused[0].detail && !strcmp(back.refused[0].detail, "loopback") &&
           back.refused[0].count == 3,
       "its refusals, with their static details");
    ok(back.bytes_in == 112 && back.dropped == 6 && back.limit && !strcmp(back.limit, "net_connections"),
       "its totals and its limit");
    net_record_free(&back);
    net_record_free(&rec);
    is_str(net_mode_name(NET_MODE_HOST_UNFILTERED), "host-unfiltered", "the loud mode's name");
}

int main(void)
{
    test_rules();
    test_policy();
    test_dns();
    test_record();
    return tap_done();
}
