/* exec.c: exec_run(), the one executor every front door calls.
 *
 * A run is a list of steps, each a function here (step_NAME): checks (the
 * code, the input, the requirements: the explicit list and the PEP 723
 * block; a refusal makes nothing) -> workspace (STATE/runs/RUNID,
 * script.py, input, output/) -> session lock -> admission (a run slot) ->
 * environment (deps: imports detected, the environment for the set found
 * or built once, held for the run) -> script (under its limits in the
 * jail, its stdout and stderr read through two pipes into one ordered log)
 * -> artifacts and zip -> record (result.json), which ends every run past
 * its checks; one cleanup after them all (steps_free). The script's own
 * run is in exec_script.c; the log buffer in result_log.c; what every step
 * uses of the call (its report, its cancel) in exec_ctx.c. */
#include "config.h"

#include "exec_internal.h"

#include "result_log.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit.h"
#include "art.h"
#include "deps.h"
#include "jail.h"
#include "nb.h"
#include "result.h"
#include "workspace.h"

#define EXEC_INSTALL_TAIL_LINES 10        /* of them, shown in the log when an install fails */
#define EXEC_ORPHAN_AGE_MS 1000           /* a run directory younger than this may not hold its lock yet */
#define EXEC_SESSION_POLL_US 50000        /* how often a run waiting for its session tries the lock */
#define EXEC_SESSION_SLACK_MS 10000       /* past the other run's longest life, before giving up */

/* The workspace step: makes the run directory, script.py, input and
 * output/, and reaps the old runs. */
