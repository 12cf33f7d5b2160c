/* exec_script.c: the script's run under its limits, the part of
 * exec_run() between "environment ready" and "collect the artifacts": the
 * layout the script sees in each isolation mode (interpreter, script, cwd,
 * environment, binds), the start in the jail or the fallback, and its
 * watch under supervise.c: the output into the log, the script's exit (a
 * pidfd), the wall deadline, and a tick that checks cancellation, the
 * output directory's size and, where no cgroup holds it, the run's memory
 * as a whole; a stop is SIGTERM, then SIGKILL after kill_grace (at once for
 * memory), then a drain of what is left.
 *
 * Stream order: chunks are logged in the order the reader gets them. With
 * unbuffered Python that is the order of the writes, except for writes to
 * the two streams closer together than the reader wakes up, which can come
 * out grouped by stream. */
#include "config.h"

#include "exec_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "deps.h"
#include "fetch.h"
#include "jail.h"
#include "supervise.h"
#include "warm.h"
#include "workspace.h"

#define EXEC_TICK_MS 100           /* cancellation, at least this often */
#define EXEC_MEASURE_EVERY_MS 500  /* the disk the run takes (output/, the workspace) while running */
#define EXEC_DRAIN_MS 2000         /* reading what is left after the end */
/* The memory watch takes at most a tenth of the time: a slow sum (many
 * processes sharing a large heap copy-on-write make the exact count walk
 * all their page tables) waits this many times as long as it took. */
#define EXEC_MEMORY_PACE 10

/* Where things are as the script sees them, for one isolation mode. */
struct layout {
    char *vars[12];               /* the environment: the allowlist of doc/architecture.md */
    const char *envp[13];
    char *python, *script, *cwd;
    char *home, *tmp;             /* the fallback's HOME and TMPDIR (host paths) */
    struct jail_bind *binds;      /* its own (6 at most), then the environment's */
    size_t n_binds;
    struct deps_env_binds env_binds;
    char *mounts;                 /* host path of the workspace's mounts/ */
    const char *stdin_inside;     /* jail_opts.stdin_inside */
    const char *chown[2];
    size_t n_chown;
    /* A script whose last expression is shown (runner.py): the runner's
     * argv (cold), its text, and the file it leaves the value in. */
    const char *runner_argv[4];
    char *runner_text, *value_file;
};

static void layout_free(struct layout *l)
{
    for (size_t i = 0; i < ARRAY_SIZE(l->vars); i++)
        free(l->vars[i]);
    free(l->python);
    free(l->script);
    free(l->cwd);
    free(l->home);
    free(l->tmp);
    free(l->mounts);
    free(l->binds);
    free(l->runner_text);
    free(l->value_file);
    deps_env_binds_free(&l->env_binds);
    memset(l, 0, sizeof *l);
}

#define VALUE_FILE ".rms-value-" /* in output/, before the run's id: where the runner leaves the value */

/* Whether a notebook would show something of the script at its end: its
 * last statement may be an expression, or it draws with matplotlib (a
 * figure left open), by an import or a call that imports it (pandas'
 * df.plot()). Such a script runs through runner.py. */
static bool wants_display(const struct exec_spec *spec)
{
    if (deps_scan_ends_in_expression(spec->code, spec->code_len))
        return true;
    struct strv imports = {0};
    bool draws = false;
    if (deps_scan_imports(spec->code, spec->code_len, &imports) == 0 &&
        deps_scan_idioms(spec->code, spec->code_len, &imports, &imports) == 0)
        draws = strv_has(&imports, "matplotlib") || strv_has(&imports, "pylab") ||
                strv_has(&imports, "seaborn");
    strv_free(&imports);
    return draws;
}

/* The runner for l's script: its text after display.py, the call with the
 * value's file in output/ as the script sees it. 0 or -ENOMEM. */
static int layout_runner(struct layout *l, const struct run *run, enum jail_mode mode)
{
    const struct result *r = run->r;
    const char *out = mode == JAIL_MODE_NAMESPACES ? "/work/output" : r->output_dir;
    if (asprintf(&l->value_file, "%s/" VALUE_FILE "%s", out, r->run_id) < 0) {
        l->value_file = NULL;
        return -ENOMEM;
    }
    cleanup_free char *call = jail_runner_call(l->script, l->value_file, run->spec->limits.value_bytes, true);
    if (!call || asprintf(&l->runner_text, "%s%s%s", jail_py_display, jail_py_runner, call) < 0) {
        l->runner_text = NULL;
        return -ENOMEM;
    }
    l->runner_argv[0] = l->python;
    l->runner_argv[1] = "-c";
    l->runner_argv[2] = l->runner_text;
    l->runner_argv[3] = NULL;
    return 0;
}

