/* workspace.c: run directories, ids, path safety (the directories of a
 * path opened beneath a descriptor, following no symlink) and reaping. */
#include "config.h"

#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WS_CREATE_TRIES 4 /* fresh random ids tried for a new run directory */

#ifdef HAVE_LINUX_OPENAT2_H
#include <linux/openat2.h>
#endif

static bool node_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
}

static bool hex_char(char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool ws_node_valid(const char *s)
{
    size_t i;
    for (i = 0; s[i]; i++)
        if (i >= WS_NODE_MAX || !node_char(s[i]))
            return false;
    return i > 0;
}

int ws_new_id(const char *node, char out[WS_ID_MAX + 1])
{
    unsigned char raw[WS_ID_LEN / 2];
    size_t off = 0;
    if (node) {
        if (!ws_node_valid(node))
            return -EINVAL;
        off = strlen(node);
        memcpy(out, node, off);
        out[off++] = '-';
    }
    int rc = util_random(raw, sizeof raw);
    if (rc < 0)
        return rc;
    util_hex(raw, sizeof raw, out + off);
    return 0;
}

/* The length of an id at the start of s, which ends where s[len] is one
 * of the bytes in ends (or NUL); 0 when it is no id. Never reads past the
 * end of the id plus one byte. */
static size_t id_span(const char *s, const char *ends)
{
    size_t node = 0;
    while (node <= WS_ID_LEN && node_char(s[node]))
        node++;
    size_t hex = 0;
    if (s[node] == '-' && node >= 1 && node <= WS_NODE_MAX)
        hex = node + 1; /* NODE-HEX */
    else if (node != WS_ID_LEN)
        return 0;       /* HEX alone: 32 of them, nothing else */
    for (size_t i = hex; i < hex + WS_ID_LEN; i++)
        if (!hex_char(s[i]))
            return 0;
    size_t len = hex + WS_ID_LEN;
    if (s[len] != '\0' && !strchr(ends, s[len]))
        return 0;
    return len;
}

bool ws_id_valid(const char *s)
{
    return id_span(s, "") > 0;
}

size_t ws_id_prefix(const char *s)
{
    return id_span(s, "/.");
}

int ws_init_state(const char *state_dir)
{
    /* runs/ and sessions/ can be passed through (a run in the fallback, as
     * another uid, reaches its own directory) but not listed: their ids are
     * the capabilities. cache/ too: the jail's init, as an unprivileged uid,
     * makes the installer's bind targets at the same paths, through the
     * host's /usr when the state directory is below it; what it holds is
     * 0700. */
    static const struct {
        const char *name;
        mode_t mode;
    } subs[] = {{"runs", 0711}, {"sessions", 0711}, {"envs", 0755}, {"cache", 0711}};
    int rc = util_mkdir_p(state_dir, 0755);
    if (rc < 0)
        return rc;
    cleanup_fd int dfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    for (size_t i = 0; i < ARRAY_SIZE(subs); i++) {
        if (mkdirat(dfd, subs[i].name, subs[i].mode) == 0)
            continue;
        if (errno != EEXIST)
            return -errno;
        /* A state directory made by an older version: tighten it. */
        struct stat st;
        if (fstatat(dfd, subs[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
            st.st_uid == geteuid() && (st.st_mode & 07777) != subs[i].mode)
            discard(fchmodat(dfd, subs[i].name, subs[i].mode, 0)); /* best effort */
    }
    return 0;
}

/* dir writable and searchable by us, on a read-write mount: 0 or -errno. */
static int dir_usable(const char *dir)
{
    struct statvfs vfs;
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
        return -errno;
    if (statvfs(dir, &vfs) == 0 && (vfs.f_flag & ST_RDONLY))
        return -EROFS;
    return 0;
}

int ws_state_check(const char *state_dir, char *err, size_t errlen)
{
    static const char *const subs[] = {"runs", "sessions", "envs", "cache", "store", "workspaces", "tasks"};
    struct stat st;
    char path[PATH_MAX];
    int rc;
    if (stat(state_dir, &st) < 0) {
        if (errno != ENOENT) {
            rc = -errno;
            snprintf(err, errlen, "the state directory %s: %s", state_dir, strerror(-rc));
            return rc;
        }
        /* Not made yet: the nearest ancestor that exists must let us make it. */
        snprintf(path, sizeof path, "%s", state_dir);
        char *slash;
        while ((slash = strrchr(path, '/')) && slash != path) {
            *slash = '\0';
            if (stat(path, &st) == 0)
                break;
        }
        if (slash == path)
            snprintf(path, sizeof path, "/");
        rc = dir_usable(path);
        if (rc < 0)
            snprintf(err, errlen, "the state directory %s does not exist and uid %u cannot make it (%s: %s)",
                     state_dir, (unsigned)geteuid(), path, strerror(-rc));
        return rc;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "the state directory %s is not a directory", state_dir);
        return -ENOTDIR;
    }
    const char *bad = state_dir;
    rc = dir_usable(state_dir);
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(subs); i++) {
        snprintf(path, sizeof path, "%s/%s", state_dir, subs[i]);
        if (lstat(path, &st) == 0 && (rc = dir_usable(path)) < 0)
            bad = path;
    }
    if (rc < 0)
        snprintf(err, errlen, "%s is not writable by uid %u, which serves this (%s): runs cannot start", bad,
                 (unsigned)geteuid(), strerror(-rc));
    return rc;
}

char *ws_run_path(const char *state_dir, const char *id)
{
    char *p;
    if (!ws_id_valid(id)) {
        errno = EINVAL;
        return NULL;
    }
    if (asprintf(&p, "%s/runs/%s", state_dir, id) < 0)
        return NULL;
    return p;
}

int ws_run_create(const char *state_dir, const char *node, char id[WS_ID_MAX + 1], char **run_dir)
{
    int rc = ws_init_state(state_dir);
    if (rc < 0)
        return rc;
    /* 128 random bits do not collide in practice; EEXIST is still handled
     * rather than assumed away. */
    for (int tries = 0; tries < WS_CREATE_TRIES; tries++) {
        rc = ws_new_id(node, id);
        if (rc < 0)
            return rc;
        cleanup_free char *p = ws_run_path(state_dir, id);
        if (!p)
            return -ENOMEM;
        if (mkdir(p, 0700) == 0) {
            *run_dir = steal_pointer(&p);
            return 0;
        }
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

bool ws_rel_path_ok(const char *rel)
{
    size_t n = strlen(rel);
    if (n == 0 || n > 1024 || rel[0] == '/')
        return false;
    const char *comp = rel;
    for (const char *p = rel;; p++) {
        if (*p == '/' || *p == '\0') {
            size_t len = (size_t)(p - comp);
            if (len == 0)
                return false;
            if ((len == 1 && comp[0] == '.') || (len == 2 && comp[0] == '.' && comp[1] == '.'))
                return false;
            if (*p == '\0')
                break;
            comp = p + 1;
        }
    }
    return true;
}

/* ------------------------------------ directories beneath a descriptor */

/* Whether s[0..n) names one entry of a directory: not empty, not "." or
 * "..", no '/'. */
static bool one_name(const char *s, size_t n)
{
    return n > 0 && !(n == 1 && s[0] == '.') && !(n == 2 && s[0] == '.' && s[1] == '.') && !memchr(s, '/', n);
}

/* One step of a walk beneath a descriptor: dirfd/name made first when
 * make (0755; one already there is no failure), then opened as a
 * directory, following no symlink. An fd, or the -errno of the step that
 * failed (*making: making it, else opening it). */
static int dir_step(int dirfd, const char *name, bool make, bool *making)
{
    *making = false;
    if (make && mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST) {
        *making = true;
        return -errno;
    }
    int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

int ws_open_dir(int dirfd, const char *name, bool make)
{
    if (!one_name(name, strlen(name)))
        return -EINVAL;
    bool making;
    int fd = dir_step(dirfd, name, make, &making);
    return fd == -ENOTDIR && !making ? -ELOOP : fd;
}

/* The walk of ws_open_parent and of ws_open_beneath's fallback: each
 * directory of rel but its last component, one dir_step from dirfd after
 * another. Each directory is closed once the next is open; dirfd too when
 * owned (else it is borrowed, and returned itself when rel has no '/'). */
static int walk_parent(int dirfd, bool owned, const char *rel, bool make, const char **leaf,
                       struct ws_walk_stop *stop)
{
    int cur = dirfd;
    const char *comp = rel;
    for (const char *slash; (slash = strchr(comp, '/')); comp = slash + 1) {
        size_t len = (size_t)(slash - comp);
        char name[NAME_MAX + 1];
        bool making = false;
        int next;
        if (!one_name(comp, len)) {
            next = -EINVAL;
        } else if (len > NAME_MAX) {
            next = -ENAMETOOLONG; /* as mkdirat or openat would say */
            making = make;
        } else {
            memcpy(name, comp, len);
            name[len] = '\0';
            next = dir_step(cur, name, make, &making);
        }
        if (owned || cur != dirfd)
            close(cur);
        if (next < 0) {
            if (stop)
                *stop = (struct ws_walk_stop){.name = comp, .len = len, .making = making};
            return next;
        }
        cur = next;
    }
    *leaf = comp;
    return cur;
}

int ws_open_parent(int dirfd, const char *rel, bool make, const char **leaf, struct ws_walk_stop *stop)
{
    int cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
    if (cur < 0) {
        int e = errno;
        if (stop)
            *stop = (struct ws_walk_stop){.name = NULL};
        return -e;
    }
    return walk_parent(cur, true, rel, make, leaf, stop);
}

static int open_beneath_walk(int dirfd, const char *rel, int flags, mode_t mode)
{
    const char *leaf;
    int cur = walk_parent(dirfd, false, rel, false, &leaf, NULL);
    if (cur < 0)
        return cur == -ENOTDIR ? -ELOOP : cur;
    int fd = openat(cur, leaf, flags | O_NOFOLLOW | O_CLOEXEC, mode);
    int e = errno;
    if (cur != dirfd)
        close(cur);
    return fd < 0 ? -e : fd;
}

int ws_open_beneath(int dirfd, const char *rel, int flags, mode_t mode)
{
    if (!ws_rel_path_ok(rel))
        return -EINVAL;
#if defined(HAVE_LINUX_OPENAT2_H) && defined(SYS_openat2)
    struct open_how how = {
        .flags = (uint64_t)(flags | O_CLOEXEC),
        .mode = (flags & O_CREAT) ? mode : 0,
        .resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    long fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
    if (fd >= 0)
        return (int)fd;
    if (errno != ENOSYS && errno != EPERM)
        return -errno;
    /* ENOSYS: an old kernel; EPERM: a seccomp filter that denies openat2. */
#endif
    return open_beneath_walk(dirfd, rel, flags, mode);
}

/* ------------------------------------------------------------- mounts/ */

int ws_mounts_open(int workspace_fd, bool make)
{
    return ws_open_dir(workspace_fd, WS_MOUNTS_DIR, make);
}

bool ws_mounts_dir(const char *workdir, bool make)
{
    cleanup_fd int wfd = open(workdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (wfd < 0)
        return false;
    if (make && mkdirat(wfd, WS_MOUNTS_DIR, 0755) < 0 && errno != EEXIST)
        log_msg(LOG_LVL_WARN, "cannot make %s/%s: %s", workdir, WS_MOUNTS_DIR, strerror(errno));
    cleanup_fd int fd = ws_mounts_open(wfd, false);
    return fd >= 0;
}
