/* fetch.c: downloads, uploads and session mounts over libcurl.
 *
 * Theory of operation. Every transfer is one easy handle, made for it and
 * thrown away, set up by setup_handle() with the same rules: http and https
 * only (for redirects too), no proxy whatever the environment says, no
 * .netrc, no cookies, no decompression (what the server sends is what is
 * counted), connect and total timeouts, a bounded number of redirects.
 *
 * The SSRF guard sits in CURLOPT_OPENSOCKETFUNCTION: libcurl calls it with
 * the resolved address it is about to connect to, for every connection it
 * makes (each redirect's too, each address happy eyeballs tries). The
 * address is checked there and the socket is refused (CURL_SOCKET_BAD)
 * when it is not a public one and fetch_allow does not list it. Checking
 * the connection itself, not a name resolved beforehand, is what makes a
 * second DNS answer (rebinding) useless: there is no second lookup between
 * the check and the connect.
 *
 * Sizes are counted in the write (download) and read (upload) callbacks,
 * so a cap holds mid-stream whatever Content-Length said; a Content-Length
 * over the cap fails before the body (CURLOPT_MAXFILESIZE_LARGE). A
 * download lands in a temporary file next to its final name and is renamed
 * over it only when complete and fsync'd.
 *
 * libcurl is loaded with dlopen on first use (curl_api()): linked the usual
 * way, it and what it pulls in (TLS, IDN, SSH, LDAP, ...) cost every start
 * of the program, CLI runs that never fetch anything included. */
#include "config.h"

#define CURL_DISABLE_DEPRECATION 1 /* the bitmask options, for libcurl < 7.85 */
#define CURL_DISABLE_TYPECHECK 1   /* we call through pointers */
#include "fetch.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "artifacts.h"
#include "sha256.h"
#include "workspace.h"

#define FETCH_HEAD 4096            /* first bytes kept for the MIME sniffing */
#define FETCH_MOUNT_DEPTH 64       /* directory levels fetch_mounts_chmod_ro walks */
#define FETCH_MOUNTS FETCH_MOUNTS_DIR
#define FETCH_RECORD "mounts.json" /* in the session directory */
#define FETCH_LOCK "mounts.lock"

void fetch_config_init(struct fetch_config *c)
{
    memset(c, 0, sizeof *c);
    fetch_limits_default(&c->limits);
}

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
        if (a->n == cap) {
            cap = cap ? cap * 2 : 8;
            struct fetch_allow_entry *v = realloc(a->v, cap * sizeof *v);
            if (!v) {
                fetch_allow_free(a);
                snprintf(err, errlen, "fetch_allow: out of memory");
                return -ENOMEM;
            }
            a->v = v;
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
static void describe_sockaddr(const struct sockaddr *sa, socklen_t len, char *out, size_t n)
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

/* libcurl, loaded on first use. */
#define CURL_FUNCS(X)                                                                                  \
    X(global_init) X(easy_init) X(easy_setopt) X(easy_perform) X(easy_getinfo) X(easy_cleanup)        \
    X(easy_strerror) X(version_info) X(url) X(url_set) X(url_get) X(url_cleanup) X(free)

struct curl_api {
#define X(f) __typeof__(curl_##f) *f;
    CURL_FUNCS(X)
#undef X
    bool protocols_str; /* CURLOPT_PROTOCOLS_STR is there (7.85) */
};

static const struct curl_api *curl_api(char *err, size_t errlen)
{
    static struct curl_api api;
    static bool loaded;
    if (loaded)
        return &api;
    void *h = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "cannot load %s: %s", LIBCURL_SONAME, dlerror());
        return NULL;
    }
