/* kernel_internal.h: what the files of sandbox/kernel/ share: the start of
 * a kernel's host (kernel_host.c), called by a worker's cell
 * (kernel_cell.c), and the host's state, which kernel_host.c (the host's
 * life and its peers), kernel_host_cell.c (a cell's run and watch) and
 * kernel_proc.c (the kernel process beneath both) work on. Beneath them all
 * kernel.c (kernel.h): the kernel's place on disk, its frames, its slots.
 * Nothing outside sandbox/kernel/ includes it. */
#ifndef RMS_KERNEL_INTERNAL_H
#define RMS_KERNEL_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "exec_ctx.h"
#include "kernel.h"
#include "strv.h"

/* ------------------------------ a kernel's start (kernel_host.c) */

/* What a worker gives the host it starts for a workspace's kernel: all
 * borrowed, valid in the host (a fork of the worker). */
struct kernel_start {
    const struct exec_config *cfg;
    const char *dir;             /* STATE/kernels/KEY */
    const char *key;
    const char *workspace;
    const char *env_dir;         /* the kernel's environment (held by the caller until the host holds it) */
    const char *const *requirements; /* the specs it was made for */
    size_t n_requirements;
    const struct exec_limits *limits; /* the kernel's: the starting cell's */
    const char *network;         /* the kernel's: the starting cell's exec_spec.network */
    const char *code;            /* the starting cell (its imports teach the warm pool) */
    size_t code_len;
    int server_pidfd;            /* the server's end ends the kernel */
};
/* Starts the host of a new kernel (exec_detach) and waits for its kernel
 * to be up: 0, -EBUSY (every max_kernels slot is held by a busy kernel),
 * -EEXIST (a host is there already), or -errno, with a one-line reason in
 * err. warm says how the kernel started. */
int kernel__host_start(const struct kernel_start *ks, bool *warm, char *err, size_t errlen) must_check;

/* ---------------------------------------------- a kernel's host */
/* kernel_host.c the host's life and its peers, kernel_host_cell.c a cell's
 * run and watch, kernel_proc.c the kernel process beneath both. */

#define HOST_TICK_MS 100        /* the watch's pace: deadlines, memory, idle */
#define HOST_MEASURE_MS 500     /* the disk a cell takes, this often */
#define HOST_IDLE_OUT 65536     /* output between cells kept for the next one */
#define HOST_PEERS 8            /* connections served at once */
#define HOST_PEER_MS 2000       /* a peer's frame comes whole this soon */
#define HOST_SEND_MS 10000      /* a worker that reads nothing this long is gone */
#define HOST_ANSWER_SLACK 65536 /* a kernel's answer: value_bytes and this */

/* The kernel process, started and watched by the host. */
struct kproc {
    bool up;
    struct jail_proc proc;      /* its jail (cold: its init; warm: the run's init; fallback: itself) */
    int chan;                   /* the channel: our end of its fd 0 */
    int out_r, err_r;           /* its stdout and stderr */
    int py_pidfd;               /* the kernel's Python process (its own pidfd, sent in its hello) */
    pid_t py_pid;               /* the same, on the host */
    char *env_dir;              /* its environment, held through env_fd */
    int env_fd;
    struct strv reqs;           /* the requirement specs the environment was made for */
    char *view_dir;             /* the larger environment whose packages were added in place (site/), held
                                 * through view_fd; NULL: none was */
    int view_fd;
    int site_fd;                /* KEY/site, the kernel's extra directory (emptied at each start) */
    char site_no[200];          /* why the kernel cannot see it ("": it can) */
    bool warm;
    const char *isolation;      /* static */
    uint64_t cells;             /* cells it ran */
    struct exec_net net;        /* its network of its own (script_network = on), for its life */
};

/* Why a cell was interrupted. */
enum kernel_cell_why {
    KERNEL_CELL_WHY_NONE,
    KERNEL_CELL_WHY_WALL,         /* timeout */
    KERNEL_CELL_WHY_CPU,          /* cpu_time */
    KERNEL_CELL_WHY_CANCEL,       /* the worker's cancel, or the worker gone */
    KERNEL_CELL_WHY_OUTPUT,       /* output_bytes, output_files */
    KERNEL_CELL_WHY_WORKSPACE,    /* workspace_bytes, workspace_files */
};

/* The cell in progress. */
struct cell {
    bool on;
    int peer;                   /* the worker that sent it, -1 once gone */
    bool peer_failed;           /* a send to it failed: it is gone */
    struct exec_limits lim;     /* its limits */
    int64_t t0, deadline;       /* util_now_ms() */
    int64_t kill_at;            /* after its interrupt: the kernel is killed then (0: not yet) */
    int64_t next_measure;
    uint64_t cpu0;              /* the kernel's CPU time at its start, ms */
    enum kernel_cell_why why;
    const char *limit;          /* the key of the limit that interrupted it */
    char why_text[192];         /* a disk limit, in words */
    /* What exec__disk_over and exec__disk_cut need of a run: the cell's
     * limits, output/, the workspace, the kernel's run directory. */
    struct exec_spec spec;
    struct result r;
    struct exec_sink sink;      /* the system lines it says go to the peer */
    struct run run;
    struct timespec since;      /* its start as a file's ctime */
};

