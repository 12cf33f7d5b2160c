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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The tasks extension's fixtures (greet ... multi_input) take arguments. */
static const char greet_input[] =
    "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\"}}, \"required\": [\"name\"]}";
static const char slow_input[] = "{\"type\": \"object\", \"properties\": {\"seconds\": {\"type\": \"number\"}, "
                                 "\"label\": {\"type\": \"string\"}}}";
static const char message_input[] =
    "{\"type\": \"object\", \"properties\": {\"message\": {\"type\": \"string\"}}, \"required\": [\"message\"]}";
static const char prompt_input[] =
    "{\"type\": \"object\", \"properties\": {\"prompt\": {\"type\": \"string\"}}, \"required\": [\"prompt\"]}";
static const char file_input[] =
    "{\"type\": \"object\", \"properties\": {\"filename\": {\"type\": \"string\"}}}";

/* A schema with the 2020-12 keywords the suite checks a server keeps. */
static const char schema_2020_12_input[] =
    "{\"$schema\": \"https://json-schema.org/draft/2020-12/schema\", \"type\": \"object\", "
    "\"$defs\": {\"address\": {\"$anchor\": \"addr\", \"type\": \"object\", "
    "\"properties\": {\"city\": {\"type\": \"string\"}}}}, "
    "\"properties\": {\"kind\": {\"type\": \"string\"}, \"home\": {\"$ref\": \"#/$defs/address\"}}, "
    "\"allOf\": [{\"anyOf\": [{\"required\": [\"kind\"]}, {\"required\": [\"home\"]}]}], "
    "\"if\": {\"properties\": {\"kind\": {\"const\": \"home\"}}}, \"then\": {\"required\": [\"home\"]}, "
    "\"else\": {}, \"additionalProperties\": false}";

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
    {"test_logging_tool", NULL, "Test fixture: sends three log notifications (at the level the request asks for).",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_streaming_elicitation", NULL, "Test fixture: answers over its stream (we never ask the client anything).",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_missing_capability", NULL, "Test fixture: needs the client's sampling capability (-32021 without it).",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"greet", NULL, "Test fixture: returns Hello, NAME! (never a task).", greet_input, NULL, NULL, true, false},
    {"slow_compute", NULL, "Test fixture: sleeps for seconds, then returns (a task with the tasks extension).",
     slow_input, NULL, NULL, true, false},
    {"failing_job", NULL, "Test fixture: a tool error after a second (only as a task).", tools__schema_empty_input, NULL,
     NULL, true, false},
    {"protocol_error_job", NULL, "Test fixture: fails as the service would (a task that fails).",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"confirm_delete", NULL, "Test fixture: a task that asks the client to confirm, then ends.", file_input, NULL, NULL,
     true, false},
    {"json_schema_2020_12_tool", NULL, "Test fixture: an input schema with JSON Schema 2020-12 keywords.",
     schema_2020_12_input, NULL, NULL, true, false},
    {"multi_input", NULL, "Test fixture: a task that asks the client two things at once.", tools__schema_empty_input,
     NULL, NULL, true, false},
    /* 2026-07-28's multi round-trip requests (InputRequiredResult). */
    {"test_input_required_result_elicitation", NULL, "Test fixture: asks the client's name (input_required), then greets.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_sampling", NULL, "Test fixture: asks the client's model a question, then says its answer.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_list_roots", NULL, "Test fixture: asks the client's roots, then names them.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_request_state", NULL, "Test fixture: asks a confirmation with a requestState.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_multiple_inputs", NULL, "Test fixture: asks three things at once.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_multi_round", NULL, "Test fixture: asks twice, in two rounds.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_tampered_state", NULL, "Test fixture: asks with a requestState the server seals.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_input_required_result_capabilities", NULL, "Test fixture: asks only what the client declared it can answer.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_tool_with_task", NULL, "Test fixture: asks the client's name in rounds, then greets as a task.",
     tools__schema_empty_input, NULL, NULL, true, false},
    /* Requests to the client on a legacy call's stream. */
    {"test_elicitation", NULL, "Test fixture: asks the client's user (elicitation/create), then says the answer.",
     message_input, NULL, NULL, true, false},
    {"test_elicitation_sep1034_defaults", NULL, "Test fixture: an elicitation whose fields have defaults.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_elicitation_sep1330_enums", NULL, "Test fixture: an elicitation with every kind of enum.",
     tools__schema_empty_input, NULL, NULL, true, false},
    {"test_sampling", NULL, "Test fixture: asks the client's model (sampling/createMessage), then says its answer.",
     prompt_input, NULL, NULL, true, false},
};

