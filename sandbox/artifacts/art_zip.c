/* art_zip.c: the zip of a run's artifacts (deflate), with libarchive
 * loaded on first use, written under a temporary name and renamed only
 * when whole. */
#include "config.h"

#include "art_internal.h"

#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "workspace.h"

/* libarchive is loaded on first use. Linked the usual way, it and what it
 * pulls in (libxml2, ICU, lzma, ...) cost about 5 ms at every start of the
 * program, more than all the rest of a CLI run's overhead; this way only
 * runs that make a zip pay, once per process. */
#define ARCHIVE_FUNCS(X)                                                                            \
    X(archive_write_new) X(archive_write_free) X(archive_write_set_format_zip)                     \
    X(archive_write_set_format_option) X(archive_write_open_fd) X(archive_write_header)            \
    X(archive_write_data) X(archive_write_close) X(archive_error_string) X(archive_entry_new)      \
    X(archive_entry_free) X(archive_entry_clear) X(archive_entry_set_pathname)                     \
    X(archive_entry_set_filetype) X(archive_entry_set_perm) X(archive_entry_set_size)              \
    X(archive_entry_set_mtime)

struct archive_api {
#define X(f) __typeof__(f) *f;
    ARCHIVE_FUNCS(X)
#undef X
};

static const struct archive_api *archive_api(char *err, size_t errlen)
{
    static struct archive_api api;
    static bool loaded;
    if (loaded)
        return &api;
    void *h = dlopen(LIBARCHIVE_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(err, errlen, "zip: cannot load %s: %s", LIBARCHIVE_SONAME, dlerror());
        return NULL;
    }
#define X(f)                                                                     \
    if (!(*(void **)&api.f = dlsym(h, #f))) {                                    \
        snprintf(err, errlen, "zip: %s lacks %s", LIBARCHIVE_SONAME, #f);        \
        return NULL;                                                             \
    }
    ARCHIVE_FUNCS(X)
#undef X
    loaded = true;
    return &api;
}

int art_zip(int outfd, const struct art_list *l, int dirfd, const char *name, char *err, size_t errlen)
{
    char tmp[256];
    unsigned char rnd[6];
    char hex[13];
    const struct archive_api *z = archive_api(err, errlen);
    if (!z)
        return -ENOSYS;
    int rc = util_random(rnd, sizeof rnd);
    if (rc < 0)
        return rc;
    util_hex(rnd, sizeof rnd, hex);
    snprintf(tmp, sizeof tmp, ".%s.%s.tmp", name, hex);

    int zfd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (zfd < 0) {
        rc = -errno;
        snprintf(err, errlen, "creating the zip: %s", strerror(errno));
        return rc;
    }
    struct archive *a = z->archive_write_new();
    struct archive_entry *e = z->archive_entry_new();
    if (!a || !e) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (z->archive_write_set_format_zip(a) != ARCHIVE_OK ||
        z->archive_write_set_format_option(a, "zip", "compression", "deflate") != ARCHIVE_OK ||
        z->archive_write_open_fd(a, zfd) != ARCHIVE_OK) {
        rc = -EIO;
        snprintf(err, errlen, "zip: %s", z->archive_error_string(a));
        goto out;
    }
    for (size_t i = 0; i < l->n; i++) {
        const struct exec_artifact *art = &l->v[i];
        cleanup_fd int fd = ws_open_beneath(outfd, art->path, O_RDONLY | O_NONBLOCK, 0);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            rc = fd < 0 ? fd : -EIO;
            snprintf(err, errlen, "zip: cannot read %s: %s", art->path, strerror(-rc));
            goto out;
        }
        z->archive_entry_clear(e);
        z->archive_entry_set_pathname(e, art->path);
        z->archive_entry_set_filetype(e, AE_IFREG);
        z->archive_entry_set_perm(e, 0644);
        z->archive_entry_set_size(e, st.st_size);
        z->archive_entry_set_mtime(e, st.st_mtim.tv_sec, 0);
        if (z->archive_write_header(a, e) != ARCHIVE_OK) {
            rc = -EIO;
            snprintf(err, errlen, "zip: %s", z->archive_error_string(a));
            goto out;
        }
        char buf[65536];
        int64_t left = st.st_size;
        while (left > 0) {
            ssize_t r = read(fd, buf, sizeof buf);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                rc = r < 0 ? -errno : -EIO;
                snprintf(err, errlen, "zip: reading %s: %s", art->path, r < 0 ? strerror(errno) : "file shrank");
                goto out;
            }
            if (r > left)
                r = (ssize_t)left; /* the file grew: take what was listed */
            if (z->archive_write_data(a, buf, (size_t)r) != r) {
                rc = -EIO;
                snprintf(err, errlen, "zip: %s", z->archive_error_string(a));
                goto out;
            }
            left -= r;
        }
    }
    if (z->archive_write_close(a) != ARCHIVE_OK) {
        rc = -EIO;
        snprintf(err, errlen, "zip: %s", z->archive_error_string(a));
        goto out;
    }
    if (fsync(zfd) < 0) {
        rc = -errno;
        snprintf(err, errlen, "zip: fsync: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    if (e)
        z->archive_entry_free(e);
    if (a)
        z->archive_write_free(a);
    if (close(zfd) < 0 && rc == 0) {
        rc = -errno;
        snprintf(err, errlen, "zip: close: %s", strerror(errno));
    }
    if (rc == 0 && renameat(dirfd, tmp, dirfd, name) < 0) {
        rc = -errno;
        snprintf(err, errlen, "zip: rename: %s", strerror(errno));
    }
    if (rc < 0)
        unlinkat(dirfd, tmp, 0);
    return rc;
}
