/* deps_req.c: requirement strings (PEP 508 checks, PEP 503 names, PEP 440
 * version matching for requires-python), the import-name map, and merging
 * the three sources of a run's requirements into one set. */
#include "config.h"

#include "deps.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEPS_STR_(x) #x
#define DEPS_STR(x) DEPS_STR_(x)

/* --------------------------------------------------------------- names */

char *deps_normalize_name(const char *name, size_t len)
{
    char *out = malloc(len + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (c == '-' || c == '_' || c == '.') {
            if (o == 0 || out[o - 1] != '-')
                out[o++] = '-';
        } else {
            out[o++] = (char)tolower((unsigned char)c);
        }
    }
    out[o] = '\0';
    return out;
}

/* ---------------------------------------------------------- PEP 508 */

struct p508 {
    const char *s;
    size_t i;
    struct dbuf out;   /* the canonical spelling being built */
    const char *err;   /* static reason */
};

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static void ws(struct p508 *p)
{
    while (p->s[p->i] == ' ' || p->s[p->i] == '\t')
        p->i++;
}

static int emit(struct p508 *p, const char *s, size_t n)
{
    return dbuf_append(&p->out, s, n) < 0 ? -ENOMEM : 0;
}

/* name := [A-Za-z0-9] ([A-Za-z0-9._-]* [A-Za-z0-9])? ; returns its length. */
static size_t name_len(const char *s)
{
    if (!alnum(s[0]))
        return 0;
    size_t n = 1;
    while (alnum(s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-')
        n++;
    while (n > 1 && !alnum(s[n - 1]))
        n--;
    return n;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int parse_extras(struct p508 *p)
{
    char *names[32];
    size_t n = 0;
    int rc = 0;
    p->i++; /* '[' */
    ws(p);
    while (p->s[p->i] != ']') {
        size_t len = name_len(p->s + p->i);
        if (!len || n == 32) {
            p->err = n == 32 ? "too many extras" : "bad extra name";
            rc = -EINVAL;
            goto out;
        }
        names[n] = deps_normalize_name(p->s + p->i, len);
        if (!names[n]) {
            rc = -ENOMEM;
            goto out;
        }
        n++;
        p->i += len;
        ws(p);
        if (p->s[p->i] == ',') {
            p->i++;
            ws(p);
            continue;
        }
        if (p->s[p->i] != ']') {
            p->err = "expected ',' or ']' in the extras";
            rc = -EINVAL;
            goto out;
        }
    }
    p->i++;
    qsort(names, n, sizeof *names, cmp_str);
    rc = n ? emit(p, "[", 1) : 0;
    for (size_t k = 0; rc == 0 && k < n; k++) {
        if (k && !strcmp(names[k], names[k - 1]))
            continue;
        if (k)
            rc = emit(p, ",", 1);
        if (rc == 0)
            rc = emit(p, names[k], strlen(names[k]));
    }
    if (rc == 0 && n)
        rc = emit(p, "]", 1);
out:
    for (size_t k = 0; k < n; k++)
        free(names[k]);
    return rc;
}

static const char *const version_ops[] = {"===", "==", "~=", "!=", "<=", ">=", "<", ">"};

static size_t match_op(const char *s)
{
    for (size_t k = 0; k < ARRAY_SIZE(version_ops); k++) {
        size_t n = strlen(version_ops[k]);
        if (!strncmp(s, version_ops[k], n))
            return n;
    }
    return 0;
}

static bool version_char(char c)
{
    return alnum(c) || (c && strchr("._*+!-", c));
}

/* versionmany := op version (',' op version)*, optionally in parentheses. */
static int parse_versions(struct p508 *p)
{
    bool paren = p->s[p->i] == '(';
    if (paren) {
        p->i++;
        ws(p);
    }
    for (bool first = true;; first = false) {
        size_t opn = match_op(p->s + p->i);
        if (!opn) {
            p->err = "expected a version operator (==, >=, <, ~=, ...)";
            return -EINVAL;
        }
        bool arbitrary = opn == 3;
        if ((!first && emit(p, ",", 1) < 0) || emit(p, p->s + p->i, opn) < 0)
            return -ENOMEM;
        p->i += opn;
        ws(p);
        size_t start = p->i;
        while (arbitrary ? (p->s[p->i] && !strchr(" \t,;)", p->s[p->i])) : version_char(p->s[p->i]))
            p->i++;
        if (p->i == start) {
            p->err = "a version operator without a version";
            return -EINVAL;
        }
        if (emit(p, p->s + start, p->i - start) < 0)
            return -ENOMEM;
        ws(p);
        if (p->s[p->i] != ',')
            break;
        p->i++;
        ws(p);
    }
    if (paren) {
        if (p->s[p->i] != ')') {
            p->err = "expected ')' after the versions";
            return -EINVAL;
        }
        p->i++;
    }
    return 0;
}

static const char *const marker_vars[] = {
    "python_version", "python_full_version", "os_name", "sys_platform", "platform_release",
    "platform_system", "platform_version", "platform_machine", "platform_python_implementation",
    "implementation_name", "implementation_version", "extra",
};

static int marker_or(struct p508 *p, int depth);

/* marker_var := a known variable or a quoted string. */
static int marker_var(struct p508 *p)
{
    char q = p->s[p->i];
    if (q == '\'' || q == '"') {
        const char *end = strchr(p->s + p->i + 1, q);
        if (!end) {
            p->err = "unterminated string in the marker";
            return -EINVAL;
        }
        size_t n = (size_t)(end - (p->s + p->i)) + 1;
        if (emit(p, p->s + p->i, n) < 0)
            return -ENOMEM;
        p->i += n;
        return 0;
    }
    for (size_t k = 0; k < ARRAY_SIZE(marker_vars); k++) {
        size_t n = strlen(marker_vars[k]);
        if (!strncmp(p->s + p->i, marker_vars[k], n) && !alnum(p->s[p->i + n]) && p->s[p->i + n] != '_') {
            if (emit(p, marker_vars[k], n) < 0)
                return -ENOMEM;
            p->i += n;
            return 0;
        }
    }
    p->err = "unknown marker variable";
    return -EINVAL;
}

static bool word(struct p508 *p, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(p->s + p->i, w, n) || alnum(p->s[p->i + n]) || p->s[p->i + n] == '_')
        return false;
    p->i += n;
    return true;
}

static int marker_expr(struct p508 *p, int depth)
{
    int rc;
    if (p->s[p->i] == '(') {
        if (depth > 16) {
            p->err = "the marker nests too deep";
            return -EINVAL;
        }
        p->i++;
        ws(p);
        if (emit(p, "(", 1) < 0)
            return -ENOMEM;
        rc = marker_or(p, depth + 1);
        if (rc < 0)
            return rc;
        ws(p);
        if (p->s[p->i] != ')') {
            p->err = "expected ')' in the marker";
            return -EINVAL;
        }
        p->i++;
        return emit(p, ")", 1);
    }
    rc = marker_var(p);
    if (rc < 0)
        return rc;
    ws(p);
    size_t opn = match_op(p->s + p->i);
    const char *op = NULL;
    if (opn) {
        if (emit(p, " ", 1) < 0 || emit(p, p->s + p->i, opn) < 0 || emit(p, " ", 1) < 0)
            return -ENOMEM;
        p->i += opn;
    } else if (word(p, "in")) {
        op = " in ";
    } else if (word(p, "not")) {
        ws(p);
        if (!word(p, "in")) {
            p->err = "expected 'not in' in the marker";
            return -EINVAL;
        }
        op = " not in ";
    } else {
        p->err = "expected a comparison in the marker";
        return -EINVAL;
    }
    if (op && emit(p, op, strlen(op)) < 0)
        return -ENOMEM;
    ws(p);
    return marker_var(p);
}

static int marker_and(struct p508 *p, int depth)
{
    for (;;) {
        int rc = marker_expr(p, depth);
        if (rc < 0)
            return rc;
        size_t save = p->i;
        ws(p);
        if (!word(p, "and")) {
            p->i = save;
            return 0;
        }
        ws(p);
        if (emit(p, " and ", 5) < 0)
            return -ENOMEM;
    }
}

static int marker_or(struct p508 *p, int depth)
{
    for (;;) {
        int rc = marker_and(p, depth);
        if (rc < 0)
            return rc;
        size_t save = p->i;
        ws(p);
        if (!word(p, "or")) {
            p->i = save;
            return 0;
        }
        ws(p);
        if (emit(p, " or ", 4) < 0)
            return -ENOMEM;
    }
}

int deps_check_requirement(const char *spec, bool allow_direct, char **name_out, char **canon_out, char *why,
                           size_t whylen)
{
    size_t len = strlen(spec);
    const char *reason = NULL;
    if (len == 0)
        reason = "an empty requirement";
    else if (len > DEPS_SPEC_MAX)
        reason = "longer than DEPS_SPEC_MAX (" DEPS_STR(DEPS_SPEC_MAX) " bytes)";
    for (size_t i = 0; !reason && i < len; i++)
        if ((unsigned char)spec[i] < 0x20 || spec[i] == 0x7f)
            reason = "a control character in a requirement";
    const char *s = spec;
    while (*s == ' ' || *s == '\t')
        s++;
    if (!reason && *s == '-')
        reason = "installer options are not accepted, only requirements (name, extras, versions, marker)";
    bool direct = false;
    if (!reason) {
        size_t n = name_len(s);
        const char *after = s + n;
        while (*after == ' ' || *after == '\t')
            after++;
        if (*after == '[') {
            const char *close = strchr(after, ']');
            after = close ? close + 1 : after;
            while (*after == ' ' || *after == '\t')
                after++;
        }
        direct = n && *after == '@';
        if (direct && !allow_direct)
            reason = "direct references (name @ URL) are not accepted (configuration key requirement_urls)";
        else if (!direct && strstr(s, "://"))
            reason = "URLs are not accepted, only requirements by name";
        else if (!direct && (*s == '.' || *s == '/' || *s == '~' || strpbrk(s, "/\\")))
            reason = "local paths are not accepted, only requirements by name";
    }
    if (reason) {
        snprintf(why, whylen, "requirement '%.200s': %s", spec, reason);
        return -EINVAL;
    }

    struct p508 p = {.s = s};
    dbuf_init(&p.out, DEPS_SPEC_MAX * 2);
    cleanup_free char *name = NULL;
    int rc = 0;
    size_t n = name_len(s);
    if (!n) {
        p.err = "a requirement starts with a project name";
        rc = -EINVAL;
        goto out;
    }
    name = deps_normalize_name(s, n);
    if (!name || emit(&p, name, strlen(name)) < 0) {
        rc = -ENOMEM;
        goto out;
    }
    p.i = n;
    ws(&p);
    if (s[p.i] == '[') {
        rc = parse_extras(&p);
        if (rc < 0)
            goto out;
        ws(&p);
    }
    if (s[p.i] == '@') {
        p.i++;
        ws(&p);
        size_t start = p.i;
        while (s[p.i] && s[p.i] != ' ' && s[p.i] != '\t')
            p.i++;
        if (p.i == start || !strstr(s + start, "://")) {
            p.err = "a direct reference needs a URL";
            rc = -EINVAL;
            goto out;
        }
        if (emit(&p, " @ ", 3) < 0 || emit(&p, s + start, p.i - start) < 0) {
            rc = -ENOMEM;
            goto out;
        }
        size_t before = p.i;
        ws(&p);
        /* PEP 508: a marker after a URL needs a blank before the ';'. */
        if (s[p.i] == ';' && p.i == before) {
            p.err = "a blank is needed between the URL and ';'";
            rc = -EINVAL;
            goto out;
        }
    } else if (s[p.i] && s[p.i] != ';') {
        rc = parse_versions(&p);
        if (rc < 0)
            goto out;
        ws(&p);
    }
    if (s[p.i] == ';') {
        p.i++;
        ws(&p);
        if (emit(&p, "; ", 2) < 0) {
            rc = -ENOMEM;
            goto out;
        }
        rc = marker_or(&p, 0);
        if (rc < 0)
            goto out;
        ws(&p);
    }
    if (s[p.i]) {
        p.err = "unexpected text";
        rc = -EINVAL;
        goto out;
    }
    (void)direct;
    if (p.out.len > DEPS_SPEC_MAX) {
        /* The canonical spelling puts blanks around marker operators, so
         * it can outgrow the text it came from: it is what goes on (the
         * installer's argv, the environment's key) and is checked again,
         * so it has the same ceiling. */
        snprintf(why, whylen, "requirement '%.200s': longer than DEPS_SPEC_MAX (" DEPS_STR(DEPS_SPEC_MAX)
                 " bytes) once written out canonically", spec);
        dbuf_free(&p.out);
        return -EINVAL;
    }
    if (name_out)
        *name_out = steal_pointer(&name);
    if (canon_out) {
        *canon_out = dbuf_steal(&p.out, NULL);
        if (!*canon_out) {
            if (name_out) {
                free(*name_out);
                *name_out = NULL;
            }
            return -ENOMEM;
        }
    }
out:
    if (rc == -EINVAL)
        snprintf(why, whylen, "requirement '%.200s' is not a valid PEP 508 requirement: %s (at byte %zu)", spec,
                 p.err ? p.err : "syntax error", (size_t)(s - spec) + p.i + 1);
    dbuf_free(&p.out);
    return rc;
}

/* ------------------------------------------------------------ PEP 440 */

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
        if (!alnum(s[i]) && !strchr(".-_+!", s[i]))
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
        size_t opn = match_op(s);
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

/* ------------------------------------------------------------- the map */

void deps_map_free(struct deps_map *m)
{
    free(m->text);
    free(m->imports);
    free(m->dists);
    memset(m, 0, sizeof *m);
}

int deps_map_load(const char *path, struct deps_map *m, char *why, size_t whylen)
{
    size_t len;
    memset(m, 0, sizeof *m);
    int rc = util_read_file_at(AT_FDCWD, path, DEPS_MAP_MAX, &m->text, &len);
    if (rc < 0) {
        snprintf(why, whylen, "the import map %s: %s", path, strerror(-rc));
        return rc;
    }
    size_t lines = 1;
    for (size_t i = 0; i < len; i++)
        lines += m->text[i] == '\n';
    m->imports = calloc(lines, sizeof *m->imports);
    m->dists = calloc(lines, sizeof *m->dists);
    if (!m->imports || !m->dists)
        return -ENOMEM;
    int lineno = 0;
    for (char *line = m->text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        if (line[0] == '#')
            continue;
        char *tab = strchr(line, '\t');
        if (!tab || tab == line || !tab[1] || strchr(tab + 1, '\t') || strpbrk(line, " \r")) {
            snprintf(why, whylen, "%s:%d: expected IMPORT<TAB>DISTRIBUTION", path, lineno);
            return -EINVAL;
        }
        *tab = '\0';
        if (m->n && strcmp(m->imports[m->n - 1], line) >= 0) {
            snprintf(why, whylen, "%s:%d: not sorted, or a duplicate: %s", path, lineno, line);
            return -EINVAL;
        }
        m->imports[m->n] = line;
        m->dists[m->n] = tab + 1;
        m->n++;
    }
    return 0;
}

const char *deps_map_lookup(const struct deps_map *m, const char *import)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(m->imports[mid], import);
        if (c == 0)
            return m->dists[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return import;
}

/* ------------------------------------------------------------- the set */

void deps_set_free(struct deps_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        free(s->v[i].spec);
        free(s->v[i].module);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* True when an earlier source already names this distribution. */
static bool set_has_earlier(const struct deps_set *s, const char *name, enum deps_source src)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->v[i].source < src && !strcmp(s->v[i].name, name))
            return true;
    return false;
}

static bool set_has(const struct deps_set *s, const char *name)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].name, name))
            return true;
    return false;
}

