/* mcp_prompt.c: prompts/list and prompts/get, the same for every revision
 * (the prompts themselves are fcgi/tools/tools_prompt.c): the request's
 * params checked, the tools module asked, its answer made a result or a
 * JSON-RPC error. In 2026-07-28 prompts/list carries the caching hints
 * tools/list carries: the list changes only with the configuration. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int mcp__prompts(const struct cfg *cfg, const char *version, const char *method, json_object *params,
                 json_object *responses, json_object **result, char *msg, size_t msglen)
{
    *result = NULL;
    if (!strcmp(method, "prompts/list")) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "prompts", tools_prompts_list(cfg));
        if (!strcmp(version, MCP_REVISION_2026)) {
            json_object_object_add(r, "ttlMs", json_object_new_int64(cfg->tools_list_ttl_ms));
            json_object_object_add(r, "cacheScope", json_object_new_string("public"));
        }
        *result = r;
        return 0;
    }
    if (strcmp(method, "prompts/get")) {
        snprintf(msg, msglen, "Method not found: %.200s", method);
        return -32601;
    }
    const char *name = mcp__json_string(params, "name");
    json_object *args = NULL;
    if (!name) {
        snprintf(msg, msglen, "Invalid params: prompts/get needs the prompt's name");
        return -32602;
    }
    if (json_object_is_type(params, json_type_object))
        json_object_object_get_ex(params, "arguments", &args);
    if (json_object_is_type(args, json_type_null))
        args = NULL;
    char err[300];
    int rc = tools_prompt_get(cfg, version, name, args, responses, result, err, sizeof err);
    if (rc == -ENOENT || rc == -EINVAL) {
        snprintf(msg, msglen, "Invalid params: %s", err);
        return -32602;
    }
    if (rc < 0) {
        log_msg(LOG_LVL_ERROR, "prompts/get %s: %s", name, err);
        snprintf(msg, msglen, "Internal error: cannot make the prompt");
        return -32603;
    }
    return 0;
}
