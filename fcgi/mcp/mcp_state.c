/* mcp_state.c: what sessions, workspaces (mcp_session.c) and tasks
 * (mcp_task.c) share on disk: a directory STATE/KIND/ID whose JSON file
 * (session.json, task.json) says what it is, loaded one way for all. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int mcp__state_load(const struct cfg *cfg, const char *kind, const char *id, const char *file, size_t max,
                    char *idbuf, char **dir, json_object **doc, int *dfd_out)
{
    if (!id || !ws_id_valid(id))
        return -ENOENT;
    snprintf(idbuf, WS_ID_MAX + 1, "%s", id);
    if (asprintf(dir, "%s/%s/%s", cfg->state_dir, kind, id) < 0) {
        *dir = NULL;
        return -ENOMEM;
    }
    cleanup_fd int dfd = open(*dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? -ENOENT : -errno;
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(dfd, file, max, &text, &len);
    if (rc < 0)
        return rc;
    *doc = json_tokener_parse(text);
    if (!json_object_is_type(*doc, json_type_object))
        return -EIO;
    if (dfd_out)
        *dfd_out = steal_fd(&dfd);
    return 0;
}
