/* art_zip.c: the zip of a run's artifacts (deflate), with libarchive
 * loaded on first use (art_archive.c), written under a temporary name and
 * renamed only when whole. Entry names are made safe for every unzip tool
 * (zip_name): a name that is one file on Linux must not be a path
 * elsewhere. */
#include "config.h"

#include "art_internal.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art_archive.h"
#include "sha256.h"
#include "workspace.h"

/* Whether byte c of a component, at its end or not, is one a Windows tool
 * reads otherwise than Linux: a separator or a drive ('\\', ':'), a
 * control character, or a '.' or ' ' that ends the component (Windows
 * drops them: "..." and ".. " would name the parent). */
static bool zip_bad(unsigned char c, bool end)
{
    return c < 0x20 || c == 0x7f || c == '\\' || c == ':' || (end && (c == '.' || c == ' '));
}

/* The entry name of an artifact's path, into out (caller frees): each
 * component that has a bad byte gets '_' for it, and "~" and 8 hex digits
 * of the SHA-256 of the component as it was, before its extension, so that
 * two names made alike ("a\\b" and "a:b") stay two entries and none is
 * taken for a name that had nothing to change. The other components, and
 * the listing and the URLs, keep the real name. NULL on ENOMEM. */
static char *zip_name(const char *path)
{
    struct dbuf b;
    dbuf_init(&b, SIZE_MAX);
    for (const char *comp = path; comp;) {
        const char *slash = strchr(comp, '/');
        size_t n = slash ? (size_t)(slash - comp) : strlen(comp);
        bool changed = false;
        for (size_t i = 0; i < n; i++)
            changed = changed || zip_bad((unsigned char)comp[i], i + 1 == n);
        size_t dot = n;
        if (changed) { /* the extension, when a plain one ends the name */
            for (size_t i = n; i-- > 1 && n - i <= 10;)
                if (comp[i] == '.') {
                    dot = i;
                    break;
                } else if (!isalnum((unsigned char)comp[i])) {
                    break;
                }
            if (dot == n - 1)
                dot = n; /* a trailing dot is no extension */
        }
        int rc = 0;
        for (size_t i = 0; i < n && rc == 0; i++) {
            if (changed && i == dot) {
                char hex[65];
                sha256_hex(comp, n, hex);
                rc = dbuf_printf(&b, "~%.8s", hex);
            }
            char c = zip_bad((unsigned char)comp[i], i + 1 == n) ? '_' : comp[i];
            rc = rc ? rc : dbuf_append(&b, &c, 1);
        }
        if (rc == 0 && changed && dot == n) {
            char hex[65];
            sha256_hex(comp, n, hex);
            rc = dbuf_printf(&b, "~%.8s", hex);
        }
        if (rc == 0 && slash)
            rc = dbuf_append(&b, "/", 1);
        if (rc < 0) {
            dbuf_free(&b);
            return NULL;
        }
        comp = slash ? slash + 1 : NULL;
    }
    return dbuf_steal(&b, NULL);
}

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
        const struct result_artifact *art = &l->v[i];
        cleanup_fd int fd = ws_open_beneath(outfd, art->path, O_RDONLY | O_NONBLOCK, 0);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
            rc = fd < 0 ? fd : -EIO;
            snprintf(err, errlen, "zip: cannot read %s: %s", art->path, strerror(-rc));
            goto out;
        }
        cleanup_free char *entry = zip_name(art->path);
        if (!entry) {
            rc = -ENOMEM;
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        z->archive_entry_clear(e);
        z->archive_entry_set_pathname(e, entry);
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
