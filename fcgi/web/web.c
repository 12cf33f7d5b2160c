/* web.c: the requests of the page's API, /api/run and /api/cell (see web.h),
 * one code path for both (web__serve; what /api/cell adds is web_cell.c's).
 * One request: read the fields (a multipart form, streamed through form.c
 * with the form_* limits, or a JSON body), open the notebook's workspace
 * (/api/cell), resolve the input (text, an uploaded file, or a URL fetched
 * by the executor's transfers with their guard and caps), then run (a
 * script, or a cell in the workspace's kernel) and answer in the form the
 * client asked for: a call the executor refuses is a 400 or 413, and a
 * stream opens only once it has accepted the call.
 *
 * Stop: the first event of the stream names the run and its cancel URL
 * (relative to the page: api/run/RUNID/cancel). POSTing it creates the
 * run's cancel marker (exec_cancel), which the worker running the script
 * polls: any prefork worker, or a CGI process, can take the cancel,
 * because the run's state is on disk and not in the worker that runs it.
 * A client that goes away cancels its run too: a keepalive comment is sent
 * every WEB_KEEPALIVE_MS and the first write that fails stops the run. */
#include "config.h"

#include "web_internal.h"

#include <ctype.h>
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cfg_outcome.h"
#include "executor.h"
#include "form.h"
#include "metrics.h"
#include "stream.h"

#define WEB_JSON_DEPTH 16  /* JSON bodies are flat objects */
#define WEB_REQS_MAX 256   /* requirement lines */
#define WEB_NOTEBOOK_NAME_MAX 255 /* bytes of the notebook field (a file name) */

enum web_mode { WEB_JSON, WEB_SSE, WEB_HTML };

/* The fields of one request; each a bounded buffer. */
struct web_fields {
    struct dbuf code, input, file, url, reqs, timeout, notebook, network;
    bool file_given;              /* an input_file part with bytes */
    struct dbuf *cur;             /* the part being read */
    struct form_parser *parser;   /* for form_fail */
    unsigned seen;                /* bit per field: a field twice is refused */
    unsigned allowed;             /* bit per field the route takes (web_door.fields) */
};

/* In the order of enum web_field. */
static const char *const field_names[] = {"code",    "input",    "input_file", "input_url", "requirements",
                                          "timeout", "notebook", "network"};

static struct dbuf *field_buf(struct web_fields *f, size_t i)
{
    struct dbuf *const bufs[] = {&f->code,    &f->input,    &f->file,    &f->url,
                                 &f->reqs,    &f->timeout,  &f->notebook, &f->network};
    return bufs[i];
}

/* "(known: code, ...)" for the route's fields, without input_file in JSON. */
static void known_fields(const struct web_fields *f, bool json, char *out, size_t n)
{
    size_t at = (size_t)snprintf(out, n, "(known:");
    const char *sep = " ";
    for (size_t i = 0; i < ARRAY_SIZE(field_names) && at < n; i++) {
        if (!(f->allowed & (1u << i)) || (json && i == WEB_F_INPUT_FILE))
            continue;
        at += (size_t)snprintf(out + at, n - at, "%s%s", sep, field_names[i]);
        sep = ", ";
    }
    if (at < n)
        snprintf(out + at, n - at, ")");
}

static void fields_init(struct web_fields *f, const struct cfg *cfg, unsigned allowed)
{
    memset(f, 0, sizeof *f);
    f->allowed = allowed;
    uint64_t in = cfg->exec.limits.input_bytes ? cfg->exec.limits.input_bytes : cfg->request_bytes;
    uint64_t code = cfg->exec.limits.code_bytes ? cfg->exec.limits.code_bytes : cfg->request_bytes;
    dbuf_init(&f->code, (size_t)code);
    dbuf_init(&f->input, (size_t)in);
    dbuf_init(&f->file, (size_t)in);
    dbuf_init(&f->url, WEB_URL_MAX);
    dbuf_init(&f->reqs, (size_t)cfg->form.field_bytes);
    dbuf_init(&f->timeout, 64);
    dbuf_init(&f->notebook, WEB_NOTEBOOK_NAME_MAX);
    dbuf_init(&f->network, (size_t)cfg->form.field_bytes);
}

static void fields_free(struct web_fields *f)
{
    for (size_t i = 0; i < ARRAY_SIZE(field_names); i++)
        dbuf_free(field_buf(f, i));
}

/* Which limit a buffer's ceiling is, with its value, for the 413 reason
 * ("code_bytes (1.0 MiB)"): out, n bytes. */
