/* tools_res.c: a workspace's files as MCP resources, workspace://ID/PATH
 * (ID: the session's id, or a 2026-07-28 workspace handle), listed, read
 * (text, or bytes as a base64 blob) and completed, with the guards of
 * preview_file and /artifacts/: beneath the workspace's directory fd, no
 * symlink followed anywhere, a regular file with one link. The test
 * program adds the conformance suite's fixture resources (tools_fixture.c). */
#include "config.h"

#include "tools_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define RES_SCHEME "workspace://"
#define RES_HEAD 4096 /* bytes ws_mime looks at */

int tools_resource_parse(const char *uri, char id[WS_ID_MAX + 1], const char **rel)
{
    if (strncmp(uri, RES_SCHEME, strlen(RES_SCHEME)))
        return -ENOENT;
    const char *p = uri + strlen(RES_SCHEME), *slash = strchr(p, '/');
    if (!slash || slash == p || (size_t)(slash - p) > WS_ID_MAX)
        return -ENOENT;
    memcpy(id, p, (size_t)(slash - p));
    id[slash - p] = '\0';
    *rel = slash + 1;
    return ws_rel_path_ok(*rel) ? 0 : -ENOENT;
}

static int open_ws(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/workspace", dir);
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

/* The MIME type of the file open at fd, named name, from its first bytes. */
static const char *mime_of(int fd, const char *name)
{
    unsigned char head[RES_HEAD];
    ssize_t n = pread(fd, head, sizeof head, 0);
    const char *base = strrchr(name, '/');
    return ws_mime(head, n > 0 ? (size_t)n : 0, base ? base + 1 : name);
}

struct list_walk {
    struct util_walk walk;
    json_object *arr;
    const char *id;
    const char *prefix; /* completion: paths that start with it; NULL: all, as resources */
    size_t n, max;
    bool truncated;
};

static int list_pre(int dirfd, const char *name, const struct stat *st, int depth, void *ctx)
{
    struct list_walk *w = ctx;
    const char *rel = w->walk.path;
    if (depth == 0)
        return UTIL_WALK_NEXT;
    if (w->prefix && strncmp(rel, w->prefix, strlen(w->prefix)) &&
        !(S_ISDIR(st->st_mode) && !strncmp(w->prefix, rel, strlen(rel)) && w->prefix[strlen(rel)] == '/'))
        return S_ISDIR(st->st_mode) ? UTIL_WALK_SKIP : UTIL_WALK_NEXT;
    if (!S_ISREG(st->st_mode) || st->st_nlink != 1)
        return UTIL_WALK_NEXT; /* a folder is walked; a symlink or a hardlink is never a resource */
    if (w->n == w->max) {
        w->truncated = true;
        return UTIL_WALK_STOP;
    }
    cleanup_free char *clean = util_utf8_sanitize(rel, strlen(rel), NULL);
    if (!clean || strcmp(clean, rel))
        return UTIL_WALK_NEXT; /* a name that is not UTF-8 has no URI a client could send back */
    w->n++;
    if (w->prefix) {
        json_object_array_add(w->arr, json_object_new_string(rel));
        return UTIL_WALK_NEXT;
    }
    json_object *r = json_object_new_object();
    char uri[2200];
    snprintf(uri, sizeof uri, RES_SCHEME "%s/%s", w->id, rel);
    json_object_object_add(r, "uri", json_object_new_string(uri));
    json_object_object_add(r, "name", json_object_new_string(rel));
    json_object_object_add(r, "description", json_object_new_string("A file of the workspace"));
    cleanup_fd int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd >= 0)
        json_object_object_add(r, "mimeType", json_object_new_string(mime_of(fd, rel)));
    json_object_object_add(r, "size", json_object_new_int64((int64_t)st->st_size));
    json_object_array_add(w->arr, r);
    return UTIL_WALK_NEXT;
}

/* The walk of dir's workspace into arr: resources (prefix NULL), or the
 * paths that begin with prefix. 0 or -errno. */
static int walk_ws(const char *dir, const char *id, const char *prefix, size_t max, json_object *arr, bool *truncated)
{
    cleanup_fd int ws = open_ws(dir);
    if (ws < 0)
        return ws == -ENOENT ? 0 : ws;
    struct list_walk w = {.arr = arr, .id = id, .prefix = prefix, .max = max};
    w.walk = (struct util_walk){.pre = list_pre, .ctx = &w, .flags = UTIL_WALK_PATHS};
    int rc = util_walk_at(ws, "", &w.walk);
    if (truncated)
        *truncated = w.truncated;
    return rc < 0 ? rc : 0;
}

json_object *tools_resources(const struct cfg *cfg, const char *dir, const char *id)
{
    json_object *arr = json_object_new_array();
    if (cfg->test_fixture_tools)
        tools__fixture_resources(arr);
    if (dir && id) {
        int rc = walk_ws(dir, id, NULL, TOOLS_RES_LIST_MAX, arr, NULL);
        if (rc < 0)
            log_msg(LOG_LVL_WARN, "listing the workspace's resources: %s", strerror(-rc));
    }
    return arr;
}

