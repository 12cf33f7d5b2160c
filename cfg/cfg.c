/* cfg.c: the configuration: the defaults of the rows of its keys
 * (cfg_keys.c), then the file, the environment (RUNMYSCRIPT_KEY) and --set,
 * each value parsed by the setter of its row's kind, checked against its
 * row's range and stored in its row's field. cfg_dump.c prints it back. */
#include "config.h"

#include "cfg_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CFG_FILE_MAX (1u << 20)  /* a config file larger than this is refused */
#define CFG_FILE_NAME "runmyscript.conf"
#define CFG_SYSTEM_FILE SYSCONFDIR "/" CFG_FILE_NAME
#define CFG_ENV_PREFIX "RUNMYSCRIPT_"   /* RUNMYSCRIPT_KEY sets key */
#define CFG_KEY_MAX 64                  /* a key name longer than this is unknown */
#define CFG_WHY_MAX 300                 /* a key's reason, before its source is named */


/* Puts v (a fresh copy, or NULL when it could not be made) in place of
 * *slot. */
static int set_string(char **slot, char *v, const char *key, char *err, size_t errlen)
{
    if (!v) {
        snprintf(err, errlen, "%s: out of memory", key);
        return -ENOMEM;
    }
    free(*slot);
    *slot = v;
    return 0;
}

/* An absolute path from a configured one (relative to the cwd). */
static char *absolute(const char *p)
{
    if (p[0] == '/')
        return strdup(p);
    char cwd[PATH_MAX];
    char *out;
    if (!getcwd(cwd, sizeof cwd) || asprintf(&out, "%s/%s", cwd, p) < 0)
        return NULL;
    return out;
}

/* The row of key, and the struct its field is in (c, c->exec.limits,
 * c->fetch.limits); NULL when there is none. */
static const struct key_def *find_key(const struct cfg *c, const char *key, const void **base)
{
    for (size_t t = 0; t < cfg__tables_n; t++) {
        const struct key_def *k = key_find(cfg__tables[t].rows, *cfg__tables[t].n, key);
        if (k) {
            *base = (const char *)c + cfg__tables[t].base;
            return k;
        }
    }
    return NULL;
}

const char *const *cfg_keys(void)
{
    static const char *names[256];
    if (!names[0]) {
        size_t n = 0;
        for (size_t t = 0; t < cfg__tables_n; t++)
            for (size_t i = 0; i < *cfg__tables[t].n && n + 1 < ARRAY_SIZE(names); i++)
                names[n++] = cfg__tables[t].rows[i].key;
        names[n] = NULL;
    }
    return names;
}

/* "LO to HI": a limit's in the units of its documentation (1 KiB, 0.1s),
 * another key's in plain numbers. */
static void describe_range(const struct key_def *d, char *out, size_t n)
{
    char lo[32], hi[32];
    if (!(d->flags & KEY_F_LIMIT) || d->type == KEY_COUNT) {
        snprintf(lo, sizeof lo, "%llu", (unsigned long long)d->min);
        snprintf(hi, sizeof hi, "%llu", (unsigned long long)d->max);
    } else if (d->type == KEY_SIZE) {
        util_human_size(d->min, lo, sizeof lo);
        util_human_size(d->max, hi, sizeof hi);
    } else {
        snprintf(lo, sizeof lo, "%gs", (double)d->min / 1000.0);
        snprintf(hi, sizeof hi, "%gs", (double)d->max / 1000.0);
    }
    snprintf(out, n, "%s to %s", lo, hi);
}

/* What a value that does not parse should have been. */
#define CFG_EXPECT_COUNT "a whole number"
#define CFG_EXPECT_SIZE "a size such as 1048576, 64K, 512M or 2G"
#define CFG_EXPECT_LIMIT_DURATION "a duration such as 30, 1.5s, 500ms or 2m"
#define CFG_EXPECT_DURATION "a duration such as 30, 1.5s, 2m or 24h"

