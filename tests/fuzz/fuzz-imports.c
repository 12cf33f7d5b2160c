/* fuzz-imports.c: libFuzzer target for the import tokenizer
 * (deps_scan_imports in sandbox/deps/deps_scan.c): any bytes, as a script's
 * source, must give a list of names or an error, never a crash, an
 * out-of-bounds read or a hang. Every name it returns must be a Python
 * identifier (what the map lookup and the installer's argv get). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct strv out = {0};
    /* A heap copy of exactly size bytes: ASan sees a read past the end. */
    char *code = fuzz_copy(data, size);
    int rc = deps_scan_imports(code, size, &out);
    if (rc == 0 || rc == -E2BIG)
        for (size_t i = 0; i < out.n; i++)
            fuzz_assert(fuzz_is_identifier(out.v[i]), "an import name is not an identifier");
    strv_free(&out);
    free(code);
    return 0;
}