/* Steals name, spec and module. */
static int set_add(struct deps_set *s, char *name, char *spec, enum deps_source src, char *module)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 8;
        struct deps_req *v = realloc(s->v, cap * sizeof *v);
        if (!v) {
            free(name);
            free(spec);
            free(module);
            return -ENOMEM;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (struct deps_req){name, spec, src, module};
    return 0;
}

static int add_checked(const struct deps_config *cfg, struct deps_set *set, const char *spec, enum deps_source src,
                       const char *where, char *why, size_t whylen)
{
    char *name = NULL, *canon = NULL;
    char reason[600];
    int rc = deps_check_requirement(spec, cfg->requirement_urls, &name, &canon, reason, sizeof reason);
    if (rc < 0) {
        snprintf(why, whylen, "%s: %s", where, reason);
        return rc;
    }
    if (set_has_earlier(set, name, src)) {
        free(name);
        free(canon);
        return 0;
    }
    if (set->n >= DEPS_MAX_REQUIREMENTS) {
        free(name);
        free(canon);
        snprintf(why, whylen, "%s: more than %d requirements", where, DEPS_MAX_REQUIREMENTS);
        return -EINVAL;
    }
    return set_add(set, name, canon, src, NULL);
}

int deps_declared(const struct deps_config *cfg, const char *const *explicit_reqs, size_t n_explicit,
                  const char *code, size_t code_len, const struct deps_python *info, struct deps_set *set,
                  char *why, size_t whylen)
{
    int rc;
    for (size_t i = 0; i < n_explicit; i++) {
        rc = add_checked(cfg, set, explicit_reqs[i], DEPS_SRC_EXPLICIT, "the requirements", why, whylen);
        if (rc < 0)
            return rc;
    }
    struct deps_meta meta;
    rc = deps_read_meta(code, code_len, &meta, why, whylen);
    for (size_t i = 0; rc == 0 && i < meta.dependencies.n; i++)
        rc = add_checked(cfg, set, meta.dependencies.v[i], DEPS_SRC_SCRIPT, "the script's PEP 723 dependencies",
                         why, whylen);
    if (rc == 0 && meta.requires_python && info) {
        int ok = deps_version_satisfies(info->version, meta.requires_python);
        if (ok < 0) {
            snprintf(why, whylen, "the script's PEP 723 requires-python '%.100s' is not a valid version specifier",
                     meta.requires_python);
            rc = -EINVAL;
        } else if (ok == 0) {
            snprintf(why, whylen, "the script requires Python %.100s (PEP 723 requires-python), but %s is %s",
                     meta.requires_python, info->path, info->version);
            rc = -EINVAL;
        }
    }
    deps_meta_free(&meta);
    return rc;
}

