/* cli_xfer.c: the transfer commands, `runmyscript fetch` (a download, or a
 * file mounted into a session) and `runmyscript upload` (an HTTP PUT of a
 * file, or of a session's output file); each prints one line of JSON. */
#include "config.h"

#include "cli_internal.h"

#include "cfg_outcome.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void print_json(json_object *o)
{
    if (!o) {
        cli__fail("out of memory");
        return;
    }
    printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
    json_object_put(o);
}

/* Splits a host path into its directory (opened, following symlinks: the
 * CLI's user names it) and its last component. */
static int open_parent(const char *path, const char **name, char *err, size_t errlen)
{
    const char *slash = strrchr(path, '/');
    cleanup_free char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    *name = slash ? slash + 1 : path;
    if (!dir)
        return -ENOMEM;
    if (!**name) {
        snprintf(err, errlen, "%s: a file name is needed, not a directory", path);
        return -EINVAL;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(e));
        return -e;
    }
    return fd;
}

/* Options shared by fetch and upload: two positional arguments (URL DEST,
 * FILE URL) and the options. */
struct xfer_args {
    const char *session, *config;
    const char **sets; /* owned; the strings are argv's */
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
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'S': a->session = optarg; break;
        case 's': a->sets[a->nsets++] = optarg; break;
        case 'c': a->config = optarg; break;
        case 'h':
            printf("usage: runmyscript %s %s [--session DIR] [--config FILE] [--set KEY=VALUE]...\n", cmd, names);
            return 0;
        default: cli__bad_option(cmd, argv, c); return CLI_EXIT_USAGE;
        }
    }
    if (argc - optind != (int)ARRAY_SIZE(a->pos)) {
        cli__fail("%s: expected %s (runmyscript %s --help)", cmd, names, cmd);
        return CLI_EXIT_USAGE;
    }
    for (size_t i = 0; i < ARRAY_SIZE(a->pos); i++)
        a->pos[i] = argv[optind + (int)i];
    return CLI__GO_ON;
}

/* The start both transfer commands share: their arguments, then the
 * configuration. CLI__GO_ON (cfg loaded; xfer_end() afterwards), else the
 * exit status (nothing left to undo). */
static int xfer_start(int argc, char **argv, const char *cmd, const char *names, const char *self, struct xfer_args *a,
                      struct cfg *cfg)
{
    *a = (struct xfer_args){.sets = calloc((size_t)argc + 1, sizeof *a->sets)};
    if (!a->sets)
        return CLI_EXIT_SERVICE;
    int status = xfer_args(argc, argv, cmd, names, a);
    if (status != CLI__GO_ON) {
        free(a->sets);
        return status;
    }
    char err[FETCH_ERR_MAX];
    if (cfg_load(cfg, a->config, self, a->sets, a->nsets, err, sizeof err) < 0) {
        cli__fail("%s", err);
        cfg_free(cfg);
        free(a->sets);
        return CLI_EXIT_CONFIG;
    }
    return CLI__GO_ON;
}

/* The end both share: what xfer_start() made freed, and the exit status,
 * which is CLI_EXIT_SERVICE when stdout did not take the JSON. */
static int xfer_end(struct xfer_args *a, struct cfg *cfg, int status)
{
    free(a->sets);
    cfg_free(cfg);
    if (fflush(stdout) != 0 && status == 0)
        status = CLI_EXIT_SERVICE;
    return status;
}

/* fetch --session: mount_file, printed as the MCP tool answers it and
 * whether the file was already there. */
static int fetch_into_session(const struct cfg *cfg, const char *session, const char *url, const char *dest)
{
    char err[FETCH_ERR_MAX];
    cleanup_free char *sdir = cli__session_make(session, err, sizeof err);
    if (!sdir) {
        cli__fail("%s", err);
        return CLI_EXIT_CANTCREAT;
    }
    struct fetch_mount m;
    int rc = fetch_mount(&cfg->fetch, sdir, url, dest, &m, err, sizeof err);
    if (rc < 0) {
        cli__fail("%s", err);
        return cfg_transfer(rc)->cli_exit;
    }
    json_object *o = result_mount_json(&m);
    if (o)
        json_object_object_add(o, "reused", json_object_new_boolean(m.reused));
    print_json(o);
    fetch_mount_free(&m);
    return 0;
}

/* fetch URL DEST: a download to a file of the host. */
static int fetch_to_file(const struct cfg *cfg, const char *url, const char *dest)
{
    char err[FETCH_ERR_MAX];
    const char *name;
    cleanup_fd int dfd = open_parent(dest, &name, err, sizeof err);
    if (dfd < 0) {
        cli__fail("%s", err);
        return dfd == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_CANTCREAT;
    }
    struct fetch_file f;
    int rc = fetch_download(&cfg->fetch, url, dfd, name, 0, NULL, &f, err, sizeof err);
    if (rc < 0) {
        cli__fail("%s", err);
        return cfg_transfer(rc)->cli_exit;
    }
    json_object *o = json_object_new_object();
    if (o) {
        json_object_object_add(o, "path", json_object_new_string(dest));
        json_object_object_add(o, "bytes", json_object_new_int64((int64_t)f.bytes));
        json_object_object_add(o, "sha256", json_object_new_string(f.sha256));
        json_object_object_add(o, "mime", json_object_new_string(f.mime));
    }
    print_json(o);
    return 0;
}

int cli_fetch(int argc, char **argv, const char *self)
{
    struct xfer_args a;
    struct cfg cfg;
    int status = xfer_start(argc, argv, "fetch", "URL DEST", self, &a, &cfg);
    if (status != CLI__GO_ON)
        return status;
    const char *url = a.pos[0], *dest = a.pos[1];
    status = a.session ? fetch_into_session(&cfg, a.session, url, dest) : fetch_to_file(&cfg, url, dest);
    return xfer_end(&a, &cfg, status);
}

/* upload FILE URL: the file of the host, or with --session the session's
 * output file (persist_artifact). */
static int upload(const struct cfg *cfg, const char *session, const char *file, const char *url)
{
    char err[FETCH_ERR_MAX];
    struct fetch_upload_result u;
    int rc;
    if (session) {
        cleanup_free char *sdir = realpath(session, NULL);
        if (!sdir) {
            int e = errno;
            cli__fail("--session %s: %s", session, strerror(e));
            return CLI_EXIT_NOINPUT;
        }
        rc = fetch_persist(&cfg->fetch, sdir, file, url, &u, err, sizeof err);
    } else {
        const char *name;
        cleanup_fd int dfd = open_parent(file, &name, err, sizeof err);
        if (dfd < 0) {
            cli__fail("%s", err);
            return dfd == -EINVAL ? CLI_EXIT_USAGE : CLI_EXIT_NOINPUT;
        }
        rc = fetch_upload(&cfg->fetch, url, dfd, name, &u, err, sizeof err);
    }
    if (rc < 0) {
        cli__fail("%s", err);
        /* A local file that cannot be read is "cannot read the input" too. */
        return cfg_transfer(rc)->cli_exit;
    }
    print_json(result_upload_json(&u));
    return 0;
}

int cli_upload(int argc, char **argv, const char *self)
{
    struct xfer_args a;
    struct cfg cfg;
    int status = xfer_start(argc, argv, "upload", "FILE URL", self, &a, &cfg);
    if (status != CLI__GO_ON)
        return status;
    return xfer_end(&a, &cfg, upload(&cfg, a.session, a.pos[0], a.pos[1]));
}
