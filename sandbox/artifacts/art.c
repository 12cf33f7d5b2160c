/* art.c: the one walk of a tree the executor has: listing output/
 * (art_collect), measuring output/ or a whole workspace (art_measure,
 * art_measure_tree) and pruning what a run left (art_prune); and the
 * snapshot of a session run's files. The MIME types and summaries are in
 * art_mime.c, the zip in art_zip.c.
 *
 * The walk (util_walk_at) opens every directory with O_NOFOLLOW relative
 * to its parent, so a symlink anywhere is seen as a symlink and skipped,
 * never followed. A regular file is an artifact unless it has hard links outside
 * output/: its link count must equal the number of names the walk found for
 * it, or a script could link /etc/shadow (or another run's file) into its
 * output and have us hand it out. */
#include "config.h"

#include "art_internal.h"

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
 * tree (art_measure, art_measure_tree) and pruning one (art_prune), each
 * util_walk_at over the directory it is given (its entries are depth 1),
 * one directory open at a time however deep the tree goes. The job's
 * callbacks decide, entry by entry, whether to go into a directory. */
#define ART_WALK_PASSES 4 /* walks of a tree a running script moved a directory of under the walk */
#define ART_PARTS_MAX 8   /* parts of a measured tree */

struct entry {
    char *path;
    dev_t dev;
    ino_t ino;
    nlink_t nlink;
    uint64_t size;
};

struct walk {
    struct util_walk uw;      /* its ctx is this walk */
    /* listing */
    struct entry *v;
    size_t n, cap;
    uint64_t skipped;
    uint64_t bytes;
    uint64_t stop_files, stop_bytes; /* art_measure: stop early (0: never) */
    /* measuring a tree: the tallies as they were before the walk, and the
     * parts the current entry lies in, innermost last */
    struct art_tally *total, saved_total, saved[ART_PARTS_MAX];
    const struct art_part *parts;
    size_t n_parts, n_scope;
    struct {
        int depth;
        struct art_tally *t;
    } scope[ART_PARTS_MAX];
    /* pruning */
    struct art_prune *prune;
};

static int walk_add(struct walk *w, const char *path, const struct stat *st)
{
    if (UTIL_GROW(w->v, w->n, w->cap, 32) < 0)
        return -ENOMEM;
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
    w->v = NULL;
    w->n = w->cap = 0;
}

/* A directory that could not be opened: gone or replaced since its stat
 * (not a directory to walk), or shut to a listing, is passed over. A
 * directory of ours that its mode shuts (a script's chmod 000, which the
 * server's own uid shares in the unprivileged modes) was opened anyway
 * when the walk fixes modes: what it holds must be measured and removed. */
static int walk_fail(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx)
{
    struct walk *w = ctx;
    (void)dirfd, (void)name, (void)st, (void)depth;
    if (err == -ENOENT || err == -ELOOP || err == -ENOTDIR || err == -ESTALE ||
        (err == -EACCES && !(w->uw.flags & UTIL_WALK_FIX_MODES))) {
        w->skipped++;
        return 0;
    }
    return err;
}

/* Walks the directory open at dirfd with w's job; again from the start
 * when a running script moved a directory under the walk (-ESTALE),
 * reset (may be NULL) first putting the job's state back. */
static int walk_run(int dirfd, struct walk *w, void (*reset)(struct walk *w))
{
    int rc = 0;
    w->uw.ctx = w;
    w->uw.fail = walk_fail;
    for (int pass = 0; pass < ART_WALK_PASSES; pass++) {
        if (pass && reset)
            reset(w);
        if ((rc = util_walk_at(dirfd, "", &w->uw)) != -ESTALE)
            break;
    }
    return rc;
}

