/* deps_scripts.c: the programs of environments and wheels: the first line
 * every environment's scripts have ("#!/usr/bin/env python3"), written
 * over the installer's and a wheel's "#!python"; a wheel's console scripts
 * written from its entry points as pip writes them. */
#include "config.h"

#include "deps_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEPS_SHEBANG "#!/usr/bin/env python3\n"

int deps__set_shebang(int dir, const char *name, const char *text, size_t len, mode_t mode)
{
    const char *nl = memchr(text, '\n', len);
    size_t rest = nl ? len - (size_t)(nl + 1 - text) : 0;
    struct dbuf b;
    dbuf_init(&b, len + sizeof DEPS_SHEBANG);
    int rc = dbuf_append(&b, DEPS_SHEBANG, strlen(DEPS_SHEBANG));
    if (rc == 0 && rest)
        rc = dbuf_append(&b, nl + 1, rest);
    if (rc == 0)
        rc = util_write_file_atomic(dir, name, b.data, b.len, mode);
    dbuf_free(&b);
    return rc;
}

/* "#!python" (and "#!pythonw") is the wheel format's "this environment's
 * interpreter": it becomes what every environment's scripts say. */
int deps__fix_script(int bin, const char *name)
{
    cleanup_free char *text = NULL;
    size_t len;
    int rc = util_read_file_at(bin, name, 64u << 20, &text, &len);
    if (rc < 0)
        return rc;
    if (len < 9 || (memcmp(text, "#!python\n", 9) && memcmp(text, "#!pythonw", 9) &&
                    memcmp(text, "#!python\r", 9)))
        return 0;
    return deps__set_shebang(bin, name, text, len, 0755);
}

static bool dotted_ok(const char *s, size_t n)
{
    if (!n)
        return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool start = i == 0 || s[i - 1] == '.';
        if (c == '.' ? start || i + 1 == n : !(deps__alnum(c) || c == '_') || (start && c >= '0' && c <= '9'))
            return false;
    }
    return true;
}

/* The console scripts of [console_scripts] and [gui_scripts]: "name =
 * module:attr.path [extras]", written as pip writes them. A name or an
 * object reference that is not plain is passed over (it is text the
 * wheel chose, going into a file name and a program). */
int deps__console_scripts(int dir, const char *text, struct dbuf *record)
{
    cleanup_free char *copy = strdup(text);
    if (!copy)
        return -ENOMEM;
    bool on = false;
    char *save = NULL;
    for (char *line = strtok_r(copy, "\r\n", &save); line; line = strtok_r(NULL, "\r\n", &save)) {
        while (*line == ' ' || *line == '\t')
            line++;
        if (*line == '[') {
            on = !strncmp(line, "[console_scripts]", 17) || !strncmp(line, "[gui_scripts]", 13);
            continue;
        }
        char *eq = strchr(line, '=');
        if (!on || !eq || *line == '#' || *line == ';')
            continue;
        size_t nl = (size_t)(eq - line);
        while (nl && (line[nl - 1] == ' ' || line[nl - 1] == '\t'))
            nl--;
        char *ref = eq + 1;
        ref += strspn(ref, " \t");
        size_t nr = strcspn(ref, " \t[");
        char *colon = memchr(ref, ':', nr);
        char name[NAME_MAX + 1];
        if (!nl || nl > 200 || !colon) {
            log_msg(LOG_LVL_DEBUG, "store: an entry point passed over: %.200s", line);
            continue;
        }
        memcpy(name, line, nl);
        name[nl] = '\0';
        size_t nm = (size_t)(colon - ref), na = nr - nm - 1;
        if (strchr(name, '/') || name[0] == '.' || !dotted_ok(ref, nm) || !dotted_ok(colon + 1, na)) {
            log_msg(LOG_LVL_DEBUG, "store: an entry point passed over: %.200s", line);
            continue;
        }
        size_t head = strcspn(colon + 1, ".");
        if (head > na)
            head = na;
        struct dbuf s;
        dbuf_init(&s, 4096);
        int rc = dbuf_printf(&s,
                             DEPS_SHEBANG "# -*- coding: utf-8 -*-\nimport re\nimport sys\nfrom %.*s import %.*s\n"
                                           "if __name__ == '__main__':\n"
                                           "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                                           "    sys.exit(%.*s())\n",
                             (int)nm, ref, (int)head, colon + 1, (int)na, colon + 1);
        cleanup_fd int bin = rc < 0 ? -1 : openat(dir, "bin", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rc == 0 && bin < 0)
            rc = -errno;
        if (rc == 0)
            rc = util_write_file_atomic(bin, name, s.data, s.len, 0755);
        char b64[64];
        deps__record_hash(s.data, s.len, b64);
        if (rc == 0)
            rc = dbuf_printf(record, "../../../bin/%s,sha256=%s,%zu\n", name, b64, s.len);
        dbuf_free(&s);
        if (rc < 0)
            return rc;
    }
    return 0;
}

