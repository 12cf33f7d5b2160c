/* mcp_res.c: resources and completions, for both revisions: the methods'
 * params checked and their results made (the files are the tools'
 * module's, tools_res.c), each revision answering them its own way; and
 * the watch of subscribed files, which tells a client when a run or a cell
 * changed one (notifications/resources/updated). A workspace:// URI names
 * its workspace: a legacy session reads its own, a 2026-07-28 request the
 * workspace whose handle the URI holds (the handle is the capability). */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WS_TEMPLATE "workspace://{workspace}/{+path}"

static json_object *fail(struct mcp_res_err *e, int code, json_object *data, const char *fmt, ...) printf_like(4, 5);
static json_object *fail(struct mcp_res_err *e, int code, json_object *data, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->message, sizeof e->message, fmt, ap);
    va_end(ap);
    e->code = code;
    e->status = code == -32603 ? 500 : 200;
    e->data = data;
    return NULL;
}

static json_object *not_found(struct mcp_res_err *e, const char *uri, const char *why)
{
    json_object *data = json_object_new_object();
    json_object_object_add(data, "uri", json_object_new_string(uri));
    return fail(e, -32602, data, "Resource not found: %s", why);
}

json_object *mcp__res_list(const struct cfg *cfg, const struct mcp_session *s)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "resources", tools_resources(cfg, s ? s->dir : NULL, s ? s->id : NULL));
    return r;
}

json_object *mcp__res_templates(const struct cfg *cfg)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "resourceTemplates", tools_resource_templates(cfg));
    return r;
}

/* params.uri (borrowed), or NULL with e filled. */
static const char *uri_of(json_object *params, struct mcp_res_err *e)
{
    const char *uri = mcp__json_string(params, "uri");
    if (!uri)
        fail(e, -32602, NULL, "Invalid params: uri (a string) is required");
    return uri;
}

json_object *mcp__res_read(const struct cfg *cfg, const struct mcp_session *s, json_object *params,
                           struct mcp_res_err *e, bool *is_file)
{
    const char *uri = uri_of(params, e), *rel = NULL;
    char id[WS_ID_MAX + 1];
    json_object *result = NULL;
    *is_file = false;
    if (!uri)
        return NULL;
    if (tools_resource_parse(uri, id, &rel) < 0) {
        if (tools_resource_fixture(cfg, uri, &result) == 0)
            return result;
        return not_found(e, uri, "not a resource of this server (resources/list and resources/templates/list "
                                 "name them: workspace://WORKSPACE/PATH)");
    }
    struct mcp_session ws cleanup_session = {0};
    const char *dir = NULL;
    if (s) { /* a legacy session reads its own workspace */
        if (!strcmp(id, s->id))
            dir = s->dir;
    } else if (mcp__workspace_load(cfg, id, &ws) == 0) {
        dir = ws.dir;
    }
    if (!dir)
        return not_found(e, uri, s ? "the workspace is not this session's (its id is the session's)"
                                   : "no such workspace (or it has ended)");
    int rc = tools_resource_read(dir, uri, rel, &result);
    if (rc == -ENOENT)
        return not_found(e, uri, "no such file in the workspace (a folder, a symbolic link or a file with more "
                                 "than one link is never one)");
    if (rc == -EFBIG)
        return fail(e, -32602, NULL, "Invalid params: the file is over %d MiB, more than a resource may hold "
                                      "(persist_artifact gives it a link to download)", TOOLS_RES_READ_MAX >> 20);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "reading a resource: %s", strerror(-rc));
        return fail(e, -32603, NULL, "Internal error: cannot read the resource");
    }
    *is_file = true;
    return result;
}

/* ------------------------------------------------------------ completion */

static json_object *completion(json_object *values, bool more)
{
    json_object *r = json_object_new_object(), *c = json_object_new_object();
    size_t n = json_object_array_length(values);
    json_object_object_add(c, "values", values);
    json_object_object_add(c, "total", json_object_new_int64((int64_t)n));
    json_object_object_add(c, "hasMore", json_object_new_boolean(more));
    json_object_object_add(r, "completion", c);
    return r;
}

/* The path argument of the workspace template: the files of the session's
 * workspace (legacy), or of the one context.arguments.workspace names. */
