/*
 * The audit line of an admin change (api_audit.h). The object is read from
 * where the route keeps it (the body's biz_tag or name, or the path after
 * /api/users/); every piece of client text goes through log_safe().
 */
#include "api_audit.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <string.h>

#include "auth_header.h"
#include "door_auth.h"
#include "log.h"

#define AUDIT_USERS_PREFIX "/api/users/"
#define AUDIT_NUMBERING_PREFIX "/api/numbering/"

/*
 * Who asked: the Basic user, admin-token, loopback or anonymous (never the
 * secret). With users off nobody checks a Basic name, so it is not the actor:
 * the request is judged, and named, as if it carried none. A Basic name that
 * is no user of this node is "unknown-user": whatever was typed there (a
 * secret, by mistake) stays out of the log (docs/SECURITY.md, "Audit").
 */
static void audit_who(const struct http_request *req, char *who, size_t cap) {
    struct auth_header h;
    int scheme = req->auth_too_long ? AUTH_SCHEME_INVALID
                                    : (int)auth_header_parse(req->auth, req->auth_len, &h);
    if (scheme == AUTH_SCHEME_BASIC && !door_auth_on(door_ctx(req))) {
        scheme = AUTH_SCHEME_NONE;
    }
    switch (scheme) {
    case AUTH_SCHEME_BASIC:
        if (auth_user_name_valid(h.user, h.user_len) &&
            user_service_known(door_ctx(req)->users, h.user, h.user_len)) {
            log_safe(h.user, h.user_len, who, cap);
        } else {
            snprintf(who, cap, "unknown-user");
        }
        break;
    case AUTH_SCHEME_BEARER: snprintf(who, cap, "admin-token"); break;
    case AUTH_SCHEME_NONE:
        snprintf(who, cap, "%s",
                 !door_auth_on(door_ctx(req)) && door_ctx(req)->cfg->admin_token[0] == '\0' &&
                         req->loopback
                     ? "loopback"
                     : "anonymous");
        break;
    default: snprintf(who, cap, "bad-credentials"); break;
    }
    auth_header_clear(&h);
}

/* The body's string field key (biz_tag, name), or "" when there is none. */
static void audit_body_field(const struct http_request *req, const char *key, char *out,
                             size_t cap) {
    out[0] = '\0';
    cJSON *root = cJSON_ParseWithLength(req->body, req->body_len);
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (cJSON_IsString(v)) {
        log_safe(v->valuestring, strlen(v->valuestring), out, cap);
    }
    cJSON_Delete(root);
}

/* The action and object of a route: users' changes name the user in the path. */
static void audit_what(const struct http_request *req, const char *route, char *action, size_t acap,
                       char *object, size_t ocap) {
    size_t pre = sizeof(AUDIT_USERS_PREFIX) - 1;
    snprintf(action, acap, "%s", route);
    object[0] = '\0';
    if (req->path_len > pre && memcmp(req->path, AUDIT_USERS_PREFIX, pre) == 0) {
        const char *name = req->path + pre;
        size_t n = req->path_len - pre;
        const char *slash = memchr(name, '/', n);
        if (slash != NULL) { /* /api/users/{name}/grant: the action is users_grant */
            char verb[16];
            log_safe(slash + 1, (size_t)(name + n - slash - 1), verb, sizeof(verb));
            snprintf(action, acap, "users_%s", verb);
            n = (size_t)(slash - name);
        }
        log_safe(name, n, object, ocap);
    } else if (strcmp(route, "numbering_delete") == 0 &&
               req->path_len > sizeof(AUDIT_NUMBERING_PREFIX) - 1) {
        size_t np = sizeof(AUDIT_NUMBERING_PREFIX) - 1;
        log_safe(req->path + np, req->path_len - np, object, ocap);
    } else if (strcmp(route, "cluster_demote") == 0) {
        snprintf(object, ocap, "sequence-primary");
    } else if (strcmp(route, "region_move") == 0 || strcmp(route, "region_adopt") == 0) {
        audit_body_field(req, "sequence", object, ocap);
    } else if (strcmp(route, "users_add") == 0 || strcmp(route, "sequence_create") == 0 ||
               strcmp(route, "keyed_create") == 0 || strcmp(route, "numbering_create") == 0 ||
               strcmp(route, "numbering_update") == 0) {
        audit_body_field(req, "name", object, ocap);
    } else {
        audit_body_field(req, "biz_tag", object, ocap);
    }
}

void api_audit(const struct http_request *req, const char *route) {
    char who[AUTH_USER_NAME_MAX + 1], action[48], object[160];
    audit_who(req, who, sizeof(who));
    audit_what(req, route, action, sizeof(action), object, sizeof(object));
    int st = req->status;
    const char *outcome = st >= 200 && st < 300    ? "ok"
                          : st == 401 || st == 403 ? "refused"
                          : st >= 500              ? "failed"
                                                   : "rejected";
    log_info("audit", "user=%s client=%s action=%s object=%s status=%d outcome=%s", who,
             req->peer != NULL && req->peer[0] ? req->peer : "?", action, object[0] ? object : "-",
             st, outcome);
}
