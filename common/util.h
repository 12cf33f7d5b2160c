/* util.h: small helpers every module uses: cleanup attributes, bounded
 * buffers, careful I/O, the one log function, UTF-8 and time helpers, the
 * loader of libraries opened on first use. Nothing here knows about runs,
 * HTTP or JSON-RPC. */
#ifndef RMS_UTIL_H
#define RMS_UTIL_H

#include <dirent.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define must_check __attribute__((warn_unused_result))
#define printf_like(f, a) __attribute__((format(printf, f, a)))
/* Drops a must_check result on purpose; the call site says why. */
#define discard(x)               \
    do {                         \
        long discard_rc_ = (x);  \
        (void)discard_rc_;       \
    } while (0)
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* --- cleanup attributes (after bubblewrap's utils.h) --- */
void util__free_ptr(void *p);
void util__close_fd(int *fd);
void util__fclose(void *f);
void util__closedir(void *d);
#define cleanup_free __attribute__((cleanup(util__free_ptr)))
#define cleanup_fd __attribute__((cleanup(util__close_fd)))
#define cleanup_file __attribute__((cleanup(util__fclose)))
#define cleanup_dir __attribute__((cleanup(util__closedir)))

/* Hand ownership out of a cleanup variable: returns *pp and sets it to NULL. */
static inline void *util__steal(void *pp)
{
    void **p = pp;
    void *v = *p;
    *p = NULL;
    return v;
}
#define steal_pointer(pp) util__steal(pp)
static inline int steal_fd(int *fd)
{
    int v = *fd;
    *fd = -1;
    return v;
}

/* --- logging: one function, the run or request id on every line --- */
enum log_level { LOG_LVL_ERROR, LOG_LVL_WARN, LOG_LVL_INFO, LOG_LVL_DEBUG };
/* Sets the id printed on every following line of this process ("-" when
 * NULL); the string is copied. */
void log_set_id(const char *id);
/* Sets the threshold; lines above it are dropped. Default: LOG_LVL_WARN. */
void log_set_level(enum log_level lvl);
/* The form of the lines: text (below), or a JSON object a line,
 * {"time", "level", "pid", "id", "msg"}, for log collectors. */
enum log_format { LOG_FORMAT_TEXT, LOG_FORMAT_JSON };
void log_set_format(enum log_format f);
bool log_json(void);
/* Writes object (one JSON object, made by the caller, every string of it
 * escaped, no newline in it) to stderr as one line, whatever the level: a
 * request's line in the JSON form. */
void log_json_line(const char *object);
/* Writes one line to stderr: "runmyscript[pid] LEVEL id: message". Bytes
 * outside printable ASCII in the formatted message are escaped, so text a
 * client sent can be logged without forging lines. */
void log_msg(enum log_level lvl, const char *fmt, ...) printf_like(2, 3);

/* --- bounded growable buffer (after curl's dynbuf) --- */
struct dbuf {
    char *data;  /* always NUL-terminated when non-NULL */
    size_t len;
    size_t cap;
    size_t max;  /* ceiling: appends past it fail with -E2BIG */
};
void dbuf_init(struct dbuf *b, size_t max);
void dbuf_free(struct dbuf *b);
/* Appends; returns 0, -ENOMEM, or -E2BIG when len + n would pass max (then
 * nothing is appended). */
int dbuf_append(struct dbuf *b, const void *p, size_t n) must_check;
int dbuf_printf(struct dbuf *b, const char *fmt, ...) printf_like(2, 3) must_check;
/* Returns the data (caller frees) and resets the buffer. */
char *dbuf_steal(struct dbuf *b, size_t *len);

/* --- arrays that grow by doubling --- */
/* Room for one element more in the array *arrayp of *cap elements of size
 * bytes, n of them in use: nothing while n < *cap, else *cap doubled (first
 * when it was 0). 0, or -ENOMEM with the array as it was. */
int util_grow(void **arrayp, size_t *cap, size_t n, size_t size, size_t first) must_check;
/* The same for an array variable V with its count N and capacity CAP. */
#define UTIL_GROW(v, n, cap, first) util_grow((void **)&(v), &(cap), (n), sizeof *(v), (first))

/* --- I/O --- */
/* write() all of buf, retrying EINTR and short writes. 0 or -errno. */
int util_write_all(int fd, const void *buf, size_t n) must_check;
/* read() exactly n bytes, retrying EINTR and short reads. 0, -EPIPE at an
 * early EOF, or -errno. */
int util_read_exact(int fd, void *buf, size_t n) must_check;
/* Reads a whole fd into a new buffer (NUL-terminated, caller frees), failing
 * with -E2BIG past max bytes. 0 or -errno. */
int util_read_fd(int fd, size_t max, char **out, size_t *len) must_check;
/* Reads a file relative to dirfd (AT_FDCWD for paths) without following a
 * final symlink. Same contract as util_read_fd. */
int util_read_file_at(int dirfd, const char *path, size_t max, char **out, size_t *len) must_check;
/* Writes data to dirfd/name atomically: a temporary name in the same
 * directory, fsync, rename over name. A reader sees the old file or the
 * whole new one, never a part. 0 or -errno (the temporary is removed). */
int util_write_file_atomic(int dirfd, const char *name, const void *data, size_t n, mode_t mode) must_check;
/* The same without the fsync: a reader on the running system sees no file
 * or the whole new one, never a part; after a crash the file may be
 * missing or empty. For a record whose content is kept elsewhere or
 * that nothing needs after a crash. 0 or -errno. */
int util_write_file_published(int dirfd, const char *name, const void *data, size_t n, mode_t mode) must_check;
/* Creates dirfd/name (which must not exist, and is never a symlink) holding
 * data; no fsync: for files that mean nothing after a crash. 0 or -errno. */
int util_write_file_new(int dirfd, const char *name, const void *data, size_t n, mode_t mode) must_check;
/* Removes dirfd/name and everything under it without following symlinks.
 * 0 or -errno of the first failure (it carries on past failures). */
int util_rm_rf_at(int dirfd, const char *name) must_check;
/* A walk of a tree (util_walk_at). pre is called for every entry, a
 * directory before its contents; it answers UTIL_WALK_NEXT (go on),
 * UTIL_WALK_SKIP (not into this directory's contents), UTIL_WALK_STOP (end
 * the walk now, with 0: no more calls) or < 0 (end it with that). post
 * (may be NULL) is called for each directory after its contents (the
 * same answers, SKIP meaning NEXT). Both get the entry as (dirfd, name),
 * its lstat (post: only its st_dev, st_ino and st_mode below the top) and
 * its depth (the top is 0). fail (may be NULL) is called for a directory
 * pre went into that cannot be opened (err: -errno, -ESTALE when it is no
 * longer the directory of the lstat): < 0 or UTIL_WALK_STOP end the walk,
 * anything else passes over it (no post); without fail the walk ends with
 * err. The callbacks may remove the entry they are given (pre: a file, or
 * a directory they skip; post: the directory just walked). */
enum { UTIL_WALK_NEXT = 0, UTIL_WALK_SKIP = 1, UTIL_WALK_STOP = 2 };
#define UTIL_WALK_PATHS 1u     /* keep path: the entry's path from the top ("" for the top) */
#define UTIL_WALK_FIX_MODES 2u /* a directory of ours that its mode shuts us out of gets u+rwx and is opened */
struct util_walk {
    int (*pre)(int dirfd, const char *name, const struct stat *st, int depth, void *ctx);
    int (*post)(int dirfd, const char *name, const struct stat *st, int depth, void *ctx);
    int (*fail)(int dirfd, const char *name, const struct stat *st, int depth, int err, void *ctx);
    void *ctx;
    unsigned flags;         /* UTIL_WALK_* */
    const char *path;       /* set by the walk, valid during a callback (UTIL_WALK_PATHS) */
};
/* Walks dirfd/name and everything under it without following symlinks,
 * as deep as the tree goes: it holds at most 17 directories open, the 16
 * nearest the top and the one it lists (to a deeper one it comes back up
 * through "..", checked to be the directory it left, just past the entry
 * it went down into), so neither the depth nor the length of the paths is
 * bounded by descriptors or PATH_MAX. What the callbacks
 * remove as above is safe; other changes of the tree while it walks may
 * make it pass over entries, or end it with -ESTALE (a directory on its
 * way moved elsewhere, or gone from its parent when it comes back up).
 * name "" walks the directory open at dirfd itself (as AT_EMPTY_PATH;
 * its listing from a duplicate rewound to the start, its mode not looked
 * at). 0 or -errno (or a callback's < 0). */
int util_walk_at(int dirfd, const char *name, struct util_walk *w) must_check;
/* A counted cap, taken atomically across processes (util_cap.c): at most
 * max of weight in all among the entries of a directory, the new entry
 * weighing need (1 for a count of entries, bytes for a budget). */
struct util_cap {
    uint64_t max;
    uint64_t need;
    /* The weight of the entry name of dirfd (0: it does not count); may
     * remove an entry whose holder it finds gone, and say 0. */
    uint64_t (*weigh)(int dirfd, const char *name, void *ctx);
    /* Makes the new entry in dirfd, still under the lock: 0 or -errno. */
    int (*make)(int dirfd, void *ctx);
    void *ctx;
    uint64_t used; /* out: the weight counted before the new entry */
};
/* Counts the entries of dirfd (all but dot, dot-dot and the lock) with
 * weigh and, when used + need <= max, calls make, all under an exclusive
 * flock of dirfd/.cap.lock: the check and the creation are one step for
 * every process that takes the same cap this way. 0 (make's 0), -EDQUOT
 * when the cap is reached (nothing made), make's -errno, or -errno. */
int util_cap_take(int dirfd, struct util_cap *c) must_check;
/* A file of shared counters (util_counters.c): n 64-bit slots that every
 * process mapping the file adds to atomically, so processes that keep
 * nothing in memory between requests count together. layout names the
 * caller's table of slots: a file made for another layout (or n) is
 * replaced by one of zeros. Open fills c (util_counters_close unmaps it):
 * 0 or -errno (-EINVAL for n of 0 or past UTIL_COUNTERS_MAX). An add or a
 * get past n, or on a closed c, does nothing (reads 0). */
#define UTIL_COUNTERS_MAX 65536
struct util_counters {
    uint64_t *slot;
    size_t n;
    void *map;
    size_t len;
    dev_t dev;
    ino_t ino;
};
int util_counters_open(const char *path, uint64_t layout, size_t n, struct util_counters *c) must_check;
/* Whether c still maps the file at path (not one another layout replaced). */
bool util_counters_current(const struct util_counters *c, const char *path);
void util_counters_add(struct util_counters *c, size_t i, uint64_t v);
uint64_t util_counters_get(const struct util_counters *c, size_t i);
void util_counters_close(struct util_counters *c);
/* mkdir -p with mode for each missing component. 0 or -errno. */
int util_mkdir_p(const char *path, mode_t mode) must_check;
/* Copies src (a regular file, not followed if a symlink) to dst, creating
 * dst exclusively. 0 or -errno. */
int util_copy_file(int src_dirfd, const char *src, int dst_dirfd, const char *dst) must_check;
/* The same from an open file (read from offset 0 with pread). */
int util_copy_fd(int in, int dst_dirfd, const char *dst) must_check;
/* A directory stream over the directory open at dirfd (borrowed: the stream
 * has its own duplicate, rewound to the start, since a dup shares the
 * offset). NULL with errno on failure. Close it with closedir. */
DIR *util_opendir_at(int dirfd);
/* Sets O_NONBLOCK / FD_CLOEXEC. 0 or -errno. */
int util_set_nonblock(int fd) must_check;

/* --- libraries loaded on first use --- */
/* One symbol of a library that util_dl_load loads: its name, and where its
 * address goes (a function pointer, cast the POSIX way: (void **)&api.f). */
struct util_dl_sym {
    const char *name;
    void **addr;
};
/* Opens the library soname with dlopen (RTLD_NOW; RTLD_GLOBAL when global,
 * for one whose own modules need its symbols, else RTLD_LOCAL) and sets
 * each of the n syms to its address: all or nothing. 0, and the library
 * stays loaded for the rest of the process; or -ENOENT when it cannot be
 * opened ("WHATcannot load SONAME: WHY" in err: what is the caller's
 * prefix, "zip: ", or ""), -ENOSYS when it lacks a symbol ("WHATSONAME
 * lacks NAME"), and then every addr is NULL and the library closed again.
 * err may be NULL with errlen 0. */
int util_dl_load(const char *soname, bool global, const struct util_dl_sym *syms, size_t n, const char *what,
                 char *err, size_t errlen) must_check;

/* --- text --- */
/* True when s[0..n) is valid UTF-8 (no overlongs, no surrogates). */
bool util_utf8_valid(const char *s, size_t n);
/* Returns a copy of s[0..n) with each invalid UTF-8 sequence and each NUL
 * replaced by U+FFFD (caller frees), or NULL on ENOMEM. */
char *util_utf8_sanitize(const char *s, size_t n, size_t *out_len);
/* A copy of s[0..n) with every occurrence of find (not empty) replaced by
 * with (caller frees; NUL-terminated, its length in *out_len when not
 * NULL), or NULL on ENOMEM. */
char *util_replace_all(const char *s, size_t n, const char *find, const char *with, size_t *out_len);
/* Lower-case hex of n bytes into out (2n+1 bytes). */
void util_hex(const unsigned char *p, size_t n, char *out);
/* Formats a byte count for people: "812 B", "4.2 KiB", "3.0 MiB". */
void util_human_size(uint64_t n, char *out, size_t outlen);

/* --- time --- */
int64_t util_now_ms(void);      /* CLOCK_MONOTONIC in ms */
int64_t util_wall_ms(void);     /* CLOCK_REALTIME in ms */

/* --- the process --- */
/* /proc/PID/cmdline is readable by every process of the machine: argv[keep]
 * and after become copies on the heap (argv points at them), and what the
 * kernel shows of them is cleared, so that a secret given on the command
 * line (a token, a presigned URL) is not shown to anyone. 0 or -ENOMEM. */
int util_hide_argv(int argc, char **argv, int keep) must_check;

/* --- processes --- */
/* The pid, in our PID namespace, of the process a pidfd names (its fdinfo),
 * or -1. */
pid_t util_pidfd_pid(int pidfd);

/* --- randomness --- */
/* Fills buf from getrandom(2), retrying EINTR and short reads. 0 or -errno. */
int util_random(void *buf, size_t n) must_check;

#endif
