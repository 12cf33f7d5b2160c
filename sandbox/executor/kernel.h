/* executor/kernel.h: kernels: a live Python per workspace, and a cell run in
 * it. Part of the executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_KERNEL_H
#define RMS_EXECUTOR_KERNEL_H

#include <stdint.h>

#include "executor/run.h"
#include "util.h"

/* A kernel is one long-lived Python process per workspace, in a jail like
 * a session run's (its own namespaces, uid, cgroup and seccomp filter, the
 * workspace at /work, no network unless script_network; forked from the
 * environment's zygote where the warm pool has one, else started cold; in
 * the fallback where the host has no namespaces), watched by a small host
 * process of its own outside the jail that outlives the request that
 * started it (doc/architecture.md, "A cell"). Cells run one at a time in
 * its __main__: the names one cell defines (variables, functions, classes,
 * imports, open files, threads) are there in the next; the files of the
 * workspace persist as for runs. A workspace is named by its path: two
 * paths, two kernels that share nothing. */

/* Runs spec->code as a cell in the kernel of spec->workspace (required:
 * an existing directory, as exec_run's session workspace), starting one
 * when the workspace has none. The same sink and result as exec_run (the
 * phases, the output as it comes, installer lines, cancelled(), accepted;
 * the same checks first, refused the same way), and the same outcome and
 * return: DONE and 0 with a complete, recorded result (STATE/runs/RUNID
 * of the cell, its artifacts reachable by the run id), BUSY turned away
 * (see below), or FAILED when the service failed (status sandbox_error,
 * reason in r->error). spec->workspace missing or spec->input not empty
 * (a cell reads no input): REFUSED.
 * What differs from a run:
 *   - r->kernel: new, kept or restarted, the cell's number, the reason;
 *     r->value: the last expression (both as described at struct
 *     result);
 *   - r->artifacts: only the files of output/ this cell created or changed,
 *     each flagged; a figure still open at the end of the cell, or a PIL
 *     image as its value, is a PNG artifact (output/cell-N-*.png);
 *   - one cell at a time per kernel: a second one waits (phase queued) at
 *     most queue_wait, then BUSY with the reason in r->error (as when
 *     every kernel of max_kernels is running a cell);
 *   - a running cell holds a run slot (admission, as a run); an idle
 *     kernel holds none;
 *   - limits: timeout (and cpu_time, output_*, workspace_*) interrupt the
 *     cell (KeyboardInterrupt in the kernel): status timeout (or
 *     output_limit, workspace_limit) and the kernel and its names stay; a
 *     cell that goes on kernel_grace after its interrupt has its kernel
 *     killed (the status says so in r->error; the next cell starts a new
 *     kernel). memory is the kernel's as a whole: past it the kernel is
 *     killed, status memory, and the next cell starts a new one with the
 *     workspace's files intact. The other limits of the cell that starts
 *     a kernel (memory, processes, open_files, tmp_*, file_size) are that
 *     kernel's for its life;
 *   - cancelled() and exec_cancel(RUNID) interrupt the cell: status
 *     cancelled, the kernel stays;
 *   - a kernel that dies under a cell (killed from outside, os._exit)
 *     ends the cell at once: status sandbox_error (killed by a signal we
 *     did not send) or error (it exited), with the reason; never a hung
 *     call;
 *   - a cell that imports what the kernel's environment lacks gets it from
 *     the package store; the kernel restarts with the larger environment
 *     (r->kernel.state restarted, the reason names the packages).
 * Without kernels here (cfg->kernels.on false: the CLI, CGI; or
 * max_kernels 0) the outcome is UNSUPPORTED (rc -ENOTSUP) with nothing
 * made and r->error saying that kernels live only under `runmyscript
 * serve`. */
int exec_kernel_cell(const struct exec_spec *spec, const struct exec_sink *sink, struct result *r) must_check;

/* Ends the kernel of workspace, if it has one, and its names with it; the
 * files stay, and the next cell starts a new kernel (state new, reason "the
 * kernel was reset"). A cell running in it is interrupted first (status
 * cancelled). 0 (also when there was no kernel), or -errno. */
int exec_kernel_reset(const struct exec_config *cfg, const char *workspace) must_check;

/* Saving a kernel (kernel_save_bytes): a kernel that is stopped for
 * kernel_idle, max_kernels, kernel_memory or the server's end (not a
 * reset, not a kill for memory) first saves its state into its workspace
 * (.kernel/state: its names, each pickled on its own inside the kernel's
 * jail, the modules its cells imported, its cells' count and code, the
 * Python and packages it ran with), and the next cell's new kernel
 * restores it before the cell runs (r->kernel.state restored, the report
 * in r->kernel.restored). The server never reads the state. */

/* Saves the state of workspace's live kernel now, the kernel kept (a
 * checkpoint that exec_kernel_restore returns to). Takes the workspace's
 * lock (waits at most queue_wait). 0 with the kernel's report as JSON in
 * *report (caller frees: bytes, names, skipped, ms) and a summary in err;
 * 1 when nothing was saved, err says why (no live kernel, a cell runs,
 * past kernel_save_bytes or workspace_bytes, saving off); -EBUSY (the
 * workspace is busy), -errno. */
int exec_kernel_save(const struct exec_config *cfg, const char *workspace, char **report, char *err,
                     size_t errlen) must_check;

/* Stops every idle kernel of the state directory, each saving its state
 * first (as kernel_idle does), with reason for their next cells: serve
 * calls it as it ends and before its warm pool starts again (SIGHUP), whose
 * end would take its warm kernels with it unsaved. The kernels save
 * together; waits until they are gone (at most kernel_grace, kill_grace
 * and two minutes more). A kernel running a cell is left alone. The number
 * of kernels stopped, or -errno. */
int exec_kernel_stop_all(const struct exec_config *cfg, const char *reason);

/* Ends the workspace's kernel without saving it, and has its next cell
 * start a kernel from the state last saved (reset_kernel to "saved"). 0; 1
 * when the workspace has no saved state (err says so; nothing was ended);
 * -errno with err. exec_kernel_reset, by contrast, has the next kernel
 * start empty. */
int exec_kernel_restore(const struct exec_config *cfg, const char *workspace, char *err, size_t errlen) must_check;

/* Ends the kernel of workspace, if it has one, for good: the workspace is
 * going (delete_workspace, a session ended or reaped). Waits until the
 * kernel's processes are gone (at most kernel_grace and a second), so that
 * the caller may remove the workspace after. 0 (also when there was no
 * kernel), or -errno. */
int exec_kernel_end(const struct exec_config *cfg, const char *workspace) must_check;

/* What /healthz shows of the kernels of a state directory. */
struct exec_kernel_stats {
    uint32_t live;              /* kernels running (idle or in a cell) */
    uint32_t busy;              /* of them, running a cell */
    uint32_t max;               /* max_kernels */
    uint64_t memory;            /* what the live kernels hold together, in bytes */
    uint64_t memory_max;        /* kernel_memory (0: no budget) */
};
/* Reads the kernels' counters (a snapshot: each kernel's host writes its
 * own). 0 or -errno; no kernel ever ran here is 0 with live 0. */
int exec_kernel_stats(const struct exec_config *cfg, struct exec_kernel_stats *s) must_check;

#endif
