/* executor/settings.h: the configuration: what a server gives all its runs (the
 * limits are exec_limits.h's). Part of the executor's public API: executor.h
 * includes every part. */
#ifndef RMS_EXECUTOR_SETTINGS_H
#define RMS_EXECUTOR_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec_limits.h"
#include "executor/network.h"
#include "util.h"

#define EXEC_MAX_SLOTS 4096   /* ceiling of max_running and of max_queued */
struct exec_admit_config {
    uint32_t max_running;   /* max_concurrent_runs; 0: the number of online CPUs */
    uint32_t max_queued;    /* max_queued_runs; 0: no queue, busy at once */
    int64_t queue_wait_ms;  /* queue_wait: the longest a run waits for a slot */
};

/* max_running with 0 resolved to the number of online CPUs. */
uint32_t exec_admit_max_running(const struct exec_admit_config *c);

enum exec_installer {
    EXEC_INSTALLER_AUTO, /* uv when it is on PATH, else pip */
    EXEC_INSTALLER_UV,
    EXEC_INSTALLER_PIP,
};

/* Server-wide settings (config keys of the same names). Strings are
 * borrowed for the life of the struct. */
struct exec_deps_config {
    const char *data_dir;        /* data_dir: its import-names.tsv replaces the built-in map; NULL or "": built-in */
    enum exec_installer installer;
    const char *index_url;       /* NULL: the installer's default; "none": no index */
    const char *extra_index_url; /* NULL, or URLs separated by spaces */
    const char *find_links;      /* NULL, or directories/URLs separated by spaces */
    bool only_binary;            /* wheels only: no setup.py runs at install time */
    bool requirement_urls;       /* allow `name @ URL` direct references */
    bool fallback_host_network;  /* fallback_installer_network: in the rlimits fallback, an installer with a
                                  * remote source keeps the host's network (else it is refused there) */
    uint64_t cache_bytes;        /* env_cache_size: 0 means no cap */
    bool package_store;          /* package_store: environments assembled from STATE/store (pip only) */
    uint64_t store_bytes;        /* store_bytes: the store and the environments together; 0: no cap */
};

enum exec_isolation {
    EXEC_ISOLATION_AUTO,       /* namespaces where the host has them, else rlimits */
    EXEC_ISOLATION_NAMESPACES, /* refuse to run without them */
    EXEC_ISOLATION_RLIMITS,    /* force the fallback (tests, shared hosts) */
};

/* The fallback's Landlock and seccomp filter (config landlock). */
enum exec_landlock {
    EXEC_LANDLOCK_AUTO, /* both where the kernel has them */
    EXEC_LANDLOCK_ON,   /* refuse a fallback run where the kernel has no Landlock */
    EXEC_LANDLOCK_OFF,  /* neither: the plain rlimits fallback */
};

/* The warm pool (warm_* config keys): a zygote per environment that runs
 * are forked from (doc/performance.md, doc/isolation.md). */
struct exec_warm {
    bool on;                    /* warm: off makes every run cold */
    uint32_t envs;              /* warm_envs: environments kept warm at once */
    int64_t idle_ms;            /* warm_idle: a zygote unused this long goes */
    uint64_t memory;            /* warm_memory: what the zygotes may hold together; 0: no cap */
    uint32_t runs;              /* warm_runs: a zygote is replaced after this many runs; 0: never */
    int64_t lifetime_ms;        /* warm_lifetime: ... or after this long; 0: never */
    const char *modules;        /* warm_modules: imported in every zygote besides what runs import */
    uint32_t spares;            /* warm_spares: runs' inits (their namespaces, /proc, /tmp) a busy zygote
                                 * makes ahead, 0 to 8; 0: each run's is made when it comes */
    int64_t wait_ms;            /* warm_wait: a run waits this long for the pool's answer and the
                                 * zygote's fork, then starts cold */
};

/* Kernels (the kernel_* and max_kernels config keys): a live Python per
 * workspace that keeps its names from one cell to the next (exec_kernel_cell).
 * A kernel outlives the request that started it, so only a server whose
 * processes outlive their requests has them: `runmyscript serve` sets on;
 * the CLI and CGI leave it off, and exec_kernel_cell then refuses with a reason
 * that says so. */
