/* fetch_transfer.c: the transfers themselves, over libcurl loaded with
 * dlopen on first use: one easy handle per transfer with the same rules
 * (setup_handle), the guard at connect time, the caps counted in the
 * callbacks, the one-line error of a failed transfer; downloads into a
 * ".part" file published whole, into memory, and uploads of a file.
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
#include "fetch_internal.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art.h"
#include "sha256.h"
#include "workspace.h"

#define FETCH_PART_TRIES 4 /* random temporary names tried before giving up */

/* libcurl, loaded on first use (util_dl_load). */
#define CURL_FUNCS(X)                                                                                  \
    X(global_init) X(easy_init) X(easy_setopt) X(easy_perform) X(easy_getinfo) X(easy_cleanup)        \
    X(easy_strerror) X(version_info) X(url) X(url_set) X(url_get) X(url_cleanup) X(free)  \
    X(slist_append) X(slist_free_all)

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
    const struct util_dl_sym syms[] = {
#define X(f) {"curl_" #f, (void **)&api.f},
        CURL_FUNCS(X)
#undef X
    };
    if (util_dl_load(LIBCURL_SONAME, false, syms, ARRAY_SIZE(syms), "", err, errlen) < 0)
        return NULL;
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
    long status;              /* the final response's, 0 before one */
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
    enum ipaddr_class cls = IPADDR_INVALID;
    if (purpose != CURLSOCKTYPE_IPCXN ||
        !fetch_addr_allowed((const struct sockaddr *)&ss, len, x->cfg->allow, &cls)) {
        char where[96];
        fetch__describe_sockaddr((const struct sockaddr *)&ss, len, where, sizeof where);
        if (cls == IPADDR_INVALID)
            snprintf(x->refused_what, sizeof x->refused_what, "%s is not an IP address", where);
        else
            snprintf(x->refused_what, sizeof x->refused_what, "%s is a%s %s address", where,
                     cls == IPADDR_UNSPECIFIED ? "n" : "", ipaddr_class_name(cls));
        x->refused = true;
        log_msg(LOG_LVL_INFO, "fetch: refused a connection to %s (%s)", where, ipaddr_class_name(cls));
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

/* Sets one option on handle h of API c, unless an earlier one failed: the
 * CURLcode e in scope keeps the first failure. */
#define SET(opt, val)                              \
    do {                                           \
        if (e == CURLE_OK)                         \
            e = c->easy_setopt(h, opt, val);       \
    } while (0)

/* The rules every handle gets. */
static int setup_handle(const struct curl_api *c, CURL *h, struct xfer *x, const char *url)
{
    const struct fetch_limits *l = &x->cfg->limits;
    char ua[64];
    snprintf(ua, sizeof ua, "runmyscript/%s", PACKAGE_VERSION);
    CURLcode e = CURLE_OK;
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
        return FETCH_E_HTTP;
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
        SET(CURLOPT_WRITEFUNCTION, on_write);
        SET(CURLOPT_WRITEDATA, x);
        /* 4xx and 5xx fail before their body is written. */
        SET(CURLOPT_FAILONERROR, 1L);
        SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)x->max);
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
    x->status = status;
    if (e != CURLE_OK) {
        rc = transfer_error(c, h, x, e, "fetch", url, err, errlen);
    } else if (status < 200 || status > 299) {
        /* A 3xx with redirects off, or anything else that is no file. */
        char shown[512];
        fetch_url_redact(url, shown, sizeof shown);
        snprintf(err, errlen, "fetch %s: HTTP %ld%s", shown, status,
                 status >= 300 && status < 400 ? " (a redirect, and fetch_redirects = 0)" : "");
        rc = status >= 400 ? FETCH_E_HTTP : -EPROTO;
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
    out->mime = ws_mime(x->head, x->head_len, name);
    out->http_status = 200;
}

/* ------------------------------------------------- files, beneath a dir */

void fetch__part_discard(struct fetch_part *p)
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
static int part_open(int dirfd, const char *rel, mode_t mode, struct fetch_part *p, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->dirfd = p->fd = -1;
    if (!ws_rel_path_ok(rel)) {
        snprintf(err, errlen, "'%.200s' is not a safe relative path (no '..', '.', empty parts or leading '/')", rel);
        return -EINVAL;
    }
    const char *comp;
    struct ws_walk_stop stop;
    int cur = ws_open_parent(dirfd, rel, true, &comp, &stop);
    if (cur < 0) {
        int n = stop.len < 200 ? (int)stop.len : 200;
        if (!stop.name) {
            snprintf(err, errlen, "the directory: %s", strerror(-cur));
        } else if (stop.making) {
            snprintf(err, errlen, "cannot make the directory '%.*s': %s", n, stop.name, strerror(-cur));
        } else if (cur == -ELOOP || cur == -ENOTDIR) {
            snprintf(err, errlen, "'%.*s' in the path is a symlink or not a directory", n, stop.name);
            return -ELOOP;
        } else {
            snprintf(err, errlen, "cannot open the directory '%.*s': %s", n, stop.name, strerror(-cur));
        }
        return cur;
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
    for (int tries = 0; tries < FETCH_PART_TRIES; tries++) {
        unsigned char rnd[8];
        char hex[17];
        int rc = util_random(rnd, sizeof rnd);
        if (rc < 0) {
            fetch__part_discard(p);
            snprintf(err, errlen, "naming a temporary file: %s", strerror(-rc));
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
            fetch__part_discard(p);
            snprintf(err, errlen, "cannot create a temporary file: %s", strerror(e));
            return -e;
        }
    }
    p->tmp[0] = '\0';
    fetch__part_discard(p);
    snprintf(err, errlen, "cannot create a temporary file: %s", strerror(EEXIST));
    return -EEXIST;
}

/* fsync, then rename over the final name: whole or not at all. */
int fetch__part_publish(struct fetch_part *p, char *err, size_t errlen)
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
        fetch__part_discard(p);
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
int fetch__download_part(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel, mode_t mode,
                         uint64_t max, const char *cap_name, struct fetch_part *p, struct fetch_file *out, char *err,
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
        out->http_status = x.status;
        fetch__part_discard(p);
        return rc;
    }
    file_result(&x, p->name, out);
    return 0;
}

