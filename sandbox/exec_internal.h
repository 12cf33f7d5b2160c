/* exec_internal.h: what the parts of exec_run() share: the state of one
 * run (struct run), the lines and phases it reports, and the script's run
 * under its limits (exec_script.c). Not for front doors: executor.h is. */
#ifndef RMS_EXEC_INTERNAL_H
#define RMS_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "admit.h"
#include "executor.h"

struct jail_proc;

/* One run, while exec_run() works on it. */
struct run {
    const struct exec_spec *spec;
    const struct exec_sink *sink;
    struct exec_result *r;
    int run_fd;    /* the run directory */
    int out_fd;    /* output/ */
    struct dbuf install_log;
    bool install_log_cut;
    bool installer_ran;
    int session_lock; /* the session workspace, flock'd for the run */
    struct admit_ticket ticket; /* the run slot (or queue place) it holds */
};

/* Sets r->error (a one-line reason for the user) and the status
 * sandbox_error. */
void exec__set_error(struct exec_result *r, const char *fmt, ...) printf_like(2, 3);
/* Tells the sink the run entered phase p. */
void exec__phase(struct run *run, enum exec_phase p, const char *detail);
/* Appends a chunk of output to the log and hands what it kept to the sink. */
void exec__emit(struct run *run, enum exec_stream stream, const char *data, size_t len);
/* One line of runmyscript's own (a SYSTEM chunk), on a line of its own. */
void exec__system_line(struct run *run, const char *fmt, ...) printf_like(2, 3);
/* The same into the log only: for what the sink was shown already. */
void exec__log_line(struct run *run, const char *fmt, ...) printf_like(2, 3);

/* Set once a start found that this host cannot make the namespaces, so
 * that later runs of this process go straight to the fallback. */
extern bool exec__namespaces_unavailable;
/* The fallback is taken only when the config allows it: isolation = auto
 * and require_isolation = off. */
bool exec__may_fall_back(const struct exec_config *cfg);
/* True when the sink or another process (RUN/cancel) asked the run to stop. */
bool exec__cancel_requested(struct run *run);
/* Runs the script in env_dir's interpreter under its limits, its output
 * into the log, until it ends or is stopped; fills the status, exit code,
 * times and the breached limit of run->r. 0, or -errno when the service
 * failed (r->error says why). */
int exec__run_script(struct run *run, const char *env_dir) must_check;
/* The disk of the run (exec_disk.c): measures what the script can write
 * (in the fallback, the run directory's home/ and tmp/ too; output/ only
 * when output) and returns the key of the limit it passes (static), with a
 * sentence for the log in err, or NULL. A tree that cannot be measured
 * passes workspace_files. */
const char *exec__disk_over(struct run *run, struct jail_proc *proc, bool fallback, bool output, char *err,
                            size_t errlen);
/* The marker of a run's start, its run directory STATE/runs/ID (whose
 * times the mark sets): an fd for jail_opts.mark, or -1. */
struct jail_mark;
int exec__disk_mark_open(struct run *run);
/* Whether a session's workspace holds a file (mounts/ aside): only then
 * must a run's start wait for the clock to pass its mark (jail_mark.wait:
 * a file given to the run and one it writes at once could have the same
 * ctime). */
bool exec__disk_has_files(const char *workspace);
/* The script's start as a file's ctime: the jail's mark of it (taken once
 * the run was given its paths, which changes their ctime, and before the
 * script could write: jail_opts.mark), or without one the marker touched
 * now, from the clock that stamps the files the script writes. */
void exec__disk_mark(struct run *run, const struct jail_mark *mark, struct timespec *since);
/* After a session run that passed a limit of the disk: removes from the
 * workspace what changed after since (exec__disk_mark), and says so in
 * the log. */
void exec__disk_cut(struct run *run, const struct timespec *since);
/* After a run: the run directory keeps script.py and input (as given),
 * output/ and the zip; whatever else the script wrote there (its scratch
 * files, the fallback's home/ and tmp/) is removed, and so is what the
 * output/ of a run alone holds but its artifacts. */
void exec__disk_tidy(struct run *run);
/* A script of the fallback that died of a MemoryError (RLIMIT_AS). */
bool exec__died_of_memory(const struct exec_result *r);

#endif