enum tools_task tools__fixture_task(const char *name)
{
    static const char *const at_once[] = {"slow_compute", "protocol_error_job", "confirm_delete", "multi_input"};
    if (!strcmp(name, "failing_job") || !strcmp(name, "test_tool_with_task"))
        return TOOLS_TASK_REQUIRED;
    for (size_t i = 0; i < ARRAY_SIZE(at_once); i++)
        if (!strcmp(name, at_once[i]))
            return TOOLS_TASK_AT_ONCE;
    return TOOLS_TASK_NEVER;
}

const char *tools__fixture_needs(const char *name)
{
    return !strcmp(name, "test_missing_capability") ? "sampling" : NULL;
}

bool tools__fixture_gathers(const char *name)
{
    return !strcmp(name, "test_tool_with_task");
}
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

/* Waits ms; false when the call was cancelled meanwhile. */
static bool pause_ms(const struct tools_ctx *c, int ms)
{
    int64_t end = util_now_ms() + ms;
    while (util_now_ms() < end) {
        usleep(10000);
        if (tools__cancelled(c)) /* also pushes out what is buffered */
            return false;
    }
    return true;
}

static json_object *elicit(const char *message, const char *field, const char *type)
{
    json_object *r = json_object_new_object(), *p = json_object_new_object(), *s = json_object_new_object();
    json_object *props = json_object_new_object(), *f = json_object_new_object(), *req = json_object_new_array();
    json_object_object_add(r, "method", json_object_new_string("elicitation/create"));
    json_object_object_add(p, "mode", json_object_new_string("form"));
    json_object_object_add(p, "message", json_object_new_string(message));
    json_object_object_add(f, "type", json_object_new_string(type));
    json_object_object_add(props, field, f);
    json_object_object_add(s, "type", json_object_new_string("object"));
    json_object_object_add(s, "properties", props);
    json_object_array_add(req, json_object_new_string(field));
    json_object_object_add(s, "required", req);
    json_object_object_add(p, "requestedSchema", s);
    json_object_object_add(r, "params", p);
    return r;
}

/* ------------------------------------------- multi round-trip requests */

static json_object *sampling(const char *text, int max_tokens)
{
    json_object *r = json_object_new_object(), *p = json_object_new_object(), *msgs = json_object_new_array();
    json_object *m = json_object_new_object(), *c = json_object_new_object();
    json_object_object_add(c, "type", json_object_new_string("text"));
    json_object_object_add(c, "text", json_object_new_string(text));
    json_object_object_add(m, "role", json_object_new_string("user"));
    json_object_object_add(m, "content", c);
    json_object_array_add(msgs, m);
    json_object_object_add(p, "messages", msgs);
    json_object_object_add(p, "maxTokens", json_object_new_int(max_tokens));
    json_object_object_add(r, "method", json_object_new_string("sampling/createMessage"));
    json_object_object_add(r, "params", p);
    return r;
}

static json_object *list_roots(void)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "method", json_object_new_string("roots/list"));
    json_object_object_add(r, "params", json_object_new_object());
    return r;
}

/* The client's response to key (borrowed), or NULL. */
static json_object *response(const struct tools_ctx *c, const char *key)
{
    json_object *v = NULL;
    return c->input_responses && json_object_object_get_ex(c->input_responses, key, &v) ? v : NULL;
}

/* A field of an accepted elicitation's content, or "?". */
static const char *elicited(const struct tools_ctx *c, const char *key, const char *field)
{
    json_object *r = response(c, key), *content = NULL, *v = NULL;
    if (r && json_object_object_get_ex(r, "content", &content) && json_object_object_get_ex(content, field, &v))
        return json_object_get_string(v);
    return "?";
}

