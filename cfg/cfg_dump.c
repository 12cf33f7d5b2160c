/* cfg_dump.c: the configuration printed back from the rows of its keys,
 * one "key = value" line per key in a form cfg_set() reads again
 * (`runmyscript config`; secrets show only whether they are set), and the
 * documentation's tables of the keys made from the same rows. */
#include "config.h"

#include "cfg_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define CFG_DUMP_MAX (1u << 20) /* the dump's ceiling: far above every key at its longest */
#define CFG_DOC_MAX (1u << 20)  /* the documentation's tables' ceiling, likewise */
#define CFG_VALUE_MAX 96        /* a number's text, "auto (...)" at its longest */

/* A number v of row k as the dump prints it: a duration in the largest
 * unit that holds it exactly, a size in binary units, a count plain. */
static void format_number(const struct key_def *k, uint64_t v, char *out, size_t n)
{
    if (k->type == KEY_DURATION) {
        int64_t ms = (int64_t)v > 0 ? (int64_t)v : 0;
        cfg__format_ms((uint64_t)ms, out, n);
    } else if (k->type == KEY_SIZE) {
        cfg__format_size(v, out, n);
    } else {
        snprintf(out, n, "%llu", (unsigned long long)v);
    }
}

/* The name of the choice whose value v is. */
static const char *choice_name(const struct key_def *k, uint64_t v)
{
    for (size_t i = 0; k->choices[i]; i++)
        if ((k->values ? (uint64_t)(int64_t)k->values[i] : i) == v)
            return k->choices[i];
    return "?";
}

/* The text of key k (its field at base) as the dump prints it: a string
 * of the configuration's, or buf filled. */
static const char *value_text(const struct cfg *c, const void *base, const struct key_def *k, char *buf, size_t n)
{
    const void *slot = (const char *)base + k->offset;
    const char *s;
    switch (k->type) {
    case KEY_BOOL:
        return key_get(base, k) ? "on" : "off";
    case KEY_ENUM:
    case KEY_TRISTATE:
        return choice_name(k, key_get(base, k));
    case KEY_RESERVE: {
        const struct cfg_reserve *r = slot;
        if (r->bytes)
            cfg__format_size(r->bytes, buf, n);
        else
            snprintf(buf, n, "%u%%", r->pct);
        return buf;
    }
    case KEY_SECRET:
        return *(char *const *)slot ? "(set)" : "none";
    case KEY_DURATION:
    case KEY_SIZE:
    case KEY_COUNT: {
        uint64_t v = key_get(base, k);
        if ((k->flags & KEY_F_AUTO) && v == KEY_AUTO) {
            char what[CFG_VALUE_MAX] = "";
            if (k->auto_text)
                k->auto_text(c, what, sizeof what);
            snprintf(buf, n, *what ? "auto (%s)" : "auto", what);
        } else {
            format_number(k, v, buf, n);
        }
        return buf;
    }
    default:
        s = *(char *const *)slot;
        return s && *s ? s : k->flags & KEY_F_NONE ? "none" : "";
    }
}

char *cfg_dump(const struct cfg *c)
{
    struct dbuf b;
    dbuf_init(&b, CFG_DUMP_MAX);
    int rc = dbuf_printf(&b, "# configuration file: %s\n", c->config_file ? c->config_file : "(none)");
    for (size_t t = 0; rc == 0 && t < cfg__tables_n; t++) {
        const void *base = (const char *)c + cfg__tables[t].base;
        for (size_t i = 0; rc == 0 && i < *cfg__tables[t].n; i++) {
            char v[CFG_VALUE_MAX];
            const struct key_def *k = &cfg__tables[t].rows[i];
            rc = dbuf_printf(&b, "%s = %s\n", k->key, value_text(c, base, k, v, sizeof v));
        }
    }
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}

int cfg_value(const struct cfg *c, const char *key, char *out, size_t n)
{
    for (size_t t = 0; t < cfg__tables_n; t++) {
        const struct key_def *k = key_find(cfg__tables[t].rows, *cfg__tables[t].n, key);
        if (k) {
            char v[CFG_VALUE_MAX];
            size_t len = (size_t)snprintf(out, n, "%s", value_text(c, (const char *)c + cfg__tables[t].base, k, v, sizeof v));
            return len >= n ? -E2BIG : 0;
        }
    }
    return -ENOENT;
}

/* ---------------------------------------------- the documentation's tables */

/* A limit's number as its table writes it: 60 s, 2 GiB, 1024 (to the
 * tenth where it is not whole). */
