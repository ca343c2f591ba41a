#ifndef LEAF_CONFIG_H
#define LEAF_CONFIG_H

/*
 * Configuration: a Java-properties-style file (so Leaf's leaf.properties
 * loads unchanged), then environment overrides (upper-case, dots to
 * underscores), then cross-key validation. Pure code: no libuv, ZooKeeper or
 * MySQL header, unit-tested in tests/unit/test_config.c.
 *
 * Every key is one row of CONFIG_KEYS below: name, type, struct field,
 * default, and the range for numbers. The parser, the env override, the
 * README table and --check-config all walk that table.
 *
 * Ownership: main() fills one struct leaf_config before any thread starts;
 * afterwards it is read-only and every thread may read it.
 */
#include <stddef.h>
#include <stdint.h>

#include "log.h"
#include "status.h"

enum config_type {
    CONFIG_STR,     /* any string (may be empty unless required) */
    CONFIG_NAME,    /* a ZooKeeper path component: [A-Za-z0-9._-]+, not . or .. */
    CONFIG_BOOL,    /* true | false (case-insensitive) */
    CONFIG_INT,     /* decimal integer within [min, max] */
    CONFIG_ADDR,    /* host:port, host an IPv4 address, port 1..65535 */
    CONFIG_IPV4,    /* dotted IPv4 address (empty = choose automatically) */
    CONFIG_JDBC,    /* jdbc:mysql://host[:port]/db[?params] (params ignored) */
    CONFIG_ZKADDR,  /* host:port[,host:port...] or empty */
    CONFIG_OPTADDR, /* as CONFIG_ADDR, or empty (off) */
    CONFIG_WMODE,   /* forever | lease (leafd.snowflake.worker.mode) */
    CONFIG_LEVEL,   /* debug | info | warn | error */
};

