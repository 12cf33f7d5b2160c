/* form.c: the streaming multipart/form-data parser (see form.h).
 *
 * Theory of operation: the body is a sequence of parts separated by the
 * delimiter CRLF "--" BOUNDARY. Outside the header blocks the parser keeps
 * `match`, how many bytes of the delimiter the input has matched so far;
 * those bytes are held back (they may still turn out to be data) and handed
 * on as data as soon as a byte breaks the match. The delimiter starts with
 * CR and RFC 2046 allows no CR in a boundary, so after a broken match the
 * only place a new match can start is the breaking byte itself: no KMP
 * table is needed. The very first delimiter may open the body without the
 * CRLF; the parser starts as if the CRLF had been seen. */
#include "config.h"

#include "form.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define FORM_MEDIA_TYPE "multipart/form-data"
#define FORM_BOUNDARY_PARAM "boundary="

void form_fail(struct form_parser *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err, sizeof p->err, fmt, ap);
    va_end(ap);
}

const char *form_error(const struct form_parser *p)
{
    return p->err;
}

/* RFC 2046 bchars. */
static bool bchar(unsigned char c)
{
    return isalnum(c) || strchr("'()+_,-./:=? ", c) != NULL;
}

int form_init(struct form_parser *p, const char *content_type, const struct form_limits *lim,
              const struct form_callbacks *cb)
{
    memset(p, 0, sizeof *p);
    p->lim = *lim;
    if (cb)
        p->cb = *cb;
    dbuf_init(&p->headers, lim->header_bytes ? (size_t)lim->header_bytes : 1);
    p->state = FORM_FAILED;
    p->rc = -EINVAL;
    const char *s = content_type ? content_type : "";
    while (*s == ' ' || *s == '\t')
        s++;
    const size_t tl = strlen(FORM_MEDIA_TYPE), bl = strlen(FORM_BOUNDARY_PARAM);
    if (strncasecmp(s, FORM_MEDIA_TYPE, tl) || (s[tl] && s[tl] != ';' && s[tl] != ' ')) {
        form_fail(p, "Content-Type is not " FORM_MEDIA_TYPE);
        return -EINVAL;
    }
    /* The boundary parameter: boundary=token or boundary="quoted". */
    const char *b = NULL;
    for (const char *q = s + tl; (q = strchr(q, ';'));) {
        q++;
        while (*q == ' ' || *q == '\t')
            q++;
        if (!strncasecmp(q, FORM_BOUNDARY_PARAM, bl)) {
            b = q + bl;
            break;
        }
    }
    if (!b) {
        form_fail(p, "multipart/form-data without a boundary parameter");
        return -EINVAL;
    }
    char bnd[FORM_BOUNDARY_RFC + 1];
    size_t n = 0;
    if (*b == '"') {
        for (b++; *b && *b != '"'; b++) {
            if (n >= FORM_BOUNDARY_RFC) {
                form_fail(p, "the multipart boundary is longer than %d bytes", FORM_BOUNDARY_RFC);
                return -EINVAL;
            }
            bnd[n++] = *b;
        }
        if (*b != '"') {
            form_fail(p, "the multipart boundary has no closing quote");
            return -EINVAL;
        }
    } else {
        for (; *b && *b != ';' && *b != ' ' && *b != '\t'; b++) {
            if (n >= FORM_BOUNDARY_RFC) {
                form_fail(p, "the multipart boundary is longer than %d bytes", FORM_BOUNDARY_RFC);
                return -EINVAL;
            }
            bnd[n++] = *b;
        }
    }
    if (n == 0 || bnd[n - 1] == ' ') {
        form_fail(p, "the multipart boundary is empty or ends with a space");
        return -EINVAL;
    }
    for (size_t i = 0; i < n; i++) {
        if (!bchar((unsigned char)bnd[i])) {
            form_fail(p, "the multipart boundary has a character RFC 2046 does not allow");
            return -EINVAL;
        }
    }
    memcpy(p->delim, "\r\n--", 4);
    memcpy(p->delim + 4, bnd, n);
    p->delim_len = 4 + n;
    p->delim[p->delim_len] = '\0';
    p->state = FORM_PREAMBLE;
    p->match = 2; /* the first delimiter may open the body: its CRLF is implied */
    p->rc = 0;
    return 0;
}