/* The requestState a round left, if it is this tool's round n. */
static bool state_is(const struct tools_ctx *c, const char *tool, int round)
{
    json_object *t = NULL, *n = NULL;
    return c->request_state && json_object_object_get_ex(c->request_state, "tool", &t) &&
           !strcmp(json_object_get_string(t), tool) && json_object_object_get_ex(c->request_state, "round", &n) &&
           json_object_get_int(n) == round;
}

static json_object *round_state(const char *tool, int round)
{
    json_object *s = json_object_new_object();
    json_object_object_add(s, "tool", json_object_new_string(tool));
    json_object_object_add(s, "round", json_object_new_int(round));
    return s;
}

/* The InputRequiredResult fixtures: 0 with *result, or -ENOENT. A round
 * whose answers are missing asks again (the revision's advice), with the
 * same state. */
static int input_fixture(const struct tools_ctx *c, const char *name, json_object **result)
{
    static const char prefix[] = "test_input_required_result_";
    char text[600];
    if (!strcmp(name, "test_tool_with_task"))
        name = "test_input_required_result_elicitation"; /* the same rounds, then (as a task) the same greeting */
    if (strncmp(name, prefix, sizeof prefix - 1))
        return -ENOENT;
    const char *what = name + sizeof prefix - 1;
    json_object *reqs = json_object_new_object(), *state = NULL;
    if (!strcmp(what, "elicitation")) {
        if (response(c, "user_name"))
            snprintf(text, sizeof text, "Hello, %.200s!", elicited(c, "user_name", "name"));
        else
            json_object_object_add(reqs, "user_name", elicit("What is your name?", "name", "string"));
    } else if (!strcmp(what, "sampling")) {
        json_object *r = response(c, "capital_question"), *content = NULL, *t = NULL;
        if (r) {
            json_object_object_get_ex(r, "content", &content);
            json_object_object_get_ex(content, "text", &t);
            snprintf(text, sizeof text, "The model said: %.400s", t ? json_object_get_string(t) : "?");
        } else {
            json_object_object_add(reqs, "capital_question", sampling("What is the capital of France?", 100));
        }
    } else if (!strcmp(what, "list_roots")) {
        json_object *r = response(c, "client_roots"), *roots = NULL;
        if (r) {
            json_object_object_get_ex(r, "roots", &roots);
            snprintf(text, sizeof text, "The client's roots: %.500s", roots ? json_object_to_json_string(roots) : "[]");
        } else {
            json_object_object_add(reqs, "client_roots", list_roots());
        }
    } else if (!strcmp(what, "request_state") || !strcmp(what, "tampered_state")) {
        if (response(c, "confirm") && state_is(c, name, 1)) {
            snprintf(text, sizeof text, "state-ok: confirmed %.100s", elicited(c, "confirm", "ok"));
        } else {
            json_object_object_add(reqs, "confirm", elicit("Please confirm", "ok", "boolean"));
            state = round_state(name, 1);
        }
    } else if (!strcmp(what, "multiple_inputs")) {
        if (response(c, "user_name") && response(c, "greeting") && response(c, "client_roots") && state_is(c, name, 1)) {
            snprintf(text, sizeof text, "state-ok: all three answered, name %.100s", elicited(c, "user_name", "name"));
        } else {
            json_object_object_add(reqs, "user_name", elicit("What is your name?", "name", "string"));
            json_object_object_add(reqs, "greeting", sampling("Generate a greeting", 50));
            json_object_object_add(reqs, "client_roots", list_roots());
            state = round_state(name, 1);
        }
    } else if (!strcmp(what, "multi_round")) {
        if (response(c, "step2") && state_is(c, name, 2)) {
            snprintf(text, sizeof text, "state-ok: the favorite color is %.100s", elicited(c, "step2", "color"));
        } else if (response(c, "step1") && state_is(c, name, 1)) {
            json_object_object_add(reqs, "step2", elicit("Step 2: What is your favorite color?", "color", "string"));
            state = round_state(name, 2);
        } else {
            json_object_object_add(reqs, "step1", elicit("Step 1: What is your name?", "name", "string"));
            state = round_state(name, 1);
        }
    } else if (!strcmp(what, "capabilities")) {
        /* Only what the client said it can answer. */
        json_object *caps = c->client_caps;
        if (caps && json_object_object_get_ex(caps, "elicitation", NULL))
            json_object_object_add(reqs, "user_name", elicit("What is your name?", "name", "string"));
        if (caps && json_object_object_get_ex(caps, "sampling", NULL))
            json_object_object_add(reqs, "greeting", sampling("Generate a greeting", 50));
        if (caps && json_object_object_get_ex(caps, "roots", NULL))
            json_object_object_add(reqs, "client_roots", list_roots());
        if (c->input_responses || json_object_object_length(reqs) == 0) {
            json_object_put(reqs);
            reqs = json_object_new_object();
            snprintf(text, sizeof text, "answered what the client could answer");
        }
    } else {
        json_object_put(reqs);
        return -ENOENT;
    }
    if (json_object_object_length(reqs)) {
        *result = tools_input_required(reqs, state);
        return 0;
    }
    json_object_put(reqs);
    json_object_put(state);
    *result = tools__simple_result(text, false, NULL);
    return 0;
}

