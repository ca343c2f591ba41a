/*
 * Who may do what over HTTP: the one check the router makes before a
 * handler runs (a route's need is a column of the route table), and the
 * check on a key only the handler can read (a tag in a POST body). The
 * decision is src/auth's; the users are the user service's.
 *
 * With leafd.auth.enable off, the rules are the ones from before users
 * existed: ID routes are open, and admin and create routes need
 * leafd.admin.token, or a loopback client when no token is set. Both
 * policies are here, so the handlers only ask.
 */
#include "api_auth.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "auth_header.h"
#include "clock.h"
#include "log.h"

/* Constant-time comparison, so the token cannot be guessed byte by byte. */
static int admin_token_equal(const char *a, size_t alen, const char *b, size_t blen) {
    unsigned char diff = (unsigned char)(alen != blen);
    for (size_t i = 0; i < alen && i < blen; i++) {
        diff |= (unsigned char)(a[i] ^ b[i]);
    }
    return diff == 0;
}

int api_auth_limited(const struct api_ctx *ctx, const char *peer) {
    const char *p = peer != NULL ? peer : "";
    return ctx->auth_limit != NULL &&
           auth_limit_blocked(ctx->auth_limit, p, auth_limit_addr_len(p), clock_mono_ms());
}

/* api_auth_limited for an HTTP request: 1 when refused unchecked, answered 429. */
static int api_auth_limited_http(struct http_request *req) {
    static const char body[] = "{\"code\":\"" AUTH_LIMIT_HTTP_CODE "\",\"message\":\"too many "
                               "failed authentications from this address; try again later\"}";
    if (!api_auth_limited(api_ctx(req), req->peer)) {
        return 0;
    }
    http_respond_ex(req, 429, "application/json", "Retry-After: 10\r\n", body, sizeof(body) - 1);
    return 1;
}

/*
 * The admin rule without users: with leafd.admin.token set, `Authorization:
 * Bearer <token>` is required (401 when missing, 403 when wrong); without
 * one, only loopback clients are answered (others 403). Returns 0 when it
 * answered the refusal.
 */
