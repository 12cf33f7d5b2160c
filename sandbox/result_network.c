/* result_network.c: a run's network record (struct net_record) as the
 * result shows it: the "network" member of the result's JSON, and the one
 * line a text result gives it (MCP's text block, the CLI's summary). */
#include "config.h"

#include "net.h"
#include "result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESULT_NET_LINE_DESTS 5  /* destinations named in the text line, reached and refused each */
#define RESULT_NET_LINE_MAX 4096 /* bytes of the text line (2 x 5 names of at most 253 bytes fit) */

/* A name or an address as JSON: names come from a script's DNS queries,
 * so they are made valid UTF-8 first. */
static json_object *text_or_null(const char *s)
{
    if (!s || !*s)
        return NULL;
    size_t n;
    cleanup_free char *clean = util_utf8_sanitize(s, strlen(s), &n);
    return clean ? json_object_new_string_len(clean, (int)n) : NULL;
}

static int add(json_object *o, const char *key, json_object *v)
{
    if (json_object_object_add(o, key, v)) {
        json_object_put(v);
        return -ENOMEM;
    }
    return 0;
}

static json_object *reached_json(const struct net_dest *d)
{
    json_object *o = json_object_new_object();
    if (!o || add(o, "name", text_or_null(d->name)) || add(o, "address", json_object_new_string(d->addr)) ||
        add(o, "port", json_object_new_int(d->port)) ||
        add(o, "bytes_in", json_object_new_int64((int64_t)d->bytes_in)) ||
        add(o, "bytes_out", json_object_new_int64((int64_t)d->bytes_out)) ||
        add(o, "connections", json_object_new_int64((int64_t)d->connections))) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *refused_json(const struct net_refusal *f)
{
    json_object *o = json_object_new_object();
    if (!o || add(o, "name", text_or_null(f->name)) || add(o, "address", text_or_null(f->addr)) ||
        add(o, "port", f->port ? json_object_new_int(f->port) : NULL) ||
        add(o, "reason", json_object_new_string(net_refusal_reason_name(f->reason))) ||
        add(o, "detail", f->detail ? json_object_new_string(f->detail) : NULL) ||
        add(o, "count", json_object_new_int64((int64_t)f->count))) {
        json_object_put(o);
        return NULL;
    }
    return o;
}

static json_object *count_or_null(bool counted, uint64_t n)
{
    return counted ? json_object_new_int64((int64_t)n) : NULL;
}

/* {"mode", "bytes_in", "bytes_out", "connections", "refused_connections",
 * "reached": [...], "refused": [...], "dropped", "limit"} (doc/internals.md,
 * "The result in detail"), or NULL (JSON null) for a run without a
 * network; for host-unfiltered only the mode, the rest null (nothing is
 * counted there). *oom is set when memory ran out. */
json_object *result__network_json(const struct net_record *rec, bool *oom)
{
    *oom = false;
    if (rec->mode == NET_MODE_OFF)
        return NULL;
    json_object *o = json_object_new_object(), *reached = NULL, *refused = NULL;
    bool counted = rec->mode == NET_MODE_ON;
    if (!o || add(o, "mode", json_object_new_string(net_mode_name(rec->mode))) ||
        add(o, "bytes_in", count_or_null(counted, rec->bytes_in)) ||
        add(o, "bytes_out", count_or_null(counted, rec->bytes_out)) ||
        add(o, "connections", count_or_null(counted, rec->connections)) ||
        add(o, "refused_connections", count_or_null(counted, rec->refused_connections)))
        goto oom;
    if (counted) {
        if (!(reached = json_object_new_array()) || !(refused = json_object_new_array()))
            goto oom;
        for (size_t i = 0; i < rec->n_reached; i++) {
            json_object *e = reached_json(&rec->reached[i]);
            if (!e || json_object_array_add(reached, e)) {
                json_object_put(e);
                goto oom;
            }
        }
        for (size_t i = 0; i < rec->n_refused; i++) {
            json_object *e = refused_json(&rec->refused[i]);
            if (!e || json_object_array_add(refused, e)) {
                json_object_put(e);
                goto oom;
            }
        }
    }
    int rc = add(o, "reached", reached);
    reached = NULL;
    rc = rc ? rc : add(o, "refused", refused);
    refused = NULL;
    if (rc || add(o, "dropped", count_or_null(counted, rec->dropped)) ||
        add(o, "limit", rec->limit ? json_object_new_string(rec->limit) : NULL))
        goto oom;
    return o;
oom:
    json_object_put(reached);
    json_object_put(refused);
    json_object_put(o);
    *oom = true;
    return NULL;
}

static uint64_t u64_of(json_object *o, const char *key)
{
    json_object *v;
    int64_t n = json_object_object_get_ex(o, key, &v) ? json_object_get_int64(v) : 0;
    return n > 0 ? (uint64_t)n : 0;
}

/* key's string, or NULL. */
static const char *text_of(json_object *o, const char *key)
{
    json_object *v;
    return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                                                             : NULL;
}

/* The array key of o, at most NET_RECORD_MAX of it, into a fresh array of
 * size elements in *out (*n of them); NULL for none. */
static int list_of(json_object *o, const char *key, size_t size, void **out, size_t *n)
{
    json_object *a;
    *out = NULL;
    *n = 0;
    if (!json_object_object_get_ex(o, key, &a) || !json_object_is_type(a, json_type_array))
        return 0;
    size_t len = json_object_array_length(a);
    if (len > NET_RECORD_MAX)
        return -EINVAL;
    if (len && !(*out = calloc(NET_RECORD_MAX, size)))
        return -ENOMEM;
    *n = len;
    return 0;
}

/* An entry's name (copied), address and port. 0 or -ENOMEM. */
static int dest_of(json_object *e, char **name, char addr[NET_ADDR_TEXT], uint16_t *port)
{
    const char *s = text_of(e, "name"), *a = text_of(e, "address");
    snprintf(addr, NET_ADDR_TEXT, "%s", a ? a : "");
    *port = (uint16_t)u64_of(e, "port");
    *name = s ? strdup(s) : NULL;
    return s && !*name ? -ENOMEM : 0;
}

int result__network_from_json(json_object *o, struct net_record *rec)
{
    if (!o || !json_object_is_type(o, json_type_object))
        return -EINVAL;
    rec->bytes_in = u64_of(o, "bytes_in");
    rec->bytes_out = u64_of(o, "bytes_out");
    rec->connections = u64_of(o, "connections");
    rec->refused_connections = u64_of(o, "refused_connections");
    rec->dropped = u64_of(o, "dropped");
    const char *limit = text_of(o, "limit");
    rec->limit = !limit ? NULL : !strcmp(limit, "net_bytes") ? "net_bytes" : "net_connections";
    size_t n;
    void *list;
    int rc = list_of(o, "reached", sizeof *rec->reached, &list, &n);
    if (rc < 0)
        return rc;
    json_object *a;
    rec->reached = list;
    json_object_object_get_ex(o, "reached", &a);
    for (size_t i = 0; i < n; i++, rec->n_reached++) {
        json_object *e = json_object_array_get_idx(a, i);
        struct net_dest *d = &rec->reached[i];
        if ((rc = dest_of(e, &d->name, d->addr, &d->port)) < 0)
            return rc;
        d->bytes_in = u64_of(e, "bytes_in");
        d->bytes_out = u64_of(e, "bytes_out");
        d->connections = u64_of(e, "connections");
    }
    if ((rc = list_of(o, "refused", sizeof *rec->refused, &list, &n)) < 0)
        return rc;
    rec->refused = list;
    json_object_object_get_ex(o, "refused", &a);
    for (size_t i = 0; i < n; i++, rec->n_refused++) {
        json_object *e = json_object_array_get_idx(a, i);
        struct net_refusal *f = &rec->refused[i];
        if ((rc = dest_of(e, &f->name, f->addr, &f->port)) < 0)
            return rc;
        const char *why = text_of(e, "reason");
        f->reason = NET_REFUSED_UNREACHABLE;
        for (int r = NET_REFUSED_NOT_ALLOWED; why && r <= NET_REFUSED_UNREACHABLE; r++)
            if (!strcmp(why, net_refusal_reason_name((enum net_refusal_reason)r)))
                f->reason = (enum net_refusal_reason)r;
        f->detail = net__record_detail(text_of(e, "detail"));
        f->count = u64_of(e, "count");
    }
    return 0;
}

/* NAME or ADDRESS, then ":PORT", printable ASCII only (a name is a
 * script's). */
static void put_dest(struct dbuf *b, const char *name, const char *addr, uint16_t port)
{
    const char *s = name && *name ? name : addr && *addr ? addr : "?";
    for (size_t i = 0; s[i] && i < NET_NAME_MAX; i++) {
        char c = s[i] > 0x20 && s[i] < 0x7f ? s[i] : '?';
        discard(dbuf_append(b, &c, 1));
    }
    if (port)
        discard(dbuf_printf(b, ":%u", (unsigned)port));
}

char *result_network_summary(const struct result *r)
{
    const struct net_record *rec = &r->network;
    if (rec->mode == NET_MODE_OFF)
        return NULL;
    if (rec->mode == NET_MODE_HOST_UNFILTERED)
        return strdup("network: the host's own, unfiltered (nothing recorded)");
    struct dbuf b;
    dbuf_init(&b, RESULT_NET_LINE_MAX);
    char in[32], out[32];
    util_human_size(rec->bytes_in, in, sizeof in);
    util_human_size(rec->bytes_out, out, sizeof out);
    discard(dbuf_printf(&b, "network: %llu connection%s, %s in, %s out",
                        (unsigned long long)rec->connections, rec->connections == 1 ? "" : "s", in, out));
    if (rec->n_reached) {
        discard(dbuf_printf(&b, "; reached"));
        for (size_t i = 0; i < rec->n_reached && i < RESULT_NET_LINE_DESTS; i++) {
            const struct net_dest *d = &rec->reached[i];
            discard(dbuf_printf(&b, "%s ", i ? "," : ""));
            put_dest(&b, d->name, d->addr, d->port);
        }
        if (rec->n_reached > RESULT_NET_LINE_DESTS)
            discard(dbuf_printf(&b, " and %zu more", rec->n_reached - RESULT_NET_LINE_DESTS));
    }
    if (rec->n_refused) {
        discard(dbuf_printf(&b, "; refused"));
        for (size_t i = 0; i < rec->n_refused && i < RESULT_NET_LINE_DESTS; i++) {
            const struct net_refusal *f = &rec->refused[i];
            discard(dbuf_printf(&b, "%s ", i ? "," : ""));
            put_dest(&b, f->name, f->addr, f->port);
            discard(dbuf_printf(&b, " (%s%s%s)", net_refusal_reason_name(f->reason), f->detail ? ": " : "",
                                f->detail ? f->detail : ""));
        }
        if (rec->n_refused > RESULT_NET_LINE_DESTS)
            discard(dbuf_printf(&b, " and %zu more", rec->n_refused - RESULT_NET_LINE_DESTS));
    }
    if (rec->dropped)
        discard(dbuf_printf(&b, " (%llu more not listed)", (unsigned long long)rec->dropped));
    if (rec->limit)
        discard(dbuf_printf(&b, "; stopped at %s", rec->limit));
    size_t n;
    return dbuf_steal(&b, &n);
}