json_object *tools_resource_templates(const struct cfg *cfg)
{
    json_object *arr = json_object_new_array(), *t = json_object_new_object();
    json_object_object_add(t, "uriTemplate", json_object_new_string(RES_SCHEME "{workspace}/{+path}"));
    json_object_object_add(t, "name", json_object_new_string("workspace-file"));
    json_object_object_add(t, "title", json_object_new_string("A file of a workspace"));
    json_object_object_add(t, "description",
                           json_object_new_string("A file of a workspace: workspace is the session's id (legacy "
                                                  "revisions) or a workspace handle (2026-07-28); path is relative "
                                                  "to the workspace, as list_dir shows it (output/ holds what "
                                                  "scripts wrote to SCRIPT_OUTPUT)."));
    json_object_array_add(arr, t);
    if (cfg->test_fixture_tools)
        tools__fixture_templates(arr);
    return arr;
}

int tools_resource_read(const char *dir, const char *uri, const char *rel, json_object **result)
{
    *result = NULL;
    cleanup_fd int ws = open_ws(dir);
    if (ws < 0)
        return ws == -ENOENT ? -ENOENT : ws;
    cleanup_fd int fd = ws_open_beneath(ws, rel, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    if (fd < 0)
        return fd == -ENOMEM || fd == -EMFILE || fd == -ENFILE || fd == -EIO ? fd : -ENOENT;
    struct stat st;
    if (fstat(fd, &st) < 0)
        return -errno;
    if (!S_ISREG(st.st_mode) || st.st_nlink != 1) /* a hardlink may be a file of elsewhere */
        return -ENOENT;
    if (st.st_size > TOOLS_RES_READ_MAX)
        return -EFBIG;
    size_t size = (size_t)st.st_size, got = 0;
    cleanup_free unsigned char *buf = malloc(size + 1);
    if (!buf)
        return -ENOMEM;
    while (got < size) {
        ssize_t r = pread(fd, buf + got, size - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            break;
        got += (size_t)r;
    }
    const char *mime = ws_mime(buf, got < RES_HEAD ? got : RES_HEAD, strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel);
    bool text = !memchr(buf, '\0', got) && util_utf8_valid((const char *)buf, got);
    json_object *c = json_object_new_object();
    json_object_object_add(c, "uri", json_object_new_string(uri));
    json_object_object_add(c, "mimeType", json_object_new_string(mime));
    if (text) {
        json_object_object_add(c, "text", json_object_new_string_len((const char *)buf, (int)got));
    } else {
        size_t n = 0;
        cleanup_free char *b64 = http_base64(buf, got, &n);
        if (!b64) {
            json_object_put(c);
            return -ENOMEM;
        }
        json_object_object_add(c, "blob", json_object_new_string_len(b64, (int)n));
    }
    json_object *arr = json_object_new_array();
    json_object_array_add(arr, c);
    *result = json_object_new_object();
    json_object_object_add(*result, "contents", arr);
    return 0;
}

int tools_resource_fixture(const struct cfg *cfg, const char *uri, json_object **result)
{
    *result = NULL;
    return cfg->test_fixture_tools ? tools__fixture_read(uri, result) : -ENOENT;
}

int tools_complete_path(const char *dir, const char *prefix, json_object **values, bool *more)
{
    *values = json_object_new_array();
    *more = false;
    char clean[1100];
    snprintf(clean, sizeof clean, "%s", prefix);
    if (strstr(clean, "..") || clean[0] == '/')
        return 0; /* no path of the workspace begins so */
    int rc = walk_ws(dir, "", clean, TOOLS_COMPLETE_MAX, *values, more);
    return rc;
}

int tools_complete_fixture(const struct cfg *cfg, const char *prompt, const char *arg, const char *value,
                           json_object **values)
{
    *values = NULL;
    return cfg->test_fixture_tools ? tools__fixture_complete(prompt, arg, value, values) : -ENOENT;
}

struct pkg_ctx {
    json_object *values;
    bool more;
};

static int add_package(const char *dist, void *ctx)
{
    struct pkg_ctx *p = ctx;
    if (json_object_array_length(p->values) == TOOLS_COMPLETE_MAX) {
        p->more = true;
        return 1;
    }
    json_object_array_add(p->values, json_object_new_string(dist));
    return 0;
}

int tools_complete_package(const struct cfg *cfg, const char *prefix, json_object **values, bool *more)
{
    struct pkg_ctx p = {.values = json_object_new_array()};
    int rc = exec_packages_each(cfg->exec.deps.data_dir, prefix, add_package, &p);
    *values = p.values;
    *more = p.more;
    return rc < 0 ? rc : 0;
}