#define X(f)                                                                   \
    if (!(*(void **)&api.f = dlsym(h, "curl_" #f))) {                          \
        snprintf(err, errlen, "%s lacks curl_%s", LIBCURL_SONAME, #f);         \
        return NULL;                                                           \
    }
    CURL_FUNCS(X)
#undef X
    /* Once per process, before any handle. Not thread-safe before 7.84;
     * this program makes no threads of its own. */
    if (api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(err, errlen, "curl_global_init failed");
        return NULL;
    }
    const curl_version_info_data *v = api.version_info(CURLVERSION_NOW);
    api.protocols_str = v && v->version_num >= 0x075500;
    loaded = true;
    return &api;
}

static bool scheme_ok(const char *url)
{
    return !strncasecmp(url, "http://", 7) || !strncasecmp(url, "https://", 8);
}

int fetch_url_check(const char *url, char *err, size_t errlen)
{
    char shown[256];
    fetch_url_redact(url, shown, sizeof shown);
    size_t n = strlen(url);
    if (n == 0) {
        snprintf(err, errlen, "the URL is empty");
        return -EINVAL;
    }
    if (n > FETCH_URL_MAX) {
        snprintf(err, errlen, "%s: the URL is longer than %d bytes", shown, FETCH_URL_MAX);
        return -EINVAL;
    }
    if (!scheme_ok(url)) {
        snprintf(err, errlen, "%s: only http:// and https:// URLs can be fetched", shown);
        return -EINVAL;
    }
    const char *auth = strstr(url, "://") + 3;
    if (!*auth || *auth == '/' || *auth == '?' || *auth == '#') {
        snprintf(err, errlen, "%s: the URL has no host", shown);
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)url[i];
        if (ch <= 0x20 || ch == 0x7f) {
            snprintf(err, errlen, "%s: the URL holds a space or a control character", shown);
            return -EINVAL;
        }
    }
    char why[128];
    const struct curl_api *c = curl_api(why, sizeof why);
    if (!c) {
        snprintf(err, errlen, "%s: %s", shown, why);
        return -ENOSYS;
    }
    CURLU *u = c->url();
    if (!u) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    char *host = NULL;
    int rc = 0;
    if (c->url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK) {
        snprintf(err, errlen, "%s: not a valid URL", shown);
        rc = -EINVAL;
    } else if (c->url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !host || !*host) {
        snprintf(err, errlen, "%s: the URL has no host", shown);
        rc = -EINVAL;
    }
    if (host)
        c->free(host);
    c->url_cleanup(u);
    return rc;
}

/* ------------------------------------------------------------ transfers */

/* One transfer's state, shared by the callbacks. */
struct xfer {
    const struct fetch_config *cfg;
    char errbuf[CURL_ERROR_SIZE];
    /* the guard */
    bool refused;
    char refused_what[160];
    /* download */
    int fd;                   /* the temporary file, or -1 */
    struct dbuf *mem;         /* or memory */
    uint64_t max;             /* cap of this download */
    const char *cap_name;     /* the key that set it */
    uint64_t bytes;
    struct sha256 hash;
    unsigned char head[FETCH_HEAD];
    size_t head_len;
    bool over_cap;
    bool cancelled;           /* the progress callback said stop */
    int local_errno;          /* a write to the file failed */
    /* upload */
    int in_fd;
    uint64_t in_size, sent;
};

static curl_socket_t open_socket(void *ctx, curlsocktype purpose, struct curl_sockaddr *a)
{
    struct xfer *x = ctx;
    struct sockaddr_storage ss;
    socklen_t len = a->addrlen > sizeof ss ? (socklen_t)sizeof ss : (socklen_t)a->addrlen;
    memset(&ss, 0, sizeof ss);
    memcpy(&ss, &a->addr, len);
    enum fetch_addr_class cls = FETCH_ADDR_INVALID;
    if (purpose != CURLSOCKTYPE_IPCXN ||
        !fetch_addr_allowed((const struct sockaddr *)&ss, len, x->cfg->allow, &cls)) {
        char where[96];
        describe_sockaddr((const struct sockaddr *)&ss, len, where, sizeof where);
        if (cls == FETCH_ADDR_INVALID)
            snprintf(x->refused_what, sizeof x->refused_what, "%s is not an IP address", where);
        else
            snprintf(x->refused_what, sizeof x->refused_what, "%s is a%s %s address", where,
                     cls == FETCH_ADDR_UNSPECIFIED ? "n" : "", fetch_addr_class_name(cls));
        x->refused = true;
        log_msg(LOG_LVL_INFO, "fetch: refused a connection to %s (%s)", where, fetch_addr_class_name(cls));
        return CURL_SOCKET_BAD;
    }
    int s = socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
    return s < 0 ? CURL_SOCKET_BAD : s;
}

/* A new response begins (a redirect's, a 100 Continue's, the final one):
 * whatever an earlier one wrote is not the file. */
static int reset_body(struct xfer *x)
{
    if (x->bytes == 0)
        return 0;
    if (x->fd >= 0) {
        if (ftruncate(x->fd, 0) < 0 || lseek(x->fd, 0, SEEK_SET) < 0)
            return -errno;
    } else if (x->mem) {
        x->mem->len = 0;
        if (x->mem->data)
            x->mem->data[0] = '\0';
    }
    x->bytes = 0;
    x->head_len = 0;
    sha256_init(&x->hash);
    return 0;
}

static size_t on_header(char *p, size_t size, size_t n, void *ctx)
{
    struct xfer *x = ctx;
    size_t len = size * n;
    if (len >= 5 && !memcmp(p, "HTTP/", 5)) {
        int rc = reset_body(x);
        if (rc < 0) {
            x->local_errno = -rc;
            return 0;
        }
    }
    return len;
}

static size_t on_write(char *p, size_t size, size_t n, void *ctx)
{
    struct xfer *x = ctx;
    size_t len = size * n;
    if (x->bytes + len > x->max || x->bytes + len < x->bytes) {
        x->over_cap = true;
        return 0; /* CURLE_WRITE_ERROR: the cap holds mid-stream */
    }
    int rc = 0;
    if (x->fd >= 0)
        rc = util_write_all(x->fd, p, len);
    else if (x->mem)
        rc = dbuf_append(x->mem, p, len);
    if (rc < 0) {
        x->local_errno = -rc;
        return 0;
    }
    sha256_update(&x->hash, p, len);
    if (x->head_len < sizeof x->head) {
        size_t k = sizeof x->head - x->head_len;
        if (k > len)
            k = len;
        memcpy(x->head + x->head_len, p, k);
        x->head_len += k;
    }
    x->bytes += len;
    return len;
}

/* Upload body: from the file at in_fd, at most in_size bytes (what was
 * announced), never past upload_bytes. */
static size_t on_read(char *p, size_t size, size_t n, void *ctx)
{
    struct xfer *x = ctx;
    size_t want = size * n;
    if (x->sent >= x->in_size)
        return 0;
    if (want > x->in_size - x->sent)
        want = (size_t)(x->in_size - x->sent);
    if (x->sent + want > x->cfg->limits.upload_bytes) {
        x->over_cap = true;
        return CURL_READFUNC_ABORT;
    }
    for (;;) {
        ssize_t r = pread(x->in_fd, p, want, (off_t)x->sent);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            x->local_errno = errno;
            return CURL_READFUNC_ABORT;
        }
        if (r == 0) {
            x->local_errno = EIO; /* the file shrank under us */
            return CURL_READFUNC_ABORT;
        }
        x->sent += (uint64_t)r;
        return (size_t)r;
    }
}

/* A redirect of a PUT sends the body again from the start. */
static int on_seek(void *ctx, curl_off_t off, int origin)
{
    struct xfer *x = ctx;
    if (origin != SEEK_SET || off < 0 || (uint64_t)off > x->in_size)
        return CURL_SEEKFUNC_CANTSEEK;
    x->sent = (uint64_t)off;
    return CURL_SEEKFUNC_OK;
}

