/* cfg_dump.c: the configuration printed back, one "key = value" line per
 * key in a form cfg_set() reads again (`runmyscript config`); secrets show
 * only whether they are set. */
#include "config.h"

#include "cfg_internal.h"

#include <stdio.h>

#define CFG_DUMP_MAX (1u << 20) /* the dump's ceiling: far above every key at its longest */

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
    rc = rc ? rc : dbuf_printf(&b, "run_ttl = %llds\n", (long long)(c->run_ttl_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "log_level = %s\n", cfg__levels[c->log_level]);
    rc = rc ? rc : dbuf_printf(&b, "workers = %llu\n", (unsigned long long)c->workers);
    rc = rc ? rc : dbuf_printf(&b, "max_concurrent_runs = %llu\n", (unsigned long long)c->max_concurrent_runs);
    if (c->max_queued_runs == CFG_AUTO)
        rc = rc ? rc : dbuf_printf(&b, "max_queued_runs = auto (%u)\n", c->exec.admit.max_queued);
    else
        rc = rc ? rc : dbuf_printf(&b, "max_queued_runs = %llu\n", (unsigned long long)c->max_queued_runs);
    rc = rc ? rc : dbuf_printf(&b, "queue_wait = %lldms\n", (long long)c->queue_wait_ms);
    rc = rc ? rc : dbuf_printf(&b, "retry_after = %lldms\n", (long long)c->retry_after_ms);
    rc = rc ? rc : dbuf_printf(&b, "cancel_on_disconnect = %s\n", c->cancel_on_disconnect ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "session_ttl = %llds\n", (long long)(c->session_ttl_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "drain_grace = %llds\n", (long long)(c->drain_grace_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "request_bytes = %llu\n", (unsigned long long)c->request_bytes);
    rc = rc ? rc : dbuf_printf(&b, "max_sessions = %llu\n", (unsigned long long)c->max_sessions);
    rc = rc ? rc : dbuf_printf(&b, "task_after = %lldms\n", (long long)c->task_after_ms);
    rc = rc ? rc : dbuf_printf(&b, "task_ttl = %llds\n", (long long)(c->task_ttl_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "tools_list_ttl = %llds\n", (long long)(c->tools_list_ttl_ms / 1000));
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
    rc = rc ? rc : dbuf_printf(&b, "package_store = %s\n", c->package_store ? "on" : "off");
    if (rc == 0) {
        char sz[48];
        format_limit(&(struct exec_limit_def){.unit = EXEC_UNIT_BYTES}, c->store_bytes, sz, sizeof sz);
        rc = dbuf_printf(&b, "store_bytes = %s\n", sz);
    }
    rc = rc ? rc : dbuf_printf(&b, "warm = %s\n", c->warm ? "on" : "off");
    rc = rc ? rc : dbuf_printf(&b, "warm_envs = %llu\n", (unsigned long long)c->warm_envs);
    rc = rc ? rc : dbuf_printf(&b, "warm_idle = %llds\n", (long long)(c->warm_idle_ms / 1000));
    if (rc == 0) {
        char sz[48];
        format_limit(&(struct exec_limit_def){.unit = EXEC_UNIT_BYTES}, c->warm_memory, sz, sizeof sz);
        rc = dbuf_printf(&b, "warm_memory = %s\n", sz);
    }
    rc = rc ? rc : dbuf_printf(&b, "warm_runs = %llu\n", (unsigned long long)c->warm_runs);
    rc = rc ? rc : dbuf_printf(&b, "warm_lifetime = %llds\n", (long long)(c->warm_lifetime_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "warm_modules = %s\n", *c->warm_modules ? c->warm_modules : "none");
    rc = rc ? rc : dbuf_printf(&b, "warm_wait = %lldms\n", (long long)c->warm_wait_ms);
    rc = rc ? rc : dbuf_printf(&b, "kernel_idle = %llds\n", (long long)(c->kernel_idle_ms / 1000));
    rc = rc ? rc : dbuf_printf(&b, "max_kernels = %llu\n", (unsigned long long)c->max_kernels);
    if (rc == 0) {
        char sz[48];
        format_limit(&(struct exec_limit_def){.unit = EXEC_UNIT_BYTES}, c->kernel_memory, sz, sizeof sz);
        rc = dbuf_printf(&b, "kernel_memory = %s\n", sz);
    }
    rc = rc ? rc : dbuf_printf(&b, "kernel_grace = %lldms\n", (long long)c->kernel_grace_ms);
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