/* "KEY = 'VALUE': expected EXPECT" in err; -EINVAL. */
static int bad_value(const char *key, const char *value, const char *expect, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s = '%s': expected %s", key, value, expect);
    return -EINVAL;
}

/* ---------------------------------------------- a setter per kind of key */

/* Each sets the key k, whose field is at base + k->offset, from value; 0,
 * or -EINVAL (-ENOMEM) with the reason in err. c is the whole
 * configuration (fetch_allow keeps its rules there). */
typedef int cfg_setter(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                       size_t errlen);

static void *slot_of(void *base, const struct key_def *k)
{
    return (char *)base + k->offset;
}

/* A duration, size or count: its unit says how to parse it, its row its
 * range (0 is "none" for a limit whose range starts at 0), its field's
 * width its ceiling. */
static int set_number(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                      size_t errlen)
{
    (void)c;
    uint64_t v;
    int rc;
    const char *expect;
    if ((k->flags & KEY_F_AUTO) && !strcmp(value, "auto")) {
        key_put(base, k, KEY_AUTO);
        return 0;
    }
    if (k->type == KEY_DURATION) {
        int64_t ms;
        rc = cfg_parse_duration(value, &ms);
        v = (uint64_t)ms;
        expect = k->flags & KEY_F_LIMIT ? CFG_EXPECT_LIMIT_DURATION : CFG_EXPECT_DURATION;
    } else if (k->type == KEY_SIZE) {
        rc = cfg_parse_size(value, &v);
        expect = k->flags & KEY_F_AUTO ? "auto or " CFG_EXPECT_SIZE : CFG_EXPECT_SIZE;
    } else {
        rc = cfg__parse_count(value, &v);
        expect = k->flags & KEY_F_AUTO ? "auto or " CFG_EXPECT_COUNT : CFG_EXPECT_COUNT;
    }
    if (rc < 0)
        return bad_value(k->key, value, expect, err, errlen);
    if ((k->min || k->max) && (v < k->min || v > k->max) && !(v == 0 && k->min == 0)) {
        char range[80];
        describe_range(k, range, sizeof range);
        snprintf(err, errlen, "%s = '%s': out of range (%s)", k->key, value, range);
        return -EINVAL;
    }
    if (k->size == 4 && v > UINT32_MAX)
        return bad_value(k->key, value, "a whole number below 2^32", err, errlen);
    key_put(base, k, v);
    return 0;
}

static int set_bool(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err, size_t errlen)
{
    (void)c;
    bool b;
    if (cfg_parse_bool(value, &b) < 0)
        return bad_value(k->key, value, "on or off", err, errlen);
    key_put(base, k, b);
    return 0;
}

/* "a, b or c" of a choice's names. */
static void describe_choices(const struct key_def *k, char *out, size_t n)
{
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; k->choices[i] && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i == 0 ? "" : k->choices[i + 1] ? ", " : " or ",
                                k->choices[i]);
}

/* One of the row's choices; a tristate takes the spellings of a bool for
 * on and off too. */
static int set_choice(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                      size_t errlen)
{
    (void)c;
    size_t pick = SIZE_MAX;
    bool b;
    for (size_t i = 0; k->choices[i] && pick == SIZE_MAX; i++)
        if (k->flags & KEY_F_ANYCASE ? !strcasecmp(value, k->choices[i]) : !strcmp(value, k->choices[i]))
            pick = i;
    if (pick == SIZE_MAX && k->type == KEY_TRISTATE && cfg_parse_bool(value, &b) == 0)
        pick = b ? 1 : 2; /* {"auto", "on", "off"} */
    if (pick == SIZE_MAX) {
        char expect[160];
        describe_choices(k, expect, sizeof expect);
        return bad_value(k->key, value, expect, err, errlen);
    }
    key_put(base, k, k->values ? (uint64_t)(int64_t)k->values[pick] : pick);
    return 0;
}

static int set_optstring(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                         size_t errlen)
{
    (void)c;
    return set_string(slot_of(base, k), strdup(!strcmp(value, "none") ? "" : value), k->key, err, errlen);
}

