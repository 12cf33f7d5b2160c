/* executor/run.h: a run: its spec, its sink, exec_run and the calls beside it.
 * Part of the executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_RUN_H
#define RMS_EXECUTOR_RUN_H

#include <stdbool.h>
#include <stddef.h>

#include "executor/settings.h"
#include "executor/result.h"
#include "util.h"

#define EXEC_REQUIREMENT_MAX 512        /* bytes of one requirement string */
#define EXEC_MAX_REQUIREMENTS 64 /* requirements of one run, all sources */

/* One call. Strings are borrowed for the duration of exec_run(). */
struct exec_spec {
    const struct exec_config *cfg;
    const char *code;           /* the script's source, code_len bytes */
    size_t code_len;
    const char *input;          /* bytes for SCRIPT_INPUT and stdin; may be NULL */
    size_t input_len;
    struct exec_limits limits;  /* this call's limits (start from cfg->limits) */
    /* Explicit requirement strings (PEP 508), winning over the script's
     * PEP 723 block and its imports for the same distribution. */
    const char *const *requirements;
    size_t n_requirements;
    bool auto_deps;             /* find requirements from the imports too */
    /* Optional session workspace (absolute path of an existing directory):
     * the script's cwd, and its output/ is SCRIPT_OUTPUT. NULL: the run
     * directory is the workspace. */
    const char *workspace;
    /* The call's network (the `network` argument of the doors): NULL, the
     * server's (cfg->script_network with egress_allow); "off", none; or a
     * list in egress_allow's syntax (net_rules_parse), which only narrows
     * the server's: a destination is reached when both lists allow it ("on"
     * is the server's list as it is). A list where the server's network is
     * off, or is host-unfiltered (which no list can narrow), and a list that
     * does not parse, are refused (exec_check_network). A kernel's is the
     * network of the cell that starts it, for its life: a later cell with
     * another does not run (status sandbox_error, r->error says to reset
     * the kernel). */
    const char *network;
};

/* Initialises spec with cfg's defaults: limits copied, auto_deps from cfg. */
void exec_spec_init(struct exec_spec *spec, const struct exec_config *cfg);

enum exec_phase {
    EXEC_PHASE_QUEUED,
    EXEC_PHASE_RESOLVING,
    EXEC_PHASE_INSTALLING,
    EXEC_PHASE_RUNNING,
    EXEC_PHASE_COLLECTING,
    EXEC_PHASE_DONE,
};
const char *exec_phase_name(enum exec_phase p);

/* How exec_run() talks to its front door while it works. Every callback is
 * optional (NULL) and is called on the caller's thread. Data pointers are
 * borrowed for the duration of the call. The result's run_id is filled
 * before the first callback, so a callback may read it. */
struct exec_sink {
    void *ctx;
    void (*phase)(void *ctx, enum exec_phase phase, const char *detail);
    /* A chunk of the script's output as it arrives; only what the log keeps
     * (past log_bytes the sink sees the truncation marker and nothing more). */
    void (*output)(void *ctx, enum result_stream stream, const char *data, size_t len);
    /* Each line of the installer's output, while an environment is built
     * (the phase is "installing", its detail the requirements). */
    void (*install_line)(void *ctx, const char *line);
    /* Polled a few times a second while the script runs; returning true
     * cancels the run (status "cancelled"). */
    bool (*cancelled)(void *ctx);
    /* Asked once, when a run is cancelled: why, when it is not the
     * client's own cancel (the server stopping), a short clause; NULL
     * when there is nothing to add. It ends the log's "the run was
     * cancelled" line and is the result's error. */
    const char *(*cancel_reason)(void *ctx);
    /* Called once, when the call has passed exec_run's checks and before
     * anything is made for it: the place for a front door's own work that
     * must come after the checks and before the run (run_code downloads
     * its files here). 0 goes on; a negative errno refuses the run:
     * exec_run returns it with nothing made (r->outcome STOPPED, r->run_id
     * "", r->error not set: the front door has its own answer). */
    int (*accepted)(void *ctx);
};

