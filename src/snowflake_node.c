#include "snowflake_node.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#include "leafd.h"
#include "log.h"
#include "zk_cache.h"
#include "zk_clock.h"
#include "zk_register.h"
#include "zk_session.h"

/* How long start-up waits for a first ZooKeeper connection before it falls
 * back to the local cache (and keeps trying in the background). */
#define NODE_CONNECT_WAIT_MS 5000
#define NODE_REPORT_MS 3000

/* Tags of the asynchronous ZooKeeper calls. */
enum { OP_SET_FOREVER = 1, OP_SET_EPHEMERAL, OP_CREATE_EPHEMERAL, OP_MINE_EPHEMERAL, OP_FIND };

/* The node: owned by the control thread (main) from start to shutdown. */
struct node {
    int started;
    int stopping;
    int use_zk; /* 0 in static worker mode: the reservation lives in the local cache only */
    struct zk_layout layout;
    struct zk_session zk;
    struct zk_node_data self; /* ip and port of the identity */
    char cache_path[1024];
    int64_t worker_id;
    char forever_path[ZK_PATH_MAX];
    int registered; /* 1: forever node known; 0: look it up; -1: gave up (logged) */
    int ephemeral_ok;
    int busy[OP_FIND + 1]; /* an async call of that tag is in flight */
    int64_t reserved_ms;   /* highest reservation on disk = the generator's ceiling */
    int64_t report_ms;

    uv_async_t async; /* woken by ZooKeeper threads (zk_session notify) */
    uv_timer_t cron;
    uv_work_t work; /* the cache-file write on the threadpool */
    int work_busy;
    int64_t work_value;
    leaf_status_t work_rc;
};

static struct node node;

/* Read by any thread (/ready, /metrics). */
static struct {
    atomic_int zk_state;
    atomic_int registered;
    atomic_int ephemeral;
    atomic_llong connects;
    atomic_llong expirations;
    atomic_llong last_zk_report_ms;
    atomic_llong last_local_report_ms;
    atomic_llong reserved_ms;
    atomic_llong worker_id;
    atomic_int use_zk;
} stats = {.worker_id = -1};

static void node_notify(void *arg) {
    uv_async_send(arg); /* thread-safe; coalesces */
}

/* The first non-loopback IPv4 address, as Leaf picks it. */
static leaf_status_t first_ipv4(char *ip, size_t cap) {
    struct ifaddrs *ifs, *i;
    if (getifaddrs(&ifs) != 0) {
        log_error("snowflake", "getifaddrs() failed; set leafd.snowflake.advertise.ip");
        return LEAF_ERR;
    }
    leaf_status_t st = LEAF_ENOTFOUND;
    for (i = ifs; i != NULL && st != LEAF_OK; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) {
            continue;
        }
        struct in_addr a = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr;
        if ((ntohl(a.s_addr) >> 24) != 127 && inet_ntop(AF_INET, &a, ip, (socklen_t)cap)) {
            st = LEAF_OK;
        }
    }
    freeifaddrs(ifs);
    if (st != LEAF_OK) {
        log_error("snowflake", "no non-loopback IPv4 address found; set "
                  "leafd.snowflake.advertise.ip");
    }
    return st;
}

