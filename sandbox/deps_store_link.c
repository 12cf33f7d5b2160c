/* deps_store_link.c: package store entries put into environments (trees
 * of hard links, copies where a link cannot go) and taken out of the
 * store when no environment links them (deps_evict's second half). */
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

#define STORE_MARK "runmyscript-wheel.txt"

/* ------------------------------------------------------- linking an entry */

/* The tree at src put into dst (an existing directory): directories made
 * (an existing one is shared: two packages of one namespace), files hard
 * linked (copied where a link cannot go: another file system), a file
 * that is there already replaced (the later wheel wins, as with pip). */
struct link_walk {
    int dst;
    bool link;
    size_t copied;
};

static int link_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct link_walk *c = ctx;
    if (depth == 0)
        return 0;
    if (S_ISDIR(st->st_mode)) {
        if (mkdirat(c->dst, name, c->link ? 0755 : st->st_mode & 07777) < 0 && (!c->link || errno != EEXIST))
            return -errno;
        int t = openat(c->dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (t < 0)
            return -errno;
        close(c->dst);
        c->dst = t;
        return 0;
    }
    if (S_ISLNK(st->st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlinkat(dirfd, name, target, sizeof target - 1);
        if (n < 0)
            return -errno;
        target[n] = '\0';
        return symlinkat(target, c->dst, name) < 0 ? -errno : 0;
    }
    if (!S_ISREG(st->st_mode))
        return 0;
    if (c->link) {
        if (linkat(dirfd, name, c->dst, name, 0) == 0)
            return 0;
        if (errno == EEXIST && unlinkat(c->dst, name, 0) == 0 && linkat(dirfd, name, c->dst, name, 0) == 0)
            return 0;
        if (errno != EXDEV && errno != EPERM && errno != EMLINK)
            return -errno;
        c->copied++;
    }
    int rc = util_copy_file(dirfd, name, c->dst, name);
    if (rc == 0 && fchmodat(c->dst, name, st->st_mode & 07777, 0) < 0)
        rc = -errno;
    return rc;
}

static int link_post(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct link_walk *c = ctx;
    (void)dirfd, (void)name, (void)st;
    if (depth == 0)
        return 0;
    int up = openat(c->dst, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (up < 0)
        return -errno;
    close(c->dst);
    c->dst = up;
    return 0;
}

int deps__tree_put(int srcfd, const char *src, int dstfd, bool link, size_t *copied)
{
    struct link_walk c = {fcntl(dstfd, F_DUPFD_CLOEXEC, 3), link, 0};
    struct util_walk w = {.pre = link_pre, .post = link_post, .ctx = &c};
    if (c.dst < 0)
        return -errno;
    int rc = util_walk_at(srcfd, src, &w);
    close(c.dst);
    if (copied)
        *copied += c.copied;
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

int deps__store_link(const struct deps__store *s, const char *hash, int env, const char *site_rel,
                     int *held, size_t *copied, struct deps_strv *installed, char *err, size_t errlen)
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
    cleanup_free char *mark = NULL, *name = NULL;
    size_t len;
    if (rc == 0)
        rc = util_read_file_at(entry, STORE_MARK, 4096, &mark, &len);
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
    if (futimens(entry, NULL) < 0) /* the store's LRU clock */
        log_msg(LOG_LVL_DEBUG, "store: touching %s: %s", hash, strerror(errno));
    cleanup_free char *incl = NULL, *norm = deps_normalize_name(name, strlen(name));
    if (!norm || asprintf(&incl, "include/site/python%s/%s", s->pyver, norm) < 0)
        return -ENOMEM;
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
        if (rc == 0)
            rc = deps__tree_put(from, "", to, true, copied);
    }
    deps__fault("link");
    if (rc < 0) {
        snprintf(err, errlen, "linking the store entry %s into the environment: %s", hash, strerror(-rc));
        return rc;
    }
    *held = steal_fd(&entry);
    return 0;
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

int deps__store_remove(const char *state_dir, const struct deps__store_entry *e)
{
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/store/%s", state_dir, e->py) < 0)
        return -ENOMEM;
    cleanup_fd int pfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (pfd < 0)
        return -errno;
    int rc = deps__evict_dir(pfd, e->hash); /* -EBUSY: a build is linking it */
    if (rc == 0)
        log_msg(LOG_LVL_INFO, "store: evicted %s/%s (%llu bytes, no environment links it)", e->py, e->hash,
                (unsigned long long)e->bytes);
    return rc;
}
