/* strv.h: a growable list of strings, each a copy the list owns. A general
 * data structure at the bottom of the tree, for every part that keeps a
 * list of names (modules, requirement specs, packages, paths). */
#ifndef RMS_STRV_H
#define RMS_STRV_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* The strings v[0..n) (owned); {0} is the empty list. */
struct strv {
    char **v;
    size_t n, cap;
};

/* Frees every string and the array, and leaves s empty (reusable). */
void strv_free(struct strv *s);
/* Appends a copy of the len bytes at str (NUL-terminated in the copy).
 * 0 or -ENOMEM (s unchanged). */
int strv_push(struct strv *s, const char *str, size_t len) must_check;
/* True when s holds a string equal to str. */
bool strv_has(const struct strv *s, const char *str);

#endif
