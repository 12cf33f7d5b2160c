/* web_page.c: the plain HTML answers of the page's API, for a form posted
 * without JavaScript: the result page and the head every such page has. */
#include "config.h"

#include "web_internal.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void web__html_escape(struct dbuf *b, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *rep = NULL;
        switch (s[i]) {
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '&': rep = "&amp;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: break;
        }
        discard(rep ? dbuf_append(b, rep, strlen(rep)) : dbuf_append(b, &s[i], 1));
    }
}

void web__html_head(struct dbuf *b, const char *title)
{
    discard(dbuf_printf(b, "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                           "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"));
    web__html_escape(b, title, strlen(title));
    /* Relative: the page is .../api/run, the style sheet .../app.css. */
    discard(dbuf_printf(b, " - runmyscript</title>\n<link rel=\"stylesheet\" href=\"../app.css\">\n</head>\n"
                           "<body class=\"result-page\">\n<main>\n"));
}

void web__html_foot(struct dbuf *b)
{
    discard(dbuf_printf(b, "<p><a href=\"../\">Run another script</a></p>\n</main>\n</body>\n</html>\n"));
}

void web__send_html(struct http_resp *resp, int status, struct dbuf *b)
{
    discard(http_add_header(resp, "Cache-Control", "no-store"));
    discard(http_add_header(resp, "X-Content-Type-Options", "nosniff"));
    discard(http_send(resp, status, "text/html; charset=utf-8", b->data ? b->data : "", b->len));
}

/* The HTML result page: status line, the log (stderr set apart), the
 * files with links, the zip. Built from the result JSON so that every
 * string is the sanitised one the other front doors show. */
void web__result_page(struct http_resp *resp, int status, const struct result *r, json_object *res)
{
    struct dbuf b;
    dbuf_init(&b, 64u << 20);
    json_object *v;
    const char *st = json_object_object_get_ex(res, "status", &v) ? json_object_get_string(v) : "?";
    web__html_head(&b, st);
    discard(dbuf_printf(&b, "<h1>Run result</h1>\n<p id=\"status\" class=\"status st-%s\" role=\"status\">Status: "
                            "<strong>%s</strong>", st, st));
    if (r->exit_code >= 0)
        discard(dbuf_printf(&b, " &middot; exit code %d", r->exit_code));
    if (r->signal)
        discard(dbuf_printf(&b, " &middot; signal %d", r->signal));
    if (r->duration_ms >= 0)
        discard(dbuf_printf(&b, " &middot; %lld ms", (long long)r->duration_ms));
    else
        discard(dbuf_printf(&b, " &middot; the script did not run"));
    if (r->isolation)
        discard(dbuf_printf(&b, " &middot; isolation %s", r->isolation));
    discard(dbuf_printf(&b, "</p>\n"));
    if (json_object_object_get_ex(res, "error", &v) && json_object_is_type(v, json_type_string)) {
        discard(dbuf_printf(&b, "<p class=\"error\" role=\"alert\">"));
        web__html_escape(&b, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        discard(dbuf_printf(&b, "</p>\n"));
    }
    if (json_object_object_get_ex(res, "limit", &v) && json_object_is_type(v, json_type_string)) {
        discard(dbuf_printf(&b, "<p>Limit reached: <code>"));
        web__html_escape(&b, json_object_get_string(v), (size_t)json_object_get_string_len(v));
        discard(dbuf_printf(&b, "</code></p>\n"));
    }
    discard(dbuf_printf(&b, "<h2>Log</h2>\n<pre class=\"log\" id=\"log\">"));
    for (size_t i = 0; i < r->log.n_chunks; i++) {
        const struct result_chunk *c = &r->log.chunks[i];
        size_t n;
        cleanup_free char *text = util_utf8_sanitize(r->log.buf.data + c->off, c->len, &n);
        if (!text)
            continue;
        discard(dbuf_printf(&b, "<span class=\"%s\">", result_stream_name(c->stream)));
        web__html_escape(&b, text, n);
        discard(dbuf_printf(&b, "</span>"));
    }
    discard(dbuf_printf(&b, "</pre>\n<h2>Files</h2>\n"));
    json_object *arts = NULL;
    size_t na = json_object_object_get_ex(res, "artifacts", &arts) ? json_object_array_length(arts) : 0;
    if (na == 0) {
        discard(dbuf_printf(&b, "<p>The script wrote no files.</p>\n"));
    } else {
        discard(dbuf_printf(&b, "<table class=\"files\">\n<thead><tr><th scope=\"col\">Name</th>"
                                "<th scope=\"col\">Size</th><th scope=\"col\">Summary</th></tr></thead>\n<tbody>\n"));
        for (size_t i = 0; i < na; i++) {
            json_object *a = json_object_array_get_idx(arts, i), *p, *u, *s, *z;
            const char *path = json_object_object_get_ex(a, "path", &p) ? json_object_get_string(p) : "";
            const char *url = json_object_object_get_ex(a, "url", &u) ? json_object_get_string(u) : NULL;
            const char *sum = json_object_object_get_ex(a, "summary", &s) ? json_object_get_string(s) : "";
            char size[32];
            util_human_size(json_object_object_get_ex(a, "size", &z) ? (uint64_t)json_object_get_int64(z) : 0, size,
                            sizeof size);
            discard(dbuf_printf(&b, "<tr><td>"));
            if (url) {
                /* /artifacts/... from this page (.../api/run) is ../artifacts/... */
                discard(dbuf_printf(&b, "<a href=\"%s", url[0] == '/' ? ".." : ""));
                web__html_escape(&b, url, strlen(url));
                discard(dbuf_printf(&b, "\">"));
            }
            web__html_escape(&b, path, strlen(path));
            discard(dbuf_printf(&b, "%s</td><td>%s</td><td>", url ? "</a>" : "", size));
            web__html_escape(&b, sum ? sum : "", sum ? strlen(sum) : 0);
            discard(dbuf_printf(&b, "</td></tr>\n"));
        }
        discard(dbuf_printf(&b, "</tbody>\n</table>\n"));
    }
    json_object *zip;
    if (json_object_object_get_ex(res, "zip_url", &zip) && json_object_is_type(zip, json_type_string)) {
        const char *zu = json_object_get_string(zip);
        discard(dbuf_printf(&b, "<p><a class=\"zip\" href=\"%s", zu[0] == '/' ? ".." : ""));
        web__html_escape(&b, zu, strlen(zu));
        discard(dbuf_printf(&b, "\" download>Download all files (zip)</a></p>\n"));
    }
    web__html_foot(&b);
    web__send_html(resp, status, &b);
    dbuf_free(&b);
}