static const char *field_limit(struct web_fields *f, const struct dbuf *b, char *out, size_t n)
{
    const char *key = b == &f->code                      ? "code_bytes"
                      : b == &f->input || b == &f->file ? "input_bytes"
                      : b == &f->url                    ? "the URL ceiling"
                      : b == &f->timeout                ? "the timeout field's ceiling"
                      : b == &f->notebook               ? "the notebook field's ceiling"
                                                        : "form_field_bytes";
    char hs[32];
    util_human_size(b->max, hs, sizeof hs);
    snprintf(out, n, "%s (%s)", key, hs);
    return out;
}

/* "the request is larger than request_bytes (96.0 MiB)" into err. */
static void too_large(const struct app *app, char *err, size_t errlen)
{
    char hs[32];
    util_human_size(app->cfg->request_bytes, hs, sizeof hs);
    snprintf(err, errlen, "the request is larger than request_bytes (%s)", hs);
}

/* ------------------------------------------------------------ responses */

/* A refusal before the run: JSON {"error": ...}, or a page. */
static void refuse(const char *route, enum web_mode mode, struct http_resp *resp, int status, const char *err)
{
    log_msg(LOG_LVL_INFO, "%s: %d: %s", route, status, err);
    if (mode != WEB_HTML) {
        http_send_error(resp, status, err);
        return;
    }
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    web__html_head(&b, "Not run");
    discard(dbuf_printf(&b, "<h1>The script was not run</h1>\n<p class=\"error\" role=\"alert\">%d %s: ", status,
                        http_reason(status)));
    web__html_escape(&b, err, strlen(err));
    discard(dbuf_printf(&b, "</p>\n"));
    web__html_foot(&b);
    web__send_html(resp, status, &b);
    dbuf_free(&b);
}

/* ----------------------------------------------------------- streaming */

struct web_run {
    const struct app *app;
    const struct web_door *door;
    struct http_resp *resp;
    struct result *r;
    const char *workspace_id; /* the notebook's, told the page; NULL: none */
    const struct exec_limits *limits; /* the run's: the run event says them */
    bool sse;
    bool accepted;       /* exec_run's checks passed: on_accepted ran */
    bool announced;
    uint64_t pad;        /* CGI: cgi_sse_padding, else 0 */
    bool unpadded;       /* events written since the last padding */
    int64_t last_pad_ms;
    char carry[3][4];   /* an incomplete UTF-8 sequence at a chunk's end, per stream */
    size_t ncarry[3];
};

/* fcgiwrap (libfcgi) holds a CGI program's output in an 8 KiB buffer that
 * nothing flushes: under CGI a comment of cgi_sse_padding bytes pushes the
 * events written so far through it, at most every WEB_PAD_EVERY_MS (a
 * chatty script costs at most 4 paddings a second). */
static void pad_now(struct web_run *w)
{
    if (!w->pad || w->resp->failed)
        return;
    discard(http_sse_pad(w->resp, w->pad)); /* a failed write marks resp failed */
    w->unpadded = false;
    w->last_pad_ms = util_now_ms();
}

static void send_event(struct web_run *w, const char *event, json_object *o)
{
    if (!w->sse || w->resp->failed) {
        json_object_put(o);
        return;
    }
    size_t n;
    const char *s = json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    /* Flushed one by one: under CGI there is no later chance. */
    discard(http_sse_named(w->resp, event, s, n, true));
    json_object_put(o);
    w->unpadded = true;
    if (w->pad && util_now_ms() - w->last_pad_ms >= WEB_PAD_EVERY_MS)
        pad_now(w);
}

static void log_event(struct web_run *w, const char *stream, const char *text, size_t len)
{
    size_t n, rn;
    /* The state directory's path (an installer's line, a traceback in the
     * fallback) is written STATE, as in the result. */
    cleanup_free char *redacted = result_redact(text, len, &w->app->cfg->exec, &rn);
    cleanup_free char *clean = redacted ? util_utf8_sanitize(redacted, rn, &n) : NULL;
    if (!clean || n == 0)
        return;
    json_object *o = json_object_new_object();
    json_object_object_add(o, "stream", json_object_new_string(stream));
    json_object_object_add(o, "text", json_object_new_string_len(clean, (int)n));
    send_event(w, "log", o);
}

/* Bytes at the end of d[0..n) that start a UTF-8 sequence the chunk cuts. */
static size_t utf8_tail(const unsigned char *d, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = d[n - k];
        if ((c & 0xC0) == 0x80)
            continue; /* a continuation byte: look further back */
        size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
        return need > k ? k : 0;
    }
    return 0;
}

