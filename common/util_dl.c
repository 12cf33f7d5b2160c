/* util_dl.c: the one loader of a library opened on first use with dlopen
 * (libarchive, libcurl, libpython): its soname opened, a table of named
 * symbols filled, all or nothing; declared in util.h. */
#include "config.h"

#include "util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>

int util_dl_load(const char *soname, bool global, const struct util_dl_sym *syms, size_t n, const char *what,
                 char *err, size_t errlen)
{
    void *h = dlopen(soname, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
    if (!h) {
        snprintf(err, errlen, "%scannot load %s: %s", what, soname, dlerror());
        return -ENOENT;
    }
    for (size_t i = 0; i < n; i++) {
        if ((*syms[i].addr = dlsym(h, syms[i].name)))
            continue;
        snprintf(err, errlen, "%s%s lacks %s", what, soname, syms[i].name);
        for (size_t j = 0; j < i; j++)
            *syms[j].addr = NULL;
        dlclose(h);
        return -ENOSYS;
    }
    return 0;
}
