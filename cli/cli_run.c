/* cli_run.c: `runmyscript run`, the terminal front door. It reads the
 * script, its input and requirements, fetches the session's mounts, calls
 * exec_run() with a sink that prints the log live (cli_term.c), copies the
 * artifacts and the zip out of the state directory (cli_out.c), and exits
 * with the script's status (see cli.h for the table). */
#include "config.h"

#include "cli_internal.h"

#include "cfg_outcome.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLI_REQ_FILE_MAX (1u << 20) /* bytes of a -r file */
#define CLI_REQS_FIRST 16           /* requirements room made at first */
/* The input's ceiling when input_bytes is 0 (no limit): half of SIZE_MAX,
 * so that the reader's "one byte more" cannot wrap. */
#define CLI_INPUT_UNLIMITED (SIZE_MAX / 2)
#define CLI_WHY_MAX 300     /* a configuration key's reason, before its context */
#define CLI_REQ_WHY_MAX 1024 /* a requirement's reason */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: runmyscript run SCRIPT|- [options]\n"
            "\n"
            "Runs a Python script in a throw-away sandbox, installs the packages it imports\n"
            "(each set once, reused read-only), and collects what it writes. A SCRIPT named\n"
            "*.ipynb is a Jupyter notebook: its code cells run in order, and the executed\n"
            "notebook is an artifact of the same name.\n"
            "\n"
            "  --input FILE|-        the input: its bytes are the file at $SCRIPT_INPUT and stdin\n"
            "  --input-text STR      the input as text\n"
            "  --input-url URL       the input downloaded from URL (http/https; fetch_* limits and input_bytes)\n"
            "  --session DIR         run in DIR/workspace (made when missing), kept across runs\n"
            "  --mount PATH=URL      with --session: download URL to mounts/PATH first (repeatable)\n"
            "  --out DIR             copy artifacts and the zip to DIR/RUNID/ (default ./" CLI__OUT_DEFAULT ")\n"
            "  --timeout SECONDS     wall time limit (default: the timeout key, 60 s)\n"
            "  --network LIST        the run's network, where script_network = on: off, on (all that\n"
            "                        egress_allow allows), or hosts and ranges that narrow it\n"
            "                        ('api.example.com:443, 198.51.100.0/24')\n"
            "  --with SPEC           a requirement (PEP 508, e.g. 'pillow>=9'; repeatable)\n"
            "  -r, --requirements FILE  requirements, one per line (# comments; no options)\n"
            "  --no-auto-deps        do not install what the script's imports need\n"
            "  --auto-deps           do (the default, unless the auto_deps key is off)\n"
            "  --json                print the result JSON instead of the log and the file list\n"
            "  --escape WHEN         show control characters of the script's output escaped: auto\n"
            "                        (on a terminal, the default), always or never\n"
            "  --config FILE         the configuration file\n"
            "  --set KEY=VALUE       set a configuration key (repeatable; `runmyscript config` lists them)\n"
            "  -h, --help            this help\n"
            "\n"
            "Exit status: the script's exit code (128+N when killed by signal N), or\n"
            "  %d timeout   %d memory   %d output limit   %d workspace limit   %d install failed\n"
            "  %d cancelled   %d the service failed   %d usage   %d bad script, input or requirement\n"
            "  %d file not found   %d cannot write --out   %d bad configuration\n"
            "  --input-url and --mount: %d bad URL or path, %d over a size limit, %d could not be fetched\n",
            CLI_EXIT_TIMEOUT, CLI_EXIT_MEMORY, CLI_EXIT_OUTPUT_LIMIT, CLI_EXIT_WORKSPACE_LIMIT, CLI_EXIT_INSTALL_FAILED,
            CLI_EXIT_CANCELLED, CLI_EXIT_SERVICE, CLI_EXIT_USAGE, CLI_EXIT_DATAERR, CLI_EXIT_NOINPUT, CLI_EXIT_CANTCREAT,
            CLI_EXIT_CONFIG, CLI_EXIT_USAGE, CLI_EXIT_DATAERR, CLI_EXIT_NOINPUT);
}

/* --with and -r, in the order given (earlier wins per distribution). */
struct run_req_arg {
    bool file;
    const char *s;
};

