#ifndef LEAF_AUTH_GRANT_H
#define LEAF_AUTH_GRANT_H

/*
 * The grant model of docs/SECURITY.md: keys, rights and key patterns.
 * Pure code (libc and src/base only), unit-tested in tests/unit/test_auth.c.
 *
 * A key names what a request touches: `mode:name`, where mode is the name of
 * a row of IDS_MODES (ids_mode.h: snowflake, segment, sequence, opaque) and name follows the tag
 * rule (1..128 bytes of [A-Za-z0-9._:-], validate.h). The mode ends at the first colon, so
 * `segment:a:b` is mode segment, name `a:b`. The same key names RESP keys (docs/reference/resp.md),
 * so RESP passes its key as it came, and HTTP passes the mode of the route and the {key} of the
 * URL.
 *
 * A pattern says which keys a grant covers:
 *   `*`                  every key of every mode;
 *   `mode:name`          exactly that key;
 *   `mode:prefix*`       every key of that mode whose name starts with
 *                        prefix (a plain byte prefix, 0..127 bytes of the
 *                        tag alphabet). So `segment:*` is every segment tag,
 *                        `segment:orders.*` matches `segment:orders.eu` and
 *                        `segment:orders.` but not `segment:orders`.
 *                        `segment:orders*` is allowed too and matches
 *                        `segment:orders`, `segment:orders2` and
 *                        `segment:orders.eu`: the star is a byte prefix,
 *                        not a word boundary, so write the dot when you mean
 *                        it.
 * Refused: an empty pattern, an unknown mode, a star anywhere but at the
 * end (`seg*`, `segment:*.eu`, `*:orders`), two stars, bytes outside the tag
 * alphabet, a name longer than the tag rule allows.
 *
 * Rights are bit flags; the admin right is not a grant but a flag on the
 * user (auth_user.h), because what it guards (users, steps, demote, /db) is
 * not keyed.
 */
#include <stddef.h>

#include "ids_mode.h"
#include "status.h"
#include "validate.h"

/* The rights a grant may carry: enum, bit, text (as in the user record). */
#define AUTH_RIGHT_MAP(X)                                                                          \
    X(AUTH_RIGHT_IDS, 1u << 0, "ids")                                                              \
    X(AUTH_RIGHT_CREATE, 1u << 1, "create")                                                        \
    X(AUTH_RIGHT_METRICS, 1u << 2, "metrics") /* all of /metrics; on the pattern * only */

enum auth_right {
#define AUTH_RIGHT_ENUM(name, bit, text) name = (bit),
    AUTH_RIGHT_MAP(AUTH_RIGHT_ENUM)
#undef AUTH_RIGHT_ENUM
};

#define AUTH_RIGHT_ALL (AUTH_RIGHT_IDS | AUTH_RIGHT_CREATE | AUTH_RIGHT_METRICS)

/* The longest key and pattern: the longest mode name, a colon and a tag. */
#define AUTH_KEY_MAX (IDS_MODE_NAME_MAX + 1 + VALIDATE_TAG_MAX)
#define AUTH_PATTERN_MAX AUTH_KEY_MAX

/* A key split into its parts; name points into the caller's memory. */
struct auth_key {
    enum ids_mode mode;
    const char *name;
    size_t len;
};

/*
 * One grant of a user: a parsed pattern and the rights it gives. Owned by
 * the auth_user that holds it; immutable once parsed.
 */
struct auth_grant {
    int any_mode; /* the pattern `*`: every key of every mode */
    enum ids_mode mode;
    int prefix; /* the pattern ended in '*': name is a prefix */
    size_t len; /* bytes of name (without the star) */
    char name[VALIDATE_TAG_MAX + 1];
    unsigned rights; /* AUTH_RIGHT_* bits, at least one */
};

/* The right named by s (n bytes, e.g. "ids"): LEAF_OK and its bit, or LEAF_EINVAL. */
leaf_status_t auth_right_parse(const char *s, size_t n, unsigned *out);

/* The text of one right bit ("ids"), or NULL when not exactly one known bit. */
const char *auth_right_name(unsigned bit);

/*
 * Splits "mode:name" (n bytes) into *out, checking the mode and the tag rule.
 * LEAF_OK, or LEAF_EINVAL and *out untouched. out->name points into s.
 */
leaf_status_t auth_key_parse(const char *s, size_t n, struct auth_key *out);

/*
 * Parses pattern s (n bytes) into g (rights untouched). LEAF_OK, or
 * LEAF_EINVAL with a reason in msg (never the pattern itself, which may hold
 * anything).
 */
leaf_status_t auth_pattern_parse(const char *s, size_t n, struct auth_grant *g, char *msg,
                                 size_t msglen);

/* Writes g's pattern at dst (room: AUTH_PATTERN_MAX + 1) with a NUL; returns its length. */
size_t auth_pattern_format(const struct auth_grant *g, char *dst);

/*
 * A grant as leafctl and the admin API write it: PATTERN:RIGHTS, the rights
 * comma-separated after the last colon (`segment:orders.*:ids,create`,
 * `*:ids`). With rights_required 0 the rights may be left out (`sequence:pay`,
 * for a revoke): then g->rights is every right. LEAF_OK, or LEAF_EINVAL with a
 * reason in msg (never the input).
 */
leaf_status_t auth_grant_spec_parse(const char *s, size_t n, int rights_required,
                                    struct auth_grant *g, char *msg, size_t msglen);

/* Room for auth_grant_spec_format: the pattern, a colon and every right. */
#define AUTH_GRANT_SPEC_MAX (AUTH_PATTERN_MAX + 16)

/* Writes g as PATTERN:RIGHTS at dst (room: AUTH_GRANT_SPEC_MAX + 1); returns its length. */
size_t auth_grant_spec_format(const struct auth_grant *g, char *dst);

/* 1 when g's pattern covers key (a valid key, as auth_key_parse gives), else 0. */
int auth_grant_matches(const struct auth_grant *g, const struct auth_key *key);

#endif
