/* jail_mount.c: the run's file system view. The plan (what of the host the
 * root holds, opened while init can still see the host), the binds with
 * their flags (a read-only bind is read-only all the way down, its
 * submounts too), and the new root built on a tmpfs and pivoted into. */
#include "config.h"

#include "jail_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "workspace.h"

#define JAIL_ROOT_SIZE "8m"          /* the root tmpfs holds only directories and /etc */
#define JAIL_DEV_OPTS "size=64k,mode=755" /* /dev holds only a few symlinks and mount points */
#define JAIL_MOUNTINFO_MAX (16 << 20) /* /proc/self/mountinfo of a host with many thousand mounts */


/* The mount flags of the mount at path that a remount must keep: in a user
 * namespace the kernel locks the flags a mount had when it came from the
 * outer namespace, and a remount that drops one fails with EPERM. */
static unsigned long locked_flags(const char *path)
{
    static const struct {
        unsigned long st, ms;
    } map[] = {
        {ST_NOSUID, MS_NOSUID},     {ST_NODEV, MS_NODEV},           {ST_NOEXEC, MS_NOEXEC},
        {ST_RDONLY, MS_RDONLY},     {ST_NOATIME, MS_NOATIME},       {ST_NODIRATIME, MS_NODIRATIME},
        {ST_RELATIME, MS_RELATIME},
    };
    struct statvfs sv;
    unsigned long fl = 0;
    if (statvfs(path, &sv) < 0)
        return 0;
    for (size_t i = 0; i < ARRAY_SIZE(map); i++)
        if (sv.f_flag & map[i].st)
            fl |= map[i].ms;
    return fl;
}

/* A path of /proc/self/mountinfo in place: \ooo escapes decoded. */
static void mountinfo_unescape(char *s)
{
    char *w = s;
    for (char *r = s; *r; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* Without mount_setattr: every mount strictly below top, as
 * /proc/self/mountinfo lists them, remounted read-only with the flags the
 * kernel locked on it (its nosuid, nodev, noexec, atime) kept. */
static int rdonly_below(const char *top)
{
    cleanup_free char *info = NULL;
    size_t n, tl = strlen(top);
    int rc = util_read_file_at(AT_FDCWD, "/proc/self/mountinfo", JAIL_MOUNTINFO_MAX, &info, &n);
    if (rc < 0)
        return rc;
    for (char *line = info, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        /* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... */
        char *mp = line;
        for (int field = 0; field < 4 && mp; field++) {
            mp = strchr(mp, ' ');
            if (mp)
                mp++;
        }
        char *end = mp ? strchr(mp, ' ') : NULL;
        if (!end)
            continue;
        *end = '\0';
        mountinfo_unescape(mp);
        if (strncmp(mp, top, tl) || mp[tl] != '/')
            continue;
        if (mount(NULL, mp, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | locked_flags(mp), NULL) < 0)
            return -errno;
    }
    return 0;
}

/* Makes every mount of the bind whose root fd is (O_PATH) read-only: with
 * MS_REC a bind brings the host's submounts along with their own flags,
 * and a remount reaches only the top. mount_setattr does it in one step
 * where the kernel has it (and a container's filter lets it through). */
static int rdonly_tree(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
        return 0; /* a file has no submounts */
#ifdef SYS_mount_setattr
    struct mount_attr attr = {.attr_set = MOUNT_ATTR_RDONLY};
    if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) == 0)
        return 0;
    int e = errno;
    if (e != ENOSYS && e != EPERM)
        return -e;
#endif
    char link[64], top[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, top, sizeof top - 1);
    if (n < 0)
        return -errno;
    top[n] = '\0';
    return rdonly_below(top);
}

/* Binds the file open at fd onto the file or directory open at dst (both
 * O_PATH), then remounts the new mount, whose root next opens, with extra
 * flags on top of the locked ones. 0 or -errno. */
static int bind_and_remount(int fd, int dst, int (*next)(const void *ctx), const void *ctx, unsigned long extra)
{
    char src[64], at[64];
    snprintf(src, sizeof src, "/proc/self/fd/%d", fd);
    snprintf(at, sizeof at, "/proc/self/fd/%d", dst);
    if (mount(src, at, NULL, MS_BIND | MS_REC, NULL) < 0)
        return -errno;
    /* Opened again, the path now crosses into the new mount: its root is
     * what the remount must name. */
    cleanup_fd int t = next(ctx);
    if (t < 0)
        return t;
    snprintf(at, sizeof at, "/proc/self/fd/%d", t);
    if (mount(NULL, at, NULL, MS_BIND | MS_REMOUNT | extra | locked_flags(at), NULL) < 0)
        return -errno;
    return (extra & MS_RDONLY) ? rdonly_tree(t) : 0;
}

