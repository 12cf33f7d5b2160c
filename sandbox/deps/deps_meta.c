/* deps_meta.c: a script's PEP 723 `# /// script` block (its dependencies
 * and requires-python), read with a small TOML subset: deps_read_meta. */
#include "config.h"

#include "deps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void deps_meta_free(struct deps_meta *m)
{
    strv_free(&m->dependencies);
    free(m->requires_python);
    memset(m, 0, sizeof *m);
}

struct toml {
    const char *s;
    size_t n, i;
    char *err;
    size_t errlen;
};

static void toml_ws(struct toml *t, bool newlines)
{
    while (t->i < t->n) {
        char c = t->s[t->i];
        if (c == ' ' || c == '\t' || (newlines && (c == '\n' || c == '\r'))) {
            t->i++;
        } else if (c == '#' && newlines) {
            while (t->i < t->n && t->s[t->i] != '\n')
                t->i++;
        } else {
            break;
        }
    }
}

static int toml_fail(struct toml *t, const char *what)
{
    int line = 1;
    for (size_t k = 0; k < t->i && k < t->n; k++)
        line += t->s[k] == '\n';
    snprintf(t->err, t->errlen, "the script's PEP 723 block, line %d of the block: %s", line, what);
    return -EINVAL;
}

/* A TOML string at t->i (basic, literal, or their multi-line forms) into a
 * new string (caller frees). */
static int toml_string(struct toml *t, char **out)
{
    struct dbuf b;
    dbuf_init(&b, EXEC_REQUIREMENT_MAX * 4);
    char q = t->s[t->i];
    bool multi = t->i + 2 < t->n && t->s[t->i + 1] == q && t->s[t->i + 2] == q;
    t->i += multi ? 3 : 1;
    if (multi && t->i < t->n && t->s[t->i] == '\n')
        t->i++; /* a newline right after the opening quotes is trimmed */
    int rc = 0;
    for (;;) {
        if (t->i >= t->n || (!multi && t->s[t->i] == '\n')) {
            rc = toml_fail(t, "unterminated string");
            break;
        }
        char c = t->s[t->i];
        if (c == q && (!multi || (t->i + 2 < t->n && t->s[t->i + 1] == q && t->s[t->i + 2] == q))) {
            t->i += multi ? 3 : 1;
            break;
        }
        if (c == '\\' && q == '"') {
            char e = t->i + 1 < t->n ? t->s[t->i + 1] : '\0', v = 0;
            switch (e) {
            case '"': v = '"'; break;
            case '\\': v = '\\'; break;
            case 'b': v = '\b'; break;
            case 't': v = '\t'; break;
            case 'n': v = '\n'; break;
            case 'f': v = '\f'; break;
            case 'r': v = '\r'; break;
            default: break;
            }
            t->i += 2;
            if (v) {
                /* The same ceiling as a plain byte, with a reason: a bare
                 * -E2BIG here reached the caller without one, and the
                 * front doors took it for a failure of the service. */
                rc = dbuf_append(&b, &v, 1);
                if (rc == -E2BIG)
                    rc = toml_fail(t, "string too long");
            } else if (multi && (e == '\n' || e == ' ' || e == '\t' || e == '\r')) {
                /* A line-ending backslash trims the whitespace that follows. */
                while (t->i < t->n && t->s[t->i] && strchr(" \t\r\n", t->s[t->i]))
                    t->i++;
            } else {
                /* \uXXXX and \UXXXXXXXX never appear in a valid requirement. */
                rc = toml_fail(t, "unsupported escape in a string");
            }
            if (rc < 0)
                break;
            continue;
        }
        rc = dbuf_append(&b, &c, 1);
        if (rc < 0) {
            rc = rc == -E2BIG ? toml_fail(t, "string too long") : rc;
            break;
        }
        t->i++;
    }
    if (rc < 0) {
        dbuf_free(&b);
        return rc;
    }
    *out = dbuf_steal(&b, NULL);
    if (!*out)
        *out = strdup("");
    return *out ? 0 : -ENOMEM;
}

/* Skips a value this reader does not need (numbers, booleans, dates,
 * arrays and inline tables of anything), honouring strings and nesting. */
