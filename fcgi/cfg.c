/* cfg.c: the configuration file, environment overrides and --set. */
#include "config.h"

#include "cfg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define CFG_FILE_MAX (1u << 20)  /* a config file larger than this is refused */

/* CFG_SECRET: a string that may be empty (then NULL), never printed by
 * cfg_dump. CFG_COUNT and CFG_SIZE: checked against ranges[] when listed. */
enum cfg_type {
    CFG_PATH,
    CFG_STRING,
    CFG_OPTSTRING, /* may be empty ("none" means empty too) */
    CFG_SECRET,
    CFG_BOOL,
    CFG_DURATION,
    CFG_SIZE,
    CFG_COUNT,
    CFG_LEVEL,
    CFG_ISOLATION,
    CFG_AUTO_BOOL,   /* auto | on | off, into an int: -1, 1, 0 */
    CFG_INSTALLER,
    CFG_UINT,
    CFG_LIMIT,
    CFG_ALLOW,
    CFG_NODE,      /* none, or a node id (workspace.h: 1 to 16 of [a-z0-9]) */
};

struct cfg_key {
    const char *name;
    enum cfg_type type;
    size_t offset;  /* into struct cfg; unused for CFG_LIMIT */
};

#define K(n, t, f) {n, t, offsetof(struct cfg, f)}
static const struct cfg_key plain_keys[] = {
    K("state_dir", CFG_PATH, state_dir),
    K("python", CFG_PATH, python),
    K("isolation", CFG_ISOLATION, isolation),
    K("require_isolation", CFG_BOOL, require_isolation),
    K("script_network", CFG_BOOL, script_network),
    K("uid_base", CFG_UINT, uid_base),
    K("uid_count", CFG_UINT, uid_count),
    K("run_ttl", CFG_DURATION, run_ttl_ms),
    K("log_level", CFG_LEVEL, log_level),
    K("workers", CFG_COUNT, workers),
    K("max_concurrent_runs", CFG_COUNT, max_concurrent_runs),
    K("max_queued_runs", CFG_COUNT, max_queued_runs),
    K("queue_wait", CFG_DURATION, queue_wait_ms),
    K("retry_after", CFG_DURATION, retry_after_ms),
    K("cancel_on_disconnect", CFG_BOOL, cancel_on_disconnect),
    K("session_ttl", CFG_DURATION, session_ttl_ms),
    K("drain_grace", CFG_DURATION, drain_grace_ms),
    K("request_bytes", CFG_SIZE, request_bytes),
    K("max_sessions", CFG_COUNT, max_sessions),
    K("image_inline_bytes", CFG_SIZE, image_inline_bytes),
    K("preview_bytes", CFG_SIZE, preview_bytes),
    K("auth_token", CFG_SECRET, auth_token),
    K("allowed_hosts", CFG_STRING, allowed_hosts),
    K("public_url", CFG_OPTSTRING, public_url),
    K("node_id", CFG_NODE, node_id),
    K("accel_redirect", CFG_AUTO_BOOL, accel_redirect),
    K("form_fields", CFG_COUNT, form.fields),
    K("form_field_bytes", CFG_SIZE, form.field_bytes),
    K("form_file_bytes", CFG_SIZE, form.file_bytes),
    K("form_header_bytes", CFG_SIZE, form.header_bytes),
    K("cgi_sse_padding", CFG_SIZE, cgi_sse_padding),
    K("test_fixture_tools", CFG_BOOL, test_fixture_tools),
    K("fetch_allow", CFG_ALLOW, fetch_allow_text),
    K("data_dir", CFG_PATH, data_dir),
    K("installer", CFG_INSTALLER, installer),
    K("index_url", CFG_STRING, index_url),
    K("extra_index_url", CFG_OPTSTRING, extra_index_url),
    K("find_links", CFG_OPTSTRING, find_links),
    K("only_binary", CFG_BOOL, only_binary),
    K("auto_deps", CFG_BOOL, auto_deps),
    K("requirement_urls", CFG_BOOL, requirement_urls),
    K("env_cache_size", CFG_SIZE, env_cache_size),
};

