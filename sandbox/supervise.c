/* supervise.c: the one loop that watches a started process: poll() on its
 * outputs, its pidfd and the earliest of the tick, the deadline, the end of
 * the grace and the end of the drain; then, in that order, the outputs
 * read, the process's end asked, the stop decided. Also the in-memory
 * capture of an output with its line callback. */
#include "config.h"

#include "supervise.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define SUPERVISE_IDLE_MS 1000       /* the longest poll() without a tick: the deadline is checked at least this often */
#define SUPERVISE_READS_PER_WAKE 16  /* a busy output yields to the others, and to the checks, after this many reads */
#define SUPERVISE_LINE_MAX (1 << 20) /* a line longer than this reaches the line callback in pieces */

/* Where one supervision is. */
struct watch {
    const struct supervise *s;
    bool open[SUPERVISE_MAX_FDS];
    bool exited;
    enum supervise_end end;
    int64_t kill_at;      /* SIGKILL time once SIGTERM was sent; -1 */
    int64_t drain_until;  /* after the end: until then, read what is left; -1 */
};

static bool watch_any_open(const struct watch *w)
{
    for (size_t i = 0; i < w->s->n_fds; i++)
        if (w->open[i])
            return true;
    return false;
}

/* Reads what is there on fd i; false at EOF (or an error: the same). */
static bool watch_read(const struct watch *w, size_t i)
{
    const struct supervise_fd *f = &w->s->fds[i];
    size_t n = w->s->read_max && w->s->read_max < SUPERVISE_READ_MAX ? w->s->read_max : SUPERVISE_READ_MAX;
    char buf[SUPERVISE_READ_MAX];
    for (int k = 0; k < SUPERVISE_READS_PER_WAKE; k++) {
        ssize_t r = read(f->fd, buf, n);
        if (r > 0) {
            f->chunk(f->ctx, buf, (size_t)r);
            continue;
        }
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return true;
        return false;
    }
    return true;
}

/* The deadline, the tick and the grace, at time now. */
static void watch_check(struct watch *w, int64_t now)
{
    const struct supervise *s = w->s;
    if (!w->exited && w->end == SUPERVISE_EXITED) {
        if (s->deadline >= 0 && now >= s->deadline)
            w->end = SUPERVISE_DEADLINE;
        else if (s->tick && s->tick(s->ctx, now))
            w->end = SUPERVISE_STOPPED;
        if (w->end != SUPERVISE_EXITED && s->grace_ms == SUPERVISE_NO_GRACE) {
            s->stop(s->ctx, w->end, SIGKILL);
        } else if (w->end != SUPERVISE_EXITED) {
            s->stop(s->ctx, w->end, SIGTERM);
            w->kill_at = now + s->grace_ms;
        }
    }
    if (w->kill_at >= 0 && now >= w->kill_at) {
        s->stop(s->ctx, w->end, SIGKILL);
        w->kill_at = -1;
    }
}

/* How long poll() may sleep from now. */
static int watch_wait(const struct watch *w, int64_t now)
{
    const struct supervise *s = w->s;
    int64_t wait = s->tick ? s->tick_ms : SUPERVISE_IDLE_MS;
    if (!w->exited && w->end == SUPERVISE_EXITED && s->deadline >= 0 && s->deadline - now < wait)
        wait = s->deadline - now;
    if (w->kill_at >= 0 && w->kill_at - now < wait)
        wait = w->kill_at - now;
    if (w->drain_until >= 0 && w->drain_until - now < wait)
        wait = w->drain_until - now;
    return wait < 0 ? 0 : (int)wait;
}

