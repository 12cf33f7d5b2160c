/* fuzz-form.c: libFuzzer target for the streaming multipart/form-data
 * parser (fcgi/http/form.c). The input is a Content-Type line, a newline, and a
 * body; the first byte of the input also picks how the body is cut into
 * reads. Properties: the parse does not depend on where the reads are cut
 * (the same parts, the same bytes, the same verdict as one read of the
 * whole body); a refusal has a reason; no part's data passes its limit and
 * no more parts are seen than form_fields allows. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "fuzz.h"

#define LOG_MAX (1u << 17) /* more than a body the fuzzer makes (-max_len 64 KiB) */

struct trace {
    char *buf;
    size_t len;
    uint64_t parts;
    const struct form_limits *lim;
};

static void put(struct trace *t, const void *p, size_t n)
{
    if (t->len + n > LOG_MAX)
        n = LOG_MAX - t->len;
    memcpy(t->buf + t->len, p, n);
    t->len += n;
}

static int on_begin(void *ctx, const struct form_part *p)
{
    struct trace *t = ctx;
    t->parts++;
    fuzz_assert(t->parts <= t->lim->fields, "more parts than form_fields");
    put(t, "B", 1);
    put(t, p->name, strlen(p->name) + 1);
    put(t, p->filename, strlen(p->filename) + 1);
    put(t, p->is_file ? "f" : "v", 1);
    return 0;
}

static int on_data(void *ctx, const struct form_part *p, const char *data, size_t len)
{
    struct trace *t = ctx;
    fuzz_assert(p->bytes <= (p->is_file ? t->lim->file_bytes : t->lim->field_bytes), "a part past its limit");
    put(t, data, len); /* no marker: reads may cut the data anywhere */
    return 0;
}

static int on_end(void *ctx, const struct form_part *p)
{
    (void)p;
    put(ctx, "E", 1);
    return 0;
}

/* Parses body with reads of the sizes cut[] gives in turn (0: all at once).
 * Returns the verdict; the trace holds what the callbacks saw. */
static int parse(const char *ct, const char *body, size_t n, const uint8_t *cut, size_t ncut,
                 const struct form_limits *lim, struct trace *t)
{
    struct form_parser p;
    struct form_callbacks cb = {.ctx = t, .part_begin = on_begin, .part_data = on_data, .part_end = on_end};
    t->len = 0;
    t->parts = 0;
    t->lim = lim;
    int rc = form_init(&p, ct, lim, &cb);
    if (rc == 0) {
        size_t off = 0, k = 0;
        while (off < n && rc == 0) {
            size_t step = ncut ? (size_t)(cut[k++ % ncut] % 17) + 1 : n;
            if (step > n - off)
                step = n - off;
            rc = form_feed(&p, body + off, step);
            off += step;
        }
        if (rc == 0)
            rc = form_finish(&p);
    }
    if (rc < 0)
        fuzz_assert(form_error(&p)[0] != '\0', "a refusal without a reason");
    form_free(&p);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size < 300 ? size : 300);
    if (!nl)
        return 0;
    char *ct = fuzz_copy(data, (size_t)(nl - data));
    ct = realloc(ct, (size_t)(nl - data) + 1);
    if (!ct)
        return 0;
    ct[nl - data] = '\0';
    if (strlen(ct) != (size_t)(nl - data)) { /* a NUL inside: not a header value */
        free(ct);
        return 0;
    }
    size_t n = size - (size_t)(nl - data) - 1;
    char *body = fuzz_copy(nl + 1, n);

    /* Small limits, so the fuzzer reaches every one of them. */
    struct form_limits lim;
    form_limits_default(&lim);
    lim.fields = 6;
    lim.field_bytes = 64;
    lim.file_bytes = 300;
    lim.header_bytes = 200;

    struct trace whole = {.buf = malloc(LOG_MAX)}, cut = {.buf = malloc(LOG_MAX)};
    if (whole.buf && cut.buf) {
        int a = parse(ct, body, n, NULL, 0, &lim, &whole);
        int b = parse(ct, body, n, data, size < 64 ? size : 64, &lim, &cut);
        fuzz_assert(a == b, "the verdict depends on how the body is read");
        if (a == 0) {
            fuzz_assert(whole.len == cut.len && !memcmp(whole.buf, cut.buf, whole.len),
                        "the parts depend on how the body is read");
        }
    }
    free(whole.buf);
    free(cut.buf);
    free(body);
    free(ct);
    return 0;
}
