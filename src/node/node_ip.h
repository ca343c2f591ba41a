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

#endif
