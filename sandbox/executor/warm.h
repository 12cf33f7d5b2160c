/* executor/warm.h: the warm pool: the zygotes beside a server. Part of the
 * executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_WARM_H
#define RMS_EXECUTOR_WARM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "executor/settings.h"
#include "util.h"

/* The warm pool of a server. */
struct exec_warm_pool {
    pid_t pid;                  /* -1: none */
    int pidfd;                  /* the server watches it through this (owned) */
};
/* Starts the warm pool for cfg's state directory (the server's supervisor
 * calls it; the pool is not its child, ends when the server does, or on
 * exec_warm_stop) and fills pool, with pid -1 when warm is off or cannot
 * be had here (not root: then every run starts cold). 0 or -errno. The
 * pool has its own copy of cfg. */
int exec_warm_serve(const struct exec_config *cfg, struct exec_warm_pool *pool) must_check;
/* True while the pool runs. */
bool exec_warm_alive(const struct exec_warm_pool *pool);
/* Stops the pool (and its zygotes, and their runs) and waits for it;
 * pool is none after. Safe on none. */
void exec_warm_stop(struct exec_warm_pool *pool);

/* True when a warm pool listens for state_dir (its socket takes a
 * connection): a server's, which runs of any process of state_dir use. */
bool exec_warm_serving(const char *state_dir);

/* What /healthz shows of the pool. */
struct exec_warm_stats {
    bool serving;               /* a pool listens for this state directory */
    uint64_t envs;              /* environments with a zygote ready */
    uint64_t runs;              /* runs handed to a zygote since the pool started */
    uint64_t skipped;           /* modules a zygote could not import safely, skipped (STATE/.warm/learned
                                 * names them, per environment) */
    uint64_t spares;            /* runs' inits the ready zygotes hold made ahead (warm_spares each), as the
                                 * pool last looked (once a second) */
};
/* Reads the pool's counters. 0, -ENOENT when no pool ever ran here, or
 * -errno. */
int exec_warm_stats(const char *state_dir, struct exec_warm_stats *s) must_check;

#endif
