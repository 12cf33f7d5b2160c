/* key.h: the row every configuration key is: its name, kind, where its
 * value is stored (offsetof and sizeof into the struct its table
 * describes), its default, range or choices, and one line of documentation.
 * The run and transfer limits (sandbox/exec_limits.c) and every other key
 * (cfg/cfg_keys.c) are rows of this one type; parsing, defaults,
 * validation, `runmyscript config` and the documentation's tables are made
 * from the rows (cfg/). Here, beneath both. */
#ifndef RMS_KEY_H
#define RMS_KEY_H

#include <stddef.h>
#include <stdint.h>

/* How a key's text is read and where its value goes. Numbers and choices
 * live in a field of 1, 4 or 8 bytes (bool, uint32_t or an enum, int64_t or
 * uint64_t); the string kinds in a char * the configuration owns. */
enum key_type {
    KEY_BOOL,      /* on | off (yes/no, true/false, 1/0) */
    KEY_DURATION,  /* milliseconds, int64_t: 30, 1.5s, 500ms, 2m, 1h */
    KEY_SIZE,      /* bytes: 1048576, 64K, 2G */
    KEY_COUNT,     /* a whole number */
    KEY_ENUM,      /* one of choices[]; the value is its index, or values[index] */
    KEY_TRISTATE,  /* auto | on | off (and the bool spellings): choices {"auto", "on", "off"} */
    KEY_STRING,    /* text, not empty */
    KEY_PATH,      /* a path, not empty, made absolute */
    KEY_OPTSTRING, /* text that may be empty; "none" is empty too */
    KEY_SECRET,    /* text that may be empty (then NULL); never printed */
    KEY_RESERVE,   /* a size, or a share of a file system ("5%") */
    KEY_NODE,      /* none, or a node id (1 to 16 of a-z, 0-9) */
    KEY_MODULES,   /* none, or module paths separated by blanks or commas */
    KEY_ALLOW,     /* fetch_allow: addresses and ranges */
};

enum {
    KEY_F_AUTO = 1u << 0,    /* a count or size that also takes "auto" (UINT64_MAX) */
    KEY_F_LIMIT = 1u << 1,   /* a run or transfer limit: its range is told in human units, 0 is
                              * "none" where the range starts at 0 */
    KEY_F_ANYCASE = 1u << 2, /* a choice matched in any case */
    KEY_F_NONE = 1u << 3,    /* an empty optional string is printed "none" (else "") */
};

#define KEY_AUTO UINT64_MAX

struct key_def {
    const char *key;           /* the configuration key; a limit's name in results too */
    enum key_type type;
    unsigned flags;            /* KEY_F_* */
    size_t offset, size;       /* the field, in the struct the table describes */
    uint64_t dflt;             /* the default of a number, bool or choice (its index) */
    const char *dflt_text;     /* the default of a string kind */
    uint64_t min, max;         /* the accepted range of a number; both 0: any */
    const char *const *choices; /* KEY_ENUM, KEY_TRISTATE: the names, NULL-terminated */
    const int *values;         /* ... the value of each (NULL: its index) */
    /* For a KEY_F_AUTO key: what auto is here (cfg_dump prints "auto (it)");
     * base is the struct the table describes. NULL: plain "auto". */
    void (*auto_text)(const void *base, char *out, size_t n);
    const char *doc_default;   /* the documentation's default when the value alone does not say it */
    const char *doc;           /* one line: what the key does (a limit: what crossing it does) */
};

/* A row's field (numbers, bools, choices) read as or written from a
 * uint64_t; a duration's int64_t goes through unchanged. base: the struct
 * the row's table describes. */
uint64_t key_get(const void *base, const struct key_def *d);
void key_put(void *base, const struct key_def *d, uint64_t v);
/* Fills every numeric, bool and choice field of base with its row's
 * default (the string kinds are the owner's: cfg/). */
void key_defaults(void *base, const struct key_def *defs, size_t n);
/* The row named name in defs, or NULL. */
const struct key_def *key_find(const struct key_def *defs, size_t n, const char *name);

#endif
