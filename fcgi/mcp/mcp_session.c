/* mcp_session.c: MCP sessions on disk (mcp.h has the layout of
 * STATE/sessions/SID/) and the 2026-07-28 revision's workspaces: made by
 * initialize (or a call that needs a workspace), loaded by every later
 * request, ended by DELETE (or delete_workspace), removed with their runs
 * (mcp_reap.c reaps them). Any worker serves any session: each file is
 * written whole (rename) or is a marker whose existence is the news. */
#include "config.h"

#include "mcp_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


void mcp__session_free(struct mcp_session *s)
{
    free(s->dir);
    json_object_put(s->doc);
    memset(s, 0, sizeof *s);
}

int mcp__session_write(const struct mcp_session *s)
{
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    size_t n;
    const char *text = mcp__to_json(s->doc, &n);
    return util_write_file_atomic(dfd, "session.json", text, n, 0600);
}

/* Loads a live session of kind ("sessions", "workspaces"): 0, -ENOENT
 * (unknown or ended), other -errno. Marks it used (the idle clock restarts). */
static int load_kind(const struct cfg *cfg, const char *kind, const char *sid, struct mcp_session *s)
{
    memset(s, 0, sizeof *s);
    cleanup_fd int dfd = -1;
    int rc = mcp__state_load(cfg, kind, sid, "session.json", MCP_SESSION_FILE_MAX, s->id, &s->dir, &s->doc, &dfd);
    if (rc < 0)
        return rc;
    json_object *v;
    if (!json_object_object_get_ex(s->doc, "version", &v) ||
        !(mcp_version_supported(json_object_get_string(v)) || !strcmp(json_object_get_string(v), MCP_REVISION_2026)))
        return -EIO;
    snprintf(s->version, sizeof s->version, "%s", json_object_get_string(v));
    s->level = TOOLS_LOG_DEBUG;
    if (json_object_object_get_ex(s->doc, "log_level", &v))
        discard(mcp__level_parse(json_object_get_string(v), &s->level)); /* a bad one stays debug */
    /* The idle clock: the mtime of session.json. */
    cleanup_fd int fd = openat(dfd, "session.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0)
        futimens(fd, NULL);
    return 0;
}

int mcp__session_load(const struct cfg *cfg, const char *sid, struct mcp_session *s)
{
    return load_kind(cfg, "sessions", sid, s);
}

int mcp__workspace_load(const struct cfg *cfg, const char *wid, struct mcp_session *s)
{
    return load_kind(cfg, "workspaces", wid, s);
}

/* The cap of a kind: its entries are the ids (a half-made one included:
 * its directory is made under the cap's lock, util_cap_take). */
static uint64_t weigh_id(int dirfd, const char *name, void *ctx)
{
    (void)dirfd, (void)ctx;
    return ws_id_valid(name) ? 1 : 0;
}

struct new_id {
    const char *node_id;
    char *id; /* WS_ID_MAX + 1 bytes */
};

/* Makes the directory of a fresh id, still under the cap's lock. 0711: the
 * fallback runs a script as a uid of its own, which must pass through to
 * workspace/; the id is the capability, and the files that say something
 * (session.json, calls/, ...) are 0600/0700. */
static int make_id(int dirfd, void *ctx)
{
    struct new_id *n = ctx;
    for (int tries = 0; tries < 4; tries++) {
        int rc = ws_new_id(n->node_id, n->id);
        if (rc < 0)
            return rc;
        if (mkdirat(dirfd, n->id, 0711) == 0)
            return fchmodat(dirfd, n->id, 0711, 0) < 0 ? -errno : 0; /* not the umask's */
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* mcp__session_create's work; *made once the directory is ours. */
static int session_make(const struct cfg *cfg, const char *kind, const char *version, json_object *client,
                        struct mcp_session *s, bool *made)
{
    memset(s, 0, sizeof *s);
    int rc = ws_init_state(cfg->state_dir);
    if (rc < 0)
        return rc;
    cleanup_free char *top = NULL;
    if (asprintf(&top, "%s/%s", cfg->state_dir, kind) < 0) {
        top = NULL;
        return -ENOMEM;
    }
    if (strcmp(kind, "sessions") && mkdir(top, 0711) < 0 && errno != EEXIST) /* ws_init_state makes sessions/ only */
        return -errno;
    cleanup_fd int tfd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (tfd < 0)
        return -errno;
    /* max_sessions of each kind, counted and made in one step. */
    struct new_id nid = {.node_id = cfg->exec.node_id, .id = s->id};
    struct util_cap cap = {.max = cfg->max_sessions, .need = 1, .weigh = weigh_id, .make = make_id, .ctx = &nid};
    rc = util_cap_take(tfd, &cap);
    if (rc < 0)
        return rc;
    *made = true;
    if (asprintf(&s->dir, "%s/%s", top, s->id) < 0) {
        s->dir = NULL;
        return -ENOMEM;
    }
    cleanup_fd int dfd = open(s->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    static const char *const subs[] = {"workspace", "calls", "cancel", "runs"};
    for (size_t i = 0; i < ARRAY_SIZE(subs); i++)
        if (mkdirat(dfd, subs[i], i == 0 ? 0755 : 0700) < 0)
            return -errno;
    snprintf(s->version, sizeof s->version, "%s", version);
    s->level = TOOLS_LOG_DEBUG;
    s->doc = json_object_new_object();
    json_object_object_add(s->doc, "version", json_object_new_string(version));
    json_object_object_add(s->doc, "log_level", json_object_new_string("debug"));
    json_object_object_add(s->doc, "created_ms", json_object_new_int64(util_wall_ms()));
    /* The client's name and version, each cut to MCP_CLIENT_FIELD_MAX bytes:
     * what the client sends must not grow session.json past what
     * session_load reads (MCP_SESSION_FILE_MAX). */
    json_object *v = NULL, *c = client ? json_object_new_object() : NULL;
    static const char *const fields[] = {"name", "version"};
    for (size_t i = 0; c && i < ARRAY_SIZE(fields); i++) {
        if (!json_object_object_get_ex(client, fields[i], &v) || !json_object_is_type(v, json_type_string))
            continue;
        size_t n = (size_t)json_object_get_string_len(v);
        cleanup_free char *clean = util_utf8_sanitize(json_object_get_string(v),
                                                      n > MCP_CLIENT_FIELD_MAX ? MCP_CLIENT_FIELD_MAX : n, &n);
        if (clean)
            json_object_object_add(c, fields[i], json_object_new_string_len(clean, (int)n));
    }
    if (c)
        json_object_object_add(s->doc, "client", c);
    /* session.json last: a directory without it is not a session yet. */
    return mcp__session_write(s);
}

static int create_kind(const struct cfg *cfg, const char *kind, const char *version, json_object *client,
                       struct mcp_session *s)
{
    bool made = false;
    int rc = session_make(cfg, kind, version, client, s, &made);
    if (rc < 0 && made) { /* nothing half-made stays */
        cleanup_free char *sdir = NULL;
        if (asprintf(&sdir, "%s/%s", cfg->state_dir, kind) < 0)
            sdir = NULL;
        cleanup_fd int sfd = sdir ? open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (sfd >= 0)
            discard(util_rm_rf_at(sfd, s->id));
    }
    return rc;
}

int mcp__session_create(const struct cfg *cfg, const char *version, json_object *client, struct mcp_session *s)
{
    return create_kind(cfg, "sessions", version, client, s);
}

int mcp__workspace_create(const struct cfg *cfg, struct mcp_session *s)
{
    return create_kind(cfg, "workspaces", MCP_REVISION_2026, NULL, s);
}

int mcp__call_run_name(int calls_fd, const char *key, char *name, size_t len)
{
    cleanup_dir DIR *d = util_opendir_at(calls_fd);
    if (!d)
        return -errno;
    size_t k = strlen(key);
    struct dirent *de;
    while ((de = readdir(d)))
        if (de->d_name[0] == '.' && !strncmp(de->d_name + 1, key, k) && de->d_name[1 + k] == '.' &&
            ws_id_valid(de->d_name + 2 + k))
            return (size_t)snprintf(name, len, "%s", de->d_name) < len ? 0 : -ENAMETOOLONG;
    return -ENOENT;
}

/* Creates STATE/runs/RUNID/cancel for the run that the call KEY started
 * (calls/.KEY.RUNID names it), if it has one yet. */
void mcp__cancel_run_of(const struct app *app, int calls_fd, const char *key)
{
    char name[MCP_CALL_RUN_NAME_MAX];
    if (mcp__call_run_name(calls_fd, key, name, sizeof name) < 0)
        return;
    /* (the name's id is valid; one that has finished, or is gone, needs nothing) */
    discard(app_cancel_run(app, name + 2 + strlen(key)));
}

int mcp__session_remove(const struct cfg *cfg, int sessions_fd, const char *name, bool with_runs)
{
    if (with_runs) {
        cleanup_fd int rfd = openat(sessions_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_fd int lfd = rfd >= 0 ? openat(rfd, "runs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        cleanup_dir DIR *d = lfd >= 0 ? util_opendir_at(lfd) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (ws_id_valid(de->d_name))
                discard(ws_run_remove(cfg->state_dir, de->d_name)); /* the reaper of runs retries */
    }
    return util_rm_rf_at(sessions_fd, name);
}

/* Ends a session now: cancels its calls in flight, takes its session.json
 * away (a request racing with this sees 404 at once), ends its kernel,
 * renames it out of the way and removes it. */
int mcp__session_end(const struct app *app, struct mcp_session *s)
{
    const struct cfg *cfg = app->cfg;
    /* The directory that holds it: sessions/ or workspaces/. */
    cleanup_free char *sdir = s->dir ? strdup(s->dir) : NULL;
    char *slash = sdir ? strrchr(sdir, '/') : NULL;
    if (!slash)
        return -ENOMEM;
    *slash = '\0';
    cleanup_fd int sfd = open(sdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (sfd < 0)
        return -errno;
    cleanup_fd int calls = openat(sfd, s->id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (calls >= 0) {
        cleanup_fd int cfd = openat(calls, "calls", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        cleanup_dir DIR *d = cfd >= 0 ? util_opendir_at(cfd) : NULL;
        struct dirent *de;
        while (d && (de = readdir(d)))
            if (de->d_name[0] != '.')
                mcp__cancel_run_of(app, cfd, de->d_name);
    }
    /* No request finds it from here on (a session is its session.json),
     * while its workspace keeps the path its kernel was started for: the
     * kernel ends by that path, before the files go. */
    if (calls < 0 || renameat(calls, "session.json", calls, "session.ended") < 0)
        return errno == ENOENT ? -ENOENT : -errno;
    cleanup_free char *ws = NULL;
    if (asprintf(&ws, "%s/workspace", s->dir) < 0)
        return -ENOMEM;
    int rc = app_exec_of(app)->kernel_end(&cfg->exec, ws);
    if (rc < 0)
        log_msg(LOG_LVL_ERROR, "the kernel of %s: %s", s->id, strerror(-rc));
    char dead[WS_ID_MAX + 16];
    unsigned char rnd[4];
    char hex[9];
    if (util_random(rnd, sizeof rnd) < 0)
        memset(rnd, 0, sizeof rnd);
    util_hex(rnd, sizeof rnd, hex);
    snprintf(dead, sizeof dead, ".ended-%s", hex);
    if (renameat(sfd, s->id, sfd, dead) < 0)
        return -errno;
    return mcp__session_remove(cfg, sfd, dead, false);
}
