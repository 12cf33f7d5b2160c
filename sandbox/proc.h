/* proc.h: running a trusted helper program (python -m venv, the installer)
 * to completion with a clean environment, a time limit and its output
 * captured. Scripts never run through here: they run through jail.c. */
#ifndef RMS_PROC_H
#define RMS_PROC_H

#include <stdint.h>

#include "util.h"

/* Runs argv (argv[0] an absolute path) with envp, stdin from /dev/null,
 * stdout and stderr together into *out (caller frees; at most max_out bytes
 * are kept, the rest is drained and dropped). Kills it (SIGKILL) after
 * timeout_ms. Returns 0 and sets *wstatus when it ran, or -errno when it
 * could not be started (-ETIMEDOUT when killed for time; then *wstatus is
 * also set). line_cb, when not NULL, gets each complete output line. */
int proc_run(const char *const *argv, const char *const *envp, int64_t timeout_ms, size_t max_out, char **out,
             int *wstatus, void (*line_cb)(void *ctx, const char *line), void *ctx) must_check;

#endif
