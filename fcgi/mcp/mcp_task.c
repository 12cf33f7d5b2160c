/* mcp_task.c: the tasks extension (io.modelcontextprotocol/tasks) of the
 * 2026-07-28 revision: a tools/call that becomes a task, tasks/get,
 * tasks/update and tasks/cancel (subscriptions/listen, which follows tasks,
 * is mcp_listen.c). A task is a directory, so that any worker,
 * or a one-shot CGI process, answers for it:
 *
 *   STATE/tasks/TID/task.json   status, times, the tool, its workspace, and
 *                               the result or error once it ended (written
 *                               whole: rename)
 *   STATE/tasks/TID/lock        flock'd by the process that runs it: free
 *                               while the status is not final means it died
 *   STATE/tasks/TID/run         the run's id, for tasks/cancel
 *   STATE/tasks/TID/cancel      tasks/cancel asked it to stop
 *   STATE/tasks/TID/responses/KEY  the client's answer to input request KEY
 *
 * TID is 128 random bits (after NODE- on a node of a cluster, so that a
 * proxy routes tasks/get by its Mcp-Name). The run goes on in a process of
 * its own (exec_detach), which holds neither a worker nor a connection;
 * the worker that took the call forwards what it reports (progress, log
 * lines) on the call's stream until it ends (the result is the answer, as
 * if there were no task) or task_after passes (the answer is the task).
 * mcp_reap.c removes finished tasks past task_ttl. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TASK_POLL_MS 1000          /* pollIntervalMs: how often a client should ask */
#define TASK_FILE_MAX (256u << 20) /* bytes of task.json (it holds the result) */
#define TASK_TICK_MS 100           /* the waits' tick: the stream, the answers */
#define TASK_LINE_MAX (1u << 20)   /* bytes of one message from the runner */

struct task {
    char id[WS_ID_MAX + 1];
    char *dir;        /* STATE/tasks/TID */
    json_object *doc; /* task.json */
};

static void task_free(struct task *t)
{
    free(t->dir);
    json_object_put(t->doc);
    memset(t, 0, sizeof *t);
}
#define cleanup_task __attribute__((cleanup(task_free)))

static bool terminal(const char *status)
{
    return !strcmp(status, "completed") || !strcmp(status, "failed") || !strcmp(status, "cancelled");
}

static const char *task_status(const struct task *t)
{
    const char *s = mcp__json_string(t->doc, "status");
    return s ? s : "failed";
}

static int task_save(struct task *t)
{
    cleanup_fd int dfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    json_object_object_add(t->doc, "updated_ms", json_object_new_int64(util_wall_ms()));
    size_t n;
    const char *text = mcp__to_json(t->doc, &n);
    return util_write_file_atomic(dfd, "task.json", text, n, 0600);
}

static int task_open(const struct cfg *cfg, const char *tid, struct task *t)
{
    memset(t, 0, sizeof *t);
    return mcp__state_load(cfg, "tasks", tid, "task.json", TASK_FILE_MAX, t->id, &t->dir, &t->doc, NULL);
}

/* The tasks that count against max_tasks: every task directory, working
 * or finished (a half-made one too: it is made under the cap's lock). */
static uint64_t task_weigh(int dirfd, const char *name, void *ctx)
{
    (void)dirfd, (void)ctx;
    return ws_id_valid(name) ? 1 : 0;
}

static int task_mkdir(int dirfd, void *ctx)
{
    return mkdirat(dirfd, ctx, 0700) < 0 ? -errno : 0;
}

/* Makes a task of tool (in workspace wid, or none): task.json says working,
 * and *lock_fd (caller closes) holds the lock for the process that will run
 * it, so that the task never looks dead before it starts. -EDQUOT: max_tasks
 * are kept (nothing made). */