/* The command line of `run`; the strings are argv's. */
struct run_args {
    const char *script, *input_file, *input_text, *input_url, *out, *timeout, *config, *session, *network;
    bool json;
    enum cli__escape escape;
    int auto_deps; /* -1: the configuration's */
    const char **sets, **mounts;
    size_t nsets, nmounts;
    struct run_req_arg *req_args;
    size_t n_req_args;
};

/* What the run is made of, read before it starts. */
struct run_inputs {
    char *code, *input;
    size_t code_len, input_len;
    char **req_texts;   /* the text of each -r file, which reqs point into */
    const char **reqs;  /* every requirement, --with and -r in order */
    size_t n_reqs, cap_reqs;
    char *sdir, *workspace; /* --session: its absolute path and workspace */
};

static void run_args_free(struct run_args *a)
{
    free(a->sets);
    free(a->mounts);
    free(a->req_args);
}

static void run_inputs_free(struct run_inputs *in, size_t n_req_args)
{
    for (size_t i = 0; in->req_texts && i < n_req_args; i++)
        free(in->req_texts[i]);
    free(in->req_texts);
    free(in->reqs);
    free(in->code);
    free(in->input);
    free(in->sdir);
    free(in->workspace);
}

/* ---------------------------------------------------- the command line */

/* Checks what getopt cannot: one script, at most one input, mounts only
 * with a session and as PATH=URL, not both script and input from stdin. */
static int run_check_args(const struct run_args *a, int argc, char **argv)
{
    if (optind != argc - 1) {
        cli__fail(optind >= argc ? "run: which script? (a file, or - for stdin; runmyscript run --help)"
                                 : "run: one script at a time (runmyscript run --help)");
        return CLI_EXIT_USAGE;
    }
    if (!!a->input_file + !!a->input_text + !!a->input_url > 1) {
        cli__fail("--input, --input-text and --input-url: give one of them");
        return CLI_EXIT_USAGE;
    }
    if (a->nmounts && !a->session) {
        cli__fail("--mount needs --session DIR (the mounted files live in its workspace)");
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < a->nmounts; i++) {
        if (!strchr(a->mounts[i], '=') || a->mounts[i][0] == '=') {
            cli__fail("--mount %s: expected PATH=URL", a->mounts[i]);
            return CLI_EXIT_USAGE;
        }
    }
    if (a->input_file && !strcmp(a->input_file, "-") && !strcmp(argv[optind], "-")) {
        cli__fail("the script and the input cannot both come from stdin");
        return CLI_EXIT_USAGE;
    }
    return CLI__GO_ON;
}

/* Parses the command line into a (run_args_free() afterwards in every
 * case). CLI__GO_ON, or the exit status (0 after --help). */
static int run_parse_args(int argc, char **argv, struct run_args *a)
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
        OPT_ESCAPE,
        OPT_NETWORK,
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
        {"escape", required_argument, NULL, OPT_ESCAPE}, {"network", required_argument, NULL, OPT_NETWORK},
        {NULL, 0, NULL, 0},
    };
    int c;
    *a = (struct run_args){.auto_deps = -1, .escape = CLI__ESCAPE_AUTO};
    /* Each option takes at most one argv slot: argc + 1 is room for all. */
    a->sets = calloc((size_t)argc + 1, sizeof *a->sets);
    a->mounts = calloc((size_t)argc + 1, sizeof *a->mounts);
    a->req_args = calloc((size_t)argc + 1, sizeof *a->req_args);
    if (!a->sets || !a->mounts || !a->req_args)
        return CLI_EXIT_SERVICE;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":hr:", opts, NULL)) != -1) {
        switch (c) {
        case OPT_INPUT: a->input_file = optarg; break;
        case OPT_INPUT_TEXT: a->input_text = optarg; break;
        case OPT_INPUT_URL: a->input_url = optarg; break;
        case OPT_SESSION: a->session = optarg; break;
        case OPT_MOUNT: a->mounts[a->nmounts++] = optarg; break;
        case OPT_OUT: a->out = optarg; break;
        case OPT_TIMEOUT: a->timeout = optarg; break;
        case OPT_NETWORK: a->network = optarg; break;
        case OPT_JSON: a->json = true; break;
        case OPT_SET: a->sets[a->nsets++] = optarg; break;
        case OPT_CONFIG: a->config = optarg; break;
        case OPT_WITH: a->req_args[a->n_req_args++] = (struct run_req_arg){false, optarg}; break;
        case 'r': a->req_args[a->n_req_args++] = (struct run_req_arg){true, optarg}; break;
        case OPT_AUTO_DEPS: a->auto_deps = 1; break;
        case OPT_NO_AUTO_DEPS: a->auto_deps = 0; break;
        case OPT_ESCAPE:
            if (cli__escape_parse(optarg, &a->escape) < 0) {
                cli__fail("--escape %s: expected auto, always or never", optarg);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: cli__bad_option("run", argv, c); return CLI_EXIT_USAGE;
        }
    }
    int status = run_check_args(a, argc, argv);
    if (status == CLI__GO_ON)
        a->script = argv[optind];
    return status;
}

