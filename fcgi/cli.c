/* cli.c: `runmyscript run`, the terminal front door. It reads the script and
 * its input, calls exec_run() with a sink that prints the log live, copies
 * the artifacts and the zip out of the state directory, and exits with the
 * script's status (see cli.h for the table). */
#include "config.h"

#include "cli.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfg.h"
#include "executor.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: runmyscript run SCRIPT|- [options]\n"
            "\n"
            "Runs a Python script in a throw-away sandbox, installs the packages it imports\n"
            "(each set once, reused read-only), and collects what it writes.\n"
            "\n"
            "  --input FILE|-        the input: its bytes are the file at $SCRIPT_INPUT and stdin\n"
            "  --input-text STR      the input as text\n"
            "  --input-url URL       the input downloaded from URL (http/https; fetch_* limits and input_bytes)\n"
            "  --session DIR         run in DIR/workspace (made when missing), kept across runs\n"
            "  --mount PATH=URL      with --session: download URL to mounts/PATH first (repeatable)\n"
            "  --out DIR             copy artifacts and the zip to DIR/RUNID/ (default ./runmyscript-out)\n"
            "  --timeout SECONDS     wall time limit (default: the timeout key, 60 s)\n"
            "  --with SPEC           a requirement (PEP 508, e.g. 'pillow>=9'; repeatable)\n"
            "  -r, --requirements FILE  requirements, one per line (# comments; no options)\n"
            "  --no-auto-deps        do not install what the script's imports need\n"
            "  --auto-deps           do (the default, unless the auto_deps key is off)\n"
            "  --json                print the result JSON instead of the log and the file list\n"
            "  --config FILE         the configuration file\n"
            "  --set KEY=VALUE       set a configuration key (repeatable; `runmyscript config` lists them)\n"
            "  -h, --help            this help\n"
            "\n"
            "Exit status: the script's exit code (128+N when killed by signal N), or\n"
            "  %d timeout   %d memory   %d output limit   %d install failed   %d cancelled\n"
            "  %d the service failed    %d usage   %d bad script, input or requirement   %d file not found\n"
            "  %d cannot write --out    %d bad configuration\n"
            "  --input-url and --mount: %d bad URL or path, %d over a size limit, %d could not be fetched\n",
            CLI_EXIT_TIMEOUT, CLI_EXIT_MEMORY, CLI_EXIT_OUTPUT_LIMIT, CLI_EXIT_INSTALL_FAILED, CLI_EXIT_CANCELLED,
            CLI_EXIT_SERVICE, CLI_EXIT_USAGE, CLI_EXIT_DATAERR, CLI_EXIT_NOINPUT, CLI_EXIT_CANTCREAT,
            CLI_EXIT_CONFIG, CLI_EXIT_USAGE, CLI_EXIT_DATAERR, CLI_EXIT_NOINPUT);
}

