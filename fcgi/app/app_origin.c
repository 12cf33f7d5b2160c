/* app_origin.c: the CSRF check of the routes that run code (/mcp, /api/):
 * a browser's Origin, scheme, host and port, against the server's own
 * origin and allowed_origins (app.h). allowed_hosts compares host names
 * only, which is right for DNS rebinding (the Host header) but lets a page
 * of any other port of an allowed host through: http://localhost:3000 is
 * another origin than http://localhost:8080. */
#include "config.h"

#include "app.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define ORIGIN_MAX 300 /* bytes of a normalised origin */

/* "scheme://host[:port]" (a trailing '/' allowed, nothing else after it)
 * normalised into out as "scheme://host:port": scheme and host lower case
 * (http_host_name), the scheme's default port filled in. 0, or -1 for
 * anything else ("null", a path, a bad host or port). */
static int origin_norm(const char *in, size_t n, char *out, size_t outlen)
{
    const char *sep = memmem(in, n, "://", 3);
    if (!sep || sep == in || (size_t)(sep - in) > 16)
        return -1;
    char scheme[17], auth[260];
    size_t sn = (size_t)(sep - in), an = n - sn - 3;
    for (size_t i = 0; i < sn; i++)
        if (!isalpha((unsigned char)in[i]))
            return -1;
    if (an && sep[3 + an - 1] == '/')
        an--;
    if (an == 0 || an >= sizeof auth)
        return -1;
    for (size_t i = 0; i < sn; i++)
        scheme[i] = (char)tolower((unsigned char)in[i]);
    scheme[sn] = '\0';
    memcpy(auth, sep + 3, an);
    auth[an] = '\0';
    char host[256];
    if (strchr(auth, '/') || http_host_name(auth, host, sizeof host) < 0)
        return -1;
    /* The port: after the host (past an IPv6 literal's brackets). */
    const char *rest = auth[0] == '[' ? strchr(auth, ']') : auth;
    const char *colon = rest ? strchr(rest, ':') : NULL;
    const char *port = colon ? colon + 1 : !strcmp(scheme, "https") ? "443" : !strcmp(scheme, "http") ? "80" : "";
    while (*port == '0' && port[1])
        port++; /* :080 is :80 */
    if ((size_t)snprintf(out, outlen, "%s://%s:%s", scheme, host, port) >= outlen)
        return -1;
    return 0;
}

/* The origin (scheme://host[:port]) of a URL such as public_url, into out
 * normalised; -1 when it has none. */
static int url_origin(const char *url, char *out, size_t outlen)
{
    const char *sep = url ? strstr(url, "://") : NULL;
    if (!sep)
        return -1;
    size_t n = (size_t)(sep + 3 - url) + strcspn(sep + 3, "/?#");
    return origin_norm(url, n, out, outlen);
}

bool app_origin_allowed(const struct cfg *cfg, const struct http_req *req, const char *origin)
{
    char want[ORIGIN_MAX], have[ORIGIN_MAX], own[512];
    /* "null" (a sandboxed frame, a file) or garbage matches nothing but "*". */
    bool plain = origin_norm(origin, strlen(origin), have, sizeof have) == 0;
    /* The server's own: the request's scheme and Host (which allowed_hosts
     * has let through), and public_url's. */
    http_base_url(req, NULL, own, sizeof own);
    if (plain && url_origin(own, want, sizeof want) == 0 && !strcmp(want, have))
        return true;
    if (plain && url_origin(cfg->public_url, want, sizeof want) == 0 && !strcmp(want, have))
        return true;
    for (const char *p = cfg->allowed_origins ? cfg->allowed_origins : ""; *p;) {
        while (*p == ',' || *p == ' ' || *p == '\t')
            p++;
        size_t len = strcspn(p, ", \t");
        if ((len == 1 && *p == '*') || (plain && len && origin_norm(p, len, want, sizeof want) == 0 && !strcmp(want, have)))
            return true;
        p += len;
    }
    return false;
}
