/* exec_limits.h: every limit of a run (struct exec_limits) and of a transfer
 * (struct fetch_limits), each a row of a table (common/key.h, the row every
 * configuration key is) with its configuration key, unit, default, accepted
 * range and what crossing it does. The bottom of the executor: it includes
 * nothing of the project but that row. */
#ifndef RMS_EXEC_LIMITS_H
#define RMS_EXEC_LIMITS_H

#include <stddef.h>
#include <stdint.h>

#include "key.h"

#define KIB 1024ull
#define MIB (1024ull * KIB)
#define GIB (1024ull * MIB)

/* ------------------------------------------------------------ run limits */

/* Every limit a run has. Each has a name, a configuration key, a default and
 * a documented outcome when breached: see exec_limit_defs[]. 0 means
 * "unlimited" only where the table says it may. */
struct exec_limits {
    int64_t wall_ms;        /* timeout: wall clock of the script */
    int64_t cpu_ms;         /* cpu_time: CPU seconds of the script (RLIMIT_CPU) */
    uint64_t memory;        /* memory: bytes of address space (or cgroup memory) */
    uint64_t file_size;     /* file_size: largest file the script may write (RLIMIT_FSIZE) */
    uint64_t open_files;    /* open_files: descriptors per process (RLIMIT_NOFILE) */
    uint64_t processes;     /* processes: tasks of the run (RLIMIT_NPROC / pids cgroup) */
    uint64_t log_bytes;     /* log_bytes: stdout+stderr kept in the log */
    uint64_t output_bytes;  /* output_bytes: total bytes of output/ */
    uint64_t output_files;  /* output_files: number of files in output/ */
    int64_t kill_grace_ms;  /* kill_grace: SIGTERM -> SIGKILL delay at the end */
    uint64_t tmp_bytes;     /* tmp_bytes: size of the private /tmp and /dev/shm (jail) */
    uint64_t tmp_files;     /* tmp_files: inodes of each */
    uint64_t code_bytes;    /* code_bytes: largest script a request may carry */
    uint64_t input_bytes;   /* input_bytes: largest input a request may carry */
    int64_t install_ms;     /* install_time: wall clock of the installer */
    uint64_t workspace_bytes; /* workspace_bytes: disk of the workspace (output/ included) */
    uint64_t workspace_files; /* workspace_files: inodes of it */
    uint64_t value_bytes;   /* value_bytes: text of the last expression's value kept in the result */
    uint64_t net_bytes;     /* net_bytes: bytes in and out of every connection of a run (network on) */
    uint64_t net_connections; /* net_connections: connections a run may open (network on) */
};

/* One row per limit (KEY_DURATION, KEY_SIZE or KEY_COUNT, flag KEY_F_LIMIT;
 * its doc says what crossing it does): the configuration reads, prints and
 * documents them (doc/configuration.md, Limits) from these rows. */
extern const struct key_def exec_limit_defs[];
extern const size_t exec_limit_defs_n;

/* Fills l with the defaults of exec_limit_defs[]. */
void exec_limits_default(struct exec_limits *l);
/* Reads or writes the field of a limit by its row. */
uint64_t exec_limit_get(const struct exec_limits *l, const struct key_def *d);
void exec_limit_set(struct exec_limits *l, const struct key_def *d, uint64_t v);
/* The row for key, or NULL. */
const struct key_def *exec_limit_find(const char *key);

/* ------------------------------------------------------- transfer limits */

/* Every limit of a transfer, each with a key, a default, a range and what
 * happens when it is crossed: see fetch_limit_defs[] (rows of the same
 * shape as exec_limit_defs[], offsets into this struct). */
struct fetch_limits {
    uint64_t fetch_bytes;        /* fetch_bytes: largest download */
    uint64_t upload_bytes;       /* upload_bytes: largest upload */
    int64_t connect_timeout_ms;  /* fetch_connect_timeout: per connection attempt */
    int64_t timeout_ms;          /* fetch_timeout: a whole transfer, redirects included */
    uint64_t redirects;          /* fetch_redirects: redirects followed (0: none) */
    uint64_t mount_files;        /* mount_files: files in one session's mounts/ */
    uint64_t mount_bytes;        /* mount_bytes: bytes of one session's mounts/ */
};
extern const struct key_def fetch_limit_defs[];
extern const size_t fetch_limit_defs_n;
void fetch_limits_default(struct fetch_limits *l);
uint64_t fetch_limit_get(const struct fetch_limits *l, const struct key_def *d);
void fetch_limit_set(struct fetch_limits *l, const struct key_def *d, uint64_t v);
/* The row for key, or NULL. */
const struct key_def *fetch_limit_find(const char *key);

#endif
