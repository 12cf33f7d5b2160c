/* kernel_save.c: a kernel's state saved, the host's half (kernel.py's
 * save() and restore() are the other): where a kernel would be stopped
 * (kernel_idle, max_kernels, kernel_memory, the server's end) or when a
 * worker asks (save_kernel), the host gives the workspace to the kernel's
 * uid, sends {"save", "limit"} down the channel and waits for the kernel's
 * word, at most KERNEL_SAVE_MS. The kernel writes the state into its
 * workspace (KERNEL_STATE_REL) inside its own jail: the host never reads
 * it, it only records what the kernel was made of (KEY/saved) and, for a
 * kernel that stops, that the next one restores it (KEY/restore). The
 * limit is kernel_save_bytes, or the room left in workspace_bytes when that
 * is less: a state past it is not kept, and the reason says which. */
#include "config.h"

#include "kernel_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art.h"

#define SAVE_ANSWER_MAX (1u << 20) /* the kernel's word on a save: lists of at most 100 names */

/* Where the kernel sees its state: in the workspace, /work in the jail, its
 * own path in the fallback. */
void kernel__save_path(const struct host *h, char *buf, size_t n)
{
    if (h->k.proc.mode == JAIL_MODE_RLIMITS)
        snprintf(buf, n, "%s/" KERNEL_STATE_REL, h->workspace);
    else
        snprintf(buf, n, "/work/" KERNEL_STATE_REL);
}

/* The most a state may take: kernel_save_bytes, or what workspace_bytes
 * leaves (the state it replaces counted as free), with the key that
 * bounds it. */