/* Ranges of the count and size keys: a value outside is an error. */
static const struct {
    const char *key;
    uint64_t min, max;
} ranges[] = {
    {"workers", 0, 1024},
    {"max_concurrent_runs", 0, ADMIT_MAX_SLOTS},
    {"max_queued_runs", 0, ADMIT_MAX_SLOTS},
    {"request_bytes", 4096, 16ull << 30},
    {"max_sessions", 1, 1000000},
    {"image_inline_bytes", 0, 64ull << 20},
    {"preview_bytes", 256, 16ull << 20},
    {"form_fields", 1, 1024},
    {"form_field_bytes", 1, 16ull << 30},
    {"form_file_bytes", 1, 16ull << 30},
    {"form_header_bytes", 256, 1ull << 20},
    {"cgi_sse_padding", 0, 1ull << 20},
};

const char *const *cfg_keys(void)
{
    static const char *names[ARRAY_SIZE(plain_keys) + 64];
    if (!names[0]) {
        size_t n = 0;
        for (size_t i = 0; i < ARRAY_SIZE(plain_keys); i++)
            names[n++] = plain_keys[i].name;
        for (size_t i = 0; i < exec_limit_defs_n && n + 1 < ARRAY_SIZE(names); i++)
            names[n++] = exec_limit_defs[i].key;
        for (size_t i = 0; i < fetch_limit_defs_n && n + 1 < ARRAY_SIZE(names); i++)
            names[n++] = fetch_limit_defs[i].key;
        names[n] = NULL;
    }
    return names;
}

/* ------------------------------------------------------------ parsing */

static int parse_number(const char *s, double *v, const char **rest)
{
    char num[64];
    size_t n = 0;
    bool dot = false;
    while (isspace((unsigned char)*s))
        s++;
    /* Digits with at most one dot: no signs, no hex, no exponent, no "inf". */
    for (; isdigit((unsigned char)*s) || (*s == '.' && !dot); s++) {
        dot = dot || *s == '.';
        if (n + 1 >= sizeof num)
            return -EINVAL;
        num[n++] = *s;
    }
    num[n] = '\0';
    if (n == 0 || (n == 1 && dot))
        return -EINVAL;
    char *end;
    errno = 0;
    *v = strtod(num, &end);
    if (*end || errno || !isfinite(*v))
        return -EINVAL;
    end = (char *)s;
    while (isspace((unsigned char)*end))
        end++;
    *rest = end;
    return 0;
}

int cfg_parse_duration(const char *s, int64_t *ms)
{
    double v;
    const char *u;
    if (parse_number(s, &v, &u) < 0)
        return -EINVAL;
    double mult;
    if (!*u || !strcmp(u, "s"))
        mult = 1000;
    else if (!strcmp(u, "ms"))
        mult = 1;
    else if (!strcmp(u, "m") || !strcmp(u, "min"))
        mult = 60000;
    else if (!strcmp(u, "h"))
        mult = 3600000;
    else if (!strcmp(u, "d"))
        mult = 86400000;
    else
        return -EINVAL;
    double r = v * mult;
    if (r > 9e15)
        return -EINVAL;
    *ms = (int64_t)llround(r);
    return 0;
}

int cfg_parse_size(const char *s, uint64_t *bytes)
{
    double v;
    const char *u;
    if (parse_number(s, &v, &u) < 0)
        return -EINVAL;
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1}, {"B", 1}, {"K", 1024.0}, {"KB", 1024.0}, {"KiB", 1024.0}, {"M", 1048576.0}, {"MB", 1048576.0},
        {"MiB", 1048576.0}, {"G", 1073741824.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0},
        {"T", 1099511627776.0}, {"TB", 1099511627776.0}, {"TiB", 1099511627776.0},
    };
    for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
        if (!strcasecmp(u, units[i].suffix)) {
            double r = v * units[i].mult;
            if (r > 1.8e19 || (units[i].mult == 1 && v != floor(v)))
                return -EINVAL;
            *bytes = (uint64_t)llround(r);
            return 0;
        }
    }
    return -EINVAL;
}