/* The configuration, with --timeout on top (cfg_free() afterwards in every
 * case). CLI__GO_ON or CLI_EXIT_CONFIG (printed). */
static int run_load_cfg(const struct run_args *a, const char *self, struct cfg *cfg)
{
    char err[CLI__ERR_MAX];
    int rc = cfg_load(cfg, a->config, self, a->sets, a->nsets, err, sizeof err);
    if (rc == 0 && a->timeout) {
        char why[CLI_WHY_MAX];
        rc = cfg_set(cfg, "timeout", a->timeout, why, sizeof why);
        if (rc < 0)
            snprintf(err, sizeof err, "--timeout: %s", why);
    }
    if (rc < 0) {
        cli__fail("%s", err);
        return CLI_EXIT_CONFIG;
    }
    return CLI__GO_ON;
}

/* ------------------------------------------------------ what is read */

static int reqs_push(struct run_inputs *in, const char *req)
{
    if (in->n_reqs == in->cap_reqs) {
        size_t nc = in->cap_reqs ? in->cap_reqs * 2 : CLI_REQS_FIRST;
        const char **v = realloc(in->reqs, nc * sizeof *v);
        if (!v)
            return CLI_EXIT_SERVICE;
        in->reqs = v;
        in->cap_reqs = nc;
    }
    in->reqs[in->n_reqs++] = req;
    return CLI__GO_ON;
}

/* Adds the requirements of a requirements.txt (blank lines and comments
 * skipped; every other line is one requirement, checked later like
 * --with) to in->reqs. The text is kept in *keep (caller frees). */
static int read_requirements(const char *path, char **keep, struct run_inputs *in)
{
    size_t len;
    int rc = util_read_file_at(AT_FDCWD, path, CLI_REQ_FILE_MAX, keep, &len);
    if (rc < 0) {
        cli__fail("cannot read the requirements file %s: %s", path, strerror(-rc));
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
        int status = reqs_push(in, line);
        if (status != CLI__GO_ON)
            return status;
    }
    return CLI__GO_ON;
}

/* Every --with and every line of every -r file, in the order given. */
static int run_read_requirements(const struct run_args *a, struct run_inputs *in)
{
    in->req_texts = calloc(a->n_req_args + 1, sizeof *in->req_texts);
    if (!in->req_texts)
        return CLI_EXIT_SERVICE;
    for (size_t i = 0; i < a->n_req_args; i++) {
        int status = a->req_args[i].file ? read_requirements(a->req_args[i].s, &in->req_texts[i], in)
                                         : reqs_push(in, a->req_args[i].s);
        if (status != CLI__GO_ON)
            return status;
    }
    return CLI__GO_ON;
}

/* Reads the script or the input file (what) from path, or stdin for "-",
 * up to max bytes (the limit named key). */
static int read_source(const char *path, size_t max, char **out, size_t *len, const char *what, const char *key)
{
    int rc;
    if (!strcmp(path, "-"))
        rc = util_read_fd(0, max, out, len);
    else
        rc = util_read_file_at(AT_FDCWD, path, max, out, len);
    if (rc == -E2BIG) {
        char hs[32];
        util_human_size(max, hs, sizeof hs);
        cli__fail("%s %s is larger than %s (%s)", what, path, key, hs);
        return CLI_EXIT_DATAERR;
    }
    if (rc < 0) {
        cli__fail("cannot read %s %s: %s", what, path, strerror(-rc));
        return CLI_EXIT_NOINPUT;
    }
    return CLI__GO_ON;
}

