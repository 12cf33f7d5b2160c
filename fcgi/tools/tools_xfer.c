/* tools_xfer.c: the transfers, mount_file (a URL, or over stdio a file://
 * beneath mount_root), write_file (the client's bytes), run_code's files
 * and persist_artifact: files move with fetch_* in this worker, reporting
 * bytes as progress and polling the client's cancel. */
#include "config.h"

#include "tools_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define TOOLS_XFER_POLL_MS 100      /* progress and cancel checks of a transfer, at most this often */

/* A transfer's progress notifications and the client's cancel, polled by
 * the transfer (sandbox/fetch/fetch_transfer.c) while bytes move. Values run from lo towards hi as the bytes
 * come (hi 0: the byte count itself, total the announced size). */
struct xfer_progress {
    const struct tools_ctx *call;
    const char *what;          /* "downloading URL": the message's start */
    double lo, hi, steps;      /* steps: the notifications' total (hi > 0) */
    int64_t last_ms;
};

static bool on_xfer(void *ctx, uint64_t done, uint64_t total)
{
    struct xfer_progress *x = ctx;
    int64_t now = util_now_ms();
    if (x->last_ms && now - x->last_ms < TOOLS_XFER_POLL_MS)
        return false;
    x->last_ms = now;
    if (done > 0) {
        char msg[700], hd[32], ht[32] = "";
        util_human_size(done, hd, sizeof hd);
        if (total)
            util_human_size(total, ht, sizeof ht);
        snprintf(msg, sizeof msg, "%s: %s%s%s", x->what, hd, total ? " of " : "", ht);
        if (x->hi > 0) {
            /* A fraction that only grows, also when the size is unknown. */
            double f = total ? (double)done / (double)total : (double)done / ((double)done + (1 << 20));
            if (f > 1)
                f = 1;
            f = 0.01 + 0.99 * f; /* above the start's value */
            tools__progress(x->call, x->lo + (x->hi - x->lo) * f, x->steps, msg);
        } else {
            tools__progress(x->call, (double)done, (double)total, msg);
        }
    }
    return tools__cancelled(x->call);
}

/* One transfer of a call: the URL as it may be shown, the progress
 * message, and the server's fetch settings with this call's progress and
 * cancel. Not to be moved once started (it points into itself). */
struct xfer_call {
    char shown[512];           /* the URL redacted (fetch_url_redact) */
    char what[600];            /* "VERB URL" */
    char err[FETCH_ERR_MAX];
    struct xfer_progress xp;
    struct fetch_config fc;
};

/* Sets t up for url and sends the first progress notification: at lo
 * when the values run between lo and hi of steps, else at 0 (bytes). */
static void xfer_start(const struct tools_ctx *c, struct xfer_call *t, const char *verb, const char *url, double lo,
                       double hi, double steps)
{
    fetch_url_redact(url, t->shown, sizeof t->shown);
    snprintf(t->what, sizeof t->what, "%s %s", verb, t->shown);
    t->err[0] = '\0';
    t->xp = (struct xfer_progress){.call = c, .what = t->what, .lo = lo, .hi = hi, .steps = steps};
    t->fc = c->cfg->fetch;
    t->fc.progress = on_xfer;
    t->fc.progress_ctx = &t->xp;
    tools__progress(c, hi > 0 ? lo + (hi - lo) * 0.005 : 0, steps, t->what);
}

/* A failed transfer: -ECANCELED when the client cancelled (send nothing),
 * else an isError result "TOOL: REASON TAIL" with the transfer's one-line reason
 * (the URL in it without its query). */
static int xfer_error(const struct tools_ctx *c, const char *tool, int rc, const char *err, const char *tail,
                      json_object **result)
{
    if (rc == -ECANCELED && tools__client_cancelled(c))
        return -ECANCELED;
    log_msg(LOG_LVL_INFO, "%s failed: %s", tool, fetch_strerror(rc));
    cleanup_free char *clean = util_utf8_sanitize(err, strlen(err), NULL);
    *result = tools__arg_error("%s: %s%s", tool, clean ? clean : fetch_strerror(rc), tail);
    return 0;
}

static json_object *mount_result(const char *shown, const struct fetch_mount *m)
{
    json_object *sc = result_mount_json(m);
    if (!sc)
        return NULL;
    char hs[32], text[1200];
    util_human_size(m->bytes, hs, sizeof hs);
    cleanup_free char *as = util_utf8_sanitize(m->mounted_as, strlen(m->mounted_as), NULL);
    snprintf(text, sizeof text,
             "%s %s as %s (%s, %s, sha256 %s). Scripts read it at %s, relative to their current directory "
             "(read-only).",
             m->reused ? "already mounted (not fetched again):" : "mounted", shown, as ? as : "?", hs, m->mime,
             m->sha256, as ? as : "?");
    return tools__simple_result(text, false, sc);
}

