/*
 * INFO for the Redis protocol. INFO answers in Redis's form
 * (# Section, then key:value lines): the sections clients read (server,
 * clients, persistence with loading:0, replication, keyspace) and a leafd
 * section with the node's state, the same facts /ready reports.
 */
#include <inttypes.h>
#include <string.h>

#include "command_info.h"

#include "clock.h"
#include "door_ctx.h"
#include "version.h"

static void info_server(const struct door_ctx *ctx, struct sbuf *b) {
    sbuf_printf(b,
                "# Server\r\nredis_version:%s\r\nleafd_version:%s\r\nredis_mode:standalone\r\n"
                "os:Linux\r\nprocess_id:%ld\r\ntcp_port:%d\r\nuptime_in_seconds:%" PRId64 "\r\n"
                "\r\n",
                LEAFD_REDIS_VERSION, leafd_version(), (long)ctx->pid, ctx->cfg->resp_port,
                (clock_wall_ms() - ctx->started_ms) / 1000);
}

static void info_clients(const struct door_ctx *ctx, struct sbuf *b) {
    uint64_t n = ctx->connections ? ctx->connections(ctx->conn_arg, DOOR_PROTO_RESP) : 0;
    sbuf_printf(b, "# Clients\r\nconnected_clients:%" PRIu64 "\r\n\r\n", n);
}

static void info_persistence(const struct door_ctx *ctx, struct sbuf *b) {
    sbuf_puts(b, "# Persistence\r\nloading:0\r\nasync_loading:0\r\n\r\n");
}

static void info_replication(const struct door_ctx *ctx, struct sbuf *b) {
    sbuf_puts(b, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\n\r\n");
}

static void info_keyspace(const struct door_ctx *ctx, struct sbuf *b) {
    sbuf_puts(b, "# Keyspace\r\n\r\n");
}

static void info_leafd(const struct door_ctx *ctx, struct sbuf *b) {
    struct snowflake_service_view v;
    struct segment_service_stats st;
    sbuf_puts(b, "# Leafd\r\n");
    sbuf_printf(b, "leaf_name:%s\r\n", ctx->cfg->name);
    if (ctx->cfg->snowflake_enable) {
        snowflake_service_view(ctx->snowflake, &v);
        sbuf_printf(b,
                    "snowflake_enabled:1\r\nsnowflake_ready:%d\r\nsnowflake_reason:%s\r\n"
                    "snowflake_worker_id:%d\r\nsnowflake_mode:%s\r\n"
                    "snowflake_clock_behind_ms:%" PRId64 "\r\nsnowflake_issued:%" PRIu64 "\r\n",
                    v.ready, v.reason[0] ? v.reason : "-", v.worker_id,
                    v.is_static ? "static" : "zookeeper", v.clock_behind_ms, v.issued);
    } else {
        sbuf_puts(b, "snowflake_enabled:0\r\n");
    }
    segment_service_stats(ctx->segment, &st);
    if (st.enabled) {
        sbuf_printf(b,
                    "segment_enabled:1\r\nsegment_ready:%d\r\nsegment_database:%s\r\n"
                    "segment_tags:%zu\r\nsegment_tags_buffered:%zu\r\n",
                    st.ready, st.db_up ? "up" : "down", st.tags_by_state[1], st.buffered);
    } else {
        sbuf_puts(b, "segment_enabled:0\r\n");
    }
    struct sequence_service_stats q;
    sequence_service_stats(ctx->sequence, &q);
    if (q.enabled) {
        sbuf_printf(b,
                    "sequence_enabled:1\r\nsequence_role:%s\r\nsequence_primary:%s\r\n"
                    "sequence_issuing:%d\r\nsequence_count:%zu\r\n",
                    q.primary ? "primary" : "standby", q.where.known ? q.where.http : "-", q.live,
                    q.sequences);
    } else {
        sbuf_puts(b, "sequence_enabled:0\r\n");
    }
    sbuf_puts(b, "\r\n");
}

static void info_cluster(const struct door_ctx *ctx, struct sbuf *b) {
    sbuf_printf(b, "# Cluster\r\ncluster_enabled:%d\r\n\r\n",
                sequence_service_enabled(ctx->sequence));
}

/* X(name, function, in the default set) */
#define INFO_SECTIONS(X)                                                                           \
    X("server", info_server, 1)                                                                    \
    X("clients", info_clients, 1)                                                                  \
    X("persistence", info_persistence, 1)                                                          \
    X("replication", info_replication, 1)                                                          \
    X("keyspace", info_keyspace, 1)                                                                \
    X("leafd", info_leafd, 1)                                                                      \
    X("cluster", info_cluster, 1)

static const struct {
    const char *name;
    void (*fn)(const struct door_ctx *ctx, struct sbuf *b);
    int dflt;
} info_sections[] = {
#define INFO_ROW(name, fn, dflt) {name, fn, dflt},
    INFO_SECTIONS(INFO_ROW)
#undef INFO_ROW
};

#define INFO_N (sizeof(info_sections) / sizeof(info_sections[0]))

/* INFO [section ...]: all, default and everything mean every section. */
leaf_status_t command_info(struct resp_request *req) {
    const struct door_ctx *ctx = req->ctx;
    int want[INFO_N] = {0};
    int any = req->cmd.argc == 1;
    for (int a = 1; a < req->cmd.argc; a++) {
        int every = resp_arg_is(&req->cmd, a, "all") || resp_arg_is(&req->cmd, a, "default") ||
                    resp_arg_is(&req->cmd, a, "everything");
        for (size_t i = 0; i < INFO_N; i++) {
            if (every || resp_arg_is(&req->cmd, a, info_sections[i].name)) {
                want[i] = 1;
            }
        }
    }
    struct sbuf b = SBUF_INIT;
    for (size_t i = 0; i < INFO_N; i++) {
        if (want[i] || (any && info_sections[i].dflt)) {
            info_sections[i].fn(ctx, &b);
        }
    }
    if (b.failed) {
        resp_reply_error(req->out, "OUT_OF_MEMORY out of memory building INFO");
    } else {
        resp_reply_verbatim(req->out, b.data ? b.data : "", b.len, req->client->resp3);
    }
    sbuf_free(&b);
    return LEAF_OK;
}
