/*
 * The same-origin and JSON-only rule of state changes (api_origin.h). The
 * node itself is what the request's Host names, or one of its listen
 * addresses (an HTTP/1.0 client may send no Host).
 */
#include "api_origin.h"

#include <stdio.h>
#include <string.h>

#include "http_check.h"
#include "llhttp.h"

static int origin_is_addr(const struct http_request *req, const char *addr) {
    return addr[0] != '\0' &&
           http_check_same_origin(req->origin, req->origin_len, addr, strlen(addr));
}

/* 1 when the Origin names this node: the Host of the request, or an address it listens on. */
static int origin_is_node(const struct http_request *req) {
    const struct leaf_config *c = api_ctx(req)->cfg;
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

int api_origin_allowed(struct http_request *req) {
    if (req->method != HTTP_POST && req->method != HTTP_PUT && req->method != HTTP_DELETE) {
        return 1;
    }
    if ((req->fetch_site != NULL && http_check_cross_site(req->fetch_site, req->fetch_site_len)) ||
        (req->origin != NULL && !origin_is_node(req))) {
        http_respond_error(req, 403, "cross_origin",
                           "state changes are refused from another origin (Origin or "
                           "Sec-Fetch-Site: cross-site)");
        return 0;
    }
    if (req->content_type == NULL ||
        !http_check_json_type(req->content_type, req->content_type_len)) {
        http_respond_error(req, 415, "unsupported_media_type",
                           "state changes need 'Content-Type: application/json'");
        return 0;
    }
    return 1;
}
