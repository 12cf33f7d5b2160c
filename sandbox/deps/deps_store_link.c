/* deps_store_link.c: package store entries put into environments (their
 * directories as symlinks into the entry, their files hard linked, copies
 * where a link cannot go), and whether the store's files can be hard
 * linked into STATE/envs at all (deps_store_links). */
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
#include <unistd.h>

#include "workspace.h"


/* ------------------------------------------- an entry's trees, shared */

/* An entry goes into an environment as symlinks to its directories
 * (absolute: the entry's host path, where the jail binds it) and hard
 * links to its files: the environment's own inodes are a few symlinks,
 * not a copy of every directory of numpy. Where two wheels contribute to
 * one directory (a namespace package, site-packages' __pycache__, bin/),
 * that directory is real in the environment and its children are linked
 * one by one, only as deep as the wheels share it: a symlink made for an
 * earlier wheel is first replaced by a directory of its children. */
#define MERGE_DEPTH_MAX 64 /* directories two wheels share, one in another */

struct merge {
    const char *store;   /* STATE/store/pyX.Y/: what our symlinks start with */
    size_t store_len;
    char path[PATH_MAX]; /* the host path of the source directory being merged */
    size_t copied;       /* files copied: a hard link could not be made */
    bool real_dirs;      /* every directory real, none a symlink (a live kernel's extra directory, where
                          * no store entry is bound: deps_env_extend) */
};

static int merge_dir(struct merge *m, int src, int dst, int depth);

/* The file src/name into dst: hard linked (a file there is replaced: the
 * later wheel wins, as with pip), or copied where a link cannot go. */
static int merge_file(struct merge *m, int src, const char *name, const struct stat *st, int dst)
{
    if (linkat(src, name, dst, name, 0) == 0)
        return 0;
    if (errno == EEXIST && unlinkat(dst, name, 0) == 0 && linkat(src, name, dst, name, 0) == 0)
        return 0;
    if (errno != EXDEV && errno != EPERM && errno != EMLINK)
        return -errno;
    m->copied++;
    if (unlinkat(dst, name, 0) < 0 && errno != ENOENT)
        return -errno;
    int rc = util_copy_file(src, name, dst, name);
    if (rc == 0 && fchmodat(dst, name, st->st_mode & 07777, 0) < 0)
        rc = -errno;
    return rc;
}

/* dst/name, a symlink of ours to the directory target, made a real
 * directory holding links to target's children, so that another wheel's
 * children can join them. */
