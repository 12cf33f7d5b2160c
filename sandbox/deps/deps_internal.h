/* deps_internal.h: what the parts of the deps module share: the
 * interpreter's facts (deps_python.c), the installer's run (deps_install.c),
 * the file-tree helpers (deps_fs.c), the environment's manifest
 * (deps_manifest.c), RECORD's text (deps_record.c), the package store
 * (deps_store*.c, deps_scripts.c), eviction (deps_evict.c) and the
 * assembly from the store (deps_assemble.c). The requirement parser
 * beneath them has headers of its own (deps_req.h, deps_version.h). */
#ifndef RMS_DEPS_INTERNAL_H
#define RMS_DEPS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#include "deps.h"

/* The environment of the helpers deps runs (venv, the interpreter's
 * questions, the installer): a fixed PATH and locale, nothing inherited. */
extern const char *const deps__helper_envp[];

/* The last non-empty line of a helper's output (cut in place), for a
 * one-line reason; "" for NULL. */
const char *deps__last_line(char *out);

/* A key for the interpreter: its real path and the identity of the file,
 * so that an upgraded python gets a new environment. Cheap: no exec. 0, or
 * -errno with the reason in err. */
int deps__interpreter_key(const char *python, char out[17], char *err, size_t errlen) must_check;

/* Asks the interpreter what it is and caches the answer at cache (a path
 * under STATE/cache). 0, or -errno with the reason in err. */
int deps__ask_python(const char *state_dir, const char *python, const char *cache, struct deps_python *info,
                     char *err, size_t errlen) must_check;

/* uv on PATH (the server's own PATH), or NULL (caller frees). */
char *deps__find_uv(void);

/* Runs the installer (uv when uv is not NULL, else pip's runner) for set
 * into the environment being built at tmp, in the jail io describes,
 * bounded by install_ms. DEPS_ENV_READY; DEPS_ENV_INSTALL_FAILED or
 * DEPS_ENV_INSTALL_TIMEOUT with *failed the requirement that failed (or
 * NULL; caller frees); -errno when the service failed. The reason in err
 * in every case but success. */
/* Whether a package source is off this machine: an index (the default
 * one, a URL), an extra index, or find_links that is no directory. */
bool deps__sources_remote(const struct exec_deps_config *cfg);
int deps__install(const struct exec_deps_config *cfg, const char *state_dir, const char *uv, const char *pip_runner,
                  const struct deps_set *set, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                  char **failed, char *err, size_t errlen) must_check;

/* The same with pip's download instead of its install (pip only): every
 * wheel set needs, resolved by pip, saved into dl (under tmp, which is
 * the environment being built: it is what the jail lets pip write). The
 * same outcomes as deps__install. */
int deps__download(const struct exec_deps_config *cfg, const char *state_dir, const char *pip_runner,
                   const struct deps_set *set, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                   const char *dl, char **failed, char *err, size_t errlen) must_check;

/* pip's wheel: the source distribution at sdist (under tmp) built into a
 * wheel in dir (under tmp too), in the jail with the network (its build
 * requirements come from the index). The same outcomes as deps__install. */
int deps__build_wheel(const struct exec_deps_config *cfg, const char *state_dir, const char *pip_runner,
                      const char *sdist, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                      const char *dir, char **failed, char *err, size_t errlen) must_check;

/* ----------------------------------------- file-tree helpers (deps_fs.c) */

/* Kills the process at the named step when RMS_FAULT_KILL_AT names
 * it: the crash-safety tests' way in ("download", "unpack", "compile",
 * "link", "publish"). */
void deps__fault(const char *step);

/* Takes the exclusive flock of the lock file at path (made if missing),
 * waiting for it; *waited (may be NULL) says whether it had to. A lock
 * file unlinked while we waited is not the lock: then again. 0 or -errno. */
int deps__lock_file(const char *path, bool *waited, int *out) must_check;

