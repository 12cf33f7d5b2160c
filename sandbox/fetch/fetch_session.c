/* fetch_session.c: the transfers of a session: mount_file into the
 * workspace's mounts/ with the session's record (mounts.json, beside the
 * workspace where no script writes) that makes a repeated mount a no-op
 * and holds the session's mount_files and mount_bytes (and the whole
 * workspace to workspace_bytes and workspace_files, as its runs are), and
 * persist_artifact's upload of a file of output/. */
#include "config.h"

#include "fetch_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art.h"
#include "sha256.h"
#include "workspace.h"

#define FETCH_RECORD "mounts.json" /* in the session directory */
#define FETCH_LOCK "mounts.lock"

/* ------------------------------------------------------------- sessions */

void fetch_mount_free(struct fetch_mount *m)
{
    free(m->mounted_as);
    memset(m, 0, sizeof *m);
}

/* One entry of the record. */
struct rec_entry {
    const char *path, *url_sha256, *sha256, *mime;
    uint64_t bytes, ino;
    int64_t mtime_ns;
};

static uint64_t jint(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) ? (uint64_t)json_object_get_int64(v) : 0;
}

static const char *jstr(json_object *o, const char *k)
{
    json_object *v;
    return json_object_object_get_ex(o, k, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                            : NULL;
}

/* Reads the record (an empty one when there is none). Caller puts *root. */
static int record_read(int sfd, json_object **root, json_object **mounts)
{
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(sfd, FETCH_RECORD, FETCH_RECORD_MAX, &text, &len);
    json_object *r = NULL;
    if (rc == 0)
        r = json_tokener_parse(text);
    else if (rc != -ENOENT)
        return rc;
    if (!r || !json_object_is_type(r, json_type_object)) {
        /* Missing, or damaged (only we write it, atomically): start over;
         * the worst that follows is a download done again. */
        if (r)
            json_object_put(r);
        r = json_object_new_object();
        if (!r)
            return -ENOMEM;
    }
    json_object *m;
    if (!json_object_object_get_ex(r, "mounts", &m) || !json_object_is_type(m, json_type_array)) {
        m = json_object_new_array();
        if (!m) {
            json_object_put(r);
            return -ENOMEM;
        }
        json_object_object_add(r, "mounts", m);
    }
    *root = r;
    *mounts = m;
    return 0;
}

static int record_write(int sfd, json_object *root)
{
    size_t n;
    const char *s =
        json_object_to_json_string_length(root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
    if (!s)
        return -ENOMEM;
    if (n > FETCH_RECORD_MAX)
        return -EFBIG;
    return util_write_file_atomic(sfd, FETCH_RECORD, s, n, 0600);
}

/* The index of path's entry, or -1. */
static int record_find(json_object *mounts, const char *path)
{
    size_t n = json_object_array_length(mounts);
    for (size_t i = 0; i < n; i++) {
        const char *p = jstr(json_object_array_get_idx(mounts, i), "path");
        if (p && !strcmp(p, path))
            return (int)i;
    }
    return -1;
}

/* Bytes recorded for every path but skip. */
static uint64_t record_bytes_except(json_object *mounts, int skip)
{
    uint64_t sum = 0;
    size_t n = json_object_array_length(mounts);
    for (size_t i = 0; i < n; i++)
        if ((int)i != skip)
            sum += jint(json_object_array_get_idx(mounts, i), "bytes");
    return sum;
}

static int lock_session(int sfd)
{
    int fd = openat(sfd, FETCH_LOCK, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return -errno;
    while (flock(fd, LOCK_EX) < 0) {
        if (errno != EINTR) {
            int e = errno;
            close(fd);
            return -e;
        }
    }
    return fd;
}

/* Whether the file at mounts/path is still the one recorded. */
static bool still_there(int mfd, json_object *ent)
{
    const char *path = jstr(ent, "path");
    if (!path)
        return false;
    cleanup_fd int fd = ws_open_beneath(mfd, path, O_RDONLY | O_NONBLOCK, 0);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return false;
    int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    return (uint64_t)st.st_ino == jint(ent, "ino") && (uint64_t)st.st_size == jint(ent, "bytes") &&
           (uint64_t)mt == jint(ent, "mtime_ns");
}

static void url_digest(const char *url, char out[65])
{
    sha256_hex(url, strlen(url), out);
}

/* A mount in the making: what its steps share. */
struct mount_job {
    const struct fetch_config *cfg;
    const struct fetch_limits *l;
    const char *path;       /* mount_path, relative to mounts/ */
    char shown[512];        /* the URL, redacted */
    char udig[65];          /* the URL's SHA-256 */
    int sfd, wfd, mfd;      /* the session directory, workspace/, workspace/mounts/ (owned) */
};

static void mount_job_close(struct mount_job *j)
{
    if (j->sfd >= 0)
        close(j->sfd);
    if (j->wfd >= 0)
        close(j->wfd);
    if (j->mfd >= 0)
        close(j->mfd);
    j->sfd = j->wfd = j->mfd = -1;
}

/* Opens the session directory and its workspace/mounts/ (both made when
 * missing), and checks that mounts/ is the server's own. */
static int mount_open_dirs(struct mount_job *j, const char *session_dir, char *err, size_t errlen)
{
    j->sfd = open(session_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (j->sfd < 0) {
        int e = errno;
        snprintf(err, errlen, "mount %s: the session directory: %s", j->shown, strerror(e));
        return -e;
    }
    j->wfd = ws_open_dir(j->sfd, "workspace", true);
    j->mfd = j->wfd < 0 ? j->wfd : ws_mounts_open(j->wfd, true);
    if (j->wfd < 0 || j->mfd < 0) {
        int rc = j->wfd < 0 ? j->wfd : j->mfd;
        snprintf(err, errlen, "mount %s: %s: %s", j->shown, j->wfd < 0 ? "workspace/" : "workspace/" WS_MOUNTS_DIR "/",
                 rc == -ELOOP ? "a symlink or not a directory" : strerror(-rc));
        return rc;
    }
    /* mounts/ is made by the server (here, or before a session run) and
     * kept its own: one owned by anyone else was put there by a script (the
     * rlimits fallback as root lets a script rename the real one away), and
     * writing into it would hand the script our files to change. */
    struct stat mst;
    if (fstat(j->mfd, &mst) < 0 || mst.st_uid != geteuid()) {
        snprintf(err, errlen, "mount %s: workspace/mounts/ does not belong to the server (a script replaced it?)",
                 j->shown);
        return -EPERM;
    }
    return 0;
}

/* Takes the session's lock and reads its record (caller puts *root and
 * closes *lock, also on failure). */
static int mount_lock_record(struct mount_job *j, int *lock, json_object **root, json_object **mounts, char *err,
                             size_t errlen)
{
    *lock = lock_session(j->sfd);
    int rc = *lock < 0 ? *lock : record_read(j->sfd, root, mounts);
    if (rc < 0) {
        snprintf(err, errlen, "mount %s: the session's record: %s", j->shown, strerror(-rc));
        return rc;
    }
    return 0;
}

/* mount_files: whether a new path (idx < 0) may still be recorded. */
static int mount_files_left(const struct mount_job *j, json_object *mounts, int idx, char *err, size_t errlen)
{
    if (idx >= 0 || json_object_array_length(mounts) < j->l->mount_files)
        return 0;
    snprintf(err, errlen, "mount %s: the session already has %llu mounted files (mount_files)", j->shown,
             (unsigned long long)j->l->mount_files);
    return -EDQUOT;
}

/* workspace_bytes and workspace_files: the bytes the workspace still has
 * room for (*room), a file at the job's path (idx: its entry in the
 * record, or -1) counted as gone, since the mount replaces it; a new path
 * takes an inode per part of it. UINT64_MAX when unbounded. */
static int mount_ws_room(const struct mount_job *j, json_object *mounts, int idx, uint64_t *room, char *err,
                         size_t errlen)
{
    const struct fetch_config *c = j->cfg;
    *room = UINT64_MAX;
    if (!c->workspace_bytes && !c->workspace_files)
        return 0;
    struct art_tally t = {.all_inodes = true};
    int rc = art_measure_tree(j->wfd, &t, NULL, 0);
    if (rc < 0) {
        snprintf(err, errlen, "mount %s: the session's workspace cannot be measured (%s)", j->shown, strerror(-rc));
        return rc;
    }
    uint64_t old = idx >= 0 ? jint(json_object_array_get_idx(mounts, (size_t)idx), "bytes") : 0;
    uint64_t used = t.bytes > old ? t.bytes - old : 0, inodes = 1;
    for (const char *s = j->path; (s = strchr(s, '/')); s++)
        inodes++;
    if (c->workspace_files && idx < 0 && t.files + inodes > c->workspace_files) {
        snprintf(err, errlen, "mount %s: the session's workspace would pass workspace_files (%llu files)", j->shown,
                 (unsigned long long)c->workspace_files);
        return -EDQUOT;
    }
    if (c->workspace_bytes)
        *room = used >= c->workspace_bytes ? 0 : c->workspace_bytes - used;
    return 0;
}

/* Whether the record's entry ent is this URL's file, still in place; if so
 * out is filled from it. */
static bool mount_reuse(const struct mount_job *j, json_object *ent, struct fetch_mount *out)
{
    const char *u = jstr(ent, "url_sha256"), *sha = jstr(ent, "sha256"), *mime = jstr(ent, "mime");
    if (!j->udig[0] || !u || strcmp(u, j->udig) || !sha || strlen(sha) != 64 || !mime || !still_there(j->mfd, ent))
        return false;
    out->bytes = jint(ent, "bytes");
    memcpy(out->sha256, sha, 65);
    /* The MIME type again from the file (ws_mime returns a static string;
     * the record's is only a copy). */
    cleanup_fd int fd = ws_open_beneath(j->mfd, j->path, O_RDONLY | O_NONBLOCK, 0);
    unsigned char head[FETCH_HEAD];
    ssize_t n = fd >= 0 ? pread(fd, head, sizeof head, 0) : -1;
    out->mime = ws_mime(head, n > 0 ? (size_t)n : 0, j->path);
    out->reused = true;
    return true;
}

/* Phase 1, under the lock: is the file there already (1, out filled), and
 * else what may the download weigh (0, *max and *cap set)? */
static int mount_budget(struct mount_job *j, struct fetch_mount *out, uint64_t *max, const char **cap, char *err,
                        size_t errlen)
{
    json_object *root = NULL, *mounts;
    cleanup_fd int lock = -1;
    int rc = mount_lock_record(j, &lock, &root, &mounts, err, errlen);
    if (rc < 0)
        goto out;
    int idx = record_find(mounts, j->path);
    if (idx >= 0 && mount_reuse(j, json_object_array_get_idx(mounts, (size_t)idx), out)) {
        rc = 1;
        goto out;
    }
    rc = mount_files_left(j, mounts, idx, err, errlen);
    if (rc < 0)
        goto out;
    uint64_t others = record_bytes_except(mounts, idx), ws_room;
    uint64_t room = others >= j->l->mount_bytes ? 0 : j->l->mount_bytes - others;
    rc = mount_ws_room(j, mounts, idx, &ws_room, err, errlen);
    if (rc < 0)
        goto out;
    *max = j->l->fetch_bytes;
    *cap = "fetch_bytes";
    if (room < *max) {
        *max = room;
        *cap = "what is left of mount_bytes in this session";
    }
    if (ws_room < *max) {
        *max = ws_room;
        *cap = "what is left of workspace_bytes in the session's workspace";
    }
    if (*max == 0) {
        if (ws_room == 0)
            snprintf(err, errlen, "mount %s: the session's workspace would pass workspace_bytes", j->shown);
        else
            snprintf(err, errlen, "mount %s: the session's mounted files already fill mount_bytes", j->shown);
        rc = -EFBIG;
    }
out:
    if (root)
        json_object_put(root);
    return rc;
}

/* The record's entry for a published file (NULL on ENOMEM). */
static json_object *record_entry(const struct mount_job *j, const struct fetch_file *f, const struct stat *st)
{
    json_object *ent = json_object_new_object();
    if (!ent)
        return NULL;
    json_object_object_add(ent, "path", json_object_new_string(j->path));
    json_object_object_add(ent, "url", json_object_new_string(j->shown));
    json_object_object_add(ent, "url_sha256", json_object_new_string(j->udig));
    json_object_object_add(ent, "bytes", json_object_new_int64((int64_t)f->bytes));
    json_object_object_add(ent, "sha256", json_object_new_string(f->sha256));
    json_object_object_add(ent, "mime", json_object_new_string(f->mime));
    json_object_object_add(ent, "ino", json_object_new_int64((int64_t)st->st_ino));
    json_object_object_add(ent, "mtime_ns",
                           json_object_new_int64((int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec));
    return ent;
}

/* Phase 3, under the lock again: the limits still hold (another mount may
 * have landed meanwhile), then publish p and record it. */
static int mount_publish(struct mount_job *j, struct fetch_part *p, const struct fetch_file *f, char *err,
                         size_t errlen)
{
    json_object *root = NULL, *mounts;
    cleanup_fd int lock = -1;
    int rc = mount_lock_record(j, &lock, &root, &mounts, err, errlen);
    if (rc < 0)
        goto out;
    int idx = record_find(mounts, j->path);
    rc = mount_files_left(j, mounts, idx, err, errlen);
    if (rc < 0)
        goto out;
    if (record_bytes_except(mounts, idx) + f->bytes > j->l->mount_bytes) {
        char hs[32];
        util_human_size(j->l->mount_bytes, hs, sizeof hs);
        snprintf(err, errlen, "mount %s: the session's mounted files would pass mount_bytes (%s)", j->shown, hs);
        rc = -EFBIG;
        goto out;
    }
    /* The workspace, the downloaded part in it (so f->bytes are counted
     * already): another mount or a run may have filled it meanwhile. */
    uint64_t ws_room;
    rc = mount_ws_room(j, mounts, idx, &ws_room, err, errlen);
    if (rc < 0)
        goto out;
    if (ws_room == 0 && j->cfg->workspace_bytes) {
        snprintf(err, errlen, "mount %s: the session's workspace would pass workspace_bytes", j->shown);
        rc = -EFBIG;
        goto out;
    }
    struct stat st;
    if (fstat(p->fd, &st) < 0) {
        rc = -errno;
        snprintf(err, errlen, "mount %s: %s", j->shown, strerror(errno));
        goto out;
    }
    rc = fetch__part_publish(p, err, errlen);
    if (rc < 0)
        goto out;
    json_object *ent = record_entry(j, f, &st);
    if (!ent) {
        rc = -ENOMEM;
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (idx >= 0)
        json_object_array_put_idx(mounts, (size_t)idx, ent);
    else
        json_object_array_add(mounts, ent);
    rc = record_write(j->sfd, root);
    if (rc < 0)
        /* The file is in place and whole; without its record, the next
         * mount of it downloads it again. */
        snprintf(err, errlen, "mount %s: recording it: %s", j->shown, strerror(-rc));
out:
    if (root)
        json_object_put(root);
    return rc;
}

/* A local source: file:///PATH, PATH beneath src->root, opened with no
 * symlink followed beneath it. An fd, or -errno with the reason in err. */
static int open_local(const struct fetch_src *src, char *err, size_t errlen)
{
    const char *url = src->url, *root = src->root;
    if (!root || root[0] != '/') {
        snprintf(err, errlen, "mount %s: file:// URLs are not allowed here (mount_root is not set)", src->shown);
        return -EPERM;
    }
    if (strncmp(url, "file:///", 8) || strchr(url, '%') || strchr(url, '?') || strchr(url, '#')) {
        snprintf(err, errlen, "mount %s: a file URL is file:///PATH, an absolute path without %%, ? or #",
                 src->shown);
        return -EINVAL;
    }
    const char *path = url + 7;
    size_t rl = strlen(root);
    while (rl > 1 && root[rl - 1] == '/')
        rl--;
    const char *rel = path + rl + 1;
    if (strncmp(path, root, rl) || (rl > 1 && path[rl] != '/') || !ws_rel_path_ok(rl > 1 ? rel : path + 1)) {
        snprintf(err, errlen, "mount %s: not beneath mount_root (%.*s), or not a plain path (no '..', '.' or empty "
                              "parts)", src->shown, (int)rl, root);
        return -EPERM;
    }
    if (rl == 1)
        rel = path + 1;
    cleanup_fd int rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) {
        int e = errno;
        snprintf(err, errlen, "mount %s: mount_root: %s", src->shown, strerror(e));
        return -e;
    }
    int fd = ws_open_beneath(rfd, rel, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
    if (fd < 0) {
        snprintf(err, errlen, "mount %s: %s", src->shown,
                 fd == -ELOOP || fd == -EXDEV ? "a symlink on the way (none is followed beneath mount_root)"
                                              : strerror(-fd));
        return fd == -EXDEV ? -EPERM : fd;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        snprintf(err, errlen, "mount %s: not a regular file", src->shown);
        return -EINVAL;
    }
    return fd;
}

int fetch_mount_from(const struct fetch_config *cfg, const char *session_dir, struct fetch_src *src,
                     const char *mount_path, struct fetch_mount *out, char *err, size_t errlen)
{
    struct mount_job j = {.cfg = cfg, .l = &cfg->limits, .path = mount_path, .sfd = -1, .wfd = -1, .mfd = -1};
    struct fetch_part p = FETCH_PART_INIT;
    struct fetch_file f;
    uint64_t max = 0;
    const char *cap = NULL;
    cleanup_fd int in_fd = -1;
    int rc;

    memset(out, 0, sizeof *out);
    if (src->kind == FETCH_SRC_BYTES)
        snprintf(src->shown, sizeof src->shown, "the client's bytes");
    else
        fetch_url_redact(src->url, src->shown, sizeof src->shown);
    snprintf(j.shown, sizeof j.shown, "%s", src->shown);
    if (src->kind == FETCH_SRC_URL) {
        rc = fetch_url_check(src->url, err, errlen);
        if (rc < 0)
            return rc;
    }
    if (!ws_rel_path_ok(mount_path)) {
        /* The client's bytes have no source worth naming: say what to change. */
        if (src->kind == FETCH_SRC_BYTES)
            snprintf(err, errlen,
                     "the path '%.200s' is not inside mounts/: give a relative path such as 'data/sales.csv', "
                     "with no '..' or '.' parts, no empty parts and no leading '/'",
                     mount_path);
        else
            snprintf(err, errlen,
                     "mount %s: '%.200s' is not a safe relative path (no '..', '.', empty parts or leading '/')",
                     j.shown, mount_path);
        return -EINVAL;
    }
    if (src->kind == FETCH_SRC_LOCAL) {
        in_fd = open_local(src, err, errlen);
        if (in_fd < 0)
            return in_fd;
    }
    if (asprintf(&out->mounted_as, "%s/%s", WS_MOUNTS_DIR, mount_path) < 0) {
        out->mounted_as = NULL;
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    /* Only a URL's file may be found in place again: bytes and a local
     * file may have changed since. */
    if (src->kind == FETCH_SRC_URL)
        url_digest(src->url, j.udig);

    rc = mount_open_dirs(&j, session_dir, err, errlen);
    if (rc < 0)
        goto out;
    rc = mount_budget(&j, out, &max, &cap, err, errlen);
    if (rc != 0) {
        rc = rc > 0 ? 0 : rc; /* reused: nothing to fetch */
        goto out;
    }
    /* Phase 2, unlocked: the bytes, into a temporary file of their own.
     * 0444: a mounted file is read-only, to scripts of the fallback too. */
    if (src->kind == FETCH_SRC_URL)
        rc = fetch__download_part(cfg, src->url, j.mfd, mount_path, 0444, max, cap, &p, &f, err, errlen);
    else
        rc = fetch__copy_part(src, in_fd, j.mfd, mount_path, 0444, max, cap, &p, &f, err, errlen);
    if (rc < 0)
        goto out;
    rc = mount_publish(&j, &p, &f, err, errlen);
    if (rc < 0)
        goto out;
    out->bytes = f.bytes;
    memcpy(out->sha256, f.sha256, sizeof out->sha256);
    out->mime = f.mime;
out:
    fetch__part_discard(&p);
    mount_job_close(&j);
    if (rc < 0)
        fetch_mount_free(out);
    return rc;
}

int fetch_mount(const struct fetch_config *cfg, const char *session_dir, const char *url, const char *mount_path,
                struct fetch_mount *out, char *err, size_t errlen)
{
    struct fetch_src src = {.kind = FETCH_SRC_URL, .url = url};
    return fetch_mount_from(cfg, session_dir, &src, mount_path, out, err, errlen);
}

int fetch_persist(const struct fetch_config *cfg, const char *session_dir, const char *relative_path, const char *url,
                  struct fetch_upload_result *out, char *err, size_t errlen)
{
    char shown[512];
    memset(out, 0, sizeof *out);
    fetch_url_redact(url, shown, sizeof shown);
    cleanup_fd int sfd = open(session_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0) {
        int e = errno;
        snprintf(err, errlen, "upload %s: the session directory: %s", shown, strerror(e));
        return -e;
    }
    cleanup_fd int wfd = ws_open_dir(sfd, "workspace", false);
    cleanup_fd int ofd = wfd < 0 ? -1 : ws_open_dir(wfd, "output", false);
    if (wfd < 0 || ofd < 0) {
        int rc = wfd < 0 ? wfd : ofd;
        if (rc == -1)
            rc = -ENOENT;
        snprintf(err, errlen, "upload %s: the session's output/: %s", shown,
                 rc == -ELOOP ? "a symlink or not a directory" : strerror(-rc));
        return rc;
    }
    return fetch_upload(cfg, url, ofd, relative_path, out, err, errlen);
}
