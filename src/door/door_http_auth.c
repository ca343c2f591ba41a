/*
 * Who may do what over HTTP: the HTTP face of the one auth door
 * (door_auth.c). The check the route table makes before a handler runs (a
 * route's need is a column of the route table), the check on a key only the
 * handler can read (a tag in a POST body), and the view of /metrics; each
 * answers its refusal (401, 403, 429) itself.
 *
 * With leafd.auth.enable off, the rules are the ones from before users
 * existed: ID routes are open, and admin and create routes need
 * leafd.admin.token, or a loopback client when no token is set. Both
 * policies are here, so the handlers only ask.
 */
#include "door_http_auth.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "auth_header.h"
#include "door_auth.h"
#include "door_http.h"

/* Constant-time comparison, so the token cannot be guessed byte by byte. */
static int admin_token_equal(const char *a, size_t alen, const char *b, size_t blen) {
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < alen && i < blen; i++) {
        diff |= (unsigned char)(a[i] ^ b[i]);
    }
    return diff == 0;
}

/* door_auth_limited for an HTTP request: 1 when refused unchecked, answered 429. */
static int limited_answered(struct http_request *req) {
    if (!door_auth_limited(door_ctx(req), req->peer)) {
        return 0;
    }
    door_http_error_ex(req, DOOR_E_TOO_MANY_FAILED_AUTHENTICATIONS, "Retry-After: 10\r\n",
                       "too many failed authentications from this address; try again later");
    return 1;
}

/*
 * The admin rule without users: with leafd.admin.token set, `Authorization:
 * Bearer <token>` is required (401 when missing, 403 when wrong); without
 * one, only loopback clients are answered (others 403). Returns 0 when it
 * answered the refusal.
 */
static int admin_allowed(struct http_request *req) {
    const char *token = door_ctx(req)->cfg->admin_token;
    static const char bearer[] = "Bearer ";
    size_t blen = sizeof(bearer) - 1;
    if (token[0] == '\0') {
        if (req->loopback) {
            return 1;
        }
        door_http_error(req, DOOR_E_FORBIDDEN,
                        "admin endpoints answer loopback clients only (no leafd.admin.token)");
        return 0;
    }
    if (req->auth_len == 0) {
        door_http_error(req, DOOR_E_UNAUTHORIZED,
                        "admin endpoints need 'Authorization: Bearer <token>'");
        return 0;
    }
    if (limited_answered(req)) {
        return 0; /* refused unchecked */
    }
    if (req->auth_len < blen || strncasecmp(req->auth, bearer, blen) != 0 ||
        !admin_token_equal(req->auth + blen, req->auth_len - blen, token, strlen(token))) {
        door_auth_count_failure(door_ctx(req), req->peer, USER_FAIL_WRONG_TOKEN);
        door_http_error(req, DOOR_E_FORBIDDEN, "wrong admin token");
        return 0;
    }
    return 1;
}

/* The credentials of the Authorization header, as the user service takes them. */
static void creds_of(const struct http_request *req, struct auth_header *h, struct user_creds *c) {
    memset(c, 0, sizeof(*c));
    if (req->auth_too_long) {
        h->scheme = AUTH_SCHEME_INVALID;
        c->kind = USER_CREDS_MALFORMED;
        return;
    }
    switch (auth_header_parse(req->auth, req->auth_len, h)) {
    case AUTH_SCHEME_NONE: c->kind = USER_CREDS_NONE; break;
    case AUTH_SCHEME_BASIC:
        *c = (struct user_creds){USER_CREDS_BASIC, h->user, h->secret, h->user_len, h->secret_len};
        break;
    case AUTH_SCHEME_BEARER:
        *c = (struct user_creds){USER_CREDS_BEARER, NULL, h->secret, 0, h->secret_len};
        break;
    default: c->kind = USER_CREDS_MALFORMED; break;
    }
}

