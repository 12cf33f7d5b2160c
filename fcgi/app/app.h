/* app.h: the router of one HTTP request, whichever way it came (a `serve`
 * worker, FastCGI on stdin, CGI): the routes, the checks every route shares
 * (Host and Origin allowlists, bearer token), /artifacts/ and /healthz. /mcp
 * is in mcp.c, /api/run in web.c; struct app in app_ctx.h. Workers keep
 * no state between requests: everything a later request needs is on disk
 * under state_dir. */
#ifndef RMS_APP_H
#define RMS_APP_H

#include <stdbool.h>

#include "app_ctx.h"
#include "cfg.h"
#include "http.h"

/* The URL prefix of the nginx location that serves run files itself
 * (`internal`, an alias of STATE/runs/): /artifacts/ answers with an
 * X-Accel-Redirect into it. The nginx templates use the same name. */
#define APP_ACCEL_PREFIX "/_runmyscript/runs/"

/* Serves one request read from io and writes its response. Never exits. */
void app_handle(const struct app *app, struct http_io *io);

/* True when the host name (lower case, from http_host_name) is in the
 * allowed_hosts list ("*" there allows any). */
bool app_host_allowed(const struct cfg *cfg, const char *name);

/* True when a page of origin (an Origin header: scheme://host[:port]) may
 * call the routes that run code: it is the server's own (the request's
 * scheme and Host, or public_url's origin), or in allowed_origins ("*"
 * there allows any). Scheme, host and port must all match, the scheme's
 * default port filled in (app_origin.c). */
bool app_origin_allowed(const struct cfg *cfg, const struct http_req *req, const char *origin);

/* A request body's place in the request memory (request_memory, shared by
 * every process of the state directory; app_memory.c). Bodies of at most
 * APP_BODY_FREE bytes take none: each worker holds at most one. */
#define APP_BODY_FREE (64u << 10)
struct app_body {
    int fd;        /* the flock'd file of the place, or -1: none held */
    char name[64]; /* its name in STATE/.mem */
};
/* Takes room for the body req announces (Content-Length), waiting up to
 * request_memory_wait for it (while the client stays): 0 (b holds the
 * place, or none was needed, or the budget cannot be kept: logged), or
 * -EBUSY when there was no room in time (nothing held; the caller answers
 * 503). */
int app_body_admit(const struct app *app, struct http_req *req, struct http_resp *resp, struct app_body *b) must_check;
/* Gives b's place back. Safe on an empty one. */
void app_body_release(const struct app *app, struct app_body *b);
/* The bytes of the bodies in flight now (a snapshot, for /healthz). */
uint64_t app_body_in_use(const struct app *app);

/* The jail's probe of this host, made once per process (a forked child
 * tries the namespaces; app_host.c). Borrowed. */
const struct probe_caps *app_host_caps(void);
/* What runs get here, from the probe and the configuration's choice:
 * "namespaces+seccomp", the fallback's name, or "none: ..." with why
 * (static). */
const char *app_isolation(const struct cfg *cfg);

/* /metrics (app_metrics.c): whether addr (REMOTE_ADDR) is in
 * metrics_allow, and the route itself. */
bool app_metrics_allowed(const struct cfg *cfg, const char *addr);
void app_metrics(const struct app *app, struct http_req *req, struct http_resp *resp);
/* After each request: counts it (its route and status) and, with
 * log_format = json, writes its line to the log. started_ms: when it
 * came (util_now_ms). */
void app_request_done(const struct app *app, const struct http_req *req, const struct http_resp *resp,
                      const char *route, int64_t started_ms);

#endif