int cfg_parse_bool(const char *s, bool *v)
{
    static const char *const yes[] = {"on", "true", "yes", "1"}, *const no[] = {"off", "false", "no", "0"};
    for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
        if (!strcasecmp(s, yes[i])) {
            *v = true;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *v = false;
            return 0;
        }
    }
    return -EINVAL;
}

static int parse_count(const char *s, uint64_t *v)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end)
        return -EINVAL;
    *v = x;
    return 0;
}

/* An absolute path from a configured one (relative to the cwd). */
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

static const struct cfg_key *find_plain(const char *key)
{
    for (size_t i = 0; i < ARRAY_SIZE(plain_keys); i++)
        if (!strcmp(plain_keys[i].name, key))
            return &plain_keys[i];
    return NULL;
}

static void describe_range(const struct exec_limit_def *d, char *out, size_t n)
{
    char lo[32], hi[32];
    if (d->unit == EXEC_UNIT_BYTES) {
        util_human_size(d->min, lo, sizeof lo);
        util_human_size(d->max, hi, sizeof hi);
    } else if (d->unit == EXEC_UNIT_MS) {
        snprintf(lo, sizeof lo, "%gs", (double)d->min / 1000.0);
        snprintf(hi, sizeof hi, "%gs", (double)d->max / 1000.0);
    } else {
        snprintf(lo, sizeof lo, "%llu", (unsigned long long)d->min);
        snprintf(hi, sizeof hi, "%llu", (unsigned long long)d->max);
    }
    snprintf(out, n, "%s to %s", lo, hi);
}

