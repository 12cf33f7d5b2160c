/* cli_term.c: what `runmyscript run` shows: the script's log live on
 * stdout (marked or coloured by stream), the install lines and the summary
 * on stderr, or with --json the result, and the exit status of the run. A
 * signal or a closed stdout cancels the run through the sink. */
#include "config.h"

#include "cli_internal.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The exit status of a script killed by signal N is this + N, as in a
 * shell. */
#define CLI_EXIT_SIGNAL_BASE 128

#define CLI_SGR_RED "\033[31m"
#define CLI_SGR_YELLOW "\033[33m"
#define CLI_SGR_DIM "\033[2m"
#define CLI_SGR_BOLD "\033[1m"
#define CLI_SGR_RESET "\033[0m"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

void cli__term_start(struct cli__term *t)
{
    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    *t = (struct cli__term){.tty = isatty(1), .err_tty = isatty(2), .at_line_start = true,
                            .last = EXEC_STREAM_STDOUT};
}

static void put(const char *s, size_t n)
{
    if (fwrite(s, 1, n, stdout) != n)
        interrupted = 1; /* stdout is gone (a closed pipe): stop the run */
}

static void term_output(void *ctx, enum exec_stream stream, const char *data, size_t len)
{
    struct cli__term *t = ctx;
    static const char *const color[] = {"", CLI_SGR_RED, CLI_SGR_YELLOW};
    static const char *const mark[] = {"", "[stderr] ", ""};
    if (!t->at_line_start && stream != t->last)
        put("\n", 1);
    if (t->tty && color[stream][0])
        fputs(color[stream], stdout);
    const char *p = data, *end = data + len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl + 1 : end;
        if (t->at_line_start || stream != t->last) {
            if (!t->tty)
                fputs(mark[stream], stdout);
        }
        put(p, (size_t)(stop - p));
        t->at_line_start = nl != NULL;
        t->last = stream;
        p = stop;
    }
    if (t->tty && color[stream][0])
        fputs(CLI_SGR_RESET, stdout);
    fflush(stdout);
}

static bool term_cancelled(void *ctx)
{
    (void)ctx;
    return interrupted != 0;
}

/* One dim line on stderr: "PREFIX TEXT" with TEXT made printable. */
static void dim_line(const struct cli__term *t, const char *prefix, const char *text)
{
    cleanup_free char *clean = util_utf8_sanitize(text, strlen(text), NULL);
    fprintf(stderr, "%s%s%s%s\n", t->err_tty ? CLI_SGR_DIM : "", prefix, clean ? clean : "",
            t->err_tty ? CLI_SGR_RESET : "");
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
    };
}

void cli__term_end(struct cli__term *t, bool json)
{
    if (!json && !t->at_line_start)
        put("\n", 1);
    fflush(stdout);
}

int cli__print_result_json(const struct exec_result *r)
{
    cleanup_free char *s = result_to_string(r, false, NULL);
    if (!s)
        return -ENOMEM;
    printf("%s\n", s);
    return 0;
}

int cli__exit_status(const struct exec_result *r)
{
    switch (r->status) {
    case EXEC_STATUS_OK:
    case EXEC_STATUS_ERROR:
        if (r->signal)
            return CLI_EXIT_SIGNAL_BASE + r->signal;
        return r->exit_code >= 0 ? r->exit_code : CLI_EXIT_SERVICE;
    case EXEC_STATUS_TIMEOUT: return CLI_EXIT_TIMEOUT;
    case EXEC_STATUS_MEMORY: return CLI_EXIT_MEMORY;
    case EXEC_STATUS_OUTPUT_LIMIT: return CLI_EXIT_OUTPUT_LIMIT;
    case EXEC_STATUS_WORKSPACE_LIMIT: return CLI_EXIT_WORKSPACE_LIMIT;
    case EXEC_STATUS_INSTALL_FAILED: return CLI_EXIT_INSTALL_FAILED;
    case EXEC_STATUS_CANCELLED: return CLI_EXIT_CANCELLED;
    case EXEC_STATUS_SANDBOX_ERROR: return CLI_EXIT_SERVICE;
    }
    return CLI_EXIT_SERVICE;
}

void cli__print_summary(const struct exec_result *r, const char *dest, bool tty)
{
    FILE *f = stderr;
    char hs[32];
    fprintf(f, "%s--- %s", tty ? CLI_SGR_BOLD : "", exec_status_name(r->status));
    if (r->limit)
        fprintf(f, " (%s)", r->limit);
    if (r->signal)
        fprintf(f, ", killed by signal %d", r->signal);
    else if (r->exit_code >= 0)
        fprintf(f, ", exit code %d", r->exit_code);
    fprintf(f, ", %lld ms, isolation: %s, run %s%s\n", (long long)r->duration_ms, r->isolation ? r->isolation : "none",
            r->run_id, tty ? CLI_SGR_RESET : "");
    if (r->error)
        fprintf(f, "error: %s\n", r->error);
    if (r->n_requirements) {
        fprintf(f, "environment (%s):", exec_env_cache_name(r->env_cache));
        for (size_t i = 0; i < r->n_requirements; i++)
            fprintf(f, " %s", r->requirements[i]);
        fputc('\n', f);
    }
    if (r->n_artifacts == 0) {
        fprintf(f, "no artifacts\n");
        return;
    }
    fprintf(f, "artifacts (%zu) in %s/:\n", r->n_artifacts, dest ? dest : r->output_dir);
    for (size_t i = 0; i < r->n_artifacts; i++) {
        const struct exec_artifact *a = &r->artifacts[i];
        util_human_size(a->size, hs, sizeof hs);
        cleanup_free char *path = util_utf8_sanitize(a->path, strlen(a->path), NULL);
        fprintf(f, "  %-28s %10s  %s\n", path ? path : "?", hs, a->summary ? a->summary : "");
    }
    if (r->has_zip)
        fprintf(f, "  %-28s %10s  all of the above\n", CLI__ZIP_NAME, "");
}
