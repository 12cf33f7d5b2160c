/* key.c: reads and writes the field of a configuration key through its row
 * (key.h), whatever the struct and the width of the field. */
#include "config.h"

#include "key.h"

#include <stdbool.h>
#include <string.h>

uint64_t key_get(const void *base, const struct key_def *d)
{
    const char *p = (const char *)base + d->offset;
    switch (d->size) {
    case 1: {
        bool b;
        memcpy(&b, p, 1);
        return b;
    }
    case 4: {
        int32_t v; /* an enum (maybe negative: values[]) or a uint32_t */
        memcpy(&v, p, 4);
        return d->type == KEY_ENUM || d->type == KEY_TRISTATE ? (uint64_t)(int64_t)v : (uint32_t)v;
    }
    default: {
        uint64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

void key_put(void *base, const struct key_def *d, uint64_t v)
{
    char *p = (char *)base + d->offset;
    switch (d->size) {
    case 1: {
        bool b = v != 0;
        memcpy(p, &b, 1);
        break;
    }
    case 4: {
        uint32_t w = (uint32_t)v;
        memcpy(p, &w, 4);
        break;
    }
    default:
        memcpy(p, &v, 8);
    }
}

void key_defaults(void *base, const struct key_def *defs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct key_def *d = &defs[i];
        if (d->type == KEY_ENUM || d->type == KEY_TRISTATE)
            key_put(base, d, d->values ? (uint64_t)(int64_t)d->values[d->dflt] : d->dflt);
        else if (d->size && (d->type <= KEY_COUNT))
            key_put(base, d, d->dflt);
    }
}

const struct key_def *key_find(const struct key_def *defs, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(defs[i].key, name))
            return &defs[i];
    return NULL;
}