int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen)
{
    const struct cfg_key *k = find_plain(key);
    const struct exec_limit_def *lim = k ? NULL : exec_limit_find(key);
    const struct exec_limit_def *flim = k || lim ? NULL : fetch_limit_find(key);
    if (!lim)
        lim = flim;
    if (!k && !lim) {
        snprintf(err, errlen, "unknown configuration key '%s' (runmyscript config lists them)", key);
        return -EINVAL;
    }
    if (lim) {
        uint64_t v = 0;
        int rc;
        const char *expect;
        if (lim->unit == EXEC_UNIT_MS) {
            int64_t ms;
            rc = cfg_parse_duration(value, &ms);
            v = (uint64_t)ms;
            expect = "a duration such as 30, 1.5s, 500ms or 2m";
        } else if (lim->unit == EXEC_UNIT_BYTES) {
            rc = cfg_parse_size(value, &v);
            expect = "a size such as 1048576, 64K, 512M or 2G";
        } else {
            rc = parse_count(value, &v);
            expect = "a whole number";
        }
        if (rc < 0) {
            snprintf(err, errlen, "%s = '%s': expected %s", key, value, expect);
            return -EINVAL;
        }
        if ((v < lim->min || v > lim->max) && !(v == 0 && lim->min == 0)) {
            char range[80];
            describe_range(lim, range, sizeof range);
            snprintf(err, errlen, "%s = '%s': out of range (%s)", key, value, range);
            return -EINVAL;
        }
        if (flim)
            fetch_limit_set(&c->fetch.limits, flim, v);
        else
            exec_limit_set(&c->exec.limits, lim, v);
        return 0;
    }
    char *base = (char *)c;
    switch (k->type) {
    case CFG_NODE:
        if (strcmp(value, "none") && *value && !ws_node_valid(value)) {
            snprintf(err, errlen, "%s = '%.40s': expected none or 1 to %d of a-z and 0-9", key, value, WS_NODE_MAX);
            return -EINVAL;
        }
        /* fall through */
    case CFG_OPTSTRING: {
        return set_string((char **)(base + k->offset), strdup(!strcmp(value, "none") ? "" : value), key, err, errlen);
    }
    case CFG_PATH:
    case CFG_STRING: {
        if (!*value) {
            snprintf(err, errlen, "%s: empty value", key);
            return -EINVAL;
        }
        return set_string((char **)(base + k->offset), k->type == CFG_PATH ? absolute(value) : strdup(value), key, err,
                          errlen);
    }
    case CFG_SECRET: {
        char *v = NULL;
        if (*value && !(v = strdup(value))) {
            snprintf(err, errlen, "%s: out of memory", key);
            return -ENOMEM;
        }
        char **slot = (char **)(base + k->offset);
        free(*slot);
        *slot = v;
        return 0;
    }
    case CFG_COUNT:
    case CFG_SIZE: {
        uint64_t v;
        int rc = k->type == CFG_COUNT ? parse_count(value, &v) : cfg_parse_size(value, &v);
        if (rc < 0) {
            snprintf(err, errlen, "%s = '%s': expected %s", key, value,
                     k->type == CFG_COUNT ? "a whole number" : "a size such as 1048576, 64K, 512M or 2G");
            return -EINVAL;
        }
        for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
            if (!strcmp(ranges[i].key, key) && (v < ranges[i].min || v > ranges[i].max)) {
                snprintf(err, errlen, "%s = '%s': out of range (%llu to %llu)", key, value,
                         (unsigned long long)ranges[i].min, (unsigned long long)ranges[i].max);
                return -EINVAL;
            }
        *(uint64_t *)(base + k->offset) = v;
        return 0;
    }
    case CFG_BOOL:
        if (cfg_parse_bool(value, (bool *)(base + k->offset)) < 0) {
            snprintf(err, errlen, "%s = '%s': expected on or off", key, value);
            return -EINVAL;
        }
        return 0;
    case CFG_DURATION:
        if (cfg_parse_duration(value, (int64_t *)(base + k->offset)) < 0) {
            snprintf(err, errlen, "%s = '%s': expected a duration such as 30, 1.5s, 2m or 24h", key, value);
            return -EINVAL;
        }
        return 0;
    case CFG_LEVEL: {
        static const char *const levels[] = {"error", "warning", "info", "debug"};
        for (size_t i = 0; i < ARRAY_SIZE(levels); i++)
            if (!strcasecmp(value, levels[i])) {
                c->log_level = (enum log_level)i;
                return 0;
            }
        snprintf(err, errlen, "%s = '%s': expected error, warning, info or debug", key, value);
        return -EINVAL;
    }
    case CFG_AUTO_BOOL: {
        bool b;
        int *slot = (int *)(base + k->offset);
        if (!strcmp(value, "auto")) {
            *slot = -1;
            return 0;
        }
        if (cfg_parse_bool(value, &b) < 0) {
            snprintf(err, errlen, "%s = '%s': expected auto, on or off", key, value);
            return -EINVAL;
        }
        *slot = b;
        return 0;
    }
    case CFG_ISOLATION:
        if (strcmp(value, "auto") && strcmp(value, "namespaces") && strcmp(value, "rlimits")) {
            snprintf(err, errlen, "%s = '%s': expected auto, namespaces or rlimits", key, value);
            return -EINVAL;
        }
        free(c->isolation);
        c->isolation = strdup(value);
        return c->isolation ? 0 : -ENOMEM;
    case CFG_INSTALLER:
        if (strcmp(value, "auto") && strcmp(value, "uv") && strcmp(value, "pip")) {
            snprintf(err, errlen, "%s = '%s': expected auto, uv or pip", key, value);
            return -EINVAL;
        }
        free(c->installer);
        c->installer = strdup(value);
        return c->installer ? 0 : -ENOMEM;
    case CFG_UINT: {
        uint64_t v;
        if (parse_count(value, &v) < 0 || v > UINT32_MAX) {
            snprintf(err, errlen, "%s = '%s': expected a whole number below 2^32", key, value);
            return -EINVAL;
        }
        *(uint64_t *)(base + k->offset) = v;
        return 0;
    }
    case CFG_ALLOW: {
        struct fetch_allow a;
        char why[200];
        int rc = fetch_allow_parse(value, &a, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "%s", why);
            return rc;
        }
        char *text = strdup(value);
        if (!text) {
            fetch_allow_free(&a);
            snprintf(err, errlen, "%s: out of memory", key);
            return -ENOMEM;
        }
        fetch_allow_free(&c->fetch_allow);
        free(c->fetch_allow_text);
        c->fetch_allow = a;
        c->fetch_allow_text = text;
        return 0;
    }
    case CFG_LIMIT:
        break;
    }
    return -EINVAL;
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
        char why[300];
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

