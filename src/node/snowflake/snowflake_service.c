/*
 * The snowflake node: start, the static and forever modes, the generator's
 * API (snowflake_service.h).
 * Layer: the node (src/node/snowflake), the top of the snowflake room; the
 * generator itself is snowflake/snowflake_gen.c (pure).
 */
#include "snowflake_service.h"
#include "snowflake_service_state.h"

#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "clock.h"
#include "lockstat.h"
#include "log.h"
#include "node_config.h"
#include "node_ip.h"
#include "snowflake_service_lease.h"
#include "zk_cache.h"
#include "zk_clock.h"
#include "zk_compat.h"
#include "zk_identity.h"
#include "zk_register.h"
#include "zk_session.h"

/* How long start-up waits for a first ZooKeeper connection before it falls
 * back to the local cache (and keeps trying in the background). */
#define NODE_CONNECT_WAIT_MS 5000
#define NODE_REPORT_MS 3000
#define NODE_IDWAIT_MS 250 /* how often a held identity is looked at again */

static leaf_status_t node_identity(struct snowflake_service *n) {
    const struct leaf_config *cfg = n->cfg;
    if (node_advertise_ip(cfg, n->self.ip, sizeof(n->self.ip)) != LEAF_OK) {
        return LEAF_ERR;
    }
    n->self.port = cfg->identity_port;
    if (cfg->zk_address[0] != '\0') {
        node_advertise_check(cfg, n->self.ip, n->self.port);
    }
    char who[ZK_IDENTITY_MAX + 8];
    n->named = cfg->snowflake_identity[0] != '\0';
    if (n->named) {
        snprintf(who, sizeof(who), "name-%s", cfg->snowflake_identity);
    } else {
        snprintf(who, sizeof(who), "%d", n->self.port);
    }
    if (zk_layout_init(&n->layout, cfg->name, n->self.ip, n->self.port) != LEAF_OK ||
        (n->named && zk_layout_name(&n->layout, cfg->snowflake_identity) != LEAF_OK) ||
        zk_cache_path(n->cache_path, sizeof(n->cache_path), cfg->data_dir, cfg->name, who) !=
            LEAF_OK) {
        log_error("snowflake", "leaf.name or leafd.data.dir is too long for a path");
        return LEAF_EINVAL;
    }
    n->layout.max_worker_id = snowflake_layout_max(&n->gen.layout, SNOWFLAKE_WORKER);
    return LEAF_OK;
}

static void format_time(int64_t ms, char *buf, size_t cap) {
    time_t secs = (time_t)(ms / 1000);
    struct tm tm;
    if (ms < 0 || gmtime_r(&secs, &tm) == NULL) {
        snprintf(buf, cap, "none");
        return;
    }
    size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, cap - n, ".%03dZ (%" PRId64 ")", (int)(ms % 1000), ms);
}

/*
 * The clock must be above the larger stored timestamp: wait out a small gap,
 * refuse a larger one naming both times. Never skipped, whichever source
 * the worker ID came from (Leaf defect 1).
 */
