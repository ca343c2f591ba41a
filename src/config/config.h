#ifndef LEAF_CONFIG_H
#define LEAF_CONFIG_H

/*
 * Configuration: a Java-properties-style file (so Leaf's leaf.properties
 * loads unchanged), then environment overrides (upper-case, dots to
 * underscores), then cross-key validation. Pure code: no libuv, ZooKeeper or
 * MySQL header, unit-tested in tests/unit/test_config.c.
 *
 * Every key is one row of CONFIG_KEYS below: name, type, struct field,
 * default, the range for numbers and a one-line description. The parser,
 * the env override, --check-config and the reference
 * (leafd --print-reference config, docs/reference/configuration.md) all
 * walk that table.
 *
 * Ownership: main() fills one struct leaf_config before any thread starts;
 * afterwards it is read-only and every thread may read it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "log.h"
#include "status.h"

enum config_type {
    CONFIG_STR,     /* any string (may be empty unless required) */
    CONFIG_SECRET,  /* any string, a secret: masked in a dump, never quoted in a message */
    CONFIG_NAME,    /* a ZooKeeper path component: [A-Za-z0-9._-]+, not . or .. */
    CONFIG_BOOL,    /* true | false (case-insensitive) */
    CONFIG_INT,     /* decimal integer within [min, max] */
    CONFIG_ADDR,    /* host:port, host an IPv4 address, port 1..65535 */
    CONFIG_IPV4,    /* dotted IPv4 address (empty = choose automatically) */
    CONFIG_JDBC,    /* jdbc:mysql://host[:port]/db[?params] (params ignored) */
    CONFIG_ZKADDR,  /* host:port[,host:port...] or empty */
    CONFIG_OPTADDR, /* as CONFIG_ADDR, or empty (off) */
    CONFIG_WMODE,   /* forever | lease (leafd.snowflake.worker.mode) */
    CONFIG_TLSAUTH, /* none | optional | required (leafd.tls.client.auth) */
    CONFIG_ZKAUTH,  /* digest:<user>:<password>, or empty (leafd.zk.auth); a secret too */
    CONFIG_LOGFMT,  /* logfmt | json (leafd.log.format) */
    CONFIG_RMODE,   /* none | an ID mode's name (leafd.resp.default.mode) */
    CONFIG_LEVEL, /* debug | info | warn | error (keep last: the int types follow the text ones) */
};

/* leafd.tls.client.auth */
enum config_tls_verify {
    CONFIG_TLS_VERIFY_NONE,     /* no client certificate asked for */
    CONFIG_TLS_VERIFY_OPTIONAL, /* asked for; checked against leafd.tls.ca.file when sent */
    CONFIG_TLS_VERIFY_REQUIRED, /* a client without a valid certificate fails the handshake */
};

/*
 * Database TLS, from leaf.jdbc.url: sslMode as MySQL Connector/J names the
 * modes, or the older useSSL / requireSSL / verifyServerCertificate. A URL
 * with none of them is DISABLED (plain, as leafd always connected).
 */
enum config_db_tls {
    CONFIG_DB_TLS_DISABLED,
    CONFIG_DB_TLS_PREFERRED,       /* TLS when the server offers it */
    CONFIG_DB_TLS_REQUIRED,        /* TLS or no connection; certificate not checked */
    CONFIG_DB_TLS_VERIFY_CA,       /* + the certificate chains to leafd.db.tls.ca.file */
    CONFIG_DB_TLS_VERIFY_IDENTITY, /* + it names the host of leaf.jdbc.url */
};