int tools__mount_file(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"url", "mount_path", NULL};
    if ((*result = tools__check_known(args, known, "mount_file")))
        return 0;
    json_object *url = tools__get_arg(args, "url"), *mp = tools__get_arg(args, "mount_path");
    if (!url || !json_object_is_type(url, json_type_string) || !mp || !json_object_is_type(mp, json_type_string)) {
        *result = tools__arg_error("mount_file: url (an http or https URL) and mount_path (a path relative to mounts/, "
                            "e.g. 'data/train.csv') are required, both strings");
        return 0;
    }
    const char *u = json_object_get_string(url);
    struct xfer_call t;
    /* A file:// URL names a file of the machine the server runs on: the
     * client's own only over stdio, and then only beneath mount_root. */
    bool local = !strncasecmp(u, "file:", 5);
    if (local && !c->local) {
        *result = tools__arg_error("mount_file: file:// URLs are taken only over stdio (runmyscript mcp on your own "
                                   "machine); send the bytes with write_file, or give an http or https URL");
        return 0;
    }
    xfer_start(c, &t, local ? "copying" : "downloading", u, 0, 0, 0);
    struct fetch_src src = {.kind = local ? FETCH_SRC_LOCAL : FETCH_SRC_URL, .url = u, .root = c->cfg->mount_root};
    struct fetch_mount m;
    int rc = fetch_mount_from(&t.fc, c->session_dir, &src, json_object_get_string(mp), &m, t.err, sizeof t.err);
    if (rc < 0)
        return xfer_error(c, "mount_file", rc, t.err, "", result);
    *result = mount_result(t.shown, &m);
    log_msg(LOG_LVL_INFO, "mount_file: %s %llu bytes", m.reused ? "kept" : "mounted", (unsigned long long)m.bytes);
    fetch_mount_free(&m);
    return *result ? 0 : -ENOMEM;
}

int tools__write_file(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"path", "content", "encoding", NULL};
    if ((*result = tools__check_known(args, known, "write_file")))
        return 0;
    json_object *path = tools__get_arg(args, "path"), *content = tools__get_arg(args, "content"),
                *enc = tools__get_arg(args, "encoding");
    const char *how = enc && json_object_is_type(enc, json_type_string) ? json_object_get_string(enc) : "text";
    if (!path || !json_object_is_type(path, json_type_string) || !content ||
        !json_object_is_type(content, json_type_string) || (strcmp(how, "text") && strcmp(how, "base64"))) {
        *result = tools__arg_error("write_file: path (relative to mounts/, e.g. 'data/sales.csv') and content (a "
                                   "string) are required; encoding is 'text' (the default) or 'base64'");
        return 0;
    }
    const char *text = json_object_get_string(content);
    size_t len = (size_t)json_object_get_string_len(content);
    cleanup_free unsigned char *bytes = NULL;
    if (!strcmp(how, "base64")) {
        bytes = http_base64_decode(text, len, &len);
        if (!bytes) {
            if (errno == ENOMEM)
                return -ENOMEM;
            *result = tools__arg_error("write_file: content is not base64 (RFC 4648: A-Z a-z 0-9 + /, '=' padding); "
                                       "nothing was written");
            return 0;
        }
        text = (const char *)bytes;
    }
    if (len > c->cfg->write_bytes) {
        char hm[32];
        util_human_size(c->cfg->write_bytes, hm, sizeof hm);
        *result = tools__arg_error("write_file: the file is %zu bytes, more than write_bytes (%s); nothing was "
                                   "written", len, hm);
        return 0;
    }
    struct fetch_src src = {.kind = FETCH_SRC_BYTES, .data = text, .len = len};
    struct fetch_mount m;
    char err[FETCH_ERR_MAX] = "";
    int rc = fetch_mount_from(&c->cfg->fetch, c->session_dir, &src, json_object_get_string(path), &m, err, sizeof err);
    if (rc < 0) {
        cleanup_free char *clean = util_utf8_sanitize(err, strlen(err), NULL);
        log_msg(LOG_LVL_INFO, "write_file failed: %s", strerror(-rc));
        *result = tools__arg_error("write_file: %s; nothing was written", clean ? clean : strerror(-rc));
        return 0;
    }
    json_object *sc = result_mount_json(&m);
    char hs[32], line[1000];
    util_human_size(m.bytes, hs, sizeof hs);
    cleanup_free char *as = util_utf8_sanitize(m.mounted_as, strlen(m.mounted_as), NULL);
    snprintf(line, sizeof line, "wrote %s (%s, %s, sha256 %s). Scripts read it at %s, relative to their current "
                                "directory (read-only).",
             as ? as : "?", hs, m.mime, m.sha256, as ? as : "?");
    log_msg(LOG_LVL_INFO, "write_file: %llu bytes", (unsigned long long)m.bytes);
    fetch_mount_free(&m);
    if (!sc)
        return -ENOMEM;
    *result = tools__simple_result(line, false, sc);
    return *result ? 0 : -ENOMEM;
}

