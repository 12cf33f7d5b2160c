/* deps_install.c: the installer's run for an environment being built: uv
 * or pip, its command line from the configuration (index, find-links,
 * wheels only), run in the jail with the host's network and nothing but
 * the new environment, its cache and its HOME writable, and its outcome:
 * installed, failed (naming the requirement) or timed out. */
#include "config.h"

#include "deps_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"
#include "proc.h"

#define DEPS_INSTALL_OUT_MAX (4u << 20) /* installer output kept for the failure report */
#define DEPS_INSTALL_ENV_MAX (64u << 10) /* one variable of the installer's environment */

char *deps__find_uv(void)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path; *p;) {
        const char *colon = strchr(p, ':');
        size_t n = colon ? (size_t)(colon - p) : strlen(p);
        if (n && p[0] == '/') {
            char *cand;
            if (asprintf(&cand, "%.*s/uv", (int)n, p) < 0)
                return NULL;
            struct stat st;
            if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
                return cand;
            free(cand);
        }
        p += n + (colon ? 1 : 0);
    }
    return NULL;
}

/* The installer's argv and environment under construction. */
struct args {
    struct strv s, e;
    const char **v, **env;
};

static int arg(struct args *a, const char *s)
{
    return strv_push(&a->s, s, strlen(s));
}

/* NAME=the blank-separated words of list joined by sep, into the
 * environment; nothing when list has none. */
static int env_list(struct args *a, const char *name, const char *list, char sep)
{
    struct dbuf b;
    dbuf_init(&b, DEPS_INSTALL_ENV_MAX);
    int rc = dbuf_printf(&b, "%s=", name);
    size_t head = b.len;
    for (const char *p = list; rc == 0 && p && *p;) {
        while (*p == ' ' || *p == '\t')
            p++;
        size_t n = strcspn(p, " \t");
        if (n && b.len > head)
            rc = dbuf_printf(&b, "%c", sep);
        if (n && rc == 0)
            rc = dbuf_printf(&b, "%.*s", (int)n, p);
        p += n;
    }
    if (rc == 0 && b.len > head)
        rc = strv_push(&a->e, b.data, b.len);
    dbuf_free(&b);
    return rc;
}

static int strv_finish(const struct strv *s, const char *const *tail, const char ***out)
{
    size_t nt = 0;
    while (tail && tail[nt])
        nt++;
    *out = calloc(s->n + nt + 1, sizeof **out);
    if (!*out)
        return -ENOMEM;
    for (size_t i = 0; i < s->n; i++)
        (*out)[i] = s->v[i];
    for (size_t i = 0; i < nt; i++)
        (*out)[s->n + i] = tail[i];
    return 0;
}

static void args_free(struct args *a)
{
    strv_free(&a->s);
    strv_free(&a->e);
    free(a->v);
    free(a->env);
}

/* The installer's command line and environment for the environment at
 * env_dir. pip runs as `pip --python ENV/bin/python3 install` does, minus
 * its first start: that command only re-runs pip's own __pip-runner__.py
 * under the target interpreter, which is what we run directly (0.3 s saved
 * per build). The index and find-links locations go into the environment,
 * never the command line: a location may carry credentials, and a command
 * line is readable by every process of the machine. envp_base ends the
 * environment (NULL-terminated). */
