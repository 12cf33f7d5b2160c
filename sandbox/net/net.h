/* net.h: the engine of a run's network (sandbox/net/): the policy's rules
 * and matcher, and the proxy and resolver that hold it for a run whose
 * network is on (doc/isolation.md, "The network"). Its public face is
 * executor/network.h; this is for the executor's own files. */
#ifndef RMS_NET_H
#define RMS_NET_H

#include "executor/network.h"

#endif
