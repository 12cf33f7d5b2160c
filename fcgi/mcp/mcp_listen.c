/* mcp_listen.c: subscriptions/listen of the 2026-07-28 revision, which
 * follows tasks (notifications.taskIds, with the tasks extension) and a
 * workspace's files (notifications.resourceSubscriptions): the
 * acknowledgement says what is followed, each change of a followed task is
 * a notifications/tasks with the whole task, each change of a followed file
 * a notifications/resources/updated, and the subscription ends with its
 * result when the tasks have all ended and it follows no file (one that
 * follows files lasts until the client closes it). Nothing else here ever
 * changes (the tool list does not).
 *
 * The worker that takes the request checks it, opens the stream
 * (stream_open: in serve the connection goes to the stream process, within
 * max_streams and max_streams_per_client), sends the acknowledgement and
 * each task as it is now, then hands the rest to the stream process
 * (stream_keep: the subscription's id and what it has seen of each task) and
 * is free. There mcp_listen_kind carries every listen at once: it looks at
 * each followed task once per tick for all its followers (a stat of
 * task.json, which every change renames into place, and once a second
 * whether the task's process still holds its lock), and writes the
 * notifications and ends. Where there is no stream process (CGI, FastCGI
 * on stdin) the worker carries on itself, as the loop at the end here. */
#include "config.h"

#include "mcp_internal.h"
#include "metrics.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LISTEN_TASKS_MAX 64      /* task ids one subscriptions/listen may follow */
#define LISTEN_TICK_MS 200       /* how often a followed task is looked at */
#define LISTEN_ALIVE_MS 1000     /* ... and whether its process still lives */
#define LISTEN_KIND "listen"
#define META_SUB "io.modelcontextprotocol/subscriptionId"

/* One notification of a subscription whose id is id_text (JSON): method
 * with params_text (a JSON object, not empty), tagged with the id. */
static void send_text(struct http_resp *resp, const char *id_text, const char *method, const char *params_text,
                      size_t len)
{
    struct dbuf b;
    dbuf_init(&b, (size_t)-1);
    int rc = dbuf_printf(&b, "{\"jsonrpc\":\"2.0\",\"method\":\"%s\",\"params\":", method);
    rc = rc ? rc : dbuf_append(&b, params_text, len - 1); /* all but its closing brace */
    rc = rc ? rc : dbuf_printf(&b, ",\"_meta\":{\"" META_SUB "\":%s}}}", id_text);
    if (rc == 0)
        discard(http_sse_event(resp, b.data, b.len, true)); /* a gone client: the loops see it */
    dbuf_free(&b);
}

static void send_json(struct http_resp *resp, const char *id_text, const char *method, json_object *params)
{
    size_t len;
    const char *t = mcp__to_json(params, &len);
    send_text(resp, id_text, method, t, len);
    json_object_put(params);
}

/* The subscription's end: its result, tagged with its id. */
static void send_end(struct mcp_2026_req *m)
{
    json_object *r = json_object_new_object(), *meta = json_object_new_object();
    json_object_object_add(meta, META_SUB, json_object_get(m->id));
    json_object_object_add(r, "_meta", meta);
    mcp__2026_answer(m, r);
}

/* ------------------------------------------------------- the worker */

/* The followed tasks of the request (their ids into ids[][] and the
 * agreed list, at most LISTEN_TASKS_MAX). -1: a bad filter (answered). */
static int listen_tasks(struct mcp_2026_req *m, json_object *filter, char ids[][WS_ID_MAX + 1], json_object *agreed)
{
    json_object *want = NULL;
    int n = 0;
    if (!json_object_object_get_ex(filter, "taskIds", &want))
        return 0;
    if (!json_object_is_type(want, json_type_array) || json_object_array_length(want) > LISTEN_TASKS_MAX) {
        mcp__2026_error(m, 200, -32602, "Invalid params: notifications.taskIds must be an array of at most 64 ids",
                        NULL);
        return -1;
    }
    if (!mcp__client_has(m->caps, MCP_EXT_TASKS)) {
        mcp__missing_capability(m, NULL, "Missing required client capability: task notifications need the "
                                         MCP_EXT_TASKS " extension");
        return -1;
    }
    for (size_t i = 0; i < json_object_array_length(want); i++) {
        const char *tid = json_object_get_string(json_object_array_get_idx(want, i));
        int64_t updated;
        bool ended;
        if (mcp__task_look(m->app->cfg, tid, ids[n], &updated, &ended, NULL) < 0)
            continue; /* unknown: not agreed to, so left out of the acknowledgement */
        json_object_array_add(agreed, json_object_new_string(ids[n]));
        n++;
    }
    return n;
}

