/* cfg_dump.c: the configuration printed back, one "key = value" line per
 * key in a form cfg_set() reads again (`runmyscript config`); secrets show
 * only whether they are set. */
#include "config.h"

#include "cfg_internal.h"

#include <stdio.h>

#define CFG_DUMP_MAX (1u << 20) /* the dump's ceiling: far above every key at its longest */

/* A duration in the largest unit that holds it exactly (24h, 5m, 60s is
 * 1m, 1500ms), a size in the largest binary unit (96M, 512K): as the
 * documentation writes them, and as cfg_parse_duration and cfg_parse_size
 * read them back. */
static void format_ms(uint64_t v, char *out, size_t n)
{
    static const struct {
        uint64_t ms;
        const char *unit;
    } units[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}};
    for (size_t i = 0; v && i < ARRAY_SIZE(units); i++)
        if (v % units[i].ms == 0) {
            snprintf(out, n, "%llu%s", (unsigned long long)(v / units[i].ms), units[i].unit);
            return;
        }
    snprintf(out, n, v ? "%llums" : "%llu", (unsigned long long)v);
}

static void format_size(uint64_t v, char *out, size_t n)
{
    static const char *const u[] = {"", "K", "M", "G", "T"};
    size_t i = 0;
    while (v && v % 1024 == 0 && i + 1 < ARRAY_SIZE(u)) {
        v /= 1024;
        i++;
    }
    snprintf(out, n, "%llu%s", (unsigned long long)v, u[i]);
}

static void format_limit(const struct exec_limit_def *d, uint64_t v, char *out, size_t n)
{
    if (d->unit == EXEC_UNIT_MS)
        format_ms(v, out, n);
    else if (d->unit == EXEC_UNIT_BYTES)
        format_size(v, out, n);
    else
        snprintf(out, n, "%llu", (unsigned long long)v);
}

/* "key = value\n" of a duration and of a size. */
static int put_ms(struct dbuf *b, const char *key, int64_t ms)
{
    char v[48];
    format_ms(ms > 0 ? (uint64_t)ms : 0, v, sizeof v);
    return dbuf_printf(b, "%s = %s\n", key, v);
}

static int put_size(struct dbuf *b, const char *key, uint64_t bytes)
{
    char v[48];
    format_size(bytes, v, sizeof v);
    return dbuf_printf(b, "%s = %s\n", key, v);
}

