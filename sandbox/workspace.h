/* workspace.h: the state directory on disk: run directories with random
 * ids, path safety for names a client gives, and reaping of old runs.
 * Layout (DESIGN.md): STATE/runs/RUNID/, STATE/sessions/SID/, STATE/envs/,
 * STATE/cache/. */
#ifndef RMS_WORKSPACE_H
#define RMS_WORKSPACE_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define WS_ID_LEN 32  /* hex digits of a 128-bit id */
#define WS_NODE_MAX 16 /* bytes of a node id (config node_id) */
#define WS_ID_MAX (WS_NODE_MAX + 1 + WS_ID_LEN) /* NODE-HEX, the longest id */

/* Run and session ids are 128 random bits as WS_ID_LEN lower-case hex
 * digits, prefixed with "NODE-" when the configuration names the node
 * (node_id), so that a front nginx can tell from the id alone which
 * backend holds the files (nginx/cluster.conf.in). */

/* True when s is a node id: 1 to WS_NODE_MAX of [a-z0-9]. */
bool ws_node_valid(const char *s);

/* Fills out (WS_ID_MAX + 1 bytes) with a new id: 128 random bits as
 * lower-case hex, after "NODE-" when node is not NULL (node must be
 * ws_node_valid; -EINVAL otherwise). 0 or -errno from getrandom. */
int ws_new_id(const char *node, char out[WS_ID_MAX + 1]) must_check;
/* True when s is exactly an id: WS_ID_LEN lower-case hex digits, or a
 * node id, '-', and those. Nothing else (no '/', no '.', no upper case). */
bool ws_id_valid(const char *s);
/* The length of the id at the start of s, up to the first '/' or '.'
 * (the artifact routes: RUNID/PATH, RUNID.zip), or 0 when that is no id. */
size_t ws_id_prefix(const char *s);

/* Creates STATE and its sub-directories when missing. 0 or -errno. */
int ws_init_state(const char *state_dir) must_check;

/* Creates a new run directory STATE/runs/RUNID (mode 0700) with a fresh id
 * (ws_new_id with node, which may be NULL). On success *run_dir is a new
 * string (caller frees) and id is filled. */
int ws_run_create(const char *state_dir, const char *node, char id[WS_ID_MAX + 1], char **run_dir) must_check;

/* Path of the run directory for an id (caller frees), or NULL (ENOMEM, or
 * EINVAL for an id that is not one of ours). */
char *ws_run_path(const char *state_dir, const char *id);

/* True when rel is a safe relative path for use under a directory a client
 * owns: non-empty, at most 1024 bytes, not absolute, no "." or ".."
 * components, no empty components. (Other bytes are the file system's
 * business; whoever prints a path escapes it.) */
bool ws_rel_path_ok(const char *rel);

/* Opens rel beneath dirfd without following any symlink on the way
 * (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS where the kernel has it, a
 * component walk with O_NOFOLLOW otherwise). flags as for openat; O_CREAT
 * is allowed for the last component only. Returns an fd or -errno (-ELOOP
 * for a symlink, -EXDEV for an escape, -EINVAL for an unsafe path). */
int ws_open_beneath(int dirfd, const char *rel, int flags, mode_t mode) must_check;

/* Removes run directories older than ttl_ms. It does the scan at most once a
 * minute per state directory (a stamp file), so callers may call it on every
 * run. Returns the number removed or -errno. */
int ws_reap_runs(const char *state_dir, int64_t ttl_ms);

#endif
