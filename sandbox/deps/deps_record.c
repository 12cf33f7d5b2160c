/* deps_record.c: RECORD, the list of a wheel's files with their hashes,
 * as text: a CSV field read, a path written (quoted where it needs it),
 * a hash spelled as RECORD spells it (the urlsafe base64 of its SHA-256,
 * unpadded). The package store checks and rewrites a wheel's RECORD with
 * these (deps_store.c), its console scripts add their lines
 * (deps_scripts.c). */
#include "config.h"

#include "deps_internal.h"

#include <string.h>

#include "sha256.h"

char *deps__record_field(char **p)
{
    char *s = *p, *o;
    if (*s == '"') {
        o = ++s;
        char *r = s;
        for (; *r; r++) {
            if (*r == '"' && r[1] == '"')
                *o++ = *r++;
            else if (*r == '"')
                break;
            else
                *o++ = *r;
        }
        if (*r == '"')
            r++;
        *o = '\0';
        *p = *r == ',' ? r + 1 : r;
        return s;
    }
    o = s + strcspn(s, ",");
    *p = *o ? o + 1 : o;
    *o = '\0';
    return s;
}

int deps__record_path(struct dbuf *b, const char *prefix, const char *path)
{
    if (!strpbrk(path, ",\"\r\n"))
        return dbuf_printf(b, "%s%s", prefix, path);
    int rc = dbuf_printf(b, "\"%s", prefix);
    for (const char *p = path; rc == 0 && *p; p++)
        rc = *p == '"' ? dbuf_printf(b, "\"\"") : dbuf_printf(b, "%c", *p);
    return rc ? rc : dbuf_printf(b, "\"");
}

void deps__record_b64(const unsigned char *in, size_t n, char *out)
{
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) | (i + 2 < n ? in[i + 2] : 0);
        out[o++] = t[v >> 18 & 63];
        out[o++] = t[v >> 12 & 63];
        if (i + 1 < n)
            out[o++] = t[v >> 6 & 63];
        if (i + 2 < n)
            out[o++] = t[v & 63];
    }
    out[o] = '\0';
}

void deps__record_hash(const void *data, size_t n, char out[64])
{
    unsigned char d[32];
    struct sha256 h;
    sha256_init(&h);
    sha256_update(&h, data, n);
    sha256_final(&h, d);
    deps__record_b64(d, 32, out);
}
