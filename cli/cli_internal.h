/* cli_internal.h: what the parts of the command line share: the error line,
 * the session directory, the --config/--set options, the escaping of text
 * shown on a terminal (cli_escape.c), and for `run` the terminal output
 * (cli_term.c) and the copies into --out (cli_out.c). */
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

/* Prints "runmyscript: MESSAGE" and a newline on stderr; on a terminal in
 * bold, MESSAGE escaped (cli__escaped: it may quote a script's text). */
void cli__fail(const char *fmt, ...) printf_like(1, 2);

/* The one line a bad option of command cmd gets ("run: unknown option
 * --bogus (runmyscript run --help lists the options)"), from getopt's
 * state after it returned c ('?' or ':'; getopt run with opterr = 0 and
 * an optstring that starts with ':'). */
void cli__bad_option(const char *cmd, char **argv, int c);

/* A line of runmyscript's own on stderr ("[runmyscript] mounted ..."): as
 * cli__fail, dim on a terminal, without the "runmyscript: ". */
void cli__note(const char *fmt, ...) printf_like(1, 2);

/* How runmyscript's own lines look on a terminal: a script cannot give its
 * lines these, since the ESC that starts them is escaped in its text. */
#define CLI__SGR_RED "\033[31m"
#define CLI__SGR_YELLOW "\033[33m"
#define CLI__SGR_DIM "\033[2m"
#define CLI__SGR_BOLD "\033[1m"
#define CLI__SGR_RESET "\033[0m"

/* ------------------------------------- text shown on a terminal, escaped */

/* --escape WHEN: whether text runmyscript did not write (the script's
 * output, artifact names and summaries, the installer's lines) is shown
 * escaped: where the stream is a terminal (auto), always, or never. */
enum cli__escape {
    CLI__ESCAPE_AUTO,
    CLI__ESCAPE_ALWAYS,
    CLI__ESCAPE_NEVER,
};

/* "auto", "always" or "never" into *mode: 0, or -EINVAL (mode unchanged). */
int cli__escape_parse(const char *s, enum cli__escape *mode) must_check;

/* True when text written to fd is escaped under mode. */
bool cli__escape_on(enum cli__escape mode, int fd);

/* A stream of text being escaped: the first bytes of a UTF-8 sequence that
 * a chunk's end cut wait here for the rest. Zero it to start. */
struct cli__esc {
    unsigned char seq[4];
    unsigned char have, need;
};

/* Appends s[0..n) to out with each control character (C0 but tab, DEL, C1)
 * and each byte that is not part of valid UTF-8 escaped: \a \b \n \v \f
 * \r by name, any other as \ooo (ESC is \033). Tab and valid UTF-8 text
 * pass unchanged; so does a backslash. A sequence left unfinished at the
 * end of s stays in st. 0, -ENOMEM, or -E2BIG past out's ceiling (a byte
 * grows to at most four). */
int cli__esc_feed(struct cli__esc *st, const char *s, size_t n, struct dbuf *out) must_check;

/* Appends what st still holds (a sequence cut short, escaped byte by byte)
 * and empties st. 0, -ENOMEM or -E2BIG. */
int cli__esc_flush(struct cli__esc *st, struct dbuf *out) must_check;

/* s escaped as cli__esc_feed does, as a whole (caller frees); NULL on
 * ENOMEM. */
char *cli__escaped(const char *s);

/* Makes DIR and DIR/workspace (a session for the CLI) and returns DIR's
 * absolute path (caller frees), or NULL with a reason in err. */
char *cli__session_make(const char *dir, char *err, size_t errlen);

/* The options `config`, `check-sandbox` and `mcp` share (--config, --set,
 * --help, which prints the usage and about), and the configuration they
 * give. CLI__GO_ON, or the exit status to
 * return (0 after --help; an error is printed); cfg_free(cfg) in every
 * case. */
int cli__cfg_from_args(int argc, char **argv, const char *self, const char *about, struct cfg *cfg);

/* ------------------------------------------------ `run`: the terminal */

/* The live log on stdout: [stderr] marks (or colour on a terminal) where
 * the script's streams change; escaped (esc) or as the script wrote it. */
struct cli__term {
    bool tty;
    bool err_tty;
    bool esc;     /* the log on stdout is escaped */
    bool err_esc; /* what stderr shows of the script's is escaped */
    bool at_line_start;
    enum result_stream last;
    struct cli__esc esc_state[RESULT_STREAM_SYSTEM + 1]; /* one per stream */
    int64_t started_ms; /* util_now_ms() at cli__term_start: a run that never started says how long it took */
    /* The script asks its user (cli__term_ask): our stdin's next line is
     * its answer, end of file its input closed. */
    const char *state_dir;   /* NULL: the script is not asked (stdin is the script's or its input) */
    const struct result *r;  /* the run's: its id */
    unsigned pending;        /* the question waiting, 0: none */
    bool stdin_eof;
    char line[EXEC_ANSWER_MAX + 2]; /* what stdin gave of the next answer */
    size_t have;
};

/* Starts t for stdout and stderr as they are (escaped as mode says), and
 * catches SIGINT, SIGTERM and SIGHUP so that they cancel the run instead of
 * killing us (SIGPIPE is ignored: a closed stdout cancels the run too). */
void cli__term_start(struct cli__term *t, enum cli__escape mode);


/* The sink for exec_run(): with json, only the cancelling (the log is in
 * the JSON); else the live log and the install lines too. Borrows t. */
struct exec_sink cli__term_sink(struct cli__term *t, bool json);
/* Lets the script of r ask its user through our stdin (the terminal, or a
 * pipe): each line of it answers a question of the script's input(); its
 * end closes the script's input. For a run whose stdin is neither the
 * script nor its input. Borrows state_dir and r. */
void cli__term_ask(struct cli__term *t, const char *state_dir, const struct result *r);

/* Ends the live log: a newline when its last line had none. */
void cli__term_end(struct cli__term *t, bool json);

/* Prints the result as one line of JSON on stdout; when t->esc (a
 * terminal), with DEL and the C1 controls as \u escapes and bytes that are
 * not UTF-8 as U+FFFD, which JSON would pass raw. 0, or -ENOMEM. */
int cli__print_result_json(const struct result *r, const struct cli__term *t) must_check;

/* The summary under the log on stderr: status, environment, artifacts
 * (dest: where they were copied, NULL when they were not); bold on a
 * terminal, the artifacts' names and summaries escaped when t->err_esc. */
void cli__print_summary(const struct result *r, const char *dest, const struct cli__term *t);

/* The exit status a finished run gives (cli.h has the table). */
int cli__exit_status(const struct result *r);

/* ---------------------------------------------------- `run`: --out */

/* The directory the artifacts go to without --out, and the zip's name in
 * it. */
#define CLI__OUT_DEFAULT "runmyscript-out"
#define CLI__ZIP_NAME "artifacts.zip"

/* True when dir exists and is writable, or can be created (its nearest
 * existing ancestor is a writable directory); else false with a reason. */
bool cli__dir_writable(const char *dir, char *err, size_t errlen);

/* Copies the artifacts and the zip into out/RUNID/ and sets *dest to that
 * directory (caller frees). 0 or -errno with the failing path in err. */
int cli__copy_out(const struct result *r, const char *out, char **dest, char *err, size_t errlen) must_check;

#endif
