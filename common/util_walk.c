/* util_walk.c: the one walk of a directory tree (util_walk_at), as deep as
 * the tree goes with a bounded number of descriptors, and the rm -rf built
 * on it; declared in util.h. */
#include "config.h"

#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* One directory of util_walk_at's path from the top: its identity, to
 * check that ".." leads back to it, where its listing stood before the
 * entry the walk went down into, the name it has in its parent, and the
 * length of its path from the top (UTIL_WALK_PATHS). */
struct walk_level {
    dev_t dev;
    ino_t ino;
    long pos;
    char *name;
    size_t plen;
    DIR *held;      /* its stream, kept open while the walk is below it (levels below WALK_HELD) */
};

/* Directories nearest the top whose streams stay open while the walk is
 * below them: a tree of common depth is never reopened, and the number of
 * descriptors stays bounded however deep the tree. */
#define WALK_HELD 16

/* A walk under way: lv[depth] is the directory open in d. */
struct walk_state {
    struct util_walk *w;
    int topfd;
    const char *top;
    struct walk_level *lv;
    size_t cap, depth;
    DIR *d;
    long here;      /* where d's listing stands: the position of the entry it gives next */
    char *path;     /* UTIL_WALK_PATHS: the current entry's path from the top */
    size_t path_cap, path_len;
};

/* What a callback's answer does to the walk: < 0 and UTIL_WALK_STOP end
 * it, anything else goes on. */
static int walk_answer(int r)
{
    return r < 0 || r == UTIL_WALK_STOP ? r : 0;
}

/* The lstat of dirfd/name, or of dirfd itself when name is "". */
static int walk_lstat(int dirfd, const char *name, struct stat *st)
{
    return fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH)) < 0 ? -errno : 0;
}

/* Opens the directory name below parentfd (name "": a duplicate of
 * parentfd), checking that it is the one (dev, ino) names: the tree did
 * not change under the walk. An fd or -errno. */
static int walk_open_fd(int parentfd, const char *name, int flags, dev_t dev, ino_t ino)
{
    int fd = *name ? openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags)
                   : fcntl(parentfd, F_DUPFD_CLOEXEC, 3);
    struct stat now;
    if (fd < 0)
        return -errno;
    if (!*name && lseek(fd, 0, SEEK_SET) < 0) {
        /* A duplicate shares the offset: the listing from its start. */
        close(fd);
        return -errno;
    }
    if (fstat(fd, &now) < 0 || now.st_dev != dev || now.st_ino != ino) {
        close(fd);
        return -ESTALE;
    }
    return fd;
}

/* A stream over fd (taken), or fd's -errno. */
static int walk_stream(int fd, DIR **out)
{
    if (fd < 0)
        return fd;
    if (!(*out = fdopendir(fd))) {
        int e = errno;
        close(fd);
        return -e;
    }
    return 0;
}

/* Opens name (a directory, as st says) below parentfd. With
 * UTIL_WALK_FIX_MODES, a directory of ours whose mode shuts us out (a
 * chmod 000) gets our bits back and is opened. */
static int walk_open_dir(const struct walk_state *s, int parentfd, const char *name, const struct stat *st, DIR **out)
{
    int fd = walk_open_fd(parentfd, name, O_NOFOLLOW, st->st_dev, st->st_ino);
    if (fd == -EACCES && (s->w->flags & UTIL_WALK_FIX_MODES) && st->st_uid == geteuid() &&
        fchmodat(parentfd, name, (st->st_mode & 07777) | 0700, 0) == 0)
        fd = walk_open_fd(parentfd, name, O_NOFOLLOW, st->st_dev, st->st_ino);
    return walk_stream(fd, out);
}

/* Opens lv[level] again from the deepest directory held open above it
 * (or the top), name by name, one descriptor at a time: for a directory
 * whose mode lets us list it but not look up its "..". Never a duplicate
 * of a held stream's descriptor, which would share (and move) its offset.
 * An fd or -errno. */
static int walk_from_top(const struct walk_state *s, size_t level)
{
    size_t from = level;
    while (from > 0 && !s->lv[from - 1].held)
        from--;
    int fd = from == 0 ? walk_open_fd(s->topfd, s->top, O_NOFOLLOW, s->lv[0].dev, s->lv[0].ino)
                       : walk_open_fd(dirfd(s->lv[from - 1].held), s->lv[from].name, O_NOFOLLOW, s->lv[from].dev,
                                      s->lv[from].ino);
    for (size_t i = from + 1; i <= level && fd >= 0; i++) {
        int next = walk_open_fd(fd, s->lv[i].name, O_NOFOLLOW, s->lv[i].dev, s->lv[i].ino);
        close(fd);
        fd = next;
    }
    return fd;
}

