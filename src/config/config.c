/*
 * Configuration parsing: every key is a row of CONFIG_KEYS (config.h),
 * and the file parser, the environment override and the dump all walk that
 * one table. Per-type rules live in small functions picked by the row's
 * type, so adding a key never adds code here.
 *
 * Pure code (libc only). See config.h for ownership.
 */
#include "config.h"
#include "config_secret.h"
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

#define CONFIG_FIELD_SIZE(field) sizeof(((struct leaf_config *)0)->field)

#define CONFIG_ROW(key, type, field, def, lo, hi, help)                                            \
    {key, type, offsetof(struct leaf_config, field), CONFIG_FIELD_SIZE(field), def, lo, hi, help},
static const struct config_key config_keys[] = {CONFIG_KEYS(CONFIG_ROW)};
#undef CONFIG_ROW
#define CONFIG_NKEYS (sizeof(config_keys) / sizeof(config_keys[0]))

/* Row indexes by field name, so config_finish() names keys without lookups. */
enum config_index {
#define CONFIG_INDEX(key, type, field, def, lo, hi, help) CONFIG_I_##field,
    CONFIG_KEYS(CONFIG_INDEX)
#undef CONFIG_INDEX
};

/* Text values are validated in a stack copy before they replace the field. */
#define CONFIG_TEXT_MAX 512

/*
 * The setters below write through the field's address according to its
 * type, so a row whose field does not match its type must not compile:
 * INT is int64_t, BOOL and LEVEL are int, text types are char arrays.
 */
#define CONFIG_FIELD_FITS(type, size)                                                              \
    ((type) == CONFIG_INT ? (size) == sizeof(int64_t)                                              \
     : (type) == CONFIG_BOOL || (type) == CONFIG_LEVEL                                             \
         ? (size) == sizeof(int)                                                                   \
         : (size) > sizeof(int64_t) && (size) <= CONFIG_TEXT_MAX)
#define CONFIG_CHECK_FIELD(key, type, field, def, lo, hi, help)                                    \
    _Static_assert(CONFIG_FIELD_FITS(type, CONFIG_FIELD_SIZE(field)), key ": wrong field type");
CONFIG_KEYS(CONFIG_CHECK_FIELD)
#undef CONFIG_CHECK_FIELD
_Static_assert(CONFIG_NKEYS <= CONFIG_MAX_KEYS, "raise CONFIG_MAX_KEYS");

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

static const char *const config_level_names[] = {
    [LEAF_LOG_DEBUG] = "debug",
    [LEAF_LOG_INFO] = "info",
    [LEAF_LOG_WARN] = "warn",
    [LEAF_LOG_ERROR] = "error",
};

#define CONFIG_WHY_MAX 256
#define CONFIG_ENV_PREFIX "environment"

/* ---- small helpers ----------------------------------------------------- */

