/* tools_result.c: the helpers a tool's result and its arguments are made
 * with: a text block, a result of one, an isError result with a formatted
 * text, unknown arguments refused, an argument looked up. Beneath every
 * tool (tools_run.c, tools_ws.c, tools_xfer.c, tools_fixture.c) and the
 * door's own answers (tools.h's tools_text, tools_error_result, ...). */
#include "config.h"

#include "tools_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

json_object *tools__text_block(const char *s, size_t n)
{
    json_object *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("text"));
    json_object_object_add(b, "text", json_object_new_string_len(s, (int)n));
    return b;
}

/* A result: content [text], isError; steals structured (may be NULL). */
json_object *tools__simple_result(const char *text, bool is_error, json_object *structured)
{
    json_object *r = json_object_new_object();
    json_object *content = json_object_new_array();
    json_object_array_add(content, tools__text_block(text, strlen(text)));
    json_object_object_add(r, "content", content);
    if (structured)
        json_object_object_add(r, "structuredContent", structured);
    json_object_object_add(r, "isError", json_object_new_boolean(is_error));
    return r;
}

/* Unknown arguments are refused with the list of known ones: a model that
 * misspelled one learns it at once. */
json_object *tools__check_known(json_object *args, const char *const *known, const char *tool)
{
    if (!args)
        return NULL;
    json_object_object_foreach(args, k, v)
    {
        (void)v;
        bool ok = false;
        for (const char *const *p = known; *p; p++)
            ok = ok || !strcmp(*p, k);
        if (!ok) {
            char list[256] = "";
            for (const char *const *p = known; *p; p++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", p == known ? "" : ", ", *p);
            return tools__arg_error("%s: unknown argument '%.100s' (it takes: %s)", tool, k, list);
        }
    }
    return NULL;
}

json_object *tools__get_arg(json_object *args, const char *key)
{
    json_object *v = NULL;
    if (args && json_object_object_get_ex(args, key, &v) && !json_object_is_type(v, json_type_null))
        return v;
    return NULL;
}

json_object *tools_text(const char *s, size_t n)
{
    return tools__text_block(s, n);
}

json_object *tools_text_result(const char *text, bool is_error)
{
    return tools__simple_result(text, is_error, NULL);
}

json_object *tools_error_result(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tools__simple_result(msg, true, NULL);
}

json_object *tools_input_required(json_object *requests, json_object *state)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "resultType", json_object_new_string("input_required"));
    json_object_object_add(r, "inputRequests", requests);
    if (state)
        json_object_object_add(r, "requestState", state);
    return r;
}

json_object *tools_arg(json_object *args, const char *key)
{
    return tools__get_arg(args, key);
}
