/* executor/workspace.h: the workspace and its files: run and session ids, the
 * state directory, safe paths in it, a file's type, the disk. Part of the
 * executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_WORKSPACE_H
#define RMS_EXECUTOR_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util.h"

struct exec_config;

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

/* Whether this process can use STATE as ws_init_state and a run would:
 * STATE and each of its sub-directories that exists writable and
 * searchable by our effective uid, on a file system mounted read-write,
 * or, where STATE does not exist yet, its nearest ancestor such that it
 * can be made. Makes and changes nothing (a health check may call it
 * often). 0, or -errno with the reason (naming the directory and the uid)
 * in err. */
int ws_state_check(const char *state_dir, char *err, size_t errlen) must_check;

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
 * run. Returns the number removed or -errno (workspace_runs.c). */
int ws_reap_runs(const char *state_dir, int64_t ttl_ms);
/* Removes the run directory of run_id and takes it out of the run records'
 * ledger (a session's runs when the session goes). 0, -ENOENT, -EINVAL
 * for an id that is not one, or -errno. */
int ws_run_remove(const char *state_dir, const char *run_id) must_check;
/* What the run records hold in all, as the ledger says (runs_bytes,
 * runs_files): 0 with the bytes and inodes, or -errno. */
int ws_runs_usage(const char *state_dir, uint64_t *bytes, uint64_t *files) must_check;

/* What STATE/sub (one name: "store", "envs") holds on the disk, walked now:
 * its blocks in bytes and its inodes (a file linked from two trees counts
 * in both). 0 (zeros when it does not exist), -EINVAL for a sub that is
 * not one plain name, or -errno. */
int ws_tree_usage(const char *state_dir, const char *sub, uint64_t *bytes, uint64_t *files) must_check;

/* The file system of the state directory against disk_reserve. */
struct exec_config;
struct ws_disk {
    uint64_t total_bytes, free_bytes, reserve_bytes;
    uint64_t total_inodes, free_inodes, reserve_inodes;
    bool low; /* free space or free inodes below the reserve */
};
/* Fills d; -ENOSPC with a sentence for the client in err (no path in it)
 * when the space or the inodes left are below disk_reserve: new runs are
 * refused (exec_run does it before anything is made). 0 otherwise, also
 * when the file system cannot be asked. */
int ws_disk_check(const struct exec_config *cfg, struct ws_disk *d, char *err, size_t errlen);

/* The MIME type of a file from its first bytes (head, n of them; pass at
 * least 4 KiB where the file has them) and then its name. Static string. */
const char *ws_mime(const unsigned char *head, size_t n, const char *name);

#endif