int exec__step_workspace(struct run *run)
{
    const struct exec_spec *spec = run->spec;
    struct result *r = run->r;
    char *dir = NULL;
    int rc = ws_run_create(spec->cfg->state_dir, spec->cfg->node_id, r->run_id, &dir);
    if (rc < 0) {
        exec__set_error(r, "cannot create a run directory under %s/runs: %s", spec->cfg->state_dir, strerror(-rc));
        return rc;
    }
    r->run_dir = dir;
    log_set_id(r->run_id);
    run->run_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (run->run_fd < 0) {
        rc = -errno;
        exec__set_error(r, "cannot open the run directory: %s", strerror(errno));
        return rc;
    }
    /* Held until exec_run returns: a run directory without result.json
     * whose lock is free belongs to a process that died (exec_mark_orphans). */
    if (flock(run->run_fd, LOCK_EX | LOCK_NB) < 0)
        log_msg(LOG_LVL_WARN, "cannot lock the run directory: %s", strerror(errno));
    /* A fresh directory: plain exclusive creates, no fsync (after a crash
     * the run is gone anyway). */
    rc = run->script ? util_write_file_new(run->run_fd, "script.py", run->script, run->script_len, 0644)
                     : util_write_file_new(run->run_fd, "script.py", spec->code, spec->code_len, 0644);
    if (rc == 0)
        rc = util_write_file_new(run->run_fd, "input", spec->input ? spec->input : "", spec->input_len, 0644);
    if (rc < 0) {
        exec__set_error(r, "cannot write the script and its input into the run directory: %s", strerror(-rc));
        return rc;
    }
    r->workdir = strdup(spec->workspace ? spec->workspace : dir);
    if (!r->workdir || asprintf(&r->output_dir, "%s/output", r->workdir) < 0) {
        r->output_dir = NULL;
        exec__set_error(r, "out of memory");
        return -ENOMEM;
    }
    if (mkdir(r->output_dir, 0755) < 0 && errno != EEXIST) {
        rc = -errno;
        exec__set_error(r, "cannot create %s: %s", r->output_dir, strerror(errno));
        return rc;
    }
    run->out_fd = open(r->output_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (run->out_fd < 0) {
        rc = -errno;
        exec__set_error(r, "cannot open %s: %s", r->output_dir, strerror(errno));
        return rc;
    }
    ws_reap_runs(spec->cfg->state_dir, spec->cfg->run_ttl_ms);
    discard(ws_bound_runs(spec->cfg)); /* runs_bytes, runs_files: the oldest go; a failure keeps them */
    return 0;
}

/* Files written up to file_size stop there (EFBIG): one that is exactly at
 * the limit is taken as a breach. */
static bool hit_file_size(const struct result *r, uint64_t file_size)
{
    for (size_t i = 0; i < r->n_artifacts; i++)
        if (file_size && r->artifacts[i].size >= file_size)
            return true;
    return false;
}

/* The files the script wrote outside output/ (art_outside_collect), into
 * the result: a hint's matter, so a failure is only logged. A run's own
 * directory holds the service's files beside the script's (in the
 * fallback its home/ and tmp/ too); a session's mounts/ are the caller's. */
static void collect_outside(struct run *run)
{
    static const char *const run_skip[] = {"output", "script.py", "input", "home", "tmp", "cancel", "log", "question", "answer",
                                           "result.json", "artifacts.zip", NULL};
    static const char *const ws_skip[] = {"output", WS_MOUNTS_DIR, NULL};
    struct result *r = run->r;
    struct art_outside o;
    if (!run->has_started)
        return;
    cleanup_fd int fd = open(r->workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = fd < 0 ? -errno : art_outside_collect(fd, run->spec->workspace ? ws_skip : run_skip, &run->started, &o);
    if (rc < 0) {
        log_msg(LOG_LVL_WARN, "listing the files written outside output/: %s", strerror(-rc));
        return;
    }
    r->outside_files = o.files;
    for (size_t i = 0; i < o.n_names; i++)
        r->outside_names[i] = o.names[i];
    r->n_outside_names = o.n_names;
    o.n_names = 0; /* the result owns them now */
    art_outside_free(&o);
}

static int collect(struct run *run)
{
    struct result *r = run->r;
    const struct exec_limits *lim = &run->spec->limits;
    struct art_list l;
    char err[256] = "";

    exec__phase(run, EXEC_PHASE_COLLECTING, NULL);
    collect_outside(run);
    int rc = art_collect(run->out_fd, lim->output_files, lim->output_bytes, &l);
    if (rc < 0) {
        exec__set_error(r, "listing output/: %s", strerror(-rc));
        return rc;
    }
    /* A session's call lists what it made, not what the calls before it
     * left (their own runs keep those). */
    if (run->has_seen && (rc = art_seen_keep_changed(run->out_fd, &run->seen, &l)) < 0) {
        art_list_free(&l);
        exec__set_error(r, "listing what the call changed in output/: %s", strerror(-rc));
        return rc;
    }
    r->artifacts = l.v;
    r->n_artifacts = l.n;
    r->artifacts_skipped = l.skipped;
    if (l.limit && r->status != RESULT_STATUS_CANCELLED && r->status != RESULT_STATUS_TIMEOUT) {
        if (r->status != RESULT_STATUS_OUTPUT_LIMIT)
            exec__system_line(run, "[runmyscript] output/ holds more than its limit (%s); files past it are not listed",
                        l.limit);
        r->status = RESULT_STATUS_OUTPUT_LIMIT;
        r->limit = l.limit;
    }
    if (r->status == RESULT_STATUS_ERROR && hit_file_size(r, lim->file_size)) {
        r->status = RESULT_STATUS_OUTPUT_LIMIT;
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
            exec__set_error(r, "creating the run's copy of output/: %s", strerror(errno));
            return rc;
        }
        rc = art_snapshot(run->out_fd, &l, snap_fd, err, sizeof err);
        r->n_artifacts = l.n;
        r->artifacts_skipped = l.skipped;
        if (rc < 0) {
            exec__set_error(r, "%s", err);
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
        exec__system_line(run, "[runmyscript] the zip of the artifacts could not be made: %s", err);
        return 0;
    }
    r->has_zip = true;
    if (asprintf(&r->zip_path, "%s/artifacts.zip", r->run_dir) < 0)
        r->zip_path = NULL;
    return 0;
}

/* ---------------------------------------------------------- requirements */

/* The interpreter's facts and the declared requirements (the explicit
 * list, the PEP 723 block), checked. -EINVAL: refused, err says why;
 * another -errno: the service failed. */
static int check_deps(const struct exec_spec *spec, struct deps_python *info, struct deps_set *set, char *err,
                      size_t errlen)
{
    const struct exec_config *cfg = spec->cfg;
    int rc = deps_python_info(cfg->state_dir, cfg->python, info, err, errlen);
    if (rc < 0)
        return rc == -EINVAL ? -EIO : rc;
    return deps_declared(&cfg->deps, spec->requirements, spec->n_requirements, spec->code, spec->code_len, info,
                         set, err, errlen);
}

int exec_check_requirements(const struct exec_spec *spec, char *err, size_t errlen)
{
    struct deps_python info;
    struct deps_set set = {0};
    int rc = check_deps(spec, &info, &set, err, errlen);
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
    exec__phase(run, EXEC_PHASE_INSTALLING, names);
}

static bool on_install_cancelled(void *ctx)
{
    return exec__cancel_requested(ctx);
}

static bool has_detected(const struct deps_set *set)
{
    for (size_t i = 0; i < set->n; i++)
        if (set->v[i].source == DEPS_SRC_IMPORT)
            return true;
    return false;
}

/* The installer failed (outcome, deps_env_get's): the run's status, not
 * the service's, with the reason, and the installer's last lines in the
 * log for a reader of the log alone (a sink that was shown them as they
 * came is not shown them again). */
static void install_failed(struct run *run, int outcome, const struct deps_env *env, const char *err)
{
    struct result *r = run->r;
    r->status = RESULT_STATUS_INSTALL_FAILED;
    r->limit = outcome == DEPS_ENV_INSTALL_TIMEOUT ? "install_time" : NULL;
    r->failed_requirement = env->failed ? strdup(env->failed) : NULL;
    free(r->error);
    r->error = strdup(err);
    free(r->advice);
    r->advice = deps_install_advice(&run->spec->cfg->deps, err);
    if (r->advice) /* the operator's: the server's log and the result, which a client is handed without it */
        log_msg(LOG_LVL_WARN, "%s: %s", err, r->advice);
    exec__system_line(run, "[runmyscript] %s", err);
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
        if (run->sink && run->sink->install_line)
            exec__log_line(run, "[install] %.*s", (int)n, il->data + i);
        else
            exec__system_line(run, "[install] %.*s", (int)n, il->data + i);
        i += n + 1;
    }
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
    struct result *r = run->r;
    /* The installer's jail: the runs' mode and fallback policy, the default
     * limits (an installer needs more than a user may give a script), the
     * run's tag and the uid range. */
    struct exec_limits tool_limits;
    exec_limits_default(&tool_limits);
    struct jail_tool tool = {
        .o = {
            .mode = exec__namespaces_unavailable && exec__may_fall_back(cfg) ? JAIL_MODE_RLIMITS : jail_mode_for(cfg->isolation),
            .limits = &tool_limits,
            .state_dir = cfg->state_dir,
            .tag = r->run_id,
            .uid_base = cfg->uid_base,
            .uid_count = cfg->uid_count,
            .interpreter = cfg->python,
            .landlock = cfg->landlock,
            .shared_proc = cfg->shared_proc,
        },
        .may_fall_back = exec__may_fall_back(cfg),
    };
    struct deps_install_io io = {&tool, on_install_line, on_installing, run, on_install_cancelled,
                                 exec__net_installer_open, exec__net_installer_close};
    char err[1024] = "";
    int rc = 0;

    *env_dir = NULL;
    bool declared = set->n > 0;
    if (spec->auto_deps) {
        /* A module of the script's own (helpers.py beside it, in the
         * session's workspace, or a file mount_file put in its mounts/)
         * is not something to install. */
        cleanup_free char *mounts = NULL;
        if (spec->workspace && asprintf(&mounts, "%s/" WS_MOUNTS_DIR, spec->workspace) < 0)
            mounts = NULL;
        const char *local[] = {r->run_dir, spec->workspace, mounts};
        rc = deps_detect(&cfg->deps, spec->code, spec->code_len, info, local, ARRAY_SIZE(local), base, set, err,
                         sizeof err);
        if (rc < 0) {
            exec__set_error(r, "finding what the script imports: %s", *err ? err : strerror(-rc));
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
        if (rc != DEPS_ENV_READY)
            goto failed;
        deps_drop_provided(set, info, env->dir);
        if (!has_detected(set))
            goto done;
        deps_env_release(env);
    }
    if (set->n == 0) {
        r->env_cache = RESULT_ENV_NONE;
        *env_dir = base;
        return 0;
    }
    {
        cleanup_free char *names = deps_set_names(set);
        log_msg(LOG_LVL_INFO, "requirements: %s", names ? names : "?");
    }
    rc = deps_env_get(&cfg->deps, cfg->state_dir, info, base, set, spec->limits.install_ms, &io, env, err, sizeof err);
    if (rc != DEPS_ENV_READY)
        goto failed;
done:
    r->env_cache = env->built ? RESULT_ENV_BUILT : RESULT_ENV_HIT;
    memcpy(r->env_key, env->key, sizeof r->env_key);
    r->requirements = calloc(env->installed.n + 1, sizeof *r->requirements);
    if (!r->requirements) {
        exec__set_error(r, "out of memory");
        return -ENOMEM;
    }
    for (size_t i = 0; i < env->installed.n; i++) {
        r->requirements[i] = strdup(env->installed.v[i]);
        if (!r->requirements[i]) {
            exec__set_error(r, "out of memory");
            return -ENOMEM;
        }
        r->n_requirements++;
    }
    *env_dir = env->dir;
    return 0;
failed:
    if (rc > 0) {
        install_failed(run, rc, env, err);
        return 0;
    }
    if (rc == -ECANCELED) { /* a cancel while the installer ran: a result, nothing published */
        exec__cancelled(run, "while its requirements were installed");
        return 0;
    }
    exec__set_error(r, "%s", *err ? err : strerror(-rc));
    return rc;
}

int exec_check_code(const char *code, size_t len, const struct exec_limits *lim, char *err, size_t errlen)
{
    if (lim->code_bytes && len > lim->code_bytes) {
        char has[32], max[32];
        util_human_size(len, has, sizeof has);
        util_human_size(lim->code_bytes, max, sizeof max);
        snprintf(err, errlen, "the script (%s) is larger than code_bytes (%s)", has, max);
        return -E2BIG;
    }
    const char *why = len == 0                     ? "the script is empty"
                      : memchr(code, '\0', len)     ? "the script contains a NUL byte"
                      : !util_utf8_valid(code, len) ? "the script is not valid UTF-8"
                                                    : NULL;
    if (why)
        snprintf(err, errlen, "%s", why);
    return why ? -EINVAL : 0;
}

/* The session lock step. One run at a time per session workspace: a run
 * owns the workspace (its uid, its output/) from start to end. Others
 * wait, in the queued phase, until it is done (0), they are cancelled
 * (EXEC_STEP_ENDED), or longer than a run can last (wait_ms < 0; else
 * wait_ms: a cell's queue_wait), then -EBUSY. A run without a session has
 * nothing to lock. */
static void turn_away(struct run *run);

int exec__step_session_lock(struct run *run, int64_t wait_ms)
{
    bool turn_away_later = false;
    const struct exec_spec *spec = run->spec;
    if (!spec->workspace)
        return 0;
    run->session_lock = open(spec->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (run->session_lock < 0) {
        int rc = -errno;
        exec__set_error(run->r, "cannot open the session workspace: %s", strerror(errno));
        return rc;
    }
    if (flock(run->session_lock, LOCK_EX | LOCK_NB) == 0)
        return 0;
    exec__phase(run, EXEC_PHASE_QUEUED, wait_ms >= 0 ? "waiting for the kernel's other cell" : "waiting for the session's other run");
    const struct exec_limits *l = &spec->limits;
    int64_t give_up = util_now_ms() + (wait_ms >= 0 ? wait_ms : l->wall_ms + l->install_ms + l->kill_grace_ms + EXEC_SESSION_SLACK_MS);
    for (;;) {
        if (flock(run->session_lock, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR) {
            int rc = -errno;
            exec__set_error(run->r, "locking the session workspace: %s", strerror(errno));
            return rc;
        }
        if (exec__cancel_requested(run)) {
            exec__cancelled(run, "while it waited for the session");
            return EXEC_STEP_ENDED; /* a result: cancelled */
        }
        if (util_now_ms() > give_up) {
            if (wait_ms >= 0)
                turn_away_later = true;
            exec__set_error(run->r, wait_ms >= 0 ? "the kernel is busy: another cell of this workspace ran longer than "
                                                   "queue_wait; nothing was run, try again"
                                                 : "the session's other run did not end in time; try again");
            if (turn_away_later)
                turn_away(run); /* a cell turned away: nothing of it is kept, as a run the queue turns away */
            return -EBUSY;
        }
        usleep(EXEC_SESSION_POLL_US);
    }
}

static bool admit_cancelled(void *ctx)
{
    return exec__cancel_requested(ctx);
}

static void busy_error(struct run *run, const char *err)
{
    const struct exec_config *cfg = run->spec->cfg;
    uint32_t running = 0, queued = 0;
    discard(probe_slots(cfg->state_dir, &cfg->admit, &running, &queued)); /* for the message only */
    exec__set_error(run->r, "the server is busy (%s: %u of %u run slots in use, %u of %u queue places); nothing was "
              "run, try again in %lld s",
              err, running, exec_admit_max_running(&cfg->admit), queued, cfg->admit.max_queued,
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
        exec__set_error(run->r, "cannot take a run slot under %s/.admit: %s", cfg->state_dir, strerror(-rc));
        return rc;
    }
    if (run->ticket.run_fd >= 0)
        return 0;
    char detail[96];
    snprintf(detail, sizeof detail, "waiting for one of the %u run slots", exec_admit_max_running(&cfg->admit));
    exec__phase(run, EXEC_PHASE_QUEUED, detail);
    rc = admit_wait(cfg->state_dir, &cfg->admit, &run->ticket, admit_cancelled, run);
    if (rc == -ECANCELED) {
        exec__cancelled(run, "while it waited for a run slot");
    } else if (rc == -ETIMEDOUT) {
        busy_error(run, "no run slot came free within queue_wait");
        rc = -EBUSY;
    } else if (rc < 0) {
        exec__set_error(run->r, "waiting for a run slot: %s", strerror(-rc));
    }
    return rc;
}

/* A run turned away (-EBUSY) never started: nothing of it is kept (the
 * client is told to retry), not even its id. */
static void turn_away(struct run *run)
{
    struct result *r = run->r;
    close(run->run_fd);
    run->run_fd = -1;
    int rm = util_rm_rf_at(AT_FDCWD, r->run_dir);
    if (rm < 0)
        log_msg(LOG_LVL_WARN, "cannot remove %s: %s", r->run_dir, strerror(-rm));
    free(r->run_dir);
    r->run_dir = NULL;
    log_msg(LOG_LVL_INFO, "turned away: %s", r->error);
    r->run_id[0] = '\0';
}

/* The admission step: admit, and a run turned away is not kept
 * (turn_away); one cancelled while it waited has its result
 * (EXEC_STEP_ENDED). */
int exec__step_admission(struct run *run)
{
    int rc = admit(run);
    if (rc == -ECANCELED)
        return EXEC_STEP_ENDED; /* a result: cancelled */
    if (rc == -EBUSY)
        turn_away(run);
    return rc;
}

void exec__steps_init(struct run *run, struct steps *s, const struct exec_spec *spec, const struct exec_sink *sink,
                      struct result *r)
{
    *run = (struct run){.spec = spec, .sink = sink, .r = r, .run_fd = -1, .out_fd = -1, .session_lock = -1,
                        .ticket = ADMIT_TICKET_INIT};
    *s = (struct steps){0};
    deps_env_init(&s->env);
    dbuf_init(&run->install_log, EXEC_INSTALL_LOG_MAX + 128);
    result_log_free(&r->log);
    result_log_init(&r->log, spec->limits.log_bytes);
    r->url_prefix = spec->cfg->url_prefix;
    r->isolation = NULL;
}

enum exec_outcome exec__failed(int rc)
{
    return rc == -ENOSPC ? EXEC_OUTCOME_DISK_FULL : EXEC_OUTCOME_FAILED;
}

int exec__refuse(struct run *run, enum exec_outcome outcome, int rc, const char *err)
{
    if (err)
        exec__set_error(run->r, "%s", err);
    run->r->outcome = outcome;
    return rc;
}

/* The checks step, before anything is made: the code, input_bytes, the
 * declared requirements against the interpreter's facts (into s), the
 * disk, then the front door's own (sink->accepted). A refusal is a
 * negative errno with nothing made and r->outcome saying which check
 * refused it (exec__refuse). */
int exec__step_checks(struct run *run, struct steps *s)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_sink *sink = run->sink;
    char err[1024] = "";

    int rc = exec_check_code(spec->code, spec->code_len, &spec->limits, err, sizeof err);
    if (rc < 0) /* its contract: -E2BIG over code_bytes, else -EINVAL */
        return exec__refuse(run, rc == -E2BIG ? EXEC_OUTCOME_TOO_LARGE : EXEC_OUTCOME_REFUSED, rc, err);
    if (spec->limits.input_bytes && spec->input_len > spec->limits.input_bytes) {
        char has[32], max[32];
        util_human_size(spec->input_len, has, sizeof has);
        util_human_size(spec->limits.input_bytes, max, sizeof max);
        snprintf(err, sizeof err, "the input (%s) is larger than input_bytes (%s)", has, max);
        return exec__refuse(run, EXEC_OUTCOME_TOO_LARGE, -E2BIG, err);
    }
    if ((rc = exec_check_network(spec->cfg, spec->network, err, sizeof err)) < 0)
        return exec__refuse(run, rc == -EINVAL ? EXEC_OUTCOME_REFUSED : exec__failed(rc), rc, err);
    /* Refused requirements are refused before anything is made; another
     * errno is the service's (the interpreter cannot be asked). */
    s->t_checks = util_now_ms();
    rc = check_deps(spec, &s->info, &s->set, err, sizeof err);
    if (rc < 0)
        return exec__refuse(run, rc == -EINVAL ? EXEC_OUTCOME_REFUSED : exec__failed(rc), rc, err);
    /* The low-disk guard: nothing made (disk_reserve). */
    struct ws_disk disk;
    if ((rc = ws_disk_check(spec->cfg, &disk, err, sizeof err)) < 0)
        return exec__refuse(run, EXEC_OUTCOME_LOW_DISK, rc, err);
    if (sink && sink->accepted && (rc = sink->accepted(sink->ctx)) < 0)
        return exec__refuse(run, EXEC_OUTCOME_STOPPED, rc, NULL);
    s->t_checked = util_now_ms();
    return 0;
}

/* The environment step (phase resolving): the base environment, then the
 * run's (prepare_env) into s->env_dir; an install that failed is the
 * run's result (EXEC_STEP_ENDED). */
int exec__step_environment(struct run *run, struct steps *s)
{
    const struct exec_spec *spec = run->spec;
    struct result *r = run->r;
    char err[1024] = "";
    int64_t t_workspace = util_now_ms();

    exec__phase(run, EXEC_PHASE_RESOLVING, NULL);
    int rc = deps_base_env(spec->cfg->state_dir, spec->cfg->python, &s->base_env, err, sizeof err);
    if (rc < 0) {
        exec__set_error(r, "%s", err);
        return rc;
    }
    rc = prepare_env(run, &s->info, &s->set, s->base_env, &s->env, &s->env_dir);
    log_msg(LOG_LVL_DEBUG, "timing: checks %lld ms, workspace %lld ms, environment %lld ms",
            (long long)(s->t_checked - s->t_checks), (long long)(t_workspace - s->t_checked),
            (long long)(util_now_ms() - t_workspace));
    if (run->installer_ran) {
        r->install_log = dbuf_steal(&run->install_log, NULL);
        if (!r->install_log)
            r->install_log = strdup("");
    }
    if (rc < 0)
        return rc; /* the service failed */
    return s->env_dir ? 0 : EXEC_STEP_ENDED; /* or the install did */
}

/* The script step: the script under its limits (exec__run_script), and
 * the fallback's MemoryError taken for the memory limit. */
static int step_script(struct run *run, struct steps *s)
{
    struct result *r = run->r;
    s->t_run = util_now_ms();
    int rc = exec__run_script(run, s->env_dir);
    if (rc < 0)
        return rc;
    if (r->status == RESULT_STATUS_ERROR && exec__died_of_memory(r))
        r->status = RESULT_STATUS_MEMORY, r->limit = "memory";
    return 0;
}

int exec__step_seen(struct run *run)
{
    if (!run->spec->workspace)
        return 0;
    int rc = art_seen_take(run->out_fd, run->spec->limits.output_files, &run->seen);
    if (rc < 0) {
        exec__set_error(run->r, "listing output/ before the call: %s", strerror(-rc));
        return rc;
    }
    run->has_seen = true;
    return 0;
}

/* The artifacts step (phase collecting): output/ listed and zipped
 * (collect), then the run directory tidied. */
int exec__step_artifacts(struct run *run, struct steps *s)
{
    struct result *r = run->r;
    int64_t t_collect = util_now_ms();
    int rc = collect(run);
    exec__disk_tidy(run);
    log_msg(LOG_LVL_DEBUG, "timing: run %lld ms (script %lld ms), collect %lld ms", (long long)(t_collect - s->t_run),
            (long long)r->duration_ms, (long long)(util_now_ms() - t_collect));
    return rc;
}

/* The record step, the end of every run that passed its checks, whatever
 * rc the steps before it returned: the run slot given back, a failure of
 * the service made the result's status, result.json written (a run that
 * went well until then fails with what failed), the phase done, and the
 * outcome set: a step's -EBUSY is the call turned away (the session's or
 * kernel's other call, admission, a kernel slot: their contracts), any
 * other errno the service's failure (exec__failed). Returns exec_run's
 * rc. */
int exec__step_record(struct run *run, int rc)
{
    struct result *r = run->r;
    if (rc == EXEC_STEP_ENDED)
        rc = 0;
    admit_leave(&run->ticket);
    if (rc < 0 && r->status != RESULT_STATUS_SANDBOX_ERROR)
        r->status = RESULT_STATUS_SANDBOX_ERROR;
    if (rc < 0 && rc != -EBUSY)
        log_msg(LOG_LVL_ERROR, "run failed: %s", r->error ? r->error : strerror(-rc));
    /* A script that failed: for want of an optional package, which to add;
     * else the exception that ended it, as its traceback's last line. */
    if (rc == 0 && r->status == RESULT_STATUS_ERROR && !r->error)
        r->error = deps_hint_optional(r->log.buf.data, r->log.buf.len);
    if (rc == 0 && r->status == RESULT_STATUS_ERROR && !r->error)
        r->error = result_log_exception(&r->log);
    if (r->run_dir) {
        int64_t t_record = util_now_ms();
        int wrc = result_record(r);
        log_msg(LOG_LVL_DEBUG, "timing: record %lld ms", (long long)(util_now_ms() - t_record));
        if (wrc < 0) {
            log_msg(LOG_LVL_ERROR, "recording the result: %s", strerror(-wrc));
            if (rc == 0) {
                exec__set_error(r, "could not record the result in %s: %s", r->run_dir, strerror(-wrc));
                rc = wrc;
            }
        }
    }
    r->outcome = rc == 0 ? EXEC_OUTCOME_DONE : rc == -EBUSY ? EXEC_OUTCOME_BUSY : exec__failed(rc);
    exec__phase(run, EXEC_PHASE_DONE, result_status_name(r->status));
    log_set_id(NULL);
    return rc;
}

/* exec_run's one cleanup, whatever step it reached: what the steps opened
 * and hold. */
void exec__steps_free(struct run *run, struct steps *s)
{
    if (run->out_fd >= 0)
        close(run->out_fd);
    if (run->run_fd >= 0)
        close(run->run_fd);
    if (run->session_lock >= 0)
        close(run->session_lock); /* and with it the lock */
    deps_env_release(&s->env); /* the run is over: eviction may take it */
    deps_set_free(&s->set);
    deps_python_free(&s->info);
    free(s->base_env);
    dbuf_free(&run->install_log);
    art_seen_free(&run->seen);
}

/* A notebook's run (spec->notebook): its cells' code is what the checks,
 * the import scan and the warm pool see, the driver with the notebook is
 * what runs (nb_script, run->script); a text that is not a notebook is
 * refused first. */
static int step_notebook(struct run *run, struct exec_spec *nb, char **cells, char **script)
{
    char err[512] = "";
    size_t cells_len = 0;
    int rc = nb_script(nb->code, nb->code_len, nb->notebook, &nb->limits, cells, &cells_len, script,
                       &run->script_len, err, sizeof err);
    if (rc < 0)
        return exec__refuse(run, rc == -EINVAL ? EXEC_OUTCOME_REFUSED : exec__failed(rc), rc, err);
    nb->code = *cells;
    nb->code_len = cells_len;
    run->script = *script;
    return 0;
}

int exec_run(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r)
{
    struct run run;
    struct steps s;
    struct exec_spec nb = *spec;
    cleanup_free char *cells = NULL, *script = NULL;
    exec__steps_init(&run, &s, &nb, sink, r);

    int rc = spec->notebook ? step_notebook(&run, &nb, &cells, &script) : 0;
    if (rc == 0)
        rc = exec__step_checks(&run, &s);
    if (rc == 0) {
        rc = exec__step_workspace(&run);
        if (rc == 0)
            rc = exec__step_session_lock(&run, -1);
        if (rc == 0)
            rc = exec__step_admission(&run);
        if (rc == 0)
            rc = exec__step_environment(&run, &s);
        if (rc == 0)
            rc = exec__step_seen(&run);
        if (rc == 0)
            rc = step_script(&run, &s);
        if (rc == 0 && script && r->status == RESULT_STATUS_ERROR && !r->error)
            r->error = nb_failure(&r->log);
        if (rc == 0)
            rc = exec__step_artifacts(&run, &s);
        rc = exec__step_record(&run, rc);
    }
    exec__steps_free(&run, &s);
    return rc;
}

int probe_base_env(const struct exec_config *cfg, char **env_dir, char *err, size_t errlen)
{
    return deps_base_env(cfg->state_dir, cfg->python, env_dir, err, errlen);
}

int probe_store_links(const struct exec_config *cfg)
{
    return deps_store_links(cfg->state_dir);
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
        /* The whole id, NODE-HEX in a cluster (ws_id_valid: at most
         * WS_ID_MAX bytes). */
        struct result r;
        size_t id_len = strnlen(de->d_name, sizeof r.run_id);
        if (id_len >= sizeof r.run_id)
            continue;
        result_init(&r);
        memcpy(r.run_id, de->d_name, id_len + 1);
        if (asprintf(&r.run_dir, "%s/%s", path, de->d_name) < 0) {
            r.run_dir = NULL;
            result_free(&r);
            return -ENOMEM;
        }
        r.status = RESULT_STATUS_SANDBOX_ERROR;
        r.error = strdup("the process running this script died before it finished (a worker was killed or "
                         "crashed); the run's processes were stopped with it");
        r.url_prefix = cfg->url_prefix;
        int rc = result_record(&r);
        if (rc == 0) {
            marked++;
            log_msg(LOG_LVL_WARN, "run %s: its process died; marked sandbox_error", r.run_id);
        }
        result_free(&r);
    }
    return marked;
}
