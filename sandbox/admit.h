/* admit.h: admission control shared by every process that uses one state
 * directory (the workers of `serve`, CGI processes, the CLI): at most
 * max_running scripts run at once, at most max_queued more wait for a slot,
 * in the order they came, and the rest are turned away at once. Slots are
 * lock files (STATE/.admit/run.N and queue.N, flock'd), so a process that
 * dies gives its slot back with its descriptors. No HTTP in here: the front
 * doors map -EBUSY to their own "busy, retry later" answer. */
#ifndef RMS_ADMIT_H
#define RMS_ADMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "executor.h"

#define ADMIT_POLL_MS 50       /* a queued run looks for a free slot at least this often */

/* The order of the queue, shared by every process of a state directory:
 * STATE/.admit/order mapped into each waiter. Each queue place holds the
 * ticket of its waiter (drawn from next when it arrived; 0: nobody), and a
 * slot that comes free goes to the lowest ticket (admit.c). */
struct admit_order {
    uint64_t next;                     /* the last ticket drawn */
    uint32_t hi;                       /* the highest place ever taken, plus one */
    uint32_t unused;
    uint64_t ticket[EXEC_MAX_SLOTS];  /* by queue place */
};

/* What a caller holds: a run slot, or a place in the queue, or nothing. */
struct admit_ticket {
    int run_fd;     /* held run slot, or -1 */
    int queue_fd;   /* held queue place, or -1 */
    int dir_fd;     /* STATE/.admit while something is held, or -1 */
    struct admit_order *order; /* mapped while queued, or NULL (no order: unordered) */
    uint32_t place;            /* the queue place held (queue_fd >= 0) */
    uint64_t number;           /* its ticket in order */
    uint32_t window;           /* how many of the first in line race for a slot (admit.c) */
};
#define ADMIT_TICKET_INIT {-1, -1, -1, NULL, 0, 0, 0}

/* Takes a run slot when one is free and nobody waits for one, else a place
 * in the queue (behind every call already queued). 0 with
 * t->run_fd set (run now) or t->queue_fd set (call admit_wait); -EBUSY when
 * the queue is full too (nothing held); another -errno when the slot files
 * cannot be made (nothing held). */
int admit_enter(const char *state_dir, const struct exec_admit_config *c, struct admit_ticket *t) must_check;

/* Waits in the queue for a run slot, polling cancelled(ctx) (may be NULL).
 * Slots go to the queued calls in the order they arrived: only the first
 * few of them (as many as there are run slots) try for one, and a waiter
 * that died is passed over. 0: t->run_fd is
 * held and the queue place given back. -ECANCELED when cancelled,
 * -ETIMEDOUT after queue_wait_ms; then nothing is held. */
int admit_wait(const char *state_dir, const struct exec_admit_config *c, struct admit_ticket *t,
               bool (*cancelled)(void *ctx), void *ctx) must_check;

/* Gives back what t holds. Safe to call twice. */
void admit_leave(struct admit_ticket *t);

#endif