static int toml_skip_value(struct toml *t)
{
    int depth = 0;
    while (t->i < t->n) {
        char c = t->s[t->i];
        if (c == '"' || c == '\'') {
            char *junk = NULL;
            int rc = toml_string(t, &junk);
            free(junk);
            if (rc < 0)
                return rc;
            continue;
        }
        if (c == '[' || c == '{') {
            depth++;
        } else if (c == ']' || c == '}') {
            depth--;
        } else if (c == '#') {
            while (t->i < t->n && t->s[t->i] != '\n')
                t->i++;
            continue;
        } else if (c == '\n' && depth == 0) {
            return 0;
        }
        t->i++;
        if (depth == 0 && (c == ']' || c == '}'))
            return 0;
    }
    return depth == 0 ? 0 : toml_fail(t, "unterminated array or table");
}

static int toml_string_array(struct toml *t, struct strv *out)
{
    t->i++; /* '[' */
    for (;;) {
        toml_ws(t, true);
        if (t->i >= t->n)
            return toml_fail(t, "unterminated array");
        if (t->s[t->i] == ']') {
            t->i++;
            return 0;
        }
        if (t->s[t->i] != '"' && t->s[t->i] != '\'')
            return toml_fail(t, "dependencies must be an array of strings");
        char *v = NULL;
        int rc = toml_string(t, &v);
        if (rc < 0)
            return rc;
        if (out->n >= EXEC_MAX_REQUIREMENTS) {
            free(v);
            return toml_fail(t, "too many dependencies");
        }
        rc = strv_push(out, v, strlen(v));
        free(v);
        if (rc < 0)
            return rc;
        toml_ws(t, true);
        if (t->i < t->n && t->s[t->i] == ',') {
            t->i++;
            continue;
        }
        toml_ws(t, true);
        if (t->i < t->n && t->s[t->i] == ']') {
            t->i++;
            return 0;
        }
        return toml_fail(t, "expected ',' or ']' in the dependencies array");
    }
}

static int parse_toml(const char *text, size_t len, struct deps_meta *m, char *err, size_t errlen)
{
    struct toml t = {text, len, 0, err, errlen};
    bool in_root = true;
    while (t.i < t.n) {
        toml_ws(&t, true);
        if (t.i >= t.n)
            break;
        char c = t.s[t.i];
        if (c == '[') {
            /* A table: keys after it are not the script's. */
            in_root = false;
            while (t.i < t.n && t.s[t.i] != '\n')
                t.i++;
            continue;
        }
        /* A key: bare, quoted or dotted. */
        char key[64];
        size_t kl = 0;
        bool dotted = false;
        if (c == '"' || c == '\'') {
            char *k = NULL;
            int rc = toml_string(&t, &k);
            if (rc < 0)
                return rc;
            snprintf(key, sizeof key, "%s", k);
            kl = strlen(key);
            free(k);
        } else {
            while (t.i < t.n && ((t.s[t.i] && strchr("-_.", t.s[t.i])) || (t.s[t.i] >= 'a' && t.s[t.i] <= 'z') ||
                                 (t.s[t.i] >= 'A' && t.s[t.i] <= 'Z') || (t.s[t.i] >= '0' && t.s[t.i] <= '9'))) {
                dotted = dotted || t.s[t.i] == '.';
                if (kl + 1 < sizeof key)
                    key[kl++] = t.s[t.i];
                t.i++;
            }
            key[kl] = '\0';
        }
        toml_ws(&t, false);
        if (kl == 0 || t.i >= t.n || t.s[t.i] != '=')
            return toml_fail(&t, "expected 'key = value'");
        t.i++;
        toml_ws(&t, false);
        if (t.i >= t.n)
            return toml_fail(&t, "a key without a value");
        int rc;
        if (in_root && !dotted && !strcmp(key, "dependencies")) {
            if (m->has_dependencies)
                return toml_fail(&t, "dependencies is given twice");
            if (t.s[t.i] != '[')
                return toml_fail(&t, "dependencies must be an array of strings");
            m->has_dependencies = true;
            rc = toml_string_array(&t, &m->dependencies);
        } else if (in_root && !dotted && !strcmp(key, "requires-python")) {
            if (m->requires_python)
                return toml_fail(&t, "requires-python is given twice");
            if (t.s[t.i] != '"' && t.s[t.i] != '\'')
                return toml_fail(&t, "requires-python must be a string");
            rc = toml_string(&t, &m->requires_python);
        } else {
            rc = toml_skip_value(&t);
        }
        if (rc < 0)
            return rc;
        toml_ws(&t, false);
        if (t.i < t.n && t.s[t.i] == '#')
            toml_ws(&t, true);
        else if (t.i < t.n && t.s[t.i] != '\n' && t.s[t.i] != '\r')
            return toml_fail(&t, "unexpected text after a value");
    }
    return 0;
}

