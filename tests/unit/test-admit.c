/* test-admit.c: run slots and the queue (sandbox/admit.c): the bound, the
 * wait, cancel and time-out while queued, and a slot given back by a
 * process that dies. */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "admit.h"
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

int main(void)
{
    if (!mkdtemp(state))
        return 1;
    struct admit_config c = {.max_running = 2, .max_queued = 1, .queue_wait_ms = 100};
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
    is_int(admit_count(state, &c, &running, &queued), 0, "count");
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

    c.max_running = 0;
    ok(admit_max_running(&c) >= 1, "max_concurrent_runs = 0 means the CPUs (%u)", admit_max_running(&c));
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", state);
    if (system(cmd) != 0)
        diag("cannot remove %s", state);
    return tap_done();
}
