/* kernel_cell.c: exec_kernel_cell, a cell in the workspace's kernel, the worker's
 * side. The steps of exec_run (exec.c) with the kernel's in place of the
 * script's: checks -> the cell's run directory (STATE/runs/RUNID, as a
 * run's: its log, result, artifacts) -> the workspace's lock, waited for at
 * most queue_wait (one cell at a time per kernel) -> a run slot -> the
 * kernel: asked what it is (its environment, the requirements it was made
 * for), the environment for those and what the cell needs, then the
 * kernel kept, restarted with a larger environment, or started
 * (kernel__host_start) -> what output/ holds -> the cell sent to the
 * kernel's host and its output relayed to the sink, a cancel passed on as
 * an interrupt, until the host's result -> the artifacts (what the cell
 * made) -> the record. The host's side is kernel_host.c, kernel_host_cell.c
 * and kernel_proc.c. */
#include "config.h"

#include "kernel_internal.h"

#include "nb.h"
#include "result.h"
#include "result_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CELL_INFO_MS 5000     /* a host answers INFO this soon */
#define CELL_POLL_MS 100      /* cancellation, at least this often */
#define CELL_SLACK_MS 30000   /* past a cell's longest life, a host that says nothing is given up */
#define CELL_GONE_POLL_MS 20  /* a host that is going, looked for this often */
#define CELL_ADD_MS 120000    /* a host puts a larger environment's packages in place this soon */

/* The worker's view of the workspace's kernel. */
struct kclient {
    char dir[PATH_MAX];
    char key[KERNEL_KEY_LEN + 1];
    int sock;                 /* to the host, -1 */
    bool alive;               /* a host answered INFO */
    char *env;                /* its environment */
    struct strv reqs;    /* the requirements it was made for (or the saved kernel's, to restore) */
    bool restore;             /* no live kernel, and the next one restores the saved state */
    char reason[KERNEL_REASON_MAX];
    char network[1024];       /* its network (kernel_network_key); cut past this, then it differs */
};

static void kclient_free(struct kclient *k)
{
    if (k->sock >= 0)
        close(k->sock);
    k->sock = -1;
    free(k->env);
    k->env = NULL;
    strv_free(&k->reqs);
}

static const char *str_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                          : NULL;
}

/* Asks the host, if the workspace has one, what its kernel is; else why
 * the last one ended (k->reason, "" for the workspace's first). */
