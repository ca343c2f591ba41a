/*
 * The node's own endpoints: decoding a snowflake ID and a UUIDv7, the time, /health and
 * /ready. The ID GETs are api_ids.c's; the other handlers
 * are in api_segment.c, api_sequence.c, api_admin.c, api_users.c,
 * src/pages; the route table is src/tables/table_http.c's.
 */
#include "api.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "door_http.h"
#include "door_ready.h"
#include "num.h"
#include "snowflake_id.h"
#include "snowflake_uuid.h"
#include "version.h"
#include "zk_session.h"

/* "regionId":"<n>","region":"<name>", (the name when known) with several regions; "" else. */
static void api_region_field(const struct door_ctx *ctx, int64_t id, char *out, size_t cap) {
    char name[64];
    out[0] = '\0';
    if (ctx->cfg->region_count <= 1) {
        return;
    }
    if (region_service_name_of(ctx->region, id, name, sizeof(name))) {
        snprintf(out, cap, "\"regionId\":\"%" PRId64 "\",\"region\":\"%s\",", id, name);
    } else {
        snprintf(out, cap, "\"regionId\":\"%" PRId64 "\",", id);
    }
}

leaf_status_t api_decode(struct http_request *req, enum ids_mode mode) {
    const char *val;
    size_t len;
    int64_t id;
    struct snowflake_parts parts;
    const struct door_ctx *ctx = door_ctx(req);
    if (!door_http_query(req, "snowflakeId", &val, &len) ||
        num_parse_i64(val, len, &id) != LEAF_OK ||
        snowflake_layout_decode(snowflake_service_layout(ctx->snowflake), id, ctx->cfg->epoch,
                                &parts) != LEAF_OK) {
        door_http_error(req, DOOR_E_BAD_SNOWFLAKE_ID,
                        "snowflakeId must be a non-negative 64-bit decimal integer that fits "
                        "leafd.snowflake.layout");
        return LEAF_OK;
    }
    /* Leaf's shape: {"timestamp":"<ms>(<local time>)","workerId":"<n>","sequenceId":"<n>"} */
    time_t secs = (time_t)(parts.timestamp_ms / 1000);
    struct tm tm;
    char when[64] = "";
    if (localtime_r(&secs, &tm) != NULL) {
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
    }
    /* A layout with a datacenter field names it too (docs/id-shapes.md, "Named layouts"); with
     * regions it is the region's ID, and its name when the registry told it (docs/regions.md). */
    char dc[40] = "", region[128] = "";
    if (snowflake_service_layout(ctx->snowflake)->bits[SNOWFLAKE_DATACENTER] > 0) {
        snprintf(dc, sizeof(dc), "\"datacenterId\":\"%d\",", parts.datacenter_id);
    }
    api_region_field(ctx, parts.datacenter_id, region, sizeof(region));
    char body[384];
    int n = snprintf(body, sizeof(body),
                     "{\"timestamp\":\"%" PRId64 "(%s.%03d)\",%s%s\"workerId\":\"%d\","
                     "\"sequenceId\":\"%d\"}",
                     parts.timestamp_ms, when, (int)(parts.timestamp_ms % 1000), dc, region,
                     parts.worker_id, parts.sequence);
    http_respond(req, 200, "application/json", body, (size_t)n);
    return LEAF_OK;
}

