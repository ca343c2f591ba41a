#ifndef LEAF_NODE_IP_H
#define LEAF_NODE_IP_H

/*
 * The IPv4 address this node gives its peers and clients (ZooKeeper
 * registrations, redirects): leafd.snowflake.advertise.ip, or else the first
 * non-loopback IPv4 address, as Leaf picks it. Errors are logged.
 */
#include <stddef.h>

#include "config.h"
#include "status.h"

leaf_status_t node_advertise_ip(const struct leaf_config *cfg, char *ip, size_t cap);

/*
 * Warns (loudly, once per call) when the advertised ip:port is not an
 * address this node listens on: a port other than leafd.listen's, an ip
 * other than a specific listen host, or, listening on 0.0.0.0, an ip that is
 * on none of this host's interfaces. Peers would then fail to reach the
 * node, and skip their start-up clock check on it.
 */
void node_advertise_check(const struct leaf_config *cfg, const char *ip, int port);

#endif
