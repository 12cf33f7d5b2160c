/* mcp_ask.c: a script's question to a client of a legacy revision that
 * declared the elicitation capability: an elicitation/create request on
 * the call's stream (the SSE answer of its POST; over stdio, a line on
 * stdout), whose id names the question, the call and the run; and the
 * client's response, POSTed apart (any worker takes it), which becomes the
 * script's answer through the run's mailbox (exec_answer). The same
 * request, without its id, is 2026-07-28's input request (mcp_task.c);
 * and an elicitation's result, read once for both (mcp__ask_answer). */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MCP_ASK_PREFIX "runmyscript-ask:"
#define MCP_REQ_PREFIX "runmyscript-req:" /* a tool's own request (tools_ctx.ask): KEY:NAME */
#define MCP_REPLY_MAX (1u << 20)           /* bytes of a client's response kept for a tool */

/* A name an input request may have in a file name: its key. */
static bool name_ok(const char *k)
{
    size_t n = strlen(k);
    if (n == 0 || n > 64)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", k[i]))
            return false;
    return true;
}

json_object *mcp__req_message(const char *key, const char *name, json_object *request)
{
    char id[32 + 64 + 70];
    json_object *method = NULL, *params = NULL;
    if (!name_ok(name) || !json_object_object_get_ex(request, "method", &method))
        return NULL;
    snprintf(id, sizeof id, MCP_REQ_PREFIX "%s:%s", key, name);
    json_object *m = json_object_new_object();
    json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
    json_object_object_add(m, "id", json_object_new_string(id));
    json_object_object_add(m, "method", json_object_get(method));
    if (json_object_object_get_ex(request, "params", &params))
        json_object_object_add(m, "params", json_object_get(params));
    return m;
}

