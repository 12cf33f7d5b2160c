/* test-form.c: the streaming multipart/form-data parser: boundaries split
 * across reads at every offset, CRLF edge cases, a missing final boundary,
 * huge headers, too many fields, binary content with CR, LF, NUL and
 * boundary-like bytes, and every limit crossed. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "form.h"
#include "tap.h"

#define CT "multipart/form-data; boundary=XyZ"

/* What the callbacks saw, as one string: "[name|filename|file?]data;" per
 * part, and the data of every part concatenated as it arrived. */
struct seen {
    struct dbuf out;
    int begins, ends;
    int refuse_at;   /* part_data refuses the part with this index (-1: never) */
};

static int on_begin(void *ctx, const struct form_part *p)
{
    struct seen *s = ctx;
    s->begins++;
    return dbuf_printf(&s->out, "[%s|%s|%s|%s]", p->name, p->filename, p->is_file ? "f" : "-", p->content_type);
}

static int on_data(void *ctx, const struct form_part *p, const char *d, size_t n)
{
    struct seen *s = ctx;
    if ((int)p->index == s->refuse_at)
        return -EPERM;
    return dbuf_append(&s->out, d, n);
}

static int on_end(void *ctx, const struct form_part *p)
{
    struct seen *s = ctx;
    s->ends++;
    return dbuf_printf(&s->out, ";%llu\n", (unsigned long long)p->bytes);
}

/* Parses body in pieces of `step` bytes (0: all at once; SIZE_MAX: split
 * at `at` only). Returns form_feed/finish's result; s->out has what the
 * callbacks saw; err gets the reason. */
static int parse_split(const char *ct, const struct form_limits *lim, const char *body, size_t len, size_t step,
                       size_t at, struct seen *s, char *err, size_t errlen)
{
    struct form_parser p;
    struct form_callbacks cb = {s, on_begin, on_data, on_end};
    dbuf_init(&s->out, 1 << 24);
    s->begins = s->ends = 0;
    int rc = form_init(&p, ct, lim, &cb);
    if (rc == 0) {
        if (step == SIZE_MAX) {
            rc = form_feed(&p, body, at);
            if (rc == 0)
                rc = form_feed(&p, body + at, len - at);
        } else if (step == 0) {
            rc = form_feed(&p, body, len);
        } else {
            for (size_t i = 0; i < len && rc == 0; i += step)
                rc = form_feed(&p, body + i, len - i < step ? len - i : step);
        }
        if (rc == 0)
            rc = form_finish(&p);
    }
    snprintf(err, errlen, "%s", form_error(&p));
    form_free(&p);
    return rc;
}

static struct form_limits lim;

static int parse(const char *body, size_t len, struct seen *s, char *err)
{
    return parse_split(CT, &lim, body, len, 0, 0, s, err, 256);
}

#define B(lit) lit, sizeof(lit) - 1

static const char simple[] =
    "preamble to ignore\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"code\"\r\n"
    "\r\n"
    "print(1)\r\n"
    "--XyZ\r\n"
    "Content-Disposition: form-data; name=\"input_file\"; filename=\"in.bin\"\r\n"
    "Content-Type: application/octet-stream\r\n"
    "\r\n"
    "A\r\nB\r\n--XyY\r\n--XYZ\r--\n\0C\r\n-\r\n--\r\n--Xy\r\n"
    "\r\n--XyZ  \t\r\n"
    "Content-Disposition: form-data; name=empty\r\n"
    "\r\n"
    "\r\n--XyZ--\r\n"
    "epilogue to ignore --XyZ\r\n";
static const char simple_want[] =
    "[code||-|]print(1);8\n"
    "[input_file|in.bin|f|application/octet-stream]A\r\nB\r\n--XyY\r\n--XYZ\r--\n\0C\r\n-\r\n--\r\n--Xy\r\n;39\n"
    "[empty||-|];0\n";