/* Goes up from the directory open in s->d to its parent, reopened through
 * ".." (checked to be the directory it left) and positioned just past the
 * entry the walk went down into: found where the listing stood before it
 * or, where positions count entries and some before it went since (a
 * callback's removals), by its name from the start. -ESTALE when it is
 * not there. */
static int walk_up(struct walk_state *s)
{
    const struct walk_level *parent = &s->lv[s->depth - 1], *me = &s->lv[s->depth];
    int fd = walk_open_fd(dirfd(s->d), "..", 0, parent->dev, parent->ino);
    closedir(s->d);
    s->d = NULL;
    if (fd == -EACCES)
        fd = walk_from_top(s, s->depth - 1);
    int rc = walk_stream(fd, &s->d);
    if (rc < 0)
        return rc;
    seekdir(s->d, parent->pos);
    for (int pass = 0; pass < 2; pass++) {
        struct dirent *de;
        errno = 0;
        while ((de = readdir(s->d))) {
            if (!strcmp(de->d_name, me->name)) {
                s->here = (long)de->d_off;
                return 0;
            }
            if (pass == 0)
                break;
        }
        if (errno)
            return -errno;
        rewinddir(s->d);
    }
    return -ESTALE;
}

/* Leaves the directory open in s->d for its parent (its stream held, or
 * reopened): its post. */
static int walk_leave(struct walk_state *s)
{
    struct walk_level *me = &s->lv[s->depth];
    int rc = 0;
    if (s->lv[s->depth - 1].held) {
        closedir(s->d);
        s->d = steal_pointer(&s->lv[s->depth - 1].held);
    } else {
        rc = walk_up(s);
    }
    struct stat st = {.st_dev = me->dev, .st_ino = me->ino, .st_mode = S_IFDIR};
    if (rc == 0 && s->w->post) {
        if (s->path)
            s->path[me->plen] = '\0';
        rc = walk_answer(s->w->post(dirfd(s->d), me->name, &st, (int)s->depth, s->w->ctx));
    }
    free(me->name);
    me->name = NULL;
    s->depth--;
    return rc;
}

/* UTIL_WALK_PATHS: w->path becomes the path of name, an entry of the
 * directory open. */
static int walk_path(struct walk_state *s, const char *name)
{
    if (!(s->w->flags & UTIL_WALK_PATHS))
        return 0;
    size_t base = s->lv[s->depth].plen, n = strlen(name);
    size_t need = base + (base ? 1 : 0) + n + 1;
    if (need > s->path_cap) {
        size_t cap = need * 2 > 256 ? need * 2 : 256;
        char *p = realloc(s->path, cap);
        if (!p)
            return -ENOMEM;
        s->path = p;
        s->path_cap = cap;
        s->w->path = p;
    }
    if (base)
        s->path[base++] = '/';
    memcpy(s->path + base, name, n + 1);
    s->path_len = base + n;
    return 0;
}

/* Goes down into name, an entry of the directory open (st: its lstat),
 * whose listing stood at here before it; past WALK_HELD levels holding no
 * descriptor of the parent, so that no depth runs out of descriptors. A
 * directory that cannot be opened is w->fail's to judge. */
static int walk_enter(struct walk_state *s, const char *name, const struct stat *st, long here)
{
    if (s->depth + 1 == s->cap) {
        struct walk_level *more = realloc(s->lv, 2 * s->cap * sizeof *more);
        if (!more)
            return -ENOMEM;
        memset(more + s->cap, 0, s->cap * sizeof *more);
        s->lv = more;
        s->cap *= 2;
    }
    DIR *sub = NULL;
    int rc = walk_open_dir(s, dirfd(s->d), name, st, &sub);
    if (rc < 0)
        return s->w->fail ? walk_answer(s->w->fail(dirfd(s->d), name, st, (int)s->depth + 1, rc, s->w->ctx)) : rc;
    char *copy = strdup(name);
    if (!copy) {
        closedir(sub);
        return -ENOMEM;
    }
    s->lv[s->depth].pos = here;
    s->lv[s->depth + 1] = (struct walk_level){st->st_dev, st->st_ino, 0, copy, s->path_len, NULL};
    if (s->depth < WALK_HELD)
        s->lv[s->depth].held = s->d;
    else
        closedir(s->d);
    s->d = sub;
    s->here = 0;
    s->depth++;
    return 0;
}