static void apply_exec(struct cfg *c)
{
    c->exec.state_dir = c->state_dir;
    c->exec.python = c->python;
    c->exec.url_prefix = c->artifacts_prefix;
    c->exec.node_id = c->node_id && *c->node_id ? c->node_id : NULL;
    c->exec.isolation = !strcmp(c->isolation, "namespaces") ? EXEC_ISOLATION_NAMESPACES
                        : !strcmp(c->isolation, "rlimits") ? EXEC_ISOLATION_RLIMITS
                                                           : EXEC_ISOLATION_AUTO;
    c->exec.require_isolation = c->require_isolation;
    c->exec.script_network = c->script_network;
    c->exec.uid_base = (uint32_t)c->uid_base;
    c->exec.uid_count = (uint32_t)c->uid_count;
    c->exec.run_ttl_ms = c->run_ttl_ms;
    c->exec.admit.max_running = (uint32_t)c->max_concurrent_runs;
    c->exec.admit.max_queued = (uint32_t)c->max_queued_runs;
    c->exec.admit.queue_wait_ms = c->queue_wait_ms;
    c->exec.retry_after_ms = c->retry_after_ms;
    c->fetch.allow = &c->fetch_allow;
    c->exec.auto_deps = c->auto_deps;
    struct deps_config *d = &c->exec.deps;
    d->data_dir = c->data_dir;
    d->installer = !strcmp(c->installer, "uv") ? DEPS_INSTALLER_UV
                   : !strcmp(c->installer, "pip") ? DEPS_INSTALLER_PIP
                                                  : DEPS_INSTALLER_AUTO;
    d->index_url = !strcmp(c->index_url, "default") ? NULL : c->index_url;
    d->extra_index_url = *c->extra_index_url ? c->extra_index_url : NULL;
    d->find_links = *c->find_links ? c->find_links : NULL;
    d->only_binary = c->only_binary;
    d->requirement_urls = c->requirement_urls;
    d->cache_bytes = c->env_cache_size;
}

