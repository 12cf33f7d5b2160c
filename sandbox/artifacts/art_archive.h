/* art_archive.h: libarchive, loaded on first use: the one table of the
 * functions the artifacts' zip (art_zip.c) and the package store's wheel
 * unpacker (sandbox/deps/deps_store.c) call. */
#ifndef RMS_ART_ARCHIVE_H
#define RMS_ART_ARCHIVE_H

#include <stddef.h>

#include <archive.h>
#include <archive_entry.h>

#include "util.h"

#define ART_ARCHIVE_FUNCS(X)                                                                        \
    X(archive_error_string)                                                                        \
    X(archive_write_new) X(archive_write_free) X(archive_write_set_format_zip)                     \
    X(archive_write_set_format_option) X(archive_write_open_fd) X(archive_write_header)            \
    X(archive_write_data) X(archive_write_close)                                                   \
    X(archive_read_new) X(archive_read_free) X(archive_read_support_format_zip)                    \
    X(archive_read_open_fd) X(archive_read_next_header) X(archive_read_data)                       \
    X(archive_entry_new) X(archive_entry_free) X(archive_entry_clear) X(archive_entry_set_pathname) \
    X(archive_entry_set_filetype) X(archive_entry_set_perm) X(archive_entry_set_size)              \
    X(archive_entry_set_mtime) X(archive_entry_pathname) X(archive_entry_filetype)                 \
    X(archive_entry_perm)

/* libarchive's functions, called through the table as z->archive_read_new(). */
struct art_archive {
#define X(f) __typeof__(f) *f;
    ART_ARCHIVE_FUNCS(X)
#undef X
};

/* The table, libarchive (LIBARCHIVE_SONAME) loaded by the first call and
 * kept for the rest of the process (borrowed), or NULL with "WHATcannot
 * load SONAME: WHY" or "WHATSONAME lacks NAME" in err (what: the caller's
 * prefix, as util_dl_load's; a later call tries again). Not thread-safe:
 * the first call comes before any threads that use it. */
const struct art_archive *art_archive_api(const char *what, char *err, size_t errlen);

#endif
