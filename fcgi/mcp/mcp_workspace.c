/* mcp_workspace.c: the 2026-07-28 revision's workspaces as the doors open
 * them: by handle, or made within max_sessions (the idle ones reaped first
 * when there are too many), for a tools/call (mcp_2026_call.c) and for the
 * web page's notebooks (mcp.h: mcp_workspace_open, mcp_workspace_delete);
 * and the output/ of a session or workspace for /artifacts/PATH.
 * Above both the sessions on disk (mcp_session.c) and the reaper
 * (mcp_reap.c), which it calls. */
#include "config.h"

#include "mcp_internal.h"
#include "metrics.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int mcp__workspace_make(const struct cfg *cfg, struct mcp_session *s)
{
    memset(s, 0, sizeof *s);
    int rc = mcp__workspace_create(cfg, s);
    if (rc == -EDQUOT) { /* idle ones may be past session_ttl: reap, then once more */
        mcp__session_free(s);
        discard(mcp_reap(cfg, true));
        rc = mcp__workspace_create(cfg, s);
    }
    if (rc == -EDQUOT) {
        mcp__session_free(s);
        metrics_refused(cfg, METRICS_REFUSED_CAPS);
        return -EUSERS;
    }
    return rc;
}

int mcp_workspace_open(const struct cfg *cfg, const char *wid, char id[WS_ID_MAX + 1], char **dir)
{
    cleanup_session struct mcp_session ws = {0};
    *dir = NULL;
    id[0] = '\0';
    int rc = wid ? mcp__workspace_load(cfg, wid, &ws) : mcp__workspace_make(cfg, &ws);
    if (rc < 0)
        return rc;
    if (asprintf(dir, "%s/workspace", ws.dir) < 0) {
        *dir = NULL;
        return -ENOMEM;
    }
    snprintf(id, WS_ID_MAX + 1, "%s", ws.id);
    return 0;
}

int mcp_workspace_delete(const struct app *app, const char *wid)
{
    cleanup_session struct mcp_session ws = {0};
    int rc = mcp__workspace_load(app->cfg, wid, &ws);
    return rc < 0 ? rc : mcp__session_end(app, &ws);
}

int mcp_output_open(const struct cfg *cfg, bool workspace, const char *id)
{
    cleanup_session struct mcp_session s = {0};
    cleanup_free char *path = NULL;
    int rc = workspace ? mcp__workspace_load(cfg, id, &s) : mcp__session_load(cfg, id, &s);
    if (rc < 0)
        return rc;
    if (asprintf(&path, "%s/workspace/output", s.dir) < 0)
        return -ENOMEM;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}
