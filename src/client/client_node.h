#ifndef CLIENT_NODE_H
#define CLIENT_NODE_H

/*
 * Which node the refill asks next. A node that failed (no connection, a
 * timeout, a 5xx such as 503) is skipped for retry.min.ms, doubling at each
 * failure in a row up to retry.max.ms, and asked again after; a success
 * clears it. Pure: the time is passed in (unit-tested with an injected clock).
 *
 * Owned by the refill thread of the handle (client.c).
 */
#include <stdint.h>

#define CLIENT_NODE_MAX 16

struct client_node_set {
    int n;                             /* nodes */
    int cur;                           /* the node asked last (kept while it answers: keep-alive) */
    int64_t min_ms;                    /* retry.min.ms */
    int64_t max_ms;                    /* retry.max.ms */
    int fails[CLIENT_NODE_MAX];        /* failures in a row */
    int64_t retry_at[CLIENT_NODE_MAX]; /* ms: skipped until then */
};

void client_node_init(struct client_node_set *s, int n, int64_t min_ms, int64_t max_ms);

/* The node to ask now: the current one if it is not skipped, else the next one that is not;
 * -1 when every node is skipped (*wait_ms: until the first comes back). */
int client_node_pick(struct client_node_set *s, int64_t now_ms, int64_t *wait_ms);

void client_node_failed(struct client_node_set *s, int node, int64_t now_ms);
/* The node answered (ids: with IDs, so it becomes the one asked first). */
void client_node_served(struct client_node_set *s, int node, int ids);
/* 1 when the node is not skipped now. */
int client_node_up(const struct client_node_set *s, int node, int64_t now_ms);

#endif
