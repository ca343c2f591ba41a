/*
 * Who may do what, for both protocols: the one door every check of
 * credentials goes through, whichever protocol brought them (door_auth.h).
 * The decision is src/auth's, the users the user service's; each protocol's
 * face turns the verdict into its answer (HTTP: door_http_auth.c; RESP:
 * src/commands/command_auth.c).
 */
#include "door_auth.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

int door_auth_limited(const struct door_ctx *ctx, const char *peer) {
    const char *p = peer != NULL ? peer : "";
    return ctx->auth_limit != NULL &&
           auth_limit_blocked(ctx->auth_limit, p, auth_limit_addr_len(p), clock_mono_ms());
}

void door_auth_count_failure(const struct door_ctx *ctx, const char *peer, enum user_failure why) {
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

/* A failed authentication's warn line, at most one a second per client address. */
static void door_auth_log_failure(const struct door_ctx *ctx, const char *proto, const char *peer,
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

const char *door_auth_need_name(enum auth_need need) {
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

/* The verdict on who's credentials (HTTP) or session (RESP); *why says a failure's reason. */
static enum auth_verdict door_auth_verdict(const struct door_ctx *ctx,
                                           const struct door_auth_who *w, enum auth_need need,
                                           const struct auth_key *key, enum user_failure *why) {
    if (w->creds != NULL) {
        return user_service_check(ctx->users, w->creds, need, key, why);
    }
    return user_service_session_check(ctx->users, w->session, need, key, why);
}

enum auth_verdict door_auth_ask(const struct door_ctx *ctx, const struct door_auth_who *w,
                                enum auth_need need, const struct auth_key *key) {
    enum user_failure why = USER_FAIL_COUNT;
    return door_auth_verdict(ctx, w, need, key, &why);
}

enum auth_verdict door_auth_check(const struct door_ctx *ctx, const struct door_auth_who *w,
                                  enum auth_need need, const struct auth_key *key) {
    enum user_failure why = USER_FAIL_COUNT;
    enum auth_verdict v = door_auth_verdict(ctx, w, need, key, &why);
    if (v != AUTH_ALLOW && why != USER_FAIL_COUNT) {
        door_auth_count_failure(ctx, w->peer, why);
        door_auth_log_failure(ctx, w->proto, w->peer, why, w->user, w->user_len);
    }
    return v;
}

leaf_status_t door_auth_login(const struct door_ctx *ctx, const struct door_auth_who *w,
                              const char *secret, size_t secret_len, struct auth_session *session) {
    enum user_failure why = USER_FAIL_WRONG_SECRET;
    if (user_service_login(ctx->users, w->user, w->user_len, secret, secret_len, session, &why) ==
        LEAF_OK) {
        return LEAF_OK;
    }
    door_auth_count_failure(ctx, w->peer, why);
    door_auth_log_failure(ctx, w->proto, w->peer, why, w->user, w->user_len);
    return LEAF_EINVAL;
}
