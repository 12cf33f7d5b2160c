/* mcp_proto.c: the protocol's words that every part of the MCP door uses:
 * the revisions we speak, the log levels' names, and a message's JSON text.
 * The bottom of the module: it calls nothing of mcp.c, mcp_call.c or
 * mcp_session.c. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <string.h>

static const char *const versions[] = {"2025-03-26", "2025-06-18", "2025-11-25"};

bool mcp_version_supported(const char *v)
{
    for (size_t i = 0; i < ARRAY_SIZE(versions); i++)
        if (!strcmp(v, versions[i]))
            return true;
    return false;
}

json_object *mcp__supported_versions(void)
{
    json_object *a = json_object_new_array();
    json_object_array_add(a, json_object_new_string(MCP_REVISION_2026));
    for (size_t i = ARRAY_SIZE(versions); i-- > 0;)
        json_object_array_add(a, json_object_new_string(versions[i]));
    return a;
}

const char *mcp__json_string(json_object *o, const char *key)
{
    json_object *v = NULL;
    if (o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string))
        return json_object_get_string(v);
    return NULL;
}

static const char *const level_names[] = {"debug", "info", "notice", "warning",
                                          "error", "critical", "alert", "emergency"};

const char *mcp_level_name(enum tools_level l)
{
    return (size_t)l < ARRAY_SIZE(level_names) ? level_names[l] : "info";
}

int mcp__level_parse(const char *s, enum tools_level *l)
{
    for (size_t i = 0; i < ARRAY_SIZE(level_names); i++)
        if (!strcmp(s, level_names[i])) {
            *l = (enum tools_level)i;
            return 0;
        }
    return -EINVAL;
}

const char *mcp__to_json(json_object *o, size_t *len)
{
    return json_object_to_json_string_length(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}
