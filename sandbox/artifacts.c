/* artifacts.c: the one walk of a tree the executor has: listing output/
 * (art_collect), measuring output/ or a whole workspace (art_measure,
 * art_measure_tree) and pruning what a run left (art_prune); and the
 * snapshot of a session run's files. The MIME types and summaries are in
 * art_mime.c, the zip in art_zip.c.
 *
 * The walk opens every directory with O_NOFOLLOW relative to its parent's
 * fd, so a symlink anywhere is seen as a symlink and skipped, never
 * followed. A regular file is an artifact unless it has hard links outside
 * output/: its link count must equal the number of names the walk found for
 * it, or a script could link /etc/shadow (or another run's file) into its
 * output and have us hand it out. */
#include "config.h"

#include "artifacts_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"


void art_list_free(struct art_list *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free(l->v[i].path);
        free(l->v[i].mime);
        free(l->v[i].summary);
    }
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* ------------------------------------------------------------- the walk */

/* One walk serves every job: listing output/ (art_collect), measuring a
 * tree (art_measure, art_measure_tree) and pruning one (art_prune). The
 * job's visit decides, entry by entry, whether to go into a directory. */
enum { WALK_NEXT = 0, WALK_DESCEND = 1 };

struct entry {
    char *path;
    dev_t dev;
    ino_t ino;
    nlink_t nlink;
    uint64_t size;
};

struct walk;
typedef int walk_visit_fn(struct walk *w, int dirfd, const char *name, const char *rel, const struct stat *st,
                          int depth);

struct walk {
    walk_visit_fn *visit;
    /* after a directory's contents (pruning: its removal), or NULL */
    int (*leave)(struct walk *w, int dirfd, const char *name);
    bool paths;               /* build the relative paths (listing) */
    bool fix_modes;           /* open a directory of ours that its mode shuts us out of */
    bool stopped;
    void *scope;              /* the job's state for the current subtree, restored after it */
    /* listing */
    struct entry *v;
    size_t n, cap;
    uint64_t skipped;
    uint64_t bytes;
    uint64_t stop_files, stop_bytes; /* art_measure: stop early (0: never) */
    /* measuring a tree */
    struct art_tally *total;
    const struct art_part *parts;
    size_t n_parts;
    bool unmeasured;
    /* pruning */
    struct art_prune *prune;
    int top_fd;
};

static int walk_add(struct walk *w, const char *path, const struct stat *st)
{
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 32;
        struct entry *v = realloc(w->v, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        w->v = v;
        w->cap = cap;
    }
    char *p = NULL;
    if (path && !(p = strdup(path)))
        return -ENOMEM;
    w->v[w->n++] = (struct entry){p, st->st_dev, st->st_ino, st->st_nlink, (uint64_t)st->st_size};
    w->bytes += (uint64_t)st->st_size;
    return 0;
}

static void walk_free(struct walk *w)
{
    for (size_t i = 0; i < w->n; i++)
        free(w->v[i].path);
    free(w->v);
}

/* Opens the directory name beneath dirfd without following a symlink. A
 * directory of ours whose mode shuts us out (a script's chmod 000, which
 * the server's own uid shares in the unprivileged modes) is opened anyway
 * when the walk may fix modes: what it holds must be measured and removed. */
static int walk_open_dir(struct walk *w, int dirfd, const char *name, const struct stat *st)
{
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 && errno == EACCES && w->fix_modes && st->st_uid == geteuid() &&
        fchmodat(dirfd, name, (st->st_mode & 07777) | 0700, 0) == 0)
        fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Walks dirfd (borrowed), whose path relative to the top is prefix ("" at
 * the top; only built when w->paths). */