/* Answers a refusal: 401 with the challenge, or 403. */
static void respond_refusal(struct http_request *req, enum auth_verdict v, enum auth_need need,
                            const struct auth_key *key) {
    if (v == AUTH_FORBIDDEN) {
        char msg[300];
        const char *right = need == AUTH_NEED_IDS       ? "ids"
                            : need == AUTH_NEED_CREATE  ? "create"
                            : need == AUTH_NEED_METRICS ? "metrics' on '*' or 'admin"
                                                        : "admin";
        if (key != NULL) {
            snprintf(msg, sizeof(msg), "this user has no '%s' right on %s:%.*s", right,
                     ids_mode_name(key->mode), (int)key->len, key->name);
        } else {
            snprintf(msg, sizeof(msg), "this user is not an admin");
        }
        door_http_error(req, DOOR_E_FORBIDDEN, msg);
        return;
    }
    static const char challenge[] = "WWW-Authenticate: Basic realm=\"leafd\"\r\n";
    door_http_error_ex(req, DOOR_E_UNAUTHORIZED, challenge,
                       v == AUTH_NOAUTH
                           ? "credentials needed: Authorization: Basic base64(user:secret)"
                           : "wrong credentials");
}

static int door_http_authorize(struct http_request *req, enum auth_need need,
                               const struct auth_key *key) {
    const struct door_ctx *ctx = door_ctx(req);
    if (!door_auth_on(ctx)) {
        return 1;
    }
    struct auth_header h;
    struct user_creds creds;
    creds_of(req, &h, &creds);
    if (creds.kind != USER_CREDS_NONE && need != AUTH_NEED_NONE && limited_answered(req)) {
        auth_header_clear(&h);
        return 0; /* refused unchecked */
    }
    struct door_auth_who who = {"http", req->peer, &creds, NULL, creds.user, creds.user_len};
    enum auth_verdict v = door_auth_check(ctx, &who, need, key);
    if (v != AUTH_ALLOW) {
        respond_refusal(req, v, need, key);
    }
    auth_header_clear(&h); /* the decoded secret does not outlive the check */
    return v == AUTH_ALLOW;
}

int door_http_auth_may(struct http_request *req, enum auth_need need, enum ids_mode mode,
                       const char *name, size_t len) {
    const struct door_ctx *ctx = door_ctx(req);
    if (!door_auth_on(ctx)) {
        return 1;
    }
    struct auth_key key = {mode, name, len};
    struct auth_header h;
    struct user_creds creds;
    creds_of(req, &h, &creds);
    struct door_auth_who who = {"http", req->peer, &creds, NULL, creds.user, creds.user_len};
    enum auth_verdict v = door_auth_ask(ctx, &who, need, &key);
    auth_header_clear(&h);
    return v == AUTH_ALLOW;
}

int door_http_auth_metrics_view(struct http_request *req) {
    const struct door_ctx *ctx = door_ctx(req);
    if (!door_auth_on(ctx)) {
        return 1;
    }
    if (req->auth_len == 0 && !req->auth_too_long) {
        return 0;
    }
    if (limited_answered(req)) {
        return -1; /* refused unchecked, as on every other door */
    }
    struct auth_header h;
    struct user_creds creds;
    creds_of(req, &h, &creds);
    struct door_auth_who who = {"http", req->peer, &creds, NULL, creds.user, creds.user_len};
    enum auth_verdict v = door_auth_ask(ctx, &who, AUTH_NEED_METRICS, NULL);
    auth_header_clear(&h);
    if (v == AUTH_ALLOW || v == AUTH_FORBIDDEN) {
        return v == AUTH_ALLOW; /* /metrics stays open: a user without the right sees the rest */
    }
    return door_http_authorize(req, AUTH_NEED_METRICS, NULL) ? 1 : -1; /* answers the 401 */
}

int door_http_auth_key(struct http_request *req, enum auth_need need, enum ids_mode mode,
                       const char *name, size_t len) {
    struct auth_key key = {mode, name, len};
    return door_http_authorize(req, need, &key);
}

int door_http_auth_route(struct http_request *req, enum auth_need need, int open_without_auth,
                         const struct auth_key *key) {
    if (!door_auth_on(door_ctx(req))) {
        if (open_without_auth || need == AUTH_NEED_NONE || need == AUTH_NEED_IDS) {
            return 1;
        }
        return admin_allowed(req);
    }
    return door_http_authorize(req, need, key);
}