int cfg_load(struct cfg *c, const char *file, const char *self, const char *const *sets, size_t nsets, char *err,
             size_t errlen)
{
    int rc;
    memset(c, 0, sizeof *c);
    exec_limits_default(&c->exec.limits);
    fetch_config_init(&c->fetch);
    c->fetch_allow_text = strdup("");
    c->state_dir = default_state_dir();
    c->python = strdup("/usr/bin/python3");
    c->isolation = strdup("auto");
    c->run_ttl_ms = 24LL * 3600 * 1000;
    c->require_isolation = true;
    c->uid_base = 800000;
    c->uid_count = 1024;
    c->log_level = LOG_LVL_WARN;
    c->session_ttl_ms = 3600LL * 1000;
    c->request_bytes = 96ull << 20;
    c->max_sessions = 1000;
    c->max_queued_runs = 16;
    c->queue_wait_ms = 60000;
    c->retry_after_ms = 2000;
    c->image_inline_bytes = 512ull << 10;
    c->preview_bytes = 8ull << 10;
    c->allowed_hosts = strdup("localhost,127.0.0.1,[::1]");
    c->accel_redirect = -1;
    form_limits_default(&c->form);
    c->cgi_sse_padding = 8192;
    c->data_dir = strdup(PKGDATADIR);
    c->installer = strdup("auto");
    c->index_url = strdup("default");
    c->extra_index_url = strdup("");
    c->find_links = strdup("");
    c->only_binary = true;
    c->auto_deps = true;
    c->env_cache_size = 10ull << 30;
    if (!c->state_dir || !c->python || !c->isolation || !c->fetch_allow_text || !c->allowed_hosts || !c->data_dir || !c->installer ||
        !c->index_url || !c->extra_index_url || !c->find_links) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }

    /* The file: explicit, $RUNMYSCRIPT_CONFIG, next to the program, SYSCONFDIR. */
    const char *env_file = getenv("RUNMYSCRIPT_CONFIG");
    cleanup_free char *beside = NULL;
    if (!file && env_file && *env_file)
        file = env_file;
    if (!file && self && strchr(self, '/')) {
        const char *slash = strrchr(self, '/');
        if (asprintf(&beside, "%.*s/runmyscript.conf", (int)(slash - self), self) < 0)
            beside = NULL;
        if (beside && access(beside, R_OK) == 0)
            file = beside;
    }
    if (!file && access(SYSCONFDIR "/runmyscript.conf", R_OK) == 0)
        file = SYSCONFDIR "/runmyscript.conf";
    if (file) {
        c->config_file = strdup(file);
        rc = load_file(c, file, err, errlen);
        if (rc < 0)
            return rc;
    }

    /* The environment: RUNMYSCRIPT_<KEY>. */
    extern char **environ;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "RUNMYSCRIPT_", 12))
            continue;
        const char *eq = strchr(*e, '=');
        if (!eq)
            continue;
        char key[64];
        size_t kl = (size_t)(eq - (*e + 12));
        if (kl == 0 || kl >= sizeof key)
            continue;
        for (size_t i = 0; i < kl; i++)
            key[i] = (char)tolower((unsigned char)(*e)[12 + i]);
        key[kl] = '\0';
        if (!strcmp(key, "config"))
            continue;
        char why[300];
        rc = cfg_set(c, key, eq + 1, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "environment variable %.*s: %s", (int)(eq - *e), *e, why);
            return rc;
        }
    }

    /* --set key=value, last. */
    for (size_t i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        if (!eq || eq == sets[i]) {
            snprintf(err, errlen, "--set %s: expected KEY=VALUE", sets[i]);
            return -EINVAL;
        }
        char key[64];
        size_t kl = (size_t)(eq - sets[i]);
        if (kl >= sizeof key) {
            snprintf(err, errlen, "--set %s: unknown configuration key", sets[i]);
            return -EINVAL;
        }
        memcpy(key, sets[i], kl);
        key[kl] = '\0';
        char why[300];
        rc = cfg_set(c, trim(key), eq + 1, why, sizeof why);
        if (rc < 0) {
            snprintf(err, errlen, "--set: %s", why);
            return rc;
        }
    }
    if (!strcmp(c->isolation, "rlimits") && c->require_isolation) {
        snprintf(err, errlen, "isolation = rlimits runs scripts without namespaces: it needs require_isolation = off");
        return -EINVAL;
    }
    if (c->uid_base == 0 || c->uid_count == 0 || c->uid_base + c->uid_count >= UINT32_MAX) {
        snprintf(err, errlen, "uid_base and uid_count must be above 0, and uid_base + uid_count below 2^32 - 1");
        return -EINVAL;
    }
    if (c->run_ttl_ms > 0 && c->run_ttl_ms <= c->exec.limits.wall_ms + c->exec.limits.kill_grace_ms) {
        snprintf(err, errlen, "run_ttl must be longer than timeout + kill_grace, or 0 to keep runs forever");
        return -EINVAL;
    }
    if (apply_base_path(c) < 0) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    apply_exec(c);
    log_set_level(c->log_level);
    return 0;
}