static size_t discard_body(char *p, size_t size, size_t n, void *ctx)
{
    (void)p;
    (void)ctx;
    return size * n;
}

static int on_progress(void *ctx, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
    struct xfer *x = ctx;
    bool up = x->in_fd >= 0;
    curl_off_t done = up ? ulnow : dlnow, total = up ? ultotal : dltotal;
    if (x->cfg->progress(x->cfg->progress_ctx, done > 0 ? (uint64_t)done : 0, total > 0 ? (uint64_t)total : 0)) {
        x->cancelled = true;
        return 1; /* CURLE_ABORTED_BY_CALLBACK */
    }
    return 0;
}

/* The rules every handle gets. */
static int setup_handle(const struct curl_api *c, CURL *h, struct xfer *x, const char *url)
{
    const struct fetch_limits *l = &x->cfg->limits;
    char ua[64];
    snprintf(ua, sizeof ua, "runmyscript/%s", PACKAGE_VERSION);
    CURLcode e = CURLE_OK;
#define SET(opt, val)                              \
    do {                                           \
        if (e == CURLE_OK)                         \
            e = c->easy_setopt(h, opt, val);       \
    } while (0)
    SET(CURLOPT_URL, url);
    SET(CURLOPT_ERRORBUFFER, x->errbuf);
    SET(CURLOPT_NOSIGNAL, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
    if (c->protocols_str) {
        SET(CURLOPT_PROTOCOLS_STR, "http,https");
        SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    } else
#endif
    {
        SET(CURLOPT_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
        SET(CURLOPT_REDIR_PROTOCOLS, (long)(CURLPROTO_HTTP | CURLPROTO_HTTPS));
    }
    /* No proxy, whatever http_proxy, HTTPS_PROXY or ALL_PROXY say: a proxy
     * would connect for us, to addresses the guard never sees. */
    SET(CURLOPT_PROXY, "");
    SET(CURLOPT_NOPROXY, "*");
    SET(CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
    SET(CURLOPT_FOLLOWLOCATION, l->redirects > 0 ? 1L : 0L);
    SET(CURLOPT_MAXREDIRS, (long)l->redirects);
    SET(CURLOPT_CONNECTTIMEOUT_MS, (long)l->connect_timeout_ms);
    SET(CURLOPT_TIMEOUT_MS, (long)l->timeout_ms);
    SET(CURLOPT_OPENSOCKETFUNCTION, open_socket);
    SET(CURLOPT_OPENSOCKETDATA, x);
    SET(CURLOPT_USERAGENT, x->cfg->user_agent ? x->cfg->user_agent : ua);
    SET(CURLOPT_HEADERFUNCTION, on_header);
    SET(CURLOPT_HEADERDATA, x);
    if (x->cfg->progress) {
        SET(CURLOPT_XFERINFOFUNCTION, on_progress);
        SET(CURLOPT_XFERINFODATA, x);
        SET(CURLOPT_NOPROGRESS, 0L);
    }
#undef SET
    return e == CURLE_OK ? 0 : -EINVAL;
}

/* Scrubs what libcurl's message may echo of a URL: from each '?' to the
 * next space. */
static void scrub(char *s)
{
    char *q;
    while ((q = strchr(s, '?'))) {
        size_t k = strcspn(q, " \t");
        memmove(q, q + k, strlen(q + k) + 1);
    }
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == '.'))
        s[--n] = '\0';
}

/* Makes the one-line error of a failed transfer and its return code. */
static int transfer_error(const struct curl_api *c, CURL *h, struct xfer *x, CURLcode e, const char *verb,
                          const char *url, char *err, size_t errlen)
{
    char shown[512], eff_shown[300] = "";
    fetch_url_redact(url, shown, sizeof shown);
    char *eff = NULL;
    if (c->easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &eff) == CURLE_OK && eff && strcmp(eff, url)) {
        char tmp[256];
        fetch_url_redact(eff, tmp, sizeof tmp);
        snprintf(eff_shown, sizeof eff_shown, " (redirected to %s)", tmp);
    }
    long status = 0;
    c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    char cap[32];
    util_human_size(x->max, cap, sizeof cap);
    scrub(x->errbuf);
    const char *msg = x->errbuf[0] ? x->errbuf : c->easy_strerror(e);
    const struct fetch_limits *l = &x->cfg->limits;

    /* Every address refused: libcurl says it could not connect. */
    if (x->refused && e == CURLE_COULDNT_CONNECT) {
        snprintf(err, errlen, "%s %s%s: refused: %s; only public addresses are fetched unless fetch_allow lists them",
                 verb, shown, eff_shown, x->refused_what);
        return -EACCES;
    }
    if (x->cancelled) {
        snprintf(err, errlen, "%s %s: cancelled", verb, shown);
        return -ECANCELED;
    }
    if (x->over_cap || e == CURLE_FILESIZE_EXCEEDED) {
        snprintf(err, errlen, "%s %s%s: larger than %s (%s)", verb, shown, eff_shown, x->cap_name, cap);
        return -EFBIG;
    }
    if (x->local_errno) {
        snprintf(err, errlen, "%s %s: %s the local file: %s", verb, shown,
                 x->in_fd >= 0 ? "reading" : "writing", strerror(x->local_errno));
        return -x->local_errno;
    }
    char secs[32];
    switch (e) {
    case CURLE_HTTP_RETURNED_ERROR:
        snprintf(err, errlen, "%s %s%s: HTTP %ld", verb, shown, eff_shown, status);
        return -EPROTO;
    case CURLE_OPERATION_TIMEDOUT: {
        /* libcurl says "Connection timed out" or "Resolving timed out" for
         * the connect phase, "Operation timed out" past it. */
        bool total = strstr(x->errbuf, "Operation timed out") != NULL;
        snprintf(secs, sizeof secs, "%.3g s",
                 (double)(total ? l->timeout_ms : l->connect_timeout_ms) / 1000.0);
        snprintf(err, errlen, "%s %s%s: timed out (%s = %s)", verb, shown, eff_shown,
                 total ? "fetch_timeout" : "fetch_connect_timeout", secs);
        return -ETIMEDOUT;
    }
    case CURLE_TOO_MANY_REDIRECTS:
        snprintf(err, errlen, "%s %s%s: more than %llu redirects (fetch_redirects)", verb, shown, eff_shown,
                 (unsigned long long)l->redirects);
        return -ELOOP;
    case CURLE_UNSUPPORTED_PROTOCOL:
        snprintf(err, errlen, "%s %s: a redirect to a scheme other than http or https was refused", verb, shown);
        return -EPROTONOSUPPORT;
    case CURLE_URL_MALFORMAT:
        snprintf(err, errlen, "%s %s%s: not a valid URL", verb, shown, eff_shown);
        return -EINVAL;
    case CURLE_COULDNT_RESOLVE_HOST:
        snprintf(err, errlen, "%s %s%s: cannot resolve the host (curl error %d)", verb, shown, eff_shown, (int)e);
        return -EHOSTUNREACH;
    case CURLE_COULDNT_CONNECT:
        snprintf(err, errlen, "%s %s%s: %s (curl error %d)", verb, shown, eff_shown, msg, (int)e);
        return -ECONNREFUSED;
    default:
        snprintf(err, errlen, "%s %s%s: %s (curl error %d)", verb, shown, eff_shown, msg, (int)e);
        return -EIO;
    }
}