static int kernel_info(struct run *run, struct kclient *k)
{
    const struct exec_config *cfg = run->spec->cfg;
    int rc = kernel_dir(cfg->state_dir, run->spec->workspace, k->dir, sizeof k->dir, k->key);
    if (rc < 0) {
        exec__set_error(run->r, "the workspace's kernel: %s", strerror(-rc));
        return rc;
    }
    k->sock = kernel_connect(k->dir);
    int listening = k->sock < 0 ? k->sock : 0;
    char type = 0;
    cleanup_free char *data = NULL;
    size_t len;
    rc = k->sock < 0 ? k->sock : kernel_send(k->sock, KERNEL_MSG_INFO, "{}", 2);
    if (rc == 0)
        rc = kernel_recv(k->sock, CELL_INFO_MS, 1 << 20, &type, &data, &len);
    json_object *o = rc == 0 && type == KERNEL_MSG_INFO ? json_tokener_parse(data) : NULL;
    json_object *v;
    if (o && json_object_object_get_ex(o, "env", &v) && (k->env = strdup(json_object_get_string(v)))) {
        k->alive = true;
        const char *net = str_of(o, "network");
        snprintf(k->network, sizeof k->network, "%s", net ? net : "");
        json_object *reqs;
        if (json_object_object_get_ex(o, "requirements", &reqs) && json_object_is_type(reqs, json_type_array))
            for (size_t i = 0; i < json_object_array_length(reqs); i++) {
                const char *q = json_object_get_string(json_object_array_get_idx(reqs, i));
                if (q && strv_push(&k->reqs, q, strlen(q)) < 0) {
                    json_object_put(o);
                    exec__set_error(run->r, "out of memory");
                    return -ENOMEM;
                }
            }
    }
    json_object_put(o);
    if (k->alive)
        return 0;
    if (k->sock >= 0) {
        close(k->sock);
        k->sock = -1;
    }
    /* No kernel: the last one's reason, if there was one; a host that is
     * going (its kernel just died) says it as it goes. */
    struct stat st;
    struct kernel_state ks;
    const struct exec_limits *l = &run->spec->limits;
    /* (one that saves its state as it goes takes at most KERNEL_SAVE_MS
     * more: its host no longer listens while it does) */
    int64_t saving = cfg->kernels.save_bytes && listening == -ENOENT ? KERNEL_SAVE_MS : 0;
    for (int64_t end = util_now_ms() + cfg->kernels.grace_ms + l->kill_grace_ms + CELL_INFO_MS + saving;
         kernel_alive(k->dir) && util_now_ms() < end;)
        usleep(CELL_GONE_POLL_MS * 1000);
    kernel_ended_take(k->dir, k->reason, sizeof k->reason);
    /* A kernel saved as it stopped: the next one is made of what it was
     * made of (its packages, for the names that need them), and restores
     * it. */
    if (kernel_restore_marked(k->dir)) {
        strv_free(&k->reqs);
        rc = kernel_saved_read(k->dir, &k->reqs);
        if (rc < 0 && rc != -ENOENT) {
            exec__set_error(run->r, "the workspace's saved kernel: %s", strerror(-rc));
            return rc;
        }
        k->restore = true;
    }
    if (!k->reason[0] && stat(k->dir, &st) == 0 && kernel_alive(k->dir))
        snprintf(k->reason, sizeof k->reason, "the last kernel's host does not answer");
    else if (!k->reason[0] && kernel_state_read(k->dir, &ks) == 0)
        snprintf(k->reason, sizeof k->reason, "the last kernel's host ended without a word (it was killed)");
    return 0;
}

/* The cell's requirements with the kernel's: the environment it needs
 * holds what the kernel has and what the cell asks for (the cell's own
 * first, its explicit list and its PEP 723 block: a version it names
 * wins over the kernel's). */
static int cell_requirements(struct run *run, struct steps *s, const struct kclient *k)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_deps_config *dc = &spec->cfg->deps;
    char err[1024] = "";
    size_t n = spec->n_requirements;
    const char **v = calloc(n + k->reqs.n + 1, sizeof *v);
    if (!v) {
        exec__set_error(run->r, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < spec->n_requirements; i++)
        v[i] = spec->requirements[i];
    /* The cell's alone first: a distribution it names (its list, its PEP
     * 723 block) is not the kernel's to pin. */
    deps_set_free(&s->set);
    int rc = deps_declared(dc, v, n, spec->code, spec->code_len, &s->info, &s->set, err, sizeof err);
    for (size_t i = 0; rc == 0 && i < k->reqs.n; i++) {
        cleanup_free char *name = NULL, *canon = NULL;
        bool named = false;
        if (deps_check_requirement(k->reqs.v[i], true, &name, &canon, err, sizeof err) < 0)
            continue;
        for (size_t j = 0; j < s->set.n && !named; j++)
            named = !strcmp(s->set.v[j].name, name);
        if (!named)
            v[n++] = k->reqs.v[i];
    }
    if (rc == 0) {
        deps_set_free(&s->set);
        rc = deps_declared(dc, v, n, spec->code, spec->code_len, &s->info, &s->set, err, sizeof err);
    }
    free(v);
    if (rc < 0)
        exec__set_error(run->r, "the kernel's requirements and the cell's: %s", err);
    return rc;
}

/* The specs of the environment the cell runs with, for its kernel. */
static const char **set_specs(const struct deps_set *set)
{
    const char **v = calloc(set->n + 1, sizeof *v);
    for (size_t i = 0; v && i < set->n; i++)
        v[i] = set->v[i].spec;
    return v;
}

