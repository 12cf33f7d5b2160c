/* art_zip.c: the zip of a run's artifacts (deflate), with libarchive
 * loaded on first use (art_archive.c), written under a temporary name and
 * renamed only when whole. */
#include "config.h"

#include "art_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art_archive.h"
#include "workspace.h"

int art_zip(int outfd, const struct art_list *l, int dirfd, const char *name, char *err, size_t errlen)
{
    char tmp[256];
    unsigned char rnd[6];
    char hex[13];
    const struct art_archive *z = art_archive_api("zip: ", err, errlen);
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