/* rm -rf of parent/name, read-only as environments and store entries are. */
int deps__remove_tree(int parent, const char *name);
/* Evicts parent/name, an environment or a store entry, unless someone
 * holds its flock (a run, a build linking it) or, asked once its lock is
 * ours, in_use (may be NULL) says it is still needed: renamed to a trash name so
 * that no one finds it half removed, removed, and its lock file
 * parent/.name.lock unlinked under that lock (whoever opened it before
 * sees the change and opens the new one: deps__lock_file). 0 once it is
 * renamed (what the removal leaves has a trash name, which the next sweep
 * takes), -EBUSY when it is held, or -errno. */
int deps__evict_dir(int parent, const char *name, bool (*in_use)(void *ctx), void *ctx);

/* The tree src (under srcfd; "" for srcfd itself) put into the directory
 * dstfd: copied (link false; dstfd empty) or hard linked where it can be
 * (existing directories shared, existing files replaced; *copied, may be
 * NULL, counts the files copied instead). 0 or -errno. */
int deps__tree_put(int srcfd, const char *src, int dstfd, bool link, size_t *copied) must_check;

/* A util_walk pre callback: read-only for everyone (directories and
 * executables 0555, files 0444), symlinks left alone. */
int deps__readonly_walk(int dirfd, const char *name, const struct stat *st, int depth, void *ctx);

/* ------------------------------ the environment's manifest (deps_manifest.c) */

/* The environment's manifest, in its top directory: what it holds and
 * links. */
#define DEPS_MANIFEST "runmyscript-env.txt"
#define DEPS_MANIFEST_MAX (1u << 20)

/* Writes the manifest into the environment open at dirfd (read-only):
 * its size (bytes); "wheel pyX.Y/HASH", the store entries it links
 * (wheels), which eviction keeps while it is there, with the count of
 * files copied rather than linked and "store STATE/store", where its
 * symlinks lead (deps_env_links); what set asks for; what it holds
 * (installed). 0 or -errno. */
int deps__manifest_write(int dirfd, const struct deps_set *set, const struct strv *installed, uint64_t bytes,
                         const struct strv *wheels, size_t copied, const char *state_dir) must_check;

/* The manifest of the environment open at dirfd: what it holds (pushed
 * onto installed), its size (*bytes), the entries it links (onto wheels),
 * each that is not NULL. -EINVAL when it is not one of ours, or -errno. */
int deps__manifest_read(int dirfd, struct strv *installed, uint64_t *bytes, struct strv *wheels) must_check;

/* The manifest of the environment open at env: the entries it links
 * (pushed onto wheels as "pyX.Y/HASH", a line that names no entry passed
 * over) and, when its symlinks lead into the store, the store's path into
 * *store (caller frees; NULL for an environment of hard links only, made
 * before the symlinks). 0 or -errno. */
int deps__manifest_links(int env, char **store, struct strv *wheels) must_check;

/* 0 when every store entry the environment open at env links through
 * symlinks is whole; -ENOENT when one is gone (the environment is made
 * again), or -errno. An environment of hard links only: 0. */
int deps__env_whole(int env) must_check;

/* --------------------------------------------------- RECORD (deps_record.c) */

/* One CSV field of RECORD at *p (quoted or not), cut in place; *p moves
 * past it. */
char *deps__record_field(char **p);
/* prefix and path appended to b as a path of RECORD, quoted when it
 * needs it. 0 or -errno. */
int deps__record_path(struct dbuf *b, const char *prefix, const char *path) must_check;
/* The n bytes at in as urlsafe base64, unpadded, NUL-terminated: how
 * RECORD spells a digest (44 bytes of out for a SHA-256). */
void deps__record_b64(const unsigned char *in, size_t n, char *out);
/* RECORD's hash of data: the urlsafe base64 of its SHA-256, unpadded. */
void deps__record_hash(const void *data, size_t n, char out[64]);

/* ------------------------------------------------- the package store */

/* In a store entry's top directory, written last: the mark of a whole
 * entry (its name, version, dist-info and bytes). */