static int task_make(const struct cfg *cfg, const char *tool, const char *wid, struct task *t, int *lock_fd)
{
    memset(t, 0, sizeof *t);
    *lock_fd = -1;
    cleanup_free char *top = NULL;
    if (asprintf(&top, "%s/tasks", cfg->state_dir) < 0)
        return -ENOMEM;
    if (mkdir(top, 0700) < 0 && errno != EEXIST)
        return -errno;
    int rc = ws_new_id(cfg->exec.node_id, t->id);
    if (rc < 0)
        return rc;
    cleanup_fd int tfd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (tfd < 0)
        return -errno;
    /* max_tasks, counted and made in one step: a burst ends at the cap. */
    struct util_cap cap = {.max = cfg->max_tasks, .need = 1, .weigh = task_weigh, .make = task_mkdir, .ctx = t->id};
    rc = util_cap_take(tfd, &cap);
    if (rc < 0)
        return rc;
    if (asprintf(&t->dir, "%s/%s", top, t->id) < 0) {
        t->dir = NULL;
        return -ENOMEM;
    }
    cleanup_fd int dfd = open(t->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0 || mkdirat(dfd, "responses", 0700) < 0)
        return -errno;
    int lfd = openat(dfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (lfd < 0)
        return -errno;
    if (flock(lfd, LOCK_EX) < 0) {
        rc = -errno;
        close(lfd);
        return rc;
    }
    *lock_fd = lfd;
    int64_t now = util_wall_ms();
    t->doc = json_object_new_object();
    json_object_object_add(t->doc, "status", json_object_new_string("working"));
    json_object_object_add(t->doc, "created_ms", json_object_new_int64(now));
    json_object_object_add(t->doc, "tool", json_object_new_string(tool));
    if (wid)
        json_object_object_add(t->doc, "workspace", json_object_new_string(wid));
    return task_save(t); /* durable before its handle goes out */
}

bool mcp__task_alive(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/lock", dir);
    cleanup_fd int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return false;
    if (flock(fd, LOCK_SH | LOCK_NB) == 0)
        return false;
    return errno == EWOULDBLOCK;
}

static bool task_has(const struct task *t, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", t->dir, name);
    return access(path, F_OK) == 0;
}

static json_object *iso_time(int64_t ms)
{
    char buf[64];
    time_t s = (time_t)(ms / 1000);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%03dZ", (int)(ms % 1000));
    return json_object_new_string(buf);
}

static int64_t doc_ms(json_object *doc, const char *key)
{
    json_object *v = NULL;
    return json_object_object_get_ex(doc, key, &v) ? json_object_get_int64(v) : 0;
}

/* The input requests still waiting for an answer (new, or NULL: none). */
static json_object *outstanding(const struct task *t)
{
    json_object *reqs = NULL, *left = NULL;
    if (!json_object_object_get_ex(t->doc, "input_requests", &reqs) || !json_object_is_type(reqs, json_type_object))
        return NULL;
    json_object_object_foreach(reqs, k, v)
    {
        char name[300];
        snprintf(name, sizeof name, "responses/%s", k);
        if (task_has(t, name))
            continue;
        if (!left)
            left = json_object_new_object();
        json_object_object_add(left, k, json_object_get(v));
    }
    return left;
}

/* The task as the extension shows it (a new object): the Task fields, and
 * for tasks/get the result, error or input requests of its status. */
static json_object *task_view(const struct cfg *cfg, const struct task *t, bool detailed)
{
    json_object *o = json_object_new_object(), *v = NULL;
    const char *status = task_status(t);
    json_object *left = !terminal(status) ? outstanding(t) : NULL;
    if (!strcmp(status, "input_required") && !left)
        status = "working"; /* answered; the runner has not written it yet */
    if (left)
        status = "input_required";
    json_object_object_add(o, "taskId", json_object_new_string(t->id));
    json_object_object_add(o, "status", json_object_new_string(status));
    const char *msg = mcp__json_string(t->doc, "status_message");
    if (msg)
        json_object_object_add(o, "statusMessage", json_object_new_string(msg));
    json_object_object_add(o, "createdAt", iso_time(doc_ms(t->doc, "created_ms")));
    json_object_object_add(o, "lastUpdatedAt", iso_time(doc_ms(t->doc, "updated_ms")));
    /* task_ttl 0 keeps tasks for ever: the extension's null. */
    json_object_object_add(o, "ttlMs", cfg->task_ttl_ms > 0 ? json_object_new_int64(cfg->task_ttl_ms) : NULL);
    json_object_object_add(o, "pollIntervalMs", json_object_new_int(TASK_POLL_MS));
    if (detailed && !strcmp(status, "completed") && json_object_object_get_ex(t->doc, "result", &v))
        json_object_object_add(o, "result", json_object_get(v));
    if (detailed && !strcmp(status, "failed") && json_object_object_get_ex(t->doc, "error", &v))
        json_object_object_add(o, "error", json_object_get(v));
    if (detailed && left)
        json_object_object_add(o, "inputRequests", json_object_get(left));
    json_object_put(left);
    return o;
}

/* A task whose process died before it ended is failed: said once, on disk. */
static void task_check_alive(struct task *t)
{
    if (terminal(task_status(t)) || mcp__task_alive(t->dir))
        return;
    json_object *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(-32603));
    json_object_object_add(e, "message",
                           json_object_new_string("Internal error: the process running the task ended without a result"));
    json_object_object_add(t->doc, "status", json_object_new_string("failed"));
    json_object_object_add(t->doc, "error", e);
    log_msg(LOG_LVL_WARN, "task %s: its process died; marked failed", t->id);
    discard(task_save(t)); /* the next tasks/get makes the same finding */
}