static int walk_dir(struct walk *w, int dirfd, const char *prefix, int depth)
{
    cleanup_dir DIR *d = util_opendir_at(dirfd);
    if (!d)
        return -errno;
    struct dirent *de;
    while (!w->stopped && (de = readdir(d))) {
        const char *name = de->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        char rel[ART_MAX_PATH + 1] = "";
        if (w->paths) {
            int len = snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "", name);
            if (len < 0 || (size_t)len >= sizeof rel) {
                if (!w->prune) {
                    w->skipped++;
                    continue;
                }
                strcpy(rel, "/"); /* past ART_MAX_PATH: no listed path begins so, so it goes */
            }
        }
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT)
                continue;
            return -errno;
        }
        void *scope = w->scope;
        int act = w->visit(w, dirfd, name, rel, &st, depth);
        if (act == WALK_DESCEND) {
            int sub = walk_open_dir(w, dirfd, name, &st);
            if (sub >= 0) {
                act = walk_dir(w, sub, rel, depth + 1);
                close(sub);
                if (act == 0 && w->leave)
                    act = w->leave(w, dirfd, name);
            } else if (sub == -ENOENT || sub == -ELOOP || sub == -ENOTDIR || (sub == -EACCES && !w->fix_modes)) {
                /* Gone or replaced since the stat (not a directory to
                 * walk), or shut to a listing. */
                w->skipped++;
                act = 0;
            } else {
                act = sub;
            }
        }
        w->scope = scope;
        if (act < 0)
            return act;
    }
    return 0;
}

/* Listing and art_measure: regular files, directories to ART_MAX_DEPTH. */
static int list_visit(struct walk *w, int dirfd, const char *name, const char *rel, const struct stat *st, int depth)
{
    (void)dirfd;
    (void)name;
    if (S_ISDIR(st->st_mode)) {
        if (depth + 1 > ART_MAX_DEPTH) {
            w->skipped++;
            return WALK_NEXT;
        }
        return WALK_DESCEND;
    }
    if (!S_ISREG(st->st_mode)) {
        w->skipped++; /* symlink, FIFO, socket, device */
        return WALK_NEXT;
    }
    if (!w->paths) {
        /* Counting only: nothing to keep. */
        w->n++;
        w->bytes += (uint64_t)st->st_size;
    } else {
        int rc = walk_add(w, rel, st);
        if (rc < 0)
            return rc;
    }
    if ((w->stop_files && w->n > w->stop_files) || (w->stop_bytes && w->bytes > w->stop_bytes))
        w->stopped = true;
    return WALK_NEXT;
}

int art_measure(int outfd, uint64_t stop_files, uint64_t stop_bytes, uint64_t *files, uint64_t *bytes)
{
    struct walk w = {.visit = list_visit, .stop_files = stop_files, .stop_bytes = stop_bytes};
    int rc = walk_dir(&w, outfd, "", 0);
    *files = w.n;
    *bytes = w.bytes;
    return rc;
}

/* ------------------------------------------------------- measuring a tree */

bool art_tally_over(const struct art_tally *t)
{
    return (t->stop_files && t->files > t->stop_files) || (t->stop_bytes && t->bytes > t->stop_bytes);
}

static void tally_add(struct art_tally *t, const struct stat *st)
{
    if (t->all_inodes) {
        /* The disk it takes: a sparse file its size, a preallocated one its
         * blocks. */
        uint64_t blocks = (uint64_t)st->st_blocks * 512;
        t->files++;
        t->bytes += blocks > (uint64_t)st->st_size ? blocks : (uint64_t)st->st_size;
    } else if (S_ISREG(st->st_mode)) {
        t->files++;
        t->bytes += (uint64_t)st->st_size;
    }
}

/* The part a directory or a file of the top belongs to, or NULL. */
static const struct art_part *part_of(const struct walk *w, const char *name, const struct stat *st, int depth)
{
    for (size_t i = 0; i < w->n_parts; i++) {
        const struct art_part *p = &w->parts[i];
        if (p->name ? depth == 0 && !strcmp(p->name, name)
                    : S_ISDIR(st->st_mode) && st->st_dev == p->dev && st->st_ino == p->ino)
            return p;
    }
    return NULL;
}

static int tally_visit(struct walk *w, int dirfd, const char *name, const char *rel, const struct stat *st, int depth)
{
    (void)dirfd;
    (void)rel;
    const struct art_part *p = part_of(w, name, st, depth);
    if (p)
        w->scope = p->t;
    tally_add(w->total, st);
    if (w->scope)
        tally_add(w->scope, st);
    if (art_tally_over(w->total) || (w->scope && art_tally_over(w->scope)))
        w->stopped = true;
    if (!S_ISDIR(st->st_mode))
        return WALK_NEXT;
    if (depth + 1 > ART_MEASURE_DEPTH) {
        /* Deeper than the walk holds descriptors for: what is below is
         * not counted, so the tree is taken as past its bound. */
        w->unmeasured = w->stopped = true;
        return WALK_NEXT;
    }
    return WALK_DESCEND;
}

