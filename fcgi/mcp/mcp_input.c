/* mcp_input.c: multi round-trip requests of the 2026-07-28 revision
 * (InputRequiredResult): a tool or a prompt that needs the client's input
 * answers resultType "input_required" with its inputRequests and a
 * requestState, and the client calls again with its inputResponses and
 * the state. The server keeps nothing between the two calls: the state
 * travels with the client, sealed here with an HMAC-SHA-256 under the
 * server's key (STATE/request-state.key, made once), so that a state the
 * client changed, or another server's, is refused (-32602) before any
 * tool sees it. */
#include "config.h"

#include "mcp_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sha256.h"

#define MCP_STATE_KEY_FILE "request-state.key"
#define MCP_STATE_KEY_LEN 32
#define MCP_STATE_PREFIX "rs1."

/* The server's key: read, or made by the first process that needs it (the
 * others read what it wrote). */
static int state_key(const struct cfg *cfg, unsigned char key[MCP_STATE_KEY_LEN])
{
    cleanup_fd int dfd = open(cfg->state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0)
        return -errno;
    for (int attempt = 0; attempt < 2; attempt++) {
        cleanup_free char *text = NULL;
        size_t len = 0;
        int rc = util_read_file_at(dfd, MCP_STATE_KEY_FILE, MCP_STATE_KEY_LEN, &text, &len);
        if (rc == 0 && len == MCP_STATE_KEY_LEN) {
            memcpy(key, text, MCP_STATE_KEY_LEN);
            return 0;
        }
        if (rc < 0 && rc != -ENOENT)
            return rc;
        unsigned char fresh[MCP_STATE_KEY_LEN];
        if ((rc = util_random(fresh, sizeof fresh)) < 0)
            return rc;
        /* Published whole (a reader sees none or all of it); a race of two
         * makes one win, and both read the winner's. */
        rc = util_write_file_new(dfd, MCP_STATE_KEY_FILE ".new", fresh, sizeof fresh, 0600);
        if (rc == 0 && linkat(dfd, MCP_STATE_KEY_FILE ".new", dfd, MCP_STATE_KEY_FILE, 0) < 0 && errno != EEXIST)
            rc = -errno;
        discard(unlinkat(dfd, MCP_STATE_KEY_FILE ".new", 0));
        if (rc < 0 && rc != -EEXIST)
            return rc;
    }
    return -EIO;
}

static void mac_hex(const unsigned char key[MCP_STATE_KEY_LEN], const char *body, size_t n, char out[65])
{
    unsigned char d[32];
    sha256_hmac(key, MCP_STATE_KEY_LEN, body, n, d);
    util_hex(d, sizeof d, out);
}

char *mcp__state_seal(const struct cfg *cfg, json_object *state)
{
    unsigned char key[MCP_STATE_KEY_LEN];
    if (state_key(cfg, key) < 0)
        return NULL;
    const char *json = json_object_to_json_string_ext(state, JSON_C_TO_STRING_PLAIN);
    size_t n = strlen(json);
    if (n > MCP_STATE_MAX)
        return NULL;
    size_t pre = sizeof MCP_STATE_PREFIX - 1;
    char *out = malloc(pre + 2 * n + 1 + 64 + 1);
    if (!out)
        return NULL;
    memcpy(out, MCP_STATE_PREFIX, pre);
    util_hex((const unsigned char *)json, n, out + pre);
    char mac[65];
    mac_hex(key, out, pre + 2 * n, mac);
    out[pre + 2 * n] = '.';
    memcpy(out + pre + 2 * n + 1, mac, 65);
    return out;
}

static int unhex(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

int mcp__state_open(const struct cfg *cfg, const char *token, json_object **state)
{
    *state = NULL;
    size_t pre = sizeof MCP_STATE_PREFIX - 1, len = strlen(token);
    const char *dot = strrchr(token, '.');
    if (len < pre + 66 || strncmp(token, MCP_STATE_PREFIX, pre) || !dot || dot < token + pre ||
        strlen(dot + 1) != 64 || (size_t)(dot - token - pre) % 2 || (size_t)(dot - token - pre) / 2 > MCP_STATE_MAX)
        return -EBADMSG;
    unsigned char key[MCP_STATE_KEY_LEN];
    int rc = state_key(cfg, key);
    if (rc < 0)
        return rc;
    char mac[65];
    mac_hex(key, token, (size_t)(dot - token), mac);
    unsigned char diff = 0; /* in constant time */
    for (int i = 0; i < 64; i++)
        diff |= (unsigned char)(mac[i] ^ dot[1 + i]);
    if (diff)
        return -EBADMSG;
    size_t n = (size_t)(dot - token - pre) / 2;
    cleanup_free char *json = malloc(n + 1);
    if (!json)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        int hi = unhex(token[pre + 2 * i]), lo = unhex(token[pre + 2 * i + 1]);
        if (hi < 0 || lo < 0)
            return -EBADMSG;
        json[i] = (char)(hi << 4 | lo);
    }
    json[n] = '\0';
    *state = json_tokener_parse(json);
    return *state ? 0 : -EBADMSG;
}

int mcp__input_params(struct mcp_2026_req *m, json_object **responses, json_object **state)
{
    json_object *v = NULL;
    *responses = NULL;
    *state = NULL;
    if (json_object_object_get_ex(m->params, "inputResponses", &v)) {
        if (!json_object_is_type(v, json_type_object)) {
            mcp__2026_error(m, 200, -32602, "Invalid params: inputResponses must be an object of responses", NULL);
            return -EINVAL;
        }
        json_object_object_foreach(v, k, r)
        {
            if (!json_object_is_type(r, json_type_object)) {
                char msg[200];
                snprintf(msg, sizeof msg, "Invalid params: inputResponses.%.100s must be an object (a response)", k);
                mcp__2026_error(m, 200, -32602, msg, NULL);
                return -EINVAL;
            }
        }
        *responses = v;
    }
    if (json_object_object_get_ex(m->params, "requestState", &v)) {
        int rc = json_object_is_type(v, json_type_string) ? mcp__state_open(m->app->cfg, json_object_get_string(v), state)
                                                           : -EBADMSG;
        if (rc == -EBADMSG) {
            mcp__2026_error(m, 200, -32602, "Invalid params: requestState failed its integrity check (changed, or not "
                                            "this server's)", NULL);
            return rc;
        }
        if (rc < 0) {
            log_msg(LOG_LVL_ERROR, "reading a requestState: %s", strerror(-rc));
            mcp__2026_error(m, 500, -32603, "Internal error: cannot check the requestState", NULL);
            return rc;
        }
    }
    return 0;
}

int mcp__input_seal(const struct cfg *cfg, json_object *result)
{
    json_object *v = NULL;
    if (!json_object_object_get_ex(result, "resultType", &v) || strcmp(json_object_get_string(v), "input_required") ||
        !json_object_object_get_ex(result, "requestState", &v))
        return 0;
    char *sealed = mcp__state_seal(cfg, v);
    if (!sealed)
        return -EIO;
    json_object_object_add(result, "requestState", json_object_new_string(sealed));
    free(sealed);
    return 0;
}
