/* exec_ask.c: a script that asks its user. Where the front door can ask
 * (its sink has a question callback) the script's stdin is a pipe: the
 * input first, then each answer. When a process of the run is blocked
 * reading that pipe and nothing is left in it, the run has a question:
 * the last line of what it printed since the last answer (input()'s
 * prompt). It is numbered, kept in RUN/question for any process to read,
 * and handed to the sink; an answer comes back from any process through
 * RUN/answer (exec_answer), which the watch's tick reads. No answer
 * within input_wait, a decline, or a question past input_questions closes
 * the pipe: the script reads EOF, as it does where nobody can be asked,
 * and the result's "input" says why. The run's own limits (its timeout
 * first) keep running while it waits. */
#include "config.h"

#include "exec_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jail.h"
#include "workspace.h"

#define EXEC_ASK_PIPE_MIN 65536 /* a pipe's default size: an answer always fits in an empty one */

/* Reads the mailbox's file name of the run directory dfd: a regular file
 * only, opened without waiting. The script can write its run directory
 * (it is /work for a run alone): a FIFO or a device put there must not
 * hold the watch, or a worker that answers, for ever. */
static int read_box(int dfd, const char *name, size_t max, char **buf, size_t *len)
{
    cleanup_fd int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -errno;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode))
        return -EINVAL;
    return util_read_fd(fd, max, buf, len);
}

bool exec__ask_wanted(const struct run *run)
{
    return !run->kernel && run->sink && run->sink->question && run->spec->limits.input_questions > 0;
}

int exec__ask_open(struct run *run, struct exec_ask *a)
{
    const struct exec_spec *spec = run->spec;
    int p[2];
    memset(a, 0, sizeof *a);
    a->rfd = a->wfd = -1;
    if (pipe2(p, O_CLOEXEC) < 0)
        return -errno;
    a->rfd = p[0];
    a->wfd = p[1];
    /* The input goes in whole before the script starts: the pipe is made
     * large enough for it, or the run is not asked (its stdin is the
     * input file, as where nobody can ask). */
    size_t want = spec->input_len + 1 > EXEC_ASK_PIPE_MIN ? spec->input_len + 1 : EXEC_ASK_PIPE_MIN;
    int rc;
    struct stat st;
    if (want > INT32_MAX || fcntl(a->wfd, F_SETPIPE_SZ, (int)want) < (int)want ||
        (rc = util_set_nonblock(a->wfd)) < 0 ||
        (spec->input_len && (rc = util_write_all(a->wfd, spec->input, spec->input_len)) < 0) ||
        fstat(a->rfd, &st) < 0) {
        exec__ask_close(run, a, NULL);
        close(a->rfd);
        a->rfd = -1;
        return -EMSGSIZE;
    }
    a->ino = st.st_ino;
    run->r->input.live = true;
    return 0;
}

void exec__ask_output(struct exec_ask *a, const char *data, size_t len)
{
    if (a->wfd < 0)
        return;
    /* Keep the last EXEC_QUESTION_MAX bytes. */
    if (len >= sizeof a->tail) {
        memcpy(a->tail, data + len - sizeof a->tail, sizeof a->tail);
        a->tail_len = sizeof a->tail;
        return;
    }
    if (a->tail_len + len > sizeof a->tail) {
        size_t drop = a->tail_len + len - sizeof a->tail;
        memmove(a->tail, a->tail + drop, a->tail_len - drop);
        a->tail_len -= drop;
    }
    memcpy(a->tail + a->tail_len, data, len);
    a->tail_len += len;
}

/* The question's text: the last line of what the script printed since
 * the last answer (the unfinished one, input()'s prompt, or else the last
 * whole one), into q (NUL-terminated, may be ""). */
static void question_text(const struct exec_ask *a, char *q, size_t qlen)
{
    size_t end = a->tail_len;
    if (end && a->tail[end - 1] == '\n')
        end--;
    if (end && a->tail[end - 1] == '\r')
        end--;
    size_t start = end;
    while (start && a->tail[start - 1] != '\n')
        start--;
    size_t n = end - start < qlen - 1 ? end - start : qlen - 1;
    memcpy(q, a->tail + start, n);
    q[n] = '\0';
}

void exec__ask_close(struct run *run, struct exec_ask *a, const char *why)
{
    if (a->wfd >= 0) {
        close(a->wfd);
        a->wfd = -1;
    }
    if (why && !run->r->input.closed)
        run->r->input.closed = why;
    if (a->pending) {
        discard(unlinkat(run->run_fd, "question", 0));
        a->pending = 0;
    }
}

/* Reads RUN/answer, if there: 1 with the text in *text (NULL: closed),
 * 0 when there is none for the pending question. */
static int take_answer(struct run *run, struct exec_ask *a, char **text, size_t *len)
{
    char *buf = NULL;
    size_t n = 0;
    *text = NULL;
    *len = 0;
    if (read_box(run->run_fd, "answer", EXEC_ANSWER_MAX + 32, &buf, &n) < 0)
        return 0;
    discard(unlinkat(run->run_fd, "answer", 0));
    char *nl = memchr(buf, '\n', n);
    unsigned long q = strtoul(buf, NULL, 10);
    if (!nl || nl + 1 >= buf + n || q != a->pending) {
        free(buf);
        return 0; /* for another question (a late one), or not ours */
    }
    if (nl[1] == '+') {
        *len = (size_t)(buf + n - (nl + 2));
        memmove(buf, nl + 2, *len);
        buf[*len] = '\0';
        *text = buf;
    } else {
        free(buf);
    }
    return 1;
}

