/* app.h: one HTTP request, whichever way it came (a `serve` worker,
 * FastCGI on stdin, CGI): the routes, the checks every route shares (Host
 * and Origin allowlist, bearer token), /artifacts/ and /healthz. /mcp is in
 * mcp.c, /api/run in web.c. Workers keep no state between requests: everything a
 * later request needs is on disk under state_dir. */
#ifndef RMS_APP_H
#define RMS_APP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cfg.h"
#include "http.h"

/* The URL prefix of the nginx location that serves run files itself
 * (`internal`, an alias of STATE/runs/): /artifacts/ answers with an
 * X-Accel-Redirect into it. The nginx templates use the same name. */
#define APP_ACCEL_PREFIX "/_runmyscript/runs/"

/* Worker counters that `serve` shares between its processes (a shared
 * mapping); NULL in the one-process modes. */
struct app_workers {
    unsigned total;
    unsigned busy;   /* updated with atomic builtins */
};

struct app {
    const struct cfg *cfg;
    struct app_workers *workers;             /* borrowed, may be NULL */
    const char *mode;                        /* "serve", "fastcgi" or "cgi" */
    volatile sig_atomic_t *cancel_all;       /* set: stop every run now (shutdown) */
};

/* Serves one request read from io and writes its response. Never exits. */
void app_handle(const struct app *app, struct http_io *io);

/* True when the host name (lower case, from http_host_name) is in the
 * allowed_hosts list ("*" there allows any). */
bool app_host_allowed(const struct cfg *cfg, const char *name);

/* The scheme://host[:port] artifact links start with: public_url when set,
 * else from the request (REQUEST_SCHEME or HTTPS, and the Host header the
 * allowlist already accepted). "" when there is no way to know. */
void app_base_url(const struct app *app, const struct http_req *req, char *out, size_t outlen);

/* An error answer: {"error": message} with the status. */
void app_send_error(struct http_resp *resp, int status, const char *message);

/* Base64 (RFC 4648, padded) of n bytes (caller frees), or NULL. */
char *app_base64(const unsigned char *p, size_t n, size_t *out_len);

#endif
