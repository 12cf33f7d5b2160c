/* util.c: the shared helpers declared in util.h. */
#include "config.h"

#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void util__free_ptr(void *p)
{
    free(*(void **)p);
}

void util__close_fd(int *fd)
{
    if (*fd >= 0) {
        int saved = errno;
        close(*fd);
        errno = saved;
        *fd = -1;
    }
}

void util__fclose(void *f)
{
    FILE **fp = f;
    if (*fp) {
        int saved = errno;
        fclose(*fp);
        errno = saved;
    }
}

void util__closedir(void *d)
{
    DIR **dp = d;
    if (*dp) {
        int saved = errno;
        closedir(*dp);
        errno = saved;
    }
}

/* ---------------------------------------------------------------- log */

static char log_id[80] = "-";
static enum log_level log_threshold = LOG_LVL_WARN;

void log_set_id(const char *id)
{
    snprintf(log_id, sizeof log_id, "%s", id ? id : "-");
}

void log_set_level(enum log_level lvl)
{
    log_threshold = lvl;
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    char raw[1024], line[1200];
    va_list ap;
    size_t o = 0;

    if (lvl > log_threshold)
        return;
    int saved = errno;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* Escape anything that is not printable ASCII: a client's bytes must not
     * forge a log line or a terminal escape. */
    for (const unsigned char *p = (const unsigned char *)raw; *p && o + 5 < sizeof line; p++) {
        if (*p >= 0x20 && *p < 0x7f && *p != '\\')
            line[o++] = (char)*p;
        else
            o += (size_t)snprintf(line + o, sizeof line - o, "\\x%02x", *p);
    }
    line[o] = '\0';
    fprintf(stderr, "runmyscript[%ld] %s %s: %s\n", (long)getpid(), names[lvl], log_id, line);
    errno = saved;
}

/* --------------------------------------------------------------- dbuf */

void dbuf_init(struct dbuf *b, size_t max)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

void dbuf_free(struct dbuf *b)
{
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int dbuf_append(struct dbuf *b, const void *p, size_t n)
{
    if (n > b->max || b->len > b->max - n)
        return -E2BIG;
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n + 1)
            cap *= 2;
        char *d = realloc(b->data, cap);
        if (!d)
            return -ENOMEM;
        b->data = d;
        b->cap = cap;
    }
    if (n)
        memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
    return 0;
}

int dbuf_printf(struct dbuf *b, const char *fmt, ...)
{
    va_list ap;
    char small[256];
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0)
        return -EINVAL;
    if ((size_t)n < sizeof small)
        return dbuf_append(b, small, (size_t)n);
    cleanup_free char *big = malloc((size_t)n + 1);
    if (!big)
        return -ENOMEM;
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    return dbuf_append(b, big, (size_t)n);
}

char *dbuf_steal(struct dbuf *b, size_t *len)
{
    char *d = b->data;
    if (len)
        *len = b->len;
    if (!d)
        d = calloc(1, 1);
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

/* ---------------------------------------------------------------- I/O */

int util_write_all(int fd, const void *buf, size_t n)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int util_read_exact(int fd, void *buf, size_t n)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            return -EPIPE;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int util_read_fd(int fd, size_t max, char **out, size_t *len)
{
    struct dbuf b;
    char chunk[16384];
    dbuf_init(&b, max);
    for (;;) {
        ssize_t r = read(fd, chunk, sizeof chunk);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int rc = -errno;
            dbuf_free(&b);
            return rc;
        }
        if (r == 0)
            break;
        int rc = dbuf_append(&b, chunk, (size_t)r);
        if (rc < 0) {
            dbuf_free(&b);
            return rc;
        }
    }
    *out = dbuf_steal(&b, len);
    return *out ? 0 : -ENOMEM;
}

int util_read_file_at(int dirfd, const char *path, size_t max, char **out, size_t *len)
{
    cleanup_fd int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    return util_read_fd(fd, max, out, len);
}

