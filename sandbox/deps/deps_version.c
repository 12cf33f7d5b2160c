/* deps_version.c: PEP 440 versions, as far as requires-python needs them:
 * the comparison operators (shared with the PEP 508 parser) and whether
 * an interpreter's version satisfies a specifier set. */
#include "config.h"

#include "deps_version.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>

static const char *const version_ops[] = {"===", "==", "~=", "!=", "<=", ">=", "<", ">"};

size_t deps__version_op(const char *s)
{
    for (size_t k = 0; k < ARRAY_SIZE(version_ops); k++) {
        size_t n = strlen(version_ops[k]);
        if (!strncmp(s, version_ops[k], n))
            return n;
    }
    return 0;
}

#define VER_PARTS 8

/* The release segment of a version ("3.11.2", "3.8", "3.*"): numbers into
 * v (zero-padded), their count, and whether it ends in ".*". Anything after
 * the release (pre, post, dev, local) is ignored for requires-python, which
 * is matched against a final release. -EINVAL on garbage. */
static int parse_release(const char *s, size_t len, long v[VER_PARTS], size_t *n, bool *wild)
{
    size_t i = 0, k = 0;
    memset(v, 0, sizeof(long) * VER_PARTS);
    *wild = false;
    if (len && (s[0] == 'v' || s[0] == 'V'))
        i++;
    for (;;) {
        if (i + 1 == len && s[i] == '*' && k > 0) {
            *wild = true;
            i++;
            break;
        }
        if (i >= len || !isdigit((unsigned char)s[i]) || k == VER_PARTS)
            return -EINVAL;
        long x = 0;
        while (i < len && isdigit((unsigned char)s[i])) {
            if (x > 100000000)
                return -EINVAL;
            x = x * 10 + (s[i++] - '0');
        }
        v[k++] = x;
        if (i < len && s[i] == '.') {
            i++;
            continue;
        }
        break;
    }
    /* Pre/post/dev/local suffixes are accepted and not compared. */
    for (; i < len; i++)
        if (!deps__alnum(s[i]) && !strchr(".-_+!", s[i]))
            return -EINVAL;
    *n = k;
    return 0;
}

static int cmp_release(const long *a, const long *b, size_t upto)
{
    for (size_t i = 0; i < upto; i++)
        if (a[i] != b[i])
            return a[i] < b[i] ? -1 : 1;
    return 0;
}

int deps_version_satisfies(const char *version, const char *specifiers)
{
    long have[VER_PARTS];
    size_t hn;
    bool hw;
    if (parse_release(version, strlen(version), have, &hn, &hw) < 0 || hw)
        return -EINVAL;
    const char *s = specifiers;
    bool any = false;
    int result = 1;
    for (;;) {
        while (*s == ' ' || *s == '\t')
            s++;
        if (!*s)
            break;
        size_t opn = deps__version_op(s);
        if (!opn)
            return -EINVAL;
        char op[4];
        memcpy(op, s, opn);
        op[opn] = '\0';
        s += opn;
        while (*s == ' ' || *s == '\t')
            s++;
        const char *start = s;
        while (*s && *s != ',' && *s != ' ' && *s != '\t')
            s++;
        size_t len = (size_t)(s - start);
        while (*s == ' ' || *s == '\t')
            s++;
        if (*s == ',')
            s++;
        else if (*s)
            return -EINVAL;
        any = true;
        if (!strcmp(op, "===")) {
            if (len != strlen(version) || strncmp(start, version, len))
                result = 0;
            continue;
        }
        long want[VER_PARTS];
        size_t wn;
        bool wild;
        if (parse_release(start, len, want, &wn, &wild) < 0)
            return -EINVAL;
        if (wild && strcmp(op, "==") && strcmp(op, "!="))
            return -EINVAL;
        bool ok;
        int c = cmp_release(have, want, wild ? wn : VER_PARTS);
        if (!strcmp(op, "=="))
            ok = c == 0;
        else if (!strcmp(op, "!="))
            ok = c != 0;
        else if (!strcmp(op, ">="))
            ok = c >= 0;
        else if (!strcmp(op, "<="))
            ok = c <= 0;
        else if (!strcmp(op, ">"))
            ok = c > 0;
        else if (!strcmp(op, "<"))
            ok = c < 0;
        else { /* ~=: >= V and == V without its last part, .* */
            if (wn < 2)
                return -EINVAL;
            ok = c >= 0 && cmp_release(have, want, wn - 1) == 0;
        }
        if (!ok)
            result = 0;
    }
    return any ? result : -EINVAL;
}

