/* exec_net.c: a call's network between the front door and the engine: the
 * check of exec_spec.network against the server's settings. */
#include "config.h"

#include "executor.h"
#include "net.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