/* libcurl (loaded on first use) and a new easy handle: 0, or -ENOSYS /
 * -ENOMEM with the reason in err. */
static int curl_open(const struct curl_api **c, CURL **h, char *err, size_t errlen)
{
    char why[160];
    *c = curl_api(why, sizeof why);
    if (!*c) {
        snprintf(err, errlen, "%s", why);
        return -ENOSYS;
    }
    *h = (*c)->easy_init();
    if (!*h) {
        snprintf(err, errlen, "curl_easy_init failed");
        return -ENOMEM;
    }
    return 0;
}

/* A download into x->fd or x->mem. */
static int run_download(const struct fetch_config *cfg, const char *url, struct xfer *x, char *err, size_t errlen)
{
    int rc = fetch_url_check(url, err, errlen);
    if (rc < 0)
        return rc;
    const struct curl_api *c;
    CURL *h;
    rc = curl_open(&c, &h, err, errlen);
    if (rc < 0)
        return rc;
    sha256_init(&x->hash);
    rc = setup_handle(c, h, x, url);
    CURLcode e = CURLE_OK;
    if (rc == 0) {
        e = c->easy_setopt(h, CURLOPT_WRITEFUNCTION, on_write);
        if (e == CURLE_OK)
            e = c->easy_setopt(h, CURLOPT_WRITEDATA, x);
        /* 4xx and 5xx fail before their body is written. */
        if (e == CURLE_OK)
            e = c->easy_setopt(h, CURLOPT_FAILONERROR, 1L);
        if (e == CURLE_OK)
            e = c->easy_setopt(h, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max);
        if (e != CURLE_OK)
            rc = -EINVAL;
    }
    if (rc < 0) {
        snprintf(err, errlen, "setting up the transfer: %s", c->easy_strerror(e));
        c->easy_cleanup(h);
        return rc;
    }
    e = c->easy_perform(h);
    long status = 0;
    c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    if (e != CURLE_OK) {
        rc = transfer_error(c, h, x, e, "fetch", url, err, errlen);
    } else if (status < 200 || status > 299) {
        /* A 3xx with redirects off, or anything else that is no file. */
        char shown[512];
        fetch_url_redact(url, shown, sizeof shown);
        snprintf(err, errlen, "fetch %s: HTTP %ld%s", shown, status,
                 status >= 300 && status < 400 ? " (a redirect, and fetch_redirects = 0)" : "");
        rc = -EPROTO;
    }
    c->easy_cleanup(h);
    return rc;
}

static void file_result(struct xfer *x, const char *name, struct fetch_file *out)
{
    unsigned char d[32];
    sha256_final(&x->hash, d);
    util_hex(d, sizeof d, out->sha256);
    out->bytes = x->bytes;
    out->mime = art_mime(x->head, x->head_len, name);
    out->http_status = 200;
}

/* ------------------------------------------------- files, beneath a dir */

/* A download in progress: a temporary file in the final directory. */
struct part {
    int dirfd;          /* the final directory (owned) */
    char name[256];     /* the final name in it */
    char tmp[64];       /* the temporary name */
    int fd;
};

static void part_discard(struct part *p)
{
    if (p->fd >= 0) {
        close(p->fd);
        p->fd = -1;
    }
    if (p->dirfd >= 0) {
        if (p->tmp[0])
            unlinkat(p->dirfd, p->tmp, 0);
        close(p->dirfd);
        p->dirfd = -1;
    }
    p->tmp[0] = '\0';
}

/* Opens (making it when missing) each directory of rel's parent beneath
 * dirfd, following no symlink; creates the temporary file. */