/* The walk below the top, open in s->d, to its end. */
static int walk_tree(struct walk_state *s)
{
    struct util_walk *w = s->w;
    int rc = 0;
    while (rc == 0) {
        /* Where the entry read stood: telldir's value before the read,
         * kept from the last entry's d_off rather than asked of the
         * stream each time. */
        long here = s->here;
        errno = 0;
        struct dirent *de = readdir(s->d);
        if (!de && errno)
            return -errno;
        if (de)
            s->here = (long)de->d_off;
        if (!de) {
            /* This directory is done: its post, from its parent. */
            if (s->depth == 0)
                return 0;
            rc = walk_leave(s);
            continue;
        }
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(dirfd(s->d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT)
                continue;
            return -errno;
        }
        if ((rc = walk_path(s, de->d_name)) < 0)
            return rc;
        int r = w->pre(dirfd(s->d), de->d_name, &st, (int)s->depth + 1, w->ctx);
        if (r != 0 || !S_ISDIR(st.st_mode))
            rc = walk_answer(r);
        else
            rc = walk_enter(s, de->d_name, &st, here);
    }
    return rc;
}

int util_walk_at(int topfd, const char *name, struct util_walk *w)
{
    struct walk_state s = {.w = w, .topfd = topfd, .top = name};
    struct stat st;
    w->path = "";
    int rc = walk_lstat(topfd, name, &st);
    if (rc < 0)
        return rc;
    rc = w->pre(topfd, name, &st, 0, w->ctx);
    if (rc != 0 || !S_ISDIR(st.st_mode))
        return rc < 0 ? rc : 0;
    if (!(s.lv = calloc(8, sizeof *s.lv)))
        return -ENOMEM;
    s.cap = 8;
    s.lv[0] = (struct walk_level){st.st_dev, st.st_ino, 0, NULL, 0, NULL};
    rc = walk_open_dir(&s, topfd, name, &st, &s.d);
    bool opened = rc == 0;
    if (rc < 0 && w->fail)
        rc = walk_answer(w->fail(topfd, name, &st, 0, rc, w->ctx));
    else if (rc == 0)
        rc = walk_tree(&s);
    if (s.d)
        closedir(s.d);
    for (size_t i = 0; i <= s.depth && i < s.cap; i++) {
        free(s.lv[i].name);
        if (s.lv[i].held)
            closedir(s.lv[i].held);
    }
    free(s.lv);
    free(s.path);
    w->path = "";
    if (rc == 0 && opened && w->post) {
        if ((rc = walk_lstat(topfd, name, &st)) < 0)
            return rc;
        rc = walk_answer(w->post(topfd, name, &st, 0, w->ctx));
    }
    return rc < 0 ? rc : 0;
}

/* util_rm_rf_at's walk: files in pre, directories in post; the first
 * failure is kept and the walk carries on. */
struct rm_walk {
    int err;
    bool not_empty;   /* a directory kept an entry the walk did not reach */
};

static int rm_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct rm_walk *c = ctx;
    (void)depth;
    if (!S_ISDIR(st->st_mode) && unlinkat(dirfd, name, 0) < 0 && errno != ENOENT && !c->err)
        c->err = -errno;
    return 0;
}

static int rm_post(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct rm_walk *c = ctx;
    (void)st;
    (void)depth;
    if (unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT) {
        if (errno == ENOTEMPTY || errno == EEXIST)
            c->not_empty = true;
        else if (!c->err)
            c->err = -errno;
    }
    return 0;
}

#define RM_RF_PASSES 8  /* walks of a tree that something else added to as it was emptied */

int util_rm_rf_at(int dirfd, const char *name)
{
    /* The cheap cases first: a file, a symlink. */
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return -errno;
    /* The walk copes with its own removals; a tree something else adds
     * to while it goes keeps what came late: walk again. */
    for (int pass = 0; pass < RM_RF_PASSES; pass++) {
        struct rm_walk c = {0, false};
        struct util_walk w = {.pre = rm_pre, .post = rm_post, .ctx = &c};
        int rc = util_walk_at(dirfd, name, &w);
        if (rc == -ENOENT)
            return 0;
        if (rc < 0)
            return rc;
        if (c.err || !c.not_empty)
            return c.err;
    }
    return -ENOTEMPTY;
}