/* ------------------------------------------------------------ detection */

/* Site-packages of an environment, for this interpreter's version. */
static char *site_packages(const char *env_dir, const struct deps_python *info)
{
    int major = 0, minor = 0;
    char *p;
    if (sscanf(info->version, "%d.%d", &major, &minor) != 2)
        return NULL;
    if (asprintf(&p, "%s/lib/python%d.%d/site-packages", env_dir, major, minor) < 0)
        return NULL;
    return p;
}

/* True when dir holds a module or package called name: NAME.py, NAME/,
 * NAME.so or NAME.<tag>.so. */
static bool dir_has_module(const char *dir, const char *name)
{
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return false;
    char f[300];
    struct stat st;
    snprintf(f, sizeof f, "%s.py", name);
    if (fstatat(dfd, f, &st, 0) == 0 && S_ISREG(st.st_mode))
        return true;
    if (fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode))
        return true;
    /* Extension modules: NAME.so or NAME.cpython-311-x86_64-linux-gnu.so. */
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return false;
    size_t nl = strlen(name);
    for (struct dirent *e; (e = readdir(d));) {
        size_t el = strlen(e->d_name);
        if (el > nl + 3 && !strncmp(e->d_name, name, nl) && e->d_name[nl] == '.' &&
            !strcmp(e->d_name + el - 3, ".so"))
            return true;
    }
    return false;
}