/* X(key, type, field, default, min, max, help) */
#define CONFIG_KEYS(X)                                                                             \
    X("leaf.name", CONFIG_NAME, name, "", 0, 0,                                                    \
      "cluster name, a ZooKeeper path component; required when snowflake is on")                   \
    X("leaf.segment.enable", CONFIG_BOOL, segment_enable, "false", 0, 1, "serve segment IDs")      \
    X("leaf.jdbc.url", CONFIG_JDBC, jdbc_url, "", 0, 0,                                            \
      "jdbc:mysql://host:port[,host:port...]/db[?params] (at most 8 hosts, the first healthy "     \
      "one in use); of the params only the TLS ones are read (docs/SECURITY.md); no "              \
      "user:password@ (refused: leaf.jdbc.username and leaf.jdbc.password say them)")              \
    X("leaf.jdbc.username", CONFIG_STR, jdbc_username, "", 0, 0, "database user")                  \
    X("leaf.jdbc.password", CONFIG_SECRET, jdbc_password, "", 0, 0, "database password")           \
    X("leaf.snowflake.enable", CONFIG_BOOL, snowflake_enable, "false", 0, 1,                       \
      "serve snowflake IDs")                                                                       \
    X("leaf.snowflake.zk.address", CONFIG_ZKADDR, zk_address, "", 0, 0,                            \
      "host:port[,host:port...]; empty = static worker mode")                                      \
    X("leaf.snowflake.port", CONFIG_INT, snowflake_port, "0", 0, 65535,                            \
      "port part of this node's identity ip:port (0 = the HTTP port)")                             \
    X("leafd.listen", CONFIG_ADDR, listen, "0.0.0.0:8080", 0, 0, "HTTP listen address")            \
    X("leafd.resp.listen", CONFIG_OPTADDR, resp_listen, "", 0, 0,                                  \
      "Redis-protocol (RESP) listen address; empty = off")                                         \
    X("leafd.resp.default.mode", CONFIG_RMODE, resp_default_mode_name, "none", 0, 0,               \
      "RESP keys without a mode: prefix are taken in this mode (none | snowflake | segment | "     \
      "sequence | opaque; the mode must be on), so March clients' INCR orders works")              \
    X("leafd.data.dir", CONFIG_STR, data_dir, "./var/leafd", 0, 0,                                 \
      "persistent state (worker-ID cache); must survive restarts")                                 \
    X("leafd.snowflake.advertise.ip", CONFIG_IPV4, advertise_ip, "", 0, 0,                         \
      "ip part of the identity and the address peers use (empty = first non-loopback)")            \
    X("leafd.snowflake.identity", CONFIG_NAME, snowflake_identity, "", 0, 0,                       \
      "forever mode: this node's identity by name (1-63 of [A-Za-z0-9._-], e.g. a StatefulSet "    \
      "pod's name) instead of ip:port; its worker ID follows the name to any address and data "    \
      "dir (docs/IDENTITY.md, \"Named identity\"); empty = ip:port as Leaf")                       \
    X("leafd.snowflake.identity.wait.ms", CONFIG_INT, identity_wait_ms, "0", 0, 600000,            \
      "a named identity held by another session is waited for this long, then refused (exit 1); "  \
      "0 = twice leafd.zk.session.timeout.ms + 2 s (docs/IDENTITY.md, \"Taking a name over\")")    \
    X("leafd.snowflake.worker.id", CONFIG_INT, worker_id, "-1", -1, 2147483647LL,                  \
      "static worker ID up to the layout's largest, only with an empty leaf.snowflake.zk.address " \
      "(-1 = unset)")                                                                              \
    X("leafd.snowflake.epoch", CONFIG_INT, epoch, "1288834974657", 0, 4102444800000LL,             \
      "snowflake epoch in ms since 1970 (the default is Leaf's and Twitter's)")                    \
    X("leafd.admin.token", CONFIG_SECRET, admin_token, "", 0, 0,                                   \
      "admin endpoints need 'Authorization: Bearer <token>' (16+ characters); empty = loopback "   \
      "clients only")                                                                              \
    X("leafd.threads", CONFIG_INT, threads, "0", 0, 64,                                            \
      "event loops, shared by HTTP and RESP (0 = one per CPU)")                                    \
    X("leafd.log.level", CONFIG_LEVEL, log_level, "info", 0, 0, "debug | info | warn | error")     \
    X("leafd.log.format", CONFIG_LOGFMT, log_format, "logfmt", 0, 0,                               \
      "logfmt | json: log lines as logfmt or as JSON objects with the same fields")                \
    X("leafd.http.idle.timeout.ms", CONFIG_INT, idle_timeout_ms, "60000", 100, 3600000,            \
      "connections (HTTP and RESP) idle this long are closed")                                     \
    X("leafd.stop.delay.ms", CONFIG_INT, stop_delay_ms, "0", 0, 10000,                             \
      "after SIGTERM, serve on this long with /ready 503 (load balancers take the node out) "      \
      "before the drain; 0 = drain at once")                                                       \
    X("leafd.http.request.timeout.ms", CONFIG_INT, request_timeout_ms, "10000", 100, 3600000,      \
      "a request head (RESP: a command) not complete in this time gets 408 (RESP: an error) "      \
      "and a close; a reply write that moves no byte in this time closes the connection")          \
    X("leafd.http.max.connections", CONFIG_INT, max_connections, "10000", 1, 1000000,              \
      "open connections per process, HTTP and RESP together; more get 503 (RESP: an error) and a " \
      "close; lowered at start to fit RLIMIT_NOFILE, with a warning")                              \
    X("leafd.http.max.connections.per.address", CONFIG_INT, max_connections_per_address, "0", 0,   \
      1000000,                                                                                     \
      "open connections one client address may hold, HTTP and RESP together, so others (health "   \
      "checks, operators) keep room; more get 503 (RESP: an error) and a close (0 = half of "      \
      "leafd.http.max.connections; that limit or more = none per address). The last eighth of "    \
      "leafd.http.max.connections is kept for addresses holding fewer than 4 connections")         \
    X("leafd.http.allowed.hosts", CONFIG_STR, http_allowed_hosts, "", 0, 0,                        \
      "more Host names state changes (POST, PUT, DELETE) may use, comma-separated, * = any; IP "   \
      "addresses, localhost and the machine's host name always pass")                              \
    X("leafd.snowflake.reserve.ms", CONFIG_INT, reserve_ms, "5000", 1000, 600000,                  \
      "timestamps are persisted this far ahead; no ID is issued beyond what is persisted")         \
    X("leafd.snowflake.startup.max.wait.ms", CONFIG_INT, startup_max_wait_ms, "10000", 0, 600000,  \
      "at start, a clock behind the stored time by at most this is waited out")                    \
    X("leafd.snowflake.peer.max.offset.ms", CONFIG_INT, peer_max_offset_ms, "5000", 1, 3600000,    \
      "a node refuses to start this far from the median of its live peers' clocks and "            \
      "ZooKeeper's (checked at every start)")                                                      \
    X("leafd.snowflake.worker.mode", CONFIG_WMODE, worker_mode, "forever", 0, 0,                   \
      "forever: a worker ID per ip:port for good (Leaf); lease: recycled lease slots")             \
    X("leafd.snowflake.leaf.compat", CONFIG_BOOL, leaf_compat, "false", 0, 1,                      \
      "register as Meituan Leaf does, under /snowflake/{leaf.name}/forever (shared with Leaf)")    \
    X("leafd.snowflake.switch.after.ms", CONFIG_INT, switch_after_ms, "1000", 5, 86400000,         \
      "lease mode: a clock stepped back by more than this moves the node to another slot")         \
    X("leafd.snowflake.max.lead.ms", CONFIG_INT, max_lead_ms, "5000", 0, 600000,                   \
      "how far IDs' time may run ahead of a clock stepped back or behind the reservation at "      \
      "start, never above reserve.ms (unset: 5000 or reserve.ms if lower); 0 = wait instead")      \
    X("leafd.zk.session.timeout.ms", CONFIG_INT, zk_session_timeout_ms, "10000", 2000, 120000,     \
      "ZooKeeper session timeout")                                                                 \
    X("leafd.segment.wait.ms", CONFIG_INT, segment_wait_ms, "500", 0, 10000,                       \
      "how long a request waits for a range already being fetched")                                \
    X("leafd.db.timeout.ms", CONFIG_INT, db_timeout_ms, "2000", 100, 60000,                        \
      "database connect/read/write timeout; also bounds the give-back of unused IDs at a stop")    \
    X("leafd.sequence.enable", CONFIG_BOOL, sequence_enable, "false", 0, 1,                        \
      "serve cluster-wide strictly increasing sequences (needs leaf.snowflake.zk.address)")        \
    X("leafd.sequence.batch", CONFIG_INT, sequence_batch, "10000", 1, 1000000000,                  \
      "IDs persisted ahead per ZooKeeper write (grows with the rate)")                             \
    X("leafd.sequence.autocreate", CONFIG_BOOL, sequence_autocreate, "false", 0, 1,                \
      "a first request for an unknown sequence creates it at 1, and for an unknown keyed "         \
      "space creates the space (step 10000); the caller needs the create right")                   \
    X("leafd.sequence.sharding", CONFIG_BOOL, sequence_sharding, "false", 0, 1,                    \
      "split the 16384 slots among the live sequence nodes, each range with its own primary; "     \
      "turns on only once every node of the sequence line has it, and then stays on "              \
      "(docs/UPGRADING.md, \"Sequence sharding in a mixed cluster\")")                             \
    X("leafd.keyed.max.keys", CONFIG_INT, keyed_max_keys, "10000000", 0, 1000000000,               \
      "keyed sequences: keys kept in memory across all spaces (about 60 bytes each); past it the " \
      "coldest leave and come back above their section's max; 0 = keyed sequences off")            \
    X("leafd.metrics.tags.max", CONFIG_INT, metrics_tags_max, "1000", 0, 1000000,                  \
      "per-tag metric series at most (the tags with the least runway first)")                      \
    X("leafd.auth.enable", CONFIG_BOOL, auth_enable, "false", 0, 1,                                \
      "ID and admin requests need a user's credentials (users live in ZooKeeper); needs "          \
      "leaf.snowflake.zk.address, leaf.name and leafd.zk.auth")                                    \
    X("leafd.snowflake.layout", CONFIG_STR, snowflake_layout, "time:41,worker:10,sequence:12", 0,  \
      0,                                                                                           \
      "snowflake fields from the most significant bit down, widths summing to at most 63, or a "   \
      "name: twitter, sonyflake, uid-generator, js-safe (docs/id-shapes.md)")                      \
    X("leafd.snowflake.time.unit.ms", CONFIG_INT, time_unit_ms, "1", 1, 86400000,                  \
      "milliseconds per tick of the snowflake time field (Sonyflake: 10, Baidu: 1000; 1 = the "    \
      "named layout's own)")                                                                       \
    X("leafd.snowflake.datacenter.id", CONFIG_INT, datacenter_id, "0", 0, 2147483647LL,            \
      "the datacenter field's value in a layout with one (twitter: 0..31)")                        \
    X("leafd.opaque.key", CONFIG_SECRET, opaque_key, "", 0, 0,                                     \
      "32 hex digits: serve opaque IDs (a keyed permutation of segment IDs); empty = off")         \
    X("leafd.tls.listen", CONFIG_OPTADDR, tls_listen, "", 0, 0,                                    \
      "HTTPS listen address (TLS 1.2/1.3); empty = off")                                           \
    X("leafd.resp.tls.listen", CONFIG_OPTADDR, resp_tls_listen, "", 0, 0,                          \
      "RESP-over-TLS listen address; empty = off")                                                 \
    X("leafd.tls.cert.file", CONFIG_STR, tls_cert_file, "", 0, 0,                                  \
      "PEM certificate (chain) of the TLS listeners; required with one; reloaded on SIGHUP")       \
    X("leafd.tls.key.file", CONFIG_STR, tls_key_file, "", 0, 0,                                    \
      "PEM private key of leafd.tls.cert.file; required with a TLS listener; reloaded on SIGHUP")  \
    X("leafd.tls.ca.file", CONFIG_STR, tls_ca_file, "", 0, 0,                                      \
      "PEM CA certificates that client certificates must chain to; required when "                 \
      "leafd.tls.client.auth is not none")                                                         \
    X("leafd.tls.client.auth", CONFIG_TLSAUTH, tls_client_auth, "none", 0, 0,                      \
      "client certificates: none | optional (checked when sent) | required")                       \
    X("leafd.db.tls.ca.file", CONFIG_STR, db_tls_ca_file, "", 0, 0,                                \
      "PEM CA for database TLS (sslMode=VERIFY_CA / VERIFY_IDENTITY in leaf.jdbc.url)")            \
    X("leafd.admin.token.file", CONFIG_STR, admin_token_file, "", 0, 0,                            \
      "read leafd.admin.token from the first line of this file")                                   \
    X("leaf.jdbc.password.file", CONFIG_STR, jdbc_password_file, "", 0, 0,                         \
      "read leaf.jdbc.password from the first line of this file")                                  \
    X("leafd.opaque.key.file", CONFIG_STR, opaque_key_file, "", 0, 0,                              \
      "read leafd.opaque.key from the first line of this file")                                    \
    X("leafd.zk.auth", CONFIG_ZKAUTH, zk_auth, "", 0, 0,                                           \
      "digest:<user>:<password>: the ZooKeeper session authenticates with it and every znode "     \
      "leafd creates is writable by it only (the users' tree: no world access); the same on "      \
      "every node; required with leafd.auth.enable; empty = none")                                 \
    X("leafd.zk.auth.file", CONFIG_STR, zk_auth_file, "", 0, 0,                                    \
      "read leafd.zk.auth from the first line of this file")                                       \
    X("leafd.auth.failures.max", CONFIG_INT, auth_failures_max, "10", 0, 1000000,                  \
      "failed authentications from one address within 10 s before its attempts are refused "       \
      "for 10 s (0 = no limit)")                                                                   \
    X("leafd.region", CONFIG_NAME, region, "", 0, 0,                                               \
      "this node's region name (a ZooKeeper path component), claimed with leafd.region.id in the " \
      "registry; required when leafd.region.count > 1 (docs/regions.md)")                          \
    X("leafd.region.id", CONFIG_INT, region_id, "0", 0, 1023,                                      \
      "this node's region ID, 0 .. leafd.region.count - 1, the same on every node of the region; " \
      "it sits in the snowflake datacenter field, the UUIDv7 node bits and the segment residue")   \
    X("leafd.region.count", CONFIG_INT, region_count, "1", 1, 1024,                                \
      "how many regions share the ID space, the same in every region (1 = one region, as "         \
      "before); above 1 segment IDs of region r are those with id mod count = r")                  \
    X("leafd.region.registry.zk.address", CONFIG_ZKADDR, region_registry_zk_address, "", 0, 0,     \
      "host:port[,host:port...]: the registry ZooKeeper where regions claim their IDs (off the "   \
      "ID path); required when leafd.region.count > 1, the same in every region")                  \
    X("leafd.region.peers", CONFIG_STR, region_peers, "", 0, 0,                                    \
      "name=host:port[/resp-host:port][,...]: where this region reaches the other regions' nodes " \
      "(a load balancer or a node of each), for sequences, keyed spaces and numberings homed "     \
      "there: redirected to it, 503 home_region_unreachable while it does not answer")

