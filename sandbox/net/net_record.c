/* net_record.c: the record of what a run did on the network (struct
 * net_record): its entries added as the proxy and the resolver see them,
 * and the record handed from the proxy's process back to the run's. */
#include "config.h"

#include "net.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void net_record_init(struct net_record *rec)
{
    memset(rec, 0, sizeof *rec);
}

void net_record_free(struct net_record *rec)
{
    for (size_t i = 0; i < rec->n_reached; i++)
        free(rec->reached[i].name);
    for (size_t i = 0; i < rec->n_refused; i++)
        free(rec->refused[i].name);
    free(rec->reached);
    free(rec->refused);
    net_record_init(rec);
}

static bool same_name(const char *a, const char *b)
{
    return (!a && !b) || (a && b && !strcmp(a, b));
}

int net__record_reach(struct net_record *rec, const char *name, const struct ipaddr *a, uint64_t in, uint64_t out,
                      uint64_t conns)
{
    char addr[NET_ADDR_TEXT];
    net_addr_text(a, addr);
    rec->bytes_in += in;
    rec->bytes_out += out;
    rec->connections += conns;
    for (size_t i = 0; i < rec->n_reached; i++) {
        struct net_dest *d = &rec->reached[i];
        if (d->port == a->port && !strcmp(d->addr, addr) && same_name(d->name, name)) {
            d->bytes_in += in;
            d->bytes_out += out;
            d->connections += conns;
            return 0;
        }
    }
    if (rec->n_reached == NET_RECORD_MAX) {
        rec->dropped += conns;
        return 0;
    }
    if (!rec->reached && !(rec->reached = calloc(NET_RECORD_MAX, sizeof *rec->reached)))
        return -ENOMEM;
    struct net_dest *d = &rec->reached[rec->n_reached];
    memset(d, 0, sizeof *d);
    if (name && !(d->name = strdup(name)))
        return -ENOMEM;
    memcpy(d->addr, addr, sizeof addr);
    d->port = a->port;
    d->bytes_in = in;
    d->bytes_out = out;
    d->connections = conns;
    rec->n_reached++;
    return 0;
}

int net__record_refuse(struct net_record *rec, const char *name, const struct ipaddr *a, enum net_refusal_reason why,
                       const char *detail)
{
    char addr[NET_ADDR_TEXT] = "";
    uint16_t port = 0;
    if (a) {
        net_addr_text(a, addr);
        port = a->port;
    }
    rec->refused_connections++;
    for (size_t i = 0; i < rec->n_refused; i++) {
        struct net_refusal *f = &rec->refused[i];
        if (f->port == port && f->reason == why && !strcmp(f->addr, addr) && same_name(f->name, name)) {
            f->count++;
            return 0;
        }
    }
    if (rec->n_refused == NET_RECORD_MAX) {
        rec->dropped++;
        return 0;
    }
    if (!rec->refused && !(rec->refused = calloc(NET_RECORD_MAX, sizeof *rec->refused)))
        return -ENOMEM;
    struct net_refusal *f = &rec->refused[rec->n_refused];
    memset(f, 0, sizeof *f);
    if (name && !(f->name = strdup(name)))
        return -ENOMEM;
    memcpy(f->addr, addr, sizeof addr);
    f->port = port;
    f->reason = why;
    f->detail = detail;
    f->count = 1;
    rec->n_refused++;
    return 0;
}

/* ------------------------------------------------- across the processes */

/* Every detail a refusal can carry is one of these static strings (or an
 * address class's name): the record crosses processes by its index. */
static const char *const details[] = {
    "the server's own", "net_bytes", "net_connections", "connection refused", "timed out", "network unreachable",
    "host unreachable", "failed",
};

static int detail_index(const char *d)
{
    if (!d)
        return -1;
    for (size_t i = 0; i < ARRAY_SIZE(details); i++)
        if (!strcmp(details[i], d))
            return (int)i;
    for (int c = IPADDR_PUBLIC; c <= IPADDR_INVALID; c++)
        if (!strcmp(ipaddr_class_name((enum ipaddr_class)c), d))
            return 100 + c;
    return -1;
}

static const char *detail_of(int i)
{
    if (i >= 0 && (size_t)i < ARRAY_SIZE(details))
        return details[i];
    if (i >= 100 + IPADDR_PUBLIC && i <= 100 + IPADDR_INVALID)
        return ipaddr_class_name((enum ipaddr_class)(i - 100));
    return NULL;
}

const char *net__record_detail(const char *text)
{
    return detail_of(detail_index(text));
}

