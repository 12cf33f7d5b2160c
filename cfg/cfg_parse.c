/* cfg_parse.c: the values of the configuration as text: numbers,
 * durations, sizes, switches and counts (cfg.h, cfg_internal.h), which every
 * setter of cfg.c and the command line parse the same way, and durations
 * and sizes written back in a form they read. */
#include "config.h"

#include "cfg_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int parse_number(const char *s, double *v, const char **rest)
{
    char num[64];
    size_t n = 0;
    bool dot = false;
    while (isspace((unsigned char)*s))
        s++;
    /* Digits with at most one dot: no signs, no hex, no exponent, no "inf". */
    for (; isdigit((unsigned char)*s) || (*s == '.' && !dot); s++) {
        dot = dot || *s == '.';
        if (n + 1 >= sizeof num)
            return -EINVAL;
        num[n++] = *s;
    }
    num[n] = '\0';
    if (n == 0 || (n == 1 && dot))
        return -EINVAL;
    char *end;
    errno = 0;
    *v = strtod(num, &end);
    if (*end || errno || !isfinite(*v))
        return -EINVAL;
    end = (char *)s;
    while (isspace((unsigned char)*end))
        end++;
    *rest = end;
    return 0;
}

int cfg_parse_duration(const char *s, int64_t *ms)
{
    double v;
    const char *u;
    if (parse_number(s, &v, &u) < 0)
        return -EINVAL;
    double mult;
    if (!*u || !strcmp(u, "s"))
        mult = 1000;
    else if (!strcmp(u, "ms"))
        mult = 1;
    else if (!strcmp(u, "m") || !strcmp(u, "min"))
        mult = 60000;
    else if (!strcmp(u, "h"))
        mult = 3600000;
    else if (!strcmp(u, "d"))
        mult = 86400000;
    else
        return -EINVAL;
    double r = v * mult;
    if (r > 9e15)
        return -EINVAL;
    *ms = (int64_t)llround(r);
    return 0;
}

int cfg_parse_size(const char *s, uint64_t *bytes)
{
    double v;
    const char *u;
    if (parse_number(s, &v, &u) < 0)
        return -EINVAL;
    static const struct {
        const char *suffix;
        double mult;
    } units[] = {
        {"", 1}, {"B", 1}, {"K", 1024.0}, {"KB", 1024.0}, {"KiB", 1024.0}, {"M", 1048576.0}, {"MB", 1048576.0},
        {"MiB", 1048576.0}, {"G", 1073741824.0}, {"GB", 1073741824.0}, {"GiB", 1073741824.0},
        {"T", 1099511627776.0}, {"TB", 1099511627776.0}, {"TiB", 1099511627776.0},
    };
    for (size_t i = 0; i < ARRAY_SIZE(units); i++) {
        if (!strcasecmp(u, units[i].suffix)) {
            double r = v * units[i].mult;
            if (r > 1.8e19 || (units[i].mult == 1 && v != floor(v)))
                return -EINVAL;
            *bytes = (uint64_t)llround(r);
            return 0;
        }
    }
    return -EINVAL;
}

int cfg_parse_bool(const char *s, bool *v)
{
    static const char *const yes[] = {"on", "true", "yes", "1"}, *const no[] = {"off", "false", "no", "0"};
    for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
        if (!strcasecmp(s, yes[i])) {
            *v = true;
            return 0;
        }
        if (!strcasecmp(s, no[i])) {
            *v = false;
            return 0;
        }
    }
    return -EINVAL;
}

int cfg__parse_count(const char *s, uint64_t *v)
{
    char *end;
    while (isspace((unsigned char)*s))
        s++;
    if (!isdigit((unsigned char)*s))
        return -EINVAL;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    while (isspace((unsigned char)*end))
        end++;
    if (errno || *end)
        return -EINVAL;
    *v = x;
    return 0;
}

/* A duration in the largest unit that holds it exactly (24h, 5m, 60s is
 * 1m, 1500ms), a size in the largest binary unit (96M, 512K): as the
 * documentation writes them, and as cfg_parse_duration and cfg_parse_size
 * read them back. */
void cfg__format_ms(uint64_t v, char *out, size_t n)
{
    static const struct {
        uint64_t ms;
        const char *unit;
    } units[] = {{3600000, "h"}, {60000, "m"}, {1000, "s"}};
    for (size_t i = 0; v && i < ARRAY_SIZE(units); i++)
        if (v % units[i].ms == 0) {
            snprintf(out, n, "%llu%s", (unsigned long long)(v / units[i].ms), units[i].unit);
            return;
        }
    snprintf(out, n, v ? "%llums" : "%llu", (unsigned long long)v);
}

void cfg__format_size(uint64_t v, char *out, size_t n)
{
    static const char *const u[] = {"", "K", "M", "G", "T"};
    size_t i = 0;
    while (v && v % 1024 == 0 && i + 1 < ARRAY_SIZE(u)) {
        v /= 1024;
        i++;
    }
    snprintf(out, n, "%llu%s", (unsigned long long)v, u[i]);
}