static int set_node(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "none") && *value && !ws_node_valid(value)) {
        snprintf(err, errlen, "%s = '%.40s': expected none or 1 to %d of a-z and 0-9", k->key, value, WS_NODE_MAX);
        return -EINVAL;
    }
    return set_optstring(c, base, k, value, err, errlen);
}

static int set_modules(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                       size_t errlen)
{
    for (const char *p = value; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_., ", *p)) {
            snprintf(err, errlen, "%s = '%.40s': expected none or module names (a-z, 0-9, _ and .) separated by spaces",
                     k->key, value);
            return -EINVAL;
        }
    return set_optstring(c, base, k, value, err, errlen);
}

/* A string that may not be empty; a row with KEY_F_NONE takes none (or
 * nothing) for its empty value, and a path that is literally "none" is
 * written ./none. */
static int set_nonempty(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                        size_t errlen)
{
    (void)c;
    if ((k->flags & KEY_F_NONE) && (!*value || !strcmp(value, "none")))
        return set_string(slot_of(base, k), strdup(""), k->key, err, errlen);
    if (!*value) {
        snprintf(err, errlen, "%s: empty value", k->key);
        return -EINVAL;
    }
    return set_string(slot_of(base, k), k->type == KEY_PATH ? absolute(value) : strdup(value), k->key, err, errlen);
}

/* A secret: none (or nothing) is no secret at all, so the word none is
 * never one. */
static int set_secret(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                      size_t errlen)
{
    (void)c;
    char **slot = slot_of(base, k);
    if (!*value || !strcmp(value, "none")) {
        free(*slot);
        *slot = NULL;
        return 0;
    }
    return set_string(slot, strdup(value), k->key, err, errlen);
}

/* disk_reserve: a size, or a whole percentage of the file system (at most
 * CFG_RESERVE_PCT_MAX). */
static int set_reserve(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                       size_t errlen)
{
    (void)c;
    struct cfg_reserve *r = slot_of(base, k);
    size_t n = strlen(value);
    uint64_t v;
    while (n && value[n - 1] == ' ')
        n--;
    if (n > 1 && value[n - 1] == '%') {
        char num[32];
        if (n - 1 >= sizeof num)
            return bad_value(k->key, value, "a size such as 2G, or a share such as 5%", err, errlen);
        memcpy(num, value, n - 1);
        num[n - 1] = '\0';
        if (cfg__parse_count(num, &v) < 0 || v > CFG_RESERVE_PCT_MAX) {
            snprintf(err, errlen, "%s = '%s': expected a share from 0%% to %d%%", k->key, value, CFG_RESERVE_PCT_MAX);
            return -EINVAL;
        }
        *r = (struct cfg_reserve){.pct = (uint32_t)v};
        return 0;
    }
    if (cfg_parse_size(value, &v) < 0)
        return bad_value(k->key, value, "a size such as 2G, or a share such as 5%", err, errlen);
    *r = (struct cfg_reserve){.bytes = v};
    return 0;
}

/* fetch_allow: parsed into the rules, and kept as given for cfg_dump; none
 * (no address is one) is the empty list. */
static int set_allow(struct cfg *c, void *base, const struct key_def *k, const char *value, char *err,
                     size_t errlen)
{
    struct fetch_allow a;
    if (!strcmp(value, "none"))
        value = "";
    char why[CFG_WHY_MAX];
    int rc = fetch_allow_parse(value, &a, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "%s", why);
        return rc;
    }
    rc = set_string(slot_of(base, k), strdup(value), k->key, err, errlen);
    if (rc < 0) {
        fetch_allow_free(&a);
        return rc;
    }
    fetch_allow_free(&c->fetch_allow);
    c->fetch_allow = a;
    return 0;
}