static int installer_args(const struct exec_deps_config *cfg, const char *pip_runner, const char *uv,
                          const char *state_dir, const char *env_dir, const char *const *verb,
                          const struct deps_set *set,
                          const char *const *envp_base, struct args *a)
{
    cleanup_free char *py = deps_env_python(env_dir), *cache = NULL;
    bool use_uv = uv != NULL;
    if (!py || asprintf(&cache, "%s/cache/%s", state_dir, use_uv ? "uv" : "pip") < 0)
        return -ENOMEM;
    int rc = 0;
    if (use_uv) {
        const char *head[] = {uv, "pip", "install", "--python", py, "--no-config", "--cache-dir", cache,
                              "--compile-bytecode"};
        for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(head); i++)
            rc = arg(a, head[i]);
    } else {
        /* No --isolated (it ignores the environment we pass the locations
         * in); PIP_CONFIG_FILE=/dev/null keeps every configuration file
         * out instead, and the environment is all ours. */
        /* install: into the environment as it is; the package store's
         * download (every wheel of the resolution saved into a directory)
         * or wheel (a source distribution built into one). */
        static const char *const install[] = {"install", "--root-user-action=ignore", "--no-warn-script-location",
                                              NULL};
        if (!verb)
            verb = install;
        const char *head[] = {py, "-I", pip_runner, verb[0], "--disable-pip-version-check",
                              "--no-input", "--no-color", "--progress-bar", "off", "--cache-dir", cache};
        for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(head); i++)
            rc = arg(a, head[i]);
        for (size_t i = 1; rc == 0 && verb[i]; i++)
            rc = arg(a, verb[i]);
        if (rc == 0)
            rc = strv_push(&a->e, "PIP_CONFIG_FILE=/dev/null", strlen("PIP_CONFIG_FILE=/dev/null"));
    }
    if (rc == 0 && cfg->only_binary) {
        rc = arg(a, "--only-binary");
        if (rc == 0)
            rc = arg(a, ":all:");
    }
    if (rc == 0 && cfg->index_url && !strcmp(cfg->index_url, "none"))
        rc = arg(a, "--no-index");
    else if (rc == 0 && cfg->index_url)
        rc = env_list(a, use_uv ? "UV_INDEX_URL" : "PIP_INDEX_URL", cfg->index_url, ' ');
    if (rc == 0)
        rc = env_list(a, use_uv ? "UV_EXTRA_INDEX_URL" : "PIP_EXTRA_INDEX_URL", cfg->extra_index_url, ' ');
    if (rc == 0)
        rc = env_list(a, use_uv ? "UV_FIND_LINKS" : "PIP_FIND_LINKS", cfg->find_links, use_uv ? ',' : ' ');
    /* After "--" nothing is an option, whatever a requirement says. */
    if (rc == 0)
        rc = arg(a, "--");
    for (size_t i = 0; rc == 0 && i < set->n; i++)
        rc = arg(a, set->v[i].spec);
    if (rc == 0)
        rc = strv_finish(&a->s, NULL, &a->v);
    if (rc == 0)
        rc = strv_finish(&a->e, envp_base, &a->env);
    return rc;
}

/* Runs the installer for the environment being built at env_dir: THE ONE
 * PLACE an installer runs, in the jail (jail_run_tool: the namespaces,
 * seccomp, the host's network). It sees the system read-only and, writable,
 * only env_dir, the installer cache and its HOME, each bound at its host
 * path so that argv and envp need no rewriting and fix_shebangs() still
 * finds env_dir in the scripts the installer writes; file:// find-links
 * directories and a uv outside /usr are bound read-only. */
#define DEPS_NO_NET_FALLBACK                                                                                     \
    "the installer's network: the rlimits fallback, which has no network of its own, cannot hold it to its "    \
    "sources; use local ones (index_url = none, find_links directories), user namespaces, or "                   \
    "fallback_installer_network = on"
#define DEPS_FIND_LINKS_MAX 16  /* local find-links directories bound into the installer's jail */

