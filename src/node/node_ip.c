#include "node_ip.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>

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
