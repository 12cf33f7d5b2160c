/* admit.c: run slots and queue places as flock'd files under STATE/.admit,
 * and the order in which the queue is served.
 *
 * Why files and not a shared counter: the processes that share a state
 * directory are not all children of one parent (CGI, the CLI, two `serve`
 * instances), and a process killed with SIGKILL must give its slot back.
 * The kernel drops an flock when the last descriptor of its open file goes,
 * which is exactly that. Slot files are opened read-only (flock does not
 * care): the only writes there are the order's, and the touch (an open for
 * writing, then a close) that tells the first queued run a slot may have
 * come free: it waits for that with inotify on its own place's file (an
 * instance the process keeps: wake_watch), and looks anyway every
 * ADMIT_POLL_MS (a holder that died touches nothing).
 *
 * The order: when every queued run raced for a freed slot, whoever looked
 * first won, and a run could lose that race again and again (at 64
 * clients, p99 waits five times the mean); a new call could also take a
 * slot past everyone queued. So each queued run draws a ticket when it
 * takes its queue place and writes it into the place's entry of
 * STATE/.admit/order, a small file every waiter maps (struct
 * admit_order): a slot goes to the first in line (the first few, as many
 * as there are run slots, race for it: my_turn), who alone are woken
 * (waking every waiter to find them cost more than the handover itself),
 * and a new call queues whenever anyone is queued. A holder
 * that dies leaves its entry behind with its place's lock free: each
 * waiter looks now and then at the lock of the one just before it and
 * clears the entry of a dead one. Without the file (it cannot be made), the queue
 * still bounds, in no particular order. */
#include "config.h"

#include "admit.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define ADMIT_PROBE_MS 200 /* how often a waiter looks whether the one before it died */
#define ADMIT_WINDOW_MAX 8 /* at most this many of the first in line race for a freed slot */
#define ADMIT_ORDER "order"

uint32_t exec_admit_max_running(const struct exec_admit_config *c)
{
    if (c->max_running)
        return c->max_running;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > EXEC_MAX_SLOTS ? EXEC_MAX_SLOTS : (uint32_t)n;
}

static int admit__dir(const char *state_dir)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s/.admit", state_dir) >= sizeof dir)
        return -ENAMETOOLONG;
    if (mkdir(dir, 0700) < 0 && errno != EEXIST)
        return -errno;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    return fd < 0 ? -errno : fd;
}

/* Opens (or makes) slot kind.i. */
static int admit__slot(int dfd, const char *kind, uint32_t i)
{
    char name[32];
    snprintf(name, sizeof name, "%s.%u", kind, i);
    int fd = openat(dfd, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    return fd < 0 ? -errno : fd;
}

/* Tries slots kind.0 .. kind.(n-1), starting at a random one so that
 * contenders spread out. Returns the held fd (its index in *index when not
 * NULL), -EAGAIN when all are held, or -errno. probe: only count the held
 * ones into *held, take nothing. */
static int admit__try(int dfd, const char *kind, uint32_t n, bool probe, uint32_t *held, uint32_t *index)
{
    uint32_t start = 0;
    if (!probe && util_random(&start, sizeof start) < 0)
        start = (uint32_t)getpid();
    int err = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t k = n ? (start + i) % n : 0;
        int fd = admit__slot(dfd, kind, k);
        if (fd < 0) {
            err = fd;
            continue;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
            if (!probe) {
                if (index)
                    *index = k;
                return fd;
            }
            flock(fd, LOCK_UN);
        } else if (held) {
            (*held)++;
        }
        close(fd);
    }
    return err && err != -EAGAIN ? err : -EAGAIN;
}

/* ------------------------------------------------------------ the order */

/* Maps STATE/.admit/order (made, and sized, by whoever comes first: a
 * file of zeros is an empty queue). NULL when it cannot be. */