static bool env_has_module(const char *env_dir, const struct deps_python *info, const char *module)
{
    cleanup_free char *sp = site_packages(env_dir, info);
    return sp && dir_has_module(sp, module);
}

int deps_detect(const struct deps_config *cfg, const char *code, size_t code_len, const struct deps_python *info,
                const char *const *local_dirs, size_t n_local, const char *have_env, struct deps_set *set,
                char *why, size_t whylen)
{
    struct deps_strv mods = {0};
    struct deps_map map = {0};
    cleanup_free char *map_path = NULL;
    int rc = deps_scan_imports(code, code_len, &mods);
    if (rc == -E2BIG) {
        snprintf(why, whylen, "the script imports more than %d modules", DEPS_MAX_IMPORTS);
        goto out;
    }
    if (rc < 0)
        goto out;
    for (size_t i = 0; i < mods.n; i++) {
        const char *mod = mods.v[i];
        if (deps_python_is_stdlib(info, mod))
            continue;
        bool local = false;
        for (size_t k = 0; !local && k < n_local; k++)
            local = local_dirs[k] && dir_has_module(local_dirs[k], mod);
        if (local || (have_env && env_has_module(have_env, info, mod)))
            continue;
        /* The map is read only when an import needs it: a script of the
         * standard library never does. */
        if (!map_path) {
            if (asprintf(&map_path, "%s/import-names.tsv", cfg->data_dir) < 0) {
                map_path = NULL;
                rc = -ENOMEM;
                goto out;
            }
            rc = deps_map_load(map_path, &map, why, whylen);
            if (rc < 0) {
                size_t n = strlen(why);
                snprintf(why + n, whylen - n, " (configuration key data_dir; make install puts it there)");
                goto out;
            }
        }
        const char *dist = deps_map_lookup(&map, mod);
        char *name = deps_normalize_name(dist, strlen(dist));
        if (!name) {
            rc = -ENOMEM;
            goto out;
        }
        if (set_has(set, name)) {
            free(name);
            continue;
        }
        if (set->n >= DEPS_MAX_REQUIREMENTS) {
            free(name);
            snprintf(why, whylen, "the script needs more than %d requirements", DEPS_MAX_REQUIREMENTS);
            rc = -E2BIG;
            goto out;
        }
        char *spec = strdup(name), *module = strdup(mod);
        if (!spec || !module) {
            free(name);
            free(spec);
            free(module);
            rc = -ENOMEM;
            goto out;
        }
        rc = set_add(set, name, spec, DEPS_SRC_IMPORT, module);
        if (rc < 0)
            goto out;
    }
out:
    deps_map_free(&map);
    deps_strv_free(&mods);
    return rc;
}

