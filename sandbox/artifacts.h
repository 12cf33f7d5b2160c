/* artifacts.h: what a script left in its output directory: a safe walk
 * that follows no symlink, MIME types from magic bytes then extensions,
 * one-line summaries, and the zip of it all (libarchive). */
#ifndef RMS_ARTIFACTS_H
#define RMS_ARTIFACTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "executor.h"

#define ART_MAX_DEPTH 32      /* directory levels below output/ */
#define ART_MAX_PATH 1024     /* bytes of a relative path */

struct art_list {
    struct exec_artifact *v;  /* sorted by path; owned (art_list_free) */
    size_t n;
    uint64_t bytes;           /* sum of sizes of v */
    uint64_t skipped;         /* symlinks, FIFOs, sockets, devices, shared hard links, too deep */
    const char *limit;        /* "output_files" or "output_bytes" when one was crossed */
};
void art_list_free(struct art_list *l);

/* Walks the directory open at outfd (not followed if a symlink replaced
 * anything below it) and lists its regular files, their MIME types and
 * summaries. Files past max_files or max_bytes (in path order) are left out
 * and l->limit names the limit. 0 or -errno. */
int art_collect(int outfd, uint64_t max_files, uint64_t max_bytes, struct art_list *l) must_check;

/* Counts files and bytes under outfd, stopping early once either passes
 * its stop value (0: no stop). Used while a script runs. 0 or -errno. */
int art_measure(int outfd, uint64_t stop_files, uint64_t stop_bytes, uint64_t *files, uint64_t *bytes) must_check;

/* Copies the listed files, read beneath outfd, to the same relative paths
 * beneath dstfd (an empty directory), byte for byte up to their listed
 * size (copy_file_range, so a file system that can share extents does).
 * For a session's runs, whose output/ the next run may rewrite: the copy
 * is what the run's URLs and zip serve. An entry gone or replaced since
 * the walk is dropped from l (l->skipped counts it); a shorter file keeps
 * what it has (its size is updated). 0, or -errno with a reason in err when
 * a copy cannot be written (a full disk). */
int art_snapshot(int outfd, struct art_list *l, int dstfd, char *err, size_t errlen) must_check;

/* A one-line summary of the regular file open at fd, whose MIME type is
 * mime and size is size (caller frees), or NULL on ENOMEM. */
char *art_summary(int fd, const char *mime, uint64_t size);

/* Writes a zip (deflate) of the listed files, read beneath outfd, to
 * dirfd/name: built under a temporary name and renamed only when complete,
 * so a zip that exists is whole. 0 or -errno with a reason in err. */
int art_zip(int outfd, const struct art_list *l, int dirfd, const char *name, char *err, size_t errlen) must_check;

#endif
