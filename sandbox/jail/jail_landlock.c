/* jail_landlock.c: the fallback's sandbox without namespaces. Landlock
 * (Linux 5.13+) gives the script the view the jail's root would: read and
 * execute on the system and its environment, read on the jail's /etc list,
 * its devices, read-write on its workspace, HOME and TMPDIR, nothing else;
 * no TCP unless the run has the network; no signals and no abstract unix
 * sockets out of its own processes. Every access right of the kernel's ABI
 * is handled, so that nothing the rules do not name is left allowed. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What newer kernels added, where the C library's headers are older. */
#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)      /* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)   /* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)  /* ABI 5 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)   /* ABI 4 */
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0) /* ABI 6 */
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

/* The ruleset's attributes as ABI 6 has them; an older kernel accepts the
 * larger struct as long as what it does not know is zero. */
struct ll_ruleset_attr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};

#define LL_RX (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
#define LL_R (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* A device: read, write, open with O_TRUNC (open(..., "w")), its ioctls. */
#define LL_DEV (LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
                LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* The rights that make sense on a file (not a directory): the kernel
 * refuses a file rule with any other. */
#define LL_FILE (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_READ_FILE | \
                 LANDLOCK_ACCESS_FS_TRUNCATE | LANDLOCK_ACCESS_FS_IOCTL_DEV)

int jail__landlock_abi(void)
{
    static int abi = -1;
    if (abi < 0) {
        long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
        abi = v > 0 ? (int)v : 0;
    }
    return abi;
}

/* Every file system right the kernel's ABI knows. */
static uint64_t fs_rights(int abi)
{
    uint64_t r = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0 to 12 */
    if (abi >= 2)
        r |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3)
        r |= LANDLOCK_ACCESS_FS_TRUNCATE;
    if (abi >= 5)
        r |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
    return r;
}

static int add(struct jail_ll_plan *pl, const char *path, uint64_t access, bool optional)
{
    if (pl->n == JAIL_LL_RULES_MAX)
        return -E2BIG;
    pl->rules[pl->n++] = (struct jail_ll_rule){path, access & pl->fs, optional};
    return 0;
}

int jail__landlock_plan(const struct jail_opts *o, struct jail_ll_plan *pl)
{
    memset(pl, 0, sizeof *pl);
    pl->abi = jail__landlock_abi();
    if (!pl->abi)
        return 0;
    pl->fs = fs_rights(pl->abi);
    /* No TCP bind or connect without the network: no rule grants a port.
     * (UDP and path sockets are the seccomp filter's.) */
    if (pl->abi >= 4 && !o->network)
        pl->net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
    /* Signals and abstract unix sockets stay among the run's processes:
     * the server and every other process are out of reach. */
    if (pl->abi >= 6)
        pl->scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
    int rc = add(pl, "/usr", LL_RX, false);
    for (size_t i = 0; rc == 0 && i < jail__n_usr_links; i++)
        rc = add(pl, jail__usr_links[i], LL_RX, true);
    const char *pp = o->interpreter ? jail__python_prefix(o->interpreter, pl->prefix, sizeof pl->prefix) : NULL;
    if (rc == 0 && pp)
        rc = add(pl, pp, LL_RX, false);
    for (size_t i = 0; rc == 0 && i < jail__n_etc_files; i++)
        rc = add(pl, jail__etc_files[i], LL_R, true);
    jail__etc_dirs_find(&pl->etc);
    for (size_t i = 0; rc == 0 && i < pl->etc.n; i++)
        rc = add(pl, pl->etc.v[i], LL_R, true);
    /* The jail writes these for the sandbox user (and links os-release);
     * here the host's, no secrets (those are in /etc/shadow). The release
     * files are what pip and platform read to name the system: a file
     * that exists but answers EACCES stops pip where a missing one does
     * not. */
    static const char *const etc_own[] = {"/etc/passwd",     "/etc/group",          "/etc/hosts",
                                          "/etc/hostname",   "/etc/os-release",     "/etc/debian_version",
                                          "/etc/lsb-release", "/etc/redhat-release", "/etc/alpine-release"};
    for (size_t i = 0; rc == 0 && i < ARRAY_SIZE(etc_own); i++)
        rc = add(pl, etc_own[i], LL_R, true);
    if (rc == 0 && o->network)
        rc = add(pl, "/etc/resolv.conf", LL_R, true);
    for (size_t i = 0; rc == 0 && i < jail__n_dev_nodes; i++)
        rc = add(pl, jail__dev_nodes[i], LL_DEV, true);
    /* Its own /proc/PID (the child opens /proc/self): /proc/self/status,
     * fd, maps. Not its children's, and not anyone else's. */
    if (rc == 0)
        rc = add(pl, "/proc/self", LL_R, true);
    for (size_t i = 0; rc == 0 && i < o->n_binds; i++) {
        const struct jail_bind *b = &o->binds[i];
        rc = add(pl, b->host, (b->flags & JAIL_BIND_RW) ? pl->fs : LL_RX, b->flags & JAIL_BIND_OPTIONAL);
    }
    return rc;
}

int jail__landlock_ruleset(const struct jail_ll_plan *pl, int *fd_out, const char **what)
{
    struct ll_ruleset_attr attr = {pl->fs, pl->net, pl->scoped};
    *what = NULL;
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (rs < 0)
        return -errno;
    for (size_t i = 0; i < pl->n; i++) {
        const struct jail_ll_rule *r = &pl->rules[i];
        int fd = open(r->path, O_PATH | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
            int e = errno;
            if (fd >= 0)
                close(fd);
            if (r->optional && e == ENOENT)
                continue;
            *what = r->path;
            close(rs);
            return -e;
        }
        struct landlock_path_beneath_attr pb = {
            .allowed_access = S_ISDIR(st.st_mode) ? r->access : r->access & LL_FILE,
            .parent_fd = fd,
        };
        long ok = pb.allowed_access ? syscall(SYS_landlock_add_rule, rs, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) : 0;
        int e = errno;
        close(fd);
        if (ok < 0) {
            *what = r->path;
            close(rs);
            return -e;
        }
    }
    *fd_out = rs;
    return 0;
}

int jail__landlock_enforce(int fd)
{
    if (syscall(SYS_landlock_restrict_self, fd, 0) < 0)
        return -errno;
    return 0;
}
