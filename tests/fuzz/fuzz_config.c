/*
 * libFuzzer harness for the configuration parser (src/config/config.c, pure code,
 * linked alone as leaf_core). The input is a properties file, optionally
 * followed by a line "%%env" and "NAME=value" lines served by a fake getenv,
 * so the environment override runs on fuzzed values too.
 *
 * Checked, besides crashes and sanitizer reports: error messages are
 * terminated within their buffer whatever its size; a configuration that
 * config_finish() accepts has usable derived fields; config_dump() never
 * writes past the buffer it is given, returns what it wrote, cuts a long
 * dump as a prefix of the whole one, and never shows a password or token.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

#define ENV_MARK "\n%%env\n"
#define ENV_MAX 64

static struct {
    char *names[ENV_MAX];
    char *values[ENV_MAX];
    int n;
} env;

static const char *fake_getenv(const char *name) {
    for (int i = 0; i < env.n; i++) {
        if (strcmp(env.names[i], name) == 0) {
            return env.values[i];
        }
    }
    return NULL;
}

static char *dup_span(const char *s, size_t n) {
    char *d = malloc(n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

/* "NAME=value" lines; a NUL byte ends a value early, as it would in environ. */
static void env_load(const char *s, size_t n) {
    const char *end = s + n;
    while (s < end && env.n < ENV_MAX) {
        const char *eol = memchr(s, '\n', (size_t)(end - s));
        eol = eol ? eol : end;
        const char *eq = memchr(s, '=', (size_t)(eol - s));
        if (eq != NULL) {
            env.names[env.n] = dup_span(s, (size_t)(eq - s));
            env.values[env.n] = dup_span(eq + 1, (size_t)(eol - eq - 1));
            env.n++;
        }
        s = eol + 1;
    }
}

static void env_free(void) {
    for (int i = 0; i < env.n; i++) {
        free(env.names[i]);
        free(env.values[i]);
    }
    env.n = 0;
}

static void check_terminated(const char *buf, size_t len) {
    if (len > 0 && memchr(buf, '\0', len) == NULL) {
        __builtin_trap();
    }
}

/* Dumps into an exact-size heap buffer, so ASan sees any write past it. */
static void check_dump_cut(const struct leaf_config *c, const char *whole, size_t whole_len,
                           size_t len) {
    char *buf = malloc(len);
    size_t n = config_dump(c, buf, len);
    if (n >= len || strlen(buf) != n || n > whole_len || memcmp(buf, whole, n) != 0) {
        __builtin_trap();
    }
    free(buf);
}

static void check_config(const struct leaf_config *c, const uint8_t *data, size_t size) {
    static char whole[1 << 16];
    if (c->listen_port < 1 || c->listen_port > 65535 || c->identity_port < 1 ||
        c->identity_port > 65535 || c->listen_host[0] == '\0') {
        __builtin_trap();
    }
    if (c->jdbc_url[0] != '\0' &&
        (c->db_host[0] == '\0' || c->db_name[0] == '\0' || c->db_port < 1 || c->db_port > 65535)) {
        __builtin_trap();
    }
    size_t n = config_dump(c, whole, sizeof(whole));
    if (n >= sizeof(whole) - 1 || strlen(whole) != n) {
        __builtin_trap(); /* the whole dump always fits in 64 KiB */
    }
    if ((c->jdbc_password[0] != '\0' && strstr(whole, "\nleaf.jdbc.password = ***") == NULL) ||
        (c->admin_token[0] != '\0' && strstr(whole, "\nleafd.admin.token = ***") == NULL)) {
        __builtin_trap();
    }
    check_dump_cut(c, whole, n, 1);
    check_dump_cut(c, whole, n, n);
    check_dump_cut(c, whole, n, n + 1);
    if (size >= 2) {
        check_dump_cut(c, whole, n, 1 + ((size_t)data[0] << 8 | data[1]) % (n + 1));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static struct leaf_config cfg;
    char err[1024];
    const char *text = (const char *)data;
    const char *mark = memmem(text, size, ENV_MARK, strlen(ENV_MARK));
    size_t text_len = mark ? (size_t)(mark - text) : size;

    /* Error messages must fit any buffer: a tiny one first, exact-size on the heap. */
    size_t small = size > 0 ? 1 + data[size - 1] % 48 : 1;
    char *tiny = malloc(small);
    config_defaults(&cfg);
    leaf_status_t rc_tiny = config_parse(&cfg, text, text_len, "fuzz.properties", tiny, small);
    if (rc_tiny != LEAF_OK) {
        check_terminated(tiny, small);
    }
    free(tiny);

    config_defaults(&cfg);
    err[0] = '\0';
    leaf_status_t rc = config_parse(&cfg, text, text_len, "fuzz.properties", err, sizeof(err));
    if (rc != rc_tiny) {
        __builtin_trap(); /* the error buffer's size must not change the outcome */
    }
    if (rc != LEAF_OK) {
        check_terminated(err, sizeof(err));
        if (err[0] == '\0') {
            __builtin_trap(); /* every failure says why */
        }
        return 0;
    }
    if (mark != NULL) {
        env_load(mark + strlen(ENV_MARK), size - text_len - strlen(ENV_MARK));
        rc = config_apply_env(&cfg, fake_getenv, err, sizeof(err));
        env_free();
        if (rc != LEAF_OK) {
            check_terminated(err, sizeof(err));
            return 0;
        }
    }
    rc = config_finish(&cfg, err, sizeof(err));
    if (rc != LEAF_OK) {
        check_terminated(err, sizeof(err));
        return 0;
    }
    check_config(&cfg, data, size);
    return 0;
}