#define DEPS_STORE_MARK "runmyscript-wheel.txt"

/* What the store needs to know: where it is, the interpreter (its X.Y
 * names the store's directory; it compiles the bytecode), the jail for
 * the compile (io, may be NULL: no jail), the largest a wheel may unpack
 * to (store_bytes; 0: no bound) and how long a compile may take. */
struct deps__store {
    const char *state_dir;
    const char *pyver;             /* "3.11" */
    const char *python;
    const struct deps_install_io *io;
    uint64_t max_bytes;
    int64_t timeout_ms;
};

/* STATE/store/pyX.Y (caller frees). 0 or -ENOMEM. */
int deps__store_dir(const char *state_dir, const char *pyver, char **out) must_check;

/* An entry unpacked and laid out but not compiled nor published yet,
 * under its lock: deps__store_finish ends it, deps__pending_drop undoes
 * it. */
struct deps__pending {
    int store, lock;         /* the store's directory; the entry's lock, held */
    char hash[65];
    char tmpname[112];       /* .tmp-HASH-RAND in the store, "" once published */
    char *tmp;               /* its full path */
    char *mark;              /* the mark's text but its size */
};
void deps__pending_drop(struct deps__pending *p);

/* The SHA-256 of the file at path, in hex. 0 or -errno. */
int deps__store_hash(const char *path, char hash[65]) must_check;

/* The SHA-256 of the file open at fd (read with pread: its offset
 * stays), in hex. 0 or -errno. */
int deps__store_hash_fd(int fd, char hash[65]) must_check;

/* The first half of putting a wheel into the store: 0 when the entry of
 * hash (the wheel's SHA-256) is whole already; 1 when *pending now holds
 * its lock, one unpacker per hash at a time, and the caller goes on with
 * deps__store_unpack, then deps__store_finish (one compile for many
 * entries), or deps__pending_drop. Callers that claim several take them
 * in the order of their hashes, so that two of them never wait for each
 * other's locks. -errno when the service failed, the reason in err;
 * name is the wheel's path or file name, for the log. */
int deps__store_claim(const struct deps__store *s, const char *name, const char *hash, struct deps__pending *pending,
                      char *err, size_t errlen) must_check;

/* Unpacks the wheel open at wheel (borrowed; the one whose hash claimed
 * p) into p's fresh .tmp- directory, checked against the wheel's RECORD
 * and laid out. Touches nothing shared but the file system: claims may
 * be unpacked in threads at once. 0; -EBADMSG, -EINVAL, -E2BIG or -EFBIG
 * for a wheel that is refused (a damaged zip, an unsafe member, past the
 * bounds); other -errno when the service failed. The reason in err; p is
 * the caller's to drop either way on failure. */
int deps__store_unpack(const struct deps__store *s, int wheel, const char *name, struct deps__pending *p, char *err,
                       size_t errlen) must_check;

/* Ends n pending entries: their bytecode compiled in one run of the
 * interpreter, each sealed (its mark, read-only), synced, published by
 * rename, its lock released; on failure none is published. Every one is
 * dropped either way. 0 or -errno with the reason in err. */
int deps__store_finish(const struct deps__store *s, struct deps__pending *p, size_t n, char *err,
                       size_t errlen) must_check;

/* Holds the entry hash for a build that will link it: its directory
 * open under a shared flock (eviction passes it over; the caller closes
 * it once the environment is published) into *held, once it is known to
 * be whole; its LRU clock set. -ENOENT when it went (evicted), or -errno;
 * the reason in err. */
int deps__store_hold(const struct deps__store *s, const char *hash, int *held, char *err,
                     size_t errlen) must_check;

/* Links the entry hash (held at entry by deps__store_hold) into the
 * environment open at env: site/ into site_rel, scripts into bin/, data
 * into the top, headers into include/site/pythonX.Y/NAME. Its directories
 * become symlinks to their host paths in the store (STATE/store/pyX.Y/
 * HASH/...: a run's jail binds the entry there), its files hard links; a
 * directory two wheels share is real, its children linked one by one (a
 * file both have is the later one's). *copied counts files copied because
 * a hard link could not be made; "Name-Version" of the wheel is appended
 * to installed. 0 or -errno with the reason in err. */
