/* supervise.h: watching a started process to its end: its output read as
 * it comes, its exit, a deadline, a periodic check that may stop it, and
 * how its process tree is stopped. The script, the installer and the
 * trusted helpers all run under this one loop. */
#ifndef RMS_SUPERVISE_H
#define RMS_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define SUPERVISE_MAX_FDS 2
#define SUPERVISE_READ_MAX 65536 /* one read(); a pipe holds 64 KiB by default */
#define SUPERVISE_NO_GRACE (-1)  /* supervise.grace_ms: SIGKILL at once, no SIGTERM */
#define SUPERVISE_CAPTURE_READ 8192 /* supervise_capture_run's reads: the capture keeps whole reads under its ceiling */

/* How a supervision ended. */
enum supervise_end {
    SUPERVISE_EXITED,   /* the process ended (or its output closed) on its own */
    SUPERVISE_DEADLINE, /* the deadline passed and the process was stopped */
    SUPERVISE_STOPPED,  /* the tick asked for a stop and the process was stopped */
};

/* An output to read until EOF. */
struct supervise_fd {
    int fd;  /* borrowed; must be O_NONBLOCK */
    /* Each chunk read, in the order read: within one wake-up, the fds in
     * the order given. */
    void (*chunk)(void *ctx, const char *data, size_t len);
    void *ctx;
};

struct supervise {
    struct supervise_fd fds[SUPERVISE_MAX_FDS];
    size_t n_fds;
    size_t read_max;     /* bytes per read(), at most SUPERVISE_READ_MAX; 0: that */
    /* The process's end. With reap NULL, it is not watched: the
     * supervision ends when every fd is at EOF. Otherwise it ends when the
     * process has ended and every fd is at EOF, or drain_ms after the end
     * when an fd stays open (a leftover of the tree holding it). */
    int (*reap)(void *ctx); /* non-blocking: nonzero once ended (it may tear
                             * down what is left of the tree), 0 while it runs */
    int pidfd;           /* readable once it ended; -1: reap is asked at every wake-up */
    int64_t drain_ms;
    int64_t deadline;    /* util_now_ms() time; < 0: none */
    /* Optional: called at every wake-up while the process runs and has not
     * been stopped, and at least every tick_ms; true stops the process. */
    bool (*tick)(void *ctx, int64_t now);
    int64_t tick_ms;
    /* Stops the process tree, once the deadline passed or the tick said
     * so, why being SUPERVISE_DEADLINE or SUPERVISE_STOPPED: with sig =
     * SIGTERM, then SIGKILL grace_ms later (while it still runs); with
     * grace_ms = SUPERVISE_NO_GRACE, SIGKILL at once. */
    void (*stop)(void *ctx, enum supervise_end why, int sig);
    int64_t grace_ms;
    void *ctx;           /* for reap, tick and stop */
};

/* Runs the supervision to its end and says in *end how it ended. 0, or
 * -errno when poll() failed (the process is left as it is: the caller
 * stops it). */
int supervise_run(const struct supervise *s, enum supervise_end *end) must_check;

/* Output kept in memory under a ceiling, and cut into lines for a callback
 * (a line split across reads is one line): what supervise_capture_run
 * fills. */
struct supervise_capture {
    struct dbuf out;      /* whole chunks while they fit under the ceiling */
    struct dbuf pending;  /* the start of a line not yet complete */
    void (*line)(void *ctx, const char *line); /* NULL: no lines */
    void *ctx;
    /* Polled at least every SUPERVISE_CANCEL_TICK_MS, with ctx: true stops
     * the program as its deadline would (NULL, the init's: never). */
    bool (*cancelled)(void *ctx);
};
#define SUPERVISE_CANCEL_TICK_MS 100
void supervise_capture_init(struct supervise_capture *c, size_t max, void (*line)(void *ctx, const char *line),
                            void *ctx);

/* The watch of a trusted program (the installer, a helper): fd, its
 * stdout and stderr in one (non-blocking, borrowed), read to EOF into c in
 * reads of SUPERVISE_CAPTURE_READ, the process's end not watched; past
 * timeout_ms from now stop(ctx, SUPERVISE_DEADLINE, SIGKILL) ends its
 * tree and the reading goes on to EOF; once c->cancelled says so, the same
 * with SUPERVISE_STOPPED. The last, unterminated line goes
 * to the line callback too; *out is the output kept (caller frees; NULL
 * when nothing came). Returns SUPERVISE_DEADLINE when the deadline passed,
 * SUPERVISE_STOPPED when it was cancelled, else
 * SUPERVISE_EXITED (a failed poll ends the watch as EOF would). */
enum supervise_end supervise_capture_run(struct supervise_capture *c, int fd, int64_t timeout_ms,
                                         void (*stop)(void *ctx, enum supervise_end why, int sig), void *ctx,
                                         char **out);

#endif