/* ------------------------------------------------------------ the runner */

/* The process that runs a task: the tool with a context whose notifications
 * go down the pipe to the worker (while it listens), whose cancel is the
 * task's marker, and which can wait for the client's input. */
struct task_run {
    const struct app *app;
    struct task t;
    struct mcp_call c;  /* its level, token, key and workspace (no stream) */
    const char *tool;
    json_object *args;
    int fd;             /* the pipe to the worker; -1 once it is gone */
    char run_id[WS_ID_MAX + 1]; /* the call's run, once it has one */
};

static void run_send(struct task_run *r, json_object *m)
{
    if (!m)
        return;
    if (r->fd >= 0) {
        size_t n;
        const char *s = mcp__to_json(m, &n);
        if (util_write_all(r->fd, s, n) < 0 || util_write_all(r->fd, "\n", 1) < 0) {
            close(r->fd); /* the worker answered and went: the task goes on */
            r->fd = -1;
        }
    }
    json_object_put(m);
}

static void run_progress(void *ctx, double progress, double total, const char *message)
{
    struct task_run *r = ctx;
    run_send(r, mcp__progress_msg(&r->c, progress, total, message));
}

static void run_log(void *ctx, enum tools_level level, const char *logger, const char *text, size_t len)
{
    struct task_run *r = ctx;
    run_send(r, mcp__log_msg(&r->c, level, logger, text, len));
}

/* The script asks (exec_sink.question, through the tools): the task waits
 * on the client's input, input request input-N, which tasks/update or a
 * call again with its inputResponses (a multi round-trip request) answers;
 * run_take_answer hands the answer to the run. */
static void run_question(void *ctx, const char *run_id, unsigned n, const char *prompt)
{
    struct task_run *r = ctx;
    char key[32];
    snprintf(key, sizeof key, "input-%u", n);
    snprintf(r->run_id, sizeof r->run_id, "%s", run_id);
    json_object *reqs = json_object_new_object();
    json_object_object_add(reqs, key, mcp__ask_request(MCP_REVISION_2026, NULL, prompt));
    json_object_object_add(r->t.doc, "input_requests", reqs);
    json_object_object_add(r->t.doc, "question", json_object_new_int64(n));
    json_object_object_add(r->t.doc, "status", json_object_new_string("input_required"));
    int rc = task_save(&r->t);
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "task %s: saving its question: %s", r->t.id, strerror(-rc));
}

/* The client's answer to the script's question, once it came: to the run
 * (accept's line, or its input closed), and the task working again. */
