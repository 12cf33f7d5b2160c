/* jail_runner.c: the line that runs a script through runner.py (a script
 * whose last expression's value is shown), the same cold (after the
 * runner's text, as `python3 -c`) and warm (in the zygote's run): the
 * paths hex-quoted, so that nothing of them is Python. */
#include "config.h"

#include "jail.h"

#include <stdio.h>
#include <string.h>

static int hex_arg(struct dbuf *b, const char *s)
{
    int rc = dbuf_printf(b, "bytes.fromhex('");
    for (size_t i = 0; rc == 0 && s[i]; i++)
        rc = dbuf_printf(b, "%02x", (unsigned char)s[i]);
    return rc ? rc : dbuf_printf(b, "').decode('utf-8', 'surrogateescape')");
}

char *jail_runner_call(const char *script, const char *value_file, uint64_t limit, bool cold)
{
    struct dbuf b;
    dbuf_init(&b, 8 * 4096);
    int rc = dbuf_printf(&b, "__import__('sys').modules.pop('_rms_run').main(");
    if (rc == 0)
        rc = hex_arg(&b, script);
    if (rc == 0)
        rc = dbuf_printf(&b, ", ");
    if (rc == 0)
        rc = hex_arg(&b, value_file);
    if (rc == 0)
        rc = dbuf_printf(&b, ", %llu, %s)\n", (unsigned long long)limit, cold ? "True" : "False");
    if (rc < 0) {
        dbuf_free(&b);
        return NULL;
    }
    return dbuf_steal(&b, NULL);
}