void cfg_free(struct cfg *c)
{
    free(c->config_file);
    free(c->base_path);
    free(c->artifacts_prefix);
    free(c->state_dir);
    free(c->python);
    free(c->isolation);
    free(c->auth_token);
    free(c->allowed_hosts);
    free(c->public_url);
    free(c->node_id);
    free(c->fetch_allow_text);
    fetch_allow_free(&c->fetch_allow);
    free(c->data_dir);
    free(c->installer);
    free(c->index_url);
    free(c->extra_index_url);
    free(c->find_links);
    memset(c, 0, sizeof *c);
}

unsigned cfg_workers(const struct cfg *c)
{
    if (c->workers)
        return (unsigned)c->workers;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > 64)
        n = 64;
    unsigned w = 4 + 4 * (unsigned)n;
    uint64_t need = admit_max_running(&c->exec.admit) + c->max_queued_runs + CFG_SPARE_WORKERS;
    return need > w ? (unsigned)(need > 1024 ? 1024 : need) : w;
}

int64_t cfg_drain_grace_ms(const struct cfg *c)
{
    if (c->drain_grace_ms > 0)
        return c->drain_grace_ms;
    return c->exec.limits.wall_ms + c->exec.limits.kill_grace_ms + 5000;
}

static void format_limit(const struct exec_limit_def *d, uint64_t v, char *out, size_t n)
{
    if (d->unit == EXEC_UNIT_MS) {
        if (v % 1000 == 0)
            snprintf(out, n, "%llus", (unsigned long long)(v / 1000));
        else
            snprintf(out, n, "%llums", (unsigned long long)v);
    } else if (d->unit == EXEC_UNIT_BYTES) {
        static const char *const u[] = {"", "K", "M", "G", "T"};
        size_t i = 0;
        while (v && v % 1024 == 0 && i + 1 < ARRAY_SIZE(u)) {
            v /= 1024;
            i++;
        }
        snprintf(out, n, "%llu%s", (unsigned long long)v, u[i]);
    } else {
        snprintf(out, n, "%llu", (unsigned long long)v);
    }
}

