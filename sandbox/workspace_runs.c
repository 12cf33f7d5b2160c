/* workspace_runs.c: the state directory bounded by size, not only by age.
 *
 * Run records (STATE/runs/RUNID: the log, result.json, the artifacts and
 * their zip) are removed past run_ttl (ws_reap_runs, once a minute), and
 * oldest first whenever they pass runs_bytes or runs_files
 * (ws_bound_runs), down to nine tenths of the caps so that the removal is
 * not paid by every run; never a run in flight (its directory's flock is
 * held, or it has no result.json yet). At 150 runs a second a day of runs
 * is hundreds of GB and tens of millions of inodes; age alone bounds
 * nothing.
 *
 * What they hold is kept in a ledger, STATE/runs/.usage (bytes, inodes,
 * when it was last counted from the disk), updated under its flock: a run
 * adds itself once its result is published (ws_runs_account), a removal
 * subtracts what it measured just before. So no run pays for a walk of
 * the whole directory; the ledger is counted again from the disk at most
 * once an hour (and when it is missing), which corrects what a process
 * killed between a removal and its subtraction, or a removal by hand,
 * left wrong.
 *
 * The low-disk guard (ws_disk_check): a new run is refused while the file
 * system of the state directory has less free space than disk_reserve, or
 * fewer free inodes than the same share of them, so that the runs in
 * flight, the installer and the results still have room: a full disk
 * fails runs half-way and loses their results. */
#include "config.h"

#include "workspace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define WS_USAGE ".usage"               /* the ledger, in STATE/runs */
#define WS_BOUNDING ".bounding"         /* held by the one process that removes for the caps */
#define WS_RECOUNT_MS (3600LL * 1000)   /* the ledger is counted from the disk this often */
#define WS_BOUND_YOUNG_MS 10000         /* a run directory younger than this is never removed for the caps */
#define WS_BOUND_KEEP_NUM 9             /* removal for the caps goes down to 9/10 of them */
#define WS_BOUND_KEEP_DEN 10

struct ws_usage {
    uint64_t bytes, files;
    int64_t counted_ms; /* wall clock of the last count from the disk; 0: never */
};

static int64_t mtime_ms(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000 + st->st_mtim.tv_nsec / 1000000;
}

static int runs_dir(const char *state_dir)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/runs", state_dir) >= sizeof path)
        return -ENAMETOOLONG;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* ----------------------------------------------------------- measuring */

struct measure {
    uint64_t bytes, files;
};

static int measure_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    (void)dirfd, (void)name, (void)depth;
    struct measure *m = ctx;
    m->bytes += (uint64_t)st->st_blocks * 512;
    m->files++;
    return UTIL_WALK_NEXT;
}

static int measure_fail(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx)
{
    (void)dirfd, (void)name, (void)st, (void)depth, (void)err, (void)ctx;
    return UTIL_WALK_NEXT; /* what cannot be read is not counted */
}

/* What dirfd/name holds on the disk: its blocks and its inodes. */
static void measure(int dirfd, const char *name, struct measure *m)
{
    *m = (struct measure){0};
    struct util_walk w = {.pre = measure_pre, .fail = measure_fail, .ctx = m};
    discard(util_walk_at(dirfd, name, &w)); /* a part measured is what there is */
}

/* ----------------------------------------------------------- the ledger */

