/* result.c: a run's result (struct result): the names of its enums,
 * its life (init, free), and the one serializer every front door uses,
 * with the record of it in the run directory. */
#include "config.h"

#include "result.h"

#include "result_log.h"
#include "workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- names */

const char *exec_phase_name(enum exec_phase p)
{
    static const char *const names[] = {"queued", "resolving", "installing", "running", "collecting", "done"};
    return (size_t)p < ARRAY_SIZE(names) ? names[p] : "unknown";
}

const char *result_env_cache_name(enum result_env_cache c)
{
    static const char *const names[] = {"none", "hit", "built"};
    return (size_t)c < ARRAY_SIZE(names) ? names[c] : "unknown";
}

const char *result_stream_name(enum result_stream s)
{
    static const char *const names[] = {"stdout", "stderr", "system"};
    return (size_t)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *result_art_change_name(enum result_art_change c)
{
    static const char *const names[] = {"listed", "new", "changed"};
    return (size_t)c < ARRAY_SIZE(names) ? names[c] : "unknown";
}

const char *result_kernel_state_name(enum result_kernel_state s)
{
    static const char *const names[] = {"none", "new", "kept", "restarted", "restored"};
    return (size_t)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *result_status_name(enum result_status s)
{
    static const char *const names[] = {"ok",        "error",          "timeout",   "memory",
                                        "output_limit", "install_failed", "cancelled", "sandbox_error",
                                        "workspace_limit"};
    return (size_t)s < ARRAY_SIZE(names) ? names[s] : "sandbox_error";
}

const char *exec_outcome_name(enum exec_outcome o)
{
    static const char *const names[] = {"done", "refused", "too_large", "unsupported", "low_disk", "busy",
                                        "stopped", "failed", "disk_full"};
    _Static_assert(ARRAY_SIZE(names) == EXEC_OUTCOME_N, "a name for every outcome");
    return (size_t)o < ARRAY_SIZE(names) ? names[o] : "failed";
}

/* ------------------------------------------------------------- its life */

void result_init(struct result *r)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    r->duration_ms = -1; /* until the script ends: a call that never ran one has no time */
    r->outcome = EXEC_OUTCOME_FAILED;
    r->status = RESULT_STATUS_SANDBOX_ERROR;
    result_log_init(&r->log, 1 * MIB);
    net_record_init(&r->network);
}

void result_free(struct result *r)
{
    free(r->run_dir);
    free(r->workdir);
    free(r->output_dir);
    result_log_free(&r->log);
    for (size_t i = 0; i < r->n_requirements; i++)
        free(r->requirements[i]);
    free(r->requirements);
    free(r->install_log);
    free(r->failed_requirement);
    free(r->advice);
    for (size_t i = 0; i < r->n_artifacts; i++) {
        free(r->artifacts[i].path);
        free(r->artifacts[i].mime);
        free(r->artifacts[i].summary);
    }
    free(r->artifacts);
    for (size_t i = 0; i < r->n_outside_names; i++)
        free(r->outside_names[i]);
    free(r->zip_path);
    free(r->error);
    free(r->value);
    free(r->kernel.reason);
    free(r->kernel.restored);
    net_record_free(&r->network);
    memset(r, 0, sizeof *r);
}

/* ------------------------------------------------------------- as JSON */

static json_object *str_or_null(const char *s)
{
    if (!s)
        return NULL;
    size_t n;
    cleanup_free char *clean = util_utf8_sanitize(s, strlen(s), &n);
    return clean ? json_object_new_string_len(clean, (int)n) : NULL;
}

char *result_url_path(const char *path)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = strlen(path);
    char *out = malloc(n * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        unsigned char c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
            c == '_' || c == '~' || c == '/') {
            out[o++] = (char)c;
        } else {
            out[o++] = '%';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    out[o] = '\0';
    return out;
}

/* The log as one string, in arrival order, sanitized. */
static json_object *logs_json(const struct result_log *log)
{
    size_t n;
    cleanup_free char *clean = util_utf8_sanitize(log->buf.data ? log->buf.data : "", log->buf.len, &n);
    return clean ? json_object_new_string_len(clean, (int)n) : NULL;
}

static const char *signal_name(int sig)
{
    static char buf[16];
    const char *abbrev = sigabbrev_np(sig);
    if (!abbrev)
        return NULL;
    snprintf(buf, sizeof buf, "SIG%s", abbrev);
    return buf;
}

#define ADD(o, k, v)                                \
    do {                                            \
        json_object *v_ = (v);                      \
        if (json_object_object_add((o), (k), v_)) { \
            json_object_put(v_);                    \
            goto oom;                               \
        }                                           \
    } while (0)

json_object *result_to_json(const struct result *r)
{
    json_object *o = json_object_new_object();
    json_object *arts = NULL, *reqs = NULL;
    if (!o)
        return NULL;
    ADD(o, "run_id", json_object_new_string(r->run_id));
    ADD(o, "status", json_object_new_string(result_status_name(r->status)));
    ADD(o, "limit", r->limit ? json_object_new_string(r->limit) : NULL);
    ADD(o, "exit_code", r->exit_code >= 0 ? json_object_new_int(r->exit_code) : NULL);
    ADD(o, "signal", r->signal ? str_or_null(signal_name(r->signal)) : NULL);
    ADD(o, "duration_ms", r->duration_ms >= 0 ? json_object_new_int64(r->duration_ms) : NULL);
    ADD(o, "cpu_ms", json_object_new_int64(r->cpu_ms));
    ADD(o, "logs", logs_json(&r->log));
    ADD(o, "logs_truncated", json_object_new_boolean(r->log.truncated));

    reqs = json_object_new_array();
    if (!reqs)
        goto oom;
    for (size_t i = 0; i < r->n_requirements; i++)
        if (json_object_array_add(reqs, str_or_null(r->requirements[i])))
            goto oom;
    ADD(o, "requirements", reqs);
    reqs = NULL;
    ADD(o, "env_cache", json_object_new_string(result_env_cache_name(r->env_cache)));
    ADD(o, "env", r->env_key[0] ? json_object_new_string(r->env_key) : NULL);
    ADD(o, "install_log", str_or_null(r->install_log));
    ADD(o, "failed_requirement", str_or_null(r->failed_requirement));

    arts = json_object_new_array();
    if (!arts)
        goto oom;
    for (size_t i = 0; i < r->n_artifacts; i++) {
        const struct result_artifact *a = &r->artifacts[i];
        json_object *ao = json_object_new_object();
        if (!ao || json_object_array_add(arts, ao)) {
            json_object_put(ao);
            goto oom;
        }
        ADD(ao, "path", str_or_null(a->path));
        ADD(ao, "size", json_object_new_int64((int64_t)a->size));
        ADD(ao, "mime", json_object_new_string(a->mime));
        ADD(ao, "summary", str_or_null(a->summary));
        if (a->change != RESULT_ART_LISTED)
            ADD(ao, "change", json_object_new_string(result_art_change_name(a->change)));
        if (r->url_prefix) {
            cleanup_free char *enc = result_url_path(a->path);
            cleanup_free char *url = NULL;
            if (!enc || asprintf(&url, "%s%s/%s", r->url_prefix, r->run_id, enc) < 0)
                goto oom;
            ADD(ao, "url", json_object_new_string(url));
        }
    }
    ADD(o, "artifacts", arts);
    arts = NULL;
    if (r->has_zip && r->url_prefix) {
        cleanup_free char *url = NULL;
        if (asprintf(&url, "%s%s.zip", r->url_prefix, r->run_id) < 0)
            goto oom;
        ADD(o, "zip_url", json_object_new_string(url));
    } else {
        ADD(o, "zip_url", NULL);
    }
    ADD(o, "zip", r->has_zip ? str_or_null(r->zip_path) : NULL);
    ADD(o, "artifacts_skipped", json_object_new_int64((int64_t)r->artifacts_skipped));
    ADD(o, "workdir", str_or_null(r->workdir));
    ADD(o, "isolation", r->isolation ? json_object_new_string(r->isolation) : NULL);
    ADD(o, "start", json_object_new_string(r->warm ? "warm" : "cold"));
    ADD(o, "error", str_or_null(r->error));
    ADD(o, "advice", str_or_null(r->advice));
    ADD(o, "value", str_or_null(r->value));
    ADD(o, "value_truncated", json_object_new_boolean(r->value_truncated));
    if (r->input.live) {
        json_object *in = json_object_new_object();
        if (!in)
            goto oom;
        ADD(o, "input", in);
        ADD(in, "questions", json_object_new_int64((int64_t)r->input.questions));
        ADD(in, "answered", json_object_new_int64((int64_t)r->input.answered));
        ADD(in, "closed", r->input.closed ? json_object_new_string(r->input.closed) : NULL);
    } else {
        ADD(o, "input", NULL);
    }
    if (r->kernel.state != RESULT_KERNEL_NONE) {
        json_object *k = json_object_new_object();
        if (!k)
            goto oom;
        ADD(o, "kernel", k);
        ADD(k, "state", json_object_new_string(result_kernel_state_name(r->kernel.state)));
        ADD(k, "cell", json_object_new_int64((int64_t)r->kernel.cell));
        ADD(k, "reason", str_or_null(r->kernel.reason));
        if (r->kernel.state == RESULT_KERNEL_RESTORED) {
            /* The kernel's own report (built by kernel.py): an object, or
             * nothing at all. */
            json_object *rep = r->kernel.restored ? json_tokener_parse(r->kernel.restored) : NULL;
            if (rep && !json_object_is_type(rep, json_type_object)) {
                json_object_put(rep);
                rep = NULL;
            }
            ADD(k, "restored", rep ? rep : json_object_new_object());
        }
    } else {
        ADD(o, "kernel", NULL);
    }
    bool net_oom;
    json_object *net = result__network_json(&r->network, &net_oom);
    if (net_oom)
        goto oom;
    ADD(o, "network", net);
    return o;
oom:
    json_object_put(arts);
    json_object_put(reqs);
    json_object_put(o);
    return NULL;
}

json_object *result_mount_json(const struct fetch_mount *m)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    ADD(o, "mounted_as", str_or_null(m->mounted_as));
    ADD(o, "bytes", json_object_new_int64((int64_t)m->bytes));
    ADD(o, "sha256", json_object_new_string(m->sha256));
    ADD(o, "mime", json_object_new_string(m->mime ? m->mime : "application/octet-stream"));
    return o;
oom:
    json_object_put(o);
    return NULL;
}