/* Copies the bytes of src (in memory, or read from in_fd) into a new part,
 * with a download's cap, hash and type; on success p is ready to publish. */
int fetch__copy_part(const struct fetch_src *src, int in_fd, int dirfd, const char *rel, mode_t mode, uint64_t max,
                     const char *cap_name, struct fetch_part *p, struct fetch_file *out, char *err, size_t errlen)
{
    struct xfer x;
    char why[FETCH_ERR_MAX];
    int rc = part_open(dirfd, rel, mode, p, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", src->shown, why);
        return rc;
    }
    xfer_init(&x, NULL, max, cap_name);
    x.fd = p->fd;
    sha256_init(&x.hash);
    char buf[65536];
    const char *data = src->data;
    for (size_t off = 0;;) {
        size_t n;
        if (in_fd < 0) {
            n = src->len - off < sizeof buf ? src->len - off : sizeof buf;
            if (n)
                memcpy(buf, data + off, n);
            off += n;
        } else {
            ssize_t got;
            do
                got = read(in_fd, buf, sizeof buf);
            while (got < 0 && errno == EINTR);
            if (got < 0) {
                rc = -errno;
                snprintf(err, errlen, "%s: reading it: %s", src->shown, strerror(-rc));
                goto fail;
            }
            n = (size_t)got;
        }
        if (n == 0)
            break;
        if (on_write(buf, 1, n, &x) != n) {
            rc = x.over_cap ? -EFBIG : -x.local_errno;
            if (x.over_cap)
                snprintf(err, errlen, "%s: larger than %s", src->shown, cap_name);
            else
                snprintf(err, errlen, "%s: writing it: %s", src->shown, strerror(x.local_errno));
            goto fail;
        }
    }
    file_result(&x, p->name, out);
    out->http_status = 0;
    return 0;
fail:
    fetch__part_discard(p);
    return rc;
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
    struct fetch_part p;
    const char *cap;
    uint64_t max = download_cap(cfg, max_bytes, max_name, &cap);
    memset(out, 0, sizeof *out);
    int rc = fetch__download_part(cfg, url, dirfd, rel, 0644, max, cap, &p, out, err, errlen);
    if (rc < 0)
        return rc;
    return fetch__part_publish(&p, err, errlen);
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
        out->http_status = x.status;
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
    /* The file's MIME type as its Content-Type, as the artifact lists say
     * it: a presigned URL may have been signed with one. */
    unsigned char head[4096];
    ssize_t hn = pread(fd, head, sizeof head, 0);
    char ctype[128];
    snprintf(ctype, sizeof ctype, "Content-Type: %s", ws_mime(head, hn > 0 ? (size_t)hn : 0, rel));
    const struct curl_api *c;
    CURL *h;
    rc = curl_open(&c, &h, err, errlen);
    if (rc < 0)
        return rc;
    struct curl_slist *headers = c->slist_append(NULL, ctype);
    if (!headers) {
        snprintf(err, errlen, "out of memory");
        c->easy_cleanup(h);
        return -ENOMEM;
    }
    xfer_init(&x, cfg, cfg->limits.upload_bytes, "upload_bytes");
    x.in_fd = fd;
    x.in_size = (uint64_t)st.st_size;
    rc = setup_handle(c, h, &x, url);
    CURLcode e = CURLE_OK;
    SET(CURLOPT_UPLOAD, 1L);
    SET(CURLOPT_INFILESIZE_LARGE, (curl_off_t)st.st_size);
    SET(CURLOPT_READFUNCTION, on_read);
    SET(CURLOPT_READDATA, &x);
    SET(CURLOPT_SEEKFUNCTION, on_seek);
    SET(CURLOPT_SEEKDATA, &x);
    SET(CURLOPT_WRITEFUNCTION, discard_body);
    SET(CURLOPT_FAILONERROR, 1L);
    SET(CURLOPT_HTTPHEADER, headers);
    if (rc < 0 || e != CURLE_OK) {
        snprintf(err, errlen, "setting up the transfer: %s", c->easy_strerror(e));
        c->easy_cleanup(h);
        c->slist_free_all(headers);
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
        rc = status >= 400 ? FETCH_E_HTTP : -EPROTO;
    } else {
        curl_off_t up = 0;
        if (c->easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &up) == CURLE_OK && up >= 0)
            out->uploaded_bytes = (uint64_t)up;
        rc = 0;
    }
    c->easy_cleanup(h);
    c->slist_free_all(headers);
    return rc;
}
