/* app_host.c: what this host gives runs, as /healthz and /metrics say it:
 * the jail's probe (once per process) and the isolation the configuration
 * chooses from it (app.h, app_isolation). */
#include "config.h"

#include "app.h"

#include "executor.h"

const struct probe_caps *app_host_caps(void)
{
    static struct probe_caps caps;
    static bool probed;
    if (!probed) {
        probe_host(&caps);
        probed = true;
    }
    return &caps;
}

const char *app_isolation(const struct cfg *cfg)
{
    const struct probe_caps *caps = app_host_caps();
    if (probe_namespaces_usable(caps, cfg->exec.shared_proc) && caps->seccomp &&
        cfg->exec.isolation != EXEC_ISOLATION_RLIMITS)
        return "namespaces+seccomp";
    if (cfg->exec.isolation == EXEC_ISOLATION_RLIMITS ||
        (!cfg->exec.require_isolation && cfg->exec.isolation == EXEC_ISOLATION_AUTO)) {
        const char *fb = probe_fallback_isolation(caps, cfg->exec.landlock);
        return fb ? fb : "none: runs are refused (landlock = on and this kernel has no Landlock)";
    }
    return "none: runs are refused (require_isolation = on and no namespaces here)";
}
