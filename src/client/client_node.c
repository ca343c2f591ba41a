/* Failover between the listed nodes (client_node.h). */
#include "client_node.h"

void client_node_init(struct client_node_set *s, int n, int64_t min_ms, int64_t max_ms) {
    s->n = n > CLIENT_NODE_MAX ? CLIENT_NODE_MAX : n;
    s->cur = 0;
    s->min_ms = min_ms;
    s->max_ms = max_ms;
    for (int i = 0; i < CLIENT_NODE_MAX; i++) {
        s->fails[i] = 0;
        s->retry_at[i] = 0;
    }
}

int client_node_pick(struct client_node_set *s, int64_t now_ms, int64_t *wait_ms) {
    int64_t first = INT64_MAX;
    for (int k = 0; k < s->n; k++) {
        int i = (s->cur + k) % s->n;
        if (s->retry_at[i] <= now_ms) {
            s->cur = i;
            return i;
        }
        if (s->retry_at[i] < first) {
            first = s->retry_at[i];
        }
    }
    *wait_ms = first - now_ms;
    return -1;
}

void client_node_failed(struct client_node_set *s, int node, int64_t now_ms) {
    int64_t skip = s->min_ms;
    for (int k = 0; k < s->fails[node] && skip < s->max_ms; k++) {
        skip *= 2;
    }
    if (skip > s->max_ms) {
        skip = s->max_ms;
    }
    if (s->fails[node] < 64) {
        s->fails[node]++;
    }
    s->retry_at[node] = now_ms + skip;
    if (node == s->cur) {
        s->cur = (node + 1) % s->n;
    }
}

int client_node_up(const struct client_node_set *s, int node, int64_t now_ms) {
    return s->retry_at[node] <= now_ms;
}

void client_node_served(struct client_node_set *s, int node, int ids) {
    s->fails[node] = 0;
    s->retry_at[node] = 0;
    if (ids) {
        s->cur = node;
    }
}
