#include "segment_hosts.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

const char *segment_host_state_name(enum segment_host_state s) {
    static const char *const names[] = {
#define X(e, str) [(e)] = (str),
        SEGMENT_HOST_STATES(X)
#undef X
    };
    return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

void segment_hosts_init(struct segment_hosts *h) {
    memset(h, 0, sizeof(*h));
    h->current = -1;
    h->last = -1;
}

int segment_hosts_add(struct segment_hosts *h, const char *name, int port) {
    if (h->n == SEGMENT_HOSTS_MAX) {
        return -1;
    }
    struct segment_host *x = &h->host[h->n++];
    memset(x, 0, sizeof(*x));
    snprintf(x->name, sizeof(x->name), "%s", name);
    x->port = port;
    x->backoff_ms = SEGMENT_HOSTS_BACKOFF_MIN_MS;
    return 0;
}

int segment_hosts_pick(const struct segment_hosts *h, int64_t now_ms, int64_t *wait_ms) {
    int64_t soonest = -1;
    for (int i = 0; i < h->n; i++) {
        if (h->host[i].retry_at_ms <= now_ms) {
            return i;
        }
        if (soonest < 0 || h->host[i].retry_at_ms < soonest) {
            soonest = h->host[i].retry_at_ms;
        }
    }
    if (wait_ms != NULL) {
        *wait_ms = soonest < 0 ? SEGMENT_HOSTS_BACKOFF_MIN_MS : soonest - now_ms;
    }
    return -1;
}

int segment_hosts_failback(const struct segment_hosts *h, int64_t now_ms) {
    for (int i = 0; i < h->current; i++) {
        if (h->host[i].retry_at_ms <= now_ms) {
            return i;
        }
    }
    return -1;
}

void segment_hosts_up(struct segment_hosts *h, int i) {
    if (i < 0 || i >= h->n) {
        return;
    }
    h->moves += h->last >= 0 && h->last != i; /* the first connect is not a move */
    h->current = h->last = i;
    h->host[i].state = SEGMENT_HOST_UP;
    h->host[i].retry_at_ms = 0;
    h->host[i].backoff_ms = SEGMENT_HOSTS_BACKOFF_MIN_MS;
}

void segment_hosts_fail(struct segment_hosts *h, int i, enum segment_host_state state,
                        int64_t now_ms) {
    if (i < 0 || i >= h->n) {
        return;
    }
    struct segment_host *x = &h->host[i];
    x->state = state == SEGMENT_HOST_UP ? SEGMENT_HOST_DOWN : state;
    x->failures++;
    x->retry_at_ms = now_ms + x->backoff_ms;
    x->backoff_ms = x->backoff_ms * 2 > SEGMENT_HOSTS_BACKOFF_MAX_MS ? SEGMENT_HOSTS_BACKOFF_MAX_MS
                                                                     : x->backoff_ms * 2;
    if (h->current == i) {
        h->current = -1;
    }
}

/* MariaDB/MySQL error numbers (mysqld_error.h, errmsg.h), named here to keep this file pure. */
enum {
    ERRNO_UNKNOWN_COM = 1047, /* Galera: "WSREP has not yet prepared node for application use" */
    ERRNO_SERVER_SHUTDOWN = 1053,
    ERRNO_LOCK_WAIT_TIMEOUT = 1205,
    ERRNO_LOCK_DEADLOCK = 1213,    /* Galera: also a certification failure */
    ERRNO_READ_ONLY_OPTION = 1290, /* ER_OPTION_PREVENTS_STATEMENT: --read-only */
    ERRNO_READ_ONLY_TRX = 1792,
    ERRNO_READ_ONLY_MODE = 1836,
    ERRNO_CONNECTION_KILLED = 1927,
    ERRNO_STATEMENT_TIMEOUT = 1969,
    ERRNO_CLIENT_MIN = 2000, /* 2000..2999: client-side: connect, lost connection, timeout */
    ERRNO_CLIENT_MAX = 2999,
};

enum segment_hosts_action segment_hosts_classify(unsigned int err, int retries, int nhosts,
                                                 enum segment_host_state *state) {
    enum segment_host_state s = SEGMENT_HOST_DOWN;
    enum segment_hosts_action a = SEGMENT_HOSTS_FAIL;
    switch (err) {
    case ERRNO_LOCK_DEADLOCK:
        a = retries < SEGMENT_HOSTS_RETRIES ? SEGMENT_HOSTS_RETRY : SEGMENT_HOSTS_FAIL;
        break;
    case ERRNO_UNKNOWN_COM:
        a = retries < SEGMENT_HOSTS_RETRIES ? SEGMENT_HOSTS_RETRY : SEGMENT_HOSTS_MOVE;
        s = SEGMENT_HOST_NOT_PRIMARY;
        break;
    case ERRNO_READ_ONLY_OPTION:
    case ERRNO_READ_ONLY_TRX:
    case ERRNO_READ_ONLY_MODE:
        a = SEGMENT_HOSTS_MOVE;
        s = SEGMENT_HOST_READ_ONLY;
        break;
    case ERRNO_SERVER_SHUTDOWN:
    case ERRNO_CONNECTION_KILLED: a = SEGMENT_HOSTS_MOVE; break;
    case ERRNO_LOCK_WAIT_TIMEOUT:
    case ERRNO_STATEMENT_TIMEOUT: a = nhosts > 1 ? SEGMENT_HOSTS_MOVE : SEGMENT_HOSTS_FAIL; break;
    default:
        if (err >= ERRNO_CLIENT_MIN && err <= ERRNO_CLIENT_MAX) {
            a = SEGMENT_HOSTS_MOVE;
        }
        break;
    }
    if (state != NULL) {
        *state = s;
    }
    return a;
}

static int on(const char *v) {
    return v != NULL && strcasecmp(v, "ON") == 0;
}

enum segment_host_state segment_hosts_judge(int read_only, int wsrep_on, const char *wsrep_ready,
                                            const char *cluster_status, const char *local_state) {
    if (wsrep_on) {
        /* A joiner is not caught up. A donor is: its writes may stall while an rsync state
         * transfer runs, but it may be the last node left, and the statement limits bound
         * the stall; leaving it would leave no host at all. */
        int synced = local_state == NULL || strcasecmp(local_state, "Synced") == 0 ||
                     strcasecmp(local_state, "Donor/Desynced") == 0;
        if (!on(wsrep_ready) || cluster_status == NULL ||
            strcasecmp(cluster_status, "Primary") != 0 || !synced) {
            return SEGMENT_HOST_NOT_PRIMARY;
        }
    }
    return read_only ? SEGMENT_HOST_READ_ONLY : SEGMENT_HOST_UP;
}
