/* deps_req.c: requirement strings (PEP 508 checks, PEP 503 names) and the
 * import-name map. The PEP 440 versions are in deps_version.c, the sets a
 * run's requirements are merged into in deps.c. */
#include "config.h"

#include "deps_req.h"
#include "executor.h" /* EXEC_REQUIREMENT_MAX */

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
    if (!deps__alnum(s[0]))
        return 0;
    size_t n = 1;
    while (deps__alnum(s[n]) || s[n] == '.' || s[n] == '_' || s[n] == '-')
        n++;
    while (n > 1 && !deps__alnum(s[n - 1]))
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

static bool version_char(char c)
{
    return deps__alnum(c) || (c && strchr("._*+!-", c));
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
        size_t opn = deps__version_op(p->s + p->i);
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
        if (!strncmp(p->s + p->i, marker_vars[k], n) && !deps__alnum(p->s[p->i + n]) && p->s[p->i + n] != '_') {
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
    if (strncmp(p->s + p->i, w, n) || deps__alnum(p->s[p->i + n]) || p->s[p->i + n] == '_')
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
    size_t opn = deps__version_op(p->s + p->i);
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

/* Why spec is refused before it is parsed (NULL: it is not): its length,
 * control characters, installer options, URLs, paths and direct references
 * (unless allow_direct). s is spec past its leading blanks. */
static const char *refusal(const char *spec, const char *s, bool allow_direct)
{
    size_t len = strlen(spec);
    if (len == 0)
        return "an empty requirement";
    if (len > EXEC_REQUIREMENT_MAX)
        return "longer than EXEC_REQUIREMENT_MAX (" DEPS_STR(EXEC_REQUIREMENT_MAX) " bytes)";
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)spec[i] < 0x20 || spec[i] == 0x7f)
            return "a control character in a requirement";
    if (*s == '-')
        return "installer options are not accepted, only requirements (name, extras, versions, marker)";
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
    bool direct = n && *after == '@';
    if (direct && !allow_direct)
        return "direct references (name @ URL) are not accepted (configuration key requirement_urls)";
    if (!direct && strstr(s, "://"))
        return "URLs are not accepted, only requirements by name";
    if (!direct && (*s == '.' || *s == '/' || *s == '~' || strpbrk(s, "/\\")))
        return "local paths are not accepted, only requirements by name";
    return NULL;
}

/* "@ URL" of a direct reference, at p->s[p->i] == '@'. */
static int parse_direct(struct p508 *p)
{
    const char *s = p->s;
    p->i++;
    ws(p);
    size_t start = p->i;
    while (s[p->i] && s[p->i] != ' ' && s[p->i] != '\t')
        p->i++;
    if (p->i == start || !strstr(s + start, "://")) {
        p->err = "a direct reference needs a URL";
        return -EINVAL;
    }
    if (emit(p, " @ ", 3) < 0 || emit(p, s + start, p->i - start) < 0)
        return -ENOMEM;
    size_t before = p->i;
    ws(p);
    /* PEP 508: a marker after a URL needs a blank before the ';'. */
    if (s[p->i] == ';' && p->i == before) {
        p->err = "a blank is needed between the URL and ';'";
        return -EINVAL;
    }
    return 0;
}

int deps_check_requirement(const char *spec, bool allow_direct, char **name_out, char **canon_out, char *err,
                           size_t errlen)
{
    const char *s = spec;
    while (*s == ' ' || *s == '\t')
        s++;
    const char *reason = refusal(spec, s, allow_direct);
    if (reason) {
        snprintf(err, errlen, "requirement '%.200s': %s", spec, reason);
        return -EINVAL;
    }

    struct p508 p = {.s = s};
    dbuf_init(&p.out, EXEC_REQUIREMENT_MAX * 2);
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
        rc = parse_direct(&p);
        if (rc < 0)
            goto out;
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
    if (p.out.len > EXEC_REQUIREMENT_MAX) {
        /* The canonical spelling puts blanks around marker operators, so
         * it can outgrow the text it came from: it is what goes on (the
         * installer's argv, the environment's key) and is checked again,
         * so it has the same ceiling. */
        snprintf(err, errlen, "requirement '%.200s': longer than EXEC_REQUIREMENT_MAX (" DEPS_STR(EXEC_REQUIREMENT_MAX)
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
        snprintf(err, errlen, "requirement '%.200s' is not a valid PEP 508 requirement: %s (at byte %zu)", spec,
                 p.err ? p.err : "syntax error", (size_t)(s - spec) + p.i + 1);
    dbuf_free(&p.out);
    return rc;
}

/* ------------------------------------------------------------- the map */

void deps_map_free(struct deps_map *m)
{
    free(m->text);
    free(m->imports);
    free(m->dists);
    memset(m, 0, sizeof *m);
}

/* Cuts m->text (len bytes) into the sorted arrays; name says where the
 * text came from in a message. */
static int map_parse(struct deps_map *m, size_t len, const char *name, char *err, size_t errlen)
{
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
            snprintf(err, errlen, "%s:%d: expected IMPORT<TAB>DISTRIBUTION", name, lineno);
            return -EINVAL;
        }
        *tab = '\0';
        if (m->n && strcmp(m->imports[m->n - 1], line) >= 0) {
            snprintf(err, errlen, "%s:%d: not sorted, or a duplicate: %s", name, lineno, line);
            return -EINVAL;
        }
        m->imports[m->n] = line;
        m->dists[m->n] = tab + 1;
        m->n++;
    }
    return 0;
}

int deps_map_load(const char *data_dir, struct deps_map *m, char *err, size_t errlen)
{
    size_t len;
    memset(m, 0, sizeof *m);
    if (!data_dir || !*data_dir) {
        len = strlen(deps__map_import_names);
        m->text = strdup(deps__map_import_names);
        return m->text ? map_parse(m, len, "the built-in import map", err, errlen) : -ENOMEM;
    }
    cleanup_free char *path = NULL;
    if (asprintf(&path, "%s/" DEPS_MAP_FILE, data_dir) < 0) {
        path = NULL;
        return -ENOMEM;
    }
    /* The administrator's file: a symlink to it is fine, as for the
     * configuration file. */
    cleanup_fd int fd = open(path, O_RDONLY | O_CLOEXEC);
    int rc = fd < 0 ? -errno : util_read_fd(fd, DEPS_MAP_MAX, &m->text, &len);
    if (rc < 0) {
        snprintf(err, errlen, "the import map %s: %s", path, rc == -E2BIG ? "larger than 1 MiB" : strerror(-rc));
        return rc;
    }
    if (strlen(m->text) != len) {
        snprintf(err, errlen, "the import map %s: holds a NUL byte", path);
        return -EINVAL;
    }
    return map_parse(m, len, path, err, errlen);
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