static uint64_t save_limit(struct host *h, const char **key)
{
    uint64_t limit = h->cfg->kernels.save_bytes;
    *key = "kernel_save_bytes";
    uint64_t ws_max = h->limits.workspace_bytes;
    if (!ws_max)
        return limit;
    cleanup_fd int ws = open(h->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct art_tally t = {.all_inodes = true};
    if (ws < 0 || art_measure_tree(ws, &t, NULL, 0) < 0)
        return limit; /* the state's own write then meets the workspace's limit */
    struct stat st;
    if (fstatat(ws, KERNEL_STATE_REL, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
        t.bytes >= (uint64_t)st.st_size)
        t.bytes -= (uint64_t)st.st_size;
    uint64_t room = ws_max > t.bytes ? ws_max - t.bytes : 0;
    if (room < limit) {
        limit = room;
        *key = "workspace_bytes";
    }
    return limit;
}

/* The kernel's word on the channel, its output read on the way. */
static int save_wait(struct host *h, json_object **a)
{
    struct kproc *k = &h->k;
    int64_t end = util_now_ms() + KERNEL_SAVE_MS;
    for (;;) {
        int64_t left = end - util_now_ms();
        if (left <= 0)
            return -ETIMEDOUT;
        struct pollfd p[4] = {{k->chan, POLLIN, 0}, {k->out_r, POLLIN, 0}, {k->err_r, POLLIN, 0},
                              {k->py_pidfd, POLLIN, 0}};
        int r = poll(p, 4, (int)(left < 1000 ? left : 1000));
        if (r < 0 && errno != EINTR)
            return -errno;
        if (p[1].revents || p[2].revents)
            kernel__proc_drain(h);
        if (p[0].revents)
            return kernel_chan_recv(k->chan, HOST_PEER_MS, SAVE_ANSWER_MAX, a);
        if (p[3].revents)
            return -EPIPE;
    }
}

int kernel__save(struct host *h, bool locked, json_object **report, char *why, size_t whylen)
{
    struct kproc *k = &h->k;
    char hs[32];
    *report = NULL;
    if (!h->cfg->kernels.save_bytes) {
        snprintf(why, whylen, "kernels are not saved here (kernel_save_bytes = 0)");
        return 0;
    }
    if (!k->up || k->chan < 0) {
        snprintf(why, whylen, "the kernel was gone");
        return 0;
    }
    if (h->cell.on) {
        snprintf(why, whylen, "a cell was running");
        return 0;
    }
    /* The workspace is the kernel's again (a session's run may have had
     * it), unless a call of the workspace holds it now: then the kernel
     * writes where it can. */
    int lock = -1;
    if (!locked) {
        lock = open(h->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0) {
            close(lock);
            lock = -1;
        }
    }
    if ((locked || lock >= 0) && jail_regive(&k->proc) < 0)
        log_msg(LOG_LVL_WARN, "the workspace could not be given to the kernel for its save");
    if (lock >= 0)
        close(lock);
    const char *key;
    uint64_t limit = save_limit(h, &key);
    char path[PATH_MAX + 32];
    kernel__save_path(h, path, sizeof path);
    json_object *m = json_object_new_object();
    if (!m)
        return -ENOMEM;
    json_object_object_add(m, "save", json_object_new_string(path));
    json_object_object_add(m, "limit", json_object_new_int64((int64_t)limit));
    int64_t t0 = util_now_ms();
    int rc = kernel_chan_send(k->chan, m);
    json_object_put(m);
    json_object *a = NULL;
    if (rc == 0)
        rc = save_wait(h, &a);
    if (rc < 0) {
        json_object_put(a);
        if (rc == -ETIMEDOUT)
            snprintf(why, whylen, "the kernel did not write its state within %d s", KERNEL_SAVE_MS / 1000);
        else
            snprintf(why, whylen, "the kernel did not answer (%s)", rc == -EPIPE ? "it ended" : strerror(-rc));
        return 0;
    }
    json_object *v;
    bool saved = json_object_object_get_ex(a, "saved", &v) && json_object_get_boolean(v);
    if (!saved) {
        if (json_object_object_get_ex(a, "over", &v) && !strcmp(key, "workspace_bytes")) {
            char ws[32];
            util_human_size(limit, hs, sizeof hs);
            util_human_size(h->limits.workspace_bytes, ws, sizeof ws);
            snprintf(why, whylen, "its state passed the room the workspace had left (%s of workspace_bytes = %s) "
                     "and was not saved", hs, ws);
        } else if (json_object_object_get_ex(a, "over", &v)) {
            util_human_size(limit, hs, sizeof hs);
            snprintf(why, whylen, "its state passed %s (%s = %s) and was not saved", key, key, hs);
        } else {
            const char *r = json_object_object_get_ex(a, "reason", &v) ? json_object_get_string(v) : NULL;
            snprintf(why, whylen, "its state could not be saved (%.300s)", r ? r : "the kernel did not say why");
        }
        json_object_put(a);
        return 0;
    }
    rc = kernel_saved_write(h->dir, (const char *const *)k->reqs.v, k->reqs.n);
    if (rc < 0) {
        json_object_put(a);
        snprintf(why, whylen, "its state was written, but not recorded (%s)", strerror(-rc));
        return rc;
    }
    uint64_t bytes = json_object_object_get_ex(a, "bytes", &v) ? (uint64_t)json_object_get_int64(v) : 0;
    int64_t names = json_object_object_get_ex(a, "n_names", &v) ? json_object_get_int64(v) : 0;
    int64_t skipped = json_object_object_get_ex(a, "n_skipped", &v) ? json_object_get_int64(v) : 0;
    util_human_size(bytes, hs, sizeof hs);
    if (skipped)
        snprintf(why, whylen, "its %lld names were saved (%s; %lld could not be)", (long long)names, hs,
                 (long long)skipped);
    else
        snprintf(why, whylen, "its %lld names were saved (%s)", (long long)names, hs);
    json_object_object_add(a, "ms", json_object_new_int64(util_now_ms() - t0));
    log_msg(LOG_LVL_INFO, "kernel saved: %s", why);
    *report = a;
    return 1;
}

void kernel__save_at_end(struct host *h)
{
    json_object *report = NULL;
    char why[KERNEL_REASON_MAX / 2];
    int rc = kernel__save(h, false, &report, why, sizeof why);
    json_object_put(report);
    size_t n = strlen(h->end_reason);
    if (rc > 0 && kernel_restore_mark(h->dir, true) < 0)
        log_msg(LOG_LVL_WARN, "cannot mark the kernel's state for its restore");
    snprintf(h->end_reason + n, sizeof h->end_reason - n, "; %s", why);
}
