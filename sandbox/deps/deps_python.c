/* deps_python.c: what runmyscript needs to know about an interpreter (its
 * version, platform, pip and standard-library names), asked of it once and
 * kept in STATE/cache/python-KEY.info, and the small pieces every helper
 * deps runs shares: its environment and its one-line reason. */
#include "config.h"

#include "deps_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sha256.h"
#include "workspace.h"

#define DEPS_INFO_TIMEOUT_MS 60000
#define DEPS_INFO_MAX (512 * 1024) /* bytes of an interpreter's info */

const char *const deps__helper_envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL};

int deps__interpreter_key(const char *python, char out[17], char *err, size_t errlen)
{
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(python, real) || stat(real, &st) < 0) {
        int e = errno;
        snprintf(err, errlen, "python interpreter %s: %s", python, strerror(e));
        return -e;
    }
    if (!S_ISREG(st.st_mode) || !(st.st_mode & 0111)) {
        snprintf(err, errlen, "python interpreter %s is not an executable file", python);
        return -EACCES;
    }
    char id[PATH_MAX + 128], hex[65];
    int n = snprintf(id, sizeof id, "%s\n%llu\n%lld.%09ld\n%llu", real, (unsigned long long)st.st_size,
                     (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (unsigned long long)st.st_ino);
    sha256_hex(id, (size_t)n, hex);
    memcpy(out, hex, 16);
    out[16] = '\0';
    return 0;
}

const char *deps__last_line(char *out)
{
    if (!out)
        return "";
    char *end = out + strlen(out);
    while (end > out && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
        *--end = '\0';
    char *nl = strrchr(out, '\n');
    return nl ? nl + 1 : out;
}

/* Asked of the interpreter once: its version, platform, the pip it would
 * run, and every standard-library module name. */
static const char info_script[] =
    "import os, sys, sysconfig\n"
    "print('runmyscript-python 1')\n"
    "print('version %d.%d.%d' % sys.version_info[:3])\n"
    "print('platform', sysconfig.get_platform())\n"
    "try:\n"
    "    import importlib.util\n"
    "    s = importlib.util.find_spec('pip')\n"
    "    r = os.path.join(s.submodule_search_locations[0], '__pip-runner__.py') if s else ''\n"
    "except Exception:\n"
    "    r = ''\n"
    "print('pip_runner', r if r and os.path.isfile(r) else '')\n"
    "for n in sorted(set(sys.stdlib_module_names) | set(sys.builtin_module_names)):\n"
    "    print('stdlib', n)\n";

void deps_python_free(struct deps_python *info)
{
    free(info->path);
    free(info->version);
    free(info->platform);
    free(info->pip_runner);
    strv_free(&info->stdlib);
    memset(info, 0, sizeof *info);
}

static int parse_info(char *text, struct deps_python *info)
{
    char *save = NULL;
    bool header = false;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        const char *v = sp ? sp + 1 : "";
        if (sp)
            *sp = '\0';
        int rc = 0;
        if (!strcmp(line, "runmyscript-python"))
            header = !strcmp(v, "1");
        else if (!strcmp(line, "version"))
            rc = (info->version = strdup(v)) ? 0 : -ENOMEM;
        else if (!strcmp(line, "platform"))
            rc = (info->platform = strdup(v)) ? 0 : -ENOMEM;
        else if (!strcmp(line, "pip_runner") && *v)
            rc = (info->pip_runner = strdup(v)) ? 0 : -ENOMEM;
        else if (!strcmp(line, "stdlib"))
            rc = strv_push(&info->stdlib, v, strlen(v));
        if (rc < 0)
            return rc;
    }
    /* Sorted by the interpreter (code point order is byte order here). */
    for (size_t i = 1; i < info->stdlib.n; i++)
        if (strcmp(info->stdlib.v[i - 1], info->stdlib.v[i]) >= 0)
            return -EINVAL;
    return header && info->version && info->platform && info->stdlib.n >= 10 ? 0 : -EINVAL;
}

int deps_python_info(const char *state_dir, const char *python, struct deps_python *info, char *err,
                     size_t errlen)
{
    memset(info, 0, sizeof *info);
    int rc = deps__interpreter_key(python, info->key, err, errlen);
    if (rc < 0)
        return rc;
    info->path = strdup(python);
    if (!info->path)
        return -ENOMEM;
    cleanup_free char *cache = NULL, *text = NULL;
    if (asprintf(&cache, "%s/cache/python-%s.info", state_dir, info->key) < 0)
        return -ENOMEM;
    size_t len;
    if (util_read_file_at(AT_FDCWD, cache, DEPS_INFO_MAX, &text, &len) == 0) {
        if (parse_info(text, info) == 0)
            return 0;
        /* A damaged cache is asked again. */
        free(info->version);
        free(info->platform);
        free(info->pip_runner);
        info->version = info->platform = info->pip_runner = NULL;
        strv_free(&info->stdlib);
    }
    return deps__ask_python(state_dir, python, cache, info, err, errlen);
}

/* Asks the interpreter and caches the answer. */
int deps__ask_python(const char *state_dir, const char *python, const char *cache, struct deps_python *info,
                     char *err, size_t errlen)
{
    int rc;
    const char *argv[] = {python, "-I", "-c", info_script, NULL};
    cleanup_free char *out = NULL;
    int st = 0;
    rc = proc_run(argv, deps__helper_envp, DEPS_INFO_TIMEOUT_MS, DEPS_INFO_MAX, &out, &st, NULL, NULL);
    if (rc < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        snprintf(err, errlen, "asking %s about itself failed (it needs Python 3.10 or later): %s", python,
                 deps__last_line(out));
        return rc < 0 ? rc : -EIO;
    }
    cleanup_free char *copy = strdup(out);
    if (!copy)
        return -ENOMEM;
    if (parse_info(copy, info) < 0) {
        snprintf(err, errlen, "%s did not say what it is (it needs Python 3.10 or later)", python);
        return -EIO;
    }
    rc = ws_init_state(state_dir);
    cleanup_fd int cfd = -1;
    if (rc == 0) {
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/cache", state_dir);
        cfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        rc = cfd < 0 ? -errno : 0;
    }
    if (rc == 0)
        rc = util_write_file_atomic(cfd, strrchr(cache, '/') + 1, out, strlen(out), 0644);
    if (rc < 0)
        log_msg(LOG_LVL_WARN, "could not cache what %s is in %s: %s", python, cache, strerror(-rc));
    return 0; /* the cache only saves time */
}

static int cmp_strp(const void *a, const void *b)
{
    return strcmp((const char *)a, *(char *const *)b);
}

bool deps_python_is_stdlib(const struct deps_python *info, const char *module)
{
    return info->stdlib.n && bsearch(module, info->stdlib.v, info->stdlib.n, sizeof *info->stdlib.v, cmp_strp);
}

char *deps_env_python(const char *env_dir)
{
    char *p;
    if (asprintf(&p, "%s/bin/python3", env_dir) < 0)
        return NULL;
    return p;
}