static int open_target(const void *target)
{
    int fd = open(target, O_PATH | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* Binds the file open at fd onto target (made first: a directory, or an
 * empty file). 0 or -errno. */
static int bind_fd(int fd, const char *target, bool is_dir, unsigned long extra)
{
    int rc;
    if (is_dir) {
        if ((rc = util_mkdir_p(target, 0755)) < 0)
            return rc;
    } else {
        char parent[PATH_MAX];
        snprintf(parent, sizeof parent, "%s", target);
        char *slash = strrchr(parent, '/');
        if (slash && slash != parent) {
            *slash = '\0';
            if ((rc = util_mkdir_p(parent, 0755)) < 0)
                return rc;
        }
        int t = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (t < 0)
            return -errno;
        close(t);
    }
    cleanup_fd int dst = open_target(target);
    if (dst < 0)
        return dst;
    return bind_and_remount(fd, dst, open_target, target, extra);
}

/* The target of a JAIL_BIND_NOFOLLOW bind, reached beneath root. */
struct beneath {
    int rfd;
    const char *rel;
    bool is_dir;
};

static int open_beneath(const void *ctx)
{
    const struct beneath *b = ctx;
    return ws_open_beneath(b->rfd, b->rel, O_PATH | (b->is_dir ? O_DIRECTORY : 0), 0);
}

/* The same for a JAIL_BIND_NOFOLLOW bind: the target, root + inside, must
 * exist and is reached beneath root without following any symlink (a
 * script may have made one where a directory was); the bind and the
 * remount then go through /proc/self/fd, never through the name again. */
static int bind_fd_beneath(int fd, const char *root, const char *inside, bool is_dir, unsigned long extra)
{
    cleanup_fd int rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return -errno;
    struct beneath b = {rfd, inside, is_dir};
    while (*b.rel == '/')
        b.rel++;
    cleanup_fd int t = open_beneath(&b);
    struct stat st;
    if (t < 0)
        return t;
    if (fstat(t, &st) < 0)
        return -errno;
    if (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
        return -ENOTDIR;
    return bind_and_remount(fd, t, open_beneath, &b, extra);
}

/* 0 or -errno. */
int jail__mount_proc(const char *path, bool may_share, bool *shared)
{
    if (shared)
        *shared = false;
    if (mount("proc", path, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0)
        return 0;
    int e = errno;
    if (e != EPERM || !may_share || mount("/proc", path, NULL, MS_BIND | MS_REC, NULL) < 0) {
        errno = e;
        return -1;
    }
    if (shared)
        *shared = true;
    return 0;
}

static int write_file(const char *path, const char *text, mode_t mode)
{
    cleanup_fd int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
    if (fd < 0)
        return -errno;
    return util_write_all(fd, text, strlen(text));
}

/* The interpreter's prefix when it is not under /usr (a /opt or pyenv
 * build): bound at the same path so that it finds its standard library. */
const char *jail__python_prefix(const char *argv0, char *buf, size_t n)
{
    char real[PATH_MAX];
    if (!realpath(argv0, real))
        return NULL;
    /* PREFIX/bin/pythonX.Y */
    char *slash = strrchr(real, '/');
    if (!slash)
        return NULL;
    *slash = '\0';
    slash = strrchr(real, '/');
    if (!slash || strcmp(slash, "/bin"))
        return NULL;
    *slash = '\0';
    if (!real[0] || !strncmp(real, "/usr", 4))
        return NULL;
    snprintf(buf, n, "%s", real);
    return buf;
}

/* /etc: only what Python and the C library read. */
const char *const jail__etc_files[] = {
    "/etc/ld.so.cache", "/etc/ssl",      "/etc/ca-certificates", "/etc/localtime", "/etc/nsswitch.conf",
    "/etc/mime.types",  "/etc/fonts",    "/etc/timezone",        "/etc/pki",
};
const size_t jail__n_etc_files = ARRAY_SIZE(jail__etc_files);

void jail__etc_dirs_find(struct jail_etc_dirs *d)
{
    /* Package directories of symlinks and configuration, no secrets. Not
     * /etc/environment (a link of systemd's environment.d): the host's
     * variables, which may hold credentials. */
    static const char *const names[] = {"alternatives", "python3*", "java-*"};
    d->n = 0;
    cleanup_dir DIR *dir = opendir("/etc");
    if (!dir)
        return;
    for (struct dirent *e; d->n < JAIL_ETC_DIRS_MAX && (e = readdir(dir));) {
        struct stat st;
        bool is_dir = e->d_type == DT_DIR ||
                      (e->d_type == DT_UNKNOWN && fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                       S_ISDIR(st.st_mode));
        if (!is_dir || strlen(e->d_name) >= JAIL_ETC_DIR_LEN - sizeof "/etc/")
            continue;
        for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
            if (fnmatch(names[i], e->d_name, 0) == 0) {
                snprintf(d->v[d->n++], JAIL_ETC_DIR_LEN, "/etc/%s", e->d_name);
                break;
            }
        }
    }
}
/* /dev: a few nodes of the host's. */
const char *const jail__dev_nodes[] = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"};
const size_t jail__n_dev_nodes = ARRAY_SIZE(jail__dev_nodes);
const char *const jail__usr_links[] = {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"};
const size_t jail__n_usr_links = ARRAY_SIZE(jail__usr_links);

void jail__plan_free(struct jail_ns_ctx *c)
{
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            close(c->plan[i].fd);
    c->n_plan = 0;
}

/* Adds a bind of host at inside. Missing host paths fail unless optional. */
static int plan_bind_at(struct jail_ns_ctx *c, const char *host, const char *inside, unsigned long extra,
                        bool optional, bool nofollow, char *err, size_t errlen)
{
    if (c->n_plan == c->plan_cap) {
        snprintf(err, errlen, "(too many)");
        return -E2BIG;
    }
    struct jail_plan_item *it = &c->plan[c->n_plan];
    it->fd = open(host, O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    struct stat st;
    if (it->fd < 0 || fstat(it->fd, &st) < 0) {
        int e = errno;
        if (it->fd >= 0)
            close(it->fd);
        if (optional && e == ENOENT)
            return 0;
        snprintf(err, errlen, "%s", host);
        return -e;
    }
    if (S_ISLNK(st.st_mode)) {
        /* O_PATH|O_NOFOLLOW opened the symlink itself. */
        close(it->fd);
        snprintf(err, errlen, "%s (a symlink)", host);
        return -ELOOP;
    }
    it->is_dir = S_ISDIR(st.st_mode);
    it->nofollow = nofollow;
    it->extra = extra;
    it->link[0] = '\0';
    snprintf(it->inside, sizeof it->inside, "%s", inside);
    c->n_plan++;
    return 0;
}

static int plan_bind(struct jail_ns_ctx *c, const char *host, const char *inside, unsigned long extra, bool optional,
                     char *err, size_t errlen)
{
    return plan_bind_at(c, host, inside, extra, optional, false, err, errlen);
}

static int plan_link(struct jail_ns_ctx *c, const char *target, const char *inside)
{
    if (c->n_plan == c->plan_cap)
        return -E2BIG;
    struct jail_plan_item *it = &c->plan[c->n_plan++];
    it->fd = -1;
    snprintf(it->inside, sizeof it->inside, "%s", inside);
    snprintf(it->link, sizeof it->link, "%s", target);
    return 0;
}

/* Everything of the host the root will hold, opened by init in its new
 * mount namespace (a bind's source must be a mount of the caller's
 * namespace) while it still has the parent's view of the host: the state
 * directory may be mode 0700, owned by a uid the namespace does not map. */
int jail__plan_make(struct jail_ns_ctx *c, char *err, size_t errlen)
{
    const struct jail_opts *o = c->o;
    const unsigned long RO = MS_RDONLY | MS_NOSUID | MS_NODEV;
    int rc;
    char q[PATH_MAX];

    rc = plan_bind(c, "/usr", "/usr", RO, false, err, errlen);
    /* The merged-/usr links (or directories on older systems). */
    const char *const *tops = jail__usr_links;
    for (size_t i = 0; rc == 0 && i < jail__n_usr_links; i++) {
        struct stat st;
        char link[PATH_MAX];
        if (lstat(tops[i], &st) < 0)
            continue;
        if (S_ISLNK(st.st_mode)) {
            ssize_t n = readlink(tops[i], link, sizeof link - 1);
            if (n <= 0)
                continue;
            link[n] = '\0';
            rc = plan_link(c, link, tops[i]);
        } else if (S_ISDIR(st.st_mode)) {
            rc = plan_bind(c, tops[i], tops[i], RO, true, err, errlen);
        }
    }
    const char *pp = o->interpreter ? jail__python_prefix(o->interpreter, q, sizeof q) : NULL;
    if (rc == 0 && pp)
        rc = plan_bind(c, pp, pp, RO, false, err, errlen);
    for (size_t i = 0; rc == 0 && i < jail__n_etc_files; i++)
        rc = plan_bind(c, jail__etc_files[i], jail__etc_files[i], RO, true, err, errlen);
    struct jail_etc_dirs etc;
    jail__etc_dirs_find(&etc);
    for (size_t i = 0; rc == 0 && i < etc.n; i++)
        rc = plan_bind(c, etc.v[i], etc.v[i], RO, true, err, errlen);
    if (rc == 0 && o->network)
        rc = plan_bind(c, "/etc/resolv.conf", "/etc/resolv.conf", RO, true, err, errlen);
    for (size_t i = 0; rc == 0 && i < jail__n_dev_nodes; i++)
        rc = plan_bind(c, jail__dev_nodes[i], jail__dev_nodes[i], MS_NOSUID | MS_NOEXEC, false, err, errlen);
    /* The caller's: the workspace, the environment, ... */
    for (size_t i = 0; rc == 0 && i < o->n_binds; i++) {
        const struct jail_bind *b = &o->binds[i];
        rc = plan_bind_at(c, b->host, b->inside,
                          MS_NOSUID | MS_NODEV | ((b->flags & JAIL_BIND_RW) ? 0 : MS_RDONLY),
                          b->flags & JAIL_BIND_OPTIONAL, b->flags & JAIL_BIND_NOFOLLOW, err, errlen);
    }
    if (rc < 0)
        jail__plan_free(c);
    return rc;
}


/* In init: reports -rc and exits unless rc is 0. */
static void must_rc(int rc, int efd, int stage)
{
    if (rc < 0)
        jail__child_fail_err(efd, stage, -rc, NULL);
}

#define JAIL_BASE "/tmp"   /* where init builds the root, in its own mount
                            * namespace: a directory every system has */

void jail__build_root(struct jail_ns_ctx *c)
{
    int efd = c->err_w;
    const char *R = JAIL_BASE;
    char p[PATH_MAX];

    jail__must(mount("tmpfs", R, "tmpfs", MS_NOSUID | MS_NODEV, "size=" JAIL_ROOT_SIZE ",mode=755") == 0, efd,
               JAIL_STAGE_ROOT);

    /* /dev is a small tmpfs of its own; the nodes come with the plan. */
    snprintf(p, sizeof p, "%s/dev", R);
    jail__must(mkdir(p, 0755) == 0, efd, JAIL_STAGE_DEV);
    jail__must(mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NOEXEC, JAIL_DEV_OPTS) == 0, efd, JAIL_STAGE_DEV);

    /* /tmp, private and bounded; HOME lives there. Before the binds: one may
     * sit below /tmp (a state directory there, for the installer). */
    snprintf(p, sizeof p, "%s/tmp", R);
    jail__must(mkdir(p, 01777) == 0, efd, JAIL_STAGE_ROOT);
    jail__must(mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) == 0, efd, JAIL_STAGE_ROOT);
    snprintf(p, sizeof p, "%s/tmp/home", R);
    /* A zygote of an unprivileged server maps only its own 0 (EINVAL for
     * 1000): its HOME stays its own, and no run sees it (each mounts a
     * /tmp of its own). */
    jail__must(mkdir(p, 0700) == 0 && (chown(p, JAIL_UID, JAIL_UID) == 0 || (c->o->zygote && errno == EINVAL)), efd,
               JAIL_STAGE_ROOT);

    for (size_t i = 0; i < c->n_plan; i++) {
        const struct jail_plan_item *it = &c->plan[i];
        if (snprintf(p, sizeof p, "%s%s", R, it->inside) >= (int)sizeof p)
            jail__child_fail_err(efd, JAIL_STAGE_BIND, ENAMETOOLONG, it->inside);
        if (it->fd < 0) {
            if (symlink(it->link, p) < 0)
                jail__child_fail_err(efd, JAIL_STAGE_ROOT, errno, it->inside);
            continue;
        }
        int rc = it->nofollow ? bind_fd_beneath(it->fd, R, it->inside, it->is_dir, it->extra)
                              : bind_fd(it->fd, p, it->is_dir, it->extra);
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_BIND, -rc, it->inside);
    }

    /* HOME laid out from the environment's caches, now that the binds
     * are there (the zygote's as a run's: what it imports finds them). */
    if (c->o->home_from) {
        char src[PATH_MAX];
        snprintf(src, sizeof src, "%s%s", R, c->o->home_from);
        snprintf(p, sizeof p, "%s/tmp/home", R);
        int rc = jail__home_tree(src, p, c->o->home_from, JAIL_UID, c->o->zygote);
        if (rc < 0)
            jail__child_fail_err(efd, JAIL_STAGE_ROOT, -rc, "HOME from the environment's caches");
    }

    /* /etc files of our own. */
    snprintf(p, sizeof p, "%s/etc", R);
    must_rc(util_mkdir_p(p, 0755), efd, JAIL_STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/passwd", R);
    must_rc(write_file(p, "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"
                       "sandbox:x:1000:1000:sandbox:/tmp/home:/bin/sh\n"
                       "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
                    0644),
         efd, JAIL_STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/group", R);
    must_rc(write_file(p, "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n", 0644), efd, JAIL_STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/hosts", R);
    must_rc(write_file(p, "127.0.0.1\tlocalhost runmyscript\n::1\tlocalhost ip6-localhost ip6-loopback\n", 0644),
         efd, JAIL_STAGE_ETC);
    if (c->o->net_sock > 0) {
        /* The run's own network: its resolver is on its loopback. */
        snprintf(p, sizeof p, "%s/etc/resolv.conf", R);
        must_rc(write_file(p, "nameserver 127.0.0.1\n", 0644), efd, JAIL_STAGE_ETC);
    }
    snprintf(p, sizeof p, "%s/etc/hostname", R);
    must_rc(write_file(p, "runmyscript\n", 0644), efd, JAIL_STAGE_ETC);
    snprintf(p, sizeof p, "%s/etc/os-release", R);
    jail__must(symlink("../usr/lib/os-release", p) == 0, efd, JAIL_STAGE_ETC);

    static const char *const links[][2] = {
        {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
        {"/proc/self/fd/2", "stderr"},
    };
    for (size_t i = 0; i < ARRAY_SIZE(links); i++) {
        snprintf(p, sizeof p, "%s/dev/%s", R, links[i][1]);
        jail__must(symlink(links[i][0], p) == 0, efd, JAIL_STAGE_DEV);
    }
    snprintf(p, sizeof p, "%s/dev/shm", R);
    jail__must(mkdir(p, 01777) == 0, efd, JAIL_STAGE_DEV);
    jail__must(mount("tmpfs", p, "tmpfs", MS_NOSUID | MS_NODEV, c->tmp_opts) == 0, efd, JAIL_STAGE_DEV);
    /* /dev itself read-only: unprivileged, init and the script share a uid,
     * and the tmpfs would be the script's to write. */
    snprintf(p, sizeof p, "%s/dev", R);
    jail__must(mount(NULL, p, NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NOEXEC, JAIL_DEV_OPTS) == 0, efd,
         JAIL_STAGE_DEV);

    /* The namespace's own /proc, while the old root (with the host's full
     * /proc) is still visible: the kernel demands one. */
    snprintf(p, sizeof p, "%s/proc", R);
    jail__must(mkdir(p, 0555) == 0, efd, JAIL_STAGE_PROC);
    jail__must(jail__mount_proc(p, c->o->shared_proc, NULL) == 0, efd, JAIL_STAGE_PROC);

    /* Switch roots: pivot onto the new root itself, then detach the old one
     * that now sits underneath. */
    jail__must(chdir(R) == 0, efd, JAIL_STAGE_PIVOT);
    jail__must(syscall(SYS_pivot_root, ".", ".") == 0, efd, JAIL_STAGE_PIVOT);
    jail__must(umount2(".", MNT_DETACH) == 0, efd, JAIL_STAGE_PIVOT);
    jail__must(chdir("/") == 0, efd, JAIL_STAGE_PIVOT);
    /* The root itself read-only from here on. */
    jail__must(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) == 0, efd,
         JAIL_STAGE_ROOT);
    for (size_t i = 0; i < c->n_plan; i++)
        if (c->plan[i].fd >= 0)
            close(c->plan[i].fd);
}