static void test_whole_and_split(void)
{
    struct seen s = {.refuse_at = -1};
    char err[256] = "";
    size_t len = sizeof simple - 1, wlen = sizeof simple_want - 1;
    int rc = parse(simple, len, &s, err);
    is_int(rc, 0, "a body in one read: parsed (%s)", err);
    ok(s.out.len == wlen && !memcmp(s.out.data, simple_want, wlen), "parts, names, file name, type and binary data as sent");
    if (s.out.len != wlen || memcmp(s.out.data, simple_want, wlen))
        { diag("got %zu want %zu", s.out.len, wlen); for (size_t k = 0; k < s.out.len && k < wlen; k++) if (s.out.data[k] != simple_want[k]) { diag("differ at %zu", k); break; } }
    is_int(s.begins * 10 + s.ends, 33, "three part_begin, three part_end");
    dbuf_free(&s.out);

    /* The body split in two at every offset: a delimiter, a CRLF, a header
     * cut anywhere gives the same parts. */
    int bad = 0;
    for (size_t at = 0; at <= len; at++) {
        rc = parse_split(CT, &lim, simple, len, SIZE_MAX, at, &s, err, sizeof err);
        if (rc != 0 || s.out.len != wlen || memcmp(s.out.data, simple_want, wlen)) {
            if (!bad++)
                diag("split at %zu: rc %d (%s)", at, rc, err);
        }
        dbuf_free(&s.out);
    }
    is_int(bad, 0, "split in two at each of %zu offsets: the same parts every time", len + 1);

    bad = 0;
    for (size_t step = 1; step <= 9; step++) {
        rc = parse_split(CT, &lim, simple, len, step, 0, &s, err, sizeof err);
        if (rc != 0 || s.out.len != wlen || memcmp(s.out.data, simple_want, wlen))
            bad++;
        dbuf_free(&s.out);
    }
    is_int(bad, 0, "fed 1, 2, ... 9 bytes at a time: the same parts");
}

static void test_boundary_forms(void)
{
    struct seen s = {.refuse_at = -1};
    char err[256] = "";
    static const char body[] = "--a'b c\r\nContent-Disposition: form-data; name=x\r\n\r\nv\r\n--a'b c--";
    int rc = parse_split("Multipart/Form-Data; charset=utf-8; boundary=\"a'b c\"", &lim, B(body), 0, 0, &s, err,
                         sizeof err);
    is_int(rc, 0, "quoted boundary with a space and a quote, other parameters first (%s)", err);
    is_str(s.out.data, "[x||-|]v;1\n", "no preamble, no CRLF after the closing boundary");
    dbuf_free(&s.out);

    static const char *const bad_ct[] = {
        "application/json", "multipart/form-data", "multipart/form-data; boundary=",
        "multipart/form-data; boundary=\"abc", "multipart/form-data; boundary=a\x01z",
        "multipart/form-data; boundary=01234567890123456789012345678901234567890123456789012345678901234567890",
    };
    for (size_t i = 0; i < ARRAY_SIZE(bad_ct); i++) {
        rc = parse_split(bad_ct[i], &lim, B(body), 0, 0, &s, err, sizeof err);
        ok(rc == -EINVAL && err[0], "Content-Type refused: %s -> %s", bad_ct[i], err);
        dbuf_free(&s.out);
    }
}

static void expect_refusal(const char *body, size_t len, int want_rc, const char *want_in_why, const char *what)
{
    struct seen s = {.refuse_at = -1};
    char err[256] = "";
    int rc = parse(body, len, &s, err);
    ok(rc == want_rc && strstr(err, want_in_why), "%s: %s", what, err);
    if (rc != want_rc)
        diag("rc %d, want %d", rc, want_rc);
    dbuf_free(&s.out);
    /* The same refusal however the body is cut. */
    int differ = 0;
    for (size_t step = 1; step <= 3; step++) {
        rc = parse_split(CT, &lim, body, len, step, 0, &s, err, sizeof err);
        differ += rc != want_rc;
        dbuf_free(&s.out);
    }
    is_int(differ, 0, "%s: the same refusal fed 1, 2, 3 bytes at a time", what);
}

