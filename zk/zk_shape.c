#include "zk_shape.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Larger than any epoch or unit the configuration accepts, and exact in a double. */
#define SHAPE_JSON_MAX 9000000000000000LL

size_t zk_shape_format(const struct zk_shape *s, char *buf, size_t cap) {
    int n =
        snprintf(buf, cap, "{\"layout\":\"%s\",\"epoch\":%" PRId64 ",\"time_unit_ms\":%" PRId64 "}",
                 s->layout, s->epoch, s->unit_ms);
    return n > 0 && (size_t)n < cap ? (size_t)n : 0;
}

/* A non-negative integer member (a JSON number); -1 when missing or not one. */
static int64_t shape_int(const cJSON *root, const char *name) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, name);
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble >= (double)SHAPE_JSON_MAX ||
        v->valuedouble != (double)(int64_t)v->valuedouble) {
        return -1;
    }
    return (int64_t)v->valuedouble;
}

leaf_status_t zk_shape_parse(const char *buf, size_t len, struct zk_shape *s) {
    memset(s, 0, sizeof(*s));
    cJSON *root = cJSON_ParseWithLength(buf, len);
    const cJSON *layout = cJSON_GetObjectItemCaseSensitive(root, "layout");
    leaf_status_t st = LEAF_EINVAL;
    if (cJSON_IsObject(root) && cJSON_IsString(layout) && layout->valuestring[0] != '\0' &&
        strlen(layout->valuestring) < sizeof(s->layout)) {
        snprintf(s->layout, sizeof(s->layout), "%s", layout->valuestring);
        s->epoch = shape_int(root, "epoch");
        s->unit_ms = shape_int(root, "time_unit_ms");
        st = s->epoch >= 0 && s->unit_ms >= 1 ? LEAF_OK : LEAF_EINVAL;
    }
    cJSON_Delete(root);
    return st;
}

int zk_shape_equal(const struct zk_shape *a, const struct zk_shape *b) {
    return strcmp(a->layout, b->layout) == 0 && a->epoch == b->epoch && a->unit_ms == b->unit_ms;
}

size_t zk_shape_mismatch(const struct zk_shape *stored, const struct zk_shape *mine,
                         const char *path, char *buf, size_t cap) {
    char diff[256];
    int d = 0;
    diff[0] = '\0';
    if (strcmp(stored->layout, mine->layout) != 0) {
        d += snprintf(diff + d, sizeof(diff) - (size_t)d, "layout %s", mine->layout);
    }
    if (stored->epoch != mine->epoch && d < (int)sizeof(diff)) {
        d += snprintf(diff + d, sizeof(diff) - (size_t)d, "%sepoch %" PRId64, d ? ", " : "",
                      mine->epoch);
    }
    if (stored->unit_ms != mine->unit_ms && d < (int)sizeof(diff)) {
        snprintf(diff + d, sizeof(diff) - (size_t)d, "%stime unit %" PRId64 " ms", d ? ", " : "",
                 mine->unit_ms);
    }
    int n = snprintf(buf, cap,
                     "cluster shape mismatch: %s records layout %s, epoch %" PRId64
                     ", time unit %" PRId64
                     " ms; this node is configured with %s; set leafd.snowflake.layout, "
                     "leafd.snowflake.epoch and leafd.snowflake.time.unit.ms to the recorded "
                     "values (a cluster keeps one ID shape for good)",
                     path, stored->layout, stored->epoch, stored->unit_ms, diff);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap ? cap - 1 : 0;
}

int64_t zk_shape_floor_ms(const struct zk_shape *old, int64_t stored_ms,
                          const struct zk_shape *mine) {
    if (stored_ms < 0) {
        return -1;
    }
    if (zk_shape_equal(old, mine)) {
        return stored_ms;
    }
    /* The tick of the stored time in the old shape; IDs of mine must carry a larger tick. */
    int64_t rel = stored_ms - old->epoch;
    int64_t tick = rel < 0 ? -1 : rel / old->unit_ms;
    /* The first ms of tick + 1 in mine's shape, minus one: the largest ms still at or below. */
    if (tick >= (INT64_MAX - mine->epoch) / mine->unit_ms - 1) {
        return INT64_MAX - 1;
    }
    int64_t floor = mine->epoch + (tick + 1) * mine->unit_ms - 1;
    return floor < mine->epoch - 1 ? mine->epoch - 1 : floor;
}