static void run_take_answer(struct task_run *r)
{
    json_object *q = NULL;
    if (!json_object_object_get_ex(r->t.doc, "question", &q))
        return;
    unsigned n = (unsigned)json_object_get_int64(q);
    char name[64];
    snprintf(name, sizeof name, "responses/input-%u", n);
    cleanup_fd int dfd = open(r->t.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    cleanup_free char *text = NULL;
    size_t len = 0;
    if (dfd < 0 || util_read_file_at(dfd, name, MCP_SESSION_FILE_MAX, &text, &len) < 0)
        return;
    cleanup_json json_object *res = json_tokener_parse(text);
    const char *line = mcp__ask_answer(res, &len);
    const struct app_exec *x = app_exec_of(r->app);
    int rc = x->answer ? x->answer(r->app->cfg->state_dir, r->run_id, n, line, len) : -ENOSYS;
    if (rc < 0)
        log_msg(LOG_LVL_INFO, "task %s: the answer to question %u was not taken: %s", r->t.id, n, strerror(-rc));
    json_object_object_del(r->t.doc, "question");
    json_object_object_del(r->t.doc, "input_requests");
    json_object_object_add(r->t.doc, "status", json_object_new_string("working"));
    discard(task_save(&r->t)); /* task_view says working once the answer is in, whatever this says */
}

/* tasks/cancel asked, or the task is gone (reaped, or its state directory
 * removed): nobody can ask for its result any more. Polled while the tool
 * works: the time to take an answer to the script's question too. */
static bool run_cancelled(void *ctx)
{
    struct task_run *r = ctx;
    if (task_has(&r->t, "cancel") || access(r->t.dir, F_OK) < 0)
        return true;
    run_take_answer(r);
    return false;
}

static void run_set_run(void *ctx, const char *run_id)
{
    struct task_run *r = ctx;
    cleanup_fd int dfd = open(r->t.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd >= 0)
        discard(util_write_file_atomic(dfd, "run", run_id, strlen(run_id), 0600));
    mcp__call_set_run(&r->c, run_id);
    if (run_cancelled(r)) /* tasks/cancel came before the run existed */
        discard(app_cancel_run(r->app, run_id));
}

/* Waits until every input request has its answer: input_required meanwhile. */
static int run_ask(void *ctx, json_object *requests, json_object **responses)
{
    struct task_run *r = ctx;
    *responses = NULL;
    json_object_object_add(r->t.doc, "input_requests", json_object_get(requests));
    json_object_object_add(r->t.doc, "status", json_object_new_string("input_required"));
    int rc = task_save(&r->t);
    if (rc < 0)
        return rc;
    /* Not for ever: a client that never answers leaves the task failed
     * after task_ttl (or the wall time limit, when task_ttl is 0). */
    int64_t give_up = util_now_ms() + (r->app->cfg->task_ttl_ms > 0 ? r->app->cfg->task_ttl_ms
                                                                     : r->app->cfg->exec.limits.wall_ms);
    for (;;) {
        if (run_cancelled(r))
            return -ECANCELED;
        if (util_now_ms() > give_up)
            return -ETIMEDOUT;
        json_object *left = outstanding(&r->t);
        if (!left)
            break;
        json_object_put(left);
        usleep(TASK_TICK_MS * 1000);
    }
    json_object *out = json_object_new_object();
    json_object_object_foreach(requests, k, v)
    {
        (void)v;
        char name[300];
        cleanup_free char *text = NULL;
        size_t len;
        cleanup_fd int dfd = open(r->t.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        snprintf(name, sizeof name, "responses/%s", k);
        if (dfd >= 0 && util_read_file_at(dfd, name, MCP_SESSION_FILE_MAX, &text, &len) == 0)
            json_object_object_add(out, k, json_tokener_parse(text));
    }
    json_object_object_del(r->t.doc, "input_requests");
    json_object_object_add(r->t.doc, "status", json_object_new_string("working"));
    discard(task_save(&r->t)); /* the answers are in; a stale status is corrected by task_view */
    *responses = out;
    return 0;
}

/* The task's end on disk, from what tools_call made of it. */
static void run_finish(struct task_run *r, enum tools_outcome out, json_object *result)
{
    json_object *doc = r->t.doc, *e = NULL;
    const char *wid = mcp__json_string(doc, "workspace");
    switch (out) {
    case TOOLS_RESULT:
        if (wid)
            mcp__result_add_workspace(result, wid);
        json_object_object_add(doc, "status", json_object_new_string("completed"));
        json_object_object_add(doc, "result", mcp__2026_complete(result));
        break;
    case TOOLS_CANCELLED:
        json_object_put(result);
        json_object_object_add(doc, "status", json_object_new_string("cancelled"));
        json_object_object_add(doc, "status_message", json_object_new_string("cancelled by tasks/cancel"));
        break;
    case TOOLS_UNKNOWN:
    case TOOLS_FAILED:
        e = json_object_new_object();
        json_object_object_add(e, "code", json_object_new_int(out == TOOLS_UNKNOWN ? -32602 : -32603));
        json_object_object_add(e, "message", json_object_new_string(out == TOOLS_UNKNOWN
                                                                        ? "Invalid params: unknown tool"
                                                                        : "Internal error: the sandbox failed "
                                                                          "(see data.error)"));
        if (result)
            json_object_object_add(e, "data", result);
        json_object_object_add(doc, "status", json_object_new_string("failed"));
        json_object_object_add(doc, "error", e);
        break;
    }
    json_object_object_del(doc, "input_requests");
    int rc = task_save(&r->t);
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "task %s: saving its end: %s", r->t.id, strerror(-rc));
    log_msg(LOG_LVL_INFO, "task %s (%s): %s", r->t.id, r->tool, task_status(&r->t));
}

/* The runner's callbacks: its notifications down the pipe, the task's
 * marker as the cancel (the client's, too), and input asked of the client. */
static const struct tools_ctx run_callbacks = {
    .progress = run_progress, .log = run_log, .cancelled = run_cancelled,
    .client_cancelled = run_cancelled, .set_run = run_set_run, .ask = run_ask,
};

static int task_runner(void *arg, int fd)
{
    struct task_run *r = arg;
    r->fd = fd;
    struct tools_ctx t;
    mcp__tools_ctx(&r->c, r, &run_callbacks, &t);
    /* A script's input() asks a client that can answer an elicitation. */
    if (r->c.client_caps && json_object_object_get_ex(r->c.client_caps, "elicitation", NULL))
        t.question = run_question;
    json_object *result = NULL;
    enum tools_outcome out = mcp__call_tool(&r->c, &t, r->tool, r->args, &result);
    run_finish(r, out, result);
    run_send(r, json_object_new_string("done"));
    if (r->fd >= 0) /* the worker reads to the end of the pipe */
        close(r->fd);
    r->fd = -1;
    return 0;
}

/* --------------------------------------------------------- the worker */

int mcp__task_mode(struct mcp_2026_req *m, const char *tool, int64_t *delay_ms)
{
    enum tools_task support = tools_task_support(m->app->cfg, tool);
    bool declared = mcp__client_has(m->caps, MCP_EXT_TASKS);
    *delay_ms = 0;
    if (support == TOOLS_TASK_REQUIRED && !declared) {
        mcp__missing_capability(m, NULL, "Missing required client capability: this tool runs only as a task (" MCP_EXT_TASKS
                                         ")");
        return -1;
    }
    if (support == TOOLS_TASK_NEVER || !declared)
        return 0;
    *delay_ms = support == TOOLS_TASK_AFTER ? m->app->cfg->task_after_ms : 0;
    return 1;
}

/* The call's answer once the runner has ended before task_after: what the
 * call would have answered without a task. The task, never announced, goes. */
static void answer_ended(struct mcp_2026_req *m, struct task *t)
{
    cleanup_task struct task now = {0};
    json_object *v = NULL;
    if (task_open(m->app->cfg, t->id, &now) < 0) {
        mcp__2026_error(m, 500, -32603, "Internal error: the task's result is gone", NULL);
        return;
    }
    const char *status = task_status(&now);
    if (!strcmp(status, "completed") && json_object_object_get_ex(now.doc, "result", &v)) {
        json_object *res = json_object_get(v);
        json_object_object_del(res, "_meta"); /* the answer gets serverInfo again */
        mcp__2026_answer(m, res);
    } else if (!strcmp(status, "failed") && json_object_object_get_ex(now.doc, "error", &v)) {
        json_object *data = NULL;
        json_object_object_get_ex(v, "data", &data);
        mcp__2026_error(m, 500, (int)doc_ms(v, "code"), mcp__json_string(v, "message"),
                        data ? json_object_get(data) : NULL);
    } /* cancelled: the client closed its stream; nothing goes out */
    cleanup_fd int sfd = -1;
    cleanup_free char *top = NULL;
    if (asprintf(&top, "%s/tasks", m->app->cfg->state_dir) >= 0)
        sfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd >= 0)
        discard(util_rm_rf_at(sfd, t->id)); /* the reaper takes it otherwise */
}