static void flush_carry(struct web_run *w)
{
    for (size_t s = 0; s < 3; s++) {
        if (w->ncarry[s])
            log_event(w, result_stream_name((enum result_stream)s), w->carry[s], w->ncarry[s]);
        w->ncarry[s] = 0;
    }
}

static void on_phase(void *ctx, enum exec_phase p, const char *detail)
{
    struct web_run *w = ctx;
    if (!w->announced && w->r->run_id[0]) {
        w->announced = true;
        json_object *o = json_object_new_object();
        char url[WS_ID_MAX + 32];
        snprintf(url, sizeof url, "api/run/%s/cancel", w->r->run_id);
        json_object_object_add(o, "run_id", json_object_new_string(w->r->run_id));
        json_object_object_add(o, "cancel_url", json_object_new_string(url));
        /* The run's limits by key (ms, bytes, counts), so that the page can
         * say in plain words which one a run crossed and what it is. */
        json_object *lim = json_object_new_object();
        for (size_t i = 0; i < exec_limit_defs_n; i++)
            json_object_object_add(lim, exec_limit_defs[i].key,
                                   json_object_new_int64((int64_t)exec_limit_get(w->limits, &exec_limit_defs[i])));
        json_object_object_add(o, "limits", lim);
        send_event(w, "run", o);
        pad_now(w); /* the page needs the id for Stop at once */
    }
    if (p == EXEC_PHASE_COLLECTING || p == EXEC_PHASE_DONE)
        flush_carry(w);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "phase", json_object_new_string(exec_phase_name(p)));
    if (detail && util_utf8_valid(detail, strlen(detail)))
        json_object_object_add(o, "detail", json_object_new_string(detail));
    send_event(w, "phase", o);
}

static void on_output(void *ctx, enum result_stream s, const char *data, size_t len)
{
    struct web_run *w = ctx;
    if (!w->sse || (size_t)s >= 3 || len == 0)
        return;
    /* The carried bytes first, then all but a cut sequence at the end. */
    char joined[4 + 65536];
    while (len) {
        size_t c = w->ncarry[s];
        size_t take = len < sizeof joined - c ? len : sizeof joined - c;
        memcpy(joined, w->carry[s], c);
        memcpy(joined + c, data, take);
        data += take;
        len -= take;
        size_t total = c + take;
        size_t tail = len ? 0 : utf8_tail((const unsigned char *)joined, total);
        memcpy(w->carry[s], joined + total - tail, tail);
        w->ncarry[s] = tail;
        log_event(w, result_stream_name(s), joined, total - tail);
    }
}

static void on_install_line(void *ctx, const char *line)
{
    struct web_run *w = ctx;
    char buf[4096];
    int n = snprintf(buf, sizeof buf, "%s\n", line);
    log_event(w, "install", buf, n < 0 ? 0 : (size_t)n >= sizeof buf ? sizeof buf - 1 : (size_t)n);
}

/* The script asks: the page shows an input box under the log, whose
 * Enter POSTs input_url. */
static void on_question(void *ctx, unsigned n, const char *prompt)
{
    struct web_run *w = ctx;
    flush_carry(w);
    size_t len;
    cleanup_free char *clean = util_utf8_sanitize(prompt, strlen(prompt), &len);
    char url[WS_ID_MAX + 32];
    snprintf(url, sizeof url, "api/run/%s/input", w->r->run_id);
    json_object *o = json_object_new_object();
    json_object_object_add(o, "question", json_object_new_int64(n));
    json_object_object_add(o, "prompt", clean ? json_object_new_string_len(clean, (int)len) : json_object_new_string(""));
    json_object_object_add(o, "input_url", json_object_new_string(url));
    json_object_object_add(o, "wait_ms", json_object_new_int64(w->limits->input_wait_ms));
    send_event(w, "question", o);
    pad_now(w);
}

static const char *on_cancel_reason(void *ctx)
{
    struct web_run *w = ctx;
    return app_stop_reason(w->app);
}

static bool on_cancelled(void *ctx)
{
    struct web_run *w = ctx;
    if (w->app->cancel_all && *w->app->cancel_all)
        return true;
    if (!w->sse) /* JSON and HTML: cancel_on_disconnect decides */
        return w->app->cfg->cancel_on_disconnect && http_client_gone(w->resp);
    if (w->unpadded && util_now_ms() - w->last_pad_ms >= WEB_PAD_EVERY_MS)
        pad_now(w);
    if (!w->resp->failed && util_now_ms() - w->resp->last_write_ms >= WEB_KEEPALIVE_MS)
        discard(http_sse_comment(w->resp, "keepalive"));
    if (w->resp->failed) {
        log_msg(LOG_LVL_INFO, "run %s: the client went away: cancelling it", w->r->run_id);
        return true;
    }
    return false;
}