static int admin_allowed(struct http_request *req) {
    const char *token = api_ctx(req)->cfg->admin_token;
    static const char bearer[] = "Bearer ";
    size_t blen = sizeof(bearer) - 1;
    if (token[0] == '\0') {
        if (req->loopback) {
            return 1;
        }
        http_respond_error(req, 403, "forbidden",
                           "admin endpoints answer loopback clients only (no leafd.admin.token)");
        return 0;
    }
    if (req->auth_len == 0) {
        http_respond_error(req, 401, "unauthorized",
                           "admin endpoints need 'Authorization: Bearer <token>'");
        return 0;
    }
    if (api_auth_limited_http(req)) {
        return 0; /* refused unchecked */
    }
    if (req->auth_len < blen || strncasecmp(req->auth, bearer, blen) != 0 ||
        !admin_token_equal(req->auth + blen, req->auth_len - blen, token, strlen(token))) {
        api_auth_count_failure(api_ctx(req), req->peer, USER_FAIL_WRONG_TOKEN);
        http_respond_error(req, 403, "forbidden", "wrong admin token");
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

void api_auth_count_failure(const struct api_ctx *ctx, const char *peer, enum user_failure why) {
    const char *p = peer != NULL ? peer : "";
    if (ctx->auth_limit == NULL || why == USER_FAIL_MISSING || why == USER_FAIL_LAPSED ||
        why >= USER_FAIL_COUNT) {
        return;
    }
    if (auth_limit_failure(ctx->auth_limit, p, auth_limit_addr_len(p), clock_mono_ms())) {
        log_warn("auth",
                 "%d failed authentications from %.*s within %d s: its attempts are "
                 "refused for %d s",
                 ctx->auth_limit->max_failures, (int)auth_limit_addr_len(p), p,
                 AUTH_LIMIT_WINDOW_MS / 1000, AUTH_LIMIT_BLOCK_MS / 1000);
    }
}

void api_auth_log_failure(const struct api_ctx *ctx, const char *proto, const char *peer,
                          enum user_failure why, const char *user, size_t user_len) {
    uint64_t suppressed = 0;
    if (!user_service_log_allowed(ctx->users, peer, &suppressed)) {
        return;
    }
    /* The user name is the client's text: only its printable bytes, cut short; and not at all
     * when no such user exists: it may be a secret typed in its place (AUTH <secret> <user>). */
    char safe[AUTH_USER_NAME_MAX + 1];
    size_t n = why == USER_FAIL_UNKNOWN_USER ? 0 : log_safe(user, user_len, safe, sizeof(safe));
    if (why == USER_FAIL_UNKNOWN_USER) {
        safe[0] = '\0';
    }
    char more[64] = "";
    if (suppressed > 0) {
        snprintf(more, sizeof(more), " (%llu similar lines suppressed before)",
                 (unsigned long long)suppressed);
    }
    log_warn("auth", "authentication failed (%s) from %s over %s%s%s%s%s", user_failure_name(why),
             peer && peer[0] ? peer : "?", proto, n ? " as user '" : "", safe, n ? "'" : "", more);
}

const char *api_auth_need_name(enum auth_need need) {
    switch (need) {
    case AUTH_NEED_NONE: return "-";
    case AUTH_NEED_IDS: return "ids";
    case AUTH_NEED_CREATE: return "create";
    case AUTH_NEED_ADMIN: return "admin";
    case AUTH_NEED_METRICS: return "metrics";
    case AUTH_NEED_USER: return "user";
    }
    return "?";
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
        http_respond_error(req, 403, auth_verdict_http_code(v), msg);
        return;
    }
    static const char challenge[] = "WWW-Authenticate: Basic realm=\"leafd\"\r\n";
    const char *body = v == AUTH_NOAUTH
                           ? "{\"code\":\"unauthorized\",\"message\":\"credentials needed: "
                             "Authorization: Basic base64(user:secret)\"}"
                           : "{\"code\":\"unauthorized\",\"message\":\"wrong credentials\"}";
    http_respond_ex(req, 401, "application/json", challenge, body, strlen(body));
}

static int api_authorize(struct http_request *req, enum auth_need need,
                         const struct auth_key *key) {
    const struct api_ctx *ctx = api_ctx(req);
    if (!user_service_enabled(ctx->users)) {
        return 1;
    }
    struct auth_header h;
    struct user_creds creds;
    creds_of(req, &h, &creds);
    if (creds.kind != USER_CREDS_NONE && need != AUTH_NEED_NONE && api_auth_limited_http(req)) {
        auth_header_clear(&h);
        return 0; /* refused unchecked */
    }
    enum user_failure why = USER_FAIL_COUNT;
    enum auth_verdict v = user_service_check(ctx->users, &creds, need, key, &why);
    if (v != AUTH_ALLOW) {
        if (why != USER_FAIL_COUNT) {
            api_auth_count_failure(ctx, req->peer, why);
            api_auth_log_failure(ctx, "http", req->peer, why, creds.user, creds.user_len);
        }
        respond_refusal(req, v, need, key);
    }
    auth_header_clear(&h); /* the decoded secret does not outlive the check */
    return v == AUTH_ALLOW;
}

int api_auth_may(struct http_request *req, enum auth_need need, enum ids_mode mode,
                 const char *name, size_t len) {
    const struct api_ctx *ctx = api_ctx(req);
    if (!user_service_enabled(ctx->users)) {
        return 1;
    }
    struct auth_key key = {mode, name, len};
    struct auth_header h;
    struct user_creds creds;
    creds_of(req, &h, &creds);
    enum user_failure why = USER_FAIL_COUNT;
    enum auth_verdict v = user_service_check(ctx->users, &creds, need, &key, &why);
    auth_header_clear(&h);
    return v == AUTH_ALLOW;
}

int api_metrics_view(struct http_request *req) {
    const struct api_ctx *ctx = api_ctx(req);
    if (!user_service_enabled(ctx->users)) {
        return 1;
    }
    if (req->auth_len == 0 && !req->auth_too_long) {
        return 0;
    }
    if (api_auth_limited_http(req)) {
        return -1; /* refused unchecked, as on every other door */
    }
    struct auth_header h;
    struct user_creds creds;
    creds_of(req, &h, &creds);
    enum user_failure why = USER_FAIL_COUNT;
    enum auth_verdict v = user_service_check(ctx->users, &creds, AUTH_NEED_METRICS, NULL, &why);
    auth_header_clear(&h);
    if (v == AUTH_ALLOW || v == AUTH_FORBIDDEN) {
        return v == AUTH_ALLOW; /* /metrics stays open: a user without the right sees the rest */
    }
    return api_authorize(req, AUTH_NEED_METRICS, NULL) ? 1 : -1; /* answers the 401 */
}

int api_authorize_key(struct http_request *req, enum auth_need need, enum ids_mode mode,
                      const char *name, size_t len) {
    struct auth_key key = {mode, name, len};
    return api_authorize(req, need, &key);
}

int api_route_allowed(struct http_request *req, enum auth_need need, int open_without_auth,
                      const struct auth_key *key) {
    if (!user_service_enabled(api_ctx(req)->users)) {
        if (open_without_auth || need == AUTH_NEED_NONE || need == AUTH_NEED_IDS) {
            return 1;
        }
        return admin_allowed(req);
    }
    return api_authorize(req, need, key);
}