static int part_open(int dirfd, const char *rel, mode_t mode, struct part *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->dirfd = p->fd = -1;
    if (!ws_rel_path_ok(rel)) {
        snprintf(err, errlen, "'%.200s' is not a safe relative path (no '..', '.', empty parts or leading '/')", rel);
        return -EINVAL;
    }
    char buf[1025];
    snprintf(buf, sizeof buf, "%s", rel);
    int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
    if (cur < 0)
        return -errno;
    char *comp = buf;
    for (char *slash; (slash = strchr(comp, '/'));) {
        *slash = '\0';
        if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            close(cur);
            snprintf(err, errlen, "cannot make the directory '%.200s': %s", comp, strerror(e));
            return -e;
        }
        int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(cur);
        if (next < 0) {
            if (e == ELOOP || e == ENOTDIR) {
                snprintf(err, errlen, "'%.200s' in the path is a symlink or not a directory", comp);
                return -ELOOP;
            }
            snprintf(err, errlen, "cannot open the directory '%.200s': %s", comp, strerror(e));
            return -e;
        }
        cur = next;
        comp = slash + 1;
    }
    if (strlen(comp) >= sizeof p->name) {
        close(cur);
        snprintf(err, errlen, "the file name is too long");
        return -ENAMETOOLONG;
    }
    struct stat st;
    if (fstatat(cur, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
        close(cur);
        snprintf(err, errlen, "'%.200s' is a directory", rel);
        return -EISDIR;
    }
    snprintf(p->name, sizeof p->name, "%s", comp);
    p->dirfd = cur;
    for (int tries = 0; tries < 4; tries++) {
        unsigned char rnd[8];
        char hex[17];
        int rc = util_random(rnd, sizeof rnd);
        if (rc < 0) {
            part_discard(p);
            return rc;
        }
        util_hex(rnd, sizeof rnd, hex);
        snprintf(p->tmp, sizeof p->tmp, ".fetch-%s.part", hex);
        p->fd = openat(cur, p->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
        if (p->fd >= 0)
            return 0;
        if (errno != EEXIST) {
            int e = errno;
            p->tmp[0] = '\0';
            part_discard(p);
            snprintf(err, errlen, "cannot create a temporary file: %s", strerror(e));
            return -e;
        }
    }
    p->tmp[0] = '\0';
    part_discard(p);
    return -EEXIST;
}

/* fsync, then rename over the final name: whole or not at all. */
static int part_publish(struct part *p, char *err, size_t errlen)
{
    int rc = 0;
    if (fsync(p->fd) < 0)
        rc = -errno;
    if (close(p->fd) < 0 && rc == 0)
        rc = -errno;
    p->fd = -1;
    if (rc == 0 && renameat(p->dirfd, p->tmp, p->dirfd, p->name) < 0)
        rc = -errno;
    if (rc < 0) {
        snprintf(err, errlen, "publishing '%s': %s", p->name, strerror(-rc));
        part_discard(p);
        return rc;
    }
    p->tmp[0] = '\0';
    close(p->dirfd);
    p->dirfd = -1;
    return 0;
}

static void xfer_init(struct xfer *x, const struct fetch_config *cfg, uint64_t max, const char *cap_name)
{
    memset(x, 0, sizeof *x);
    x->cfg = cfg;
    x->fd = -1;
    x->in_fd = -1;
    x->max = max;
    x->cap_name = cap_name;
}

/* Downloads into a new part; on success p is ready to publish. */
static int download_part(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel, mode_t mode,
                         uint64_t max, const char *cap_name, struct part *p, struct fetch_file *out, char *err,
                         size_t errlen)
{
    struct xfer x;
    char why[FETCH_ERR_MAX];
    /* The URL first: nothing is made on disk for a URL we would refuse. */
    int rc = fetch_url_check(url, err, errlen);
    if (rc < 0)
        return rc;
    rc = part_open(dirfd, rel, mode, p, why, sizeof why);
    if (rc < 0) {
        char shown[512];
        fetch_url_redact(url, shown, sizeof shown);
        snprintf(err, errlen, "fetch %s: %s", shown, why);
        return rc;
    }
    xfer_init(&x, cfg, max, cap_name);
    x.fd = p->fd;
    rc = run_download(cfg, url, &x, err, errlen);
    if (rc < 0) {
        part_discard(p);
        return rc;
    }
    file_result(&x, p->name, out);
    return 0;
}

/* The cap of a download: fetch_bytes, or the caller's when smaller. */
static uint64_t download_cap(const struct fetch_config *cfg, uint64_t max_bytes, const char *max_name,
                             const char **name)
{
    if (max_bytes && max_bytes < cfg->limits.fetch_bytes) {
        *name = max_name ? max_name : "the caller's limit";
        return max_bytes;
    }
    *name = "fetch_bytes";
    return cfg->limits.fetch_bytes;
}

int fetch_download(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel, uint64_t max_bytes,
                   const char *max_name, struct fetch_file *out, char *err, size_t errlen)
{
    struct part p;
    const char *cap;
    uint64_t max = download_cap(cfg, max_bytes, max_name, &cap);
    memset(out, 0, sizeof *out);
    int rc = download_part(cfg, url, dirfd, rel, 0644, max, cap, &p, out, err, errlen);
    if (rc < 0)
        return rc;
    return part_publish(&p, err, errlen);
}

int fetch_to_memory(const struct fetch_config *cfg, const char *url, uint64_t max_bytes, const char *max_name,
                    char **data, size_t *len, struct fetch_file *out, char *err, size_t errlen)
{
    struct xfer x;
    struct dbuf b;
    const char *cap;
    uint64_t max = download_cap(cfg, max_bytes, max_name, &cap);
    *data = NULL;
    *len = 0;
    memset(out, 0, sizeof *out);
    dbuf_init(&b, max > SIZE_MAX / 2 ? SIZE_MAX / 2 : (size_t)max);
    xfer_init(&x, cfg, max, cap);
    x.mem = &b;
    int rc = run_download(cfg, url, &x, err, errlen);
    if (rc < 0) {
        dbuf_free(&b);
        return rc;
    }
    file_result(&x, "", out);
    *data = dbuf_steal(&b, len);
    if (!*data) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    return 0;
}

int fetch_upload(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel,
                 struct fetch_upload_result *out, char *err, size_t errlen)
{
    char shown[512];
    struct xfer x;
    memset(out, 0, sizeof *out);
    fetch_url_redact(url, shown, sizeof shown);
    int rc = fetch_url_check(url, err, errlen);
    if (rc < 0)
        return rc;
    if (!ws_rel_path_ok(rel)) {
        snprintf(err, errlen, "upload %s: '%.200s' is not a safe relative path", shown, rel);
        return -EINVAL;
    }
    cleanup_fd int fd = ws_open_beneath(dirfd, rel, O_RDONLY | O_NONBLOCK, 0);
    if (fd < 0) {
        snprintf(err, errlen, "upload %s: cannot open '%.200s': %s", shown, rel,
                 fd == -ELOOP || fd == -EXDEV ? "a symlink on the way" : strerror(-fd));
        return fd == -EXDEV ? -ELOOP : fd;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        rc = -errno;
        snprintf(err, errlen, "upload %s: %s", shown, strerror(errno));
        return rc;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "upload %s: '%.200s' is not a regular file", shown, rel);
        return -EINVAL;
    }
    if ((uint64_t)st.st_size > cfg->limits.upload_bytes) {
        char a[32], b[32];
        util_human_size((uint64_t)st.st_size, a, sizeof a);
        util_human_size(cfg->limits.upload_bytes, b, sizeof b);
        snprintf(err, errlen, "upload %s: '%.200s' (%s) is larger than upload_bytes (%s)", shown, rel, a, b);
        return -EFBIG;
    }
    const struct curl_api *c;
    CURL *h;
    rc = curl_open(&c, &h, err, errlen);
    if (rc < 0)
        return rc;
    xfer_init(&x, cfg, cfg->limits.upload_bytes, "upload_bytes");
    x.in_fd = fd;
    x.in_size = (uint64_t)st.st_size;
    rc = setup_handle(c, h, &x, url);
    CURLcode e = CURLE_OK;
#define SET(opt, val)                              \
    do {                                           \
        if (e == CURLE_OK)                         \
            e = c->easy_setopt(h, opt, val);       \
    } while (0)
    SET(CURLOPT_UPLOAD, 1L);
    SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
    SET(CURLOPT_READFUNCTION, on_read);
    SET(CURLOPT_READDATA, &x);
    SET(CURLOPT_SEEKFUNCTION, on_seek);
    SET(CURLOPT_SEEKDATA, &x);
    SET(CURLOPT_WRITEFUNCTION, discard_body);
    SET(CURLOPT_FAILONERROR, 1L);
#undef SET
    if (rc < 0 || e != CURLE_OK) {
        snprintf(err, errlen, "setting up the transfer: %s", c->easy_strerror(e));
        c->easy_cleanup(h);
        return -EINVAL;
    }
    e = c->easy_perform(h);
    long status = 0;
    c->easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
    out->status = status;
    out->uploaded_bytes = x.sent;
    if (e != CURLE_OK) {
        rc = transfer_error(c, h, &x, e, "upload", url, err, errlen);
    } else if (status < 200 || status > 299) {
        snprintf(err, errlen, "upload %s: HTTP %ld", shown, status);
        rc = -EPROTO;
    } else {
        curl_off_t up = 0;
        if (c->easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK && up >= 0)
            out->uploaded_bytes = (uint64_t)up;
        rc = 0;
    }
    c->easy_cleanup(h);
    return rc;
}

