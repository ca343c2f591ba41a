/*
 * Unknown LEAF_* and LEAFD_* environment variables. A typo in the file
 * stops start-up; the same typo in the environment (LEAFD_LISTN) must too,
 * or the override is silently lost. Both get "did you mean" from the same
 * edit distance (config_near_key for the file's keys).
 *
 * The rule: every variable whose name starts with LEAF_ or LEAFD_ is taken
 * as a configuration key, except the names leafd's own scripts and tests
 * use for themselves (tools_exact and tools_prefix below; they never name a
 * key). A new tool variable goes into that table, or under LEAFD_TEST_.
 *
 * Pure code (libc only). See config.h for ownership.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#define ENV_NAME_MAX 128

/* Variables of tools/ and tests/ that reach leafd's environment. */
static const char *const tools_exact[] = {
    "LEAFD_BIN",         /* tests, tools/leafctl, tools/chaos: the binary */
    "LEAFD_CONF",        /* tools/leafctl: the configuration file */
    "LEAFD_PORT",        /* tools/quickstart: leafd's HTTP port */
    "LEAFD_RESP_PORT",   /* tools/quickstart: leafd's RESP port */
    "LEAFD_NODE_DIR",    /* tests: where the Node.js clients are installed */
    "LEAFD_KEEP_TMP",    /* tests: keep the temp dirs */
    "LEAFD_USER",        /* tools/leafctl user: name:secret of an admin user */
    "LEAFD_INHERIT_FDS", /* an in-place upgrade: what the previous process hands over */
};
/* LEAFD_PACKAGE_: tools/package's build directory and jobs; LEAFD_IMAGE_: tools/image's cache. */
static const char *const tools_prefix[] = {
    "LEAFD_TEST_",  "LEAFD_TSAN_",    "LEAFD_CHAOS_", "LEAFD_FUZZ_",
    "LEAFD_BENCH_", "LEAFD_PACKAGE_", "LEAFD_IMAGE_",
};

#define ENV_KEY_NAME(key, type, field, def, lo, hi, help) key,
static const char *const env_keys[] = {CONFIG_KEYS(ENV_KEY_NAME)};
#undef ENV_KEY_NAME
#define ENV_NKEYS (sizeof(env_keys) / sizeof(env_keys[0]))
#define ENV_COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int env_starts(const char *s, size_t n, const char *prefix) {
    size_t p = strlen(prefix);
    return n >= p && memcmp(s, prefix, p) == 0;
}

static int env_is_tools(const char *name, size_t n) {
    for (size_t i = 0; i < ENV_COUNT(tools_exact); i++) {
        if (strlen(tools_exact[i]) == n && memcmp(name, tools_exact[i], n) == 0) {
            return 1;
        }
    }
    for (size_t i = 0; i < ENV_COUNT(tools_prefix); i++) {
        if (env_starts(name, n, tools_prefix[i])) {
            return 1;
        }
    }
    return 0;
}

/* 1 when `name` (n bytes) is a key's variable; else the nearest one within 3 edits in `near`. */
static int env_known(const char *name, size_t n, char *near, size_t nearlen) {
    char var[ENV_NAME_MAX];
    size_t best = 4;
    near[0] = '\0';
    for (size_t i = 0; i < ENV_NKEYS; i++) {
        config_env_name(env_keys[i], var, sizeof(var));
        if (strlen(var) == n && memcmp(var, name, n) == 0) {
            return 1;
        }
        size_t d = config_distance(name, n, var);
        if (d < best) {
            best = d;
            snprintf(near, nearlen, "%s", var);
        }
    }
    return 0;
}

leaf_status_t config_check_env(char *const *envp, char *err, size_t errlen) {
    char near[ENV_NAME_MAX];
    for (size_t i = 0; envp != NULL && envp[i] != NULL; i++) {
        const char *e = envp[i];
        const char *eq = strchr(e, '=');
        size_t n = eq != NULL ? (size_t)(eq - e) : strlen(e);
        if (!(env_starts(e, n, "LEAF_") || env_starts(e, n, "LEAFD_")) || env_is_tools(e, n) ||
            env_known(e, n, near, sizeof(near))) {
            continue;
        }
        if (err != NULL && errlen > 0) {
            snprintf(err, errlen, "environment %.*s: unknown variable (no such key)%s%s%s",
                     (int)(n < ENV_NAME_MAX ? n : ENV_NAME_MAX), e,
                     near[0] ? "; did you mean " : "", near, near[0] ? "?" : "");
        }
        return LEAF_EINVAL;
    }
    return LEAF_OK;
}
