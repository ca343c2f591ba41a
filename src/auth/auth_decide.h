#ifndef LEAF_AUTH_DECIDE_H
#define LEAF_AUTH_DECIDE_H

/*
 * The authorisation decision, one function for both protocols
 * (docs/SECURITY.md, "Users and permissions"). Pure code, unit-tested in tests/unit/test_auth.c.
 *
 * The caller first establishes who is asking:
 *   HTTP  auth_header_parse() on the Authorization value; Basic ->
 *         auth_secret_authenticate(); Bearer -> compare with
 *         leafd.admin.token (auth_secret_equal) and use auth_user_root().
 *   RESP  AUTH / HELLO AUTH -> auth_secret_authenticate() and
 *         auth_session_set(); each command -> auth_session_user().
 * then asks auth_decide() with what the route or command needs (a column of
 * the route table / command table) and the key it touches. The verdict
 * carries both protocols' answers (see AUTH_VERDICT_MAP).
 *
 * The admin flag does not imply ids or create: a user who should get IDs
 * everywhere gets the grant `*`. The legacy admin token is a root user:
 * admin, and create on `*` (what the token guarded before users existed),
 * but no ids.
 */
#include <stddef.h>

#include "auth_grant.h"
#include "auth_user.h"

/* What a route or command needs; the column in the route and command tables. */
enum auth_need {
    AUTH_NEED_NONE,    /* open: /health, /ready, /metrics, PING, HELLO, AUTH ... */
    AUTH_NEED_IDS,     /* get IDs of key */
    AUTH_NEED_CREATE,  /* create key (a tag, a sequence) */
    AUTH_NEED_ADMIN,   /* users, steps, demote, /db, decode opaque */
    AUTH_NEED_METRICS, /* every family of /metrics: admin, or metrics on the pattern * */
    AUTH_NEED_USER,    /* any user: what holds memory for a client (RESP MULTI) */
};

/* What the client presented. */
enum auth_cred {
    AUTH_CRED_NONE, /* no credentials (no header, never AUTHed, or the session lapsed) */
    AUTH_CRED_BAD,  /* malformed, unknown user or wrong secret */
    AUTH_CRED_OK,   /* a verified user */
};

/*
 * Verdicts: enum, metric/log name, HTTP status, HTTP error code, RESP error
 * line (without the leading '-' and CRLF). The RESP texts are Redis's own
 * words where clients act on them.
 */
#define AUTH_VERDICT_MAP(X)                                                                        \
    X(AUTH_ALLOW, "allow", 200, NULL, NULL)                                                        \
    X(AUTH_NOAUTH, "no_credentials", 401, "unauthorized", "NOAUTH Authentication required.")       \
    X(AUTH_WRONGPASS, "bad_credentials", 401, "unauthorized",                                      \
      "WRONGPASS invalid username-password pair or user is disabled.")                             \
    X(AUTH_FORBIDDEN, "forbidden", 403, "forbidden",                                               \
      "NOPERM this user has no permissions to access this key or command")

enum auth_verdict {
#define AUTH_VERDICT_ENUM(name, text, status, code, resp) name,
    AUTH_VERDICT_MAP(AUTH_VERDICT_ENUM)
#undef AUTH_VERDICT_ENUM
};

/*
 * The decision. user is the verified user when cred is AUTH_CRED_OK (NULL
 * otherwise; AUTH_CRED_OK with NULL counts as bad). key is the key the
 * request touches, for AUTH_NEED_IDS and AUTH_NEED_CREATE (NULL there is
 * refused: fail closed); ignored otherwise.
 *
 * NONE needs nothing: ALLOW whatever was presented. Otherwise no credentials
 * -> NOAUTH, bad ones -> WRONGPASS, a user without the right -> FORBIDDEN.
 */
enum auth_verdict auth_decide(enum auth_cred cred, const struct auth_user *user,
                              enum auth_need need, const struct auth_key *key);

/* The verdict's RESP answer (see AUTH_VERDICT_MAP; HTTP's are rows of src/door/door_errors.h);
 * NULL when unknown. */
const char *auth_verdict_resp(enum auth_verdict v);

/* The user that stands for leafd.admin.token (static, never freed). */
const struct auth_user *auth_user_root(void);

#endif
