/* cfg.h: the configuration: one `key = value` file, every key also
 * settable as the environment variable RUNMYSCRIPT_KEY (upper case) and on
 * the command line with --set key=value. Later sources win: defaults, file,
 * environment, --set. Unknown keys and bad values are errors, never
 * ignored. */
#ifndef RMS_CFG_H
#define RMS_CFG_H

#include <stdbool.h>
#include <stddef.h>

#include "exec.h"
#include "fetch.h"
#include "util.h"

struct cfg {
    char *config_file;        /* the file read, or NULL */
    char *state_dir;
    char *python;
    char *isolation;          /* auto | namespaces | rlimits */
    bool require_isolation;
    bool script_network;
    uint64_t uid_base, uid_count;
    int64_t run_ttl_ms;
    enum log_level log_level;
    char *data_dir;           /* holds import-names.tsv */
    char *installer;          /* auto | uv | pip */
    char *index_url;          /* default | none | URL */
    char *extra_index_url;    /* "" or URLs */
    char *find_links;         /* "" or directories/URLs */
    bool only_binary;
    bool auto_deps;
    bool requirement_urls;
    uint64_t env_cache_size;  /* bytes; 0: no cap */
    char *fetch_allow_text;   /* fetch_allow as given ("" when none) */
    struct fetch_allow fetch_allow;
    struct exec_config exec;  /* points into the strings above */
    struct fetch_config fetch; /* limits, and allow pointing at fetch_allow */
};

/* Loads the configuration. file: an explicit file (must exist), or NULL to
 * look for $RUNMYSCRIPT_CONFIG, then runmyscript.conf next to the program
 * (self: argv[0]'s path, may be NULL), then SYSCONFDIR/runmyscript.conf.
 * sets: "key=value" strings from --set. On error returns -EINVAL (or
 * -errno) with a one-line reason in err naming the source (file and line,
 * variable, or --set). cfg_free() afterwards in every case. */
int cfg_load(struct cfg *c, const char *file, const char *self, const char *const *sets, size_t nsets, char *err,
             size_t errlen) must_check;
void cfg_free(struct cfg *c);

/* Sets one key from text; the same rules as the file. 0 or -EINVAL with a
 * reason in err. */
int cfg_set(struct cfg *c, const char *key, const char *value, char *err, size_t errlen) must_check;

/* Parses "60", "1.5s", "500ms", "2m", "1h" (bare numbers are seconds) into
 * milliseconds; "1048576", "64K", "1.5M", "2GiB" (binary units) into bytes.
 * 0 or -EINVAL. */
int cfg_parse_duration(const char *s, int64_t *ms) must_check;
int cfg_parse_size(const char *s, uint64_t *bytes) must_check;
int cfg_parse_bool(const char *s, bool *v) must_check;

/* Writes every key with its current value, one "key = value" line each,
 * into out (caller frees). */
char *cfg_dump(const struct cfg *c);

/* The names of all keys, NULL-terminated (static). */
const char *const *cfg_keys(void);

#endif