/* Where a key's value came from, for error messages and --check-config. */
struct config_source {
    char file[256]; /* file name, or "environment" (empty = default) */
    int line;       /* 0 for defaults and environment */
};

#define CONFIG_MAX_KEYS 80

/* The most hosts leaf.jdbc.url may list (a database cluster's members, docs/cluster.md). */
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
    char jdbc_password_file[512];
    int snowflake_enable;
    char zk_address[512];
    int64_t snowflake_port;
    char listen[64];
    char resp_listen[64];
    char tls_listen[64];
    char resp_tls_listen[64];
    char tls_cert_file[512];
    char tls_key_file[512];
    char tls_ca_file[512];
    char tls_client_auth[16];
    char db_tls_ca_file[512];
    char resp_default_mode_name[16];
    char data_dir[512];
    char advertise_ip[16];
    char snowflake_identity[64];
    int64_t identity_wait_ms;
    int64_t worker_id;
    int64_t epoch;
    char admin_token[256];
    char admin_token_file[512];
    int64_t threads;
    int64_t stop_delay_ms;
    int log_level;
    char log_format[16];
    int64_t idle_timeout_ms;
    int64_t request_timeout_ms;
    int64_t max_connections;
    int64_t max_connections_per_address;
    char http_allowed_hosts[512];
    int64_t reserve_ms;
    int64_t startup_max_wait_ms;
    int64_t peer_max_offset_ms;
    char worker_mode[16];
    int leaf_compat;
    int64_t switch_after_ms;
    int64_t max_lead_ms;
    int64_t zk_session_timeout_ms;
    int64_t segment_wait_ms;
    int64_t db_timeout_ms;
    int sequence_enable;
    int64_t sequence_batch;
    int sequence_autocreate;
    int sequence_sharding;
    int64_t keyed_max_keys;
    int64_t metrics_tags_max;
    int auth_enable;
    char snowflake_layout[128];
    int64_t time_unit_ms;
    int64_t datacenter_id;
    char opaque_key[65];
    char opaque_key_file[512];
    char zk_auth[256];
    char zk_auth_file[512];
    int64_t auth_failures_max;
    char region[64];
    int64_t region_id;
    int64_t region_count;
    char region_registry_zk_address[512];
    char region_peers[512];

    /* derived by config_finish() */
    char listen_host[16];
    int listen_port;
    char resp_host[16]; /* empty when leafd.resp.listen is */
    int resp_port;
    char tls_host[16]; /* leafd.tls.listen split (port 0 = off) */
    int tls_port;
    char resp_tls_host[16]; /* leafd.resp.tls.listen split (port 0 = off) */
    int resp_tls_port;
    int tls_verify;        /* enum config_tls_verify of leafd.tls.client.auth */
    int db_tls;            /* enum config_db_tls: the TLS parameters of leaf.jdbc.url */
    int resp_default_mode; /* 1 + the enum ids_mode of leafd.resp.default.mode; 0 = none */
    char db_host[256];
    int db_port;
    char db_name[129];
    int db_nhosts; /* leaf.jdbc.url's hosts, in order (db_host:db_port is the first) */
    struct config_value_dbhost db_hosts[CONFIG_DB_HOSTS_MAX];
    int identity_port; /* snowflake_port, or listen_port when 0 */
    int lease_mode;    /* leafd.snowflake.worker.mode is lease */
    int log_json;      /* leafd.log.format is json */

    /* Secrets that others (or a group not leafd's own) may read, one warn line each for
     * the start (config_finish): a *.file key's file, or a secret set inline in a
     * configuration file so readable (config_secret_loose); and secrets still holding the
     * example Secret's value (deploy/kubernetes/base/secret.yaml). */
    char loose_secret_files[2048];
    int file_loose; /* config_load_file(): others, or a group not leafd's, may read `file` */

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
 * returns LEAF_EINVAL and writes "file:line: key: reason" into err. The
 * daemon reads files (config_load_file); this is a test seam: the unit
 * tests and tests/fuzz/fuzz_config.c parse texts without a file.
 */