/* ------------------------------------------------------------- sessions */

void fetch_mount_free(struct fetch_mount *m)
{
    free(m->mounted_as);
    memset(m, 0, sizeof *m);
}

/* Opens name beneath dirfd as a directory, making it when missing and
 * following no symlink. */
static int open_subdir(int dirfd, const char *name, bool make)
{
    if (make && mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
        return -errno;
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOTDIR ? -ELOOP : -errno;
    return fd;
}

/* One entry of the record. */
struct rec_entry {
    const char *path, *url_sha256, *sha256, *mime;
    uint64_t bytes, ino;
    int64_t mtime_ns;
};

static uint64_t jint(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                            : NULL;
}

/* Reads the record (an empty one when there is none). Caller puts *root. */
static int record_read(int sfd, json_object **root, json_object **mounts)
{
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(sfd, FETCH_RECORD, FETCH_RECORD_MAX, &text, &len);
    json_object *r = NULL;
    if (rc == 0)
        r = json_tokener_parse(text);
    else if (rc != -ENOENT)
        return rc;
    if (!r || !json_object_is_type(r, json_type_object)) {
        /* Missing, or damaged (only we write it, atomically): start over;
         * the worst that follows is a download done again. */
        if (r)
            json_object_put(r);
        r = json_object_new_object();
        if (!r)
            return -ENOMEM;
    }
    json_object *m;
    if (!json_object_object_get_ex(r, "mounts", &m) || !json_object_is_type(m, json_type_array)) {
        m = json_object_new_array();
        if (!m) {
            json_object_put(r);
            return -ENOMEM;
        }
        json_object_object_add(r, "mounts", m);
    }
    *root = r;
    *mounts = m;
    return 0;
}

static int record_write(int sfd, json_object *root)
{
    size_t n;
    const char *s =
        json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    if (!s)
        return -ENOMEM;
    if (n > FETCH_RECORD_MAX)
        return -EFBIG;
    return util_write_file_atomic(sfd, FETCH_RECORD, s, n, 0600);
}

/* The index of path's entry, or -1. */
static int record_find(json_object *mounts, const char *path)
{
    size_t n = json_object_array_length(mounts);
    for (size_t i = 0; i < n; i++) {
        const char *p = jstr(json_object_array_get_idx(mounts, i), "path");
        if (p && !strcmp(p, path))
            return (int)i;
    }
    return -1;
}

/* Bytes recorded for every path but skip. */
static uint64_t record_bytes_except(json_object *mounts, int skip)
{
    uint64_t sum = 0;
    size_t n = json_object_array_length(mounts);
    for (size_t i = 0; i < n; i++)
        if ((int)i != skip)
            sum += jint(json_object_array_get_idx(mounts, i), "bytes");
    return sum;
}

static int lock_session(int sfd)
{
    int fd = openat(sfd, FETCH_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            return -e;
        }
    }
    return fd;
}