static int run_installer(const struct exec_deps_config *cfg, const char *const *argv, const char *const *envp,
                         const char *env_dir, const char *cache_dir, const char *home_dir, int64_t timeout_ms,
                         const struct deps_install_io *io, char **out, int *wstatus, char *err, size_t errlen)
{
    if (!io || !io->jail)
        return proc_run(argv, envp, timeout_ms, DEPS_INSTALL_OUT_MAX, out, wstatus, io ? io->line : NULL,
                        io ? io->ctx : NULL);
    struct jail_bind binds[3 + DEPS_FIND_LINKS_MAX + 1];
    size_t n = 0;
    binds[n++] = (struct jail_bind){env_dir, env_dir, JAIL_BIND_RW};
    binds[n++] = (struct jail_bind){cache_dir, cache_dir, JAIL_BIND_RW};
    binds[n++] = (struct jail_bind){home_dir, home_dir, JAIL_BIND_RW};
    /* Local find-links: "file:///dir" or "/dir", read-only. */
    char links[4096];
    snprintf(links, sizeof links, "%s", cfg->find_links ? cfg->find_links : "");
    for (char *save = NULL, *tok = strtok_r(links, " \t,", &save); tok && n < ARRAY_SIZE(binds) - 1;
         tok = strtok_r(NULL, " \t,", &save)) {
        const char *path = !strncmp(tok, "file://", 7) ? tok + 7 : tok[0] == '/' ? tok : NULL;
        if (path && path[0] == '/')
            binds[n++] = (struct jail_bind){path, path, JAIL_BIND_OPTIONAL};
    }
    /* uv lives wherever it was installed (argv[0] when it is the installer). */
    if (strncmp(argv[0], "/usr/", 5) && strncmp(argv[0], env_dir, strlen(env_dir)))
        binds[n++] = (struct jail_bind){argv[0], argv[0], 0};
    const char *chown_paths[] = {env_dir, cache_dir, home_dir};
    struct jail_tool t = *io->jail;
    /* Its network: none when every source is here; else one of its own
     * that reaches only the sources (the caller's proxy). The fallback
     * has no namespace to hold one in: a remote source is refused there,
     * never reached through the host's network (jail_run_tool refuses it
     * too when it falls back at the start), unless the operator said so
     * (fallback_installer_network = on: the host's network, as before). */
    int sock = -1, rc;
    bool remote = deps__sources_remote(cfg);
    if (remote && io->net_open && t.o.mode != JAIL_MODE_NAMESPACES && !cfg->fallback_host_network) {
        snprintf(err, errlen, "%s", DEPS_NO_NET_FALLBACK);
        return -ENOTSUP;
    }
    if (remote && io->net_open && t.o.mode == JAIL_MODE_NAMESPACES && (rc = io->net_open(io->ctx, &sock)) < 0) {
        snprintf(err, errlen, "the installer's network: %s", strerror(-rc));
        return rc;
    }
    t.o.binds = binds;
    t.o.n_binds = n;
    t.o.argv = argv;
    t.o.envp = envp;
    t.o.cwd = env_dir;
    t.o.network = remote && sock < 0;
    t.o.net_sock = sock;
    t.o.net_all = sock >= 0;
    t.o.chown_paths = chown_paths;
    t.o.n_chown_paths = ARRAY_SIZE(chown_paths);
    t.timeout_ms = timeout_ms;
    t.max_output = DEPS_INSTALL_OUT_MAX;
    t.line = io->line;
    t.cancelled = io->cancelled;
    t.ctx = io->ctx;
    rc = jail_run_tool(&t, wstatus, out, err, errlen);
    if (rc == -ENOTSUP && sock >= 0 && cfg->fallback_host_network) {
        /* It fell back at its start: fallback_installer_network = on
         * gives it the host's network there, unfiltered. */
        t.o.net_sock = -1;
        t.o.net_all = false;
        t.o.network = true;
        err[0] = '\0';
        rc = jail_run_tool(&t, wstatus, out, err, errlen);
    }
    if (sock >= 0)
        io->net_close(io->ctx);
    if (rc == -ENOTSUP && sock >= 0)
        snprintf(err, errlen, "%s", DEPS_NO_NET_FALLBACK);
    if (rc < 0 && rc != -ETIMEDOUT && !err[0])
        snprintf(err, errlen, "%s", strerror(-rc));
    return rc;
}

bool deps__sources_remote(const struct exec_deps_config *cfg)
{
    if (!cfg->index_url || strcmp(cfg->index_url, "none") != 0 || cfg->extra_index_url)
        return true;
    char links[4096];
    snprintf(links, sizeof links, "%s", cfg->find_links ? cfg->find_links : "");
    for (char *save = NULL, *tok = strtok_r(links, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save))
        if (strncmp(tok, "file://", 7) != 0 && tok[0] != '/')
            return true;
    return false;
}

/* Which requirement failed, from the installer's output: pip's "Could not
 * find a version that satisfies the requirement X (from Y)" names Y, the
 * requirement X came in with; "No matching distribution found for X";
 * uv's "Because X was not found" and "you require X". Mapped back to the
 * set's own spelling when it names one of its distributions. */
static char *failed_requirement(const char *out, const struct deps_set *set)
{
    static const char *const marks[] = {
        "satisfies the requirement ", "No matching distribution found for ", "Invalid requirement: ",
        "you require ", "Because ",
    };
    char cand[EXEC_REQUIREMENT_MAX + 1] = "";
    for (size_t m = 0; out && m < ARRAY_SIZE(marks) && !cand[0]; m++) {
        const char *p = strstr(out, marks[m]);
        if (!p)
            continue;
        p += strlen(marks[m]);
        if (*p == '\'')
            p++;
        size_t n = strcspn(p, " \n'");
        if (n > EXEC_REQUIREMENT_MAX)
            n = EXEC_REQUIREMENT_MAX;
        memcpy(cand, p, n);
        cand[n] = '\0';
        const char *from = p + n;
        if (m == 0 && !strncmp(from, " (from ", 7) && strncmp(from, " (from versions", 15)) {
            from += 7;
            n = strcspn(from, ")\n,");
            if (n > EXEC_REQUIREMENT_MAX)
                n = EXEC_REQUIREMENT_MAX;
            memcpy(cand, from, n);
            cand[n] = '\0';
        }
    }
    if (cand[0]) {
        size_t n = 0;
        while (cand[n] && (isalnum((unsigned char)cand[n]) || strchr("._-", cand[n])))
            n++;
        cleanup_free char *name = deps_normalize_name(cand, n);
        for (size_t i = 0; name && i < set->n; i++)
            if (!strcmp(set->v[i].name, name))
                return strdup(set->v[i].spec);
        return strdup(cand);
    }
    return set->n == 1 ? strdup(set->v[0].spec) : NULL;
}