/* ------------------------------------------------------------- reading */

static int part_begin(void *ctx, const struct form_part *p)
{
    struct web_fields *f = ctx;
    for (size_t i = 0; i < ARRAY_SIZE(field_names); i++) {
        if (strcmp(p->name, field_names[i]) || !(f->allowed & (1u << i)))
            continue;
        if (f->seen & (1u << i)) {
            form_fail(f->parser, "the field \"%s\" is given twice", field_names[i]);
            return -EINVAL;
        }
        f->seen |= 1u << i;
        f->cur = field_buf(f, i);
        return 0;
    }
    char known[160];
    known_fields(f, false, known, sizeof known);
    cleanup_free char *name = util_utf8_sanitize(p->name, strnlen(p->name, 64), NULL);
    form_fail(f->parser, "unknown field \"%s\"%s %s", name ? name : "?", strlen(p->name) > 64 ? "..." : "", known);
    return -EINVAL;
}

static int part_data(void *ctx, const struct form_part *p, const char *data, size_t len)
{
    struct web_fields *f = ctx;
    (void)p;
    int rc = dbuf_append(f->cur, data, len);
    char lim[96];
    if (rc == -E2BIG)
        form_fail(f->parser, "the field \"%s\" is larger than %s", p->name, field_limit(f, f->cur, lim, sizeof lim));
    if (f->cur == &f->file && rc == 0)
        f->file_given = true;
    return rc;
}

static int part_end(void *ctx, const struct form_part *p)
{
    struct web_fields *f = ctx;
    (void)p;
    f->cur = NULL;
    return 0;
}

int web__read_form(const struct app *app, struct http_req *req, const char *ct, const struct form_callbacks *cb,
                   struct form_parser **slot, char *err, size_t errlen)
{
    struct form_parser p;
    const char *cl = http_param(req, "CONTENT_LENGTH");
    if (cl && *cl && strtoull(cl, NULL, 10) > app->cfg->request_bytes) {
        too_large(app, err, errlen);
        return 413; /* before reading any of it */
    }
    *slot = &p;
    int rc = form_init(&p, ct, &app->cfg->form, cb);
    uint64_t total = 0;
    char chunk[65536];
    while (rc == 0) {
        ssize_t n = req->io->read(req->io->ctx, chunk, sizeof chunk);
        if (n < 0) {
            form_free(&p);
            *slot = NULL;
            snprintf(err, errlen, "cannot read the request body");
            return 400;
        }
        if (n == 0) {
            rc = form_finish(&p);
            break;
        }
        total += (uint64_t)n;
        if (total > app->cfg->request_bytes) {
            form_free(&p);
            *slot = NULL;
            too_large(app, err, errlen);
            return 413;
        }
        rc = form_feed(&p, chunk, (size_t)n);
    }
    snprintf(err, errlen, "%s", form_error(&p));
    form_free(&p);
    *slot = NULL;
    if (rc == -E2BIG)
        return 413;
    return rc < 0 ? 400 : 0;
}

/* {"code": ..., "input": ..., "input_url": ..., "requirements": [...] or
 * "a\nb", "timeout": seconds, "network": "off", "on" or a list}. */
