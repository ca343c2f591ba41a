#include "zk_register.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "zk_clock.h"
#include "zk_peer.h"

/* Creates path if missing (its parent must exist). */
static leaf_status_t ensure(struct zk_session *s, const char *path) {
    leaf_status_t st = zk_session_create(s, path, "", 0, ZK_MODE_PERSISTENT, NULL, 0);
    return st == LEAF_EEXIST ? LEAF_OK : st;
}

static leaf_status_t ensure_layout(struct zk_session *s, const struct zk_layout *l) {
    leaf_status_t st;
    if ((st = ensure(s, "/snowflake")) != LEAF_OK || (st = ensure(s, l->root)) != LEAF_OK ||
        (st = ensure(s, l->forever)) != LEAF_OK || (st = ensure(s, l->temporary)) != LEAF_OK) {
        return st;
    }
    return LEAF_OK;
}

/* Reads the timestamp stored in an existing leaf_forever node, and its version. */
static leaf_status_t read_timestamp(struct zk_session *s, const char *path, int64_t *ts,
                                    int32_t *version) {
    char buf[1024];
    size_t len;
    struct zk_node_data d;
    struct zk_stat stat;
    leaf_status_t st = zk_session_get_stat(s, path, buf, sizeof(buf), &len, &stat);
    if (st != LEAF_OK) {
        return st == LEAF_ENOTFOUND ? LEAF_EUNAVAIL : st;
    }
    *version = stat.version;
    *ts = -1;
    if (zk_record_parse_node(buf, len, &d) != LEAF_OK || d.timestamp < 0) {
        log_warn("zk", "%s holds no timestamp (data '%.*s'); relying on the local cache", path,
                 (int)len, buf);
        return LEAF_OK;
    }
    *ts = d.timestamp;
    return LEAF_OK;
}

/* A live peer's address: its leaf_temporary child is ip:port, or a name whose data (the node
 * JSON) says ip and port (docs/IDENTITY.md, "Named identity"). */
static leaf_status_t peer_endpoint(struct zk_session *s, const struct zk_layout *l,
                                   const char *child, char *ip, size_t ip_len, int *port) {
    if (zk_layout_peer_addr(child, ip, ip_len, port) == LEAF_OK) {
        return LEAF_OK;
    }
    char path[ZK_PATH_MAX + ZK_IDENTITY_MAX], buf[256];
    size_t len = 0;
    struct zk_node_data d;
    snprintf(path, sizeof(path), "%s/%s", l->temporary, child);
    if (zk_session_get(s, path, buf, sizeof(buf), &len) != LEAF_OK ||
        zk_record_parse_node(buf, len, &d) != LEAF_OK || d.ip[0] == '\0' || d.port <= 0 ||
        strlen(d.ip) >= ip_len) {
        return LEAF_EINVAL;
    }
    snprintf(ip, ip_len, "%s", d.ip);
    *port = d.port;
    return LEAF_OK;
}

leaf_status_t zk_register_peer_offsets(struct zk_session *s, const struct zk_layout *l,
                                       int64_t **offsets, int *asked, int *live) {
    char **peers;
    int n;
    *offsets = NULL;
    *asked = *live = 0;
    leaf_status_t st = zk_session_children(s, l->temporary, &peers, &n);
    if (st != LEAF_OK) {
        return st == LEAF_ENOTFOUND ? LEAF_OK : st; /* no peer registered yet */
    }
    int64_t *offs = calloc((size_t)n + 1, sizeof(*offs));
    if (offs == NULL) {
        zk_names_free(peers, n);
        return LEAF_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        char ip[64];
        int port;
        int64_t sent, peer, recv;
        if (strcmp(peers[i], l->identity) == 0 ||
            peer_endpoint(s, l, peers[i], ip, sizeof(ip), &port) != LEAF_OK) {
            continue;
        }
        (*live)++;
        if (zk_peer_time(ip, port, ZK_PEER_TIMEOUT_MS, &sent, &peer, &recv) == LEAF_OK) {
            offs[(*asked)++] = zk_clock_offset(sent, peer, recv);
        }
    }
    zk_names_free(peers, n);
    *offsets = offs;
    return LEAF_OK;
}

static leaf_status_t create_own(struct zk_session *s, const struct zk_layout *l,
                                const struct zk_node_data *self, int64_t (*wall_ms)(void),
                                struct zk_registration *out) {
    char data[256];
    struct zk_node_data d = *self;
    d.timestamp = wall_ms();
    size_t len = zk_record_format_node(&d, data, sizeof(data));
    leaf_status_t st =
        zk_session_create(s, l->forever_prefix, data, len, ZK_MODE_PERSISTENT_SEQUENTIAL,
                          out->forever_path, sizeof(out->forever_path));
    if (st != LEAF_OK) {
        return st == LEAF_EEXIST ? LEAF_ERR : st;
    }
    if (zk_layout_worker_id(out->forever_path, &out->worker_id) != LEAF_OK) {
        log_error("zk", "cannot parse a worker ID from created node %s", out->forever_path);
        return LEAF_ERR;
    }
    out->created = 1;
    out->version = 0;
    out->zk_timestamp = -1; /* a fresh node: nothing issued under it yet */
    log_info("zk", "registered %s as %s: worker ID %" PRId64, l->identity, out->forever_path,
             out->worker_id);
    return LEAF_OK;
}

static leaf_status_t find_own(struct zk_session *s, const struct zk_layout *l, int *found,
                              struct zk_registration *out) {
    char **kids;
    int n;
    *found = 0;
    leaf_status_t st = zk_session_children(s, l->forever, &kids, &n);
    if (st != LEAF_OK) {
        return st == LEAF_ENOTFOUND ? LEAF_EUNAVAIL : st;
    }
    int i = zk_layout_find_own((const char *const *)kids, n, l->identity);
    if (i >= 0) {
        int w =
            snprintf(out->forever_path, sizeof(out->forever_path), "%s/%s", l->forever, kids[i]);
        *found = w > 0 && (size_t)w < sizeof(out->forever_path);
        zk_layout_worker_id(kids[i], &out->worker_id);
    }
    zk_names_free(kids, n);
    if (*found) {
        st = read_timestamp(s, out->forever_path, &out->zk_timestamp, &out->version);
        if (st == LEAF_OK) {
            log_info("zk", "found %s: reusing worker ID %" PRId64, out->forever_path,
                     out->worker_id);
        }
    }
    return st;
}

leaf_status_t zk_register(struct zk_session *s, const struct zk_layout *l,
                          const struct zk_node_data *self, int64_t (*wall_ms)(void),
                          struct zk_registration *out) {
    memset(out, 0, sizeof(*out));
    out->zk_timestamp = -1;
    int found;
    leaf_status_t st = ensure_layout(s, l);
    if (st == LEAF_OK) {
        st = find_own(s, l, &found, out);
    }
    if (st == LEAF_OK && !found) {
        st = create_own(s, l, self, wall_ms, out);
    }
    if (st == LEAF_OK && out->worker_id > l->max_worker_id) {
        log_error("zk",
                  "refusing to start: worker ID %" PRId64 " of %s is above %" PRId64
                  " (the largest the worker field of leafd.snowflake.layout holds); remove "
                  "unused nodes under %s, use a new leaf.name or a wider worker field",
                  out->worker_id, out->forever_path, l->max_worker_id, l->forever);
        return LEAF_ERANGE;
    }
    return st;
}
