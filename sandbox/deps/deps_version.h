/* deps_version.h: PEP 440 versions, as far as requires-python and the
 * requirement parser need them (deps_version.c), and the ASCII class the
 * parsers of deps/ read names and versions with. The bottom of the
 * requirement parser: deps_req.h includes it. */
#ifndef RMS_DEPS_VERSION_H
#define RMS_DEPS_VERSION_H

#include <stdbool.h>
#include <stddef.h>

#include "util.h"

/* ASCII letters and digits (isalnum() would follow the locale). */
static inline bool deps__alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The length of the PEP 440 comparison operator at s ("===", "==", "~=",
 * "!=", "<=", ">=", "<", ">"), or 0 when there is none. */
size_t deps__version_op(const char *s);

/* Whether version ("3.11.2") satisfies a PEP 440 specifier set such as
 * ">=3.8, <4" or "==3.11.*". 1 yes, 0 no, -EINVAL when the specifiers do
 * not parse. */
int deps_version_satisfies(const char *version, const char *specifiers) must_check;

#endif
