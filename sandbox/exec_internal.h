/* exec_internal.h: what the files of exec_run() share beyond a call's
 * context and steps (exec_ctx.h, which the kernel's code shares too): the
 * script's run under its limits (exec_script.c) and the disk's start mark
 * and tidy after a run (exec_disk.c). Not for front doors: executor.h is. */
#ifndef RMS_EXEC_INTERNAL_H
#define RMS_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "exec_ctx.h"

/* Runs the script in env_dir's interpreter under its limits, its output
 * into the log, until it ends or is stopped; fills the status, exit code,
 * times and the breached limit of run->r. 0, or -errno when the service
 * failed (r->error says why). */
int exec__run_script(struct run *run, const char *env_dir) must_check;
/* The marker of a run's start, its run directory STATE/runs/ID (whose
 * times the mark sets): an fd for jail_opts.mark, or -1. */
int exec__disk_mark_open(struct run *run);
/* Whether a session's workspace holds a file (mounts/ aside): only then
 * must a run's start wait for the clock to pass its mark (jail_mark.wait:
 * a file given to the run and one it writes at once could have the same
 * ctime). */
bool exec__disk_has_files(const char *workspace);
/* After a run: the run directory keeps script.py and input (as given),
 * output/ and the zip; whatever else the script wrote there (its scratch
 * files, the fallback's home/ and tmp/) is removed, and so is what the
 * output/ of a run alone holds but its artifacts. */
void exec__disk_tidy(struct run *run);
/* A script of the fallback that died of a MemoryError (RLIMIT_AS). */
bool exec__died_of_memory(const struct result *r);

#endif