/* What the cell needs that the kernel's environment lacks, for the reason. */
static void lacking(const struct deps_set *set, const struct kclient *k, char *out, size_t n)
{
    size_t at = 0;
    out[0] = '\0';
    for (size_t i = 0; i < set->n && at + 1 < n; i++)
        if (!strv_has(&k->reqs, set->v[i].spec))
            at += (size_t)snprintf(out + at, n - at, "%s%s", at ? ", " : "", set->v[i].name);
}

/* The server the kernel ends with: kernels.server, or the caller's
 * parent; not init, which a detached caller (an MCP task's process) has
 * for a parent: its kernels would outlive the server. */
static int server_pidfd(const struct exec_config *cfg)
{
    pid_t server = cfg->kernels.server > 0 ? cfg->kernels.server : getppid();
    if (server <= 1)
        return -ESRCH;
    int fd = (int)syscall(SYS_pidfd_open, server, 0);
    return fd < 0 ? -errno : fd;
}

/* The pickler a kernel's saves use, cloudpickle, had as any package is
 * (the package store, built once, then a cache hit): an environment of it
 * into ts, held until the kernel's host has linked it. Quiet (no phase,
 * no line of the installer reaches the cell's sink), and optional: where
 * it cannot be had (kernel_save_bytes 0, no package source has it), the
 * kernel saves with the standard pickle. */
static const char *pickler_env(struct run *run, struct run *trun, struct steps *ts, struct exec_spec *tspec,
                               struct result *tr)
{
    static const char *const reqs[] = {"cloudpickle"};
    static const struct exec_sink quiet = {0};
    char err[512] = "";
    *tspec = *run->spec;
    tspec->code = "";
    tspec->code_len = 0;
    tspec->requirements = reqs;
    tspec->n_requirements = ARRAY_SIZE(reqs);
    tspec->auto_deps = false;
    result_init(tr);
    exec__steps_init(trun, ts, tspec, &quiet, tr);
    if (!run->spec->cfg->kernels.save_bytes)
        return NULL;
    snprintf(tr->run_id, sizeof tr->run_id, "%s", run->r->run_id);
    int rc = deps_python_info(tspec->cfg->state_dir, tspec->cfg->python, &ts->info, err, sizeof err);
    if (rc == 0)
        rc = deps_declared(&tspec->cfg->deps, reqs, ARRAY_SIZE(reqs), "", 0, &ts->info, &ts->set, err, sizeof err);
    if (rc == 0)
        rc = exec__step_environment(trun, ts);
    if (rc != 0 || !ts->env_dir || !ts->base_env) {
        log_msg(LOG_LVL_INFO, "cloudpickle for the kernel's saves: %s", err[0] ? err : tr->error ? tr->error : "not had");
        return NULL;
    }
    return ts->env_dir;
}

/* A new kernel for the workspace (its host started), of env_dir. */
static int kernel_new(struct run *run, struct steps *s, struct kclient *k, const char *env_dir)
{
    const struct exec_spec *spec = run->spec;
    struct run trun;
    struct steps ts;
    struct exec_spec tspec;
    struct result tr;
    const char *penv = pickler_env(run, &trun, &ts, &tspec, &tr);
    cleanup_free const char **specs = set_specs(&s->set);
    int sfd = server_pidfd(spec->cfg);
    char err[640] = "";
    if (!specs || sfd < 0) {
        if (sfd == -ESRCH)
            exec__set_error(run->r, "starting a kernel: no server process to end it with (the caller has no "
                            "parent but init, and kernels.server is not set)");
        else
            exec__set_error(run->r, "starting a kernel: %s", strerror(sfd < 0 ? -sfd : ENOMEM));
        if (sfd >= 0)
            close(sfd);
        exec__steps_free(&trun, &ts);
        result_free(&tr);
        return sfd < 0 ? sfd : -ENOMEM;
    }
    struct kernel_start ks = {
        .cfg = spec->cfg, .dir = k->dir, .key = k->key, .workspace = spec->workspace, .env_dir = env_dir,
        .requirements = specs, .n_requirements = s->set.n, .limits = &spec->limits, .network = spec->network,
        .code = spec->code, .code_len = spec->code_len, .server_pidfd = sfd, .restore = k->restore,
        .pickler_env = penv, .base_env = penv ? ts.base_env : NULL,
    };
    bool warm = false;
    exec__phase(run, EXEC_PHASE_RUNNING, "starting the workspace's kernel");
    int rc = kernel__host_start(&ks, &warm, err, sizeof err);
    close(sfd);
    exec__steps_free(&trun, &ts);
    result_free(&tr);
    if (rc == -EBUSY) {
        exec__set_error(run->r, "%s; nothing was run", err);
        return rc;
    }
    if (rc < 0) {
        exec__set_error(run->r, "the kernel did not start: %s", err);
        return rc;
    }
    k->sock = kernel_connect(k->dir);
    if (k->sock < 0) {
        exec__set_error(run->r, "the kernel's host does not answer: %s", strerror(-k->sock));
        return k->sock;
    }
    return 0;
}

