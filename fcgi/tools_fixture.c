/* tools_fixture.c: the conformance suite's fixture tools (test_simple_text,
 * test_tool_with_progress, ...), whose names, content and notification
 * counts its tools-call scenarios check. They exist only in the test
 * program, tests/runmyscript-test: the same sources as runmyscript with this
 * file in place of tools_nofixture.c (Makefile.am), which is what
 * tests/e2e/conformance.sh serves, with test_fixture_tools = on. The
 * installed program has no fixture code at all; a configure option would
 * have needed a second build for make check. */
#include "config.h"

#include "tools_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

const struct tools_def tools__fixture_defs[] = {
    {"test_simple_text", NULL, "Test fixture: returns a simple text block.", tools__schema_empty_input, NULL, NULL, true, false},
    {"test_image_content", NULL, "Test fixture: returns a 1x1 PNG image block.", tools__schema_empty_input, NULL, NULL, true, false},
    {"test_audio_content", NULL, "Test fixture: returns a short WAV audio block.", tools__schema_empty_input, NULL, NULL, true, false},
    {"test_embedded_resource", NULL, "Test fixture: returns an embedded text resource.", tools__schema_empty_input, NULL, NULL, true, false},
    {"test_multiple_content_types", NULL, "Test fixture: returns text, image and resource blocks.", tools__schema_empty_input, NULL, NULL, true, false},
    {"test_tool_with_logging", NULL, "Test fixture: sends three log notifications, then a result.", tools__schema_empty_input, NULL, NULL, true, false},
    {"test_tool_with_progress", NULL, "Test fixture: sends progress 0, 50, 100 of 100, then a result.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_error_handling", NULL, "Test fixture: always returns a tool error (isError true).", tools__schema_empty_input, NULL,
     NULL, true, false},
};
const size_t tools__n_fixture_defs = ARRAY_SIZE(tools__fixture_defs);

/* The conformance suite's fixtures: the names, content and notification
 * counts its tools-call scenarios check. */
static const char fixture_png[] =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
static const char fixture_wav[] = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";

static json_object *media_block(const char *type, const char *data, const char *mime)
{
    json_object *b = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string(type));
    json_object_object_add(b, "data", json_object_new_string(data));
    json_object_object_add(b, "mimeType", json_object_new_string(mime));
    return b;
}

static json_object *resource_block(const char *uri, const char *mime, const char *text)
{
    json_object *b = json_object_new_object(), *r = json_object_new_object();
    json_object_object_add(b, "type", json_object_new_string("resource"));
    json_object_object_add(r, "uri", json_object_new_string(uri));
    json_object_object_add(r, "mimeType", json_object_new_string(mime));
    json_object_object_add(r, "text", json_object_new_string(text));
    json_object_object_add(b, "resource", r);
    return b;
}

static json_object *content_result(json_object *content)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "content", content);
    return r;
}

static void pause_ms(const struct tools_ctx *c, int ms)
{
    int64_t end = util_now_ms() + ms;
    while (util_now_ms() < end) {
        usleep(10000);
        discard(tools__cancelled(c)); /* pushes out what is buffered */
    }
}

int tools__fixture_call(const struct tools_ctx *c, const char *name, json_object **result)
{
    json_object *content = json_object_new_array();
    if (!strcmp(name, "test_simple_text")) {
        const char *t = "This is a simple text response for testing.";
        json_object_array_add(content, tools__text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_image_content")) {
        json_object_array_add(content, media_block("image", fixture_png, "image/png"));
    } else if (!strcmp(name, "test_audio_content")) {
        json_object_array_add(content, media_block("audio", fixture_wav, "audio/wav"));
    } else if (!strcmp(name, "test_embedded_resource")) {
        json_object_array_add(content, resource_block("test://embedded-resource", "text/plain",
                                                      "This is an embedded resource content."));
    } else if (!strcmp(name, "test_multiple_content_types")) {
        const char *t = "Multiple content types test:";
        json_object_array_add(content, tools__text_block(t, strlen(t)));
        json_object_array_add(content, media_block("image", fixture_png, "image/png"));
        json_object_array_add(content, resource_block("test://mixed-content-resource", "application/json",
                                                      "{\"test\":\"data\",\"value\":123}"));
    } else if (!strcmp(name, "test_tool_with_logging")) {
        static const char *const msgs[] = {"Tool execution started", "Tool processing data",
                                           "Tool execution completed"};
        for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
            if (i)
                pause_ms(c, 50);
            tools__log(c, TOOLS_LOG_INFO, "fixture", msgs[i], strlen(msgs[i]));
        }
        const char *t = "Tool with logging executed successfully";
        json_object_array_add(content, tools__text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_tool_with_progress")) {
        for (int p = 0; p <= 100; p += 50) {
            char msg[64];
            if (p)
                pause_ms(c, 50);
            snprintf(msg, sizeof msg, "Completed step %d of 100", p);
            tools__progress(c, p, 100, msg);
        }
        const char *t = "Tool with progress executed successfully";
        json_object_array_add(content, tools__text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_error_handling")) {
        json_object_put(content);
        *result = tools__simple_result("This tool intentionally returns an error for testing", true, NULL);
        return 0;
    } else {
        json_object_put(content);
        return -ENOENT;
    }
    *result = content_result(content);
    return 0;
}