json_object *result_upload_json(const struct fetch_upload_result *u)
{
    json_object *o = json_object_new_object();
    if (!o)
        return NULL;
    ADD(o, "uploaded_bytes", json_object_new_int64((int64_t)u->uploaded_bytes));
    ADD(o, "status", json_object_new_int64(u->status));
    return o;
oom:
    json_object_put(o);
    return NULL;
}

/* A copy of s (n bytes) with dir, its trailing '/' dropped, written as
 * name: "/srv/rms" also finds "/srv/rms/runs/..." but not "/srv/rmsx".
 * NULL on ENOMEM. */
static char *redact_dir(const char *s, size_t n, const char *dir, size_t dn, const char *name, size_t *out_len)
{
    while (dn > 1 && dir[dn - 1] == '/')
        dn--;
    if (dn <= 1) /* no directory, or "/": nothing to hide */
        return util_replace_all(s, n, "", "", out_len);
    cleanup_free char *d = strndup(dir, dn);
    return d ? util_replace_all(s, n, d, name, out_len) : NULL;
}

char *result_redact(const char *s, size_t n, const struct exec_config *cfg, size_t *out_len)
{
    const char *state_dir = cfg ? cfg->state_dir : NULL;
    char *out = redact_dir(s, n, state_dir, state_dir ? strlen(state_dir) : 0, "STATE", out_len);
    const char *links = cfg ? cfg->deps.find_links : NULL;
    for (const char *p = links; out && p && *p;) {
        p += strspn(p, " \t,");
        size_t len = strcspn(p, " \t,");
        const char *dir = p;
        size_t dn = len;
        if (len > 7 && !strncmp(p, "file://", 7)) {
            dir += 7;
            dn -= 7;
        }
        p += len;
        if (dn == 0 || dir[0] != '/') /* an index or links page on the network: no path of the server */
            continue;
        size_t m;
        char *next = redact_dir(out, *out_len, dir, dn, "WHEELHOUSE", &m);
        free(out);
        out = next;
        *out_len = m;
    }
    return out;
}

