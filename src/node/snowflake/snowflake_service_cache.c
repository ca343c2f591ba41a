/*
 * The snowflake node's local worker-ID cache, {leafd.data.dir}/.../workerID.properties
 * (the node layer over zk/zk_cache.c, which formats and writes the file): the
 * periodic write of the time reservation on the threadpool, its failures
 * logged at a limited rate, and the generator's ceiling raised to a
 * reservation once it is on disk. Called by snowflake_service.c (static and
 * forever modes) and snowflake_service_claim.c (lease mode); calls neither.
 * Control thread, unless a function says otherwise.
 * Layer: the node (src/node/snowflake), the floor of the snowflake room.
 */
#include <inttypes.h>
#include <stdatomic.h>
#include <uv.h>

#include "clock.h"
#include "log.h"
#include "snowflake_service_state.h"
#include "zk_cache.h"

/* Raises the generator's ceiling to a reservation now on disk. */
void snowflake_service_cache_stored(struct snowflake_service *n, int64_t reserved) {
    if ((n->named || n->forever_fenced || atomic_load(&n->stats.zk_refused)) &&
        reserved > n->forever_acked_ms) {
        /* until the identity is confirmed again; a named identity: never above what
         * ZooKeeper acknowledged (snowflake_service_state.h) */
        reserved = n->forever_acked_ms;
    }
    n->reserved_ms = reserved;
    atomic_store(&n->stats.reserved_ms, reserved);
    atomic_store(&n->stats.last_local_report_ms, clock_wall_ms());
    pthread_mutex_lock(&n->lock);
    if (!n->stopping) {
        snowflake_gen_set_ceiling(&n->gen, reserved);
    }
    pthread_mutex_unlock(&n->lock);
}

/* Threadpool: the atomic cache-file write (fsync may take a while). */
static void cache_work(uv_work_t *w) {
    struct snowflake_service *n = w->data;
    struct zk_cache_data c = {n->worker_id, n->work_value};
    n->work_rc =
        zk_cache_store_owned(n->cache_path, &c, &n->work_owner, n->work_err, sizeof(n->work_err));
}

/* Repeated failures of the periodic write are logged once a minute at most. */
#define CACHE_WRITE_LOG_EVERY_MS 60000

/* Control thread: logs a failed periodic write, rate-limited; and a write that works again. */
static void cache_write_logged(struct snowflake_service *n, int ok) {
    int64_t now = clock_mono_ms();
    if (ok) {
        if (n->write_failures > 0) {
            log_info("snowflake",
                     "time reservation persisted to %s again after %" PRId64
                     " failed attempt(s); serving up to it",
                     n->cache_path, n->write_failures);
        }
        n->write_failures = 0;
        return;
    }
    if (n->write_failures++ == 0 || now - n->write_logged_ms >= CACHE_WRITE_LOG_EVERY_MS) {
        log_error("snowflake",
                  "cannot persist the time reservation (%s; %" PRId64
                  " attempt(s) failed in a row): issuing stops at the last reservation; "
                  "retrying every %" PRId64 " ms, logged once a minute",
                  n->work_err, n->write_failures, n->report_ms);
        n->write_logged_ms = now;
    }
}

/* Control thread: the write is on disk, or failed. In lease mode the ceiling is the
 * slot's acknowledged reservation instead. */
static void cache_done(uv_work_t *w, int status) {
    struct snowflake_service *n = w->data;
    n->work_busy = 0;
    if (n->cfg->lease_mode) { /* the ceiling is the slot's acknowledged reservation */
        if (status == 0 && n->work_rc == LEAF_OK) {
            atomic_store(&n->stats.last_local_report_ms, clock_wall_ms());
        }
        return;
    }
    int ok = status == 0 && n->work_rc == LEAF_OK;
    cache_write_logged(n, ok);
    if (ok) {
        snowflake_service_cache_stored(n, n->work_value);
    }
}

leaf_status_t snowflake_service_cache_write(struct snowflake_service *n, int64_t value) {
    n->work_busy = 1;
    n->work_value = value;
    n->work_owner = n->owner;
    if (uv_queue_work(n->loop, &n->work, cache_work, cache_done) != 0) {
        log_error("snowflake", "uv_queue_work(cache write %s) failed", n->cache_path);
        n->work_busy = 0;
        return LEAF_ERR;
    }
    return LEAF_OK;
}
