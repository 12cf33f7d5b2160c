/* workspace.h: the state directory on disk (workspace.c), the part only
 * the executor uses: a new run directory, directories opened beneath a
 * descriptor following no symlink, and a session workspace's mounts/.
 * What a front door calls (ids, the state directory, path safety for names
 * a client gives, the reaping of old runs) is the workspace section of
 * executor.h. Layout (doc/architecture.md, "State on disk"):
 * STATE/runs/RUNID/, STATE/sessions/SID/, STATE/envs/, STATE/cache/; in a
 * session's workspace, mounts/ holds the mounted files. */
#ifndef RMS_WORKSPACE_H
#define RMS_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor.h"

/* ----------------------------------------------------- run directories */

/* Creates a new run directory STATE/runs/RUNID (mode 0700) with a fresh id
 * (ws_new_id with node, which may be NULL). On success *run_dir is a new
 * string (caller frees) and id is filled. */
int ws_run_create(const char *state_dir, const char *node, char id[WS_ID_MAX + 1], char **run_dir) must_check;

/* --------------------------------------------- run records, in all */

/* Adds what run_dir (STATE/runs/RUNID, its result published) holds to the
 * run records' ledger (workspace_runs.c). 0 or -errno. */
int ws_runs_account(const char *run_dir);
/* When the run records pass runs_bytes or runs_files, removes the oldest
 * finished ones (never one in flight, never one younger than 10 s) down
 * to nine tenths of the caps; one process at a time. The number removed,
 * or -errno. */
int ws_bound_runs(const struct exec_config *cfg);

/* ------------------------------------ directories beneath a descriptor */

/* Opens dirfd/name (borrowed dirfd), a directory, making it first (0755)
 * when make and it is missing, following no symlink: an fd (caller
 * closes), -ELOOP when name is a symlink or not a directory, -EINVAL when
 * name is not one entry ("", ".", "..", or with a '/'), the -errno of
 * mkdirat or openat otherwise. */
int ws_open_dir(int dirfd, const char *name, bool make) must_check;

/* Where ws_open_parent stopped: the component of rel (name, len bytes, not
 * NUL-terminated; NULL when dirfd could not be duplicated) and whether
 * making it (else opening it) failed. */
struct ws_walk_stop {
    const char *name;
    size_t len;
    bool making;
};

/* Opens each directory of rel but its last component beneath dirfd
 * (borrowed), in turn, making each missing one first (0755) when make, and
 * following no symlink at any level: an fd of the last one (caller closes;
 * a duplicate of dirfd when rel has no '/'), with *leaf pointing at rel's
 * last component (not looked at: the caller's to open, with O_NOFOLLOW).
 * -EINVAL for an empty, "." or ".." component on the way, or the
 * -errno of the step that failed, as mkdirat or openat gave it (a symlink
 * or a file in the way: -ELOOP or -ENOTDIR), with *stop saying where when
 * stop is not NULL. Each directory is closed once the next is open; rel
 * may be any length. */
int ws_open_parent(int dirfd, const char *rel, bool make, const char **leaf, struct ws_walk_stop *stop) must_check;

/* --------------------------------------- a session workspace's mounts/ */

/* The directory of a session workspace that receives mount_file's files:
 * bound read-only over /work/mounts in the namespaces, kept the server's
 * own (its uid, its write bits removed from the files) in the fallback. */
#define WS_MOUNTS_DIR "mounts"

/* Opens the mounts/ of the workspace at workspace_fd (borrowed), making it
 * first (0755) when make and it is missing, following no symlink
 * (ws_open_dir): an fd (caller closes), -ELOOP when mounts/ is a symlink or
 * not a directory, -ENOENT when it is missing, other -errno. */
int ws_mounts_open(int workspace_fd, bool make) must_check;

/* Whether the workspace at workdir has a mounts/ directory (not a
 * symlink), made first when make (a failure to make it is logged, and the
 * answer is then what is there). A session's workspace always gets one
 * before its script runs, so that a script can never own a writable
 * mounts/ into which a later mount_file would write. */
bool ws_mounts_dir(const char *workdir, bool make);

#endif
