/* strv.c: a growable list of owned strings (strv.h). */
#include "config.h"

#include "strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void strv_free(struct strv *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->v[i]);
    free(s->v);
    memset(s, 0, sizeof *s);
}

int strv_push(struct strv *s, const char *str, size_t len)
{
    if (UTIL_GROW(s->v, s->n, s->cap, 8) < 0)
        return -ENOMEM;
    char *copy = strndup(str, len);
    if (!copy)
        return -ENOMEM;
    s->v[s->n++] = copy;
    return 0;
}

bool strv_has(const struct strv *s, const char *str)
{
    for (size_t i = 0; i < s->n; i++)
        if (!strcmp(s->v[i], str))
            return true;
    return false;
}