struct exec_kernels {
    bool on;                    /* kernels may start here (serve's workers set it) */
    /* The process whose end ends every kernel: serve's supervisor. 0: the
     * caller's parent (a worker's parent is the supervisor). A caller that
     * is no worker (an MCP task's detached process, whose parent is init)
     * must set it: with no parent but init, exec_kernel_cell refuses to start a
     * kernel (it would outlive the server). */
    pid_t server;
    int64_t idle_ms;            /* kernel_idle: a kernel without a cell this long is stopped */
    uint32_t max;               /* max_kernels: kernels live at once; the least recently used idle one
                                 * makes room for a new one */
    uint64_t memory;            /* kernel_memory: what all kernels may hold together (their cgroups or
                                 * the memory watch); past it idle ones are stopped, least recently used
                                 * first; 0: no budget */
    int64_t grace_ms;           /* kernel_grace: how long an interrupted cell may go on before its kernel
                                 * is killed */
    uint64_t save_bytes;        /* kernel_save_bytes: the largest state a kernel that is stopped saves
                                 * into its workspace (.kernel/state); 0: none is saved */
};

/* Server-wide settings exec_run() needs; the front door fills it from the
 * configuration file. All strings are borrowed for the life of the struct. */
struct exec_config {
    const char *state_dir;      /* absolute: STATE in doc/architecture.md */
    const char *python;         /* interpreter scripts run with */
    const char *url_prefix;     /* "/artifacts/" for result URLs; NULL: no URLs */
    const char *node_id;        /* run ids are NODE-HEX (a cluster); NULL: HEX */
    enum exec_isolation isolation;
    bool require_isolation;     /* refuse to run without the namespaces */
    enum exec_landlock landlock;
    /* Where the kernel refuses a run a /proc of its own (a container's
     * masked one): the run may have the container's, and the namespaces
     * (shared_proc); else it takes the fallback there. */
    bool shared_proc;
    enum net_mode script_network; /* script_network: a run's network (executor/network.h) */
    const char *egress_allow;   /* egress_allow: what a run with network on may reach (net_rules_parse's
                                 * syntax); NULL or "": nothing */
    const char *egress_deny;    /* egress_deny: added to the never-reachable classes, whatever egress_allow
                                 * says; NULL or "": nothing more */
    uint32_t uid_base, uid_count; /* host uids for runs when we are root */
    struct exec_limits limits;  /* defaults for a call */
    int64_t run_ttl_ms;         /* run directories older than this are reaped */
    uint64_t runs_bytes;        /* runs_bytes: run records in all, bytes; 0: no cap */
    uint64_t runs_files;        /* runs_files: ... and inodes; 0: no cap */
    uint64_t disk_reserve_bytes; /* disk_reserve: new runs are refused below this free space, */
    uint32_t disk_reserve_pct;  /* or below this share of the state_dir's file system (space and inodes) */
    struct exec_deps_config deps;    /* installer, index, import map, env cache */
    bool auto_deps;             /* default of exec_spec.auto_deps */
    struct exec_admit_config admit;  /* run slots and the queue (admit.h) */
    int64_t retry_after_ms;     /* retry_after: what a busy answer tells the client */
    struct exec_warm warm;      /* the warm pool */
    struct exec_kernels kernels; /* exec_kernel_cell's kernels */
};

/* Checks the data a run reads from the configuration: with data_dir set
 * (not NULL or empty), data_dir/import-names.tsv must be there, readable
 * and well formed. 0, or -errno with a one-line reason in err (a front door
 * refuses to start on it: a configuration error, not a failed run). */
int exec_check_data(const char *data_dir, char *err, size_t errlen) must_check;
/* The distributions the import map (data_dir's, or the built-in one) knows
 * whose name, or one of whose import names, begins with prefix (ASCII case
 * ignored), each once, sorted: fn(dist, ctx) for each until it returns
 * non-zero (then that is returned). 0, or -errno when the map cannot be
 * read. */
int exec_packages_each(const char *data_dir, const char *prefix, int (*fn)(const char *dist, void *ctx),
                       void *ctx) must_check;

#endif
