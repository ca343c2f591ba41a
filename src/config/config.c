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

#define CONFIG_FIELD_SIZE(field) sizeof(((struct leaf_config *)0)->field)

#define CONFIG_ROW(key, type, field, def, lo, hi, help)                                            \
    {key, type, offsetof(struct leaf_config, field), CONFIG_FIELD_SIZE(field), def, lo, hi, help},
const struct config_key config_keys[] = {CONFIG_KEYS(CONFIG_ROW)};
#undef CONFIG_ROW

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

const char *const config_level_names[] = {
    [LEAF_LOG_DEBUG] = "debug",
    [LEAF_LOG_INFO] = "info",
    [LEAF_LOG_WARN] = "warn",
    [LEAF_LOG_ERROR] = "error",
};

#define CONFIG_ENV_PREFIX "environment"

/* ---- small helpers ----------------------------------------------------- */

void config_errorf(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;

    if (err == NULL || errlen == 0) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

/* Like strlcpy: copies what fits and always terminates. */
void config_copy(char *dst, size_t dstlen, const char *src) {
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
int config_is_secret(const struct config_key *k) {
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
void config_hide_secret(const struct config_key *k, const char *v, size_t n, char *why,
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

int config_find(const char *key, size_t n) {
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
