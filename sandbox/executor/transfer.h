/* executor/transfer.h: transfers: mount_file, persist_artifact, input from a
 * URL. Part of the executor's public API: executor.h includes every part. */
#ifndef RMS_EXECUTOR_TRANSFER_H
#define RMS_EXECUTOR_TRANSFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "exec_limits.h"
#include "util.h"

#define FETCH_ERR_MAX 512          /* a good size for the err buffers below */

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

/* Checks a URL before anything is sent: at most FETCH_URL_MAX bytes, one
 * that libcurl parses, scheme http or https, a host. 0 or -EINVAL with a
 * one-line reason in err (the URL in it redacted). Needs libcurl (it loads
 * it): -ENOSYS when it cannot be loaded. */
int fetch_url_check(const char *url, char *err, size_t errlen) must_check;

/* Writes url into out (outlen bytes, truncated with "...") without what may
 * be a secret: the user and password, the query and the fragment; bytes
 * outside printable ASCII are %-escaped. For error messages and logs. */
void fetch_url_redact(const char *url, char *out, size_t outlen);

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
    /* The bound of a session's workspace (the run limits workspace_bytes
     * and workspace_files; 0: none): fetch_mount refuses a file that would
     * take the workspace past it. */
    uint64_t workspace_bytes, workspace_files;
};
void fetch_config_init(struct fetch_config *c);

/* What a download produced. */
struct fetch_file {
    uint64_t bytes;
    char sha256[65];       /* lower-case hex, computed while streaming */
    const char *mime;      /* static: ws_mime() of the first bytes and the name */
    long http_status;      /* the final response's status; on failure too (0: none came) */
};

/* The one outcome of a transfer that is neither success nor a negative
 * errno: the server answered with an HTTP error status (>= 400); the
 * status is in fetch_file.http_status or fetch_upload_result.status, and
 * in err. Its value is below every errno (Linux's end at 4095), so a
 * switch on the return code tells it apart from them. */
enum fetch_outcome {
    FETCH_E_HTTP = -4096 - 1,
};
/* A short name of a transfer's return code for logs: FETCH_E_HTTP's, or
 * strerror's for a negative errno (static). The user-facing reason is err. */
const char *fetch_strerror(int rc);

/* Errors, from all the transfer functions below: 0 on success, else
 * FETCH_E_HTTP or a negative errno, always with a one-line reason in err
 * (the one channel for the message) naming the URL (redacted:
 * fetch_url_redact) and the HTTP status, the curl error or the limit:
 *   FETCH_E_HTTP  the server answered with an HTTP error status (>= 400)
 *   -EINVAL     a bad URL (scheme, syntax, length) or an unsafe path
 *   -EACCES     the guard refused the address (not public, not allowlisted)
 *   -EFBIG      a size limit (fetch_bytes, upload_bytes, mount_bytes)
 *   -EDQUOT     mount_files
 *   -ETIMEDOUT  fetch_connect_timeout or fetch_timeout
 *   -ELOOP      more than fetch_redirects redirects, or a symlink in a path
 *   -EPROTO     the final answer is no file and no HTTP error: a redirect
 *               with fetch_redirects = 0, or another status outside 2xx
 *               below 400
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
 * (FETCH_E_HTTP, the status in out->status and in err). dirfd is
 * borrowed. */
int fetch_upload(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel,
                 struct fetch_upload_result *out, char *err, size_t errlen) must_check;

/* A session directory (STATE/sessions/SID, doc/architecture.md) holds workspace/,
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

/* Where a mount's bytes come from: a URL to download (mount_file), bytes
 * the client sent (MCP's write_file, the notebook's upload), or a file of
 * this machine (mount_file's file:// URL, which only MCP over stdio
 * accepts, and only beneath mount_root). */
enum fetch_src_kind { FETCH_SRC_URL, FETCH_SRC_BYTES, FETCH_SRC_LOCAL };
struct fetch_src {
    enum fetch_src_kind kind;
    const char *url;       /* URL: what to download; LOCAL: file:///PATH; BYTES: NULL */
    const void *data;      /* BYTES: the bytes (borrowed) */
    size_t len;
    const char *root;      /* LOCAL: the absolute directory PATH must be beneath */
    char shown[512];       /* set by fetch_mount_from: the source as answers name it */
};

/* fetch_mount's steps (the record, the caps, the publish) for any source:
 * a URL as fetch_mount; bytes as they are; a local file opened beneath
 * root with no symlink followed anywhere (ws_open_beneath), a regular file,
 * refused with -EPERM outside root. Bytes and local files are written
 * every time (never reused), within fetch_bytes, mount_bytes, mount_files
 * and the workspace's bounds as a download. */
int fetch_mount_from(const struct fetch_config *cfg, const char *session_dir, struct fetch_src *src,
                     const char *mount_path, struct fetch_mount *out, char *err, size_t errlen) must_check;

/* persist_artifact(relative_path, presigned_url): fetch_upload of
 * session_dir/workspace/output/RELATIVE_PATH. */
int fetch_persist(const struct fetch_config *cfg, const char *session_dir, const char *relative_path, const char *url,
                  struct fetch_upload_result *out, char *err, size_t errlen) must_check;

#endif
