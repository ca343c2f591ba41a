/*
 * The users' admin API (docs/SECURITY.md; tools/programs/leafctl user uses it):
 *   GET    /api/users                     the users this node applies
 *   POST   /api/users                     {"name":..,"grants":["PATTERN:RIGHTS",..],"admin":false}
 *                                         -> 201 {"name":..,"secret":".."} (the only time the
 *                                         secret is shown)
 *   POST   /api/users/{name}/grant        {"grants":[..],"admin":true|false (optional)}
 *   POST   /api/users/{name}/revoke       {"grants":["PATTERN[:RIGHTS]",..],"admin":..}
 *   POST   /api/users/{name}/rotate       -> {"name":..,"secret":".."}; the old secret stops
 * working DELETE /api/users/{name} Admin routes (the route table checks). A change is written to
 * ZooKeeper by the user service on the control thread; the request parks until ZooKeeper answered,
 * and every node (this one too) applies it through its watch.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"
#include "door_http.h"
#include "log.h"

#define USERS_PREFIX "/api/users/"

static int users_enabled(struct http_request *req) {
    if (user_service_enabled(door_ctx(req)->users)) {
        return 1;
    }
    door_http_error(req, DOOR_E_AUTH_DISABLED,
                    "users and permissions are off on this node (leafd.auth.enable)");
    return 0;
}

leaf_status_t api_users_list(struct http_request *req, enum ids_mode mode) {
    if (!users_enabled(req)) {
        return LEAF_OK;
    }
    struct sbuf b = SBUF_INIT;
    user_service_list(door_ctx(req)->users, NULL, &b);
    door_http_respond_sbuf(req, 200, "application/json", &b);
    sbuf_free(&b);
    return LEAF_OK;
}

/*
 * The body of a change: grants (and admin) into c, the grants in a malloc'd
 * array at *owned (the caller frees it, also on failure); answers 400 (or
 * 503 out of memory) and returns 0 when bad.
 */
static int parse_grants(struct http_request *req, const cJSON *root, int rights_required,
                        struct user_change *c, struct auth_grant **owned) {
    const cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "grants");
    const cJSON *admin = cJSON_GetObjectItemCaseSensitive(root, "admin");
    char msg[200];
    if (admin != NULL && !cJSON_IsBool(admin)) {
        door_http_error(req, DOOR_E_BAD_REQUEST, "\"admin\" must be true or false");
        return 0;
    }
    c->admin = admin == NULL ? -1 : cJSON_IsTrue(admin);
    if (arr != NULL && (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > AUTH_GRANTS_MAX)) {
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "\"grants\" must be an array of at most 256 \"PATTERN:RIGHTS\" strings");
        return 0;
    }
    int n = arr != NULL ? cJSON_GetArraySize(arr) : 0;
    struct auth_grant *grants = n > 0 ? calloc((size_t)n, sizeof(*grants)) : NULL;
    *owned = grants;
    if (n > 0 && grants == NULL) {
        door_http_error(req, DOOR_E_BUSY, "out of memory");
        return 0;
    }
    const cJSON *it;
    cJSON_ArrayForEach(it, arr) {
        if (!cJSON_IsString(it) ||
            auth_grant_spec_parse(it->valuestring, strlen(it->valuestring), rights_required,
                                  &grants[c->ngrants], msg, sizeof(msg)) != LEAF_OK) {
            door_http_error(req, DOOR_E_BAD_GRANT,
                            cJSON_IsString(it) ? msg : "each grant is a string");
            return 0;
        }
        c->ngrants++;
    }
    c->grants = grants;
    return 1;
}

static cJSON *parse_body(struct http_request *req) {
    cJSON *root = req->body_len ? door_http_body(req) : cJSON_CreateObject();
    if (root == NULL) {
        cJSON_Delete(root);
        door_http_error(req, DOOR_E_BAD_REQUEST,
                        "the body must be one JSON object, with nothing after it");
        return NULL;
    }
    return root;
}

/* A new secret and its hash into c; answers 500 and returns 0 when the OS has no randomness. */
static int new_secret(struct http_request *req, struct user_change *c) {
    if (auth_secret_generate(c->secret) != LEAF_OK ||
        auth_secret_hash(c->secret, strlen(c->secret), c->hash) != LEAF_OK) {
        log_error("auth", "cannot generate a secret (getrandom or SHA-256 failed)");
        door_http_error(req, DOOR_E_SECRET_FAILED, "cannot generate a secret");
        return 0;
    }
    return 1;
}

/* Answers once the change is done; queues it on the first call. */
static leaf_status_t run_change(struct http_request *req, const struct user_change *c) {
    struct user_change done;
    if (req->ticket >= 0 && http_request_now(req) - req->first_seen_ms > USER_CHANGE_WAIT_MS) {
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper did not answer in time; the change may or may not apply");
        return LEAF_OK;
    }
    memset(&done, 0, sizeof(done));
    leaf_status_t rc = user_service_change(door_ctx(req)->users, c, &req->ticket, req->wait, &done);
    if (rc == LEAF_EAGAIN) {
        req->retry_ms = USER_CHANGE_WAIT_MS;
        return LEAF_EAGAIN;
    }
    struct sbuf b = SBUF_INIT;
    switch (rc) {
    case LEAF_OK:
        sbuf_puts(&b, "{\"name\":");
        sbuf_json_str(&b, done.name, strlen(done.name));
        if (done.secret[0] != '\0') {
            sbuf_printf(&b, ",\"secret\":\"%s\"", done.secret);
        }
        sbuf_puts(&b, done.kind == USER_CHANGE_DEL ? ",\"deleted\":true}" : "}");
        door_http_respond_sbuf(req, done.kind == USER_CHANGE_ADD ? 201 : 200, "application/json",
                               &b);
        break;
    case LEAF_EEXIST: door_http_error(req, DOOR_E_USER_EXISTS, "a user of that name exists"); break;
    case LEAF_ENOTFOUND: door_http_error(req, DOOR_E_UNKNOWN_USER, "no such user"); break;
    case LEAF_EINVAL:
        door_http_error(req, DOOR_E_BAD_CHANGE,
                        "the change would pass 256 grants, or the stored record is malformed "
                        "(see the log)");
        break;
    case LEAF_ENOMEM: door_http_error(req, DOOR_E_BUSY, "too many user changes in flight"); break;
    default:
        door_http_error(req, DOOR_E_ZOOKEEPER_UNAVAILABLE,
                        "ZooKeeper could not be reached; the change may or may not apply");
        break;
    }
    sbuf_free(&b);
    memset(&done, 0, sizeof(done)); /* the secret */
    return LEAF_OK;
}

