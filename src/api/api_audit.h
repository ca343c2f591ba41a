#ifndef LEAF_API_AUDIT_H
#define LEAF_API_AUDIT_H

/*
 * The audit trail (docs/SECURITY.md): one info line with component=audit
 * for every answered admin change over HTTP (users and grants, tag creation,
 * step changes, cache init, sequence and keyed space creation, demotion), refused ones too:
 *   user=ops client=127.0.0.1:41234 action=leaf_create object=orders status=201 outcome=ok
 * who: the Basic user name, admin-token (Bearer) or loopback (no credentials
 * and no token configured, the rule without users); never a secret. The
 * route table (src/tables/table_http.c) calls it once the request is answered.
 */
#include "door_ctx.h"

/* Logs the audit line of an answered state change; route is the route's metric name. */
void api_audit(const struct http_request *req, const char *route);

#endif
