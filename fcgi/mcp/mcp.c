/* mcp.c: the door of /mcp. A POST's transport is checked (Content-Type,
 * Accept), its body read (request_bytes) and parsed (MCP_JSON_DEPTH), and
 * handed to its revision: the stateless 2026-07-28 (mcp_2026.c) when its
 * _meta or MCP-Protocol-Version names a revision after the legacy ones,
 * else the legacy revisions with their sessions (mcp_2025.c). DELETE ends
 * a legacy session; there is no GET stream. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* The POST's Content-Type, Accept and body: true with *msg (caller puts)
 * and *want_sse; false when it is refused (the answer is sent). */
static bool read_post(const struct app *app, struct http_req *req, struct http_resp *resp, json_object **msg,
                      bool *want_sse)
{
    const char *ct = http_header(req, "Content-Type");
    if (!ct || strncasecmp(ct, "application/json", 16) || (ct[16] && ct[16] != ';' && ct[16] != ' ')) {
        mcp__refuse(resp, 415, -32000, "Unsupported Media Type: Content-Type must be application/json");
        return false;
    }
    /* Accept: we answer JSON, and tools/call over SSE when the client
     * accepts it. A client that accepts neither gets 406. */
    const char *accept = http_header(req, "Accept");
    *want_sse = accept && http_accepts(accept, "text/event-stream");
    if (accept && *accept && !*want_sse && !http_accepts(accept, "application/json")) {
        mcp__refuse(resp, 406, -32000, "Not Acceptable: Accept must list application/json or text/event-stream");
        return false;
    }
    int rc = http_read_json(req, (size_t)app->cfg->request_bytes, MCP_JSON_DEPTH, msg);
    if (rc == -E2BIG) {
        char why[120], hs[32];
        util_human_size(app->cfg->request_bytes, hs, sizeof hs);
        snprintf(why, sizeof why, "Content Too Large: the request body is larger than request_bytes (%s)", hs);
        mcp__refuse(resp, 413, -32000, why);
        return false;
    }
    if (rc == -EIO) {
        mcp__refuse(resp, 400, -32700, "Parse error: cannot read the request body");
        return false;
    }
    if (rc < 0) {
        mcp__refuse(resp, 400, -32700, "Parse error: the body is not valid JSON (or nests too deep)");
        return false;
    }
    return true;
}

void mcp__post(const struct app *app, struct http_req *req, struct http_resp *resp, bool headerless)
{
    json_object *msg = NULL; /* the body: put here, borrowed by the revision that serves it */
    bool want_sse = false;
    if (read_post(app, req, resp, &msg, &want_sse)) {
        /* Both eras on one endpoint: a body or header that names a
         * revision after the legacy ones is served statelessly. */
        if (mcp__is_2026(req, msg))
            mcp__2026_post(app, req, resp, msg, want_sse, headerless);
        else
            mcp__2025_post(app, req, resp, msg, want_sse);
    }
    json_object_put(msg);
}

void mcp_handle(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    if (!strcmp(req->method, "POST")) {
        mcp__post(app, req, resp, false);
    } else if (!strcmp(req->method, "DELETE")) {
        mcp__2025_delete(app, req, resp); /* only the legacy revisions have sessions */
    } else {
        /* No standalone server stream: we send nothing unsolicited. */
        discard(http_add_header(resp, "Allow", "POST, DELETE"));
        mcp__refuse(resp, 405, -32000, "Method Not Allowed: this server offers no GET stream; POST requests");
    }
}