leaf_status_t api_users_add(struct http_request *req, enum ids_mode mode) {
    struct user_change c;
    static const struct user_change none;
    if (!users_enabled(req)) {
        return LEAF_OK;
    }
    if (req->ticket >= 0) {
        return run_change(req, &none);
    }
    cJSON *root = parse_body(req);
    if (root == NULL) {
        return LEAF_OK;
    }
    struct auth_grant *grants = NULL;
    memset(&c, 0, sizeof(c));
    c.kind = USER_CHANGE_ADD;
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    leaf_status_t rc = LEAF_OK;
    if (!cJSON_IsString(name) ||
        !auth_user_name_valid(name->valuestring, strlen(name->valuestring))) {
        door_http_error(req, DOOR_E_BAD_USER_NAME,
                        "\"name\" must be 1 to 64 bytes of [A-Za-z0-9._-], not . or ..");
    } else if (parse_grants(req, root, 1, &c, &grants) && new_secret(req, &c)) {
        snprintf(c.name, sizeof(c.name), "%s", name->valuestring);
        c.admin = c.admin > 0;
        rc = run_change(req, &c);
    }
    memset(&c, 0, sizeof(c));
    free(grants);
    cJSON_Delete(root);
    return rc;
}

/* {name}/{action} after /api/users/; 0 (and a 404 answered) when the path is not one. */
static int users_path(struct http_request *req, char *name, const char **action,
                      size_t *action_len) {
    const char *p = req->path + strlen(USERS_PREFIX);
    size_t n = req->path_len - strlen(USERS_PREFIX);
    const char *slash = memchr(p, '/', n);
    size_t name_len = slash ? (size_t)(slash - p) : n;
    if (!auth_user_name_valid(p, name_len)) {
        door_http_error(req, DOOR_E_NOT_FOUND, "no such endpoint: /api/users/{name}[/action]");
        return 0;
    }
    memcpy(name, p, name_len);
    name[name_len] = '\0';
    *action = slash ? slash + 1 : p + n;
    *action_len = slash ? n - name_len - 1 : 0;
    return 1;
}

static int action_is(const char *a, size_t n, const char *word) {
    return n == strlen(word) && memcmp(a, word, n) == 0;
}

/*
 * The start every change of /api/users/{name}[/action] shares: 1 to go on
 * with c->name and the action read; 0 when answered already, or when a
 * parked change was polled (its status in *rc).
 */
static int change_begin(struct http_request *req, struct user_change *c, const char **action,
                        size_t *alen, leaf_status_t *rc) {
    static const struct user_change none;
    *rc = LEAF_OK;
    if (!users_enabled(req)) {
        return 0;
    }
    if (req->ticket >= 0) {
        *rc = run_change(req, &none);
        return 0;
    }
    memset(c, 0, sizeof(*c));
    return users_path(req, c->name, action, alen);
}

leaf_status_t api_users_change(struct http_request *req, enum ids_mode mode) {
    struct user_change c;
    const char *action;
    size_t alen;
    leaf_status_t polled;
    if (!change_begin(req, &c, &action, &alen, &polled)) {
        return polled;
    }
    if (action_is(action, alen, "rotate")) {
        c.kind = USER_CHANGE_ROTATE;
        leaf_status_t rc = new_secret(req, &c) ? run_change(req, &c) : LEAF_OK;
        memset(&c, 0, sizeof(c));
        return rc;
    }
    int grant = action_is(action, alen, "grant");
    if (!grant && !action_is(action, alen, "revoke")) {
        door_http_error(req, DOOR_E_NOT_FOUND, "POST /api/users/{name}/grant, /revoke or /rotate");
        return LEAF_OK;
    }
    cJSON *root = parse_body(req);
    if (root == NULL) {
        return LEAF_OK;
    }
    struct auth_grant *grants = NULL;
    leaf_status_t rc = LEAF_OK;
    c.kind = grant ? USER_CHANGE_GRANT : USER_CHANGE_REVOKE;
    if (parse_grants(req, root, grant, &c, &grants)) {
        rc = run_change(req, &c);
    }
    free(grants);
    cJSON_Delete(root);
    return rc;
}

leaf_status_t api_users_delete(struct http_request *req, enum ids_mode mode) {
    struct user_change c;
    const char *action;
    size_t alen;
    leaf_status_t polled;
    if (!change_begin(req, &c, &action, &alen, &polled)) {
        return polled;
    }
    if (alen > 0) {
        door_http_error(req, DOOR_E_NOT_FOUND, "DELETE /api/users/{name}");
        return LEAF_OK;
    }
    c.kind = USER_CHANGE_DEL;
    return run_change(req, &c);
}