/* Every string of v, at any depth, redacted in place. 0 or -ENOMEM. */
static int redact_tree(json_object *v, const struct exec_config *cfg)
{
    if (json_object_is_type(v, json_type_string)) {
        size_t n;
        cleanup_free char *s = result_redact(json_object_get_string(v), (size_t)json_object_get_string_len(v),
                                             cfg, &n);
        return s && json_object_set_string_len(v, s, (int)n) == 1 ? 0 : -ENOMEM;
    }
    if (json_object_is_type(v, json_type_object)) {
        json_object_object_foreach(v, key, val) {
            (void)key;
            if (redact_tree(val, cfg) < 0)
                return -ENOMEM;
        }
    } else if (json_object_is_type(v, json_type_array)) {
        for (size_t i = 0; i < json_object_array_length(v); i++)
            if (redact_tree(json_object_array_get_idx(v, i), cfg) < 0)
                return -ENOMEM;
    }
    return 0;
}

/* o[key], a relative URL, made absolute on origin. 0 or -ENOMEM. */
static int absolute_url(json_object *o, const char *key, const char *origin)
{
    json_object *v;
    if (!json_object_object_get_ex(o, key, &v) || !json_object_is_type(v, json_type_string))
        return 0;
    const char *rel = json_object_get_string(v);
    if (rel[0] != '/')
        return 0;
    cleanup_free char *abs = NULL;
    if (asprintf(&abs, "%s%s", origin, rel) < 0)
        return -ENOMEM;
    return json_object_set_string(v, abs) == 1 ? 0 : -ENOMEM;
}