static cfg_setter *const setters[] = {
    [KEY_BOOL] = set_bool,       [KEY_DURATION] = set_number,   [KEY_SIZE] = set_number,
    [KEY_COUNT] = set_number,    [KEY_ENUM] = set_choice,       [KEY_TRISTATE] = set_choice,
    [KEY_STRING] = set_nonempty, [KEY_PATH] = set_nonempty,     [KEY_OPTSTRING] = set_optstring,
    [KEY_SECRET] = set_secret,   [KEY_RESERVE] = set_reserve,   [KEY_NODE] = set_node,
    [KEY_MODULES] = set_modules, [KEY_ALLOW] = set_allow,
};

int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen)
{
    const void *base;
    const struct key_def *k = find_key(c, key, &base);
    if (!k) {
        snprintf(err, errlen, "unknown configuration key '%s' (runmyscript config lists them)", key);
        return -EINVAL;
    }
    return setters[k->type](c, (void *)base, k, value, err, errlen);
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

static int load_file(struct cfg *c, const char *path, char *err, size_t errlen)
{
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(AT_FDCWD, path, CFG_FILE_MAX, &text, &len);
    if (rc < 0) {
        snprintf(err, errlen, "configuration file %s: %s", path, strerror(-rc));
        return rc;
    }
    int lineno = 0;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *s = trim(line);
        if (!*s || *s == '#' || *s == ';')
            continue;
        char *eq = strchr(s, '=');
        if (!eq) {
            snprintf(err, errlen, "%s:%d: expected 'key = value'", path, lineno);
            return -EINVAL;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        char why[CFG_WHY_MAX];
        rc = cfg_set(c, key, value, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
            return rc;
        }
    }
    return 0;
}

static char *default_state_dir(void)
{
    char *p;
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    if (geteuid() == 0)
        return strdup(LOCALSTATEDIR "/lib/runmyscript");
    if (xdg && xdg[0] == '/')
        return asprintf(&p, "%s/runmyscript", xdg) < 0 ? NULL : p;
    if (home && home[0] == '/')
        return asprintf(&p, "%s/.local/state/runmyscript", home) < 0 ? NULL : p;
    return asprintf(&p, "/tmp/runmyscript-%d", (int)geteuid()) < 0 ? NULL : p;
}

/* public_url's path, without a trailing slash: a site under a path
 * (https://host/tools/rms) has its routes and artifact links under it. */
static int apply_base_path(struct cfg *c)
{
    const char *u = c->public_url;
    const char *p = u && *u ? strstr(u, "://") : NULL;
    p = p ? strchr(p + 3, '/') : NULL;
    size_t n = p ? strlen(p) : 0;
    while (n && p[n - 1] == '/')
        n--;
    free(c->base_path);
    free(c->artifacts_prefix);
    c->artifacts_prefix = NULL;
    c->base_path = strndup(p ? p : "", n);
    if (!c->base_path || asprintf(&c->artifacts_prefix, "%s/artifacts/", c->base_path) < 0) {
        c->artifacts_prefix = NULL;
        return -ENOMEM;
    }
    return 0;
}

/* What the executor borrows or derives: the strings (NULL for "none"),
 * max_queued_runs = auto resolved, the fetch module's pointers. Every other
 * key the executor reads is stored in c->exec by its row. */
static void apply_exec(struct cfg *c)
{
    c->exec.state_dir = c->state_dir;
    c->exec.python = c->python;
    c->exec.url_prefix = c->artifacts_prefix;
    c->exec.node_id = c->node_id && *c->node_id ? c->node_id : NULL;
    c->exec.disk_reserve_bytes = c->disk_reserve.bytes;
    c->exec.disk_reserve_pct = c->disk_reserve.pct;
    c->exec.admit.max_queued = c->max_queued_runs == CFG_AUTO ? cfg__queue_auto(exec_admit_max_running(&c->exec.admit))
                                                              : (uint32_t)c->max_queued_runs;
    c->fetch.allow = &c->fetch_allow;
    c->fetch.workspace_bytes = c->exec.limits.workspace_bytes;
    c->fetch.workspace_files = c->exec.limits.workspace_files;
    struct exec_deps_config *d = &c->exec.deps;
    d->data_dir = c->data_dir;
    d->index_url = !strcmp(c->index_url, "default") ? NULL : c->index_url;
    d->extra_index_url = *c->extra_index_url ? c->extra_index_url : NULL;
    d->find_links = *c->find_links ? c->find_links : NULL;
    c->exec.warm.modules = c->warm_modules;
    c->exec.egress_allow = *c->egress_allow ? c->egress_allow : NULL;
    c->exec.egress_deny = *c->egress_deny ? c->egress_deny : NULL;
    if (c->exec.warm.wait_ms <= 0)
        c->exec.warm.wait_ms = 1; /* 0 would not wait at all */
}

/* A string kind of key: its field is a string the configuration owns. */
static bool owns_string(const struct key_def *k)
{
    return k->type >= KEY_STRING && k->type != KEY_RESERVE;
}

/* The defaults, before any source: every row's, state_dir's from the
 * environment. 0 or -ENOMEM. */
static int set_defaults(struct cfg *c)
{
    memset(c, 0, sizeof *c);
    fetch_config_init(&c->fetch);
    for (size_t t = 0; t < cfg__tables_n; t++) {
        const struct cfg__table *tab = &cfg__tables[t];
        void *base = (char *)c + tab->base;
        key_defaults(base, tab->rows, *tab->n);
        for (size_t i = 0; i < *tab->n; i++) {
            const struct key_def *k = &tab->rows[i];
            char why[CFG_WHY_MAX];
            if (k->type == KEY_RESERVE || k->type == KEY_ALLOW) {
                if (setters[k->type](c, base, k, k->dflt_text, why, sizeof why) < 0)
                    return -ENOMEM;
            } else if (owns_string(k) && k->dflt_text && !(*(char **)slot_of(base, k) = strdup(k->dflt_text))) {
                return -ENOMEM;
            }
        }
    }
    c->state_dir = default_state_dir();
    return c->state_dir ? 0 : -ENOMEM;
}

/* The file to read: explicit, $RUNMYSCRIPT_CONFIG, next to the program,
 * SYSCONFDIR; NULL when none. *beside keeps the path next to the program
 * (caller frees). */
static const char *find_file(const char *file, const char *self, char **beside)
{
    const char *env_file = getenv(CFG_ENV_PREFIX "CONFIG");
    if (!file && env_file && *env_file)
        file = env_file;
    if (!file && self && strchr(self, '/')) {
        const char *slash = strrchr(self, '/');
        if (asprintf(beside, "%.*s/" CFG_FILE_NAME, (int)(slash - self), self) < 0)
            *beside = NULL;
        if (*beside && access(*beside, R_OK) == 0)
            file = *beside;
    }
    if (!file && access(CFG_SYSTEM_FILE, R_OK) == 0)
        file = CFG_SYSTEM_FILE;
    return file;
}

/* The environment: RUNMYSCRIPT_<KEY>, but RUNMYSCRIPT_CONFIG (the file). */
static int load_env(struct cfg *c, char *err, size_t errlen)
{
    extern char **environ;
    const size_t plen = sizeof CFG_ENV_PREFIX - 1;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, CFG_ENV_PREFIX, plen))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[CFG_KEY_MAX];
        size_t kl = (size_t)(eq - (*e + plen));
        if (kl == 0 || kl >= sizeof key)
            continue;
        for (size_t i = 0; i < kl; i++)
            key[i] = (char)tolower((unsigned char)(*e)[plen + i]);
        key[kl] = '\0';
        if (!strcmp(key, "config"))
            continue;
        char why[CFG_WHY_MAX];
        int rc = cfg_set(c, key, eq + 1, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "environment variable %.*s: %s", (int)(eq - *e), *e, why);
            return rc;
        }
    }
    return 0;
}