/* The followed files of the request: into w, their URIs into agreed (a
 * fixture's too, which never changes; one of no live workspace is left
 * out). Their count, or -1: a bad filter (answered). */
static int listen_resources(struct mcp_2026_req *m, json_object *filter, struct mcp_res_watch *w, json_object *agreed)
{
    json_object *want = NULL;
    int n = 0;
    if (!json_object_object_get_ex(filter, "resourceSubscriptions", &want))
        return 0;
    if (!json_object_is_type(want, json_type_array) || json_object_array_length(want) > MCP_SUBSCRIPTIONS_MAX) {
        mcp__2026_error(m, 200, -32602,
                        "Invalid params: notifications.resourceSubscriptions must be an array of at most 64 URIs", NULL);
        return -1;
    }
    for (size_t i = 0; i < json_object_array_length(want); i++) {
        const char *uri = json_object_get_string(json_object_array_get_idx(want, i)), *rel = NULL;
        char wid[WS_ID_MAX + 1];
        json_object *fixture = NULL;
        if (!uri)
            continue;
        if (tools_resource_parse(uri, wid, &rel) == 0) {
            struct mcp_session ws cleanup_session = {0};
            if (mcp__workspace_load(m->app->cfg, wid, &ws) < 0 || mcp__res_watch_add(w, uri, ws.dir, NULL) < 0)
                continue;
        } else if (tools_resource_fixture(m->app->cfg, uri, &fixture) == 0) {
            json_object_put(fixture);
        } else {
            continue;
        }
        json_object_array_add(agreed, json_object_new_string(uri));
        n++;
    }
    return n;
}

/* Each followed file that changed since the last look: its notification. */
static void res_pass(struct http_resp *resp, const char *id_text, struct mcp_res_watch *w)
{
    json_object *changed = json_object_new_array();
    for (int i = 0, n = mcp__res_watch_changed(w, changed); i < n; i++) {
        json_object *p = json_object_new_object();
        json_object_object_add(p, "uri", json_object_get(json_object_array_get_idx(changed, (size_t)i)));
        send_json(resp, id_text, "notifications/resources/updated", p);
    }
    json_object_put(changed);
}

/* One look at each followed task: a notification for each that changed
 * since seen[], which is brought up to date. Returns how many have not
 * ended (a task reaped meanwhile has nothing more to say: it counts as
 * ended). */
static int listen_pass(struct mcp_2026_req *m, const char *id_text, char ids[][WS_ID_MAX + 1], int n, int64_t *seen)
{
    int left = 0;
    for (int i = 0; i < n; i++) {
        char id[WS_ID_MAX + 1];
        int64_t updated;
        bool ended;
        json_object *view = NULL;
        if (mcp__task_look(m->app->cfg, ids[i], id, &updated, &ended, &view) < 0)
            continue;
        if (updated != seen[i]) {
            seen[i] = updated;
            send_json(m->resp, id_text, "notifications/tasks", view);
        } else {
            json_object_put(view);
        }
        left += !ended;
    }
    return left;
}

/* The rest of the subscription to the stream process: its id and what it
 * has seen. 0, or -errno (not handed over: the caller carries on). */
