/*
 * The decision: who is asking (established by the caller), what the request
 * needs, and the user's grants. Fail closed: anything unexpected is a denial.
 */
#include "auth_decide.h"

static const struct {
    const char *code;
    const char *resp;
} auth_verdicts[] = {
#define AUTH_VERDICT_ROW(name, text, status, code, resp) [name] = {code, resp},
    AUTH_VERDICT_MAP(AUTH_VERDICT_ROW)
#undef AUTH_VERDICT_ROW
};

#define AUTH_NVERDICTS (sizeof(auth_verdicts) / sizeof(auth_verdicts[0]))

/* The legacy admin token: admin, and create on every key, as before users existed. */
static const struct auth_grant auth_root_grant = {
    .any_mode = 1, .prefix = 1, .len = 0, .name = "", .rights = AUTH_RIGHT_CREATE};
static const struct auth_user auth_root = {.name = "admin-token",
                                           .admin = 1,
                                           .grants = (struct auth_grant *)&auth_root_grant,
                                           .ngrants = 1};

const struct auth_user *auth_user_root(void) {
    return &auth_root;
}

/* metrics on the pattern * itself: tag names of every tenant are in the full view. */
static int auth_user_has_star_metrics(const struct auth_user *user) {
    for (size_t i = 0; i < user->ngrants; i++) {
        const struct auth_grant *g = &user->grants[i];
        if (g->any_mode && g->prefix && g->len == 0 && (g->rights & AUTH_RIGHT_METRICS)) {
            return 1;
        }
    }
    return 0;
}

enum auth_verdict auth_decide(enum auth_cred cred, const struct auth_user *user,
                              enum auth_need need, const struct auth_key *key) {
    if (need == AUTH_NEED_NONE) {
        return AUTH_ALLOW;
    }
    if (cred == AUTH_CRED_NONE) {
        return AUTH_NOAUTH;
    }
    if (cred != AUTH_CRED_OK || user == NULL) {
        return AUTH_WRONGPASS;
    }
    switch (need) {
    case AUTH_NEED_USER: return AUTH_ALLOW;
    case AUTH_NEED_ADMIN: return user->admin ? AUTH_ALLOW : AUTH_FORBIDDEN;
    case AUTH_NEED_METRICS:
        return user->admin || auth_user_has_star_metrics(user) ? AUTH_ALLOW : AUTH_FORBIDDEN;
    case AUTH_NEED_IDS:
        return key != NULL && (auth_user_rights(user, key) & AUTH_RIGHT_IDS) ? AUTH_ALLOW
                                                                             : AUTH_FORBIDDEN;
    case AUTH_NEED_CREATE:
        return key != NULL && (auth_user_rights(user, key) & AUTH_RIGHT_CREATE) ? AUTH_ALLOW
                                                                                : AUTH_FORBIDDEN;
    default: return AUTH_FORBIDDEN;
    }
}

const char *auth_verdict_resp(enum auth_verdict v) {
    return (size_t)v < AUTH_NVERDICTS ? auth_verdicts[v].resp : NULL;
}
