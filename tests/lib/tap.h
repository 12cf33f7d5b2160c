/* tap.h: a tiny TAP producer for the C unit tests: plan at the end, assert
 * macros that print both sides when they fail. */
#ifndef RMS_TAP_H
#define RMS_TAP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap__n, tap__failed;

#define ok(cond, ...)                                                       \
    do {                                                                    \
        int ok_ = !!(cond);                                                 \
        tap__n++;                                                           \
        if (!ok_)                                                           \
            tap__failed++;                                                  \
        printf("%sok %d - ", ok_ ? "" : "not ", tap__n);                    \
        printf(__VA_ARGS__);                                                \
        printf("\n");                                                       \
        if (!ok_)                                                           \
            printf("#   failed at %s:%d: %s\n", __FILE__, __LINE__, #cond); \
        fflush(stdout);                                                     \
    } while (0)

#define is_int(got, want, ...)                                                          \
    do {                                                                                \
        long long g_ = (long long)(got), w_ = (long long)(want);                        \
        ok(g_ == w_, __VA_ARGS__);                                                      \
        if (g_ != w_)                                                                   \
            printf("#   got:  %lld\n#   want: %lld\n", g_, w_);                         \
    } while (0)

#define is_str(got, want, ...)                                                          \
    do {                                                                                \
        const char *g_ = (got), *w_ = (want);                                           \
        int same_ = (g_ && w_) ? strcmp(g_, w_) == 0 : g_ == w_;                        \
        ok(same_, __VA_ARGS__);                                                         \
        if (!same_)                                                                     \
            printf("#   got:  '%s'\n#   want: '%s'\n", g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
    } while (0)

#define diag(...)            \
    do {                     \
        printf("# ");        \
        printf(__VA_ARGS__); \
        printf("\n");        \
    } while (0)

static inline int tap_done(void)
{
    printf("1..%d\n", tap__n);
    return tap__failed ? 1 : 0;
}

#endif
