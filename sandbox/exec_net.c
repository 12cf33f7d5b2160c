/* exec_net.c: a run's network between the call and the engine: the check
 * of a call's network against the server's settings, and for a run whose
 * network is on, the policy made, the jail's sockets received and handed
 * to the proxy (sandbox/net/), and its record put into the result. */
#include "config.h"

#include "exec_ctx.h"
#include "proc.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

int exec_check_network(const struct exec_config *cfg, const char *network, char *err, size_t errlen)
{
    if (!network || !strcmp(network, "off"))
        return 0;
    if (cfg->script_network == NET_MODE_OFF) {
        snprintf(err, errlen, "network: this server gives scripts no network (script_network = off)");
        return -EINVAL;
    }
    if (!strcmp(network, "on"))
        return 0;
    if (cfg->script_network == NET_MODE_HOST_UNFILTERED) {
        snprintf(err, errlen,
                 "network: this server's scripts have the host's network unfiltered (script_network = "
                 "host-unfiltered), which no list can narrow; a call may only say \"off\" or \"on\"");
        return -EINVAL;
    }
    struct net_rules rules;
    char why[160];
    int rc = net_rules_parse(network, &rules, why, sizeof why);
    if (rc < 0) {
        snprintf(err, errlen, "network: %s", why);
        return rc == -ENOMEM ? rc : -EINVAL;
    }
    net_rules_free(&rules);
    return 0;
}

/* A fresh socketpair, and the proxy on our end of it (its policy n->pol,
 * the call's limits). */
static int net_pair(struct run *run, struct exec_net *n)
{
    for (int i = 0; i < 2; i++)
        if (n->sv[i] >= 0)
            close(n->sv[i]);
    n->sv[0] = n->sv[1] = -1;
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, n->sv) < 0) {
        int rc = -errno;
        exec__set_error(run->r, "the run's network: socketpair: %s", strerror(-rc));
        return rc;
    }
    const struct exec_limits *lim = &run->spec->limits;
    int rc = net_proxy_start(&n->px, &n->pol, n->sv[0], lim->net_bytes, lim->net_connections);
    close(n->sv[0]);
    n->sv[0] = -1;
    if (rc < 0)
        exec__set_error(run->r, "the run's network: starting its proxy: %s", strerror(-rc));
    return rc;
}

int exec__net_begin(struct run *run, struct exec_net *n)
{
    const struct exec_spec *spec = run->spec;
    const struct exec_config *cfg = spec->cfg;
    *n = (struct exec_net){.sv = {-1, -1}, .px = {.ctl = -1, .rec = -1}};
    n->mode = spec->network && !strcmp(spec->network, "off") ? NET_MODE_OFF : cfg->script_network;
    run->r->network.mode = n->mode;
    if (n->mode != NET_MODE_ON)
        return 0;
    char err[256];
    int rc = net_policy_init(&n->pol, cfg->egress_allow, cfg->egress_deny, spec->network, err, sizeof err);
    if (rc < 0) {
        exec__set_error(run->r, "the run's network policy: %s", err);
        return rc;
    }
    n->has_policy = true;
    /* libnftables is not loaded here: the rules are made by the run's
     * init (or its zygote, its spare), which loads it and says so when it
     * is missing; here a warm run would pay for it (and its proxy's fork
     * for its mappings) for nothing. */
    if ((rc = net_pair(run, n)) < 0)
        return rc;
    run->net = n;
    return 0;
}

int exec__net_renew(struct run *run, struct exec_net *n)
{
    /* The proxy of the warm start that failed goes with what it got. */
    struct net_record rec;
    net_record_init(&rec);
    discard(net_proxy_stop(&n->px, &rec));
    net_record_free(&rec);
    return net_pair(run, n);
}

void exec__net_started(struct exec_net *n)
{
    /* Init has its copy; ours would keep the proxy waiting for sockets
     * that never come if the jail dies. */
    if (n->sv[1] >= 0)
        close(n->sv[1]);
    n->sv[1] = -1;
}

void exec__net_end(struct run *run, struct exec_net *n)
{
    if (n->px.pid > 0 && !run) {
        /* A kernel's or the installer's: what it did is in no result. */
        struct net_record rec;
        net_record_init(&rec);
        discard(net_proxy_stop(&n->px, &rec));
        log_msg(LOG_LVL_INFO, "a network with no result of its own (a kernel's, the installer's): %llu connections, %llu bytes in, %llu out, %llu refused",
                (unsigned long long)rec.connections, (unsigned long long)rec.bytes_in,
                (unsigned long long)rec.bytes_out, (unsigned long long)rec.refused_connections);
        net_record_free(&rec);
    } else if (n->px.pid > 0) {
        struct result *r = run->r;
        int rc = net_proxy_stop(&n->px, &r->network);
        if (rc < 0)
            log_msg(LOG_LVL_WARN, "the run's network record is incomplete: %s", strerror(-rc));
        if (r->network.limit && !r->limit)
            r->limit = r->network.limit;
        if (r->network.limit)
            exec__system_line(run, "[runmyscript] the run's network stopped at its limit (%s)", r->network.limit);
    }
    for (int i = 0; i < 2; i++)
        if (n->sv[i] >= 0)
            close(n->sv[i]);
    if (n->has_policy)
        net_policy_free(&n->pol);
    n->has_policy = false;
    n->sv[0] = n->sv[1] = -1;
    if (run && run->net == n)
        run->net = NULL;
}

