#ifndef LEAF_API_ORIGIN_H
#define LEAF_API_ORIGIN_H

/*
 * Browsers cannot be used against a node (docs/SECURITY.md): a state
 * change (POST, PUT, DELETE) must say its body is JSON, which a page on
 * another site cannot send without a CORS preflight that leafd never
 * answers, and must not come from another origin (Origin, or
 * Sec-Fetch-Site: cross-site). The route table asks before the credentials are
 * checked, so a forged request spends neither an admin's login nor the
 * failed-authentication budget.
 */
#include "door_ctx.h"

/* 1 when the request may go on; else answers 403 cross_origin or 415 and returns 0. */
int api_origin_allowed(struct http_request *req);

#endif
