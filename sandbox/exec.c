/* exec.c: exec_run(), the one executor every front door calls.
 *
 * A run goes: requirements checked (deps: the explicit list, the PEP 723
 * block) -> workspace (STATE/runs/RUNID, script.py, input, output/) ->
 * environment (deps: imports detected, the environment for the set found
 * or built once, held for the run) -> the script under its limits (jail),
 * its stdout and stderr read through two pipes into one ordered log ->
 * artifacts and zip -> result.json. The loop that watches the script wakes on output, on the
 * script's exit (a pidfd) and on a tick that checks the wall deadline, the
 * output directory's size and cancellation.
 *
 * Stream order: chunks are logged in the order the reader gets them. With
 * unbuffered Python that is the order of the writes, except for writes to
 * the two streams closer together than the reader wakes up, which can come
 * out grouped by stream. */
#include "config.h"

#include "executor.h"
#include "exec_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit.h"
#include "artifacts.h"
#include "deps.h"
#include "fetch.h"
#include "jail.h"
#include "result.h"
#include "workspace.h"

#define EXEC_TICK_MS 100           /* wall deadline, cancellation */
#define EXEC_MEASURE_EVERY_MS 500  /* output directory size while running */
#define EXEC_DRAIN_MS 2000         /* reading what is left after the end */
#define EXEC_INSTALL_LOG_MAX (256 * 1024) /* bytes of installer output kept in the result */
#define EXEC_INSTALL_TAIL_LINES 10        /* of them, shown in the log when an install fails */

/* ---------------------------------------------------------------- names */

const char *exec_phase_name(enum exec_phase p)
{
    static const char *const names[] = {"queued", "resolving", "installing", "running", "collecting", "done"};
    return (size_t)p < ARRAY_SIZE(names) ? names[p] : "unknown";
}

const char *exec_env_cache_name(enum exec_env_cache c)
{
    static const char *const names[] = {"none", "hit", "built"};
    return (size_t)c < ARRAY_SIZE(names) ? names[c] : "unknown";
}

const char *exec_stream_name(enum exec_stream s)
{
    static const char *const names[] = {"stdout", "stderr", "system"};
    return (size_t)s < ARRAY_SIZE(names) ? names[s] : "unknown";
}

const char *exec_status_name(enum exec_status s)
{
    static const char *const names[] = {"ok",        "error",          "timeout",   "memory",
                                        "output_limit", "install_failed", "cancelled", "sandbox_error"};
    return (size_t)s < ARRAY_SIZE(names) ? names[s] : "sandbox_error";
}

/* -------------------------------------------------------------- results */

void exec_result_init(struct exec_result *r)
{
    memset(r, 0, sizeof *r);
    r->exit_code = -1;
    r->status = EXEC_STATUS_SANDBOX_ERROR;
    exec_log_init(&r->log, 1 * MIB);
}

void exec_result_free(struct exec_result *r)
{
    free(r->run_dir);
    free(r->workdir);
    free(r->output_dir);
    exec_log_free(&r->log);
    for (size_t i = 0; i < r->n_requirements; i++)
        free(r->requirements[i]);
    free(r->requirements);
    free(r->install_log);
    free(r->failed_requirement);
    for (size_t i = 0; i < r->n_artifacts; i++) {
        free(r->artifacts[i].path);
        free(r->artifacts[i].mime);
        free(r->artifacts[i].summary);
    }
    free(r->artifacts);
    free(r->zip_path);
    free(r->error);
    memset(r, 0, sizeof *r);
}

void exec_spec_init(struct exec_spec *spec, const struct exec_config *cfg)
{
    memset(spec, 0, sizeof *spec);
    spec->cfg = cfg;
    spec->limits = cfg->limits;
    spec->auto_deps = cfg->auto_deps;
}

#define EXEC_ORPHAN_AGE_MS 1000 /* see exec_mark_orphans */

/* ------------------------------------------------------------- the run */

struct run {
    const struct exec_spec *spec;
    const struct exec_sink *sink;
    struct exec_result *r;
    int run_fd;    /* the run directory */
    int out_fd;    /* output/ */
    struct dbuf install_log;
    bool install_log_cut;
    bool installer_ran;
    int session_lock; /* the session workspace, flock'd for the run */
    struct admit_ticket ticket; /* the run slot (or queue place) it holds */
};

static void set_error(struct exec_result *r, const char *fmt, ...) printf_like(2, 3);
static void set_error(struct exec_result *r, const char *fmt, ...)
{
    va_list ap;
    free(r->error);
    va_start(ap, fmt);
    if (vasprintf(&r->error, fmt, ap) < 0)
        r->error = NULL;
    va_end(ap);
    r->status = EXEC_STATUS_SANDBOX_ERROR;
}

static void phase(struct run *run, enum exec_phase p, const char *detail)
{
    if (run->sink && run->sink->phase)
        run->sink->phase(run->sink->ctx, p, detail);
}

static void emit(struct run *run, enum exec_stream stream, const char *data, size_t len)
{
    bool marker = false;
    int kept = exec_log_append(&run->r->log, stream, data, len, &marker);
    if (kept < 0)
        return;
    if (run->sink && run->sink->output) {
        if (kept > 0)
            run->sink->output(run->sink->ctx, stream, data, (size_t)kept);
        if (marker) {
            const struct exec_chunk *c = &run->r->log.chunks[run->r->log.n_chunks - 1];
            run->sink->output(run->sink->ctx, EXEC_STREAM_SYSTEM, run->r->log.buf.data + c->off, c->len);
        }
    }
}

static void system_line(struct run *run, const char *fmt, ...) printf_like(2, 3);
static void system_line(struct run *run, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    line[n] = '\0';
    /* Start on a new line when the script's output ended mid-line. */
    const struct exec_log *log = &run->r->log;
    if (log->buf.len && log->buf.data[log->buf.len - 1] != '\n')
        emit(run, EXEC_STREAM_SYSTEM, "\n", 1);
    emit(run, EXEC_STREAM_SYSTEM, line, (size_t)n);
}