static json_object *complete_path(const struct cfg *cfg, const struct mcp_session *s, json_object *params,
                                  const char *value, struct mcp_res_err *e)
{
    json_object *ctx = NULL, *args = NULL;
    const char *wid = NULL;
    if (json_object_object_get_ex(params, "context", &ctx) && json_object_is_type(ctx, json_type_object) &&
        json_object_object_get_ex(ctx, "arguments", &args))
        wid = mcp__json_string(args, "workspace");
    struct mcp_session ws cleanup_session = {0};
    const char *dir = s ? s->dir : NULL;
    if (!s && wid && mcp__workspace_load(cfg, wid, &ws) == 0)
        dir = ws.dir;
    json_object *values = NULL;
    bool more = false;
    if (!dir)
        return completion(json_object_new_array(), false); /* no workspace named yet: nothing to offer */
    int rc = tools_complete_path(dir, value, &values, &more);
    if (rc < 0) {
        json_object_put(values);
        log_msg(LOG_LVL_ERROR, "completing a path: %s", strerror(-rc));
        return fail(e, -32603, NULL, "Internal error: cannot list the workspace");
    }
    return completion(values, more);
}

json_object *mcp__complete(const struct cfg *cfg, const struct mcp_session *s, json_object *params,
                           struct mcp_res_err *e)
{
    json_object *ref = NULL, *arg = NULL;
    if (!json_object_is_type(params, json_type_object) || !json_object_object_get_ex(params, "ref", &ref) ||
        !json_object_is_type(ref, json_type_object) || !json_object_object_get_ex(params, "argument", &arg) ||
        !mcp__json_string(arg, "name") || !mcp__json_string(arg, "value") || !mcp__json_string(ref, "type"))
        return fail(e, -32602, NULL, "Invalid params: completion/complete needs ref {type, ...} and argument "
                                      "{name, value}");
    const char *type = mcp__json_string(ref, "type"), *name = mcp__json_string(arg, "name");
    const char *value = mcp__json_string(arg, "value");
    if (!strcmp(type, "ref/resource")) {
        const char *uri = mcp__json_string(ref, "uri");
        if (!uri || strcmp(uri, WS_TEMPLATE))
            return fail(e, -32602, NULL, "Invalid params: no resource template %s (resources/templates/list names "
                                          "them)", uri ? "of that uri" : "without a uri");
        if (!strcmp(name, "path"))
            return complete_path(cfg, s, params, value, e);
        json_object *values = json_object_new_array();
        /* A workspace: the session's own (legacy); handles are capabilities, never listed. */
        if (!strcmp(name, "workspace") && s && !strncmp(s->id, value, strlen(value)))
            json_object_array_add(values, json_object_new_string(s->id));
        return completion(values, false);
    }
    if (!strcmp(type, "ref/prompt")) {
        const char *prompt = mcp__json_string(ref, "name");
        json_object *values = NULL;
        bool more = false;
        if (prompt && tools_complete_fixture(cfg, prompt, name, value, &values) == 0)
            return completion(values, false);
        if (!prompt || !tools_prompt_has_arg(cfg, prompt, name))
            return fail(e, -32602, NULL, "Invalid params: no prompt of that name with that argument "
                                          "(prompts/list names them)");
        if (!strcmp(name, "mounted_files"))
            return complete_path(cfg, s, params, value, e); /* python_programmer's: the workspace's files */
        if (!strcmp(name, "requirements") || !strcmp(name, "package")) {
            /* A prompt's argument that is a package: what the import map knows. */
            int rc = tools_complete_package(cfg, value, &values, &more);
            if (rc == 0)
                return completion(values, more);
            json_object_put(values);
            log_msg(LOG_LVL_ERROR, "completing a package: %s", strerror(-rc));
            return fail(e, -32603, NULL, "Internal error: cannot read the import map");
        }
        return fail(e, -32602, NULL, "Invalid params: no prompt of that name");
    }
    return fail(e, -32602, NULL, "Invalid params: ref.type is ref/prompt or ref/resource");
}

/* --------------------------------------------------------- subscriptions */

