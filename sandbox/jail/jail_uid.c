/* jail_uid.c: which host uid a run runs as. Unprivileged, our own. As
 * root, one of uid_base+1 .. uid_base+uid_count held through a lock file
 * for the run, with the run's paths given to it and taken back after; and
 * the namespace's uid and gid maps that name it inside. */
#include "config.h"

#include "jail_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


/* Takes a host uid of its own for the run (root only): the lock file
 * STATE/.uids/N, held until the run is over. */
int jail__take_uid(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (o->uid_count == 0) {
        snprintf(err, errlen, "no uids to run as (uid_count = 0)");
        return -EINVAL;
    }
    snprintf(dir, sizeof dir, "%s/.uids", o->state_dir);
    if (mkdir(dir, 0700) < 0 && errno != EEXIST) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(e));
        return -e;
    }
    uint32_t start;
    if (util_random(&start, sizeof start) < 0)
        start = (uint32_t)getpid();
    for (uint32_t i = 0; i < o->uid_count; i++) {
        uint32_t slot = (start + i) % o->uid_count;
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/%u", dir, slot);
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
            continue;
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            p->uid_lock = fd;
            /* uid_base itself is the namespaces' root (jail__write_maps). */
            p->host_uid = (uid_t)(o->uid_base + 1 + slot);
            return 0;
        }
        close(fd);
    }
    snprintf(err, errlen, "all %u sandbox uids are in use", o->uid_count);
    return -EAGAIN;
}

void jail__mark_take(const struct jail_opts *o)
{
    struct stat st;
    struct jail_mark *m = o->mark;
    if (m && futimens(m->fd, NULL) == 0 && fstat(m->fd, &st) == 0) {
        m->at = st.st_ctim;
        m->taken = true;
    }
}

static bool stamp_after(const struct timespec *t, const struct timespec *mark)
{
    return t->tv_sec > mark->tv_sec || (t->tv_sec == mark->tv_sec && t->tv_nsec > mark->tv_nsec);
}

void jail__mark_wait(const struct jail_opts *o)
{
    const struct jail_mark *m = o->mark;
    if (!m || !m->taken || !m->wait)
        return;
    /* A file's ctime is the coarse clock, or a fine stamp handed out
     * since (never below the latest one: multigrain timestamps). So a
     * second stamp of the marker that is past the mark says that every
     * ctime to come is past it too: the coarse clock has passed the mark
     * already, or the file system stamps finely and the latest stamp is
     * past it. Then nothing is left to wait for (where ctimes are fine,
     * always; a warm start waited up to a tick, 4 ms at 250 Hz, every
     * call of a session whose workspace holds a file). */
    struct stat st;
    if (futimens(m->fd, NULL) == 0 && fstat(m->fd, &st) == 0 && stamp_after(&st.st_ctim, &m->at))
        return;
    /* Else once the coarse clock is past the mark, so is every ctime to
     * come: a tick at most. */
    for (int i = 0; i < JAIL_MARK_WAIT_MS * 2; i++) {
        struct timespec now;
        clock_gettime(CLOCK_REALTIME_COARSE, &now);
        if (stamp_after(&now, &m->at))
            return;
        usleep(500);
    }
}

/* chown -R without following symlinks, however deep the tree; keep,
 * directly under the top, is left as it is. */
struct chown_walk {
    uid_t uid;
    gid_t gid;
    const char *keep;
};

