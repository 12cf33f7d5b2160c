/* deps_env.c: the Python environments scripts run with.
 *
 * Theory of operation. Every environment lives in STATE/envs:
 *
 *   base-IKEY/          the base environment of an interpreter (python -m
 *                       venv --without-pip): the standard library only
 *   KEY/                one set of requirements, installed (KEY: a hash of
 *                       the interpreter, the sorted requirements and the
 *                       index settings); read-only once published
 *   .KEY.lock           the build lock of KEY: one builder at a time
 *   .tmp-KEY-RAND/      a build in progress (or one that was killed)
 *   .trash-KEY-RAND/    an evicted environment being removed
 *
 * A build copies the base environment into .tmp-KEY-RAND, runs the
 * installer into it, writes the manifest (what it holds, its size), makes
 * it read-only, syncs it, and renames it to KEY: an environment at KEY is
 * always complete. A run that uses KEY holds a shared flock on the
 * directory for as long as the script runs and sets its mtime (the LRU
 * clock). Eviction takes an exclusive flock without waiting (so it never
 * takes one in use), renames the directory to .trash-..., and removes it;
 * a run that opened KEY just before checks after its lock that KEY is
 * still the directory it holds, and builds again if not. Leftovers of
 * killed builds are removed by the next build of the key or by the next
 * eviction pass, whichever holds the key's build lock first. */
#include "config.h"

#include "deps_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sha256.h"
#include "workspace.h"

#define DEPS_VENV_TIMEOUT_MS 120000
#define DEPS_METADATA_MAX (64 * 1024)        /* bytes of a dist-info METADATA read (the headers) */

static bool env_complete(const char *dir)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s/pyvenv.cfg", dir);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* deps_base_env's work; a failure may leave err empty. */

static int base_env(const char *state_dir, const char *python, char **env_dir, char *err, size_t errlen)
{
    char key[17];
    int rc = deps__interpreter_key(python, key, err, errlen);
    if (rc < 0)
        return rc;
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/envs/base-%s", state_dir, key) < 0)
        return -ENOMEM;
    if (env_complete(dir)) {
        *env_dir = steal_pointer(&dir);
        return 0;
    }

    rc = ws_init_state(state_dir);
    if (rc < 0) {
        snprintf(err, errlen, "state directory %s: %s", state_dir, strerror(-rc));
        return rc;
    }
    /* One builder per key: the others wait on the lock, then find it done. */
    char lockpath[PATH_MAX];
    snprintf(lockpath, sizeof lockpath, "%s/envs/.base-%s.lock", state_dir, key);
    cleanup_fd int lock = -1;
    rc = deps__lock_file(lockpath, NULL, &lock);
    if (rc < 0) {
        snprintf(err, errlen, "lock %s: %s", lockpath, strerror(-rc));
        return rc;
    }
    if (env_complete(dir)) {
        *env_dir = steal_pointer(&dir);
        return 0;
    }
    /* Left over from a build that was killed, or shut by a script of the
     * server's own uid (the unprivileged fallback can chmod it, not write
     * it): removed now, whatever its modes, and made again. */
    discard(deps__remove_tree(AT_FDCWD, dir));

    char id[WS_ID_MAX + 1];
    rc = ws_new_id(NULL, id);
    if (rc < 0)
        return rc;
    cleanup_free char *tmp = NULL;
    if (asprintf(&tmp, "%s/envs/.tmp-base-%s-%.8s", state_dir, key, id) < 0)
        return -ENOMEM;
    const char *argv[] = {python, "-I", "-m", "venv", "--without-pip", tmp, NULL};
    cleanup_free char *out = NULL;
    int st = 0;
    rc = proc_run(argv, deps__helper_envp, DEPS_VENV_TIMEOUT_MS, 8192, &out, &st, NULL, NULL);
    if (rc < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !env_complete(tmp)) {
        const char *last = deps__last_line(out);
        snprintf(err, errlen, "making the base environment with %s -m venv failed%s%s", python, *last ? ": " : "",
                 last);
        discard(util_rm_rf_at(AT_FDCWD, tmp));
        return rc < 0 ? rc : -EIO;
    }
    if (rename(tmp, dir) < 0) {
        rc = -errno;
        snprintf(err, errlen, "publishing the base environment: %s", strerror(errno));
        discard(util_rm_rf_at(AT_FDCWD, tmp));
        return rc;
    }
    *env_dir = steal_pointer(&dir);
    return 0;
}