/* --set key=value, last. */
static int load_sets(struct cfg *c, const char *const *sets, size_t nsets, char *err, size_t errlen)
{
    for (size_t i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        if (!eq || eq == sets[i]) {
            snprintf(err, errlen, "--set %s: expected KEY=VALUE", sets[i]);
            return -EINVAL;
        }
        char key[CFG_KEY_MAX];
        size_t kl = (size_t)(eq - sets[i]);
        if (kl >= sizeof key) {
            snprintf(err, errlen, "--set %s: unknown configuration key", sets[i]);
            return -EINVAL;
        }
        memcpy(key, sets[i], kl);
        key[kl] = '\0';
        char why[CFG_WHY_MAX];
        int rc = cfg_set(c, trim(key), eq + 1, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "--set: %s", why);
            return rc;
        }
    }
    return 0;
}

/* What holds between keys, checked once every source is in. */
static int check_keys(const struct cfg *c, char *err, size_t errlen)
{
    if (c->exec.isolation == EXEC_ISOLATION_RLIMITS && c->exec.require_isolation) {
        snprintf(err, errlen, "isolation = rlimits runs scripts without namespaces: it needs require_isolation = off");
        return -EINVAL;
    }
    if (c->exec.uid_base == 0 || c->exec.uid_count == 0 || (uint64_t)c->exec.uid_base + c->exec.uid_count >= UINT32_MAX) {
        snprintf(err, errlen, "uid_base and uid_count must be above 0, and uid_base + uid_count below 2^32 - 1");
        return -EINVAL;
    }
    if (c->exec.run_ttl_ms > 0 && c->exec.run_ttl_ms <= c->exec.limits.wall_ms + c->exec.limits.kill_grace_ms) {
        snprintf(err, errlen, "run_ttl must be longer than timeout + kill_grace, or 0 to keep runs forever");
        return -EINVAL;
    }
    if (c->request_memory != CFG_AUTO && c->request_memory < c->request_bytes) {
        snprintf(err, errlen, "request_memory must be at least request_bytes (a body of the largest size must fit), or auto");
        return -EINVAL;
    }
    char why[CFG_WHY_MAX + PATH_MAX];
    const char *const lists[][2] = {{"egress_allow", c->egress_allow}, {"egress_deny", c->egress_deny}};
    for (size_t i = 0; i < ARRAY_SIZE(lists); i++) {
        struct net_rules rules;
        if (net_rules_parse(lists[i][1], &rules, why, sizeof why) < 0) {
            snprintf(err, errlen, "%s: %s", lists[i][0], why);
            return -EINVAL;
        }
        net_rules_free(&rules);
    }
    if (exec_check_data(c->data_dir, why, sizeof why) < 0) {
        snprintf(err, errlen, "data_dir = %s: %s", c->data_dir, why);
        return -EINVAL;
    }
    return 0;
}