int deps__store_link(const struct deps__store *s, const char *hash, int entry, int env, const char *site_rel,
                     size_t *copied, struct strv *installed, char *err, size_t errlen) must_check;

/* STATE/store/pyX.Y, made if missing, opened into *out. 0 or -errno. */
int deps__store_open(const char *state_dir, const char *pyver, int *out) must_check;
/* Whether store/hash is a whole entry (its mark is there). */
bool deps__store_whole(int store, const char *hash);
/* Opens the directory of dirfd/rel, making each missing component (0755,
 * nothing followed); *leaf points at rel's last component. rel is cut
 * and restored on the way. 0 or -errno. */
int deps__open_parent(int dirfd, char *rel, const char **leaf, int *out) must_check;
/* Writes dir/name (mode: its mode) as the script text (len bytes) with
 * its first line made "#!/usr/bin/env python3", the line every
 * environment's scripts start with (a run's PATH starts with ENV/bin):
 * the installer's console scripts name the interpreter of the directory
 * they were built in, a wheel's name none ("#!python"). 0 or -errno. */
int deps__set_shebang(int dir, const char *name, const char *text, size_t len, mode_t mode) must_check;
/* The wheel's script bin/name: "#!python" (the wheel format's "this
 * environment's interpreter") made "#!/usr/bin/env python3". 0 or -errno. */
int deps__fix_script(int bin, const char *name) must_check;
/* The console scripts of entry_points.txt's [console_scripts] and
 * [gui_scripts] written into dir/bin, and their RECORD lines appended to
 * record. 0 or -errno. */
struct dbuf;
int deps__console_scripts(int dir, const char *text, struct dbuf *record) must_check;

/* ---------------------------------------------------- eviction (deps_evict.c) */

/* A whole entry of the store, as eviction lists them. */
struct deps__store_entry {
    char py[16];                /* pyX.Y */
    char hash[65];
    struct timespec used;       /* last linked */
    uint64_t bytes;
};

/* Removes an entry unless a build holds it or a published environment
 * links it (-EBUSY). 0 or -errno. */
int deps__store_remove(const char *state_dir, const struct deps__store_entry *e) must_check;

/* The environment for set built from the store into tmp (a copy of the
 * base environment): the resolution (cached under STATE/store/res/KEY, or
 * pip's download into tmp, source distributions built into wheels), the
 * new wheels put into the store, each linked. The hashes linked go into
 * wheels ("pyX.Y/HASH"), the entries held into held (closed by the caller
 * after publication), the count of copied files into *copied. The
 * outcomes of deps__install. DEPS__STORE_NO is what the caller starts
 * from: the store is not used for this build (uv, package_store = off),
 * it installs as before. */
#define DEPS__STORE_NO 3
struct deps__held {
    int fd[EXEC_MAX_REQUIREMENTS * 8];
    size_t n;
};
void deps__held_release(struct deps__held *h);
int deps__store_build(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                      const char *pip_runner, const struct deps_set *set, const char *key, int64_t install_ms,
                      const struct deps_install_io *io, const char *tmp, struct strv *wheels,
                      struct deps__held *held, size_t *copied, char **failed, char *err, size_t errlen) must_check;

/* ------------------------------------------------------ deps_cache.c */

/* The caches of the environment being built at tmp (its manifest
 * written): its libraries imported once in the jail, with HOME at
 * tmp/.rms-cache/home. Namespaces only (elsewhere nothing is made); a
 * failure of the importer leaves what it made and is no failure of the
 * build. 0 or -errno (the reason in err). */
int deps__env_caches(const char *tmp, int64_t timeout_ms, const struct deps_install_io *io, char *err,
                     size_t errlen) must_check;

#endif
