/*
 * The user record. Every check names the member it refused; values are never
 * quoted back, so a message is safe to log whatever the record holds.
 */
#include "auth_user.h"

#include "num.h"

#include <cjson/cJSON.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USER_EXACT_DOUBLE_MAX 9007199254740992.0 /* 2^53 */
#define USER_MSG_GRANT 64                        /* room for "grants[255].pattern: " */

static const char user_hex[] = "0123456789abcdef";

int auth_user_name_valid(const char *s, size_t n) {
    if (s == NULL || n == 0 || n > AUTH_USER_NAME_MAX || (n <= 2 && memcmp(s, "..", n) == 0)) {
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-')) {
            return 0;
        }
    }
    return 1;
}

static int user_hex_digit(char c) {
    const char *p = c != '\0' ? strchr(user_hex, c) : NULL;
    return p != NULL ? (int)(p - user_hex) : -1;
}

/*
 * Parses "sha256:<64 lower-case hex>" (n bytes) into out. LEAF_OK, or
 * LEAF_EINVAL. The text form is plain hex, not crypto, so it lives here
 * where the record parser can check it; auth_secret.h computes the digest.
 */
static leaf_status_t auth_hash_parse(const char *s, size_t n, uint8_t out[AUTH_HASH_LEN]) {
    size_t plen = sizeof(AUTH_HASH_PREFIX) - 1;
    uint8_t tmp[AUTH_HASH_LEN];
    if (s == NULL || n != AUTH_HASH_TEXT_LEN || memcmp(s, AUTH_HASH_PREFIX, plen) != 0) {
        return LEAF_EINVAL;
    }
    for (size_t i = 0; i < AUTH_HASH_LEN; i++) {
        int hi = user_hex_digit(s[plen + 2 * i]), lo = user_hex_digit(s[plen + 2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return LEAF_EINVAL;
        }
        tmp[i] = (uint8_t)(hi << 4 | lo);
    }
    memcpy(out, tmp, sizeof(tmp));
    return LEAF_OK;
}

/* Writes "sha256:<hex>" and a NUL at dst (room: AUTH_HASH_TEXT_LEN + 1). */
static void auth_hash_format(const uint8_t hash[AUTH_HASH_LEN], char *dst) {
    size_t plen = sizeof(AUTH_HASH_PREFIX) - 1;
    memcpy(dst, AUTH_HASH_PREFIX, plen);
    for (size_t i = 0; i < AUTH_HASH_LEN; i++) {
        dst[plen + 2 * i] = user_hex[hash[i] >> 4];
        dst[plen + 2 * i + 1] = user_hex[hash[i] & 15];
    }
    dst[AUTH_HASH_TEXT_LEN] = '\0';
}

static leaf_status_t user_fail(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static leaf_status_t user_fail(char *msg, size_t msglen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, msglen, fmt, ap);
    va_end(ap);
    return LEAF_EINVAL;
}

/*
 * 1 when the text holds a NUL byte, raw or escaped as \u0000: cJSON would end
 * that string there, and a pattern "*\u0000x" would read as "*". Escapes are
 * skipped in pairs, so "\\u0000" is text.
 */
static int user_has_nul(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\0' || (s[i] == '\\' && i + 5 < n && memcmp(s + i + 1, "u0000", 5) == 0)) {
            return 1;
        }
        i += s[i] == '\\';
    }
    return 0;
}

