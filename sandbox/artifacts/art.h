/* art.h: what a script left in its output directory: a safe walk
 * that follows no symlink, MIME types from magic bytes then extensions,
 * one-line summaries, and the zip of it all (libarchive). */
#ifndef RMS_ART_H
#define RMS_ART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "executor.h"

#define ART_MAX_DEPTH 32      /* directory levels below output/ */
#define ART_MAX_PATH 1024     /* bytes of a relative path */

struct art_list {
    struct result_artifact *v;  /* sorted by path; owned (art_list_free) */
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

/* ------------------------------------------------------------ the disk */

/* What a measure counts. all_inodes: every file, directory, link or other
 * inode counts once per name, with the larger of its size and its blocks
 * (the disk it takes); else regular files and their sizes, as output/ is
 * held to output_files and output_bytes. A measure adds to files and bytes
 * (start them at 0) and stops once either passes its stop value (0: no
 * stop). */
struct art_tally {
    bool all_inodes;
    uint64_t stop_files, stop_bytes;
    uint64_t files, bytes;
};
/* Whether t has passed a stop value. */
bool art_tally_over(const struct art_tally *t);

/* A part of a tree tallied on its own as well: the entry of the top named
 * name, or (name NULL) the directory with that dev and ino wherever it is.
 * Parts may share a tally (borrowed). */
struct art_part {
    const char *name;
    dev_t dev;
    ino_t ino;
    struct art_tally *t;
};

/* Measures the tree at dirfd (borrowed; symlinks are counted, never
 * followed) into total, and what lies in each part into its tally too,
 * stopping once total or a part passes a stop value. A directory of the
 * server's own uid that its mode shuts (chmod 000) is opened by giving the
 * server its bits back. However deep the tree, it is measured whole (one
 * directory open at a time); a directory the running script moves while
 * the walk is in it has the walk start again, the tallies as they were
 * (-ESTALE after four walks). At most 8 parts (-EINVAL). 0 or -errno
 * (what could be counted is counted). */
int art_measure_tree(int dirfd, struct art_tally *total, const struct art_part *parts, size_t n_parts) must_check;

/* What to prune, and what was pruned. */
struct art_prune {
    const char *const *keep;   /* names at the top left alone (NULL-terminated; NULL: none) */
    bool has_since;            /* remove only what changed after since (ctime, which a script cannot set) */
    struct timespec since;
    const struct result_artifact *listed; /* or remove all but these files (sorted by path; borrowed) */
    size_t n_listed;
    uint64_t files, bytes;     /* out: names removed, bytes of the files among them */
};

/* Removes the tree at dirfd's entries (dirfd itself stays), never
 * following a symlink: all but p->keep; or with has_since the files that
 * changed after since (their ctime) and the directories made after it
 * (their birth time, or ctime where the file system keeps none) once they
 * are empty; or with listed every file but those (an output/ left holding
 * exactly its artifacts) and the directories it empties; in place
 * however deep the tree (one directory open at a time). 0 or the first
 * -errno (it removes what it can). */
int art_prune(int dirfd, struct art_prune *p) must_check;

/* Copies the listed files, read beneath outfd, to the same relative paths
 * beneath dstfd (an empty directory), byte for byte up to their listed
 * size (copy_file_range, so a file system that can share extents does).
 * For a session's runs, whose output/ the next run may rewrite: the copy
 * is what the run's URLs and zip serve. An entry gone or replaced since
 * the walk is dropped from l (l->skipped counts it); a shorter file keeps
 * what it has (its size is updated). 0, or -errno with a reason in err when
 * a copy cannot be written (a full disk). */
int art_snapshot(int outfd, struct art_list *l, int dstfd, char *err, size_t errlen) must_check;

/* ------------------------------------------- what a session's call made */

/* The regular files of an output/ as a call found them. */
struct art_seen_file {
    char *path;               /* relative to output/ */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};
struct art_seen {
    struct art_seen_file *v;  /* sorted by path; owned (art_seen_free) */
    size_t n, cap;
};
void art_seen_free(struct art_seen *s);
/* Takes what outfd holds now (at most max_files files, 0: all; those past
 * it count as new later) into s (freed or empty first). 0 or -errno. */
int art_seen_take(int outfd, uint64_t max_files, struct art_seen *s) must_check;
/* Cuts l (art_collect's list of outfd) to the files created or changed
 * since before was taken, each flagged RESULT_ART_NEW or RESULT_ART_CHANGED;
 * l->bytes follows. 0 or -errno (l as it was). */
int art_seen_keep_changed(int outfd, const struct art_seen *before, struct art_list *l) must_check;

/* ------------------------------------ what a run wrote outside output/ */

#define ART_OUTSIDE_NAMES RESULT_OUTSIDE_NAMES
struct art_outside {
    uint64_t files;                   /* regular files written since the run started */
    char *names[ART_OUTSIDE_NAMES];   /* the first few in path order, sorted (owned) */
    size_t n_names;
};
void art_outside_free(struct art_outside *o);
/* Counts the regular files beneath dirfd (a run's working directory;
 * symlinks never followed, __pycache__ passed over) whose modification
 * time is not before since, leaving out the top entries named in skip
 * (NULL-terminated; output/, and what the service keeps there), and names
 * the first ART_OUTSIDE_NAMES in path order, paths from dirfd. 0 or -errno
 * (art_outside_free in every case). */
int art_outside_collect(int dirfd, const char *const *skip, const struct timespec *since,
                        struct art_outside *o) must_check;

/* A one-line summary of the regular file open at fd, whose MIME type is
 * mime and size is size (caller frees), or NULL on ENOMEM. */
char *art_summary(int fd, const char *mime, uint64_t size);

/* Writes a zip (deflate) of the listed files, read beneath outfd, to
 * dirfd/name: built under a temporary name and renamed only when complete,
 * so a zip that exists is whole. 0 or -errno with a reason in err. */
int art_zip(int outfd, const struct art_list *l, int dirfd, const char *name, char *err, size_t errlen) must_check;

#endif
