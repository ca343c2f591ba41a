#ifndef LEAF_CONFIG_STATE_H
#define LEAF_CONFIG_STATE_H

/*
 * The configuration's private half, shared by its files and by nothing outside src/config:
 * config.c (the key table, the setters, the properties file and the environment),
 * config_finish.c (cross-key checks and derived fields) and config_dump.c (the dump and the
 * reference page). The table is read-only after start; see config.h for ownership.
 */
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "status.h"

/* One CONFIG_KEYS row, with the field located by offset and size. */
struct config_key {
    const char *key;
    enum config_type type;
    size_t offset;
    size_t size;
    const char *def;
    int64_t min;
    int64_t max;
    const char *help;
};

/* Row indexes by field name, so config_finish() names keys without lookups. */
enum config_index {
#define CONFIG_INDEX(key, type, field, def, lo, hi, help) CONFIG_I_##field,
    CONFIG_KEYS(CONFIG_INDEX)
#undef CONFIG_INDEX
        CONFIG_I_COUNT
};

/* One past the last row: the number of keys. */
#define CONFIG_NKEYS ((size_t)CONFIG_I_COUNT)

/* The table of keys, CONFIG_KEYS's rows in order (config.c). */
extern const struct config_key config_keys[];
extern const char *const config_level_names[];

/* Text values are validated in a stack copy before they replace the field. */
#define CONFIG_TEXT_MAX 512

#define CONFIG_WHY_MAX 256

/* config.c */
void config_errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void config_copy(char *dst, size_t dstlen, const char *src);
int config_is_secret(const struct config_key *k);
void config_hide_secret(const struct config_key *k, const char *v, size_t n, char *why,
                        size_t whylen);
int config_find(const char *key, size_t n);

/* config_finish.c */
void config_where(const struct leaf_config *c, size_t i, char *out, size_t outlen);

#endif