/* GET /decodeUuid?uuid=U: a UUIDv7 of this node's shape read back (docs/id-shapes.md, "UUIDv7"). */
leaf_status_t api_decode_uuid(struct http_request *req, enum ids_mode mode) {
    const char *val;
    size_t len;
    uint8_t u[16];
    struct snowflake_uuid_shape shape;
    struct snowflake_uuid_parts p;
    const struct door_ctx *ctx = door_ctx(req);
    const struct snowflake_layout *l = snowflake_service_layout(ctx->snowflake);
    snowflake_uuid_shape(l, &shape);
    if (!door_http_query(req, "uuid", &val, &len) || snowflake_uuid_parse(val, len, u) != LEAF_OK ||
        snowflake_uuid_decode(&shape, u, &p) != LEAF_OK) {
        door_http_error(req, DOOR_E_BAD_UUID,
                        "uuid must be a UUID of version 7 and RFC 9562's variant, "
                        "8-4-4-4-12 hex digits");
        return LEAF_OK;
    }
    char text[SNOWFLAKE_UUID_TEXT + 1], when[64] = "", dc[40] = "";
    snowflake_uuid_format(u, text);
    time_t secs = (time_t)(p.unix_ms / 1000);
    struct tm tm;
    if (gmtime_r(&secs, &tm) != NULL) {
        strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
    }
    if (l->bits[SNOWFLAKE_DATACENTER] > 0) {
        snprintf(dc, sizeof(dc), "\"datacenterId\":\"%" PRId64 "\",", p.datacenter_id);
    }
    char region[128];
    api_region_field(ctx, p.datacenter_id, region, sizeof(region));
    /* A UUIDv7 of another generator decodes too: say when it cannot be one of leafd's. With
     * regions, another region's UUIDs hold its region ID in the datacenter field (docs/regions.md).
     */
    struct snowflake_layout own = *l;
    if (ctx->cfg->region_count > 1 && p.datacenter_id < ctx->cfg->region_count) {
        own.datacenter_id = p.datacenter_id;
    }
    const char *foreign =
        snowflake_uuid_foreign(&own, &p, ctx->cfg->epoch, clock_wall_ms(), ctx->cfg->max_lead_ms);
    char body[512];
    int n = snprintf(body, sizeof(body),
                     "{\"uuid\":\"%s\",\"timestamp\":\"%" PRId64 "\",\"time\":\"%s.%03dZ\",%s%s"
                     "\"workerId\":\"%" PRId64 "\",\"counter\":\"%" PRId64 "\",\"leafd\":%s%s%s%s}",
                     text, p.unix_ms, when, (int)(p.unix_ms % 1000), dc, region, p.worker_id,
                     p.counter, foreign ? "false" : "true",
                     foreign ? ",\"note\":\"not a UUID of this "
                               "cluster's shape: "
                             : "",
                     foreign ? foreign : "", foreign ? "\"" : "");
    http_respond(req, 200, "application/json", body, (size_t)n);
    return LEAF_OK;
}

leaf_status_t api_time(struct http_request *req, enum ids_mode mode) {
    char body[64];
    int n = snprintf(body, sizeof(body), "{\"timestamp\":%" PRId64 "}", clock_wall_ms());
    http_respond(req, 200, "application/json", body, (size_t)n);
    return LEAF_OK;
}

leaf_status_t api_health(struct http_request *req, enum ids_mode mode) {
    static const char body[] = "{\"status\":\"ok\"}";
    http_respond(req, 200, "application/json", body, sizeof(body) - 1);
    return LEAF_OK;
}

/* The snowflake member of /ready; `ready` is door_ready_eval's verdict. */
static void ready_snowflake(const struct door_ctx *ctx, int ready, struct sbuf *b) {
    struct snowflake_service_view v;
    if (!ctx->cfg->snowflake_enable) {
        sbuf_puts(b, "\"snowflake\":{\"enabled\":false}");
        return;
    }
    snowflake_service_view(ctx->snowflake, &v);
    /* The identity by which peers and /cluster name the node: the name when it has one. */
    char ident[96];
    if (ctx->cfg->snowflake_identity[0] != '\0') {
        snprintf(ident, sizeof(ident), "%s", ctx->cfg->snowflake_identity);
    } else {
        snprintf(ident, sizeof(ident), "%s:%d", ctx->cfg->advertise_ip, ctx->cfg->identity_port);
    }
    sbuf_puts(b, "\"snowflake\":{\"identity\":");
    sbuf_json_str(b, ident, strlen(ident));
    sbuf_printf(b,
                ",\"enabled\":true,\"ready\":%s,\"reason\":\"%s\","
                "\"clock_behind_ms\":%" PRId64 ",\"clock_lead_ms\":%" PRId64
                ",\"max_lead_ms\":%" PRId64 ",\"worker_id\":%d,"
                "\"mode\":\"%s\",\"coordinated\":%s%s",
                ready ? "true" : "false", v.reason, v.clock_behind_ms, v.clock_lead_ms,
                v.max_lead_ms, v.worker_id,
                v.is_static ? "static"
                : v.lease   ? "lease"
                            : "zookeeper",
                v.is_static ? "false" : "true",
                v.is_static ? ",\"warning\":\"static worker mode: worker IDs are not "
                              "coordinated; never run two nodes with the same worker ID\""
                            : "");
    if (v.started && v.use_zk) {
        sbuf_printf(b,
                    ",\"zookeeper\":{\"session\":\"%s\",\"reconnects\":%lld,"
                    "\"expirations\":%lld,\"registered\":%s,\"ephemeral\":%s,"
                    "\"last_report_age_ms\":%" PRId64 ",\"local_report_age_ms\":%" PRId64
                    ",\"reserved_ahead_ms\":%" PRId64 "}",
                    zk_state_name(v.zk_state), v.connects > 1 ? v.connects - 1 : 0, v.expirations,
                    v.registered ? "true" : "false", v.ephemeral ? "true" : "false",
                    v.zk_report_age_ms, v.local_report_age_ms, v.reserved_ahead_ms);
    }
    if (v.lease) {
        sbuf_printf(b,
                    ",\"lease\":{\"slot\":%" PRId64 ",\"state\":\"%s\",\"claims\":%lld,"
                    "\"claims_lost\":%lld,\"switches\":%lld,\"switch_failures\":%lld,"
                    "\"fence_failures\":%lld,\"last_switch_us\":%lld}",
                    v.lease_slot, v.lease_state, v.lease_claims, v.lease_claims_lost,
                    v.lease_switches, v.lease_switch_failures, v.lease_fence_failures,
                    v.lease_last_switch_us);
    }
    sbuf_putc(b, '}');
}

