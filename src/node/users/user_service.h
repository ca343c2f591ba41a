#ifndef LEAF_USER_SERVICE_H
#define LEAF_USER_SERVICE_H

/*
 * Users and permissions, the daemon side (docs/SECURITY.md): the users
 * of the cluster, read from ZooKeeper under /leafd/{leaf.name}/users/ and
 * kept current through watches, a local copy in the data dir, the
 * authentication and authorisation calls both protocols make, and the admin
 * changes (add, grant, revoke, rotate, delete) written back to ZooKeeper.
 * The decisions themselves are the pure code of src/auth.
 *
 * Threads:
 *  - The control thread owns the ZooKeeper session: it reloads the users on
 *    every watch and (re)connection, builds the next table and publishes it,
 *    writes the local copy, and carries out admin changes. It never blocks
 *    on ZooKeeper once the loops run.
 *  - Event-loop threads authenticate and decide (user_service_check,
 *    user_service_login, user_service_session_check) under the table's read
 *    lock, for a microsecond or two (one SHA-256 of the secret); they queue
 *    admin changes and are woken when ZooKeeper answered.
 *  - The counters are relaxed atomics, counted by any thread.
 *
 * Users changed in ZooKeeper are applied when the watch fires: well under
 * the 2 s docs/SECURITY.md promises. A node cut off from ZooKeeper keeps the table it has,
 * and a node that starts without ZooKeeper uses the local copy
 * ({leafd.data.dir}/{leaf.name}/{port}/users.jsonl, mode 0600, one record a
 * line, the same records as in ZooKeeper: hashes, never secrets).
 */
#include <stddef.h>
#include <stdint.h>

#include "auth_decide.h"
#include "auth_secret.h"
#include "auth_table.h"
#include "config.h"
#include "leaf_wait.h"
#include "sbuf.h"
#include "status.h"

struct uv_loop_s;
struct zk_session;
struct user_service;

/* Reasons an authentication failed, as the metric's label counts them. */
#define USER_FAILURES(X)                                                                           \
    X(USER_FAIL_MISSING, "missing")           /* no credentials where they are needed */           \
    X(USER_FAIL_MALFORMED, "malformed")       /* an Authorization header that does not parse */    \
    X(USER_FAIL_UNKNOWN_USER, "unknown_user") /* no such user */                                   \
    X(USER_FAIL_WRONG_SECRET, "wrong_secret") /* a known user, the wrong secret */                 \
    X(USER_FAIL_WRONG_TOKEN, "wrong_token")   /* Bearer, not leafd.admin.token */                  \
    X(USER_FAIL_LAPSED, "lapsed")             /* RESP: the AUTHed user was deleted or rotated */

enum user_failure {
#define USER_FAILURE_ENUM(e, name) e,
    USER_FAILURES(USER_FAILURE_ENUM)
#undef USER_FAILURE_ENUM
        USER_FAIL_COUNT
};

const char *user_failure_name(enum user_failure f);

/* Subscribes to zk, the process's ZooKeeper session (NULL without ZooKeeper). */
leaf_status_t user_service_create(struct user_service **out, const struct leaf_config *cfg,
                                  struct uv_loop_s *control_loop, struct zk_session *zk);
/*
 * Loads the local copy, opens the ZooKeeper session and waits for the first
 * load up to the session timeout; ZooKeeper unreachable is not an error (the
 * local copy serves, and the load happens when it connects). No-op when
 * leafd.auth.enable is off.
 */
leaf_status_t user_service_start(struct user_service *svc);
/* Closes the session; control thread, after the event loops ended. */
void user_service_stop(struct user_service *svc);
void user_service_free(struct user_service *svc);
/* 1 when leafd.auth.enable is on (svc may be NULL: off). */
int user_service_enabled(const struct user_service *svc);

/*
 * What a request presented, decoded by the protocol. user/secret for a
 * user's credentials (HTTP Basic, RESP AUTH), token for a Bearer token.
 */
struct user_creds {
    enum { USER_CREDS_NONE, USER_CREDS_BASIC, USER_CREDS_BEARER, USER_CREDS_MALFORMED } kind;
    const char *user, *secret;
    size_t user_len, secret_len;
};

/*
 * The decision for one request (HTTP, or anything a RESP connection asks
 * with credentials in hand): authenticates creds and decides need on key
 * (NULL: identity only, the caller decides the key later). A Bearer equal
 * to leafd.admin.token is the root user. Counts the failure or denial; *why
 * says which failure (for the caller's rate-limited log line).
 */