/* True when the installer's output says a requirement was not found (no
 * index or wheelhouse it looked in has it), pip's words or uv's. */
static bool not_found(const char *out)
{
    static const char *const says[] = {
        "No matching distribution found", "Could not find a version that satisfies", "was not found in",
        "not found in the package registry",
    };
    for (size_t i = 0; out && i < ARRAY_SIZE(says); i++)
        if (strstr(out, says[i]))
            return true;
    return false;
}

/* Appends "NAME URL" for each blank-separated URL of list to b, a URL's
 * user and password (a private index's token) shown as "***". */
static void put_urls(struct dbuf *b, const char *name, const char *list)
{
    char copy[2048];
    snprintf(copy, sizeof copy, "%s", list);
    discard(dbuf_printf(b, "%s", name));
    for (char *save = NULL, *tok = strtok_r(copy, " \t,", &save); tok; tok = strtok_r(NULL, " \t,", &save)) {
        char *scheme = strstr(tok, "://");
        char *host = scheme ? scheme + 3 : tok;
        char *at = strchr(host, '@'), *slash = strchr(host, '/');
        if (at && (!slash || at < slash))
            discard(dbuf_printf(b, " %.*s***%s", (int)(host - tok), tok, at));
        else
            discard(dbuf_printf(b, " %s", tok));
    }
}

/* Where the installer looked, and the keys that say so. */
static void where_looked(const struct exec_deps_config *cfg, char *out, size_t outlen)
{
    struct dbuf b;
    dbuf_init(&b, outlen);
    discard(dbuf_printf(&b, "it looked in "));
    if (!cfg->index_url)
        discard(dbuf_printf(&b, "the installer's default index (index_url = default)"));
    else if (!strcmp(cfg->index_url, "none"))
        discard(dbuf_printf(&b, "no index (index_url = none)"));
    else
        put_urls(&b, "index_url =", cfg->index_url);
    if (cfg->extra_index_url) {
        discard(dbuf_printf(&b, ", "));
        put_urls(&b, "extra_index_url =", cfg->extra_index_url);
    }
    if (cfg->find_links) {
        discard(dbuf_printf(&b, " and "));
        put_urls(&b, "find_links =", cfg->find_links);
    } else {
        discard(dbuf_printf(&b, " and no wheelhouse (find_links = none)"));
    }
    discard(dbuf_printf(&b, ": point index_url at an index or find_links at a directory of wheels that has "
                            "it (doc/configuration.md)"));
    snprintf(out, outlen, "%s", b.data ? b.data : "");
    dbuf_free(&b);
}

char *deps_install_advice(const struct exec_deps_config *cfg, const char *reason)
{
    if (!reason || !strstr(reason, DEPS_NOT_FOUND_SAYS))
        return NULL;
    char where[1024];
    where_looked(cfg, where, sizeof where);
    return strdup(where);
}

/* The one-line reason of an installer that exited with a failure: the
 * error line that says why, else its last line; for a requirement not
 * found, that the server's package sources lack it (what they are, and
 * the keys that say so, are the operator's: deps_install_advice). */
static void install_failure(const char *names, const char *failed, char *out, char *err, size_t errlen)
{
    const char *why = NULL;
    for (const char *p = out; p && (p = strstr(p, "ERROR: ")); p++)
        why = p;
    char line[400];
    if (why)
        snprintf(line, sizeof line, "%.*s", (int)strcspn(why, "\n"), why);
    else
        snprintf(line, sizeof line, "%s", deps__last_line(out));
    snprintf(err, errlen, "installing %s failed%s%s%s: %s%s", names ? names : "the requirements", failed ? " (" : "",
             failed ? failed : "", failed ? ")" : "", line, not_found(out) ? DEPS_NOT_FOUND_SAYS : "");
}

/* deps__install, deps__download and deps__build_wheel: verb NULL
 * installs into tmp. */
