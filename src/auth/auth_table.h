#ifndef LEAF_AUTH_TABLE_H
#define LEAF_AUTH_TABLE_H

/*
 * The user table: every valid user of a cluster, looked up by name. A sorted
 * array searched by bisection, so thousands of users cost a dozen string
 * comparisons per lookup. Pure code, unit-tested in tests/unit/test_auth.c.
 *
 * Threads: a table is immutable once built. The control thread (the one that
 * reads /leafd/{leaf.name}/users/ from ZooKeeper or the local copy) builds
 * the next table from the records it read and publishes it; event loops read
 * the published table without locks and may keep pointers into it (users,
 * grants) for as long as that table lives. Publishing the pointer and
 * freeing an old table only once no loop can still be reading it is the
 * caller's business (for instance: hand the new table to each loop through
 * its queue and uv_async_send; each loop swaps its own pointer and hands the
 * old one back to be freed when every loop has let go).
 */
#include <stddef.h>
#include <stdint.h>

#include "auth_user.h"
#include "status.h"

struct auth_table; /* opaque: build, find, free */

/* One user record as read: the znode's name and its data (not NUL-terminated). */
struct auth_record {
    const char *node_name; /* NUL-terminated; NULL to skip the name check */
    const char *json;
    size_t len;
};

/*
 * Called once for each record left out of a table, with the record's znode
 * name (as given: it may hold any bytes, so escape it when logging) and a
 * message that is safe to log. The caller logs; the library does not.
 */
typedef void (*auth_reject_fn)(void *arg, const char *node_name, const char *msg);

/*
 * Builds a table from n records. A malformed record is reported through
 * reject (may be NULL) and left out; so are all the records of a name that
 * appears more than once (which one to trust is unknowable). Never fails
 * because of one record: LEAF_OK and *out, or LEAF_ENOMEM.
 */
leaf_status_t auth_table_build(const struct auth_record *recs, size_t n, auth_reject_fn reject,
                               void *arg, struct auth_table **out);

/* The user called name (len bytes), or NULL. t may be NULL (no users yet). */
const struct auth_user *auth_table_find(const struct auth_table *t, const char *name, size_t len);

/* How many users t holds, and the i-th in name order (for `user list`). */
size_t auth_table_count(const struct auth_table *t);
const struct auth_user *auth_table_at(const struct auth_table *t, size_t i);

void auth_table_free(struct auth_table *t);

/*
 * What a RESP connection remembers after a successful AUTH: the user's name
 * and the hash of the secret it proved. Owned by the connection, touched
 * only by its loop. Storing names, not pointers, lets the connection outlive
 * the table it authenticated against.
 */
struct auth_session {
    int active;
    char name[AUTH_USER_NAME_MAX + 1];
    uint8_t secret_hash[AUTH_HASH_LEN];
};

/* Remembers u (after its secret was verified). */
void auth_session_set(struct auth_session *s, const struct auth_user *u);

/*
 * The session's user in table t, or NULL when the session is not active, or
 * its user was deleted, or its secret was rotated since (the hash differs):
 * the client must authenticate again. Call once per command.
 */
const struct auth_user *auth_session_user(const struct auth_table *t, const struct auth_session *s);

#endif
