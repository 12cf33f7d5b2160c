/* admit.c: run slots and queue places as flock'd files under STATE/.admit,
 * and the order in which the queue is served.
 *
 * Why files and not a shared counter: the processes that share a state
 * directory are not all children of one parent (CGI, the CLI, two `serve`
 * instances), and a process killed with SIGKILL must give its slot back.
 * The kernel drops an flock when the last descriptor of its open file goes,
 * which is exactly that. Slot files are opened read-only (flock does not
 * care), and "wake" is touched (opened for writing and closed) when a slot
 * may have come free: queued runs wait for that with inotify, and look
 * anyway every ADMIT_POLL_MS (a holder that died touches nothing).
 *
 * The order: when every queued run raced for a freed slot, whoever looked
 * first won, and a run could lose that race again and again (at 64
 * clients, p99 waits five times the mean); a new call could also take a
 * slot past everyone queued. So each queued run draws a ticket when it
 * takes its queue place and writes it into the place's entry of
 * STATE/.admit/order, a small file every waiter maps (struct
 * admit_order): a slot goes to the lowest ticket, whose holder alone tries
 * the run slots, and a new call queues whenever anyone is queued. A holder
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

#define ADMIT_WAKE "wake"
#define ADMIT_PROBE_MS 200 /* how often a waiter looks whether the one before it died */
#define ADMIT_ORDER "order"

uint32_t admit_max_running(const struct admit_config *c)
{
    if (c->max_running)
        return c->max_running;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > ADMIT_MAX_SLOTS ? ADMIT_MAX_SLOTS : (uint32_t)n;
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

/* Tells the waiters to look again: a close after writing is what they
 * watch (inotify IN_CLOSE_WRITE on "wake"). */
static void admit__wake(int dfd)
{
    int w = dfd >= 0 ? openat(dfd, ADMIT_WAKE, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    if (w >= 0)
        close(w);
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

/* The lowest ticket above after among the queue places (0: none), and its
 * place in *place. */
static uint64_t order_first(const struct admit_order *o, uint64_t after, uint32_t *place)
{
    uint64_t best = 0;
    for (uint32_t i = 0; i < ADMIT_MAX_SLOTS; i++) {
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
 * free), its entry goes. Holding the lock while the entry
 * is cleared, no new holder of the place can have written one. */
static void order_clear_dead(int dfd, struct admit_order *o, uint32_t place, uint64_t number)
{
    cleanup_fd int fd = admit__slot(dfd, "queue", place);
    if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) < 0)
        return; /* alive (or unknowable: leave it) */
    uint64_t want = number;
    __atomic_compare_exchange_n(&o->ticket[place], &want, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
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

int admit_enter(const char *state_dir, const struct admit_config *c, struct admit_ticket *t)
{
    *t = (struct admit_ticket)ADMIT_TICKET_INIT;
    cleanup_fd int dfd = admit__dir(state_dir);
    if (dfd < 0)
        return dfd;
    /* A free slot is ours only when nobody is queued for one. */
    int fd = c->max_queued && order_busy(dfd) ? -EAGAIN : admit__try(dfd, "run", admit_max_running(c), false, NULL, NULL);
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
        t->order = order_map(dfd);
        if (t->order) {
            t->number = __atomic_add_fetch(&t->order->next, 1, __ATOMIC_ACQ_REL);
            __atomic_store_n(&t->order->ticket[place], t->number, __ATOMIC_RELEASE);
        }
    }
    t->dir_fd = steal_fd(&dfd);
    return 0;
}

/* Whether t may try the run slots now: it is first in line (or there is no
 * order). Every ADMIT_PROBE_MS a waiter looks at the one just before it in
 * line and clears its entry when it died, so that a line of dead entries
 * goes, however long. */
static bool my_turn(struct admit_ticket *t, int64_t *next_probe)
{
    if (!t->order || !t->number)
        return true;
    uint32_t place = 0;
    uint64_t first = order_first(t->order, 0, &place);
    if (first == 0 || first == t->number)
        return true;
    int64_t now = util_now_ms();
    if (now < *next_probe)
        return false;
    *next_probe = now + ADMIT_PROBE_MS;
    uint64_t before = 0;
    uint32_t before_place = 0;
    for (uint32_t i = 0; i < ADMIT_MAX_SLOTS; i++) {
        uint64_t x = __atomic_load_n(&t->order->ticket[i], __ATOMIC_ACQUIRE);
        if (x && x < t->number && x > before)
            before = x, before_place = i;
    }
    if (before)
        order_clear_dead(t->dir_fd, t->order, before_place, before);
    first = order_first(t->order, 0, &place);
    return first == 0 || first == t->number;
}

/* An inotify descriptor that reads when "wake" is touched, or -1 (polling
 * alone still works). */
static int wake_watch(const char *state_dir, int dfd)
{
    admit__wake(dfd); /* it must exist to be watched; a spare look costs nothing */
    char path[PATH_MAX];
    int ino = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
    if (ino < 0)
        return -1;
    if ((size_t)snprintf(path, sizeof path, "%s/.admit/" ADMIT_WAKE, state_dir) >= sizeof path ||
        inotify_add_watch(ino, path, IN_CLOSE_WRITE | IN_DONT_FOLLOW) < 0) {
        close(ino);
        return -1;
    }
    return ino;
}

int admit_wait(const char *state_dir, const struct admit_config *c, struct admit_ticket *t,
               bool (*cancelled)(void *ctx), void *ctx)
{
    if (t->run_fd >= 0)
        return 0;
    if (t->dir_fd < 0)
        return -EINVAL;
    /* Watch before trying, so that no release falls between the two. */
    cleanup_fd int ino = wake_watch(state_dir, t->dir_fd);
    int64_t give_up = util_now_ms() + c->queue_wait_ms, next_probe = util_now_ms() + ADMIT_PROBE_MS;
    uint32_t n = admit_max_running(c);
    for (;;) {
        int fd = my_turn(t, &next_probe) ? admit__try(t->dir_fd, "run", n, false, NULL, NULL) : -EAGAIN;
        if (fd >= 0) {
            order_leave(t);
            close(t->queue_fd);
            t->queue_fd = -1;
            order_unmap(&t->order);
            t->run_fd = fd;
            admit__wake(t->dir_fd); /* the next in line: another slot may be free */
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
            admit_leave(t);
            return rc;
        }
        if (ino < 0) {
            usleep(ADMIT_POLL_MS * 1000);
            continue;
        }
        struct pollfd pfd = {.fd = ino, .events = POLLIN};
        if (poll(&pfd, 1, ADMIT_POLL_MS) > 0) {
            char buf[4096];
            while (read(ino, buf, sizeof buf) > 0)
                ; /* drain: any event means "try again" */
        }
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
        admit__wake(t->dir_fd);
    if (t->dir_fd >= 0)
        close(t->dir_fd);
    *t = (struct admit_ticket)ADMIT_TICKET_INIT;
}

int admit_count(const char *state_dir, const struct admit_config *c, uint32_t *running, uint32_t *queued)
{
    *running = *queued = 0;
    cleanup_fd int dfd = admit__dir(state_dir);
    if (dfd < 0)
        return dfd;
    int rc = admit__try(dfd, "run", admit_max_running(c), true, running, NULL);
    if (rc != -EAGAIN && rc < 0)
        return rc;
    rc = admit__try(dfd, "queue", c->max_queued, true, queued, NULL);
    return rc != -EAGAIN && rc < 0 ? rc : 0;
}
