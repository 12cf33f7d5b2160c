/* kernel.c: the executor's kernels (executor.h, "kernels"): exec_cell and
 * the calls beside it. This first version declares the API and answers
 * -ENOSYS ("not built yet") until the kernels are. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "executor.h"

int exec_cell(const struct exec_spec *spec, const struct exec_sink *sink, struct exec_result *r)
{
    (void)spec;
    (void)sink;
    free(r->error);
    r->error = strdup("kernels are not built yet");
    r->status = EXEC_STATUS_SANDBOX_ERROR;
    return -ENOSYS;
}

int exec_kernel_reset(const struct exec_config *cfg, const char *workspace)
{
    (void)cfg;
    (void)workspace;
    return -ENOSYS;
}

int exec_kernel_end(const struct exec_config *cfg, const char *workspace)
{
    (void)cfg;
    (void)workspace;
    return -ENOSYS;
}

int exec_kernel_stats(const struct exec_config *cfg, struct exec_kernel_stats *s)
{
    memset(s, 0, sizeof *s);
    s->max = cfg->kernels.max;
    s->memory_max = cfg->kernels.memory;
    return 0;
}