void deps_drop_provided(struct deps_set *set, const struct deps_python *info, const char *env_dir)
{
    size_t o = 0;
    for (size_t i = 0; i < set->n; i++) {
        struct deps_req *r = &set->v[i];
        if (r->source == DEPS_SRC_IMPORT && env_has_module(env_dir, info, r->module)) {
            free(r->name);
            free(r->spec);
            free(r->module);
            continue;
        }
        set->v[o++] = *r;
    }
    set->n = o;
}

int deps_set_copy(const struct deps_set *in, bool declared_only, struct deps_set *out)
{
    for (size_t i = 0; i < in->n; i++) {
        const struct deps_req *r = &in->v[i];
        if (declared_only && r->source == DEPS_SRC_IMPORT)
            continue;
        char *name = strdup(r->name), *spec = strdup(r->spec), *module = r->module ? strdup(r->module) : NULL;
        if (!name || !spec || (r->module && !module)) {
            free(name);
            free(spec);
            free(module);
            return -ENOMEM;
        }
        int rc = set_add(out, name, spec, r->source, module);
        if (rc < 0)
            return rc;
    }
    return 0;
}

char *deps_set_names(const struct deps_set *set)
{
    struct dbuf b;
    dbuf_init(&b, 64 * 1024);
    for (size_t i = 0; i < set->n; i++)
        if ((i && dbuf_append(&b, ", ", 2) < 0) || dbuf_append(&b, set->v[i].spec, strlen(set->v[i].spec)) < 0)
            break;
    char *s = dbuf_steal(&b, NULL);
    return s ? s : strdup("");
}