leaf_status_t config_parse(struct leaf_config *c, const char *text, size_t len, const char *file,
                           char *err, size_t errlen);

/* Reads and parses a file; missing/unreadable file is an error naming it. */
leaf_status_t config_load_file(struct leaf_config *c, const char *path, char *err, size_t errlen);

/* A key's environment variable: leaf.snowflake.zk.address -> LEAF_SNOWFLAKE_ZK_ADDRESS. */
void config_env_name(const char *key, char *out, size_t outlen);

/* Levenshtein distance of a (an bytes) and b, (size_t)-1 beyond 128 bytes. */
size_t config_distance(const char *a, size_t an, const char *b);

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
 * Writes every CONFIG_KEYS row as a Markdown table (key, type, default,
 * description): leafd --print-reference config, committed as
 * docs/reference/configuration.md.
 */
void config_print_reference(FILE *out);

/*
 * Writes an error about `key` the way config_finish() does ("where: key:
 * why"), for checks made outside this library (the layout and the opaque
 * key are checked by their domains, src/node/common/node_config.c). Returns
 * LEAF_EINVAL, or LEAF_ENOTFOUND (and a plain message) for an unknown key.
 */
leaf_status_t config_error_at(const struct leaf_config *c, const char *key, const char *why,
                              char *err, size_t errlen);

#endif
