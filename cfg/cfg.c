/* cfg.c: the configuration: the defaults, then the file, the environment
 * (RUNMYSCRIPT_KEY) and --set, each value parsed by the setter of its key's
 * kind and checked against its range. cfg_dump.c prints it back. */
#include "config.h"

#include "cfg_internal.h"

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
#define CFG_FILE_NAME "runmyscript.conf"
#define CFG_SYSTEM_FILE SYSCONFDIR "/" CFG_FILE_NAME
#define CFG_ENV_PREFIX "RUNMYSCRIPT_"   /* RUNMYSCRIPT_KEY sets key */
#define CFG_KEY_MAX 64                  /* a key name longer than this is unknown */
#define CFG_WHY_MAX 300                 /* a key's reason, before its source is named */


const char *const cfg__levels[CFG__N_LEVELS] = {"error", "warning", "info", "debug"};

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
    CFG_AUTO_COUNT,  /* auto | a count: auto is CFG_AUTO */
    CFG_AUTO_SIZE,   /* auto | a size: auto is CFG_AUTO */
    CFG_RESERVE,     /* a size, or a share of a file system: "5%" */
    CFG_LEVEL,
    CFG_ISOLATION,
    CFG_AUTO_BOOL,   /* auto | on | off, into an int: -1, 1, 0 */
    CFG_INSTALLER,
    CFG_UINT,
    CFG_ALLOW,
    CFG_NODE,      /* none, or a node id (workspace.h: 1 to 16 of [a-z0-9]) */
    CFG_MODULES,   /* none, or module paths ([A-Za-z0-9_.]) separated by spaces or commas */
};

struct cfg_key {
    const char *name;
    enum cfg_type type;
    size_t offset;  /* into struct cfg */
};

#define K(n, t, f) {n, t, offsetof(struct cfg, f)}
static const struct cfg_key plain_keys[] = {
    K("state_dir", CFG_PATH, state_dir),
    K("python", CFG_PATH, python),
    K("isolation", CFG_ISOLATION, isolation),
    K("require_isolation", CFG_BOOL, require_isolation),
    K("landlock", CFG_AUTO_BOOL, landlock),
    K("script_network", CFG_BOOL, script_network),
    K("uid_base", CFG_UINT, uid_base),
    K("uid_count", CFG_UINT, uid_count),
    K("run_ttl", CFG_DURATION, run_ttl_ms),
    K("runs_bytes", CFG_SIZE, runs_bytes),
    K("runs_files", CFG_COUNT, runs_files),
    K("disk_reserve", CFG_RESERVE, disk_reserve),
    K("log_level", CFG_LEVEL, log_level),
    K("workers", CFG_COUNT, workers),
    K("max_concurrent_runs", CFG_COUNT, max_concurrent_runs),
    K("max_queued_runs", CFG_AUTO_COUNT, max_queued_runs),
    K("queue_wait", CFG_DURATION, queue_wait_ms),
    K("retry_after", CFG_DURATION, retry_after_ms),
    K("cancel_on_disconnect", CFG_BOOL, cancel_on_disconnect),
    K("session_ttl", CFG_DURATION, session_ttl_ms),
    K("drain_grace", CFG_DURATION, drain_grace_ms),
    K("request_bytes", CFG_SIZE, request_bytes),
    K("request_memory", CFG_AUTO_SIZE, request_memory),
    K("request_memory_wait", CFG_DURATION, request_memory_wait_ms),
    K("max_sessions", CFG_COUNT, max_sessions),
    K("max_tasks", CFG_COUNT, max_tasks),
    K("task_after", CFG_DURATION, task_after_ms),
    K("task_ttl", CFG_DURATION, task_ttl_ms),
    K("tools_list_ttl", CFG_DURATION, tools_list_ttl_ms),
    K("image_inline_bytes", CFG_SIZE, image_inline_bytes),
    K("preview_bytes", CFG_SIZE, preview_bytes),
    K("auth_token", CFG_SECRET, auth_token),
    K("allowed_hosts", CFG_STRING, allowed_hosts),
    K("allowed_origins", CFG_OPTSTRING, allowed_origins),
    K("public_url", CFG_OPTSTRING, public_url),
    K("node_id", CFG_NODE, node_id),
    K("accel_redirect", CFG_AUTO_BOOL, accel_redirect),
    K("form_fields", CFG_COUNT, form.fields),
    K("form_field_bytes", CFG_SIZE, form.field_bytes),
    K("form_file_bytes", CFG_SIZE, form.file_bytes),
    K("form_header_bytes", CFG_SIZE, form.header_bytes),
    K("cgi_sse_padding", CFG_SIZE, cgi_sse_padding),
    K("max_streams", CFG_AUTO_COUNT, max_streams),
    K("max_streams_per_client", CFG_AUTO_COUNT, max_streams_per_client),
    K("stream_buffer_bytes", CFG_SIZE, stream_buffer_bytes),
    K("stream_stall", CFG_DURATION, stream_stall_ms),
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
    K("package_store", CFG_BOOL, package_store),
    K("store_bytes", CFG_SIZE, store_bytes),
    K("warm", CFG_BOOL, warm),
    K("warm_envs", CFG_COUNT, warm_envs),
    K("warm_idle", CFG_DURATION, warm_idle_ms),
    K("warm_memory", CFG_SIZE, warm_memory),
    K("warm_runs", CFG_COUNT, warm_runs),
    K("warm_lifetime", CFG_DURATION, warm_lifetime_ms),
    K("warm_modules", CFG_MODULES, warm_modules),
    K("warm_wait", CFG_DURATION, warm_wait_ms),
    K("warm_spares", CFG_COUNT, warm_spares),
    K("kernel_idle", CFG_DURATION, kernel_idle_ms), K("kernel_grace", CFG_DURATION, kernel_grace_ms),
    K("max_kernels", CFG_COUNT, max_kernels), K("kernel_memory", CFG_SIZE, kernel_memory),
};

