/* test-http.c: the HTTP helpers the front doors rely on: percent-decoding,
 * Host and Origin names, Accept matching (q=0 included), the host
 * allowlist, base64, the body reader's limit, the JSON body reader, and the
 * response writer's framing. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "app.h"
#include "http.h"
#include "mcp.h"
#include "tools.h"
#include "memio.h"
#include "tap.h"

static void test_decode(void)
{
    char out[32];
    ok(http_pct_decode("/a%20b/c%C3%A9", 14, out, sizeof out) == 0 && !strcmp(out, "/a b/c\xc3\xa9"), "percent-decoding");
    ok(http_pct_decode("/x%00y", 6, out, sizeof out) == -EINVAL, "%%00 is refused");
    ok(http_pct_decode("/x%2", 4, out, sizeof out) == -EINVAL, "a cut escape is refused");
    ok(http_pct_decode("/x%zz", 5, out, sizeof out) == -EINVAL, "a bad escape is refused");
    ok(http_pct_decode("a+b", 3, out, sizeof out) == 0 && !strcmp(out, "a+b"), "+ stays +");
    ok(http_pct_decode("0123456789", 10, out, 8) == -EINVAL, "too long for the buffer");
}

static void test_hosts(void)
{
    char n[64];
    ok(http_host_name("LocalHost:8080", n, sizeof n) == 0 && !strcmp(n, "localhost"), "Host: port dropped, lower case");
    ok(http_host_name("[::1]:9", n, sizeof n) == 0 && !strcmp(n, "[::1]"), "IPv6 literal kept in brackets");
    ok(http_host_name("127.0.0.1", n, sizeof n) == 0 && !strcmp(n, "127.0.0.1"), "no port");
    ok(http_host_name("evil.com@127.0.0.1", n, sizeof n) < 0, "userinfo is no host");
    ok(http_host_name("a b", n, sizeof n) < 0, "spaces are no host");
    ok(http_host_name("host:", n, sizeof n) < 0, "an empty port");
    ok(http_host_name("host:80x", n, sizeof n) < 0, "a bad port");
    ok(http_host_name("", n, sizeof n) < 0, "empty");

    struct cfg c = {0};
    char list1[] = "localhost, 127.0.0.1,[::1]", list2[] = "*";
    c.allowed_hosts = list1;
    ok(app_host_allowed(&c, "localhost") && app_host_allowed(&c, "127.0.0.1") && app_host_allowed(&c, "[::1]"),
       "the default names are allowed");
    ok(!app_host_allowed(&c, "evil.example.com") && !app_host_allowed(&c, "localhost.evil") &&
           !app_host_allowed(&c, "127.0.0"),
       "others are not, nor prefixes");
    c.allowed_hosts = list2;
    ok(app_host_allowed(&c, "anything.example"), "* allows any");
}

/* The CSRF check: whole origins, the server's own always. */
static void test_origins(void)
{
    char e1[] = "REQUEST_METHOD=POST", e2[] = "HTTP_HOST=localhost:8080", e3[] = "REQUEST_SCHEME=http";
    char *env[] = {e1, e2, e3, NULL};
    struct mem m = {0};
    struct http_io io = {&m, mem_read, mem_write, mem_flush, env};
    struct http_req req;
    http_req_init(&req, &io);
    struct cfg c = {0};
    char none[] = "", some[] = "https://tools.example.org, http://127.0.0.1:3000/", any[] = "*";
    c.allowed_origins = none;
    ok(app_origin_allowed(&c, &req, "http://localhost:8080"), "origins: the server's own (scheme and Host)");
    ok(app_origin_allowed(&c, &req, "HTTP://LocalHost:8080"), "origins: case does not matter");
    ok(!app_origin_allowed(&c, &req, "http://localhost:3000"), "origins: another port of the same host is another origin");
    ok(!app_origin_allowed(&c, &req, "https://localhost:8080"), "origins: another scheme too");
    ok(!app_origin_allowed(&c, &req, "http://localhost"), "origins: the default port is 80, not 8080");
    ok(!app_origin_allowed(&c, &req, "http://evil.example"), "origins: another host");
    ok(!app_origin_allowed(&c, &req, "null") && !app_origin_allowed(&c, &req, "http://localhost:8080/x"),
       "origins: null and a path are no origin of ours");
    char pub[] = "https://run.example.org/tools/rms";
    c.public_url = pub;
    ok(app_origin_allowed(&c, &req, "https://run.example.org") && app_origin_allowed(&c, &req, "https://run.example.org:443"),
       "origins: public_url's origin, its default port filled in");
    ok(!app_origin_allowed(&c, &req, "http://run.example.org"), "origins: ... but not over plain http");
    c.public_url = NULL;
    c.allowed_origins = some;
    ok(app_origin_allowed(&c, &req, "https://tools.example.org") && app_origin_allowed(&c, &req, "http://127.0.0.1:3000"),
       "origins: the listed ones (a trailing / is fine)");
    ok(!app_origin_allowed(&c, &req, "http://127.0.0.1:3001") && !app_origin_allowed(&c, &req, "http://tools.example.org"),
       "origins: not others of their hosts");
    c.allowed_origins = any;
    ok(app_origin_allowed(&c, &req, "http://anything:1") && app_origin_allowed(&c, &req, "null"), "origins: * allows any");
}