/* ------------------------------------------- requests on a legacy stream */

/* An elicitation/create request with a schema (JSON text) as it is. */
static json_object *elicit_schema(const char *message, const char *schema)
{
    json_object *r = json_object_new_object(), *p = json_object_new_object();
    json_object_object_add(r, "method", json_object_new_string("elicitation/create"));
    json_object_object_add(p, "message", json_object_new_string(message));
    json_object_object_add(p, "requestedSchema", json_tokener_parse(schema));
    json_object_object_add(r, "params", p);
    return r;
}

static const char contact_schema[] =
    "{\"type\": \"object\", \"properties\": {\"username\": {\"type\": \"string\", \"description\": \"User's response\"}, "
    "\"email\": {\"type\": \"string\", \"description\": \"User's email address\"}}, \"required\": [\"username\", \"email\"]}";
static const char defaults_schema[] =
    "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"default\": \"John Doe\"}, "
    "\"age\": {\"type\": \"integer\", \"default\": 30}, \"score\": {\"type\": \"number\", \"default\": 95.5}, "
    "\"status\": {\"type\": \"string\", \"enum\": [\"active\", \"inactive\", \"pending\"], \"default\": \"active\"}, "
    "\"verified\": {\"type\": \"boolean\", \"default\": true}}}";
static const char enums_schema[] =
    "{\"type\": \"object\", \"properties\": {"
    "\"untitledSingle\": {\"type\": \"string\", \"enum\": [\"option1\", \"option2\", \"option3\"]}, "
    "\"titledSingle\": {\"type\": \"string\", \"oneOf\": [{\"const\": \"value1\", \"title\": \"First Option\"}, "
    "{\"const\": \"value2\", \"title\": \"Second Option\"}, {\"const\": \"value3\", \"title\": \"Third Option\"}]}, "
    "\"legacyEnum\": {\"type\": \"string\", \"enum\": [\"opt1\", \"opt2\", \"opt3\"], "
    "\"enumNames\": [\"Option One\", \"Option Two\", \"Option Three\"]}, "
    "\"untitledMulti\": {\"type\": \"array\", \"items\": {\"type\": \"string\", \"enum\": [\"option1\", \"option2\", \"option3\"]}}, "
    "\"titledMulti\": {\"type\": \"array\", \"items\": {\"anyOf\": [{\"const\": \"value1\", \"title\": \"First Choice\"}, "
    "{\"const\": \"value2\", \"title\": \"Second Choice\"}, {\"const\": \"value3\", \"title\": \"Third Choice\"}]}}}}";