enum auth_verdict user_service_check(struct user_service *svc, const struct user_creds *creds,
                                     enum auth_need need, const struct auth_key *key,
                                     enum user_failure *why);

/* RESP AUTH: verifies user/secret and fills s. LEAF_OK, or LEAF_EINVAL (counted; s cleared). */
leaf_status_t user_service_login(struct user_service *svc, const char *user, size_t user_len,
                                 const char *secret, size_t secret_len, struct auth_session *s,
                                 enum user_failure *why);

/* The decision for a RESP command of a connection with session s (see user_service_check). */
enum auth_verdict user_service_session_check(struct user_service *svc, const struct auth_session *s,
                                             enum auth_need need, const struct auth_key *key,
                                             enum user_failure *why);

/* 1 when name (len bytes) is a user this node applies; any thread (the audit line's actor). */
int user_service_known(struct user_service *svc, const char *name, size_t len);

/* ---- admin changes (event-loop threads) ---------------------------------------------------- */

enum user_change_kind {
    USER_CHANGE_ADD,    /* create name with hash, admin, grants; LEAF_EEXIST if it exists */
    USER_CHANGE_GRANT,  /* add grants' rights; admin >= 0 sets the flag */
    USER_CHANGE_REVOKE, /* take grants' rights away; admin >= 0 sets the flag */
    USER_CHANGE_ROTATE, /* replace the secret's hash */
    USER_CHANGE_DEL,    /* delete the user */
};

/* One change, as a handler builds it. The service copies it. */
struct user_change {
    enum user_change_kind kind;
    char name[AUTH_USER_NAME_MAX + 1];
    uint8_t hash[AUTH_HASH_LEN]; /* ADD, ROTATE */
    int admin;                   /* ADD: 0/1; GRANT, REVOKE: -1 unchanged, else 0/1 */
    const struct auth_grant *grants;
    size_t ngrants;
    char secret[AUTH_SECRET_LEN + 1]; /* ADD, ROTATE: kept for the answer, never stored */
};

/* How long an admin change may wait for ZooKeeper before the handler answers 503. */
#define USER_CHANGE_WAIT_MS 5000

/*
 * Carries out c in ZooKeeper. The first call (*ticket < 0) queues it and
 * returns LEAF_EAGAIN with *ticket set; later calls with the ticket return
 * LEAF_EAGAIN until ZooKeeper answered, then LEAF_OK, LEAF_EEXIST (ADD),
 * LEAF_ENOTFOUND (no such user), LEAF_EINVAL (the change would exceed a
 * limit, or the stored record is malformed) or LEAF_EUNAVAIL; the ticket is
 * then spent, and *done is the change as queued (name, secret; grants
 * NULL), the slot's copy of the secret wiped. LEAF_ENOMEM: too many changes in flight. w is woken
 * when the answer arrives; cancelling w abandons the ticket (the change may still happen).
 */
leaf_status_t user_service_change(struct user_service *svc, const struct user_change *c,
                                  int *ticket, struct leaf_wait *w, struct user_change *done);

/*
 * Appends the users this node applies as JSON to b: {"users":[{"name":..,
 * "admin":..,"grants":["PATTERN:RIGHTS",..],"created_ms":".."},..]} (never a
 * hash). With name set, only that user; LEAF_ENOTFOUND when it is unknown.
 */
leaf_status_t user_service_list(struct user_service *svc, const char *name, struct sbuf *b);

struct user_service_stats {
    int enabled, connected;
    uint64_t users, reloads, reload_failures, rejected, changes;
    uint64_t failures[USER_FAIL_COUNT];
    uint64_t denied[3]; /* by the need denied: ids, create, admin */
    int64_t loaded_ms;  /* wall clock of the table in use; 0 = none */
    int from_local;     /* the table came from the local copy, not ZooKeeper (yet) */
};
void user_service_stats(struct user_service *svc, struct user_service_stats *out);

/*
 * 1 when a warn line about a failed authentication from peer ("ip:port")
 * may be written now: at most one a second per client address (the port is
 * ignored). *suppressed: lines suppressed since the last allowed one. Any thread.
 */
int user_service_log_allowed(struct user_service *svc, const char *peer, uint64_t *suppressed);

#endif
