/* cli_escape.c: what the CLI shows a terminal of text it did not write (the
 * script's output, artifact names and summaries, the installer's lines): a
 * control character or a byte that is not UTF-8 could move the cursor,
 * clear the screen or overwrite a line, so it is shown escaped, as ls -b
 * and git show odd bytes in file names. See doc/cli.md, "On a terminal". */
#include "config.h"

#include "cli_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Room for one escaped byte: a backslash and three octal digits. */
#define CLI_ESC_BYTE_MAX 4

int cli__escape_parse(const char *s, enum cli__escape *mode)
{
    static const char *const names[] = {
        [CLI__ESCAPE_AUTO] = "auto",
        [CLI__ESCAPE_ALWAYS] = "always",
        [CLI__ESCAPE_NEVER] = "never",
    };
    for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
        if (!strcmp(s, names[i])) {
            *mode = (enum cli__escape)i;
            return 0;
        }
    }
    return -EINVAL;
}

bool cli__escape_on(enum cli__escape mode, int fd)
{
    return mode == CLI__ESCAPE_ALWAYS || (mode == CLI__ESCAPE_AUTO && isatty(fd));
}

/* One byte as \a \b \n \v \f \r where C has a name for it, else as \ooo. */
static int esc_byte(struct dbuf *out, unsigned char c)
{
    static const char named[] = {['\a'] = 'a', ['\b'] = 'b', ['\n'] = 'n', ['\v'] = 'v', ['\f'] = 'f', ['\r'] = 'r'};
    char s[CLI_ESC_BYTE_MAX + 1];
    if (c < sizeof named && named[c])
        return dbuf_append(out, (char[]){'\\', named[c]}, 2);
    snprintf(s, sizeof s, "\\%03o", c);
    return dbuf_append(out, s, CLI_ESC_BYTE_MAX);
}

/* The length of the UTF-8 sequence that c starts: 1 for ASCII, 0 when no
 * sequence starts with c (a continuation byte, C0, C1, F5..FF). */
static unsigned seq_len(unsigned char c)
{
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return 2;
    if (c >= 0xe0 && c <= 0xef)
        return 3;
    if (c >= 0xf0 && c <= 0xf4)
        return 4;
    return 0;
}

/* Whether c may be the byte after lead: the second byte is where an
 * overlong form, a surrogate or a code point past U+10FFFF shows (the same
 * rule as util_utf8_valid). */
static bool next_ok(unsigned char lead, unsigned have, unsigned char c)
{
    if ((c & 0xc0) != 0x80)
        return false;
    if (have > 1)
        return true;
    switch (lead) {
    case 0xe0: return c >= 0xa0;
    case 0xed: return c <= 0x9f;
    case 0xf0: return c >= 0x90;
    case 0xf4: return c <= 0x8f;
    default: return true;
    }
}

int cli__esc_flush(struct cli__esc *st, struct dbuf *out)
{
    int rc = 0;
    for (unsigned i = 0; i < st->have && rc == 0; i++)
        rc = esc_byte(out, st->seq[i]);
    st->have = st->need = 0;
    return rc;
}

/* A whole sequence in st: as it is, unless it is a C1 control (U+0080 to
 * U+009F, which a terminal may take as ESC and a letter). */
static int seq_done(struct cli__esc *st, struct dbuf *out)
{
    size_t len = st->need;
    if (len == 2 && st->seq[0] == 0xc2 && st->seq[1] < 0xa0)
        return cli__esc_flush(st, out);
    st->have = st->need = 0;
    return dbuf_append(out, st->seq, len);
}

/* One byte that starts something, st holding nothing. */
static int esc_start(struct cli__esc *st, unsigned char c, struct dbuf *out)
{
    unsigned len = seq_len(c);
    if (len == 0 || (len == 1 && ((c < 0x20 && c != '\t') || c == 0x7f)))
        return esc_byte(out, c);
    if (len == 1)
        return dbuf_append(out, &c, 1);
    st->seq[0] = c;
    st->have = 1;
    st->need = (unsigned char)len;
    return 0;
}

int cli__esc_feed(struct cli__esc *st, const char *s, size_t n, struct dbuf *out)
{
    const unsigned char *p = (const unsigned char *)s;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++) {
        if (st->have && next_ok(st->seq[0], st->have, p[i])) {
            st->seq[st->have++] = p[i];
            if (st->have == st->need)
                rc = seq_done(st, out);
            continue;
        }
        /* A sequence cut short is escaped byte by byte; the byte that cut
         * it starts afresh. */
        if (st->have)
            rc = cli__esc_flush(st, out);
        if (rc == 0)
            rc = esc_start(st, p[i], out);
    }
    return rc;
}

char *cli__escaped(const char *s)
{
    size_t n = strlen(s);
    struct cli__esc st = {0};
    struct dbuf b;
    /* Each byte becomes at most CLI_ESC_BYTE_MAX: that is the ceiling. */
    dbuf_init(&b, n * CLI_ESC_BYTE_MAX + 1);
    int rc = cli__esc_feed(&st, s, n, &b);
    if (rc == 0)
        rc = cli__esc_flush(&st, &b);
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}
