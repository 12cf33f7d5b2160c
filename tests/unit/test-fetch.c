/* test-fetch.c: the SSRF guard's classifier and allowlist, URL checks and
 * redaction, the limits table. Nothing here sends a packet: the guard is
 * tested on socket addresses built in memory, never by connecting to the
 * ranges it refuses. The outcome codes of the transfers. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/un.h>

#include "fetch.h"
#include "tap.h"

/* A socket address for "a.b.c.d" or an IPv6 text, with a port. */
static socklen_t addr_of(const char *text, unsigned port, struct sockaddr_storage *ss)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, text, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        return sizeof *in;
    }
    if (inet_pton(AF_INET6, text, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        return sizeof *in6;
    }
    fprintf(stderr, "bad test address %s\n", text);
    exit(2);
}

static enum ipaddr_class cls_of(const char *text)
{
    struct sockaddr_storage ss;
    socklen_t len = addr_of(text, 80, &ss);
    return ipaddr_classify((struct sockaddr *)&ss, len);
}

static bool allowed(const char *text, unsigned port, const struct fetch_allow *a)
{
    struct sockaddr_storage ss;
    socklen_t len = addr_of(text, port, &ss);
    return fetch_addr_allowed((struct sockaddr *)&ss, len, a, NULL);
}

struct row {
    const char *addr;
    enum ipaddr_class cls;
};

static void check_rows(const struct row *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        enum ipaddr_class got = cls_of(rows[i].addr);
        ok(got == rows[i].cls, "%s is %s", rows[i].addr, ipaddr_class_name(rows[i].cls));
        if (got != rows[i].cls)
            diag("got %s", ipaddr_class_name(got));
        /* With nothing allowlisted, only public addresses pass. */
        bool pass = allowed(rows[i].addr, 443, NULL);
        if (pass != (rows[i].cls == IPADDR_PUBLIC))
            ok(0, "%s: allowed=%d without an allowlist", rows[i].addr, pass);
    }
}

static void test_ipv4(void)
{
    static const struct row rows[] = {
        {"0.0.0.0", IPADDR_UNSPECIFIED},
        {"0.1.2.3", IPADDR_UNSPECIFIED},
        {"10.0.0.1", IPADDR_PRIVATE},
        {"10.255.255.255", IPADDR_PRIVATE},
        {"100.64.0.1", IPADDR_SHARED},
        {"100.127.255.254", IPADDR_SHARED},
        {"127.0.0.1", IPADDR_LOOPBACK},
        {"127.255.255.254", IPADDR_LOOPBACK},
        {"169.254.169.254", IPADDR_LINK_LOCAL},
        {"169.254.0.1", IPADDR_LINK_LOCAL},
        {"172.16.0.1", IPADDR_PRIVATE},
        {"172.31.255.255", IPADDR_PRIVATE},
        {"192.168.0.1", IPADDR_PRIVATE},
        {"192.168.255.255", IPADDR_PRIVATE},
        {"192.0.0.8", IPADDR_RESERVED},
        {"192.0.2.1", IPADDR_RESERVED},
        {"192.88.99.1", IPADDR_RESERVED},
        {"198.18.0.1", IPADDR_RESERVED},
        {"198.19.255.255", IPADDR_RESERVED},
        {"198.51.100.7", IPADDR_RESERVED},
        {"203.0.113.9", IPADDR_RESERVED},
        {"224.0.0.1", IPADDR_MULTICAST},
        {"239.255.255.250", IPADDR_MULTICAST},
        {"240.0.0.1", IPADDR_RESERVED},
        {"254.255.255.255", IPADDR_RESERVED},
        {"255.255.255.255", IPADDR_BROADCAST},
        /* Just outside each range: public. */
        {"9.255.255.255", IPADDR_PUBLIC},
        {"11.0.0.0", IPADDR_PUBLIC},
        {"100.63.255.255", IPADDR_PUBLIC},
        {"100.128.0.0", IPADDR_PUBLIC},
        {"126.255.255.255", IPADDR_PUBLIC},
        {"128.0.0.0", IPADDR_PUBLIC},
        {"169.253.255.255", IPADDR_PUBLIC},
        {"169.255.0.0", IPADDR_PUBLIC},
        {"172.15.255.255", IPADDR_PUBLIC},
        {"172.32.0.0", IPADDR_PUBLIC},
        {"192.167.255.255", IPADDR_PUBLIC},
        {"192.169.0.0", IPADDR_PUBLIC},
        {"198.17.255.255", IPADDR_PUBLIC},
        {"198.20.0.0", IPADDR_PUBLIC},
        {"223.255.255.255", IPADDR_PUBLIC},
        {"1.1.1.1", IPADDR_PUBLIC},
        {"8.8.8.8", IPADDR_PUBLIC},
    };
    check_rows(rows, ARRAY_SIZE(rows));
}