static leaf_status_t node_identity(void) {
    const struct leaf_config *cfg = &leafd.cfg;
    if (cfg->advertise_ip[0]) {
        snprintf(node.self.ip, sizeof(node.self.ip), "%s", cfg->advertise_ip);
    } else if (first_ipv4(node.self.ip, sizeof(node.self.ip)) != LEAF_OK) {
        return LEAF_ERR;
    }
    node.self.port = cfg->identity_port;
    if (zk_layout_init(&node.layout, cfg->name, node.self.ip, node.self.port) != LEAF_OK ||
        zk_cache_path(node.cache_path, sizeof(node.cache_path), cfg->data_dir, cfg->name,
                      node.self.port) != LEAF_OK) {
        log_error("snowflake", "leaf.name or leafd.data.dir is too long for a path");
        return LEAF_EINVAL;
    }
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
static leaf_status_t node_check_clock(int64_t zk_ms, int64_t cache_ms, int64_t *floor_ms) {
    for (;;) {
        int64_t now = leafd_wall_ms();
        struct zk_clock_decision d =
            zk_clock_startup(now, zk_ms, cache_ms, leafd.cfg.startup_max_wait_ms);
        *floor_ms = d.floor_ms;
        char tnow[64], tzk[64], tcache[64];
        format_time(now, tnow, sizeof(tnow));
        format_time(zk_ms, tzk, sizeof(tzk));
        format_time(cache_ms, tcache, sizeof(tcache));
        if (d.verdict == ZK_CLOCK_OK) {
            return LEAF_OK;
        }
        if (d.verdict == ZK_CLOCK_REFUSE) {
            log_error("snowflake", "refusing to start: the clock %s is %" PRId64 " ms behind the "
                      "stored time (ZooKeeper %s, local cache %s), more than "
                      "leafd.snowflake.startup.max.wait.ms = %" PRId64 "; IDs from the past "
                      "could repeat", tnow, d.wait_ms, tzk, tcache,
                      leafd.cfg.startup_max_wait_ms);
            return LEAF_ECLOCK;
        }
        log_warn("snowflake", "the clock %s is %" PRId64 " ms behind the stored time (ZooKeeper "
                 "%s, local cache %s); waiting before serving", tnow, d.wait_ms, tzk, tcache);
        struct timespec ts = {(time_t)(d.wait_ms / 1000), (long)(d.wait_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
    }
}

/* The worker ID and stored time from ZooKeeper, or from the cache when it is unreachable. */
static leaf_status_t node_lease(const struct zk_cache_data *cache, int have_cache,
                                int64_t *zk_ms) {
    struct zk_registration reg;
    leaf_status_t st = LEAF_EUNAVAIL;
    *zk_ms = -1;
    if (zk_session_wait_connected(&node.zk, NODE_CONNECT_WAIT_MS) == LEAF_OK) {
        st = zk_register(&node.zk, &node.layout, &node.self, leafd.cfg.peer_max_offset_ms,
                         leafd_wall_ms, &reg);
    }
    if (st == LEAF_OK) {
        node.worker_id = reg.worker_id;
        node.registered = 1;
        *zk_ms = reg.zk_timestamp;
        snprintf(node.forever_path, sizeof(node.forever_path), "%s", reg.forever_path);
        if (have_cache && cache->worker_id >= 0 && cache->worker_id != reg.worker_id) {
            log_warn("snowflake", "local cache %s says worker ID %" PRId64 ", ZooKeeper says %"
                     PRId64 "; using ZooKeeper's", node.cache_path, cache->worker_id,
                     reg.worker_id);
        }
        return LEAF_OK;
    }
    if (st != LEAF_EUNAVAIL) {
        return st; /* a refusal (clock, worker ID range): never overridden by the cache */
    }
    if (!have_cache || cache->worker_id < 0 || cache->timestamp < 0) {
        log_error("snowflake", "ZooKeeper (%s) is unreachable and the local cache %s %s; cannot "
                  "start without a worker ID and a stored timestamp", leafd.cfg.zk_address,
                  node.cache_path, have_cache ? "lacks workerID or timestamp" : "does not exist");
        return LEAF_EUNAVAIL;
    }
    node.worker_id = cache->worker_id;
    node.registered = 0; /* looked up when ZooKeeper answers */
    log_warn("snowflake", "ZooKeeper (%s) is unreachable: starting from the local cache %s with "
             "worker ID %" PRId64 "; retrying ZooKeeper in the background",
             leafd.cfg.zk_address, node.cache_path, node.worker_id);
    return LEAF_OK;
}

static size_t node_json(int64_t timestamp, char *buf, size_t cap) {
    struct zk_node_data d = node.self;
    d.timestamp = timestamp;
    return zk_record_format_node(&d, buf, cap);
}

/* Raises the generator's ceiling to a reservation now on disk. */
static void node_raise_ceiling(int64_t reserved) {
    node.reserved_ms = reserved;
    atomic_store(&stats.reserved_ms, reserved);
    atomic_store(&stats.last_local_report_ms, leafd_wall_ms());
    pthread_mutex_lock(&leafd.gen_lock);
    if (!node.stopping) {
        snowflake_gen_set_ceiling(&leafd.gen, reserved);
    }
    pthread_mutex_unlock(&leafd.gen_lock);
}

/* Threadpool: the atomic cache-file write (fsync may take a while). */
static void node_write_work(uv_work_t *w) {
    struct zk_cache_data c = {node.worker_id, node.work_value};
    node.work_rc = zk_cache_store(node.cache_path, &c);
}

/* Control thread: the write is on disk (or failed, logged by zk_cache_store). */
static void node_write_done(uv_work_t *w, int status) {
    node.work_busy = 0;
    if (status == 0 && node.work_rc == LEAF_OK) {
        node_raise_ceiling(node.work_value);
    }
}

static void node_zk_call(int op, leaf_status_t st) {
    node.busy[op] = st == LEAF_OK;
}

/* Sends what ZooKeeper should hold now; each kind of call at most once in flight. */
static void node_zk_report(int64_t reserved) {
    if (!node.use_zk) {
        return;
    }
    char data[256];
    size_t len = node_json(reserved, data, sizeof(data));
    if (zk_session_state(&node.zk) != ZK_STATE_CONNECTED || len == 0) {
        return;
    }
    if (node.registered == 0 && !node.busy[OP_FIND]) {
        node_zk_call(OP_FIND, zk_session_achildren(&node.zk, OP_FIND, node.layout.forever));
    }
    if (node.registered == 1 && !node.busy[OP_SET_FOREVER]) {
        node_zk_call(OP_SET_FOREVER,
                     zk_session_aset(&node.zk, OP_SET_FOREVER, node.forever_path, data, len));
    }
    if (node.registered != 1) {
        return; /* the ephemeral node advertises a registered worker only */
    }
    if (node.ephemeral_ok && !node.busy[OP_SET_EPHEMERAL]) {
        node_zk_call(OP_SET_EPHEMERAL, zk_session_aset(&node.zk, OP_SET_EPHEMERAL,
                                                       node.layout.ephemeral, data, len));
    } else if (!node.ephemeral_ok && !node.busy[OP_CREATE_EPHEMERAL] &&
               !node.busy[OP_MINE_EPHEMERAL]) {
        node_zk_call(OP_CREATE_EPHEMERAL,
                     zk_session_acreate(&node.zk, OP_CREATE_EPHEMERAL, node.layout.ephemeral,
                                        data, len, ZK_MODE_EPHEMERAL));
    }
}

static void node_cron(uv_timer_t *t) {
    int64_t reserved = leafd_wall_ms() + leafd.cfg.reserve_ms;
    if (reserved < node.reserved_ms) {
        reserved = node.reserved_ms; /* clock stepped back: keep what is reserved */
    }
    if (!node.work_busy) {
        node.work_busy = 1;
        node.work_value = reserved;
        if (uv_queue_work(t->loop, &node.work, node_write_work, node_write_done) != 0) {
            log_error("snowflake", "uv_queue_work(cache write %s) failed", node.cache_path);
            node.work_busy = 0;
        }
    }
    node_zk_report(reserved);
}

/*
 * ZooKeeper no longer records this node's worker ID (its data was lost or the
 * node deleted). Another node may be handed the same ID, so this one stops
 * issuing snowflake IDs (/ready turns 503) until an operator restarts it; a
 * restart registers afresh, still above the stored time.
 */
static void node_drop_worker(const char *why) {
    pthread_mutex_lock(&leafd.gen_lock);
    snowflake_gen_set_worker(&leafd.gen, -1);
    pthread_mutex_unlock(&leafd.gen_lock);
    log_error("snowflake", "%s: stopped issuing snowflake IDs with worker ID %" PRId64
              " (another node may be given it); restart this node to register again", why,
              node.worker_id);
}

/* The lookup of the forever node after a start from the cache. */
static void node_found(char **names, int n) {
    int i = zk_layout_find_own((const char *const *)names, n, node.layout.identity);
    int64_t id = -1;
    if (i >= 0) {
        zk_layout_worker_id(names[i], &id);
    }
    if (i < 0 || id != node.worker_id) {
        log_error("snowflake", "ZooKeeper has %s for %s under %s, but this node runs as worker ID "
                  "%" PRId64 " from its local cache; not re-registering (was ZooKeeper's data "
                  "lost?)", i < 0 ? "no node" : names[i], node.layout.identity,
                  node.layout.forever, node.worker_id);
        node.registered = -1;
        node_drop_worker("worker ID not confirmed by ZooKeeper");
        return;
    }
    int w = snprintf(node.forever_path, sizeof(node.forever_path), "%s/%s",
                     node.layout.forever, names[i]);
    if (w < 0 || (size_t)w >= sizeof(node.forever_path)) {
        node.registered = -1;
        return;
    }
    node.registered = 1;
    atomic_store(&stats.registered, 1);
    log_info("snowflake", "ZooKeeper is back: %s confirms worker ID %" PRId64, node.forever_path,
             node.worker_id);
    node_zk_report(node.reserved_ms);
}

static void node_ephemeral_done(int op, leaf_status_t rc, int mine) {
    if (op == OP_SET_EPHEMERAL && rc == LEAF_ENOTFOUND) {
        log_warn("snowflake", "%s vanished; re-creating it", node.layout.ephemeral);
        node.ephemeral_ok = 0;
    } else if (op == OP_CREATE_EPHEMERAL && rc == LEAF_OK) {
        log_info("snowflake", "created ephemeral node %s", node.layout.ephemeral);
        node.ephemeral_ok = 1;
    } else if (op == OP_CREATE_EPHEMERAL && rc == LEAF_EEXIST) {
        /* Ours from before a lost reply, or a previous session's that
         * vanishes when that session expires: ask whose it is. */
        node_zk_call(OP_MINE_EPHEMERAL,
                     zk_session_amine(&node.zk, OP_MINE_EPHEMERAL, node.layout.ephemeral));
    } else if (op == OP_MINE_EPHEMERAL && rc == LEAF_OK) {
        node.ephemeral_ok = mine;
        if (!mine) {
            log_info("snowflake", "%s still belongs to a previous session; re-creating it once "
                     "that session expires", node.layout.ephemeral);
        }
    }
    atomic_store(&stats.ephemeral, node.ephemeral_ok);
}

static void node_done(const struct zk_event *ev) {
    node.busy[ev->op] = 0;
    if (ev->gen != node.zk.gen) {
        return; /* from a handle already replaced */
    }
    if (ev->op == OP_SET_FOREVER && ev->rc == LEAF_OK) {
        atomic_store(&stats.last_zk_report_ms, leafd_wall_ms());
    } else if (ev->op == OP_SET_FOREVER && ev->rc == LEAF_ENOTFOUND) {
        log_error("snowflake", "%s was deleted while this node holds worker ID %" PRId64,
                  node.forever_path, node.worker_id);
        node_drop_worker("worker node deleted from ZooKeeper");
    } else if (ev->op == OP_FIND && ev->rc == LEAF_OK) {
        node_found(ev->names, ev->nnames);
    } else if (ev->op == OP_FIND && ev->rc == LEAF_ENOTFOUND) {
        node_found(NULL, 0);
    } else {
        node_ephemeral_done(ev->op, ev->rc, ev->mine);
    }
}

static void node_state(const struct zk_event *ev) {
    if (ev->gen != node.zk.gen) {
        return;
    }
    atomic_store(&stats.zk_state, ev->state);
    if (ev->state == ZK_STATE_CONNECTED) {
        atomic_fetch_add(&stats.connects, 1);
        node_zk_report(node.reserved_ms);
    } else if (ev->state == ZK_STATE_EXPIRED) {
        /* The handle is dead: replace it; the ephemeral node must be re-created. */
        atomic_fetch_add(&stats.expirations, 1);
        node.ephemeral_ok = 0;
        atomic_store(&stats.ephemeral, 0);
        if (zk_session_reopen(&node.zk) == LEAF_OK) {
            atomic_store(&stats.zk_state, ZK_STATE_CONNECTING);
            log_info("snowflake", "opened a new ZooKeeper session after expiry");
        }
    }
}

/* Control thread: drain what the ZooKeeper threads queued. */
static void node_on_async(uv_async_t *a) {
    struct zk_event *list = zk_session_take(&node.zk);
    for (struct zk_event *ev = list; ev != NULL; ev = ev->next) {
        if (ev->kind == ZK_EVENT_STATE) {
            node_state(ev);
        } else if (ev->op > 0 && ev->op <= OP_FIND) {
            node_done(ev);
        }
    }
    zk_event_free(list);
}

/* The first reservation, written synchronously before serving. */
static leaf_status_t node_first_reservation(void) {
    int64_t reserved = leafd_wall_ms() + leafd.cfg.reserve_ms;
    struct zk_cache_data c = {node.worker_id, reserved};
    if (zk_cache_store(node.cache_path, &c) != LEAF_OK) {
        log_error("snowflake", "cannot persist the reservation to %s; refusing to serve",
                  node.cache_path);
        return LEAF_ERR;
    }
    node_raise_ceiling(reserved);
    char data[256];
    size_t len = node_json(reserved, data, sizeof(data));
    if (node.registered == 1 &&
        zk_session_set(&node.zk, node.forever_path, data, len) == LEAF_OK) {
        atomic_store(&stats.last_zk_report_ms, leafd_wall_ms());
    }
    if (node.registered == 1) {
        leaf_status_t st = zk_session_create(&node.zk, node.layout.ephemeral, data, len,
                                             ZK_MODE_EPHEMERAL, NULL, 0);
        node.ephemeral_ok = st == LEAF_OK;
        if (st == LEAF_EEXIST) {
            log_info("snowflake", "%s still belongs to a previous session; re-creating it once "
                     "that session expires", node.layout.ephemeral);
        }
    }
    atomic_store(&stats.ephemeral, node.ephemeral_ok);
    return LEAF_OK;
}

static leaf_status_t node_start_loop(void) {
    uv_loop_t *loop = leafd_control_loop();
    node.report_ms = leafd.cfg.reserve_ms / 2 < NODE_REPORT_MS ? leafd.cfg.reserve_ms / 2
                                                               : NODE_REPORT_MS;
    uv_timer_init(loop, &node.cron);
    if (uv_timer_start(&node.cron, node_cron, (uint64_t)node.report_ms,
                       (uint64_t)node.report_ms) != 0) {
        log_error("snowflake", "uv_timer_start(report timer) failed");
        return LEAF_ERR;
    }
    /* Neither handle keeps the control loop alive: it ends when the signal
     * handles close, and shutdown then closes these. */
    uv_unref((uv_handle_t *)&node.cron);
    uv_unref((uv_handle_t *)&node.async);
    return LEAF_OK;
}

/*
 * Static worker mode: the worker ID is the configured one; the local cache
 * still carries the time reservation, so a restart never goes back in time.
 */
static void node_static_lease(const struct zk_cache_data *cache, int have_cache, int64_t *zk_ms) {
    node.worker_id = leafd.cfg.worker_id;
    *zk_ms = -1;
    if (have_cache && cache->worker_id >= 0 && cache->worker_id != node.worker_id) {
        log_warn("snowflake", "local cache %s was written for worker ID %" PRId64 ", now %" PRId64
                 "; keeping its stored time as the floor", node.cache_path, cache->worker_id,
                 node.worker_id);
    }
}

leaf_status_t snowflake_node_start(void) {
    const struct leaf_config *cfg = &leafd.cfg;
    struct zk_cache_data cache = {-1, -1};
    int64_t zk_ms, floor_ms;
    if (node_identity() != LEAF_OK) {
        return LEAF_ERR;
    }
    leaf_status_t st = zk_cache_load(node.cache_path, &cache);
    if (st != LEAF_OK && st != LEAF_ENOTFOUND) {
        return st; /* logged naming the file */
    }
    int have_cache = st == LEAF_OK;
    uv_async_init(leafd_control_loop(), &node.async, node_on_async);
    node.started = 1;
    node.use_zk = cfg->zk_address[0] != '\0';
    atomic_store(&stats.use_zk, node.use_zk);
    if (node.use_zk) {
        if (zk_session_open(&node.zk, cfg->zk_address, (int)cfg->zk_session_timeout_ms,
                            node_notify, &node.async) != LEAF_OK ||
            node_lease(&cache, have_cache, &zk_ms) != LEAF_OK) {
            return LEAF_ERR;
        }
    } else {
        node_static_lease(&cache, have_cache, &zk_ms);
    }
    if (node_check_clock(zk_ms, have_cache ? cache.timestamp : -1, &floor_ms) != LEAF_OK) {
        return LEAF_ERR;
    }
    pthread_mutex_lock(&leafd.gen_lock);
    snowflake_gen_set_worker(&leafd.gen, (int)node.worker_id);
    snowflake_gen_set_floor(&leafd.gen, floor_ms);
    snowflake_gen_set_ceiling(&leafd.gen, floor_ms + 1); /* nothing until reserved */
    pthread_mutex_unlock(&leafd.gen_lock);
    atomic_store(&stats.worker_id, node.worker_id);
    atomic_store(&stats.registered, node.registered == 1);
    if (node_first_reservation() != LEAF_OK || node_start_loop() != LEAF_OK) {
        return LEAF_ERR;
    }
    atomic_store(&leafd.snowflake_ready, 1);
    log_info("snowflake", "serving as %s with worker ID %" PRId64 " (%s%s); no ID at or "
             "below %" PRId64 " ms, reservations %" PRId64 " ms ahead", node.layout.identity,
             node.worker_id, node.use_zk ? "ZooKeeper " : "static, not coordinated",
             node.use_zk ? cfg->zk_address : "", floor_ms, cfg->reserve_ms);
    return LEAF_OK;
}

/* The time to persist at a graceful stop: above every ID issued, never lower. */
static int64_t node_stop_issuing(void) {
    int64_t now = leafd_wall_ms();
    pthread_mutex_lock(&leafd.gen_lock);
    node.stopping = 1;
    snowflake_gen_set_ceiling(&leafd.gen, 0); /* issue nothing more */
    int64_t last = leafd.gen.last_ms > leafd.gen.floor_ms ? leafd.gen.last_ms : leafd.gen.floor_ms;
    pthread_mutex_unlock(&leafd.gen_lock);
    return last > now ? last : now;
}

static void node_closed(uv_handle_t *h) {
}

void snowflake_node_shutdown(void) {
    if (!node.started) {
        return;
    }
    int64_t final = node_stop_issuing();
    char data[256];
    size_t len = node_json(final, data, sizeof(data));
    if (node.registered == 1 && zk_session_state(&node.zk) == ZK_STATE_CONNECTED) {
        zk_session_set(&node.zk, node.forever_path, data, len);
    }
    /* Closing the session removes the ephemeral node at once. */
    if (node.use_zk) {
        zk_session_close(&node.zk);
    }
    uv_close((uv_handle_t *)&node.async, node_closed);
    if (node.report_ms > 0) {
        uv_close((uv_handle_t *)&node.cron, node_closed);
    }
    /* Let an in-flight cache write finish before the final one. */
    uv_run(leafd_control_loop(), UV_RUN_DEFAULT);
    struct zk_cache_data c = {node.worker_id, final};
    if (node.worker_id >= 0 && zk_cache_store(node.cache_path, &c) == LEAF_OK) {
        log_info("snowflake", "persisted the last issued time %" PRId64 " to %s and ZooKeeper",
                 final, node.cache_path);
    }
    node.started = 0;
}

/* Age in ms of a wall-clock stamp, -1 when it never happened. */
static int64_t age_ms(int64_t stamp, int64_t now) {
    return stamp > 0 ? now - stamp : -1;
}

size_t snowflake_node_ready_json(char *buf, size_t cap) {
    if (atomic_load(&stats.worker_id) < 0 || !atomic_load(&stats.use_zk)) {
        return 0; /* not started, or static worker mode: no ZooKeeper */
    }
    int64_t now = leafd_wall_ms();
    long long connects = atomic_load(&stats.connects);
    int n = snprintf(buf, cap,
                     ",\"zookeeper\":{\"session\":\"%s\",\"reconnects\":%lld,"
                     "\"expirations\":%lld,\"registered\":%s,\"ephemeral\":%s,"
                     "\"last_report_age_ms\":%" PRId64 ",\"local_report_age_ms\":%" PRId64
                     ",\"reserved_ahead_ms\":%" PRId64 "}",
                     zk_state_name(atomic_load(&stats.zk_state)),
                     connects > 1 ? connects - 1 : 0, (long long)atomic_load(&stats.expirations),
                     atomic_load(&stats.registered) ? "true" : "false",
                     atomic_load(&stats.ephemeral) ? "true" : "false",
                     age_ms(atomic_load(&stats.last_zk_report_ms), now),
                     age_ms(atomic_load(&stats.last_local_report_ms), now),
                     (int64_t)atomic_load(&stats.reserved_ms) - now);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* X(name, type, help, value expression) over a snapshot `m`. */
/* X(name, type, help, value, zk_only): zk_only rows are left out in static worker mode. */
#define NODE_METRICS(X)                                                                          \
    X("leafd_zk_session_connected", "gauge", "1 while the ZooKeeper session is connected.",     \
      (double)(m.state == ZK_STATE_CONNECTED), 1)                                              \
    X("leafd_zk_session_reconnects_total", "counter",                                           \
      "ZooKeeper (re)connections after the first.", (double)(m.connects > 1 ? m.connects - 1 : 0), 1) \
    X("leafd_zk_session_expirations_total", "counter", "ZooKeeper sessions that expired.",      \
      (double)m.expirations, 1)                                                                 \
    X("leafd_zk_ephemeral_registered", "gauge", "1 while leaf_temporary/{ip}:{port} exists.",   \
      (double)m.ephemeral, 1)                                                                   \
    X("leafd_zk_last_report_age_seconds", "gauge",                                              \
      "Seconds since the timestamp was last written to ZooKeeper (-1 = never).",                \
      m.zk_age < 0 ? -1.0 : m.zk_age / 1000.0, 1)                                               \
    X("leafd_snowflake_local_report_age_seconds", "gauge",                                      \
      "Seconds since the reservation was last written to the local cache (-1 = never).",        \
      m.local_age < 0 ? -1.0 : m.local_age / 1000.0, 0)                                         \
    X("leafd_snowflake_reserved_ahead_seconds", "gauge",                                        \
      "How far the persisted reservation is ahead of the clock.", m.ahead / 1000.0, 0)

size_t snowflake_node_metrics(char *buf, size_t cap) {
    if (atomic_load(&stats.worker_id) < 0 || cap == 0) {
        return 0; /* not started */
    }
    int use_zk = atomic_load(&stats.use_zk);
    int64_t now = leafd_wall_ms();
    struct {
        int state, ephemeral;
        long long connects, expirations;
        int64_t zk_age, local_age, ahead;
    } m = {atomic_load(&stats.zk_state), atomic_load(&stats.ephemeral),
           atomic_load(&stats.connects), atomic_load(&stats.expirations),
           age_ms(atomic_load(&stats.last_zk_report_ms), now),
           age_ms(atomic_load(&stats.last_local_report_ms), now),
           (int64_t)atomic_load(&stats.reserved_ms) - now};
    size_t pos = 0;
#define NODE_METRIC_ROW(name, type, help, value, zk_only)                                     \
    if (pos < cap && (use_zk || !(zk_only))) {                                                \
        int w = snprintf(buf + pos, cap - pos, "# HELP %s %s\n# TYPE %s %s\n%s %.3f\n", name,   \
                         help, name, type, name, (double)(value));                             \
        pos += w > 0 ? (size_t)w : 0;                                                          \
    }
    NODE_METRICS(NODE_METRIC_ROW)
#undef NODE_METRIC_ROW
    return pos < cap ? pos : cap - 1;
}