/* {"env", "requirements"} of the environment the cell runs with, and its
 * code (the warm pool learns from it) with code. */
static json_object *env_message(struct run *run, struct steps *s, bool code)
{
    cleanup_free const char **specs = set_specs(&s->set);
    json_object *o = json_object_new_object(), *a = json_object_new_array();
    if (!specs || !o || !a) {
        json_object_put(o);
        json_object_put(a);
        return NULL;
    }
    for (size_t i = 0; i < s->set.n; i++)
        json_object_array_add(a, json_object_new_string(specs[i]));
    json_object_object_add(o, "env", json_object_new_string(s->env_dir));
    json_object_object_add(o, "requirements", a);
    if (code)
        json_object_object_add(o, "code", json_object_new_string_len(run->spec->code, (int)run->spec->code_len));
    return o;
}

/* The packages the cell needs put into the live kernel (KERNEL_MSG_ADD):
 * 1 when they were (r->kernel kept, its reason what was added), 0 when
 * the host says why not (why), -errno when it went away. */
static int cell_add(struct run *run, struct steps *s, struct kclient *k, char *why, size_t whylen)
{
    struct result *r = run->r;
    json_object *o = env_message(run, s, false);
    exec__phase(run, EXEC_PHASE_RUNNING, "adding packages to the live kernel");
    int rc = o ? kernel_send_json(k->sock, KERNEL_MSG_ADD, o) : -ENOMEM;
    json_object_put(o);
    char type = 0;
    cleanup_free char *data = NULL;
    size_t len;
    if (rc == 0)
        rc = kernel_recv(k->sock, CELL_ADD_MS, 1 << 20, &type, &data, &len);
    json_object *a = rc == 0 && type == KERNEL_MSG_ACK ? json_tokener_parse(data) : NULL;
    if (!a) {
        exec__set_error(r, "the kernel's host went away: %s", strerror(rc < 0 ? -rc : EPROTO));
        return rc < 0 ? rc : -EPROTO;
    }
    json_object *v, *added = NULL;
    bool ok = json_object_object_get_ex(a, "ok", &v) && json_object_get_boolean(v);
    json_object_object_get_ex(a, "added", &added);
    snprintf(why, whylen, "%s", str_of(a, "reason") ? str_of(a, "reason") : "the host did not say why");
    struct dbuf b;
    dbuf_init(&b, KERNEL_REASON_MAX);
    for (size_t i = 0; ok && added && i < json_object_array_length(added); i++)
        discard(dbuf_printf(&b, "%s%s", i ? ", " : "", json_object_get_string(json_object_array_get_idx(added, i))));
    json_object_put(a);
    if (ok) {
        r->kernel.state = RESULT_KERNEL_KEPT;
        if (asprintf(&r->kernel.reason, "added %s from the package store to the running kernel, which kept its "
                                        "state", b.len ? b.data : "nothing new") < 0)
            r->kernel.reason = NULL;
    }
    dbuf_free(&b);
    return ok ? 1 : 0;
}

