/* artifacts.c: walking output/ (art_collect, art_measure) and the
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

struct entry {
    char *path;
    dev_t dev;
    ino_t ino;
    nlink_t nlink;
    uint64_t size;
};

struct walk {
    struct entry *v;
    size_t n, cap;
    uint64_t skipped;
    uint64_t bytes;
    uint64_t stop_files, stop_bytes; /* measuring: stop early (0: never) */
    bool stopped;
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

/* Walks dirfd (borrowed) whose path relative to output/ is prefix ("" at the
 * top). keep_paths is false when only counting. */
static int walk_dir(struct walk *w, int dirfd, const char *prefix, int depth, bool keep_paths)
{
    cleanup_dir DIR *d = util_opendir_at(dirfd);
    if (!d)
        return -errno;
    struct dirent *de;
    while (!w->stopped && (de = readdir(d))) {
        const char *name = de->d_name;
        if (!strcmp(name, ".") || !strcmp(name, ".."))
            continue;
        char rel[ART_MAX_PATH + 1];
        int len = snprintf(rel, sizeof rel, "%s%s%s", prefix, *prefix ? "/" : "", name);
        if (len < 0 || (size_t)len >= sizeof rel) {
            w->skipped++;
            continue;
        }
        struct stat st;
        if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            if (errno == ENOENT)
                continue;
            return -errno;
        }
        if (S_ISDIR(st.st_mode)) {
            if (depth + 1 > ART_MAX_DEPTH) {
                w->skipped++;
                continue;
            }
            int sub = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0) {
                if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR || errno == EACCES) {
                    w->skipped++;
                    continue;
                }
                return -errno;
            }
            int rc = walk_dir(w, sub, rel, depth + 1, keep_paths);
            close(sub);
            if (rc < 0)
                return rc;
        } else if (S_ISREG(st.st_mode)) {
            int rc = walk_add(w, keep_paths ? rel : NULL, &st);
            if (rc < 0)
                return rc;
            if ((w->stop_files && w->n > w->stop_files) || (w->stop_bytes && w->bytes > w->stop_bytes))
                w->stopped = true;
        } else {
            w->skipped++; /* symlink, FIFO, socket, device */
        }
    }
    return 0;
}

int art_measure(int outfd, uint64_t stop_files, uint64_t stop_bytes, uint64_t *files, uint64_t *bytes)
{
    struct walk w = {.stop_files = stop_files, .stop_bytes = stop_bytes};
    int rc = walk_dir(&w, outfd, "", 0, false);
    *files = w.n;
    *bytes = w.bytes;
    walk_free(&w);
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
    struct walk w = {0};
    memset(l, 0, sizeof *l);
    int rc = walk_dir(&w, outfd, "", 0, true);
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