/* Runs one script. Always fills r (call result_init first): a script
 * that fails is a result with its status, not an error. What came of the
 * call is r->outcome (enum exec_outcome, set once): DONE with rc 0 when
 * the result is complete and recorded (result.json written); otherwise rc
 * is a negative errno, the cause, and r->error says why in one line
 * (but for STOPPED). A front door chooses its answer from r->outcome
 * alone (cfg_outcome), never from rc.
 *
 * A call the executor refuses is refused first, before anything is made
 * (no run directory, no slot, no sink callback, r->run_id ""): the checks
 * of exec_check_code and of input_bytes (REFUSED, or TOO_LARGE for a
 * size), of exec_check_requirements (REFUSED), with the same one-line
 * reason in r->error, to be shown as it is: the caller's request is at
 * fault, not the service; then the disk (LOW_DISK, ws_disk_check's
 * sentence); then sink->accepted (STOPPED). When the interpreter cannot be
 * asked, FAILED with r->run_id "". A front door may rely on exec_run alone
 * for these checks; the exec_check_* functions are for a caller that
 * wants the answer without a run (the CLI, before its own work), and
 * sink->accepted for a front door's work that must wait for the checks.
 *
 * BUSY: the script never started because every run slot and queue place
 * was taken (or it waited queue_wait for a slot); nothing is kept on disk
 * (r->run_id is ""), r->error says when to try again
 * (cfg->retry_after_ms). (A session's run that waited longer than a run
 * can last for the session's other run is BUSY too, its record kept.)
 * While it waits for a slot the sink gets the queued phase and
 * cancelled() is polled. FAILED past the checks: the service failed, the
 * result is recorded with status sandbox_error; DISK_FULL the same for a
 * state disk out of space (ENOSPC). */
int exec_run(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r) must_check;

/* Checks a script before anything is made for it: not empty, at most
 * code_bytes, valid UTF-8, no NUL. 0, or -EINVAL / -E2BIG with a one-line
 * reason in err (with the sizes and the limit's value where one is
 * passed) a front door can show as it is. */
int exec_check_code(const char *code, size_t len, const struct exec_limits *lim, char *err, size_t errlen) must_check;

/* Checks a call's requirements before anything is made for it: the
 * explicit list and the script's PEP 723 block are valid PEP 508
 * requirements with no installer options, paths or URLs (unless the
 * configuration allows direct references), and the block's requires-python
 * matches the interpreter. 0; -EINVAL with a one-line reason in err (show
 * it as it is: the request is refused); another -errno when the service
 * cannot tell (the interpreter is missing), reason in err. exec_run()
 * makes the same check itself and refuses the same calls (see there). */
int exec_check_requirements(const struct exec_spec *spec, char *err, size_t errlen) must_check;

/* Which distribution the import map (data_dir's import-names.tsv, or the
 * built-in map when data_dir is NULL or "") gives for the top-level module
 * name module ("sklearn" -> "scikit-learn"), copied into dist (len bytes):
 * 1 when the map lists the module; 0 when it does not (dist is then "": the
 * map does not know which distribution provides it); a negative errno when
 * the map cannot be read (-E2BIG when the name does not fit in dist). */
int exec_requirement_for(const char *data_dir, const char *module, char *dist, size_t len) must_check;

/* Checks a call's network (exec_spec.network) against the server's
 * settings, as exec_run does first: 0 when it can be given; -EINVAL with
 * the one-line reason in err, for the caller to show as it is ("network:
 * bad rule '...': ...", "network: this server gives scripts no network
 * (script_network = off)", ...); exec_run refuses such a call (outcome
 * REFUSED, nothing made). NULL and "off" always pass. */
int exec_check_network(const struct exec_config *cfg, const char *network, char *err, size_t errlen) must_check;

/* Asks the run run_id (under state_dir) to stop, from any process: creates
 * RUN/cancel, which the exec_run() of that run polls with its deadline; the
 * run ends with status "cancelled". 0; -ENOENT (no such run, or not a valid
 * id); -EALREADY (it has finished: result.json exists); other -errno. */
int exec_cancel(const char *state_dir, const char *run_id) must_check;

/* Marks runs whose process died before it recorded a result (a worker
 * killed mid-run): every STATE/runs/RUNID without result.json whose lock
 * nobody holds (exec_run holds an flock on the run directory while it
 * works) gets a result.json with status sandbox_error. Returns how many were
 * marked, or -errno. */
int exec_mark_orphans(const struct exec_config *cfg);

/* Runs fn(arg, fd) in a process of its own that outlives the caller: a
 * double fork, a new session, signals back to their defaults, stdin and
 * stdout on /dev/null, stderr kept only with keep_stderr (else /dev/null: a
 * CGI server waits for the stderr it handed out), and nothing else open but
 * keep_fd (may be -1: inherited as it is, with its locks) and fd, the write
 * end of a pipe whose read end *read_fd is the caller's (close-on-exec;
 * caller closes). The process exits with fn's return when fn returns.
 * For work that must not hold the caller (an MCP task: the worker answers
 * and goes back to its requests). 0, or -errno with nothing started. */
int exec_detach(int (*fn)(void *arg, int fd), void *arg, int keep_fd, bool keep_stderr, int *read_fd) must_check;

#endif