int supervise_run(const struct supervise *s, enum supervise_end *end)
{
    struct watch w = {.s = s, .end = SUPERVISE_EXITED, .kill_at = -1, .drain_until = -1};
    int rc = 0;
    for (size_t i = 0; i < s->n_fds; i++)
        w.open[i] = true;
    while (watch_any_open(&w) || (s->reap && !w.exited)) {
        int64_t now = util_now_ms();
        if (w.exited && w.drain_until >= 0 && now >= w.drain_until)
            break;
        watch_check(&w, now);

        struct pollfd pfd[SUPERVISE_MAX_FDS + 1];
        int at[SUPERVISE_MAX_FDS], np = 0, i_pid = -1;
        for (size_t i = 0; i < s->n_fds; i++) {
            at[i] = w.open[i] ? np : -1;
            if (w.open[i])
                pfd[np++] = (struct pollfd){s->fds[i].fd, POLLIN, 0};
        }
        if (s->reap && !w.exited && s->pidfd >= 0) {
            i_pid = np;
            pfd[np++] = (struct pollfd){s->pidfd, POLLIN, 0};
        }
        int pr = poll(pfd, (nfds_t)np, watch_wait(&w, now));
        if (pr < 0 && errno != EINTR) {
            rc = -errno;
            break;
        }
        for (size_t i = 0; pr > 0 && i < s->n_fds; i++)
            if (at[i] >= 0 && pfd[at[i]].revents)
                w.open[i] = watch_read(&w, i);
        if (s->reap && !w.exited && (s->pidfd < 0 || (pr > 0 && i_pid >= 0 && pfd[i_pid].revents)) &&
            s->reap(s->ctx) != 0) {
            w.exited = true;
            w.drain_until = util_now_ms() + s->drain_ms;
        }
    }
    *end = w.end;
    return rc;
}

/* ----------------------------------------------------------- capture */

void supervise_capture_init(struct supervise_capture *c, size_t max, void (*line)(void *ctx, const char *line),
                            void *ctx)
{
    dbuf_init(&c->out, max);
    dbuf_init(&c->pending, SUPERVISE_LINE_MAX);
    c->line = line;
    c->ctx = ctx;
    c->cancelled = NULL;
}

/* Hands every complete line of pending to the callback (and with flush,
 * the incomplete rest too) and keeps what is left. */
static void capture_lines(struct supervise_capture *c, bool flush)
{
    struct dbuf *pending = &c->pending;
    size_t start = 0;
    for (size_t i = 0; i < pending->len; i++) {
        if (pending->data[i] == '\n') {
            pending->data[i] = '\0';
            c->line(c->ctx, pending->data + start);
            start = i + 1;
        }
    }
    if (flush && start < pending->len) {
        c->line(c->ctx, pending->data + start);
        start = pending->len;
    }
    if (!pending->data)
        return; /* nothing came yet (a process killed before its first byte) */
    memmove(pending->data, pending->data + start, pending->len - start);
    pending->len -= start;
    pending->data[pending->len] = '\0';
}

static void capture_chunk(void *capture, const char *data, size_t len)
{
    struct supervise_capture *c = capture;
    discard(dbuf_append(&c->out, data, len)); /* past the ceiling: dropped */
    if (!c->line)
        return;
    /* A line past SUPERVISE_LINE_MAX: what came of it goes out as it is. */
    capture_lines(c, dbuf_append(&c->pending, data, len) < 0);
}

static char *capture_finish(struct supervise_capture *c)
{
    if (c->line)
        capture_lines(c, true);
    dbuf_free(&c->pending);
    return dbuf_steal(&c->out, NULL);
}

/* The capture's cancel and its caller's stop, for supervise_run's one ctx. */
struct capture_watch {
    struct supervise_capture *c;
    void (*stop)(void *ctx, enum supervise_end why, int sig);
    void *ctx;
};

static bool capture_tick(void *ctx, int64_t now)
{
    struct capture_watch *w = ctx;
    (void)now;
    return w->c->cancelled(w->c->ctx);
}

static void capture_stop(void *ctx, enum supervise_end why, int sig)
{
    struct capture_watch *w = ctx;
    w->stop(w->ctx, why, sig);
}

enum supervise_end supervise_capture_run(struct supervise_capture *c, int fd, int64_t timeout_ms,
                                         void (*stop)(void *ctx, enum supervise_end why, int sig), void *ctx,
                                         char **out)
{
    struct capture_watch w = {c, stop, ctx};
    struct supervise s = {
        .fds = {{fd, capture_chunk, c}},
        .n_fds = 1,
        .read_max = SUPERVISE_CAPTURE_READ,
        .pidfd = -1,
        .deadline = util_now_ms() + timeout_ms,
        .tick = c->cancelled ? capture_tick : NULL,
        .tick_ms = SUPERVISE_CANCEL_TICK_MS,
        .stop = capture_stop,
        .grace_ms = SUPERVISE_NO_GRACE,
        .ctx = &w,
    };
    enum supervise_end end;
    discard(supervise_run(&s, &end)); /* a failed poll ends the watch as EOF would */
    *out = capture_finish(c);
    return end;
}
