/*
 * Unknown LEAF_* and LEAFD_* environment variables. A typo in the file
 * stops start-up; the same typo in the environment (LEAFD_LISTN) must too,
 * or the override is silently lost. Both get "did you mean" from the same
 * edit distance (config_near_key for the file's keys).
 *
 * The rule: every variable whose name starts with LEAF_ or LEAFD_ is taken
 * as a configuration key, except the names leafd's own scripts and tests
 * use for themselves (tools_exact and tools_prefix below; they never name a
 * key) and the variables Kubernetes injects for the namespace's Services (whose names
 * start with LEAFD_ for leafd's own Services). A new tool variable goes into that table,
 * or under LEAFD_TEST_.
 *
 * Pure code (libc only). See config.h for ownership.
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#define ENV_NAME_MAX 128

/* Variables of tools/ and tests/ that reach leafd's environment. */
static const char *const tools_exact[] = {
    "LEAFD_BIN",         /* tests, tools/programs/leafctl, tools/checks/chaos: the binary */
    "LEAFD_CONF",        /* tools/programs/leafctl: the configuration file */
    "LEAFD_PORT",        /* tools/quickstart: leafd's HTTP port */
    "LEAFD_RESP_PORT",   /* tools/quickstart: leafd's RESP port */
    "LEAFD_NODE_DIR",    /* tests: where the Node.js clients are installed */
    "LEAFD_KEEP_TMP",    /* tests: keep the temp dirs */
    "LEAFD_USER",        /* tools/programs/leafctl user: name:secret of an admin user */
    "LEAFD_INHERIT_FDS", /* an in-place upgrade: what the previous process hands over */
};
/*
 * LEAFD_PACKAGE_: tools/packaging/package's build directory and jobs;
 * LEAFD_IMAGE_: tools/packaging/image's cache.
 */
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

/* 1 when s[0..n) ends with suffix. */
static int env_ends(const char *s, size_t n, const char *suffix) {
    size_t p = strlen(suffix);
    return n >= p && memcmp(s + n - p, suffix, p) == 0;
}

/* 1 when s[0..n) is "_<digits>_TCP", "_<digits>_UDP" or "_<digits>_SCTP", with an optional
 * "_PROTO", "_PORT" or "_ADDR" after it (*tail set to 1 then). */
static int env_port_rest(const char *s, size_t n, int *tail) {
    size_t i = 1;
    if (n < 2 || s[0] != '_' || s[1] < '0' || s[1] > '9') {
        return 0;
    }
    while (i < n && s[i] >= '0' && s[i] <= '9') {
        i++;
    }
    static const char *const protos[] = {"_TCP", "_UDP", "_SCTP"};
    for (size_t k = 0; k < ENV_COUNT(protos); k++) {
        size_t p = strlen(protos[k]);
        if (n - i >= p && memcmp(s + i, protos[k], p) == 0) {
            size_t r = n - i - p;
            const char *t = s + i + p;
            *tail = r > 0;
            return r == 0 || (r == 6 && (memcmp(t, "_PROTO", 6) == 0)) ||
                   (r == 5 && (memcmp(t, "_PORT", 5) == 0 || memcmp(t, "_ADDR", 5) == 0));
        }
    }
    return 0;
}

/*
 * 1 when the variable is one Kubernetes injects for a Service of the namespace
 * (docs/kubernetes.md, "Service links"): a Service leafd-http gives LEAFD_HTTP_SERVICE_HOST,
 * LEAFD_HTTP_SERVICE_PORT[_<port name>], LEAFD_HTTP_PORT=tcp://..., and
 * LEAFD_HTTP_PORT_8080_TCP[_PROTO|_PORT|_ADDR]. None names a key; the ones a typo could look
 * like (..._PORT) are taken as links only with a link's value (proto://ip:port).
 */
static int env_is_service_link(const char *name, size_t n, const char *value) {
    if (env_ends(name, n, "_SERVICE_HOST")) {
        return 1;
    }
    for (size_t i = 0; i + 13 <= n; i++) {
        if (memcmp(name + i, "_SERVICE_PORT", 13) == 0 && (i + 13 == n || name[i + 13] == '_')) {
            return 1;
        }
    }
    int url = value != NULL && strstr(value, "://") != NULL;
    for (size_t i = 1; i + 5 <= n; i++) {
        int tail = 0;
        if (memcmp(name + i, "_PORT", 5) != 0) {
            continue;
        }
        if (i + 5 == n) {
            return url;
        }
        if (env_port_rest(name + i + 5, n - i - 5, &tail)) {
            return tail || url;
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
            env_known(e, n, near, sizeof(near)) ||
            env_is_service_link(e, n, eq != NULL ? eq + 1 : NULL)) {
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