/* run_code's files, into the session's mounts/ before the run. 0 with
 * *result NULL when all are there; 0 with an isError *result when one
 * failed (nothing runs); -ECANCELED or another -errno. */
int tools__mount_files(const struct tools_ctx *c, const struct file_arg *files, size_t n_files, json_object **result)
{
    *result = NULL;
    for (size_t i = 0; i < n_files; i++) {
        char verb[48];
        snprintf(verb, sizeof verb, "downloading files[%zu]", i);
        /* Between "queued" (0) and the next phase (1), file after file. */
        struct xfer_call t;
        xfer_start(c, &t, verb, files[i].url, 0.99 * (double)i / (double)n_files,
                   0.99 * (double)(i + 1) / (double)n_files, (double)EXEC_PHASE_DONE);
        struct fetch_mount m;
        int rc = fetch_mount(&t.fc, c->session_dir, files[i].url, files[i].path, &m, t.err, sizeof t.err);
        if (rc < 0) {
            char tool[64];
            snprintf(tool, sizeof tool, "run_code: files[%zu]", i);
            return xfer_error(c, tool, rc, t.err, "; nothing was run", result);
        }
        char hs[32];
        util_human_size(m.bytes, hs, sizeof hs);
        cleanup_free char *as = util_utf8_sanitize(m.mounted_as, strlen(m.mounted_as), NULL);
        char line[800];
        snprintf(line, sizeof line, "%s %s as %s (%s, sha256 %.12s...)", m.reused ? "kept" : "mounted", t.shown,
                 as ? as : "?", hs, m.sha256);
        tools__log(c, TOOLS_LOG_INFO, "runmyscript", line, strlen(line));
        fetch_mount_free(&m);
    }
    return 0;
}

int tools__persist_artifact(const struct tools_ctx *c, json_object *args, json_object **result)
{
    static const char *const known[] = {"relative_path", "presigned_url", NULL};
    if ((*result = tools__check_known(args, known, "persist_artifact")))
        return 0;
    json_object *rp = tools__get_arg(args, "relative_path"), *url = tools__get_arg(args, "presigned_url");
    if (!rp || !json_object_is_type(rp, json_type_string) || !url || !json_object_is_type(url, json_type_string)) {
        *result = tools__arg_error("persist_artifact: relative_path (a file relative to output/, e.g. 'plots/plot.png') "
                            "and presigned_url (an http or https URL that accepts a PUT) are required, both "
                            "strings");
        return 0;
    }
    const char *rel = json_object_get_string(rp);
    if (!ws_rel_path_ok(rel)) {
        cleanup_free char *clean = util_utf8_sanitize(rel, strlen(rel), NULL);
        *result = tools__arg_error("persist_artifact: '%.200s' is not a safe path relative to output/ (no '..', '.', "
                            "empty parts or leading '/'); nothing was sent",
                            clean ? clean : "?");
        return 0;
    }
    struct xfer_call t;
    xfer_start(c, &t, "uploading to", json_object_get_string(url), 0, 0, 0);
    struct fetch_upload_result u;
    int rc = fetch_persist(&t.fc, c->session_dir, rel, json_object_get_string(url), &u, t.err, sizeof t.err);
    if (rc < 0) {
        size_t n = strlen(t.err);
        if (rc == -ENOENT && !strncmp(rel, "output/", 7))
            snprintf(t.err + n, sizeof t.err - n,
                     " (relative_path is relative to output/ already: leave 'output/' out)");
        return xfer_error(c, "persist_artifact", rc, t.err, "", result);
    }
    json_object *sc = result_upload_json(&u);
    if (!sc)
        return -ENOMEM;
    char hs[32], text[800];
    util_human_size(u.uploaded_bytes, hs, sizeof hs);
    cleanup_free char *clean = util_utf8_sanitize(rel, strlen(rel), NULL);
    snprintf(text, sizeof text, "uploaded output/%.200s (%s) to %s: HTTP %ld", clean ? clean : "?", hs, t.shown,
             u.status);
    *result = tools__simple_result(text, false, sc);
    log_msg(LOG_LVL_INFO, "persist_artifact: %llu bytes, HTTP %ld", (unsigned long long)u.uploaded_bytes, u.status);
    return 0;
}