static int usage_open(int rfd)
{
    int fd = openat(rfd, WS_USAGE, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    return fd < 0 ? -errno : fd;
}

static int lock(int fd, int how)
{
    while (flock(fd, how) < 0)
        if (errno != EINTR)
            return -errno;
    return 0;
}

static void usage_read(int fd, struct ws_usage *u)
{
    if (pread(fd, u, sizeof *u, 0) != (ssize_t)sizeof *u)
        *u = (struct ws_usage){0}; /* missing or short: counted afresh */
}

/* Adds (sign 1) or subtracts (-1) m under the ledger's lock; a subtraction
 * that would go below 0 stops at 0 (the next count sets it right). */
static void usage_add(int rfd, const struct measure *m, int sign)
{
    cleanup_fd int fd = usage_open(rfd);
    if (fd < 0 || lock(fd, LOCK_EX) < 0)
        return;
    struct ws_usage u;
    usage_read(fd, &u);
    if (sign > 0) {
        u.bytes += m->bytes;
        u.files += m->files;
    } else {
        u.bytes = u.bytes > m->bytes ? u.bytes - m->bytes : 0;
        u.files = u.files > m->files ? u.files - m->files : 0;
    }
    if (pwrite(fd, &u, sizeof u, 0) != (ssize_t)sizeof u)
        log_msg(LOG_LVL_WARN, "cannot update the run records' ledger: %s", strerror(errno));
}

int ws_runs_account(const char *run_dir)
{
    cleanup_free char *parent = strdup(run_dir);
    char *slash = parent ? strrchr(parent, '/') : NULL;
    if (!slash)
        return -ENOMEM;
    *slash = '\0';
    cleanup_fd int rfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0)
        return -errno;
    struct measure m;
    measure(rfd, slash + 1, &m);
    usage_add(rfd, &m, 1);
    return 0;
}

/* Removes the run directory name of rfd (runs/) and takes what it held
 * out of the ledger. 0 or -errno of the removal. */
static int remove_run(int rfd, const char *name)
{
    struct measure m;
    measure(rfd, name, &m);
    int rc = util_rm_rf_at(rfd, name);
    usage_add(rfd, &m, -1); /* a part removed is a part less */
    return rc;
}

