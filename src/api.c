#include "api.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "snowflake_id.h"
#include "config_value.h"
#include "num.h"
#include "leafd.h"
#include "metrics.h"
#include "segment_service.h"
#include "snowflake_node.h"
#include "validate.h"

/*
 * A request waiting for the generator (clock a little behind, or every
 * millisecond up to the borrow limit used) gives up after this long.
 */
#define API_MAX_GEN_WAIT_MS 1000

int api_query_get(const struct http_request *req, const char *name, const char **val,
                  size_t *len) {
    size_t name_len = strlen(name);
    const char *p = req->query, *end = req->query + req->query_len;
    while (p < end) {
        const char *amp = memchr(p, '&', (size_t)(end - p));
        const char *stop = amp ? amp : end;
        if ((size_t)(stop - p) >= name_len && memcmp(p, name, name_len) == 0 &&
            (p + name_len == stop || p[name_len] == '=')) {
            /* "name" alone counts as present with an empty value */
            *val = p + name_len + (p + name_len < stop);
            *len = (size_t)(stop - *val);
            return 1;
        }
        p = stop + 1;
    }
    return 0;
}

leaf_status_t api_key_and_count(struct http_request *req, size_t prefix_len, const char **key,
                                size_t *key_len, int *count) {
    *key = req->path + prefix_len;
    *key_len = req->path_len - prefix_len;
    if (!validate_tag(*key, *key_len)) {
        http_respond_error(req, 400, "bad_tag",
                           "key must be 1 to 128 bytes of [A-Za-z0-9._:-]");
        return LEAF_EINVAL;
    }
    const char *val;
    size_t len;
    *count = 1;
    if (api_query_get(req, "count", &val, &len) && validate_count(val, len, count) != LEAF_OK) {
        http_respond_error(req, 400, "bad_count", "count must be an integer from 1 to 10000");
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}

/* Two decimal digits at a time: IDs are formatted on every request. */
static const char api_digits[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                 "8081828384858687888990919293949596979899";

size_t api_format_i64(char *dst, int64_t v) {
    char tmp[24];
    size_t n = sizeof(tmp), len = 0;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    while (u >= 100) {
        unsigned d = (unsigned)(u % 100) * 2;
        u /= 100;
        tmp[--n] = api_digits[d + 1];
        tmp[--n] = api_digits[d];
    }
    if (u >= 10) {
        tmp[--n] = api_digits[u * 2 + 1];
        tmp[--n] = api_digits[u * 2];
    } else {
        tmp[--n] = (char)('0' + u);
    }
    if (v < 0) {
        dst[len++] = '-';
    }
    memcpy(dst + len, tmp + n, sizeof(tmp) - n);
    return len + sizeof(tmp) - n;
}

void api_respond_ids(struct http_request *req, const int64_t *ids, int n) {
    /* The text goes after the IDs in the scratch buffer (see api_snowflake_get). */
    char *text = http_loop_scratch(req->loop) + SNOWFLAKE_MAX_BATCH * sizeof(int64_t);
    size_t len = 0;
    for (int i = 0; i < n; i++) {
        if (i) {
            text[len++] = '\n';
        }
        len += api_format_i64(text + len, ids[i]);
    }
    http_respond(req, 200, "text/plain", text, len);
}

static leaf_status_t snowflake_refuse(struct http_request *req, leaf_status_t rc) {
    switch (rc) {
    case LEAF_ECLOCK:
        http_respond_error(req, 503, "clock_backwards",
                           "the clock moved backwards; refusing until it catches up");
        break;
    case LEAF_EAGAIN:
        http_respond_error(req, 503, "overloaded",
                           "the generator stayed busy or the clock behind for a whole second");
        break;
    case LEAF_ERANGE:
        http_respond_error(req, 503, "clock_out_of_range",
                           "the clock is before the epoch or past the 41-bit horizon");
        break;
    default:
        http_respond_error(req, 503, "not_ready", "no worker ID held or reservation not persisted");
        break;
    }
    return LEAF_OK;
}

leaf_status_t api_snowflake_get(struct http_request *req) {
    const char *key;
    size_t key_len;
    int count;
    if (api_key_and_count(req, sizeof("/api/snowflake/get/") - 1, &key, &key_len, &count) !=
        LEAF_OK) {
        return LEAF_OK;
    }
    if (!leafd.cfg.snowflake_enable) {
        http_respond_error(req, 503, "snowflake_disabled", "snowflake mode is disabled on this node");
        return LEAF_OK;
    }
    int64_t *ids = (int64_t *)(void *)http_loop_scratch(req->loop);
    int64_t wait_ms;
    /* The clock is read under the lock, so loops never see each other's
     * readings out of order (that would look like a step back). */
    pthread_mutex_lock(&leafd.gen_lock);
    leaf_status_t rc = snowflake_gen_next(&leafd.gen, leafd_wall_ms(), ids, count, &wait_ms);
    pthread_mutex_unlock(&leafd.gen_lock);
    if (rc == LEAF_OK) {
        api_respond_ids(req, ids, count);
        return LEAF_OK;
    }
    if (rc == LEAF_EAGAIN &&
        http_loop_now(req->loop) - req->first_seen_ms + wait_ms <= API_MAX_GEN_WAIT_MS) {
        req->retry_ms = wait_ms;
        return LEAF_EAGAIN;
    }
    return snowflake_refuse(req, rc);
}

leaf_status_t api_decode(struct http_request *req) {
    const char *val;
    size_t len;
    int64_t id;
    struct snowflake_parts parts;
    if (!api_query_get(req, "snowflakeId", &val, &len) || num_parse_i64(val, len, &id) != LEAF_OK ||
        snowflake_id_decode(id, leafd.cfg.epoch, &parts) != 0) {
        http_respond_error(req, 400, "bad_snowflake_id",
                           "snowflakeId must be a non-negative 64-bit decimal integer");
        return LEAF_OK;
    }
    /* Leaf's shape: {"timestamp":"<ms>(<local time>)","workerId":"<n>","sequenceId":"<n>"} */
    time_t secs = (time_t)(parts.timestamp_ms / 1000);
    struct tm tm;
    char when[64] = "";
    if (localtime_r(&secs, &tm) != NULL) {
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    }
    char body[256];
    int n = snprintf(body, sizeof(body),
                     "{\"timestamp\":\"%" PRId64 "(%s.%03d)\",\"workerId\":\"%d\","
                     "\"sequenceId\":\"%d\"}",
                     parts.timestamp_ms, when, (int)(parts.timestamp_ms % 1000), parts.worker_id,
                     parts.sequence);
    http_respond(req, 200, "application/json", body, (size_t)n);
    return LEAF_OK;
}

leaf_status_t api_time(struct http_request *req) {
    char body[64];
    int n = snprintf(body, sizeof(body), "{\"timestamp\":%" PRId64 "}", leafd_wall_ms());
    http_respond(req, 200, "application/json", body, (size_t)n);
    return LEAF_OK;
}

leaf_status_t api_health(struct http_request *req) {
    static const char body[] = "{\"status\":\"ok\"}";
    http_respond(req, 200, "application/json", body, sizeof(body) - 1);
    return LEAF_OK;
}

/* Appends the snowflake part of /ready; returns 1 when snowflake can issue now. */
static int ready_snowflake(char *buf, size_t cap, size_t *pos) {
    int worker;
    int64_t ceiling, behind;
    pthread_mutex_lock(&leafd.gen_lock);
    int64_t now = leafd_wall_ms();
    worker = leafd.gen.worker_id;
    ceiling = leafd.gen.ceiling_ms;
    behind = snowflake_gen_behind(&leafd.gen, now);
    pthread_mutex_unlock(&leafd.gen_lock);
    /* Ready while the persisted reservation is ahead of the clock and the
     * clock is not behind what was issued (ZooKeeper itself is a weak
     * dependency: see src/snowflake_node.h). */
    int ok = atomic_load(&leafd.snowflake_ready) && worker >= 0 && ceiling > now &&
             behind <= SNOWFLAKE_MAX_BACKWARDS_WAIT_MS;
    const char *reason = "";
    if (!ok) {
        reason = worker < 0                                      ? "no worker ID held"
                 : behind > SNOWFLAKE_MAX_BACKWARDS_WAIT_MS      ? "clock behind the last issued ID"
                 : ceiling <= now                                ? "time reservation not persisted"
                                                                 : "starting";
    }
    *pos += (size_t)snprintf(buf + *pos, cap - *pos,
                             "\"snowflake\":{\"enabled\":true,\"ready\":%s,\"reason\":\"%s\","
                             "\"clock_behind_ms\":%" PRId64 ",\"worker_id\":%d,"
                             "\"mode\":\"%s\",\"coordinated\":%s%s",
                             ok ? "true" : "false", reason, behind, worker,
                             leafd.snowflake_static ? "static" : "zookeeper",
                             leafd.snowflake_static ? "false" : "true",
                             leafd.snowflake_static
                                 ? ",\"warning\":\"static worker mode: worker IDs are not "
                                   "coordinated; never run two nodes with the same worker ID\""
                                 : "");
    *pos += snowflake_node_ready_json(buf + *pos, cap - *pos);
    *pos += (size_t)snprintf(buf + *pos, cap - *pos, "}");
    return ok;
}

leaf_status_t api_ready(struct http_request *req) {
    char body[1024];
    size_t pos = 0;
    int ok = 1;
    pos += (size_t)snprintf(body, sizeof(body), "{");
    if (leafd.cfg.snowflake_enable) {
        ok &= ready_snowflake(body, sizeof(body), &pos);
    } else {
        pos += (size_t)snprintf(body + pos, sizeof(body) - pos, "\"snowflake\":{\"enabled\":false}");
    }
    pos += (size_t)snprintf(body + pos, sizeof(body) - pos, ",");
    ok &= segment_service_ready(body, sizeof(body), &pos);
    if (ok) {
        pos += (size_t)snprintf(body + pos, sizeof(body) - pos, ",\"status\":\"ready\"}");
        http_respond(req, 200, "application/json", body, pos);
    } else {
        pos += (size_t)snprintf(body + pos, sizeof(body) - pos,
                                ",\"code\":\"not_ready\",\"message\":\"an enabled mode cannot "
                                "issue IDs now\"}");
        http_respond(req, 503, "application/json", body, pos);
    }
    return LEAF_OK;
}

leaf_status_t api_metrics(struct http_request *req) {
    char *buf = http_loop_scratch(req->loop);
    size_t cap = HTTP_SCRATCH, pos = metrics_render_requests(buf, cap);
    pthread_mutex_lock(&leafd.gen_lock);
    struct snowflake_gen g = leafd.gen;
    pthread_mutex_unlock(&leafd.gen_lock);
    pos += (size_t)snprintf(
        buf + pos, cap - pos,
        "# HELP leafd_ids_issued_total IDs issued, by mode.\n"
        "# TYPE leafd_ids_issued_total counter\n"
        "leafd_ids_issued_total{mode=\"snowflake\"} %llu\n"
        "leafd_ids_issued_total{mode=\"segment\"} %llu\n"
        "# HELP leafd_snowflake_clock_backwards_total Clock steps back seen, by outcome.\n"
        "# TYPE leafd_snowflake_clock_backwards_total counter\n"
        "leafd_snowflake_clock_backwards_total{outcome=\"waited\"} %llu\n"
        "leafd_snowflake_clock_backwards_total{outcome=\"refused\"} %llu\n"
        "# HELP leafd_snowflake_sequence_exhausted_total Milliseconds whose sequence ran out.\n"
        "# TYPE leafd_snowflake_sequence_exhausted_total counter\n"
        "leafd_snowflake_sequence_exhausted_total %llu\n"
        "# HELP leafd_snowflake_worker_id The worker ID held (-1 = none).\n"
        "# TYPE leafd_snowflake_worker_id gauge\n"
        "leafd_snowflake_worker_id %d\n"
        "# HELP leafd_snowflake_timestamp_years_left Years before the 41-bit timestamp runs out.\n"
        "# TYPE leafd_snowflake_timestamp_years_left gauge\n"
        "leafd_snowflake_timestamp_years_left %.3f\n"
        "# HELP leafd_http_connections Open HTTP connections.\n"
        "# TYPE leafd_http_connections gauge\n"
        "leafd_http_connections %llu\n",
        (unsigned long long)g.issued, (unsigned long long)metrics_ids_total(METRICS_MODE_SEGMENT),
        (unsigned long long)g.backwards_waits,
        (unsigned long long)g.backwards_errors, (unsigned long long)g.exhaustions, g.worker_id,
        snowflake_id_years_left(leafd.cfg.epoch, leafd_wall_ms()),
        (unsigned long long)http_server_connections(leafd.http));
    pos += snowflake_node_metrics(buf + pos, cap - pos);
    pos += segment_service_metrics(buf + pos, cap - pos);
    http_respond(req, 200, "text/plain; version=0.0.4", buf, pos);
    return LEAF_OK;
}