/* Makes the run directory, script.py, input and output/. */
static int make_workspace(struct run *run)
{
    const struct exec_spec *spec = run->spec;
    struct exec_result *r = run->r;
    char *dir = NULL;
    int rc = ws_run_create(spec->cfg->state_dir, spec->cfg->node_id, r->run_id, &dir);
    if (rc < 0) {
        set_error(r, "cannot create a run directory under %s/runs: %s", spec->cfg->state_dir, strerror(-rc));
        return rc;
    }
    r->run_dir = dir;
    log_set_id(r->run_id);
    run->run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (run->run_fd < 0) {
        rc = -errno;
        set_error(r, "cannot open the run directory: %s", strerror(errno));
        return rc;
    }
    /* Held until exec_run returns: a run directory without result.json
     * whose lock is free belongs to a process that died (exec_mark_orphans). */
    if (flock(run->run_fd, LOCK_EX | LOCK_NB) < 0)
        log_msg(LOG_LVL_WARN, "cannot lock the run directory: %s", strerror(errno));
    /* A fresh directory: plain exclusive creates, no fsync (after a crash
     * the run is gone anyway). */
    rc = util_write_file_new(run->run_fd, "script.py", spec->code, spec->code_len, 0644);
    if (rc == 0)
        rc = util_write_file_new(run->run_fd, "input", spec->input ? spec->input : "", spec->input_len, 0644);
    if (rc < 0) {
        set_error(r, "cannot write the script and its input into the run directory: %s", strerror(-rc));
        return rc;
    }
    r->workdir = strdup(spec->workspace ? spec->workspace : dir);
    if (!r->workdir || asprintf(&r->output_dir, "%s/output", r->workdir) < 0) {
        r->output_dir = NULL;
        set_error(r, "out of memory");
        return -ENOMEM;
    }
    if (mkdir(r->output_dir, 0755) < 0 && errno != EEXIST) {
        rc = -errno;
        set_error(r, "cannot create %s: %s", r->output_dir, strerror(errno));
        return rc;
    }
    run->out_fd = open(r->output_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (run->out_fd < 0) {
        rc = -errno;
        set_error(r, "cannot open %s: %s", r->output_dir, strerror(errno));
        return rc;
    }
    return 0;
}

/* Where things are as the script sees them, for one isolation mode. */
struct layout {
    char *vars[12];               /* the environment: the allowlist of doc/architecture.md */
    const char *envp[13];
    char *python, *script, *cwd;
    struct jail_bind binds[4];
    size_t n_binds;
    char *mounts;                 /* host path of the workspace's mounts/ */
    const char *chown[2];
    size_t n_chown;
};

static void layout_free(struct layout *l)
{
    for (size_t i = 0; i < ARRAY_SIZE(l->vars); i++)
        free(l->vars[i]);
    free(l->python);
    free(l->script);
    free(l->cwd);
    free(l->mounts);
    memset(l, 0, sizeof *l);
}

/* mounts/ of the workspace (mount_file's files) is read-only to scripts.
 * A session's workspace always gets one, so that a script can never own a
 * writable mounts/ into which a later mount_file would write. Returns true
 * when the workspace has it as a real directory (not a symlink). */
static bool mounts_dir(const char *workdir, bool make)
{
    cleanup_fd int wfd = open(workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wfd < 0)
        return false;
    if (make && mkdirat(wfd, FETCH_MOUNTS_DIR, 0755) < 0 && errno != EEXIST)
        log_msg(LOG_LVL_WARN, "cannot make %s/%s: %s", workdir, FETCH_MOUNTS_DIR, strerror(errno));
    struct stat st;
    return fstatat(wfd, FETCH_MOUNTS_DIR, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/* In the namespaces: the workspace at /work, its mounts/ read-only over
 * /work/mounts, the environment at /env, and for a session run (whose
 * workspace is not its run directory) the run directory read-only at /job.
 * HOME and TMPDIR on the private /tmp. In the fallback: the host's paths,
 * and the files of mounts/ made read-only (chmod a-w). As root, mounts/
 * keeps the server's uid (jail_opts.chown_keep) while the rest of the
 * workspace becomes the run's, so that holds; run unprivileged, the
 * fallback's script has the server's uid and could put the bits back. */
static int layout_make(struct layout *l, enum jail_mode mode, const struct exec_result *r, const char *env_dir,
                       bool session)
{
    const char *work, *job, *env, *home, *tmp;
    char hbuf[4096], tbuf[4096];
    memset(l, 0, sizeof *l);
    bool has_mounts = mounts_dir(r->workdir, session);
    if (mode == JAIL_MODE_NAMESPACES) {
        work = "/work";
        job = session ? "/job" : "/work";
        env = "/env";
        home = "/tmp/home";
        tmp = "/tmp";
        l->binds[l->n_binds++] = (struct jail_bind){r->workdir, "/work", JAIL_BIND_RW};
        if (session)
            l->binds[l->n_binds++] = (struct jail_bind){r->run_dir, "/job", 0};
        l->binds[l->n_binds++] = (struct jail_bind){env_dir, "/env", 0};
        if (has_mounts) {
            if (asprintf(&l->mounts, "%s/%s", r->workdir, FETCH_MOUNTS_DIR) < 0) {
                l->mounts = NULL;
                goto oom;
            }
            /* Read-only, and neither end reached through a symlink: the
             * workspace is the script's to rearrange between runs. */
            l->binds[l->n_binds++] = (struct jail_bind){l->mounts, "/work/" FETCH_MOUNTS_DIR, JAIL_BIND_NOFOLLOW};
        }
    } else {
        work = r->workdir;
        job = r->run_dir;
        env = env_dir;
        snprintf(hbuf, sizeof hbuf, "%s/home", r->run_dir);
        snprintf(tbuf, sizeof tbuf, "%s/tmp", r->run_dir);
        home = hbuf;
        tmp = tbuf;
        if (has_mounts) {
            cleanup_fd int wfd = open(r->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int rc = wfd < 0 ? -errno : fetch_mounts_chmod_ro(wfd);
            if (rc < 0)
                log_msg(LOG_LVL_WARN, "making mounts/ read-only: %s", strerror(-rc));
        }
    }
    /* As root, the run's own host uid must be able to write (both modes). */
    l->chown[l->n_chown++] = r->run_dir;
    if (session)
        l->chown[l->n_chown++] = r->workdir;
    int n = 0;
    if (asprintf(&l->vars[n++], "PATH=%s/bin:/usr/local/bin:/usr/bin:/bin", env) < 0 ||
        asprintf(&l->vars[n++], "HOME=%s", home) < 0 || asprintf(&l->vars[n++], "LANG=C.UTF-8") < 0 ||
        asprintf(&l->vars[n++], "TMPDIR=%s", tmp) < 0 || asprintf(&l->vars[n++], "PYTHONUNBUFFERED=1") < 0 ||
        asprintf(&l->vars[n++], "SCRIPT_INPUT=%s/input", job) < 0 ||
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

/* Reads what is available on fd into the log; returns false at EOF. */
static bool pump(struct run *run, int fd, enum exec_stream stream)
{
    char buf[65536];
    for (int i = 0; i < 16; i++) {
        ssize_t r = read(fd, buf, sizeof buf);
        if (r > 0) {
            emit(run, stream, buf, (size_t)r);
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return true;
        return false; /* EOF or error */
    }
    return true;
}

int exec_cancel(const char *state_dir, const char *run_id)
{
    if (!ws_id_valid(run_id))
        return -ENOENT;
    cleanup_free char *dir = ws_run_path(state_dir, run_id);
    if (!dir)
        return -ENOMEM;
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
    if (faccessat(dfd, "result.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
        return -EALREADY;
    int fd = openat(dfd, "cancel", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    close(fd);
    return 0;
}

static bool cancel_requested(struct run *run)
{
    if (run->sink && run->sink->cancelled && run->sink->cancelled(run->sink->ctx))
        return true;
    /* Another process (any worker) cancels by creating RUN/cancel. */
    return faccessat(run->run_fd, "cancel", F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Why a run was stopped by us. */
enum stop_reason { STOP_NONE, STOP_WALL, STOP_OUTPUT, STOP_CANCEL };

/* Set once a start found that this host cannot make the namespaces, so
 * that later runs of this process go straight to the fallback. */
static bool namespaces_unavailable;

/* The fallback is taken only when the config allows it: isolation = auto
 * and require_isolation = off. */
static bool may_fall_back(const struct exec_config *cfg)
{
    return cfg->isolation == EXEC_ISOLATION_AUTO && !cfg->require_isolation;
}

/* Starts the script in the mode the config and the host allow. */
static int start_script(struct run *run, const char *env_dir, int in_fd, int out_w, int err_w, struct jail_proc *proc)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_config *cfg = spec->cfg;
    struct exec_result *r = run->r;
    enum jail_mode mode = jail_mode_for(cfg->isolation);
    char err[256] = "";
    int rc;

    bool fallback_ok = may_fall_back(cfg);
    if (mode == JAIL_MODE_NAMESPACES && namespaces_unavailable && fallback_ok)
        mode = JAIL_MODE_RLIMITS;
    for (;;) {
        struct layout l;
        if (mode == JAIL_MODE_RLIMITS) {
            rc = jail_prepare_rlimits(r->run_dir);
            if (rc < 0) {
                set_error(r, "preparing the run directory: %s", strerror(-rc));
                return rc;
            }
        }
        rc = layout_make(&l, mode, r, env_dir, spec->workspace != NULL);
        if (rc < 0) {
            set_error(r, "out of memory");
            return rc;
        }
        const char *argv[] = {l.python, l.script, NULL};
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
            .limits = &spec->limits,
            .network = cfg->script_network,
            .state_dir = cfg->state_dir,
            .tag = r->run_id,
            .uid_base = cfg->uid_base,
            .uid_count = cfg->uid_count,
            .chown_paths = l.chown,
            .n_chown_paths = l.n_chown,
            .chown_keep = FETCH_MOUNTS_DIR,
        };
        rc = jail_start(&o, proc, err, sizeof err);
        layout_free(&l);
        if (rc == 0) {
            r->isolation = jail_mode_name(mode);
            return 0;
        }
        if (mode == JAIL_MODE_NAMESPACES && proc->unavailable) {
            namespaces_unavailable = true;
            if (!fallback_ok) {
                set_error(r,
                          "this host cannot isolate runs (%s) and require_isolation is on; "
                          "set require_isolation = off to run with the rlimits fallback",
                          err);
                return rc;
            }
            log_msg(LOG_LVL_WARN, "no namespaces here (%s): running with the rlimits fallback", err);
            mode = JAIL_MODE_RLIMITS;
            continue;
        }
        set_error(r, "could not start the script: %s", err);
        return rc;
    }
}

static int run_script(struct run *run, const char *env_dir)
{
    const struct exec_spec *spec = run->spec;
    struct exec_result *r = run->r;
    struct jail_proc proc = {.pid = -1, .pidfd = -1, .status_fd = -1, .uid_lock = -1};
    int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
    cleanup_fd int in_fd = -1;
    int rc;

    in_fd = openat(run->run_fd, "input", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in_fd < 0 || pipe2(out_pipe, O_CLOEXEC) < 0 || pipe2(err_pipe, O_CLOEXEC) < 0) {
        rc = -errno;
        set_error(r, "setting up the script's input and output: %s", strerror(errno));
        goto out;
    }
    phase(run, EXEC_PHASE_RUNNING, NULL);
    int64_t t_start = util_now_ms();
    rc = start_script(run, env_dir, in_fd, out_pipe[1], err_pipe[1], &proc);
    log_msg(LOG_LVL_DEBUG, "timing: jail start %lld ms", (long long)(util_now_ms() - t_start));
    close(out_pipe[1]);
    close(err_pipe[1]);
    out_pipe[1] = err_pipe[1] = -1;
    if (rc < 0)
        goto out;
    int64_t t0 = util_now_ms();
    if (util_set_nonblock(out_pipe[0]) < 0 || util_set_nonblock(err_pipe[0]) < 0) {
        rc = -errno;
        set_error(r, "setting up the script's output: %s", strerror(errno));
        jail_kill_all(&proc);
        goto out;
    }

    const struct exec_limits *lim = &spec->limits;
    int64_t deadline = t0 + lim->wall_ms;
    int64_t kill_at = -1;            /* SIGKILL time once SIGTERM was sent */
    int64_t next_measure = t0 + EXEC_MEASURE_EVERY_MS;
    int64_t drain_until = -1;        /* after the end: read what is left */
    enum stop_reason stop = STOP_NONE;
    bool out_open = true, err_open = true, exited = false;
    int wstatus = 0;
    struct rusage ru = {0};

    while (out_open || err_open || !exited) {
        int64_t now = util_now_ms();
        if (exited && drain_until >= 0 && now >= drain_until)
            break;
        if (!exited && stop == STOP_NONE) {
            const char *why = NULL;
            if (now >= deadline) {
                stop = STOP_WALL;
                why = "wall";
            } else if (cancel_requested(run)) {
                stop = STOP_CANCEL;
                why = "cancel";
            } else if (now >= next_measure) {
                uint64_t files = 0, bytes = 0;
                next_measure = now + EXEC_MEASURE_EVERY_MS;
                if (art_measure(run->out_fd, lim->output_files, lim->output_bytes, &files, &bytes) == 0 &&
                    ((lim->output_files && files > lim->output_files) ||
                     (lim->output_bytes && bytes > lim->output_bytes))) {
                    stop = STOP_OUTPUT;
                    r->limit = (lim->output_files && files > lim->output_files) ? "output_files" : "output_bytes";
                    why = "output";
                }
            }
            if (why) {
                char secs[32];
                if (stop == STOP_WALL) {
                    snprintf(secs, sizeof secs, "%.3g s", (double)lim->wall_ms / 1000.0);
                    system_line(run, "[runmyscript] the run passed its wall time limit (timeout = %s) and was stopped",
                                secs);
                } else if (stop == STOP_CANCEL) {
                    system_line(run, "[runmyscript] the run was cancelled");
                } else {
                    char hs[32];
                    if (!strcmp(r->limit, "output_bytes"))
                        util_human_size(lim->output_bytes, hs, sizeof hs);
                    else
                        snprintf(hs, sizeof hs, "%llu files", (unsigned long long)lim->output_files);
                    system_line(run, "[runmyscript] output/ passed its limit (%s = %s); the run was stopped", r->limit,
                                hs);
                }
                jail_signal(&proc, SIGTERM);
                kill_at = now + lim->kill_grace_ms;
            }
        }
        if (kill_at >= 0 && now >= kill_at) {
            jail_kill_all(&proc);
            kill_at = -1;
        }

        struct pollfd pfd[3];
        int np = 0, i_out = -1, i_err = -1, i_pid = -1;
        if (out_open) {
            i_out = np;
            pfd[np++] = (struct pollfd){out_pipe[0], POLLIN, 0};
        }
        if (err_open) {
            i_err = np;
            pfd[np++] = (struct pollfd){err_pipe[0], POLLIN, 0};
        }
        if (!exited && proc.pidfd >= 0) {
            i_pid = np;
            pfd[np++] = (struct pollfd){proc.pidfd, POLLIN, 0};
        }
        int64_t wait = EXEC_TICK_MS;
        if (!exited && stop == STOP_NONE && deadline - now < wait)
            wait = deadline - now;
        if (kill_at >= 0 && kill_at - now < wait)
            wait = kill_at - now;
        if (drain_until >= 0 && drain_until - now < wait)
            wait = drain_until - now;
        if (wait < 0)
            wait = 0;
        int pr = poll(pfd, (nfds_t)np, (int)wait);
        if (pr < 0 && errno != EINTR) {
            rc = -errno;
            set_error(r, "poll: %s", strerror(errno));
            jail_kill_all(&proc);
            goto out;
        }
        /* Order within one wake-up: stdout first, then stderr. */
        if (pr > 0 && i_out >= 0 && pfd[i_out].revents)
            out_open = pump(run, out_pipe[0], EXEC_STREAM_STDOUT);
        if (pr > 0 && i_err >= 0 && pfd[i_err].revents)
            err_open = pump(run, err_pipe[0], EXEC_STREAM_STDERR);
        if (!exited && (proc.pidfd < 0 || (pr > 0 && i_pid >= 0 && pfd[i_pid].revents))) {
            int rr = jail_try_reap(&proc, &wstatus, &ru);
            if (rr != 0) {
                exited = true;
                r->duration_ms = util_now_ms() - t0;
                /* The first process is done: nothing of the run may stay.
                 * What the others wrote before they died is still read. */
                jail_kill_all(&proc);
                discard(jail_try_reap(&proc, &wstatus, &ru)); /* kill_all reaped it */
                drain_until = util_now_ms() + EXEC_DRAIN_MS;
            }
        }
    }
    if (!exited) {
        jail_kill_all(&proc);
        discard(jail_try_reap(&proc, &wstatus, &ru)); /* kill_all reaped it */
        r->duration_ms = util_now_ms() - t0;
    }

    r->cpu_ms = (int64_t)ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000 + (int64_t)ru.ru_stime.tv_sec * 1000 +
                ru.ru_stime.tv_usec / 1000;
    r->max_rss_kb = ru.ru_maxrss;
    if (WIFEXITED(wstatus)) {
        r->exit_code = WEXITSTATUS(wstatus);
        r->signal = 0;
    } else if (WIFSIGNALED(wstatus)) {
        r->exit_code = -1;
        r->signal = WTERMSIG(wstatus);
    }

    /* The cgroups' counters, then the status from what we did and what the
     * script did. */
    jail_finish(&proc);
    if (stop == STOP_WALL) {
        r->status = EXEC_STATUS_TIMEOUT;
        r->limit = "wall_time";
    } else if (stop == STOP_CANCEL) {
        r->status = EXEC_STATUS_CANCELLED;
    } else if (stop == STOP_OUTPUT) {
        r->status = EXEC_STATUS_OUTPUT_LIMIT;
    } else if (r->signal == SIGXCPU || (r->signal == SIGKILL && lim->cpu_ms > 0 && r->cpu_ms >= lim->cpu_ms)) {
        r->status = EXEC_STATUS_TIMEOUT;
        r->limit = "cpu_time";
        system_line(run, "[runmyscript] the script used up its CPU time limit (cpu_time = %.3g s) and was killed",
                    (double)lim->cpu_ms / 1000.0);
    } else if (proc.memory_breached) {
        r->status = EXEC_STATUS_MEMORY;
        r->limit = "memory";
        char hs[32];
        util_human_size(lim->memory, hs, sizeof hs);
        system_line(run, "[runmyscript] the run used up its memory limit (memory = %s)", hs);
    } else if (r->exit_code == 0) {
        r->status = EXEC_STATUS_OK;
    } else {
        r->status = EXEC_STATUS_ERROR;
        if (proc.pids_breached)
            r->limit = "processes";
    }
    rc = 0;
out:
    if (proc.pid > 0 && !proc.reaped) {
        jail_kill_all(&proc);
    }
    jail_proc_free(&proc);
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
static bool died_of_memory(const struct exec_result *r)
{
    const struct exec_log *log = &r->log;
    if (r->status != EXEC_STATUS_ERROR)
        return false;
    for (size_t i = log->n_chunks; i-- > 0;) {
        const struct exec_chunk *c = &log->chunks[i];
        if (c->stream == EXEC_STREAM_SYSTEM)
            continue;
        if (c->stream != EXEC_STREAM_STDERR)
            return false;
        /* The last line of the last stderr chunk. */
        const char *s = log->buf.data + c->off;
        size_t n = c->len;
        while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
            n--;
        size_t start = n;
        while (start && s[start - 1] != '\n')
            start--;
        return n - start >= 11 && !strncmp(s + start, "MemoryError", 11);
    }
    return false;
}

/* Files written up to file_size stop there (EFBIG): one that is exactly at
 * the limit is taken as a breach. */
static bool hit_file_size(const struct exec_result *r, uint64_t file_size)
{
    for (size_t i = 0; i < r->n_artifacts; i++)
        if (file_size && r->artifacts[i].size >= file_size)
            return true;
    return false;
}

static int collect(struct run *run)
{
    struct exec_result *r = run->r;
    const struct exec_limits *lim = &run->spec->limits;
    struct art_list l;
    char err[256] = "";

    phase(run, EXEC_PHASE_COLLECTING, NULL);
    int rc = art_collect(run->out_fd, lim->output_files, lim->output_bytes, &l);
    if (rc < 0) {
        set_error(r, "listing output/: %s", strerror(-rc));
        return rc;
    }
    r->artifacts = l.v;
    r->n_artifacts = l.n;
    r->artifacts_skipped = l.skipped;
    if (l.limit && r->status != EXEC_STATUS_CANCELLED && r->status != EXEC_STATUS_TIMEOUT) {
        if (r->status != EXEC_STATUS_OUTPUT_LIMIT)
            system_line(run, "[runmyscript] output/ holds more than its limit (%s); files past it are not listed",
                        l.limit);
        r->status = EXEC_STATUS_OUTPUT_LIMIT;
        r->limit = l.limit;
    }
    if (r->status == EXEC_STATUS_ERROR && hit_file_size(r, lim->file_size)) {
        r->status = EXEC_STATUS_OUTPUT_LIMIT;
        r->limit = "file_size";
    }
    if (l.n == 0)
        return 0;
    /* A session's output/ is shared by its runs, and the next one may
     * rewrite a file this one listed: the run keeps a copy in its own
     * output/, which its URLs and its zip serve. */
    cleanup_fd int snap_fd = -1;
    int zip_src = run->out_fd;
    if (run->spec->workspace) {
        if (mkdirat(run->run_fd, "output", 0755) < 0 ||
            (snap_fd = openat(run->run_fd, "output", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
            rc = -errno;
            set_error(r, "creating the run's copy of output/: %s", strerror(errno));
            return rc;
        }
        rc = art_snapshot(run->out_fd, &l, snap_fd, err, sizeof err);
        r->n_artifacts = l.n;
        r->artifacts_skipped = l.skipped;
        if (rc < 0) {
            set_error(r, "%s", err);
            return rc;
        }
        if (l.n == 0)
            return 0;
        zip_src = snap_fd;
    }
    rc = art_zip(zip_src, &l, run->run_fd, "artifacts.zip", err, sizeof err);
    if (rc < 0) {
        /* The files are listed and reachable one by one; only the zip is
         * missing, and it is never presented as complete. */
        log_msg(LOG_LVL_ERROR, "zip failed: %s", err);
        system_line(run, "[runmyscript] the zip of the artifacts could not be made: %s", err);
        return 0;
    }
    r->has_zip = true;
    if (asprintf(&r->zip_path, "%s/artifacts.zip", r->run_dir) < 0)
        r->zip_path = NULL;
    return 0;
}

/* ---------------------------------------------------------- requirements */

/* The interpreter's facts and the declared requirements (the explicit
 * list, the PEP 723 block), checked. -EINVAL: refused, why says why;
 * another -errno: the service failed. */
static int check_deps(const struct exec_spec *spec, struct deps_python *info, struct deps_set *set, char *why,
                      size_t whylen)
{
    const struct exec_config *cfg = spec->cfg;
    int rc = deps_python_info(cfg->state_dir, cfg->python, info, why, whylen);
    if (rc < 0)
        return rc == -EINVAL ? -EIO : rc;
    return deps_declared(&cfg->deps, spec->requirements, spec->n_requirements, spec->code, spec->code_len, info,
                         set, why, whylen);
}

int exec_check_requirements(const struct exec_spec *spec, char *why, size_t whylen)
{
    struct deps_python info;
    struct deps_set set = {0};
    int rc = check_deps(spec, &info, &set, why, whylen);
    deps_set_free(&set);
    deps_python_free(&info);
    return rc;
}

static void on_install_line(void *ctx, const char *line)
{
    struct run *run = ctx;
    size_t n = strlen(line);
    if (!run->install_log_cut) {
        if (run->install_log.len + n + 1 > EXEC_INSTALL_LOG_MAX) {
            static const char cut[] = "[runmyscript] the installer's output is cut here (256 KiB)\n";
            run->install_log_cut = true;
            discard(dbuf_append(&run->install_log, cut, sizeof cut - 1)); /* the buffer has room for it */
        } else if (dbuf_append(&run->install_log, line, n) < 0 || dbuf_append(&run->install_log, "\n", 1) < 0) {
            run->install_log_cut = true;
        }
    }
    if (run->sink && run->sink->install_line)
        run->sink->install_line(run->sink->ctx, line);
}

static void on_installing(void *ctx, const char *names)
{
    struct run *run = ctx;
    run->installer_ran = true;
    phase(run, EXEC_PHASE_INSTALLING, names);
}

static bool has_detected(const struct deps_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].source == DEPS_SRC_IMPORT)
            return true;
    return false;
}

/* Finds the environment of the run: the base one when the script needs
 * nothing past the standard library, else the one for its requirements,
 * from the cache or built now, held in env for the run. An installer that
 * fails is the run's status (install_failed; then 0 and *env_dir NULL). */
static int prepare_env(struct run *run, const struct deps_python *info, struct deps_set *set, const char *base,
                       struct deps_env *env, const char **env_dir)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_config *cfg = spec->cfg;
    struct exec_result *r = run->r;
    /* The installer's jail: the runs' mode and fallback policy, the default
     * limits (an installer needs more than a user may give a script), the
     * run's tag and the uid range. */
    struct exec_limits tool_limits;
    exec_limits_default(&tool_limits);
    struct jail_tool tool = {
        .o = {
            .mode = namespaces_unavailable && may_fall_back(cfg) ? JAIL_MODE_RLIMITS : jail_mode_for(cfg->isolation),
            .limits = &tool_limits,
            .state_dir = cfg->state_dir,
            .tag = r->run_id,
            .uid_base = cfg->uid_base,
            .uid_count = cfg->uid_count,
            .interpreter = cfg->python,
        },
        .may_fall_back = may_fall_back(cfg),
    };
    struct deps_install_io io = {&tool, on_install_line, on_installing, run};
    char err[1024] = "";
    int rc = 0;

    *env_dir = NULL;
    bool declared = set->n > 0;
    if (spec->auto_deps) {
        /* A module of the script's own (helpers.py beside it, in the
         * session's workspace, or a file mount_file put in its mounts/)
         * is not something to install. */
        cleanup_free char *mounts = NULL;
        if (spec->workspace && asprintf(&mounts, "%s/mounts", spec->workspace) < 0)
            mounts = NULL;
        const char *local[] = {r->run_dir, spec->workspace, mounts};
        rc = deps_detect(&cfg->deps, spec->code, spec->code_len, info, local, ARRAY_SIZE(local), base, set, err,
                         sizeof err);
        if (rc < 0) {
            set_error(r, "finding what the script imports: %s", *err ? err : strerror(-rc));
            return rc;
        }
    }
    if (declared && has_detected(set)) {
        /* The declared requirements first: one of them may provide an
         * imported module under another name, and then that import needs
         * nothing more. */
        struct deps_set only = {0};
        rc = deps_set_copy(set, true, &only);
        if (rc == 0)
            rc = deps_env_get(&cfg->deps, cfg->state_dir, info, base, &only, spec->limits.install_ms, &io, env, err,
                              sizeof err);
        deps_set_free(&only);
        if (rc < 0)
            goto failed;
        deps_drop_provided(set, info, env->dir);
        if (!has_detected(set))
            goto done;
        deps_env_release(env);
    }
    if (set->n == 0) {
        r->env_cache = EXEC_ENV_NONE;
        *env_dir = base;
        return 0;
    }
    {
        cleanup_free char *names = deps_set_names(set);
        log_msg(LOG_LVL_INFO, "requirements: %s", names ? names : "?");
    }
    rc = deps_env_get(&cfg->deps, cfg->state_dir, info, base, set, spec->limits.install_ms, &io, env, err, sizeof err);
    if (rc < 0)
        goto failed;
done:
    r->env_cache = env->built ? EXEC_ENV_BUILT : EXEC_ENV_HIT;
    memcpy(r->env_key, env->key, sizeof r->env_key);
    r->requirements = calloc(env->installed.n + 1, sizeof *r->requirements);
    if (!r->requirements) {
        set_error(r, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < env->installed.n; i++) {
        r->requirements[i] = strdup(env->installed.v[i]);
        if (!r->requirements[i]) {
            set_error(r, "out of memory");
            return -ENOMEM;
        }
        r->n_requirements++;
    }
    *env_dir = env->dir;
    return 0;
failed:
    if (rc == -EPROTO) {
        /* The installer failed: the run's status, not the service's. */
        r->status = EXEC_STATUS_INSTALL_FAILED;
        r->limit = env->timed_out ? "install_time" : NULL;
        r->failed_requirement = env->failed ? strdup(env->failed) : NULL;
        free(r->error);
        r->error = strdup(err);
        system_line(run, "[runmyscript] %s", err);
        /* The installer's last lines, for a reader of the log alone. */
        const struct dbuf *il = &run->install_log;
        size_t start = il->len, lines = 0;
        while (start > 0 && lines <= EXEC_INSTALL_TAIL_LINES)
            if (il->data[--start] == '\n')
                lines++;
        if (start > 0 || lines > EXEC_INSTALL_TAIL_LINES)
            start++;
        for (size_t i = start; i < il->len;) {
            const char *nl = memchr(il->data + i, '\n', il->len - i);
            size_t n = nl ? (size_t)(nl - (il->data + i)) : il->len - i;
            system_line(run, "[install] %.*s", (int)n, il->data + i);
            i += n + 1;
        }
        return 0;
    }
    set_error(r, "%s", *err ? err : strerror(-rc));
    return rc;
}

int exec_check_code(const char *code, size_t len, const struct exec_limits *lim, const char **why)
{
    if (lim->code_bytes && len > lim->code_bytes) {
        *why = "the script is larger than code_bytes";
        return -E2BIG;
    }
    if (len == 0) {
        *why = "the script is empty";
        return -EINVAL;
    }
    if (memchr(code, '\0', len)) {
        *why = "the script contains a NUL byte";
        return -EINVAL;
    }
    if (!util_utf8_valid(code, len)) {
        *why = "the script is not valid UTF-8";
        return -EINVAL;
    }
    return 0;
}

/* One run at a time per session workspace: a run owns the workspace (its
 * uid, its output/) from start to end. Others wait, in the queued phase,
 * until it is done, they are cancelled, or longer than a run can last. */
static int lock_session(struct run *run)
{
    const struct exec_spec *spec = run->spec;
    run->session_lock = open(spec->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (run->session_lock < 0) {
        int rc = -errno;
        set_error(run->r, "cannot open the session workspace: %s", strerror(errno));
        return rc;
    }
    if (flock(run->session_lock, LOCK_EX | LOCK_NB) == 0)
        return 0;
    phase(run, EXEC_PHASE_QUEUED, "waiting for the session's other run");
    const struct exec_limits *l = &spec->limits;
    int64_t give_up = util_now_ms() + l->wall_ms + l->install_ms + l->kill_grace_ms + 10000;
    for (;;) {
        if (flock(run->session_lock, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int rc = -errno;
            set_error(run->r, "locking the session workspace: %s", strerror(errno));
            return rc;
        }
        if (cancel_requested(run)) {
            run->r->status = EXEC_STATUS_CANCELLED;
            system_line(run, "[runmyscript] the run was cancelled while it waited for the session");
            return -ECANCELED;
        }
        if (util_now_ms() > give_up) {
            set_error(run->r, "the session's other run did not end in time; try again");
            return -EBUSY;
        }
        usleep(50000);
    }
}

static bool admit_cancelled(void *ctx)
{
    return cancel_requested(ctx);
}

static void busy_error(struct run *run, const char *why)
{
    const struct exec_config *cfg = run->spec->cfg;
    uint32_t running = 0, queued = 0;
    discard(admit_count(cfg->state_dir, &cfg->admit, &running, &queued)); /* for the message only */
    set_error(run->r, "the server is busy (%s: %u of %u run slots in use, %u of %u queue places); nothing was "
              "run, try again in %lld s",
              why, running, admit_max_running(&cfg->admit), queued, cfg->admit.max_queued,
              (long long)((cfg->retry_after_ms + 999) / 1000));
}

/* Admission: a run slot now, or a place in the queue and a wait (the queued
 * phase) for a slot. -EBUSY: turned away (queue full or queue_wait over). */
static int admit(struct run *run)
{
    const struct exec_config *cfg = run->spec->cfg;
    int rc = admit_enter(cfg->state_dir, &cfg->admit, &run->ticket);
    if (rc == -EBUSY) {
        busy_error(run, "the queue is full");
        return rc;
    }
    if (rc < 0) {
        set_error(run->r, "cannot take a run slot under %s/.admit: %s", cfg->state_dir, strerror(-rc));
        return rc;
    }
    if (run->ticket.run_fd >= 0)
        return 0;
    char detail[96];
    snprintf(detail, sizeof detail, "waiting for one of the %u run slots", admit_max_running(&cfg->admit));
    phase(run, EXEC_PHASE_QUEUED, detail);
    rc = admit_wait(cfg->state_dir, &cfg->admit, &run->ticket, admit_cancelled, run);
    if (rc == -ECANCELED) {
        run->r->status = EXEC_STATUS_CANCELLED;
        system_line(run, "[runmyscript] the run was cancelled while it waited for a run slot");
    } else if (rc == -ETIMEDOUT) {
        busy_error(run, "no run slot came free within queue_wait");
        rc = -EBUSY;
    } else if (rc < 0) {
        set_error(run->r, "waiting for a run slot: %s", strerror(-rc));
    }
    return rc;
}

int exec_run(const struct exec_spec *spec, const struct exec_sink *sink, struct exec_result *r)
{
    struct run run = {spec, sink, r, -1, -1, {0}, false, false, -1, ADMIT_TICKET_INIT};
    const char *why = NULL;
    cleanup_free char *base_env = NULL;
    const char *env_dir = NULL;
    struct deps_python info = {0};
    struct deps_set set = {0};
    struct deps_env env;
    char err[1024] = "";
    int rc;

    deps_env_init(&env);
    dbuf_init(&run.install_log, EXEC_INSTALL_LOG_MAX + 128);

    exec_log_free(&r->log);
    exec_log_init(&r->log, spec->limits.log_bytes);
    r->url_prefix = spec->cfg->url_prefix;
    r->isolation = NULL;

    rc = exec_check_code(spec->code, spec->code_len, &spec->limits, &why);
    if (rc == 0 && spec->limits.input_bytes && spec->input_len > spec->limits.input_bytes) {
        why = "the input is larger than input_bytes";
        rc = -E2BIG;
    }
    if (rc < 0) {
        set_error(r, "%s", why);
        goto refused;
    }
    /* Refused requirements are refused before anything is made. */
    int64_t t0 = util_now_ms();
    rc = check_deps(spec, &info, &set, err, sizeof err);
    if (rc < 0) {
        set_error(r, "%s", err);
        goto refused;
    }
    int64_t t_checked = util_now_ms();
    rc = make_workspace(&run);
    if (rc < 0)
        goto out;
    ws_reap_runs(spec->cfg->state_dir, spec->cfg->run_ttl_ms);
    if (spec->workspace) {
        rc = lock_session(&run);
        if (rc == -ECANCELED) {
            rc = 0; /* a result: cancelled */
            goto out;
        }
        if (rc < 0)
            goto out;
    }
    rc = admit(&run);
    if (rc == -ECANCELED) {
        rc = 0; /* a result: cancelled */
        goto out;
    }
    if (rc == -EBUSY) {
        /* Never started: keep nothing (the client is told to retry). */
        close(run.run_fd);
        run.run_fd = -1;
        int rm = util_rm_rf_at(AT_FDCWD, r->run_dir);
        if (rm < 0)
            log_msg(LOG_LVL_WARN, "cannot remove %s: %s", r->run_dir, strerror(-rm));
        free(r->run_dir);
        r->run_dir = NULL;
        log_msg(LOG_LVL_INFO, "turned away: %s", r->error);
        r->run_id[0] = '\0';
    }
    if (rc < 0)
        goto out;
    int64_t t_workspace = util_now_ms();

    phase(&run, EXEC_PHASE_RESOLVING, NULL);
    rc = deps_base_env(spec->cfg->state_dir, spec->cfg->python, &base_env, err, sizeof err);
    if (rc < 0) {
        set_error(r, "%s", err);
        goto out;
    }
    rc = prepare_env(&run, &info, &set, base_env, &env, &env_dir);
    log_msg(LOG_LVL_DEBUG, "timing: checks %lld ms, workspace %lld ms, environment %lld ms",
            (long long)(t_checked - t0), (long long)(t_workspace - t_checked),
            (long long)(util_now_ms() - t_workspace));
    if (run.installer_ran) {
        r->install_log = dbuf_steal(&run.install_log, NULL);
        if (!r->install_log)
            r->install_log = strdup("");
    }
    if (rc < 0 || !env_dir)
        goto out; /* the service failed, or the install did */
    int64_t t_run = util_now_ms();
    rc = run_script(&run, env_dir);
    if (rc < 0)
        goto out;
    if (r->status == EXEC_STATUS_ERROR && died_of_memory(r))
        r->status = EXEC_STATUS_MEMORY, r->limit = "memory";
    int64_t t_collect = util_now_ms();
    rc = collect(&run);
    log_msg(LOG_LVL_DEBUG, "timing: run %lld ms (script %lld ms), collect %lld ms", (long long)(t_collect - t_run),
            (long long)r->duration_ms, (long long)(util_now_ms() - t_collect));
out:
    admit_leave(&run.ticket);
    if (rc < 0 && r->status != EXEC_STATUS_SANDBOX_ERROR)
        r->status = EXEC_STATUS_SANDBOX_ERROR;
    if (rc < 0 && rc != -EBUSY)
        log_msg(LOG_LVL_ERROR, "run failed: %s", r->error ? r->error : strerror(-rc));
    if (r->run_dir) {
        int64_t t_record = util_now_ms();
        int wrc = result_record(r);
        log_msg(LOG_LVL_DEBUG, "timing: record %lld ms", (long long)(util_now_ms() - t_record));
        if (wrc < 0) {
            log_msg(LOG_LVL_ERROR, "recording the result: %s", strerror(-wrc));
            if (rc == 0) {
                set_error(r, "could not record the result in %s: %s", r->run_dir, strerror(-wrc));
                rc = wrc;
            }
        }
    }
    phase(&run, EXEC_PHASE_DONE, exec_status_name(r->status));
    if (run.out_fd >= 0)
        close(run.out_fd);
    if (run.run_fd >= 0)
        close(run.run_fd);
    if (run.session_lock >= 0)
        close(run.session_lock); /* and with it the lock */
    log_set_id(NULL);
refused:
    deps_env_release(&env); /* the run is over: eviction may take it */
    deps_set_free(&set);
    deps_python_free(&info);
    dbuf_free(&run.install_log);
    return rc;
}

int exec_base_env(const struct exec_config *cfg, char **env_dir, char *err, size_t errlen)
{
    return deps_base_env(cfg->state_dir, cfg->python, env_dir, err, errlen);
}

int exec_mark_orphans(const struct exec_config *cfg)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/runs", cfg->state_dir) >= sizeof path)
        return -ENAMETOOLONG;
    cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    int64_t now = util_wall_ms();
    int marked = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        struct stat st;
        if (!ws_id_valid(de->d_name) || fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        /* A directory made this very moment may not hold its lock yet
         * (mkdir, then open and flock): leave the young ones alone. */
        if (now - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) < EXEC_ORPHAN_AGE_MS)
            continue;
        cleanup_fd int fd = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0 || faccessat(fd, "result.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0 ||
            flock(fd, LOCK_EX | LOCK_NB) < 0)
            continue;
        struct exec_result r;
        exec_result_init(&r);
        memcpy(r.run_id, de->d_name, WS_ID_LEN); /* ws_id_valid: exactly WS_ID_LEN */
        r.run_id[WS_ID_LEN] = '\0';
        if (asprintf(&r.run_dir, "%s/%s", path, de->d_name) < 0) {
            r.run_dir = NULL;
            exec_result_free(&r);
            return -ENOMEM;
        }
        r.status = EXEC_STATUS_SANDBOX_ERROR;
        r.error = strdup("the process running this script died before it finished (a worker was killed or "
                         "crashed); the run's processes were stopped with it");
        r.url_prefix = cfg->url_prefix;
        int rc = result_record(&r);
        if (rc == 0) {
            marked++;
            log_msg(LOG_LVL_WARN, "run %s: its process died; marked sandbox_error", r.run_id);
        }
        exec_result_free(&r);
    }
    return marked;
}
