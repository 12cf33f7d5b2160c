/* deps_hint.c: what to change when a script failed for want of an optional
 * package (deps.h: deps_hint_optional). Libraries such as pandas import
 * some packages only inside the call that needs them, and say so in their
 * own words; the log's last such ImportError becomes one sentence naming
 * the package to put in requirements. */
#include "config.h"

#include "deps.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEPS_HINT_TAIL 16384 /* bytes of the log's end that are read: the traceback's last lines */

/* The last occurrence of needle in the n bytes at s, or NULL. */
static const char *last_of(const char *s, size_t n, const char *needle)
{
    size_t k = strlen(needle);
    for (size_t i = n >= k ? n - k + 1 : 0; i-- > 0;)
        if (!memcmp(s + i, needle, k))
            return s + i;
    return NULL;
}

/* A package's name at s (letters, digits, '-', '_'; a dotted module's
 * first part), into out. */
static bool name_at(const char *s, const char *end, char *out, size_t n)
{
    size_t k = 0;
    while (s + k < end && k + 1 < n && (isalnum((unsigned char)s[k]) || s[k] == '-' || s[k] == '_'))
        k++;
    memcpy(out, s, k);
    out[k] = '\0';
    return k > 0;
}

char *deps_hint_optional(const char *log, size_t len)
{
    if (!log)
        return NULL;
    const char *s = len > DEPS_HINT_TAIL ? log + len - DEPS_HINT_TAIL : log, *end = log + len;
    size_t n = (size_t)(end - s);
    char pkg[64] = "";
    /* pandas: "ImportError: Missing optional dependency 'openpyxl'.  Use pip or conda ..." */
    static const char missing[] = "Missing optional dependency '";
    const char *m = last_of(s, n, missing);
    /* pandas' plotting: "ImportError: matplotlib is required for plotting when the default backend ..." */
    const char *p = last_of(s, n, "ImportError: matplotlib is required for plotting");
    if (m && (!p || m > p)) {
        if (!name_at(m + sizeof missing - 1, end, pkg, sizeof pkg))
            return NULL;
    } else if (p) {
        snprintf(pkg, sizeof pkg, "matplotlib");
    } else {
        return NULL;
    }
    char *hint = NULL;
    if (asprintf(&hint, "the optional package %s is missing: add %s to requirements (or import %s in the script)",
                 pkg, pkg, pkg) < 0)
        return NULL;
    return hint;
}