static void config_errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void config_errorf(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;

    if (err == NULL || errlen == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Like strlcpy: copies what fits and always terminates. */
static void config_copy(char *dst, size_t dstlen, const char *src) {
    size_t n = strlen(src);

    if (n >= dstlen) {
        n = dstlen - 1;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static int config_is_blank(char ch) {
    return ch == ' ' || ch == '\t' || ch == '\f' || ch == '\v';
}

/* Case-insensitive compare of a (not NUL-terminated) span with a word. */
static int config_span_is(const char *s, size_t n, const char *word) {
    return strlen(word) == n && strncasecmp(s, word, n) == 0;
}

/* Values never shown in a dump or an error message: the row's type says so. */
static int config_is_secret(const struct config_key *k) {
    return k->type == CONFIG_SECRET || k->type == CONFIG_ZKAUTH;
}

/* A secret shorter than this is not looked for in a message (it would match by chance). */
#define CONFIG_SECRET_SEEN_MIN 4
/* How much of a secret's start is looked for (a quote may cut the value). */
#define CONFIG_SECRET_SEEN_MAX 16

/*
 * The last guard of "no message quotes a secret": a reason about a secret row
 * that holds the start of its value (v, n bytes) is replaced by one that does not.
 * The checks of secret types never quote; this keeps a future one honest.
 */
static void config_hide_secret(const struct config_key *k, const char *v, size_t n, char *why,
                               size_t whylen) {
    size_t seen = n < CONFIG_SECRET_SEEN_MAX ? n : CONFIG_SECRET_SEEN_MAX;
    if (config_is_secret(k) && n >= CONFIG_SECRET_SEEN_MIN &&
        memmem(why, strlen(why), v, seen) != NULL) {
        snprintf(why, whylen, "invalid value (not shown: a secret)");
    }
}

#define CONFIG_NEAR_MAX 128 /* longer names are nobody's typo */

/* Levenshtein distance, capped: names are short, so one row of ints is enough. */
size_t config_distance(const char *a, size_t an, const char *b) {
    size_t bn = strlen(b), row[CONFIG_NEAR_MAX + 1];
    if (an > CONFIG_NEAR_MAX || bn > CONFIG_NEAR_MAX) {
        return (size_t)-1;
    }
    for (size_t j = 0; j <= bn; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= an; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= bn; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            row[j] = best;
            diag = up;
        }
    }
    return row[bn];
}

/* The key nearest to key (n bytes, ignoring case) within 3 edits into near; "" when none. */
static void config_near_key(const char *key, size_t n, char *near, size_t nearlen) {
    char low[CONFIG_NEAR_MAX];
    size_t best = 4;
    if (nearlen > 0) {
        near[0] = '\0';
    }
    if (n > sizeof(low)) {
        return;
    }
    /* Compared in lower case: LEAF.NAME is one edit from nothing, but plainly leaf.name. */
    for (size_t i = 0; i < n; i++) {
        low[i] = (char)(key[i] >= 'A' && key[i] <= 'Z' ? key[i] - 'A' + 'a' : key[i]);
    }
    for (size_t i = 0; i < CONFIG_NKEYS; i++) {
        size_t d = config_distance(low, n, config_keys[i].key);
        if (d < best) {
            best = d;
            snprintf(near, nearlen, "%s", config_keys[i].key);
        }
    }
}

void config_env_name(const char *key, char *out, size_t outlen) {
    size_t i;

    for (i = 0; key[i] != '\0' && i + 1 < outlen; i++) {
        char ch = key[i];
        if (ch == '.' || ch == '-') {
            ch = '_';
        } else if (ch >= 'a' && ch <= 'z') {
            ch = (char)(ch - 'a' + 'A');
        }
        out[i] = ch;
    }
    out[i] = '\0';
}

static int config_find(const char *key, size_t n) {
    size_t i;

    for (i = 0; i < CONFIG_NKEYS; i++) {
        if (strlen(config_keys[i].key) == n && memcmp(config_keys[i].key, key, n) == 0) {
            return (int)i;
        }
    }
    return -1;
}

/* ---- setters: one value (a span, not NUL-terminated) into one field ---- */

static leaf_status_t config_set_text(const struct config_key *k, void *field, const char *v,
                                     size_t n, char *why, size_t whylen) {
    char tmp[CONFIG_TEXT_MAX];
    config_value_check_fn check = config_value_check(k->type);

    if (n >= k->size) {
        snprintf(why, whylen, "value too long (max %zu bytes)", k->size - 1);
        return LEAF_EINVAL;
    }
    if (memchr(v, '\0', n) != NULL) {
        snprintf(why, whylen, "value contains a NUL byte");
        return LEAF_EINVAL;
    }
    memcpy(tmp, v, n);
    tmp[n] = '\0';
    if (check != NULL && check(tmp, why, whylen) != LEAF_OK) {
        config_hide_secret(k, tmp, n, why, whylen);
        memset(tmp, 0, sizeof(tmp));
        return LEAF_EINVAL;
    }
    memcpy(field, tmp, n + 1);
    memset(tmp, 0, sizeof(tmp));
    return LEAF_OK;
}

static leaf_status_t config_set_int(const struct config_key *k, void *field, const char *v,
                                    size_t n, char *why, size_t whylen) {
    char q[CONFIG_VALUE_SHOW_MAX];
    int64_t x = 0;
    leaf_status_t rc = num_parse_i64(v, n, &x);

    config_value_show(q, sizeof(q), v, n, 1);
    if (rc == LEAF_EINVAL) {
        snprintf(why, whylen, "expected a decimal integer, got %s", q);
        return LEAF_EINVAL;
    }
    if (rc != LEAF_OK || x < k->min || x > k->max) {
        /* A minimum of -1 is the "unset" sentinel (worker.id): name it, not -1. */
        snprintf(why, whylen, "must be between %lld and %lld%s, got %s",
                 (long long)(k->min == -1 ? 0 : k->min), (long long)k->max,
                 k->min == -1 ? " (or -1: unset)" : "", q);
        return LEAF_EINVAL;
    }
    memcpy(field, &x, sizeof(x));
    return LEAF_OK;
}

static leaf_status_t config_set_bool(void *field, const char *v, size_t n, char *why,
                                     size_t whylen) {
    char q[CONFIG_VALUE_SHOW_MAX];
    int x;

    if (config_span_is(v, n, "true") || config_span_is(v, n, "false")) {
        x = config_span_is(v, n, "true");
        memcpy(field, &x, sizeof(x));
        return LEAF_OK;
    }
    config_value_show(q, sizeof(q), v, n, 1);
    snprintf(why, whylen, "expected true or false, got %s", q);
    return LEAF_EINVAL;
}

static leaf_status_t config_set_level(void *field, const char *v, size_t n, char *why,
                                      size_t whylen) {
    char q[CONFIG_VALUE_SHOW_MAX];
    int x;

    for (x = 0; x < (int)(sizeof(config_level_names) / sizeof(config_level_names[0])); x++) {
        if (config_span_is(v, n, config_level_names[x])) {
            memcpy(field, &x, sizeof(x));
            return LEAF_OK;
        }
    }
    config_value_show(q, sizeof(q), v, n, 1);
    snprintf(why, whylen, "expected debug, info, warn or error, got %s", q);
    return LEAF_EINVAL;
}

/* Parses v into the field of row i; on error writes the reason into why. */
static leaf_status_t config_set(struct leaf_config *c, size_t i, const char *v, size_t n, char *why,
                                size_t whylen) {
    const struct config_key *k = &config_keys[i];
    void *field = (char *)c + k->offset;

    switch (k->type) {
    case CONFIG_INT: return config_set_int(k, field, v, n, why, whylen);
    case CONFIG_BOOL: return config_set_bool(field, v, n, why, whylen);
    case CONFIG_LEVEL: return config_set_level(field, v, n, why, whylen);
    default: return config_set_text(k, field, v, n, why, whylen);
    }
}

static void config_mark(struct leaf_config *c, size_t i, const char *file, int line) {
    config_copy(c->sources[i].file, sizeof(c->sources[i].file), file);
    c->sources[i].line = line;
}

void config_defaults(struct leaf_config *c) {
    char why[CONFIG_WHY_MAX];
    size_t i;

    memset(c, 0, sizeof(*c));
    for (i = 0; i < CONFIG_NKEYS; i++) {
        /* A default that does not parse is a bug in CONFIG_KEYS, never the
         * user's fault; test_config checks every default, so this is loud. */
        if (config_set(c, i, config_keys[i].def, strlen(config_keys[i].def), why, sizeof(why)) !=
            LEAF_OK) {
            fprintf(stderr, "config: bad default for %s: %s\n", config_keys[i].key, why);
            abort();
        }
    }
}

/* ---- the properties file ------------------------------------------------ */

/* State of one config_parse() call. */
struct config_parser {
    struct leaf_config *c;
    const char *file;
    int line;
    int seen[CONFIG_MAX_KEYS]; /* line that set each key in this file, 0 = none */
    char *err;
    size_t errlen;
};

static leaf_status_t config_line_error(struct config_parser *p, const char *key, size_t keylen,
                                       const char *why) {
    char shown[CONFIG_VALUE_SHOW_MAX];

    config_value_show(shown, sizeof(shown), key, keylen, keylen == 0);
    config_errorf(p->err, p->errlen, "%s:%d: %s: %s", p->file, p->line, shown, why);
    return LEAF_EINVAL;
}

static void config_trim(const char **s, size_t *n) {
    while (*n > 0 && config_is_blank(**s)) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && config_is_blank((*s)[*n - 1])) {
        (*n)--;
    }
}

/* Finds the first '=' or ':', as Java's Properties does for these forms. */
static size_t config_separator(const char *s, size_t n) {
    size_t i;

    for (i = 0; i < n && s[i] != '=' && s[i] != ':'; i++) {
    }
    return i;
}

/*
 * Why a key is unknown. Spring Boot's server.port is where Leaf users keep
 * the HTTP port; leafd does not take it as an alias (one key per setting, and
 * the listen address also has a host), but says which key to use instead.
 */
static const char *config_unknown_why(const char *key, size_t keylen, char *why, size_t whylen) {
    char near[64]; /* the longest key is 37 bytes */
    if (keylen == 0) {
        return "missing key";
    }
    if (config_span_is(key, keylen, "server.port")) {
        return "unknown key (a Spring Boot setting): leafd's HTTP port is in leafd.listen, "
               "e.g. leafd.listen = 0.0.0.0:8080";
    }
    /* As the environment's check does: a typo names the key it is nearest to. */
    config_near_key(key, keylen, near, sizeof(near));
    if (near[0] == '\0') {
        return "unknown key";
    }
    snprintf(why, whylen, "unknown key; did you mean %s?", near);
    return why;
}

static leaf_status_t config_parse_line(struct config_parser *p, const char *s, size_t n) {
    char why[CONFIG_WHY_MAX];
    size_t sep, keylen, vlen;
    const char *key, *v;
    int i;

    config_trim(&s, &n);
    if (n == 0 || s[0] == '#' || s[0] == '!') {
        return LEAF_OK;
    }
    key = s;
    sep = config_separator(s, n);
    if (sep == n) {
        for (keylen = 0; keylen < n && !config_is_blank(s[keylen]); keylen++) {
        }
        return config_line_error(p, key, keylen, "expected key = value (no '=' or ':' found)");
    }
    keylen = sep;
    config_trim(&key, &keylen);
    v = s + sep + 1;
    vlen = n - sep - 1;
    config_trim(&v, &vlen);
    /* Java would unescape these; taking them literally would silently
     * change a value (a password, say), so they are refused instead. */
    if (memchr(s, '\\', n) != NULL) {
        return config_line_error(p, key, keylen,
                                 "backslash escapes and continuation lines are not supported "
                                 "(set the value through the environment instead)");
    }
    i = config_find(key, keylen);
    if (i < 0) {
        return config_line_error(p, key, keylen, config_unknown_why(key, keylen, why, sizeof(why)));
    }
    if (p->seen[i] != 0) {
        snprintf(why, sizeof(why), "given twice (first on line %d)", p->seen[i]);
        return config_line_error(p, key, keylen, why);
    }
    if (config_set(p->c, (size_t)i, v, vlen, why, sizeof(why)) != LEAF_OK) {
        return config_line_error(p, key, keylen, why);
    }
    p->seen[i] = p->line;
    config_mark(p->c, (size_t)i, p->file, p->line);
    return LEAF_OK;
}

leaf_status_t config_parse(struct leaf_config *c, const char *text, size_t len, const char *file,
                           char *err, size_t errlen) {
    struct config_parser p = {.c = c, .file = file, .err = err, .errlen = errlen};
    size_t pos = 0, end;

    config_copy(c->file, sizeof(c->file), file);
    /* A UTF-8 byte order mark, as some Windows editors write, is not text. */
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        pos = 3;
    }
    /* Lines end in \n, \r\n or \r, as in Java. */
    while (pos < len) {
        for (end = pos; end < len && text[end] != '\n' && text[end] != '\r'; end++) {
        }
        p.line++;
        if (config_parse_line(&p, text + pos, end - pos) != LEAF_OK) {
            return LEAF_EINVAL;
        }
        pos = end + 1;
        if (end + 1 < len && text[end] == '\r' && text[end + 1] == '\n') {
            pos++;
        }
    }
    return LEAF_OK;
}

#define CONFIG_FILE_MAX ((size_t)1024 * 1024)

static leaf_status_t config_read(FILE *f, const char *path, char *buf, size_t *len, char *err,
                                 size_t errlen) {
    size_t n = 0, got;

    do {
        got = fread(buf + n, 1, CONFIG_FILE_MAX + 1 - n, f);
        n += got;
    } while (got > 0 && n <= CONFIG_FILE_MAX);
    if (ferror(f)) {
        config_errorf(err, errlen, "%s: read failed: %s", path, strerror(errno));
        return LEAF_ERR;
    }
    if (n > CONFIG_FILE_MAX) {
        config_errorf(err, errlen, "%s: file too large (max %zu bytes)", path, CONFIG_FILE_MAX);
        return LEAF_EINVAL;
    }
    *len = n;
    return LEAF_OK;
}

leaf_status_t config_load_file(struct leaf_config *c, const char *path, char *err, size_t errlen) {
    FILE *f = fopen(path, "rb");
    struct stat st;
    char *buf;
    size_t len = 0;
    leaf_status_t rc;

    if (f == NULL) {
        config_errorf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return LEAF_ERR;
    }
    /* An inline secret in a file others may read gets a warn line (config_finish_secrets). */
    c->file_loose = fstat(fileno(f), &st) == 0 && config_secret_loose(&st);
    buf = malloc(CONFIG_FILE_MAX + 1);
    if (buf == NULL) {
        fclose(f);
        config_errorf(err, errlen, "%s: out of memory", path);
        return LEAF_ENOMEM;
    }
    rc = config_read(f, path, buf, &len, err, errlen);
    fclose(f);
    if (rc == LEAF_OK) {
        rc = config_parse(c, buf, len, path, err, errlen);
    }
    free(buf);
    return rc;
}

/* ---- environment -------------------------------------------------------- */

static const char *config_getenv(const char *name) {
    return getenv(name);
}

leaf_status_t config_apply_env(struct leaf_config *c, config_getenv_fn getenv_fn, char *err,
                               size_t errlen) {
    char name[128], why[CONFIG_WHY_MAX];
    const char *v;
    size_t i;

    if (getenv_fn == NULL) {
        getenv_fn = config_getenv;
    }
    for (i = 0; i < CONFIG_NKEYS; i++) {
        config_env_name(config_keys[i].key, name, sizeof(name));
        v = getenv_fn(name);
        if (v == NULL) {
            continue;
        }
        if (config_set(c, i, v, strlen(v), why, sizeof(why)) != LEAF_OK) {
            config_errorf(err, errlen, CONFIG_ENV_PREFIX " %s: %s: %s", name, config_keys[i].key,
                          why);
            return LEAF_EINVAL;
        }
        config_mark(c, i, CONFIG_ENV_PREFIX, 0);
    }
    return LEAF_OK;
}

/* ---- cross-key checks and derived fields -------------------------------- */

/*
 * Where row i got its value: "file:line", "environment VAR", or for a
 * default the file that should have set it (empty when none was parsed).
 */
static void config_where(const struct leaf_config *c, size_t i, char *out, size_t outlen) {
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
    if (ids_mode_parse(name, strlen(name), &m) != LEAF_OK) {
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

    if (config_cross_check(c, err, errlen) != LEAF_OK) {
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

/* ---- dump ----------------------------------------------------------------- */

/*
 * A JDBC URL with its secrets masked: the password of "user:password@" in the
 * authority, and the value of any password parameter (Connector/J's
 * "password", "password1"..., any case) in the query.
 */
static void config_mask_jdbc(const char *url, char *out, size_t outlen) {
    size_t o = 0;
    const char *query = strchr(url, '?');
    const char *auth = strstr(url, "://");
    const char *at = auth != NULL ? strchr(auth + 3, '@') : NULL;
    if (at != NULL && query != NULL && at > query) {
        at = NULL;
    }
    const char *colon = at != NULL ? memchr(auth + 3, ':', (size_t)(at - auth - 3)) : NULL;
    for (const char *p = url; *p != '\0' && o + 4 < outlen;) {
        if (colon != NULL && p == colon + 1) {
            memcpy(out + o, "***", 3), o += 3;
            p = at;
            continue;
        }
        int param_start =
            query != NULL && p > query && (p[-1] == '?' || p[-1] == '&' || p[-1] == ';');
        if (param_start && strncasecmp(p, "password", 8) == 0) {
            const char *eq = p + 8;
            while (*eq >= '0' && *eq <= '9') {
                eq++;
            }
            if (*eq == '=') {
                size_t name = (size_t)(eq - p) + 1;
                if (o + name + 4 >= outlen) {
                    break;
                }
                memcpy(out + o, p, name), o += name;
                memcpy(out + o, "***", 3), o += 3;
                p = eq + 1 + strcspn(eq + 1, "&;");
                continue;
            }
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

static void config_format(const struct leaf_config *c, const struct config_key *k, char *out,
                          size_t outlen) {
    const char *field = (const char *)c + k->offset;
    int64_t i64;
    int i;

    switch (k->type) {
    case CONFIG_INT:
        memcpy(&i64, field, sizeof(i64));
        snprintf(out, outlen, "%lld", (long long)i64);
        break;
    case CONFIG_BOOL:
        memcpy(&i, field, sizeof(i));
        config_copy(out, outlen, i ? "true" : "false");
        break;
    case CONFIG_LEVEL:
        memcpy(&i, field, sizeof(i));
        config_copy(out, outlen, i >= 0 && i <= LEAF_LOG_ERROR ? config_level_names[i] : "?");
        break;
    case CONFIG_JDBC: config_mask_jdbc(field, out, outlen); break;
    default:
        config_copy(out, outlen, config_is_secret(k) && field[0] != '\0' ? "***" : field);
        break;
    }
}

size_t config_dump(const struct leaf_config *c, char *buf, size_t len) {
    char value[CONFIG_TEXT_MAX], where[512];
    size_t i, used = 0;
    int n;

    if (len == 0) {
        return 0;
    }
    buf[0] = '\0';
    for (i = 0; i < CONFIG_NKEYS && used + 1 < len; i++) {
        config_format(c, &config_keys[i], value, sizeof(value));
        where[0] = '\0';
        if (c->sources[i].file[0] != '\0') {
            config_where(c, i, where, sizeof(where));
        }
        n = snprintf(buf + used, len - used, "%s =%s%s%s%s\n", config_keys[i].key,
                     value[0] ? " " : "", value, where[0] ? "  # from " : "", where);
        used += (n < 0) ? 0 : ((size_t)n < len - used ? (size_t)n : len - used - 1);
    }
    return used;
}

/* What a value of each type looks like, for the reference table. */
static const char *config_type_word(enum config_type t) {
    switch (t) {
    case CONFIG_STR:
    case CONFIG_SECRET: return "string"; /* the description says "a secret" */
    case CONFIG_NAME: return "name `[A-Za-z0-9._-]+`";
    case CONFIG_BOOL: return "`true` \\| `false`";
    case CONFIG_INT: return "integer";
    case CONFIG_ADDR: return "`ip:port`";
    case CONFIG_IPV4: return "IPv4 address";
    case CONFIG_JDBC: return "JDBC URL";
    case CONFIG_ZKADDR: return "`host:port[,host:port...]`";
    case CONFIG_OPTADDR: return "`ip:port` or empty";
    case CONFIG_WMODE: return "`forever` \\| `lease`";
    case CONFIG_TLSAUTH: return "`none` \\| `optional` \\| `required`";
    case CONFIG_ZKAUTH: return "`digest:USER:PASSWORD`";
    case CONFIG_LOGFMT: return "`logfmt` \\| `json`";
    case CONFIG_RMODE: return "`none` or an ID mode";
    case CONFIG_LEVEL: return "`debug` \\| `info` \\| `warn` \\| `error`";
    }
    return "string";
}

/* text as a Markdown table cell: the separator escaped, no <...> taken for HTML */
static void config_put_cell(FILE *out, const char *text) {
    for (; *text != '\0'; text++) {
        if (*text == '<' || *text == '>') {
            fputs(*text == '<' ? "&lt;" : "&gt;", out);
            continue;
        }
        if (*text == '|') {
            fputc('\\', out);
        }
        fputc(*text, out);
    }
}

void config_print_reference(FILE *out) {
    size_t i;

    fputs("| key | type | default | description |\n|---|---|---|---|\n", out);
    for (i = 0; i < CONFIG_NKEYS; i++) {
        const struct config_key *k = &config_keys[i];
        fprintf(out, "| `%s` | %s", k->key, config_type_word(k->type));
        if (k->type == CONFIG_INT) {
            fprintf(out, " %lld..%lld", (long long)k->min, (long long)k->max);
        }
        fputs(" | ", out);
        if (k->def[0] != '\0') {
            fprintf(out, "`%s`", k->def);
        } else {
            fputs("empty", out);
        }
        fputs(" | ", out);
        config_put_cell(out, k->help);
        fputs(config_is_secret(k) ? " (a secret: masked in `--print-config`) |\n" : " |\n", out);
    }
}
