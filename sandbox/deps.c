/* deps.c: the Python environments scripts run with. */
#include "config.h"

#include "deps.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc.h"
#include "sha256.h"
#include "workspace.h"

#define DEPS_VENV_TIMEOUT_MS 120000

char *deps_env_python(const char *env_dir)
{
    char *p;
    if (asprintf(&p, "%s/bin/python3", env_dir) < 0)
        return NULL;
    return p;
}

/* A key for the interpreter: its real path and the identity of the file, so
 * that an upgraded python gets a new environment. Cheap: no exec. */
static int interpreter_key(const char *python, char out[17], char *err, size_t errlen)
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

static bool env_complete(const char *dir)
{
    char p[PATH_MAX];
    struct stat st;
    snprintf(p, sizeof p, "%s/pyvenv.cfg", dir);
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int deps_base_env(const char *state_dir, const char *python, char **env_dir, char *err, size_t errlen)
{
    char key[17];
    int rc = interpreter_key(python, key, err, errlen);
    if (rc < 0)
        return rc;
    cleanup_free char *dir = NULL;
    if (asprintf(&dir, "%s/envs/base-%s", state_dir, key) < 0)
        return -ENOMEM;
    if (env_complete(dir)) {
        *env_dir = steal_pointer(&dir);
        return 0;
    }

    rc = ws_init_state(state_dir);
    if (rc < 0) {
        snprintf(err, errlen, "state directory %s: %s", state_dir, strerror(-rc));
        return rc;
    }
    /* One builder per key: the others wait on the lock, then find it done. */
    char lockpath[PATH_MAX];
    snprintf(lockpath, sizeof lockpath, "%s/envs/.base-%s.lock", state_dir, key);
    cleanup_fd int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (lock < 0) {
        rc = -errno;
        snprintf(err, errlen, "lock %s: %s", lockpath, strerror(errno));
        return rc;
    }
    while (flock(lock, LOCK_EX) < 0) {
        if (errno != EINTR) {
            rc = -errno;
            snprintf(err, errlen, "lock %s: %s", lockpath, strerror(errno));
            return rc;
        }
    }
    if (env_complete(dir)) {
        *env_dir = steal_pointer(&dir);
        return 0;
    }
    /* Left over from a build that was killed: never used, removed now. */
    discard(util_rm_rf_at(AT_FDCWD, dir));

    char id[WS_ID_LEN + 1];
    rc = ws_new_id(id);
    if (rc < 0)
        return rc;
    cleanup_free char *tmp = NULL;
    if (asprintf(&tmp, "%s/envs/.tmp-base-%s-%.8s", state_dir, key, id) < 0)
        return -ENOMEM;
    const char *argv[] = {python, "-I", "-m", "venv", "--without-pip", tmp, NULL};
    const char *envp[] = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", NULL};
    cleanup_free char *out = NULL;
    int st = 0;
    rc = proc_run(argv, envp, DEPS_VENV_TIMEOUT_MS, 8192, &out, &st, NULL, NULL);
    if (rc < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !env_complete(tmp)) {
        /* The last line of the output says why. */
        char *last = out ? out + strlen(out) : NULL;
        while (last && last > out && last[-1] == '\n')
            *--last = '\0';
        char *nl = out ? strrchr(out, '\n') : NULL;
        snprintf(err, errlen, "making the base environment with %s -m venv failed%s%s", python,
                 out && *out ? ": " : "", out && *out ? (nl ? nl + 1 : out) : "");
        discard(util_rm_rf_at(AT_FDCWD, tmp));
        return rc < 0 ? rc : -EIO;
    }
    if (rename(tmp, dir) < 0) {
        rc = -errno;
        snprintf(err, errlen, "publishing the base environment: %s", strerror(errno));
        discard(util_rm_rf_at(AT_FDCWD, tmp));
        return rc;
    }
    *env_dir = steal_pointer(&dir);
    return 0;
}