static int read_json(const struct app *app, struct http_req *req, struct web_fields *f, char *err, size_t errlen)
{
    json_object *in = NULL;
    int rc = http_read_json(req, (size_t)app->cfg->request_bytes, WEB_JSON_DEPTH, &in);
    if (rc == -E2BIG) {
        too_large(app, err, errlen);
        return 413;
    }
    if (rc == -EIO) {
        snprintf(err, errlen, "cannot read the request body");
        return 400;
    }
    if (rc == -ENOMEM) {
        snprintf(err, errlen, "out of memory");
        return 500;
    }
    int status = 0;
    if (rc < 0 || !json_object_is_type(in, json_type_object)) {
        snprintf(err, errlen, "expected a JSON object with a string \"code\"");
        status = 400;
        goto out;
    }
    json_object_object_foreach(in, key, val) {
        size_t i = 0;
        while (i < ARRAY_SIZE(field_names) && strcmp(key, field_names[i]))
            i++;
        if (i == ARRAY_SIZE(field_names) || i == WEB_F_INPUT_FILE || !(f->allowed & (1u << i))) {
            char known[160];
            known_fields(f, true, known, sizeof known);
            cleanup_free char *name = util_utf8_sanitize(key, strnlen(key, 64), NULL);
            snprintf(err, errlen, "unknown member \"%s\"%s %s", name ? name : "?", strlen(key) > 64 ? "..." : "",
                     known);
            status = 400;
            goto out;
        }
        if (json_object_is_type(val, json_type_null))
            continue;
        struct dbuf *b = field_buf(f, i);
        if (b == &f->timeout && (json_object_is_type(val, json_type_int) || json_object_is_type(val, json_type_double))) {
            rc = dbuf_printf(b, "%.17g", json_object_get_double(val));
        } else if (b == &f->reqs && json_object_is_type(val, json_type_array)) {
            rc = 0;
            for (size_t k = 0; rc == 0 && k < json_object_array_length(val); k++) {
                json_object *e = json_object_array_get_idx(val, k);
                if (!json_object_is_type(e, json_type_string)) {
                    snprintf(err, errlen, "\"requirements\" must be strings");
                    status = 400;
                    goto out;
                }
                rc = dbuf_printf(b, "%s\n", json_object_get_string(e));
            }
        } else if (json_object_is_type(val, json_type_string) && b != &f->timeout) {
            rc = dbuf_append(b, json_object_get_string(val), (size_t)json_object_get_string_len(val));
        } else {
            snprintf(err, errlen, "\"%s\" has the wrong type", field_names[i]);
            status = 400;
            goto out;
        }
        if (rc < 0) {
            char lim[96];
            snprintf(err, errlen, "\"%s\" is larger than %s", field_names[i], field_limit(f, b, lim, sizeof lim));
            status = rc == -E2BIG ? 413 : 500;
            goto out;
        }
    }
out:
    json_object_put(in);
    return status;
}

/* Splits the requirements text into lines: trimmed, no blanks, no '#'
 * comments. The strings point into text (modified). */
static int split_reqs(char *text, const char **out, size_t max, size_t *n)
{
    *n = 0;
    for (char *line = text; line && *line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl++ = '\0';
        char *hash = strstr(line, " #");
        if (line[0] == '#')
            line[0] = '\0';
        else if (hash)
            *hash = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        size_t len = strlen(line);
        while (len && (line[len - 1] == ' ' || line[len - 1] == '\t' || line[len - 1] == '\r'))
            line[--len] = '\0';
        if (len) {
            if (*n >= max)
                return -E2BIG;
            out[(*n)++] = line;
        }
        line = nl;
    }
    return 0;
}

/* ----------------------------------------------------------------- run */

/* The request's fields, from a multipart form or a JSON body. 0, or an
 * HTTP status with the reason in err. */
static int read_fields(const struct app *app, struct http_req *req, struct web_fields *f, char *err, size_t errlen)
{
    const char *ct = http_header(req, "Content-Type");
    if (ct && !strncasecmp(ct, "multipart/form-data", 19)) {
        struct form_callbacks cb = {f, part_begin, part_data, part_end};
        return web__read_form(app, req, ct, &cb, &f->parser, err, errlen);
    }
    if (ct && !strncasecmp(ct, "application/json", 16) && (!ct[16] || ct[16] == ';' || ct[16] == ' '))
        return read_json(app, req, f, err, errlen);
    snprintf(err, errlen, "Content-Type must be multipart/form-data or application/json");
    return 415;
}

/* What one run is made of beyond the fields: the input fetched from a URL
 * and the requirement lines (both freed by spec_free). */
struct web_spec {
    struct exec_spec spec;
    char *fetched;
    const char **reqs;
};

static void spec_free(struct web_spec *s)
{
    free(s->fetched);
    free(s->reqs);
}

/* The input: one way only. An empty text box and no file chosen are "no
 * input" (the page always sends both fields). 0, or an HTTP status. */
static int spec_input(const struct app *app, struct web_fields *f, struct web_spec *s, char *err, size_t errlen)
{
    const struct cfg *cfg = app->cfg;
    int ways = (f->input.len > 0) + f->file_given + (f->url.len > 0);
    if (ways > 1) {
        snprintf(err, errlen, "give the input one way: as text, as a file, or as a URL");
        return 400;
    }
    if (f->url.len) {
        struct fetch_file ff;
        char ferr[FETCH_ERR_MAX];
        size_t len = 0;
        int rc = fetch_to_memory(&cfg->fetch, f->url.data, cfg->exec.limits.input_bytes, "input_bytes", &s->fetched,
                                 &len, &ff, ferr, sizeof ferr);
        if (rc < 0) {
            snprintf(err, errlen, "input_url: %s", ferr);
            return cfg_transfer(rc)->http_status;
        }
        s->spec.input = s->fetched;
        s->spec.input_len = len;
    } else if (f->file_given) {
        s->spec.input = f->file.data;
        s->spec.input_len = f->file.len;
    } else if (f->input.len) {
        s->spec.input = f->input.data;
        s->spec.input_len = f->input.len;
    }
    return 0;
}

