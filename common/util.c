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

static enum log_format log_form = LOG_FORMAT_TEXT;

void log_set_format(enum log_format f)
{
    log_form = f;
}

bool log_json(void)
{
    return log_form == LOG_FORMAT_JSON;
}

void log_json_line(const char *object)
{
    int saved = errno;
    fprintf(stderr, "%s\n", object);
    errno = saved;
}

/* The wall clock as RFC 3339 in UTC, to the millisecond. */
static void log_time(char *out, size_t n)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t o = strftime(out, n, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(out + o, n - o, ".%03ldZ", ts.tv_nsec / 1000000);
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
    if (log_form == LOG_FORMAT_JSON) {
        /* The line holds printable ASCII only (above): " and \ are all
         * JSON wants escaped; the id is ours (hex, or "-"). */
        char js[sizeof line * 2], when[40];
        size_t j = 0;
        for (const char *p = line; *p; p++) {
            if (*p == '"' || *p == '\\')
                js[j++] = '\\';
            js[j++] = *p;
        }
        js[j] = '\0';
        log_time(when, sizeof when);
        fprintf(stderr, "{\"time\":\"%s\",\"level\":\"%s\",\"pid\":%ld,\"id\":\"%s\",\"msg\":\"%s\"}\n", when,
                names[lvl], (long)getpid(), log_id, js);
    } else {
        fprintf(stderr, "runmyscript[%ld] %s %s: %s\n", (long)getpid(), names[lvl], log_id, line);
    }
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

int util_grow(void **arrayp, size_t *cap, size_t n, size_t size, size_t first)
{
    if (n < *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : first ? first : 1;
    if (c <= n)
        c = n + 1; /* the doubling overflowed */
    if (size && c > SIZE_MAX / size)
        return -ENOMEM; /* before the allocator is asked for it */
    void *v = realloc(*arrayp, c * size);
    if (!v)
        return -ENOMEM;
    *arrayp = v;
    *cap = c;
    return 0;
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

/* util_write_file_atomic and util_write_file_published: the same
 * temporary name and rename, with or without the fsync before it. */
static int write_file_renamed(int dirfd, const char *name, const void *data, size_t n, mode_t mode, bool sync)
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
    if (rc == 0 && sync && fsync(fd) < 0)
        rc = -errno;
    if (close(fd) < 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
        rc = -errno;
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}

int util_write_file_atomic(int dirfd, const char *name, const void *data, size_t n, mode_t mode)
{
    return write_file_renamed(dirfd, name, data, n, mode, true);
}

int util_write_file_published(int dirfd, const char *name, const void *data, size_t n, mode_t mode)
{
    return write_file_renamed(dirfd, name, data, n, mode, false);
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

char *util_replace_all(const char *s, size_t n, const char *find, const char *with, size_t *out_len)
{
    size_t fn = strlen(find), wn = strlen(with);
    struct dbuf b;
    dbuf_init(&b, SIZE_MAX);
    size_t i = 0;
    while (fn && i + fn <= n) {
        const char *hit = memmem(s + i, n - i, find, fn);
        if (!hit)
            break;
        size_t at = (size_t)(hit - s);
        if (dbuf_append(&b, s + i, at - i) < 0 || dbuf_append(&b, with, wn) < 0)
            goto oom;
        i = at + fn;
    }
    if (dbuf_append(&b, s + i, n - i) < 0) /* allocates even for nothing: never NULL on success */
        goto oom;
    return dbuf_steal(&b, out_len);
oom:
    dbuf_free(&b);
    return NULL;
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

pid_t util_pidfd_pid(int pidfd)
{
    char path[64];
    cleanup_free char *info = NULL;
    size_t n;
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", pidfd);
    if (util_read_file_at(AT_FDCWD, path, 4096, &info, &n) < 0)
        return -1;
    const char *l = strstr(info, "\nPid:");
    return l ? (pid_t)atoi(l + 5) : -1;
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
