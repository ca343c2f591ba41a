/*
 * This node's region claim in the registry ZooKeeper: see region_service.h.
 * Layer: a room of the node (src/node/region), over zk/zk_session.c and the
 * pure rules of zk/zk_region.c.
 */
#include "region_service.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "file.h"
#include "log.h"
#include "num.h"
#include "region_home.h"
#include "zk_region.h"
#include "zk_session.h"

#define REGION_CACHE_MAX 4096

/*
 * The service. cfg, path, cache_path: set at create, read-only. session: the
 * start's, then the thread's. mu guards the view and names; ready (the ID
 * path's flag), confirmed (the registry's last answer was this region's) and
 * stop are atomics any thread reads.
 */
struct region_service {
    const struct leaf_config *cfg;
    int enabled;
    char path[320];       /* the claim: /leafd-regions/{leaf.name}/{id} */
    char cache_path[640]; /* {data.dir}/{leaf.name}/region.properties */
    struct zk_session session;
    int session_open;
    pthread_t thread;
    int thread_on;

    atomic_int ready;
    atomic_int confirmed;
    atomic_int stop;
    pthread_mutex_t mu;
    int refused; /* another region holds the ID (said once) */
    struct region_service_view view;
    char (*names)[ZK_REGION_NAME_MAX]; /* count rows: the name claimed for each ID ("" unknown) */
    struct region_home *homes;         /* the homes and the peers (region_home.h) */
};

/* ZooKeeper threads, under the session's lock: nothing to do, the thread waits on the session's
 * own events (zk_session_wait_event). */
static void region_notify(void *arg) {
    (void)arg;
}

/* ---- the view -------------------------------------------------------------- */