static int merge_unfold(struct merge *m, int dst, const char *name, const char *target, int depth)
{
    cleanup_fd int from = open(target, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (from < 0)
        return -errno;
    if (unlinkat(dst, name, 0) < 0 || mkdirat(dst, name, 0755) < 0)
        return -errno;
    cleanup_fd int to = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (to < 0)
        return -errno;
    cleanup_free char *saved = strdup(m->path);
    if (!saved)
        return -ENOMEM;
    snprintf(m->path, sizeof m->path, "%s", target);
    int rc = merge_dir(m, from, to, depth + 1);
    snprintf(m->path, sizeof m->path, "%s", saved);
    return rc;
}

/* The directory src/name (m->path) into dst: a symlink to it where dst
 * has nothing of that name, else merged into the directory there. */
static int merge_subdir(struct merge *m, int src, const char *name, int dst, int depth)
{
    struct stat dt;
    if (fstatat(dst, name, &dt, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno != ENOENT)
            return -errno;
        if (!m->real_dirs)
            return symlinkat(m->path, dst, name) < 0 ? -errno : 0;
        if (mkdirat(dst, name, 0755) < 0)
            return -errno;
    } else if (S_ISLNK(dt.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dst, name, target, sizeof target - 1);
        if (n < 0)
            return -errno;
        target[n] = '\0';
        if (!strcmp(target, m->path))
            return 0; /* this very tree, linked before */
        /* Not one of ours (the base environment's lib64 -> lib): no
         * wheel's directory is put through it, as before. */
        if (m->real_dirs || strncmp(target, m->store, m->store_len))
            return -ELOOP;
        int rc = merge_unfold(m, dst, name, target, depth);
        if (rc < 0)
            return rc;
    } else if (!S_ISDIR(dt.st_mode)) {
        return -ENOTDIR;
    }
    cleanup_fd int from = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_fd int to = from < 0 ? -1 : openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (to < 0)
        return -errno;
    return merge_dir(m, from, to, depth + 1);
}

/* Every child of the directory src (whose host path is m->path) into the
 * directory dst. */
static int merge_dir(struct merge *m, int src, int dst, int depth)
{
    if (depth > MERGE_DEPTH_MAX)
        return -ELOOP;
    cleanup_dir DIR *d = util_opendir_at(src);
    if (!d)
        return -errno;
    size_t plen = strlen(m->path);
    int rc = 0;
    for (struct dirent *de; rc == 0 && (de = readdir(d));) {
        const char *nm = de->d_name;
        if (!strcmp(nm, ".") || !strcmp(nm, ".."))
            continue;
        struct stat st;
        if (fstatat(src, nm, &st, AT_SYMLINK_NOFOLLOW) < 0)
            return -errno;
        if (plen + 1 + strlen(nm) >= sizeof m->path)
            return -ENAMETOOLONG;
        snprintf(m->path + plen, sizeof m->path - plen, "/%s", nm);
        if (S_ISDIR(st.st_mode))
            rc = merge_subdir(m, src, nm, dst, depth);
        else if (S_ISREG(st.st_mode))
            rc = merge_file(m, src, nm, &st, dst);
        m->path[plen] = '\0'; /* the store holds nothing else: an unpack writes files and directories only */
    }
    return rc;
}

/* mkdir -p of rel under dirfd, opened. */
static int open_dirs(int dirfd, const char *rel, int *out)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/x", rel);
    const char *leaf;
    return deps__open_parent(dirfd, path, &leaf, out);
}

int deps__store_hold(const struct deps__store *s, const char *hash, int *held, char *err, size_t errlen)
{
    cleanup_fd int store = -1;
    int rc = deps__store_open(s->state_dir, s->pyver, &store);
    cleanup_fd int entry = rc < 0 ? -1 : openat(store, hash, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rc == 0 && entry < 0)
        rc = -errno;
    /* Held until the environment is published: eviction passes it over. */
    while (rc == 0 && flock(entry, LOCK_SH) < 0)
        if (errno != EINTR)
            rc = -errno;
    if (rc == 0 && !deps__store_whole(store, hash))
        rc = -ENOENT; /* evicted before our lock */
    if (rc < 0) {
        snprintf(err, errlen, "the store entry %s: %s", hash, strerror(-rc));
        return rc;
    }
    if (futimens(entry, NULL) < 0) /* the store's LRU clock */
        log_msg(LOG_LVL_DEBUG, "store: touching %s: %s", hash, strerror(errno));
    *held = steal_fd(&entry);
    return 0;
}

/* The distribution of the entry open at entry, from its mark: its
 * normalised name and its version (caller frees both). 0, -EBADMSG (no
 * mark of ours) or -errno. */
static int entry_dist(int entry, char **norm, char **version)
{
    cleanup_free char *mark = NULL;
    size_t len;
    *norm = *version = NULL;
    int rc = util_read_file_at(entry, DEPS_STORE_MARK, 4096, &mark, &len);
    if (rc < 0)
        return rc;
    const char *n = strstr(mark, "\nname "), *v = strstr(mark, "\nversion ");
    if (!n || !v)
        return -EBADMSG;
    *norm = deps_normalize_name(n + 6, strcspn(n + 6, "\n"));
    *version = strndup(v + 9, strcspn(v + 9, "\n"));
    if (!*norm || !*version) {
        free(*norm);
        free(*version);
        *norm = *version = NULL;
        return -ENOMEM;
    }
    return 0;
}

