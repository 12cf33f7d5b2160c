/* web_file.c: POST /api/cell/WID/file, a file of the person's into the
 * notebook's workspace (web_internal.h). A multipart form with one file
 * part, "file", and an optional "path" (where beneath mounts/; the file's
 * own name when absent), into the workspace WID, or a new one (the answer
 * names it) when the page has run no cell yet; read through the form parser and held in memory up
 * to write_bytes, the cap of MCP's write_file; then written by the
 * executor's fetch_mount_from as write_file writes (the same safe relative
 * path, no symlink followed, mount_files and mount_bytes), so that a cell
 * reads it at mounts/PATH. */
#include "config.h"

#include "web_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp.h"

#define WEB_FILE_PATH_MAX 1024 /* bytes of the path field */

struct file_form {
    struct form_parser *parser; /* for form_fail */
    struct dbuf data, path;
    char filename[FORM_FILENAME_MAX + 1];
    struct dbuf *cur;
    bool got_file, got_path;
};

static int file_part_begin(void *ctx, const struct form_part *p)
{
    struct file_form *f = ctx;
    bool file = !strcmp(p->name, "file"), path = !strcmp(p->name, "path");
    if (!file && !path) {
        cleanup_free char *name = util_utf8_sanitize(p->name, strnlen(p->name, 64), NULL);
        form_fail(f->parser, "unknown field \"%s\" (known: file, path)", name ? name : "?");
        return -EINVAL;
    }
    if ((file && f->got_file) || (path && f->got_path)) {
        form_fail(f->parser, "the field \"%s\" is given twice", p->name);
        return -EINVAL;
    }
    if (file) {
        f->got_file = true;
        snprintf(f->filename, sizeof f->filename, "%s", p->filename);
    }
    f->got_path |= path;
    f->cur = file ? &f->data : &f->path;
    return 0;
}

static int file_part_data(void *ctx, const struct form_part *p, const char *data, size_t len)
{
    struct file_form *f = ctx;
    int rc = dbuf_append(f->cur, data, len);
    if (rc == -E2BIG) {
        char hs[32];
        util_human_size(f->cur->max, hs, sizeof hs);
        if (f->cur == &f->data)
            form_fail(f->parser, "the file is larger than write_bytes (%s); nothing was written", hs);
        else
            form_fail(f->parser, "the field \"%s\" is longer than %s", p->name, hs);
    }
    return rc;
}

static int file_part_end(void *ctx, const struct form_part *p)
{
    (void)p;
    ((struct file_form *)ctx)->cur = NULL;
    return 0;
}

/* An error of fetch_mount_from as an HTTP status: the client's mistakes
 * and the caps are the client's to change; anything else is the server's. */
static int mount_status(int rc)
{
    switch (-rc) {
    case EINVAL: case ELOOP: case EISDIR: case ENOTDIR: case ENAMETOOLONG: case EEXIST:
        return 400;
    case EFBIG: case EDQUOT: case ENOSPC:
        return 413;
    default:
        return 500;
    }
}

/* Reads the form and writes the file into wid's workspace (NULL: a new
 * one, removed again when nothing was written): 0 (the answer sent), or an
 * HTTP status with the reason in err. */
static int file_serve(const struct app *app, struct http_req *req, struct http_resp *resp, const char *wid,
                      struct file_form *f, char *err, size_t errlen)
{
    const char *ct = http_header(req, "Content-Type");
    if (!ct || strncasecmp(ct, "multipart/form-data", 19)) {
        snprintf(err, errlen, "send the file as multipart/form-data, in a part named \"file\" (and where beneath "
                              "mounts/ in \"path\", when not its own name)");
        return 415;
    }
    struct form_callbacks cb = {f, file_part_begin, file_part_data, file_part_end};
    int status = web__read_form(app, req, ct, &cb, &f->parser, err, errlen);
    if (status)
        return status;
    if (!f->got_file) {
        snprintf(err, errlen, "no file: send it in a part named \"file\"");
        return 400;
    }
    if (f->path.len && memchr(f->path.data, '\0', f->path.len)) {
        snprintf(err, errlen, "the field \"path\" holds a NUL byte");
        return 400;
    }
    const char *path = f->got_path && f->path.len ? f->path.data : f->filename;
    if (!*path) {
        snprintf(err, errlen, "the file has no name: give one in the field \"path\" (e.g. data/sales.csv)");
        return 400;
    }
    cleanup_free char *dir = NULL;
    char id[WS_ID_MAX + 1];
    int rc = mcp_workspace_open(app->cfg, wid, id, &dir);
    if (rc == -EUSERS) {
        snprintf(err, errlen, "too many open workspaces on this server (max_sessions): try again later");
        return 503;
    }
    if (rc == -ENOENT) {
        snprintf(err, errlen, "no such workspace (deleted, or idle for longer than session_ttl): run a cell to "
                              "start a new notebook, then add the file");
        return 404;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "/api/cell: the workspace %s: %s", wid ? wid : "(new)", strerror(-rc));
        snprintf(err, errlen, "cannot open the notebook's workspace");
        return 500;
    }
    /* dir is WORKSPACE_DIR/workspace; fetch_mount_from takes its parent. */
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    struct fetch_src src = {.kind = FETCH_SRC_BYTES, .data = f->data.data ? f->data.data : "", .len = f->data.len};
    struct fetch_mount m;
    char ferr[FETCH_ERR_MAX] = "";
    rc = fetch_mount_from(&app->cfg->fetch, dir, &src, path, &m, ferr, sizeof ferr);
    if (rc < 0) {
        status = mount_status(rc);
        log_msg(LOG_LVL_INFO, "workspace %s: a file from the page refused: %s", id, strerror(-rc));
        if (!wid && mcp_workspace_delete(app, id) == 0)
            log_msg(LOG_LVL_INFO, "workspace %s: made for a file that was refused: removed", id);
        if (status == 500) {
            snprintf(err, errlen, "cannot write the file into the notebook's workspace");
            return 500;
        }
        cleanup_free char *clean = util_utf8_sanitize(ferr, strlen(ferr), NULL);
        snprintf(err, errlen, "%s; nothing was written", clean ? clean : strerror(-rc));
        return status;
    }
    json_object *res = result_mount_json(&m);
    log_msg(LOG_LVL_INFO, "workspace %s: a file from the page, %llu bytes", id, (unsigned long long)m.bytes);
    fetch_mount_free(&m);
    if (!res)
        return 500;
    json_object_object_add(res, "workspace", json_object_new_string(id));
    discard(http_send_json(resp, 200, json_object_to_json_string_ext(res, JSON_C_TO_STRING_PLAIN)));
    json_object_put(res);
    return 0;
}

void web__cell_file(const struct app *app, struct http_req *req, struct http_resp *resp, const char *wid)
{
    if (strcmp(req->method, "POST")) {
        discard(http_add_header(resp, "Allow", "POST"));
        http_send_error(resp, 405, "use POST");
        return;
    }
    struct file_form f = {0};
    dbuf_init(&f.data, (size_t)app->cfg->write_bytes);
    dbuf_init(&f.path, WEB_FILE_PATH_MAX);
    char err[FETCH_ERR_MAX + 64] = "";
    int status = file_serve(app, req, resp, wid, &f, err, sizeof err);
    if (status) {
        if (!err[0])
            snprintf(err, sizeof err, "out of memory");
        log_msg(LOG_LVL_INFO, "/api/cell: %d: %s", status, err);
        http_send_error(resp, status, err);
    }
    dbuf_free(&f.data);
    dbuf_free(&f.path);
}