static int listen_keep(struct mcp_2026_req *m, char ids[][WS_ID_MAX + 1], int n, const int64_t *seen,
                       const struct mcp_res_watch *w)
{
    json_object *st = json_object_new_object(), *tasks = json_object_new_array(), *res = json_object_new_array();
    for (size_t i = 0; i < w->n; i++) {
        json_object *r = json_object_new_array();
        json_object_array_add(r, json_object_new_string(w->uri[i]));
        json_object_array_add(r, json_object_new_string(w->dir[i]));
        json_object_array_add(r, json_object_new_int64((int64_t)w->seen[i].ino));
        json_object_array_add(r, json_object_new_int64(w->seen[i].size));
        json_object_array_add(r, json_object_new_int64(w->seen[i].mtime_ns));
        json_object_array_add(res, r);
    }
    json_object_object_add(st, "resources", res);
    json_object_object_add(st, "id", json_object_get(m->id));
    for (int i = 0; i < n; i++) {
        json_object *t = json_object_new_array();
        json_object_array_add(t, json_object_new_string(ids[i]));
        json_object_array_add(t, json_object_new_int64(seen[i]));
        json_object_array_add(tasks, t);
    }
    json_object_object_add(st, "tasks", tasks);
    size_t len;
    const char *text = mcp__to_json(st, &len);
    int rc = stream_keep(m->req, LISTEN_KIND, text, len);
    json_object_put(st);
    return rc;
}

/* The acknowledgement, with the agreed task ids and resources (stolen)
 * when there are. */
static void listen_ack(struct mcp_2026_req *m, const char *id_text, json_object *agreed, int n, json_object *res,
                       int n_res)
{
    json_object *ack = json_object_new_object(), *what = json_object_new_object();
    if (n > 0)
        json_object_object_add(what, "taskIds", agreed);
    else
        json_object_put(agreed);
    if (n_res > 0)
        json_object_object_add(what, "resourceSubscriptions", res);
    else
        json_object_put(res);
    json_object_object_add(ack, "notifications", what);
    send_json(m->resp, id_text, "notifications/subscriptions/acknowledged", ack);
}

void mcp__listen(struct mcp_2026_req *m)
{
    json_object *filter = NULL;
    char ids[LISTEN_TASKS_MAX][WS_ID_MAX + 1];
    if (!json_object_object_get_ex(m->params, "notifications", &filter) ||
        !json_object_is_type(filter, json_type_object)) {
        mcp__2026_error(m, 200, -32602, "Invalid params: subscriptions/listen needs notifications (an object)", NULL);
        return;
    }
    json_object *agreed = json_object_new_array(), *res = json_object_new_array();
    struct mcp_res_watch w = {0};
    int n = listen_tasks(m, filter, ids, agreed), status;
    int n_res = n < 0 ? 0 : listen_resources(m, filter, &w, res);
    const char *why;
    if (n < 0 || n_res < 0) {
        json_object_put(agreed);
        json_object_put(res);
        mcp__res_watch_free(&w);
        return;
    }
    if (stream_open(m->req, m->resp, STREAM_USE_LISTEN, &status, &why) < 0) {
        char msg[200];
        if (status == 429 || status == 503)
            metrics_refused(m->app->cfg, METRICS_REFUSED_STREAMS);
        snprintf(msg, sizeof msg, "%s: %s; try again later", status == 429 ? "Too many requests" : "Service unavailable",
                 why);
        json_object_put(agreed);
        json_object_put(res);
        mcp__res_watch_free(&w);
        mcp__2026_error(m, status, -32000, msg, NULL);
        return;
    }
    size_t idlen;
    cleanup_free char *id_text = http_sse_start(m->resp) < 0 ? NULL : strdup(mcp__to_json(m->id, &idlen));
    if (!id_text) {
        json_object_put(agreed);
        json_object_put(res);
        mcp__res_watch_free(&w);
        return;
    }
    m->sse_open = true;
    listen_ack(m, id_text, agreed, n, res, n_res);
    int64_t seen[LISTEN_TASKS_MAX], last_probe = 0;
    for (int i = 0; i < n; i++)
        seen[i] = -1;
    /* Files are followed until the client closes the stream. */
    int left = listen_pass(m, id_text, ids, n, seen) + (n_res > 0);
    if (left > 0 && listen_keep(m, ids, n, seen, &w) == 0) {
        mcp__res_watch_free(&w);
        return; /* the stream process ends it */
    }
    while (left > 0 && !http_client_gone(m->resp) && !(m->app->cancel_all && *m->app->cancel_all)) {
        usleep(LISTEN_TICK_MS * 1000);
        if (util_now_ms() - m->resp->last_write_ms >= MCP_KEEPALIVE_MS)
            discard(http_sse_comment(m->resp, "keepalive"));
        if (!strcmp(m->app->mode, "cgi") && util_now_ms() - last_probe >= MCP_CGI_PROBE_MS) {
            last_probe = util_now_ms();
            discard(http_sse_pad(m->resp, m->app->cfg->cgi_sse_padding));
        }
        left = listen_pass(m, id_text, ids, n, seen) + (n_res > 0);
        res_pass(m->resp, id_text, &w);
    }
    mcp__res_watch_free(&w);
    send_end(m);
}