int deps__store_link(const struct deps__store *s, const char *hash, int entry, int env, const char *site_rel,
                     size_t *copied, struct strv *installed, char *err, size_t errlen)
{
    cleanup_free char *norm = NULL, *version = NULL, *sdir = NULL;
    int rc = entry_dist(entry, &norm, &version);
    char nv[512];
    if (rc == 0) {
        snprintf(nv, sizeof nv, "%s-%s", norm, version);
        rc = strv_push(installed, nv, strlen(nv));
    }
    if (rc < 0) {
        snprintf(err, errlen, "the store entry %s: %s", hash, strerror(-rc));
        return rc;
    }
    cleanup_free char *incl = NULL;
    if (asprintf(&incl, "include/site/python%s/%s", s->pyver, norm) < 0 ||
        deps__store_dir(s->state_dir, s->pyver, &sdir) < 0)
        return -ENOMEM;
    struct merge m = {.copied = 0};
    char prefix[PATH_MAX];
    snprintf(prefix, sizeof prefix, "%s/", sdir);
    m.store = prefix;
    m.store_len = strlen(prefix);
    const struct {
        const char *from, *to;
    } parts[] = {{"site", site_rel}, {"bin", "bin"}, {"data", "."}, {"include", incl}};
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(parts); i++) {
        cleanup_fd int from = openat(entry, parts[i].from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (from < 0) {
            rc = -errno;
            break;
        }
        cleanup_dir DIR *d = util_opendir_at(from);
        struct dirent *de = NULL;
        while (d && (de = readdir(d)) && (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")))
            ;
        if (!de)
            continue; /* nothing of this kind */
        cleanup_fd int to = -1;
        rc = !strcmp(parts[i].to, ".") ? ((to = fcntl(env, F_DUPFD_CLOEXEC, 3)) < 0 ? -errno : 0)
                                       : open_dirs(env, parts[i].to, &to);
        snprintf(m.path, sizeof m.path, "%s%s/%s", prefix, hash, parts[i].from);
        if (rc == 0)
            rc = merge_dir(&m, from, to, 0);
    }
    *copied += m.copied;
    deps__fault("link");
    if (rc < 0) {
        snprintf(err, errlen, "linking the store entry %s into the environment: %s", hash, strerror(-rc));
        return rc;
    }
    return 0;
}

/* ------------------------------------ a live kernel's extra packages */

/* The version of the distribution name (len bytes) in a list of
 * "name==version", or NULL. */
static const char *version_in(const struct strv *v, const char *name, size_t len)
{
    for (size_t i = 0; i < v->n; i++)
        if (!strncmp(v->v[i], name, len) && !strncmp(v->v[i] + len, "==", 2))
            return v->v[i] + len + 2;
    return NULL;
}

/* What have_env holds that want_env holds in another version, in words
 * into err: 1, or 0 when every package keeps its version. */
static int version_conflict(const struct strv *have, const struct strv *want, char *err, size_t errlen)
{
    for (size_t i = 0; i < have->n; i++) {
        const char *eq = strstr(have->v[i], "==");
        size_t len = eq ? (size_t)(eq - have->v[i]) : 0;
        const char *v = eq ? version_in(want, have->v[i], len) : NULL;
        if (v && strcmp(v, eq + 2)) {
            snprintf(err, errlen, "%.*s is %s in the kernel, and the cell needs %s", (int)len, have->v[i], eq + 2, v);
            return 1;
        }
    }
    return 0;
}

/* The store entry ref's importable part into dst, unless have holds its
 * distribution already; "name==version" onto added. */
static int extend_entry(const char *store, const char *ref, const struct strv *have, int dst,
                        struct strv *added, char *err, size_t errlen)
{
    struct merge m = {.store = store, .store_len = strlen(store), .real_dirs = true};
    snprintf(m.path, sizeof m.path, "%s/%s", store, ref);
    cleanup_fd int entry = open(m.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = entry < 0 ? -errno : 0;
    /* Held while its files are linked: eviction passes it over. */
    while (rc == 0 && flock(entry, LOCK_SH) < 0)
        if (errno != EINTR)
            rc = -errno;
    cleanup_free char *norm = NULL, *version = NULL;
    if (rc == 0)
        rc = entry_dist(entry, &norm, &version);
    if (rc == 0 && version_in(have, norm, strlen(norm)))
        return 0;
    cleanup_fd int site = rc < 0 ? -1 : openat(entry, "site", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (rc == 0 && site < 0 && errno != ENOENT)
        rc = -errno;
    size_t plen = strlen(m.path);
    snprintf(m.path + plen, sizeof m.path - plen, "/site");
    if (rc == 0 && site >= 0)
        rc = merge_dir(&m, site, dst, 0);
    char nv[512];
    if (rc == 0) {
        snprintf(nv, sizeof nv, "%s==%s", norm, version);
        rc = strv_push(added, nv, strlen(nv));
    }
    if (rc < 0)
        snprintf(err, errlen, "the store entry %s into the kernel's extra directory: %s", ref, strerror(-rc));
    return rc;
}

int deps_env_extend(const char *have_env, const char *want_env, int dst, struct strv *added, char *err,
                    size_t errlen)
{
    struct strv have = {0}, want = {0}, wheels = {0};
    cleanup_free char *store = NULL;
    cleanup_fd int hfd = open(have_env, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_fd int wfd = hfd < 0 ? -1 : open(want_env, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc = wfd < 0 ? -errno : 0;
    if (rc == 0 && (rc = deps__manifest_read(hfd, &have, NULL, NULL)) == -ENOENT)
        rc = 0; /* the base environment: no manifest, no package */
    if (rc == 0)
        rc = deps__manifest_read(wfd, &want, NULL, NULL);
    if (rc == 0)
        rc = deps__manifest_links(wfd, &store, &wheels);
    if (rc < 0)
        snprintf(err, errlen, "the environments' manifests: %s", strerror(-rc));
    if (rc == 0)
        rc = version_conflict(&have, &want, err, errlen);
    if (rc == 0 && (!store || !wheels.n)) {
        snprintf(err, errlen, "the larger environment was installed without the package store (package_store = "
                              "off, or the uv installer), so it has no entries to add from");
        rc = 1;
    }
    for (size_t i = 0; rc == 0 && i < wheels.n; i++)
        rc = extend_entry(store, wheels.v[i], &have, dst, added, err, errlen);
    strv_free(&have);
    strv_free(&want);
    strv_free(&wheels);
    return rc;
}

int deps_store_links(const char *state_dir)
{
    cleanup_free char *store = NULL, *envs = NULL;
    if (asprintf(&store, "%s/store", state_dir) < 0 || asprintf(&envs, "%s/envs", state_dir) < 0)
        return -ENOMEM;
    /* Nothing is made (the one who asks may not be the server's user):
     * a directory not made yet will be made in the state directory. */
    cleanup_fd int s = open(store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s < 0 && errno == ENOENT)
        s = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_fd int e = open(envs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (e < 0 && errno == ENOENT)
        e = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (s < 0 || e < 0)
        return -errno;
    char id[WS_ID_MAX + 1], name[64], name2[72];
    int rc = ws_new_id(NULL, id);
    if (rc < 0)
        return rc;
    snprintf(name, sizeof name, ".link-probe-%.8s", id);
    snprintf(name2, sizeof name2, "%s.2", name);
    if ((rc = util_write_file_new(s, name, "", 0, 0444)) < 0)
        return rc;
    rc = linkat(s, name, e, name2, 0) == 0 ? 1 : errno == EXDEV || errno == EPERM || errno == EMLINK ? 0 : -errno;
    unlinkat(e, name2, 0);
    unlinkat(s, name, 0);
    return rc;
}