/* X(key, type, field, default, min, max, help) */
#define CONFIG_KEYS(X)                                                                             \
    X("leaf.name", CONFIG_NAME, name, "", 0, 0,                                                    \
      "cluster name, a ZooKeeper path component; required when snowflake is on")                   \
    X("leaf.segment.enable", CONFIG_BOOL, segment_enable, "false", 0, 1, "serve segment IDs")      \
    X("leaf.jdbc.url", CONFIG_JDBC, jdbc_url, "", 0, 0,                                            \
      "jdbc:mysql://host:port/db[?params] (params are ignored)")                                   \
    X("leaf.jdbc.username", CONFIG_STR, jdbc_username, "", 0, 0, "database user")                  \
    X("leaf.jdbc.password", CONFIG_STR, jdbc_password, "", 0, 0, "database password")              \
    X("leaf.snowflake.enable", CONFIG_BOOL, snowflake_enable, "false", 0, 1,                       \
      "serve snowflake IDs")                                                                       \
    X("leaf.snowflake.zk.address", CONFIG_ZKADDR, zk_address, "", 0, 0,                            \
      "host:port[,host:port...]; empty = static worker mode")                                      \
    X("leaf.snowflake.port", CONFIG_INT, snowflake_port, "0", 0, 65535,                            \
      "port part of this node's identity ip:port (0 = the HTTP port)")                             \
    X("leafd.listen", CONFIG_ADDR, listen, "0.0.0.0:8080", 0, 0, "HTTP listen address")            \
    X("leafd.resp.listen", CONFIG_OPTADDR, resp_listen, "", 0, 0,                                  \
      "Redis-protocol (RESP) listen address; empty = off")                                         \
    X("leafd.data.dir", CONFIG_STR, data_dir, "./var/leafd", 0, 0,                                 \
      "persistent state (worker-ID cache); must survive restarts")                                 \
    X("leafd.snowflake.advertise.ip", CONFIG_IPV4, advertise_ip, "", 0, 0,                         \
      "ip part of the identity and the address peers use (empty = first non-loopback)")            \
    X("leafd.snowflake.worker.id", CONFIG_INT, worker_id, "-1", -1, 2147483647LL,                  \
      "static worker ID up to the layout's largest, only with an empty leaf.snowflake.zk.address " \
      "(-1 = unset)")                                                                              \
    X("leafd.snowflake.epoch", CONFIG_INT, epoch, "1288834974657", 0, 4102444800000LL,             \
      "snowflake epoch in ms since 1970")                                                          \
    X("leafd.admin.token", CONFIG_STR, admin_token, "", 0, 0,                                      \
      "admin endpoints need 'Authorization: Bearer <token>'; empty = loopback clients only")       \
    X("leafd.threads", CONFIG_INT, threads, "0", 0, 64,                                            \
      "HTTP event-loop threads (0 = one per CPU)")                                                 \
    X("leafd.log.level", CONFIG_LEVEL, log_level, "info", 0, 0, "debug | info | warn | error")     \
    X("leafd.http.idle.timeout.ms", CONFIG_INT, idle_timeout_ms, "60000", 100, 3600000,            \
      "close keep-alive connections idle this long")                                               \
    X("leafd.http.request.timeout.ms", CONFIG_INT, request_timeout_ms, "10000", 100, 3600000,      \
      "close a connection that takes this long to send one request head")                          \
    X("leafd.http.max.connections", CONFIG_INT, max_connections, "10000", 1, 1000000,              \
      "open connections per process; more are accepted and closed at once")                        \
    X("leafd.snowflake.reserve.ms", CONFIG_INT, reserve_ms, "5000", 1000, 600000,                  \
      "timestamps are persisted this far ahead; no ID is issued beyond what is persisted")         \
    X("leafd.snowflake.startup.max.wait.ms", CONFIG_INT, startup_max_wait_ms, "10000", 0, 600000,  \
      "at start, a clock behind the stored time by at most this is waited out")                    \
    X("leafd.snowflake.peer.max.offset.ms", CONFIG_INT, peer_max_offset_ms, "5000", 1, 3600000,    \
      "a new node refuses to start this far from its live peers' average time")                    \
    X("leafd.snowflake.worker.mode", CONFIG_WMODE, worker_mode, "forever", 0, 0,                   \
      "forever: a worker ID per ip:port for good (Leaf); lease: recycled lease slots")             \
    X("leafd.snowflake.switch.after.ms", CONFIG_INT, switch_after_ms, "1000", 5, 86400000,         \
      "lease mode: a clock stepped back by more than this moves the node to another slot")         \
    X("leafd.zk.session.timeout.ms", CONFIG_INT, zk_session_timeout_ms, "10000", 2000, 120000,     \
      "ZooKeeper session timeout")                                                                 \
    X("leafd.segment.wait.ms", CONFIG_INT, segment_wait_ms, "500", 0, 10000,                       \
      "how long a request waits for a range already being fetched")                                \
    X("leafd.db.timeout.ms", CONFIG_INT, db_timeout_ms, "2000", 100, 60000,                        \
      "database connect/read/write timeout")                                                       \
    X("leafd.sequence.enable", CONFIG_BOOL, sequence_enable, "false", 0, 1,                        \
      "serve cluster-wide strictly increasing sequences (needs leaf.snowflake.zk.address)")        \
    X("leafd.sequence.batch", CONFIG_INT, sequence_batch, "10000", 1, 1000000000,                  \
      "IDs persisted ahead per ZooKeeper write (grows with the rate)")                             \
    X("leafd.sequence.autocreate", CONFIG_BOOL, sequence_autocreate, "false", 0, 1,                \
      "a first request for an unknown sequence creates it at 1")                                   \
    X("leafd.sequence.sharding", CONFIG_BOOL, sequence_sharding, "false", 0, 1,                    \
      "split the 16384 slots among the live sequence nodes, each range with its own primary")      \
    X("leafd.metrics.tags.max", CONFIG_INT, metrics_tags_max, "1000", 0, 1000000,                  \
      "per-tag metric series at most (the tags with the least runway first)")                      \
    X("leafd.auth.enable", CONFIG_BOOL, auth_enable, "false", 0, 1,                                \
      "ID and admin requests need a user's credentials (users live in ZooKeeper)")                 \
    X("leafd.snowflake.layout", CONFIG_STR, snowflake_layout, "time:41,worker:10,sequence:12", 0,  \
      0, "snowflake fields from the most significant bit down, widths summing to at most 63")      \
    X("leafd.snowflake.time.unit.ms", CONFIG_INT, time_unit_ms, "1", 1, 86400000,                  \
      "milliseconds per tick of the snowflake time field")                                         \
    X("leafd.opaque.key", CONFIG_STR, opaque_key, "", 0, 0,                                        \
      "32 hex digits: serve opaque IDs (a keyed permutation of segment IDs); empty = off")

/* Where a key's value came from, for error messages and --check-config. */
struct config_source {
    char file[256]; /* file name, or "environment" (empty = default) */
    int line;       /* 0 for defaults and environment */
};

#define CONFIG_MAX_KEYS 48

/* The most hosts leaf.jdbc.url may list (a database cluster's members, section 18). */
#define CONFIG_DB_HOSTS_MAX 8

struct config_value_dbhost {
    char host[256];
    int port;
};

