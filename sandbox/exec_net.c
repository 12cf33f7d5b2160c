/* exec_net.c: a run's network between the call and the engine: the check
 * of a call's network against the server's settings, and for a run whose
 * network is on, the policy made, the jail's sockets received and handed
 * to the proxy (sandbox/net/), and its record put into the result. */
#include "config.h"

#include "exec_ctx.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
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
    if ((rc = jail_net_load(err, sizeof err)) < 0) {
        exec__set_error(run->r, "%s (script_network = on needs libnftables)", err);
        return rc;
    }
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, n->sv) < 0) {
        rc = -errno;
        exec__set_error(run->r, "the run's network: socketpair: %s", strerror(-rc));
        return rc;
    }
    run->net = n;
    return 0;
}

int exec__net_started(struct run *run, struct exec_net *n)
{
    close(n->sv[1]);
    n->sv[1] = -1;
    int fds[JAIL_NET_N];
    _Static_assert((int)JAIL_NET_N == (int)NET_FD_N && (int)JAIL_NET_TCP6 == (int)NET_FD_TCP6 &&
                       (int)JAIL_NET_DNS4 == (int)NET_FD_DNS4,
                   "the jail's sockets are the proxy's, in the same order");
    int rc = jail_net_receive(n->sv[0], fds);
    if (rc < 0) {
        exec__set_error(run->r, "the run's network: its sockets did not come from the jail: %s", strerror(-rc));
        return rc;
    }
    const struct exec_limits *lim = &run->spec->limits;
    rc = net_proxy_start(&n->px, &n->pol, fds, lim->net_bytes, lim->net_connections);
    for (int i = 0; i < JAIL_NET_N; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    if (rc < 0)
        exec__set_error(run->r, "the run's network: starting its proxy: %s", strerror(-rc));
    return rc;
}

void exec__net_end(struct run *run, struct exec_net *n)
{
    struct result *r = run->r;
    if (n->px.pid > 0) {
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
    if (run->net == n)
        run->net = NULL;
}