static int run_pip(const struct exec_deps_config *cfg, const char *state_dir, const char *uv, const char *pip_runner,
                   const struct deps_set *set, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                   const char *const *verb, char **failed, char *err, size_t errlen)
{
    int rc;
    *failed = NULL;
    cleanup_free char *cache = NULL, *home = NULL, *home_env = NULL;
    if (asprintf(&cache, "%s/cache/%s", state_dir, uv ? "uv" : "pip") < 0 ||
        asprintf(&home, "%s/cache/home", state_dir) < 0 || asprintf(&home_env, "HOME=%s", home) < 0)
        return -ENOMEM;
    /* Both exist before the installer starts: the jail binds them. Only
     * the installer's (cache/ is 0711). */
    const char *dirs[] = {home, cache};
    for (size_t i = 0; i < ARRAY_SIZE(dirs); i++) {
        int made = mkdir(dirs[i], 0700);
        if (made < 0 && errno != EEXIST) {
            rc = -errno;
            snprintf(err, errlen, "creating %s: %s", dirs[i], strerror(errno));
            return rc;
        }
        if (made < 0)
            discard(chmod(dirs[i], 0700)); /* made 0755 by an older version */
    }
    /* The installer's temporary files (downloads, unpacked wheels) go to
     * disk inside the environment being built, not to the jail's small
     * /tmp; removed before the environment is published. */
    cleanup_free char *itmp = NULL, *tmp_env = NULL;
    if (asprintf(&itmp, "%s/.install-tmp", tmp) < 0 || asprintf(&tmp_env, "TMPDIR=%s", itmp) < 0)
        return -ENOMEM;
    if (mkdir(itmp, 0700) < 0) {
        rc = -errno;
        snprintf(err, errlen, "creating %s: %s", itmp, strerror(errno));
        return rc;
    }
    struct args a = {0};
    const char *envp[] = {deps__helper_envp[0], deps__helper_envp[1], home_env, tmp_env, NULL};
    rc = installer_args(cfg, pip_runner, uv, state_dir, tmp, verb, set, envp, &a);
    if (rc < 0) {
        args_free(&a);
        return rc;
    }
    cleanup_free char *names = deps_set_names(set);
    if (io && io->installing)
        io->installing(io->ctx, names ? names : "");
    cleanup_free char *out = NULL;
    int st = 0;
    log_msg(LOG_LVL_INFO, "installing %s into %s with %s", names ? names : "?", tmp, a.v[0]);
    char jerr[256] = "";
    rc = run_installer(cfg, a.v, a.env, tmp, cache, home, install_ms, io, &out, &st, jerr, sizeof jerr);
    args_free(&a);
    if (rc == -ETIMEDOUT) {
        *failed = set->n == 1 ? strdup(set->v[0].spec) : NULL;
        snprintf(err, errlen, "installing %s took longer than install_time (%lld s) and was stopped",
                 names ? names : "the requirements", (long long)(install_ms / 1000));
        return DEPS_ENV_INSTALL_TIMEOUT;
    }
    if (rc == -ECANCELED) {
        snprintf(err, errlen, "installing %s was cancelled", names ? names : "the requirements");
        return rc;
    }
    if (rc < 0) {
        snprintf(err, errlen, "could not start the installer: %s", jerr[0] ? jerr : strerror(-rc));
        return rc;
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && (!out || !*out)) {
            snprintf(err, errlen, "could not run the installer (%s)", uv ? uv : pip_runner);
            return -ENOEXEC;
        }
        *failed = failed_requirement(out, set);
        install_failure(names, *failed, out, err, errlen);
        return DEPS_ENV_INSTALL_FAILED;
    }
    discard(util_rm_rf_at(AT_FDCWD, itmp)); /* a leftover would only cost room */
    return DEPS_ENV_READY;
}

int deps__install(const struct exec_deps_config *cfg, const char *state_dir, const char *uv, const char *pip_runner,
                  const struct deps_set *set, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                  char **failed, char *err, size_t errlen)
{
    return run_pip(cfg, state_dir, uv, pip_runner, set, install_ms, io, tmp, NULL, failed, err, errlen);
}

int deps__download(const struct exec_deps_config *cfg, const char *state_dir, const char *pip_runner,
                   const struct deps_set *set, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                   const char *dl, char **failed, char *err, size_t errlen)
{
    const char *verb[] = {"download", "-d", dl, NULL};
    return run_pip(cfg, state_dir, NULL, pip_runner, set, install_ms, io, tmp, verb, failed, err, errlen);
}

int deps__build_wheel(const struct exec_deps_config *cfg, const char *state_dir, const char *pip_runner,
                      const char *sdist, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                      const char *dir, char **failed, char *err, size_t errlen)
{
    const char *verb[] = {"wheel", "--no-deps", "-w", dir, NULL};
    struct deps_req req = {.name = (char *)"", .spec = (char *)sdist};
    struct deps_set one = {.v = &req, .n = 1, .cap = 1};
    return run_pip(cfg, state_dir, NULL, pip_runner, &one, install_ms, io, tmp, verb, failed, err, errlen);
}