static struct admit_order *order_map(int dfd)
{
    cleanup_fd int fd = openat(dfd, ADMIT_ORDER, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
        return NULL;
    if ((size_t)st.st_size < sizeof(struct admit_order) && ftruncate(fd, sizeof(struct admit_order)) < 0)
        return NULL;
    void *p = mmap(NULL, sizeof(struct admit_order), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    return p == MAP_FAILED ? NULL : p;
}

static void order_unmap(struct admit_order **o)
{
    if (*o)
        munmap(*o, sizeof **o);
    *o = NULL;
}

/* The places to look at: up to the highest one ever taken (a queue of 64
 * places scans 64 entries, not EXEC_MAX_SLOTS). */
static uint32_t order_hi(const struct admit_order *o)
{
    uint32_t hi = __atomic_load_n(&o->hi, __ATOMIC_ACQUIRE);
    return hi > EXEC_MAX_SLOTS ? EXEC_MAX_SLOTS : hi;
}

/* The lowest ticket above after among the queue places (0: none), and its
 * place in *place. */
static uint64_t order_first(const struct admit_order *o, uint64_t after, uint32_t *place)
{
    uint64_t best = 0;
    for (uint32_t i = 0, hi = order_hi(o); i < hi; i++) {
        uint64_t t = __atomic_load_n(&o->ticket[i], __ATOMIC_ACQUIRE);
        if (t > after && (best == 0 || t < best)) {
            best = t;
            *place = i;
        }
    }
    return best;
}

/* Takes my entry out of the order (only if it is still mine). */
static void order_leave(struct admit_ticket *t)
{
    if (!t->order || !t->number)
        return;
    uint64_t mine = t->number;
    __atomic_compare_exchange_n(&t->order->ticket[t->place], &mine, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
    t->number = 0;
}

/* Ticket number at place: when its holder is gone (the place's lock is
 * free), its entry goes (true). Holding the lock while the entry
 * is cleared, no new holder of the place can have written one. */
static bool order_clear_dead(int dfd, struct admit_order *o, uint32_t place, uint64_t number)
{
    cleanup_fd int fd = admit__slot(dfd, "queue", place);
    if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) < 0)
        return false; /* alive (or unknowable: leave it) */
    uint64_t want = number;
    return __atomic_compare_exchange_n(&o->ticket[place], &want, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Tells the first window waiters in line to look again: a close after
 * writing a queue place's file is what its waiter watches (inotify
 * IN_CLOSE_WRITE), so that only they wake, not every waiter. Without the
 * order, nobody is told: the waiters look every ADMIT_POLL_MS anyway. */
static void admit__wake(int dfd, uint32_t window)
{
    if (dfd < 0)
        return;
    struct admit_order *o = order_map(dfd);
    uint64_t after = 0;
    for (uint32_t k = 0; o && k < window; k++) {
        uint32_t place = 0;
        after = order_first(o, after, &place);
        if (!after)
            break;
        char name[32];
        snprintf(name, sizeof name, "queue.%u", place);
        int w = openat(dfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
        if (w >= 0)
            close(w);
    }
    order_unmap(&o);
}

/* True when some queued run is waiting (an entry that is not ours). */
static bool order_busy(int dfd)
{
    struct admit_order *o = order_map(dfd);
    uint32_t place = 0;
    bool busy = o && order_first(o, 0, &place) != 0;
    order_unmap(&o);
    return busy;
}

/* ------------------------------------------------------- enter and wait */

int admit_enter(const char *state_dir, const struct exec_admit_config *c, struct admit_ticket *t)
{
    *t = (struct admit_ticket)ADMIT_TICKET_INIT;
    cleanup_fd int dfd = admit__dir(state_dir);
    if (dfd < 0)
        return dfd;
    /* A free slot is ours only when nobody is queued for one. */
    int fd = c->max_queued && order_busy(dfd) ? -EAGAIN : admit__try(dfd, "run", exec_admit_max_running(c), false, NULL, NULL);
    if (fd >= 0) {
        t->run_fd = fd;
    } else if (fd != -EAGAIN) {
        return fd;
    } else if (c->max_queued == 0) {
        return -EBUSY;
    } else {
        uint32_t place = 0;
        fd = admit__try(dfd, "queue", c->max_queued, false, NULL, &place);
        if (fd < 0)
            return fd == -EAGAIN ? -EBUSY : fd;
        t->queue_fd = fd;
        t->place = place;
        uint32_t n = exec_admit_max_running(c);
        t->window = n > ADMIT_WINDOW_MAX ? ADMIT_WINDOW_MAX : n;
        t->order = order_map(dfd);
        if (t->order) {
            uint32_t hi = __atomic_load_n(&t->order->hi, __ATOMIC_ACQUIRE);
            while (hi < place + 1 &&
                   !__atomic_compare_exchange_n(&t->order->hi, &hi, place + 1, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                ; /* hi: the highest place any waiter took, plus one */
            t->number = __atomic_add_fetch(&t->order->next, 1, __ATOMIC_ACQ_REL);
            __atomic_store_n(&t->order->ticket[place], t->number, __ATOMIC_RELEASE);
        }
    }
    if (t->run_fd >= 0)
        t->window = exec_admit_max_running(c) > ADMIT_WINDOW_MAX ? ADMIT_WINDOW_MAX : exec_admit_max_running(c);
    t->dir_fd = steal_fd(&dfd);
    return 0;
}

/* Whether t may try the run slots now: fewer than t->window calls are
 * ahead of it in line (or there is no order). The window is the number of
 * run slots: the first few in line race for a slot that comes free, so
 * that a handover waits for the first of them the scheduler runs, not for
 * one given process (on a busy machine, milliseconds), and a call can
 * only be passed by one that is within a few places of it. Every
 * ADMIT_PROBE_MS a waiter looks at the one just before it in line and
 * clears its entry when it died, so that a line of dead entries goes,
 * however long. */
static bool my_turn(struct admit_ticket *t, int64_t *next_probe, bool *near)
{
    *near = true;
    if (!t->order || !t->number)
        return true;
    uint32_t window = t->window ? t->window : 1, ahead = 0, before_place = 0;
    uint64_t before = 0;
    for (uint32_t i = 0, hi = order_hi(t->order); i < hi; i++) {
        uint64_t x = __atomic_load_n(&t->order->ticket[i], __ATOMIC_ACQUIRE);
        if (x && x < t->number) {
            ahead++;
            if (x > before)
                before = x, before_place = i;
        }
    }
    if (ahead < window)
        return true;
    *near = false;
    int64_t now = util_now_ms();
    if (now < *next_probe)
        return false;
    *next_probe = now + ADMIT_PROBE_MS;
    if (!order_clear_dead(t->dir_fd, t->order, before_place, before))
        return false;
    *near = ahead - 1 < window; /* the one before went: one fewer ahead */
    return *near;
}

/* The inotify instance a process waits with, made at its first wait and
 * kept until it exits (one per thread; a forked child makes its own).
 * Closing an instance waits for the kernel to free its watches (a grace
 * period: 5 to 15 ms on a two-core machine), which, paid by every queued
 * call as it took its slot, was most of the handover: at 8 clients on two
 * slots, both slots stood free three fifths of the time while six calls
 * waited. A wait adds its watch and removes it (neither waits). */
static __thread int wake_fd = -1;
static __thread pid_t wake_pid;

struct wake {
    int fd; /* the instance, or -1 (polling alone still works) */
    int wd; /* the watch on the queue place's file */
};

static void wake_drain(int fd)
{
    char buf[4096];
    while (read(fd, buf, sizeof buf) > 0)
        ; /* any event means "try again" */
}

/* Watches t's queue place: w->fd reads when it is touched (it is first in
 * line and a slot may be free). What the instance held from a wait before
 * (the removed watch's IN_IGNORED, a late touch) is drained first. */
static struct wake wake_watch(const char *state_dir, const struct admit_ticket *t)
{
    struct wake w = {-1, -1};
    if (wake_fd < 0 || wake_pid != getpid()) {
        wake_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK); /* an inherited one is the parent's: left alone */
        wake_pid = getpid();
    }
    if (wake_fd < 0)
        return w;
    wake_drain(wake_fd);
    char path[PATH_MAX];
    if ((size_t)snprintf(path, sizeof path, "%s/.admit/queue.%u", state_dir, t->place) >= sizeof path)
        return w;
    w.wd = inotify_add_watch(wake_fd, path, IN_CLOSE_WRITE | IN_DONT_FOLLOW);
    if (w.wd >= 0)
        w.fd = wake_fd;
    return w;
}

static void wake_unwatch(struct wake *w)
{
    if (w->fd >= 0)
        inotify_rm_watch(w->fd, w->wd);
    w->fd = -1;
}

int admit_wait(const char *state_dir, const struct exec_admit_config *c, struct admit_ticket *t,
               bool (*cancelled)(void *ctx), void *ctx)
{
    if (t->run_fd >= 0)
        return 0;
    if (t->dir_fd < 0)
        return -EINVAL;
    /* Watch before trying, so that no release falls between the two. */
    struct wake w = wake_watch(state_dir, t);
    int64_t give_up = util_now_ms() + c->queue_wait_ms, next_probe = util_now_ms() + ADMIT_PROBE_MS;
    uint32_t n = exec_admit_max_running(c);
    for (;;) {
        bool near = true;
        int fd = my_turn(t, &next_probe, &near) ? admit__try(t->dir_fd, "run", n, false, NULL, NULL) : -EAGAIN;
        if (fd >= 0) {
            order_leave(t);
            close(t->queue_fd);
            t->queue_fd = -1;
            order_unmap(&t->order);
            t->run_fd = fd;
            wake_unwatch(&w);
            admit__wake(t->dir_fd, t->window); /* the next in line: another slot may be free too */
            return 0;
        }
        int rc = 0;
        if (fd != -EAGAIN)
            rc = fd;
        else if (cancelled && cancelled(ctx))
            rc = -ECANCELED;
        else if (util_now_ms() >= give_up)
            rc = -ETIMEDOUT;
        if (rc < 0) {
            wake_unwatch(&w);
            admit_leave(t);
            return rc;
        }
        if (w.fd < 0) {
            usleep((near ? ADMIT_POLL_MS : ADMIT_PROBE_MS) * 1000);
            continue;
        }
        struct pollfd pfd = {.fd = w.fd, .events = POLLIN};
        /* Within the window a slot can come free at any time (a holder
         * that dies tells nobody); further back only the wakes matter, and
         * the look at the one before. */
        if (poll(&pfd, 1, near ? ADMIT_POLL_MS : ADMIT_PROBE_MS) > 0)
            wake_drain(w.fd);
    }
}

void admit_leave(struct admit_ticket *t)
{
    /* Closing the descriptor drops the lock (no other copy: O_CLOEXEC, and
     * the jail closes what it does not pass on). */
    bool wake = t->run_fd >= 0 || t->number; /* a slot came free, or the line moved */
    if (t->run_fd >= 0)
        close(t->run_fd);
    order_leave(t);
    order_unmap(&t->order);
    if (t->queue_fd >= 0)
        close(t->queue_fd);
    if (wake)
        admit__wake(t->dir_fd, t->window);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    *t = (struct admit_ticket)ADMIT_TICKET_INIT;
}

int probe_slots(const char *state_dir, const struct exec_admit_config *c, uint32_t *running, uint32_t *queued)
{
    *running = *queued = 0;
    cleanup_fd int dfd = admit__dir(state_dir);
    if (dfd < 0)
        return dfd;
    int rc = admit__try(dfd, "run", exec_admit_max_running(c), true, running, NULL);
    if (rc != -EAGAIN && rc < 0)
        return rc;
    rc = admit__try(dfd, "queue", c->max_queued, true, queued, NULL);
    return rc != -EAGAIN && rc < 0 ? rc : 0;
}
