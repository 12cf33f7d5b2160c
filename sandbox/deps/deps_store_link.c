/* deps_store_link.c: package store entries put into environments (their
 * directories as symlinks into the entry, their files hard linked, copies
 * where a link cannot go) and taken out of the store when no environment
 * links them (deps_evict's second half). */
#include "config.h"

#include "deps_internal.h"
#include "jail.h"

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

#define STORE_MARK "runmyscript-wheel.txt"

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
        return symlinkat(m->path, dst, name) < 0 ? -errno : 0;
    }
    if (S_ISLNK(dt.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dst, name, target, sizeof target - 1);
        if (n < 0)
            return -errno;
        target[n] = '\0';
        if (!strcmp(target, m->path))
            return 0; /* this very tree, linked before */
        /* Not one of ours (the base environment's lib64 -> lib): no
         * wheel's directory is put through it, as before. */
        if (strncmp(target, m->store, m->store_len))
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

int deps__store_link(const struct deps__store *s, const char *hash, int entry, int env, const char *site_rel,
                     size_t *copied, struct deps_strv *installed, char *err, size_t errlen)
{
    cleanup_free char *mark = NULL, *name = NULL, *sdir = NULL;
    size_t len;
    int rc = util_read_file_at(entry, STORE_MARK, 4096, &mark, &len);
    const char *v = rc == 0 ? strstr(mark, "\nversion ") : NULL;
    if (rc == 0) {
        const char *p = strstr(mark, "\nname ");
        name = p ? strndup(p + 6, strcspn(p + 6, "\n")) : NULL;
        if (!name || !v)
            rc = -EBADMSG;
    }
    char nv[512];
    if (rc == 0) {
        cleanup_free char *norm = deps_normalize_name(name, strlen(name));
        snprintf(nv, sizeof nv, "%s-%.*s", norm ? norm : name, (int)strcspn(v + 9, "\n"), v + 9);
        rc = deps_strv_push(installed, nv, strlen(nv));
    }
    if (rc < 0) {
        snprintf(err, errlen, "the store entry %s: %s", hash, strerror(-rc));
        return rc;
    }
    cleanup_free char *incl = NULL, *norm = deps_normalize_name(name, strlen(name));
    if (!norm || asprintf(&incl, "include/site/python%s/%s", s->pyver, norm) < 0 ||
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

/* ------------------------------------------- what an environment links */

/* "pyX.Y/HASH", as the manifest's wheel lines name entries, and nothing
 * else: a line that names a path elsewhere is no entry. */
static bool is_entry_ref(const char *ref)
{
    const char *p = ref;
    if (strncmp(p, "py", 2))
        return false;
    p += 2;
    size_t d = strspn(p, "0123456789");
    if (!d || p[d] != '.')
        return false;
    p += d + 1;
    d = strspn(p, "0123456789");
    if (!d || p[d] != '/')
        return false;
    p += d + 1;
    return strlen(p) == 64 && strspn(p, "0123456789abcdef") == 64;
}

/* The manifest of the environment open at env: the entries it links
 * (pushed onto wheels as "pyX.Y/HASH") and, when its symlinks lead into
 * the store, the store's path into *store (caller frees; NULL for an
 * environment of hard links only, made before the symlinks). */
static int manifest_links(int env, char **store, struct deps_strv *wheels)
{
    cleanup_free char *text = NULL;
    size_t len;
    *store = NULL;
    int rc = util_read_file_at(env, DEPS_MANIFEST, DEPS_MANIFEST_MAX, &text, &len);
    if (rc < 0)
        return rc;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); rc == 0 && line; line = strtok_r(NULL, "\n", &save)) {
        if (!strncmp(line, "wheel ", 6) && is_entry_ref(line + 6))
            rc = deps_strv_push(wheels, line + 6, strlen(line + 6));
        else if (!strncmp(line, "store /", 7) && !*store && !(*store = strdup(line + 6)))
            rc = -ENOMEM;
    }
    return rc;
}

int deps__env_whole(int env)
{
    cleanup_free char *store = NULL;
    struct deps_strv w = {0};
    int rc = manifest_links(env, &store, &w);
    for (size_t i = 0; rc == 0 && store && i < w.n; i++) {
        char p[PATH_MAX];
        snprintf(p, sizeof p, "%s/%s/" STORE_MARK, store, w.v[i]);
        if (access(p, F_OK) < 0)
            rc = errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
    }
    deps_strv_free(&w);
    return rc;
}

int deps_env_links(const char *env_dir, struct deps_strv *out)
{
    cleanup_fd int env = open(env_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (env < 0)
        return -errno;
    cleanup_free char *store = NULL;
    struct deps_strv w = {0};
    int rc = manifest_links(env, &store, &w);
    if (rc == -ENOENT)
        rc = 0; /* the base environment: no manifest, nothing linked */
    for (size_t i = 0; rc == 0 && store && i < w.n; i++) {
        cleanup_free char *p = NULL;
        if (asprintf(&p, "%s/%s", store, w.v[i]) < 0)
            rc = -ENOMEM;
        else
            rc = deps_strv_push(out, p, strlen(p));
    }
    deps_strv_free(&w);
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

/* --------------------------------------------------------------- eviction */

int deps__store_entries(const char *state_dir, struct deps__store_entry **out, size_t *n_out)
{
    *out = NULL;
    *n_out = 0;
    cleanup_free char *top = NULL;
    if (asprintf(&top, "%s/store", state_dir) < 0)
        return -ENOMEM;
    cleanup_fd int tfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (tfd < 0)
        return errno == ENOENT ? 0 : -errno;
    cleanup_dir DIR *td = util_opendir_at(tfd);
    size_t cap = 0;
    for (struct dirent *pe; td && (pe = readdir(td));) {
        if (strncmp(pe->d_name, "py", 2) || strlen(pe->d_name) >= sizeof (*out)->py)
            continue;
        cleanup_fd int pfd = openat(tfd, pe->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_dir DIR *pd = pfd < 0 ? NULL : util_opendir_at(pfd);
        for (struct dirent *de; pd && (de = readdir(pd));) {
            const char *nm = de->d_name;
            if (!strncmp(nm, ".trash-", 7)) {
                discard(deps__remove_tree(pfd, nm));
                continue;
            }
            if (!strncmp(nm, ".tmp-", 5) && strlen(nm) > 5 + 64) {
                /* A dead unpack: nobody holds its lock. */
                char lockname[80];
                snprintf(lockname, sizeof lockname, ".%.64s.lock", nm + 5);
                cleanup_fd int lf = openat(pfd, lockname, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
                if (lf < 0 || flock(lf, LOCK_EX | LOCK_NB) == 0) {
                    log_msg(LOG_LVL_INFO, "store: removing %s, left by an unpack that did not finish", nm);
                    discard(deps__remove_tree(pfd, nm));
                }
                continue;
            }
            if (strlen(nm) != 64 || nm[0] == '.')
                continue;
            cleanup_fd int efd = openat(pfd, nm, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            cleanup_free char *mark = NULL;
            size_t len;
            struct stat st;
            if (efd < 0 || fstat(efd, &st) < 0 || util_read_file_at(efd, STORE_MARK, 4096, &mark, &len) < 0)
                continue;
            if (*n_out == cap) {
                cap = cap ? cap * 2 : 64;
                struct deps__store_entry *ne = realloc(*out, cap * sizeof **out);
                if (!ne)
                    return -ENOMEM;
                *out = ne;
            }
            struct deps__store_entry *e = &(*out)[(*n_out)++];
            memset(e, 0, sizeof *e);
            memcpy(e->py, pe->d_name, strlen(pe->d_name) + 1);
            memcpy(e->hash, nm, 65);
            e->used = st.st_mtim;
            const char *b = strstr(mark, "\nbytes ");
            e->bytes = b ? strtoull(b + 7, NULL, 10) : 0;
        }
    }
    return 0;
}

/* Whether a published environment's manifest names the entry: asked
 * again under the entry's lock, since one published after the eviction
 * pass read the manifests links it now (through symlinks, which its
 * files would not outlive as hard links do). */
struct entry_ref {
    const char *state_dir;
    char ref[96]; /* pyX.Y/HASH */
};

static bool entry_linked(void *ctx)
{
    const struct entry_ref *r = ctx;
    cleanup_free char *envs = NULL;
    if (asprintf(&envs, "%s/envs", r->state_dir) < 0)
        return true;
    cleanup_fd int efd = open(envs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    cleanup_dir DIR *d = efd < 0 ? NULL : util_opendir_at(efd);
    if (!d)
        return errno != ENOENT; /* not known: kept */
    bool linked = false;
    for (struct dirent *de; !linked && (de = readdir(d));) {
        if (strlen(de->d_name) != 32 || de->d_name[0] == '.')
            continue;
        cleanup_fd int env = openat(efd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_free char *store = NULL;
        struct deps_strv w = {0};
        if (env >= 0 && manifest_links(env, &store, &w) == 0)
            linked = deps_strv_has(&w, r->ref);
        deps_strv_free(&w);
    }
    return linked;
}

int deps__store_remove(const char *state_dir, const struct deps__store_entry *e)
{
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/store/%s", state_dir, e->py) < 0)
        return -ENOMEM;
    cleanup_fd int pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return -errno;
    struct entry_ref r = {state_dir, ""};
    snprintf(r.ref, sizeof r.ref, "%s/%s", e->py, e->hash);
    /* -EBUSY: a build is linking it, or an environment links it now */
    int rc = deps__evict_dir(pfd, e->hash, entry_linked, &r);
    if (rc == 0)
        log_msg(LOG_LVL_INFO, "store: evicted %s/%s (%llu bytes, no environment links it)", e->py, e->hash,
                (unsigned long long)e->bytes);
    return rc;
}

int deps_env_binds(const char *env_dir, struct deps_env_binds *b)
{
    struct deps_strv links = {0};
    memset(b, 0, sizeof *b);
    int rc = deps_env_links(env_dir, &links);
    if (rc == 0 && links.n && !(b->v = calloc(links.n, sizeof *b->v)))
        rc = -ENOMEM;
    if (rc < 0) {
        deps_strv_free(&links);
        return rc;
    }
    for (size_t i = 0; i < links.n; i++)
        b->v[i] = (struct jail_bind){links.v[i], links.v[i], JAIL_BIND_ENV};
    b->paths = links.v; /* the strings, owned from here */
    b->n = links.n;
    return 0;
}

void deps_env_binds_free(struct deps_env_binds *b)
{
    for (size_t i = 0; i < b->n; i++)
        free(b->paths[i]);
    free(b->paths);
    free(b->v);
    memset(b, 0, sizeof *b);
}