/* Asks t to stop: its marker, and its run's. */
static void task_cancel(const struct app *app, struct task *t)
{
    char path[4096], run_id[WS_ID_MAX + 1];
    snprintf(path, sizeof path, "%s/cancel", t->dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0)
        close(fd);
    snprintf(path, sizeof path, "%s/run", t->dir);
    cleanup_fd int rfd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    ssize_t n = rfd >= 0 ? pread(rfd, run_id, sizeof run_id - 1, 0) : -1;
    if (n >= WS_ID_LEN) {
        run_id[n] = '\0';
        discard(app_cancel_run(app, run_id)); /* one that has finished needs nothing */
    }
}

/* Forwards the runner's lines in buf[0..*len) to the stream; true at "done". */
static bool forward_lines(struct mcp_2026_req *m, char *buf, size_t *len)
{
    bool done = false;
    char *start = buf, *nl;
    while ((nl = memchr(start, '\n', (size_t)(buf + *len - start)))) {
        *nl = '\0';
        if (!strcmp(start, "\"done\""))
            done = true;
        else if (m->sse_open && *start)
            discard(http_sse_event(m->resp, start, (size_t)(nl - start), true));
        start = nl + 1;
    }
    *len = (size_t)(buf + *len - start);
    memmove(buf, start, *len);
    return done;
}

