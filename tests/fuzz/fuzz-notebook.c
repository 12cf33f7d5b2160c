/* fuzz-notebook.c: libFuzzer target for a notebook's reading (nb_script in
 * sandbox/nb.c): the JSON of an .ipynb checked and made a run's script. A
 * refusal must come with a reason and leave nothing; what is taken must
 * give the cells' code and a script that ends in the driver's call. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "nb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct exec_limits lim = {.value_bytes = 65536, .log_bytes = 1 << 20};
    char err[512] = "";
    char *cells = NULL, *script = NULL;
    size_t cells_len = 0, script_len = 0;
    char *text = fuzz_copy(data, size);
    int rc = nb_script(text, size, "../a b/fuzz.ipynb", &lim, &cells, &cells_len, &script, &script_len, err,
                       sizeof err);
    if (rc < 0) {
        fuzz_assert(rc == -EINVAL || rc == -ENOMEM, "nb_script: an errno out of its contract");
        fuzz_assert(err[0] != '\0', "a refused notebook has no reason");
        fuzz_assert(!cells && !script, "a refusal left something");
    } else {
        fuzz_assert(cells && script && strlen(cells) == cells_len && strlen(script) == script_len,
                    "what was taken is not NUL-terminated at its length");
        fuzz_assert(strstr(script, "\nraise SystemExit(_rms_notebook(_rms_display_make, \"") != NULL,
                    "the script does not end in the driver's call");
        fuzz_assert(strstr(script, ", \"fuzz.ipynb\", 65536, 1048576))\n") != NULL,
                    "the executed notebook's name is not made safe");
    }
    free(cells);
    free(script);
    free(text);
    return 0;
}
