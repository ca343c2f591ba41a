/*
 * leafd --retire IDENTITY|stopped -c FILE: an operator retires forever-mode
 * identities for good (docs/IDENTITY.md, mixed clusters). A worker ID
 * registered under leaf_forever stays out of the lease pool: a forever node
 * cut off from ZooKeeper keeps issuing on its local reservation after its
 * ephemeral node is gone, so only an operator can say it is stopped for
 * good. Retiring an identity (refused while its leaf_temporary node lives):
 *   1. its worker ID's lease slot gets the forever node's recorded time as
 *      its reservation (created, or raised with a versioned set), so a lease
 *      node that takes the slot starts above everything the forever node
 *      reported;
 *   2. its leaf_forever node is deleted (versioned).
 * A one-shot command: it opens its own ZooKeeper session, synchronous calls
 * only, prints one line per identity and exits 0 (all retired), 1 otherwise.
 * Layer: the node (src/node/snowflake), a one-shot command beside the node:
 * it shares no state with it.
 */
#include "snowflake_service_retire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "node_config.h"
#include "zk_compat.h"
#include "zk_layout.h"
#include "zk_lease.h"
#include "zk_record.h"
#include "zk_session.h"

static void retire_notify(void *arg) {
    (void)arg; /* synchronous calls only: nobody waits for events */
}

/* The slot of worker id gets a reservation of at least ts (ms). */
static leaf_status_t retire_slot(struct zk_session *s, const struct zk_layout *l, int64_t id,
                                 int64_t ts, const char *ip, int port) {
    char path[ZK_PATH_MAX], buf[ZK_LEASE_DATA_MAX], data[ZK_LEASE_DATA_MAX];
    struct zk_lease_data d = {.reserved = ts, .port = port, .token = 0};
    snprintf(d.ip, sizeof(d.ip), "%s", ip);
    size_t dlen = zk_lease_format_data(&d, data, sizeof(data));
    if (zk_lease_slot_path(l, id, path, sizeof(path)) != LEAF_OK || dlen == 0) {
        return LEAF_EINVAL;
    }
    for (int attempt = 0; attempt < 4; attempt++) {
        struct zk_stat st;
        struct zk_lease_data old;
        size_t len = 0;
        const char *why;
        leaf_status_t rc = zk_session_get_stat(s, path, buf, sizeof(buf), &len, &st);
        if (rc == LEAF_ENOTFOUND) {
            rc = zk_session_create(s, path, data, dlen, ZK_MODE_PERSISTENT, NULL, 0);
        } else if (rc == LEAF_OK && zk_lease_parse_data(buf, len, &old, &why) != LEAF_OK) {
            fprintf(stderr, "leafd: %s holds no lease data (%s): not retiring onto it\n", path,
                    why);
            return LEAF_EINVAL;
        } else if (rc == LEAF_OK && old.reserved >= ts) {
            return LEAF_OK; /* its fence is above already */
        } else if (rc == LEAF_OK) {
            rc = zk_session_set_version(s, path, data, dlen, st.version);
        }
        if (rc == LEAF_OK) {
            return LEAF_OK;
        }
        if (rc != LEAF_EEXIST && rc != LEAF_ERR) {
            return rc; /* unreachable; a bad version is LEAF_ERR: read again */
        }
    }
    return LEAF_ERR;
}