int mcp__req_replies(const char *session_dir, const char *key, json_object *requests, json_object **responses)
{
    char path[4096];
    *responses = NULL;
    snprintf(path, sizeof path, "%s/replies", session_dir);
    cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dfd < 0)
        return errno == ENOENT ? 0 : -errno;
    json_object_object_foreach(requests, k, v)
    {
        (void)v;
        snprintf(path, sizeof path, "%s.%s", key, k);
        if (faccessat(dfd, path, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
            return 0;
    }
    json_object *out = json_object_new_object();
    json_object_object_foreach(requests, k2, v2)
    {
        (void)v2;
        cleanup_free char *text = NULL;
        size_t len;
        snprintf(path, sizeof path, "%s.%s", key, k2);
        if (util_read_file_at(dfd, path, MCP_REPLY_MAX, &text, &len) == 0)
            json_object_object_add(out, k2, json_tokener_parse(text));
        discard(unlinkat(dfd, path, 0));
    }
    *responses = out;
    return 1;
}

/* A response to a tool's own request: kept for the tool while its call is
 * in flight (calls/KEY), in replies/KEY.NAME. */
static void req_response(const char *session_dir, const char *s, json_object *msg)
{
    char key[65], path[4096];
    const char *colon = strchr(s, ':');
    if (!colon || colon - s != 64 || !name_ok(colon + 1))
        return;
    memcpy(key, s, 64);
    key[64] = '\0';
    for (int i = 0; i < 64; i++)
        if (!strchr("0123456789abcdef", key[i]))
            return;
    snprintf(path, sizeof path, "%s/calls/%s", session_dir, key);
    if (access(path, F_OK) < 0)
        return; /* no such call in flight */
    snprintf(path, sizeof path, "%s/replies", session_dir);
    if (mkdir(path, 0700) < 0 && errno != EEXIST)
        return;
    cleanup_fd int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    json_object *v = NULL;
    if (!json_object_object_get_ex(msg, "result", &v))
        json_object_object_get_ex(msg, "error", &v); /* the tool sees an error as what it is */
    size_t n;
    const char *text = json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
    n = strlen(text);
    snprintf(path, sizeof path, "%s.%s", key, colon + 1);
    if (dfd >= 0 && n <= MCP_REPLY_MAX)
        discard(util_write_file_published(dfd, path, text, n, 0600));
}

void mcp__ask_id(char *out, size_t len, unsigned n, const char *key, const char *run_id)
{
    snprintf(out, len, MCP_ASK_PREFIX "%u:%s:%s", n, key, run_id);
}

json_object *mcp__ask_request(const char *version, const char *id, const char *prompt)
{
    json_object *m = json_object_new_object();
    json_object *p = json_object_new_object();
    json_object *schema = json_object_new_object();
    json_object *props = json_object_new_object();
    json_object *answer = json_object_new_object();
    json_object *req = json_object_new_array();
    size_t n;
    cleanup_free char *clean = util_utf8_sanitize(prompt, strlen(prompt), &n);
    if (id) {
        json_object_object_add(m, "jsonrpc", json_object_new_string("2.0"));
        json_object_object_add(m, "id", json_object_new_string(id));
    }
    json_object_object_add(m, "method", json_object_new_string("elicitation/create"));
    if (strcmp(version, "2025-06-18"))
        json_object_object_add(p, "mode", json_object_new_string("form"));
    json_object_object_add(p, "message", json_object_new_string(clean && n ? clean
                                                                  : "The script asks for its next line of input."));
    json_object_object_add(answer, "type", json_object_new_string("string"));
    json_object_object_add(answer, "title", json_object_new_string("Answer"));
    json_object_object_add(answer, "description",
                           json_object_new_string("the script's next line of input (decline: it reads end of file)"));
    json_object_object_add(props, "answer", answer);
    json_object_object_add(schema, "type", json_object_new_string("object"));
    json_object_object_add(schema, "properties", props);
    json_object_array_add(req, json_object_new_string("answer"));
    json_object_object_add(schema, "required", req);
    json_object_object_add(p, "requestedSchema", schema);
    json_object_object_add(m, "params", p);
    return m;
}

/* The question, call and run an id of ours names: 0, or -EINVAL. */
static int parse_id(json_object *id, unsigned *n, char key[65], char run_id[WS_ID_MAX + 1])
{
    if (!json_object_is_type(id, json_type_string))
        return -EINVAL;
    const char *s = json_object_get_string(id);
    if (strncmp(s, MCP_ASK_PREFIX, sizeof MCP_ASK_PREFIX - 1))
        return -EINVAL;
    s += sizeof MCP_ASK_PREFIX - 1;
    char *end;
    unsigned long q = strtoul(s, &end, 10);
    if (end == s || *end != ':' || q == 0 || q > UINT32_MAX)
        return -EINVAL;
    s = end + 1;
    const char *colon = strchr(s, ':');
    if (!colon || colon - s != 64)
        return -EINVAL;
    memcpy(key, s, 64);
    key[64] = '\0';
    for (int i = 0; i < 64; i++)
        if (!strchr("0123456789abcdef", key[i]))
            return -EINVAL;
    if (!ws_id_valid(colon + 1))
        return -EINVAL;
    snprintf(run_id, WS_ID_MAX + 1, "%s", colon + 1);
    *n = (unsigned)q;
    return 0;
}

const char *mcp__ask_answer(json_object *result, size_t *len)
{
    json_object *action = NULL, *content = NULL, *answer = NULL;
    *len = 0;
    if (!json_object_is_type(result, json_type_object) || !json_object_object_get_ex(result, "action", &action) ||
        !json_object_is_type(action, json_type_string) || strcmp(json_object_get_string(action), "accept") ||
        !json_object_object_get_ex(result, "content", &content) || !json_object_is_type(content, json_type_object) ||
        !json_object_object_get_ex(content, "answer", &answer) || !json_object_is_type(answer, json_type_string) ||
        (size_t)json_object_get_string_len(answer) > EXEC_ANSWER_MAX)
        return NULL; /* declined, cancelled, or no line of input: its input is closed */
    *len = (size_t)json_object_get_string_len(answer);
    return json_object_get_string(answer);
}

void mcp__ask_response(const struct app *app, const char *session_dir, json_object *id, json_object *msg)
{
    unsigned n;
    char key[65], run_id[WS_ID_MAX + 1], path[4096], name[MCP_CALL_RUN_NAME_MAX];
    if (json_object_is_type(id, json_type_string) &&
        !strncmp(json_object_get_string(id), MCP_REQ_PREFIX, sizeof MCP_REQ_PREFIX - 1)) {
        req_response(session_dir, json_object_get_string(id) + sizeof MCP_REQ_PREFIX - 1, msg);
        return;
    }
    if (parse_id(id, &n, key, run_id) < 0)
        return; /* not a request of ours */
    /* The session's own call in flight, and its run: calls/.KEY.RUNID. */
    snprintf(path, sizeof path, "%s/calls", session_dir);
    cleanup_fd int cfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cfd < 0 || mcp__call_run_name(cfd, key, name, sizeof name) < 0 || strcmp(name + 2 + strlen(key), run_id)) {
        log_msg(LOG_LVL_INFO, "an answer to question %u of a run this session has not in flight: ignored", n);
        return;
    }
    json_object *result = NULL;
    size_t len = 0;
    json_object_object_get_ex(msg, "result", &result); /* an error response: none, its input is closed */
    const char *text = mcp__ask_answer(result, &len);
    const struct app_exec *x = app_exec_of(app);
    int rc = x->answer ? x->answer(app->cfg->state_dir, run_id, n, text, len) : -ENOSYS;
    if (rc < 0)
        log_msg(LOG_LVL_INFO, "run %s: the answer to question %u was not taken: %s", run_id, n, strerror(-rc));
    else
        log_msg(LOG_LVL_INFO, "run %s: question %u %s", run_id, n, text ? "answered" : "declined");
}
