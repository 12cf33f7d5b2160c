/* test-admit.c: run slots and the queue (sandbox/admit.c): the bound, the
 * wait, cancel and time-out while queued, a slot given back by a process
 * that dies, the bound under a burst of 100, and the order: queued calls
 * get the slots in the order they came, a new call does not pass them, and
 * a waiter that died is passed over; a process keeps one inotify
 * instance for its waits (closing one waits for the kernel). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <dirent.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit.h"
#include "util.h"
#include "tap.h"

static char state[] = "/tmp/rms-admit.XXXXXX";

static bool yes(void *ctx)
{
    (void)ctx;
    return true;
}

static bool after_release(void *ctx)
{
    /* Frees the held slot on the first poll: the waiter must take it. */
    struct admit_ticket *held = ctx;
    admit_leave(held);
    return false;
}

/* A child that queues (saying 'q' on said once it holds its place), waits
 * for its slot, says its number on order, holds the slot a moment and
 * leaves. parent_slot: the parent's run slot, whose lock a copy of the
 * descriptor would keep. */
static pid_t queued_child(const struct exec_admit_config *c, int said, int order, char number, int parent_slot)
{
    pid_t pid = fork();
    if (pid != 0)
        return pid;
    close(parent_slot);
    struct admit_ticket t = ADMIT_TICKET_INIT;
    char q = admit_enter(state, c, &t) == 0 && t.queue_fd >= 0 ? 'q' : 'x';
    if (write(said, &q, 1) != 1 || q != 'q')
        _exit(1);
    if (admit_wait(state, c, &t, NULL, NULL) < 0)
        _exit(2);
    if (write(order, &number, 1) != 1)
        _exit(3);
    usleep(20 * 1000);
    admit_leave(&t);
    _exit(0);
}

