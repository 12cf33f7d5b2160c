/* mcp_reap.c: the one reaper of the MCP door's state: sessions and
 * workspaces idle for longer than session_ttl with no call in flight (with
 * their runs and their kernels), and finished tasks whose last change is older than task_ttl
 * and whose process is gone. Each kind is scanned at most once a minute (a
 * stamp, .reaped, in its directory), so that any request may call it: serve's
 * supervisor does, and so do the requests that make a session, a workspace
 * or a task (the only reaper a CGI server has). */
#include "config.h"

#include "mcp_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define REAP_HALF_MADE_MS 60000 /* a task directory still without task.json after this is dead */

/* True when a reaper of dirfd's entries should scan now: forced, or its
 * stamp (.reaped) is older than a minute; the stamp is renewed then. */
static bool reap_due(int dirfd, bool force)
{
    struct stat st;
    if (!force && fstatat(dirfd, ".reaped", &st, 0) == 0 &&
        util_wall_ms() - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) < 60000)
        return false;
    int stamp = openat(dirfd, ".reaped", O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (stamp >= 0) {
        futimens(stamp, NULL);
        close(stamp);
    }
    return true;
}

/* The sessions of one kind ("sessions", "workspaces"). */
static int reap_kind(const struct cfg *cfg, const char *kind, bool force)
{
    struct stat st;
    cleanup_free char *sdir = NULL;
    if (asprintf(&sdir, "%s/%s", cfg->state_dir, kind) < 0)
        return -ENOMEM;
    cleanup_fd int sfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0)
        return errno == ENOENT ? 0 : -errno;
    int64_t now = util_wall_ms();
    if (!reap_due(sfd, force))
        return 0;
    cleanup_dir DIR *d = util_opendir_at(sfd);
    if (!d)
        return -errno;
    int removed = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *name = de->d_name;
        if (!strncmp(name, ".ended-", 7)) { /* a DELETE that did not finish */
            discard(util_rm_rf_at(sfd, name));
            continue;
        }
        if (!ws_id_valid(name))
            continue;
        cleanup_fd int dfd = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dfd < 0)
            continue;
        int64_t used;
        if (fstatat(dfd, "session.json", &st, AT_SYMLINK_NOFOLLOW) == 0)
            used = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        else if (fstat(dfd, &st) == 0) /* being created, or broken: by its directory */
            used = (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
        else
            continue;
        if (now - used < cfg->session_ttl_ms)
            continue;
        /* A call in flight keeps its session, however long the run. */
        cleanup_fd int cfd = openat(dfd, "calls", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_dir DIR *cd = cfd >= 0 ? util_opendir_at(cfd) : NULL;
        bool busy = false;
        struct dirent *ce;
        while (cd && (ce = readdir(cd)))
            if (ce->d_name[0] != '.')
                busy = true;
        if (busy)
            continue;
        /* Its kernel first (one idle past kernel_idle is gone already). */
        cleanup_free char *ws = NULL;
        int krc = asprintf(&ws, "%s/%s/workspace", sdir, name) < 0 ? -ENOMEM : exec_kernel_end(&cfg->exec, ws);
        if (krc < 0) /* the files go all the same: a kernel without them stops at kernel_idle */
            log_msg(LOG_LVL_ERROR, "the kernel of %s: %s", name, strerror(-krc));
        if (mcp__session_remove(cfg, sfd, name, true) == 0) {
            removed++;
            log_msg(LOG_LVL_INFO, "%.*s %s idle for %llds: removed", (int)strlen(kind) - 1, kind, name,
                    (long long)((now - used) / 1000));
        }
    }
    return removed;
}

/* Finished tasks past task_ttl whose process is gone. */
static int reap_tasks(const struct cfg *cfg, bool force)
{
    cleanup_free char *top = NULL;
    struct stat st;
    if (cfg->task_ttl_ms <= 0 || asprintf(&top, "%s/tasks", cfg->state_dir) < 0)
        return 0;
    cleanup_fd int sfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int64_t now = util_wall_ms();
    if (sfd < 0 || !reap_due(sfd, force))
        return 0;
    cleanup_dir DIR *d = util_opendir_at(sfd);
    int removed = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        char name[sizeof de->d_name + 16];
        if (!ws_id_valid(de->d_name))
            continue;
        /* By task.json's mtime, its last change: no task's result is read
         * to find the old ones. A half-made task has none yet: its maker is
         * alive (and the next scan sees it whole), unless it is old. */
        snprintf(name, sizeof name, "%s/task.json", de->d_name);
        if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            /* One whose maker died before task.json (it takes a moment):
             * it would count against max_tasks for ever. */
            if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                now - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) > REAP_HALF_MADE_MS &&
                util_rm_rf_at(sfd, de->d_name) == 0)
                removed++;
            continue;
        }
        if (now - ((int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000) < cfg->task_ttl_ms)
            continue;
        cleanup_free char *dir = NULL;
        if (asprintf(&dir, "%s/%s", top, de->d_name) < 0) {
            dir = NULL;
            continue;
        }
        if (!mcp__task_alive(dir) && util_rm_rf_at(sfd, de->d_name) == 0)
            removed++;
    }
    return removed;
}

int mcp_reap(const struct cfg *cfg, bool force)
{
    int c = reap_tasks(cfg, force); /* finished tasks past task_ttl */
    if (cfg->session_ttl_ms <= 0)
        return c;
    int a = reap_kind(cfg, "sessions", force), b = reap_kind(cfg, "workspaces", force);
    return a < 0 ? a : b < 0 ? b : a + b + c;
}