int cfg_load(struct cfg *c, const char *file, const char *self, const char *const *sets, size_t nsets, char *err,
             size_t errlen)
{
    cleanup_free char *beside = NULL;
    if (set_defaults(c) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc;
    file = find_file(file, self, &beside);
    if (file) {
        c->config_file = strdup(file);
        rc = load_file(c, file, err, errlen);
        if (rc < 0)
            return rc;
    }
    rc = load_env(c, err, errlen);
    rc = rc ? rc : load_sets(c, sets, nsets, err, errlen);
    rc = rc ? rc : check_keys(c, err, errlen);
    if (rc < 0)
        return rc;
    if (apply_base_path(c) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    apply_exec(c);
    log_set_level(c->log_level);
    log_set_format(c->log_format);
    return 0;
}

void cfg_free(struct cfg *c)
{
    for (size_t t = 0; t < cfg__tables_n; t++)
        for (size_t i = 0; i < *cfg__tables[t].n; i++)
            if (owns_string(&cfg__tables[t].rows[i]))
                free(*(char **)slot_of((char *)c + cfg__tables[t].base, &cfg__tables[t].rows[i]));
    free(c->config_file);
    free(c->base_path);
    free(c->artifacts_prefix);
    fetch_allow_free(&c->fetch_allow);
    memset(c, 0, sizeof *c);
}
