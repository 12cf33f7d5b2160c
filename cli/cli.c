/* cli.c: what the commands of the terminal front door share (the error
 * line, the session directory, the exit status of a failed transfer, the
 * --config and --set options) and `runmyscript config`. The commands
 * themselves: cli_run.c, cli_xfer.c, cli_sandbox.c. */
#include "config.h"

#include "cli_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A session directory: 0711, because the rlimits fallback, run as root,
 * runs scripts as a uid of their own that must pass through it to reach the
 * workspace. */
#define CLI_SESSION_MODE 0711
#define CLI_WORKSPACE_MODE 0755

/* "PREFIX MESSAGE" and a newline on stderr. MESSAGE may quote a script (a
 * requirement of its PEP 723 block) or a name the user gave: on a terminal
 * its control characters are escaped, and the line is in style sgr, as
 * runmyscript's own lines are. */
static void say(const char *sgr, const char *prefix, const char *fmt, va_list ap)
{
    cleanup_free char *msg = NULL;
    if (vasprintf(&msg, fmt, ap) < 0)
        msg = NULL;
    bool tty = isatty(2);
    cleanup_free char *esc = tty && msg ? cli__escaped(msg) : NULL;
    const char *text = tty ? esc : msg;
    fprintf(stderr, "%s%s%s%s\n", tty ? sgr : "", prefix, text ? text : "out of memory", tty ? CLI__SGR_RESET : "");
}

void cli__fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(CLI__SGR_BOLD, "runmyscript: ", fmt, ap);
    va_end(ap);
}

void cli__note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    say(CLI__SGR_DIM, "", fmt, ap);
    va_end(ap);
}

char *cli__session_make(const char *dir, char *err, size_t errlen)
{
    int rc = util_mkdir_p(dir, CLI_SESSION_MODE);
    char *abs = rc == 0 ? realpath(dir, NULL) : NULL;
    if (!abs) {
        int e = rc < 0 ? -rc : errno;
        snprintf(err, errlen, "--session %s: %s", dir, strerror(e));
        return NULL;
    }
    cleanup_fd int dfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || (mkdirat(dfd, "workspace", CLI_WORKSPACE_MODE) < 0 && errno != EEXIST)) {
        int e = errno;
        snprintf(err, errlen, "--session %s: %s", dir, strerror(e));
        free(abs);
        return NULL;
    }
    return abs;
}

void cli__bad_option(const char *cmd, char **argv, int c)
{
    char shown[8];
    const char *opt = argv[optind - 1];
    /* A short option names itself in optopt (it may sit in a group). */
    if (optopt > 0 && optopt < 128 && isalnum(optopt)) {
        snprintf(shown, sizeof shown, "-%c", optopt);
        opt = shown;
    }
    if (c == ':')
        cli__fail("%s: %s needs a value (runmyscript %s --help lists the options)", cmd, opt, cmd);
    else
        cli__fail("%s: unknown option %s (runmyscript %s --help lists the options)", cmd, opt, cmd);
}

int cli__cfg_from_args(int argc, char **argv, const char *self, const char *about, struct cfg *cfg)
{
    static const struct option opts[] = {
        {"set", required_argument, NULL, 's'},
        {"config", required_argument, NULL, 'c'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    cleanup_free const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    size_t nsets = 0;
    const char *config = NULL;
    int c;
    memset(cfg, 0, sizeof *cfg);
    if (!sets)
        return CLI_EXIT_SERVICE;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", opts, NULL)) != -1) {
        if (c == 's') {
            sets[nsets++] = optarg;
        } else if (c == 'c') {
            config = optarg;
        } else if (c == 'h') {
            printf("usage: runmyscript %s [--config FILE] [--set KEY=VALUE]...\n\n%s", argv[0], about);
            return 0;
        } else {
            cli__bad_option(argv[0], argv, c);
            return CLI_EXIT_USAGE;
        }
    }
    char err[CLI__ERR_MAX];
    if (cfg_load(cfg, config, self, sets, nsets, err, sizeof err) < 0) {
        cli__fail("%s", err);
        return CLI_EXIT_CONFIG;
    }
    return CLI__GO_ON;
}

int cli_config(int argc, char **argv, const char *self)
{
    struct cfg cfg;
    int status = cli__cfg_from_args(argc, argv, self,
                                    "Prints every configuration key with its value in effect (the defaults, the file,\n"
                                    "RUNMYSCRIPT_KEY variables and --set, later wins), in a form they read back.\n",
                                    &cfg);
    if (status != CLI__GO_ON) {
        cfg_free(&cfg);
        return status;
    }
    cleanup_free char *dump = cfg_dump(&cfg);
    cfg_free(&cfg);
    if (!dump)
        return CLI_EXIT_SERVICE;
    fputs(dump, stdout);
    return 0;
}