/* Ranges of the count and size keys: a value outside is an error. */
static const struct {
    const char *key;
    uint64_t min, max;
} ranges[] = {
    {"workers", 0, CFG_WORKERS_MAX},
    {"max_concurrent_runs", 0, EXEC_MAX_SLOTS},
    {"max_queued_runs", 0, EXEC_MAX_SLOTS},
    {"request_bytes", 4096, 16ull << 30},
    {"max_sessions", 1, 1000000},
    {"max_tasks", 1, 1000000},
    {"request_memory", 4096, 1ull << 40},
    {"image_inline_bytes", 0, 64ull << 20},
    {"preview_bytes", 256, 16ull << 20},
    {"form_fields", 1, 1024},
    {"form_field_bytes", 1, 16ull << 30},
    {"form_file_bytes", 1, 16ull << 30},
    {"form_header_bytes", 256, 1ull << 20},
    {"cgi_sse_padding", 0, 1ull << 20},
    {"max_streams", 1, CFG_STREAMS_MAX},
    {"max_streams_per_client", 1, CFG_STREAMS_MAX},
    {"stream_buffer_bytes", 64ull << 10, 1ull << 30},
    {"warm_envs", 1, 16},
    {"warm_runs", 0, 1000000000},
    {"warm_spares", 0, 8},
    {"max_kernels", 0, CFG_KERNELS_MAX},
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

/* An exec_ or fetch_ limit: its unit says how to parse it, its definition
 * its range (0 is "none" when the range starts at 0). */
static int set_limit(struct cfg *c, const struct exec_limit_def *lim, bool fetch, const char *key, const char *value,
                     char *err, size_t errlen)
{
    uint64_t v = 0;
    int rc;
    const char *expect;
    if (lim->unit == EXEC_UNIT_MS) {
        int64_t ms;
        rc = cfg_parse_duration(value, &ms);
        v = (uint64_t)ms;
        expect = CFG_EXPECT_LIMIT_DURATION;
    } else if (lim->unit == EXEC_UNIT_BYTES) {
        rc = cfg_parse_size(value, &v);
        expect = CFG_EXPECT_SIZE;
    } else {
        rc = cfg__parse_count(value, &v);
        expect = CFG_EXPECT_COUNT;
    }
    if (rc < 0)
        return bad_value(key, value, expect, err, errlen);
    if ((v < lim->min || v > lim->max) && !(v == 0 && lim->min == 0)) {
        char range[80];
        describe_range(lim, range, sizeof range);
        snprintf(err, errlen, "%s = '%s': out of range (%s)", key, value, range);
        return -EINVAL;
    }
    if (fetch)
        fetch_limit_set(&c->fetch.limits, lim, v);
    else
        exec_limit_set(&c->exec.limits, lim, v);
    return 0;
}

/* ---------------------------------------------- a setter per kind of key */

/* Each sets the key k of c from value; 0, or -EINVAL (-ENOMEM) with the
 * reason in err. */
typedef int cfg_setter(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen);

static void *slot_of(struct cfg *c, const struct cfg_key *k)
{
    return (char *)c + k->offset;
}

static int set_optstring(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    return set_string(slot_of(c, k), strdup(!strcmp(value, "none") ? "" : value), k->name, err, errlen);
}

static int set_node(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    if (strcmp(value, "none") && *value && !ws_node_valid(value)) {
        snprintf(err, errlen, "%s = '%.40s': expected none or 1 to %d of a-z and 0-9", k->name, value, WS_NODE_MAX);
        return -EINVAL;
    }
    return set_optstring(c, k, value, err, errlen);
}

static int set_modules(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    for (const char *p = value; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr("_., ", *p)) {
            snprintf(err, errlen, "%s = '%.40s': expected none or module names (a-z, 0-9, _ and .) separated by spaces",
                     k->name, value);
            return -EINVAL;
        }
    return set_optstring(c, k, value, err, errlen);
}

static int set_nonempty(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    if (!*value) {
        snprintf(err, errlen, "%s: empty value", k->name);
        return -EINVAL;
    }
    return set_string(slot_of(c, k), k->type == CFG_PATH ? absolute(value) : strdup(value), k->name, err, errlen);
}

static int set_secret(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    char **slot = slot_of(c, k);
    if (!*value) {
        free(*slot);
        *slot = NULL;
        return 0;
    }
    return set_string(slot, strdup(value), k->name, err, errlen);
}

static int set_number(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    if ((k->type == CFG_AUTO_COUNT || k->type == CFG_AUTO_SIZE) && !strcmp(value, "auto")) {
        *(uint64_t *)slot_of(c, k) = CFG_AUTO;
        return 0;
    }
    bool count = k->type != CFG_SIZE && k->type != CFG_AUTO_SIZE;
    int rc = count ? cfg__parse_count(value, &v) : cfg_parse_size(value, &v);
    if (rc < 0)
        return bad_value(k->name, value,
                         k->type == CFG_AUTO_COUNT  ? "auto or " CFG_EXPECT_COUNT
                         : k->type == CFG_AUTO_SIZE ? "auto or " CFG_EXPECT_SIZE
                         : count                    ? CFG_EXPECT_COUNT
                                                    : CFG_EXPECT_SIZE,
                         err, errlen);
    for (size_t i = 0; i < ARRAY_SIZE(ranges); i++)
        if (!strcmp(ranges[i].key, k->name) && (v < ranges[i].min || v > ranges[i].max)) {
            snprintf(err, errlen, "%s = '%s': out of range (%llu to %llu)", k->name, value,
                     (unsigned long long)ranges[i].min, (unsigned long long)ranges[i].max);
            return -EINVAL;
        }
    *(uint64_t *)slot_of(c, k) = v;
    return 0;
}

/* disk_reserve: a size, or a whole percentage of the file system (at most
 * CFG_RESERVE_PCT_MAX). */
static int set_reserve(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    struct cfg_reserve *r = slot_of(c, k);
    size_t n = strlen(value);
    uint64_t v;
    while (n && value[n - 1] == ' ')
        n--;
    if (n > 1 && value[n - 1] == '%') {
        char num[32];
        if (n - 1 >= sizeof num)
            return bad_value(k->name, value, "a size such as 2G, or a share such as 5%", err, errlen);
        memcpy(num, value, n - 1);
        num[n - 1] = '\0';
        if (cfg__parse_count(num, &v) < 0 || v > CFG_RESERVE_PCT_MAX) {
            snprintf(err, errlen, "%s = '%s': expected a share from 0%% to %d%%", k->name, value, CFG_RESERVE_PCT_MAX);
            return -EINVAL;
        }
        *r = (struct cfg_reserve){.pct = (uint32_t)v};
        return 0;
    }
    if (cfg_parse_size(value, &v) < 0)
        return bad_value(k->name, value, "a size such as 2G, or a share such as 5%", err, errlen);
    *r = (struct cfg_reserve){.bytes = v};
    return 0;
}

static int set_uint(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    uint64_t v;
    if (cfg__parse_count(value, &v) < 0 || v > UINT32_MAX)
        return bad_value(k->name, value, "a whole number below 2^32", err, errlen);
    *(uint64_t *)slot_of(c, k) = v;
    return 0;
}

static int set_bool(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    if (cfg_parse_bool(value, slot_of(c, k)) < 0)
        return bad_value(k->name, value, "on or off", err, errlen);
    return 0;
}

static int set_auto_bool(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    bool b;
    int *slot = slot_of(c, k);
    if (!strcmp(value, "auto")) {
        *slot = -1;
        return 0;
    }
    if (cfg_parse_bool(value, &b) < 0)
        return bad_value(k->name, value, "auto, on or off", err, errlen);
    *slot = b;
    return 0;
}

static int set_duration(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    if (cfg_parse_duration(value, slot_of(c, k)) < 0)
        return bad_value(k->name, value, CFG_EXPECT_DURATION, err, errlen);
    return 0;
}

static int set_level(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    for (size_t i = 0; i < ARRAY_SIZE(cfg__levels); i++)
        if (!strcasecmp(value, cfg__levels[i])) {
            *(enum log_level *)slot_of(c, k) = (enum log_level)i;
            return 0;
        }
    return bad_value(k->name, value, "error, warning, info or debug", err, errlen);
}

/* A string key that takes one of the n values in choices (exactly). */
static int set_choice(struct cfg *c, const struct cfg_key *k, const char *value, const char *const *choices, size_t n,
                      const char *expect, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(value, choices[i]))
            return set_string(slot_of(c, k), strdup(value), k->name, err, errlen);
    return bad_value(k->name, value, expect, err, errlen);
}

