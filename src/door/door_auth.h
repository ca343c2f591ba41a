#ifndef LEAF_DOOR_AUTH_H
#define LEAF_DOOR_AUTH_H

/*
 * Who may do what, for both protocols (door_auth.c): the one door every
 * check of credentials goes through. A protocol's face says who asks (an
 * HTTP request's Authorization header, or the session a RESP connection's
 * AUTH set) and turns the verdict into its own answer: HTTP's is
 * door_http_auth.h, RESP's src/commands/command_auth.h. The decision is
 * src/auth's, the users the user service's.
 *
 * A failure is counted against the client's address (the failed-
 * authentication limit, auth_limit.h) unless its reason is none (missing
 * credentials, a lapsed session), and logged: one warn line a second per
 * address at most, naming the protocol and, for a known user, the user.
 */
#include <stddef.h>

#include "auth_decide.h"
#include "door_ctx.h"
#include "status.h"

/* Who asks, as a protocol presents it. */
struct door_auth_who {
    const char *proto;                  /* "http" or "resp": the failure line's word */
    const char *peer;                   /* the client's address: the limit's key */
    const struct user_creds *creds;     /* HTTP: the Authorization header's credentials */
    const struct auth_session *session; /* RESP: who AUTHed (when creds is NULL) */
    const char *user;                   /* the user name a failure line gives */
    size_t user_len;
};

/* 1 with leafd.auth.enable: users are checked; 0: each face applies the rule without users. */
static inline int door_auth_on(const struct door_ctx *ctx) {
    return user_service_enabled(ctx->users);
}

/* 1 when the client's address is blocked by the failed-authentication limit. */
int door_auth_limited(const struct door_ctx *ctx, const char *peer);
/* Counts a failure whose reason is one (not missing credentials, not a lapsed session). */
void door_auth_count_failure(const struct door_ctx *ctx, const char *peer, enum user_failure why);

/* The check: who's verdict on need (on key; NULL: identity only); a failure counted and logged. */
enum auth_verdict door_auth_check(const struct door_ctx *ctx, const struct door_auth_who *w,
                                  enum auth_need need, const struct auth_key *key);
/* The same, silently: no failure counted or logged (the face has answered for who already). */
enum auth_verdict door_auth_ask(const struct door_ctx *ctx, const struct door_auth_who *w,
                                enum auth_need need, const struct auth_key *key);
/* A login (RESP's AUTH): LEAF_OK with *session set; else the failure counted and logged. */
leaf_status_t door_auth_login(const struct door_ctx *ctx, const struct door_auth_who *w,
                              const char *secret, size_t secret_len, struct auth_session *session);

/* The right's name as the reference tables print it: "-" (none), ids, create, admin, metrics. */
const char *door_auth_need_name(enum auth_need need);

#endif