int deps_base_env(const char *state_dir, const char *python, char **env_dir, char *err, size_t errlen)
{
    err[0] = '\0';
    int rc = base_env(state_dir, python, env_dir, err, errlen);
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "the base environment of %s: %s", python, strerror(-rc));
    return rc;
}

/* ------------------------------------------------------ the environment */

/* The bytes an environment holds of its own: a file linked from the
 * package store (more than one link) is the store's. */
static int add_size(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)dirfd, (void)name, (void)depth;
    if (S_ISDIR(st->st_mode) || st->st_nlink <= 1)
        *(uint64_t *)ctx += (uint64_t)st->st_blocks * 512;
    return 0;
}

void deps_env_init(struct deps_env *e)
{
    memset(e, 0, sizeof *e);
    e->fd = -1;
}

void deps_env_release(struct deps_env *e)
{
    if (e->fd >= 0)
        close(e->fd); /* drops the shared lock */
    free(e->dir);
    free(e->failed);
    strv_free(&e->installed);
    deps_env_init(e);
}

/* Opens KEY for a run: shared lock, still published at its name, manifest
 * read, mtime set (the LRU clock). -ENOENT when there is none to use. */
static int env_use(struct deps_env *e)
{
    cleanup_fd int fd = open(e->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ENOENT : -errno;
    while (flock(fd, LOCK_SH) < 0)
        if (errno != EINTR)
            return -errno;
    struct stat a, b;
    if (fstat(fd, &a) < 0)
        return -errno;
    if (stat(e->dir, &b) < 0 || a.st_ino != b.st_ino || a.st_dev != b.st_dev)
        return -ENOENT; /* evicted between the open and the lock */
    strv_free(&e->installed);
    int rc = deps__manifest_read(fd, &e->installed, NULL, NULL);
    if (rc < 0 || deps__env_whole(fd) < 0)
        return -ENOENT; /* not one of ours, or an entry it links is gone: the builder replaces it */
    if (futimens(fd, NULL) < 0)
        log_msg(LOG_LVL_DEBUG, "touching %s: %s", e->dir, strerror(errno));
    e->fd = steal_fd(&fd);
    return 0;
}


static int cmp_strpp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void hash_line(struct sha256 *h, const char *k, const char *v)
{
    sha256_update(h, k, strlen(k));
    sha256_update(h, " ", 1);
    sha256_update(h, v ? v : "-", strlen(v ? v : "-"));
    sha256_update(h, "\n", 1);
}

/* KEY: the interpreter (path, file identity, version, platform), the
 * installer, the index settings and the sorted requirements. */
static void env_key(const struct exec_deps_config *cfg, const struct deps_python *info, const char *installer,
                    const struct deps_set *set, char out[33])
{
    struct sha256 h;
    unsigned char d[32];
    const char *specs[EXEC_MAX_REQUIREMENTS];
    size_t n = 0;
    for (size_t i = 0; i < set->n && n < ARRAY_SIZE(specs); i++)
        specs[n++] = set->v[i].spec;
    qsort(specs, n, sizeof *specs, cmp_strpp);
    sha256_init(&h);
    hash_line(&h, "runmyscript-env", "1");
    hash_line(&h, "python", info->path);
    hash_line(&h, "python-id", info->key);
    hash_line(&h, "version", info->version);
    hash_line(&h, "platform", info->platform);
    hash_line(&h, "installer", installer);
    hash_line(&h, "index_url", cfg->index_url);
    hash_line(&h, "extra_index_url", cfg->extra_index_url);
    hash_line(&h, "find_links", cfg->find_links);
    hash_line(&h, "only_binary", cfg->only_binary ? "on" : "off");
    for (size_t i = 0; i < n; i++)
        hash_line(&h, "req", specs[i]);
    sha256_final(&h, d);
    util_hex(d, 16, out);
}

/* "name==version" of every dist-info in site-packages, sorted. */
static int list_installed(const char *site, struct strv *out)
{
    cleanup_fd int sfd = open(site, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0)
        return -errno;
    cleanup_dir DIR *d = util_opendir_at(sfd);
    if (!d)
        return -errno;
    for (struct dirent *e; (e = readdir(d));) {
        size_t n = strlen(e->d_name);
        if (n < 11 || strcmp(e->d_name + n - 10, ".dist-info"))
            continue;
        char path[NAME_MAX + 16];
        snprintf(path, sizeof path, "%s/METADATA", e->d_name);
        cleanup_fd int mfd = openat(sfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (mfd < 0)
            continue;
        /* Only the headers matter; a long description past the limit is cut. */
        char buf[DEPS_METADATA_MAX];
        ssize_t got = read(mfd, buf, sizeof buf - 1);
        if (got <= 0)
            continue;
        buf[got] = '\0';
        const char *name = NULL, *version = NULL;
        size_t name_n = 0, version_n = 0;
        for (char *line = buf; *line && *line != '\n';) {
            char *nl = strchr(line, '\n');
            size_t ll = nl ? (size_t)(nl - line) : strlen(line);
            if (ll && line[ll - 1] == '\r')
                ll--;
            if (ll > 6 && !strncmp(line, "Name: ", 6))
                name = line + 6, name_n = ll - 6;
            else if (ll > 9 && !strncmp(line, "Version: ", 9))
                version = line + 9, version_n = ll - 9;
            if (!nl)
                break;
            line = nl + 1;
        }
        if (!name || !version)
            continue;
        cleanup_free char *norm = deps_normalize_name(name, name_n);
        cleanup_free char *entry = NULL;
        if (!norm || asprintf(&entry, "%s==%.*s", norm, (int)version_n, version) < 0)
            return -ENOMEM;
        int rc = strv_push(out, entry, strlen(entry));
        if (rc < 0)
            return rc;
    }
    qsort(out->v, out->n, sizeof *out->v, cmp_strpp);
    return 0;
}

/* Console scripts the installer wrote start with "#!TMP/bin/python3",
 * which stops existing at the rename (and is another path in the jail).
 * They get "#!/usr/bin/env python3": the run's PATH starts with ENV/bin. */
static int fix_shebangs(const char *env_dir)
{
    cleanup_free char *bin = NULL, *want = NULL;
    if (asprintf(&bin, "%s/bin", env_dir) < 0 || asprintf(&want, "#!%s/bin/python", env_dir) < 0)
        return -ENOMEM;
    cleanup_fd int bfd = open(bin, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (bfd < 0)
        return -errno;
    cleanup_dir DIR *d = util_opendir_at(bfd);
    if (!d)
        return -errno;
    size_t wl = strlen(want);
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (fstatat(bfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
            continue;
        char head[PATH_MAX + 64];
        cleanup_fd int fd = openat(bfd, e->d_name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        ssize_t n = fd < 0 ? -1 : pread(fd, head, sizeof head, 0);
        if (n < (ssize_t)wl || memcmp(head, want, wl))
            continue;
        cleanup_free char *text = NULL;
        size_t len;
        int rc = util_read_file_at(bfd, e->d_name, 64u << 20, &text, &len);
        if (rc == 0)
            rc = deps__set_shebang(bfd, e->d_name, text, len, st.st_mode & 07777);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Builds the environment for set at tmp (which does not exist yet): a copy
 * of the base environment, the installer run into it, then finished
 * (shebangs, the manifest, read-only, synced). DEPS_ENV_READY, an install
 * outcome (e->failed set), or -errno; the reason in err. */
static int build_env(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                     const char *base_env, const char *uv, const char *pip_runner, const struct deps_set *set,
                     int64_t install_ms, const struct deps_install_io *io, const char *tmp, struct deps_env *e,
                     struct deps__held *held, char *err, size_t errlen)
{
    int rc;
    if (mkdir(tmp, 0755) < 0) {
        rc = -errno;
        snprintf(err, errlen, "creating %s: %s", tmp, strerror(errno));
        return rc;
    }
    {
        cleanup_fd int s = open(base_env, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        cleanup_fd int t = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = s < 0 || t < 0 ? -errno : deps__tree_put(s, "", t, false, NULL);
        if (rc < 0) {
            snprintf(err, errlen, "copying the base environment: %s", strerror(-rc));
            return rc;
        }
    }
    struct strv wheels = {0};
    size_t copied = 0;
    rc = DEPS__STORE_NO;
    if (cfg->package_store && !uv)
        rc = deps__store_build(cfg, state_dir, info, pip_runner, set, e->key, install_ms, io, tmp, &wheels, held,
                               &copied, &e->failed, err, errlen);
    if (rc == DEPS__STORE_NO) {
        deps__held_release(held);
        strv_free(&wheels);
        rc = deps__install(cfg, state_dir, uv, pip_runner, set, install_ms, io, tmp, &e->failed, err, errlen);
    }
    if (rc != DEPS_ENV_READY) {
        strv_free(&wheels);
        return rc;
    }
    if (copied)
        log_msg(LOG_LVL_WARN, "store: %zu files copied into the environment, not linked (STATE/store and "
                "STATE/envs on different file systems?)", copied);
    /* Complete: shebangs, the manifest, read-only, synced. */
    cleanup_free char *site = NULL;
    int major = 0, minor = 0;
    if (sscanf(info->version, "%d.%d", &major, &minor) != 2 ||
        asprintf(&site, "%s/lib/python%d.%d/site-packages", tmp, major, minor) < 0)
        return -ENOMEM;
    struct strv installed = {0};
    rc = fix_shebangs(tmp);
    if (rc == 0)
        rc = list_installed(site, &installed);
    cleanup_fd int tfd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rc == 0 && tfd < 0)
        rc = -errno;
    uint64_t bytes = 0;
    struct util_walk size = {.pre = add_size, .ctx = &bytes};
    if (rc == 0)
        rc = util_walk_at(AT_FDCWD, tmp, &size);
    if (rc == 0)
        rc = deps__manifest_write(tfd, set, &installed, bytes, &wheels, copied, state_dir);
    strv_free(&installed);
    strv_free(&wheels);
    /* What its libraries cache on first use, made once (set->n: the base
     * environment's copy alone has nothing to import). */
    if (rc == 0 && set->n)
        rc = deps__env_caches(tmp, install_ms, io, err, errlen);
    struct util_walk ro = {.pre = deps__readonly_walk};
    if (rc == 0)
        rc = util_walk_at(tfd, "", &ro);
    if (rc == 0 && syncfs(tfd) < 0)
        rc = -errno;
    if (rc == 0)
        deps__fault("publish");
    if (rc < 0) {
        snprintf(err, errlen, "finishing the environment: %s", strerror(-rc));
        return rc;
    }
    return 0;
}


/* The installer a build uses: uv (on PATH, unless installer = pip), else
 * pip as the interpreter's facts found it; when they found none (or it is
 * gone), the interpreter is asked again: python3-pip may have been
 * installed or upgraded since. Only builds get here. *uv and *runner are
 * the caller's to free; *pip_runner is one of them or info's. */
static int pick_installer(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                          char **uv, char **runner, const char **pip_runner, char *err, size_t errlen)
{
    *uv = *runner = NULL;
    *pip_runner = info->pip_runner;
    if (cfg->installer != EXEC_INSTALLER_PIP) {
        *uv = deps__find_uv();
        if (!*uv && cfg->installer == EXEC_INSTALLER_UV) {
            snprintf(err, errlen, "installer = uv, but uv is not on PATH");
            return -ENOENT;
        }
    }
    if (!*uv && (!*pip_runner || access(*pip_runner, R_OK) < 0)) {
        struct deps_python fresh = {0};
        cleanup_free char *cache = NULL;
        if (asprintf(&cache, "%s/cache/python-%s.info", state_dir, info->key) < 0)
            return -ENOMEM;
        if (deps__ask_python(state_dir, info->path, cache, &fresh, err, errlen) == 0 && fresh.pip_runner)
            *runner = steal_pointer(&fresh.pip_runner);
        deps_python_free(&fresh);
        *pip_runner = *runner;
    }
    if (!*uv && !*pip_runner) {
        snprintf(err, errlen, "%s has no pip (pip 22.3 or later, e.g. Debian's python3-pip) and uv is not on PATH",
                 info->path);
        return -ENOENT;
    }
    return 0;
}

/* Under the build lock of key: whatever is at KEY is not ours (a directory
 * without a manifest), and any .tmp-KEY-* is a killed build. */
static void remove_leftovers(int envs, const char *key)
{
    discard(deps__remove_tree(envs, key)); /* usually nothing there */
    cleanup_dir DIR *d = util_opendir_at(envs);
    char prefix[48];
    snprintf(prefix, sizeof prefix, ".tmp-%s-", key);
    for (struct dirent *de; d && (de = readdir(d));)
        if (!strncmp(de->d_name, prefix, strlen(prefix))) {
            log_msg(LOG_LVL_INFO, "removing %s, left by a build that did not finish", de->d_name);
            discard(deps__remove_tree(envs, de->d_name));
        }
}

/* env_use, with the reason of a failure in err. */
static int use_env(struct deps_env *e, const char *what, char *err, size_t errlen)
{
    int rc = env_use(e);
    if (rc < 0 && rc != -ENOENT)
        snprintf(err, errlen, "opening the environment %s%s: %s", what, e->dir, strerror(-rc));
    return rc;
}

/* deps_env_get once the environment is known to be missing: the build,
 * under the key's lock, and its publication. */
static int env_build(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                     const char *base_env, const char *uv, const char *pip_runner, const struct deps_set *set,
                     int64_t install_ms, const struct deps_install_io *io, struct deps_env *e, char *err,
                     size_t errlen)
{
    char lockpath[PATH_MAX];
    snprintf(lockpath, sizeof lockpath, "%s/envs/.%s.lock", state_dir, e->key);
    cleanup_fd int lock = -1;
    int rc = deps__lock_file(lockpath, NULL, &lock);
    if (rc < 0) {
        snprintf(err, errlen, "lock %s: %s", lockpath, strerror(-rc));
        return rc;
    }
    rc = use_env(e, "", err, errlen);
    if (rc != -ENOENT)
        return rc; /* another run built it while we waited */
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s/envs", state_dir);
    cleanup_fd int envs = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (envs < 0) {
        rc = -errno;
        snprintf(err, errlen, "%s: %s", p, strerror(errno));
        return rc;
    }
    remove_leftovers(envs, e->key);
    char id[WS_ID_MAX + 1];
    rc = ws_new_id(NULL, id);
    if (rc < 0)
        return rc;
    cleanup_free char *tmp = NULL;
    if (asprintf(&tmp, "%s/envs/.tmp-%s-%.8s", state_dir, e->key, id) < 0)
        return -ENOMEM;
    struct deps__held held = {.n = 0};
    rc = build_env(cfg, state_dir, info, base_env, uv, pip_runner, set, install_ms, io, tmp, e, &held, err, errlen);
    if (rc != DEPS_ENV_READY) {
        deps__held_release(&held);
        discard(deps__remove_tree(AT_FDCWD, tmp));
        return rc;
    }
    if (rename(tmp, e->dir) < 0) {
        rc = -errno;
        snprintf(err, errlen, "publishing the environment %s: %s", e->dir, strerror(errno));
        deps__held_release(&held);
        discard(deps__remove_tree(AT_FDCWD, tmp));
        return rc;
    }
    deps__held_release(&held); /* its manifest names them now */
    if (fsync(envs) < 0)
        log_msg(LOG_LVL_WARN, "fsync %s/envs: %s", state_dir, strerror(errno));
    rc = use_env(e, "just built at ", err, errlen);
    if (rc < 0)
        return rc;
    e->built = true;
    /* The build lock goes (cleanup) before the caller's eviction, which
     * takes other keys' locks. */
    return 0;
}

int deps_env_get(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                 const char *base_env, const struct deps_set *set, int64_t install_ms,
                 const struct deps_install_io *io, struct deps_env *e, char *err, size_t errlen)
{
    cleanup_free char *uv = NULL, *runner = NULL;
    const char *pip_runner;
    err[0] = '\0';
    int rc = pick_installer(cfg, state_dir, info, &uv, &runner, &pip_runner, err, errlen);
    if (rc < 0)
        goto out;
    env_key(cfg, info, uv ? "uv" : "pip", set, e->key);
    if (asprintf(&e->dir, "%s/envs/%s", state_dir, e->key) < 0) {
        e->dir = NULL;
        rc = -ENOMEM;
        goto out;
    }
    rc = use_env(e, "", err, errlen);
    if (rc != -ENOENT)
        goto out;
    rc = env_build(cfg, state_dir, info, base_env, uv, pip_runner, set, install_ms, io, e, err, errlen);
    if (rc == 0 && e->built) { /* only the run that built it evicts */
        int ev = deps_evict(state_dir, cfg->cache_bytes, cfg->package_store ? cfg->store_bytes : 0, e->key);
        if (ev < 0)
            log_msg(LOG_LVL_WARN, "evicting environments: %s", strerror(-ev));
    }
out:
    if (rc < 0 && !err[0])
        snprintf(err, errlen, "%s", strerror(-rc));
    return rc;
}