static int set_isolation(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    static const char *const choices[] = {"auto", "namespaces", "rlimits"};
    return set_choice(c, k, value, choices, ARRAY_SIZE(choices), "auto, namespaces or rlimits", err, errlen);
}

static int set_installer(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    static const char *const choices[] = {"auto", "uv", "pip"};
    return set_choice(c, k, value, choices, ARRAY_SIZE(choices), "auto, uv or pip", err, errlen);
}

/* fetch_allow: parsed into the rules, and kept as given for cfg_dump. */
static int set_allow(struct cfg *c, const struct cfg_key *k, const char *value, char *err, size_t errlen)
{
    struct fetch_allow a;
    char why[CFG_WHY_MAX];
    int rc = fetch_allow_parse(value, &a, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "%s", why);
        return rc;
    }
    rc = set_string(slot_of(c, k), strdup(value), k->name, err, errlen);
    if (rc < 0) {
        fetch_allow_free(&a);
        return rc;
    }
    fetch_allow_free(&c->fetch_allow);
    c->fetch_allow = a;
    return 0;
}

static cfg_setter *const setters[] = {
    [CFG_PATH] = set_nonempty,     [CFG_STRING] = set_nonempty,   [CFG_OPTSTRING] = set_optstring,
    [CFG_MODULES] = set_modules,
    [CFG_SECRET] = set_secret,     [CFG_BOOL] = set_bool,         [CFG_DURATION] = set_duration,
    [CFG_SIZE] = set_number,       [CFG_COUNT] = set_number,      [CFG_LEVEL] = set_level,
    [CFG_AUTO_COUNT] = set_number, [CFG_AUTO_SIZE] = set_number,  [CFG_RESERVE] = set_reserve,
    [CFG_ISOLATION] = set_isolation, [CFG_AUTO_BOOL] = set_auto_bool, [CFG_INSTALLER] = set_installer,
    [CFG_UINT] = set_uint,         [CFG_ALLOW] = set_allow,       [CFG_NODE] = set_node,
};

