/* warm.h: the warm pool (warm_pool.c): one process beside the server's
 * workers that keeps a zygote per environment (jail_zygote.c) within the
 * warm_* limits and hands each run a worker asks for to its environment's
 * zygote, over a Unix socket in the state directory. What the executor
 * itself uses of it; the server starts it through executor.h. */
#ifndef RMS_WARM_H
#define RMS_WARM_H

#include <stdbool.h>
#include <stddef.h>

#include "executor.h"

#define WARM_DIR ".warm"             /* under STATE: the socket, the counters */
#define WARM_SOCK "pool.sock"
#define WARM_STATS "stats"
#define WARM_STATS_LEN 192 /* its length, always (written in place) */
#define WARM_MODULE_MAX 128          /* bytes of one module path */
#define WARM_MODULES_MAX 256         /* modules a zygote imports */

/* STATE/.warm/pool.sock into buf. 0, or -ENAMETOOLONG. */
int warm_sock_path(const char *state_dir, char *buf, size_t n) must_check;

/* True when name is a module path a zygote may import: [A-Za-z0-9_.], not
 * starting with a dot or a digit, at most WARM_MODULE_MAX bytes. */
bool warm_module_ok(const char *name);

#endif