/* A multi round-trip request's answer: the script's question (the task's
 * input requests still unanswered, left: stolen) and a requestState that
 * names the task, for the call again. */
static void answer_input(struct mcp_2026_req *m, const struct task *t, json_object *left)
{
    json_object *state = json_object_new_object();
    json_object_object_add(state, "task", json_object_new_string(t->id));
    json_object_object_add(state, "tool", json_object_new_string(mcp__json_string(t->doc, "tool")));
    json_object *r = tools_input_required(left, state);
    if (mcp__input_seal(m->app->cfg, r) < 0) {
        json_object_put(r);
        mcp__2026_error(m, 500, -32603, "Internal error: cannot seal the requestState", NULL);
        return;
    }
    log_msg(LOG_LVL_INFO, "task %s: its script asks: answered input_required", t->id);
    mcp__2026_answer(m, r);
}

/* What the task says at a tick of task_wait: 1 when it has ended, 2 when
 * it waits on the client's input (*left: the requests, new), else 0. */
static int task_tick(const struct cfg *cfg, const struct task *t, json_object **left)
{
    cleanup_task struct task now = {0};
    *left = NULL;
    if (task_open(cfg, t->id, &now) < 0)
        return 1; /* gone: answer_ended says so */
    task_check_alive(&now);
    if (terminal(task_status(&now)))
        return 1;
    return (*left = outstanding(&now)) ? 2 : 0;
}

/* The worker's part: the runner's notifications onto the stream (rfd; -1:
 * none, a call that came back to the task) until it ends or delay_ms
 * passes; delay_ms MCP_TASK_ROUNDS: until it ends or waits on the
 * client's input, which a multi round-trip request answers. With a
 * delay, a task that waits on input is answered as a task at once. The
 * client closing its stream cancels the task. */