/* A kernel's host (one per process). */
struct host {
    const struct exec_config *cfg;
    char dir[PATH_MAX];         /* STATE/kernels/KEY */
    char key[KERNEL_KEY_LEN + 1];
    char job[PATH_MAX + 8];     /* DIR/job: the kernel's run directory */
    const char *workspace;
    struct exec_limits limits;  /* the kernel's */
    char *network;              /* the kernel's exec_spec.network (its starting cell's), or NULL */
    int dir_fd, lock_fd, slot_fd, state_fd, listen_fd, job_fd;
    int server_pidfd;
    int peers[HOST_PEERS];
    struct kproc k;
    struct cell cell;
    uint64_t memory;            /* what the kernel holds, last read */
    int64_t last_used;          /* util_wall_ms() of the last cell's end */
    int64_t last_cell;          /* util_now_ms() of the same, for kernel_idle */
    int64_t next_memory;        /* the next look at the kernel's memory */
    bool killed_it;             /* we killed the kernel (a cell past its interrupt's grace) */
    bool chan_lost;             /* the kernel closed its channel (its user's code did): we ended it */
    struct dbuf idle_out;       /* output between cells */
    bool idle_cut;
    bool ending;
    char end_reason[KERNEL_REASON_MAX];
};

/* ------------------------------------ the kernel (kernel_proc.c) */

/* Writes the host's counters (KEY/state). */
void kernel__host_state(struct host *h);
/* A chunk of the kernel's output: to the cell's worker, or kept for the
 * next cell (up to HOST_IDLE_OUT). */
void kernel__host_output(struct host *h, enum result_stream stream, const char *data, size_t len);
/* Sends the output kept between cells to the cell's worker. */
void kernel__host_flush_idle(struct host *h);
/* While the kernels together hold more than kernel_memory, the least
 * recently used idle one of another workspace goes. */
void kernel__host_budget(struct host *h);
/* Starts the kernel of env_dir (reqs: the specs it was made for; code: the
 * cell that starts it, whose imports teach the warm pool). 0 or -errno
 * with err. */
int kernel__proc_boot(struct host *h, const char *env_dir, const char *const *reqs, size_t n, const char *code,
                     size_t code_len, char *err, size_t errlen) must_check;
/* A cell needs env (reqs: the specs it was made for), a larger
 * environment: what it adds put into the kernel's extra directory
 * (deps_env_extend), the kernel's environment env from now on. 0 with
 * "name==version" of each package added onto added; 1 with the reason in
 * why when it cannot be (the mode, a version that differs); -errno with
 * why. */
int kernel__proc_add(struct host *h, const char *env, const char *const *reqs, size_t n, struct strv *added,
                    char *why, size_t whylen) must_check;
/* Reads what the kernel holds into h->memory; *over when the memory watch
 * (no cgroup) finds it past memory. */
void kernel__proc_memory(struct host *h, bool *over);
/* The kernel's CPU time so far (its process and the children it reaped),
 * ms. */
uint64_t kernel__proc_cpu(const struct host *h);
/* Reads what the kernel wrote into kernel__host_output. */
void kernel__proc_drain(struct host *h);
/* Ends the kernel and gives back what it held; locked: the caller's
 * worker holds the session's lock (else it is taken for the release). */
void kernel__proc_stop(struct host *h, bool locked);
/* Why the kernel ended on its own, for the next cell. */
void kernel__proc_why_gone(const struct host *h, char *why, size_t n);

/* ------------------------------- a cell (kernel_host_cell.c) */

/* A CELL from peer: sent to the kernel, watched from now on. */
void kernel__cell_begin(struct host *h, int peer, json_object *o);
/* The kernel answered on its channel: the cell's end. */
void kernel__cell_answer(struct host *h);
/* The kernel wrote to its channel between cells (its user's code did):
 * read and dropped, and a kernel that says nonsense is ended. */
void kernel__cell_stray(struct host *h);
/* The kernel's process is gone: the cell (if one runs) ends with what
 * killed it, and the host with the reason. */
void kernel__cell_kernel_gone(struct host *h);
/* Interrupts the cell (SIGINT) for why; the kernel is killed if the cell
 * runs on kernel_grace after. */
void kernel__cell_interrupt(struct host *h, enum kernel_cell_why why);
/* The cell's worker went away: the cell is interrupted (cancelled). */
void kernel__cell_peer_gone(struct host *h);
/* The kernel is ending under the cell (reset, the server gone): the cell
 * ends cancelled, with reason. */
void kernel__cell_cancel_end(struct host *h, const char *reason);
/* Answers peer's cell with sandbox_error and err: the kernel could not be
 * had for it. */
void kernel__cell_refuse(struct host *h, int peer, const char *err);
/* The cell's watch at every wake-up: its deadline, CPU time, disk and the
 * kernel's memory (all the time). True when the host must end. */
bool kernel__cell_tick(struct host *h, int64_t now);

#endif
