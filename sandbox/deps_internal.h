/* deps_internal.h: what the parts of the deps module share: the
 * interpreter's facts (deps_python.c), the installer's run (deps_install.c)
 * and the environments built with it (deps_env.c), the PEP 440 operators
 * (deps_version.c) the PEP 508 parser (deps_req.c) reads too. */
#ifndef RMS_DEPS_INTERNAL_H
#define RMS_DEPS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deps.h"

/* ASCII letters and digits (isalnum() would follow the locale). */
static inline bool deps__alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* The length of the PEP 440 comparison operator at s ("===", "==", "~=",
 * "!=", "<=", ">=", "<", ">"), or 0 when there is none. */
size_t deps__version_op(const char *s);

/* The environment of the helpers deps runs (venv, the interpreter's
 * questions, the installer): a fixed PATH and locale, nothing inherited. */
extern const char *const deps__helper_envp[];

/* The last non-empty line of a helper's output (cut in place), for a
 * one-line reason; "" for NULL. */
const char *deps__last_line(char *out);

/* A key for the interpreter: its real path and the identity of the file,
 * so that an upgraded python gets a new environment. Cheap: no exec. 0, or
 * -errno with the reason in err. */
int deps__interpreter_key(const char *python, char out[17], char *err, size_t errlen) must_check;

/* Asks the interpreter what it is and caches the answer at cache (a path
 * under STATE/cache). 0, or -errno with the reason in err. */
int deps__ask_python(const char *state_dir, const char *python, const char *cache, struct deps_python *info,
                     char *err, size_t errlen) must_check;

/* uv on PATH (the server's own PATH), or NULL (caller frees). */
char *deps__find_uv(void);

/* Runs the installer (uv when uv is not NULL, else pip's runner) for set
 * into the environment being built at tmp, in the jail io describes,
 * bounded by install_ms. DEPS_ENV_READY; DEPS_ENV_INSTALL_FAILED or
 * DEPS_ENV_INSTALL_TIMEOUT with *failed the requirement that failed (or
 * NULL; caller frees); -errno when the service failed. The reason in err
 * in every case but success. */
int deps__install(const struct deps_config *cfg, const char *state_dir, const char *uv, const char *pip_runner,
                  const struct deps_set *set, int64_t install_ms, const struct deps_install_io *io, const char *tmp,
                  char **failed, char *err, size_t errlen) must_check;

#endif