void form_free(struct form_parser *p)
{
    dbuf_free(&p->headers);
}

static int fail(struct form_parser *p, int rc, const char *fmt, ...) printf_like(3, 4);
static int fail(struct form_parser *p, int rc, const char *fmt, ...)
{
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(p->err, sizeof p->err, fmt, ap);
        va_end(ap);
    }
    p->state = FORM_FAILED;
    p->rc = rc;
    return rc;
}

/* A callback refused: keep its reason, or say something. */
static int cb_fail(struct form_parser *p, int rc)
{
    if (!p->err[0])
        snprintf(p->err, sizeof p->err, "the form was refused (%s)", strerror(-rc));
    return fail(p, rc, NULL);
}

/* Hands data of the current part on (preamble bytes are dropped). */
static int emit(struct form_parser *p, const char *data, size_t len)
{
    if (p->state != FORM_BODY || len == 0)
        return 0;
    uint64_t max = p->part.is_file ? p->lim.file_bytes : p->lim.field_bytes;
    if (max && (p->part.bytes + len > max || p->part.bytes + len < p->part.bytes))
        return fail(p, -E2BIG, "the %s \"%s\" is larger than %s (%llu bytes)", p->part.is_file ? "file" : "field",
                    p->part.name, p->part.is_file ? "form_file_bytes" : "form_field_bytes", (unsigned long long)max);
    if (p->cb.part_data) {
        int rc = p->cb.part_data(p->cb.ctx, &p->part, data, len);
        if (rc < 0)
            return cb_fail(p, rc);
    }
    p->part.bytes += len;
    return 0;
}

/* Copies a header parameter's value (token or quoted-string) into out;
 * returns the number of bytes of s it took, or -1 when malformed or too
 * long. */
static long param_value(const char *s, char *out, size_t outlen)
{
    size_t n = 0;
    const char *q = s;
    if (*q == '"') {
        for (q++; *q && *q != '"'; q++) {
            if (*q == '\\' && q[1])
                q++;
            if (n + 1 >= outlen)
                return -1;
            out[n++] = *q;
        }
        if (*q != '"')
            return -1;
        q++;
    } else {
        for (; *q && *q != ';' && *q != ' ' && *q != '\t'; q++) {
            if (n + 1 >= outlen)
                return -1;
            out[n++] = *q;
        }
    }
    out[n] = '\0';
    return q - s;
}

/* Content-Disposition: form-data; name="..."[; filename="..."]. */
static int disposition(struct form_parser *p, const char *v)
{
    if (strncasecmp(v, "form-data", 9) || (v[9] && v[9] != ';' && v[9] != ' ' && v[9] != '\t'))
        return fail(p, -EINVAL, "a part's Content-Disposition is not form-data");
    bool have_name = false;
    for (const char *q = v + 9; *q;) {
        while (*q == ';' || *q == ' ' || *q == '\t')
            q++;
        if (!*q)
            break;
        size_t k = strcspn(q, "=; \t");
        if (q[k] != '=')
            return fail(p, -EINVAL, "a part's Content-Disposition has a parameter without a value");
        char *out = NULL;
        size_t outlen = 0;
        char skip[FORM_FILENAME_MAX + 1];
        if (k == 4 && !strncasecmp(q, "name", 4)) {
            out = p->part.name;
            outlen = sizeof p->part.name;
            have_name = true;
        } else if (k == 8 && !strncasecmp(q, "filename", 8)) {
            out = p->part.filename;
            outlen = sizeof p->part.filename;
            p->part.is_file = true;
        } else {
            out = skip; /* filename* and others: not used */
            outlen = sizeof skip;
        }
        long used = param_value(q + k + 1, out, outlen);
        if (used < 0)
            return fail(p, -EINVAL, "a part's Content-Disposition has a malformed or overlong parameter");
        q += k + 1 + (size_t)used;
    }
    if (!have_name || !p->part.name[0])
        return fail(p, -EINVAL, "a part has no name in its Content-Disposition");
    return 0;
}

