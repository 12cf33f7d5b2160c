/* app_ctx.h: what every front door of a request is given: the
 * configuration, the shared worker counters, the shutdown flag, and the
 * executor as a table of functions (so that a test swaps the sandbox out
 * without renaming symbols). The router (app.c), MCP, the tools and the web
 * page all read it; it includes none of them. */
#ifndef RMS_APP_CTX_H
#define RMS_APP_CTX_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "cfg.h"
#include "executor.h"
#include "stream.h"

/* The executor's entry points the HTTP side calls, with the contracts of
 * executor.h (exec_run, exec_cancel, probe_base_env). A call's checks are
 * exec_run's own: a refused call comes back from run before any sink
 * callback. */
struct app_exec {
    int (*run)(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r);
    int (*cancel)(const char *state_dir, const char *run_id);
    /* A script's question answered (exec_answer); NULL: nobody can answer. */
    int (*answer)(const char *state_dir, const char *run_id, unsigned n, const char *text, size_t len);
    int (*base_env)(const struct exec_config *cfg, char **env_dir, char *err, size_t errlen);
    /* An MCP task's process (exec_detach); NULL: tasks cannot start. */
    int (*detach)(int (*fn)(void *arg, int fd), void *arg, int keep_fd, bool keep_stderr, int *read_fd);
    /* Kernels (exec_kernel_cell, exec_kernel_reset, exec_kernel_end,
     * exec_kernel_stats): a cell in a workspace's kernel, its names
     * dropped, the kernel ended with its workspace, the counters. */
    int (*cell)(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r);
    int (*kernel_reset)(const struct exec_config *cfg, const char *workspace);
    int (*kernel_end)(const struct exec_config *cfg, const char *workspace);
    int (*kernel_stats)(const struct exec_config *cfg, struct exec_kernel_stats *s);
    /* A kernel's state saved now, the kernel kept (exec_kernel_save); the
     * kernel reset to the state last saved (exec_kernel_restore). */
    int (*kernel_save)(const struct exec_config *cfg, const char *workspace, char **report, char *err, size_t errlen);
    int (*kernel_restore)(const struct exec_config *cfg, const char *workspace, char *err, size_t errlen);
};

/* The real executor. */
extern const struct app_exec app_exec_default;

/* Worker counters that `serve` shares between its processes (a shared
 * mapping); NULL in the one-process modes. */
struct app_workers {
    unsigned total;
    unsigned busy;   /* updated with atomic builtins */
    struct stream_shared streams; /* the stream process's (stream.h) */
};

struct app {
    const struct cfg *cfg;
    struct app_workers *workers;             /* borrowed, may be NULL */
    const char *mode;                        /* "serve", "fastcgi" or "cgi" */
    volatile sig_atomic_t *cancel_all;       /* set: stop every run now (shutdown) */
    const struct app_exec *exec;             /* borrowed; NULL: app_exec_default */
};

/* The executor table of app: app->exec, or the default when it is NULL. */
const struct app_exec *app_exec_of(const struct app *app);

/* Whether this server has kernels (run_cell, /api/cell): only serve's
 * workers do (cfg->exec.kernels.on), whose processes outlive a request. */
bool app_kernels(const struct app *app);
/* Why not, where it has none: a sentence for a client (static). */
const char *app_kernels_absent(const struct app *app);

/* Asks the run run_id to stop, from any worker (the run's cancel marker,
 * which the process running it polls). The one way a front door cancels a
 * run: exec_cancel's answer (0, -ENOENT no such run, -EALREADY finished,
 * other -errno), logged. */
int app_cancel_run(const struct app *app, const char *run_id) must_check;

/* Why the runs are being stopped, once cancel_all is set: a clause for the
 * run's log and its result ("the server stopped ..."; static); NULL while
 * it is not. A sink's cancel_reason. */
const char *app_stop_reason(const struct app *app);

#endif