/* The inotify instances this process holds. */
static int inotify_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], to[64];
        snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
        ssize_t len = readlink(path, to, sizeof to - 1);
        if (len > 0) {
            to[len] = '\0';
            n += strcmp(to, "anon_inode:inotify") == 0;
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* Five waits in one process, each woken by a slot another process frees:
 * each takes its slot, and the process holds one inotify instance after
 * them all, not one per wait nor none (each wait used to make one and
 * close it, and the close waited for the kernel to free its watch: 5 to
 * 15 ms added to every handover). A forked child waits with one of its
 * own, and the parent's still serves it after. */
static void test_kept_watch(const char *dir)
{
    struct exec_admit_config c = {.max_running = 1, .max_queued = 4, .queue_wait_ms = 30000};
    int took = 0;
    for (int i = 0; i < 5; i++) {
        int ready[2], go[2];
        if (pipe(ready) < 0 || pipe(go) < 0)
            return;
        pid_t pid = fork();
        if (pid == 0) { /* holds the slot until told, then frees it */
            struct admit_ticket t = ADMIT_TICKET_INIT;
            char r = admit_enter(dir, &c, &t) == 0 && t.run_fd >= 0 ? 'y' : 'n', x;
            if (write(ready[1], &r, 1) != 1 || r != 'y' || read(go[0], &x, 1) != 1)
                _exit(1);
            usleep(20 * 1000); /* the parent is in its wait by now, mostly */
            admit_leave(&t);
            _exit(0);
        }
        close(go[0]); /* a child that got no slot reads no 'g' */
        char r = 0;
        if (read(ready[0], &r, 1) != 1 || r != 'y') {
            waitpid(pid, NULL, 0);
            break;
        }
        struct admit_ticket q = ADMIT_TICKET_INIT;
        if (admit_enter(dir, &c, &q) == 0 && q.queue_fd >= 0 && write(go[1], "g", 1) == 1 &&
            admit_wait(dir, &c, &q, NULL, NULL) == 0 && q.run_fd >= 0)
            took++;
        admit_leave(&q);
        waitpid(pid, NULL, 0);
        close(ready[0]), close(ready[1]), close(go[1]);
    }
    is_int(took, 5, "kept watch: five waits, each takes the slot another process freed");
    is_int(inotify_fds(), 1, "kept watch: the process holds one inotify instance after them");
    struct admit_ticket held = ADMIT_TICKET_INIT;
    is_int(admit_enter(dir, &c, &held), 0, "kept watch: the parent holds the slot");
    int said[2];
    if (pipe(said) < 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(held.run_fd);
        struct admit_ticket t = ADMIT_TICKET_INIT;
        char r = 'n';
        if (admit_enter(dir, &c, &t) == 0 && t.queue_fd >= 0 && write(said[1], "q", 1) == 1 &&
            admit_wait(dir, &c, &t, NULL, NULL) == 0 && t.run_fd >= 0)
            r = (char)('0' + inotify_fds()); /* the parent's, inherited, and its own */
        admit_leave(&t);
        if (write(said[1], &r, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char q = 0, r = 0;
    if (read(said[0], &q, 1) != 1)
        q = 0;
    usleep(20 * 1000);
    admit_leave(&held);
    if (read(said[0], &r, 1) != 1)
        r = 0;
    waitpid(pid, NULL, 0);
    is_int(r, '2', "kept watch: a forked child takes the slot with an instance of its own");
    struct admit_ticket a = ADMIT_TICKET_INIT, b = ADMIT_TICKET_INIT;
    is_int(admit_enter(dir, &c, &a), 0, "kept watch: the parent holds the slot again");
    is_int(admit_enter(dir, &c, &b), 0, "kept watch: and queues behind itself");
    is_int(admit_wait(dir, &c, &b, after_release, &a), 0, "kept watch: its own instance still serves its wait");
    is_int(inotify_fds(), 1, "kept watch: still one");
    admit_leave(&b);
    close(said[0]), close(said[1]);
}

static void test_order(void)
{
    struct exec_admit_config c = {.max_running = 1, .max_queued = 32, .queue_wait_ms = 30000};
    struct admit_ticket held = ADMIT_TICKET_INIT, late = ADMIT_TICKET_INIT;
    int said[2], order[2];
    if (pipe(said) < 0 || pipe(order) < 0)
        return;
    is_int(admit_enter(state, &c, &held), 0, "order: the parent holds the only slot");
    enum { N = 12 };
    pid_t kids[N + 1];
    char q;
    int queued = 0;
    for (int i = 0; i < N; i++) { /* one after the other: their arrival order is known */
        kids[i] = queued_child(&c, said[1], order[1], (char)('a' + i), held.run_fd);
        queued += read(said[0], &q, 1) == 1 && q == 'q';
        if (i == 4) { /* one that dies in the line: it is passed over */
            kids[N] = queued_child(&c, said[1], order[1], '!', held.run_fd);
            queued += read(said[0], &q, 1) == 1 && q == 'q';
            kill(kids[N], SIGKILL);
            waitpid(kids[N], NULL, 0);
        }
    }
    is_int(queued, N + 1, "order: %d calls queued one after the other (and one more, killed in the line)", N);
    admit_leave(&held);
    /* At once a new call: there are calls queued, so it queues too (the
     * freed slot is the first's, who needs a moment to wake). */
    is_int(admit_enter(state, &c, &late), 0, "order: a call that comes as the slot frees is admitted");
    ok(late.run_fd < 0 && late.queue_fd >= 0, "order: ... to the queue, behind the calls that came before it");
    char got[N + 1] = "", want[N + 1];
    for (int i = 0; i < N; i++)
        want[i] = (char)('a' + i);
    want[N] = '\0';
    size_t n = 0;
    while (n < N && read(order[0], got + n, 1) == 1)
        n++;
    got[n] = '\0';
    is_str(got, want, "order: the slot went to the queued calls in the order they came");
    for (int i = 0; i < N; i++)
        waitpid(kids[i], NULL, 0);
    is_int(admit_wait(state, &c, &late, NULL, NULL), 0, "order: and then to the late one");
    admit_leave(&late);
    close(said[0]), close(said[1]), close(order[0]), close(order[1]);
}

/* 100 calls at once against 3 slots and 10 places: exactly 3 run, 10
 * queue, 87 are turned away. */
static void test_burst(void)
{
    struct exec_admit_config c = {.max_running = 3, .max_queued = 10, .queue_wait_ms = 30000};
    int go[2], said[2];
    if (pipe(go) < 0 || pipe(said) < 0)
        return;
    enum { N = 100 };
    pid_t kids[N];
    for (int i = 0; i < N; i++) {
        kids[i] = fork();
        if (kids[i] == 0) {
            char x;
            close(go[1]);
            if (read(go[0], &x, 1) < 0)
                _exit(1);
            struct admit_ticket t = ADMIT_TICKET_INIT;
            int rc = admit_enter(state, &c, &t);
            x = rc == -EBUSY ? 'b' : rc < 0 ? 'e' : t.run_fd >= 0 ? 'r' : 'q';
            if (write(said[1], &x, 1) != 1)
                _exit(1);
            pause(); /* holding what it got */
            _exit(0);
        }
    }
    close(go[0]);
    close(go[1]); /* all at once */
    int counts[256] = {0};
    for (int i = 0; i < N; i++) {
        unsigned char x;
        if (read(said[0], &x, 1) == 1)
            counts[x]++;
    }
    is_int(counts['r'], 3, "burst: 100 at once: exactly max_running (3) run");
    is_int(counts['q'], 10, "burst: exactly max_queued (10) queue");
    is_int(counts['b'], 87, "burst: and the other 87 are busy");
    uint32_t running = 0, queued = 0;
    is_int(probe_slots(state, &c, &running, &queued), 0, "burst: count");
    is_int((int)(running * 100 + queued), 310, "burst: the slots say 3 running, 10 queued");
    for (int i = 0; i < N; i++) {
        kill(kids[i], SIGKILL);
        waitpid(kids[i], NULL, 0);
    }
    close(said[0]), close(said[1]);
}

/* The test's own state directories, made by mkdtemp. */
static void remove_tree(const char *dir)
{
    int e = util_rm_rf_at(AT_FDCWD, dir);
    if (e < 0)
        diag("cannot remove %s: %s", dir, strerror(-e));
}

int main(void)
{
    if (!mkdtemp(state))
        return 1;
    struct exec_admit_config c = {.max_running = 2, .max_queued = 1, .queue_wait_ms = 100};
    struct admit_ticket a = ADMIT_TICKET_INIT, b = ADMIT_TICKET_INIT, q = ADMIT_TICKET_INIT, x = ADMIT_TICKET_INIT;
    is_int(admit_enter(state, &c, &a), 0, "first: admitted");
    ok(a.run_fd >= 0 && a.queue_fd < 0, "first: holds a run slot");
    is_int(admit_enter(state, &c, &b), 0, "second: admitted");
    ok(b.run_fd >= 0, "second: holds the other run slot");
    is_int(admit_enter(state, &c, &q), 0, "third: admitted to the queue");
    ok(q.run_fd < 0 && q.queue_fd >= 0, "third: holds the queue place");
    is_int(admit_enter(state, &c, &x), -EBUSY, "fourth: busy (2 running, 1 queued)");
    ok(x.run_fd < 0 && x.queue_fd < 0, "fourth: holds nothing");
    uint32_t running, queued;
    is_int(probe_slots(state, &c, &running, &queued), 0, "count");
    is_int((int)running, 2, "two running");
    is_int((int)queued, 1, "one queued");

    is_int(admit_wait(state, &c, &q, NULL, NULL), -ETIMEDOUT, "queued: gives up after queue_wait");
    ok(q.queue_fd < 0, "and gives its place back");
    is_int(admit_enter(state, &c, &q), 0, "queued again");
    is_int(admit_wait(state, &c, &q, yes, NULL), -ECANCELED, "cancelled while queued");
    ok(q.queue_fd < 0 && q.run_fd < 0, "and holds nothing");

    c.queue_wait_ms = 10000;
    is_int(admit_enter(state, &c, &q), 0, "queued a third time");
    is_int(admit_wait(state, &c, &q, after_release, &b), 0, "takes the slot that came free");
    ok(q.run_fd >= 0 && q.queue_fd < 0, "holds a run slot, not the queue place");
    admit_leave(&q);
    admit_leave(&q); /* twice is fine */

    /* A process that dies holding a slot gives it back. */
    admit_leave(&a);
    int ready[2];
    if (pipe(ready) < 0)
        return 1;
    c.max_running = 1;
    c.max_queued = 0;
    pid_t pid = fork();
    if (pid == 0) {
        struct admit_ticket t = ADMIT_TICKET_INIT;
        char r = admit_enter(state, &c, &t) == 0 && t.run_fd >= 0 ? 'y' : 'n';
        if (write(ready[1], &r, 1) != 1)
            _exit(1);
        pause();
        _exit(0);
    }
    char r = 0;
    if (read(ready[0], &r, 1) != 1)
        r = 0;
    is_int(r, 'y', "a child takes the only slot");
    is_int(admit_enter(state, &c, &x), -EBUSY, "the parent is turned away");
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    is_int(admit_enter(state, &c, &x), 0, "the child was killed: its slot is free");
    ok(x.run_fd >= 0, "and taken");
    admit_leave(&x);

    test_order();
    test_burst();
    char kept[] = "/tmp/rms-admit-kept.XXXXXX"; /* no dead tickets of the burst in its order */
    if (mkdtemp(kept)) {
        test_kept_watch(kept);
        remove_tree(kept);
    }

    c.max_running = 0;
    ok(exec_admit_max_running(&c) >= 1, "max_concurrent_runs = 0 means the CPUs (%u)", exec_admit_max_running(&c));
    remove_tree(state);
    return tap_done();
}