int art_measure_tree(int dirfd, struct art_tally *total, const struct art_part *parts, size_t n_parts,
                     bool *unmeasured)
{
    struct walk w = {.visit = tally_visit, .fix_modes = true, .total = total, .parts = parts, .n_parts = n_parts};
    int rc = walk_dir(&w, dirfd, "", 0);
    if (w.unmeasured)
        *unmeasured = true;
    return rc;
}

/* ------------------------------------------------------------- pruning */

/* Removes a file, making the directory writable first when its mode (a
 * script's chmod) is what refuses. */
static int prune_unlink(struct walk *w, int dirfd, const char *name, int flags)
{
    if (unlinkat(dirfd, name, flags) == 0 || errno == ENOENT)
        return 0;
    if (errno == EACCES && fchmod(dirfd, 0700) == 0 && unlinkat(dirfd, name, flags) == 0)
        return 0;
    if (flags == AT_REMOVEDIR && (errno == ENOTEMPTY || errno == EEXIST) && (w->prune->has_since || w->prune->listed))
        return 0; /* it holds files that stay */
    return -errno;
}

/* Scopes of a prune: the subtree goes whole, or entry by entry. */
static char prune_all;

static int cmp_listed(const void *key, const void *elem)
{
    return strcmp(key, ((const struct exec_artifact *)elem)->path);
}

static bool after(const struct timespec *t, const struct timespec *since)
{
    return t->tv_sec > since->tv_sec || (t->tv_sec == since->tv_sec && t->tv_nsec > since->tv_nsec);
}

static int prune_visit(struct walk *w, int dirfd, const char *name, const char *rel, const struct stat *st, int depth)
{
    (void)rel;
    struct art_prune *p = w->prune;
    if (depth == 0 && dirfd == w->top_fd) {
        for (size_t i = 0; p->keep && p->keep[i]; i++)
            if (!strcmp(p->keep[i], name))
                return WALK_NEXT;
        if (!strncmp(name, p->moved_prefix, strlen(p->moved_prefix)))
            return WALK_NEXT; /* moved up from deep down: removed after the walk */
    }
    bool all = w->scope == &prune_all || (!p->has_since && !p->listed);
    if (!S_ISDIR(st->st_mode)) {
        /* A file's ctime moves with every write, chmod, link or rename. */
        if (!all && p->has_since && !after(&st->st_ctim, &p->since))
            return WALK_NEXT;
        if (!all && p->listed && S_ISREG(st->st_mode) &&
            bsearch(rel, p->listed, p->n_listed, sizeof *p->listed, cmp_listed))
            return WALK_NEXT;
        int rc = prune_unlink(w, dirfd, name, 0);
        if (rc == 0) {
            p->files++;
            p->bytes += (uint64_t)st->st_size;
        }
        return rc;
    }
    /* A directory's ctime moves whenever an entry comes or goes: it is
     * walked, and removed after when it is empty and was made after since
     * (prune_leave). */
    if (all)
        w->scope = &prune_all;
    if (depth + 1 > ART_MEASURE_DEPTH) {
        /* Too deep to go on holding a descriptor per level: the subtree
         * moves up to the top under a name of ours, and is removed from
         * there (a tree this deep is the run's own: deeper ones stop it). */
        char moved[64];
        snprintf(moved, sizeof moved, "%s%u", p->moved_prefix, p->n_moved);
        if (renameat(dirfd, name, w->top_fd, moved) < 0)
            return errno == ENOENT ? WALK_NEXT : -errno;
        p->n_moved++;
        return WALK_NEXT;
    }
    return WALK_DESCEND;
}