char *cfg_dump(const struct cfg *c)
{
    struct dbuf b;
    dbuf_init(&b, CFG_DUMP_MAX);
    int rc = dbuf_printf(&b, "# configuration file: %s\n", c->config_file ? c->config_file : "(none)");
    rc = rc ? rc : dbuf_printf(&b, "state_dir = %s\n", c->state_dir);
    rc = rc ? rc : dbuf_printf(&b, "python = %s\n", c->python);
    rc = rc ? rc : dbuf_printf(&b, "isolation = %s\n", c->isolation);
    rc = rc ? rc : dbuf_printf(&b, "require_isolation = %s\n", c->require_isolation ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "landlock = %s\n", c->landlock < 0 ? "auto" : c->landlock ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "script_network = %s\n", c->script_network ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "uid_base = %llu\n", (unsigned long long)c->uid_base);
    rc = rc ? rc : dbuf_printf(&b, "uid_count = %llu\n", (unsigned long long)c->uid_count);
    rc = rc ? rc : put_ms(&b, "run_ttl", c->run_ttl_ms);
    rc = rc ? rc : put_size(&b, "runs_bytes", c->runs_bytes);
    rc = rc ? rc : dbuf_printf(&b, "runs_files = %llu\n", (unsigned long long)c->runs_files);
    if (c->disk_reserve.bytes)
        rc = rc ? rc : put_size(&b, "disk_reserve", c->disk_reserve.bytes);
    else
        rc = rc ? rc : dbuf_printf(&b, "disk_reserve = %u%%\n", c->disk_reserve.pct);
    rc = rc ? rc : dbuf_printf(&b, "log_level = %s\n", cfg__levels[c->log_level]);
    rc = rc ? rc : dbuf_printf(&b, "workers = %llu\n", (unsigned long long)c->workers);
    rc = rc ? rc : dbuf_printf(&b, "max_concurrent_runs = %llu\n", (unsigned long long)c->max_concurrent_runs);
    if (c->max_queued_runs == CFG_AUTO)
        rc = rc ? rc : dbuf_printf(&b, "max_queued_runs = auto (%u)\n", c->exec.admit.max_queued);
    else
        rc = rc ? rc : dbuf_printf(&b, "max_queued_runs = %llu\n", (unsigned long long)c->max_queued_runs);
    rc = rc ? rc : put_ms(&b, "queue_wait", c->queue_wait_ms);
    rc = rc ? rc : put_ms(&b, "retry_after", c->retry_after_ms);
    rc = rc ? rc : dbuf_printf(&b, "cancel_on_disconnect = %s\n", c->cancel_on_disconnect ? "on" : "off");
    rc = rc ? rc : put_ms(&b, "session_ttl", c->session_ttl_ms);
    rc = rc ? rc : put_ms(&b, "drain_grace", c->drain_grace_ms);
    rc = rc ? rc : put_size(&b, "request_bytes", c->request_bytes);
    if (c->request_memory == CFG_AUTO) {
        char v[48];
        format_size(cfg_request_memory(c), v, sizeof v);
        rc = rc ? rc : dbuf_printf(&b, "request_memory = auto (%s)\n", v);
    } else {
        rc = rc ? rc : put_size(&b, "request_memory", c->request_memory);
    }
    rc = rc ? rc : put_ms(&b, "request_memory_wait", c->request_memory_wait_ms);
    rc = rc ? rc : dbuf_printf(&b, "max_sessions = %llu\n", (unsigned long long)c->max_sessions);
    rc = rc ? rc : dbuf_printf(&b, "max_tasks = %llu\n", (unsigned long long)c->max_tasks);
    rc = rc ? rc : put_ms(&b, "task_after", c->task_after_ms);
    rc = rc ? rc : put_ms(&b, "task_ttl", c->task_ttl_ms);
    rc = rc ? rc : put_ms(&b, "tools_list_ttl", c->tools_list_ttl_ms);
    rc = rc ? rc : put_size(&b, "image_inline_bytes", c->image_inline_bytes);
    rc = rc ? rc : put_size(&b, "preview_bytes", c->preview_bytes);
    rc = rc ? rc : dbuf_printf(&b, "auth_token = %s\n", c->auth_token ? "(set)" : "");
    rc = rc ? rc : dbuf_printf(&b, "allowed_hosts = %s\n", c->allowed_hosts);
    rc = rc ? rc : dbuf_printf(&b, "allowed_origins = %s\n", c->allowed_origins);
    rc = rc ? rc : dbuf_printf(&b, "public_url = %s\n", c->public_url ? c->public_url : "");
    rc = rc ? rc : dbuf_printf(&b, "node_id = %s\n", c->node_id && *c->node_id ? c->node_id : "none");
    rc = rc ? rc : dbuf_printf(&b, "accel_redirect = %s\n", c->accel_redirect < 0 ? "auto" : c->accel_redirect ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "form_fields = %llu\n", (unsigned long long)c->form.fields);
    rc = rc ? rc : put_size(&b, "form_field_bytes", c->form.field_bytes);
    rc = rc ? rc : put_size(&b, "form_file_bytes", c->form.file_bytes);
    rc = rc ? rc : put_size(&b, "form_header_bytes", c->form.header_bytes);
    rc = rc ? rc : put_size(&b, "cgi_sse_padding", c->cgi_sse_padding);
    if (c->max_streams == CFG_AUTO)
        rc = rc ? rc : dbuf_printf(&b, "max_streams = auto (%llu in serve, else %llu)\n",
                                   (unsigned long long)cfg_max_streams(c, true), (unsigned long long)cfg_max_streams(c, false));
    else
        rc = rc ? rc : dbuf_printf(&b, "max_streams = %llu\n", (unsigned long long)c->max_streams);
    if (c->max_streams_per_client == CFG_AUTO)
        rc = rc ? rc : dbuf_printf(&b, "max_streams_per_client = auto (%llu in serve, else %llu)\n",
                                   (unsigned long long)cfg_max_streams_per_client(c, true),
                                   (unsigned long long)cfg_max_streams_per_client(c, false));
    else
        rc = rc ? rc : dbuf_printf(&b, "max_streams_per_client = %llu\n", (unsigned long long)c->max_streams_per_client);
    rc = rc ? rc : put_size(&b, "stream_buffer_bytes", c->stream_buffer_bytes);
    rc = rc ? rc : put_ms(&b, "stream_stall", c->stream_stall_ms);
    rc = rc ? rc : dbuf_printf(&b, "test_fixture_tools = %s\n", c->test_fixture_tools ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "data_dir = %s\n", c->data_dir);
    rc = rc ? rc : dbuf_printf(&b, "installer = %s\n", c->installer);
    rc = rc ? rc : dbuf_printf(&b, "index_url = %s\n", c->index_url);
    rc = rc ? rc : dbuf_printf(&b, "extra_index_url = %s\n", *c->extra_index_url ? c->extra_index_url : "none");
    rc = rc ? rc : dbuf_printf(&b, "find_links = %s\n", *c->find_links ? c->find_links : "none");
    rc = rc ? rc : dbuf_printf(&b, "only_binary = %s\n", c->only_binary ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "auto_deps = %s\n", c->auto_deps ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "requirement_urls = %s\n", c->requirement_urls ? "on" : "off");
    rc = rc ? rc : put_size(&b, "env_cache_size", c->env_cache_size);
    rc = rc ? rc : dbuf_printf(&b, "package_store = %s\n", c->package_store ? "on" : "off");
    rc = rc ? rc : put_size(&b, "store_bytes", c->store_bytes);
    rc = rc ? rc : dbuf_printf(&b, "warm = %s\n", c->warm ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "warm_envs = %llu\n", (unsigned long long)c->warm_envs);
    rc = rc ? rc : put_ms(&b, "warm_idle", c->warm_idle_ms);
    rc = rc ? rc : put_size(&b, "warm_memory", c->warm_memory);
    rc = rc ? rc : dbuf_printf(&b, "warm_runs = %llu\n", (unsigned long long)c->warm_runs);
    rc = rc ? rc : put_ms(&b, "warm_lifetime", c->warm_lifetime_ms);
    rc = rc ? rc : dbuf_printf(&b, "warm_modules = %s\n", *c->warm_modules ? c->warm_modules : "none");
    rc = rc ? rc : put_ms(&b, "warm_wait", c->warm_wait_ms);
    rc = rc ? rc : dbuf_printf(&b, "kernel_idle = %llds\n", (long long)(c->kernel_idle_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "max_kernels = %llu\n", (unsigned long long)c->max_kernels);
    rc = rc ? rc : put_size(&b, "kernel_memory", c->kernel_memory);
    rc = rc ? rc : dbuf_printf(&b, "kernel_grace = %lldms\n", (long long)c->kernel_grace_ms);
    rc = rc ? rc : dbuf_printf(&b, "warm_spares = %llu\n", (unsigned long long)c->warm_spares);
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