/* The kernel for the cell: kept, given the packages it lacks in place,
 * restarted with a larger environment, or new, as r->kernel says. */
static int cell_kernel(struct run *run, struct steps *s, struct kclient *k)
{
    struct result *r = run->r;
    const struct exec_spec *spec = run->spec;
    r->network.mode = spec->network && !strcmp(spec->network, "off") ? NET_MODE_OFF : spec->cfg->script_network;
    int rc = kernel_info(run, k);
    if (rc == 0)
        rc = cell_requirements(run, s, k);
    if (rc == 0)
        rc = exec__step_environment(run, s);
    if (rc != 0)
        return rc; /* the service, or an install that failed (EXEC_STEP_ENDED) */
    if (k->alive && strncmp(k->network, kernel_network_key(run->spec->network), sizeof k->network) != 0) {
        /* The kernel's network is its starting cell's, for its life: a
         * cell cannot have another in it. */
        exec__set_error(r, "this workspace's kernel runs with the network %s%s%s; a cell with the network %s%s%s "
                           "needs a kernel of its own: reset the kernel first",
                        k->network[0] ? "\"" : "", k->network[0] ? k->network : "of the server", k->network[0] ? "\"" : "",
                        run->spec->network ? "\"" : "", run->spec->network ? run->spec->network : "of the server",
                        run->spec->network ? "\"" : "");
        return -EINVAL;
    }
    if (k->alive && !strcmp(k->env, s->env_dir)) {
        r->kernel.state = RESULT_KERNEL_KEPT;
        return 0;
    }
    if (k->alive) {
        /* A larger environment: its new packages into the live kernel
         * where every package it has keeps its version and its jail lets
         * it see them; else a kernel of it starts. */
        char names[512], why[512];
        lacking(&s->set, k, names, sizeof names);
        rc = cell_add(run, s, k, why, sizeof why);
        if (rc != 0)
            return rc < 0 ? rc : 0;
        json_object *o = env_message(run, s, true);
        if (!o) {
            exec__set_error(r, "out of memory");
            return -ENOMEM;
        }
        exec__phase(run, EXEC_PHASE_RUNNING, "restarting the kernel with a larger environment");
        rc = kernel_send_json(k->sock, KERNEL_MSG_RESTART, o);
        json_object_put(o);
        if (rc < 0) {
            exec__set_error(r, "the kernel's host went away: %s", strerror(-rc));
            return rc;
        }
        r->kernel.state = RESULT_KERNEL_RESTARTED;
        if (asprintf(&r->kernel.reason, "the cell needs %s, which could not be added to the running kernel (%s): "
                                        "the kernel restarted with a larger environment",
                     names[0] ? names : "packages", why) < 0)
            r->kernel.reason = NULL;
        return 0;
    }
    rc = kernel_new(run, s, k, s->env_dir);
    if (rc < 0)
        return rc;
    r->kernel.state = RESULT_KERNEL_NEW;
    r->kernel.reason = k->reason[0] ? strdup(k->reason) : NULL;
    return 0;
}

/* ------------------------------------------------------- the cell's run */

static json_object *cell_message(const struct exec_spec *spec)
{
    json_object *o = json_object_new_object(), *l = json_object_new_object();
    if (!o || !l) {
        json_object_put(o);
        json_object_put(l);
        return NULL;
    }
    for (size_t i = 0; i < exec_limit_defs_n; i++)
        json_object_object_add(l, exec_limit_defs[i].key,
                               json_object_new_int64((int64_t)exec_limit_get(&spec->limits, &exec_limit_defs[i])));
    json_object_object_add(o, "limits", l);
    json_object_object_add(o, "code", json_object_new_string_len(spec->code, (int)spec->code_len));
    return o;
}

/* A name the host sent, as the static string the result keeps. */
static const char *static_limit(const char *s)
{
    static const char *const extra[] = {"wall_time", "memory"};
    if (!s)
        return NULL;
    for (size_t i = 0; i < ARRAY_SIZE(extra); i++)
        if (!strcmp(s, extra[i]))
            return extra[i];
    const struct key_def *d = exec_limit_find(s);
    return d ? d->key : NULL;
}