int mcp__res_subscribe(struct mcp_session *s, json_object *params, bool on, struct mcp_res_err *e)
{
    const char *uri = uri_of(params, e);
    if (!uri)
        return -EINVAL;
    json_object *subs = NULL, *next = json_object_new_array();
    if (json_object_object_get_ex(s->doc, "subscriptions", &subs) && json_object_is_type(subs, json_type_array))
        for (size_t i = 0; i < json_object_array_length(subs); i++) {
            json_object *u = json_object_array_get_idx(subs, i);
            if (json_object_is_type(u, json_type_string) && strcmp(json_object_get_string(u), uri))
                json_object_array_add(next, json_object_get(u));
        }
    if (on && json_object_array_length(next) >= MCP_SUBSCRIPTIONS_MAX) {
        json_object_put(next);
        fail(e, -32602, NULL, "Invalid params: a session follows at most %d resources", MCP_SUBSCRIPTIONS_MAX);
        return -EINVAL;
    }
    if (on)
        json_object_array_add(next, json_object_new_string(uri));
    json_object_object_add(s->doc, "subscriptions", next);
    int rc = mcp__session_write(s);
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "saving the subscriptions: %s", strerror(-rc));
        fail(e, -32603, NULL, "Internal error: cannot save the subscription");
    }
    return rc;
}

/* What a file is now: its inode, size and time of modification, or all
 * zero when it is gone (or not a file a resource may be). Not its ctime:
 * each run hands the workspace to its own uid, which changes every file's. */
static void look(int ws, const char *rel, struct mcp_res_seen *seen)
{
    struct stat st;
    memset(seen, 0, sizeof *seen);
    cleanup_fd int fd = ws < 0 ? -1 : ws_open_beneath(ws, rel, O_PATH, 0);
    if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1) {
        seen->ino = (uint64_t)st.st_ino;
        seen->size = (int64_t)st.st_size;
        seen->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    }
}

int mcp__res_watch_add(struct mcp_res_watch *w, const char *uri, const char *dir, const struct mcp_res_seen *seen)
{
    char wid[WS_ID_MAX + 1];
    const char *rel = NULL;
    if (w->n == MCP_SUBSCRIPTIONS_MAX)
        return -E2BIG;
    if (tools_resource_parse(uri, wid, &rel) < 0)
        return -EINVAL;
    w->uri[w->n] = strdup(uri);
    w->dir[w->n] = strdup(dir);
    if (!w->uri[w->n] || !w->dir[w->n]) {
        free(w->uri[w->n]);
        free(w->dir[w->n]);
        return -ENOMEM;
    }
    if (seen) {
        w->seen[w->n] = *seen;
    } else {
        char path[4096];
        snprintf(path, sizeof path, "%s/workspace", dir);
        cleanup_fd int ws = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        look(ws, rel, &w->seen[w->n]);
    }
    w->n++;
    return 0;
}

void mcp__res_watch_start(struct mcp_res_watch *w, json_object *uris, const char *dir, const char *id)
{
    memset(w, 0, sizeof *w);
    if (!json_object_is_type(uris, json_type_array))
        return;
    for (size_t i = 0; i < json_object_array_length(uris); i++) {
        const char *uri = json_object_get_string(json_object_array_get_idx(uris, i)), *rel = NULL;
        char wid[WS_ID_MAX + 1];
        if (!uri || tools_resource_parse(uri, wid, &rel) < 0 || strcmp(wid, id))
            continue; /* a fixture's or another workspace's: nothing here changes it */
        if (mcp__res_watch_add(w, uri, dir, NULL) < 0)
            break;
    }
}

int mcp__res_watch_changed(struct mcp_res_watch *w, json_object *changed)
{
    int n = 0;
    for (size_t i = 0; i < w->n; i++) {
        char wid[WS_ID_MAX + 1], path[4096];
        const char *rel = NULL;
        struct mcp_res_seen now;
        if (tools_resource_parse(w->uri[i], wid, &rel) < 0)
            continue;
        snprintf(path, sizeof path, "%s/workspace", w->dir[i]);
        cleanup_fd int ws = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        look(ws, rel, &now);
        if (memcmp(&now, &w->seen[i], sizeof now)) {
            w->seen[i] = now;
            json_object_array_add(changed, json_object_new_string(w->uri[i]));
            n++;
        }
    }
    return n;
}

void mcp__res_watch_free(struct mcp_res_watch *w)
{
    for (size_t i = 0; i < w->n; i++) {
        free(w->uri[i]);
        free(w->dir[i]);
    }
    w->n = 0;
}

json_object *mcp__res_updated(const char *uri)
{
    json_object *n = json_object_new_object(), *p = json_object_new_object();
    json_object_object_add(n, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(n, "method", json_object_new_string("notifications/resources/updated"));
    json_object_object_add(p, "uri", json_object_new_string(uri));
    json_object_object_add(n, "params", p);
    return n;
}
