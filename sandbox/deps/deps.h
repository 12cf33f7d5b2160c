/* deps.h: the Python environment a script runs with, and how it is found.
 *
 * Requirements come from three sources, earlier ones winning for the same
 * distribution: the caller's explicit list, the script's PEP 723 block, and
 * the script's imports (a tokenizer, the import-name map, minus the
 * standard library, the workspace's own modules and what the base
 * environment already has). Each distinct set is installed once into an
 * environment under STATE/envs/KEY, built in a temporary directory, renamed
 * into place when complete, read-only from then on, and shared by every
 * later run that needs the same set. A size cap evicts the least recently
 * used environments that no run holds. */
#ifndef RMS_DEPS_H
#define RMS_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deps_req.h"
#include "executor.h"
#include "strv.h"

struct jail_tool; /* jail.h: deps_install_io points at one, and deps.h need not include jail.h */

#define DEPS_MAX_IMPORTS 256     /* distinct top-level imports one script may list */

/* --------------------------------------------------------- configuration */

/* ------------------------------------------------------ the script's text */

/* The top-level module names a Python source imports, in order of first
 * appearance, each once: `import a.b as c, d` gives a and d, `from a.b
 * import c` gives a, relative imports give nothing. A real tokenizer:
 * comments, strings of every kind (prefixed, triple-quoted, f-strings with
 * nested quotes), line continuations and brackets are honoured, and an
 * import counts only at the start of a statement (a line, after ';' or
 * after the ':' of a one-line block). Dynamic imports (__import__,
 * importlib) are not seen. Appends to out; at most DEPS_MAX_IMPORTS names
 * (-E2BIG past that). 0, -E2BIG or -ENOMEM. */
int deps_scan_imports(const char *code, size_t len, struct strv *out) must_check;
/* The same scan, with whole module paths, in order of first appearance,
 * each once: `import a.b as c` gives a.b; `from a.b import c, d` gives a.b,
 * a.b.c and a.b.d (c and d may be modules of a.b or names in it: whoever
 * imports them tells them apart). What a warm pool's zygote imports ahead.
 * The same limits and returns; on -E2BIG out holds the first
 * DEPS_MAX_IMPORTS. */
int deps_scan_import_paths(const char *code, size_t len, struct strv *out) must_check;

/* The optional packages the commonest idioms of the libraries in have
 * import only when called, so that no import line names them: `df.plot()`
 * of pandas needs matplotlib, `pd.read_excel` openpyxl, `df.to_parquet`
 * pyarrow (the table is in deps_scan.c). A call counts as `.NAME` after
 * anything, when its library is in have (the script's imports, or what a
 * kernel already holds). Appends each module once to out, within
 * DEPS_MAX_IMPORTS. 0, -E2BIG or -ENOMEM. */
int deps_scan_idioms(const char *code, size_t len, const struct strv *have, struct strv *out) must_check;

/* When the log of a failed script ends in a library's ImportError for an
 * optional package (pandas' "Missing optional dependency 'X'", "matplotlib
 * is required for plotting"), a sentence for the user naming the package
 * to put in requirements (caller frees); else NULL (or out of memory). */
char *deps_hint_optional(const char *log, size_t len);

/* Where a run sees the caches env_dir's libraries built when it was made
 * (deps_cache.c): "/env/.rms-cache/home", a tree to lay into HOME
 * (jail_opts.home_from); NULL when the environment has none (the base
 * environment, one whose imports wrote nothing, one built in the
 * fallback). Static text. */
const char *deps_env_home_cache(const char *env_dir);

/* Whether the script's last top-level statement may be an expression
 * statement whose value a notebook would show: false for a statement a
 * keyword starts, an assignment, a block, a decorator, a line inside a
 * block, and print(...) alone (its value is None). The same tokenizer as
 * deps_scan_imports; false negatives are what it must not have (the
 * runner that shows the value decides with the interpreter's own parser). */
bool deps_scan_ends_in_expression(const char *code, size_t len);

/* A PEP 723 `# /// script` block. */
struct deps_meta {
    bool present;              /* the script has a `script` block */
    bool has_dependencies;     /* it has a dependencies key */
    struct strv dependencies;
    char *requires_python;     /* NULL when absent */
};
void deps_meta_free(struct deps_meta *m);
/* Reads the script's PEP 723 `script` block, if any, as the PEP says
 * (comment lines from `# /// script` to `# ///`, TOML inside; a subset of
 * TOML: top-level keys with string and array-of-string values, other
 * values and tables skipped). Two script blocks, an unterminated block or
 * a malformed dependencies value give -EINVAL with a reason in err. */
int deps_read_meta(const char *code, size_t len, struct deps_meta *m, char *err, size_t errlen) must_check;

/* ----------------------------------------------------- the interpreter */

/* What runmyscript needs to know about an interpreter, asked once and kept
 * in STATE/cache/python-KEY.info (KEY: the interpreter's real path and file
 * identity, so an upgrade asks again). */
