/* executor/probe.h: probing: what the host and the server have. Part of the
 * executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_PROBE_H
#define RMS_EXECUTOR_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "executor/settings.h"
#include "util.h"

/* What this host supports, for check-sandbox and the mode decision. */
struct probe_caps {
    bool userns;          /* user+mount+pid+net+ipc+uts namespaces can be made, and a
                           * run's root in them (a tmpfs, /proc, pivot_root) */
    char userns_error[128];
    bool seccomp;
    bool cgroup_v1_memory, cgroup_v1_pids;  /* writable v1 hierarchies (root) */
    bool cgroup_v2;       /* a delegated v2 cgroup with memory and pids */
    bool root;
    /* Where no memory cgroup holds a run, the executor sums the memory of
     * its processes this often and kills it past `memory`. */
    int memory_watch_ms;
    int landlock_abi;     /* the kernel's Landlock ABI version, 0: none */
    /* With userns, where a container refuses them: a run's /proc is the
     * container's (its processes visible, none of them signalled), and
     * its host name the container's. */
    bool proc_shared, hostname_kept;
};

/* Probes the host (forks a child that tries the namespaces). */
void probe_host(struct probe_caps *c);

/* Whether runs get the namespaces on the host c describes: they can be
 * made, and where a run's /proc would be the container's (proc_shared),
 * shared_proc (the key) allows it. */
bool probe_namespaces_usable(const struct probe_caps *c, bool shared_proc);

/* The isolation a fallback run gets on the host c describes under the
 * landlock setting (static string, as result.isolation names it), or
 * NULL when landlock = on and the kernel has no Landlock (fallback runs
 * are refused). */
const char *probe_fallback_isolation(const struct probe_caps *c, enum exec_landlock l);

/* How many run slots and queue places are held right now (a snapshot, for
 * /healthz and messages). It tries each lock for an instant, so a caller
 * entering at that very instant may find that slot taken and queue. 0 or
 * -errno. */
int probe_slots(const char *state_dir, const struct exec_admit_config *c, uint32_t *running, uint32_t *queued) must_check;

/* The base environment of cfg's interpreter (STATE/envs/base-KEY, a venv
 * with the standard library only), made first when missing: *env_dir is
 * its directory (caller frees). For /healthz, which reads the Python
 * version from it. 0, or -errno with a one-line reason in err. */
int probe_base_env(const struct exec_config *cfg, char **env_dir, char *err, size_t errlen) must_check;

/* Whether environments can be hard links into the package store: 1 when a
 * probe file made in STATE/store links into STATE/envs (the state
 * directory standing for either when not made yet; nothing is left), 0
 * when it cannot (environments are then copies), -errno when it could not
 * be told. For check-sandbox. */
int probe_store_links(const struct exec_config *cfg);

#endif