/* ---------------------------------------------------- the installer's */

/* The installers' default index (index_url = default): the hosts pip
 * itself names as its default, asked of the server's Python once a process
 * (pip's own constants, not a copy of them here). "" when pip does not say:
 * then the installer reaches only the sources the operator named. */
static const char *default_index_rules(const struct exec_config *cfg)
{
    static char rules[512];
    static bool asked;
    if (asked)
        return rules;
    asked = true;
    const char *const argv[] = {cfg->python ? cfg->python : "/usr/bin/python3", "-I", "-c",
                                "from pip._internal.models.index import PyPI as p\n"
                                "print('%s:443,%s:443,' % (p.netloc, p.file_storage_domain))",
                                NULL};
    const char *const envp[] = {"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", NULL};
    cleanup_free char *out = NULL;
    int st = 0;
    if (proc_run(argv, envp, 30000, sizeof rules - 1, &out, &st, NULL, NULL) == 0 && WIFEXITED(st) &&
        WEXITSTATUS(st) == 0 && out && strlen(out) < sizeof rules) {
        snprintf(rules, sizeof rules, "%.*s", (int)strcspn(out, "\n"), out);
    } else {
        log_msg(LOG_LVL_WARN, "the installer's network: pip did not name its default index; the installer "
                              "reaches only index_url, extra_index_url and find_links");
        rules[0] = '\0';
    }
    return rules;
}

/* "host:port" of each http(s) URL of list (blank-separated) appended to b. */
static int urls_rules(struct dbuf *b, const char *list)
{
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", list ? list : "");
    int rc = 0;
    for (char *save = NULL, *u = strtok_r(copy, " \t,", &save); rc == 0 && u; u = strtok_r(NULL, " \t,", &save)) {
        bool tls = !strncmp(u, "https://", 8);
        if (!tls && strncmp(u, "http://", 7) != 0)
            continue; /* a directory, a file:// URL: no network */
        char *host = u + (tls ? 8 : 7);
        host[strcspn(host, "/?#")] = '\0';
        char *at = strrchr(host, '@'); /* user:password@ */
        if (at)
            host = at + 1;
        char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
        if (colon && host[0] == '[')
            colon++;
        rc = colon ? dbuf_printf(b, "%s,", host) : dbuf_printf(b, "%s:%d,", host, tls ? 443 : 80);
    }
    return rc;
}

int exec__net_installer_open(void *ctx, int *sock)
{
    struct run *run = ctx;
    const struct exec_config *cfg = run->spec->cfg;
    const struct exec_deps_config *d = &cfg->deps;
    struct dbuf b;
    dbuf_init(&b, 64 * 1024);
    int rc = d->index_url ? urls_rules(&b, d->index_url) : dbuf_printf(&b, "%s", default_index_rules(cfg));
    if (rc == 0)
        rc = urls_rules(&b, d->extra_index_url);
    if (rc == 0)
        rc = urls_rules(&b, d->find_links);
    struct exec_net *n = calloc(1, sizeof *n);
    char err[256];
    if (rc == 0 && !n)
        rc = -ENOMEM;
    if (rc == 0) {
        *n = (struct exec_net){.mode = NET_MODE_ON, .sv = {-1, -1}, .px = {.ctl = -1, .rec = -1}};
        rc = net_policy_init(&n->pol, b.data ? b.data : "", cfg->egress_deny, NULL, err, sizeof err);
        if (rc < 0)
            log_msg(LOG_LVL_WARN, "the installer's network: %s", err);
        n->has_policy = rc == 0;
        n->pol.sources = true;
    }
    if (rc == 0)
        rc = jail_net_load(err, sizeof err);
    dbuf_free(&b);
    if (rc == 0) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
            rc = -errno;
        else {
            n->sv[1] = sv[1];
            rc = net_proxy_start(&n->px, &n->pol, sv[0], UINT64_MAX, UINT64_MAX);
            close(sv[0]);
        }
    }
    if (rc < 0) {
        if (n) {
            exec__net_end(NULL, n);
            free(n);
        }
        return rc;
    }
    run->install_net = n;
    *sock = n->sv[1];
    return 0;
}

void exec__net_installer_close(void *ctx)
{
    struct run *run = ctx;
    if (!run->install_net)
        return;
    exec__net_end(NULL, run->install_net);
    free(run->install_net);
    run->install_net = NULL;
}
