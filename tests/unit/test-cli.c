/* test-cli.c: the escaping of text the CLI shows a terminal (cli_escape.c):
 * each kind of control byte, C1, every kind of invalid UTF-8, valid text
 * passing unchanged, a sequence split between chunks at every offset, one
 * left unfinished, and the --escape words. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_internal.h"
#include "tap.h"

/* s[0..n) fed in two chunks cut at cut, then flushed: what is shown. */
static char *escape_cut(const char *s, size_t n, size_t cut)
{
    struct cli__esc st = {0};
    struct dbuf b;
    dbuf_init(&b, n * 4 + 16);
    int rc = cli__esc_feed(&st, s, cut, &b);
    if (rc == 0)
        rc = cli__esc_feed(&st, s + cut, n - cut, &b);
    if (rc == 0)
        rc = cli__esc_flush(&st, &b);
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}

struct esc_case {
    const char *in;
    size_t len; /* 0: strlen */
    const char *want;
    const char *what;
};

static const struct esc_case cases[] = {
    {"plain text", 0, "plain text", "ASCII passes"},
    {"tab\there", 0, "tab\there", "a tab passes"},
    {"\033[2J\033[31mred", 0, "\\033[2J\\033[31mred", "ESC is \\033"},
    {"\033]0;title\a", 0, "\\033]0;title\\a", "an OSC title, BEL by name"},
    {"a\rb\bc\vd\fe\nf", 0, "a\\rb\\bc\\vd\\fe\\nf", "\\r \\b \\v \\f \\n by name"},
    {"\001\016\037\177", 0, "\\001\\016\\037\\177", "other C0 and DEL as octal"},
    {"nul:\0!", 6, "nul:\\000!", "NUL"},
    {"\xc2\x9b" "2J \xc2\x85 \xc2\x80", 0, "\\302\\2332J \\302\\205 \\302\\200", "C1 (CSI, NEL, U+0080), byte by byte"},
    {"\xc2\xa0 \xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", 0,
     "\xc2\xa0 \xc3\xa9 \xe2\x98\x83 \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf", "valid UTF-8 passes (U+00A0 to U+10FFFF)"},
    {"\x9b \x80 \xbf", 0, "\\233 \\200 \\277", "a lone continuation byte"},
    {"\xff\xfe\xf5\xc0\xc1", 0, "\\377\\376\\365\\300\\301", "bytes no sequence starts with"},
    {"\xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf", 0, "\\300\\257 \\340\\200\\257 \\360\\200\\200\\257", "overlong forms"},
    {"\xed\xa0\x80 \xed\x9f\xbf", 0, "\\355\\240\\200 \xed\x9f\xbf", "a surrogate, and U+D7FF beside it"},
    {"\xf4\x90\x80\x80", 0, "\\364\\220\\200\\200", "past U+10FFFF"},
    {"\xe2\x98(", 0, "\\342\\230(", "a sequence cut by an ASCII byte"},
    {"\xe2\x98\xe2\x98\x83", 0, "\\342\\230\xe2\x98\x83", "a sequence cut by a new one"},
    {"end\xf0\x9f\x98", 0, "end\\360\\237\\230", "a sequence left unfinished at the end"},
    {"back\\slash \\033", 0, "back\\slash \\033", "a backslash is not doubled"},
};

static void test_cases(void)
{
    for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
        const struct esc_case *c = &cases[i];
        size_t n = c->len ? c->len : strlen(c->in);
        bool same = true;
        char *first = NULL;
        /* Cut at every offset: the result may not depend on the chunks. */
        for (size_t cut = 0; cut <= n; cut++) {
            char *got = escape_cut(c->in, n, cut);
            if (!got || strcmp(got, c->want))
                same = false;
            if (!first)
                first = got;
            else
                free(got);
        }
        is_str(first, c->want, "%s", c->what);
        ok(same, "%s: the same cut at every offset", c->what);
        free(first);
    }
}

/* Whatever the bytes, what is shown has no control byte but tab, no DEL,
 * no C1, and is valid UTF-8; valid text without controls passes as is. */
static void test_random(void)
{
    unsigned seed = 7;
    int bad = 0, changed = 0;
    for (int round = 0; round < 2000; round++) {
        char in[32];
        size_t n = (size_t)(rand_r(&seed) % (int)sizeof in);
        for (size_t i = 0; i < n; i++) {
            /* Bytes around the interesting ranges more often than not. */
            static const unsigned char pick[] = {0x1b, 0x0d, 0x80, 0x9b, 0xc2, 0xe2, 0xed, 0xf0, 0xf4, 0xbf, 'a'};
            in[i] = (char)(rand_r(&seed) % 2 ? pick[rand_r(&seed) % (int)sizeof pick] : rand_r(&seed) % 256);
        }
        char *got = escape_cut(in, n, n ? (size_t)rand_r(&seed) % n : 0);
        if (!got || !util_utf8_valid(got, strlen(got))) {
            bad++;
            free(got);
            continue;
        }
        for (const unsigned char *p = (const unsigned char *)got; *p; p++)
            if ((*p < 0x20 && *p != '\t') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] < 0xa0))
                bad++;
        bool plain = util_utf8_valid(in, n) && !memchr(in, 0, n);
        for (size_t i = 0; plain && i < n; i++)
            if (((unsigned char)in[i] < 0x20 && in[i] != '\t') || in[i] == 0x7f ||
                ((unsigned char)in[i] == 0xc2 && i + 1 < n && (unsigned char)in[i + 1] < 0xa0))
                plain = false;
        if (plain && (strlen(got) != n || memcmp(got, in, n)))
            changed++;
        free(got);
    }
    is_int(bad, 0, "2000 random strings: nothing shown is a control, C1 or invalid UTF-8");
    is_int(changed, 0, "and those that were printable UTF-8 are shown unchanged");
}

static void test_whole(void)
{
    char *s = cli__escaped("name\033[2J\n.csv");
    is_str(s, "name\\033[2J\\n.csv", "cli__escaped: a name with ESC and a newline");
    free(s);
    s = cli__escaped("");
    is_str(s, "", "cli__escaped: the empty string");
    free(s);
}

static void test_parse(void)
{
    enum cli__escape m = CLI__ESCAPE_NEVER;
    is_int(cli__escape_parse("auto", &m), 0, "--escape auto");
    is_int(m, CLI__ESCAPE_AUTO, "is auto");
    is_int(cli__escape_parse("always", &m), 0, "--escape always");
    is_int(m, CLI__ESCAPE_ALWAYS, "is always");
    is_int(cli__escape_parse("never", &m), 0, "--escape never");
    is_int(m, CLI__ESCAPE_NEVER, "is never");
    is_int(cli__escape_parse("Always", &m), -EINVAL, "another word is -EINVAL");
    is_int(cli__escape_parse("", &m), -EINVAL, "so is the empty one");
    is_int(m, CLI__ESCAPE_NEVER, "and leaves the mode as it was");
    ok(cli__escape_on(CLI__ESCAPE_ALWAYS, -1), "always: escaped on anything");
    ok(!cli__escape_on(CLI__ESCAPE_NEVER, -1), "never: on nothing");
    ok(!cli__escape_on(CLI__ESCAPE_AUTO, -1), "auto: not on what is not a terminal");
}

int main(void)
{
    test_cases();
    test_random();
    test_whole();
    test_parse();
    return tap_done();
}