static void test_ipv6(void)
{
    static const struct row rows[] = {
        {"::", IPADDR_UNSPECIFIED},
        {"::1", IPADDR_LOOPBACK},
        {"fe80::1", IPADDR_LINK_LOCAL},
        {"febf:ffff::1", IPADDR_LINK_LOCAL},
        {"fc00::1", IPADDR_UNIQUE_LOCAL},
        {"fd12:3456:789a::1", IPADDR_UNIQUE_LOCAL},
        {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", IPADDR_UNIQUE_LOCAL},
        {"fec0::1", IPADDR_PRIVATE},
        {"ff02::1", IPADDR_MULTICAST},
        {"ff05::1:3", IPADDR_MULTICAST},
        {"ff0e::1", IPADDR_MULTICAST},
        {"2001:db8::1", IPADDR_RESERVED},
        {"2001::1", IPADDR_RESERVED},          /* Teredo */
        {"2001:2::1", IPADDR_RESERVED},        /* benchmarking */
        {"100::1", IPADDR_RESERVED},           /* discard-only */
        {"3fff::1", IPADDR_RESERVED},          /* documentation */
        {"4000::1", IPADDR_RESERVED},          /* outside 2000::/3 */
        {"64:ff9b:1::1", IPADDR_PRIVATE},      /* local-use NAT64 */
        /* Forms that carry an IPv4 address: classified by it. */
        {"::ffff:127.0.0.1", IPADDR_LOOPBACK},
        {"::ffff:10.1.2.3", IPADDR_PRIVATE},
        {"::ffff:172.16.5.4", IPADDR_PRIVATE},
        {"::ffff:192.168.1.1", IPADDR_PRIVATE},
        {"::ffff:169.254.169.254", IPADDR_LINK_LOCAL},
        {"::ffff:100.64.1.1", IPADDR_SHARED},
        {"::ffff:0.0.0.0", IPADDR_UNSPECIFIED},
        {"::ffff:224.0.0.1", IPADDR_MULTICAST},
        {"::ffff:255.255.255.255", IPADDR_BROADCAST},
        {"::ffff:8.8.8.8", IPADDR_PUBLIC},
        {"::ffff:0:127.0.0.1", IPADDR_LOOPBACK},     /* SIIT */
        {"::ffff:0:169.254.169.254", IPADDR_LINK_LOCAL},
        {"64:ff9b::10.0.0.1", IPADDR_PRIVATE},       /* NAT64 */
        {"64:ff9b::127.0.0.1", IPADDR_LOOPBACK},
        {"64:ff9b::8.8.8.8", IPADDR_PUBLIC},
        {"2002:7f00:1::1", IPADDR_LOOPBACK},         /* 6to4 of 127.0.0.1 */
        {"2002:a9fe:a9fe::1", IPADDR_LINK_LOCAL},    /* 6to4 of 169.254.169.254 */
        {"2002:c0a8:101::1", IPADDR_PRIVATE},        /* 6to4 of 192.168.1.1 */
        {"2002:808:808::1", IPADDR_PUBLIC},
        {"::127.0.0.1", IPADDR_RESERVED},            /* IPv4-compatible, deprecated */
        {"::8.8.8.8", IPADDR_RESERVED},
        {"::2", IPADDR_RESERVED},
        /* Public. */
        {"2606:4700:4700::1111", IPADDR_PUBLIC},
        {"2a00:1450:4001:80b::200e", IPADDR_PUBLIC},
        {"2001:4860:4860::8888", IPADDR_PUBLIC},
    };
    check_rows(rows, ARRAY_SIZE(rows));
}

static void test_invalid(void)
{
    struct sockaddr_un un = {.sun_family = AF_UNIX};
    ok(ipaddr_classify((struct sockaddr *)&un, sizeof un) == IPADDR_INVALID, "AF_UNIX is not an IP address");
    ok(!fetch_addr_allowed((struct sockaddr *)&un, sizeof un, NULL, NULL), "and is refused");
    struct sockaddr_storage ss;
    addr_of("8.8.8.8", 80, &ss);
    ok(ipaddr_classify((struct sockaddr *)&ss, 4) == IPADDR_INVALID, "a truncated address is refused");
    addr_of("2001:4860:4860::8888", 80, &ss);
    ok(ipaddr_classify((struct sockaddr *)&ss, sizeof(struct sockaddr_in)) == IPADDR_INVALID,
       "an IPv6 address with an IPv4 length is refused");
    ok(ipaddr_classify(NULL, 0) == IPADDR_INVALID, "NULL is refused");
}

static void test_allowlist(void)
{
    struct fetch_allow a;
    char err[256] = "";
    int rc = fetch_allow_parse("127.0.0.1:8080, 10.0.0.0/8 192.168.1.5\t[::1]:8443,fd00::/8 "
                               "169.254.169.254/32 [fe80::1]",
                               &a, err, sizeof err);
    is_int(rc, 0, "an allowlist parses (%s)", err);
    is_int(a.n, 7, "seven entries, commas and white space between them");

    ok(allowed("127.0.0.1", 8080, &a), "address:port: that port");
    ok(!allowed("127.0.0.1", 8081, &a), "address:port: not another port");
    ok(!allowed("127.0.0.2", 8080, &a), "address:port: not another address");
    ok(allowed("::ffff:127.0.0.1", 8080, &a), "an IPv4-mapped address matches its IPv4 entry");
    ok(!allowed("::1", 8080, &a), "::1 is not 127.0.0.1");
    ok(allowed("10.0.0.1", 1, &a) && allowed("10.255.255.255", 65535, &a), "CIDR: any address, any port");
    ok(!allowed("100.64.0.1", 80, &a), "CIDR: a special address outside it stays refused");
    ok(!allowed("172.16.0.1", 80, &a), "a private range not listed stays refused");
    ok(allowed("192.168.1.5", 80, &a), "a plain address: any port");
    ok(!allowed("192.168.1.6", 80, &a), "but only that address");
    ok(allowed("::1", 8443, &a), "[::1]:8443");
    ok(!allowed("::1", 8080, &a), "[::1] on another port");
    ok(allowed("fd12::1", 80, &a), "fd00::/8 covers fd12::1");
    ok(!allowed("fc00::1", 80, &a), "but not fc00::1");
    ok(allowed("169.254.169.254", 80, &a), "a /32 is the one address");
    ok(!allowed("169.254.169.253", 80, &a), "and not its neighbour");
    ok(allowed("fe80::1", 80, &a), "[fe80::1] without a port");
    ok(allowed("8.8.8.8", 80, &a) && allowed("2606:4700:4700::1111", 443, &a), "public addresses pass as ever");
    fetch_allow_free(&a);

    is_int(fetch_allow_parse("10.1.2.3/8", &a, err, sizeof err), 0, "host bits past the prefix are accepted");
    ok(allowed("10.200.0.1", 80, &a), "10.1.2.3/8 is 10/8");
    fetch_allow_free(&a);
    is_int(fetch_allow_parse("::1", &a, err, sizeof err), 0, "a bare ::1");
    ok(allowed("::1", 1234, &a), "any port");
    fetch_allow_free(&a);
    is_int(fetch_allow_parse("0.0.0.0/0", &a, err, sizeof err), 0, "0.0.0.0/0");
    ok(allowed("10.0.0.1", 80, &a) && allowed("127.0.0.1", 80, &a), "allows every IPv4 address");
    ok(!allowed("::1", 80, &a), "and no IPv6 one");
    fetch_allow_free(&a);
    is_int(fetch_allow_parse("  , ,", &a, err, sizeof err), 0, "separators only: an empty list");
    is_int(a.n, 0, "no entries");
    fetch_allow_free(&a);
    is_int(fetch_allow_parse("", &a, err, sizeof err), 0, "an empty list");
    ok(!allowed("127.0.0.1", 80, &a), "allows nothing special");
    fetch_allow_free(&a);

    static const char *const bad[] = {
        "localhost", "example.test", "10.0.0.0/33", "::/129", "127.0.0.1:0", "127.0.0.1:70000", "127.0.0.1:",
        "[::1", "[::1]x", "[::1]:", "10.0.0.0/8:80", "10.0.0.0/", "1.2.3", "1.2.3.4.5", "256.0.0.1",
        "127.0.0.1:80x", "[127.0.0.1]:80", "10.0.0.0/-1", "10.0.0.0/+8",
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        err[0] = '\0';
        rc = fetch_allow_parse(bad[i], &a, err, sizeof err);
        ok(rc == -EINVAL && a.n == 0 && strstr(err, "fetch_allow") && strstr(err, bad[i]),
           "'%s' is refused, named in the error", bad[i]);
        fetch_allow_free(&a);
    }
    /* More entries than FETCH_ALLOW_MAX. */
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    for (int i = 0; i <= FETCH_ALLOW_MAX; i++)
        discard(dbuf_printf(&b, "10.0.%d.%d ", i / 256, i % 256));
    rc = fetch_allow_parse(b.data, &a, err, sizeof err);
    ok(rc == -E2BIG && a.n == 0, "more than %d entries are refused (%s)", FETCH_ALLOW_MAX, err);
    fetch_allow_free(&a);
    dbuf_free(&b);
}

static void test_redact(void)
{
    char out[256];
    fetch_url_redact("https://bucket.example.test/key/file.csv?X-Amz-Signature=abc&X-Amz-Credential=def", out,
                     sizeof out);
    is_str(out, "https://bucket.example.test/key/file.csv", "the query is gone");
    fetch_url_redact("http://user:secret@host.test:8080/p#frag?x", out, sizeof out);
    is_str(out, "http://host.test:8080/p", "user info and fragment are gone");
    fetch_url_redact("http://a@b@host.test/p", out, sizeof out);
    is_str(out, "http://host.test/p", "every '@' of the user info");
    fetch_url_redact("http://host.test/a@b", out, sizeof out);
    is_str(out, "http://host.test/a@b", "an '@' in the path stays");
    fetch_url_redact("http://host.test?sig=1", out, sizeof out);
    is_str(out, "http://host.test", "a query right after the host");
    fetch_url_redact("http://host.test/a b\n\x01\xff", out, sizeof out);
    is_str(out, "http://host.test/a%20b%0A%01%FF", "spaces, controls and bytes past ASCII are escaped");
    fetch_url_redact("no scheme?token=1", out, sizeof out);
    is_str(out, "no%20scheme", "not a URL: still cut at '?'");
    char small[16];
    fetch_url_redact("http://host.test/a/very/long/path", small, sizeof small);
    ok(strlen(small) < sizeof small && strstr(small, "...") != NULL, "a long URL is cut with '...' (%s)", small);
}

static void test_url_check(void)
{
    char err[512] = "";
    int rc = fetch_url_check("http://example.test/x.csv", err, sizeof err);
    if (rc == -ENOSYS) {
        diag("libcurl cannot be loaded: %s", err);
        ok(0, "libcurl loads (%s)", LIBCURL_SONAME);
        return;
    }
    is_int(rc, 0, "an http URL is fine (%s)", rc ? err : "");
    is_int(fetch_url_check("HTTPS://example.test:8443/a?b=c", err, sizeof err), 0, "https, any case, a port, a query");
    static const char *const bad[] = {
        "ftp://example.test/x", "file:///etc/passwd", "gopher://example.test/", "dict://example.test/",
        "ldap://example.test/", "example.test/x", "//example.test/x", "http://", "http:///path",
        "http://exa mple.test/", "http://example.test/a\nb", "", "javascript:alert(1)", "http://[::1/",
        "scp://example.test/x", "telnet://example.test",
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
        err[0] = '\0';
        rc = fetch_url_check(bad[i], err, sizeof err);
        char shown[128];
        fetch_url_redact(bad[i], shown, sizeof shown);
        ok(rc == -EINVAL && err[0], "'%s' is refused: %s", shown, err);
    }
    /* A long URL. */
    size_t n = FETCH_URL_MAX + 10;
    char *u = malloc(n + 1);
    memcpy(u, "http://example.test/", 20);
    memset(u + 20, 'a', n - 20);
    u[n] = '\0';
    ok(fetch_url_check(u, err, sizeof err) == -EINVAL && strstr(err, "longer"), "a URL past %d bytes: %s",
       FETCH_URL_MAX, err);
    free(u);
    rc = fetch_url_check("ftp://example.test/x?secret=1", err, sizeof err);
    ok(rc == -EINVAL && !strstr(err, "secret"), "the query is not in the error: %s", err);
}

static void test_limits(void)
{
    struct fetch_limits l;
    fetch_limits_default(&l);
    is_int(l.fetch_bytes, 100ll << 20, "fetch_bytes defaults to 100 MiB");
    is_int(l.upload_bytes, 20ll << 20, "upload_bytes defaults to 20 MiB");
    is_int(l.connect_timeout_ms, 10000, "fetch_connect_timeout 10 s");
    is_int(l.timeout_ms, 120000, "fetch_timeout 120 s");
    is_int(l.redirects, 5, "fetch_redirects 5");
    is_int(l.mount_files, 1000, "mount_files 1000");
    is_int(l.mount_bytes, 1ll << 30, "mount_bytes 1 GiB");
    int bad = 0;
    for (size_t i = 0; i < fetch_limit_defs_n; i++) {
        const struct key_def *d = &fetch_limit_defs[i];
        if (fetch_limit_find(d->key) != d || d->dflt < d->min || d->dflt > d->max || !d->doc || !*d->doc)
            bad++;
        if (exec_limit_find(d->key))
            bad++; /* one namespace of keys */
    }
    is_int(bad, 0, "every row: found by its key, default in range, a breach line, no clash with exec's");
    ok(fetch_limit_find("nope") == NULL, "an unknown key");
}

/* FETCH_E_HTTP is apart from every errno, and has a name for logs. */
static void test_outcomes(void)
{
    ok(FETCH_E_HTTP < -4095, "FETCH_E_HTTP is below every errno");
    ok(FETCH_E_HTTP != -EPROTO, "an HTTP error status is not -EPROTO");
    ok(strstr(fetch_strerror(FETCH_E_HTTP), "HTTP") != NULL, "fetch_strerror names FETCH_E_HTTP");
    is_str(fetch_strerror(-EFBIG), strerror(EFBIG), "fetch_strerror of an errno is strerror's");
}

int main(void)
{
    test_outcomes();
    test_ipv4();
    test_ipv6();
    test_invalid();
    test_allowlist();
    test_redact();
    test_url_check();
    test_limits();
    return tap_done();
}