static void test_malformed(void)
{
    expect_refusal(B("--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nno end"), -EINVAL, "closing boundary",
                   "missing final boundary");
    expect_refusal(B("--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ\r\n"), -EINVAL,
                   "headers", "ends after a delimiter, inside the next part's headers");
    expect_refusal(B("no boundary at all\r\n"), -EINVAL, "no multipart boundary", "no boundary in the body");
    expect_refusal(B(""), -EINVAL, "no multipart boundary", "empty body");
    expect_refusal(B("--XyZ\nContent-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--"), -EINVAL,
                   "other than CRLF", "LF without CR after the boundary");
    expect_refusal(B("--XyZ\r Content-Disposition: form-data; name=a\r\n\r\nv\r\n--XyZ--"), -EINVAL, "CR without LF",
                   "CR without LF after the boundary");
    expect_refusal(B("--XyZ-\r\n"), -EINVAL, "single '-'", "a single dash after the boundary");
    expect_refusal(B("--XyZ\r\n\r\nv\r\n--XyZ--"), -EINVAL, "no headers", "a part without headers");
    expect_refusal(B("--XyZ\r\nContent-Type: text/plain\r\n\r\nv\r\n--XyZ--"), -EINVAL, "no Content-Disposition",
                   "a part without Content-Disposition");
    expect_refusal(B("--XyZ\r\nContent-Disposition: attachment; name=a\r\n\r\nv\r\n--XyZ--"), -EINVAL,
                   "not form-data", "Content-Disposition not form-data");
    expect_refusal(B("--XyZ\r\nContent-Disposition: form-data; filename=a\r\n\r\nv\r\n--XyZ--"), -EINVAL, "no name",
                   "a part without a name");
    expect_refusal(B("--XyZ\r\nContent-Disposition: form-data; name=\"a\r\n\r\nv\r\n--XyZ--"), -EINVAL, "malformed",
                   "an unterminated quoted name");
    expect_refusal(B("--XyZ\r\nContent-Disposition: form-data;\r\n name=a\r\n\r\nv\r\n--XyZ--"), -EINVAL, "folded",
                   "a folded header");
    expect_refusal(B("--XyZ\r\nContent-Disposition: form-data; name=a\nX: y\r\n\r\nv\r\n--XyZ--"), -EINVAL, "bare",
                   "a bare LF inside the headers");
}

static void test_limits(void)
{
    struct form_limits save = lim;
    struct dbuf b;
    dbuf_init(&b, 1 << 20);

    /* Huge headers: one header of 9000 bytes against 8 KiB. */
    discard(dbuf_printf(&b, "--XyZ\r\nContent-Disposition: form-data; name=a\r\nX-Pad: "));
    for (int i = 0; i < 9000; i++)
        discard(dbuf_append(&b, "p", 1));
    discard(dbuf_printf(&b, "\r\n\r\nv\r\n--XyZ--"));
    expect_refusal(b.data, b.len, -E2BIG, "form_header_bytes", "headers past form_header_bytes");
    b.len = 0;

    /* Too many fields: 17 against 16. */
    for (int i = 0; i < 17; i++)
        discard(dbuf_printf(&b, "--XyZ\r\nContent-Disposition: form-data; name=f%d\r\n\r\n%d\r\n", i, i));
    discard(dbuf_printf(&b, "--XyZ--"));
    expect_refusal(b.data, b.len, -E2BIG, "form_fields", "17 parts past form_fields = 16");
    lim.fields = 17;
    struct seen s = {.refuse_at = -1};
    char err[256] = "";
    is_int(parse(b.data, b.len, &s, err), 0, "17 parts with form_fields = 17: accepted");
    dbuf_free(&s.out);
    lim = save;
    b.len = 0;

    /* Field and file sizes, exactly at and one past the limit. */
    lim.field_bytes = 10;
    lim.file_bytes = 20;
    discard(dbuf_printf(&b, "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n0123456789\r\n"
                            "--XyZ\r\nContent-Disposition: form-data; name=b; filename=\"\"\r\n\r\n"
                            "01234567890123456789\r\n--XyZ--"));
    is_int(parse(b.data, b.len, &s, err), 0, "a field of form_field_bytes and a file of form_file_bytes: accepted (%s)",
           err);
    ok(strstr(s.out.data, "[b||f|]") != NULL, "an empty filename still marks a file part");
    dbuf_free(&s.out);
    b.len = 0;
    discard(dbuf_printf(&b, "--XyZ\r\nContent-Disposition: form-data; name=a\r\n\r\n0123456789X\r\n--XyZ--"));
    expect_refusal(b.data, b.len, -E2BIG, "form_field_bytes", "a field one byte past form_field_bytes");
    b.len = 0;
    discard(dbuf_printf(&b, "--XyZ\r\nContent-Disposition: form-data; name=b; filename=x\r\n\r\n"
                            "01234567890123456789X\r\n--XyZ--"));
    expect_refusal(b.data, b.len, -E2BIG, "form_file_bytes", "a file one byte past form_file_bytes");
    lim = save;
    dbuf_free(&b);
}

