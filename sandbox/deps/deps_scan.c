/* deps_scan.c: reading a script's source for what it needs: the top-level
 * modules its import statements name (a tokenizer, not a line regex), the
 * optional packages its calls need although no import names them (pandas'
 * df.plot needs matplotlib), and whether it ends in an expression (for the
 * display of its value). Its PEP 723 `# /// script` block is deps_meta.c's.
 *
 * The tokenizer knows just enough Python to find statement starts: strings
 * of every kind (so an "import x" inside one is text), comments, line
 * continuations, bracket depth (a newline inside brackets does not end a
 * statement), ';' and the ':' of a one-line block. It never fails on bad
 * syntax: the interpreter reports that when the script runs. */
#include "config.h"

#include "deps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------- the tokenizer */

enum tok_kind { TOK_EOF, TOK_NEWLINE, TOK_NAME, TOK_OP, TOK_STRING, TOK_NUMBER };

struct tok {
    enum tok_kind kind;
    const char *p;  /* the token's text (not for strings) */
    size_t len;
};

struct lex {
    const char *s;
    size_t n, i;
    int depth;          /* ( [ { nesting */
    bool have_pending;  /* one token of look-back, for the import parser */
    struct tok pending;
    bool dotted;        /* record whole module paths (deps_scan_import_paths) */
};

static bool is_name_start(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c >= 0x80;
}

static bool is_name_char(unsigned char c)
{
    return is_name_start(c) || (c >= '0' && c <= '9');
}

static bool is_prefix_char(char c)
{
    return strchr("rRbBuUfF", c) != NULL && c != '\0';
}

static void scan_string(struct lex *lx, bool raw, bool fmt);

/* Inside an f-string's replacement field: an expression up to the '}' that
 * closes it (nested brackets and strings honoured), with its optional !conv
 * and :format spec (which may hold replacement fields itself). lx->i is just
 * past the '{'. */
static void scan_fexpr(struct lex *lx)
{
    int depth = 0;
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        if (c == '\'' || c == '"') {
            scan_string(lx, false, false);
            continue;
        }
        if (is_prefix_char(c)) {
            /* A prefixed string (f"{x + f'{y}'}") or a name. */
            size_t j = lx->i;
            while (j < lx->n && j - lx->i < 3 && is_prefix_char(lx->s[j]))
                j++;
            if (j < lx->n && j - lx->i <= 2 && (lx->s[j] == '\'' || lx->s[j] == '"') &&
                (lx->i == 0 || !is_name_char((unsigned char)lx->s[lx->i - 1]))) {
                bool raw = false, f = false;
                for (size_t k = lx->i; k < j; k++) {
                    raw = raw || lx->s[k] == 'r' || lx->s[k] == 'R';
                    f = f || lx->s[k] == 'f' || lx->s[k] == 'F';
                }
                lx->i = j;
                scan_string(lx, raw, f);
                continue;
            }
        }
        if (c == '(' || c == '[' || c == '{') {
            depth++;
        } else if (c == ')' || c == ']') {
            if (depth > 0)
                depth--;
        } else if (c == '}') {
            if (depth == 0) {
                lx->i++;
                return;
            }
            depth--;
        } else if (c == '#') {
            /* A comment inside a multi-line replacement field (3.12). */
            while (lx->i < lx->n && lx->s[lx->i] != '\n')
                lx->i++;
            continue;
        } else if (depth == 0 && c == ':') {
            /* The format spec: literal text and nested fields up to '}'. */
            lx->i++;
            while (lx->i < lx->n && lx->s[lx->i] != '}') {
                if (lx->s[lx->i] == '{') {
                    lx->i++;
                    scan_fexpr(lx);
                } else if (lx->s[lx->i] == '\n') {
                    return; /* malformed: let the string's own end rules decide */
                } else {
                    lx->i++;
                }
            }
            if (lx->i < lx->n)
                lx->i++;
            return;
        } else if (depth == 0 && c == '!' && lx->i + 1 < lx->n && lx->s[lx->i + 1] != '=') {
            lx->i++; /* !r, !s, !a: what follows is the name of the conversion */
        }
        lx->i++;
    }
}

/* A string literal; lx->i is on its opening quote. Ends just past the
 * closing quote, or at the end of the line for an unterminated one-line
 * string, or at the end of the source. */
