/* mcp_proto.c: the protocol's words that every part of the MCP door uses:
 * the revisions we speak, the log levels' names, serverInfo, a message's
 * JSON text, and JSON-RPC 2.0's messages (a result, an error, a refusal
 * with no id, one sent as a JSON body, the key of a request id). The bottom
 * of the module: it calls no other file of mcp/. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sha256.h"

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

json_object *mcp__server_info(void)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "name", json_object_new_string("runmyscript"));
    json_object_object_add(o, "title", json_object_new_string("Run My Script"));
    json_object_object_add(o, "version", json_object_new_string(PACKAGE_VERSION));
    return o;
}

/* ---------------------------------------------------------------- JSON-RPC */

bool mcp__rpc_id_ok(json_object *id)
{
    return json_object_is_type(id, json_type_string) || json_object_is_type(id, json_type_int);
}

static json_object *rpc_new(json_object *id)
{
    json_object *o = json_object_new_object();
    json_object_object_add(o, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(o, "id", id ? json_object_get(id) : NULL);
    return o;
}

/* Steals result. */
json_object *mcp__rpc_result(json_object *id, json_object *result)
{
    json_object *o = rpc_new(id);
    json_object_object_add(o, "result", result);
    return o;
}

/* Steals data (may be NULL). */
json_object *mcp__rpc_error(json_object *id, int code, const char *message, json_object *data)
{
    json_object *o = rpc_new(id);
    json_object *e = json_object_new_object();
    json_object_object_add(e, "code", json_object_new_int(code));
    json_object_object_add(e, "message", json_object_new_string(message));
    if (data)
        json_object_object_add(e, "data", data);
    json_object_object_add(o, "error", e);
    return o;
}

void mcp__refuse(struct http_resp *resp, int status, int code, const char *message)
{
    json_object *o = mcp__rpc_error(NULL, code, message, NULL);
    size_t n;
    const char *s = mcp__to_json(o, &n);
    log_msg(LOG_LVL_INFO, "%d: %s", status, message);
    discard(http_send(resp, status, "application/json", s, n));
    json_object_put(o);
}

void mcp__send(struct http_resp *resp, int status, json_object *o)
{
    size_t n;
    const char *s = mcp__to_json(o, &n);
    discard(http_send(resp, status, "application/json", s, n));
}

/* The key of a request id: its type and value, hashed to a file name. */
void mcp__id_key(json_object *id, char out[65])
{
    char buf[600];
    int n;
    if (json_object_is_type(id, json_type_int))
        n = snprintf(buf, sizeof buf, "i:%lld", (long long)json_object_get_int64(id));
    else
        n = snprintf(buf, sizeof buf, "s:%s", json_object_get_string(id));
    if (n < 0)
        n = 0;
    /* Long string ids: hash what fits plus the full length; ids are the
     * client's and need only be told apart within a session. */
    if ((size_t)n >= sizeof buf)
        n = (int)sizeof buf - 1;
    struct sha256 c;
    unsigned char d[32];
    sha256_init(&c);
    sha256_update(&c, buf, (size_t)n);
    if (json_object_is_type(id, json_type_string)) {
        size_t len = (size_t)json_object_get_string_len(id);
        sha256_update(&c, json_object_get_string(id), len);
        sha256_update(&c, &len, sizeof len);
    }
    sha256_final(&c, d);
    util_hex(d, sizeof d, out);
}
