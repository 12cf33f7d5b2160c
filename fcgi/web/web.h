/* web.h: /api/run and /api/cell, the web page's door: a multipart form
 * (the page, with or without JavaScript) or a JSON body in; the answer as
 * server-sent events (Accept: text/event-stream), a plain HTML result page
 * (Accept names text/html: the form posted without JavaScript), or the
 * result JSON. POST /api/run/RUNID/cancel stops a run (the page's Stop, a
 * cell's too). /api/cell runs a cell of the page's notebook in its
 * workspace's kernel: POST /api/cell makes the notebook's workspace, POST
 * /api/cell/WID runs in it, POST /api/cell/WID/reset drops its names. */
#ifndef RMS_WEB_H
#define RMS_WEB_H

#include "app_ctx.h"
#include "http.h"

#define WEB_KEEPALIVE_MS 2000  /* SSE comment after this much silence: finds a gone client */
#define WEB_URL_MAX 8192       /* bytes of input_url */
#define WEB_PAD_EVERY_MS 250   /* CGI: at most this often a padding comment (cgi_sse_padding) */

/* Serves POST /api/run (the Host/Origin and token checks are done). */
void web_api_run(const struct app *app, struct http_req *req, struct http_resp *resp);

/* Serves /api/run/REST where REST should be "RUNID/cancel". */
void web_api_run_sub(const struct app *app, struct http_req *req, struct http_resp *resp, const char *rest);

/* Serves POST /api/cell, and /api/cell/REST where REST is "WID" or
 * "WID/reset" (501 where there are no kernels: app_kernels). */
void web_api_cell(const struct app *app, struct http_req *req, struct http_resp *resp);
void web_api_cell_sub(const struct app *app, struct http_req *req, struct http_resp *resp, const char *rest);

#endif
