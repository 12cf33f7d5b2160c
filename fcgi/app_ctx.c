/* app_ctx.c: the default executor table and the one way a front door
 * cancels a run (see app_ctx.h). */
#include "config.h"

#include "app_ctx.h"

#include <errno.h>
#include <string.h>

const struct app_exec app_exec_default = {
    .run = exec_run,
    .cancel = exec_cancel,
    .base_env = exec_base_env,
    .detach = exec_detach,
};

const struct app_exec *app_exec_of(const struct app *app)
{
    return app->exec ? app->exec : &app_exec_default;
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