struct leaf_config {
    /* raw values, one per key (strings are NUL-terminated copies) */
    char name[129];
    int segment_enable;
    char jdbc_url[512];
    char jdbc_username[256];
    char jdbc_password[256];
    int snowflake_enable;
    char zk_address[512];
    int64_t snowflake_port;
    char listen[64];
    char resp_listen[64];
    char data_dir[512];
    char advertise_ip[16];
    int64_t worker_id;
    int64_t epoch;
    char admin_token[256];
    int64_t threads;
    int log_level;
    int64_t idle_timeout_ms;
    int64_t request_timeout_ms;
    int64_t max_connections;
    int64_t reserve_ms;
    int64_t startup_max_wait_ms;
    int64_t peer_max_offset_ms;
    char worker_mode[16];
    int64_t switch_after_ms;
    int64_t zk_session_timeout_ms;
    int64_t segment_wait_ms;
    int64_t db_timeout_ms;
    int sequence_enable;
    int64_t sequence_batch;
    int sequence_autocreate;
    int sequence_sharding;
    int64_t metrics_tags_max;
    int auth_enable;
    char snowflake_layout[128];
    int64_t time_unit_ms;
    char opaque_key[65];

    /* derived by config_finish() */
    char listen_host[16];
    int listen_port;
    char resp_host[16]; /* empty when leafd.resp.listen is */
    int resp_port;
    char db_host[256];
    int db_port;
    char db_name[129];
    int db_nhosts; /* leaf.jdbc.url's hosts, in order (db_host:db_port is the first) */
    struct config_value_dbhost db_hosts[CONFIG_DB_HOSTS_MAX];
    int identity_port; /* snowflake_port, or listen_port when 0 */
    int lease_mode;    /* leafd.snowflake.worker.mode is lease */

    /* sources[i] tells where the value of the i-th CONFIG_KEYS row came from */
    struct config_source sources[CONFIG_MAX_KEYS];

    /* the last file given to config_parse(), so that config_finish() can name
     * it when a required key is missing from it (empty = none parsed) */
    char file[256];
};

typedef const char *(*config_getenv_fn)(const char *name);

/* Sets every key to its default. */
void config_defaults(struct leaf_config *c);

/*
 * Parses a properties text. `file` is only used in messages. On error
 * returns LEAF_EINVAL and writes "file:line: key: reason" into err.
 */
leaf_status_t config_parse(struct leaf_config *c, const char *text, size_t len, const char *file,
                           char *err, size_t errlen);

/* Reads and parses a file; missing/unreadable file is an error naming it. */
leaf_status_t config_load_file(struct leaf_config *c, const char *path, char *err, size_t errlen);

/* A key's environment variable: leaf.snowflake.zk.address -> LEAF_SNOWFLAKE_ZK_ADDRESS. */
void config_env_name(const char *key, char *out, size_t outlen);

/* Applies environment overrides (LEAF_NAME, LEAFD_LISTEN, ...) through getenv_fn. */
leaf_status_t config_apply_env(struct leaf_config *c, config_getenv_fn getenv_fn, char *err,
                               size_t errlen);

/*
 * The environment's LEAF_* and LEAFD_* variables (envp: NAME=value strings,
 * NULL-terminated) must each be a key's variable, or one of the names
 * leafd's own tools use (config_env.c lists them): a typo such as
 * LEAFD_LISTN is an error naming the variable, as the same typo in the file is.
 */
leaf_status_t config_check_env(char *const *envp, char *err, size_t errlen);

/*
 * Cross-key checks and derived fields (listen_host/port, db_*, identity_port).
 * Errors name the key and where its value came from (file:line when it was
 * set in the file).
 */
leaf_status_t config_finish(struct leaf_config *c, char *err, size_t errlen);

/*
 * Writes the effective configuration (passwords/tokens masked) to buf as
 * "key = value" lines in table order, each value set in a file or the
 * environment followed by "  # from FILE:LINE" or "  # from environment VAR".
 * Always NUL-terminates (when len > 0); returns the number of bytes written,
 * excluding the NUL, so a result of len - 1 may mean the dump was cut short.
 */
size_t config_dump(const struct leaf_config *c, char *buf, size_t len);

/*
 * Writes an error about `key` the way config_finish() does ("where: key:
 * why"), for checks made outside this library (the layout and the opaque
 * key are checked by their domains, src/node/node_config.c). Returns
 * LEAF_EINVAL, or LEAF_ENOTFOUND (and a plain message) for an unknown key.
 */
leaf_status_t config_error_at(const struct leaf_config *c, const char *key, const char *why,
                              char *err, size_t errlen);

#endif
