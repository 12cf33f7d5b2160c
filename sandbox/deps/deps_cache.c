/* deps_cache.c: the caches an environment's libraries build on first use
 * (matplotlib's font list, fontlist-*.json, and whatever else a library
 * writes under HOME, ~/.cache or ~/.config when it is imported), made once
 * when the environment is built instead of by every run: its python
 * imports each library installed in it, in the jail, without the network,
 * with the environment at /env where runs see it (a cache may name paths)
 * and HOME at ENV/.rms-cache/home, the one place it may write. The cache
 * is the environment's (not a store entry's): read-only with it, rebuilt
 * with it, and laid into every run's HOME as symlinks to its files
 * (jail_opts.home_from: a run writes nothing for it, and rebuilds
 * nothing). */
#include "config.h"

#include "deps_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail.h"

#define DEPS_CACHE_DIR ".rms-cache"      /* under the environment */
#define DEPS_CACHE_HOME "/env/" DEPS_CACHE_DIR "/home" /* its HOME, as runs see it */
#define DEPS_CACHE_OUT_MAX (64 * 1024)   /* bytes of the importer's output kept */

/* What the environment's python runs: every top-level module of
 * site-packages imported, each in its own try (one that fails or hangs
 * costs only itself, within install_time), then the submodules that build
 * a cache when they are imported (matplotlib's font list comes with
 * font_manager, which pyplot imports). The environment's own files stay
 * as they are (-B: no bytecode written). */
static const char cache_prog[] =
    "import os, sys, sysconfig\n"
    "site = sysconfig.get_paths()['purelib']\n"
    "names = set()\n"
    "for n in os.listdir(site):\n"
    "    p = os.path.join(site, n)\n"
    "    if n.endswith(('.dist-info', '.egg-info', '.pth')) or n.startswith(('_', '.')):\n"
    "        continue\n"
    "    if os.path.isdir(p) and os.path.exists(os.path.join(p, '__init__.py')):\n"
    "        names.add(n)\n"
    "    elif n.endswith('.py') or '.cpython-' in n:\n"
    "        names.add(n.split('.')[0])\n"
    "then = {'matplotlib': ['matplotlib.pyplot']}\n"
    "for n in sorted(names):\n"
    "    for m in [n] + then.get(n, []):\n"
    "        try:\n"
    "            __import__(m)\n"
    "        except BaseException as e:\n"
    "            print('not imported: %s (%s)' % (m, type(e).__name__))\n";

const char *deps_env_home_cache(const char *env_dir)
{
    char p[PATH_MAX];
    struct stat st;
    if (snprintf(p, sizeof p, "%s/" DEPS_CACHE_DIR "/home", env_dir) >= (int)sizeof p || lstat(p, &st) < 0 ||
        !S_ISDIR(st.st_mode))
        return NULL;
    cleanup_dir DIR *d = opendir(p);
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            return DEPS_CACHE_HOME;
    return NULL; /* nothing was written: nothing to lay out */
}

int deps__env_caches(const char *tmp, int64_t timeout_ms, const struct deps_install_io *io, char *err, size_t errlen)
{
    /* Only in the namespaces: the environment must be at /env, as the runs
     * that read the caches see it. */
    if (!io || !io->jail || io->jail->o.mode != JAIL_MODE_NAMESPACES)
        return 0;
    cleanup_free char *dir = NULL, *home = NULL;
    if (asprintf(&dir, "%s/" DEPS_CACHE_DIR, tmp) < 0 || asprintf(&home, "%s/home", dir) < 0)
        return -ENOMEM;
    if ((mkdir(dir, 0755) < 0 && errno != EEXIST) || (mkdir(home, 0755) < 0 && errno != EEXIST)) {
        int rc = -errno;
        snprintf(err, errlen, "creating %s: %s", home, strerror(errno));
        return rc;
    }
    struct deps_env_binds eb = {0};
    cleanup_free struct jail_bind *binds = NULL;
    int rc = deps_env_binds(tmp, &eb);
    if (rc == 0 && !(binds = calloc(2 + eb.n, sizeof *binds)))
        rc = -ENOMEM;
    if (rc < 0 || !binds) {
        deps_env_binds_free(&eb);
        snprintf(err, errlen, "the environment's binds: %s", strerror(-rc));
        return rc;
    }
    size_t n = 0;
    binds[n++] = (struct jail_bind){tmp, "/env", 0};
    binds[n++] = (struct jail_bind){home, DEPS_CACHE_HOME, JAIL_BIND_RW};
    for (size_t i = 0; i < eb.n; i++)
        binds[n++] = eb.v[i];
    const char *argv[] = {"/env/bin/python3", "-I", "-B", "-c", cache_prog, NULL};
    const char *envp[] = {"PATH=/env/bin:/usr/local/bin:/usr/bin:/bin", "HOME=" DEPS_CACHE_HOME, "LANG=C.UTF-8",
                          "TMPDIR=/tmp", "OPENBLAS_NUM_THREADS=1", NULL};
    const char *chown_paths[] = {home};
    struct jail_tool t = *io->jail;
    t.o.binds = binds;
    t.o.n_binds = n;
    t.o.argv = argv;
    t.o.envp = envp;
    t.o.cwd = "/";
    t.o.network = false;
    t.o.chown_paths = chown_paths;
    t.o.n_chown_paths = ARRAY_SIZE(chown_paths);
    t.timeout_ms = timeout_ms;
    t.max_output = DEPS_CACHE_OUT_MAX;
    t.line = NULL;
    t.may_fall_back = false; /* (the fallback has no /env: its binds are at their host paths) */
    cleanup_free char *out = NULL;
    int st = 0;
    char jerr[256] = "";
    int64_t t0 = util_now_ms();
    rc = jail_run_tool(&t, &st, &out, jerr, sizeof jerr);
    deps_env_binds_free(&eb);
    /* A cache is a saving, not a need: an importer that failed or took too
     * long leaves what it made, and runs build the rest as they would. */
    if (rc < 0 && rc != -ETIMEDOUT) {
        log_msg(LOG_LVL_WARN, "the environment's caches were not made: %s", jerr[0] ? jerr : strerror(-rc));
        return 0;
    }
    log_msg(LOG_LVL_INFO, "the environment's caches made in %lld ms%s", (long long)(util_now_ms() - t0),
            rc == -ETIMEDOUT ? " (stopped at install_time)" : WIFEXITED(st) && WEXITSTATUS(st) == 0 ? "" : " (it failed)");
    if (out && *out)
        log_msg(LOG_LVL_DEBUG, "the environment's caches: %s", deps__last_line(out));
    return 0;
}