static void fail(const char *fmt, ...) printf_like(1, 2);
static void fail(const char *fmt, ...)
{
    va_list ap;
    fputs("runmyscript: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* ---------------------------------------------------------------- sink */

struct term {
    bool tty;
    bool err_tty;
    bool at_line_start;
    enum exec_stream last;
};

static void put(const char *s, size_t n)
{
    if (fwrite(s, 1, n, stdout) != n)
        interrupted = 1; /* stdout is gone (a closed pipe): stop the run */
}

static void term_output(void *ctx, enum exec_stream stream, const char *data, size_t len)
{
    struct term *t = ctx;
    static const char *const color[] = {"", "\033[31m", "\033[33m"};
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
        fputs("\033[0m", stdout);
    fflush(stdout);
}

static bool term_cancelled(void *ctx)
{
    (void)ctx;
    return interrupted != 0;
}

static void term_phase(void *ctx, enum exec_phase phase, const char *detail)
{
    struct term *t = ctx;
    if (phase != EXEC_PHASE_INSTALLING)
        return;
    cleanup_free char *clean = util_utf8_sanitize(detail ? detail : "", detail ? strlen(detail) : 0, NULL);
    fprintf(stderr, "%s[runmyscript] installing %s%s\n", t->err_tty ? "\033[2m" : "", clean ? clean : "",
            t->err_tty ? "\033[0m" : "");
}

static void term_install_line(void *ctx, const char *line)
{
    struct term *t = ctx;
    cleanup_free char *clean = util_utf8_sanitize(line, strlen(line), NULL);
    fprintf(stderr, "%s[install] %s%s\n", t->err_tty ? "\033[2m" : "", clean ? clean : "",
            t->err_tty ? "\033[0m" : "");
}

/* ------------------------------------------------------------- helpers */

#define CLI_REQ_FILE_MAX (1u << 20) /* bytes of a -r file */

/* Adds the requirements of a requirements.txt (blank lines and comments
 * skipped; every other line is one requirement, checked later like
 * --with) to reqs. The text is kept in *keep (caller frees). */
static int read_requirements(const char *path, char **keep, const char ***reqs, size_t *n, size_t *cap)
{
    size_t len;
    int rc = util_read_file_at(AT_FDCWD, path, CLI_REQ_FILE_MAX, keep, &len);
    if (rc < 0) {
        fail("cannot read the requirements file %s: %s", path, strerror(-rc));
        return rc == -E2BIG ? CLI_EXIT_DATAERR : CLI_EXIT_NOINPUT;
    }
    for (char *line = *keep, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        /* A comment is '#' at the start or after a blank. */
        for (char *h = line; (h = strchr(h, '#')); h++)
            if (h == line || h[-1] == ' ' || h[-1] == '\t') {
                *h = '\0';
                break;
            }
        char *e = line + strlen(line);
        while (e > line && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
            *--e = '\0';
        while (*line == ' ' || *line == '\t')
            line++;
        if (!*line)
            continue;
        if (*n == *cap) {
            size_t nc = *cap ? *cap * 2 : 16;
            const char **v = realloc(*reqs, nc * sizeof *v);
            if (!v)
                return CLI_EXIT_SERVICE;
            *reqs = v;
            *cap = nc;
        }
        (*reqs)[(*n)++] = line;
    }
    return 0;
}

static int read_source(const char *path, size_t max, char **out, size_t *len, const char *what)
{
    int rc;
    if (!strcmp(path, "-"))
        rc = util_read_fd(0, max, out, len);
    else
        rc = util_read_file_at(AT_FDCWD, path, max, out, len);
    if (rc == -E2BIG) {
        char hs[32];
        util_human_size(max, hs, sizeof hs);
        fail("%s %s is larger than %s (%s)", what, path, hs, !strcmp(what, "script") ? "code_bytes" : "input_bytes");
        return CLI_EXIT_DATAERR;
    }
    if (rc < 0) {
        fail("cannot read %s %s: %s", what, path, strerror(-rc));
        return CLI_EXIT_NOINPUT;
    }
    return 0;
}

/* True when dir exists and is writable, or can be created (its nearest
 * existing ancestor is a writable directory). */
static bool dir_writable(const char *dir, char *why, size_t whylen)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(why, whylen, "%.300s is not a directory", p);
                return false;
            }
            if (access(p, W_OK | X_OK) < 0) {
                snprintf(why, whylen, "%.300s is not writable: %s", p, strerror(errno));
                return false;
            }
            return true;
        }
        if (errno != ENOENT) {
            snprintf(why, whylen, "%.300s: %s", p, strerror(errno));
            return false;
        }
        char *slash = strrchr(p, '/');
        if (!slash)
            return access(".", W_OK | X_OK) == 0 || (snprintf(why, whylen, ". is not writable"), false);
        if (slash == p) {
            p[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

/* Copies the artifacts and the zip into out/RUNID/. 0 or -errno with the
 * failing path in why. */
static int copy_out(const struct exec_result *r, const char *out, char **dest, char *why, size_t whylen)
{
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/%s", out, r->run_id) < 0)
        return -ENOMEM;
    int rc = util_mkdir_p(dir, 0755);
    if (rc < 0) {
        snprintf(why, whylen, "%s: %s", dir, strerror(-rc));
        return rc;
    }
    cleanup_fd int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_fd int ofd = open(r->output_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || ofd < 0) {
        snprintf(why, whylen, "%s: %s", dfd < 0 ? dir : r->output_dir, strerror(errno));
        return -errno;
    }
    for (size_t i = 0; i < r->n_artifacts; i++) {
        const char *rel = r->artifacts[i].path;
        /* Sub-directories first. */
        cleanup_free char *parent = strdup(rel);
        if (!parent)
            return -ENOMEM;
        char *slash = strrchr(parent, '/');
        if (slash) {
            *slash = '\0';
            cleanup_free char *full = NULL;
            if (asprintf(&full, "%s/%s", dir, parent) < 0)
                return -ENOMEM;
            rc = util_mkdir_p(full, 0755);
            if (rc < 0) {
                snprintf(why, whylen, "%s: %s", full, strerror(-rc));
                return rc;
            }
        }
        cleanup_fd int src = ws_open_beneath(ofd, rel, O_RDONLY, 0);
        if (src < 0) {
            snprintf(why, whylen, "%s/%s: %s", r->output_dir, rel, strerror(-src));
            return src;
        }
        unlinkat(dfd, rel, 0);
        rc = util_copy_fd(src, dfd, rel);
        if (rc < 0) {
            snprintf(why, whylen, "%s/%s: %s", dir, rel, strerror(-rc));
            return rc;
        }
    }
    if (r->has_zip) {
        unlinkat(dfd, "artifacts.zip", 0);
        rc = util_copy_file(AT_FDCWD, r->zip_path, dfd, "artifacts.zip");
        if (rc < 0) {
            snprintf(why, whylen, "%s/artifacts.zip: %s", dir, strerror(-rc));
            return rc;
        }
    }
    *dest = steal_pointer(&dir);
    return 0;
}

static int exit_status(const struct exec_result *r)
{
    switch (r->status) {
    case EXEC_STATUS_OK:
    case EXEC_STATUS_ERROR:
        if (r->signal)
            return 128 + r->signal;
        return r->exit_code >= 0 ? r->exit_code : CLI_EXIT_SERVICE;
    case EXEC_STATUS_TIMEOUT: return CLI_EXIT_TIMEOUT;
    case EXEC_STATUS_MEMORY: return CLI_EXIT_MEMORY;
    case EXEC_STATUS_OUTPUT_LIMIT: return CLI_EXIT_OUTPUT_LIMIT;
    case EXEC_STATUS_INSTALL_FAILED: return CLI_EXIT_INSTALL_FAILED;
    case EXEC_STATUS_CANCELLED: return CLI_EXIT_CANCELLED;
    case EXEC_STATUS_SANDBOX_ERROR: return CLI_EXIT_SERVICE;
    }
    return CLI_EXIT_SERVICE;
}

static void print_summary(const struct exec_result *r, const char *dest, bool tty)
{
    FILE *f = stderr;
    char hs[32];
    fprintf(f, "%s--- %s", tty ? "\033[1m" : "", exec_status_name(r->status));
    if (r->limit)
        fprintf(f, " (%s)", r->limit);
    if (r->signal)
        fprintf(f, ", killed by signal %d", r->signal);
    else if (r->exit_code >= 0)
        fprintf(f, ", exit code %d", r->exit_code);
    fprintf(f, ", %lld ms, isolation: %s, run %s%s\n", (long long)r->duration_ms, r->isolation ? r->isolation : "none",
            r->run_id, tty ? "\033[0m" : "");
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
        fprintf(f, "  %-28s %10s  %s\n", path ? path : "?", hs, a->summary);
    }
    if (r->has_zip)
        fprintf(f, "  %-28s %10s  all of the above\n", "artifacts.zip", "");
}

/* ---------------------------------------------------------- fetching */

int cli_fetch_status(int rc)
{
    switch (rc) {
    case -EINVAL: return CLI_EXIT_USAGE;
    case -EFBIG:
    case -EDQUOT: return CLI_EXIT_DATAERR;
    case -ENOSPC:
    case -EROFS:
    case -EISDIR:
    case -ENAMETOOLONG: return CLI_EXIT_CANTCREAT;
    case -ENOSYS:
    case -ENOMEM: return CLI_EXIT_SERVICE;
    default: return CLI_EXIT_NOINPUT;
    }
}

/* Makes DIR and DIR/workspace (a session for the CLI) and returns DIR's
 * absolute path (caller frees), or NULL with a reason in why. 0711: the
 * rlimits fallback, run as root, runs scripts as a uid of their own that
 * must pass through DIR to reach the workspace. */
static char *session_make(const char *dir, char *why, size_t whylen)
{
    int rc = util_mkdir_p(dir, 0711);
    char *abs = rc == 0 ? realpath(dir, NULL) : NULL;
    if (!abs) {
        snprintf(why, whylen, "--session %s: %s", dir, strerror(rc < 0 ? -rc : errno));
        return NULL;
    }
    cleanup_fd int dfd = open(abs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0 || (mkdirat(dfd, "workspace", 0755) < 0 && errno != EEXIST)) {
        snprintf(why, whylen, "--session %s: %s", dir, strerror(errno));
        free(abs);
        return NULL;
    }
    return abs;
}

static void print_json(json_object *o)
{
    if (!o) {
        fail("out of memory");
        return;
    }
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

/* Splits a host path into its directory (opened, following symlinks: the
 * CLI's user names it) and its last component. */
static int open_parent(const char *path, const char **name, char *why, size_t whylen)
{
    const char *slash = strrchr(path, '/');
    cleanup_free char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    *name = slash ? slash + 1 : path;
    if (!dir)
        return -ENOMEM;
    if (!**name) {
        snprintf(why, whylen, "%s: a file name is needed, not a directory", path);
        return -EINVAL;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(why, whylen, "%s: %s", dir, strerror(e));
        return -e;
    }
    return fd;
}

/* Options shared by fetch and upload. */
struct xfer_args {
    const char *session, *config;
    const char **sets;
    size_t nsets;
    const char *pos[2];
};

static int xfer_args(int argc, char **argv, const char *cmd, const char *names, struct xfer_args *a)
{
    static const struct option opts[] = {
        {"session", required_argument, NULL, 'S'}, {"set", required_argument, NULL, 's'},
        {"config", required_argument, NULL, 'c'},  {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, npos = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': a->session = optarg; break;
        case 's': a->sets[a->nsets++] = optarg; break;
        case 'c': a->config = optarg; break;
        case 'h':
            printf("usage: runmyscript %s %s [--session DIR] [--config FILE] [--set KEY=VALUE]...\n", cmd, names);
            return 0;
        default: return CLI_EXIT_USAGE;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (npos == 2) {
            fail("%s: expected %s", cmd, names);
            return CLI_EXIT_USAGE;
        }
        a->pos[npos++] = argv[i];
    }
    if (npos != 2) {
        fail("%s: expected %s", cmd, names);
        return CLI_EXIT_USAGE;
    }
    return -1;
}

/* The start both transfer commands share: their arguments, then the
 * configuration. -1 to go on (cfg loaded), else the exit status. */
static int xfer_start(int argc, char **argv, const char *cmd, const char *names, const char *self, struct xfer_args *a,
                      struct cfg *cfg)
{
    int status = xfer_args(argc, argv, cmd, names, a);
    if (status >= 0)
        return status;
    char err[FETCH_ERR_MAX];
    if (cfg_load(cfg, a->config, self, a->sets, a->nsets, err, sizeof err) < 0) {
        fail("%s", err);
        cfg_free(cfg);
        return CLI_EXIT_CONFIG;
    }
    return -1;
}

int cli_fetch(int argc, char **argv, const char *self)
{
    cleanup_free const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    if (!sets)
        return CLI_EXIT_SERVICE;
    struct xfer_args a = {.sets = sets};
    struct cfg cfg;
    char err[FETCH_ERR_MAX];
    int status = xfer_start(argc, argv, "fetch", "URL DEST", self, &a, &cfg);
    if (status >= 0)
        return status;
    const char *url = a.pos[0], *dest = a.pos[1];
    int rc;
    status = 0;
    if (a.session) {
        cleanup_free char *sdir = session_make(a.session, err, sizeof err);
        if (!sdir) {
            fail("%s", err);
            status = CLI_EXIT_CANTCREAT;
            goto out;
        }
        struct fetch_mount m;
        rc = fetch_mount(&cfg.fetch, sdir, url, dest, &m, err, sizeof err);
        if (rc < 0) {
            fail("%s", err);
            status = cli_fetch_status(rc);
            goto out;
        }
        json_object *o = result_mount_json(&m);
        if (o)
            json_object_object_add(o, "reused", json_object_new_boolean(m.reused));
        print_json(o);
        fetch_mount_free(&m);
    } else {
        const char *name;
        cleanup_fd int dfd = open_parent(dest, &name, err, sizeof err);
        if (dfd < 0) {
            fail("%s", err);
            status = dfd == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_CANTCREAT;
            goto out;
        }
        struct fetch_file f;
        rc = fetch_download(&cfg.fetch, url, dfd, name, 0, NULL, &f, err, sizeof err);
        if (rc < 0) {
            fail("%s", err);
            status = cli_fetch_status(rc);
            goto out;
        }
        json_object *o = json_object_new_object();
        if (o) {
            json_object_object_add(o, "path", json_object_new_string(dest));
            json_object_object_add(o, "bytes", json_object_new_int64((int64_t)f.bytes));
            json_object_object_add(o, "sha256", json_object_new_string(f.sha256));
            json_object_object_add(o, "mime", json_object_new_string(f.mime));
        }
        print_json(o);
    }
out:
    cfg_free(&cfg);
    if (fflush(stdout) != 0 && status == 0)
        status = CLI_EXIT_SERVICE;
    return status;
}

int cli_upload(int argc, char **argv, const char *self)
{
    cleanup_free const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    if (!sets)
        return CLI_EXIT_SERVICE;
    struct xfer_args a = {.sets = sets};
    struct cfg cfg;
    char err[FETCH_ERR_MAX];
    int status = xfer_start(argc, argv, "upload", "FILE URL", self, &a, &cfg);
    if (status >= 0)
        return status;
    const char *file = a.pos[0], *url = a.pos[1];
    struct fetch_upload_result u;
    int rc;
    status = 0;
    if (a.session) {
        cleanup_free char *sdir = realpath(a.session, NULL);
        if (!sdir) {
            fail("--session %s: %s", a.session, strerror(errno));
            status = CLI_EXIT_NOINPUT;
            goto out;
        }
        rc = fetch_persist(&cfg.fetch, sdir, file, url, &u, err, sizeof err);
    } else {
        const char *name;
        cleanup_fd int dfd = open_parent(file, &name, err, sizeof err);
        if (dfd < 0) {
            fail("%s", err);
            status = dfd == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_NOINPUT;
            goto out;
        }
        rc = fetch_upload(&cfg.fetch, url, dfd, name, &u, err, sizeof err);
    }
    if (rc < 0) {
        fail("%s", err);
        /* A local file that cannot be read is "cannot read the input" too. */
        status = cli_fetch_status(rc);
        goto out;
    }
    print_json(result_upload_json(&u));
out:
    cfg_free(&cfg);
    if (fflush(stdout) != 0 && status == 0)
        status = CLI_EXIT_SERVICE;
    return status;
}

/* ---------------------------------------------------------------- main */

int cli_run(int argc, char **argv, const char *self)
{
    enum {
        OPT_INPUT = 256,
        OPT_INPUT_TEXT,
        OPT_INPUT_URL,
        OPT_OUT,
        OPT_TIMEOUT,
        OPT_JSON,
        OPT_SET,
        OPT_CONFIG,
        OPT_SESSION,
        OPT_MOUNT,
        OPT_WITH,
        OPT_AUTO_DEPS,
        OPT_NO_AUTO_DEPS,
    };
    static const struct option opts[] = {
        {"input", required_argument, NULL, OPT_INPUT},   {"input-text", required_argument, NULL, OPT_INPUT_TEXT},
        {"input-url", required_argument, NULL, OPT_INPUT_URL},
        {"out", required_argument, NULL, OPT_OUT},       {"timeout", required_argument, NULL, OPT_TIMEOUT},
        {"json", no_argument, NULL, OPT_JSON},           {"set", required_argument, NULL, OPT_SET},
        {"config", required_argument, NULL, OPT_CONFIG}, {"session", required_argument, NULL, OPT_SESSION},
        {"mount", required_argument, NULL, OPT_MOUNT},   {"help", no_argument, NULL, 'h'},
        {"with", required_argument, NULL, OPT_WITH},     {"requirements", required_argument, NULL, 'r'},
        {"auto-deps", no_argument, NULL, OPT_AUTO_DEPS}, {"no-auto-deps", no_argument, NULL, OPT_NO_AUTO_DEPS},
        {NULL, 0, NULL, 0},
    };
    const char *input_file = NULL, *input_text = NULL, *input_url = NULL, *out = NULL, *timeout = NULL,
               *config = NULL, *session = NULL;
    bool json = false;
    int auto_deps = -1; /* -1: the configuration's */
    cleanup_free const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    cleanup_free const char **mounts = calloc((size_t)argc + 1, sizeof *mounts);
    size_t nsets = 0, nmounts = 0;
    /* --with and -r, in the order given (earlier wins per distribution). */
    struct req_arg {
        bool file;
        const char *s;
    };
    cleanup_free struct req_arg *req_args = calloc((size_t)argc + 1, sizeof *req_args);
    size_t n_req_args = 0;
    int c;

    if (!sets || !mounts || !req_args)
        return CLI_EXIT_SERVICE;
    optind = 1;
    while ((c = getopt_long(argc, argv, "hr:", opts, NULL)) != -1) {
        switch (c) {
        case OPT_INPUT: input_file = optarg; break;
        case OPT_INPUT_TEXT: input_text = optarg; break;
        case OPT_INPUT_URL: input_url = optarg; break;
        case OPT_SESSION: session = optarg; break;
        case OPT_MOUNT: mounts[nmounts++] = optarg; break;
        case OPT_OUT: out = optarg; break;
        case OPT_TIMEOUT: timeout = optarg; break;
        case OPT_JSON: json = true; break;
        case OPT_SET: sets[nsets++] = optarg; break;
        case OPT_CONFIG: config = optarg; break;
        case OPT_WITH: req_args[n_req_args++] = (struct req_arg){false, optarg}; break;
        case 'r': req_args[n_req_args++] = (struct req_arg){true, optarg}; break;
        case OPT_AUTO_DEPS: auto_deps = 1; break;
        case OPT_NO_AUTO_DEPS: auto_deps = 0; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return CLI_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fail(optind >= argc ? "run: which script? (a file, or - for stdin)" : "run: one script at a time");
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    const char *script_path = argv[optind];
    if (!!input_file + !!input_text + !!input_url > 1) {
        fail("--input, --input-text and --input-url: give one of them");
        return CLI_EXIT_USAGE;
    }
    if (nmounts && !session) {
        fail("--mount needs --session DIR (the mounted files live in its workspace)");
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < nmounts; i++) {
        if (!strchr(mounts[i], '=') || mounts[i][0] == '=') {
            fail("--mount %s: expected PATH=URL", mounts[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (input_file && !strcmp(input_file, "-") && !strcmp(script_path, "-")) {
        fail("the script and the input cannot both come from stdin");
        return CLI_EXIT_USAGE;
    }

    struct cfg cfg;
    char err[512];
    int rc = cfg_load(&cfg, config, self, sets, nsets, err, sizeof err);
    if (rc == 0 && timeout) {
        char why[300];
        rc = cfg_set(&cfg, "timeout", timeout, why, sizeof why);
        if (rc < 0)
            snprintf(err, sizeof err, "--timeout: %s", why);
    }
    if (rc < 0) {
        fail("%s", err);
        cfg_free(&cfg);
        return CLI_EXIT_CONFIG;
    }

    int status = 0;
    cleanup_free char *code = NULL, *input = NULL, *dest = NULL, *sdir = NULL, *workspace = NULL;
    size_t code_len = 0, input_len = 0;
    struct exec_result r;
    exec_result_init(&r);
    const char **reqs = NULL;
    size_t n_reqs = 0, cap_reqs = 0;
    char **req_texts = calloc(n_req_args + 1, sizeof *req_texts);
    if (!req_texts) {
        status = CLI_EXIT_SERVICE;
        goto done;
    }
    for (size_t i = 0; i < n_req_args; i++) {
        if (req_args[i].file) {
            status = read_requirements(req_args[i].s, &req_texts[i], &reqs, &n_reqs, &cap_reqs);
            if (status)
                goto done;
            continue;
        }
        if (n_reqs == cap_reqs) {
            size_t nc = cap_reqs ? cap_reqs * 2 : 16;
            const char **v = realloc(reqs, nc * sizeof *v);
            if (!v) {
                status = CLI_EXIT_SERVICE;
                goto done;
            }
            reqs = v;
            cap_reqs = nc;
        }
        reqs[n_reqs++] = req_args[i].s;
    }

    status = read_source(script_path, cfg.exec.limits.code_bytes + 1, &code, &code_len, "script");
    if (status)
        goto done;
    if (input_file) {
        status = read_source(input_file, cfg.exec.limits.input_bytes ? cfg.exec.limits.input_bytes : SIZE_MAX / 2,
                             &input, &input_len, "input");
        if (status)
            goto done;
    } else if (input_text) {
        input = strdup(input_text);
        input_len = strlen(input_text);
    } else if (input_url) {
        /* Through the same code and limits as mount_file, and no larger
         * than input_bytes. */
        struct fetch_file f;
        char ferr[FETCH_ERR_MAX];
        rc = fetch_to_memory(&cfg.fetch, input_url, cfg.exec.limits.input_bytes, "input_bytes", &input, &input_len,
                             &f, ferr, sizeof ferr);
        if (rc < 0) {
            fail("--input-url: %s", ferr);
            status = cli_fetch_status(rc);
            goto done;
        }
    }
    const char *why = NULL;
    if (exec_check_code(code, code_len, &cfg.exec.limits, &why) < 0) {
        fail("%s: %s", script_path, why);
        status = CLI_EXIT_DATAERR;
        goto done;
    }
    bool copy = !json || out;
    const char *out_dir = out ? out : "runmyscript-out";
    if (copy && !dir_writable(out_dir, err, sizeof err)) {
        fail("--out: %s", err);
        status = CLI_EXIT_CANTCREAT;
        goto done;
    }

    if (session) {
        sdir = session_make(session, err, sizeof err);
        if (!sdir || asprintf(&workspace, "%s/workspace", sdir) < 0) {
            workspace = NULL;
            fail("%s", sdir ? "out of memory" : err);
            status = CLI_EXIT_CANTCREAT;
            goto done;
        }
    }
    for (size_t i = 0; i < nmounts; i++) {
        /* PATH=URL: the first '=' ends the path (a URL's query has more). */
        const char *eq = strchr(mounts[i], '=');
        cleanup_free char *path = strndup(mounts[i], (size_t)(eq - mounts[i]));
        struct fetch_mount m;
        char ferr[FETCH_ERR_MAX];
        if (!path) {
            status = CLI_EXIT_SERVICE;
            goto done;
        }
        rc = fetch_mount(&cfg.fetch, sdir, eq + 1, path, &m, ferr, sizeof ferr);
        if (rc < 0) {
            fail("--mount: %s", ferr);
            status = cli_fetch_status(rc);
            goto done;
        }
        if (!json)
            fprintf(stderr, "[runmyscript] %s %s (%llu bytes, sha256 %.12s...)\n", m.reused ? "kept" : "mounted",
                    m.mounted_as, (unsigned long long)m.bytes, m.sha256);
        fetch_mount_free(&m);
    }

    struct sigaction sa = {.sa_handler = on_signal};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct term t = {.tty = isatty(1), .err_tty = isatty(2), .at_line_start = true, .last = EXEC_STREAM_STDOUT};
    struct exec_sink sink = {
        .ctx = &t,
        .output = json ? NULL : term_output,
        .phase = json ? NULL : term_phase,
        .install_line = json ? NULL : term_install_line,
        .cancelled = term_cancelled,
    };
    struct exec_spec spec;
    exec_spec_init(&spec, &cfg.exec);
    spec.code = code;
    spec.code_len = code_len;
    spec.input = input;
    spec.input_len = input_len;
    spec.workspace = workspace;
    spec.requirements = reqs;
    spec.n_requirements = n_reqs;
    if (auto_deps >= 0)
        spec.auto_deps = auto_deps;
    char why_req[1024];
    rc = exec_check_requirements(&spec, why_req, sizeof why_req);
    if (rc == -EINVAL) {
        fail("%s", why_req);
        status = CLI_EXIT_DATAERR;
        goto done;
    }

    rc = exec_run(&spec, &sink, &r);
    if (!json && !t.at_line_start)
        put("\n", 1);
    fflush(stdout);
    if (rc < 0) {
        fail("%s", r.error ? r.error : strerror(-rc));
        status = rc == -EBUSY ? CLI_EXIT_BUSY : CLI_EXIT_SERVICE;
        if (json) {
            cleanup_free char *s = result_to_string(&r, false, NULL);
            if (s)
                printf("%s\n", s);
        }
        goto done;
    }
    if (copy && (r.n_artifacts || r.has_zip)) {
        rc = copy_out(&r, out_dir, &dest, err, sizeof err);
        if (rc < 0) {
            fail("copying the artifacts to --out: %s (they are still in %s)", err, r.output_dir);
            status = CLI_EXIT_CANTCREAT;
            goto done;
        }
    }
    if (json) {
        cleanup_free char *s = result_to_string(&r, false, NULL);
        if (!s) {
            fail("out of memory");
            status = CLI_EXIT_SERVICE;
            goto done;
        }
        printf("%s\n", s);
    } else {
        print_summary(&r, dest, isatty(2));
    }
    status = exit_status(&r);
done:
    if (fflush(stdout) != 0 && status == 0)
        status = CLI_EXIT_SERVICE;
    for (size_t i = 0; req_texts && i < n_req_args; i++)
        free(req_texts[i]);
    free(req_texts);
    free(reqs);
    exec_result_free(&r);
    cfg_free(&cfg);
    return status;
}

/* The options `config` and `check-sandbox` share (--config, --set), and the
 * configuration they give. 0, or the exit status to return (the error is
 * printed); cfg_free(cfg) in every case. */
static int cfg_from_args(int argc, char **argv, const char *self, struct cfg *cfg)
{
    static const struct option opts[] = {
        {"set", required_argument, NULL, 's'},
        {"config", required_argument, NULL, 'c'},
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
    while ((c = getopt_long(argc, argv, "+", opts, NULL)) != -1) {
        if (c == 's')
            sets[nsets++] = optarg;
        else if (c == 'c')
            config = optarg;
        else
            return CLI_EXIT_USAGE;
    }
    char err[512];
    if (cfg_load(cfg, config, self, sets, nsets, err, sizeof err) < 0) {
        fail("%s", err);
        return CLI_EXIT_CONFIG;
    }
    return 0;
}

int cli_config(int argc, char **argv, const char *self)
{
    struct cfg cfg;
    int status = cfg_from_args(argc, argv, self, &cfg);
    if (status) {
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

int cli_check_sandbox(int argc, char **argv, const char *self)
{
    struct cfg cfg;
    int st = cfg_from_args(argc, argv, self, &cfg);
    if (st) {
        cfg_free(&cfg);
        return st;
    }
    struct jail_caps caps;
    jail_probe(&caps);
    const char *yes = "yes", *no = "no";
    printf("running as:            %s\n", caps.root ? "root (each run gets a uid of its own)" : "an unprivileged user");
    printf("user namespaces:       %s%s%s\n", caps.userns ? yes : no, caps.userns ? "" : " - ", caps.userns_error);
    printf("pid namespace:         %s\n", caps.userns ? yes : no);
    printf("network namespace:     %s\n", caps.userns ? yes : no);
    printf("seccomp:               %s\n", caps.seccomp ? yes : no);
    printf("cgroup v1 memory:      %s\n", caps.cgroup_v1_memory ? yes : no);
    printf("cgroup v1 pids:        %s\n", caps.cgroup_v1_pids ? yes : no);
    printf("cgroup v2 (delegated): %s\n", caps.cgroup_v2 ? yes : no);
    bool ns = caps.userns && caps.seccomp && cfg.exec.isolation != EXEC_ISOLATION_RLIMITS;
    bool mem_cg = caps.cgroup_v1_memory, pid_cg = caps.cgroup_v1_pids;
    printf("limits enforced:       wall time (we stop the run), cpu time (RLIMIT_CPU), memory (%s), "
           "processes (%s), file size (RLIMIT_FSIZE), open files (RLIMIT_NOFILE), /tmp size (%s), output (we watch)\n",
           ns && caps.cgroup_v2 ? "cgroup v2 memory.max" : ns && mem_cg ? "cgroup memory.limit_in_bytes" : "RLIMIT_AS",
           ns && caps.cgroup_v2 ? "cgroup v2 pids.max"
           : ns && pid_cg       ? "cgroup pids.max"
           : ns                 ? "RLIMIT_NPROC in the user namespace"
                                : "RLIMIT_NPROC, not for root",
           ns ? "tmpfs size" : "not limited: TMPDIR is in the run directory");
    int status = 0;
    if (ns) {
        printf("runs get:              isolation namespaces+seccomp\n");
    } else if (cfg.exec.isolation == EXEC_ISOLATION_RLIMITS || (!cfg.exec.require_isolation &&
                                                                cfg.exec.isolation == EXEC_ISOLATION_AUTO)) {
        printf("runs get:              isolation rlimits (the fallback: %s)\n",
               cfg.exec.isolation == EXEC_ISOLATION_RLIMITS ? "isolation = rlimits" : "require_isolation = off");
    } else {
        printf("runs get:              nothing: runs are refused (require_isolation = on and no namespaces here)\n");
        status = 1;
    }
    cfg_free(&cfg);
    return status;
}