/* The value the runner left (and the file gone, whatever the run did). */
static void take_value(struct run *run)
{
    struct result *r = run->r;
    char name[sizeof VALUE_FILE + WS_ID_MAX];
    snprintf(name, sizeof name, VALUE_FILE "%s", r->run_id);
    int fd = ws_open_beneath(run->out_fd, name, O_RDONLY | O_CLOEXEC, 0);
    cleanup_free char *text = NULL;
    size_t n = 0;
    if (fd >= 0) {
        if (util_read_fd(fd, run->spec->limits.value_bytes + 4096, &text, &n) < 0)
            n = 0;
        close(fd);
    }
    if (unlinkat(run->out_fd, name, 0) < 0 && errno != ENOENT)
        log_msg(LOG_LVL_WARN, "removing the value's file: %s", strerror(errno));
    if (n < 1 || !text)
        return;
    r->value_truncated = text[0] == '1';
    free(r->value);
    r->value = strndup(text + 1, n - 1);
}

/* In the namespaces: the workspace at /work, its mounts/ read-only over
 * /work/mounts, the environment at /env (and the store entries it links
 * at their host paths: deps_env_binds), and the run directory read-only at
 * /job, where the script is run from (/job/script.py, the one name a
 * traceback gives it, with a session or without, whichever door started
 * it); without a session the run directory is the workspace too.
 * HOME and TMPDIR on the private /tmp. In the fallback: the host's paths,
 * the same binds at them (the Landlock rules: the workspace, HOME and
 * TMPDIR read-write, the run directory and the environment read-only),
 * and the files of mounts/ made read-only (chmod a-w). As root, mounts/
 * keeps the server's uid (jail_opts.chown_keep) while the rest of the
 * workspace becomes the run's, so that holds; run unprivileged, the
 * fallback's script has the server's uid and could put the bits back
 * (Landlock has no rule for a read-only directory below a writable one,
 * nor for chmod). */