struct deps_python {
    char key[17];
    char *path;         /* as configured */
    char *version;      /* "3.11.2" */
    char *platform;     /* sysconfig.get_platform() */
    char *pip_runner;   /* pip's __pip-runner__.py for this python, or NULL */
    struct strv stdlib; /* sys.stdlib_module_names + builtins, sorted */
};
int deps_python_info(const char *state_dir, const char *python, struct deps_python *info, char *err,
                     size_t errlen) must_check;
void deps_python_free(struct deps_python *info);
bool deps_python_is_stdlib(const struct deps_python *info, const char *module);

/* ------------------------------------------------------------ resolving */

enum deps_source { DEPS_SRC_EXPLICIT, DEPS_SRC_SCRIPT, DEPS_SRC_IMPORT };

struct deps_req {
    char *name;    /* PEP 503 normalised distribution name */
    char *spec;    /* canonical requirement handed to the installer */
    enum deps_source source;
    char *module;  /* DEPS_SRC_IMPORT: the import it was found from */
};

/* A set of requirements, at most one per distribution. */
struct deps_set {
    struct deps_req *v;
    size_t n, cap;
};
void deps_set_free(struct deps_set *s);

/* The declared requirements: the explicit list, then the PEP 723 block
 * (whose requires-python is checked against info->version when info is
 * not NULL). Every string is checked with deps_check_requirement. Fills
 * set (earlier wins per distribution) and *meta_present. -EINVAL with a
 * one-line reason (naming the requirement) when something is refused. */
int deps_declared(const struct exec_deps_config *cfg, const char *const *explicit_reqs, size_t n_explicit,
                  const char *code, size_t code_len, const struct deps_python *info, struct deps_set *set,
                  char *err, size_t errlen) must_check;

/* Adds what the imports need to set, for distributions it does not hold
 * yet: each import that is not in the standard library, not a module in
 * one of local_dirs (NAME.py, NAME/, NAME.*.so) and not importable from
 * have_env (an environment directory, may be NULL), mapped to its
 * distribution. 0, -E2BIG (too many), -ENOMEM, or -errno from the map. */
int deps_detect(const struct exec_deps_config *cfg, const char *code, size_t code_len, const struct deps_python *info,
                const char *const *local_dirs, size_t n_local, const char *have_env, struct deps_set *set,
                char *err, size_t errlen) must_check;

/* Drops from set the detected requirements whose module env_dir already
 * provides (used after the declared requirements are installed: a declared
 * distribution may provide a module under another name). */
void deps_drop_provided(struct deps_set *set, const struct deps_python *info, const char *env_dir);

/* Copies in into out (empty), only the declared requirements (explicit,
 * PEP 723) when declared_only. 0 or -ENOMEM. */
int deps_set_copy(const struct deps_set *in, bool declared_only, struct deps_set *out) must_check;

/* "pillow, rms-beta": the names of a set for messages (caller frees). */
char *deps_set_names(const struct deps_set *set);

/* ---------------------------------------------------- the environments */

/* Returns in *env_dir (caller frees) the base environment for python under
 * STATE/envs, making it first if needed. Concurrent callers wait for one
 * build (a lock per key); a build is made in a temporary directory and
 * renamed into place only when complete, so a half-built one is never used.
 * On failure returns -errno and a one-line reason in err. */
int deps_base_env(const char *state_dir, const char *python, char **env_dir, char *err, size_t errlen) must_check;

/* The interpreter inside an environment directory (caller frees). */
char *deps_env_python(const char *env_dir);

/* An environment in use by a run. While it is held (a shared lock on its
 * directory) eviction leaves it alone. */
struct deps_env {
    char key[33];
    char *dir;            /* STATE/envs/KEY */
    int fd;               /* the directory, holding the shared lock */
    bool built;           /* this call built it (else a cache hit) */
    struct strv installed;  /* name==version, what it holds */
    char *failed;         /* on an install outcome: the requirement that failed, or NULL */
};
void deps_env_init(struct deps_env *e);
/* Releases the lock and frees. */
void deps_env_release(struct deps_env *e);

struct deps_install_io {
    /* How the installer is jailed: mode, fallback, state directory, uid
     * range, tag and limits (deps fills in the command, the binds and the
     * time limit). NULL: run it as a trusted helper without the jail (unit
     * tests only). */
    const struct jail_tool *jail;
    /* Each line of the installer's output as it comes; may be NULL. */
    void (*line)(void *ctx, const char *line);
    /* Called once before the installer starts, with the names it installs;
     * not called on a cache hit. May be NULL. */
    void (*installing)(void *ctx, const char *names);
    void *ctx;
    /* Polled while the installer runs: true kills it, and deps_env_get
     * answers -ECANCELED with nothing published. May be NULL. */
    bool (*cancelled)(void *ctx);
    /* The installer's network when a package source is remote: net_open
     * gives a socket for jail_opts.net_sock (a network of the installer's
     * own through a proxy that reaches only those sources, started by the
     * caller), net_close ends it after the installer. NULL: the host's
     * network (unit tests). With every source local (index_url none and
     * find_links directories), the installer has no network at all. */
    int (*net_open)(void *ctx, int *sock);
    void (*net_close)(void *ctx);
};