/* The whole text must be one JSON object (cJSON alone ignores what follows it). */
static cJSON *user_parse_object(const char *json, size_t len) {
    const char *end = json;
    cJSON *root = cJSON_ParseWithLengthOpts(json, len, &end, 0);
    while (root != NULL && end < json + len &&
           (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')) {
        end++;
    }
    if (root == NULL || !cJSON_IsObject(root) || end != json + len) {
        cJSON_Delete(root);
        return NULL;
    }
    return root;
}

/* The name of the first known member that appears twice, or NULL. */
static const char *user_duplicate(const cJSON *obj, const char *const *known, size_t nknown) {
    for (size_t k = 0; k < nknown; k++) {
        int seen = 0;
        for (const cJSON *c = obj->child; c != NULL; c = c->next) {
            seen += c->string != NULL && strcmp(c->string, known[k]) == 0;
        }
        if (seen > 1) {
            return known[k];
        }
    }
    return NULL;
}

static leaf_status_t user_rights(const cJSON *arr, unsigned *out, const char *where, char *msg,
                                 size_t msglen) {
    unsigned rights = 0, bit;
    if (!cJSON_IsArray(arr) || arr->child == NULL) {
        return user_fail(msg, msglen, "%s.rights: must be a non-empty array of \"ids\", \"create\"",
                         where);
    }
    for (const cJSON *r = arr->child; r != NULL; r = r->next) {
        if (!cJSON_IsString(r) ||
            auth_right_parse(r->valuestring, strlen(r->valuestring), &bit) != LEAF_OK) {
            return user_fail(msg, msglen, "%s.rights: unknown right (known: ids, create)", where);
        }
        rights |= bit;
    }
    *out = rights;
    return LEAF_OK;
}

static leaf_status_t user_grant(const cJSON *obj, size_t i, struct auth_grant *g, char *msg,
                                size_t msglen) {
    static const char *const known[] = {"pattern", "rights"};
    char where[USER_MSG_GRANT], why[128];
    snprintf(where, sizeof(where), "grants[%zu]", i);
    if (!cJSON_IsObject(obj)) {
        return user_fail(msg, msglen, "%s: must be an object", where);
    }
    const char *dup = user_duplicate(obj, known, 2);
    if (dup != NULL) {
        return user_fail(msg, msglen, "%s: member \"%s\" appears twice", where, dup);
    }
    const cJSON *pat = cJSON_GetObjectItemCaseSensitive(obj, "pattern");
    if (!cJSON_IsString(pat)) {
        return user_fail(msg, msglen, "%s.pattern: missing or not a string", where);
    }
    if (auth_pattern_parse(pat->valuestring, strlen(pat->valuestring), g, why, sizeof(why)) !=
        LEAF_OK) {
        return user_fail(msg, msglen, "%s.pattern: %s", where, why);
    }
    return user_rights(cJSON_GetObjectItemCaseSensitive(obj, "rights"), &g->rights, where, msg,
                       msglen);
}

static leaf_status_t user_grants(const cJSON *arr, struct auth_user *u, char *msg, size_t msglen) {
    if (!cJSON_IsArray(arr)) {
        return user_fail(msg, msglen, "grants: missing or not an array");
    }
    size_t n = (size_t)cJSON_GetArraySize(arr);
    if (n > AUTH_GRANTS_MAX) {
        return user_fail(msg, msglen, "grants: more than 256 grants");
    }
    if (n == 0) {
        return LEAF_OK;
    }
    u->grants = calloc(n, sizeof(*u->grants));
    if (u->grants == NULL) {
        snprintf(msg, msglen, "out of memory");
        return LEAF_ENOMEM;
    }
    size_t i = 0;
    for (const cJSON *g = arr->child; g != NULL; g = g->next, i++) {
        leaf_status_t rc = user_grant(g, i, &u->grants[i], msg, msglen);
        if (rc != LEAF_OK) {
            return rc;
        }
        u->ngrants = i + 1;
    }
    return LEAF_OK;
}

/* created_ms: a decimal string (it may pass 2^53) or an exact JSON number below 2^53. */
static leaf_status_t user_created(const cJSON *v, int64_t *out) {
    if (v == NULL || cJSON_IsNull(v)) {
        *out = 0;
        return LEAF_OK;
    }
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (!(d >= 0 && d < USER_EXACT_DOUBLE_MAX) || d != (double)(int64_t)d) {
            return LEAF_EINVAL;
        }
        *out = (int64_t)d;
        return LEAF_OK;
    }
    if (!cJSON_IsString(v) || v->valuestring[0] == '-' || strlen(v->valuestring) > 19) {
        return LEAF_EINVAL;
    }
    return num_parse_range(v->valuestring, strlen(v->valuestring), 0, INT64_MAX, out);
}

static leaf_status_t user_fields(const cJSON *root, const char *node_name, struct auth_user *u,
                                 char *msg, size_t msglen) {
    static const char *const known[] = {"name", "secret_hash", "admin", "grants", "created_ms"};
    const char *dup = user_duplicate(root, known, sizeof(known) / sizeof(known[0]));
    if (dup != NULL) {
        return user_fail(msg, msglen, "member \"%s\" appears twice", dup);
    }
    const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "name");
    if (!cJSON_IsString(name) ||
        !auth_user_name_valid(name->valuestring, strlen(name->valuestring))) {
        return user_fail(msg, msglen, "name: must be 1 to 64 bytes of [A-Za-z0-9._-], not . or ..");
    }
    if (node_name != NULL && strcmp(node_name, name->valuestring) != 0) {
        return user_fail(msg, msglen, "name: differs from the node's name");
    }
    snprintf(u->name, sizeof(u->name), "%s", name->valuestring);
    const cJSON *hash = cJSON_GetObjectItemCaseSensitive(root, "secret_hash");
    if (!cJSON_IsString(hash) ||
        auth_hash_parse(hash->valuestring, strlen(hash->valuestring), u->secret_hash) != LEAF_OK) {
        return user_fail(msg, msglen,
                         "secret_hash: must be \"sha256:\" and 64 lower-case hex digits");
    }
    const cJSON *admin = cJSON_GetObjectItemCaseSensitive(root, "admin");
    if (admin != NULL && !cJSON_IsBool(admin)) {
        return user_fail(msg, msglen, "admin: must be true or false");
    }
    u->admin = cJSON_IsTrue(admin);
    if (user_created(cJSON_GetObjectItemCaseSensitive(root, "created_ms"), &u->created_ms) !=
        LEAF_OK) {
        return user_fail(msg, msglen,
                         "created_ms: must be a non-negative integer (a string above 2^53)");
    }
    return user_grants(cJSON_GetObjectItemCaseSensitive(root, "grants"), u, msg, msglen);
}