static void test_accept(void)
{
    ok(http_accepts("application/json, text/event-stream", "text/event-stream"), "a list");
    ok(http_accepts("text/event-stream;q=0.9, application/json", "application/json"), "parameters ignored");
    ok(http_accepts("*/*", "application/json"), "*/*");
    ok(http_accepts("text/*", "text/event-stream"), "text/*");
    ok(!http_accepts("text/html", "application/json"), "no match");
    ok(!http_accepts("application/jsonx", "application/json"), "no prefix match");
    ok(!http_accepts(NULL, "application/json"), "no Accept header: nothing named");
    ok(!http_accepts("text/event-stream;q=0, application/json", "text/event-stream"), "q=0: not acceptable");
    ok(!http_accepts("text/event-stream; q=0.0", "text/event-stream"), "q=0.0: not acceptable");
    ok(http_accepts("text/event-stream;q=0.001", "text/event-stream"), "a small q is acceptable");
    ok(!http_accepts("*/*;q=0", "application/json"), "*/*;q=0: nothing is acceptable");
    ok(!http_accepts("text/event-stream;q=0, */*", "text/event-stream"), "the most specific range decides");
    ok(http_accepts("*/*;q=0, application/json", "application/json"), "... both ways");
    ok(http_accepts("TEXT/HTML", "text/html"), "case-insensitive");
    ok(http_accepts_named("text/html", "text/html"), "named: the type itself");
    ok(!http_accepts_named("*/*", "text/html") && !http_accepts_named("text/*", "text/html"),
       "named: wildcards do not name it");
    ok(!http_accepts_named("text/html;q=0", "text/html"), "named: q=0 is not acceptable");
    ok(http_accepts_named("application/json;charset=utf-8, text/html ; level=1", "text/html"),
       "named: parameters other than q ignored");
    double q;
    is_int(http_accept_q("text/*;q=0.5, text/html;q=0.7", "text/html", true, &q), 3, "the most specific match");
    ok(q == 0.7, "its q");
}

static void test_json_body(void)
{
    json_object *o = NULL;
    is_int(http_parse_json("{\"a\":1}", 7, 16, &o), 0, "a JSON object");
    json_object_put(o);
    is_int(http_parse_json("{\"a\":1} \r\n\t", 11, 16, &o), 0, "trailing white space is fine");
    json_object_put(o);
    is_int(http_parse_json("{\"a\":1} x", 9, 16, &o), -EBADMSG, "anything else after the value is not");
    ok(o == NULL, "no value then");
    is_int(http_parse_json("{\"a\":1}{}", 9, 16, &o), -EBADMSG, "nor a second value");
    is_int(http_parse_json("{\"a\":", 5, 16, &o), -EBADMSG, "a cut value");
    is_int(http_parse_json("", 0, 16, &o), -EBADMSG, "an empty body");
    is_int(http_parse_json("[[[1]]]", 7, 2, &o), -EBADMSG, "deeper than depth");
    is_int(http_parse_json("\"\xff\"", 3, 16, &o), -EBADMSG, "invalid UTF-8");

    char e1[] = "REQUEST_METHOD=POST", e2[] = "CONTENT_LENGTH=9";
    char *env[] = {e1, e2, NULL};
    struct mem m = {.in = "[1, 2]\n\n\n", .in_len = 9, .chunk = 4};
    dbuf_init(&m.out, 1 << 10);
    struct http_io io = {&m, mem_read, mem_write, mem_flush, env};
    struct http_req req;
    http_req_init(&req, &io);
    is_int(http_read_json(&req, 8, 16, &o), -E2BIG, "a body past the limit: -E2BIG");
    is_int(http_read_json(&req, 9, 16, &o), 0, "a body read and parsed");
    ok(json_object_is_type(o, json_type_array) && json_object_array_length(o) == 2, "the value");
    json_object_put(o);
    char e3[] = "CONTENT_LENGTH=20";
    char *env2[] = {e1, e3, NULL};
    struct mem m2 = {.in = "[1]", .in_len = 3};
    struct http_io io2 = {&m2, mem_read, mem_write, mem_flush, env2};
    http_req_init(&req, &io2);
    is_int(http_read_json(&req, 100, 16, &o), -EIO, "a body that ends short: -EIO");
    dbuf_free(&m.out);
}