static void scan_string(struct lex *lx, bool raw, bool fmt)
{
    char q = lx->s[lx->i];
    bool triple = lx->i + 2 < lx->n && lx->s[lx->i + 1] == q && lx->s[lx->i + 2] == q;
    lx->i += triple ? 3 : 1;
    while (lx->i < lx->n) {
        char c = lx->s[lx->i];
        if (c == '\\') {
            /* Even in a raw string a backslash keeps the next quote (and a
             * newline) inside the string. */
            (void)raw;
            lx->i += 2;
            continue;
        }
        if (c == '\n' && !triple)
            return; /* unterminated: the line ends it */
        if (c == q) {
            if (!triple) {
                lx->i++;
                return;
            }
            if (lx->i + 2 < lx->n && lx->s[lx->i + 1] == q && lx->s[lx->i + 2] == q) {
                lx->i += 3;
                return;
            }
        }
        if (fmt && c == '{') {
            if (lx->i + 1 < lx->n && lx->s[lx->i + 1] == '{') {
                lx->i += 2;
                continue;
            }
            lx->i++;
            scan_fexpr(lx);
            continue;
        }
        lx->i++;
    }
    if (lx->i > lx->n)
        lx->i = lx->n;
}

static void next_token(struct lex *lx, struct tok *t)
{
    if (lx->have_pending) {
        *t = lx->pending;
        lx->have_pending = false;
        return;
    }
    const char *s = lx->s;
    for (;;) {
        if (lx->i >= lx->n) {
            *t = (struct tok){TOK_EOF, s + lx->n, 0};
            return;
        }
        char c = s[lx->i];
        if (c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '\v') {
            lx->i++;
        } else if (c == '#') {
            while (lx->i < lx->n && s[lx->i] != '\n')
                lx->i++;
        } else if (c == '\\') {
            /* A continuation joins the next line; a stray backslash is a
             * syntax error the interpreter reports, skipped here. */
            lx->i++;
            if (lx->i < lx->n && s[lx->i] == '\r')
                lx->i++;
            if (lx->i < lx->n && s[lx->i] == '\n')
                lx->i++;
        } else if (c == '\n') {
            lx->i++;
            if (lx->depth == 0) {
                *t = (struct tok){TOK_NEWLINE, s + lx->i - 1, 1};
                return;
            }
        } else {
            break;
        }
    }
    size_t start = lx->i;
    char c = s[start];
    if (is_name_start((unsigned char)c)) {
        size_t j = start;
        while (j < lx->n && is_name_char((unsigned char)s[j]))
            j++;
        /* A string prefix: one or two of rbuf right before a quote. */
        if (j < lx->n && (s[j] == '\'' || s[j] == '"') && j - start <= 2) {
            bool prefix = true, raw = false, fmt = false;
            for (size_t k = start; k < j; k++) {
                prefix = prefix && is_prefix_char(s[k]);
                raw = raw || s[k] == 'r' || s[k] == 'R';
                fmt = fmt || s[k] == 'f' || s[k] == 'F';
            }
            if (prefix) {
                lx->i = j;
                scan_string(lx, raw, fmt);
                *t = (struct tok){TOK_STRING, s + start, lx->i - start};
                return;
            }
        }
        lx->i = j;
        *t = (struct tok){TOK_NAME, s + start, j - start};
        return;
    }
    if (c == '\'' || c == '"') {
        scan_string(lx, false, false);
        *t = (struct tok){TOK_STRING, s + start, lx->i - start};
        return;
    }
    if ((c >= '0' && c <= '9') || (c == '.' && start + 1 < lx->n && s[start + 1] >= '0' && s[start + 1] <= '9')) {
        size_t j = start;
        while (j < lx->n && (is_name_char((unsigned char)s[j]) || s[j] == '.')) {
            if ((s[j] == 'e' || s[j] == 'E') && j + 1 < lx->n && (s[j + 1] == '+' || s[j + 1] == '-'))
                j++;
            j++;
        }
        lx->i = j;
        *t = (struct tok){TOK_NUMBER, s + start, j - start};
        return;
    }
    if (c == '(' || c == '[' || c == '{')
        lx->depth++;
    else if ((c == ')' || c == ']' || c == '}') && lx->depth > 0)
        lx->depth--;
    lx->i++;
    /* ':=' is one operator: only a bare ':' can start a one-line block. */
    if (c == ':' && lx->i < lx->n && s[lx->i] == '=')
        lx->i++;
    *t = (struct tok){TOK_OP, s + start, lx->i - start};
}

static bool tok_is(const struct tok *t, enum tok_kind k, const char *text)
{
    return t->kind == k && t->len == strlen(text) && !memcmp(t->p, text, t->len);
}