/* ------------------------------------------- in the stream process */

struct listener;

/* A task that listens follow: looked at once a tick for all of them. */
struct followed {
    char id[WS_ID_MAX + 1];
    char *file;              /* STATE/tasks/TID/task.json */
    char *dir;
    struct stat st;          /* of task.json when last read */
    int64_t updated;
    bool ended;              /* ended or gone: nothing more will come */
    char *view;              /* the task as notifications/tasks shows it (JSON text) */
    size_t view_len;
    int64_t next_alive;
    struct listener **who;   /* its followers */
    size_t n, cap;
};

struct listener {
    struct stream *s;
    json_object *id;         /* the subscription's id */
    char *id_text;
    struct http_resp resp;
    int n, left;             /* followed tasks, and of them not ended (+1 while it follows files) */
    struct mcp_res_watch *res; /* followed files, or NULL */
    struct {
        struct followed *t;
        int64_t seen;        /* its updated_ms when last shown */
    } f[];                   /* n of them */
};

struct listen_ctx {
    const struct cfg *cfg;
    struct followed **tasks;
    size_t n, cap;
    struct listener **files;  /* the listeners that follow files */
    size_t n_files, cap_files;
};

static void followed_free(struct followed *f)
{
    free(f->file);
    free(f->dir);
    free(f->view);
    free(f->who);
    free(f);
}

/* Reads f again: its times, its end, its view. */
static void followed_read(struct listen_ctx *k, struct followed *f)
{
    char id[WS_ID_MAX + 1];
    json_object *view = NULL;
    bool ended = false;
    if (stat(f->file, &f->st) < 0)
        memset(&f->st, 0, sizeof f->st);
    int rc = mcp__task_look(k->cfg, f->id, id, &f->updated, &ended, &view);
    free(f->view);
    f->view = NULL;
    if (rc < 0) {
        f->ended = true; /* reaped: nothing more to say of it */
        return;
    }
    f->ended = ended;
    size_t len;
    const char *t = mcp__to_json(view, &len);
    f->view = strdup(t);
    f->view_len = f->view ? len : 0;
    json_object_put(view);
}

static struct followed *followed_get(struct listen_ctx *k, const char *tid)
{
    for (size_t i = 0; i < k->n; i++)
        if (!strcmp(k->tasks[i]->id, tid))
            return k->tasks[i];
    if (UTIL_GROW(k->tasks, k->n, k->cap, 16) < 0)
        return NULL;
    struct followed *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    snprintf(f->id, sizeof f->id, "%s", tid);
    if (asprintf(&f->dir, "%s/tasks/%s", k->cfg->state_dir, tid) < 0 ||
        asprintf(&f->file, "%s/tasks/%s/task.json", k->cfg->state_dir, tid) < 0) {
        followed_free(f);
        return NULL;
    }
    followed_read(k, f);
    f->next_alive = util_now_ms() + LISTEN_ALIVE_MS;
    k->tasks[k->n++] = f;
    return f;
}

