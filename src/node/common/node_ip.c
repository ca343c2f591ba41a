/*
 * The address this node advertises, and the check that it is one it listens
 * on (node_ip.h).
 * Layer: the node's common floor (src/node/common); libc (getifaddrs) and
 * src/config only.
 */
#include "node_ip.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "log.h"

static leaf_status_t first_ipv4(char *ip, size_t cap) {
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) {
        log_error("node", "getifaddrs() failed; set leafd.snowflake.advertise.ip");
        return LEAF_ERR;
    }
    leaf_status_t st = LEAF_ENOTFOUND;
    for (i = ifs; i != NULL && st != LEAF_OK; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) {
            continue;
        }
        struct in_addr a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        if ((ntohl(a.s_addr) >> 24) != 127 && inet_ntop(AF_INET, &a, ip, (socklen_t)cap)) {
            st = LEAF_OK;
        }
    }
    freeifaddrs(ifs);
    if (st != LEAF_OK) {
        log_error("node", "no non-loopback IPv4 address found; set leafd.snowflake.advertise.ip");
    }
    return st;
}

leaf_status_t node_advertise_ip(const struct leaf_config *cfg, char *ip, size_t cap) {
    if (cfg->advertise_ip[0]) {
        snprintf(ip, cap, "%s", cfg->advertise_ip);
        return LEAF_OK;
    }
    return first_ipv4(ip, cap);
}

/* 1 when ip is the address of one of this host's interfaces (or getifaddrs fails: no claim). */
static int ip_is_local(const char *ip) {
    struct ifaddrs *ifs, *i;
    struct in_addr want;
    if (inet_pton(AF_INET, ip, &want) != 1 || getifaddrs(&ifs) != 0) {
        return 1;
    }
    int found = 0;
    for (i = ifs; i != NULL && !found; i = i->ifa_next) {
        if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET) {
            found = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr == want.s_addr;
        }
    }
    freeifaddrs(ifs);
    return found;
}

void node_advertise_check(const struct leaf_config *cfg, const char *ip, int port) {
    const char *why = NULL;
    if (port != cfg->listen_port) {
        why = "its port is not leafd.listen's (leaf.snowflake.port differs)";
    } else if (strcmp(cfg->listen_host, "0.0.0.0") != 0 && strcmp(cfg->listen_host, ip) != 0) {
        why = "its ip is not leafd.listen's host";
    } else if (strcmp(cfg->listen_host, "0.0.0.0") == 0 && !ip_is_local(ip)) {
        why = "its ip is on none of this host's interfaces (fine only behind a forwarding NAT)";
    }
    if (why != NULL) {
        log_warn("node",
                 "ADVERTISED ADDRESS %s:%d IS NOT WHERE THIS NODE LISTENS (leafd.listen = %s): %s; "
                 "peers cannot reach it and skip their start-up clock check on it "
                 "(check leafd.snowflake.advertise.ip and leaf.snowflake.port)",
                 ip, port, cfg->listen, why);
    }
}
