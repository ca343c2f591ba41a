#ifndef LEAF_SEGMENT_HOSTS_H
#define LEAF_SEGMENT_HOSTS_H

/*
 * Which database host to use, when leaf.jdbc.url lists several (a MariaDB
 * Galera cluster or MySQL Group Replication; docs/cluster.md). Pure: no
 * MySQL header, times are injected monotonic milliseconds, so the policy is
 * unit-tested without a server (tests/unit/test_segment_hosts.c).
 *
 * The policy:
 * - Reserve on the first healthy host in the URL's order (each node may list
 *   the hosts in its own order, to spread the load).
 * - Move on to the next host at a connection failure, a timeout, a read-only
 *   answer or a node that is not in the primary component; the host left
 *   behind is tried again after a backoff (100 ms doubling to 5 s).
 * - Retry the same statement on the same host when Galera refused it with a
 *   deadlock/certification failure (1213) or "WSREP has not yet prepared
 *   node" (1047), a few times, then move on (1047) or fail (1213).
 * - Fail back: while a host earlier in the list than the one in use is out
 *   of its backoff, it is tried again, and used when it answers healthy.
 *
 * A struct segment_hosts is owned by one database thread (segment_db.c);
 * readers elsewhere get a copy taken under that thread's lock.
 */
#include <stdint.h>

#define SEGMENT_HOSTS_MAX 8
#define SEGMENT_HOSTS_BACKOFF_MIN_MS 100
#define SEGMENT_HOSTS_BACKOFF_MAX_MS 5000
/* Same-host retries of a statement Galera refused (1213, 1047), and the first pause. */
#define SEGMENT_HOSTS_RETRIES 3
#define SEGMENT_HOSTS_RETRY_PAUSE_MS 20

#define SEGMENT_HOST_STATES(X)                                                                     \
    X(SEGMENT_HOST_UNKNOWN, "unknown")         /* never tried */                                   \
    X(SEGMENT_HOST_UP, "up")                   /* connected and writable */                        \
    X(SEGMENT_HOST_DOWN, "down")               /* connect failed, connection lost, timeout */      \
    X(SEGMENT_HOST_READ_ONLY, "read_only")     /* read_only, or refused a write as read-only */    \
    X(SEGMENT_HOST_NOT_PRIMARY, "not_primary") /* Galera: not synced in a primary component */

enum segment_host_state {
#define X(e, s) e,
    SEGMENT_HOST_STATES(X)
#undef X
};

const char *segment_host_state_name(enum segment_host_state s);

struct segment_host {
    char name[256];
    int port;
    enum segment_host_state state;
    int64_t retry_at_ms; /* no attempt before (0: at once) */
    int64_t backoff_ms;  /* the next backoff */
    uint64_t failures;   /* times it was left (connects, statements, health checks) */
};

struct segment_hosts {
    struct segment_host host[SEGMENT_HOSTS_MAX];
    int n;
    int current;    /* the host in use, -1 when none */
    int last;       /* the host used last, -1 before the first */
    uint64_t moves; /* times the host in use changed (fail-overs and fail-backs) */
};

void segment_hosts_init(struct segment_hosts *h);
/* LEAF-style: 0, or -1 when the list is full. name is copied (cut at 255 bytes). */
int segment_hosts_add(struct segment_hosts *h, const char *name, int port);

/*
 * The host to try now: the first in list order whose backoff has passed;
 * -1 when every host is backing off, with *wait_ms set to the wait for the
 * earliest one (wait_ms may be NULL).
 */
int segment_hosts_pick(const struct segment_hosts *h, int64_t now_ms, int64_t *wait_ms);

/*
 * A host earlier in the list than the one in use whose backoff has passed:
 * worth a fail-back attempt. -1 when there is none (or nothing is in use).
 */
int segment_hosts_failback(const struct segment_hosts *h, int64_t now_ms);

/* Host i answered healthy and is now in use; its backoff resets. */
void segment_hosts_up(struct segment_hosts *h, int i);

/* Host i failed in the way state says (not UP); it is left and backs off. */
void segment_hosts_fail(struct segment_hosts *h, int i, enum segment_host_state state,
                        int64_t now_ms);

/* What to do after a statement failed with a server or client error number. */
enum segment_hosts_action {
    SEGMENT_HOSTS_FAIL,  /* an answer about the statement: report it */
    SEGMENT_HOSTS_RETRY, /* Galera refused it for now: run it again on the same host */
    SEGMENT_HOSTS_MOVE,  /* the host is gone, read-only or not primary: the next host */
};

/*
 * The action for error err after `retries` same-host retries, with the
 * state to give the host when the action is MOVE (*state may be NULL).
 * Timeouts on the server (1969 max_statement_time, 1205 lock wait) move on
 * only when there is another host to move to (nhosts > 1).
 */
enum segment_hosts_action segment_hosts_classify(unsigned int err, int retries, int nhosts,
                                                 enum segment_host_state *state);

/*
 * The health of a host from what it said after connecting: @@read_only, and
 * for a Galera node (wsrep_on) its wsrep_ready, wsrep_cluster_status and
 * wsrep_local_state_comment status values (NULL when absent). A node of
 * the primary component takes writes when it is synced or a donor (which
 * may stall them during an rsync transfer, but may be the last node left);
 * a joiner does not.
 */
enum segment_host_state segment_hosts_judge(int read_only, int wsrep_on, const char *wsrep_ready,
                                            const char *cluster_status, const char *local_state);

#endif
