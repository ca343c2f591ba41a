/*
 * The configuration checks that need the ID domains (node_config.h says
 * which).
 * Layer: the node's common floor (src/node/common), pure; over src/config and
 * the domains' pure cores.
 */
#include "node_config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define NODE_CONFIG_WHY_MAX 256

/*
 * With several regions a snowflake node's datacenter field holds the region ID
 * (docs/regions.md, "The snowflake layout"): a layout without one, or too
 * narrow for count - 1, is refused, and leafd.snowflake.datacenter.id may only
 * repeat leafd.region.id.
 */
static leaf_status_t layout_region(const struct leaf_config *cfg, struct snowflake_layout *out,
                                   const char **key, char *why, size_t cap) {
    if (cfg->region_count <= 1 || !cfg->snowflake_enable) {
        return LEAF_OK; /* a segment-only region needs no snowflake layout of its own */
    }
    *key = "leafd.region.count";
    int bits = out->bits[SNOWFLAKE_DATACENTER];
    if (bits == 0) {
        snprintf(why, cap,
                 "%" PRId64 " regions need a snowflake layout with a datacenter field to hold the "
                 "region ID (e.g. twitter: time:41,datacenter:5,worker:5,sequence:12)",
                 cfg->region_count);
        return LEAF_EINVAL;
    }
    if (cfg->region_count - 1 > snowflake_layout_max(out, SNOWFLAKE_DATACENTER)) {
        snprintf(why, cap,
                 "%" PRId64 " regions do not fit the layout's datacenter field (datacenter:%d "
                 "holds 0..%" PRId64 "): widen it in leafd.snowflake.layout",
                 cfg->region_count, bits, snowflake_layout_max(out, SNOWFLAKE_DATACENTER));
        return LEAF_EINVAL;
    }
    *key = "leafd.snowflake.datacenter.id";
    if (cfg->datacenter_id != 0 && cfg->datacenter_id != cfg->region_id) {
        snprintf(why, cap,
                 "%" PRId64 " is not leafd.region.id (%" PRId64 "): with regions the datacenter "
                 "field holds the region ID; leave this key unset",
                 cfg->datacenter_id, cfg->region_id);
        return LEAF_EINVAL;
    }
    out->datacenter_id = cfg->region_id;
    return LEAF_OK;
}

static leaf_status_t layout_parse(const struct leaf_config *cfg, struct snowflake_layout *out,
                                  const char **key, char *why, size_t cap) {
    *key = "leafd.snowflake.layout";
    if (snowflake_layout_parse(out, cfg->snowflake_layout, strlen(cfg->snowflake_layout), why,
                               cap) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    /* A named layout brings its unit; a unit other than the default 1 overrides it. */
    *key = "leafd.snowflake.time.unit.ms";
    int64_t unit = cfg->time_unit_ms == 1 ? out->unit_ms : cfg->time_unit_ms;
    if (snowflake_layout_set_unit(out, unit, why, cap) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    *key = "leafd.snowflake.datacenter.id";
    if (snowflake_layout_set_datacenter(out, cfg->datacenter_id, why, cap) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    return layout_region(cfg, out, key, why, cap);
}

leaf_status_t node_config_layout(const struct leaf_config *cfg, struct snowflake_layout *out) {
    const char *key;
    char why[NODE_CONFIG_WHY_MAX];
    return layout_parse(cfg, out, &key, why, sizeof(why));
}

leaf_status_t node_config_opaque_key(const struct leaf_config *cfg,
                                     struct segment_opaque_key *out) {
    char why[SEGMENT_OPAQUE_REASON_MAX];
    if (cfg->opaque_key[0] == '\0') {
        return LEAF_ENOTFOUND;
    }
    return segment_opaque_key_parse(out, cfg->opaque_key, strlen(cfg->opaque_key), why,
                                    sizeof(why));
}

/* The layout, its unit, the horizon and the static worker ID. */
static leaf_status_t check_snowflake(const struct leaf_config *cfg, int64_t now_ms, char *err,
                                     size_t errlen) {
    struct snowflake_layout l;
    const char *key;
    char why[NODE_CONFIG_WHY_MAX];
    if (layout_parse(cfg, &l, &key, why, sizeof(why)) != LEAF_OK) {
        return config_error_at(cfg, key, why, err, errlen);
    }
    if (!cfg->snowflake_enable) {
        return LEAF_OK; /* unused: only the syntax matters */
    }
    if (snowflake_layout_check_horizon(&l, cfg->epoch, now_ms, why, sizeof(why)) != LEAF_OK) {
        return config_error_at(cfg, "leafd.snowflake.layout", why, err, errlen);
    }
    int64_t max = snowflake_layout_max(&l, SNOWFLAKE_WORKER);
    if (cfg->worker_id > max) {
        snprintf(why, sizeof(why),
                 "%" PRId64 " does not fit the layout's worker field (worker:%d holds 0..%" PRId64
                 ")",
                 cfg->worker_id, l.bits[SNOWFLAKE_WORKER], max);
        return config_error_at(cfg, "leafd.snowflake.worker.id", why, err, errlen);
    }
    return LEAF_OK;
}

leaf_status_t node_config_check(const struct leaf_config *cfg, int64_t now_ms, char *err,
                                size_t errlen) {
    if (check_snowflake(cfg, now_ms, err, errlen) != LEAF_OK) {
        return LEAF_EINVAL;
    }
    struct segment_opaque_key k;
    char why[SEGMENT_OPAQUE_REASON_MAX];
    if (cfg->opaque_key[0] != '\0' &&
        segment_opaque_key_parse(&k, cfg->opaque_key, strlen(cfg->opaque_key), why, sizeof(why)) !=
            LEAF_OK) {
        return config_error_at(cfg, "leafd.opaque.key", why, err, errlen);
    }
    return LEAF_OK;
}