/* What deps_env_get says besides a negative errno (the service failed):
 * the environment is there, or the installer failed, the run's outcome
 * (install_failed) and not the service's. */
enum deps_env_outcome {
    DEPS_ENV_READY = 0,           /* *e filled and held */
    DEPS_ENV_INSTALL_FAILED = 1,  /* the installer exited with a failure */
    DEPS_ENV_INSTALL_TIMEOUT = 2, /* the installer ran past install_ms and was stopped */
};

/* Gets the environment for set: a cache hit, or a build (one per key at a
 * time; others wait and then hit). base_env is the interpreter's base
 * environment (the new one starts as a copy of it). install_ms bounds the
 * installer. Returns DEPS_ENV_READY with *e filled and held;
 * DEPS_ENV_INSTALL_FAILED or DEPS_ENV_INSTALL_TIMEOUT (e->failed names the
 * requirement when it can be told); a negative errno when the service
 * failed. Whatever is not DEPS_ENV_READY has its one-line reason in err
 * (the installer's error line, the limit, or what failed), the one channel
 * for the message. After a build it evicts least recently used
 * environments past cfg->cache_bytes. */
int deps_env_get(const struct exec_deps_config *cfg, const char *state_dir, const struct deps_python *info,
                 const char *base_env, const struct deps_set *set, int64_t install_ms,
                 const struct deps_install_io *io, struct deps_env *e, char *err, size_t errlen) must_check;

/* The end of deps_env_get's reason when the installer found no
 * distribution of a requirement: all a client is told of the server's
 * package sources. */
#define DEPS_NOT_FOUND_SAYS "; this server's package sources do not have it"

/* For a reason of deps_env_get that ends with DEPS_NOT_FOUND_SAYS, the
 * operator's advice: where the installer looked (index_url,
 * extra_index_url, find_links, a URL's user and password shown as "***")
 * and the keys to change. NULL for any other reason, or on ENOMEM. Caller
 * frees. It names the server's paths: for the server's log and the
 * command line, never for a client. */
char *deps_install_advice(const struct exec_deps_config *cfg, const char *reason);

/* 1 when a file of STATE/store can be hard linked into STATE/envs (the
 * state directory standing for one not made yet; nothing is made), 0
 * when not (EXDEV, EPERM, EMLINK: environments get copies), -errno when
 * it could not be told (a probe file could not be written). */
int deps_store_links(const char *state_dir);

/* What the environment want_env holds beyond have_env (both published
 * environments: a live kernel's, and the larger one a cell needs), put
 * into the directory open at dst, a live kernel's extra directory: the
 * importable part (site/) of each package store entry want_env was
 * assembled from whose distribution have_env lacks, as real directories
 * and hard links to the entry's files (copies where a link cannot go),
 * no symlink: no store entry is bound where the kernel runs. 0 with
 * "name==version" of each package added pushed onto added; 1 with the
 * reason in err when it cannot be done: a package of have_env is another
 * version in want_env (the kernel may have imported it), or want_env was
 * not assembled from the store; -errno with the reason in err (dst may
 * hold part of it). */
int deps_env_extend(const char *have_env, const char *want_env, int dst, struct strv *added, char *err,
                    size_t errlen) must_check;

/* The package store entries the environment at env_dir links through
 * symlinks, as host paths (STATE/store/pyX.Y/HASH, pushed onto out): what
 * a run's jail must bind, each at its own path, for those symlinks to
 * resolve; read from its manifest, no walk. None for the base environment
 * or one of hard links only. 0 or -errno. */
int deps_env_links(const char *env_dir, struct strv *out) must_check;
/* The binds a run of the environment at env_dir needs besides the
 * environment itself: each package store entry its symlinks lead into,
 * read-only (nosuid, nodev: the jail's default) at its own host path, and
 * never the whole store, which would show every package any run
 * installed. The same list is the fallback's Landlock rules for them.
 * Read from the environment's manifest (deps_env_links). *b is the
 * caller's: deps_env_binds_free; v borrows paths. 0 or -errno. */
struct jail_bind;
struct deps_env_binds {
    struct jail_bind *v;
    char **paths;
    size_t n;
};
int deps_env_binds(const char *env_dir, struct deps_env_binds *b) must_check;
void deps_env_binds_free(struct deps_env_binds *b);

/* Evicts least recently used environments (never base ones, never one a
 * run holds, never keep_key) until their total is at most cap bytes and,
 * when store_cap is not 0, until they and the package store entries they
 * link are at most store_cap; then store entries no environment links,
 * least recently linked first, never one a build is linking, until the
 * store and the environments together are at most store_cap. Removes what
 * killed builds and unpacks left behind. 0 caps are no caps. Returns the
 * number of environments and entries evicted, or -errno. */
int deps_evict(const char *state_dir, uint64_t cap, uint64_t store_cap, const char *keep_key);

#endif