/* The database hosts of /ready: "db_host" in use ("" when none) and every host's state. */
static void ready_segment_hosts(const struct segment_hosts *h, struct sbuf *b) {
    const struct segment_host *cur = h->current >= 0 ? &h->host[h->current] : NULL;
    sbuf_puts(b, ",\"db_host\":");
    if (cur != NULL) {
        sbuf_printf(b, "\"%s:%d\"", cur->name, cur->port); /* checked by config: no quotes */
    } else {
        sbuf_puts(b, "\"\"");
    }
    sbuf_printf(b, ",\"db_moves\":%llu,\"db_hosts\":[", (unsigned long long)h->moves);
    for (int i = 0; i < h->n; i++) {
        sbuf_printf(b, "%s{\"host\":\"%s:%d\",\"state\":\"%s\",\"in_use\":%s,\"failures\":%llu}",
                    i ? "," : "", h->host[i].name, h->host[i].port,
                    segment_host_state_name(h->host[i].state), i == h->current ? "true" : "false",
                    (unsigned long long)h->host[i].failures);
    }
    sbuf_putc(b, ']');
}

/* ,"reason":"..." when the component is enabled and not ready: door_ready_eval's reason, the one
 * the systemd status and a 503's message give. */
static void ready_reason(const struct door_ready *r, enum door_ready_component c, struct sbuf *b) {
    if (r->enabled[c] && !r->ready[c]) {
        sbuf_puts(b, ",\"reason\":");
        sbuf_json_str(b, r->reason[c], strlen(r->reason[c]));
    }
}

/* The segment member of /ready; the verdict and its reason are door_ready_eval's. */
static void ready_segment(const struct door_ctx *ctx, const struct door_ready *r, struct sbuf *b) {
    int ready = r->ready[DOOR_READY_SEGMENT];
    struct segment_service_stats st;
    segment_service_stats(ctx->segment, &st);
    if (!st.enabled) {
        sbuf_puts(b, "\"segment\":{\"enabled\":false}");
        return;
    }
    sbuf_printf(b,
                "\"segment\":{\"enabled\":true,\"ready\":%s,\"database\":\"%s\","
                "\"tags\":%zu,\"tags_buffered\":%zu",
                ready ? "true" : "false", st.db_up ? "up" : "down", st.tags_by_state[1],
                st.buffered);
    ready_reason(r, DOOR_READY_SEGMENT, b);
    ready_segment_hosts(&st.db_hosts, b);
    sbuf_putc(b, '}');
}

/* The sequence member of /ready (ready: this node takes part, in line and connected). */
static void ready_sequence(const struct door_ctx *ctx, int ready, struct sbuf *b) {
    struct sequence_service_stats st;
    sequence_service_stats(ctx->sequence, &st);
    if (!st.enabled) {
        sbuf_puts(b, "\"sequence\":{\"enabled\":false}");
        return;
    }
    sbuf_printf(b, "\"sequence\":{\"enabled\":true,\"ready\":%s,\"role\":\"%s\",\"primary\":",
                ready ? "true" : "false", st.primary ? "primary" : "standby");
    if (st.where.known) {
        sbuf_json_str(b, st.where.http, strlen(st.where.http));
    } else {
        sbuf_puts(b, "null");
    }
    sbuf_printf(b,
                ",\"issuing\":%s,\"lease_left_ms\":%" PRId64 ",\"zookeeper\":\"%s\","
                "\"sequences\":%zu,\"elections\":%" PRIu64 ",\"fence_failures\":%" PRIu64,
                st.live ? "true" : "false", st.lease_left_ms,
                st.connected ? "connected" : "disconnected", st.sequences, st.elections,
                st.fence_failures);
    if (st.sharded) {
        sbuf_printf(b,
                    ",\"sharded\":true,\"slots\":%d,\"shard_epoch\":%" PRIu64
                    ",\"slots_taken\":%" PRIu64 ",\"slots_given\":%" PRIu64,
                    st.slots, st.shard_epoch, st.slots_in, st.slots_out);
    }
    if (st.sharding_conf) {
        /* docs/UPGRADING.md, "Sequence sharding in a mixed cluster": who keeps it off (or
         * gets no slots); informational, not a fault. */
        sbuf_printf(b, ",\"sharding\":{\"on\":%s,\"held_back\":", st.sharded ? "true" : "false");
        sbuf_json_str(b, st.sharding_held, strlen(st.sharding_held));
        sbuf_putc(b, '}');
    }
    sbuf_putc(b, '}');
}

