/* cli_term.c: what `runmyscript run` shows: the script's log live on
 * stdout (marked or coloured by stream, escaped on a terminal), the install
 * lines and the summary on stderr, or with --json the result, and the exit
 * status of the run. A signal or a closed stdout cancels the run through
 * the sink. */
#include "config.h"

#include "cli_internal.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The exit status of a script killed by signal N is this + N, as in a
 * shell. */
#define CLI_EXIT_SIGNAL_BASE 128

/* An escaped piece of a line grows to at most four bytes a byte, and the
 * bytes a cut sequence held (cli__esc_feed): its buffer's ceiling. */
#define CLI_ESC_PIECE_MAX(n) ((n) * 4 + 16)

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

void cli__term_start(struct cli__term *t, enum cli__escape mode)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    *t = (struct cli__term){.tty = isatty(1),
                            .err_tty = isatty(2),
                            .esc = cli__escape_on(mode, 1),
                            .err_esc = cli__escape_on(mode, 2),
                            .at_line_start = true,
                            .last = RESULT_STREAM_STDOUT,
                            .started_ms = util_now_ms()};
}

static void put(const char *s, size_t n)
{
    if (fwrite(s, 1, n, stdout) != n)
        interrupted = 1; /* stdout is gone (a closed pipe): stop the run */
}

/* How each stream's lines look: on a terminal the script's stderr is red and
 * runmyscript's own lines (limits, truncation) yellow; on a pipe stderr's
 * lines are marked. Each piece of a line is coloured and reset on its own,
 * so no colour runs over into the next line. */
static const char *const stream_sgr[] = {
    [RESULT_STREAM_STDOUT] = "",
    [RESULT_STREAM_STDERR] = CLI__SGR_RED,
    [RESULT_STREAM_SYSTEM] = CLI__SGR_YELLOW,
};
static const char *const stream_mark[] = {
    [RESULT_STREAM_STDOUT] = "",
    [RESULT_STREAM_STDERR] = "[stderr] ",
    [RESULT_STREAM_SYSTEM] = "",
};

/* Before text of stream s: a newline when another stream's line is open,
 * and on a pipe the mark of s at the start of a line. */
static void term_begin(struct cli__term *t, enum result_stream s)
{
    if (!t->at_line_start && s != t->last) {
        put("\n", 1);
        t->at_line_start = true;
    }
    if (t->at_line_start && !t->tty)
        put(stream_mark[s], strlen(stream_mark[s]));
    t->at_line_start = false;
    t->last = s;
}

/* A piece of one line of s (no newline in it), escaped when t->esc, in the
 * colour of s on a terminal. line_end: a newline follows, so a sequence the
 * escaper holds cannot be finished and is shown escaped now. */
static void term_piece(struct cli__term *t, enum result_stream s, const char *p, size_t n, bool line_end)
{
    struct dbuf b;
    dbuf_init(&b, CLI_ESC_PIECE_MAX(n));
    if (t->esc) {
        int rc = cli__esc_feed(&t->esc_state[s], p, n, &b);
        if (rc == 0 && line_end)
            rc = cli__esc_flush(&t->esc_state[s], &b);
        if (rc < 0) {
            /* Out of memory: nothing unescaped may reach the terminal, so
             * the run stops as when stdout is gone. */
            interrupted = 1;
            dbuf_free(&b);
            return;
        }
        p = b.data;
        n = b.len;
    }
    const char *sgr = t->tty ? stream_sgr[s] : "";
    if (n && sgr[0])
        put(sgr, strlen(sgr));
    if (n)
        put(p, n);
    if (n && sgr[0])
        put(CLI__SGR_RESET, strlen(CLI__SGR_RESET));
    dbuf_free(&b);
}

static void term_output(void *ctx, enum result_stream stream, const char *data, size_t len)
{
    struct cli__term *t = ctx;
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        term_begin(t, stream);
        term_piece(t, stream, p, (size_t)((nl ? nl : end) - p), nl != NULL);
        if (nl) {
            put("\n", 1);
            t->at_line_start = true;
        }
        p = nl ? nl + 1 : end;
    }
    fflush(stdout);
}

void cli__term_ask(struct cli__term *t, const char *state_dir, const struct result *r)
{
    t->state_dir = state_dir;
    t->r = r;
}

static void term_question(void *ctx, unsigned n, const char *prompt)
{
    struct cli__term *t = ctx;
    (void)prompt; /* the log showed it, as input() printed it */
    t->pending = n;
}

/* The answer to the pending question, once stdin has a line (or ended):
 * what is there is read without waiting, so that the watch goes on. */