static void task_wait(struct mcp_2026_req *m, struct task *t, int rfd, int64_t delay_ms)
{
    bool rounds = delay_ms == MCP_TASK_ROUNDS;
    if (rounds)
        delay_ms = INT64_MAX / 4;
    int64_t deadline = util_now_ms() + delay_ms, last_probe = 0;
    cleanup_free char *buf = malloc(TASK_LINE_MAX);
    size_t len = 0;
    bool done = false, eof = false;
    if (!buf)
        delay_ms = 0;
    if (delay_ms > 0 && m->want_sse)
        stream_open_call(m->req, m->resp); /* in serve: the stream process writes it from here on */
    if (delay_ms > 0 && m->want_sse && http_sse_start(m->resp) == 0)
        m->sse_open = true;
    while (delay_ms > 0 && !done && !eof && util_now_ms() < deadline) {
        struct pollfd p = {.fd = rfd, .events = POLLIN};
        int64_t rest = deadline - util_now_ms();
        int wait = rest < TASK_TICK_MS ? (rest > 0 ? (int)rest : 0) : TASK_TICK_MS;
        json_object *left = NULL;
        int now = task_tick(m->app->cfg, t, &left);
        if (now == 2 && rounds) {
            answer_input(m, t, left);
            return;
        }
        json_object_put(left);
        if (now == 2)
            break; /* the task waits on its client: its handle says so */
        if (now == 1 && rfd < 0)
            done = true;
        if (rfd < 0) {
            usleep((useconds_t)wait * 1000);
        } else if (poll(&p, 1, wait) > 0) {
            ssize_t n = read(rfd, buf + len, TASK_LINE_MAX - 1 - len);
            if (n <= 0)
                eof = true;
            else
                len += (size_t)n;
            done = forward_lines(m, buf, &len);
            if (len >= TASK_LINE_MAX - 1)
                len = 0; /* a line longer than any we send: dropped */
        }
        if (http_client_gone(m->resp)) {
            log_msg(LOG_LVL_INFO, "task %s: the client closed its stream: cancelled", t->id);
            task_cancel(m->app, t);
            return;
        }
        if (m->sse_open && util_now_ms() - m->resp->last_write_ms >= MCP_KEEPALIVE_MS)
            discard(http_sse_comment(m->resp, "keepalive"));
        if (m->sse_open && !strcmp(m->app->mode, "cgi") && util_now_ms() - last_probe >= MCP_CGI_PROBE_MS) {
            last_probe = util_now_ms(); /* as in mcp_call.c: under CGI only a write finds a gone client */
            discard(http_sse_pad(m->resp, m->app->cfg->cgi_sse_padding));
        }
    }
    if (done || eof) {
        answer_ended(m, t);
        return;
    }
    cleanup_task struct task now = {0};
    json_object *v = task_open(m->app->cfg, t->id, &now) == 0 ? task_view(m->app->cfg, &now, false)
                                                              : task_view(m->app->cfg, t, false);
    json_object_object_add(v, "resultType", json_object_new_string("task"));
    log_msg(LOG_LVL_INFO, "task %s: answered as a task", t->id);
    mcp__2026_answer(m, v);
}

static int task_update(struct task *t, json_object *answers);

int mcp__task_resume(struct mcp_2026_req *m, const char *tool, json_object *state, json_object *responses)
{
    const char *tid = mcp__json_string(state, "task"), *was = mcp__json_string(state, "tool");
    if (!tid)
        return 0;
    cleanup_task struct task t = {0};
    int rc = !was || strcmp(was, tool) ? -EINVAL : task_open(m->app->cfg, tid, &t);
    if (rc == -EINVAL) {
        mcp__2026_error(m, 200, -32602, "Invalid params: this requestState is another tool's", NULL);
        return 1;
    }
    if (rc < 0) {
        mcp__2026_error(m, 200, -32602, "Invalid params: the run this requestState names is gone (its result was "
                                        "given, or it was reaped)", NULL);
        return 1;
    }
    task_check_alive(&t);
    if (!terminal(task_status(&t)) && responses && (rc = task_update(&t, responses)) < 0) {
        log_msg(LOG_LVL_ERROR, "task %s: recording the answers: %s", t.id, strerror(-rc));
        mcp__2026_error(m, 500, -32603, "Internal error: cannot record the answers", NULL);
        return 1;
    }
    log_msg(LOG_LVL_INFO, "task %s: the client answers its script", t.id);
    task_wait(m, &t, -1, MCP_TASK_ROUNDS);
    return 1;
}