static void push_back(struct lex *lx, const struct tok *t)
{
    lx->pending = *t;
    lx->have_pending = true;
}

/* A module name worth recording: ASCII only (a distribution name is). */
static int record_name(struct strv *out, const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)p[i] >= 0x80)
            return 0;
    char name[256];
    if (len >= sizeof name)
        return 0;
    memcpy(name, p, len);
    name[len] = '\0';
    if (strv_has(out, name))
        return 0;
    if (out->n >= DEPS_MAX_IMPORTS)
        return -E2BIG;
    return strv_push(out, name, len);
}

static int record(struct strv *out, const struct tok *t)
{
    return record_name(out, t->p, t->len);
}

/* A dotted module path being read: its text, and whether it still fits. */
struct path {
    char s[256];
    size_t len;
    bool fits;
};

static void path_add(struct path *p, const char *sep, const struct tok *t)
{
    size_t sl = strlen(sep);
    if (!p->fits || p->len + sl + t->len >= sizeof p->s) {
        p->fits = false;
        return;
    }
    memcpy(p->s + p->len, sep, sl);
    memcpy(p->s + p->len + sl, t->p, t->len);
    p->len += sl + t->len;
    p->s[p->len] = '\0';
}

static int record_path(struct strv *out, const struct path *p)
{
    return p->fits ? record_name(out, p->s, p->len) : 0;
}

/* After `import`: dotted names with optional `as NAME`, separated by
 * commas. The token that ends the statement is pushed back. */
static int parse_import(struct lex *lx, struct strv *out)
{
    struct tok t;
    for (;;) {
        next_token(lx, &t);
        if (t.kind != TOK_NAME) {
            push_back(lx, &t);
            return 0;
        }
        struct path path = {.fits = true};
        path_add(&path, "", &t);
        int rc = lx->dotted ? 0 : record(out, &t);
        if (rc < 0)
            return rc;
        /* The rest of the dotted name, then `as NAME`. */
        for (;;) {
            next_token(lx, &t);
            if (tok_is(&t, TOK_OP, ".")) {
                next_token(lx, &t);
                if (t.kind != TOK_NAME) {
                    push_back(lx, &t);
                    return lx->dotted ? record_path(out, &path) : 0;
                }
                path_add(&path, ".", &t);
                continue;
            }
            break;
        }
        if (lx->dotted && (rc = record_path(out, &path)) < 0)
            return rc;
        if (tok_is(&t, TOK_NAME, "as")) {
            next_token(lx, &t);
            if (t.kind != TOK_NAME) {
                push_back(lx, &t);
                return 0;
            }
            next_token(lx, &t);
        }
        if (!tok_is(&t, TOK_OP, ",")) {
            push_back(lx, &t);
            return 0;
        }
    }
}

/* With dotted paths, the rest of `from PATH import a, b as c` (or `(a,
 * b)`): PATH, then PATH.a and PATH.b, which may be modules or names in it
 * (whoever imports them tells them apart). `*` adds nothing. */
static int parse_from_names(struct lex *lx, struct strv *out, struct path *path)
{
    struct tok t;
    for (;;) {
        next_token(lx, &t);
        if (!tok_is(&t, TOK_OP, "."))
            break;
        next_token(lx, &t);
        if (t.kind != TOK_NAME) {
            push_back(lx, &t);
            return record_path(out, path);
        }
        path_add(path, ".", &t);
    }
    int rc = record_path(out, path);
    if (rc < 0 || !tok_is(&t, TOK_NAME, "import")) {
        push_back(lx, &t);
        return rc;
    }
    next_token(lx, &t);
    bool paren = tok_is(&t, TOK_OP, "(");
    if (paren)
        next_token(lx, &t);
    while (t.kind == TOK_NAME) {
        struct path sub = *path;
        path_add(&sub, ".", &t);
        if ((rc = record_path(out, &sub)) < 0)
            return rc;
        next_token(lx, &t);
        if (tok_is(&t, TOK_NAME, "as")) {
            next_token(lx, &t);
            if (t.kind != TOK_NAME)
                break;
            next_token(lx, &t);
        }
        if (!tok_is(&t, TOK_OP, ","))
            break;
        next_token(lx, &t);
    }
    if (!paren || !tok_is(&t, TOK_OP, ")"))
        push_back(lx, &t);
    return 0;
}

/* After `from`: leading dots make it relative (skipped); otherwise the
 * first name of the module is recorded. The rest of the statement is left
 * to the main loop, which never takes the `import` in it for a statement. */
