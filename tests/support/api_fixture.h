#ifndef LEAF_API_FIXTURE_H
#define LEAF_API_FIXTURE_H

/*
 * A real API context for tests and fuzzers that drive the HTTP protocol and
 * the route table without sockets: the configuration's defaults, a static-worker
 * snowflake node (worker 1, its cache in a temp dir) started on a private
 * libuv loop that never runs, segment mode off. Nothing is stubbed.
 *
 * api_fixture_conn() opens one HTTP connection's protocol state on it; the
 * caller feeds bytes with http_proto_ops.input and reads session.out.
 * api_fixture_resp_conn() does the same for a RESP connection
 * (resp_proto_ops, the command table of src/tables/table_resp.c).
 */
#include "api.h"

struct door_ctx *api_fixture_init(void);
struct session *api_fixture_conn(int loopback);
void api_fixture_close(struct session *s);
/* The RESP output budget before AUTH of the connections opened next (resp_conn_config). */
void api_fixture_resp_anonymous_out(size_t max);
struct session *api_fixture_resp_conn(int loopback);
void api_fixture_resp_close(struct session *s);
void api_fixture_done(void);

#endif
