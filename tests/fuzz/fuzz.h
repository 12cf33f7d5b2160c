/* fuzz.h: what the libFuzzer targets in tests/fuzz/ share: copies of the
 * input that ASan can bound, and an assertion that crashes (so libFuzzer
 * keeps the input) when a property fails. */
#ifndef RMS_FUZZ_H
#define RMS_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* stubs.c: set when the stub run reported a failure of the service (the
 * caller clears it). */
extern bool fuzz_stub_failed;
/* stubs.c: the executor table a target's struct app uses (its .exec). */
struct app_exec;
extern const struct app_exec fuzz_exec;

#define fuzz_assert(cond, what)                                                      \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "fuzz: property failed: %s (%s:%d)\n", what, __FILE__, __LINE__); \
            abort();                                                                 \
        }                                                                            \
    } while (0)

/* A heap copy of exactly n bytes (no NUL after them). */
static inline char *fuzz_copy(const uint8_t *data, size_t n)
{
    char *p = malloc(n ? n : 1);
    if (!p)
        abort();
    if (n)
        memcpy(p, data, n);
    return p;
}

/* A NUL-terminated copy, cut at the first NUL. */
static inline char *fuzz_cstr(const uint8_t *data, size_t n)
{
    const uint8_t *z = memchr(data, 0, n);
    size_t len = z ? (size_t)(z - data) : n;
    char *p = malloc(len + 1);
    if (!p)
        abort();
    memcpy(p, data, len);
    p[len] = '\0';
    return p;
}

static inline bool fuzz_is_identifier(const char *s)
{
    /* ASCII only: the tokenizer records no other name (a distribution's
     * name is ASCII). */
    if (!*s || (*s >= '0' && *s <= '9'))
        return false;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
            return false;
    }
    return true;
}

#endif
