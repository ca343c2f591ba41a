#ifndef LEAF_AUTH_USER_H
#define LEAF_AUTH_USER_H

/*
 * The user record of docs/SECURITY.md: parsing and serialising the JSON
 * that lives in ZooKeeper at /leafd/{leaf.name}/users/{user}. Pure code
 * (libc, src/base, cJSON), unit-tested in tests/unit/test_auth.c and fuzzed
 * by tests/fuzz/fuzz_auth.c.
 *
 * The record, one JSON object:
 *   {"name":"team-a",
 *    "secret_hash":"sha256:<64 lower-case hex digits>",
 *    "admin":false,
 *    "grants":[{"pattern":"segment:orders.*","rights":["ids","create"]}],
 *    "created_ms":"1718000000000"}
 * name         required; 1..64 bytes of [A-Za-z0-9._-]; equal to the znode's
 *              name when the caller passes it.
 * secret_hash  required; SHA-256 of the secret (auth_secret.h), never the
 *              secret itself.
 * admin        optional boolean, default false.
 * grants       required array (may be empty: an admin-only user), at most
 *              AUTH_GRANTS_MAX; each an object with a pattern (auth_grant.h)
 *              and a non-empty array of rights ("ids", "create").
 * created_ms   optional; milliseconds since the Unix epoch as a decimal
 *              string (it may pass 2^53), or a JSON number below 2^53.
 * Other members are ignored, so that a newer leafctl may add some; a known
 * member given twice is refused. The record must be the whole text (nothing
 * after the object) and may hold no NUL character (raw or \u0000), at which
 * cJSON would silently cut a string short.
 *
 * A malformed record is refused with a message naming the member and what is
 * wrong; the message never quotes the record's values (they may hold
 * anything), so it is safe to log. The caller logs it and ignores that one
 * user (auth_table.h does this for a whole set).
 */
#include <stddef.h>
#include <stdint.h>

#include "auth_grant.h"
#include "sbuf.h"
#include "status.h"

#define AUTH_USER_NAME_MAX 64
#define AUTH_GRANTS_MAX 256
#define AUTH_RECORD_MAX ((size_t)64 * 1024) /* bytes of JSON; a real record is < 1 KiB */
#define AUTH_HASH_LEN 32                    /* SHA-256 */
#define AUTH_HASH_PREFIX "sha256:"
#define AUTH_HASH_TEXT_LEN (sizeof(AUTH_HASH_PREFIX) - 1 + (size_t)2 * AUTH_HASH_LEN)

/*
 * One user. Owned by whoever parsed it until a table is built from it
 * (auth_table_build), then by the table; immutable from then on, so any thread may read it while
 * the table lives.
 */
struct auth_user {
    char name[AUTH_USER_NAME_MAX + 1];
    uint8_t secret_hash[AUTH_HASH_LEN];
    int admin;
    int64_t created_ms;
    struct auth_grant *grants; /* malloc'd, ngrants entries */
    size_t ngrants;
};

/*
 * 1 when s (n bytes) is a valid user name: 1..64 bytes of [A-Za-z0-9._-], not . or .. (a
 * user is a ZooKeeper node, /leafd/{leaf.name}/users/{name}, and those two name no node).
 */
int auth_user_name_valid(const char *s, size_t n);

/*
 * Parses the record json (len bytes) into *out (which it initialises).
 * node_name, when not NULL, is the znode's name and must equal the record's
 * name. LEAF_OK (free *out with auth_user_free), or LEAF_EINVAL (nothing to
 * free) with a message in msg, or LEAF_ENOMEM.
 */
leaf_status_t auth_user_parse(const char *json, size_t len, const char *node_name,
                              struct auth_user *out, char *msg, size_t msglen);

/*
 * Appends u as a record (the format above, created_ms as a string) to b.
 * Check b->failed afterwards. auth_user_parse reads back an equal user.
 */
void auth_user_format(const struct auth_user *u, struct sbuf *b);

/* The rights u holds on key: the union over every grant that matches. */
unsigned auth_user_rights(const struct auth_user *u, const struct auth_key *key);

/* Frees what u owns (its grants) and clears it; u itself is the caller's. */
void auth_user_free(struct auth_user *u);

/*
 * Adds g's rights to u: to the grant with the same pattern if there is one,
 * else as a new grant. LEAF_OK, LEAF_EINVAL (AUTH_GRANTS_MAX reached), or
 * LEAF_ENOMEM (u unchanged).
 */
leaf_status_t auth_user_grant(struct auth_user *u, const struct auth_grant *g);

/*
 * Takes g's rights away from u's grant with the same pattern, and drops that
 * grant when no right is left. Returns 1 when something changed, else 0.
 */
int auth_user_revoke(struct auth_user *u, const struct auth_grant *g);

#endif
