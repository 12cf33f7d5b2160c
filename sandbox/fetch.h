/* fetch.h: files from and to the outside, over HTTP(S) with libcurl (loaded
 * with dlopen on first use): downloads into a directory (mount_file,
 * run_code's files, the "input from URL" of the page and the CLI), uploads
 * of a file to a URL (persist_artifact), and the per-session record that
 * makes a repeated mount a no-op. Every transfer is capped, timed, limited
 * to http and https, never proxied, and refused at connect time when the
 * exact address it is about to connect to is not a public one (the SSRF
 * guard) unless the configuration allowlists it. */
#ifndef RMS_FETCH_H
#define RMS_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "exec.h"
#include "util.h"

#define FETCH_URL_MAX 8192         /* bytes of a URL we accept (a redirect's Location is
                                    * bounded by libcurl's header limit, 100 KiB) */
#define FETCH_ALLOW_MAX 256        /* entries of fetch_allow */
#define FETCH_RECORD_MAX (32u << 20) /* bytes of a session's mounts record: 10000
                                      * entries (mount_files' ceiling) of at most
                                      * ~2 KiB each */
#define FETCH_ERR_MAX 512          /* a good size for the err buffers below */
#define FETCH_MOUNTS_DIR "mounts"  /* in a session's workspace: mounted files */

/* ---------------------------------------------------------------- limits */

/* Every limit of a transfer, each with a key, a default, a range and what
 * happens when it is crossed: see fetch_limit_defs[] (rows of the same
 * shape as exec_limit_defs[], offsets into this struct). */
struct fetch_limits {
    uint64_t fetch_bytes;        /* fetch_bytes: largest download */
    uint64_t upload_bytes;       /* upload_bytes: largest upload */
    int64_t connect_timeout_ms;  /* fetch_connect_timeout: per connection attempt */
    int64_t timeout_ms;          /* fetch_timeout: a whole transfer, redirects included */
    uint64_t redirects;          /* fetch_redirects: redirects followed (0: none) */
    uint64_t mount_files;        /* mount_files: files in one session's mounts/ */
    uint64_t mount_bytes;        /* mount_bytes: bytes of one session's mounts/ */
};
extern const struct exec_limit_def fetch_limit_defs[];
extern const size_t fetch_limit_defs_n;
void fetch_limits_default(struct fetch_limits *l);
uint64_t fetch_limit_get(const struct fetch_limits *l, const struct exec_limit_def *d);
void fetch_limit_set(struct fetch_limits *l, const struct exec_limit_def *d, uint64_t v);
/* The row for key, or NULL. */
const struct exec_limit_def *fetch_limit_find(const char *key);

/* ------------------------------------------------------ the address guard */

/* What an address is. Everything but FETCH_ADDR_PUBLIC is refused unless
 * fetch_allow lists it. */
enum fetch_addr_class {
    FETCH_ADDR_PUBLIC,
    FETCH_ADDR_UNSPECIFIED,  /* 0.0.0.0/8, :: */
    FETCH_ADDR_LOOPBACK,     /* 127/8, ::1 */
    FETCH_ADDR_PRIVATE,      /* 10/8, 172.16/12, 192.168/16, fec0::/10, 64:ff9b:1::/48 */
    FETCH_ADDR_LINK_LOCAL,   /* 169.254/16 (cloud metadata), fe80::/10 */
    FETCH_ADDR_SHARED,       /* 100.64/10, carrier-grade NAT */
    FETCH_ADDR_UNIQUE_LOCAL, /* fc00::/7 */
    FETCH_ADDR_MULTICAST,    /* 224/4, ff00::/8 */
    FETCH_ADDR_BROADCAST,    /* 255.255.255.255 */
    FETCH_ADDR_RESERVED,     /* documentation, benchmarking, 240/4, 192.0.0/24,
                              * IPv4-compatible ::a.b.c.d, Teredo and the
                              * rest of 2001::/23, 100::/64, ... */
    FETCH_ADDR_INVALID,      /* not IPv4 or IPv6, or too short */
};
/* "public", "loopback", "private", ... (static). */
const char *fetch_addr_class_name(enum fetch_addr_class c);

/* Classifies an address. IPv6 forms that carry an IPv4 address (mapped
 * ::ffff:a.b.c.d, SIIT ::ffff:0:a.b.c.d, NAT64 64:ff9b::/96, 6to4
 * 2002::/16) are classified by the IPv4 address they carry. */
enum fetch_addr_class fetch_addr_classify(const struct sockaddr *sa, socklen_t len);

/* The parsed fetch_allow: addresses, CIDR ranges, each with an optional
 * port. */
struct fetch_allow_entry {
    int family;                /* AF_INET or AF_INET6 */
    unsigned char addr[16];    /* network byte order; 4 bytes for AF_INET */
    unsigned prefix;           /* bits that must match */
    uint16_t port;             /* 0: any port */
};
struct fetch_allow {
    struct fetch_allow_entry *v; /* owned (fetch_allow_free) */
    size_t n;
};
/* Parses "127.0.0.1, 10.0.0.0/8 192.168.1.5:8080 [::1]:8443 fd00::/8"
 * (entries separated by commas and/or white space; IPv6 with a port in
 * brackets; no host names) into a (zeroed or freed) a. 0, or -EINVAL /
 * -E2BIG (more than FETCH_ALLOW_MAX) with a one-line reason naming the
 * entry in err; a is left empty then. */
int fetch_allow_parse(const char *text, struct fetch_allow *a, char *err, size_t errlen) must_check;
void fetch_allow_free(struct fetch_allow *a);

/* Whether a connection to sa may be made: a public address, or one that
 * fetch_allow (may be NULL: nothing listed) covers, port included. An
 * IPv4-mapped IPv6 address matches IPv4 entries. When refused, *cls says
 * why. */
bool fetch_addr_allowed(const struct sockaddr *sa, socklen_t len, const struct fetch_allow *allow,
                        enum fetch_addr_class *cls);

/* ---------------------------------------------------------------- URLs */

/* Checks a URL before anything is sent: at most FETCH_URL_MAX bytes, one
 * that libcurl parses, scheme http or https, a host. 0 or -EINVAL with a
 * one-line reason in err (the URL in it redacted). Needs libcurl (it loads
 * it): -ENOSYS when it cannot be loaded. */
int fetch_url_check(const char *url, char *err, size_t errlen) must_check;

/* Writes url into out (outlen bytes, truncated with "...") without what may
 * be a secret: the user and password, the query and the fragment; bytes
 * outside printable ASCII are %-escaped. For error messages and logs. */
void fetch_url_redact(const char *url, char *out, size_t outlen);

/* ------------------------------------------------------------- settings */

/* Server-wide settings of the fetch module; the front door fills it from
 * the configuration. allow is borrowed for the life of the struct. */
struct fetch_config {
    struct fetch_limits limits;
    const struct fetch_allow *allow;  /* fetch_allow; NULL: nothing allowlisted */
    const char *user_agent;           /* NULL: "runmyscript/VERSION" */
    /* Called on the caller's thread while a transfer runs (NULL: never),
     * at least once a second and whenever bytes move: done is the bytes
     * received (a download) or sent (an upload) so far, total what the
     * server announced or the file's size (0: unknown). Returning true
     * stops the transfer: it fails with -ECANCELED and leaves no file. */
    bool (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;               /* borrowed */
};
void fetch_config_init(struct fetch_config *c);

/* ------------------------------------------------------------ transfers */

/* What a download produced. */
struct fetch_file {
    uint64_t bytes;
    char sha256[65];       /* lower-case hex, computed while streaming */
    const char *mime;      /* static: art_mime() of the first bytes and the name */
    long http_status;      /* the final response's status */
};

/* Errors, from all the transfer functions below: 0 on success, else a
 * negative errno with a one-line reason in err naming the URL (redacted:
 * fetch_url_redact) and the HTTP status, the curl error or the limit:
 *   -EINVAL     a bad URL (scheme, syntax, length) or an unsafe path
 *   -EACCES     the guard refused the address (not public, not allowlisted)
 *   -EFBIG      a size limit (fetch_bytes, upload_bytes, mount_bytes)
 *   -EDQUOT     mount_files
 *   -ETIMEDOUT  fetch_connect_timeout or fetch_timeout
 *   -ELOOP      more than fetch_redirects redirects, or a symlink in a path
 *   -EPROTO     the server answered with an HTTP error status (>= 400), or
 *               a redirect with fetch_redirects = 0
 *   -EPROTONOSUPPORT  a redirect to a scheme other than http or https
 *   -EHOSTUNREACH, -ECONNREFUSED, -EIO  the network or the server failed
 *   -ENOSYS     libcurl cannot be loaded
 *   -ECANCELED  the progress callback asked to stop
 *   -EPERM      (fetch_mount) workspace/mounts/ is not the server's
 *   other       the local file system (-ENOSPC, -EISDIR, ...)
 * No function ever leaves a partial file under a final name. */

/* Downloads url into dirfd/rel: rel must pass ws_rel_path_ok; missing
 * directories on the way are made (0755) and none is followed if a
 * symlink. The bytes go to a temporary file in the final directory
 * (".fetch-RANDOM.part", mode 0644 less the umask; 0444 for fetch_mount),
 * fsync'd and renamed over rel only when
 * whole; on failure it is removed. At most limits.fetch_bytes, or max_bytes
 * when that is smaller and not 0 (max_name: the key that set it, for the
 * error), are accepted: a larger Content-Length fails before the body, a
 * body that grows past the cap fails as it does. dirfd is borrowed. */
int fetch_download(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel, uint64_t max_bytes,
                   const char *max_name, struct fetch_file *out, char *err, size_t errlen) must_check;

/* Downloads url into memory, with the same cap as fetch_download; a NUL is
 * appended (not counted in *len); *data is the caller's to free. For the
 * CLI's --input-url and the page's "input from URL" (max_bytes =
 * input_bytes). */
int fetch_to_memory(const struct fetch_config *cfg, const char *url, uint64_t max_bytes, const char *max_name,
                    char **data, size_t *len, struct fetch_file *out, char *err, size_t errlen) must_check;

/* What an upload did. */
struct fetch_upload_result {
    uint64_t uploaded_bytes;
    long status;           /* the final HTTP status (2xx on success) */
};

/* HTTP PUT of the regular file dirfd/rel (opened beneath dirfd, no symlink
 * followed anywhere on the way: ws_open_beneath) to url. A file larger than
 * limits.upload_bytes is refused before anything is sent, and the read side
 * stops at the cap while streaming. A final status >= 400 is an error
 * (-EPROTO, the status in out->status and in err). dirfd is borrowed. */
int fetch_upload(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel,
                 struct fetch_upload_result *out, char *err, size_t errlen) must_check;

/* ------------------------------------------------------------- sessions */

/* A session directory (STATE/sessions/SID of DESIGN.md) holds workspace/,
 * the script's cwd, whose mounts/ receives the mounted files, and, next to
 * workspace/ where no script can write, mounts.json: the record of what was
 * mounted from where (with a lock file, mounts.lock). */

/* What fetch_mount returns: the shape of mount_file's result. */
struct fetch_mount {
    char *mounted_as;      /* "mounts/PATH", relative to the workspace (owned) */
    uint64_t bytes;
    char sha256[65];
    const char *mime;      /* static */
    bool reused;           /* the same URL was already at PATH: nothing was fetched */
};
void fetch_mount_free(struct fetch_mount *m);

/* mount_file(url, mount_path): downloads url into
 * session_dir/workspace/mounts/MOUNT_PATH (fetch_download's rules) and
 * records it. When the record says the same URL (compared by its SHA-256,
 * query included) already went to the same path and the file is still the
 * one written then (regular, same inode, size and mtime), nothing is
 * fetched and the recorded values come back with reused set. A mount that
 * would pass mount_files or mount_bytes for the session is refused; the
 * check is made again, under the record's lock, before the file is
 * published, so concurrent mounts cannot pass them together. Concurrent
 * mounts into one session each write a temporary file of their own.
 * session_dir must exist; workspace/ and mounts/ are made when missing. */
int fetch_mount(const struct fetch_config *cfg, const char *session_dir, const char *url, const char *mount_path,
                struct fetch_mount *out, char *err, size_t errlen) must_check;

/* persist_artifact(relative_path, presigned_url): fetch_upload of
 * session_dir/workspace/output/RELATIVE_PATH. */
int fetch_persist(const struct fetch_config *cfg, const char *session_dir, const char *relative_path, const char *url,
                  struct fetch_upload_result *out, char *err, size_t errlen) must_check;

/* The read-only rule of mounts/ in the rlimits fallback, where no bind can
 * enforce it: removes the write bits of every regular file under the
 * workspace's mounts/ (no symlink followed). 0 when there is no mounts/. A
 * script of the fallback runs with the server's uid and can put them
 * back: the namespaces mode is what enforces read-only. */
int fetch_mounts_chmod_ro(int workspace_fd) must_check;

#endif