json_object *result_client_json(const struct result *r, const char *base_url, const struct exec_config *cfg)
{
    json_object *o = result_to_json(r), *arts;
    if (!o)
        return NULL;
    /* The origin of base_url: up to the path. */
    const char *sep = base_url ? strstr(base_url, "://") : NULL;
    size_t on = sep ? (size_t)(sep + 3 - base_url) + strcspn(sep + 3, "/?#") : 0;
    cleanup_free char *origin = on ? strndup(base_url, on) : NULL;
    json_object_object_del(o, "workdir");
    json_object_object_del(o, "zip");
    json_object_object_del(o, "advice");
    int rc = 0;
    if (origin && *origin) {
        rc = absolute_url(o, "zip_url", origin);
        if (json_object_object_get_ex(o, "artifacts", &arts))
            for (size_t i = 0; rc == 0 && i < json_object_array_length(arts); i++)
                rc = absolute_url(json_object_array_get_idx(arts, i), "url", origin);
    }
    if (rc == 0)
        rc = redact_tree(o, cfg);
    if (rc < 0) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

char *result_file_url(const char *path)
{
    cleanup_free char *enc = result_url_path(path);
    char *url = NULL;
    if (!enc || asprintf(&url, "file://%s", enc) < 0)
        return NULL;
    return url;
}

/* o[key] = the file:// URL of path (o[key] left alone when path is NULL).
 * 0 or -ENOMEM. */
static int file_url(json_object *o, const char *key, const char *path)
{
    if (!path)
        return 0;
    cleanup_free char *url = result_file_url(path);
    if (!url)
        return -ENOMEM;
    json_object_object_add(o, key, json_object_new_string(url));
    return 0;
}

json_object *result_local_json(const struct result *r)
{
    json_object *o = result_to_json(r), *arts;
    if (!o)
        return NULL;
    int rc = file_url(o, "zip_url", r->has_zip ? r->zip_path : NULL);
    if (rc == 0 && r->run_dir && json_object_object_get_ex(o, "artifacts", &arts))
        for (size_t i = 0; rc == 0 && i < r->n_artifacts && i < json_object_array_length(arts); i++) {
            cleanup_free char *path = NULL;
            rc = asprintf(&path, "%s/output/%s", r->run_dir, r->artifacts[i].path) < 0
                     ? -ENOMEM
                     : file_url(json_object_array_get_idx(arts, i), "url", path);
        }
    if (rc < 0) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

char *result_to_string(const struct result *r, bool pretty, size_t *len)
{
    json_object *o = result_to_json(r);
    if (!o)
        return NULL;
    int flags = JSON_C_TO_STRING_NOSLASHESCAPE | (pretty ? JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED
                                                          : JSON_C_TO_STRING_PLAIN);
    size_t n;
    const char *s = json_object_to_json_string_length(o, flags, &n);
    char *copy = s ? strndup(s, n) : NULL;
    if (len)
        *len = n;
    json_object_put(o);
    return copy;
}

int result_record(const struct result *r)
{
    if (!r->run_dir)
        return -EINVAL;
    cleanup_fd int dfd = open(r->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    /* The log is a plain copy for people (result.json carries it too, and
     * its rename is what publishes the run). */
    unlinkat(dfd, "log", 0);
    int rc = util_write_file_new(dfd, "log", r->log.buf.data ? r->log.buf.data : "", r->log.buf.len, 0644);
    if (rc < 0)
        return rc;
    size_t n;
    cleanup_free char *json = result_to_string(r, false, &n);
    if (!json)
        return -ENOMEM;
    /* Renamed into place, not fsync'd: a reader sees a whole result or
     * none. The call that ran it is answered with the result itself, a
     * task keeps its own copy in task.json (fsync'd), and nothing here
     * outlives a crash whole anyway (log, output/ and the zip are not
     * synced): an fsync per run bought only result.json's bytes on the
     * disk, at 0.5 to 5 ms of the call's time. */
    rc = util_write_file_published(dfd, "result.json", json, n, 0644);
    if (rc == 0)
        discard(ws_runs_account(r->run_dir)); /* the run records' ledger; its next count corrects a miss */
    return rc;
}