static int prune_leave(struct walk *w, int dirfd, const char *name)
{
    if (w->scope != &prune_all && w->prune->has_since) {
        /* Its birth time says whether it is new; where the file system
         * keeps none, its ctime (an older directory emptied goes too). */
        struct statx stx;
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &stx) < 0)
            return errno == ENOENT ? 0 : -errno;
        const struct statx_timestamp *t = (stx.stx_mask & STATX_BTIME) ? &stx.stx_btime : &stx.stx_ctime;
        struct timespec ts = {(time_t)t->tv_sec, (long)t->tv_nsec};
        if (!after(&ts, &w->prune->since))
            return 0;
    }
    int rc = prune_unlink(w, dirfd, name, AT_REMOVEDIR);
    if (rc == 0)
        w->prune->files++;
    return rc;
}

int art_prune(int dirfd, struct art_prune *p)
{
    struct walk w = {.visit = prune_visit, .leave = prune_leave, .paths = p->listed != NULL, .fix_modes = true,
                     .prune = p, .top_fd = dirfd};
    unsigned char raw[6];
    int rc = util_random(raw, sizeof raw);
    if (rc < 0)
        return rc;
    char hex[2 * sizeof raw + 1];
    util_hex(raw, sizeof raw, hex);
    snprintf(p->moved_prefix, sizeof p->moved_prefix, ".prune-%s-", hex);
    p->n_moved = 0;
    rc = walk_dir(&w, dirfd, "", 0);
    /* What moved up, whole (each may move more of itself up). */
    for (unsigned i = 0; rc == 0 && i < p->n_moved; i++) {
        char moved[64];
        snprintf(moved, sizeof moved, "%s%u", p->moved_prefix, i);
        struct stat st;
        if (fstatat(dirfd, moved, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        cleanup_fd int sub = walk_open_dir(&w, dirfd, moved, &st);
        w.scope = &prune_all;
        rc = sub < 0 ? sub : walk_dir(&w, sub, "", 1);
        if (rc == 0)
            rc = prune_leave(&w, dirfd, moved);
    }
    return rc;
}

static int cmp_entry_path(const void *a, const void *b)
{
    return strcmp(((const struct entry *)a)->path, ((const struct entry *)b)->path);
}

static int cmp_entry_ino(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->dev != y->dev)
        return x->dev < y->dev ? -1 : 1;
    if (x->ino != y->ino)
        return x->ino < y->ino ? -1 : 1;
    return 0;
}

/* Marks (path = NULL) every entry whose inode has links outside the walk. */
static void drop_shared_links(struct walk *w)
{
    if (w->n > 1)
        qsort(w->v, w->n, sizeof *w->v, cmp_entry_ino);
    for (size_t i = 0; i < w->n;) {
        size_t j = i + 1;
        while (j < w->n && cmp_entry_ino(&w->v[i], &w->v[j]) == 0)
            j++;
        if (w->v[i].nlink != (nlink_t)(j - i)) {
            for (size_t k = i; k < j; k++) {
                free(w->v[k].path);
                w->v[k].path = NULL;
                w->skipped++;
            }
        }
        i = j;
    }
    size_t o = 0;
    for (size_t i = 0; i < w->n; i++)
        if (w->v[i].path)
            w->v[o++] = w->v[i];
    w->n = o;
}

int art_collect(int outfd, uint64_t max_files, uint64_t max_bytes, struct art_list *l)
{
    struct walk w = {.visit = list_visit, .paths = true};
    memset(l, 0, sizeof *l);
    int rc = walk_dir(&w, outfd, "", 0);
    if (rc < 0)
        goto out;
    drop_shared_links(&w);
    if (w.n > 1)
        qsort(w.v, w.n, sizeof *w.v, cmp_entry_path);
    l->skipped = w.skipped;
    if (w.n && !(l->v = calloc(w.n, sizeof *l->v))) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < w.n; i++) {
        struct entry *e = &w.v[i];
        if (max_files && l->n + 1 > max_files) {
            l->limit = "output_files";
            break;
        }
        if (max_bytes && l->bytes + e->size > max_bytes) {
            l->limit = "output_bytes";
            break;
        }
        cleanup_fd int fd = ws_open_beneath(outfd, e->path, O_RDONLY | O_NONBLOCK, 0);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_ino != e->ino) {
            l->skipped++; /* replaced since the walk: not what we listed */
            continue;
        }
        unsigned char head[ART_HEAD];
        size_t hn = art__read_head(fd, head, sizeof head);
        const char *base = strrchr(e->path, '/');
        const char *mime = art_mime(head, hn, base ? base + 1 : e->path);
        struct exec_artifact *a = &l->v[l->n];
        a->path = steal_pointer(&e->path);
        a->size = (uint64_t)st.st_size;
        a->mime = strdup(mime);
        a->summary = art_summary(fd, mime, (uint64_t)st.st_size);
        l->n++;
        l->bytes += a->size;
        if (!a->mime || !a->summary) {
            rc = -ENOMEM;
            goto out;
        }
    }
    rc = 0;
