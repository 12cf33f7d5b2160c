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

#include "executor.h"
#include "ipaddr.h"

#define FETCH_URL_MAX 8192         /* bytes of a URL we accept (a redirect's Location is
                                    * bounded by libcurl's header limit, 100 KiB) */
#define FETCH_ALLOW_MAX 256        /* entries of fetch_allow */
#define FETCH_RECORD_MAX (32u << 20) /* bytes of a session's mounts record: 10000
                                      * entries (mount_files' ceiling) of at most
                                      * ~2 KiB each */

/* ------------------------------------------------------ the address guard */

/* Whether a connection to sa may be made: a public address, or one that
 * fetch_allow (may be NULL: nothing listed) covers, port included. An
 * IPv4-mapped IPv6 address matches IPv4 entries. When refused, *cls says
 * why. */
bool fetch_addr_allowed(const struct sockaddr *sa, socklen_t len, const struct fetch_allow *allow,
                        enum ipaddr_class *cls);

/* The read-only rule of mounts/ in the rlimits fallback, where no bind can
 * enforce it: removes the write bits of every regular file under the
 * workspace's mounts/ (no symlink followed). 0 when there is no mounts/. A
 * script of the fallback runs with the server's uid and can put them
 * back: the namespaces mode is what enforces read-only. */
int fetch_mounts_chmod_ro(int workspace_fd) must_check;

#endif