static int followed_add(struct followed *f, struct listener *l)
{
    if (UTIL_GROW(f->who, f->n, f->cap, 4) < 0)
        return -ENOMEM;
    f->who[f->n++] = l;
    return 0;
}

/* f, when nobody follows it any more, is forgotten. */
static void followed_unused(struct listen_ctx *k, struct followed *f)
{
    if (f->n)
        return;
    for (size_t j = 0; j < k->n; j++)
        if (k->tasks[j] == f) {
            k->tasks[j] = k->tasks[--k->n];
            break;
        }
    followed_free(f);
}

/* l follows nothing any more. */
static void listener_drop(struct listen_ctx *k, struct listener *l)
{
    for (int i = 0; i < l->n; i++) {
        struct followed *f = l->f[i].t;
        for (size_t j = 0; j < f->n; j++)
            if (f->who[j] == l) {
                f->who[j] = f->who[--f->n];
                break;
            }
        followed_unused(k, f);
    }
    for (size_t j = 0; j < k->n_files; j++)
        if (k->files[j] == l) {
            k->files[j] = k->files[--k->n_files];
            break;
        }
    if (l->res) {
        mcp__res_watch_free(l->res);
        free(l->res);
    }
    json_object_put(l->id);
    free(l->id_text);
    http_resp_free(&l->resp);
    free(l);
}

/* Followed task i of l as it is now: a notification when l has not seen it. */
static void listener_show(struct listener *l, int i)
{
    struct followed *f = l->f[i].t;
    if (f->view && f->updated != l->f[i].seen) {
        l->f[i].seen = f->updated;
        send_text(&l->resp, l->id_text, "notifications/tasks", f->view, f->view_len);
    }
}

/* Every followed task of l has ended: the subscription's result, the end. */
static void listener_finish(struct listen_ctx *k, struct listener *l)
{
    struct mcp_2026_req m = {.resp = &l->resp, .id = l->id, .sse_open = true};
    send_end(&m);
    stream_end(l->s);
    listener_drop(k, l);
}

static void *listen_init(const struct cfg *cfg)
{
    struct listen_ctx *k = calloc(1, sizeof *k);
    if (k)
        k->cfg = cfg;
    return k;
}

/* The files l follows, of state's "resources": [[URI, DIR, INO, SIZE,
 * MTIME], ...] (what the worker saw of each). 0 or -ENOMEM. */
static int listen_open_files(struct listen_ctx *k, struct listener *l, json_object *st)
{
    json_object *res = NULL;
    if (!json_object_object_get_ex(st, "resources", &res) || !json_object_is_type(res, json_type_array) ||
        !json_object_array_length(res))
        return 0;
    if (!(l->res = calloc(1, sizeof *l->res)) || UTIL_GROW(k->files, k->n_files, k->cap_files, 8) < 0)
        return -ENOMEM;
    k->files[k->n_files++] = l;
    for (size_t i = 0; i < json_object_array_length(res); i++) {
        json_object *r = json_object_array_get_idx(res, i);
        const char *uri = json_object_get_string(json_object_array_get_idx(r, 0));
        const char *dir = json_object_get_string(json_object_array_get_idx(r, 1));
        struct mcp_res_seen seen = {
            .ino = (uint64_t)json_object_get_int64(json_object_array_get_idx(r, 2)),
            .size = json_object_get_int64(json_object_array_get_idx(r, 3)),
            .mtime_ns = json_object_get_int64(json_object_array_get_idx(r, 4)),
        };
        if (uri && dir && mcp__res_watch_add(l->res, uri, dir, &seen) == -ENOMEM)
            return -ENOMEM;
    }
    return 0;
}

/* A listen kept by its worker: state is {"id": ID, "tasks": [[TID, SEEN],
 * ...], "resources": [...]} (listen_open_files). */