static const char *static_isolation(const char *s)
{
    static const char *const names[] = {"namespaces+seccomp", "landlock+seccomp", "landlock", "rlimits+seccomp",
                                        "rlimits"};
    for (size_t i = 0; s && i < ARRAY_SIZE(names); i++)
        if (!strcmp(s, names[i]))
            return names[i];
    return NULL;
}

static int64_t int_of(json_object *o, const char *key, int64_t dflt)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : dflt;
}

/* The host's result into r. */
static void cell_done(struct run *run, const char *data)
{
    struct result *r = run->r;
    json_object *o = json_tokener_parse(data);
    if (!o) {
        exec__set_error(r, "the kernel's host answered nonsense");
        return;
    }
    r->status = (enum result_status)int_of(o, "status", RESULT_STATUS_SANDBOX_ERROR);
    r->limit = static_limit(str_of(o, "limit"));
    r->exit_code = (int)int_of(o, "exit_code", -1);
    r->signal = (int)int_of(o, "signal", 0);
    r->duration_ms = int_of(o, "duration_ms", -1);
    r->cpu_ms = int_of(o, "cpu_ms", 0);
    r->kernel.cell = (uint64_t)int_of(o, "cell", 0);
    r->isolation = static_isolation(str_of(o, "isolation"));
    json_object *v;
    r->warm = json_object_object_get_ex(o, "warm", &v) && json_object_get_boolean(v);
    r->value_truncated = json_object_object_get_ex(o, "value_truncated", &v) && json_object_get_boolean(v);
    const char *value = str_of(o, "value"), *error = str_of(o, "error");
    if (json_object_object_get_ex(o, "network", &v) && v && r->network.mode == NET_MODE_ON) {
        /* The cell's own traffic, as its kernel's proxy saw it. */
        enum net_mode mode = r->network.mode;
        net_record_free(&r->network);
        r->network.mode = mode;
        if (result__network_from_json(v, &r->network) < 0)
            log_msg(LOG_LVL_WARN, "the cell's network record did not come whole");
    }
    if (json_object_object_get_ex(o, "restored", &v) && json_object_is_type(v, json_type_object)) {
        r->kernel.state = RESULT_KERNEL_RESTORED;
        free(r->kernel.restored);
        r->kernel.restored = strdup(json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN));
    }
    free(r->value);
    r->value = value ? strdup(value) : NULL;
    free(r->error);
    r->error = error ? strdup(error) : NULL;
    json_object_put(o);
}

/* The cell's output and end, relayed; a cancel (the sink's, RUN/cancel)
 * sent on as an interrupt, once. */
static int cell_relay(struct run *run, struct kclient *k)
{
    const struct exec_limits *l = &run->spec->limits;
    int64_t give_up = util_now_ms() + l->wall_ms + run->spec->cfg->kernels.grace_ms + l->kill_grace_ms + CELL_SLACK_MS;
    bool interrupted = false;
    for (;;) {
        struct pollfd p = {k->sock, POLLIN, 0};
        int pr = poll(&p, 1, CELL_POLL_MS);
        if (pr < 0 && errno != EINTR) {
            int rc = -errno;
            exec__set_error(run->r, "poll: %s", strerror(errno));
            return rc;
        }
        if (pr > 0) {
            char type = 0;
            cleanup_free char *data = NULL;
            size_t len;
            int rc = kernel_recv(k->sock, CELL_INFO_MS, KERNEL_FRAME_MAX, &type, &data, &len);
            if (rc < 0) {
                exec__set_error(run->r, "the kernel's host ended while the cell ran (%s); the next cell starts a new "
                                "kernel", rc == -EPIPE ? "it went away" : strerror(-rc));
                return 0; /* a result: sandbox_error */
            }
            if (type == KERNEL_MSG_DONE) {
                cell_done(run, data);
                return 0;
            }
            if (type == KERNEL_MSG_OUTPUT && len >= 1) {
                enum result_stream stream = (enum result_stream)data[0];
                if (stream == RESULT_STREAM_SYSTEM) {
                    size_t n = len - 1;
                    while (n && data[n] == '\n')
                        n--;
                    exec__system_line(run, "%.*s", (int)n, data + 1);
                } else if (stream == RESULT_STREAM_STDOUT || stream == RESULT_STREAM_STDERR) {
                    exec__emit(run, stream, data + 1, len - 1);
                }
            }
        }
        if (!interrupted && exec__cancel_requested(run)) {
            interrupted = true;
            if (kernel_send(k->sock, KERNEL_MSG_INTERRUPT, NULL, 0) < 0)
                log_msg(LOG_LVL_WARN, "the kernel's host did not take the cancel");
        }
        if (util_now_ms() > give_up) {
            exec__set_error(run->r, "the kernel did not answer within the cell's time and kernel_grace; the next "
                            "cell starts a new kernel");
            discard(kernel_end_at(k->dir, "the last kernel did not answer", true, 0));
            return 0;
        }
    }
}