static void format_human(const struct key_def *k, uint64_t v, char *out, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    size_t u = 0;
    if (k->type == KEY_DURATION) {
        snprintf(out, n, "%g s", (double)v / 1000.0);
    } else if (k->type == KEY_SIZE) {
        while (v && v % 1024 == 0 && u + 1 < ARRAY_SIZE(units)) {
            v /= 1024;
            u++;
        }
        snprintf(out, n, "%llu %s", (unsigned long long)v, units[u]);
    } else {
        snprintf(out, n, "%llu", (unsigned long long)v);
    }
}

/* A number of a row, for the documentation: a limit's in words, another
 * key's as the configuration writes it. */
static void doc_number(const struct key_def *k, uint64_t v, char *out, size_t n)
{
    if (k->flags & KEY_F_LIMIT)
        format_human(k, v, out, n);
    else
        format_number(k, v, out, n);
}

/* The default column: the row's own words, else its value as `config`
 * prints it (a limit's in words). */
static int doc_default(struct dbuf *b, const struct key_def *k)
{
    char v[CFG_VALUE_MAX];
    const char *s = v;
    if (k->doc_default)
        return dbuf_printf(b, "%s", k->doc_default);
    switch (k->type) {
    case KEY_BOOL:
        s = k->dflt ? "on" : "off";
        break;
    case KEY_ENUM:
    case KEY_TRISTATE:
        s = k->choices[k->dflt];
        break;
    case KEY_DURATION:
    case KEY_SIZE:
    case KEY_COUNT:
        if ((k->flags & KEY_F_AUTO) && k->dflt == KEY_AUTO)
            s = "auto";
        else
            doc_number(k, k->dflt, v, sizeof v);
        if (k->flags & KEY_F_LIMIT)
            return dbuf_printf(b, "%s", v);
        break;
    default:
        s = k->dflt_text && *k->dflt_text ? k->dflt_text : NULL;
        if (!s)
            return dbuf_printf(b, k->flags & KEY_F_NONE ? "`none`" : "none");
    }
    return dbuf_printf(b, "`%s`", s);
}

/* The range column: LO to HI of a number, the choices of a choice. */
static int doc_range(struct dbuf *b, const struct key_def *k)
{
    int rc = 0;
    if (k->choices) {
        for (size_t i = 0; rc == 0 && k->choices[i]; i++)
            rc = dbuf_printf(b, "%s`%s`", i ? ", " : "", k->choices[i]);
        return rc;
    }
    if (k->type == KEY_RESERVE)
        return dbuf_printf(b, "a size, or `0%%` to `%d%%`", CFG_RESERVE_PCT_MAX);
    if (k->flags & KEY_F_AUTO)
        rc = dbuf_printf(b, "`auto`%s", k->min || k->max ? ", " : "");
    if (rc == 0 && (k->min || k->max)) {
        char lo[CFG_VALUE_MAX], hi[CFG_VALUE_MAX];
        doc_number(k, k->min, lo, sizeof lo);
        doc_number(k, k->max, hi, sizeof hi);
        rc = dbuf_printf(b, "%s to %s", lo, hi);
    }
    return rc;
}

static int doc_rows(struct dbuf *b, const struct key_def *rows, size_t n)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) {
        rc = dbuf_printf(b, "| `%s` | ", rows[i].key);
        rc = rc ? rc : doc_default(b, &rows[i]);
        rc = rc ? rc : dbuf_printf(b, " | ");
        rc = rc ? rc : doc_range(b, &rows[i]);
        rc = rc ? rc : dbuf_printf(b, " | %s |\n", rows[i].doc);
    }
    return rc;
}

char *cfg_doc_table(const char *which)
{
    struct dbuf b;
    int rc;
    dbuf_init(&b, CFG_DOC_MAX);
    if (!strcmp(which, "keys")) {
        rc = dbuf_printf(&b, "| key | default | range | meaning |\n|---|---|---|---|\n");
        for (size_t t = 0; rc == 0 && t < cfg__tables_n; t++)
            if (cfg__tables[t].rows != exec_limit_defs && cfg__tables[t].rows != fetch_limit_defs)
                rc = doc_rows(&b, cfg__tables[t].rows, *cfg__tables[t].n);
        rc = rc ? rc : dbuf_printf(&b, "| limits | see below | | |\n");
    } else if (!strcmp(which, "limits") || !strcmp(which, "transfers")) {
        bool run = !strcmp(which, "limits");
        rc = dbuf_printf(&b, "| key | default | range | when crossed |\n|---|---|---|---|\n");
        rc = rc ? rc
                : doc_rows(&b, run ? exec_limit_defs : fetch_limit_defs, run ? exec_limit_defs_n : fetch_limit_defs_n);
    } else {
        rc = -EINVAL;
    }
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}
