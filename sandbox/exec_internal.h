/* exec_internal.h: what the files of exec_run() share beyond a call's
 * context and steps (exec_ctx.h, which the kernel's code shares too): the
 * script's run under its limits (exec_script.c) and the disk's start mark
 * and tidy after a run (exec_disk.c). Not for front doors: executor.h is. */
#ifndef RMS_EXEC_INTERNAL_H
#define RMS_EXEC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "exec_ctx.h"

/* Runs the script in env_dir's interpreter under its limits, its output
 * into the log, until it ends or is stopped; fills the status, exit code,
 * times and the breached limit of run->r. 0, or -errno when the service
 * failed (r->error says why). */
int exec__run_script(struct run *run, const char *env_dir) must_check;
/* ------------------------------- a script that asks its user (exec_ask.c) */

/* The script's stdin while its front door can ask: a pipe the watch
 * feeds, and the question waiting for an answer. */
struct exec_ask {
    int rfd, wfd;      /* the pipe: the script's end (closed once it started), ours (-1: closed) */
    ino_t ino;         /* the pipe's, for jail_stdin_waiting */
    unsigned pending;  /* the number of the question waiting, 0: none */
    int64_t deadline;  /* when it is closed unanswered (input_wait) */
    bool waiting;      /* the last tick saw the script wait on an empty stdin */
    char tail[EXEC_QUESTION_MAX]; /* the last bytes the script printed since the last answer */
    size_t tail_len;
};
/* Whether the run's stdin is a pipe fed by the watch: a run (not a cell)
 * whose sink can ask, with input_questions above 0. */
bool exec__ask_wanted(const struct run *run);
/* The pipe, the input already in it, r->input.live set. 0, or -errno
 * (-EMSGSIZE: the input does not fit in a pipe) with nothing open: the
 * run's stdin is then its input file, as where nobody can ask. */
int exec__ask_open(struct run *run, struct exec_ask *a) must_check;
/* A chunk the script printed (either stream): the question's matter. */
void exec__ask_output(struct exec_ask *a, const char *data, size_t len);
/* At the watch's tick: a new question when the script waits on an empty
 * stdin, or the pending one answered, declined or out of time. */
void exec__ask_tick(struct run *run, struct exec_ask *a, struct jail_proc *proc, int64_t now);
/* Closes our end (the script reads EOF), why the result's input.closed
 * when none is set yet (NULL: none, the run's end); the question file
 * removed. */
void exec__ask_close(struct run *run, struct exec_ask *a, const char *why);

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