static int cell_send(struct run *run, struct kclient *k)
{
    json_object *m = cell_message(run->spec);
    int rc = m ? kernel_send_json(k->sock, KERNEL_MSG_CELL, m) : -ENOMEM;
    json_object_put(m);
    if (rc < 0) {
        exec__set_error(run->r, "the kernel's host did not take the cell: %s", strerror(-rc));
        return rc;
    }
    exec__phase(run, EXEC_PHASE_RUNNING, NULL);
    return cell_relay(run, k);
}

/* The cell into the workspace's output/notebook.ipynb, once its result is
 * recorded (its error is set then); the notebook is the workspace's cells
 * to download, and a failure to write it fails no cell. */
static void cell_notebook(struct run *run)
{
    int rc = run->out_fd >= 0 ? nb_out_cell(run->out_fd, run->spec->code, run->spec->code_len, run->r) : -EBADF;
    if (rc < 0)
        log_msg(LOG_LVL_WARN, "output/" NB_OUT_NAME " not updated: %s", strerror(-rc));
}

/* The checks that are a cell's own, before exec_run's. */
static int cell_refused(struct run *run)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_config *cfg = spec->cfg;
    if (!cfg->kernels.on || cfg->kernels.max == 0)
        return exec__refuse(run, EXEC_OUTCOME_UNSUPPORTED, -ENOTSUP,
                            !cfg->kernels.on ? "kernels live only under `runmyscript serve`: the command line "
                                               "and CGI have no process that outlives a request"
                                             : "kernels are off here (max_kernels = 0)");
    if (!spec->workspace)
        return exec__refuse(run, EXEC_OUTCOME_REFUSED, -EINVAL, "a cell needs a workspace: its kernel is the workspace's");
    if (spec->input_len)
        return exec__refuse(run, EXEC_OUTCOME_REFUSED, -EINVAL,
                            "a cell reads no input; write it to a file of the workspace");
    return 0;
}

int exec_kernel_cell(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r)
{
    struct run run;
    struct steps s;
    struct kclient k = {.sock = -1};
    exec__steps_init(&run, &s, spec, sink, r);

    int rc = cell_refused(&run);
    if (rc == 0)
        rc = exec__step_checks(&run, &s);
    if (rc == 0) {
        rc = exec__step_workspace(&run);
        if (rc == 0)
            rc = exec__step_session_lock(&run, spec->cfg->admit.queue_wait_ms);
        if (rc == 0)
            rc = exec__step_admission(&run);
        if (rc == 0)
            rc = cell_kernel(&run, &s, &k);
        if (rc == 0)
            rc = exec__step_seen(&run);
        s.t_run = util_now_ms();
        if (rc == 0)
            rc = cell_send(&run, &k);
        if (rc == 0)
            rc = exec__step_artifacts(&run, &s);
        rc = exec__step_record(&run, rc);
        if (rc == 0)
            cell_notebook(&run);
    }
    kclient_free(&k);
    exec__steps_free(&run, &s);
    return rc;
}