/* The legacy request fixtures: 0 with *result, -ECANCELED, or -ENOENT. */
static int request_fixture(const struct tools_ctx *c, const char *name, json_object *args, json_object **result)
{
    char text[2048];
    const char *need = "elicitation", *say = "Elicitation completed";
    json_object *req, *v = NULL;
    if (!strcmp(name, "test_elicitation")) {
        v = tools__get_arg(args, "message");
        req = elicit_schema(v ? json_object_get_string(v) : "Please provide your information", contact_schema);
        say = "User response";
    } else if (!strcmp(name, "test_elicitation_sep1034_defaults")) {
        req = elicit_schema("Please review and update the form fields with defaults", defaults_schema);
    } else if (!strcmp(name, "test_elicitation_sep1330_enums")) {
        req = elicit_schema("Please select options from the enum fields", enums_schema);
    } else if (!strcmp(name, "test_sampling")) {
        v = tools__get_arg(args, "prompt");
        req = sampling(v ? json_object_get_string(v) : "Hello", 100);
        need = "sampling";
        say = "LLM response";
    } else {
        return -ENOENT;
    }
    if (!c->client_caps || !json_object_object_get_ex(c->client_caps, need, NULL)) {
        json_object_put(req);
        *result = tools__simple_result("the client did not declare the capability this fixture needs", true, NULL);
        return 0;
    }
    json_object *reqs = json_object_new_object(), *answers = NULL;
    json_object_object_add(reqs, "r", req);
    int rc = c->ask ? c->ask(c->ctx, reqs, &answers) : -ENOTSUP;
    json_object_put(reqs);
    if (rc == -ECANCELED)
        return rc;
    if (rc < 0) {
        *result = tools__simple_result("the client's answer did not come", true, NULL);
        return 0;
    }
    json_object *a = NULL;
    json_object_object_get_ex(answers, "r", &a);
    snprintf(text, sizeof text, "%s: %.1900s", say, a ? json_object_to_json_string(a) : "none");
    json_object_put(answers);
    *result = tools__simple_result(text, false, NULL);
    return 0;
}

/* The tasks extension's fixtures: 0 with *result, -ECANCELED, -EIO (the
 * protocol_error_job), or -ENOENT (not one of them). */
static int task_fixture(const struct tools_ctx *c, const char *name, json_object *args, json_object **result)
{
    char text[600];
    json_object *v = tools__get_arg(args, "name");
    if (!strcmp(name, "greet")) {
        snprintf(text, sizeof text, "Hello, %.500s!", v ? json_object_get_string(v) : "world");
    } else if (!strcmp(name, "slow_compute")) {
        v = tools__get_arg(args, "seconds");
        double s = v ? json_object_get_double(v) : 1;
        json_object *label = tools__get_arg(args, "label");
        if (s > 0 && !pause_ms(c, (int)(s > 600 ? 600000 : s * 1000)))
            return -ECANCELED;
        snprintf(text, sizeof text, "computed %.200s after %g s", label ? json_object_get_string(label) : "", s);
    } else if (!strcmp(name, "failing_job")) {
        if (!pause_ms(c, 1000))
            return -ECANCELED;
        *result = tools__simple_result("failing_job: the job failed, as it always does", true, NULL);
        return 0;
    } else if (!strcmp(name, "protocol_error_job")) {
        return pause_ms(c, 200) ? -EIO : -ECANCELED;
    } else if (!strcmp(name, "confirm_delete") || !strcmp(name, "multi_input")) {
        json_object *reqs = json_object_new_object(), *answers = NULL;
        json_object *f = tools__get_arg(args, "filename");
        snprintf(text, sizeof text, "Delete %.200s?", f ? json_object_get_string(f) : "the file");
        json_object_object_add(reqs, "confirm", elicit(text, "confirm", "boolean"));
        if (!strcmp(name, "multi_input"))
            json_object_object_add(reqs, "name", elicit("What is your name?", "name", "string"));
        int rc = c->ask ? c->ask(c->ctx, reqs, &answers) : -ENOTSUP;
        json_object_put(reqs);
        if (rc == -ENOTSUP) {
            *result = tools__simple_result("this fixture asks the client, which only a task can do", true, NULL);
            return 0;
        }
        if (rc < 0)
            return rc;
        snprintf(text, sizeof text, "%s: answered %.400s", name, json_object_to_json_string(answers));
        json_object_put(answers);
    } else {
        return -ENOENT;
    }
    *result = tools__simple_result(text, false, NULL);
    return 0;
}

