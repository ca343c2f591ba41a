#ifndef LEAF_NODE_CONFIG_H
#define LEAF_NODE_CONFIG_H

/*
 * The configuration checks that need the ID domains (src/config knows only
 * syntax): the snowflake layout and its time unit (snowflake_id.h), the
 * horizon of the time field from the epoch, the static worker ID against
 * the layout's worker width, and the opaque key (segment_opaque.h). Each
 * error names the key and where it was set, as config_finish() does.
 * Pure (the clock is passed in); main() calls it after config_finish(), so
 * --check-config reports these too.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "segment_opaque.h"
#include "snowflake_id.h"
#include "status.h"

/* LEAF_OK, or LEAF_EINVAL with "where: key: reason" in err. */
leaf_status_t node_config_check(const struct leaf_config *cfg, int64_t now_ms, char *err,
                                size_t errlen);

/* The layout with its unit, from a configuration node_config_check() accepted. */
leaf_status_t node_config_layout(const struct leaf_config *cfg, struct snowflake_layout *out);

/* The opaque key: LEAF_OK, LEAF_ENOTFOUND when leafd.opaque.key is empty. */
leaf_status_t node_config_opaque_key(const struct leaf_config *cfg, struct segment_opaque_key *out);

#endif