static int layout_make(struct layout *l, enum jail_mode mode, const struct result *r, const char *env_dir,
                       bool session, bool kernel, const char *site)
{
    const char *work, *job, *env, *home, *tmp;
    memset(l, 0, sizeof *l);
    bool has_mounts = ws_mounts_dir(r->workdir, session);
    /* The store entries the environment's symlinks lead into: in both
     * modes at their host paths, after the run's own binds. */
    int erc = deps_env_binds(env_dir, &l->env_binds);
    if (erc < 0)
        return erc;
    if (!(l->binds = calloc(7 + l->env_binds.n, sizeof *l->binds)))
        goto oom;
    if (mode == JAIL_MODE_NAMESPACES) {
        work = "/work";
        job = "/job";
        env = "/env";
        home = "/tmp/home";
        tmp = "/tmp";
        l->binds[l->n_binds++] = (struct jail_bind){r->workdir, "/work", JAIL_BIND_RW};
        l->binds[l->n_binds++] = (struct jail_bind){r->run_dir, "/job", 0};
        if (site) /* a kernel's extra directory, on /job's site/ */
            l->binds[l->n_binds++] = (struct jail_bind){site, "/job/site", 0};
        l->stdin_inside = kernel ? NULL : "/job/input"; /* a kernel's stdin is its channel */
        l->binds[l->n_binds++] = (struct jail_bind){env_dir, "/env", 0};
        if (has_mounts) {
            if (asprintf(&l->mounts, "%s/%s", r->workdir, WS_MOUNTS_DIR) < 0) {
                l->mounts = NULL;
                goto oom;
            }
            /* Read-only, and neither end reached through a symlink: the
             * workspace is the script's to rearrange between runs. */
            l->binds[l->n_binds++] = (struct jail_bind){l->mounts, "/work/" WS_MOUNTS_DIR, JAIL_BIND_NOFOLLOW};
        }
    } else {
        work = r->workdir;
        job = r->run_dir;
        env = env_dir;
        if (asprintf(&l->home, "%s/home", r->run_dir) < 0)
            l->home = NULL;
        if (asprintf(&l->tmp, "%s/tmp", r->run_dir) < 0)
            l->tmp = NULL;
        if (!l->home || !l->tmp)
            goto oom;
        home = l->home;
        tmp = l->tmp;
        l->binds[l->n_binds++] = (struct jail_bind){r->workdir, r->workdir, JAIL_BIND_RW};
        if (session)
            l->binds[l->n_binds++] = (struct jail_bind){r->run_dir, r->run_dir, 0};
        l->binds[l->n_binds++] = (struct jail_bind){env_dir, env_dir, 0};
        if (site)
            l->binds[l->n_binds++] = (struct jail_bind){site, site, 0};
        l->binds[l->n_binds++] = (struct jail_bind){home, home, JAIL_BIND_RW};
        l->binds[l->n_binds++] = (struct jail_bind){tmp, tmp, JAIL_BIND_RW};
        if (has_mounts) {
            cleanup_fd int wfd = open(r->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int rc = wfd < 0 ? -errno : fetch_mounts_chmod_ro(wfd);
            if (rc < 0)
                log_msg(LOG_LVL_WARN, "making mounts/ read-only: %s", strerror(-rc));
        }
    }
    for (size_t i = 0; i < l->env_binds.n; i++)
        l->binds[l->n_binds++] = l->env_binds.v[i];
    /* As root, the run's own host uid must be able to write (both modes). */
    l->chown[l->n_chown++] = r->run_dir;
    if (session)
        l->chown[l->n_chown++] = r->workdir;
    int n = 0;
    if (asprintf(&l->vars[n++], "PATH=%s/bin:/usr/local/bin:/usr/bin:/bin", env) < 0 ||
        asprintf(&l->vars[n++], "HOME=%s", home) < 0 || asprintf(&l->vars[n++], "LANG=C.UTF-8") < 0 ||
        asprintf(&l->vars[n++], "TMPDIR=%s", tmp) < 0 || asprintf(&l->vars[n++], "PYTHONUNBUFFERED=1") < 0 ||
        asprintf(&l->vars[n++], "SCRIPT_INPUT=%s/input", session ? job : work) < 0 ||
        asprintf(&l->vars[n++], "SCRIPT_OUTPUT=%s/output", work) < 0)
        goto oom;
    /* A session's script lives in the run directory; its helpers (a mounted
     * helpers.py) live in the workspace, which must be importable too. */
    if (session && asprintf(&l->vars[n++], "PYTHONPATH=%s", work) < 0)
        goto oom;
    for (int i = 0; i < n; i++)
        l->envp[i] = l->vars[i];
    l->envp[n] = NULL;
    l->python = deps_env_python(env);
    l->cwd = strdup(work);
    if (!l->python || !l->cwd || asprintf(&l->script, "%s/script.py", job) < 0)
        goto oom;
    return 0;
oom:
    layout_free(l);
    return -ENOMEM;
}

/* Why a run was stopped by us. */
enum stop_reason { STOP_NONE, STOP_WALL, STOP_OUTPUT, STOP_CANCEL, STOP_MEMORY, STOP_WORKSPACE };

/* True when dir holds a module of the script's own (NAME.py but the
 * script, NAME.so, a package, a .pth): a zygote may have imported a module
 * of that name already, which a cold run would have found here first. */
static bool has_local_modules(const char *dir)
{
    cleanup_dir DIR *d = dir ? opendir(dir) : NULL;
    struct dirent *de;
    if (!d)
        return dir != NULL;
    while ((de = readdir(d))) {
        const char *n = de->d_name;
        size_t len = strlen(n);
        if (n[0] == '.' || !strcmp(n, "script.py"))
            continue;
        if ((len > 3 && !strcmp(n + len - 3, ".py")) || (len > 3 && !strcmp(n + len - 3, ".so")) ||
            (len > 4 && !strcmp(n + len - 4, ".pth")) || (len > 4 && !strcmp(n + len - 4, ".pyc")))
            return true;
        char init[PATH_MAX];
        if (de->d_type == DT_DIR && snprintf(init, sizeof init, "%s/%s/__init__.py", dir, n) < (int)sizeof init &&
            faccessat(AT_FDCWD, init, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
            return true;
    }
    return false;
}

/* Whether a run may start warm: the pool is on, the run is in the
 * namespaces without the network (a zygote has none to give), and nothing
 * of the script's own could be shadowed by what a zygote imported. */
static bool warm_eligible(struct run *run, enum jail_mode mode)
{
    const struct exec_config *cfg = run->spec->cfg;
    if (!cfg->warm.on || mode != JAIL_MODE_NAMESPACES || cfg->script_network == NET_MODE_HOST_UNFILTERED)
        return false;
    return !has_local_modules(run->r->run_dir) && !(run->spec->workspace && has_local_modules(run->spec->workspace));
}

/* The warm start of o (jail_start_warm): 0 when the script started warm,
 * else -errno and the run starts cold. */
static int start_warm(struct run *run, const struct jail_opts *o, struct jail_proc *proc)
{
    const struct exec_spec *spec = run->spec;
    char sock[PATH_MAX], err[256] = "";
    struct strv imports = {0};
    int rc = warm_sock_path(spec->cfg->state_dir, sock, sizeof sock);
    /* The whole module paths (matplotlib.pyplot, not only matplotlib): the
     * imports only teach the pool, so a run goes on with what was found. */
    int src = rc == 0 ? deps_scan_import_paths(spec->code, spec->code_len, &imports) : 0;
    if (src < 0 && src != -E2BIG)
        imports.n = 0;
    if (rc == 0)
        rc = jail_start_warm(o, sock, (const char *const *)imports.v, imports.n, spec->cfg->warm.wait_ms, proc, err,
                             sizeof err);
    strv_free(&imports);
    if (rc == 0) {
        run->r->warm = true;
        return 0;
    }
    if (rc != -EAGAIN)
        log_msg(LOG_LVL_WARN, "a warm start failed (%s): the run starts cold", err);
    else if (err[0])
        log_msg(LOG_LVL_INFO, "no warm start (%s): the run starts cold", err);
    return rc;
}

int exec__start_script(struct run *run, const char *env_dir, int in_fd, int out_w, int err_w, struct jail_mark *mark,
                       struct jail_proc *proc)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_config *cfg = spec->cfg;
    struct result *r = run->r;
    enum jail_mode mode = jail_mode_for(cfg->isolation);
    char err[256] = "";
    int rc;

    bool fallback_ok = exec__may_fall_back(cfg);
    if (mode == JAIL_MODE_NAMESPACES && exec__namespaces_unavailable && fallback_ok)
        mode = JAIL_MODE_RLIMITS;
    bool warm = warm_eligible(run, mode);
    for (;;) {
        struct layout l;
        if (mode == JAIL_MODE_RLIMITS && run->net) {
            /* No namespace to hold the policy in: refused, never open. */
            exec__set_error(r, "script_network = on needs the namespace jail, and this run would have the %s "
                               "fallback (%s); run it without the network (network \"off\"), or on a host with user "
                               "namespaces",
                            "rlimits", cfg->isolation == EXEC_ISOLATION_RLIMITS ? "isolation = rlimits" :
                                                                                   "this host has no user namespaces");
            return -ENOTSUP;
        }
        if (mode == JAIL_MODE_RLIMITS) {
            rc = jail_prepare_rlimits(r->run_dir);
            if (rc < 0) {
                exec__set_error(r, "preparing the run directory: %s", strerror(-rc));
                return rc;
            }
        }
        rc = layout_make(&l, mode, r, env_dir, spec->workspace != NULL, run->kernel, run->site);
        if (rc < 0) {
            exec__set_error(r, "the run's layout (its environment's manifest): %s", strerror(-rc));
            return rc;
        }
        if (r->input.live)
            l.stdin_inside = NULL; /* the pipe given, not /job/input */
        const char *argv[] = {l.python, l.script, NULL};
        if (run->display && (rc = layout_runner(&l, run, mode)) < 0) {
            layout_free(&l);
            exec__set_error(r, "out of memory");
            return rc;
        }
        struct jail_opts o = {
            .mode = mode,
            .binds = l.binds,
            .n_binds = l.n_binds,
            .argv = argv,
            .interpreter = cfg->python,
            .envp = l.envp,
            .cwd = l.cwd,
            .fd_in = in_fd,
            .fd_out = out_w,
            .fd_err = err_w,
            .stdin_inside = l.stdin_inside,
            .limits = &spec->limits,
            .network = !run->net && cfg->script_network == NET_MODE_HOST_UNFILTERED &&
                       !(spec->network && !strcmp(spec->network, "off")),
            .net_sock = run->net ? run->net->sv[1] : -1,
            .landlock = cfg->landlock,
            .shared_proc = cfg->shared_proc,
            .state_dir = cfg->state_dir,
            .tag = r->run_id,
            .uid_base = cfg->uid_base,
            .uid_count = cfg->uid_count,
            .chown_paths = l.chown,
            .n_chown_paths = l.n_chown,
            .chown_keep = WS_MOUNTS_DIR,
            .mark = mark,
            .runner_argv = run->display ? l.runner_argv : NULL,
            .value_file = run->display ? l.value_file : NULL,
            .value_limit = spec->limits.value_bytes,
            .home_from = mode == JAIL_MODE_NAMESPACES ? deps_env_home_cache(env_dir) : NULL,
        };
        rc = warm ? start_warm(run, &o, proc) : -EAGAIN;
        if (rc < 0 && warm && run->net) {
            /* A warm start that failed may have left its sockets in ours:
             * the cold one starts with a fresh pair. */
            int nrc = exec__net_renew(run, run->net);
            if (nrc < 0) {
                layout_free(&l);
                return nrc;
            }
            o.net_sock = run->net->sv[1];
        }
        warm = false;
        if (rc < 0)
            rc = jail_start(&o, proc, err, sizeof err);
        layout_free(&l);
        if (rc == 0 && run->net)
            exec__net_started(run->net);
        if (rc == 0) {
            r->isolation = jail_proc_isolation(proc);
            return 0;
        }
        if (mode == JAIL_MODE_NAMESPACES && proc->unavailable) {
            exec__namespaces_unavailable = true;
            if (!fallback_ok) {
                exec__set_error(r,
                          "this host cannot isolate runs (%s) and require_isolation is on; "
                          "set require_isolation = off to run with the rlimits fallback",
                          err);
                return rc;
            }
            log_msg(LOG_LVL_WARN, "no namespaces here (%s): running with the rlimits fallback", err);
            mode = JAIL_MODE_RLIMITS;
            continue;
        }
        exec__set_error(r, "could not start the script: %s", err);
        return rc;
    }
}

/* The script's run while supervise.c watches it. */
struct script_watch {
    struct run *run;
    struct jail_proc *proc;
    enum stop_reason stop;
    int64_t t0;            /* the clock's start: after the jail's */
    struct timespec since; /* the same, as a file's ctime: what the script wrote has a later one */
    bool fallback;         /* the rlimits mode: home/ and tmp/ are the run directory's */
    int64_t next_measure;  /* of the disk */
    char why[192];         /* a disk limit passed, for the log */
    int64_t next_cancel;   /* the next look for a cancel */
    int64_t next_memory;   /* the next sum of the run's memory */
    struct exec_ask *ask;  /* the script's stdin when its door can ask, or NULL */
    int wstatus;
    struct rusage ru;
};

static void script_stdout(void *ctx, const char *data, size_t len)
{
    struct script_watch *w = ctx;
    exec__emit(w->run, RESULT_STREAM_STDOUT, data, len);
    if (w->ask)
        exec__ask_output(w->ask, data, len);
}

static void script_stderr(void *ctx, const char *data, size_t len)
{
    struct script_watch *w = ctx;
    exec__emit(w->run, RESULT_STREAM_STDERR, data, len);
    if (w->ask)
        exec__ask_output(w->ask, data, len);
}

/* The script's end (init's, in the namespaces): then nothing of the run
 * may stay. What the others wrote before they died is still read. */
static int script_reap(void *ctx)
{
    struct script_watch *w = ctx;
    if (jail_try_reap(w->proc, &w->wstatus, &w->ru) == 0)
        return 0;
    w->run->r->duration_ms = util_now_ms() - w->t0;
    jail_kill_all(w->proc);
    discard(jail_try_reap(w->proc, &w->wstatus, &w->ru)); /* kill_all reaped it */
    return 1;
}

/* Where no memory cgroup holds the run, its memory as a whole every
 * JAIL_MEMORY_WATCH_MS: RLIMIT_AS binds each process alone, and six of them
 * would hold six times `memory`. Past it the run is killed at once (in
 * script_stop), as a cgroup's OOM kill would end it, and reported as that
 * is: jail_proc.memory_breached, status memory. */
static bool script_memory_check(struct script_watch *w, int64_t now)
{
    if (now < w->next_memory)
        return false;
    uint64_t held = 0;
    int64_t t = util_now_ms();
    int over = jail_memory_check(w->proc, w->run->spec->limits.memory, &held);
    int64_t took = util_now_ms() - t;
    w->next_memory = now + (took * EXEC_MEMORY_PACE > JAIL_MEMORY_WATCH_MS ? took * EXEC_MEMORY_PACE
                                                                           : JAIL_MEMORY_WATCH_MS);
    if (over <= 0)
        return false;
    log_msg(LOG_LVL_INFO, "the run holds %llu bytes, past memory = %llu: killed", (unsigned long long)held,
            (unsigned long long)w->run->spec->limits.memory);
    w->proc->memory_breached = true;
    w->stop = STOP_MEMORY;
    return true;
}

/* The log passed log_bytes (its marker says so): status output_limit. */
static bool script_log_over(struct script_watch *w)
{
    if (!w->run->r->log.truncated)
        return false;
    w->stop = STOP_OUTPUT;
    w->run->r->limit = "log_bytes";
    return true;
}

/* Cancellation every EXEC_TICK_MS (not at each of a chatty script's many
 * wake-ups), the disk (output/, the workspace; the fallback's home/ and
 * tmp/) every EXEC_MEASURE_EVERY_MS: true (and the reason in w) to stop
 * the run. One walk measures it all, and stops as soon as a limit is
 * passed. */
static bool script_tick(void *ctx, int64_t now)
{
    struct script_watch *w = ctx;
    /* Past log_bytes the rest would only be read and dropped: a runaway
     * print loop is stopped at once, not left to its wall time. */
    if (script_log_over(w))
        return true;
    if (now >= w->next_cancel) {
        w->next_cancel = now + EXEC_TICK_MS;
        if (exec__cancel_requested(w->run)) {
            w->stop = STOP_CANCEL;
            return true;
        }
        if (w->ask)
            exec__ask_tick(w->run, w->ask, w->proc, now);
    }
    if (script_memory_check(w, now))
        return true;
    if (now < w->next_measure)
        return false;
    w->next_measure = now + EXEC_MEASURE_EVERY_MS;
    const char *limit = exec__disk_over(w->run, w->proc, w->fallback, true, w->why, sizeof w->why);
    if (!limit)
        return false;
    w->stop = !strncmp(limit, "output_", 7) ? STOP_OUTPUT : STOP_WORKSPACE;
    w->run->r->limit = limit;
    return true;
}

/* Stops the run: says why in the log, SIGTERM to all of it, and once the
 * grace is over SIGKILL. */
static void script_stop(void *ctx, enum supervise_end why, int sig)
{
    struct script_watch *w = ctx;
    struct run *run = w->run;
    const struct exec_limits *lim = &run->spec->limits;
    if (sig == SIGKILL || w->stop == STOP_MEMORY) {
        jail_kill_all(w->proc); /* memory: no grace, as a cgroup's OOM kill gives none */
        return;
    }
    if (why == SUPERVISE_DEADLINE)
        w->stop = STOP_WALL;
    char hs[32];
    if (w->stop == STOP_WALL) {
        snprintf(hs, sizeof hs, "%.3g s", (double)lim->wall_ms / 1000.0);
        exec__system_line(run, "[runmyscript] the run passed its wall time limit (timeout = %s) and was stopped", hs);
    } else if (w->stop == STOP_CANCEL) {
        exec__cancelled(run, NULL);
    } else if (w->stop == STOP_WORKSPACE) {
        exec__system_line(run, "[runmyscript] %s; the run was stopped", w->why);
    } else if (!strcmp(run->r->limit, "log_bytes")) {
        /* The log's marker said it. */
    } else {
        if (!strcmp(run->r->limit, "output_bytes"))
            util_human_size(lim->output_bytes, hs, sizeof hs);
        else
            snprintf(hs, sizeof hs, "%llu files", (unsigned long long)lim->output_files);
        exec__system_line(run, "[runmyscript] output/ passed its limit (%s = %s); the run was stopped", run->r->limit,
                          hs);
    }
    jail_signal(w->proc, SIGTERM);
}

/* The disk once the script is over (what it wrote since the last tick
 * counts too), and for a session run that passed a limit of it, what the
 * run wrote removed from the workspace: before jail_finish, whose taking
 * back of the workspace changes the ctime of everything in it. */
static void script_disk_end(struct script_watch *w)
{
    struct run *run = w->run;
    bool crossed = w->stop == STOP_WORKSPACE;
    if (!crossed) {
        const char *limit = exec__disk_over(run, w->proc, w->fallback, false, w->why, sizeof w->why);
        if (limit) {
            crossed = true;
            exec__system_line(run, "[runmyscript] %s by the time the script ended", w->why);
            if (w->stop == STOP_NONE) {
                w->stop = STOP_WORKSPACE;
                run->r->limit = limit;
            }
        }
    }
    if (crossed && run->spec->workspace)
        exec__disk_cut(run, &w->since);
}

/* The result from what we did and what the script did: its times, exit
 * code or signal, the cgroups' counters, the status and the limit. */
static void script_result(struct run *run, struct script_watch *w)
{
    struct result *r = run->r;
    const struct exec_limits *lim = &run->spec->limits;
    const struct rusage *ru = &w->ru;
    r->cpu_ms = (int64_t)ru->ru_utime.tv_sec * 1000 + ru->ru_utime.tv_usec / 1000 +
                (int64_t)ru->ru_stime.tv_sec * 1000 + ru->ru_stime.tv_usec / 1000;
    r->max_rss_kb = ru->ru_maxrss;
    if (WIFEXITED(w->wstatus)) {
        r->exit_code = WEXITSTATUS(w->wstatus);
        r->signal = 0;
    } else if (WIFSIGNALED(w->wstatus)) {
        r->exit_code = -1;
        r->signal = WTERMSIG(w->wstatus);
    }

    jail_finish(w->proc);
    if (w->stop == STOP_WALL) {
        r->status = RESULT_STATUS_TIMEOUT;
        r->limit = "wall_time";
    } else if (w->stop == STOP_CANCEL) {
        r->status = RESULT_STATUS_CANCELLED;
    } else if (w->stop == STOP_OUTPUT) {
        r->status = RESULT_STATUS_OUTPUT_LIMIT;
    } else if (w->stop == STOP_WORKSPACE) {
        r->status = RESULT_STATUS_WORKSPACE_LIMIT;
    } else if (r->signal == SIGXCPU || (r->signal == SIGKILL && lim->cpu_ms > 0 && r->cpu_ms >= lim->cpu_ms)) {
        r->status = RESULT_STATUS_TIMEOUT;
        r->limit = "cpu_time";
        exec__system_line(run, "[runmyscript] the script used up its CPU time limit (cpu_time = %.3g s) and was killed",
                          (double)lim->cpu_ms / 1000.0);
    } else if (w->proc->memory_breached) {
        r->status = RESULT_STATUS_MEMORY;
        r->limit = "memory";
        char hs[32];
        util_human_size(lim->memory, hs, sizeof hs);
        exec__system_line(run, "[runmyscript] the run used up its memory limit (memory = %s)", hs);
    } else if (w->proc->unreported && w->stop == STOP_NONE) {
        /* Nobody here stopped it, and init would have said how the script
         * ended: something outside killed init (a warm run's zygote died
         * under it). The script's outcome is unknown: not its error. */
        r->status = RESULT_STATUS_SANDBOX_ERROR;
        exec__set_error(r, "the run's sandbox was killed from outside while the script ran (%s); its outcome is unknown, "
                           "run it again", r->warm ? "its warm pool's zygote died" : "its init was killed");
    } else if (r->exit_code == 0) {
        r->status = RESULT_STATUS_OK;
    } else {
        r->status = RESULT_STATUS_ERROR;
        if (w->proc->pids_breached)
            r->limit = "processes";
    }
}

int exec__run_script(struct run *run, const char *env_dir)
{
    const struct exec_spec *spec = run->spec;
    struct result *r = run->r;
    struct jail_proc proc = {.pid = -1, .pidfd = -1, .status_fd = -1, .uid_lock = -1};
    struct exec_net net = {.sv = {-1, -1}};
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    cleanup_fd int in_fd = -1;
    struct exec_ask ask = {.rfd = -1, .wfd = -1};
    bool asking = false;
    int rc;

    if (exec__ask_wanted(run)) {
        rc = exec__ask_open(run, &ask);
        if (rc == 0) {
            asking = true;
            in_fd = ask.rfd;
            ask.rfd = -1;
        } else {
            log_msg(LOG_LVL_INFO, "the run's stdin is its input alone: %s", strerror(-rc));
        }
    }
    if (in_fd < 0)
        in_fd = openat(run->run_fd, "input", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in_fd < 0 || pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
        rc = -errno;
        exec__set_error(r, "setting up the script's input and output: %s", strerror(-rc));
        goto out;
    }
    exec__phase(run, EXEC_PHASE_RUNNING, NULL);
    run->display = !run->kernel && !run->script && wants_display(spec); /* a notebook's driver shows its cells itself */
    int64_t t_start = util_now_ms();
    /* Before the script can write anything: the files it writes outside
     * output/ are those modified since (the file system's clock is the
     * coarse one, so this is too). */
    struct timespec before;
    clock_gettime(CLOCK_REALTIME_COARSE, &before);
    /* A session run's start, for what a run past a disk limit loses. */
    struct jail_mark mark = {.fd = spec->workspace ? exec__disk_mark_open(run) : -1,
                             .wait = spec->workspace && exec__disk_has_files(spec->workspace)};
    rc = exec__net_begin(run, &net);
    if (rc == 0)
        rc = exec__start_script(run, env_dir, in_fd, out_pipe[1], err_pipe[1], mark.fd >= 0 ? &mark : NULL, &proc);
    if (mark.fd >= 0)
        close(mark.fd);
    log_msg(LOG_LVL_DEBUG, "timing: jail start %lld ms", (long long)(util_now_ms() - t_start));
    close(out_pipe[1]);
    close(err_pipe[1]);
    out_pipe[1] = err_pipe[1] = -1;
    if (rc < 0)
        goto out;
    int64_t t0 = util_now_ms();
    struct timespec since;
    exec__disk_mark(run, &mark, &since);
    run->started = before, run->has_started = true;
    rc = util_set_nonblock(out_pipe[0]);
    if (rc == 0)
        rc = util_set_nonblock(err_pipe[0]);
    if (rc < 0) {
        exec__set_error(r, "setting up the script's output: %s", strerror(-rc));
        jail_kill_all(&proc);
        goto out;
    }

    struct script_watch w = {.run = run, .proc = &proc, .stop = STOP_NONE, .t0 = t0, .since = since,
                             .fallback = proc.mode == JAIL_MODE_RLIMITS, .next_measure = t0 + EXEC_MEASURE_EVERY_MS,
                             .next_memory = t0 + JAIL_MEMORY_WATCH_MS, .ask = asking ? &ask : NULL};
    close(in_fd); /* the script's end: a reader of ours would hold its EOF back */
    in_fd = -1;
    struct supervise s = {
        .fds = {{out_pipe[0], script_stdout, &w}, {err_pipe[0], script_stderr, &w}}, /* stdout first in a wake-up */
        .n_fds = 2,
        .reap = script_reap,
        .pidfd = proc.pidfd,
        .drain_ms = EXEC_DRAIN_MS,
        .deadline = t0 + spec->limits.wall_ms,
        .tick = script_tick,
        .tick_ms = EXEC_TICK_MS,
        .stop = script_stop,
        .grace_ms = spec->limits.kill_grace_ms,
        .ctx = &w,
    };
    enum supervise_end end;
    rc = supervise_run(&s, &end);
    if (rc < 0) {
        exec__set_error(r, "poll: %s", strerror(-rc));
        jail_kill_all(&proc);
        goto out;
    }
    if (run->display)
        take_value(run); /* before the disk's last measure: it is ours */
    script_disk_end(&w);
    if (w.stop == STOP_NONE)
        discard(script_log_over(&w)); /* a script that ended right after its flood */
    script_result(run, &w);
    rc = 0;
out:
    if (proc.pid > 0 && !proc.reaped) {
        jail_kill_all(&proc);
    }
    exec__net_end(run, &net); /* the run is gone: what its connections carried is all there */
    jail_proc_free(&proc);
    if (asking)
        exec__ask_close(run, &ask, NULL);
    for (int i = 0; i < 2; i++) {
        if (out_pipe[i] >= 0)
            close(out_pipe[i]);
        if (err_pipe[i] >= 0)
            close(err_pipe[i]);
    }
    return rc;
}

/* A script that ran out of memory under RLIMIT_AS usually dies of a
 * MemoryError traceback, so the fallback reads its stderr's last lines. */
bool exec__died_of_memory(const struct result *r)
{
    const struct result_log *log = &r->log;
    if (r->status != RESULT_STATUS_ERROR)
        return false;
    for (size_t i = log->n_chunks; i-- > 0;) {
        const struct result_chunk *c = &log->chunks[i];
        if (c->stream == RESULT_STREAM_SYSTEM)
            continue;
        if (c->stream != RESULT_STREAM_STDERR)
            return false;
        /* The last line of the last stderr chunk. */
        const char *s = log->buf.data + c->off;
        size_t n = c->len;
        while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
            n--;
        size_t start = n;
        while (start && s[start - 1] != '\n')
            start--;
        static const char memory_error[] = "MemoryError";
        return n - start >= sizeof memory_error - 1 && !strncmp(s + start, memory_error, sizeof memory_error - 1);
    }
    return false;
}
