#ifndef LEAF_DOOR_HTTP_AUTH_H
#define LEAF_DOOR_HTTP_AUTH_H

/*
 * Who may do what over HTTP (door_http_auth.c): the HTTP face of the one
 * auth door (door_auth.h). door_http_auth_route is the route table's check of a
 * route's need; with auth off it applies the rule from before users existed
 * (ID routes open; admin and create routes need leafd.admin.token, or a
 * loopback client when no token is set; open_without_auth: Leaf's open
 * /cache page). door_http_auth_key decides need on a key the handler read;
 * both answer 401/403/429 themselves, return 0 when refused, and
 * door_http_auth_key allows all with auth off.
 */
#include <stddef.h>

#include "auth_decide.h"
#include "door_ctx.h"
#include "http_conn.h"

int door_http_auth_route(struct http_request *req, enum auth_need need, int open_without_auth,
                         const struct auth_key *key);
int door_http_auth_key(struct http_request *req, enum auth_need need, enum ids_mode mode,
                       const char *name, size_t len);
/* Whether the request's credentials hold need on the key, silently (no answer, no failure
 * counted: the route's own check has answered for the credentials already); 1 with auth off. */
int door_http_auth_may(struct http_request *req, enum auth_need need, enum ids_mode mode,
                       const char *name, size_t len);
/*
 * The view of /metrics: 1 all of it (auth off, an admin, or the metrics right on *), 0 node-level
 * only (no credentials, or a user without the right), -1 when wrong credentials were answered 401.
 */
int door_http_auth_metrics_view(struct http_request *req);

#endif
