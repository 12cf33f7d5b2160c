/* deps.h: the Python environment a script runs with. For now: the base
 * environment, a virtual environment made once per interpreter with
 * --without-pip, so that scripts see the standard library and nothing else
 * (no user site, no Debian dist-packages). */
#ifndef RMS_DEPS_H
#define RMS_DEPS_H

#include "util.h"

/* Returns in *env_dir (caller frees) the base environment for python under
 * STATE/envs, making it first if needed. Concurrent callers wait for one
 * build (a lock per key); a build is made in a temporary directory and
 * renamed into place only when complete, so a half-built one is never used.
 * On failure returns -errno and a one-line reason in err. */
int deps_base_env(const char *state_dir, const char *python, char **env_dir, char *err, size_t errlen) must_check;

/* The interpreter inside an environment directory (caller frees). */
char *deps_env_python(const char *env_dir);

#endif