/* The pending question: answered (the text and a newline into the pipe),
 * closed, or out of time. */
static void ask_wait(struct run *run, struct exec_ask *a, int64_t now)
{
    char *text;
    size_t len;
    if (take_answer(run, a, &text, &len)) {
        if (!text) {
            exec__log_line(run, "[runmyscript] question %u declined: the script's input is closed", a->pending);
            exec__ask_close(run, a, "declined");
            return;
        }
        /* An answer is one line: the pipe is empty, and holds 64 KiB. */
        char *nl = memchr(text, '\n', len);
        if (nl)
            len = (size_t)(nl - text);
        int rc = util_write_all(a->wfd, text, len);
        if (rc == 0)
            rc = util_write_all(a->wfd, "\n", 1);
        free(text);
        if (rc < 0) {
            exec__ask_close(run, a, "closed");
            return;
        }
        run->r->input.answered++;
        discard(unlinkat(run->run_fd, "question", 0));
        a->pending = 0;
        a->tail_len = 0;
        a->waiting = false;
        return;
    }
    if (now >= a->deadline) {
        char hs[32];
        snprintf(hs, sizeof hs, "%.3g s", (double)run->spec->limits.input_wait_ms / 1000.0);
        exec__system_line(run, "[runmyscript] no answer to the script's question within input_wait (%s): its input "
                               "is closed", hs);
        exec__ask_close(run, a, "no_answer");
    }
}

void exec__ask_tick(struct run *run, struct exec_ask *a, struct jail_proc *proc, int64_t now)
{
    if (a->wfd < 0)
        return;
    if (a->pending) {
        ask_wait(run, a, now);
        return;
    }
    /* Two ticks in a row: what it printed before it read (the prompt) has
     * been read by then, and a read the answer just woke is over. */
    int left = 0;
    bool was = a->waiting;
    a->waiting = ioctl(a->wfd, FIONREAD, &left) == 0 && left == 0 && jail_stdin_waiting(proc, a->ino) > 0;
    if (!was || !a->waiting)
        return;
    a->waiting = false;
    const struct exec_limits *lim = &run->spec->limits;
    if (run->r->input.questions >= lim->input_questions) {
        exec__system_line(run, "[runmyscript] the script asked more than input_questions (%llu): its input is closed",
                          (unsigned long long)lim->input_questions);
        exec__ask_close(run, a, "question_limit");
        return;
    }
    char q[EXEC_QUESTION_MAX + 1];
    question_text(a, q, sizeof q);
    unsigned n = ++run->r->input.questions;
    char *rec = NULL;
    int k = asprintf(&rec, "%u\n%s", n, q);
    if (k < 0 || util_write_file_published(run->run_fd, "question", rec, (size_t)k, 0600) < 0) {
        free(rec);
        exec__ask_close(run, a, "closed");
        return;
    }
    free(rec);
    a->pending = n;
    a->deadline = now + lim->input_wait_ms;
    run->sink->question(run->sink->ctx, n, q);
}

/* Opens the run directory of a run still running, for its mailbox. */
static int open_running(const char *state_dir, const char *run_id, int *dfd)
{
    if (!ws_id_valid(run_id))
        return -ENOENT;
    cleanup_free char *dir = ws_run_path(state_dir, run_id);
    if (!dir)
        return -ENOMEM;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOTDIR || errno == ELOOP ? -ENOENT : -errno;
    if (faccessat(fd, "result.json", F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
        close(fd);
        return -EALREADY;
    }
    *dfd = fd;
    return 0;
}

int exec_question(const char *state_dir, const char *run_id, unsigned *n, char **text)
{
    cleanup_fd int dfd = -1;
    *n = 0;
    *text = NULL;
    int rc = open_running(state_dir, run_id, &dfd);
    if (rc < 0)
        return rc;
    char *buf = NULL;
    size_t len = 0;
    rc = read_box(dfd, "question", EXEC_QUESTION_MAX + 32, &buf, &len);
    if (rc < 0)
        return rc == -ENOENT ? -ESRCH : rc;
    char *nl = strchr(buf, '\n');
    *n = (unsigned)strtoul(buf, NULL, 10);
    if (!nl || *n == 0) {
        free(buf);
        return -ESRCH;
    }
    memmove(buf, nl + 1, strlen(nl + 1) + 1);
    *text = buf;
    return 0;
}

int exec_answer(const char *state_dir, const char *run_id, unsigned n, const char *text, size_t len)
{
    if (text && len > EXEC_ANSWER_MAX)
        return -E2BIG;
    unsigned pending;
    cleanup_free char *q = NULL;
    int rc = exec_question(state_dir, run_id, &pending, &q);
    if (rc < 0)
        return rc;
    if (pending != n)
        return -ESTALE;
    cleanup_fd int dfd = -1;
    if ((rc = open_running(state_dir, run_id, &dfd)) < 0)
        return rc;
    cleanup_free char *rec = NULL;
    int k = asprintf(&rec, "%u\n%c", n, text ? '+' : '-');
    if (k < 0)
        return -ENOMEM;
    cleanup_free char *all = malloc((size_t)k + (text ? len : 0));
    if (!all)
        return -ENOMEM;
    memcpy(all, rec, (size_t)k);
    if (text)
        memcpy(all + k, text, len);
    return util_write_file_published(dfd, "answer", all, (size_t)k + (text ? len : 0), 0600);
}
