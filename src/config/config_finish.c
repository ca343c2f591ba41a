/* Cross-key checks and derived fields: config_finish (config.h). */
#include "config.h"
#include "config_secret.h"
#include "config_state.h"
#include "config_value.h"
#include "ids_mode.h"
#include "num.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

/* A secret and the key that reads it from a file instead (config_finish_secrets). */
static const struct {
    int value; /* enum config_index of the secret */
    int file;  /* enum config_index of its *.file key */
} config_secret_files[] = {
#define CONFIG_SECRET_FILE(v, f)                                                                   \
    { CONFIG_I_##v, CONFIG_I_##f }
    CONFIG_SECRET_FILE(admin_token, admin_token_file),
    CONFIG_SECRET_FILE(jdbc_password, jdbc_password_file),
    CONFIG_SECRET_FILE(opaque_key, opaque_key_file),
    CONFIG_SECRET_FILE(zk_auth, zk_auth_file),
#undef CONFIG_SECRET_FILE
};

/* A shorter leafd.admin.token is refused: it could be guessed. */
#define CONFIG_ADMIN_TOKEN_MIN 16

/* ---- cross-key checks and derived fields -------------------------------- */

/*
 * Where row i got its value: "file:line", "environment VAR", or for a
 * default the file that should have set it (empty when none was parsed).
 */
void config_where(const struct leaf_config *c, size_t i, char *out, size_t outlen) {
    const struct config_source *s = &c->sources[i];
    char name[128];

    if (s->file[0] != '\0' && s->line > 0) {
        snprintf(out, outlen, "%s:%d", s->file, s->line);
    } else if (s->file[0] != '\0') {
        config_env_name(config_keys[i].key, name, sizeof(name));
        snprintf(out, outlen, "%s %s", s->file, name);
    } else {
        config_copy(out, outlen, c->file);
    }
}

static leaf_status_t config_key_error(const struct leaf_config *c, size_t i, const char *why,
                                      char *err, size_t errlen) {
    char where[512];

    config_where(c, i, where, sizeof(where));
    config_errorf(err, errlen, "%s%s%s: %s", where, where[0] ? ": " : "", config_keys[i].key, why);
    return LEAF_EINVAL;
}

leaf_status_t config_error_at(const struct leaf_config *c, const char *key, const char *why,
                              char *err, size_t errlen) {
    int i = config_find(key, strlen(key));
    if (i < 0) {
        config_errorf(err, errlen, "%s: %s", key, why);
        return LEAF_ENOTFOUND;
    }
    const struct config_key *k = &config_keys[i];
    char safe[CONFIG_WHY_MAX];
    snprintf(safe, sizeof(safe), "%s", why);
    if (config_is_secret(k)) { /* a domain's reason (the opaque key's) is held to the same rule */
        const char *field = (const char *)c + k->offset;
        config_hide_secret(k, field, strlen(field), safe, sizeof(safe));
    }
    return config_key_error(c, (size_t)i, safe, err, errlen);
}

static leaf_status_t config_cross_check(const struct leaf_config *c, char *err, size_t errlen) {
    int zk = c->zk_address[0] != '\0';

    if (c->snowflake_enable && c->name[0] == '\0') {
        return config_key_error(c, CONFIG_I_name, "required when leaf.snowflake.enable is true",
                                err, errlen);
    }
    if (zk && c->worker_id >= 0) {
        return config_key_error(c, CONFIG_I_worker_id,
                                "only used when leaf.snowflake.zk.address is empty", err, errlen);
    }
    if (c->snowflake_enable && !zk && c->worker_id < 0) {
        return config_key_error(c, CONFIG_I_worker_id,
                                "required (0 up to the layout's largest worker ID, 1023 by "
                                "default) when leaf.snowflake.enable is true and "
                                "leaf.snowflake.zk.address is empty",
                                err, errlen);
    }
    if (c->segment_enable && c->jdbc_url[0] == '\0') {
        return config_key_error(c, CONFIG_I_jdbc_url, "required when leaf.segment.enable is true",
                                err, errlen);
    }
    if (c->segment_enable && c->jdbc_username[0] == '\0') {
        return config_key_error(c, CONFIG_I_jdbc_username,
                                "required when leaf.segment.enable is true", err, errlen);
    }
    if (c->sequence_enable && !zk) {
        return config_key_error(c, CONFIG_I_sequence_enable,
                                "needs leaf.snowflake.zk.address: the primary is elected there",
                                err, errlen);
    }
    if (c->sequence_enable && c->name[0] == '\0') {
        return config_key_error(c, CONFIG_I_name, "required when leafd.sequence.enable is true",
                                err, errlen);
    }
    if (c->auth_enable && (!zk || c->name[0] == '\0')) {
        return config_key_error(c, CONFIG_I_auth_enable,
                                "needs leaf.snowflake.zk.address and leaf.name: the users live "
                                "in ZooKeeper under /leafd/{leaf.name}/users",
                                err, errlen);
    }
    if (c->snowflake_enable && !zk && strcasecmp(c->worker_mode, "lease") == 0) {
        return config_key_error(c, CONFIG_I_worker_mode,
                                "lease needs leaf.snowflake.zk.address: the slots live there", err,
                                errlen);
    }
    if (c->leaf_compat && (!zk || strcasecmp(c->worker_mode, "lease") == 0)) {
        /* Leaf's nodes hold their worker IDs for good under /snowflake/{leaf.name}/forever. */
        return config_key_error(c, CONFIG_I_leaf_compat,
                                "needs leaf.snowflake.zk.address and leafd.snowflake.worker.mode = "
                                "forever: Leaf's worker IDs live in ZooKeeper, one per ip:port",
                                err, errlen);
    }
    if (c->snowflake_identity[0] != '\0' &&
        (!zk || strcasecmp(c->worker_mode, "lease") == 0 || c->leaf_compat)) {
        /* A name holds a worker ID for good, in ZooKeeper; lease slots need no name, and
         * Leaf's own nodes are named ip:port. */
        return config_key_error(c, CONFIG_I_snowflake_identity,
                                "needs leaf.snowflake.zk.address and leafd.snowflake.worker.mode "
                                "= forever, without leafd.snowflake.leaf.compat",
                                err, errlen);
    }
    if (c->data_dir[0] == '\0') {
        /* The worker-ID cache and time reservation live there; "" would mean "/". */
        return config_key_error(c, CONFIG_I_data_dir, "must not be empty", err, errlen);
    }
    return LEAF_OK;
}

/*
 * Regions (docs/regions.md): with one region (the default) nothing of them is
 * used, so a registry there is a mistake; with more, each node must say which
 * region it is and where the regions claim their IDs.
 */
static leaf_status_t config_check_regions(const struct leaf_config *c, char *err, size_t errlen) {
    char why[CONFIG_WHY_MAX];
    if (c->region_id >= c->region_count) {
        snprintf(why, sizeof(why),
                 "%lld is not below leafd.region.count (%lld): region IDs are 0 .. count - 1; "
                 "raise leafd.region.count in every region, or pick a free ID below it",
                 (long long)c->region_id, (long long)c->region_count);
        return config_key_error(c, CONFIG_I_region_id, why, err, errlen);
    }
    if (c->region_count == 1) {
        if (c->region_registry_zk_address[0] != '\0') {
            return config_key_error(c, CONFIG_I_region_registry_zk_address,
                                    "only used when leafd.region.count > 1: set the count of "
                                    "regions, or leave the registry empty",
                                    err, errlen);
        }
        return LEAF_OK;
    }
    if (c->region[0] == '\0') {
        return config_key_error(c, CONFIG_I_region,
                                "required when leafd.region.count > 1: the name this region "
                                "claims its ID under in the registry (e.g. eu-west)",
                                err, errlen);
    }
    if (c->region_registry_zk_address[0] == '\0') {
        return config_key_error(c, CONFIG_I_region_registry_zk_address,
                                "required when leafd.region.count > 1: the ZooKeeper ensemble "
                                "where regions claim their IDs (not the region's own "
                                "leaf.snowflake.zk.address)",
                                err, errlen);
    }
    if (c->name[0] == '\0') {
        return config_key_error(c, CONFIG_I_name,
                                "required when leafd.region.count > 1: the claims live under "
                                "/leafd-regions/{leaf.name}",
                                err, errlen);
    }
    return LEAF_OK;
}

/* Appends one line to loose_secret_files: a warn line for the start (main.c logs each). */
static void config_warn_loose(struct leaf_config *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void config_warn_loose(struct leaf_config *c, const char *fmt, ...) {
    size_t used = strlen(c->loose_secret_files);
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(c->loose_secret_files + used, sizeof(c->loose_secret_files) - used, fmt, ap);
    va_end(ap);
}

/*
 * Secret i (a config_secret_files row) set inline in a configuration file that
 * others, or a group not leafd's own, may read: a warn line naming the key and
 * the line, never the value (docs/SECURITY.md, "Files and permissions").
 */
static void config_check_inline(struct leaf_config *c, size_t i) {
    size_t vi = (size_t)config_secret_files[i].value;
    const struct config_key *v = &config_keys[vi];
    const struct config_source *s = &c->sources[vi];

    if (!c->file_loose || s->line == 0 || ((const char *)c + v->offset)[0] == '\0') {
        return;
    }
    config_warn_loose(c,
                      "%s: inline in %s:%d, a file readable by group or others; move the secret "
                      "to %s (chmod 600), or chmod 600 %s (640 with leafd's group)\n",
                      v->key, s->file, s->line, config_keys[config_secret_files[i].file].key,
                      s->file);
}

/*
 * Secret i still holding the example Secret's value (deploy/kubernetes/base/secret.yaml writes
 * "change-me" into each): a warn line naming the key, never the value (docs/kubernetes.md,
 * "The Secret"). Nothing refuses it: a test cluster may run on the example.
 */
static void config_check_example(struct leaf_config *c, size_t i) {
    const struct config_key *v = &config_keys[config_secret_files[i].value];
    const char *value = (const char *)c + v->offset;

    if (strstr(value, "change-me") == NULL) {
        return;
    }
    config_warn_loose(c,
                      "%s: still the example value of deploy/kubernetes/base/secret.yaml; "
                      "replace it with a secret of your own\n",
                      v->key);
}

/*
 * One *.file key: the secret is the file's first line. Setting both the
 * secret and its file is an error (which one wins would be a guess).
 */
static leaf_status_t config_read_secret_file(struct leaf_config *c, size_t i, char *err,
                                             size_t errlen) {
    char why[CONFIG_WHY_MAX + 600], where[512];
    size_t fi = (size_t)config_secret_files[i].file;
    const struct config_key *v = &config_keys[config_secret_files[i].value];
    const struct config_key *f = &config_keys[fi];
    const char *path = (const char *)c + f->offset;
    char *field = (char *)c + v->offset;
    config_value_check_fn check = config_value_check(v->type);
    int loose;

    if (path[0] == '\0') {
        return LEAF_OK;
    }
    if (c->sources[config_secret_files[i].value].file[0] != '\0') {
        snprintf(why, sizeof(why), "set either %s or %s, not both", v->key, f->key);
        return config_key_error(c, fi, why, err, errlen);
    }
    if (config_secret_read(path, field, v->size, &loose, why, sizeof(why)) != LEAF_OK) {
        return config_key_error(c, fi, why, err, errlen);
    }
    if (check != NULL && check(field, why, sizeof(why)) != LEAF_OK) {
        config_hide_secret(v, field, strlen(field), why, sizeof(why));
        memset(field, 0, v->size);
        return config_key_error(c, fi, why, err, errlen);
    }
    if (loose) {
        config_where(c, fi, where, sizeof(where));
        config_warn_loose(c,
                          "%s: %s (%s) is readable by group or others; make it readable by "
                          "leafd's user only (chmod 600, or 640 with leafd's group)\n",
                          f->key, path, where);
    }
    return LEAF_OK;
}

/* The secrets: read from their files, loose ones noted, the admin token's length. */
static leaf_status_t config_finish_secrets(struct leaf_config *c, char *err, size_t errlen) {
    char why[CONFIG_WHY_MAX];
    size_t i;

    c->loose_secret_files[0] = '\0';
    for (i = 0; i < sizeof(config_secret_files) / sizeof(config_secret_files[0]); i++) {
        if (config_read_secret_file(c, i, err, errlen) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        config_check_inline(c, i);
        config_check_example(c, i);
    }
    if (c->admin_token[0] != '\0' && strlen(c->admin_token) < CONFIG_ADMIN_TOKEN_MIN) {
        snprintf(why, sizeof(why),
                 "too short: at least %d characters (a long random string); refused since "
                 "0.2.0: set a new one, e.g. openssl rand -hex 16 (CHANGELOG.md, 0.2.0)",
                 CONFIG_ADMIN_TOKEN_MIN);
        return config_key_error(
            c, c->admin_token_file[0] ? CONFIG_I_admin_token_file : CONFIG_I_admin_token, why, err,
            errlen);
    }
    return LEAF_OK;
}

/* One optional listen address into host/port (port 0 when empty). */
static leaf_status_t config_split_opt(const struct leaf_config *c, size_t i, const char *v,
                                      char *host, int *port, char *err, size_t errlen) {
    char why[CONFIG_WHY_MAX];

    host[0] = '\0';
    *port = 0;
    if (v[0] != '\0' && config_value_addr_split(v, host, port, why, sizeof(why)) != LEAF_OK) {
        return config_key_error(c, i, why, err, errlen);
    }
    return LEAF_OK;
}

/* The four listeners must have four ports (they all bind with SO_REUSEPORT). */
static leaf_status_t config_check_ports(const struct leaf_config *c, char *err, size_t errlen) {
    const struct {
        int port;
        int index;
    } l[] = {{c->listen_port, CONFIG_I_listen},
             {c->resp_port, CONFIG_I_resp_listen},
             {c->tls_port, CONFIG_I_tls_listen},
             {c->resp_tls_port, CONFIG_I_resp_tls_listen}};
    char why[CONFIG_WHY_MAX];
    size_t i, j;

    for (i = 1; i < sizeof(l) / sizeof(l[0]); i++) {
        for (j = 0; j < i; j++) {
            if (l[i].port != 0 && l[i].port == l[j].port) {
                snprintf(why, sizeof(why), "must not be the port of %s",
                         config_keys[l[j].index].key);
                return config_key_error(c, (size_t)l[i].index, why, err, errlen);
            }
        }
    }
    return LEAF_OK;
}

/* The TLS listeners need a certificate and key; client certificates need a CA. */
static leaf_status_t config_finish_tls(struct leaf_config *c, char *err, size_t errlen) {
    if (config_split_opt(c, CONFIG_I_tls_listen, c->tls_listen, c->tls_host, &c->tls_port, err,
                         errlen) != LEAF_OK ||
        config_split_opt(c, CONFIG_I_resp_tls_listen, c->resp_tls_listen, c->resp_tls_host,
                         &c->resp_tls_port, err, errlen) != LEAF_OK ||
        config_check_ports(c, err, errlen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    c->tls_verify = strcasecmp(c->tls_client_auth, "required") == 0   ? CONFIG_TLS_VERIFY_REQUIRED
                    : strcasecmp(c->tls_client_auth, "optional") == 0 ? CONFIG_TLS_VERIFY_OPTIONAL
                                                                      : CONFIG_TLS_VERIFY_NONE;
    if (c->tls_port == 0 && c->resp_tls_port == 0) {
        return LEAF_OK;
    }
    if (c->tls_cert_file[0] == '\0') {
        return config_key_error(c, CONFIG_I_tls_cert_file,
                                "required when leafd.tls.listen or leafd.resp.tls.listen is set",
                                err, errlen);
    }
    if (c->tls_key_file[0] == '\0') {
        return config_key_error(c, CONFIG_I_tls_key_file,
                                "required when leafd.tls.listen or leafd.resp.tls.listen is set",
                                err, errlen);
    }
    if (c->tls_verify != CONFIG_TLS_VERIFY_NONE && c->tls_ca_file[0] == '\0') {
        return config_key_error(c, CONFIG_I_tls_ca_file,
                                "required when leafd.tls.client.auth is optional or required (the "
                                "CA client certificates must chain to)",
                                err, errlen);
    }
    return LEAF_OK;
}

/* leafd.resp.default.mode: 1 + its enum ids_mode (0 = none); the mode must be served. */
static leaf_status_t config_default_mode(struct leaf_config *c, char *err, size_t errlen) {
    enum ids_mode m;
    const char *name = c->resp_default_mode_name;
    int on[IDS_MODE_COUNT] = {[IDS_SNOWFLAKE] = c->snowflake_enable,
                              [IDS_SEGMENT] = c->segment_enable,
                              [IDS_SEQUENCE] = c->sequence_enable,
                              [IDS_OPAQUE] = c->segment_enable && c->opaque_key[0] != '\0'};

    c->resp_default_mode = 0;
    if (name[0] == '\0' || strcmp(name, "none") == 0) {
        return LEAF_OK;
    }
    m = ids_mode_find(name, strlen(name));
    if (m == IDS_MODE_NONE) {
        return config_key_error(c, CONFIG_I_resp_default_mode_name, "not an ID mode", err, errlen);
    }
    if (ids_mode_info(m)->text) {
        char why[128];
        snprintf(why, sizeof(why),
                 "names a mode whose IDs are strings (%s answers them); INCR answers integers",
                 ids_mode_info(m)->text_command);
        return config_key_error(c, CONFIG_I_resp_default_mode_name, why, err, errlen);
    }
    if (!on[m]) {
        return config_key_error(c, CONFIG_I_resp_default_mode_name,
                                "names a mode this node does not serve (enable it, or none)", err,
                                errlen);
    }
    c->resp_default_mode = 1 + (int)m;
    return LEAF_OK;
}

leaf_status_t config_finish(struct leaf_config *c, char *err, size_t errlen) {
    char why[CONFIG_WHY_MAX];
    struct config_value_jdbc j;

    if (config_cross_check(c, err, errlen) != LEAF_OK ||
        config_check_regions(c, err, errlen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    /* The values were checked when set; these splits fail only for a
     * struct filled by hand, and then still say why. */
    if (config_value_addr_split(c->listen, c->listen_host, &c->listen_port, why, sizeof(why)) !=
        LEAF_OK) {
        return config_key_error(c, CONFIG_I_listen, why, err, errlen);
    }
    c->resp_host[0] = '\0';
    c->resp_port = 0;
    if (c->resp_listen[0] != '\0' &&
        config_value_addr_split(c->resp_listen, c->resp_host, &c->resp_port, why, sizeof(why)) !=
            LEAF_OK) {
        return config_key_error(c, CONFIG_I_resp_listen, why, err, errlen);
    }
    if (c->resp_port != 0 && c->resp_port == c->listen_port) {
        return config_key_error(c, CONFIG_I_resp_listen,
                                "must not be the port of leafd.listen (HTTP)", err, errlen);
    }
    if (config_finish_tls(c, err, errlen) != LEAF_OK ||
        config_finish_secrets(c, err, errlen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    if (c->auth_enable && c->zk_auth[0] == '\0') {
        /* Users kept in a world-writable tree are not access control (docs/SECURITY.md). */
        return config_key_error(c, CONFIG_I_auth_enable,
                                "needs leafd.zk.auth (or leafd.zk.auth.file): users kept in a "
                                "ZooKeeper tree anyone can write are not access control; refused "
                                "since 0.2.0: set leafd.zk.auth=digest:USER:PASSWORD on every "
                                "node (CHANGELOG.md, 0.2.0)",
                                err, errlen);
    }
    memset(&j, 0, sizeof(j));
    if (c->jdbc_url[0] != '\0' &&
        config_value_jdbc_split(c->jdbc_url, &j, why, sizeof(why)) != LEAF_OK) {
        return config_key_error(c, CONFIG_I_jdbc_url, why, err, errlen);
    }
    memcpy(c->db_host, j.host, sizeof(c->db_host));
    memcpy(c->db_name, j.db, sizeof(c->db_name));
    c->db_port = j.port;
    c->db_tls = j.tls;
    if (c->db_tls >= CONFIG_DB_TLS_VERIFY_CA && c->db_tls_ca_file[0] == '\0') {
        return config_key_error(c, CONFIG_I_db_tls_ca_file,
                                "required when leaf.jdbc.url asks for sslMode=VERIFY_CA or "
                                "VERIFY_IDENTITY (or verifyServerCertificate=true)",
                                err, errlen);
    }
    c->db_nhosts = j.nhosts;
    memcpy(c->db_hosts, j.hosts, sizeof(c->db_hosts));
    c->identity_port = c->snowflake_port != 0 ? (int)c->snowflake_port : c->listen_port;
    c->lease_mode = strcasecmp(c->worker_mode, "lease") == 0;
    if (c->max_lead_ms > c->reserve_ms) {
        /* The lead lives inside the reservation (docs/reference/guarantees.md, "The bounded lead").
         */
        if (c->sources[CONFIG_I_max_lead_ms].file[0] != '\0') {
            return config_key_error(c, CONFIG_I_max_lead_ms,
                                    "must not be above leafd.snowflake.reserve.ms: IDs never run "
                                    "ahead of the persisted reservation",
                                    err, errlen);
        }
        c->max_lead_ms = c->reserve_ms; /* the default follows a smaller reserve.ms */
    }
    c->log_json = strcasecmp(c->log_format, "json") == 0;
    if (config_default_mode(c, err, errlen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    /* Last, so that the derived fields are filled either way. */
    if (!c->snowflake_enable && !c->segment_enable && !c->sequence_enable) {
        /* A node with nothing to serve would pass /ready and issue nothing. */
        return config_key_error(c, CONFIG_I_snowflake_enable,
                                "nothing to serve: set leaf.snowflake.enable, leaf.segment.enable "
                                "or leafd.sequence.enable to true",
                                err, errlen);
    }
    return LEAF_OK;
}
