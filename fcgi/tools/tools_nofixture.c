/* tools_nofixture.c: no fixture tools, in the program that is installed
 * (tools_fixture.c has the conformance suite's, for tests/runmyscript-test
 * only). test_fixture_tools = on then lists and calls nothing more. */
#include "config.h"

#include "tools_internal.h"

#include <errno.h>

/* One entry that is never listed: C has no empty arrays. */
const struct tools_def tools__fixture_defs[] = {{0}};
const size_t tools__n_fixture_defs = 0;
const struct tools_prompt_def tools__fixture_prompts[] = {{0}};
const size_t tools__n_fixture_prompts = 0;

enum tools_task tools__fixture_task(const char *name)
{
    (void)name;
    return TOOLS_TASK_NEVER;
}

const char *tools__fixture_needs(const char *name)
{
    (void)name;
    return NULL;
}

bool tools__fixture_gathers(const char *name)
{
    (void)name;
    return false;
}

int tools__fixture_call(const struct tools_ctx *c, const char *name, json_object *args, json_object **result)
{
    (void)args;
    (void)c;
    (void)name;
    *result = NULL;
    return -ENOENT;
}

void tools__fixture_resources(json_object *arr)
{
    (void)arr;
}

void tools__fixture_templates(json_object *arr)
{
    (void)arr;
}

int tools__fixture_read(const char *uri, json_object **result)
{
    (void)uri;
    *result = NULL;
    return -ENOENT;
}

int tools__fixture_complete(const char *prompt, const char *arg, const char *value, json_object **values)
{
    (void)prompt;
    (void)arg;
    (void)value;
    *values = NULL;
    return -ENOENT;
}