/* One line of the source: [p, p+len) without its line ending. */
struct line {
    const char *p;
    size_t len;
};

static bool next_line(const char *code, size_t n, size_t *pos, struct line *l)
{
    if (*pos >= n)
        return false;
    const char *start = code + *pos;
    const char *nl = memchr(start, '\n', n - *pos);
    size_t len = nl ? (size_t)(nl - start) : n - *pos;
    *pos += len + (nl ? 1 : 0);
    if (len && start[len - 1] == '\r')
        len--;
    *l = (struct line){start, len};
    return true;
}

static bool line_is(const struct line *l, const char *text)
{
    return l->len == strlen(text) && !memcmp(l->p, text, l->len);
}

/* "# /// TYPE" with TYPE in [a-zA-Z0-9-]+: the type, else NULL. */
static bool block_open(const struct line *l, struct line *type)
{
    if (l->len < 8 || memcmp(l->p, "# /// ", 6))
        return false;
    for (size_t i = 6; i < l->len; i++) {
        char c = l->p[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-'))
            return false;
    }
    *type = (struct line){l->p + 6, l->len - 6};
    return true;
}

static bool comment_line(const struct line *l)
{
    return (l->len == 1 && l->p[0] == '#') || (l->len >= 2 && l->p[0] == '#' && l->p[1] == ' ');
}

int deps_read_meta(const char *code, size_t len, struct deps_meta *m, char *err, size_t errlen)
{
    size_t pos = 0;
    struct line l;
    memset(m, 0, sizeof *m);
    while (next_line(code, len, &pos, &l)) {
        struct line type;
        if (!block_open(&l, &type))
            continue;
        /* The block runs to the last "# ///" of the comment lines that
         * follow (PEP 723: the content is every comment line before it). */
        size_t scan = pos, end_at = 0, body_start = pos, body_end = 0;
        bool closed = false;
        struct line c;
        while (next_line(code, len, &scan, &c) && comment_line(&c)) {
            if (line_is(&c, "# ///")) {
                closed = true;
                body_end = (size_t)(c.p - code);
                end_at = scan;
            }
        }
        bool script = type.len == 6 && !memcmp(type.p, "script", 6);
        if (!closed) {
            if (script) {
                snprintf(err, errlen, "the script's PEP 723 block (# /// script) has no closing '# ///' line");
                return -EINVAL;
            }
            continue;
        }
        pos = end_at;
        if (!script)
            continue;
        if (m->present) {
            snprintf(err, errlen, "the script has two PEP 723 script blocks");
            return -EINVAL;
        }
        m->present = true;
        /* The TOML: each line without its "# " or "#". */
        struct dbuf toml;
        dbuf_init(&toml, len + 1);
        size_t bp = body_start;
        int rc = 0;
        while (rc == 0 && bp < body_end && next_line(code, body_end, &bp, &c)) {
            size_t skip = c.len >= 2 ? 2 : 1;
            rc = dbuf_append(&toml, c.p + skip, c.len - skip);
            if (rc == 0)
                rc = dbuf_append(&toml, "\n", 1);
        }
        if (rc == 0)
            rc = parse_toml(toml.data ? toml.data : "", toml.len, m, err, errlen);
        dbuf_free(&toml);
        if (rc < 0)
            return rc;
    }
    return 0;
}