static void view_set(struct region_service *rs, int ready, const char *source, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void view_set(struct region_service *rs, int ready, const char *source, const char *fmt,
                     ...) {
    va_list ap;
    pthread_mutex_lock(&rs->mu);
    rs->view.ready = ready;
    rs->view.source = source;
    va_start(ap, fmt);
    vsnprintf(rs->view.reason, sizeof(rs->view.reason), fmt, ap);
    va_end(ap);
    pthread_mutex_unlock(&rs->mu);
    atomic_store(&rs->ready, ready);
}

/* ---- the copy of a confirmed claim ----------------------------------------- */

/* 1 and *c filled when the data dir holds a readable copy; a bad one is logged and ignored. */
static int cache_load(struct region_service *rs, struct zk_region_cache *c) {
    char *text = NULL;
    size_t len = 0;
    if (file_read_all("region", rs->cache_path, REGION_CACHE_MAX, &text, &len) != LEAF_OK) {
        return 0; /* none (or logged by file_read_all) */
    }
    leaf_status_t rc = zk_region_cache_parse(text, len, c);
    free(text);
    if (rc != LEAF_OK) {
        log_warn("region", "region claim copy %s is malformed; ignored", rs->cache_path);
        return 0;
    }
    return 1;
}

static void cache_store(struct region_service *rs) {
    struct zk_region_cache c = {
        .id = rs->cfg->region_id, .count = rs->cfg->region_count, .confirmed_ms = clock_wall_ms()};
    snprintf(c.name, sizeof(c.name), "%s", rs->cfg->region);
    char text[256];
    size_t n = zk_region_cache_format(&c, text, sizeof(text));
    if (n > 0 && file_write_atomic("region", rs->cache_path, text, n, 0644) == LEAF_OK) {
        pthread_mutex_lock(&rs->mu);
        rs->view.confirmed_ms = c.confirmed_ms;
        pthread_mutex_unlock(&rs->mu);
    }
}

/* ---- the registry ---------------------------------------------------------- */

/* One claim's name into the table ("" when it is gone or not a name leafd writes). */
static void name_read(struct region_service *rs, const char *dir, int64_t id) {
    char path[340], data[ZK_REGION_NAME_MAX];
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/%" PRId64, dir, id);
    if (zk_session_get(&rs->session, path, data, sizeof(data) - 1, &len) != LEAF_OK) {
        len = 0;
    }
    while (len > 0 && (data[len - 1] == '\n' || data[len - 1] == ' ')) {
        len--;
    }
    if (!zk_region_name_ok(data, len)) {
        len = 0;
    }
    pthread_mutex_lock(&rs->mu);
    memcpy(rs->names[id], data, len);
    rs->names[id][len] = '\0';
    pthread_mutex_unlock(&rs->mu);
}

/* The names of every claimed region ID, for the decoders (best effort): the claims listed, then
 * each read. */
static void names_read(struct region_service *rs) {
    char dir[300];
    char **kids = NULL;
    int nkids = 0;
    if (zk_region_dir(dir, sizeof(dir), rs->cfg->name) != LEAF_OK ||
        zk_session_children(&rs->session, dir, &kids, &nkids) != LEAF_OK) {
        return;
    }
    for (int i = 0; i < nkids; i++) {
        int64_t id;
        if (num_parse_range(kids[i], strlen(kids[i]), 0, rs->cfg->region_count - 1, &id) ==
            LEAF_OK) {
            name_read(rs, dir, id);
        }
    }
    zk_names_free(kids, nkids);
}

/*
 * The count every region must share (zk_region.h): recorded in the cluster's
 * node by the first region to claim, read back by every later one. ZK_REGION_OURS
 * when it is this node's (recorded now, or before), ZK_REGION_COUNT with the
 * recorded count in *holder when not, ZK_REGION_UNKNOWN when not read.
 */
static enum zk_region_claim count_once(struct region_service *rs, const char *dir, char *holder,
                                       size_t cap) {
    struct zk_session *s = &rs->session;
    char want[32], data[64];
    size_t wlen = zk_region_count_format(rs->cfg->region_count, want, sizeof(want)), len = 0;
    leaf_status_t rc = zk_session_create(s, dir, want, wlen, ZK_MODE_PERSISTENT, NULL, 0);
    if (rc == LEAF_OK) {
        return ZK_REGION_OURS;
    }
    struct zk_stat st;
    if (rc != LEAF_EEXIST ||
        zk_session_get_stat(s, dir, data, sizeof(data) - 1, &len, &st) != LEAF_OK) {
        return ZK_REGION_UNKNOWN;
    }
    int64_t recorded;
    if (zk_region_count_parse(data, len, &recorded) != LEAF_OK) {
        /* Made by hand, empty: this count is recorded, fenced on the version read. */
        return zk_session_set_version(s, dir, want, wlen, st.version) == LEAF_OK
                   ? ZK_REGION_OURS
                   : ZK_REGION_UNKNOWN;
    }
    snprintf(holder, cap, "%" PRId64, recorded);
    return recorded == rs->cfg->region_count ? ZK_REGION_OURS : ZK_REGION_COUNT;
}

/*
 * One try: the claim is created, or read back. The parents are created as
 * needed (the root empty, the cluster's node with the count). *holder gets
 * the name of the region that holds the ID when it is another's, or the
 * recorded count when it differs.
 */
static enum zk_region_claim claim_once(struct region_service *rs, char *holder, size_t cap) {
    struct zk_session *s = &rs->session;
    const char *ours = rs->cfg->region;
    char dir[300];
    if (zk_session_state(s) != ZK_STATE_CONNECTED ||
        zk_region_dir(dir, sizeof(dir), rs->cfg->name) != LEAF_OK) {
        return ZK_REGION_UNKNOWN;
    }
    leaf_status_t rc = zk_session_create(s, ZK_REGION_ROOT, NULL, 0, ZK_MODE_PERSISTENT, NULL, 0);
    if (rc != LEAF_OK && rc != LEAF_EEXIST) {
        return ZK_REGION_UNKNOWN; /* logged by the session */
    }
    enum zk_region_claim counted = count_once(rs, dir, holder, cap);
    if (counted != ZK_REGION_OURS) {
        return counted;
    }
    rc = zk_session_create(s, rs->path, ours, strlen(ours), ZK_MODE_PERSISTENT, NULL, 0);
    if (rc == LEAF_OK) {
        log_info("region", "region ID %" PRId64 " claimed for region %s in the registry (%s)",
                 rs->cfg->region_id, ours, rs->path);
        return ZK_REGION_OURS;
    }
    if (rc != LEAF_EEXIST) {
        return ZK_REGION_UNKNOWN;
    }
    char data[ZK_REGION_NAME_MAX];
    size_t len = 0;
    if (zk_session_get(s, rs->path, data, sizeof(data) - 1, &len) != LEAF_OK) {
        return ZK_REGION_UNKNOWN;
    }
    data[len] = '\0';
    enum zk_region_claim claim = zk_region_judge(data, len, ours);
    size_t hlen = strcspn(data, " \r\n\t");
    snprintf(holder, cap, "%.*s", zk_region_name_ok(data, hlen) ? (int)hlen : 0, data);
    if (holder[0] == '\0') {
        snprintf(holder, cap, "(not a region name)");
    }
    return claim;
}

/* The registry refuses this node: not ready, why in the view, and one error line (not again
 * while it stays refused). */
static void refuse(struct region_service *rs, int was_refused, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void refuse(struct region_service *rs, int was_refused, const char *fmt, ...) {
    char why[sizeof(rs->view.reason)];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    view_set(rs, 0, "none", "%s", why);
    pthread_mutex_lock(&rs->mu);
    rs->refused = 1;
    pthread_mutex_unlock(&rs->mu);
    atomic_store(&rs->confirmed, 0);
    if (!was_refused) {
        log_error("region", "%s; no IDs are issued", why);
    }
}

/* Acts on one try's answer; returns the claim. Start or thread (the session's owner). */
static enum zk_region_claim confirm(struct region_service *rs) {
    char holder[ZK_REGION_NAME_MAX] = "";
    const struct leaf_config *cfg = rs->cfg;
    enum zk_region_claim claim = claim_once(rs, holder, sizeof(holder));
    /* The session's state first: its threads wake this one holding the session's lock, so
     * the service's lock is never held while the session's is taken. */
    int up = zk_session_state(&rs->session) == ZK_STATE_CONNECTED;
    pthread_mutex_lock(&rs->mu);
    rs->view.registry_up = up;
    int refused = rs->refused;
    pthread_mutex_unlock(&rs->mu);
    if (claim == ZK_REGION_OURS) {
        names_read(rs);
        cache_store(rs);
        if (!atomic_load(&rs->ready) || refused) {
            log_info("region",
                     "region %s (ID %" PRId64 " of %" PRId64 ") confirmed by the registry",
                     cfg->region, cfg->region_id, cfg->region_count);
        }
        pthread_mutex_lock(&rs->mu);
        rs->refused = 0;
        pthread_mutex_unlock(&rs->mu);
        atomic_store(&rs->confirmed, 1);
        view_set(rs, 1, "registry", "%s", "");
    } else if (claim == ZK_REGION_COUNT) {
        refuse(rs, refused,
               "leafd.region.count is %" PRId64 " here, but the registry records %s for every "
               "region of %s: regions with different counts would issue the same segment IDs; "
               "use one count everywhere (docs/regions.md, \"Adding a region\")",
               cfg->region_count, holder, cfg->name);
    } else if (claim == ZK_REGION_OTHER) {
        refuse(rs, refused,
               "region ID %" PRId64 " is claimed by region %s in the registry (%s), not by "
               "this node's region %s: give this region a free leafd.region.id (docs/regions.md, "
               "\"Region claims\")",
               cfg->region_id, holder, rs->path, cfg->region);
    }
    return claim;
}

/*
 * The thread: confirms every REGION_SERVICE_RETRY_MS until the registry
 * confirms, then every REGION_SERVICE_RECHECK_MS.
 * It waits on the session's own events (REGION_SERVICE_TICK_MS at most, so a
 * stop is seen soon) and drains them: an expired handle is replaced there.
 */
static void *region_thread(void *arg) {
    struct region_service *rs = arg;
    int64_t last_try = clock_mono_ms();
    while (!atomic_load(&rs->stop)) {
        zk_session_wait_event(&rs->session, REGION_SERVICE_TICK_MS);
        zk_session_dispatch(&rs->session);
        int up = zk_session_state(&rs->session) == ZK_STATE_CONNECTED;
        int64_t every =
            atomic_load(&rs->confirmed) ? REGION_SERVICE_RECHECK_MS : REGION_SERVICE_RETRY_MS;
        int64_t now = clock_mono_ms();
        if (now - last_try >= every) {
            last_try = now;
            confirm(rs);
        }
        region_home_tick(rs->homes, &rs->session);
        pthread_mutex_lock(&rs->mu);
        rs->view.registry_up = up;
        pthread_mutex_unlock(&rs->mu);
    }
    return NULL;
}

/* ---- life cycle (control thread) ------------------------------------------- */

leaf_status_t region_service_create(struct region_service **out, const struct leaf_config *cfg,
                                    struct uv_loop_s *control_loop) {
    (void)control_loop; /* the registry needs no handle of the loop: the thread owns it */
    struct region_service *rs = calloc(1, sizeof(*rs));
    if (rs == NULL) {
        log_error("region", "calloc(region service) failed");
        return LEAF_ENOMEM;
    }
    rs->cfg = cfg;
    rs->enabled = cfg->region_count > 1;
    atomic_init(&rs->ready, 1);
    atomic_init(&rs->confirmed, 0);
    atomic_init(&rs->stop, 0);
    pthread_mutex_init(&rs->mu, NULL);
    rs->view = (struct region_service_view){.enabled = rs->enabled,
                                            .ready = 1,
                                            .id = cfg->region_id,
                                            .count = cfg->region_count,
                                            .source = "none"};
    snprintf(rs->view.name, sizeof(rs->view.name), "%s", cfg->region);
    *out = rs;
    if (!rs->enabled) {
        return LEAF_OK;
    }
    rs->names = calloc((size_t)cfg->region_count, sizeof(*rs->names));
    int n = snprintf(rs->cache_path, sizeof(rs->cache_path), "%s/%s/" ZK_REGION_CACHE_FILE,
                     cfg->data_dir, cfg->name);
    if (rs->names == NULL || n < 0 || (size_t)n >= sizeof(rs->cache_path) ||
        zk_region_path(rs->path, sizeof(rs->path), cfg->name, cfg->region_id) != LEAF_OK) {
        log_error("region", "region service: out of memory or leafd.data.dir too long");
        return LEAF_ENOMEM;
    }
    snprintf(rs->names[cfg->region_id], ZK_REGION_NAME_MAX, "%s", cfg->region);
    return region_home_create(&rs->homes, cfg);
}

/* The start's verdict, logged: LEAF_EINVAL when refused. */
static leaf_status_t start_verdict(struct region_service *rs, enum zk_region_claim claim,
                                   const struct zk_region_cache *cache) {
    const struct leaf_config *cfg = rs->cfg;
    switch (zk_region_decide(claim, cache, cfg->region, cfg->region_id, cfg->region_count)) {
    case ZK_REGION_REFUSE: return LEAF_EINVAL; /* confirm() said why, naming both */
    case ZK_REGION_SERVE:
        if (claim == ZK_REGION_UNKNOWN) {
            view_set(rs, 1, "cache", "%s", "");
            log_warn("region",
                     "registry %s unreachable: region %s (ID %" PRId64 ") serves on its claim "
                     "confirmed earlier (%s); it is confirmed again when the registry answers",
                     cfg->region_registry_zk_address, cfg->region, cfg->region_id, rs->cache_path);
        }
        return LEAF_OK;
    case ZK_REGION_WAIT:
    default:
        view_set(rs, 0, "none",
                 "region ID %" PRId64 " not confirmed: registry %s unreachable and no claim "
                 "confirmed earlier in %s",
                 cfg->region_id, cfg->region_registry_zk_address, rs->cache_path);
        log_warn("region",
                 "region %s (ID %" PRId64 "): registry %s unreachable and no claim confirmed "
                 "earlier in %s; not ready (no IDs issued) until the registry confirms the claim",
                 cfg->region, cfg->region_id, cfg->region_registry_zk_address, rs->cache_path);
        return LEAF_OK;
    }
}

leaf_status_t region_service_start(struct region_service *rs) {
    const struct leaf_config *cfg = rs->cfg;
    if (!rs->enabled) {
        return LEAF_OK;
    }
    struct zk_region_cache cache;
    int cached = cache_load(rs, &cache);
    if (zk_session_open(&rs->session, cfg->region_registry_zk_address,
                        (int)cfg->zk_session_timeout_ms, region_notify, rs) != LEAF_OK) {
        log_error("region", "cannot open a session to the registry %s",
                  cfg->region_registry_zk_address);
        return LEAF_ERR;
    }
    rs->session_open = 1;
    zk_session_wait_connected(&rs->session, REGION_SERVICE_START_WAIT_MS);
    atomic_store(&rs->ready, 0); /* until the verdict */
    enum zk_region_claim claim = confirm(rs);
    leaf_status_t rc = start_verdict(rs, claim, cached ? &cache : NULL);
    if (rc != LEAF_OK) {
        return rc;
    }
    if (pthread_create(&rs->thread, NULL, region_thread, rs) != 0) {
        log_error("region", "pthread_create(region claim thread) failed");
        return LEAF_ERR;
    }
    rs->thread_on = 1;
    return region_home_start(rs->homes);
}

void region_service_stop(struct region_service *rs) {
    if (rs == NULL) {
        return;
    }
    region_home_stop(rs->homes);
    if (rs->thread_on) {
        atomic_store(&rs->stop, 1); /* seen within REGION_SERVICE_TICK_MS */
        pthread_join(rs->thread, NULL);
        rs->thread_on = 0;
    }
    if (rs->session_open) {
        zk_session_close(&rs->session);
        rs->session_open = 0;
    }
}

void region_service_free(struct region_service *rs) {
    if (rs == NULL) {
        return;
    }
    region_service_stop(rs);
    pthread_mutex_destroy(&rs->mu);
    free(rs->names);
    region_home_free(rs->homes);
    free(rs);
}

/* ---- any thread ------------------------------------------------------------ */

int region_service_ready(const struct region_service *rs) {
    return rs == NULL || atomic_load(&rs->ready);
}

void region_service_view(struct region_service *rs, struct region_service_view *v) {
    if (rs == NULL) {
        *v = (struct region_service_view){.ready = 1, .count = 1, .source = "none"};
        return;
    }
    pthread_mutex_lock(&rs->mu);
    *v = rs->view;
    pthread_mutex_unlock(&rs->mu);
    v->ready = atomic_load(&rs->ready);
    if (rs->homes != NULL) {
        region_home_view(rs->homes, v);
    }
}

int region_service_name_of(struct region_service *rs, int64_t id, char *buf, size_t cap) {
    if (rs == NULL || !rs->enabled || id < 0 || id >= rs->cfg->region_count) {
        return 0;
    }
    pthread_mutex_lock(&rs->mu);
    int known = rs->names[id][0] != '\0';
    if (known) {
        snprintf(buf, cap, "%s", rs->names[id]);
    }
    pthread_mutex_unlock(&rs->mu);
    return known;
}

enum region_service_where region_service_home(struct region_service *rs, enum zk_region_kind k,
                                              const char *name, size_t len, int claim,
                                              struct region_service_home *out) {
    if (rs == NULL || !rs->enabled || rs->homes == NULL) {
        return REGION_HOME_HERE;
    }
    return region_home_find(rs->homes, k, name, len, claim, out);
}

int region_service_peer(struct region_service *rs, const char *region,
                        struct region_service_home *out) {
    return rs != NULL && rs->enabled && rs->homes != NULL &&
           region_home_peer(rs->homes, region, out);
}

leaf_status_t region_service_switch(struct region_service *rs, enum zk_region_kind k,
                                    const char *name, size_t len, const char *from, char *holder,
                                    size_t cap) {
    if (rs == NULL || !rs->enabled || rs->homes == NULL) {
        return LEAF_EUNAVAIL;
    }
    return region_home_switch(rs->homes, k, name, len, from, holder, cap);
}