/* Listing and art_measure: regular files, directories to ART_MAX_DEPTH. */
static int list_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct walk *w = ctx;
    bool paths = w->uw.flags & UTIL_WALK_PATHS;
    (void)dirfd, (void)name;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    if (paths && strlen(w->uw.path) > ART_MAX_PATH) {
        w->skipped++;
        return UTIL_WALK_SKIP;
    }
    if (S_ISDIR(st->st_mode)) {
        if (depth > ART_MAX_DEPTH) {
            w->skipped++;
            return UTIL_WALK_SKIP;
        }
        return UTIL_WALK_NEXT;
    }
    if (!S_ISREG(st->st_mode)) {
        w->skipped++; /* symlink, FIFO, socket, device */
        return UTIL_WALK_NEXT;
    }
    if (!paths) {
        /* Counting only: nothing to keep. */
        w->n++;
        w->bytes += (uint64_t)st->st_size;
    } else {
        int rc = walk_add(w, w->uw.path, st);
        if (rc < 0)
            return rc;
    }
    if ((w->stop_files && w->n > w->stop_files) || (w->stop_bytes && w->bytes > w->stop_bytes))
        return UTIL_WALK_STOP;
    return UTIL_WALK_NEXT;
}

static void list_reset(struct walk *w)
{
    if (w->uw.flags & UTIL_WALK_PATHS)
        walk_free(w);
    w->n = 0;
    w->bytes = w->skipped = 0;
}

int art_measure(int outfd, uint64_t stop_files, uint64_t stop_bytes, uint64_t *files, uint64_t *bytes)
{
    struct walk w = {.uw = {.pre = list_pre}, .stop_files = stop_files, .stop_bytes = stop_bytes};
    int rc = walk_run(outfd, &w, list_reset);
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
        if (p->name ? depth == 1 && !strcmp(p->name, name)
                    : S_ISDIR(st->st_mode) && st->st_dev == p->dev && st->st_ino == p->ino)
            return p;
    }
    return NULL;
}

static int tally_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct walk *w = ctx;
    (void)dirfd;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    /* Out of the parts whose directories the walk has left. */
    while (w->n_scope && w->scope[w->n_scope - 1].depth >= depth)
        w->n_scope--;
    const struct art_part *p = part_of(w, name, st, depth);
    struct art_tally *t = p ? p->t : w->n_scope ? w->scope[w->n_scope - 1].t : NULL;
    tally_add(w->total, st);
    if (t)
        tally_add(t, st);
    if (art_tally_over(w->total) || (t && art_tally_over(t)))
        return UTIL_WALK_STOP;
    if (p && S_ISDIR(st->st_mode) && w->n_scope < ART_PARTS_MAX)
        w->scope[w->n_scope++] = (typeof(w->scope[0])){depth, p->t};
    return UTIL_WALK_NEXT;
}

static void tally_reset(struct walk *w)
{
    *w->total = w->saved_total;
    for (size_t i = 0; i < w->n_parts; i++)
        *w->parts[i].t = w->saved[i];
    w->n_scope = 0;
}

int art_measure_tree(int dirfd, struct art_tally *total, const struct art_part *parts, size_t n_parts)
{
    struct walk w = {.uw = {.pre = tally_pre, .flags = UTIL_WALK_FIX_MODES}, .total = total, .saved_total = *total,
                     .parts = parts, .n_parts = n_parts};
    if (n_parts > ART_PARTS_MAX)
        return -EINVAL;
    for (size_t i = 0; i < n_parts; i++)
        w.saved[i] = *parts[i].t;
    return walk_run(dirfd, &w, tally_reset);
}

/* ------------------------------------------------------------- pruning */

/* Removes a file, making the directory writable first when its mode (a
 * script's chmod) is what refuses. */
static int prune_unlink(const struct art_prune *p, int dirfd, const char *name, int flags)
{
    if (unlinkat(dirfd, name, flags) == 0 || errno == ENOENT)
        return 0;
    if (errno == EACCES && fchmod(dirfd, 0700) == 0 && unlinkat(dirfd, name, flags) == 0)
        return 0;
    if (flags == AT_REMOVEDIR && (errno == ENOTEMPTY || errno == EEXIST) && (p->has_since || p->listed))
        return 0; /* it holds files that stay */
    return -errno;
}

