/* app_ctx.c: the default executor table, whether kernels exist here, and
 * the one way a front door cancels a run (see app_ctx.h). */
#include "config.h"

#include "app_ctx.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const struct app_exec app_exec_default = {
    .run = exec_run,
    .cancel = exec_cancel,
    .answer = exec_answer,
    .base_env = probe_base_env,
    .detach = exec_detach,
    .cell = exec_kernel_cell,
    .kernel_reset = exec_kernel_reset,
    .kernel_end = exec_kernel_end,
    .kernel_stats = exec_kernel_stats,
    .kernel_save = exec_kernel_save,
    .kernel_restore = exec_kernel_restore,
};

const struct app_exec *app_exec_of(const struct app *app)
{
    return app->exec ? app->exec : &app_exec_default;
}

bool app_kernels(const struct app *app)
{
    return app->cfg->exec.kernels.on;
}

const char *app_kernels_absent(const struct app *app)
{
    if (app->mode && !strcmp(app->mode, "cgi"))
        return "kernels (run_cell, the page's notebook) need runmyscript serve: this server runs as CGI, where no "
               "process outlives a request to keep a kernel's names; use run_code, whose files persist";
    return "kernels (run_cell, the page's notebook) need runmyscript serve, whose processes outlive a request: "
           "this server has none; use run_code, whose files persist";
}

const char *app_stop_reason(const struct app *app)
{
    static char why[128];
    if (!app->cancel_all || !*app->cancel_all)
        return NULL;
    if (!app->mode || strcmp(app->mode, "serve"))
        return "the server stopped before the run ended";
    /* serve's workers are sent SIGINT once the drain has waited its grace */
    snprintf(why, sizeof why, "the server stopped: its drain_grace (%lld s) passed before the run ended",
             (long long)((cfg_drain_grace_ms(app->cfg) + 999) / 1000));
    return why;
}

int app_cancel_run(const struct app *app, const char *run_id)
{
    int rc = app_exec_of(app)->cancel(app->cfg->state_dir, run_id);
    if (rc == 0)
        log_msg(LOG_LVL_INFO, "run %s: cancel requested", run_id);
    else if (rc != -ENOENT && rc != -EALREADY)
        log_msg(LOG_LVL_ERROR, "cancel %s: %s", run_id, strerror(-rc));
    return rc;
}