/* The spec of the run from the fields (borrowed from them); exec_run
 * checks the code, the input and the requirements. 0, or an HTTP status
 * with the reason. */
static int make_spec(const struct app *app, struct web_fields *f, struct web_spec *s, char *err, size_t errlen)
{
    const struct cfg *cfg = app->cfg;
    exec_spec_init(&s->spec, &cfg->exec);
    if (f->timeout.len) {
        char *end;
        double sec = strtod(f->timeout.data, &end);
        while (*end == ' ' || *end == 's')
            end++;
        if (*end || !(sec > 0) || sec * 1000 > (double)cfg->exec.limits.wall_ms) {
            snprintf(err, errlen, "the timeout must be seconds, above 0 and at most the server's timeout (%lld s)",
                     (long long)(cfg->exec.limits.wall_ms / 1000));
            return 400;
        }
        s->spec.limits.wall_ms = (int64_t)(sec * 1000) < 100 ? 100 : (int64_t)(sec * 1000);
    }
    int status = spec_input(app, f, s, err, errlen);
    if (status)
        return status;
    if (f->reqs.len) {
        size_t n = 0;
        s->reqs = calloc(WEB_REQS_MAX, sizeof *s->reqs);
        if (!s->reqs) {
            snprintf(err, errlen, "out of memory");
            return 500;
        }
        if (split_reqs(f->reqs.data, s->reqs, WEB_REQS_MAX, &n) < 0) {
            snprintf(err, errlen, "more than %d requirement lines", WEB_REQS_MAX);
            return 413;
        }
        s->spec.requirements = s->reqs;
        s->spec.n_requirements = n;
    }
    /* The network as it is (exec_run checks it, and refuses a bad one with
     * the reason); an empty field is the server's, as the page sends it. */
    if (f->network.len)
        s->spec.network = f->network.data;
    s->spec.code = f->code.data ? f->code.data : "";
    s->spec.code_len = f->code.len;
    /* The page sends the name of the .ipynb it opened; a JSON body may say
     * "notebook": "name.ipynb" too. */
    if (f->notebook.len)
        s->spec.notebook = f->notebook.data;
    return 0;
}

/* Turned away by admission control: nothing ran, nothing is kept. */
static void answer_busy(struct web_run *w, enum web_mode mode, const struct result *r, int status)
{
    long long ra = (long long)((w->app->cfg->exec.retry_after_ms + 999) / 1000);
    const char *busy = r->error ? r->error : "the server is busy";
    log_msg(LOG_LVL_INFO, "%s: %d: %s", w->door->route, status, busy);
    if (w->sse) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "status", json_object_new_int(status));
        json_object_object_add(o, "error", json_object_new_string(busy));
        json_object_object_add(o, "retry_after", json_object_new_int64(ra));
        send_event(w, "error", o);
    } else {
        discard(http_add_header(w->resp, "Retry-After", "%lld", ra));
        refuse(w->door->route, mode, w->resp, status, busy);
    }
}

/* The run's answer: the result event, the result page, or the JSON, with
 * status (the outcome's). rc: exec_run's, the cause for the log. */