static int listen_open(void *ctx, struct stream *s, const char *state, size_t len)
{
    struct listen_ctx *k = ctx;
    json_object *st = NULL, *tasks = NULL, *id = NULL;
    if (!k || http_parse_json(state, len, MCP_JSON_DEPTH, &st) < 0)
        return -EINVAL;
    cleanup_json json_object *hold = st;
    if (!json_object_object_get_ex(st, "id", &id) || !json_object_object_get_ex(st, "tasks", &tasks) ||
        !json_object_is_type(tasks, json_type_array) || json_object_array_length(tasks) > LISTEN_TASKS_MAX)
        return -EINVAL;
    struct listener *l = calloc(1, sizeof *l + json_object_array_length(tasks) * sizeof l->f[0]);
    if (!l)
        return -ENOMEM;
    size_t n;
    l->s = s;
    l->id = json_object_get(id);
    l->id_text = strdup(mcp__to_json(id, &n));
    http_resp_init(&l->resp, stream_io(s));
    l->resp.started = true; /* the worker sent the headers */
    l->resp.status = 200;
    for (size_t i = 0; i < json_object_array_length(tasks); i++) {
        json_object *t = json_object_array_get_idx(tasks, i);
        const char *tid = json_object_get_string(json_object_array_get_idx(t, 0));
        struct followed *f = tid ? followed_get(k, tid) : NULL;
        if (!f || followed_add(f, l) < 0) {
            if (f)
                followed_unused(k, f);
            listener_drop(k, l);
            return -ENOMEM;
        }
        l->f[l->n].t = f;
        l->f[l->n].seen = json_object_get_int64(json_object_array_get_idx(t, 1));
        l->n++;
    }
    if (!l->id_text || listen_open_files(k, l, st) < 0) {
        listener_drop(k, l);
        return -ENOMEM;
    }
    stream_set_data(s, l);
    for (int i = 0; i < l->n; i++) {
        listener_show(l, i); /* what changed since the worker looked */
        l->left += !l->f[i].t->ended;
    }
    if (l->res) {
        l->left++;
        res_pass(&l->resp, l->id_text, l->res);
    }
    if (!l->left)
        listener_finish(k, l);
    return 0;
}

/* One look at every followed task, for all their followers at once. */
static void listen_tick(void *ctx, int64_t now)
{
    struct listen_ctx *k = ctx;
    if (!k)
        return;
    for (size_t i = 0; i < k->n_files; i++)
        res_pass(&k->files[i]->resp, k->files[i]->id_text, k->files[i]->res);
    for (size_t i = 0; i < k->n; i++) {
        struct followed *f = k->tasks[i];
        struct stat st;
        if (f->ended)
            continue;
        bool changed = stat(f->file, &st) < 0 || st.st_ino != f->st.st_ino || st.st_dev != f->st.st_dev ||
                       st.st_mtim.tv_sec != f->st.st_mtim.tv_sec || st.st_mtim.tv_nsec != f->st.st_mtim.tv_nsec;
        if (!changed && now >= f->next_alive) {
            f->next_alive = now + LISTEN_ALIVE_MS;
            changed = !mcp__task_alive(f->dir); /* died: the look marks it failed */
        }
        if (!changed)
            continue;
        followed_read(k, f);
        for (size_t j = 0; j < f->n; j++) {
            struct listener *l = f->who[j];
            for (int t = 0; t < l->n; t++)
                if (l->f[t].t == f) {
                    listener_show(l, t);
                    l->left -= f->ended;
                }
        }
    }
    /* The subscriptions that have nothing left to follow end (apart, since
     * an end changes the lists walked above). */
    for (size_t i = 0; i < k->n; i++) {
        struct followed *f = k->tasks[i];
        for (size_t j = 0; f->ended && j < f->n; j++)
            if (f->who[j]->left <= 0) {
                listener_finish(k, f->who[j]);
                i = (size_t)-1; /* the lists changed: again from the start */
                break;
            }
    }
}

static void listen_gone(void *ctx, struct stream *s)
{
    struct listener *l = stream_data(s);
    if (ctx && l)
        listener_drop(ctx, l);
}

const struct stream_kind mcp_listen_kind = {
    .name = LISTEN_KIND,
    .tick_ms = LISTEN_TICK_MS,
    .init = listen_init,
    .open = listen_open,
    .tick = listen_tick,
    .gone = listen_gone,
};