static leaf_status_t node_check_clock(struct snowflake_service *n, int64_t zk_ms, int64_t cache_ms,
                                      int64_t *floor_ms) {
    for (;;) {
        int64_t now = clock_wall_ms();
        /* The bounded lead covers a stored time up to max.lead.ms ahead:
         * only the rest is waited out. */
        struct zk_clock_decision d = zk_clock_startup(now + n->cfg->max_lead_ms, zk_ms, cache_ms,
                                                      n->cfg->startup_max_wait_ms);
        *floor_ms = d.floor_ms;
        char tnow[64], tzk[64], tcache[64];
        format_time(now, tnow, sizeof(tnow));
        format_time(zk_ms, tzk, sizeof(tzk));
        format_time(cache_ms, tcache, sizeof(tcache));
        if (d.verdict == ZK_CLOCK_OK) {
            if (now <= d.floor_ms) {
                log_info("snowflake",
                         "the clock %s is %" PRId64 " ms behind the stored time (ZooKeeper %s, "
                         "local cache %s); serving above it at once, with a lead of at most "
                         "leafd.snowflake.max.lead.ms = %" PRId64,
                         tnow, d.floor_ms + 1 - now, tzk, tcache, n->cfg->max_lead_ms);
            }
            return LEAF_OK;
        }
        if (d.verdict == ZK_CLOCK_REFUSE) {
            /* The stored time is the last reservation, made up to reserve.ms ahead of the
             * clock of whoever held the identity: a previous holder's (another pod of a name)
             * as often as a clock of this node's behind. */
            log_error("snowflake",
                      "refusing to start: the clock %s is %" PRId64 " ms behind the "
                      "stored time (ZooKeeper %s, local cache %s), more than "
                      "leafd.snowflake.startup.max.wait.ms = %" PRId64 "; IDs from the past "
                      "could repeat. The stored time is the last reservation of identity %s, "
                      "made up to leafd.snowflake.reserve.ms = %" PRId64 " ahead of its holder's "
                      "clock: if that holder's clock was ahead, wait until the stored time "
                      "passes and start again; if this clock is behind, correct it (NTP)",
                      tnow, d.wait_ms, tzk, tcache, n->cfg->startup_max_wait_ms, n->layout.identity,
                      n->cfg->reserve_ms);
            return LEAF_ECLOCK;
        }
        log_warn("snowflake",
                 "the clock %s is %" PRId64 " ms behind the stored time (ZooKeeper "
                 "%s, local cache %s); waiting before serving",
                 tnow, d.wait_ms, tzk, tcache);
        struct timespec ts = {(time_t)(d.wait_ms / 1000), (long)(d.wait_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The worker ID and stored time from ZooKeeper, or from the cache when it is unreachable. */
static leaf_status_t node_lease(struct snowflake_service *n, const struct zk_cache_data *cache,
                                int have_cache, int64_t *zk_ms) {
    struct zk_registration reg;
    leaf_status_t st = LEAF_EUNAVAIL;
    *zk_ms = -1;
    if (zk_session_wait_connected(n->zk, NODE_CONNECT_WAIT_MS) == LEAF_OK) {
        st = snowflake_service_identity_cluster(n);
        if (st == LEAF_OK) {
            st = snowflake_service_identity_clock(n);
        }
        if (st == LEAF_OK) {
            st = zk_register(n->zk, &n->layout, &n->self, clock_wall_ms, &reg);
        }
    }
    if (st == LEAF_OK && n->leaf_compat && !reg.created &&
        (!have_cache || cache->timestamp < reg.zk_timestamp)) {
        /* Written by Meituan Leaf, which may have issued up to its next report. */
        reg.zk_timestamp = zk_compat_floor_ms(reg.zk_timestamp);
    }
    if (st == LEAF_OK && n->shape_changed) {
        struct zk_shape mine = {{0}, n->cfg->epoch, n->gen.layout.unit_ms};
        snowflake_layout_format(&n->gen.layout, mine.layout, sizeof(mine.layout));
        reg.zk_timestamp = zk_shape_floor_ms(&n->old_shape, reg.zk_timestamp, &mine);
    }
    if (st == LEAF_OK) {
        n->worker_id = reg.worker_id;
        n->registered = 1;
        n->forever_version = reg.version;
        *zk_ms = reg.zk_timestamp;
        snprintf(n->forever_path, sizeof(n->forever_path), "%s", reg.forever_path);
        if (have_cache && cache->worker_id >= 0 && cache->worker_id != reg.worker_id) {
            log_warn("snowflake",
                     "local cache %s says worker ID %" PRId64 ", ZooKeeper says %" PRId64
                     "; using ZooKeeper's",
                     n->cache_path, cache->worker_id, reg.worker_id);
        }
        return LEAF_OK;
    }
    if (st != LEAF_EUNAVAIL) {
        return st; /* a refusal (clock, worker ID range): never overridden by the cache */
    }
    if (n->named) {
        /* Only ZooKeeper can say the name is not held elsewhere (snowflake_service_state.h). */
        if (!atomic_load(&n->stats.zk_wait)) {
            log_warn("snowflake",
                     "ZooKeeper (%s) is unreachable: the named identity %s serves snowflake IDs "
                     "only once ZooKeeper confirms it (/ready 503 until then); other modes serve",
                     n->cfg->zk_address, n->layout.identity);
        }
        return LEAF_EAGAIN;
    }
    if (have_cache && cache->worker_id >= 0 && cache->timestamp >= 0 &&
        n->cache_use == ZK_CACHE_UNKNOWN) {
        /* An older leafd's cache cannot prove it is not a copy: serve snowflake only once
         * ZooKeeper confirms it; the process stays up for its other modes meanwhile. */
        if (!atomic_load(&n->stats.zk_wait)) {
            log_warn("snowflake",
                     "ZooKeeper (%s) is unreachable and the local cache %s does not name its "
                     "identity (written by an older leafd): snowflake IDs wait until ZooKeeper "
                     "confirms worker ID %" PRId64 " for %s (/ready 503 until then); other "
                     "modes serve",
                     n->cfg->zk_address, n->cache_path, cache->worker_id, n->layout.identity);
        }
        return LEAF_EAGAIN;
    }
    if (!have_cache || cache->worker_id < 0 || cache->timestamp < 0 ||
        n->cache_use != ZK_CACHE_OWN) {
        log_error("snowflake",
                  "ZooKeeper (%s) is unreachable and the local cache %s %s; cannot "
                  "start without a worker ID and a stored timestamp: start the ensemble or "
                  "correct leaf.snowflake.zk.address",
                  n->cfg->zk_address, n->cache_path,
                  !have_cache ? "does not exist or is not this node's"
                  : n->cache_use != ZK_CACHE_OWN
                      ? "does not name its identity (written by an older leafd): only "
                        "ZooKeeper can confirm its worker ID"
                      : "lacks workerID or timestamp");
        return LEAF_EUNAVAIL;
    }
    n->worker_id = cache->worker_id;
    n->registered = 0; /* looked up when ZooKeeper answers */
    log_warn("snowflake",
             "ZooKeeper (%s) is unreachable: starting from the local cache %s with "
             "worker ID %" PRId64 "; retrying ZooKeeper in the background",
             n->cfg->zk_address, n->cache_path, n->worker_id);
    return LEAF_OK;
}

/*
 * The reservation to persist now: reserve.ms ahead of the clock, and always
 * at least a tick above the generator's logical time (the clock plus its
 * lead), so the ceiling stays above what the lead issues. Not
 * reserve.ms ahead of the logical time: a restart right after a restart
 * would then find the reservation beyond the lead bound and wait again.
 */
static int64_t node_reservation(struct snowflake_service *n) {
    pthread_mutex_lock(&n->lock);
    int64_t now = clock_wall_ms();
    int64_t logical = now + snowflake_gen_lead(&n->gen, now) + n->gen.layout.unit_ms;
    pthread_mutex_unlock(&n->lock);
    int64_t reserved = now + n->cfg->reserve_ms;
    return reserved > logical ? reserved : logical;
}

static void node_reserve_now(struct snowflake_service *n);

static void node_cron(uv_timer_t *t) {
    struct snowflake_service *n = t->data;
    if (n->cfg->lease_mode) {
        snowflake_service_lease_cron(n);
        return;
    }
    node_reserve_now(n);
}

/* Control thread: one forever-mode reservation: the cache write, then the ceiling; and the
 * report to ZooKeeper. The cron's every report_ms, and at once when a fence is lifted
 * (n->reserve_now, for snowflake_service_forever.c). */
static void node_reserve_now(struct snowflake_service *n) {
    int64_t reserved = node_reservation(n);
    if (n->named) {
        int past = clock_mono_ms() >= atomic_load(&n->fence_mono_ms);
        if (past && !atomic_exchange(&n->stats.fence_passed, 1)) {
            log_error("snowflake",
                      "identity %s: ZooKeeper has answered nothing for a session timeout, so it "
                      "may have given the identity to another process: issuing stopped until it "
                      "answers and the identity is confirmed this node's",
                      n->layout.identity);
        } else if (!past && atomic_exchange(&n->stats.fence_passed, 0)) {
            log_info("snowflake", "identity %s confirmed: issuing again", n->layout.identity);
        }
    }
    if (reserved < n->reserved_ms) {
        reserved = n->reserved_ms; /* clock stepped back: keep what is reserved */
    }
    if (!n->work_busy) {
        (void)snowflake_service_cache_write(n, reserved);
    }
    snowflake_service_forever_report(n, reserved);
}

static void node_state(struct snowflake_service *n, const struct zk_event *ev) {
    atomic_store(&n->stats.zk_state, ev->state);
    if (ev->state == ZK_STATE_CONNECTED) {
        snowflake_service_forever_report(n, n->reserved_ms);
        if (n->cfg->lease_mode) {
            snowflake_service_lease_state(n, ev->state);
        }
    } else if (ev->state == ZK_STATE_EXPIRED) {
        /* The handle is dead: replace it; the ephemeral node must be re-created. */
        if (n->cfg->lease_mode) {
            snowflake_service_lease_state(n, ev->state);
        }
        n->ephemeral_ok = 0;
        atomic_store(&n->stats.ephemeral, 0);
        /* The session replaces the dead handle; what was in flight on it is
         * dropped, so nothing is in flight any more. */
        memset(n->busy, 0, sizeof(n->busy));
        n->forever_watched = 0; /* a new session starts without watches */
        atomic_store(&n->stats.zk_state, ZK_STATE_CONNECTING);
    }
}

/* Control thread: one event of this node's on the session (node_zk). */
static void node_on_zk(void *arg, struct zk_event *ev) {
    struct snowflake_service *n = arg;
    if (!n->started || n->stopping) {
        return; /* not yet serving, or its last time is persisted already */
    }
    if (ev->kind == ZK_EVENT_STATE) {
        node_state(n, ev);
    } else if (ev->kind == ZK_EVENT_WATCH) {
        snowflake_service_forever_watched(n); /* this node's own leaf_forever node changed */
    } else if (ev->op > 0 && ev->op <= OP_F_LAST) {
        snowflake_service_forever_done(n, ev);
    } else if (ev->op > OP_F_LAST && ev->op <= OP_L_LAST && n->cfg->lease_mode) {
        snowflake_service_lease_event(n, ev);
    }
}

/* Control thread, after each batch of ZooKeeper events and at an event loop's poke. */
static void node_on_idle(void *arg) {
    struct snowflake_service *n = arg;
    if (n->cfg->lease_mode) {
        snowflake_service_lease_poke(n);
    }
    if (atomic_exchange(&n->reserve_low, 0) && n->cron.data != NULL &&
        uv_is_active((uv_handle_t *)&n->cron)) {
        node_cron(
            &n->cron); /* before the timer: the wall clock jumped ahead (snowflake_service_next) */
    }
}

static void node_on_async(uv_async_t *a) {
    node_on_idle(a->data);
}

/* The first reservation, written synchronously before serving. */
static leaf_status_t node_first_reservation(struct snowflake_service *n) {
    int64_t reserved = node_reservation(n);
    struct zk_cache_data c = {n->worker_id, reserved};
    char err[320];
    /* The cache names its identity, cluster, marker and the session that holds
     * the identity before the first ID: a kill -9 right after finds them. */
    if (zk_cache_store_owned(n->cache_path, &c, &n->owner, err, sizeof(err)) != LEAF_OK) {
        log_error("snowflake", "cannot persist the reservation (%s); refusing to serve", err);
        return LEAF_ERR;
    }
    snowflake_service_cache_stored(n, reserved);
    char data[256];
    size_t len = snowflake_service_forever_json(n, reserved, data, sizeof(data));
    struct zk_stat stat;
    int64_t sent = clock_mono_ms();
    leaf_status_t st = n->registered != 1 ? LEAF_OK
                                          : zk_session_set_stat(n->zk, n->forever_path, data, len,
                                                                n->forever_version, &stat);
    if (n->registered == 1 && st == LEAF_OK) {
        n->forever_version = stat.version;
        n->forever_acked_ms = reserved;
        atomic_store(&n->stats.last_zk_report_ms, clock_wall_ms());
        if (n->named && n->ephemeral_ok) { /* the ceiling is what ZooKeeper acknowledged */
            snowflake_service_fence_answered(n, sent);
            snowflake_service_cache_stored(n, reserved);
        }
    } else if (st == LEAF_ERR) {
        log_error("snowflake",
                  "refusing to serve: %s was written by someone else since this node read it "
                  "(another node with this identity, or an operator)",
                  n->forever_path);
        return LEAF_ERR;
    }
    atomic_store(&n->stats.ephemeral, n->ephemeral_ok);
    return LEAF_OK;
}

static leaf_status_t node_start_loop(struct snowflake_service *n) {
    uv_loop_t *loop = n->loop;
    n->report_ms =
        n->cfg->reserve_ms / 2 < NODE_REPORT_MS ? n->cfg->reserve_ms / 2 : NODE_REPORT_MS;
    if (n->cfg->lease_mode) {
        /* Lease mode extends the slot once less than half of reserve.ms is left:
         * look five times per reserve.ms so the ceiling is never reached. */
        n->report_ms = n->cfg->reserve_ms / 5;
    }
    uv_timer_init(loop, &n->cron);
    if (uv_timer_start(&n->cron, node_cron, (uint64_t)n->report_ms, (uint64_t)n->report_ms) != 0) {
        log_error("snowflake", "uv_timer_start(report timer) failed");
        return LEAF_ERR;
    }
    /* Neither handle keeps the control loop alive: it ends when the signal
     * handles close, and shutdown then closes these. */
    uv_unref((uv_handle_t *)&n->cron);
    uv_unref((uv_handle_t *)&n->async);
    return LEAF_OK;
}

/*
 * Static worker mode: the worker ID is the configured one; the local cache
 * still carries the time reservation, so a restart never goes back in time.
 */
static void node_static_lease(struct snowflake_service *n, const struct zk_cache_data *cache,
                              int have_cache, int64_t *zk_ms) {
    n->worker_id = n->cfg->worker_id;
    *zk_ms = -1;
    if (have_cache && cache->worker_id >= 0 && cache->worker_id != n->worker_id) {
        log_warn("snowflake",
                 "local cache %s was written for worker ID %" PRId64 ", now %" PRId64
                 "; keeping its stored time as the floor",
                 n->cache_path, cache->worker_id, n->worker_id);
    }
}

/* A worker ID (from ZooKeeper, the cache or the config) must fit the layout's worker field. */
static leaf_status_t node_check_worker_width(struct snowflake_service *n) {
    int64_t max = snowflake_layout_max(&n->gen.layout, SNOWFLAKE_WORKER);
    if (n->worker_id <= max) {
        return LEAF_OK;
    }
    char text[64];
    snowflake_layout_format(&n->gen.layout, text, sizeof(text));
    log_error("snowflake",
              "refusing to start: worker ID %" PRId64 " does not fit leafd.snowflake.layout %s "
              "(worker IDs 0..%" PRId64 ")",
              n->worker_id, text, max);
    return LEAF_ERANGE;
}

leaf_status_t snowflake_service_create(struct snowflake_service **out,
                                       const struct leaf_config *cfg,
                                       struct uv_loop_s *control_loop, struct zk_session *zk) {
    struct snowflake_service *n = calloc(1, sizeof(*n));
    if (n == NULL) {
        log_error("snowflake", "calloc(snowflake node) failed");
        return LEAF_ENOMEM;
    }
    n->cfg = cfg;
    n->loop = control_loop;
    n->reserve_now = node_reserve_now;
    n->async.data = n->cron.data = n->work.data = n;
    n->worker_id = -1;
    n->idwait_started_ms = -1;
    n->idwait_logged_ms = -1;
    atomic_init(&n->stats.worker_id, -1);
    pthread_mutex_init(&n->lock, NULL);
    uint64_t seed = (uint64_t)clock_wall_ms() ^ ((uint64_t)getpid() << 32);
    struct snowflake_layout layout;
    if (node_config_layout(cfg, &layout) != LEAF_OK) {
        snowflake_layout_default(&layout); /* unreachable: main checked the configuration */
    }
    snowflake_gen_init_layout(&n->gen, &layout, cfg->epoch, seed);
    snowflake_gen_set_max_lead(&n->gen, cfg->max_lead_ms);
    n->is_static = cfg->snowflake_enable && cfg->zk_address[0] == '\0';
    snowflake_service_lease_init(n);
    if (cfg->snowflake_enable && zk != NULL) {
        n->zk = zk;
        n->zsub = (struct zk_sub){"snowflake", node_on_zk, node_on_idle, n, NULL, 0};
        if (zk_session_subscribe(zk, &n->zsub) != LEAF_OK) {
            snowflake_service_free(n);
            return LEAF_ERR;
        }
    }
    *out = n;
    return LEAF_OK;
}

void snowflake_service_free(struct snowflake_service *n) {
    if (n == NULL) {
        return;
    }
    snowflake_service_lease_free(n);
    pthread_mutex_destroy(&n->lock);
    free(n);
}

/* The start-up floor in words: -1 means this worker ID has no recorded history. */
static void node_floor_text(int64_t floor_ms, char *out, size_t len) {
    char when[64];
    if (floor_ms < 0) {
        snprintf(out, len, "no earlier time recorded for this worker ID");
        return;
    }
    format_time(floor_ms, when, sizeof(when));
    snprintf(out, len, "IDs start above the recorded time %s", when);
}

/*
 * Creates path if missing (its parent exists). A connection lost on the way (a server that
 * stalled past the session's receive timeout) is waited out and the create retried, within the
 * start's wait for ZooKeeper: creating a persistent node twice is harmless (EEXIST).
 */
static leaf_status_t node_ensure(struct snowflake_service *n, const char *path) {
    int64_t until = clock_mono_ms() + (int64_t)6 * NODE_CONNECT_WAIT_MS;
    for (;;) {
        leaf_status_t st = zk_session_create(n->zk, path, "", 0, ZK_MODE_PERSISTENT, NULL, 0);
        if (st == LEAF_OK || st == LEAF_EEXIST) {
            return LEAF_OK;
        }
        int64_t left = until - clock_mono_ms();
        if (st != LEAF_EUNAVAIL || left <= 0) {
            log_error("snowflake",
                      "could not create %s in ZooKeeper (%s) at start: %s; check that ZooKeeper "
                      "answers at leaf.snowflake.zk.address and this cluster may write there",
                      path, n->cfg->zk_address, leaf_strstatus(st));
            return st;
        }
        zk_session_wait_connected(n->zk, (int)left);
    }
}

/*
 * Lease mode: ZooKeeper is required at start (a slot cannot be taken from
 * the local cache alone: someone else may hold it now); the cache only says
 * which slot to try first. The clock rule is the slot's floor.
 */
static leaf_status_t node_start_lease(struct snowflake_service *n,
                                      const struct zk_cache_data *cache) {
    const struct leaf_config *cfg = n->cfg;
    if (zk_session_wait_connected(n->zk, 6 * NODE_CONNECT_WAIT_MS) != LEAF_OK) {
        log_error("snowflake",
                  "lease mode needs ZooKeeper (%s) at start, and it is unreachable; a slot "
                  "cannot be taken from the local cache alone",
                  cfg->zk_address);
        return LEAF_EUNAVAIL;
    }
    atomic_store(&n->stats.zk_state, ZK_STATE_CONNECTED);
    if (node_ensure(n, "/snowflake") != LEAF_OK || node_ensure(n, n->layout.root) != LEAF_OK ||
        node_ensure(n, n->layout.lease) != LEAF_OK) {
        return LEAF_ERR;
    }
    leaf_status_t st = snowflake_service_lease_start(n, cache);
    if (st == LEAF_EAGAIN) {
        return node_start_loop(n); /* every slot held: serves once one frees */
    }
    if (st != LEAF_OK || node_start_loop(n) != LEAF_OK) {
        return LEAF_ERR;
    }
    atomic_store(&n->ready, 1);
    log_info("snowflake",
             "serving as %s in lease mode with worker ID %" PRId64 " (ZooKeeper %s); "
             "reservations %" PRId64 " ms ahead",
             n->layout.identity, n->worker_id, cfg->zk_address, cfg->reserve_ms);
    return LEAF_OK;
}

static leaf_status_t node_serve(struct snowflake_service *n);

/* The process cannot go on: issue nothing more, and let main() stop it (exit 1). */
static void node_fail(struct snowflake_service *n) {
    pthread_mutex_lock(&n->lock);
    snowflake_gen_set_ceiling(&n->gen, 0);
    pthread_mutex_unlock(&n->lock);
    atomic_store(&n->ready, 0);
    if (n->fail != NULL) {
        n->fail(n->fail_arg);
    }
}

/*
 * The identity is this node's after a wait: the previous holder wrote leaf_forever since this
 * node read it (its reports, and the time of its last ID at a graceful stop). Read it again, so
 * the first write is made at its current version and no ID is issued at or below that time
 * (docs/IDENTITY.md, "Taking a name over").
 */
static leaf_status_t node_after_wait(struct snowflake_service *n) {
    int64_t stored = -1, floor_ms = n->floor_ms;
    if (snowflake_service_identity_reread(n, &stored) != LEAF_OK) {
        return LEAF_ERR; /* logged */
    }
    if (stored > n->floor_ms) {
        if (node_check_clock(n, stored, -1, &floor_ms) != LEAF_OK) {
            return LEAF_ERR; /* logged */
        }
        floor_ms = floor_ms > n->floor_ms ? floor_ms : n->floor_ms;
        pthread_mutex_lock(&n->lock);
        snowflake_gen_set_floor(&n->gen, floor_ms);
        snowflake_gen_set_ceiling(&n->gen, floor_ms + 1); /* nothing until reserved */
        pthread_mutex_unlock(&n->lock);
        log_info("snowflake", "the previous holder of %s wrote %" PRId64 " to %s: serving above it",
                 n->layout.identity, stored, n->forever_path);
        n->floor_ms = floor_ms;
    }
    return LEAF_OK;
}

/* Control loop, while the identity is held by another session: look again. */
static void node_idwait_tick(uv_timer_t *t) {
    struct snowflake_service *n = t->data;
    char data[256];
    size_t len = snowflake_service_forever_json(n, n->floor_ms, data, sizeof(data));
    leaf_status_t st = snowflake_service_identity_lock(n, data, len);
    if (st == LEAF_EAGAIN || st == LEAF_EUNAVAIL) {
        return; /* still held, or ZooKeeper away for now: the deadline still counts */
    }
    uv_timer_stop(t);
    atomic_store(&n->stats.identity_wait, 0);
    if (st == LEAF_OK) {
        log_info("snowflake", "identity %s is this node's now (the holder's session ended)",
                 n->layout.identity);
        n->ephemeral_ok = 1;
        if (node_after_wait(n) == LEAF_OK && node_serve(n) == LEAF_OK) {
            return;
        }
    }
    node_fail(n); /* refused (logged): another live node has this identity */
}

static leaf_status_t node_wait_identity(struct snowflake_service *n) {
    atomic_store(&n->stats.identity_wait, 1);
    uv_timer_init(n->loop, &n->idwait);
    n->idwait.data = n;
    n->idwait_armed = 1;
    uv_timer_start(&n->idwait, node_idwait_tick, NODE_IDWAIT_MS, NODE_IDWAIT_MS);
    return LEAF_OK;
}

void snowflake_service_on_fail(struct snowflake_service *n, void (*fail)(void *arg), void *arg) {
    n->fail = fail;
    n->fail_arg = arg;
}

static leaf_status_t node_start_worker(struct snowflake_service *n, const struct zk_cache_data *c,
                                       int have_cache, int64_t zk_ms);

/* Control loop, while an older leafd's cache waits for ZooKeeper: try the start again. */
static void node_zkwait_tick(uv_timer_t *t) {
    struct snowflake_service *n = t->data;
    int64_t zk_ms;
    if (zk_session_state(n->zk) != ZK_STATE_CONNECTED) {
        return;
    }
    leaf_status_t st = node_lease(n, &n->zkwait_cache, 1, &zk_ms);
    if (st == LEAF_EAGAIN) {
        return; /* ZooKeeper went away again */
    }
    uv_timer_stop(t);
    atomic_store(&n->stats.zk_wait, 0);
    if (st == LEAF_OK) {
        atomic_store(&n->stats.zk_state, ZK_STATE_CONNECTED);
        log_info("snowflake", "ZooKeeper is reachable: worker ID %" PRId64 " of %s confirmed",
                 n->worker_id, n->layout.identity);
        if (node_start_worker(n, &n->zkwait_cache, 1, zk_ms) == LEAF_OK) {
            return;
        }
    }
    node_fail(n); /* refused (logged) */
}

static leaf_status_t node_wait_zk(struct snowflake_service *n, const struct zk_cache_data *cache) {
    n->zkwait_cache = *cache;
    atomic_store(&n->stats.zk_wait, 1);
    uv_timer_init(n->loop, &n->zkwait);
    n->zkwait.data = n;
    n->zkwait_armed = 1;
    uv_timer_start(&n->zkwait, node_zkwait_tick, NODE_IDWAIT_MS, NODE_IDWAIT_MS);
    return LEAF_OK;
}

leaf_status_t snowflake_service_start(struct snowflake_service *n) {
    const struct leaf_config *cfg = n->cfg;
    if (!cfg->snowflake_enable) {
        return LEAF_OK;
    }
    if (n->is_static) {
        log_warn("snowflake",
                 "static worker mode: worker ID %d is not coordinated; never run two nodes "
                 "with the same worker ID",
                 (int)cfg->worker_id);
    }
    struct zk_cache_data cache = {-1, -1};
    int64_t zk_ms;
    if (node_identity(n) != LEAF_OK) {
        return LEAF_ERR;
    }
    int have_cache = 0;
    leaf_status_t st = snowflake_service_identity_cache(n, &cache, &have_cache);
    if (st != LEAF_OK) {
        return st; /* logged naming the file */
    }
    if (n->is_static && n->cache_use == ZK_CACHE_FOREIGN) {
        /* Static mode: the worker ID is the identity; its history stays the floor. */
        zk_cache_load(n->cache_path, &cache);
        have_cache = 1;
    }
    uv_async_init(n->loop, &n->async, node_on_async);
    n->started = 1;
    if (n->zk != NULL) {
        zk_session_activate(&n->zsub);
    }
    n->use_zk = cfg->zk_address[0] != '\0';
    atomic_store(&n->stats.use_zk, n->use_zk);
    if (cfg->lease_mode) {
        return node_start_lease(n, have_cache ? &cache : NULL);
    }
    if (n->use_zk) {
        st = node_lease(n, &cache, have_cache, &zk_ms);
        if (st == LEAF_EAGAIN) {
            return node_wait_zk(n, &cache); /* serves once ZooKeeper confirms the cache */
        }
        if (st != LEAF_OK) {
            return LEAF_ERR;
        }
    } else {
        node_static_lease(n, &cache, have_cache, &zk_ms);
    }
    return node_start_worker(n, &cache, have_cache, zk_ms);
}

/* The worker ID is known (from ZooKeeper, the cache or the config): floor, identity, serve. */
static leaf_status_t node_start_worker(struct snowflake_service *n, const struct zk_cache_data *c,
                                       int have_cache, int64_t zk_ms) {
    int64_t floor_ms;
    leaf_status_t st;
    struct zk_cache_data cache = *c;
    if (node_check_worker_width(n) != LEAF_OK ||
        node_check_clock(n, zk_ms, have_cache ? cache.timestamp : -1, &floor_ms) != LEAF_OK) {
        return LEAF_ERR;
    }
    pthread_mutex_lock(&n->lock);
    snowflake_gen_set_worker(&n->gen, (int)n->worker_id);
    snowflake_gen_set_floor(&n->gen, floor_ms);
    snowflake_gen_set_ceiling(&n->gen, floor_ms + 1); /* nothing until reserved */
    pthread_mutex_unlock(&n->lock);
    atomic_store(&n->stats.worker_id, n->worker_id);
    atomic_store(&n->stats.registered, n->registered == 1);
    n->floor_ms = floor_ms;
    if (n->registered == 1) {
        char data[256];
        size_t len = snowflake_service_forever_json(n, floor_ms, data, sizeof(data));
        st = snowflake_service_identity_lock(n, data, len);
        if (st == LEAF_EAGAIN) {
            return node_wait_identity(n); /* serves once the identity is this node's */
        }
        if (st != LEAF_OK) {
            return LEAF_ERR; /* logged */
        }
        n->ephemeral_ok = 1;
    }
    return node_serve(n);
}

/* The identity is this node's (or ZooKeeper is away): persist, report, serve. */
static leaf_status_t node_serve(struct snowflake_service *n) {
    const struct leaf_config *cfg = n->cfg;
    int64_t floor_ms = n->floor_ms;
    if (node_first_reservation(n) != LEAF_OK || node_start_loop(n) != LEAF_OK) {
        return LEAF_ERR;
    }
    atomic_store(&n->ready, 1);
    char floor_text[128];
    node_floor_text(floor_ms, floor_text, sizeof(floor_text));
    char text[64];
    snowflake_layout_format(&n->gen.layout, text, sizeof(text));
    double years = snowflake_layout_years_left(&n->gen.layout, cfg->epoch, clock_wall_ms());
    log_info("snowflake",
             "layout %s, %" PRId64 " ms per tick, %.1f years left from epoch %" PRId64
             ", batches of at most %d IDs",
             text, n->gen.layout.unit_ms, years, cfg->epoch, snowflake_gen_max_batch(&n->gen));
    if (years < SNOWFLAKE_HORIZON_YEARS) {
        /* docs/id-shapes.md, "The horizon": taken, but it runs out soon. */
        log_warn("snowflake",
                 "leafd.snowflake.layout %s runs out %.1f years from now (epoch %" PRId64
                 "): plan a wider time field, a coarser unit or a later epoch (a new cluster)",
                 text, years, cfg->epoch);
    }
    log_info("snowflake",
             "serving as %s with worker ID %" PRId64 " (%s%s); %s; reservations %" PRId64
             " ms ahead",
             n->layout.identity, n->worker_id, n->use_zk ? "ZooKeeper " : "static, not coordinated",
             n->use_zk ? cfg->zk_address : "", floor_text, cfg->reserve_ms);
    return LEAF_OK;
}

/* The time to persist at a graceful stop: above every ID issued, never lower. */
static int64_t node_stop_issuing(struct snowflake_service *n) {
    int64_t now = clock_wall_ms();
    pthread_mutex_lock(&n->lock);
    n->stopping = 1;
    snowflake_gen_set_ceiling(&n->gen, 0); /* issue nothing more */
    int64_t last = n->gen.last_ms > n->gen.floor_ms ? n->gen.last_ms : n->gen.floor_ms;
    pthread_mutex_unlock(&n->lock);
    return last > now ? last : now;
}

static void node_closed(uv_handle_t *h) {
}

void snowflake_service_stop(struct snowflake_service *n) {
    if (!n->started) {
        return;
    }
    if (!atomic_load(&n->ready)) {
        /* A start that failed issued nothing and must persist nothing (its
         * clock may be the reason it failed). The handles on the control
         * loop and the session are closed by their owner. */
        n->stopping = 1;
        n->started = 0;
        if (n->idwait_armed) {
            uv_timer_stop(&n->idwait); /* closed with the control loop's handles */
        }
        if (n->zkwait_armed) {
            uv_timer_stop(&n->zkwait);
        }
        return;
    }
    int64_t final = node_stop_issuing(n);
    lockstat_log("snowflake", "generator lock", &n->lock_stat);
    char data[256];
    size_t len = snowflake_service_forever_json(n, final, data, sizeof(data));
    /* Said in the log only when it was sent: a node that never reached ZooKeeper (or static
     * mode) persists to its local cache alone. */
    int to_zk = n->registered == 1 && zk_session_state(n->zk) == ZK_STATE_CONNECTED &&
                zk_session_set(n->zk, n->forever_path, data, len) == LEAF_OK;
    if (n->cfg->lease_mode) {
        snowflake_service_lease_stop(n, final);
    }
    /* The ephemeral node goes with the session, which main() closes next. */
    uv_close((uv_handle_t *)&n->async, node_closed);
    if (n->idwait_armed) {
        uv_close((uv_handle_t *)&n->idwait, node_closed);
    }
    if (n->zkwait_armed) {
        uv_close((uv_handle_t *)&n->zkwait, node_closed);
    }
    snowflake_service_lease_close(n);
    if (n->report_ms > 0) {
        uv_close((uv_handle_t *)&n->cron, node_closed);
    }
    /* Let an in-flight cache write finish before the final one. */
    uv_run(n->loop, UV_RUN_DEFAULT);
    struct zk_cache_data c = {n->worker_id, final};
    char err[320];
    if (n->worker_id < 0) {
        /* nothing issued, nothing to persist */
    } else if (zk_cache_store_owned(n->cache_path, &c, &n->owner, err, sizeof(err)) == LEAF_OK) {
        log_info("snowflake", "persisted the last issued time %" PRId64 " to %s%s", final,
                 n->cache_path, to_zk ? " and ZooKeeper" : "");
    } else {
        log_error("snowflake", "cannot persist the last issued time (%s)", err);
    }
    n->started = 0;
}

leaf_status_t snowflake_service_next(struct snowflake_service *n, int64_t *ids, int count,
                                     int64_t *wait_ms) {
    /* More IDs of the tick the clock is in: one compare-and-swap, no lock
     * (snowflake_gen_fast). Everything else (a new tick, a step back, the
     * lead, the ceiling) takes the lock. */
    *wait_ms = 0;
    if (n->named && clock_mono_ms() >= atomic_load(&n->fence_mono_ms)) {
        return LEAF_EUNAVAIL; /* ZooKeeper may have let the identity go (snowflake_service_state.h)
                               */
    }
#ifndef LEAF_SNOWFLAKE_LOCKED_ONLY /* a measurement build: every ID under the lock, as before */
    if (snowflake_gen_fast(&n->gen, clock_wall_ms(), ids, count)) {
        return LEAF_OK;
    }
#endif
    /* The clock is read again under the lock, so loops never see each
     * other's readings out of order (that would look like a step back). */
    lockstat_lock(&n->lock, &n->lock_stat);
    int64_t now = clock_wall_ms();
    leaf_status_t rc = snowflake_gen_next(&n->gen, now, ids, count, wait_ms);
    if (rc == LEAF_ECLOCK && n->cfg->lease_mode) {
        /* beyond the lead bound: the whole step decides on a switch */
        snowflake_service_lease_want_switch(n, *wait_ms + n->gen.max_lead_ms);
    }
    /* The reservation is renewed on a timer of the monotonic clock, so a step of the
     * wall clock ahead uses up its margin unseen: with a quarter of reserve.ms left
     * (the timer keeps more in every mode), ask the control thread for one at once
     * rather than answer 503 until the timer comes (docs/reference/guarantees.md,
     * "The bounded lead"). Once per answer, not per ID. */
    int64_t ceiling = n->gen.ceiling_ms;
    pthread_mutex_unlock(&n->lock);
    if (ceiling > 0 && ceiling - now < n->cfg->reserve_ms / 4 && atomic_load(&n->ready) &&
        !atomic_exchange(&n->reserve_low, 1)) {
        uv_async_send(&n->async);
    }
    return rc;
}

const struct snowflake_layout *snowflake_service_layout(const struct snowflake_service *n) {
    return &n->gen.layout; /* written at create, read-only afterwards */
}