int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen)
{
    const struct cfg_key *k = find_plain(key);
    if (k)
        return setters[k->type](c, k, value, err, errlen);
    const struct exec_limit_def *lim = exec_limit_find(key);
    if (lim)
        return set_limit(c, lim, false, key, value, err, errlen);
    lim = fetch_limit_find(key);
    if (lim)
        return set_limit(c, lim, true, key, value, err, errlen);
    snprintf(err, errlen, "unknown configuration key '%s' (runmyscript config lists them)", key);
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
    c->exec.landlock = c->landlock < 0 ? EXEC_LANDLOCK_AUTO : c->landlock ? EXEC_LANDLOCK_ON : EXEC_LANDLOCK_OFF;
    c->exec.script_network = c->script_network;
    c->exec.uid_base = (uint32_t)c->uid_base;
    c->exec.uid_count = (uint32_t)c->uid_count;
    c->exec.run_ttl_ms = c->run_ttl_ms;
    c->exec.runs_bytes = c->runs_bytes;
    c->exec.runs_files = c->runs_files;
    c->exec.disk_reserve_bytes = c->disk_reserve.bytes;
    c->exec.disk_reserve_pct = c->disk_reserve.pct;
    c->exec.admit.max_running = (uint32_t)c->max_concurrent_runs;
    c->exec.admit.max_queued = c->max_queued_runs == CFG_AUTO ? cfg__queue_auto(exec_admit_max_running(&c->exec.admit))
                                                              : (uint32_t)c->max_queued_runs;
    c->exec.admit.queue_wait_ms = c->queue_wait_ms;
    c->exec.retry_after_ms = c->retry_after_ms;
    c->fetch.allow = &c->fetch_allow;
    c->fetch.workspace_bytes = c->exec.limits.workspace_bytes;
    c->fetch.workspace_files = c->exec.limits.workspace_files;
    c->exec.auto_deps = c->auto_deps;
    struct exec_deps_config *d = &c->exec.deps;
    d->data_dir = c->data_dir;
    d->installer = !strcmp(c->installer, "uv") ? EXEC_INSTALLER_UV
                   : !strcmp(c->installer, "pip") ? EXEC_INSTALLER_PIP
                                                  : EXEC_INSTALLER_AUTO;
    d->index_url = !strcmp(c->index_url, "default") ? NULL : c->index_url;
    d->extra_index_url = *c->extra_index_url ? c->extra_index_url : NULL;
    d->find_links = *c->find_links ? c->find_links : NULL;
    d->only_binary = c->only_binary;
    d->requirement_urls = c->requirement_urls;
    d->cache_bytes = c->env_cache_size;
    d->package_store = c->package_store;
    d->store_bytes = c->store_bytes;
    c->exec.warm = (struct exec_warm){.on = c->warm,
                                      .envs = (uint32_t)c->warm_envs,
                                      .idle_ms = c->warm_idle_ms,
                                      .memory = c->warm_memory,
                                      .runs = (uint32_t)c->warm_runs,
                                      .lifetime_ms = c->warm_lifetime_ms,
                                      .modules = c->warm_modules,
                                      .wait_ms = c->warm_wait_ms > 0 ? c->warm_wait_ms : 1,
                                      .spares = (uint32_t)c->warm_spares};
    cfg__kernels(c);
}