int mcp__task_call(struct mcp_2026_req *m, struct mcp_call *c, const char *tool, json_object *args, const char *wid,
                   int64_t delay_ms)
{
    const struct cfg *cfg = m->app->cfg;
    struct task_run r = {.app = m->app, .c = *c, .tool = tool, .args = args, .fd = -1};
    cleanup_fd int lock = -1;
    int rc = task_make(cfg, tool, wid, &r.t, &lock);
    if (rc == -EDQUOT) {
        task_free(&r.t);
        return rc;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "making a task: %s", strerror(-rc));
        mcp__2026_error(m, 500, -32603, "Internal error: cannot make a task", NULL);
        task_free(&r.t);
        return 0;
    }
    /* The runner keeps the lock; stderr is the log, but a CGI server's
     * stderr is a pipe it waits on. */
    cleanup_fd int rfd = -1;
    const struct app_exec *x = app_exec_of(m->app);
    rc = x->detach ? x->detach(task_runner, &r, lock, strcmp(m->app->mode, "cgi") != 0, &rfd) : -ENOSYS;
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "starting task %s: %s", r.t.id, strerror(-rc));
        mcp__2026_error(m, 500, -32603, "Internal error: cannot start the task", NULL);
        task_free(&r.t);
        return 0;
    }
    close(lock);
    lock = -1;
    log_msg(LOG_LVL_INFO, "task %s: %s started", r.t.id, tool);
    task_wait(m, &r.t, rfd, delay_ms);
    task_free(&r.t);
    return 0;
}

/* ------------------------------------------------------- tasks/ methods */

bool mcp__task_method(const char *method)
{
    return !strcmp(method, "tasks/get") || !strcmp(method, "tasks/update") || !strcmp(method, "tasks/cancel");
}

static json_object *ack(void)
{
    return json_object_new_object(); /* resultType "complete" and _meta are added */
}

/* tasks/update: each answer to an outstanding request into responses/KEY;
 * others (unknown, answered) are ignored, as the extension says. */
static int task_update(struct task *t, json_object *answers)
{
    json_object *left = outstanding(t);
    char path[4096];
    snprintf(path, sizeof path, "%s/responses", t->dir);
    cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int rc = dfd < 0 ? -errno : 0;
    json_object_object_foreach(answers, k, v)
    {
        /* Only keys we issued: they are file names we made. */
        if (rc < 0 || !left || !json_object_object_get_ex(left, k, NULL))
            continue;
        size_t n;
        const char *text = mcp__to_json(v, &n);
        rc = util_write_file_atomic(dfd, k, text, n, 0600);
    }
    json_object_put(left);
    return rc;
}

void mcp__task_serve(struct mcp_2026_req *m)
{
    const struct cfg *cfg = m->app->cfg;
    const char *tid = mcp__json_string(m->params, "taskId");
    cleanup_task struct task t = {0};
    int rc = task_open(cfg, tid, &t);
    if (rc == -ENOENT) {
        mcp__2026_error(m, 200, -32602, "Invalid params: no such task (unknown, or past its ttlMs)", NULL);
        return;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "reading task %s: %s", tid, strerror(-rc));
        mcp__2026_error(m, 500, -32603, "Internal error: cannot read the task", NULL);
        return;
    }
    task_check_alive(&t);
    if (!strcmp(m->method, "tasks/get")) {
        mcp__2026_answer(m, task_view(cfg, &t, true));
    } else if (!strcmp(m->method, "tasks/cancel")) {
        if (!terminal(task_status(&t)))
            task_cancel(m->app, &t);
        mcp__2026_answer(m, ack());
    } else {
        json_object *answers = NULL;
        if (!json_object_object_get_ex(m->params, "inputResponses", &answers) ||
            !json_object_is_type(answers, json_type_object)) {
            mcp__2026_error(m, 200, -32602, "Invalid params: tasks/update needs inputResponses (an object)", NULL);
            return;
        }
        rc = terminal(task_status(&t)) ? 0 : task_update(&t, answers);
        if (rc < 0) {
            mcp__2026_error(m, 500, -32603, "Internal error: cannot record the answers", NULL);
            return;
        }
        mcp__2026_answer(m, ack());
    }
}

/* ----------------------------------------------- a task, looked at */

int mcp__task_look(const struct cfg *cfg, const char *tid, char *id, int64_t *updated_ms, bool *ended,
                   json_object **view)
{
    cleanup_task struct task t = {0};
    int rc = task_open(cfg, tid, &t);
    if (rc < 0)
        return rc;
    task_check_alive(&t);
    snprintf(id, WS_ID_MAX + 1, "%s", t.id);
    *updated_ms = doc_ms(t.doc, "updated_ms");
    *ended = terminal(task_status(&t));
    if (view)
        *view = task_view(cfg, &t, true);
    return 0;
}