static void test_binary(void)
{
    /* 64 KiB of every byte value, with runs of CR, LF, NUL and near-misses
     * of the delimiter, in a file part, fed in odd-sized pieces. */
    size_t n = 65536;
    unsigned char *data = malloc(n);
    for (size_t i = 0; i < n; i++)
        data[i] = (unsigned char)(i * 131 + (i >> 8));
    static const char *const traps[] = {"\r\n--XyZ", "\r\n--Xy", "\r\r\n--XyY", "\r\n\r\n--", "\0\0\r\0\n"};
    for (size_t k = 0, at = 100; k < 40; k++, at += 1531) {
        const char *t = traps[k % ARRAY_SIZE(traps)];
        size_t tl = k % ARRAY_SIZE(traps) == 4 ? 5 : strlen(t);
        if (k % ARRAY_SIZE(traps) == 0)
            tl--; /* the whole delimiter minus its last byte */
        memcpy(data + at, t, tl);
    }
    data[n - 1] = '\r'; /* the part ends with CR right before the delimiter */
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    discard(dbuf_printf(&b, "--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"bin\"\r\n\r\n"));
    discard(dbuf_append(&b, data, n));
    discard(dbuf_printf(&b, "\r\n--XyZ--\r\n"));
    int bad = 0;
    static const size_t steps[] = {0, 1, 2, 3, 7, 4096, 65535};
    for (size_t i = 0; i < ARRAY_SIZE(steps); i++) {
        struct seen s = {.refuse_at = -1};
        char err[256] = "";
        int rc = parse_split(CT, &lim, b.data, b.len, steps[i], 0, &s, err, sizeof err);
        const char *hdr = "[f|bin|f|]";
        size_t hl = strlen(hdr);
        if (rc != 0 || s.out.len < hl + n || memcmp(s.out.data + hl, data, n)) {
            bad++;
            diag("step %zu: rc %d (%s), %zu bytes", steps[i], rc, err, s.out.len);
        }
        dbuf_free(&s.out);
    }
    is_int(bad, 0, "64 KiB of binary with CR, LF, NUL and delimiter near-misses: intact at 7 read sizes");
    dbuf_free(&b);
    free(data);
}

static void test_callback_refusal(void)
{
    struct seen s = {.refuse_at = 1};
    char err[256] = "";
    struct form_parser p;
    struct form_callbacks cb = {&s, on_begin, on_data, on_end};
    dbuf_init(&s.out, 1 << 20);
    discard(form_init(&p, CT, &lim, &cb));
    int rc = form_feed(&p, simple, sizeof simple - 1);
    snprintf(err, sizeof err, "%s", form_error(&p));
    is_int(rc, -EPERM, "a callback's error stops the parse and is returned");
    ok(err[0] != '\0', "with a reason: %s", err);
    is_int(form_feed(&p, "x", 1), -EPERM, "and every later feed returns it again");
    is_int(form_finish(&p), -EPERM, "and finish too");
    form_free(&p);
    dbuf_free(&s.out);
}

int main(void)
{
    form_limits_default(&lim);
    test_whole_and_split();
    test_boundary_forms();
    test_malformed();
    test_limits();
    test_binary();
    test_callback_refusal();
    return tap_done();
}
