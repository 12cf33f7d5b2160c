/* fetch_internal.h: what the parts of the fetch module share: the address
 * guard (fetch_guard.c) describes what it refused for the transfer's
 * message; the transfers (fetch_transfer.c) hand a session mount
 * (fetch_session.c) a download that is whole but not yet published. */
#ifndef RMS_FETCH_INTERNAL_H
#define RMS_FETCH_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "fetch.h"

#define FETCH_HEAD 4096 /* first bytes kept for the MIME sniffing */

/* "127.0.0.1 port 80" or "[::1] port 80", for messages and logs. */
void fetch__describe_sockaddr(const struct sockaddr *sa, socklen_t len, char *out, size_t n);

/* A download in progress: a temporary file (".fetch-RANDOM.part") in the
 * final directory, renamed over the final name only when whole. */
struct fetch_part {
    int dirfd;          /* the final directory (owned) */
    char name[256];     /* the final name in it */
    char tmp[64];       /* the temporary name, "" when there is none */
    int fd;             /* the temporary file (owned), or -1 */
};
#define FETCH_PART_INIT {.dirfd = -1, .fd = -1}

/* Removes the temporary file and closes what p holds; p may be empty
 * (FETCH_PART_INIT) or published. */
void fetch__part_discard(struct fetch_part *p);

/* fsync, then rename over the final name: whole or not at all. 0, or
 * -errno with the reason in err (p discarded). */
int fetch__part_publish(struct fetch_part *p, char *err, size_t errlen) must_check;

/* Downloads url (checked first: nothing is made on disk for a URL that is
 * refused) into a new part for dirfd/rel with mode, at most max bytes
 * (cap_name: the key that set max, for the error). On success p is ready
 * to publish (or discard) and out describes the bytes; on failure nothing
 * is left on disk. The errors of the transfer functions (executor.h). */
int fetch__download_part(const struct fetch_config *cfg, const char *url, int dirfd, const char *rel, mode_t mode,
                         uint64_t max, const char *cap_name, struct fetch_part *p, struct fetch_file *out, char *err,
                         size_t errlen) must_check;

/* Copies src's bytes (src->data, or what in_fd reads when it is >= 0)
 * into a new part for dirfd/rel with mode, at most max bytes (cap_name:
 * the key that set max, named in err); -EFBIG past it. On success p is
 * ready to publish and out describes the bytes; on failure nothing is
 * left on disk. */
int fetch__copy_part(const struct fetch_src *src, int in_fd, int dirfd, const char *rel, mode_t mode, uint64_t max,
                     const char *cap_name, struct fetch_part *p, struct fetch_file *out, char *err,
                     size_t errlen) must_check;

#endif