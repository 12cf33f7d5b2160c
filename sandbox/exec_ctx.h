/* exec_ctx.h: a call's context (struct run) and what every step of
 * exec_run() and exec_kernel_cell() uses of it (exec_ctx.c): its report to the
 * sink and the log, its cancel, its isolation's fallback; then what the
 * kernel's code (sandbox/kernel/) shares with exec_run: the steps
 * (exec.c), a script's start (exec_script.c) and the disk a call may use
 * (exec_disk.c). For sandbox/ and sandbox/kernel/; not for front doors:
 * executor.h is. */
#ifndef RMS_EXEC_CTX_H
#define RMS_EXEC_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "admit.h"
#include "art.h"
#include "deps.h"
#include "executor.h"
#include "jail.h"
#include "net.h"

/* One call, a run or a cell, while exec_run() or exec_kernel_cell() works on it:
 * its context. */
struct run {
    const struct exec_spec *spec;
    const struct exec_sink *sink;
    struct result *r;
    int run_fd;    /* the run directory */
    int out_fd;    /* output/ */
    struct dbuf install_log;
    bool install_log_cut;
    bool installer_ran;
    int session_lock; /* the session workspace, flock'd for the run */
    struct admit_ticket ticket; /* the run slot (or queue place) it holds */
    bool kernel;      /* a kernel's start (sandbox/kernel/): its stdin is the channel given, not /job/input */
    const char *site; /* a kernel's extra directory (STATE/kernels/KEY/site): read-only at /job/site (the
                       * fallback: at its path), where packages added to the live kernel go; or NULL */
    bool display;     /* its last expression is shown: the script runs through runner.py */
    bool has_seen;    /* a session's call: output/ as it was before (its artifacts are what changed) */
    struct art_seen seen;
    bool has_started; /* started: just before the script started, by the file system's (coarse) clock */
    struct timespec started;
    struct exec_net *net; /* the run's network (exec_net.c), or NULL: none of its own */
    struct exec_net *install_net; /* the installer's, while it runs, or NULL */
};

/* A step's return besides 0 (go on) and -errno (the service failed): the
 * run has its result already (cancelled while it waited, its install
 * failed), and only the record is left. */
#define EXEC_STEP_ENDED 1

/* What exec_run's (and exec_kernel_cell's) steps hand on to each other besides struct run: the
 * interpreter's facts and the call's requirements (the checks), the
 * environment held for the run (the environment), and when steps began,
 * for the timings in the debug log. */
struct steps {
    struct deps_python info;
    struct deps_set set;
    struct deps_env env;
    char *base_env;        /* the interpreter's base environment (owned) */
    const char *env_dir;   /* the run's: base_env or env.dir */
    int64_t t_checks, t_checked, t_run;
};

/* ------------------------------------------ the context (exec_ctx.c) */

/* Sets r->error (a one-line reason for the user) and the status
 * sandbox_error. */
void exec__set_error(struct result *r, const char *fmt, ...) printf_like(2, 3);
/* Tells the sink the run entered phase p. */
void exec__phase(struct run *run, enum exec_phase p, const char *detail);
/* Appends a chunk of output to the log and hands what it kept to the sink. */
void exec__emit(struct run *run, enum result_stream stream, const char *data, size_t len);
/* One line of runmyscript's own (a SYSTEM chunk), on a line of its own. */
void exec__system_line(struct run *run, const char *fmt, ...) printf_like(2, 3);
/* The same into the log only: for what the sink was shown already. */
void exec__log_line(struct run *run, const char *fmt, ...) printf_like(2, 3);

/* Set once a start found that this host cannot make the namespaces, so
 * that later runs of this process go straight to the fallback. */
extern bool exec__namespaces_unavailable;
/* The fallback is taken only when the config allows it: isolation = auto
 * and require_isolation = off. */
bool exec__may_fall_back(const struct exec_config *cfg);
/* True when the sink or another process (RUN/cancel) asked the run to stop. */
bool exec__cancel_requested(struct run *run);
/* The run ends cancelled: its status, and the log's line "the run was
 * cancelled WHEN" (WHEN may be NULL), with the sink's cancel_reason after
 * it, which is then the result's error too. */
void exec__cancelled(struct run *run, const char *when);

/* --------------------------------------- the steps exec_kernel_cell shares */

#define EXEC_INSTALL_LOG_MAX (256 * 1024) /* bytes of installer output kept in the result */

/* The start of exec_run and exec_kernel_cell alike: run and s for spec, sink and
 * r (nothing held yet; exec__steps_free ends them), r's log empty with
 * log_bytes as its cap. */
void exec__steps_init(struct run *run, struct steps *s, const struct exec_spec *spec, const struct exec_sink *sink,
                      struct result *r);
