/* fuzz-pep723.c: libFuzzer target for the PEP 723 block reader and its
 * TOML subset (deps_read_meta in sandbox/deps/deps_meta.c), and for the PEP 440
 * check of the block's requires-python (deps_version_satisfies). A refusal
 * must come with a reason; what is accepted must be well formed. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct deps_meta m = {0};
    char why[512] = "";
    char *code = fuzz_copy(data, size);
    int rc = deps_read_meta(code, size, &m, why, sizeof why);
    if (rc < 0) {
        fuzz_assert(why[0] != '\0', "a refused block has no reason");
    } else {
        fuzz_assert(m.present || (!m.has_dependencies && m.dependencies.n == 0 && !m.requires_python),
                    "no block, yet something was read");
        for (size_t i = 0; i < m.dependencies.n; i++)
            fuzz_assert(m.dependencies.v[i] != NULL, "a NULL dependency");
        if (m.requires_python) {
            int s = deps_version_satisfies("3.11.2", m.requires_python);
            fuzz_assert(s == 0 || s == 1 || s == -EINVAL, "deps_version_satisfies out of range");
        }
    }
    deps_meta_free(&m);
    free(code);
    return 0;
}