int util_write_file_atomic(int dirfd, const char *name, const void *data, size_t n, mode_t mode)
{
    char tmp[256];
    unsigned char rnd[6];
    char hex[13];
    int rc = util_random(rnd, sizeof rnd);
    if (rc < 0)
        return rc;
    util_hex(rnd, sizeof rnd, hex);
    if ((size_t)snprintf(tmp, sizeof tmp, ".%s.%s.tmp", name, hex) >= sizeof tmp)
        return -ENAMETOOLONG;
    int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    rc = util_write_all(fd, data, n);
    if (rc == 0 && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

int util_write_file_new(int dirfd, const char *name, const void *data, size_t n, mode_t mode)
{
    int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
    if (fd < 0)
        return -errno;
    int rc = util_write_all(fd, data, n);
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, name, 0);
    return rc;
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

int util_mkdir_p(const char *path, mode_t mode)
{
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return -ENAMETOOLONG;
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1; ; p++) {
        if (*p == '/' || *p == '\0') {
            char c = *p;
            *p = '\0';
            if (mkdir(buf, mode) < 0 && errno != EEXIST)
                return -errno;
            *p = c;
            if (c == '\0')
                break;
        }
    }
    struct stat st;
    if (stat(path, &st) < 0)
        return -errno;
    return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

int util_copy_fd(int in, int dst_dirfd, const char *dst)
{
    cleanup_fd int out = openat(dst_dirfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (out < 0)
        return -errno;
    char buf[65536];
    off_t off = 0;
    for (;;) {
        ssize_t r = pread(in, buf, sizeof buf, off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        if (r == 0)
            break;
        int rc = util_write_all(out, buf, (size_t)r);
        if (rc < 0)
            return rc;
        off += r;
    }
    int fd = steal_fd(&out);
    if (close(fd) < 0)
        return -errno;
    return 0;
}

int util_copy_file(int src_dirfd, const char *src, int dst_dirfd, const char *dst)
{
    cleanup_fd int in = openat(src_dirfd, src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (in < 0)
        return -errno;
    return util_copy_fd(in, dst_dirfd, dst);
}

DIR *util_opendir_at(int dirfd)
{
    int dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0)
        return NULL;
    DIR *d = fdopendir(dup);
    if (!d) {
        int e = errno;
        close(dup);
        errno = e;
        return NULL;
    }
    rewinddir(d);
    return d;
}

int util_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
        return -errno;
    return 0;
}

/* --------------------------------------------------------------- text */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return c ? 1 : 0;
    size_t len;
    uint32_t cp;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = (cp << 6) | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
        return 0;
    if (cp >= 0xd800 && cp <= 0xdfff)
        return 0;
    return len;
}

bool util_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0;
    while (i < n) {
        size_t l = utf8_seq(p + i, n - i);
        if (!l)
            return false;
        i += l;
    }
    return true;
}

char *util_utf8_sanitize(const char *s, size_t n, size_t *out_len)
{
    const unsigned char *p = (const unsigned char *)s;
    /* Worst case: every byte becomes the 3-byte U+FFFD. */
    if (n > (SIZE_MAX - 1) / 3)
        return NULL;
    char *out = malloc(n * 3 + 1);
    if (!out)
        return NULL;
    size_t o = 0, i = 0;
    while (i < n) {
        size_t l = utf8_seq(p + i, n - i);
        if (l) {
            memcpy(out + o, p + i, l);
            o += l;
            i += l;
        } else {
            memcpy(out + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    out[o] = '\0';
    if (out_len)
        *out_len = o;
    return out;
}

void util_hex(const unsigned char *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[p[i] >> 4];
        out[2 * i + 1] = digits[p[i] & 15];
    }
    out[2 * n] = '\0';
}

void util_human_size(uint64_t n, char *out, size_t outlen)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB"};
    if (n < 1024) {
        snprintf(out, outlen, "%llu B", (unsigned long long)n);
        return;
    }
    double v = (double)n / 1024.0;
    size_t u = 0;
    while (v >= 1024.0 && u + 1 < ARRAY_SIZE(units)) {
        v /= 1024.0;
        u++;
    }
    snprintf(out, outlen, "%.1f %s", v, units[u]);
}

/* --------------------------------------------------------------- time */

static int64_t clock_ms(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t util_now_ms(void)
{
    return clock_ms(CLOCK_MONOTONIC);
}

int64_t util_wall_ms(void)
{
    return clock_ms(CLOCK_REALTIME);
}

int util_random(void *buf, size_t n)
{
    unsigned char *p = buf;
    while (n > 0) {
        ssize_t r = getrandom(p, n, 0);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

int util_hide_argv(int argc, char **argv, int keep)
{
    if (argc <= keep)
        return 0;
    /* The kernel lays the words out one after the other; clear only what
     * is so laid out. */
    char *start = argv[keep], *end = argv[keep];
    for (int i = keep; i < argc; i++) {
        if (argv[i] != end)
            break;
        end += strlen(argv[i]) + 1;
    }
    for (int i = keep; i < argc; i++) {
        char *copy = strdup(argv[i]);
        if (!copy)
            return -ENOMEM;
        argv[i] = copy;
    }
    memset(start, 0, (size_t)(end - start));
    return 0;
}

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