leaf_status_t auth_user_parse(const char *json, size_t len, const char *node_name,
                              struct auth_user *out, char *msg, size_t msglen) {
    memset(out, 0, sizeof(*out));
    if (json == NULL || len > AUTH_RECORD_MAX) {
        return user_fail(msg, msglen, "the record is longer than 64 KiB");
    }
    if (user_has_nul(json, len)) {
        return user_fail(msg, msglen, "the record holds a NUL character");
    }
    cJSON *root = user_parse_object(json, len);
    if (root == NULL) {
        return user_fail(msg, msglen, "the record is not one JSON object");
    }
    leaf_status_t rc = user_fields(root, node_name, out, msg, msglen);
    cJSON_Delete(root);
    if (rc != LEAF_OK) {
        auth_user_free(out);
    }
    return rc;
}

static void user_format_grant(const struct auth_grant *g, struct sbuf *b) {
    char pattern[AUTH_PATTERN_MAX + 1];
    size_t n = auth_pattern_format(g, pattern);
    const char *sep = "";
    sbuf_puts(b, "{\"pattern\":");
    sbuf_json_str(b, pattern, n);
    sbuf_puts(b, ",\"rights\":[");
    for (unsigned bit = 1; bit != 0 && bit <= AUTH_RIGHT_ALL; bit <<= 1) {
        const char *name = auth_right_name(bit);
        if ((g->rights & bit) != 0 && name != NULL) {
            sbuf_printf(b, "%s\"%s\"", sep, name);
            sep = ",";
        }
    }
    sbuf_puts(b, "]}");
}

void auth_user_format(const struct auth_user *u, struct sbuf *b) {
    char hash[AUTH_HASH_TEXT_LEN + 1];
    auth_hash_format(u->secret_hash, hash);
    sbuf_puts(b, "{\"name\":");
    sbuf_json_str(b, u->name, strlen(u->name));
    sbuf_printf(b, ",\"secret_hash\":\"%s\",\"admin\":%s,\"grants\":[", hash,
                u->admin ? "true" : "false");
    for (size_t i = 0; i < u->ngrants; i++) {
        if (i > 0) {
            sbuf_putc(b, ',');
        }
        user_format_grant(&u->grants[i], b);
    }
    sbuf_puts(b, "],\"created_ms\":\"");
    sbuf_put_i64(b, u->created_ms);
    sbuf_puts(b, "\"}");
}

unsigned auth_user_rights(const struct auth_user *u, const struct auth_key *key) {
    unsigned rights = 0;
    for (size_t i = 0; i < u->ngrants; i++) {
        if (auth_grant_matches(&u->grants[i], key)) {
            rights |= u->grants[i].rights;
        }
    }
    return rights;
}

void auth_user_free(struct auth_user *u) {
    free(u->grants);
    memset(u, 0, sizeof(*u));
}

/* The grant of u whose pattern equals g's, or NULL. */
static struct auth_grant *same_pattern(struct auth_user *u, const struct auth_grant *g) {
    for (size_t i = 0; i < u->ngrants; i++) {
        struct auth_grant *h = &u->grants[i];
        if (h->any_mode == g->any_mode && h->mode == g->mode && h->prefix == g->prefix &&
            h->len == g->len && memcmp(h->name, g->name, g->len) == 0) {
            return h;
        }
    }
    return NULL;
}

leaf_status_t auth_user_grant(struct auth_user *u, const struct auth_grant *g) {
    struct auth_grant *h = same_pattern(u, g);
    if (h != NULL) {
        h->rights |= g->rights;
        return LEAF_OK;
    }
    if (u->ngrants >= AUTH_GRANTS_MAX) {
        return LEAF_EINVAL;
    }
    struct auth_grant *grants = realloc(u->grants, (u->ngrants + 1) * sizeof(*grants));
    if (grants == NULL) {
        return LEAF_ENOMEM;
    }
    grants[u->ngrants++] = *g;
    u->grants = grants;
    return LEAF_OK;
}

int auth_user_revoke(struct auth_user *u, const struct auth_grant *g) {
    struct auth_grant *h = same_pattern(u, g);
    if (h == NULL || (h->rights & g->rights) == 0) {
        return 0;
    }
    h->rights &= ~g->rights;
    if (h->rights == 0) {
        size_t i = (size_t)(h - u->grants);
        memmove(h, h + 1, (u->ngrants - i - 1) * sizeof(*h));
        u->ngrants--;
    }
    return 1;
}