/* Retires the leaf_forever child `name` ("{ip}:{port}-{seq}"); 0 when done. */
static int retire_one(struct zk_session *s, const struct zk_layout *l, int64_t nslots,
                      const char *name) {
    char ip[64], ident[ZK_PATH_MAX], path[ZK_PATH_MAX * 2], buf[1024];
    int port;
    int64_t id;
    const char *dash = strrchr(name, '-');
    if (dash == NULL || zk_compat_parse_child(name, ip, sizeof(ip), &port, &id) != LEAF_OK) {
        fprintf(stderr, "leafd: %s/%s is not a forever node's name\n", l->forever, name);
        return 1;
    }
    snprintf(ident, sizeof(ident), "%.*s", (int)(dash - name), name);
    snprintf(path, sizeof(path), "%s/%s", l->temporary, ident);
    struct zk_stat st;
    if (zk_session_stat(s, path, &st) == LEAF_OK) {
        fprintf(stderr, "leafd: %s is live (%s exists, session 0x%" PRIx64 "): stop it first\n",
                ident, path, (uint64_t)st.owner);
        return 1;
    }
    snprintf(path, sizeof(path), "%s/%s", l->forever, name);
    size_t len = 0;
    struct zk_node_data d;
    if (zk_session_get_stat(s, path, buf, sizeof(buf), &len, &st) != LEAF_OK ||
        zk_record_parse_node(buf, len, &d) != LEAF_OK || d.timestamp < 0) {
        fprintf(stderr, "leafd: %s holds no timestamp: not retiring it\n", path);
        return 1;
    }
    if (id < nslots && retire_slot(s, l, id, d.timestamp, ip, port) != LEAF_OK) {
        fprintf(stderr, "leafd: cannot carry %s's time into lease slot %" PRId64 "\n", ident, id);
        return 1;
    }
    if (zk_session_delete(s, path, st.version) != LEAF_OK) {
        fprintf(stderr, "leafd: %s changed meanwhile: not retired (run again)\n", path);
        return 1;
    }
    printf("retired %s: worker ID %" PRId64 ", its lease slot reserved to %" PRId64 " ms\n", ident,
           id, d.timestamp);
    return 0;
}

int snowflake_service_retire_main(const struct leaf_config *cfg, const char *what) {
    struct zk_layout l;
    struct snowflake_layout layout;
    if (cfg->zk_address[0] == '\0' || node_config_layout(cfg, &layout) != LEAF_OK ||
        zk_layout_init(&l, cfg->name, "0.0.0.0", 0) != LEAF_OK) {
        fprintf(stderr, "leafd: --retire needs leaf.snowflake.zk.address and leaf.name\n");
        return 1;
    }
    int bits = layout.bits[SNOWFLAKE_WORKER];
    int64_t nslots = bits >= 16 ? ZK_LEASE_MAX_SLOTS : INT64_C(1) << bits;
    struct zk_session s;
    if (zk_session_open(&s, cfg->zk_address, (int)cfg->zk_session_timeout_ms, retire_notify,
                        NULL) != LEAF_OK ||
        zk_session_wait_connected(&s, (int)cfg->zk_session_timeout_ms) != LEAF_OK) {
        fprintf(stderr,
                "leafd: cannot reach ZooKeeper at %s: start the ensemble or correct "
                "leaf.snowflake.zk.address\n",
                cfg->zk_address);
        return 1;
    }
    /* The slots' parent, for a cluster that never ran in lease mode. */
    leaf_status_t made = zk_session_create(&s, l.lease, "", 0, ZK_MODE_PERSISTENT, NULL, 0);
    if (made != LEAF_OK && made != LEAF_EEXIST) {
        fprintf(stderr, "leafd: cannot create %s\n", l.lease);
        zk_session_close(&s);
        return 1;
    }
    char **kids = NULL;
    int n = 0, failed = 0, retired = 0;
    size_t wlen = strlen(what);
    int all = strcmp(what, "stopped") == 0;
    if (zk_session_children(&s, l.forever, &kids, &n) != LEAF_OK) {
        n = 0;
    }
    for (int i = 0; i < n; i++) {
        const char *dash = strrchr(kids[i], '-');
        int match = all || (dash != NULL && (size_t)(dash - kids[i]) == wlen &&
                            strncmp(kids[i], what, wlen) == 0);
        if (!match) {
            continue;
        }
        int rc = retire_one(&s, &l, nslots, kids[i]);
        failed += rc;
        retired += rc == 0;
        if (all && rc != 0) {
            failed--; /* "stopped": a live identity is skipped, not a failure */
        }
    }
    zk_names_free(kids, n);
    zk_session_close(&s);
    if (retired == 0 && failed == 0 && !all) {
        fprintf(stderr, "leafd: no forever node of %s under %s\n", what, l.forever);
        return 1;
    }
    printf("%d identit%s retired\n", retired, retired == 1 ? "y" : "ies");
    return failed == 0 ? 0 : 1;
}