/* The script, then the input: a file, the text given, or a download. */
static int run_read_script_and_input(const struct run_args *a, const struct cfg *cfg, struct run_inputs *in)
{
    const struct exec_limits *lim = &cfg->exec.limits;
    int status = read_source(a->script, lim->code_bytes + 1, &in->code, &in->code_len, "script", "code_bytes");
    if (status != CLI__GO_ON)
        return status;
    if (a->input_file)
        return read_source(a->input_file, lim->input_bytes ? lim->input_bytes : CLI_INPUT_UNLIMITED, &in->input,
                           &in->input_len, "input", "input_bytes");
    if (a->input_text) {
        in->input = strdup(a->input_text);
        in->input_len = strlen(a->input_text);
        return in->input ? CLI__GO_ON : CLI_EXIT_SERVICE;
    }
    if (a->input_url) {
        /* Through the same code and limits as mount_file, and no larger
         * than input_bytes. */
        struct fetch_file f;
        char ferr[FETCH_ERR_MAX];
        int rc = fetch_to_memory(&cfg->fetch, a->input_url, lim->input_bytes, "input_bytes", &in->input,
                                 &in->input_len, &f, ferr, sizeof ferr);
        if (rc < 0) {
            cli__fail("--input-url: %s", ferr);
            return cfg_transfer(rc)->cli_exit;
        }
    }
    return CLI__GO_ON;
}

/* ------------------------------------------------- before the run */

/* Fails fast on what would fail after the run: a bad script, an --out
 * that cannot be written. */
static int run_check(const struct run_args *a, const struct cfg *cfg, const struct run_inputs *in)
{
    char err[CLI__ERR_MAX];
    if (exec_check_code(in->code, in->code_len, &cfg->exec.limits, err, sizeof err) < 0) {
        cli__fail("%s: %s", a->script, err);
        return CLI_EXIT_DATAERR;
    }
    if ((!a->json || a->out) && !cli__dir_writable(a->out ? a->out : CLI__OUT_DEFAULT, err, sizeof err)) {
        cli__fail("--out: %s", err);
        return CLI_EXIT_CANTCREAT;
    }
    return CLI__GO_ON;
}

/* --session: its workspace made, and each --mount fetched into it. */
static int run_open_session(const struct run_args *a, const struct cfg *cfg, struct run_inputs *in)
{
    char err[CLI__ERR_MAX];
    if (a->session) {
        in->sdir = cli__session_make(a->session, err, sizeof err);
        if (!in->sdir || asprintf(&in->workspace, "%s/workspace", in->sdir) < 0) {
            in->workspace = NULL;
            cli__fail("%s", in->sdir ? "out of memory" : err);
            return CLI_EXIT_CANTCREAT;
        }
    }
    for (size_t i = 0; i < a->nmounts; i++) {
        /* PATH=URL: the first '=' ends the path (a URL's query has more). */
        const char *eq = strchr(a->mounts[i], '=');
        cleanup_free char *path = strndup(a->mounts[i], (size_t)(eq - a->mounts[i]));
        struct fetch_mount m;
        char ferr[FETCH_ERR_MAX];
        if (!path)
            return CLI_EXIT_SERVICE;
        int rc = fetch_mount(&cfg->fetch, in->sdir, eq + 1, path, &m, ferr, sizeof ferr);
        if (rc < 0) {
            cli__fail("--mount: %s", ferr);
            return cfg_transfer(rc)->cli_exit;
        }
        if (!a->json)
            cli__note("[runmyscript] %s %s (%llu bytes, sha256 %.12s...)", m.reused ? "kept" : "mounted", m.mounted_as,
                      (unsigned long long)m.bytes, m.sha256);
        fetch_mount_free(&m);
    }
    return CLI__GO_ON;
}

