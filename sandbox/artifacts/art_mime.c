/* art_mime.c: what an artifact is: its MIME type from its first bytes
 * (magic numbers, text, SVG, CSV) and then its name, and the one-line
 * summary a listing shows (an image's size, a text's lines, a CSV's
 * columns, a JSON document's shape). */
#include "config.h"

#include "art_internal.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#define ART_JSON_PARSE_MAX (8u << 20)   /* larger JSON is not parsed for a summary */
#define ART_SCAN_MAX (256ull << 20)     /* text past this is not line-counted */

static bool has_prefix(const unsigned char *h, size_t n, const char *magic, size_t mlen)
{
    return n >= mlen && memcmp(h, magic, mlen) == 0;
}

static const char *ext_of(const char *name)
{
    const char *dot = strrchr(name, '.');
    return (dot && dot != name) ? dot + 1 : "";
}

/* Extension table: used after the magic bytes, and to refine ZIP. */
static const struct {
    const char *ext, *mime;
} ext_table[] = {
    {"png", "image/png"}, {"jpg", "image/jpeg"}, {"jpeg", "image/jpeg"}, {"gif", "image/gif"},
    {"webp", "image/webp"}, {"svg", "image/svg+xml"}, {"bmp", "image/bmp"}, {"tif", "image/tiff"},
    {"tiff", "image/tiff"}, {"ico", "image/vnd.microsoft.icon"}, {"pdf", "application/pdf"},
    {"zip", "application/zip"}, {"json", "application/json"}, {"geojson", "application/geo+json"},
    {"jsonl", "application/jsonl"}, {"ndjson", "application/jsonl"}, {"csv", "text/csv"},
    {"tsv", "text/tab-separated-values"}, {"txt", "text/plain"}, {"log", "text/plain"},
    {"md", "text/markdown"}, {"html", "text/html"}, {"htm", "text/html"}, {"css", "text/css"},
    {"js", "text/javascript"}, {"py", "text/x-python"}, {"xml", "application/xml"},
    {"yaml", "application/yaml"}, {"yml", "application/yaml"}, {"toml", "application/toml"},
    {"ini", "text/plain"}, {"tex", "text/x-tex"}, {"rst", "text/x-rst"},
    {"gz", "application/gzip"}, {"tar", "application/x-tar"}, {"bz2", "application/x-bzip2"},
    {"xz", "application/x-xz"}, {"wav", "audio/wav"}, {"mp3", "audio/mpeg"}, {"ogg", "audio/ogg"},
    {"flac", "audio/flac"}, {"mp4", "video/mp4"}, {"webm", "video/webm"}, {"avi", "video/x-msvideo"},
    {"npy", "application/x-npy"}, {"npz", "application/zip"}, {"parquet", "application/vnd.apache.parquet"},
    {"h5", "application/x-hdf5"}, {"hdf5", "application/x-hdf5"}, {"sqlite", "application/vnd.sqlite3"},
    {"db", "application/vnd.sqlite3"}, {"pkl", "application/octet-stream"},
    {"xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"},
    {"docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
    {"pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation"},
    {"odt", "application/vnd.oasis.opendocument.text"},
    {"ods", "application/vnd.oasis.opendocument.spreadsheet"}, {"epub", "application/epub+zip"},
    {"whl", "application/zip"}, {"jar", "application/java-archive"},
};

static const char *mime_by_ext(const char *name)
{
    const char *ext = ext_of(name);
    for (size_t i = 0; i < ARRAY_SIZE(ext_table); i++)
        if (!strcasecmp(ext, ext_table[i].ext))
            return ext_table[i].mime;
    return NULL;
}

/* Text: valid UTF-8 (a sequence cut by the end of the head is fine), no NUL,
 * few control characters. */
static bool looks_text(const unsigned char *h, size_t n, bool truncated)
{
    size_t check = n;
    if (truncated) {
        /* Drop a UTF-8 sequence cut at the end of the head. */
        size_t back = 0;
        while (back < 3 && back < check && (h[check - 1 - back] & 0xc0) == 0x80)
            back++;
        if (back < check && h[check - 1 - back] >= 0xc0)
            check -= back + 1;
    }
    if (!util_utf8_valid((const char *)h, check))
        return false;
    size_t ctrl = 0;
    for (size_t i = 0; i < check; i++) {
        if (h[i] == 0)
            return false;
        if (h[i] < 0x20 && h[i] != '\n' && h[i] != '\r' && h[i] != '\t' && h[i] != '\f')
            ctrl++;
    }
    return ctrl * 100 <= check; /* at most 1% */
}

static bool looks_svg(const unsigned char *h, size_t n)
{
    size_t i = 0;
    while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
        i++;
    if (i >= n || h[i] != '<')
        return false;
    /* "<svg" within the head, after an XML declaration, comments or doctype. */
    for (size_t j = i; j + 4 <= n; j++)
        if (memcmp(h + j, "<svg", 4) == 0 && (j + 4 == n || h[j + 4] == ' ' || h[j + 4] == '>' ||
                                              h[j + 4] == '\n' || h[j + 4] == '\t' || h[j + 4] == '\r'))
            return true;
    return false;
}

/* CSV by content: at least two complete records (quotes may hold commas and
 * newlines) with the same number (>= 1) of commas outside quotes. */
static bool looks_csv(const unsigned char *h, size_t n)
{
    int first = -1, records = 0, commas = 0;
    bool quoted = false, content = false;
    for (size_t i = 0; i < n && records < 8; i++) {
        unsigned char c = h[i];
        if (c == '"') {
            quoted = !quoted;
            content = true;
        } else if (c == ',' && !quoted) {
            commas++;
            content = true;
        } else if (c == '\n' && !quoted) {
            if (content) {
                if (first < 0)
                    first = commas;
                if (commas == 0 || commas != first)
                    return false;
                records++;
            }
            commas = 0;
            content = false;
        } else if (c != '\r') {
            content = true;
        }
    }
    return records >= 2;
}

const char *ws_mime(const unsigned char *h, size_t n, const char *name)
{
    const char *by_ext = mime_by_ext(name);

    if (has_prefix(h, n, "\x89PNG\r\n\x1a\n", 8))
        return "image/png";
    if (has_prefix(h, n, "\xff\xd8\xff", 3))
        return "image/jpeg";
    if (has_prefix(h, n, "GIF87a", 6) || has_prefix(h, n, "GIF89a", 6))
        return "image/gif";
    if (n >= 12 && !memcmp(h, "RIFF", 4) && !memcmp(h + 8, "WEBP", 4))
        return "image/webp";
    if (n >= 12 && !memcmp(h, "RIFF", 4) && !memcmp(h + 8, "WAVE", 4))
        return "audio/wav";
    if (has_prefix(h, n, "%PDF-", 5))
        return "application/pdf";
    if (has_prefix(h, n, "PK\x03\x04", 4) || has_prefix(h, n, "PK\x05\x06", 4)) {
        /* Office documents, wheels and the like are zips with a name. */
        if (by_ext && (strstr(by_ext, "officedocument") || strstr(by_ext, "opendocument") ||
                       strstr(by_ext, "epub") || strstr(by_ext, "java")))
            return by_ext;
        return "application/zip";
    }
    if (has_prefix(h, n, "\x1f\x8b", 2))
        return "application/gzip";
    if (has_prefix(h, n, "BM", 2) && n >= 26 && by_ext && !strcmp(by_ext, "image/bmp"))
        return "image/bmp";
    if (has_prefix(h, n, "II*\0", 4) || has_prefix(h, n, "MM\0*", 4))
        return "image/tiff";
    if (has_prefix(h, n, "\x93NUMPY", 6))
        return "application/x-npy";
    if (has_prefix(h, n, "SQLite format 3", 16))
        return "application/vnd.sqlite3";
    if (has_prefix(h, n, "\x89HDF\r\n\x1a\n", 8))
        return "application/x-hdf5";
    if (has_prefix(h, n, "PAR1", 4))
        return "application/vnd.apache.parquet";
    if (has_prefix(h, n, "OggS", 4))
        return "audio/ogg";
    if (has_prefix(h, n, "fLaC", 4))
        return "audio/flac";
    if (has_prefix(h, n, "ID3", 3))
        return "audio/mpeg";
    if (n >= 12 && !memcmp(h + 4, "ftyp", 4))
        return "video/mp4";

    if (n > 0 && looks_text(h, n, n == ART_HEAD)) {
        if (looks_svg(h, n))
            return "image/svg+xml";
        size_t i = 0;
        while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
            i++;
        if (i < n && (h[i] == '{' || h[i] == '[') && (!by_ext || !strcmp(by_ext, "application/json")))
            return "application/json";
        if (by_ext && (!strncmp(by_ext, "text/", 5) || strstr(by_ext, "json") || strstr(by_ext, "xml") ||
                       strstr(by_ext, "yaml") || strstr(by_ext, "toml")))
            return by_ext;
        if (!by_ext && looks_csv(h, n))
            return "text/csv";
        return by_ext && !strncmp(by_ext, "image/svg", 9) ? by_ext : "text/plain";
    }
    if (n == 0)
        return by_ext ? by_ext : "application/octet-stream";
    return by_ext ? by_ext : "application/octet-stream";
}

/* ----------------------------------------------------------- summaries */

static uint32_t be16(const unsigned char *p) { return (uint32_t)p[0] << 8 | p[1]; }
static uint32_t be32(const unsigned char *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t le16(const unsigned char *p) { return (uint32_t)p[1] << 8 | p[0]; }
static uint32_t le24(const unsigned char *p) { return (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]; }

/* Width and height from the image header; false when not found. */
static bool image_dims(int fd, const char *mime, uint32_t *w, uint32_t *h)
{
    unsigned char b[64];
    size_t n = art__read_head(fd, b, sizeof b);
    if (!strcmp(mime, "image/png")) {
        if (n < 24 || memcmp(b + 12, "IHDR", 4))
            return false;
        *w = be32(b + 16);
        *h = be32(b + 20);
        return true;
    }
    if (!strcmp(mime, "image/gif")) {
        if (n < 10)
            return false;
        *w = le16(b + 6);
        *h = le16(b + 8);
        return true;
    }
    if (!strcmp(mime, "image/bmp")) {
        if (n < 26)
            return false;
        *w = (uint32_t)b[18] | (uint32_t)b[19] << 8 | (uint32_t)b[20] << 16 | (uint32_t)b[21] << 24;
        int32_t hh = (int32_t)((uint32_t)b[22] | (uint32_t)b[23] << 8 | (uint32_t)b[24] << 16 | (uint32_t)b[25] << 24);
        *h = (uint32_t)(hh < 0 ? -(int64_t)hh : hh);
        return true;
    }
    if (!strcmp(mime, "image/webp")) {
        if (n < 30)
            return false;
        if (!memcmp(b + 12, "VP8 ", 4) && b[23] == 0x9d && b[24] == 0x01 && b[25] == 0x2a) {
            *w = le16(b + 26) & 0x3fff;
            *h = le16(b + 28) & 0x3fff;
            return true;
        }
        if (!memcmp(b + 12, "VP8L", 4) && b[20] == 0x2f) {
            uint32_t bits = (uint32_t)b[21] | (uint32_t)b[22] << 8 | (uint32_t)b[23] << 16 | (uint32_t)b[24] << 24;
            *w = (bits & 0x3fff) + 1;
            *h = ((bits >> 14) & 0x3fff) + 1;
            return true;
        }
        if (!memcmp(b + 12, "VP8X", 4)) {
            *w = le24(b + 24) + 1;
            *h = le24(b + 27) + 1;
            return true;
        }
        return false;
    }
    if (!strcmp(mime, "image/jpeg")) {
        /* Walk the markers to the first start-of-frame. */
        off_t off = 2;
        for (int guard = 0; guard < 1000; guard++) {
            unsigned char m[9];
            if (pread(fd, m, sizeof m, off) != (ssize_t)sizeof m || m[0] != 0xff)
                return false;
            unsigned char t = m[1];
            if (t == 0xff) {
                off++;
                continue;
            }
            if (t == 0xd8 || (t >= 0xd0 && t <= 0xd7) || t == 0x01) {
                off += 2;
                continue;
            }
            if (t >= 0xc0 && t <= 0xcf && t != 0xc4 && t != 0xc8 && t != 0xcc) {
                *h = be16(m + 5);
                *w = be16(m + 7);
                return true;
            }
            off += 2 + (off_t)be16(m + 2);
        }
        return false;
    }
    return false;
}

/* Streams the file through fn (at most ART_SCAN_MAX bytes). Returns false
 * when the file is larger than that. */
static bool scan_file(int fd, void (*fn)(void *ctx, const unsigned char *p, size_t n), void *ctx)
{
    unsigned char buf[65536];
    uint64_t off = 0;
    for (;;) {
        ssize_t r = pread(fd, buf, sizeof buf, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return true;
        fn(ctx, buf, (size_t)r);
        off += (uint64_t)r;
        if (off >= ART_SCAN_MAX)
            return false;
    }
}

struct line_count {
    uint64_t lines;
    unsigned char last;
};

static void count_lines(void *ctx, const unsigned char *p, size_t n)
{
    struct line_count *lc = ctx;
    for (const unsigned char *q = p; (q = memchr(q, '\n', (size_t)(p + n - q))); q++)
        lc->lines++;
    if (n)
        lc->last = p[n - 1];
}

/* CSV records (RFC 4180: quoted fields may hold newlines), the field count
 * of the first record, and the first record's text. */
struct csv_count {
    unsigned char delim;
    bool quoted;
    bool in_record;      /* the current record has content */
    uint64_t records;
    uint64_t columns;    /* of the first record */
    bool first_done;
    struct dbuf header;
};

static void count_csv(void *ctx, const unsigned char *p, size_t n)
{
    struct csv_count *c = ctx;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = p[i];
        if (!c->first_done && ch != '\n' && ch != '\r')
            discard(dbuf_append(&c->header, &ch, 1)); /* capped: E2BIG just stops it */
        if (ch == '"') {
            c->quoted = !c->quoted;
            c->in_record = true;
        } else if (ch == '\n' && !c->quoted) {
            if (c->in_record) {
                c->records++;
                if (!c->first_done)
                    c->columns++;
            }
            c->first_done = c->first_done || c->in_record;
            c->in_record = false;
        } else if (ch != '\r') {
            if (ch == c->delim && !c->quoted && !c->first_done)
                c->columns++;
            c->in_record = true;
        }
    }
}

/* The header line as "a, b, c", at most ~120 bytes, valid UTF-8. */
static char *csv_header_text(struct csv_count *c)
{
    struct dbuf out;
    dbuf_init(&out, 4096);
    bool q = false;
    const char *h = c->header.data ? c->header.data : "";
    for (size_t i = 0; i < c->header.len && out.len < 120; i++) {
        char ch = h[i];
        if (ch == '"') {
            q = !q;
            continue;
        }
        int rc = (ch == (char)c->delim && !q) ? dbuf_append(&out, ", ", 2) : dbuf_append(&out, &ch, 1);
        if (rc < 0)
            break;
    }
    bool cut = out.len >= 120;
    size_t len;
    cleanup_free char *raw = dbuf_steal(&out, &len);
    if (!raw)
        return NULL;
    char *s = util_utf8_sanitize(raw, len, &len);
    if (s && cut) {
        char *t;
        if (asprintf(&t, "%s...", s) < 0)
            t = NULL;
        free(s);
        s = t;
    }
    return s;
}

static char *json_summary(int fd, uint64_t size)
{
    char *s = NULL;
    char hs[32];
    util_human_size(size, hs, sizeof hs);
    if (size > ART_JSON_PARSE_MAX) {
        if (asprintf(&s, "JSON, %s (too large to parse for a summary)", hs) < 0)
            return NULL;
        return s;
    }
    cleanup_free char *buf = malloc(size + 1);
    if (!buf)
        return NULL;
    size_t n = art__read_head(fd, (unsigned char *)buf, size);
    struct json_tokener *tok = json_tokener_new_ex(64);
    if (!tok)
        return NULL;
    json_object *o = json_tokener_parse_ex(tok, buf, (int)n);
    enum json_tokener_error jerr = json_tokener_get_error(tok);
    size_t used = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    /* Anything but whitespace after the value means it is not one JSON text. */
    bool trailing = false;
    for (size_t i = used; o && i < n; i++)
        if (buf[i] != ' ' && buf[i] != '\n' && buf[i] != '\r' && buf[i] != '\t')
            trailing = true;
    int rc;
    if (!o || jerr != json_tokener_success || trailing) {
        const char *why = o || jerr == json_tokener_success ? NULL
                          : jerr == json_tokener_continue ? "unexpected end of data"
                                                          : json_tokener_error_desc(jerr);
        rc = asprintf(&s, "JSON that does not parse%s%s, %s", why ? ": " : "", why ? why : "", hs);
    } else {
        switch (json_object_get_type(o)) {
        case json_type_object: {
            int k = json_object_object_length(o);
            json_object *cells, *v;
            /* A Jupyter notebook (.ipynb, an executed one, a workspace's
             * notebook.ipynb): its cells, and how many ran. */
            if (json_object_object_get_ex(o, "cells", &cells) && json_object_is_type(cells, json_type_array) &&
                json_object_object_get_ex(o, "nbformat", &v) && json_object_is_type(v, json_type_int)) {
                size_t code = 0, ran = 0, nc = json_object_array_length(cells);
                for (size_t i = 0; i < nc; i++) {
                    json_object *c = json_object_array_get_idx(cells, i), *t, *e;
                    if (json_object_object_get_ex(c, "cell_type", &t) && !strcmp(json_object_get_string(t), "code")) {
                        code++;
                        ran += json_object_object_get_ex(c, "execution_count", &e) && json_object_is_type(e, json_type_int);
                    }
                }
                rc = asprintf(&s, "Jupyter notebook (nbformat %d), %zu cell%s, %zu of %zu code cell%s run",
                              json_object_get_int(v), nc, nc == 1 ? "" : "s", ran, code, code == 1 ? "" : "s");
                break;
            }
            rc = asprintf(&s, "JSON object with %d key%s", k, k == 1 ? "" : "s");
            break;
        }
        case json_type_array: {
            size_t k = json_object_array_length(o);
            rc = asprintf(&s, "JSON array of %zu item%s", k, k == 1 ? "" : "s");
            break;
        }
        case json_type_string: rc = asprintf(&s, "JSON string"); break;
        case json_type_boolean: rc = asprintf(&s, "JSON boolean"); break;
        case json_type_null: rc = asprintf(&s, "JSON null"); break;
        default: rc = asprintf(&s, "JSON number"); break;
        }
    }
    json_object_put(o);
    return rc < 0 ? NULL : s;
}

static const char *image_format_name(const char *mime)
{
    if (!strcmp(mime, "image/png")) return "PNG";
    if (!strcmp(mime, "image/jpeg")) return "JPEG";
    if (!strcmp(mime, "image/gif")) return "GIF";
    if (!strcmp(mime, "image/webp")) return "WebP";
    if (!strcmp(mime, "image/bmp")) return "BMP";
    if (!strcmp(mime, "image/tiff")) return "TIFF";
    return NULL;
}

static const char *text_kind(const char *mime)
{
    static const struct {
        const char *mime, *kind;
    } kinds[] = {
        {"text/markdown", "Markdown"}, {"text/html", "HTML"}, {"text/x-python", "Python source"},
        {"text/css", "CSS"}, {"text/javascript", "JavaScript"}, {"application/xml", "XML"},
        {"application/yaml", "YAML"}, {"application/toml", "TOML"}, {"application/jsonl", "JSON Lines"},
        {"text/x-tex", "TeX"}, {"text/x-rst", "reStructuredText"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
        if (!strcmp(mime, kinds[i].mime))
            return kinds[i].kind;
    return "text";
}

static bool is_texty(const char *mime)
{
    return !strncmp(mime, "text/", 5) || !strcmp(mime, "application/xml") || !strcmp(mime, "application/yaml") ||
           !strcmp(mime, "application/toml") || !strcmp(mime, "application/jsonl");
}

char *art_summary(int fd, const char *mime, uint64_t size)
{
    char hs[32];
    char *s = NULL;
    int rc = 0;
    util_human_size(size, hs, sizeof hs);

    if (size == 0)
        return strdup("empty file");
    const char *fmt = image_format_name(mime);
    if (fmt) {
        uint32_t w, h;
        if (image_dims(fd, mime, &w, &h))
            rc = asprintf(&s, "%s image %ux%u", fmt, w, h);
        else
            rc = asprintf(&s, "%s image, %s", fmt, hs);
    } else if (!strcmp(mime, "image/svg+xml")) {
        rc = asprintf(&s, "SVG image, %s", hs);
    } else if (!strcmp(mime, "application/json") || !strcmp(mime, "application/geo+json")) {
        return json_summary(fd, size);
    } else if (!strcmp(mime, "text/csv") || !strcmp(mime, "text/tab-separated-values")) {
        struct csv_count c = {.delim = strcmp(mime, "text/csv") ? '\t' : ','};
        dbuf_init(&c.header, 4096);
        bool whole = scan_file(fd, count_csv, &c);
        if (c.in_record) { /* a last record without a newline */
            c.records++;
            if (!c.first_done)
                c.columns++;
        }
        cleanup_free char *hdr = csv_header_text(&c);
        dbuf_free(&c.header);
        uint64_t rows = c.records ? c.records - 1 : 0;
        rc = asprintf(&s, "%s %s%llu row%s x %llu column%s; header: %s", c.delim == ',' ? "CSV," : "TSV,",
                      whole ? "" : "at least ", (unsigned long long)rows, rows == 1 ? "" : "s",
                      (unsigned long long)c.columns, c.columns == 1 ? "" : "s", hdr ? hdr : "");
    } else if (is_texty(mime)) {
        struct line_count lc = {0};
        bool whole = scan_file(fd, count_lines, &lc);
        uint64_t lines = lc.lines + (lc.last != '\n' ? 1 : 0);
        rc = asprintf(&s, "%s, %s%llu line%s", text_kind(mime), whole ? "" : "at least ",
                      (unsigned long long)lines, lines == 1 ? "" : "s");
    } else if (!strcmp(mime, "application/pdf")) {
        rc = asprintf(&s, "PDF document, %s", hs);
    } else if (!strcmp(mime, "application/zip")) {
        /* Entry count from the end-of-central-directory record. */
        unsigned char tail[65536 + 22];
        off_t start = size > sizeof tail ? (off_t)(size - sizeof tail) : 0;
        ssize_t n = pread(fd, tail, sizeof tail, start);
        long entries = -1;
        for (ssize_t i = n - 22; i >= 0; i--)
            if (!memcmp(tail + i, "PK\x05\x06", 4)) {
                entries = (long)le16(tail + i + 10);
                break;
            }
        if (entries >= 0)
            rc = asprintf(&s, "ZIP archive, %ld entr%s, %s", entries, entries == 1 ? "y" : "ies", hs);
        else
            rc = asprintf(&s, "ZIP archive, %s", hs);
    } else {
        rc = asprintf(&s, "%s", hs);
    }
    return rc < 0 ? NULL : s;
}

size_t art__read_head(int fd, unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = pread(fd, buf + got, n - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    return got;
}
