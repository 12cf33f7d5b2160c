/* art_archive.c: libarchive loaded on first use (util_dl_load), one table
 * for the zip of a run's artifacts and the package store's unpacker.
 * Linked the usual way, it and what it pulls in (libxml2, ICU, lzma, ...)
 * cost about 5 ms at every start of the program, more than all the rest of
 * a CLI run's overhead; this way only the runs that make a zip or unpack a
 * wheel pay, once per process. */
#include "config.h"

#include "art_archive.h"

const struct art_archive *art_archive_api(const char *what, char *err, size_t errlen)
{
    static struct art_archive api;
    static bool loaded;
    if (loaded)
        return &api;
    const struct util_dl_sym syms[] = {
#define X(f) {#f, (void **)&api.f},
        ART_ARCHIVE_FUNCS(X)
#undef X
    };
    if (util_dl_load(LIBARCHIVE_SONAME, false, syms, ARRAY_SIZE(syms), what, err, errlen) < 0)
        return NULL;
    loaded = true;
    return &api;
}