/* The header block is complete (ends with CRLF CRLF): parse it and begin
 * the part. */
static int headers_done(struct form_parser *p)
{
    char *h = p->headers.data;
    size_t len = p->headers.len - 2; /* keep one CRLF: every line ends with one */
    h[len] = '\0';
    bool have_cd = false;
    if (strstr(h, "\r\n ") || strstr(h, "\r\n\t") || *h == ' ' || *h == '\t')
        return fail(p, -EINVAL, "a part's header is folded (obsolete, not accepted)");
    for (char *line = h; *line;) {
        char *end = strstr(line, "\r\n");
        if (!end)
            break;
        *end = '\0';
        if (memchr(line, '\n', (size_t)(end - line)) || strchr(line, '\r'))
            return fail(p, -EINVAL, "a part's header has a bare CR or LF");
        char *colon = strchr(line, ':');
        if (!colon || colon == line)
            return fail(p, -EINVAL, "a part's header line has no name");
        *colon = '\0';
        char *v = colon + 1;
        while (*v == ' ' || *v == '\t')
            v++;
        size_t vn = strlen(v);
        while (vn && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
            v[--vn] = '\0';
        if (!strcasecmp(line, "Content-Disposition")) {
            if (have_cd)
                return fail(p, -EINVAL, "a part has two Content-Disposition headers");
            have_cd = true;
            int rc = disposition(p, v);
            if (rc < 0)
                return rc;
        } else if (!strcasecmp(line, "Content-Type")) {
            if (vn >= sizeof p->part.content_type)
                return fail(p, -EINVAL, "a part's Content-Type is longer than %d bytes", FORM_TYPE_MAX);
            memcpy(p->part.content_type, v, vn + 1);
        }
        line = end + 2;
    }
    if (!have_cd)
        return fail(p, -EINVAL, "a part has no Content-Disposition header");
    p->headers.len = 0;
    p->state = FORM_BODY;
    p->in_part = true;
    if (p->cb.part_begin) {
        int rc = p->cb.part_begin(p->cb.ctx, &p->part);
        if (rc < 0)
            return cb_fail(p, rc);
    }
    return 0;
}

static int part_start(struct form_parser *p)
{
    if (p->lim.fields && p->parts >= p->lim.fields)
        return fail(p, -E2BIG, "the form has more than form_fields (%llu) parts", (unsigned long long)p->lim.fields);
    memset(&p->part, 0, sizeof p->part);
    p->part.index = p->parts++;
    p->headers.len = 0;
    p->state = FORM_HEADERS;
    return 0;
}

/* A whole delimiter was matched. */
static int delimiter(struct form_parser *p)
{
    if (p->in_part) {
        p->in_part = false;
        if (p->cb.part_end) {
            int rc = p->cb.part_end(p->cb.ctx, &p->part);
            if (rc < 0)
                return cb_fail(p, rc);
        }
    }
    p->match = 0;
    p->state = FORM_AFTER_DELIM;
    return 0;
}

/* Scans body (or preamble) bytes for the delimiter; returns bytes used. */
static int scan(struct form_parser *p, const char *d, size_t n, size_t *used)
{
    size_t i = 0;
    int rc;
    while (i < n) {
        if (p->match == 0) {
            /* Fast path: everything up to the next CR is data. */
            const char *cr = memchr(d + i, '\r', n - i);
            size_t run = cr ? (size_t)(cr - (d + i)) : n - i;
            if ((rc = emit(p, d + i, run)) < 0)
                return rc;
            i += run;
            if (i == n)
                break;
            p->match = 1;
            i++;
            continue;
        }
        if (d[i] == p->delim[p->match]) {
            p->match++;
            i++;
            if (p->match == p->delim_len) {
                *used = i;
                return delimiter(p);
            }
            continue;
        }
        /* Broken: the held-back bytes were data. In the preamble the first
         * two of them may be the implied CRLF, which was never input, but
         * preamble bytes are dropped anyway. */
        if ((rc = emit(p, p->delim, p->match)) < 0)
            return rc;
        p->match = 0;
        if (d[i] == '\r') {
            p->match = 1;
            i++;
        }
    }
    *used = i;
    return 0;
}

int form_feed(struct form_parser *p, const char *data, size_t len)
{
    size_t i = 0;
    int rc;
    while (i < len) {
        unsigned char c = (unsigned char)data[i];
        switch (p->state) {
        case FORM_PREAMBLE:
        case FORM_BODY: {
            size_t used = 0;
            if ((rc = scan(p, data + i, len - i, &used)) < 0)
                return rc;
            i += used;
            break;
        }
        case FORM_AFTER_DELIM:
            i++;
            if (c == '-')
                p->state = FORM_CLOSE_DASH;
            else if (c == '\r')
                p->state = FORM_PADDING_LF;
            else if (c == ' ' || c == '\t')
                p->state = FORM_PADDING;
            else
                return fail(p, -EINVAL, "a multipart boundary is followed by something other than CRLF or \"--\"");
            break;
        case FORM_PADDING:
            i++;
            if (c == '\r')
                p->state = FORM_PADDING_LF;
            else if (c != ' ' && c != '\t')
                return fail(p, -EINVAL, "a multipart boundary is followed by something other than CRLF or \"--\"");
            break;
        case FORM_PADDING_LF:
            i++;
            if (c != '\n')
                return fail(p, -EINVAL, "a multipart boundary line ends with CR without LF");
            if ((rc = part_start(p)) < 0)
                return rc;
            break;
        case FORM_CLOSE_DASH:
            i++;
            if (c != '-')
                return fail(p, -EINVAL, "a multipart boundary is followed by a single '-'");
            p->state = FORM_EPILOGUE;
            break;
        case FORM_HEADERS: {
            /* Byte by byte up to the blank line: header blocks are small
             * and bounded by form_header_bytes. */
            rc = dbuf_append(&p->headers, &data[i], 1);
            if (rc == -E2BIG)
                return fail(p, -E2BIG, "a part's headers are larger than form_header_bytes (%llu bytes)",
                            (unsigned long long)p->lim.header_bytes);
            if (rc < 0)
                return fail(p, rc, "out of memory");
            i++;
            size_t hl = p->headers.len;
            if (hl == 2 && !memcmp(p->headers.data, "\r\n", 2))
                return fail(p, -EINVAL, "a part has no headers (it needs a Content-Disposition)");
            if (hl >= 4 && !memcmp(p->headers.data + hl - 4, "\r\n\r\n", 4) && (rc = headers_done(p)) < 0)
                return rc;
            break;
        }
        case FORM_EPILOGUE:
            return 0; /* ignored (RFC 2046) */
        case FORM_FAILED:
            return p->rc;
        }
    }
    return p->state == FORM_FAILED ? p->rc : 0;
}

int form_finish(struct form_parser *p)
{
    switch (p->state) {
    case FORM_EPILOGUE:
        return 0;
    case FORM_FAILED:
        return p->rc;
    case FORM_PREAMBLE:
        return fail(p, -EINVAL, "the body has no multipart boundary");
    case FORM_HEADERS:
        return fail(p, -EINVAL, "the body ends inside a part's headers");
    default:
        return fail(p, -EINVAL, "the body ends without the closing boundary (\"--BOUNDARY--\")");
    }
}