static int parse_from(struct lex *lx, struct strv *out)
{
    struct tok t;
    next_token(lx, &t);
    if (tok_is(&t, TOK_OP, ".")) {
        push_back(lx, &t);
        return 0; /* relative: the script's own package */
    }
    if (t.kind != TOK_NAME) {
        push_back(lx, &t);
        return 0;
    }
    if (!lx->dotted)
        return record(out, &t);
    struct path path = {.fits = true};
    path_add(&path, "", &t);
    return parse_from_names(lx, out, &path);
}

static int scan(const char *code, size_t len, bool dotted, struct strv *out)
{
    struct lex lx = {.s = code, .n = len, .dotted = dotted};
    bool stmt_start = true;
    /* A UTF-8 byte order mark is not a token. */
    if (len >= 3 && !memcmp(code, "\xef\xbb\xbf", 3))
        lx.i = 3;
    for (;;) {
        struct tok t;
        next_token(&lx, &t);
        if (t.kind == TOK_EOF)
            return 0;
        if (t.kind == TOK_NEWLINE) {
            stmt_start = true;
            continue;
        }
        if (stmt_start && t.kind == TOK_NAME) {
            int rc = 0;
            if (tok_is(&t, TOK_NAME, "import"))
                rc = parse_import(&lx, out);
            else if (tok_is(&t, TOK_NAME, "from"))
                rc = parse_from(&lx, out);
            if (rc < 0)
                return rc;
            stmt_start = false;
            continue;
        }
        /* ';' ends a statement; a ':' outside brackets may open a one-line
         * block (`if x: import y`, `try: import z`). Elsewhere a ':' is an
         * annotation or a lambda, and neither can be followed by an import
         * statement, so treating those as a start changes nothing. */
        stmt_start = lx.depth == 0 && (tok_is(&t, TOK_OP, ";") || tok_is(&t, TOK_OP, ":"));
    }
}

/* Statements that are no expression, by their first word (a soft keyword
 * such as match is an expression unless its line ends in ':'). */
static bool statement_word(const struct tok *t)
{
    static const char *const words[] = {"assert", "async", "break", "class", "continue", "def", "del", "elif",
                                        "else", "except", "finally", "for", "from", "global", "if", "import",
                                        "nonlocal", "pass", "raise", "return", "try", "while", "with"};
    for (size_t i = 0; i < ARRAY_SIZE(words); i++)
        if (tok_is(t, TOK_NAME, words[i]))
            return true;
    return false;
}

/* What the last statement seen so far is like. */
struct tail {
    bool indented;    /* it starts inside a block */
    bool statement;   /* a keyword's, an assignment, a block's head, a decorator */
    bool print;       /* print(...) and nothing after the parenthesis */
    bool opens_block; /* a compound statement's head: what follows on its line is in its block */
    int ntok;
    struct tok first, prev;
};

/* One token of the last statement: '=' at the top (not ==, <=, >=, !=)
 * is an assignment (+= and the like too), ':' at the top a block's head
 * or an annotation. */
static void tail_token(struct tail *t, const struct lex *lx, const struct tok *tok, int depth_before)
{
    if (t->ntok == 0) {
        t->first = *tok;
        t->statement = statement_word(tok) || tok_is(tok, TOK_OP, "@");
        t->print = tok_is(tok, TOK_NAME, "print");
    } else if (t->print && (t->ntok == 1 ? !tok_is(tok, TOK_OP, "(") : depth_before == 0)) {
        t->print = false; /* print(...) was not the whole statement */
    }
    if (depth_before == 0 && tok_is(tok, TOK_OP, ":")) {
        t->statement = true;
        static const char *const heads[] = {"if", "elif", "else", "for", "while", "with", "try", "except",
                                            "finally", "def", "class", "async", "match", "case"};
        for (size_t i = 0; i < ARRAY_SIZE(heads); i++)
            t->opens_block = t->opens_block || tok_is(&t->first, TOK_NAME, heads[i]);
    }
    if (depth_before == 0 && tok_is(tok, TOK_OP, "=")) {
        bool cmp = t->ntok && t->prev.kind == TOK_OP && t->prev.p + t->prev.len == tok->p &&
                   strchr("=<>!", t->prev.p[0]);
        bool next_eq = lx->i < lx->n && lx->s[lx->i] == '=';
        if (!cmp && !next_eq)
            t->statement = true;
        if (cmp && t->prev.p[0] == '=')
            t->statement = false; /* (`a == b`: the first '=' said assignment) */
    }
    t->prev = *tok;
    t->ntok++;
}

