/*
 * Keys, rights and patterns. Matching is a mode comparison and one memcmp,
 * so a user with a handful of grants costs a few nanoseconds per request.
 */
#include "auth_grant.h"

#include <stdio.h>
#include <string.h>

static const struct {
    unsigned bit;
    const char *text;
} auth_rights[] = {
#define AUTH_RIGHT_ROW(name, bit, text) {bit, text},
    AUTH_RIGHT_MAP(AUTH_RIGHT_ROW)
#undef AUTH_RIGHT_ROW
};

#define AUTH_NRIGHTS (sizeof(auth_rights) / sizeof(auth_rights[0]))

leaf_status_t auth_right_parse(const char *s, size_t n, unsigned *out) {
    for (size_t i = 0; i < AUTH_NRIGHTS; i++) {
        if (strlen(auth_rights[i].text) == n && memcmp(auth_rights[i].text, s, n) == 0) {
            *out = auth_rights[i].bit;
            return LEAF_OK;
        }
    }
    return LEAF_EINVAL;
}

const char *auth_right_name(unsigned bit) {
    for (size_t i = 0; i < AUTH_NRIGHTS; i++) {
        if (auth_rights[i].bit == bit) {
            return auth_rights[i].text;
        }
    }
    return NULL;
}

/* Splits s at its first colon into a known mode and the rest. */
static leaf_status_t auth_split(const char *s, size_t n, enum ids_mode *mode, const char **rest,
                                size_t *rest_len) {
    const char *colon = s != NULL ? memchr(s, ':', n) : NULL;
    if (colon == NULL || (*mode = ids_mode_find(s, (size_t)(colon - s))) == IDS_MODE_NONE) {
        return LEAF_EINVAL;
    }
    *rest = colon + 1;
    *rest_len = n - (size_t)(colon - s) - 1;
    return LEAF_OK;
}

leaf_status_t auth_key_parse(const char *s, size_t n, struct auth_key *out) {
    enum ids_mode mode;
    const char *name;
    size_t len;
    if (auth_split(s, n, &mode, &name, &len) != LEAF_OK || !ids_mode_key_ok(mode, name, len)) {
        return LEAF_EINVAL;
    }
    out->mode = mode;
    out->name = name;
    out->len = len;
    return LEAF_OK;
}

static leaf_status_t auth_pattern_fail(char *msg, size_t msglen, const char *why) {
    snprintf(msg, msglen, "%s", why);
    return LEAF_EINVAL;
}

leaf_status_t auth_pattern_parse(const char *s, size_t n, struct auth_grant *g, char *msg,
                                 size_t msglen) {
    enum ids_mode mode;
    const char *name;
    size_t len;
    if (s == NULL || n == 0) {
        return auth_pattern_fail(msg, msglen, "the pattern is empty");
    }
    if (n == 1 && s[0] == '*') {
        g->any_mode = 1;
        g->mode = IDS_SNOWFLAKE;
        g->prefix = 1;
        g->len = 0;
        g->name[0] = '\0';
        return LEAF_OK;
    }
    if (auth_split(s, n, &mode, &name, &len) != LEAF_OK) {
        return auth_pattern_fail(msg, msglen,
                                 "the pattern must be '*' or start with a mode and a colon "
                                 "(snowflake:, segment:, sequence:, keyed: ...)");
    }
    int prefix = len > 0 && name[len - 1] == '*';
    len -= (size_t)prefix;
    if (memchr(name, '*', len) != NULL) {
        return auth_pattern_fail(msg, msglen, "'*' may only end the pattern");
    }
    /* A prefix may be empty (`segment:*`) and at most one byte shorter than
     * a tag; an exact name is a whole tag. validate_tag refuses len 0. */
    if ((len > 0 || !prefix) && (!validate_tag(name, len) || (prefix && len >= VALIDATE_TAG_MAX))) {
        return auth_pattern_fail(msg, msglen,
                                 "the name part must be 1 to 128 bytes of [A-Za-z0-9._:-]");
    }
    g->any_mode = 0;
    g->mode = mode;
    g->prefix = prefix;
    g->len = len;
    memcpy(g->name, name, len);
    g->name[len] = '\0';
    return LEAF_OK;
}

size_t auth_pattern_format(const struct auth_grant *g, char *dst) {
    if (g->any_mode) {
        memcpy(dst, "*", 2);
        return 1;
    }
    int n = snprintf(dst, AUTH_PATTERN_MAX + 1, "%s:%s%s", ids_mode_name(g->mode), g->name,
                     g->prefix ? "*" : "");
    return n < 0 ? 0 : (size_t)n;
}

int auth_grant_matches(const struct auth_grant *g, const struct auth_key *key) {
    if (g->any_mode) {
        return 1;
    }
    if (g->mode != key->mode) {
        return 0;
    }
    if (g->prefix) {
        return key->len >= g->len && memcmp(key->name, g->name, g->len) == 0;
    }
    return key->len == g->len && memcmp(key->name, g->name, g->len) == 0;
}

/* A comma-separated list of rights ("ids,create"): LEAF_OK and the bits, or LEAF_EINVAL. */
static leaf_status_t rights_list_parse(const char *s, size_t n, unsigned *out) {
    unsigned rights = 0, bit;
    size_t start = 0;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && s[i] != ',') {
            continue;
        }
        if (auth_right_parse(s + start, i - start, &bit) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        rights |= bit;
        start = i + 1;
    }
    *out = rights;
    return LEAF_OK;
}

leaf_status_t auth_grant_spec_parse(const char *s, size_t n, int rights_required,
                                    struct auth_grant *g, char *msg, size_t msglen) {
    const char *colon = NULL;
    for (size_t i = n; i > 0; i--) {
        if (s[i - 1] == ':') {
            colon = s + i - 1;
            break;
        }
    }
    unsigned rights;
    if (colon != NULL &&
        rights_list_parse(colon + 1, n - (size_t)(colon + 1 - s), &rights) == LEAF_OK &&
        auth_pattern_parse(s, (size_t)(colon - s), g, msg, msglen) == LEAF_OK) {
        g->rights = rights;
        return LEAF_OK;
    }
    if (rights_required) {
        snprintf(msg, msglen,
                 "a grant is PATTERN:RIGHTS, e.g. segment:orders.*:ids,create (rights: ids, "
                 "create)");
        return LEAF_EINVAL;
    }
    if (auth_pattern_parse(s, n, g, msg, msglen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    g->rights = AUTH_RIGHT_ALL;
    return LEAF_OK;
}

size_t auth_grant_spec_format(const struct auth_grant *g, char *dst) {
    size_t n = auth_pattern_format(g, dst);
    char sep = ':';
    for (unsigned bit = 1; bit <= AUTH_RIGHT_ALL; bit <<= 1) {
        const char *name = auth_right_name(bit);
        if ((g->rights & bit) != 0 && name != NULL) {
            dst[n++] = sep;
            size_t len = strlen(name);
            memcpy(dst + n, name, len);
            n += len;
            sep = ',';
        }
    }
    dst[n] = '\0';
    return n;
}