/* Whether the file at mounts/path is still the one recorded. */
static bool still_there(int mfd, json_object *ent)
{
    const char *path = jstr(ent, "path");
    if (!path)
        return false;
    cleanup_fd int fd = ws_open_beneath(mfd, path, O_RDONLY | O_NONBLOCK, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return false;
    int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return (uint64_t)st.st_ino == jint(ent, "ino") && (uint64_t)st.st_size == jint(ent, "bytes") &&
           (uint64_t)mt == jint(ent, "mtime_ns");
}

static void url_digest(const char *url, char out[65])
{
    sha256_hex(url, strlen(url), out);
}

int fetch_mount(const struct fetch_config *cfg, const char *session_dir, const char *url, const char *mount_path,
                struct fetch_mount *out, char *err, size_t errlen)
{
    const struct fetch_limits *l = &cfg->limits;
    char shown[512], udig[65];
    json_object *root = NULL, *mounts = NULL;
    struct part p = {.dirfd = -1, .fd = -1};
    struct fetch_file f;
    cleanup_fd int sfd = -1, wfd = -1, mfd = -1, lock = -1;
    int rc;

    memset(out, 0, sizeof *out);
    fetch_url_redact(url, shown, sizeof shown);
    rc = fetch_url_check(url, err, errlen);
    if (rc < 0)
        return rc;
    if (!ws_rel_path_ok(mount_path)) {
        snprintf(err, errlen,
                 "mount %s: '%.200s' is not a safe relative path (no '..', '.', empty parts or leading '/')",
                 shown, mount_path);
        return -EINVAL;
    }
    if (asprintf(&out->mounted_as, "%s/%s", FETCH_MOUNTS, mount_path) < 0) {
        out->mounted_as = NULL;
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    url_digest(url, udig);

    sfd = open(session_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) {
        rc = -errno;
        snprintf(err, errlen, "mount %s: the session directory: %s", shown, strerror(errno));
        goto out;
    }
    wfd = open_subdir(sfd, "workspace", true);
    mfd = wfd < 0 ? wfd : open_subdir(wfd, FETCH_MOUNTS, true);
    if (wfd < 0 || mfd < 0) {
        rc = wfd < 0 ? wfd : mfd;
        snprintf(err, errlen, "mount %s: %s: %s", shown, wfd < 0 ? "workspace/" : "workspace/mounts/",
                 rc == -ELOOP ? "a symlink or not a directory" : strerror(-rc));
        goto out;
    }

    /* mounts/ is made by the server (here, or before a session run) and
     * kept its own: one owned by anyone else was put there by a script (the
     * rlimits fallback as root lets a script rename the real one away), and
     * writing into it would hand the script our files to change. */
    struct stat mst;
    if (fstat(mfd, &mst) < 0 || mst.st_uid != geteuid()) {
        rc = -EPERM;
        snprintf(err, errlen, "mount %s: workspace/mounts/ does not belong to the server (a script replaced it?)",
                 shown);
        goto out;
    }

    /* Phase 1, under the lock: is it there already, and what may it weigh? */
    lock = lock_session(sfd);
    if (lock < 0 || (rc = record_read(sfd, &root, &mounts)) < 0) {
        rc = lock < 0 ? lock : rc;
        snprintf(err, errlen, "mount %s: the session's record: %s", shown, strerror(-rc));
        goto out;
    }
    int idx = record_find(mounts, mount_path);
    if (idx >= 0) {
        json_object *ent = json_object_array_get_idx(mounts, (size_t)idx);
        const char *u = jstr(ent, "url_sha256"), *sha = jstr(ent, "sha256"), *mime = jstr(ent, "mime");
        if (u && !strcmp(u, udig) && sha && strlen(sha) == 64 && mime && still_there(mfd, ent)) {
            out->bytes = jint(ent, "bytes");
            memcpy(out->sha256, sha, 65);
            /* The MIME type again from the file (art_mime returns a static
             * string; the record's is only a copy). */
            cleanup_fd int fd = ws_open_beneath(mfd, mount_path, O_RDONLY | O_NONBLOCK, 0);
            unsigned char head[FETCH_HEAD];
            ssize_t n = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;
            out->mime = art_mime(head, n > 0 ? (size_t)n : 0, mount_path);
            out->reused = true;
            rc = 0;
            goto out;
        }
    } else if (json_object_array_length(mounts) >= l->mount_files) {
        snprintf(err, errlen, "mount %s: the session already has %llu mounted files (mount_files)", shown,
                 (unsigned long long)l->mount_files);
        rc = -EDQUOT;
        goto out;
    }
    uint64_t others = record_bytes_except(mounts, idx);
    uint64_t room = others >= l->mount_bytes ? 0 : l->mount_bytes - others;
    uint64_t max = l->fetch_bytes;
    const char *cap = "fetch_bytes";
    if (room < max) {
        max = room;
        cap = "what is left of mount_bytes in this session";
    }
    json_object_put(root);
    root = NULL;
    close(lock);
    lock = -1;
    if (max == 0) {
        snprintf(err, errlen, "mount %s: the session's mounted files already fill mount_bytes", shown);
        rc = -EFBIG;
        goto out;
    }

    /* Phase 2, unlocked: the download, into a temporary file of its own. */
    /* 0444: a mounted file is read-only, to scripts of the fallback too. */
    rc = download_part(cfg, url, mfd, mount_path, 0444, max, cap, &p, &f, err, errlen);
    if (rc < 0)
        goto out;

    /* Phase 3, under the lock again: the limits still hold (another mount
     * may have landed meanwhile), then publish and record. */
    lock = lock_session(sfd);
    if (lock < 0 || (rc = record_read(sfd, &root, &mounts)) < 0) {
        rc = lock < 0 ? lock : rc;
        snprintf(err, errlen, "mount %s: the session's record: %s", shown, strerror(-rc));
        goto out;
    }
    idx = record_find(mounts, mount_path);
    if (idx < 0 && json_object_array_length(mounts) >= l->mount_files) {
        snprintf(err, errlen, "mount %s: the session already has %llu mounted files (mount_files)", shown,
                 (unsigned long long)l->mount_files);
        rc = -EDQUOT;
        goto out;
    }
    if (record_bytes_except(mounts, idx) + f.bytes > l->mount_bytes) {
        char hs[32];
        util_human_size(l->mount_bytes, hs, sizeof hs);
        snprintf(err, errlen, "mount %s: the session's mounted files would pass mount_bytes (%s)", shown, hs);
        rc = -EFBIG;
        goto out;
    }
    struct stat st;
    if (fstat(p.fd, &st) < 0) {
        rc = -errno;
        snprintf(err, errlen, "mount %s: %s", shown, strerror(errno));
        goto out;
    }
    rc = part_publish(&p, err, errlen);
    if (rc < 0)
        goto out;
    json_object *ent = json_object_new_object();
    if (!ent) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    json_object_object_add(ent, "path", json_object_new_string(mount_path));
    json_object_object_add(ent, "url", json_object_new_string(shown));
    json_object_object_add(ent, "url_sha256", json_object_new_string(udig));
    json_object_object_add(ent, "bytes", json_object_new_int64((int64_t)f.bytes));
    json_object_object_add(ent, "sha256", json_object_new_string(f.sha256));
    json_object_object_add(ent, "mime", json_object_new_string(f.mime));
    json_object_object_add(ent, "ino", json_object_new_int64((int64_t)st.st_ino));
    json_object_object_add(ent, "mtime_ns",
                           json_object_new_int64((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec));
    if (idx >= 0)
        json_object_array_put_idx(mounts, (size_t)idx, ent);
    else
        json_object_array_add(mounts, ent);
    rc = record_write(sfd, root);
    if (rc < 0) {
        /* The file is in place and whole; without its record, the next
         * mount of it downloads it again. */
        snprintf(err, errlen, "mount %s: recording it: %s", shown, strerror(-rc));
        goto out;
    }
    out->bytes = f.bytes;
    memcpy(out->sha256, f.sha256, sizeof out->sha256);
    out->mime = f.mime;
    rc = 0;
out:
    part_discard(&p);
    if (root)
        json_object_put(root);
    if (rc < 0)
        fetch_mount_free(out);
    return rc;
}

int fetch_persist(const struct fetch_config *cfg, const char *session_dir, const char *relative_path, const char *url,
                  struct fetch_upload_result *out, char *err, size_t errlen)
{
    char shown[512];
    memset(out, 0, sizeof *out);
    fetch_url_redact(url, shown, sizeof shown);
    cleanup_fd int sfd = open(session_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) {
        int e = errno;
        snprintf(err, errlen, "upload %s: the session directory: %s", shown, strerror(e));
        return -e;
    }
    cleanup_fd int wfd = open_subdir(sfd, "workspace", false);
    cleanup_fd int ofd = wfd < 0 ? -1 : open_subdir(wfd, "output", false);
    if (wfd < 0 || ofd < 0) {
        int rc = wfd < 0 ? wfd : ofd;
        if (rc == -1)
            rc = -ENOENT;
        snprintf(err, errlen, "upload %s: the session's output/: %s", shown,
                 rc == -ELOOP ? "a symlink or not a directory" : strerror(-rc));
        return rc;
    }
    return fetch_upload(cfg, url, ofd, relative_path, out, err, errlen);
}

/* ---------------------------------------------------- read-only mounts */

static int chmod_ro_dir(int dfd, int depth)
{
    if (depth > FETCH_MOUNT_DEPTH)
        return 0;
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    struct dirent *de;
    int rc = 0;
    while ((de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (S_ISDIR(st.st_mode)) {
            int sub = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0)
                continue;
            int r = chmod_ro_dir(sub, depth + 1);
            close(sub);
            if (r < 0 && rc == 0)
                rc = r;
        } else if (S_ISREG(st.st_mode) && (st.st_mode & 0222)) {
            /* Opened, not named: fchmod acts on what was checked, never on
             * a symlink swapped in after the stat. */
            cleanup_fd int fd = openat(dfd, de->d_name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
                continue;
            if (fchmod(fd, st.st_mode & 07777 & ~(mode_t)0222) < 0 && rc == 0)
                rc = -errno;
        }
    }
    return rc;
}

int fetch_mounts_chmod_ro(int workspace_fd)
{
    int mfd = openat(workspace_fd, FETCH_MOUNTS, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (mfd < 0)
        return errno == ENOENT || errno == ELOOP || errno == ENOTDIR ? 0 : -errno;
    int rc = chmod_ro_dir(mfd, 0);
    close(mfd);
    return rc;
}