int tools__fixture_call(const struct tools_ctx *c, const char *name, json_object *args, json_object **result)
{
    int trc = task_fixture(c, name, args, result);
    if (trc != -ENOENT)
        return trc;
    if ((trc = input_fixture(c, name, result)) != -ENOENT)
        return trc;
    if ((trc = request_fixture(c, name, args, result)) != -ENOENT)
        return trc;
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
    } else if (!strcmp(name, "test_streaming_elicitation") || !strcmp(name, "test_missing_capability") ||
               !strcmp(name, "json_schema_2020_12_tool")) {
        const char *t = "answered without asking the client anything";
        json_object_array_add(content, tools__text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_tool_with_logging") || !strcmp(name, "test_logging_tool")) {
        static const char *const msgs[] = {"Tool execution started", "Tool processing data",
                                           "Tool execution completed"};
        for (size_t i = 0; i < ARRAY_SIZE(msgs); i++) {
            if (i)
                discard(pause_ms(c, 50));
            tools__log(c, TOOLS_LOG_INFO, "fixture", msgs[i], strlen(msgs[i]));
        }
        const char *t = "Tool with logging executed successfully";
        json_object_array_add(content, tools__text_block(t, strlen(t)));
    } else if (!strcmp(name, "test_tool_with_progress")) {
        for (int p = 0; p <= 100; p += 50) {
            char msg[64];
            if (p)
                discard(pause_ms(c, 50));
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


/* The fixture prompts, whose names and messages the suite's prompts-get
 * scenarios check. */
static json_object *user_block(json_object *content)
{
    json_object *m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string("user"));
    json_object_object_add(m, "content", content);
    return m;
}

static json_object *user_said(const char *text)
{
    return user_block(tools__text_block(text, strlen(text)));
}

static int simple_prompt(const char *version, json_object *args, json_object *messages)
{
    (void)version, (void)args;
    json_object_array_add(messages, user_said("This is a simple prompt for testing."));
    return 0;
}

static int prompt_with_arguments(const char *version, json_object *args, json_object *messages)
{
    (void)version;
    json_object *a1 = NULL, *a2 = NULL;
    json_object_object_get_ex(args, "arg1", &a1);
    json_object_object_get_ex(args, "arg2", &a2);
    cleanup_free char *t = NULL;
    if (asprintf(&t, "Prompt with arguments: arg1='%s', arg2='%s'", json_object_get_string(a1),
                 json_object_get_string(a2)) < 0)
        return -ENOMEM;
    json_object_array_add(messages, user_said(t));
    return 0;
}

static int prompt_with_embedded_resource(const char *version, json_object *args, json_object *messages)
{
    (void)version;
    json_object *uri = NULL;
    json_object_object_get_ex(args, "resourceUri", &uri);
    json_object_array_add(messages, user_block(resource_block(json_object_get_string(uri), "text/plain",
                                                              "Embedded resource content for testing.")));
    json_object_array_add(messages, user_said("Please process the embedded resource above."));
    return 0;
}

static int prompt_with_image(const char *version, json_object *args, json_object *messages)
{
    (void)version, (void)args;
    json_object_array_add(messages, user_block(media_block("image", fixture_png, "image/png")));
    json_object_array_add(messages, user_said("Please analyze the image above."));
    return 0;
}

/* test_input_required_result_prompt: the context it needs, asked until
 * the client's responses hold it. */
static json_object *prompt_needs_context(json_object *responses)
{
    if (responses && json_object_object_get_ex(responses, "user_context", NULL))
        return NULL;
    json_object *reqs = json_object_new_object();
    json_object_object_add(reqs, "user_context", elicit("What context should the prompt use?", "context", "string"));
    return reqs;
}

static int prompt_with_context(const char *version, json_object *args, json_object *messages)
{
    (void)version, (void)args;
    json_object_array_add(messages, user_said("A prompt made with the context the client gave."));
    return 0;
}

const struct tools_prompt_def tools__fixture_prompts[] = {
    {"test_simple_prompt", NULL, "Test fixture: a prompt without arguments.", {{0}}, simple_prompt},
    {"test_prompt_with_arguments", NULL, "Test fixture: a prompt that says its two arguments.",
     {{"arg1", "First test argument", true}, {"arg2", "Second test argument", true}}, prompt_with_arguments},
    {"test_prompt_with_embedded_resource", NULL, "Test fixture: a prompt with an embedded text resource.",
     {{"resourceUri", "URI of the resource to embed", true}}, prompt_with_embedded_resource},
    {"test_prompt_with_image", NULL, "Test fixture: a prompt with a PNG image.", {{0}}, prompt_with_image},
    {"test_input_required_result_prompt", NULL, "Test fixture: a prompt that asks the client for its context first.",
     {{0}}, prompt_with_context, prompt_needs_context},
};
const size_t tools__n_fixture_prompts = ARRAY_SIZE(tools__fixture_prompts);
/* ------------------------------------------------------------ resources */

/* The resources and templates the suite's resources scenarios read, and
 * the prompt argument its completion scenario completes. */
static const char static_text[] = "This is the content of the static text resource.";

static json_object *fixture_resource(const char *uri, const char *name, const char *mime)
{
    json_object *r = json_object_new_object();
    json_object_object_add(r, "uri", json_object_new_string(uri));
    json_object_object_add(r, "name", json_object_new_string(name));
    json_object_object_add(r, "description", json_object_new_string("Test fixture resource"));
    json_object_object_add(r, "mimeType", json_object_new_string(mime));
    return r;
}

void tools__fixture_resources(json_object *arr)
{
    json_object_array_add(arr, fixture_resource("test://static-text", "static-text", "text/plain"));
    json_object_array_add(arr, fixture_resource("test://static-binary", "static-binary", "image/png"));
    json_object_array_add(arr, fixture_resource("test://watched-resource", "watched-resource", "text/plain"));
}

void tools__fixture_templates(json_object *arr)
{
    json_object *t = json_object_new_object();
    json_object_object_add(t, "uriTemplate", json_object_new_string("test://template/{id}/data"));
    json_object_object_add(t, "name", json_object_new_string("template-data"));
    json_object_object_add(t, "description", json_object_new_string("Test fixture: data of the id"));
    json_object_object_add(t, "mimeType", json_object_new_string("application/json"));
    json_object_array_add(arr, t);
}

static json_object *contents(const char *uri, const char *mime, const char *key, const char *value)
{
    json_object *r = json_object_new_object(), *arr = json_object_new_array(), *c = json_object_new_object();
    json_object_object_add(c, "uri", json_object_new_string(uri));
    json_object_object_add(c, "mimeType", json_object_new_string(mime));
    json_object_object_add(c, key, json_object_new_string(value));
    json_object_array_add(arr, c);
    json_object_object_add(r, "contents", arr);
    return r;
}

int tools__fixture_read(const char *uri, json_object **result)
{
    static const char tmpl[] = "test://template/", tail[] = "/data";
    size_t n = strlen(uri);
    *result = NULL;
    if (!strcmp(uri, "test://static-text"))
        *result = contents(uri, "text/plain", "text", static_text);
    else if (!strcmp(uri, "test://static-binary"))
        *result = contents(uri, "image/png", "blob", fixture_png);
    else if (!strcmp(uri, "test://watched-resource"))
        *result = contents(uri, "text/plain", "text", "Watched resource content.");
    else if (n > strlen(tmpl) + strlen(tail) && n < 200 && !strncmp(uri, tmpl, strlen(tmpl)) &&
             !strcmp(uri + n - strlen(tail), tail)) {
        char text[300];
        int idn = (int)(n - strlen(tmpl) - strlen(tail));
        if (memchr(uri + strlen(tmpl), '/', (size_t)idn))
            return -ENOENT;
        snprintf(text, sizeof text, "{\"id\":\"%.*s\",\"templateTest\":true,\"data\":\"Data for ID: %.*s\"}", idn,
                 uri + strlen(tmpl), idn, uri + strlen(tmpl));
        *result = contents(uri, "application/json", "text", text);
    }
    return *result ? 0 : -ENOENT;
}

int tools__fixture_complete(const char *prompt, const char *arg, const char *value, json_object **values)
{
    static const char *const words[] = {"paris", "park", "party"};
    *values = NULL;
    if (strcmp(prompt, "test_prompt_with_arguments"))
        return -ENOENT;
    *values = json_object_new_array();
    for (size_t i = 0; !strcmp(arg, "arg1") && i < ARRAY_SIZE(words); i++)
        if (!strncmp(words[i], value, strlen(value)))
            json_object_array_add(*values, json_object_new_string(words[i]));
    return 0;
}