static void term_answer(struct cli__term *t)
{
    struct pollfd p = {.fd = 0, .events = POLLIN};
    while (!t->stdin_eof && t->have < sizeof t->line - 1 && !memchr(t->line, '\n', t->have) &&
           poll(&p, 1, 0) > 0) {
        ssize_t n = read(0, t->line + t->have, sizeof t->line - 1 - t->have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            t->stdin_eof = true;
        else
            t->have += (size_t)n;
    }
    char *nl = memchr(t->line, '\n', t->have);
    if (!nl && !t->stdin_eof && t->have < sizeof t->line - 1)
        return; /* not a whole line yet */
    size_t len = nl ? (size_t)(nl - t->line) : t->have;
    const char *text = len || !t->stdin_eof ? t->line : NULL; /* stdin at its end: the script's input ends */
    if (len > EXEC_ANSWER_MAX)
        len = EXEC_ANSWER_MAX;
    int rc = exec_answer(t->state_dir, t->r->run_id, t->pending, text, len);
    if (rc < 0)
        log_msg(LOG_LVL_DEBUG, "answering the script: %s", strerror(-rc));
    size_t used = nl ? len + 1 : t->have;
    if (used > t->have)
        used = t->have;
    memmove(t->line, t->line + used, t->have - used);
    t->have -= used;
    t->pending = 0;
}

/* Polled a few times a second: the cancel, and the answer the script waits on. */
static bool term_cancelled(void *ctx)
{
    struct cli__term *t = ctx;
    if (t->pending)
        term_answer(t);
    return interrupted != 0;
}

/* One line of runmyscript's own on stderr, dim on a terminal: "PREFIX
 * TEXT", TEXT escaped (t->err_esc) or with bytes that are not UTF-8
 * replaced. */
static void dim_line(const struct cli__term *t, const char *prefix, const char *text)
{
    cleanup_free char *clean = t->err_esc ? cli__escaped(text) : util_utf8_sanitize(text, strlen(text), NULL);
    fprintf(stderr, "%s%s%s%s\n", t->err_tty ? CLI__SGR_DIM : "", prefix, clean ? clean : "",
            t->err_tty ? CLI__SGR_RESET : "");
}

static void term_phase(void *ctx, enum exec_phase phase, const char *detail)
{
    if (phase == EXEC_PHASE_INSTALLING)
        dim_line(ctx, "[runmyscript] installing ", detail ? detail : "");
}

static void term_install_line(void *ctx, const char *line)
{
    dim_line(ctx, "[install] ", line);
}

struct exec_sink cli__term_sink(struct cli__term *t, bool json)
{
    return (struct exec_sink){
        .ctx = t,
        .output = json ? NULL : term_output,
        .phase = json ? NULL : term_phase,
        .install_line = json ? NULL : term_install_line,
        .cancelled = term_cancelled,
        .question = t->state_dir ? term_question : NULL,
    };
}

void cli__term_end(struct cli__term *t, bool json)
{
    /* A sequence the script left unfinished is shown escaped. */
    for (size_t s = 0; !json && s < ARRAY_SIZE(t->esc_state); s++) {
        if (t->esc_state[s].have) {
            term_begin(t, (enum result_stream)s);
            term_piece(t, (enum result_stream)s, "", 0, true);
        }
    }
    if (!json && !t->at_line_start)
        put("\n", 1);
    fflush(stdout);
}

/* The JSON for a terminal: JSON escapes the C0 controls, not DEL or the
 * C1 controls (U+009B is a CSI to a terminal that takes C1 in UTF-8), nor
 * bytes that are not UTF-8 (an 8-bit CSI to one that does not). The same
 * text to a JSON reader, nothing a terminal would act on. */
static char *json_for_terminal(const char *json)
{
    size_t n = 0;
    cleanup_free char *s = util_utf8_sanitize(json, strlen(json), &n);
    if (!s)
        return NULL;
    struct dbuf b;
    dbuf_init(&b, n * 6 + 1); /* each byte at most a \u00XX */
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x7f)
            rc = dbuf_append(&b, "\\u007f", 6);
        else if (c == 0xc2 && i + 1 < n && (unsigned char)s[i + 1] < 0xa0) /* U+0080..U+009F */
            rc = dbuf_printf(&b, "\\u00%02x", (unsigned char)s[++i]);
        else
            rc = dbuf_append(&b, &s[i], 1);
    }
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}

int cli__print_result_json(const struct result *r, const struct cli__term *t)
{
    cleanup_free char *s = result_to_string(r, false, NULL);
    if (!s)
        return -ENOMEM;
    cleanup_free char *shown = t->esc ? json_for_terminal(s) : NULL;
    if (t->esc && !shown)
        return -ENOMEM;
    printf("%s\n", shown ? shown : s);
    return 0;
}