bool deps_scan_ends_in_expression(const char *code, size_t len)
{
    struct lex lx = {.s = code, .n = len};
    struct tail t = {0}, last = {0};
    bool line_start = true, line_indented = false;
    if (len >= 3 && !memcmp(code, "\xef\xbb\xbf", 3))
        lx.i = 3;
    const char *start = code + lx.i;
    for (;;) {
        int depth = lx.depth;
        struct tok tok;
        next_token(&lx, &tok);
        if (tok.kind == TOK_EOF)
            break;
        bool newline = tok.kind == TOK_NEWLINE;
        if (newline || (depth == 0 && tok_is(&tok, TOK_OP, ";"))) {
            if (t.ntok)
                last = t;
            /* `if x: a; b`: b is in the block too. */
            line_indented = line_indented || t.opens_block;
            memset(&t, 0, sizeof t);
            line_start = line_start || newline;
            continue;
        }
        if (line_start) {
            /* The line's indentation: a statement inside a block (or after
             * a ';' on such a line) is no top-level one. */
            line_indented = tok.p > start && tok.p[-1] != '\n';
            line_start = false;
        }
        if (t.ntok == 0)
            t.indented = line_indented;
        tail_token(&t, &lx, &tok, depth);
    }
    if (t.ntok)
        last = t;
    return last.ntok && !last.indented && !last.statement && !last.print;
}

/* The commonest idioms whose library imports an optional package only
 * when they are called, so that no import line of the script names it:
 * (the library, an attribute of it or of its objects, the module the call
 * imports). A row is a call a user makes in the first hour; the library
 * must be imported too (or already be in the kernel), since `x.plot()`
 * alone is any object's. */
static const struct idiom {
    const char *owner, *attr, *module;
} idioms[] = {
    {"pandas", "plot", "matplotlib"},         /* df.plot(), df.plot.bar() */
    {"pandas", "hist", "matplotlib"},
    {"pandas", "boxplot", "matplotlib"},
    {"pandas", "plotting", "matplotlib"},     /* pd.plotting.scatter_matrix */
    {"pandas", "read_excel", "openpyxl"},
    {"pandas", "to_excel", "openpyxl"},
    {"pandas", "ExcelWriter", "openpyxl"},
    {"pandas", "ExcelFile", "openpyxl"},
    {"pandas", "read_parquet", "pyarrow"},
    {"pandas", "to_parquet", "pyarrow"},
    {"pandas", "read_feather", "pyarrow"},
    {"pandas", "to_feather", "pyarrow"},
    {"pandas", "read_orc", "pyarrow"},
    {"pandas", "read_html", "lxml"},
    {"pandas", "read_xml", "lxml"},
    {"pandas", "to_xml", "lxml"},
    {"pandas", "to_markdown", "tabulate"},
    {"pandas", "style", "jinja2"},            /* df.style.format(...) */
    {"pandas", "to_latex", "jinja2"},
    {"polars", "to_pandas", "pandas"},
    {"polars", "to_pandas", "pyarrow"},
    {"polars", "read_excel", "fastexcel"},
    {"polars", "write_excel", "xlsxwriter"},
};

int deps_scan_idioms(const char *code, size_t len, const struct strv *have, struct strv *out)
{
    bool any = false;
    for (size_t k = 0; k < ARRAY_SIZE(idioms); k++)
        any = any || strv_has(have, idioms[k].owner);
    if (!any)
        return 0;
    struct lex lx = {.s = code, .n = len};
    bool dot = false;
    for (;;) {
        struct tok t;
        next_token(&lx, &t);
        if (t.kind == TOK_EOF)
            return 0;
        if (dot && t.kind == TOK_NAME)
            for (size_t k = 0; k < ARRAY_SIZE(idioms); k++) {
                const struct idiom *d = &idioms[k];
                if (!tok_is(&t, TOK_NAME, d->attr) || !strv_has(have, d->owner))
                    continue;
                int rc = record_name(out, d->module, strlen(d->module));
                if (rc < 0)
                    return rc;
            }
        dot = tok_is(&t, TOK_OP, ".");
    }
}

int deps_scan_imports(const char *code, size_t len, struct strv *out)
{
    return scan(code, len, false, out);
}

int deps_scan_import_paths(const char *code, size_t len, struct strv *out)
{
    return scan(code, len, true, out);
}