/* The defaults, before any source. 0 or -ENOMEM. */
static int set_defaults(struct cfg *c)
{
    memset(c, 0, sizeof *c);
    exec_limits_default(&c->exec.limits);
    fetch_config_init(&c->fetch);
    c->fetch_allow_text = strdup("");
    c->state_dir = default_state_dir();
    c->python = strdup("/usr/bin/python3");
    c->isolation = strdup("auto");
    c->run_ttl_ms = 24LL * 3600 * 1000;
    c->require_isolation = true;
    c->landlock = -1;
    c->uid_base = 800000;
    c->uid_count = 1024;
    c->log_level = LOG_LVL_WARN;
    c->session_ttl_ms = 3600LL * 1000;
    c->request_bytes = 96ull << 20;
    c->max_sessions = 1000;
    c->max_tasks = 1000;
    c->request_memory = CFG_AUTO;
    c->request_memory_wait_ms = 10000;
    c->runs_bytes = 10ull << 30;
    c->runs_files = 1000000;
    c->disk_reserve.pct = 5;
    c->task_after_ms = 5000;
    c->task_ttl_ms = 3600LL * 1000;
    c->tools_list_ttl_ms = 300LL * 1000;
    c->max_queued_runs = CFG_AUTO;
    c->queue_wait_ms = 60000;
    c->retry_after_ms = 2000;
    c->image_inline_bytes = 512ull << 10;
    c->preview_bytes = 8ull << 10;
    c->allowed_hosts = strdup("localhost,127.0.0.1,[::1]");
    c->allowed_origins = strdup("");
    c->accel_redirect = -1;
    form_limits_default(&c->form);
    c->cgi_sse_padding = 8192;
    c->max_streams = CFG_AUTO;
    c->max_streams_per_client = CFG_AUTO;
    c->stream_buffer_bytes = 8ull << 20;
    c->stream_stall_ms = 60000;
    c->data_dir = strdup(""); /* the built-in import map */
    c->installer = strdup("auto");
    c->index_url = strdup("default");
    c->extra_index_url = strdup("");
    c->find_links = strdup("");
    c->only_binary = true;
    c->auto_deps = true;
    c->env_cache_size = 10ull << 30;
    c->package_store = true;
    c->store_bytes = 20ull << 30;
    c->warm = true;
    c->warm_envs = 4;
    c->warm_idle_ms = 600LL * 1000;
    c->warm_memory = 1ull << 30;
    c->warm_runs = 1000;
    c->warm_lifetime_ms = 3600LL * 1000;
    c->warm_modules = strdup("");
    c->warm_wait_ms = 3000;
    c->warm_spares = 2;
    c->kernel_idle_ms = 600LL * 1000, c->max_kernels = 64, c->kernel_memory = 8ull << 30, c->kernel_grace_ms = 5000;
    if (!c->warm_modules || !c->state_dir || !c->python || !c->isolation || !c->fetch_allow_text || !c->allowed_hosts || !c->allowed_origins || !c->data_dir ||
        !c->installer || !c->index_url || !c->extra_index_url || !c->find_links)
        return -ENOMEM;
    return 0;
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
    if (c->request_memory != CFG_AUTO && c->request_memory < c->request_bytes) {
        snprintf(err, errlen, "request_memory must be at least request_bytes (a body of the largest size must fit), or auto");
        return -EINVAL;
    }
    char why[CFG_WHY_MAX + PATH_MAX];
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
    free(c->allowed_origins);
    free(c->public_url);
    free(c->node_id);
    free(c->fetch_allow_text);
    fetch_allow_free(&c->fetch_allow);
    free(c->data_dir);
    free(c->installer);
    free(c->index_url);
    free(c->extra_index_url);
    free(c->find_links);
    free(c->warm_modules);
    memset(c, 0, sizeof *c);
}