/* The wire form: a header, then fixed-size entries. */
struct wire_head {
    uint64_t bytes_in, bytes_out, connections, refused_connections, dropped;
    uint32_t n_reached, n_refused;
    int32_t limit; /* 0 none, 1 net_bytes, 2 net_connections */
};
struct wire_entry {
    char name[NET_NAME_MAX + 1];
    char addr[NET_ADDR_TEXT];
    uint8_t has_name;
    uint16_t port;
    int32_t reason, detail;
    uint64_t a, b, c; /* in, out, connections; or count */
};

int net__record_write(int fd, const struct net_record *rec)
{
    struct wire_head h = {rec->bytes_in, rec->bytes_out, rec->connections, rec->refused_connections, rec->dropped,
                          (uint32_t)rec->n_reached, (uint32_t)rec->n_refused,
                          !rec->limit ? 0 : !strcmp(rec->limit, "net_bytes") ? 1 : 2};
    int rc = util_write_all(fd, &h, sizeof h);
    for (size_t i = 0; rc == 0 && i < rec->n_reached + rec->n_refused; i++) {
        struct wire_entry e;
        memset(&e, 0, sizeof e);
        if (i < rec->n_reached) {
            const struct net_dest *d = &rec->reached[i];
            e.has_name = d->name != NULL;
            snprintf(e.name, sizeof e.name, "%s", d->name ? d->name : "");
            memcpy(e.addr, d->addr, sizeof e.addr);
            e.port = d->port;
            e.a = d->bytes_in, e.b = d->bytes_out, e.c = d->connections;
        } else {
            const struct net_refusal *f = &rec->refused[i - rec->n_reached];
            e.has_name = f->name != NULL;
            snprintf(e.name, sizeof e.name, "%s", f->name ? f->name : "");
            memcpy(e.addr, f->addr, sizeof e.addr);
            e.port = f->port;
            e.reason = (int32_t)f->reason;
            e.detail = detail_index(f->detail);
            e.a = f->count;
        }
        rc = util_write_all(fd, &e, sizeof e);
    }
    return rc;
}

/* Reads n bytes by the deadline (util_now_ms's clock). */
static int read_by(int fd, void *buf, size_t n, int64_t deadline_ms)
{
    size_t got = 0;
    while (got < n) {
        int64_t left = deadline_ms - util_now_ms();
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int pr = poll(&pfd, 1, left > 0 ? (int)left : 0);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            return pr < 0 ? -errno : -ETIMEDOUT;
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return r < 0 ? -errno : -EPIPE;
        got += (size_t)r;
    }
    return 0;
}

int net__record_read(int fd, struct net_record *rec, int64_t deadline_ms)
{
    struct wire_head h;
    int rc = read_by(fd, &h, sizeof h, deadline_ms);
    if (rc < 0)
        return rc;
    if (h.n_reached > NET_RECORD_MAX || h.n_refused > NET_RECORD_MAX)
        return -EPROTO;
    for (uint32_t i = 0; rc == 0 && i < h.n_reached + h.n_refused; i++) {
        struct wire_entry e;
        if ((rc = read_by(fd, &e, sizeof e, deadline_ms)) < 0)
            break;
        e.name[sizeof e.name - 1] = '\0';
        e.addr[sizeof e.addr - 1] = '\0';
        char *name = e.has_name ? strdup(e.name) : NULL;
        if (e.has_name && !name) {
            rc = -ENOMEM;
            break;
        }
        if (i < h.n_reached) {
            if (!rec->reached && !(rec->reached = calloc(NET_RECORD_MAX, sizeof *rec->reached))) {
                free(name);
                rc = -ENOMEM;
                break;
            }
            struct net_dest *d = &rec->reached[rec->n_reached++];
            d->name = name;
            memcpy(d->addr, e.addr, sizeof d->addr);
            d->port = e.port;
            d->bytes_in = e.a, d->bytes_out = e.b, d->connections = e.c;
        } else {
            if (!rec->refused && !(rec->refused = calloc(NET_RECORD_MAX, sizeof *rec->refused))) {
                free(name);
                rc = -ENOMEM;
                break;
            }
            struct net_refusal *f = &rec->refused[rec->n_refused++];
            f->name = name;
            memcpy(f->addr, e.addr, sizeof f->addr);
            f->port = e.port;
            f->reason = (enum net_refusal_reason)e.reason;
            f->detail = detail_of(e.detail);
            f->count = e.a;
        }
    }
    rec->bytes_in = h.bytes_in, rec->bytes_out = h.bytes_out;
    rec->connections = h.connections, rec->refused_connections = h.refused_connections;
    rec->dropped = h.dropped;
    rec->limit = h.limit == 1 ? "net_bytes" : h.limit == 2 ? "net_connections" : NULL;
    return rc;
}
