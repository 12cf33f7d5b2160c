/* fuzz-requirement.c: libFuzzer target for the requirement parser
 * (deps_check_requirement in sandbox/deps/deps_req.c: PEP 508, the refusals of
 * options, paths and URLs) and PEP 440 specifier sets
 * (deps_version_satisfies). Properties: an accepted requirement's
 * canonical spelling is accepted again and is its own canonical spelling,
 * and its name is PEP 503 normal; nothing accepted starts with '-'. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deps.h"
#include "fuzz.h"

static void check(const char *spec, bool direct)
{
    char why[256] = "";
    char *name = NULL, *canon = NULL;
    int rc = deps_check_requirement(spec, direct, &name, &canon, why, sizeof why);
    if (rc < 0) {
        fuzz_assert(why[0] != '\0', "a refusal has no reason");
        fuzz_assert(!name && !canon, "a refusal returned strings");
        return;
    }
    fuzz_assert(name && canon, "accepted without a name or canonical form");
    fuzz_assert(canon[0] != '-' && name[0] != '-', "an option was accepted");
    char *n2 = deps_normalize_name(name, strlen(name));
    fuzz_assert(n2 && !strcmp(n2, name), "the name is not PEP 503 normal");
    char *name2 = NULL, *canon2 = NULL;
    rc = deps_check_requirement(canon, direct, &name2, &canon2, why, sizeof why);
    fuzz_assert(rc == 0, "the canonical spelling is refused");
    fuzz_assert(!strcmp(name, name2), "the canonical spelling names another distribution");
    fuzz_assert(!strcmp(canon, canon2), "the canonical spelling is not canonical");
    free(n2);
    free(name2);
    free(canon2);
    free(name);
    free(canon);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    /* First byte: which parts to run; the rest is the text (NUL ends it:
     * the functions take C strings). */
    unsigned flags = data[0];
    char *s = fuzz_cstr(data + 1, size - 1);
    check(s, flags & 1);
    if (flags & 2) {
        /* "VERSION;SPECIFIERS" for PEP 440. */
        char *semi = strchr(s, ';');
        if (semi) {
            *semi = '\0';
            int r = deps_version_satisfies(s, semi + 1);
            fuzz_assert(r == 0 || r == 1 || r == -EINVAL, "deps_version_satisfies out of range");
        }
    }
    free(s);
    return 0;
}