out:
    walk_free(&w);
    if (rc < 0)
        art_list_free(l);
    return rc;
}

/* ------------------------------------------------------------- snapshot */

/* Copies n bytes of in to out; copy_file_range first, read/write where the
 * kernel or the file systems refuse it. Returns the bytes copied or -errno. */
static int64_t copy_bytes(int in, int out, uint64_t n)
{
    uint64_t done = 0;
    bool plain = false;
    char buf[65536];
    while (done < n) {
        size_t want = n - done > (1u << 30) ? (1u << 30) : (size_t)(n - done);
        ssize_t r;
        if (!plain) {
            loff_t off_in = (loff_t)done, off_out = (loff_t)done;
            r = copy_file_range(in, &off_in, out, &off_out, want, 0);
            if (r < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP ||
                          errno == EPERM)) {
                plain = true;
                continue;
            }
        } else {
            r = pread(in, buf, want < sizeof buf ? want : sizeof buf, (off_t)done);
            if (r > 0) {
                int rc = util_write_all(out, buf, (size_t)r);
                if (rc < 0)
                    return rc;
            }
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break; /* the file shrank */
        done += (uint64_t)r;
    }
    return (int64_t)done;
}

/* Opens (creating) the directory of rel beneath dstfd; returns an fd and
 * sets *base to the last component. */
static int snapshot_parent(int dstfd, const char *rel, const char **base)
{
    char buf[ART_MAX_PATH + 1];
    if (strlen(rel) > ART_MAX_PATH)
        return -ENAMETOOLONG;
    strcpy(buf, rel);
    int cur = fcntl(dstfd, F_DUPFD_CLOEXEC, 0);
    if (cur < 0)
        return -errno;
    char *comp = buf;
    for (char *slash; (slash = strchr(comp, '/')); comp = slash + 1) {
        *slash = '\0';
        if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST) {
            int e = errno;
            close(cur);
            return -e;
        }
        int next = openat(cur, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        int e = errno;
        close(cur);
        if (next < 0)
            return -e;
        cur = next;
    }
    *base = rel + (comp - buf);
    return cur;
}

int art_snapshot(int outfd, struct art_list *l, int dstfd, char *err, size_t errlen)
{
    size_t o = 0;
    int rc = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct exec_artifact *a = &l->v[i];
        cleanup_fd int in = rc == 0 ? ws_open_beneath(outfd, a->path, O_RDONLY | O_NONBLOCK, 0) : -1;
        struct stat st;
        if (rc < 0 || in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode)) {
            if (rc == 0)
                l->skipped++; /* gone or replaced since the walk */
            free(a->path);
            free(a->mime);
            free(a->summary);
            continue;
        }
        const char *base = NULL;
        cleanup_fd int dir = snapshot_parent(dstfd, a->path, &base);
        cleanup_fd int out = dir >= 0 ? openat(dir, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)
                                      : dir;
        int64_t copied = out >= 0 ? copy_bytes(in, out, a->size) : -errno;
        if (out < 0 && dir < 0)
            copied = dir;
        if (copied >= 0 && close(steal_fd(&out)) < 0)
            copied = -errno;
        if (copied < 0) {
            rc = (int)copied;
            snprintf(err, errlen, "copying %s into the run directory: %s", a->path, strerror(-rc));
            free(a->path);
            free(a->mime);
            free(a->summary);
            continue;
        }
        l->bytes -= a->size - (uint64_t)copied;
        a->size = (uint64_t)copied;
        l->v[o++] = *a;
    }
    l->n = o;
    return rc;
}