static int cmp_listed(const void *key, const void *elem)
{
    return strcmp(key, ((const struct result_artifact *)elem)->path);
}

static bool after(const struct timespec *t, const struct timespec *since)
{
    return t->tv_sec > since->tv_sec || (t->tv_sec == since->tv_sec && t->tv_nsec > since->tv_nsec);
}

/* Files as they are met; a directory's ctime moves whenever an entry
 * comes or goes: it is walked, and removed after when it is empty and was
 * made after since (prune_post). */
static int prune_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct walk *w = ctx;
    struct art_prune *p = w->prune;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    for (size_t i = 0; depth == 1 && p->keep && p->keep[i]; i++)
        if (!strcmp(p->keep[i], name))
            return UTIL_WALK_SKIP;
    if (S_ISDIR(st->st_mode))
        return UTIL_WALK_NEXT;
    /* A file's ctime moves with every write, chmod, link or rename. */
    if (p->has_since && !after(&st->st_ctim, &p->since))
        return UTIL_WALK_NEXT;
    /* A path past ART_MAX_PATH is no artifact's: it goes. */
    if (p->listed && S_ISREG(st->st_mode) && strlen(w->uw.path) <= ART_MAX_PATH &&
        bsearch(w->uw.path, p->listed, p->n_listed, sizeof *p->listed, cmp_listed))
        return UTIL_WALK_NEXT;
    int rc = prune_unlink(p, dirfd, name, 0);
    if (rc == 0) {
        p->files++;
        p->bytes += (uint64_t)st->st_size;
    }
    return rc;
}

static int prune_post(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct walk *w = ctx;
    struct art_prune *p = w->prune;
    (void)st;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    if (p->has_since) {
        /* Its birth time says whether it is new; where the file system
         * keeps none, its ctime (an older directory emptied goes too). */
        struct statx stx;
        if (statx(dirfd, name, AT_SYMLINK_NOFOLLOW, STATX_BTIME | STATX_CTIME, &stx) < 0)
            return errno == ENOENT ? 0 : -errno;
        const struct statx_timestamp *t = (stx.stx_mask & STATX_BTIME) ? &stx.stx_btime : &stx.stx_ctime;
        struct timespec ts = {(time_t)t->tv_sec, (long)t->tv_nsec};
        if (!after(&ts, &p->since))
            return 0;
    }
    int rc = prune_unlink(p, dirfd, name, AT_REMOVEDIR);
    if (rc == 0)
        p->files++;
    return rc;
}

int art_prune(int dirfd, struct art_prune *p)
{
    struct walk w = {.uw = {.pre = prune_pre,
                            .post = prune_post,
                            .flags = UTIL_WALK_FIX_MODES | (p->listed ? UTIL_WALK_PATHS : 0)},
                     .prune = p};
    /* Walked again, what was removed is not met again. */
    return walk_run(dirfd, &w, NULL);
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
    struct walk w = {.uw = {.pre = list_pre, .flags = UTIL_WALK_PATHS}};
    memset(l, 0, sizeof *l);
    int rc = walk_run(outfd, &w, list_reset);
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
        const char *mime = ws_mime(head, hn, base ? base + 1 : e->path);
        struct result_artifact *a = &l->v[l->n];
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

int art_snapshot(int outfd, struct art_list *l, int dstfd, char *err, size_t errlen)
{
    size_t o = 0;
    int rc = 0;
    for (size_t i = 0; i < l->n; i++) {
        struct result_artifact *a = &l->v[i];
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
        /* The directory of the copy, made beneath dstfd as needed. */
        const char *base = NULL;
        cleanup_fd int dir = strlen(a->path) > ART_MAX_PATH ? -ENAMETOOLONG
                                                             : ws_open_parent(dstfd, a->path, true, &base, NULL);
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
