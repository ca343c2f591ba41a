/*
 * The same-origin and JSON-only rule of state changes (api_origin.h). The
 * node itself is what the request's Host names, or one of its listen
 * addresses (an HTTP/1.0 client may send no Host).
 *
 * DNS rebinding: a page on evil.example whose name is made to resolve to the
 * node sends Host and Origin that agree (evil.example). So a state change
 * must also name the node in Host: an IP address (rebinding needs a name),
 * localhost, the machine's host name, or a name in leafd.http.allowed.hosts.
 */
#include "api_origin.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "door_http.h"
#include "http_check.h"
#include "llhttp.h"

static int origin_is_addr(const struct http_request *req, const char *addr) {
    return addr[0] != '\0' &&
           http_check_same_origin(req->origin, req->origin_len, addr, strlen(addr));
}

/* 1 when the Origin names this node: the Host of the request, or an address it listens on. */
static int origin_is_node(const struct http_request *req) {
    const struct leaf_config *c = door_ctx(req)->cfg;
    if (req->host != NULL &&
        http_check_same_origin(req->origin, req->origin_len, req->host, req->host_len)) {
        return 1;
    }
    char adv[64] = "";
    if (c->advertise_ip[0] != '\0') {
        snprintf(adv, sizeof(adv), "%s:%d", c->advertise_ip, c->listen_port);
    }
    return origin_is_addr(req, c->listen) || origin_is_addr(req, c->tls_listen) ||
           origin_is_addr(req, adv);
}

/* The name in a Host value "name[:port]" or "[v6]:port": its length from h. */
static size_t host_name_len(const char *h, size_t n) {
    const char *end = n > 0 && h[0] == '[' ? memchr(h, ']', n) : NULL;
    if (end != NULL) {
        return (size_t)(end - h) + 1;
    }
    const char *colon = memchr(h, ':', n);
    return colon != NULL ? (size_t)(colon - h) : n;
}

static int name_is(const char *name, size_t n, const char *want) {
    size_t w = strlen(want);
    if (n > 0 && name[n - 1] == '.') {
        n--; /* "localhost." is "localhost" */
    }
    return w > 0 && w == n && strncasecmp(name, want, n) == 0;
}

static int name_is_ip(const char *name, size_t n) {
    char buf[INET6_ADDRSTRLEN + 2];
    unsigned char addr[16];
    if (n < 2 || n >= sizeof(buf)) {
        return 0;
    }
    if (name[0] == '[') {
        memcpy(buf, name + 1, n - 2);
        buf[n - 2] = '\0';
        return name[n - 1] == ']' && inet_pton(AF_INET6, buf, addr) == 1;
    }
    memcpy(buf, name, n);
    buf[n] = '\0';
    return inet_pton(AF_INET, buf, addr) == 1;
}

/* 1 when name is one of the comma-separated list ("*" matches any). */
static int name_in_list(const char *name, size_t n, const char *list) {
    while (*list != '\0') {
        while (*list == ' ' || *list == ',') {
            list++;
        }
        size_t w = strcspn(list, ",");
        size_t t = w;
        while (t > 0 && list[t - 1] == ' ') {
            t--;
        }
        if ((t == 1 && list[0] == '*') || (t > 0 && t == n && strncasecmp(name, list, t) == 0)) {
            return 1;
        }
        list += w;
    }
    return 0;
}

/* 1 when the request's Host names this node (no Host: HTTP/1.0, never a browser). */
static int host_is_node(const struct http_request *req) {
    if (req->host == NULL) {
        return 1;
    }
    size_t n = host_name_len(req->host, req->host_len);
    char self[256];
    if (n == 0) {
        return 0;
    }
    if (name_is_ip(req->host, n) || name_is(req->host, n, "localhost")) {
        return 1;
    }
    if (gethostname(self, sizeof(self)) == 0) {
        self[sizeof(self) - 1] = '\0';
        if (name_is(req->host, n, self)) {
            return 1;
        }
    }
    return name_in_list(req->host, n, door_ctx(req)->cfg->http_allowed_hosts);
}

int api_origin_allowed(struct http_request *req) {
    if (req->method != HTTP_POST && req->method != HTTP_PUT && req->method != HTTP_DELETE) {
        return 1;
    }
    if (!host_is_node(req)) {
        door_http_error(req, DOOR_E_HOST_NOT_ALLOWED,
                        "state changes need a Host that names this node: an IP address, "
                        "localhost, its host name, or a name in leafd.http.allowed.hosts");
        return 0;
    }
    if ((req->fetch_site != NULL && http_check_cross_site(req->fetch_site, req->fetch_site_len)) ||
        (req->origin != NULL && !origin_is_node(req))) {
        door_http_error(req, DOOR_E_CROSS_ORIGIN,
                        "state changes are refused from another origin (Origin or "
                        "Sec-Fetch-Site: cross-site)");
        return 0;
    }
    if (req->content_type == NULL ||
        !http_check_json_type(req->content_type, req->content_type_len)) {
        door_http_error(req, DOOR_E_UNSUPPORTED_MEDIA_TYPE,
                        "state changes need 'Content-Type: application/json'");
        return 0;
    }
    return 1;
}