/* The outcome of a failure of the service whose cause is rc: DISK_FULL
 * for a disk out of space, else FAILED. */
enum exec_outcome exec__failed(int rc);
/* A call turned away before anything was made for it: r->outcome, and
 * err (NULL: none, the front door has its own answer) as r->error.
 * Returns rc, the cause. */
int exec__refuse(struct run *run, enum exec_outcome outcome, int rc, const char *err) must_check;

/* The steps of exec_run that exec_kernel_cell shares (exec.c): each returns 0
 * (go on), EXEC_STEP_ENDED (the result is there: only the record is
 * left) or -errno (the service failed, r->error says why). */
int exec__step_checks(struct run *run, struct steps *s) must_check;
int exec__step_workspace(struct run *run) must_check;
/* wait_ms: how long to wait for the session's other call (< 0: as long
 * as a run can last), then -EBUSY. */
int exec__step_session_lock(struct run *run, int64_t wait_ms) must_check;
int exec__step_admission(struct run *run) must_check;
int exec__step_environment(struct run *run, struct steps *s) must_check;
/* A session's call: what output/ holds before the script or the cell, so
 * that its artifacts are the files it created or changed. */
int exec__step_seen(struct run *run) must_check;
int exec__step_artifacts(struct run *run, struct steps *s) must_check;
/* The end of every call past its checks, whatever rc the steps gave:
 * returns the call's rc. */
int exec__step_record(struct run *run, int rc) must_check;
void exec__steps_free(struct run *run, struct steps *s);

/* Starts run's script in env_dir's interpreter in the mode the config and
 * the host allow (warm where it may, cold, or the fallback), its stdio
 * in_fd, out_w and err_w; mark as jail_opts.mark (may be NULL). 0 with
 * *proc started and r->isolation, r->warm set, or -errno with r->error. */
int exec__start_script(struct run *run, const char *env_dir, int in_fd, int out_w, int err_w, struct jail_mark *mark,
                       struct jail_proc *proc) must_check;

/* ------------------------------------- the network (exec_net.c) */

/* A run's network of its own (script_network = on, not narrowed to off):
 * the policy, the socketpair the jail's init hands the proxy's sockets
 * on, and the proxy. */
struct exec_net {
    enum net_mode mode;          /* the run's, after the call's narrowing */
    bool has_policy;
    struct net_policy pol;
    int sv[2];                   /* [0] ours, [1] the jail's (jail_opts.net_sock) */
    struct net_proxy px;
};
/* The run's network as the configuration and the call make it: n->mode,
 * and for on the policy, the socketpair (n->sv[1] for the jail) and the
 * proxy on the other end. 0, or -errno with r->error set. */
int exec__net_begin(struct run *run, struct exec_net *n) must_check;
/* A fresh socketpair and proxy (after a warm start that failed: what it
 * sent must not be served). 0, or -errno with r->error set. */
int exec__net_renew(struct run *run, struct exec_net *n) must_check;
/* The jail started with n->sv[1]: our copy of it closed (the proxy, on
 * the other end since exec__net_begin, has its sockets or will see the
 * end). */
void exec__net_started(struct exec_net *n);
/* Ends the proxy and puts its record in r->network (and net_bytes or
 * net_connections in r->limit when one stopped the network and no other
 * limit ended the run); frees n. Safe after a failed begin. run NULL: a
 * kernel's, whose record only the log gets. */
void exec__net_end(struct run *run, struct exec_net *n);

/* The installer's network (deps_install_io.net_open and net_close; ctx is
 * the run): a network of its own whose proxy reaches only the package
 * sources of the configuration (index_url, the default index's hosts when
 * it is default, extra_index_url, find_links URLs), on their ports. */
int exec__net_installer_open(void *ctx, int *sock);
void exec__net_installer_close(void *ctx);

/* ---------------------------------------- the disk (exec_disk.c) */

/* The disk of the run: measures what the script can write
 * (in the fallback, the run directory's home/ and tmp/ too; output/ only
 * when output) and returns the key of the limit it passes (static), with a
 * sentence for the log in err, or NULL. A tree that cannot be measured
 * passes workspace_files. */
const char *exec__disk_over(struct run *run, struct jail_proc *proc, bool fallback, bool output, char *err,
                            size_t errlen);
/* The script's start as a file's ctime: the jail's mark of it (taken once
 * the run was given its paths, which changes their ctime, and before the
 * script could write: jail_opts.mark), or without one the marker touched
 * now, from the clock that stamps the files the script writes. */
void exec__disk_mark(struct run *run, const struct jail_mark *mark, struct timespec *since);
/* After a session run that passed a limit of the disk: removes from the
 * workspace what changed after since (exec__disk_mark), and says so in
 * the log. */
void exec__disk_cut(struct run *run, const struct timespec *since);

#endif