static void answer_result(struct web_run *w, enum web_mode mode, const struct result *r, int status, int rc)
{
    struct http_resp *resp = w->resp;
    if (r->outcome != EXEC_OUTCOME_DONE)
        log_msg(LOG_LVL_ERROR, "run %s: sandbox error: %s", r->run_id, r->error ? r->error : strerror(-rc));
    else
        log_msg(LOG_LVL_INFO, "run %s: %s in %lld ms", r->run_id, result_status_name(r->status), (long long)r->duration_ms);
    /* No path of the server; the URLs stay relative to the site (the page
     * links them relative to itself, which holds under any base path). */
    json_object *res = result_client_json(r, NULL, &w->app->cfg->exec);
    if (res && w->workspace_id)
        json_object_object_add(res, "workspace", json_object_new_string(w->workspace_id));
    if (!res) {
        if (!resp->started)
            http_send_error(resp, 500, "out of memory");
    } else if (mode == WEB_SSE) {
        flush_carry(w);
        send_event(w, "result", json_object_get(res));
    } else if (mode == WEB_HTML) {
        web__result_page(resp, status, r, res);
    } else {
        size_t n;
        const char *s = json_object_to_json_string_length(res, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
        discard(http_send(resp, status, "application/json", s, n));
    }
    json_object_put(res);
}

/* The executor accepted the call: only now does the answer become a
 * stream (a refusal before it is a plain 400 or 413), opened with the
 * notebook's workspace (which the page keeps) and "queued". */
static int on_accepted(void *ctx)
{
    struct web_run *w = ctx;
    w->accepted = true;
    if (!w->sse)
        return 0;
    if (http_sse_start(w->resp) < 0)
        return -EPIPE; /* the client is gone: nothing runs */
    json_object *o;
    if (w->workspace_id) {
        o = json_object_new_object();
        json_object_object_add(o, "workspace", json_object_new_string(w->workspace_id));
        send_event(w, "workspace", o);
    }
    o = json_object_new_object();
    json_object_object_add(o, "phase", json_object_new_string("queued"));
    send_event(w, "phase", o);
    return 0;
}

/* Runs spec (a script, or a cell of ws's kernel) and answers in mode.
 * True when nothing ran: the executor refused it before anything was
 * made, or the client had gone when it was accepted. */
static bool run_and_answer(const struct app *app, const struct web_door *door, struct http_resp *resp,
                           enum web_mode mode, const struct exec_spec *spec, const struct web_ws *ws)
{
    struct result r;
    result_init(&r);
    struct web_run w = {
        .app = app, .door = door, .resp = resp, .r = &r, .limits = &spec->limits, .sse = mode == WEB_SSE,
        .workspace_id = ws->id[0] ? ws->id : NULL,
    };
    if (w.sse && app->mode && !strcmp(app->mode, "cgi"))
        w.pad = app->cfg->cgi_sse_padding;
    struct exec_sink sink = {
        .ctx = &w, .phase = on_phase, .output = on_output, .install_line = on_install_line,
        .cancelled = on_cancelled, .cancel_reason = on_cancel_reason, .accepted = on_accepted,
        /* Only a stream can ask: a JSON or HTML answer comes at the end. */
        .question = w.sse && !door->cell && app_exec_of(app)->answer ? on_question : NULL,
    };
    const struct app_exec *x = app_exec_of(app);
    struct metrics_run meter;
    metrics_run_begin(&meter, &sink);
    int rc = door->cell ? x->cell(spec, &meter.sink, &r) : x->run(spec, &meter.sink, &r);
    metrics_run_end(app->cfg, &meter, METRICS_DOOR_WEB, door->cell, &r);
    const struct cfg_outcome *o = cfg_outcome(r.outcome);
    /* Refused before the stream began (the checks, the disk, a failure
     * of the checks): a plain answer; stopped by on_accepted: the client
     * is gone, nothing ran, and nobody knows the workspace. */
    bool refused = (!w.accepted && r.outcome != EXEC_OUTCOME_DONE) || r.outcome == EXEC_OUTCOME_STOPPED;
    if (refused && o->http_status) {
        if (o->retry) /* nothing was made; come back later */
            discard(http_add_header(resp, "Retry-After", "%lld", (long long)((app->cfg->exec.retry_after_ms + 999) / 1000)));
        refuse(door->route, mode, resp, o->http_status, r.error ? r.error : "the request was refused");
    } else if (r.outcome == EXEC_OUTCOME_BUSY) {
        answer_busy(&w, mode, &r, o->http_status);
    } else if (!refused) {
        answer_result(&w, mode, &r, o->http_status, rc);
    }
    result_free(&r);
    return refused;
}

void web__serve(const struct app *app, struct http_req *req, struct http_resp *resp, const struct web_door *door,
                const char *wid)
{
    const char *accept = http_header(req, "Accept");
    enum web_mode mode = http_accepts_named(accept, "text/event-stream") ? WEB_SSE
                         : http_accepts_named(accept, "text/html")       ? WEB_HTML
                                                                         : WEB_JSON;
    if (strcmp(req->method, "POST")) {
        discard(http_add_header(resp, "Allow", "POST"));
        refuse(door->route, mode, resp, 405, "use POST with a multipart form or a JSON body {\"code\": ...}");
        return;
    }
    char err[FETCH_ERR_MAX + 64] = "";
    struct web_fields f;
    struct web_spec s = {0};
    struct web_ws ws = {0};
    fields_init(&f, app->cfg, door->fields);
    int status = read_fields(app, req, &f, err, sizeof err);
    if (status == 0 && door->open)
        status = door->open(app, wid, &ws, err, sizeof err);
    if (status == 0)
        status = make_spec(app, &f, &s, err, sizeof err);
    s.spec.workspace = ws.dir;
    if (status == 0 && mode == WEB_SSE)
        stream_open_call(req, resp); /* in serve: the stream process writes it from here on */
    bool refused = status != 0;
    if (status)
        refuse(door->route, mode, resp, status, err[0] ? err : "the request was refused");
    else
        refused = run_and_answer(app, door, resp, mode, &s.spec, &ws);
    if (door->close) /* a workspace made for a call that ran nothing goes again */
        door->close(app, &ws, refused && ws.made);
    spec_free(&s);
    fields_free(&f);
}

static const struct web_door run_door = {
    .route = "/api/run",
    .fields = (1u << WEB_F_CODE) | (1u << WEB_F_INPUT) | (1u << WEB_F_INPUT_FILE) | (1u << WEB_F_INPUT_URL) |
              (1u << WEB_F_REQUIREMENTS) | (1u << WEB_F_TIMEOUT) | (1u << WEB_F_NOTEBOOK) | (1u << WEB_F_NETWORK),
};

void web_api_run(const struct app *app, struct http_req *req, struct http_resp *resp)
{
    web__serve(app, req, resp, &run_door, NULL);
}

/* ------------------------------------------------------- cancel, input */

/* POST api/run/RUNID/input, {"question": N, "text": "..."} or {"question":
 * N, "eof": true}: the answer to the script's question N, its next line of
 * input, or its input closed. */
static void answer_input(const struct app *app, struct http_req *req, struct http_resp *resp, const char *run_id)
{
    const struct app_exec *x = app_exec_of(app);
    json_object *in = NULL, *v;
    int rc = http_read_json(req, EXEC_ANSWER_MAX * 7 + 256, WEB_JSON_DEPTH, &in);
    if (rc == -E2BIG) {
        http_send_error(resp, 413, "the answer is too long");
        return;
    }
    int64_t n = 0;
    const char *text = NULL;
    size_t len = 0;
    bool eof = false;
    if (rc == 0 && json_object_is_type(in, json_type_object) && json_object_object_get_ex(in, "question", &v) &&
        json_object_is_type(v, json_type_int))
        n = json_object_get_int64(v);
    if (in && json_object_object_get_ex(in, "text", &v) && json_object_is_type(v, json_type_string)) {
        text = json_object_get_string(v);
        len = (size_t)json_object_get_string_len(v);
    }
    if (in && json_object_object_get_ex(in, "eof", &v) && json_object_is_type(v, json_type_boolean))
        eof = json_object_get_boolean(v);
    if (n <= 0 || n > UINT32_MAX || eof == (text != NULL)) {
        json_object_put(in);
        http_send_error(resp, 400, "send a JSON body {\"question\": N, \"text\": \"...\"} or {\"question\": N, "
                                   "\"eof\": true}");
        return;
    }
    rc = x->answer ? x->answer(app->cfg->state_dir, run_id, (unsigned)n, text, len) : -ENOSYS;
    json_object_put(in);
    if (rc == -ENOENT)
        http_send_error(resp, 404, "no such run");
    else if (rc == -EALREADY)
        http_send_error(resp, 409, "the run has already finished");
    else if (rc == -ESTALE || rc == -ESRCH)
        http_send_error(resp, 409, "the run does not wait on that question");
    else if (rc == -E2BIG)
        http_send_error(resp, 413, "the answer is too long");
    else if (rc < 0)
        http_send_error(resp, 500, "cannot answer the run");
    else
        discard(http_send_json(resp, 202, "{\"answered\":true}"));
}

void web_api_run_sub(const struct app *app, struct http_req *req, struct http_resp *resp, const char *rest)
{
    char run_id[WS_ID_MAX + 1];
    size_t idn = ws_id_prefix(rest); /* RUNID, or NODE-RUNID in a cluster */
    bool input = idn && !strcmp(rest + idn, "/input");
    if (idn == 0 || (!input && strcmp(rest + idn, "/cancel"))) {
        http_send_error(resp, 404, "no such API (POST api/run/RUNID/cancel stops a run, api/run/RUNID/input answers it)");
        return;
    }
    if (strcmp(req->method, "POST")) {
        discard(http_add_header(resp, "Allow", "POST"));
        http_send_error(resp, 405, "use POST");
        return;
    }
    memcpy(run_id, rest, idn);
    run_id[idn] = '\0';
    if (input) {
        answer_input(app, req, resp, run_id);
        return;
    }
    int rc = app_cancel_run(app, run_id);
    if (rc == -ENOENT) {
        http_send_error(resp, 404, "no such run");
    } else if (rc == -EALREADY) {
        http_send_error(resp, 409, "the run has already finished");
    } else if (rc < 0) {
        http_send_error(resp, 500, "cannot cancel the run");
    } else {
        discard(http_send_json(resp, 202, "{\"cancelled\":true}"));
    }
}
