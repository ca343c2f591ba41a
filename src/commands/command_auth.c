/*
 * Who may do what over RESP: AUTH and HELLO's AUTH set the connection's
 * user; every command whose row of the table needs a right is checked on
 * its key before its handler runs. The RESP face of the one auth door
 * (src/door/door_auth.c), which counts and logs the failures of both
 * protocols. With leafd.auth.enable off, any credentials are
 * accepted (as Redis accepts any password for a user without one), so
 * clients configured with some keep working.
 */
#include <string.h>

#include "command_auth.h"
#include "command_client.h"
#include "command_outcome.h"
#include "door_auth.h"
#include "door_ctx.h"

static struct auth_session *session_of(const struct resp_request *req) {
    return &((struct command_client *)req->client->app)->auth;
}

static void remember_user(struct resp_request *req, const char *user, size_t len) {
    size_t n = len < RESP_USER_MAX ? len : RESP_USER_MAX;
    memcpy(req->client->user, user, n);
    req->client->user[n] = '\0';
}

int command_auth_login(struct resp_request *req, const char *user, size_t user_len,
                       const char *secret, size_t secret_len) {
    const struct door_ctx *ctx = req->ctx;
    if (!door_auth_on(ctx)) {
        /* Accepted, but nobody was checked: the limits of a connection without a user stay
         * (docs/reference/resp.md, "Memory per connection"). */
        remember_user(req, user, user_len);
        return 1;
    }
    req->client->logged_in = 0;
    if (door_auth_limited(ctx, req->peer)) {
        memset(session_of(req), 0, sizeof(struct auth_session)); /* as a failed login does */
        req->client->user[0] = '\0';
        resp_reply_error(req->out, AUTH_LIMIT_RESP_ERROR); /* refused unchecked */
        return 0;
    }
    struct door_auth_who who = {"resp", req->peer, NULL, NULL, user, user_len};
    if (door_auth_login(ctx, &who, secret, secret_len, session_of(req)) == LEAF_OK) {
        remember_user(req, user, user_len);
        req->client->logged_in = 1;
        return 1;
    }
    req->client->user[0] = '\0';
    command_outcome_refuse(req, AUTH_WRONGPASS);
    return 0;
}

/* AUTH [user] secret: one argument is the password of the user "default" (Redis's rule). */
leaf_status_t command_auth(struct resp_request *req) {
    const struct resp_cmd *c = &req->cmd;
    if (c->argc > 3) {
        resp_reply_error(req->out, "ERR syntax error");
        return LEAF_OK;
    }
    int has_user = c->argc == 3;
    if (command_auth_login(req, has_user ? c->argv[1] : "default", has_user ? c->argvlen[1] : 7,
                           c->argv[c->argc - 1], c->argvlen[c->argc - 1])) {
        resp_reply_simple(req->out, "OK");
    }
    return LEAF_OK;
}

int command_auth_may(struct resp_request *req, enum auth_need need, enum ids_mode mode,
                     const char *name, size_t len) {
    const struct door_ctx *ctx = req->ctx;
    if (!door_auth_on(ctx)) {
        return 1;
    }
    struct auth_key key = {mode, name, len};
    struct door_auth_who who = {"resp",          req->peer,         NULL,
                                session_of(req), req->client->user, strlen(req->client->user)};
    return door_auth_ask(ctx, &who, need, &key) == AUTH_ALLOW;
}

int command_auth_allowed(struct resp_request *req, enum auth_need need, int key_arg, int bare) {
    const struct door_ctx *ctx = req->ctx;
    if (!door_auth_on(ctx) || need == AUTH_NEED_NONE) {
        return 1;
    }
    struct auth_key key;
    const struct auth_key *k = NULL;
    /* A malformed key is the handler's to refuse (BAD_KEY): only who asks is checked. */
    if (bare > 0 && key_arg > 0 && key_arg < req->cmd.argc) {
        key = (struct auth_key){.mode = (enum ids_mode)(bare - 1),
                                .name = req->cmd.argv[key_arg],
                                .len = req->cmd.argvlen[key_arg]};
        k = ids_mode_key_ok(key.mode, key.name, key.len) ? &key : NULL;
    } else if (key_arg > 0 && key_arg < req->cmd.argc &&
               auth_key_parse(req->cmd.argv[key_arg], req->cmd.argvlen[key_arg], &key) == LEAF_OK) {
        k = &key;
    } else if (key_arg > 0 && key_arg < req->cmd.argc && ctx->cfg->resp_default_mode > 0) {
        /* leafd.resp.default.mode: a key with no prefix is checked as that mode's. */
        key = (struct auth_key){.mode = (enum ids_mode)(ctx->cfg->resp_default_mode - 1),
                                .name = req->cmd.argv[key_arg],
                                .len = req->cmd.argvlen[key_arg]};
        k = &key;
    }
    struct door_auth_who who = {"resp",          req->peer,         NULL,
                                session_of(req), req->client->user, strlen(req->client->user)};
    enum auth_verdict v = door_auth_check(ctx, &who, need, k);
    if (v == AUTH_ALLOW) {
        return 1;
    }
    command_outcome_refuse(req, v);
    return 0;
}

void command_auth_reset(struct resp_request *req) {
    memset(session_of(req), 0, sizeof(struct auth_session));
    req->client->user[0] = '\0';
    req->client->logged_in = 0;
}
