/*
 * This node's previous process in the sequence line (sequence_service_previous.h). Its
 * election node is recognised by two marks: the session this data dir recorded
 * and this node's own advertised addresses (a data dir copied from another node
 * records that node's session, and its node advertises that node).
 * Layer: the node (src/node/sequence), called by sequence_service.c at start.
 */
#include "sequence_service_previous.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "file.h"
#include "log.h"
#include "sequence_elect.h"
#include "sequence_service_state.h"

#define PREVIOUS_FILE "sequence-session"

/* The session recorded by the previous process, 0 when none (or unreadable). */
static int64_t recorded_session(const char *path) {
    char *text = NULL;
    size_t len = 0;
    if (file_read_all("sequence", path, 64, &text, &len) != LEAF_OK) {
        return 0;
    }
    unsigned long long id = strtoull(text, NULL, 16);
    free(text);
    return (int64_t)id;
}

/* The lease names the deleted primary: it says "released", so the next primary does not
 * wait out a lease whose holder has exited (a conditional write: a new claim stands). */
static void release_lease(struct sequence_service *svc, const char *name) {
    char data[SEQ_PATH_MAX + 16], want[SEQ_PATH_MAX + 16];
    size_t len = 0;
    struct zk_stat st;
    snprintf(want, sizeof(want), "primary=%s", name);
    if (zk_session_get_stat(svc->zk, svc->lease_path, data, sizeof(data) - 1, &len, &st) !=
        LEAF_OK) {
        return;
    }
    data[len] = '\0';
    if (strcmp(data, want) == 0 &&
        zk_session_set_version(svc->zk, svc->lease_path, "released", 8, st.version) == LEAF_OK) {
        log_info("sequence", "%s: the lease of the previous process's primary %s released",
                 svc->lease_path, name);
    }
}

static void forget_node(struct sequence_service *svc, const char *name, int64_t prev) {
    char path[SEQ_PATH_MAX], owner[SEQ_PATH_MAX];
    struct zk_stat st;
    snprintf(path, sizeof(path), "%s/%.200s", svc->dir_primary, name);
    char data[sizeof(svc->self_data)];
    size_t len = 0;
    if (zk_session_get_stat(svc->zk, path, data, sizeof(data) - 1, &len, &st) != LEAF_OK ||
        st.owner != prev) {
        return;
    }
    data[len] = '\0';
    if (strcmp(data, svc->self_data) != 0) {
        /* Another node's (a data dir copied from it): never this process's to remove. */
        log_warn("sequence",
                 "%s belongs to the session this data dir records (0x%" PRIx64 ") but "
                 "advertises %s, not this node (%s): left alone (was the data dir copied?)",
                 path, (uint64_t)prev, data, svc->self_data);
        return;
    }
    snprintf(owner, sizeof(owner), "/leafd/%s/owners/%.200s", svc->cfg->name, name);
    int sharded = zk_session_stat(svc->zk, owner, &st) == LEAF_OK;
    if (sharded) {
        (void)zk_session_set(svc->zk, owner, "released", 8);
    }
    if (zk_session_delete(svc->zk, path, -1) == LEAF_OK) {
        log_info("sequence",
                 "deleted %s, the election node of this node's previous process (ZooKeeper "
                 "session 0x%" PRIx64 "; it has exited: this process holds the data dir's "
                 "lock)%s",
                 path, (uint64_t)prev, sharded ? "; its owner node released" : "");
        release_lease(svc, name);
    }
}

void sequence_service_previous_record(struct sequence_service *svc) {
    char path[SEQ_PATH_MAX + 32], text[32];
    int64_t sid = zk_session_id(svc->zk);
    if (sid == 0 || sid == svc->recorded_sid) {
        return;
    }
    snprintf(path, sizeof(path), "%.*s/%s", SEQ_PATH_MAX - 1, svc->cfg->data_dir, PREVIOUS_FILE);
    int len = snprintf(text, sizeof(text), "%" PRIx64 "\n", (uint64_t)sid);
    if (file_write_atomic("sequence", path, text, (size_t)len, 0644) == LEAF_OK) {
        svc->recorded_sid = sid;
    }
}

void sequence_service_previous_forget(struct sequence_service *svc) {
    char path[SEQ_PATH_MAX + 32];
    int64_t sid = zk_session_id(svc->zk);
    snprintf(path, sizeof(path), "%.*s/%s", SEQ_PATH_MAX - 1, svc->cfg->data_dir, PREVIOUS_FILE);
    int64_t prev = recorded_session(path);
    if (sid == 0 || prev == sid) {
        svc->recorded_sid = prev; /* the same session (an in-place upgrade adopted it) */
        return;
    }
    char **names = NULL;
    int n = 0;
    if (prev != 0 && zk_session_children(svc->zk, svc->dir_primary, &names, &n) == LEAF_OK) {
        for (int i = 0; i < n; i++) {
            if (sequence_elect_seq(names[i]) >= 0) {
                forget_node(svc, names[i], prev);
            }
        }
        zk_names_free(names, n);
    }
    sequence_service_previous_record(svc);
}