static void test_base64(void)
{
    static const struct {
        const char *in, *out;
    } v[] = {{"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="}, {"foobar", "Zm9vYmFy"}};
    int good = 0;
    for (size_t i = 0; i < ARRAY_SIZE(v); i++) {
        char *b = http_base64((const unsigned char *)v[i].in, strlen(v[i].in), NULL);
        good += b && !strcmp(b, v[i].out);
        free(b);
    }
    is_int(good, (long long)ARRAY_SIZE(v), "base64: RFC 4648 test vectors");
}

static void test_body_and_response(void)
{
    char e1[] = "REQUEST_METHOD=POST", e2[] = "REQUEST_URI=/mcp?x=1", e3[] = "CONTENT_LENGTH=26",
         e4[] = "HTTP_MCP_SESSION_ID=abc", e5[] = "CONTENT_TYPE=application/json";
    char *env[] = {e1, e2, e3, e4, e5, NULL};
    struct mem m = {.in = "{\"jsonrpc\":\"2.0\",\"id\":1}\n", .in_len = 26, .chunk = 7}; /* short reads on purpose */
    dbuf_init(&m.out, 1 << 16);
    struct http_io io = {&m, mem_read, mem_write, mem_flush, env};
    struct http_req req;
    http_req_init(&req, &io);
    is_str(req.path, "/mcp", "the path without the query");
    is_str(http_header(&req, "Mcp-Session-Id"), "abc", "a header by its HTTP name");
    is_str(http_header(&req, "content-type"), "application/json", "Content-Type from CONTENT_TYPE");
    char *body = NULL;
    size_t len = 0;
    is_int(http_read_body(&req, 25, &body, &len), -E2BIG, "CONTENT_LENGTH past the limit: -E2BIG, nothing read");
    is_int((long long)m.in_off, 0, "nothing was read");
    is_int(http_read_body(&req, 26, &body, &len), 0, "at the limit: read");
    is_int((long long)len, 26, "the whole body, over short reads");
    free(body);
    char *env2[] = {e1, NULL}; /* no CONTENT_LENGTH: read to the end, bounded */
    struct mem m2 = {.in = "0123456789", .in_len = 10, .chunk = 7};
    struct http_io io2 = {&m2, mem_read, mem_write, mem_flush, env2};
    struct http_req req2;
    http_req_init(&req2, &io2);
    is_int(http_read_body(&req2, 9, &body, &len), -E2BIG, "no CONTENT_LENGTH: the bytes that arrive are bounded");

    struct http_resp resp;
    http_resp_init(&resp, &io);
    ok(http_add_header(&resp, "X-Bad", "a\r\nInjected: yes") == -EINVAL, "CR/LF in a header value is refused");
    ok(http_add_header(&resp, "Mcp-Session-Id", "%s", "abc") == 0, "a header");
    is_int(http_send_json(&resp, 404, "{}"), 0, "a response");
    is_str(m.out.data, "Status: 404 Not Found\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
                       "Mcp-Session-Id: abc\r\n\r\n{}",
           "CGI-style framing");
    http_resp_free(&resp);

    dbuf_free(&m.out);
    dbuf_init(&m.out, 1 << 16);
    http_resp_init(&resp, &io);
    ok(http_sse_start(&resp) == 0 && http_sse_event(&resp, "{\"a\":1}", 7, true) == 0, "an SSE stream");
    ok(strstr(m.out.data, "Content-Type: text/event-stream\r\n") && strstr(m.out.data, "X-Accel-Buffering: no\r\n") &&
           strstr(m.out.data, "\r\n\r\nevent: message\ndata: {\"a\":1}\n\n") && !strstr(m.out.data, "\nid:"),
       "SSE: headers, one message event, no id");
    http_resp_free(&resp);
    dbuf_free(&m.out);
}

static void test_versions(void)
{
    ok(mcp_version_supported("2025-03-26") && mcp_version_supported("2025-06-18") &&
           mcp_version_supported("2025-11-25"),
       "the three revisions");
    ok(!mcp_version_supported("2024-11-05") && !mcp_version_supported("2025-11-25x"), "no others");
    is_str(mcp_level_name(TOOLS_LOG_WARNING), "warning", "level names");
}

int main(void)
{
    test_decode();
    test_hosts();
    test_origins();
    test_accept();
    test_json_body();
    test_base64();
    test_body_and_response();
    test_versions();
    return tap_done();
}