/* The spec of the run (borrowing in and cfg), its requirements checked. */
static int run_build_spec(const struct run_args *a, const struct cfg *cfg, const struct run_inputs *in,
                          struct exec_spec *spec)
{
    exec_spec_init(spec, &cfg->exec);
    spec->code = in->code;
    spec->code_len = in->code_len;
    spec->input = in->input;
    spec->input_len = in->input_len;
    spec->workspace = in->workspace;
    /* A Jupyter notebook runs cell by cell (exec_spec.notebook). */
    size_t n = strlen(a->script);
    if (n > 6 && !strcmp(a->script + n - 6, ".ipynb"))
        spec->notebook = a->script;
    spec->network = a->network;
    spec->requirements = in->reqs;
    spec->n_requirements = in->n_reqs;
    if (a->auto_deps >= 0)
        spec->auto_deps = a->auto_deps;
    char why_req[CLI_REQ_WHY_MAX];
    if (exec_check_requirements(spec, why_req, sizeof why_req) == -EINVAL) {
        cli__fail("%s", why_req);
        return CLI_EXIT_DATAERR;
    }
    return CLI__GO_ON;
}

/* -------------------------------------------------------- the run */

/* Runs spec with the terminal's sink, then shows the result (the summary,
 * or the JSON) and copies the artifacts to --out. The exit status. */
static int run_and_report(const struct run_args *a, const struct exec_spec *spec, struct cli__term *t,
                          struct result *r)
{
    char err[CLI__ERR_MAX];
    cleanup_free char *dest = NULL;
    /* Our stdin, when it is neither the script nor its input, is what the
     * script's input() reads past its input: a terminal we also show the
     * log on, a pipe, a file (not /dev/null, nor a terminal whose user
     * does not see the prompt). */
    bool stdin_taken = !strcmp(a->script, "-") || (a->input_file && !strcmp(a->input_file, "-"));
    struct stat st;
    bool can = fstat(0, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode) ||
                                      (isatty(0) && isatty(1) && !a->json));
    if (!stdin_taken && can)
        cli__term_ask(t, spec->cfg->state_dir, r);
    struct exec_sink sink = cli__term_sink(t, a->json);
    int rc = exec_run(spec, &sink, r);
    cli__term_end(t, a->json);
    if (r->outcome != EXEC_OUTCOME_DONE) {
        cli__fail("%s", r->error ? r->error : strerror(-rc));
        if (a->json)
            discard(cli__print_result_json(r, t)); /* the error is already told */
        return cfg_outcome(r->outcome)->cli_exit;
    }
    if ((!a->json || a->out) && (r->n_artifacts || r->has_zip)) {
        rc = cli__copy_out(r, a->out ? a->out : CLI__OUT_DEFAULT, &dest, err, sizeof err);
        if (rc < 0) {
            cli__fail("copying the artifacts to --out: %s (they are still in %s)", err, r->output_dir);
            return CLI_EXIT_CANTCREAT;
        }
    }
    if (a->json) {
        if (cli__print_result_json(r, t) < 0) {
            cli__fail("out of memory");
            return CLI_EXIT_SERVICE;
        }
    } else {
        cli__print_summary(r, dest, t);
    }
    return cli__exit_status(r);
}

int cli_run(int argc, char **argv, const char *self)
{
    struct run_args a;
    int status = run_parse_args(argc, argv, &a);
    if (status != CLI__GO_ON) {
        run_args_free(&a);
        return status;
    }
    struct cfg cfg;
    status = run_load_cfg(&a, self, &cfg);
    if (status != CLI__GO_ON) {
        cfg_free(&cfg);
        run_args_free(&a);
        return status;
    }
    struct run_inputs in = {0};
    struct result r;
    result_init(&r);
    status = run_read_requirements(&a, &in);
    if (status == CLI__GO_ON)
        status = run_read_script_and_input(&a, &cfg, &in);
    if (status == CLI__GO_ON)
        status = run_check(&a, &cfg, &in);
    if (status == CLI__GO_ON)
        status = run_open_session(&a, &cfg, &in);
    if (status == CLI__GO_ON) {
        struct cli__term t;
        struct exec_spec spec;
        cli__term_start(&t, a.escape);
        status = run_build_spec(&a, &cfg, &in, &spec);
        if (status == CLI__GO_ON)
            status = run_and_report(&a, &spec, &t, &r);
    }
    if (fflush(stdout) != 0 && status == 0)
        status = CLI_EXIT_SERVICE;
    run_inputs_free(&in, a.n_req_args);
    result_free(&r);
    cfg_free(&cfg);
    run_args_free(&a);
    return status;
}
