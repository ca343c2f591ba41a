#ifndef LEAF_API_AUTH_H
#define LEAF_API_AUTH_H

/*
 * Who may do what over HTTP (api_auth.c), and the failure log line both
 * protocols write. api_route_allowed is the router's check of a route's
 * need; with auth off it applies the rule from before users existed (ID
 * routes open; admin and create routes need leafd.admin.token, or a
 * loopback client when no token is set; open_without_auth: Leaf's open
 * /cache page). api_authorize_key decides need on a key the handler read;
 * both answer 401/403 themselves, return 0 when refused, and
 * api_authorize_key allows all with auth off.
 */
#include <stddef.h>

#include "api_ctx.h"
#include "auth_decide.h"
#include "http_proto.h"

/* The right's name as the reference tables print it: "-" (none), ids, create, admin, metrics. */
const char *api_auth_need_name(enum auth_need need);
int api_route_allowed(struct http_request *req, enum auth_need need, int open_without_auth,
                      const struct auth_key *key);
/*
 * The view of /metrics: 1 all of it (auth off, an admin, or the metrics right on *), 0 node-level
 * only (no credentials, or a user without the right), -1 when wrong credentials were answered 401.
 */
int api_metrics_view(struct http_request *req);

/* Whether the request's credentials hold need on the key, silently (no answer, no failure
 * counted: the route's own check has answered for the credentials already); 1 with auth off. */
int api_auth_may(struct http_request *req, enum auth_need need, enum ids_mode mode,
                 const char *name, size_t len);
int api_authorize_key(struct http_request *req, enum auth_need need, enum ids_mode mode,
                      const char *name, size_t len);
/* A failed authentication's warn line, at most one a second per client address. */
/*
 * The failed-authentication limit (auth_limit.h), for a request that
 * presents credentials: api_auth_limited is 1 when its client is blocked
 * (HTTP: answered 429 already); api_auth_count_failure counts a failure
 * whose reason is one (not missing credentials, not a lapsed session).
 */
int api_auth_limited(const struct api_ctx *ctx, const char *peer);
void api_auth_count_failure(const struct api_ctx *ctx, const char *peer, enum user_failure why);
void api_auth_log_failure(const struct api_ctx *ctx, const char *proto, const char *peer,
                          enum user_failure why, const char *user, size_t user_len);

#endif