static int chown_one(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    const struct chown_walk *c = ctx;
    (void)st;
    if (depth == 1 && c->keep && !strcmp(name, c->keep))
        return 1;
    return fchownat(dirfd, name, c->uid, c->gid, AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

static int chown_tree(const char *path, uid_t uid, gid_t gid, const char *keep)
{
    struct chown_walk c = {uid, gid, keep};
    struct util_walk w = {.pre = chown_one, .ctx = &c};
    return util_walk_at(AT_FDCWD, path, &w);
}

/* Gives the run's paths to its uid for the run; jail_finish takes them back
 * before the uid is released, so that a later run that gets the same uid
 * owns nothing of this one's. chown_keep is left to the server both ways. */
int jail__give_paths(const struct jail_opts *o, struct jail_proc *p, char *err, size_t errlen)
{
    p->given = calloc(o->n_chown_paths + 1, sizeof *p->given);
    p->given_mode = calloc(o->n_chown_paths + 1, sizeof *p->given_mode);
    if (!p->given || !p->given_mode)
        return -ENOMEM;
    if (o->chown_keep && !(p->given_keep = strdup(o->chown_keep)))
        return -ENOMEM;
    for (size_t i = 0; i < o->n_chown_paths; i++) {
        struct stat st;
        if (lstat(o->chown_paths[i], &st) < 0) {
            int e = errno;
            snprintf(err, errlen, "giving %s to the sandbox uid: %s", o->chown_paths[i], strerror(e));
            return -e;
        }
        p->given_mode[i] = st.st_mode & 07777;
        if (!(p->given[i] = strdup(o->chown_paths[i])))
            return -ENOMEM;
        int rc = chown_tree(o->chown_paths[i], p->host_uid, p->host_uid, o->chown_keep);
        if (rc < 0) {
            snprintf(err, errlen, "giving %s to the sandbox uid: %s", o->chown_paths[i], strerror(-rc));
            return rc;
        }
    }
    return 0;
}

int jail_regive(struct jail_proc *p)
{
    for (size_t i = 0; geteuid() == 0 && p->given && p->given[i]; i++) {
        struct stat st;
        if (lstat(p->given[i], &st) < 0)
            return -errno;
        if (st.st_uid == p->host_uid)
            continue;
        int rc = chown_tree(p->given[i], p->host_uid, p->host_uid, p->given_keep);
        if (rc < 0)
            return rc;
    }
    return 0;
}

void jail_keep_paths(struct jail_proc *p)
{
    for (size_t i = 0; p->given && p->given[i]; i++)
        free(p->given[i]);
    free(p->given);
    p->given = NULL;
}

void jail__uid_release(struct jail_proc *p)
{
    for (size_t i = 0; p->given && p->given[i]; i++) {
        int rc = chown_tree(p->given[i], geteuid(), getegid(), p->given_keep);
        /* Its own again, with the mode it had: the script may have opened
         * it to all (chmod 0777) while it was its. */
        if (rc == 0 && fchmodat(AT_FDCWD, p->given[i], p->given_mode[i], 0) < 0)
            rc = -errno;
        if (rc < 0 && rc != -ENOENT)
            log_msg(LOG_LVL_ERROR, "taking back %s from uid %u: %s", p->given[i], (unsigned)p->host_uid,
                    strerror(-rc));
        free(p->given[i]);
    }
    free(p->given);
    p->given = NULL;
    free(p->given_mode);
    p->given_mode = NULL;
    free(p->given_keep);
    p->given_keep = NULL;
    if (p->uid_lock >= 0) {
        close(p->uid_lock);
        p->uid_lock = -1;
    }
}

static int write_map(pid_t pid, const char *file, const char *text)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, file);
    cleanup_fd int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    return util_write_all(fd, text, strlen(text));
}

/* Inside uid/gid 1000 is the run's host uid. As root, inside 0 is
 * uid_base, an unprivileged host uid that owns nothing outside, for init's
 * own files; host root is never mapped. Unprivileged, we may map only
 * ourselves (and must deny setgroups first). */
int jail__write_maps(pid_t pid, bool root_user, uint32_t uid_base, uid_t host_uid)
{
    char map[96];
    if (root_user)
        snprintf(map, sizeof map, "0 %u 1\n%u %u 1\n", uid_base, JAIL_UID, (unsigned)host_uid);
    else
        snprintf(map, sizeof map, "%u %u 1\n", JAIL_UID, (unsigned)host_uid);
    int rc = root_user ? 0 : write_map(pid, "setgroups", "deny");
    if (rc == 0)
        rc = write_map(pid, "uid_map", map);
    if (rc == 0) {
        if (!root_user)
            snprintf(map, sizeof map, "%u %u 1\n", JAIL_UID, (unsigned)getegid());
        rc = write_map(pid, "gid_map", map);
    }
    return rc;
}

int jail__write_zygote_maps(pid_t pid, bool root_user, uint32_t uid_base, uint32_t uid_count)
{
    char map[96];
    if (root_user)
        snprintf(map, sizeof map, "0 %u %u\n", uid_base, uid_count + 1);
    else
        snprintf(map, sizeof map, "0 %u 1\n", (unsigned)geteuid());
    int rc = root_user ? 0 : write_map(pid, "setgroups", "deny");
    if (rc == 0)
        rc = write_map(pid, "uid_map", map);
    if (rc == 0) {
        if (!root_user)
            snprintf(map, sizeof map, "0 %u 1\n", (unsigned)getegid());
        rc = write_map(pid, "gid_map", map);
    }
    return rc;
}