char *cfg_dump(const struct cfg *c)
{
    static const char *const levels[] = {"error", "warning", "info", "debug"};
    struct dbuf b;
    dbuf_init(&b, 1 << 20);
    int rc = dbuf_printf(&b, "# configuration file: %s\n", c->config_file ? c->config_file : "(none)");
    rc = rc ? rc : dbuf_printf(&b, "state_dir = %s\n", c->state_dir);
    rc = rc ? rc : dbuf_printf(&b, "python = %s\n", c->python);
    rc = rc ? rc : dbuf_printf(&b, "isolation = %s\n", c->isolation);
    rc = rc ? rc : dbuf_printf(&b, "require_isolation = %s\n", c->require_isolation ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "script_network = %s\n", c->script_network ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "uid_base = %llu\n", (unsigned long long)c->uid_base);
    rc = rc ? rc : dbuf_printf(&b, "uid_count = %llu\n", (unsigned long long)c->uid_count);
    rc = rc ? rc : dbuf_printf(&b, "run_ttl = %llds\n", (long long)(c->run_ttl_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "log_level = %s\n", levels[c->log_level]);
    rc = rc ? rc : dbuf_printf(&b, "workers = %llu\n", (unsigned long long)c->workers);
    rc = rc ? rc : dbuf_printf(&b, "max_concurrent_runs = %llu\n", (unsigned long long)c->max_concurrent_runs);
    rc = rc ? rc : dbuf_printf(&b, "max_queued_runs = %llu\n", (unsigned long long)c->max_queued_runs);
    rc = rc ? rc : dbuf_printf(&b, "queue_wait = %lldms\n", (long long)c->queue_wait_ms);
    rc = rc ? rc : dbuf_printf(&b, "retry_after = %lldms\n", (long long)c->retry_after_ms);
    rc = rc ? rc : dbuf_printf(&b, "cancel_on_disconnect = %s\n", c->cancel_on_disconnect ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "session_ttl = %llds\n", (long long)(c->session_ttl_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "drain_grace = %llds\n", (long long)(c->drain_grace_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "request_bytes = %llu\n", (unsigned long long)c->request_bytes);
    rc = rc ? rc : dbuf_printf(&b, "max_sessions = %llu\n", (unsigned long long)c->max_sessions);
    rc = rc ? rc : dbuf_printf(&b, "image_inline_bytes = %llu\n", (unsigned long long)c->image_inline_bytes);
    rc = rc ? rc : dbuf_printf(&b, "preview_bytes = %llu\n", (unsigned long long)c->preview_bytes);
    rc = rc ? rc : dbuf_printf(&b, "auth_token = %s\n", c->auth_token ? "(set)" : "");
    rc = rc ? rc : dbuf_printf(&b, "allowed_hosts = %s\n", c->allowed_hosts);
    rc = rc ? rc : dbuf_printf(&b, "public_url = %s\n", c->public_url ? c->public_url : "");
    rc = rc ? rc : dbuf_printf(&b, "node_id = %s\n", c->node_id && *c->node_id ? c->node_id : "none");
    rc = rc ? rc : dbuf_printf(&b, "accel_redirect = %s\n", c->accel_redirect < 0 ? "auto" : c->accel_redirect ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "form_fields = %llu\n", (unsigned long long)c->form.fields);
    rc = rc ? rc : dbuf_printf(&b, "form_field_bytes = %llu\n", (unsigned long long)c->form.field_bytes);
    rc = rc ? rc : dbuf_printf(&b, "form_file_bytes = %llu\n", (unsigned long long)c->form.file_bytes);
    rc = rc ? rc : dbuf_printf(&b, "form_header_bytes = %llu\n", (unsigned long long)c->form.header_bytes);
    rc = rc ? rc : dbuf_printf(&b, "cgi_sse_padding = %llu\n", (unsigned long long)c->cgi_sse_padding);
    rc = rc ? rc : dbuf_printf(&b, "test_fixture_tools = %s\n", c->test_fixture_tools ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "data_dir = %s\n", c->data_dir);
    rc = rc ? rc : dbuf_printf(&b, "installer = %s\n", c->installer);
    rc = rc ? rc : dbuf_printf(&b, "index_url = %s\n", c->index_url);
    rc = rc ? rc : dbuf_printf(&b, "extra_index_url = %s\n", *c->extra_index_url ? c->extra_index_url : "none");
    rc = rc ? rc : dbuf_printf(&b, "find_links = %s\n", *c->find_links ? c->find_links : "none");
    rc = rc ? rc : dbuf_printf(&b, "only_binary = %s\n", c->only_binary ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "auto_deps = %s\n", c->auto_deps ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "requirement_urls = %s\n", c->requirement_urls ? "on" : "off");
    if (rc == 0) {
        char sz[48];
        format_limit(&(struct exec_limit_def){.unit = EXEC_UNIT_BYTES}, c->env_cache_size, sz, sizeof sz);
        rc = dbuf_printf(&b, "env_cache_size = %s\n", sz);
    }
    for (size_t i = 0; rc == 0 && i < exec_limit_defs_n; i++) {
        char v[48];
        format_limit(&exec_limit_defs[i], exec_limit_get(&c->exec.limits, &exec_limit_defs[i]), v, sizeof v);
        rc = dbuf_printf(&b, "%s = %s\n", exec_limit_defs[i].key, v);
    }
    rc = rc ? rc : dbuf_printf(&b, "fetch_allow = %s\n", c->fetch_allow_text ? c->fetch_allow_text : "");
    for (size_t i = 0; rc == 0 && i < fetch_limit_defs_n; i++) {
        char v[48];
        format_limit(&fetch_limit_defs[i], fetch_limit_get(&c->fetch.limits, &fetch_limit_defs[i]), v, sizeof v);
        rc = dbuf_printf(&b, "%s = %s\n", fetch_limit_defs[i].key, v);
    }
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}
