/* jail_tool.c: a trusted tool (the package installer) run to completion
 * in the jail, with the rlimits fallback where the host allows it: stdin
 * /dev/null, stdout and stderr into one pipe watched by supervise.c, its
 * output kept under a ceiling and passed on line by line. */
#include "config.h"

#include "jail_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise.h"

#define JAIL_TOOL_EXIT_WAIT_MS 2000  /* after its output closed, how long the tool may take to exit */
#define JAIL_TOOL_EXIT_POLL_MS 50    /* the pidfd's wait between looks at the tool's end */
#define JAIL_TOOL_EXIT_NAP_US 10000  /* the same without a pidfd */

/* The deadline passed, or the caller cancelled: every process of the
 * tool goes at once. */
static void tool_stop(void *ctx, enum supervise_end why, int sig)
{
    (void)why;
    (void)sig;
    jail_kill_all(ctx);
}

/* Starts the tool with its output into out_w, falling back to the
 * rlimits mode when t allows it and the host cannot make the namespaces. */
static int tool_start(const struct jail_tool *t, int in, int out_w, struct jail_proc *p, char *err, size_t errlen)
{
    struct jail_opts o = t->o;
    o.fd_in = in;
    o.fd_out = out_w;
    o.fd_err = out_w;
    int rc = jail_start(&o, p, err, errlen);
    if (rc < 0 && p->unavailable && t->may_fall_back) {
        /* The tool's binds are at the same paths inside and out: the
         * fallback needs nothing rewritten. */
        jail_proc_free(p);
        if (o.net_sock > 0) {
            /* No namespace to hold a network of its own: refused, never
             * the host's network in its place. */
            log_msg(LOG_LVL_WARN, "no namespaces here (%s): the tool's network needs them, it does not run", err);
            snprintf(err, errlen, "no namespaces here: the tool's network of its own needs them, and the rlimits "
                                  "fallback has none");
            return -ENOTSUP;
        }
        log_msg(LOG_LVL_WARN, "no namespaces here (%s): running the tool with the rlimits fallback", err);
        o.mode = JAIL_MODE_RLIMITS;
        rc = jail_start(&o, p, err, errlen);
    }
    return rc;
}

/* The output closed: the tool is done, or about to be. Give it a moment
 * to exit on its own (in the namespaces, init must still report the
 * status), then whatever is left of it goes. */
static void tool_reap(struct jail_proc *p, int *wstatus)
{
    struct rusage ru;
    int64_t until = util_now_ms() + JAIL_TOOL_EXIT_WAIT_MS;
    int reaped;
    while ((reaped = jail_try_reap(p, wstatus, &ru)) == 0 && util_now_ms() < until) {
        struct pollfd pfd = {p->pidfd, POLLIN, 0};
        if (p->pidfd < 0 || poll(&pfd, 1, JAIL_TOOL_EXIT_POLL_MS) < 0)
            usleep(JAIL_TOOL_EXIT_NAP_US);
    }
    jail_kill_all(p);
    if (reaped <= 0 && jail_try_reap(p, wstatus, &ru) < 0)
        *wstatus = SIGKILL & 0x7f;
}

int jail_run_tool(const struct jail_tool *t, int *wstatus, char **output, char *err, size_t errlen)
{
    struct jail_proc p;
    int outp[2] = {-1, -1};
    cleanup_fd int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int rc = nul < 0 ? -errno : pipe2(outp, O_CLOEXEC) < 0 ? -errno : 0;
    /* Only our end is non-blocking: the tool's writes block as usual. */
    if (rc == 0)
        rc = util_set_nonblock(outp[0]);
    if (rc < 0) {
        snprintf(err, errlen, "setting up the tool's output: %s", strerror(-rc));
        if (outp[0] >= 0) {
            close(outp[0]);
            close(outp[1]);
        }
        return rc;
    }
    rc = tool_start(t, nul, outp[1], &p, err, errlen);
    close(outp[1]);
    if (rc < 0) {
        close(outp[0]);
        jail_proc_free(&p);
        return rc;
    }
    struct supervise_capture cap;
    supervise_capture_init(&cap, t->max_output, t->line, t->ctx);
    cap.cancelled = t->cancelled;
    enum supervise_end end = supervise_capture_run(&cap, outp[0], t->timeout_ms, tool_stop, &p, output);
    close(outp[0]);
    tool_reap(&p, wstatus);
    jail_proc_free(&p);
    return end == SUPERVISE_DEADLINE ? -ETIMEDOUT : end == SUPERVISE_STOPPED ? -ECANCELED : 0;
}
