/* cli_internal.h: what the parts of the command line share: the error line,
 * the session directory, the --config/--set options, and for `run` the
 * terminal output (cli_term.c) and the copies into --out (cli_out.c). */
#ifndef RMS_CLI_INTERNAL_H
#define RMS_CLI_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "cfg.h"
#include "cli.h"
#include "executor.h"

/* What a step of a command returns when the command goes on; any other
 * value is the exit status (cli.h) the command ends with. */
enum { CLI__GO_ON = -1 };

/* The room for a one-line reason a step hands back to be printed. */
#define CLI__ERR_MAX 512

/* Prints "runmyscript: MESSAGE" and a newline on stderr. */
void cli__fail(const char *fmt, ...) printf_like(1, 2);

/* Makes DIR and DIR/workspace (a session for the CLI) and returns DIR's
 * absolute path (caller frees), or NULL with a reason in why. */
char *cli__session_make(const char *dir, char *why, size_t whylen);

/* The options `config` and `check-sandbox` share (--config, --set), and the
 * configuration they give. CLI__GO_ON, or the exit status to return (the
 * error is printed); cfg_free(cfg) in every case. */
int cli__cfg_from_args(int argc, char **argv, const char *self, struct cfg *cfg);

/* ------------------------------------------------ `run`: the terminal */

/* The live log on stdout: [stderr] marks (or colour on a terminal) where
 * the script's streams change. */
struct cli__term {
    bool tty;
    bool err_tty;
    bool at_line_start;
    enum exec_stream last;
};

/* Starts t for stdout and stderr as they are, and catches SIGINT, SIGTERM
 * and SIGHUP so that they cancel the run instead of killing us (SIGPIPE is
 * ignored: a closed stdout cancels the run too). */
void cli__term_start(struct cli__term *t);

/* The sink for exec_run(): with json, only the cancelling (the log is in
 * the JSON); else the live log and the install lines too. Borrows t. */
struct exec_sink cli__term_sink(struct cli__term *t, bool json);

/* Ends the live log: a newline when its last line had none. */
void cli__term_end(struct cli__term *t, bool json);

/* Prints the result as one line of JSON on stdout. 0, or -ENOMEM. */
int cli__print_result_json(const struct exec_result *r) must_check;

/* The summary under the log on stderr: status, environment, artifacts
 * (dest: where they were copied, NULL when they were not). */
void cli__print_summary(const struct exec_result *r, const char *dest, bool tty);

/* The exit status a finished run gives (cli.h has the table). */
int cli__exit_status(const struct exec_result *r);

/* ---------------------------------------------------- `run`: --out */

/* The directory the artifacts go to without --out, and the zip's name in
 * it. */
#define CLI__OUT_DEFAULT "runmyscript-out"
#define CLI__ZIP_NAME "artifacts.zip"

/* True when dir exists and is writable, or can be created (its nearest
 * existing ancestor is a writable directory); else false with a reason. */
bool cli__dir_writable(const char *dir, char *why, size_t whylen);

/* Copies the artifacts and the zip into out/RUNID/ and sets *dest to that
 * directory (caller frees). 0 or -errno with the failing path in why. */
int cli__copy_out(const struct exec_result *r, const char *out, char **dest, char *why, size_t whylen) must_check;

#endif
