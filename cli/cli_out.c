/* cli_out.c: --out for `runmyscript run`: checked before the run (so a bad
 * directory fails fast, not after a long run), then the artifacts and the
 * zip copied out of the state directory into OUT/RUNID/. */
#include "config.h"

#include "cli_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLI_OUT_MODE 0755

bool cli__dir_writable(const char *dir, char *err, size_t errlen)
{
    char p[PATH_MAX];
    snprintf(p, sizeof p, "%s", dir);
    for (;;) {
        struct stat st;
        if (stat(p, &st) == 0) {
            if (!S_ISDIR(st.st_mode)) {
                snprintf(err, errlen, "%.300s is not a directory", p);
                return false;
            }
            if (access(p, W_OK | X_OK) < 0) {
                int e = errno;
                snprintf(err, errlen, "%.300s is not writable: %s", p, strerror(e));
                return false;
            }
            return true;
        }
        if (errno != ENOENT) {
            int e = errno;
            snprintf(err, errlen, "%.300s: %s", p, strerror(e));
            return false;
        }
        char *slash = strrchr(p, '/');
        if (!slash) {
            if (access(".", W_OK | X_OK) == 0)
                return true;
            snprintf(err, errlen, ". is not writable");
            return false;
        }
        if (slash == p) {
            p[1] = '\0';
        } else {
            *slash = '\0';
        }
    }
}

/* Opens a directory for copying into or out of; -errno with it in err. */
static int open_dir(const char *path, int flags, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | flags);
    if (fd < 0) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", path, strerror(e));
        return -e;
    }
    return fd;
}

/* Copies the artifact rel (a path under the output directory ofd) to the
 * same path under dir (dfd), making its sub-directories first. */
static int copy_artifact(int ofd, const char *output_dir, int dfd, const char *dir, const char *rel, char *err,
                         size_t errlen)
{
    cleanup_free char *parent = strdup(rel);
    if (!parent)
        return -ENOMEM;
    char *slash = strrchr(parent, '/');
    int rc;
    if (slash) {
        *slash = '\0';
        cleanup_free char *full = NULL;
        if (asprintf(&full, "%s/%s", dir, parent) < 0)
            return -ENOMEM;
        rc = util_mkdir_p(full, CLI_OUT_MODE);
        if (rc < 0) {
            snprintf(err, errlen, "%s: %s", full, strerror(-rc));
            return rc;
        }
    }
    cleanup_fd int src = ws_open_beneath(ofd, rel, O_RDONLY, 0);
    if (src < 0) {
        snprintf(err, errlen, "%s/%s: %s", output_dir, rel, strerror(-src));
        return src;
    }
    unlinkat(dfd, rel, 0);
    rc = util_copy_fd(src, dfd, rel);
    if (rc < 0)
        snprintf(err, errlen, "%s/%s: %s", dir, rel, strerror(-rc));
    return rc;
}

int cli__copy_out(const struct result *r, const char *out, char **dest, char *err, size_t errlen)
{
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/%s", out, r->run_id) < 0)
        return -ENOMEM;
    int rc = util_mkdir_p(dir, CLI_OUT_MODE);
    if (rc < 0) {
        snprintf(err, errlen, "%s: %s", dir, strerror(-rc));
        return rc;
    }
    cleanup_fd int dfd = open_dir(dir, 0, err, errlen);
    if (dfd < 0)
        return dfd;
    cleanup_fd int ofd = open_dir(r->output_dir, O_NOFOLLOW, err, errlen);
    if (ofd < 0)
        return ofd;
    for (size_t i = 0; i < r->n_artifacts; i++) {
        rc = copy_artifact(ofd, r->output_dir, dfd, dir, r->artifacts[i].path, err, errlen);
        if (rc < 0)
            return rc;
    }
    if (r->has_zip) {
        unlinkat(dfd, CLI__ZIP_NAME, 0);
        rc = util_copy_file(AT_FDCWD, r->zip_path, dfd, CLI__ZIP_NAME);
        if (rc < 0) {
            snprintf(err, errlen, "%s/" CLI__ZIP_NAME ": %s", dir, strerror(-rc));
            return rc;
        }
    }
    *dest = steal_pointer(&dir);
    return 0;
}