int ws_run_remove(const char *state_dir, const char *run_id)
{
    if (!ws_id_valid(run_id))
        return -EINVAL;
    cleanup_fd int rfd = runs_dir(state_dir);
    if (rfd < 0)
        return rfd;
    struct stat st;
    if (fstatat(rfd, run_id, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return -errno;
    return remove_run(rfd, run_id);
}

/* Counts the ledger from the disk when it never was, or not for an hour:
 * by one process at a time (the others go on with the ledger as it is). */
static void usage_recount(int rfd, int64_t now)
{
    cleanup_fd int fd = usage_open(rfd);
    struct ws_usage u;
    if (fd < 0 || lock(fd, LOCK_SH) < 0)
        return;
    usage_read(fd, &u);
    flock(fd, LOCK_UN);
    if (u.counted_ms && now - u.counted_ms < WS_RECOUNT_MS)
        return;
    cleanup_fd int bfd = openat(rfd, WS_BOUNDING, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (bfd < 0 || flock(bfd, LOCK_EX | LOCK_NB) < 0)
        return;
    struct measure total = {0};
    cleanup_dir DIR *d = util_opendir_at(rfd);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        struct measure m;
        measure(rfd, de->d_name, &m);
        total.bytes += m.bytes;
        total.files += m.files;
    }
    if (lock(fd, LOCK_EX) < 0)
        return;
    u = (struct ws_usage){.bytes = total.bytes, .files = total.files, .counted_ms = now};
    if (pwrite(fd, &u, sizeof u, 0) != (ssize_t)sizeof u)
        log_msg(LOG_LVL_WARN, "cannot write the run records' ledger: %s", strerror(errno));
    else
        log_msg(LOG_LVL_INFO, "run records: %llu bytes in %llu inodes", (unsigned long long)u.bytes,
                (unsigned long long)u.files);
}

int ws_runs_usage(const char *state_dir, uint64_t *bytes, uint64_t *files)
{
    *bytes = *files = 0;
    cleanup_fd int rfd = runs_dir(state_dir);
    if (rfd < 0)
        return rfd == -ENOENT ? 0 : rfd;
    cleanup_fd int fd = usage_open(rfd);
    if (fd < 0 || lock(fd, LOCK_SH) < 0)
        return fd < 0 ? fd : -EIO;
    struct ws_usage u;
    usage_read(fd, &u);
    *bytes = u.bytes;
    *files = u.files;
    return 0;
}

int ws_tree_usage(const char *state_dir, const char *sub, uint64_t *bytes, uint64_t *files)
{
    *bytes = *files = 0;
    if (strchr(sub, '/') || !strcmp(sub, "..") || !strcmp(sub, ".") || !*sub)
        return -EINVAL;
    cleanup_fd int sfd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0)
        return -errno;
    struct stat st;
    if (fstatat(sfd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : -errno;
    struct measure m;
    measure(sfd, sub, &m);
    *bytes = m.bytes;
    *files = m.files;
    return 0;
}

/* -------------------------------------------------------------- reaping */

int ws_reap_runs(const char *state_dir, int64_t ttl_ms)
{
    struct stat st;
    if (ttl_ms <= 0)
        return 0;
    cleanup_fd int dfd = runs_dir(state_dir);
    if (dfd < 0)
        return dfd == -ENOENT ? 0 : dfd;
    int64_t now = util_wall_ms();
    /* At most one scan a minute: the stamp's mtime says when the last began. */
    if (fstatat(dfd, ".reaped", &st, 0) == 0 && now - mtime_ms(&st) < 60000)
        return 0;
    int sfd = openat(dfd, ".reaped", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (sfd >= 0) {
        futimens(sfd, NULL);
        close(sfd);
    }
    cleanup_dir DIR *d = util_opendir_at(dfd);
    if (!d)
        return -errno;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!ws_id_valid(de->d_name))
            continue;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
            continue;
        if (now - mtime_ms(&st) < ttl_ms)
            continue;
        /* The directory's mtime moves when the run writes its result; the
         * configuration keeps run_ttl above the largest wall limit, so a
         * directory this old belongs to no run in progress. */
        if (remove_run(dfd, de->d_name) == 0)
            removed++;
    }
    return removed;
}

struct old_run {
    int64_t mtime_ms;
    char name[WS_ID_MAX + 1];
};

static int by_age(const void *a, const void *b)
{
    const struct old_run *x = a, *y = b;
    return x->mtime_ms < y->mtime_ms ? -1 : x->mtime_ms > y->mtime_ms;
}

/* The finished runs of rfd, oldest first (caller frees *out). */
static int list_finished(int rfd, int64_t now, struct old_run **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    size_t cap = 0;
    cleanup_dir DIR *d = util_opendir_at(rfd);
    if (!d)
        return -errno;
    struct dirent *de;
    struct stat st;
    char result[sizeof de->d_name + 16];
    while ((de = readdir(d))) {
        if (!ws_id_valid(de->d_name) || fstatat(rfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISDIR(st.st_mode) || now - mtime_ms(&st) < WS_BOUND_YOUNG_MS)
            continue;
        snprintf(result, sizeof result, "%s/result.json", de->d_name);
        if (faccessat(rfd, result, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
            continue; /* in flight (or an orphan, which exec_mark_orphans finishes first) */
        if (UTIL_GROW(*out, *n, cap, 256) < 0)
            return -ENOMEM;
        (*out)[*n].mtime_ms = mtime_ms(&st);
        memcpy((*out)[*n].name, de->d_name, strlen(de->d_name) + 1); /* ws_id_valid: at most WS_ID_MAX */
        (*n)++;
    }
    if (*n > 1) /* qsort's base must not be NULL, even for nothing */
        qsort(*out, *n, sizeof **out, by_age);
    return 0;
}

/* num/den of max, without overflow. */
static uint64_t share(uint64_t max, uint64_t num, uint64_t den)
{
    return max / den * num + max % den * num / den;
}

static bool over(const struct ws_usage *u, uint64_t max_bytes, uint64_t max_files, uint64_t num, uint64_t den)
{
    return (max_bytes && u->bytes > share(max_bytes, num, den)) || (max_files && u->files > share(max_files, num, den));
}

int ws_bound_runs(const struct exec_config *cfg)
{
    if (!cfg->runs_bytes && !cfg->runs_files)
        return 0;
    cleanup_fd int rfd = runs_dir(cfg->state_dir);
    if (rfd < 0)
        return rfd == -ENOENT ? 0 : rfd;
    int64_t now = util_wall_ms();
    usage_recount(rfd, now);
    cleanup_fd int fd = usage_open(rfd);
    struct ws_usage u;
    if (fd < 0 || lock(fd, LOCK_SH) < 0)
        return fd < 0 ? fd : -EIO;
    usage_read(fd, &u);
    flock(fd, LOCK_UN);
    if (!over(&u, cfg->runs_bytes, cfg->runs_files, 1, 1))
        return 0;
    /* One process removes at a time; the others carry on. */
    cleanup_fd int bfd = openat(rfd, WS_BOUNDING, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (bfd < 0 || flock(bfd, LOCK_EX | LOCK_NB) < 0)
        return 0;
    cleanup_free struct old_run *runs = NULL;
    size_t n = 0;
    int rc = list_finished(rfd, now, &runs, &n);
    if (rc < 0)
        return rc;
    int removed = 0;
    for (size_t i = 0; i < n; i++) {
        cleanup_fd int dfd = openat(rfd, runs[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0 || flock(dfd, LOCK_EX | LOCK_NB) < 0)
            continue; /* gone, or still held by its run */
        if (remove_run(rfd, runs[i].name) == 0)
            removed++;
        if (lock(fd, LOCK_SH) < 0)
            break;
        usage_read(fd, &u);
        flock(fd, LOCK_UN);
        if (!over(&u, cfg->runs_bytes, cfg->runs_files, WS_BOUND_KEEP_NUM, WS_BOUND_KEEP_DEN))
            break;
    }
    if (removed)
        log_msg(LOG_LVL_INFO, "run records past runs_bytes or runs_files: the %d oldest removed", removed);
    return removed;
}

/* ----------------------------------------------------- the low-disk guard */

int ws_disk_check(const struct exec_config *cfg, struct ws_disk *d, char *err, size_t errlen)
{
    struct statvfs v;
    *d = (struct ws_disk){0};
    if (statvfs(cfg->state_dir, &v) < 0)
        return 0; /* nothing to go by: no guard (making the run will say what is wrong) */
    uint64_t unit = v.f_frsize ? v.f_frsize : v.f_bsize;
    d->total_bytes = (uint64_t)v.f_blocks * unit;
    d->free_bytes = (uint64_t)v.f_bavail * unit;
    d->total_inodes = v.f_files;
    d->free_inodes = v.f_favail;
    if (cfg->disk_reserve_bytes) {
        d->reserve_bytes = cfg->disk_reserve_bytes;
        /* The same share of the inodes as the size is of the space. */
        d->reserve_inodes = d->total_bytes ? (uint64_t)((double)d->total_inodes * (double)cfg->disk_reserve_bytes /
                                                        (double)d->total_bytes)
                                           : 0;
    } else {
        d->reserve_bytes = d->total_bytes / 100 * cfg->disk_reserve_pct;
        d->reserve_inodes = d->total_inodes / 100 * cfg->disk_reserve_pct;
    }
    bool space = d->free_bytes < d->reserve_bytes;
    bool inodes = d->total_inodes && d->free_inodes < d->reserve_inodes; /* 0 inodes: a file system without a count */
    d->low = space || inodes;
    if (!d->low)
        return 0;
    char have[32], want[32];
    util_human_size(space ? d->free_bytes : 0, have, sizeof have);
    util_human_size(d->reserve_bytes, want, sizeof want);
    if (space)
        snprintf(err, errlen, "the server is low on disk space (%s free, disk_reserve keeps %s): new runs are refused "
                              "until old runs are removed or space is made; try again later", have, want);
    else
        snprintf(err, errlen, "the server is low on inodes (%llu free, disk_reserve keeps %llu): new runs are refused "
                              "until old runs are removed; try again later",
                 (unsigned long long)d->free_inodes, (unsigned long long)d->reserve_inodes);
    return -ENOSPC;
}
