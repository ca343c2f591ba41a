#ifndef LEAF_ROUTER_H
#define LEAF_ROUTER_H

/*
 * The routing table (router.c) maps method + path to a handler. A handler
 * writes exactly one response with http_respond*() and returns LEAF_OK, or
 * writes nothing and returns LEAF_EAGAIN with req->retry_ms set; the HTTP
 * layer then calls it again with the same request after that delay.
 * Unknown path: 404; known path, wrong method: 405.
 */
#include "http.h"

typedef leaf_status_t (*router_handler_fn)(struct http_request *req);

struct route {
    int method;         /* llhttp method */
    const char *path;   /* exact path, or a prefix when prefix = 1 */
    int prefix;         /* the rest of the path is the handler's argument */
    router_handler_fn fn;
    const char *name;   /* metric label */
};

leaf_status_t router_dispatch(struct http_request *req);

/* Number of routes + 2 pseudo-routes (not_found, bad_request) for metrics. */
int router_count(void);
const char *router_name(int route);

/* Pseudo-route indices used by the HTTP layer for errors before routing. */
int router_route_not_found(void);
int router_route_bad_request(void);

#endif