int cli__exit_status(const struct result *r)
{
    switch (r->status) {
    case RESULT_STATUS_OK:
    case RESULT_STATUS_ERROR:
        if (r->signal)
            return CLI_EXIT_SIGNAL_BASE + r->signal;
        return r->exit_code >= 0 ? r->exit_code : CLI_EXIT_SERVICE;
    case RESULT_STATUS_TIMEOUT: return CLI_EXIT_TIMEOUT;
    case RESULT_STATUS_MEMORY: return CLI_EXIT_MEMORY;
    case RESULT_STATUS_OUTPUT_LIMIT: return CLI_EXIT_OUTPUT_LIMIT;
    case RESULT_STATUS_WORKSPACE_LIMIT: return CLI_EXIT_WORKSPACE_LIMIT;
    case RESULT_STATUS_INSTALL_FAILED: return CLI_EXIT_INSTALL_FAILED;
    case RESULT_STATUS_CANCELLED: return CLI_EXIT_CANCELLED;
    case RESULT_STATUS_SANDBOX_ERROR: return CLI_EXIT_SERVICE;
    }
    return CLI_EXIT_SERVICE;
}

/* Text of the script's in the summary (an artifact's name or summary), as
 * the log is shown: escaped when t->err_esc, else as it is, or with bytes
 * that are not UTF-8 replaced (sanitize). Caller frees; NULL on ENOMEM. */
static char *shown(const struct cli__term *t, const char *s, bool sanitize)
{
    if (t->err_esc)
        return cli__escaped(s);
    return sanitize ? util_utf8_sanitize(s, strlen(s), NULL) : strdup(s);
}

void cli__print_summary(const struct result *r, const char *dest, const struct cli__term *t)
{
    FILE *f = stderr;
    /* Every line of the summary is bold on a terminal, which a script's
     * forged "--- ok" or artifact list cannot be. */
    const char *on = t->err_tty ? CLI__SGR_BOLD : "", *off = t->err_tty ? CLI__SGR_RESET : "";
    char hs[32];
    fprintf(f, "%s--- %s", on, result_status_name(r->status));
    if (r->limit)
        fprintf(f, " (%s)", r->limit);
    if (r->signal)
        fprintf(f, ", killed by signal %d", r->signal);
    else if (r->exit_code >= 0)
        fprintf(f, ", exit code %d", r->exit_code);
    if (!r->isolation) /* the script never started (an install failed, a cancel before): the time it all took */
        fprintf(f, ", after %.1f s, the script did not run, run %s%s\n",
                (double)(util_now_ms() - t->started_ms) / 1000.0, r->run_id, off);
    else
        fprintf(f, ", %lld ms, isolation: %s, run %s%s\n", (long long)r->duration_ms, r->isolation, r->run_id, off);
    if (r->error) {
        cleanup_free char *error = shown(t, r->error, false);
        /* The command line's user is the operator: the advice too. */
        cleanup_free char *advice = r->advice ? shown(t, r->advice, false) : NULL;
        fprintf(f, "%serror: %s%s%s%s\n", on, error ? error : "?", advice ? "; " : "", advice ? advice : "", off);
    }
    cleanup_free char *net = result_network_summary(r);
    if (net)
        fprintf(f, "%s%s%s\n", on, net, off);
    if (r->n_requirements) {
        fprintf(f, "%senvironment (%s):", on, result_env_cache_name(r->env_cache));
        for (size_t i = 0; i < r->n_requirements; i++) {
            cleanup_free char *req = shown(t, r->requirements[i], false);
            fprintf(f, " %s", req ? req : "?");
        }
        fprintf(f, "%s\n", off);
    }
    if (r->n_artifacts == 0) {
        fprintf(f, "%sno artifacts%s\n", on, off);
        return;
    }
    fprintf(f, "%sartifacts (%zu) in %s/:%s\n", on, r->n_artifacts, dest ? dest : r->output_dir, off);
    for (size_t i = 0; i < r->n_artifacts; i++) {
        const struct result_artifact *a = &r->artifacts[i];
        util_human_size(a->size, hs, sizeof hs);
        cleanup_free char *path = shown(t, a->path, true);
        cleanup_free char *summary = a->summary ? shown(t, a->summary, false) : NULL;
        fprintf(f, "%s  %-28s %10s  %s%s\n", on, path ? path : "?", hs, summary ? summary : "", off);
    }
    if (r->has_zip)
        fprintf(f, "%s  %-28s %10s  all of the above%s\n", on, CLI__ZIP_NAME, "", off);
}