/* Users: ready once a table is in use (from ZooKeeper or the local copy). */
static void ready_auth(const struct door_ctx *ctx, const struct door_ready *r, struct sbuf *b) {
    int ready = r->ready[DOOR_READY_AUTH];
    struct user_service_stats st;
    user_service_stats(ctx->users, &st);
    if (!st.enabled) {
        sbuf_puts(b, "\"auth\":{\"enabled\":false}");
        return;
    }
    sbuf_printf(b,
                "\"auth\":{\"enabled\":true,\"ready\":%s,\"users\":%" PRIu64
                ",\"source\":\"%s\",\"zookeeper\":\"%s\"",
                ready ? "true" : "false", st.users,
                !st.loaded_ms   ? "none"
                : st.from_local ? "local copy"
                                : "zookeeper",
                st.connected ? "connected" : "disconnected");
    ready_reason(r, DOOR_READY_AUTH, b);
    sbuf_putc(b, '}');
}

/*
 * With leafd.zk.auth: the stage of the cluster's trees and who holds closing
 * back (docs/reference/zookeeper.md, "ACLs"). Informational: the trees
 * staying open is how a rollout of the credentials works, not a fault.
 */
static void ready_zk_acl(const struct door_ctx *ctx, struct sbuf *b) {
    if (ctx->zk == NULL || ctx->node_zk == NULL || ctx->cfg->zk_auth[0] == '\0') {
        return;
    }
    char held[512];
    node_zk_held_back(ctx->node_zk, held, sizeof(held));
    sbuf_printf(b, ",\"zk_acl\":{\"closed\":%s,\"held_back\":",
                zk_session_acl_is_closed(ctx->zk) ? "true" : "false");
    sbuf_json_str(b, held, strlen(held));
    sbuf_putc(b, '}');
}

/*
 * GET /ready[?mode=M[,M...]]: 200 when what the probe asks for can issue now (every enabled
 * mode by default; the listed ones, or "any" one of them, with mode=), else 503 naming what is
 * not; 400 for an unknown mode. The verdict is door_ready_eval's, the one the leafd_ready gauge
 * and the systemd status use (docs/kubernetes.md, "Probes"; docs/reference/http.md).
 */
leaf_status_t api_ready(struct http_request *req, enum ids_mode mode) {
    const struct door_ctx *ctx = door_ctx(req);
    struct door_ready r;
    unsigned asked = 0;
    const char *val;
    size_t len;
    char bad[64], why[512];
    if (door_http_query(req, "mode", &val, &len) &&
        door_ready_parse(val, len, &asked, bad, sizeof(bad)) != LEAF_OK) {
        struct sbuf msg = SBUF_INIT;
        sbuf_printf(&msg, "mode: unknown mode '%s' (one of ", bad);
        for (int c = 0; c < DOOR_READY_COUNT; c++) {
            sbuf_printf(&msg, "%s, ", door_ready_name((enum door_ready_component)c));
        }
        sbuf_puts(&msg, "any; comma-separated)");
        door_http_error(req, DOOR_E_BAD_MODE, msg.failed ? NULL : msg.data);
        sbuf_free(&msg);
        return LEAF_OK;
    }
    door_ready_eval(ctx, &r);
    int ok = door_ready_ok(&r, asked);
    struct sbuf b = SBUF_INIT;
    sbuf_putc(&b, '{');
    ready_snowflake(ctx, r.ready[DOOR_READY_SNOWFLAKE], &b);
    sbuf_putc(&b, ',');
    ready_segment(ctx, &r, &b);
    sbuf_putc(&b, ',');
    ready_sequence(ctx, r.ready[DOOR_READY_SEQUENCE], &b);
    sbuf_putc(&b, ',');
    ready_auth(ctx, &r, &b);
    door_ready_region_json(ctx, &r, &b);
    sbuf_printf(&b, ",\"version\":\"%s\",\"revision\":\"%s\"", leafd_version(), leafd_revision());
    ready_zk_acl(ctx, &b);
    if (r.stopping) {
        sbuf_puts(&b, ",\"stopping\":true");
    }
    if (ok) {
        sbuf_puts(&b, ",\"status\":\"ready\"}");
    } else {
        door_ready_text_for(&r, asked, why, sizeof(why));
        sbuf_printf(&b, ",\"code\":\"%s\",\"message\":", door_error(IDS_E_NOT_READY)->code);
        sbuf_json_str(&b, why, strlen(why));
        sbuf_putc(&b, '}');
    }
    door_http_respond_sbuf(req, ok ? 200 : 503, "application/json", &b);
    sbuf_free(&b);
    return LEAF_OK;
}
