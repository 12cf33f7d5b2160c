/* cli_sandbox.c: `runmyscript check-sandbox`: what this host supports
 * (namespaces, seccomp, Landlock, cgroups), how each limit would be
 * enforced, and the isolation runs get under the configuration given. */
#include "config.h"

#include "cli_internal.h"

#include <errno.h>
#include <stdio.h>

/* The exit status when runs would be refused (0 when they can happen). */
#define CLI_SANDBOX_REFUSED 1

/* How `memory` holds a run as a whole in the jail (jail true) or in the
 * fallback, which never has a cgroup. */
static void memory_text(const struct probe_caps *c, bool jail, char *buf, size_t n)
{
    if (jail && c->cgroup_v2)
        snprintf(buf, n, "cgroup v2 (whole run)");
    else if (jail && c->cgroup_v1_memory)
        snprintf(buf, n, "cgroup v1 (whole run)");
    else
        snprintf(buf, n, "watched: sum of the run's processes every %d ms, plus RLIMIT_AS per process",
                 c->memory_watch_ms);
}

int cli_check_sandbox(int argc, char **argv, const char *self)
{
    struct cfg cfg;
    int st = cli__cfg_from_args(argc, argv, self, "Prints what isolation this host gives runs, and why.\n", &cfg);
    if (st != CLI__GO_ON) {
        cfg_free(&cfg);
        return st;
    }
    struct probe_caps caps;
    probe_host(&caps);
    const char *yes = "yes", *no = "no";
    printf("running as:            %s\n", caps.root ? "root (each run gets a uid of its own)" : "an unprivileged user");
    /* Not unshare alone: the probe makes a run's root in the namespaces
     * (jail_probe.c), which a container may refuse where it allows them. */
    printf("namespaces and mounts: %s%s\n", caps.userns ? yes : no,
           caps.userns ? " (user, mount, pid, network, IPC and UTS namespaces, and a run's root in them: a tmpfs, "
                         "/proc, pivot_root, read-only, its hostname)"
                       : "");
    if (!caps.userns)
        printf("                       %s\n", caps.userns_error);
    /* A default container: the kernel refuses a fresh /proc over its
     * masked one, its seccomp profile refuses sethostname. */
    if (caps.userns && caps.proc_shared)
        printf("a run's /proc:         %s\n",
               cfg.exec.shared_proc ? "the container's (a fresh one is refused here; shared_proc = on): its "
                                      "processes are visible to runs, which can signal none of them"
                                    : "a fresh one is refused here, and shared_proc = off: runs take the fallback");
    if (caps.hostname_kept && probe_namespaces_usable(&caps, cfg.exec.shared_proc))
        printf("a run's host name:     the container's (sethostname is refused here)\n");
    printf("pid namespace:         %s\n", caps.userns ? yes : no);
    printf("network namespace:     %s\n", caps.userns ? yes : no);
    printf("seccomp:               %s\n", caps.seccomp ? yes : no);
    if (caps.landlock_abi)
        printf("landlock:              ABI %d\n", caps.landlock_abi);
    else
        printf("landlock:              no\n");
    printf("cgroup v1 memory:      %s\n", caps.cgroup_v1_memory ? yes : no);
    printf("cgroup v1 pids:        %s\n", caps.cgroup_v1_pids ? yes : no);
    printf("cgroup v2 (delegated): %s\n", caps.cgroup_v2 ? yes : no);
    bool ns = probe_namespaces_usable(&caps, cfg.exec.shared_proc) && caps.seccomp &&
              cfg.exec.isolation != EXEC_ISOLATION_RLIMITS;
    bool pid_cg = caps.cgroup_v1_pids;
    char mem_jail[128], mem_fallback[128];
    memory_text(&caps, true, mem_jail, sizeof mem_jail);
    memory_text(&caps, false, mem_fallback, sizeof mem_fallback);
    printf("memory (jail):         %s\n", mem_jail);
    printf("memory (fallback):     %s\n", mem_fallback);
    printf("limits enforced:       wall time (we stop the run), cpu time (RLIMIT_CPU), memory (%s, above), "
           "processes (%s), file size (RLIMIT_FSIZE), open files (RLIMIT_NOFILE), /tmp size (%s), output (we watch)\n",
           ns ? "jail" : "fallback",
           ns && caps.cgroup_v2 ? "cgroup v2 pids.max"
           : ns && pid_cg       ? "cgroup pids.max"
           : ns                 ? "RLIMIT_NPROC in the user namespace"
                                : "RLIMIT_NPROC, not for root",
           ns ? "tmpfs size" : "not limited: TMPDIR is in the run directory");
    if (cfg.exec.deps.package_store) {
        int links = probe_store_links(&cfg.exec);
        printf("package store:         %s\n", links > 0 ? "hard links (STATE/store and STATE/envs share a file system)"
                                               : links == 0 ? "copies (STATE/store and STATE/envs are on different file "
                                                              "systems: each environment copies its files)"
                                           : links == -ENOENT ? "unknown (no state directory yet)"
                                                              : "unknown (the state directory cannot be written)");
    } else {
        printf("package store:         off (package_store = off)\n");
    }
    int status = 0;
    const char *fb = probe_fallback_isolation(&caps, cfg.exec.landlock);
    bool fallback = cfg.exec.isolation == EXEC_ISOLATION_RLIMITS ||
                    (!cfg.exec.require_isolation && cfg.exec.isolation == EXEC_ISOLATION_AUTO);
    if (ns) {
        printf("runs get:              isolation namespaces+seccomp\n");
    } else if (fallback && !fb) {
        printf("runs get:              nothing: runs are refused (landlock = on and this kernel has no Landlock)\n");
        status = CLI_SANDBOX_REFUSED;
    } else if (fallback) {
        printf("runs get:              isolation %s (the fallback: %s)\n", fb,
               cfg.exec.isolation == EXEC_ISOLATION_RLIMITS ? "isolation = rlimits" : "require_isolation = off");
    } else {
        printf("runs get:              nothing: runs are refused (require_isolation = on and no namespaces here)\n");
        status = CLI_SANDBOX_REFUSED;
    }
    cfg_free(&cfg);
    return status;
}
